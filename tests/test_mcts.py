"""mcts: conformance on every built-in game, tactics, extra moves, N players, hidden information, time, strength."""

from __future__ import annotations

import pytest

import arena
from agents.mcts import MCTSAgent
from arena.match import MatchResult, play_match
from arena.plugins import get_registry
from arena.testing import check_agent
from tests._duel import duel
from tests._stalls import fastest_of_three, one_of_three_in_time
from tests.test_minimax import DoubleNim, RingNim, RingNimState, double_nim_wins

REGISTRY = get_registry()
GAME_IDS = sorted(REGISTRY.games)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_conformance(game_id: str) -> None:
    game = REGISTRY.games[game_id]()
    check_agent(MCTSAgent, game, {"simulations": 30}, seeds=range(2))


@pytest.mark.parametrize("game_id", [g for g in GAME_IDS if REGISTRY.games[g]().evaluations()][:4])
def test_conformance_with_heuristic_rollouts(game_id: str) -> None:
    game = REGISTRY.games[game_id]()
    check_agent(MCTSAgent, game, {"simulations": 8, "rollout": "heuristic"}, seeds=range(1), max_turns=40)


def test_heuristic_rollouts_need_an_evaluation() -> None:
    with pytest.raises(arena.ArenaError, match="no evaluation 'nope'"):
        MCTSAgent.check_game(REGISTRY.games["tic_tac_toe"](), {"rollout": "heuristic", "eval": "nope"})
    with pytest.raises(arena.ArenaError, match="rollout"):
        MCTSAgent.check_game(REGISTRY.games["tic_tac_toe"](), {"rollout": "smart"})


def test_more_players_and_hidden_information() -> None:
    if "incan_gold" not in REGISTRY.games:
        pytest.skip("incan_gold is not registered yet")
    check_agent(MCTSAgent, REGISTRY.games["incan_gold"](players=5), {"simulations": 20}, seeds=range(1))


def test_three_players_each_node_maximises_its_mover() -> None:
    game = RingNim(stones=9)
    check_agent(MCTSAgent, game, {"simulations": 50}, seeds=range(1))
    assert MCTSAgent(game, 0, 0, simulations=200).act(RingNimState(2)) == 2


def test_wins_at_once_and_blocks_at_once_in_connect_four() -> None:
    game = REGISTRY.games["connect_four"]()
    state = game.new_initial_state()
    for action in (0, 6, 1, 6, 2):
        state.apply(action)
    assert MCTSAgent(game, 1, 0, simulations=1000).act(state.clone()) == 3
    state.apply(5)
    assert MCTSAgent(game, 0, 0, simulations=1000).act(state.clone()) == 3


@pytest.mark.parametrize("stones", [4, 5, 7, 8])
def test_extra_moves(stones: int) -> None:
    game = DoubleNim(stones=stones)
    wins = double_nim_wins(stones)
    assert wins
    assert MCTSAgent(game, 0, 3, simulations=2000).act(game.new_initial_state()) in wins


def test_same_seed_same_answer() -> None:
    game = REGISTRY.games["connect_four"]()
    state = game.new_initial_state()
    answers = [MCTSAgent(game, 0, 5, simulations=200).act(state.clone()) for _ in range(3)]
    assert len(set(answers)) == 1


def test_stops_at_time_per_move_and_uses_the_time() -> None:
    game = REGISTRY.games["connect_four"]()
    agent = MCTSAgent(game, 0, 0, time=10.0)
    agent.time_per_move = 0.2

    def search() -> float:
        agent.act(game.new_initial_state())
        return agent.stats["simulations"]

    elapsed, simulations = fastest_of_three(search)
    assert 0.1 < elapsed < 0.2 + 0.3  # budget 0.15 s; the slack is for a test suite sharing two cores
    assert simulations > 100

    # The runner's limit reaches an agent that has none of its own: without it, 200,000 simulations
    # would take some 6 s.
    def play(attempt: int) -> MatchResult:
        agents = [MCTSAgent(game, 0, 1, simulations=200_000), MCTSAgent(game, 1, 2, time=0.05)]
        return play_match(game, agents, attempt, max_turns=4, time_per_move=1.0)

    one_of_three_in_time(play)


# Reversi and Santorini need the full 1000 simulations (long play-outs, wide trees): bench/strength.py.
@pytest.mark.parametrize("game_id", ["connect_four", "dots_and_boxes", "onitama", "tic_tac_toe", "gwent_lite"])
def test_beats_random(game_id: str) -> None:
    if game_id not in REGISTRY.games:
        pytest.skip(f"game '{game_id}' is not registered yet")
    game = REGISTRY.games[game_id]()
    outcomes = duel(game, ("mcts", {"simulations": 200}), ("random", {}), 6)
    if game_id == "tic_tac_toe":
        assert "loss" not in outcomes
    else:
        assert outcomes.count("win") >= 5


def test_connect_four_beats_greedy_more_often_than_not() -> None:
    outcomes = duel(REGISTRY.games["connect_four"](), ("mcts", {"simulations": 1000}), ("greedy", {}), 8)
    assert outcomes.count("win") > outcomes.count("loss")
