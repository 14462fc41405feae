"""Adaptive scheduling: the selection rule on known fields, and --format adaptive end to end (budget, stored
probabilities, inverse-probability weights, same seed same choices, resume)."""

import json

import numpy as np
import pytest

from arena.adaptive import all_pairs, inverse_probability_weights, selection_probabilities
from tests._interrupt import cut_and_whole


def _cells(strengths, games_per_pair, seed):
    rng = np.random.default_rng(seed)
    cells = {}
    for a, b in all_pairs(len(strengths)):
        p = 1 / (1 + 10 ** ((strengths[b] - strengths[a]) / 400))
        wins = int(rng.binomial(games_per_pair, p))
        cells[(a, b, 1.0)] = wins
        cells[(a, b, 0.0)] = games_per_pair - wins
    return cells


def test_games_go_where_the_order_is_uncertain():
    """Two close agents among far ones: their pair gets far more than a uniform share, the far pairs far less."""
    strengths = [0, 30, 600, 1200]
    probabilities = selection_probabilities(4, _cells(strengths, 10, 1))
    pairs = all_pairs(4)
    assert probabilities.sum() == pytest.approx(1.0) and (probabilities > 0).all()
    close, far = probabilities[pairs.index((0, 1))], probabilities[pairs.index((0, 3))]
    assert close > 2 / len(pairs) and far < 0.5 / len(pairs) and close == probabilities.max()
    longer = selection_probabilities(4, _cells(strengths, 10, 1), lengths=[10, 1, 1, 1, 1, 1])
    assert longer[pairs.index((0, 1))] < close  # per unit of game length


def test_inverse_probability_weights():
    weights = inverse_probability_weights([0.5, 0.25, 0.25])
    assert weights.mean() == pytest.approx(1.0) and weights[1] == pytest.approx(2 * weights[0])
    assert inverse_probability_weights([0.1] * 4) == pytest.approx([1.0] * 4)


def test_adaptive_tournament_spends_its_budget_in_batches(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,center,random:seed=5", "--format",
              "adaptive", "--budget", "40", "--seed", "3", "--name", "ad")  # fmt: skip
    matches = arena_cli.json("matches", "--tournament", "ad")
    assert len(matches) == 40 and [m["index"] for m in matches] == list(range(40))
    (settings,) = arena_cli.rows("select settings from tournaments where name = 'ad'")
    entry = json.loads(settings[0])["adaptive"]
    assert entry["budget"] == 40 and len(entry["probabilities"]) == 40
    assert entry["probabilities"][:6] == [1 / 6] * 6  # the first round: every pair once
    assert len(set(entry["probabilities"][6:])) > 1  # then chosen
    board = arena_cli.json("leaderboard", "--tournament", "ad")
    assert sum(row["games"] for row in board) == 80 and all(row["bt_low"] <= row["bt"] <= row["bt_high"] for row in board)
    assert arena_cli.json("tournaments")[0]["status"] == "done"


@pytest.mark.parametrize("args, message", [
    (["--budget", "3"], "--budget must be at least 6"),
    ([], "needs --budget"),
    (["--budget", "20", "--players", "3"], ""),
])  # fmt: skip
def test_bad_adaptive_requests(arena_cli, args, message):
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,center,random:seed=5",
                       "--format", "adaptive", *args, ok=False)  # fmt: skip
    assert result.exit_code == 2 and message in result.stderr


def test_budget_only_for_adaptive(arena_cli):
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--budget", "9", ok=False)
    assert result.exit_code == 2 and "--budget is only for --format adaptive" in result.stderr


def test_same_seed_same_choices_and_resume_exactly(arena_cli):
    """Stopped in the middle of a batch and resumed: the same schedule, probabilities and results as a straight run."""
    cut_and_whole(arena_cli.db_path, 9, None, game="tic_tac_toe", agents="random,greedy,center", seed=11,
                  format="adaptive", budget=30)  # fmt: skip
    rows = arena_cli.rows("select name, schedule, settings from tournaments order by id")
    (_, cut_schedule, cut_settings), (_, whole_schedule, whole_settings) = rows
    assert cut_schedule == whole_schedule
    assert json.loads(cut_settings)["adaptive"] == json.loads(whole_settings)["adaptive"]
    strip = lambda ms: [(m["index"], m["seed"], m["turns"], [(s["agent"], s["outcome"]) for s in m["seats"]]) for m in ms]  # noqa: E731
    assert strip(arena_cli.json("matches", "--tournament", "cut")) == strip(arena_cli.json("matches", "--tournament", "whole"))
