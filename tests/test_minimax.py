"""minimax: conformance on every built-in game, equality with plain minimax, extra moves, time, errors, strength."""

from __future__ import annotations

import random
from typing import Any

import pytest

import arena
from agents._search import WIN_VALUE, resolve_evaluation, terminal_value
from agents.minimax import MinimaxAgent
from arena.match import MatchResult, play_match
from arena.plugins import get_registry
from arena.testing import check_agent
from tests._duel import duel
from tests._stalls import fastest_of_three, one_of_three_in_time

REGISTRY = get_registry()
GAME_IDS = sorted(REGISTRY.games)


# --- a toy game where a player may move twice in a row -------------------------------------


class DoubleNimState(arena.State):
    """A pile of stones; take 1 or 2 (action = count). Taking 2 from a pile that is not emptied
    gives the same player another move. Taking the last stone wins."""

    def __init__(self, stones: int) -> None:
        self.stones = stones
        self.current_player = 0
        self.winner = -1

    def legal_actions(self) -> list[int]:
        if self.current_player < 0:
            return []
        return [a for a in (1, 2) if a <= self.stones]

    def apply(self, action: int) -> None:
        self.stones -= action
        if self.stones == 0:
            self.winner = self.current_player
            self.current_player = arena.TERMINAL
        elif action == 1:
            self.current_player = 1 - self.current_player

    def is_terminal(self) -> bool:
        return self.current_player < 0

    def returns(self) -> list[float]:
        if self.winner < 0:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def clone(self) -> DoubleNimState:
        other = DoubleNimState(self.stones)
        other.current_player, other.winner = self.current_player, self.winner
        return other

    def action_to_string(self, action: int) -> str:
        return f"take{action}"

    def render(self) -> str:
        return f"{self.stones} stones, player {self.current_player} to move"


class DoubleNim(arena.Game):
    info = arena.GameInfo(id="double_nim", version="1", name="Double Nim", params=(arena.Param("stones", 7),))

    @property
    def num_distinct_actions(self) -> int:
        return 3

    def new_initial_state(self, seed: int = 0) -> DoubleNimState:
        return DoubleNimState(self.params["stones"])

    def heuristic(self, state: arena.State, player: int) -> float:
        return 0.0


def double_nim_wins(stones: int) -> set[int]:
    """The winning first moves for the player to move (exact, by brute force)."""

    def to_move_wins(n: int) -> bool:
        return any(a == n or (a == 2 and to_move_wins(n - 2)) or (a == 1 and not to_move_wins(n - 1)) for a in (1, 2) if a <= n)

    wins = set()
    for a in (1, 2):
        if a > stones:
            continue
        rest = stones - a
        if rest == 0 or (a == 2 and to_move_wins(rest)) or (a == 1 and not to_move_wins(rest)):
            wins.add(a)
    return wins


@pytest.mark.parametrize("stones", range(3, 12))
def test_extra_moves_are_searched_as_the_same_players_turn(stones: int) -> None:
    game = DoubleNim(stones=stones)
    wins = double_nim_wins(stones)
    agent = MinimaxAgent(game, 0, 1, depth=stones)
    state = game.new_initial_state()
    action = agent.act(state)
    if wins:
        assert action in wins and set(agent.best_moves) == wins
        assert agent.root_value > WIN_VALUE / 2
    else:
        assert agent.root_value < -WIN_VALUE / 2


# --- conformance and refusals --------------------------------------------------------------


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_conformance_or_clear_refusal(game_id: str) -> None:
    game = REGISTRY.games[game_id]()
    params = {"depth": 2}
    if not game.info.perfect_information:
        with pytest.raises(arena.ArenaError, match=f"cannot play '{game_id}', a game of imperfect information"):
            MinimaxAgent.check_game(game, params)
        return
    if not game.evaluations():
        with pytest.raises(arena.ArenaError, match="needs an evaluation"):
            MinimaxAgent.check_game(game, params)
        return
    check_agent(MinimaxAgent, game, params, seeds=range(2))


def test_bad_parameters_are_refused_with_what_exists() -> None:
    c4 = REGISTRY.games["connect_four"]()
    with pytest.raises(arena.ArenaError, match="no evaluation 'nope' .*heuristic"):
        MinimaxAgent.check_game(c4, {"eval": "nope"})
    with pytest.raises(arena.ArenaError, match="offers no features"):
        MinimaxAgent.check_game(c4, {"eval": "linear", "weights": "1,2"})
    with pytest.raises(arena.ArenaError, match="weights only apply to eval=linear"):
        MinimaxAgent.check_game(c4, {"weights": "1,2"})
    with pytest.raises(arena.ArenaError, match="depth"):
        MinimaxAgent(c4, 0, 0, depth=0)
    if "santorini" in REGISTRY.games:
        santorini = REGISTRY.games["santorini"]()
        with pytest.raises(arena.ArenaError, match="weights has 2 values but game 'santorini' has 8 features"):
            MinimaxAgent.check_game(santorini, {"eval": "linear", "weights": "1,2"})
        MinimaxAgent.check_game(santorini, {"eval": "linear", "weights": "0,2,4,-1,0,-2,-4,1"})


# --- alpha-beta equals plain minimax --------------------------------------------------------


def plain_minimax(state: arena.State, depth: int, root: int, evaluate: Any, terminal: Any = None) -> float:
    """Full-width minimax with the agent's conventions: the root player's value, terminal values
    WIN_VALUE * margin with quicker wins (and later losses) preferred by the plies left; or, given
    `terminal(returns, root)`, that value of a finished game (the trainers' of agents/train_bootstrap.py)."""
    if state.current_player < 0 and terminal is not None:
        return float(terminal(state.returns(), root))
    if state.current_player < 0:
        value = terminal_value(state.returns(), root)
        return value + depth if value > 0 else value - depth if value < 0 else value
    if depth == 0:
        return evaluate(state, root)
    values = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        values.append(plain_minimax(child, depth - 1, root, evaluate, terminal))
    return max(values) if state.current_player == root else min(values)


def random_position(game: arena.Game, seed: int, plies: int) -> arena.State:
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    for _ in range(plies):
        actions = state.legal_actions()
        if state.is_terminal() or len(actions) < 2:
            break
        state.apply(rng.choice(actions))
    return state


CASES = [("tic_tac_toe", {}, 4, (1, 2, 3)), ("connect_four", {}, 3, (4, 10, 18)), ("dots_and_boxes", {"rows": 2, "cols": 2}, 4, (3, 5, 7)),
         ("reversi", {}, 2, (6, 20)), ("santorini", {}, 2, (6, 14)), ("onitama", {}, 3, (2, 8))]  # fmt: skip


@pytest.mark.parametrize(("game_id", "game_params", "depth", "plies"), CASES)
def test_alpha_beta_finds_exactly_the_plain_minimax_best_moves(
    game_id: str, game_params: dict[str, Any], depth: int, plies: tuple[int, ...]
) -> None:
    if game_id not in REGISTRY.games:
        pytest.skip(f"game '{game_id}' is not registered yet")
    game = REGISTRY.games[game_id](**game_params)
    evaluate = resolve_evaluation("minimax", game, "", None)
    for seed in range(2):
        for ply in plies:
            state = random_position(game, seed, ply)
            if state.is_terminal() or len(state.legal_actions()) < 2:
                continue
            me = state.current_player
            values = {}
            for action in state.legal_actions():
                child = state.clone()
                child.apply(action)
                values[action] = plain_minimax(child, depth - 1, me, evaluate)
            best = max(values.values())
            expected = {a for a, v in values.items() if abs(v - best) <= 1e-12 * max(1.0, abs(best))}
            for tt, order in (("auto", "history"), ("render", "history"), ("off", "history"), ("auto", "eval")):
                agent = MinimaxAgent(game, me, seed, depth=depth, tt=tt, order=order)
                agent.act(state.clone())
                assert set(agent.best_moves) == expected, (game_id, seed, ply, tt, order, values)
                assert agent.root_value == pytest.approx(best, rel=1e-12)


# --- time ----------------------------------------------------------------------------------


@pytest.mark.parametrize("game_id", ["santorini", "reversi", "connect_four"])
def test_time_mode_answers_within_time_per_move(game_id: str) -> None:
    if game_id not in REGISTRY.games:
        pytest.skip(f"game '{game_id}' is not registered yet")
    game = REGISTRY.games[game_id]()

    # 1 s per move: the agents budget 0.87 s. The slack is wide because the test suite runs two
    # workers on two shared cores; the budget arithmetic itself needs no clock to check.
    def play(attempt: int) -> MatchResult:
        agents = [MinimaxAgent(game, 0, 1, time=30.0), MinimaxAgent(game, 1, 2, depth=40)]
        return play_match(game, agents, seed=3, max_turns=4, time_per_move=1.0)  # Santorini: 2 placements each

    result = one_of_three_in_time(play, ok=("normal", "turn_limit"))
    assert min(result.think_times) > 0.5  # both used most of their time: neither stopped early


def test_time_mode_searches_deeper_with_more_time() -> None:
    game = REGISTRY.games["connect_four"]()
    state = random_position(game, 0, 4)

    def quick_then_slow() -> tuple[float, float]:
        quick, slow = MinimaxAgent(game, state.current_player, 0, time=0.02), MinimaxAgent(game, state.current_player, 0, time=0.3)
        quick.act(state.clone())
        slow.act(state.clone())
        return slow.stats["depth"], quick.stats["depth"]

    elapsed, (slow_depth, quick_depth) = fastest_of_three(quick_then_slow)
    assert elapsed < 0.32 + 0.5  # generous: the suite shares two cores
    assert slow_depth > quick_depth >= 1


# --- play -----------------------------------------------------------------------------------


def test_wins_at_once_and_blocks_at_once_in_connect_four() -> None:
    game = REGISTRY.games["connect_four"]()
    state = game.new_initial_state()
    for action in (0, 6, 1, 6, 2):  # x has 0,1,2 on the bottom row; o has two in column 6
        state.apply(action)
    # o to move must block column 3.
    assert MinimaxAgent(game, 1, 0, depth=3).act(state.clone()) == 3
    state.apply(5)  # o does not block
    assert MinimaxAgent(game, 0, 0, depth=3).act(state.clone()) == 3


def test_perfect_play_on_tic_tac_toe_draws_itself_and_never_loses_to_random() -> None:
    game = REGISTRY.games["tic_tac_toe"]()
    assert duel(game, ("minimax", {"depth": 9}), ("minimax", {"depth": 9}), 4) == ["draw"] * 4
    assert "loss" not in duel(game, ("minimax", {"depth": 9}), ("random", {}), 10)


def test_same_seed_same_answer_and_ties_are_broken_at_random() -> None:
    game = REGISTRY.games["tic_tac_toe"]()
    state = game.new_initial_state()
    state.apply(4)  # x in the centre: o's four corners are equal by symmetry
    answers = {MinimaxAgent(game, 1, seed, depth=2).act(state.clone()) for seed in range(30)}
    assert answers == {0, 2, 6, 8}
    again = [MinimaxAgent(game, 1, 7, depth=2).act(state.clone()) for _ in range(3)]
    assert len(set(again)) == 1


@pytest.mark.parametrize("game_id", ["connect_four", "dots_and_boxes", "reversi", "santorini", "onitama", "tic_tac_toe"])
def test_beats_random(game_id: str) -> None:
    if game_id not in REGISTRY.games:
        pytest.skip(f"game '{game_id}' is not registered yet")
    outcomes = duel(REGISTRY.games[game_id](), ("minimax", {"depth": 2}), ("random", {}), 6)
    assert "loss" not in outcomes
    if game_id != "tic_tac_toe":  # random sometimes holds a draw there
        assert outcomes.count("win") >= 5


def test_santorini_depth_three_beats_depth_two() -> None:
    if "santorini" not in REGISTRY.games:
        pytest.skip("santorini is not registered yet")
    outcomes = duel(REGISTRY.games["santorini"](), ("minimax", {"depth": 3}), ("minimax", {"depth": 2}), 8)
    assert outcomes.count("win") >= 7


# --- transposition-table keys ----------------------------------------------------------------


class GridState(DoubleNimState):
    """DoubleNim with attributes of many kinds, to exercise the attribute key."""

    NEIGHBOURS = [[1, 2], [0]]  # class data: not an instance attribute

    def __init__(self, stones: int) -> None:
        super().__init__(stones)
        self.rows = [[0, 0], [0, 0]]  # position data, nested lists
        self.config = {"size": 2}  # shared by every clone: configuration
        self.cache: list[int] | None = None  # a lazily filled cache
        self.rng = random.Random(1)
        self.__secret = 0  # a mangled private attribute that is part of the position

    def apply(self, action: int) -> None:
        self.rows[action - 1][0] += 1
        self.cache = None
        self.__secret += action
        super().apply(action)

    def legal_actions(self) -> list[int]:
        self.cache = super().legal_actions()
        return list(self.cache)

    def clone(self) -> GridState:
        other = GridState.__new__(GridState)
        other.__dict__.update(self.__dict__)
        other.rows = [row[:] for row in self.rows]
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        return other


def test_attribute_key_covers_the_position_and_leaves_out_configuration() -> None:
    from agents._search import make_state_key, render_key

    state = GridState(9)
    key = make_state_key(state)
    assert key is not None and key is not render_key
    before = key(state)
    assert before == key(state.clone())
    other = state.clone()
    other.apply(1)
    assert key(other) != before
    shared = state.clone()
    shared.config["size"] = 3  # configuration is not in the key
    assert key(shared) == before
    secret = state.clone()
    secret._GridState__secret = 5  # type: ignore[attr-defined]
    assert key(secret) != before
    assert make_state_key(state, "render") is render_key and make_state_key(state, "off") is None
    hash(key(state))


# --- more than two players: paranoid --------------------------------------------------------


class RingNimState(DoubleNimState):
    """Take 1 or 2 stones, seats in turn round a ring of three; taking the last stone wins."""

    def apply(self, action: int) -> None:
        self.stones -= action
        if self.stones == 0:
            self.winner = self.current_player
            self.current_player = arena.TERMINAL
        else:
            self.current_player = (self.current_player + 1) % 3

    def returns(self) -> list[float]:
        return [0.0] * 3 if self.winner < 0 else [1.0 if p == self.winner else -1.0 for p in range(3)]

    def clone(self) -> RingNimState:
        other = RingNimState(self.stones)
        other.current_player, other.winner = self.current_player, self.winner
        return other


class RingNim(DoubleNim):
    info = arena.GameInfo(id="ring_nim", version="1", name="Ring Nim", min_players=3, max_players=3,
                          params=(arena.Param("stones", 7),))  # fmt: skip

    def new_initial_state(self, seed: int = 0) -> RingNimState:
        return RingNimState(self.params["stones"])


def test_three_players_paranoid() -> None:
    game = RingNim(stones=8)
    check_agent(MinimaxAgent, game, {"depth": 8}, seeds=range(1))
    state = RingNimState(2)
    agent = MinimaxAgent(game, 0, 0, depth=3)
    assert agent.act(state) == 2 and agent.root_value > 0
    # With 4 stones whatever seat 0 takes, one of the others can take the rest: paranoid sees the loss.
    agent.act(RingNimState(4))
    assert agent.root_value < 0
