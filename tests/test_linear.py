"""linear: weights rules, refusals, one-ply choice, conformance, and minimax's eval=linear."""

from __future__ import annotations

import random

import pytest

import arena
from agents._search import default_weights, has_features, linear_evaluation
from agents.linear import LinearAgent
from agents.minimax import MinimaxAgent
from arena.plugins import get_registry
from arena.testing import check_agent
from tests.test_minimax import duel, random_position

REGISTRY = get_registry()
GAME_IDS = sorted(REGISTRY.games)
MANUAL = (0.0, 2.0, 4.0, -1.0, 0.0, -2.0, -4.0, 1.0)


def needs_santorini() -> arena.Game:
    if "santorini" not in REGISTRY.games:
        pytest.skip("santorini is not registered yet")
    return REGISTRY.games["santorini"]()


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_conformance_or_clear_refusal(game_id: str) -> None:
    game = REGISTRY.games[game_id]()
    if not has_features(game):
        with pytest.raises(arena.ArenaError, match=f"game '{game_id}' offers no features"):
            LinearAgent.check_game(game, {})
        return
    n = len(game.feature_names)
    if default_weights(game) is None:
        with pytest.raises(arena.ArenaError, match=f"give weights=w1,...,w{n}"):
            LinearAgent.check_game(game, {})
        params = {"weights": ",".join(["1"] * n)}
    else:
        params = {}
    check_agent(LinearAgent, game, params, seeds=range(2))
    with pytest.raises(arena.ArenaError, match=f"weights has {n + 1} values but game '{game_id}' has {n} features"):
        LinearAgent.check_game(game, {"weights": ",".join(["1"] * (n + 1))})


def test_santorini_defaults_to_the_reports_manual_weights() -> None:
    game = needs_santorini()
    assert LinearAgent(game, 0, 0).weights == MANUAL
    assert LinearAgent(game, 0, 0, weights="1,0,0,0,0,0,0,0").weights == (1.0, 0, 0, 0, 0, 0, 0, 0)


def test_plays_the_best_one_ply_move() -> None:
    game = needs_santorini()
    evaluate = linear_evaluation(game, MANUAL)
    for seed in range(4):
        state = random_position(game, seed, 8 + seed)
        me = state.current_player
        values = {}
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            values[action] = float("inf") if child.is_terminal() and child.returns()[me] > 0 else evaluate(child, me)
        best = max(values.values())
        chosen = {LinearAgent(game, me, s).act(state.clone()) for s in range(8)}
        assert chosen <= {a for a, v in values.items() if v == best}


def test_minimax_eval_linear_with_the_manual_weights_is_the_santorini_heuristic() -> None:
    game = needs_santorini()
    rng = random.Random(0)
    for seed in range(3):
        state = random_position(game, seed, rng.randrange(5, 15))
        me = state.current_player
        by_heuristic = MinimaxAgent(game, me, 0, depth=2)
        by_linear = MinimaxAgent(game, me, 0, depth=2, eval="linear", weights="0,2,4,-1,0,-2,-4,1")
        by_default_linear = MinimaxAgent(game, me, 0, depth=2, eval="linear")
        for agent in (by_heuristic, by_linear, by_default_linear):
            agent.act(state.clone())
        assert set(by_heuristic.best_moves) == set(by_linear.best_moves) == set(by_default_linear.best_moves)


def test_beats_random_on_santorini() -> None:
    game = needs_santorini()
    assert duel(game, ("linear", {}), ("random", {}), 6).count("win") >= 5


@pytest.mark.parametrize(
    "text",
    ["minimax", "mcts", "linear", "minimax:eval=linear,weights=0,2,4,-1,0,-2,-4,1", "linear:weights=0,2,4,-1,0,-2,-4,1",
     "mcts:rollout=heuristic,simulations=5,c=1", "minimax:time=0.05,tt=render,order=eval"],
)  # fmt: skip
def test_specs_through_the_runners_path(text: str) -> None:
    """Inline specs as the CLI gives them: parsed, validated with defaults filled in, then made."""
    from arena.agents import build_entry
    from arena.params import parse_spec

    game = needs_santorini()
    spec = parse_spec(text)
    entry = build_entry(REGISTRY, str(spec), spec.id, dict(spec.params), game)
    agent = entry.make(REGISTRY, game, 0, 1)
    state = game.new_initial_state(1)
    assert agent.act(state.view(0)) in state.legal_actions()
