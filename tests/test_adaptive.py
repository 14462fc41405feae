"""Adaptive scheduling: the selection rule on known fields, and --format adaptive end to end (budget, stored
probabilities, inverse-probability weights, same seed same choices, resume)."""

import importlib.util
import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from arena.adaptive import (
    NEWCOMER_GAMES,
    all_pairs,
    choose_batch,
    inverse_probability_weights,
    selection_probabilities,
)
from arena.adaptive_run import Tally, stored_probabilities
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
    probabilities = stored_probabilities(entry).tolist()
    assert entry["budget"] == 40 and len(probabilities) == 40
    assert probabilities[:6] == [1 / 6] * 6  # the first round: every pair once
    assert len(set(probabilities[6:])) > 1  # then chosen
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
    strip = lambda ms: [(m["index"], m["seed"], m["turns"], [(s["agent"], s["outcome"]) for s in m["seats"]]) for m in ms]
    assert strip(arena_cli.json("matches", "--tournament", "cut")) == strip(arena_cli.json("matches", "--tournament", "whole"))


def test_probabilities_stored_as_a_json_list_before_are_read_and_extended(arena_cli):
    """The selection probabilities are stored packed (float64, base64: a JSON list made a long run quadratic); a
    tournament that stored them as a JSON list, as before, is resumed into the same schedule, probabilities and
    weighted leaderboard as a straight run."""

    def as_stored_before() -> None:
        (settings,) = arena_cli.rows("select settings from tournaments where name = 'cut'")[0]
        data = json.loads(settings)
        packed = data["adaptive"]["probabilities"]
        assert isinstance(packed, str) and len(stored_probabilities(data["adaptive"])) > 12  # a batch after the first round
        data["adaptive"]["probabilities"] = stored_probabilities(data["adaptive"]).tolist()
        arena_cli.execute(f"update tournaments set settings = '{json.dumps(data)}' where name = 'cut'")

    cut_and_whole(arena_cli.db_path, 12, as_stored_before, game="tic_tac_toe", agents="random,greedy,center,random:seed=5",
                  seed=4, format="adaptive", budget=60)  # fmt: skip
    rows = arena_cli.rows("select schedule, settings from tournaments order by id")
    (cut_schedule, cut_settings), (whole_schedule, whole_settings) = rows
    cut, whole = json.loads(cut_settings)["adaptive"], json.loads(whole_settings)["adaptive"]
    assert cut_schedule == whole_schedule and cut == whole and isinstance(cut["probabilities"], str)
    probabilities = stored_probabilities(whole)
    assert len(probabilities) == 60 and list(probabilities[:6]) == [1 / 6] * 6 and len(set(probabilities[6:])) > 1
    assert arena_cli.json("leaderboard", "--tournament", "cut", "--weighted") == \
        arena_cli.json("leaderboard", "--tournament", "whole", "--weighted")  # fmt: skip


def test_a_batch_goes_first_to_newcomers_then_where_the_order_is_uncertain():
    """choose_batch: an agent without games is placed first (probability 1 - explore + explore / pairs); then the close
    pair gets the most games, far pairs none; each choice's stored probability is (1 - explore) x its Thompson share
    + explore / pairs."""
    strengths = [0, 30, 600, 1200]
    cells = _cells(strengths, 10, 1)
    pairs = all_pairs(5)  # agent 4 joins without games
    batch = choose_batch(5, cells, 12, np.random.default_rng(0), explore=0.0)
    assert all(4 in pairs[k] for k, _ in batch[:NEWCOMER_GAMES]) and len({pairs[k] for k, _ in batch[:NEWCOMER_GAMES]}) == NEWCOMER_GAMES
    assert sum(4 in pairs[k] for k, _ in batch) >= 4  # and then still often: its strength is the least known
    assert all(probability == pytest.approx(1.0) for _, probability in batch[:NEWCOMER_GAMES])
    assert all(0 < probability <= 1 for _, probability in batch)
    settled = {**cells, **{(a, 4, 0.5): 3 for a in range(4)}}
    later = [pairs[k] for k, _ in choose_batch(5, settled, 12, np.random.default_rng(0), explore=0.0)]
    assert later.count((0, 1)) == max(later.count(pair) for pair in set(later)) and (0, 3) not in later
    mixed = choose_batch(4, cells, 200, np.random.default_rng(1), explore=0.5)
    assert all(0.5 / 6 - 1e-12 <= p <= 0.5 + 0.5 / 6 + 1e-12 for _, p in mixed)
    assert len({k for k, _ in mixed}) == 6  # exploration reaches every pair


def test_thompson_shares_are_the_stored_probabilities():
    """thompson_shares: posterior draws go to the doubtful pairs (the close pair most, a 1200-Elo gap never); the
    probability choose_batch stores for its choice is exactly (1 - explore) x that pair's share + explore / pairs."""
    from arena.adaptive import _gains, fit, pair_array, thompson_shares

    strengths = [0, 30, 600, 1200]
    cells = _cells(strengths, 10, 1)
    pairs = all_pairs(4)
    theta, covariance = fit(4, cells)
    gain = _gains(pair_array(4), theta, covariance, None)
    shares = thompson_shares(pair_array(4), theta, covariance, gain, np.random.default_rng(5))
    assert shares.sum() == pytest.approx(1.0) and shares.argmax() == pairs.index((0, 1)) and shares[pairs.index((0, 3))] == 0
    for seed in range(20):
        shares = thompson_shares(pair_array(4), theta, covariance, gain, np.random.default_rng(seed))
        ((k, probability),) = choose_batch(4, cells, 1, np.random.default_rng(seed), explore=0.3)
        assert probability == pytest.approx(0.7 * shares[k] + 0.3 / 6, rel=1e-12)
    assert choose_batch(4, cells, 16, np.random.default_rng(9)) == choose_batch(4, cells, 16, np.random.default_rng(9))


def test_pair_lengths_are_mean_turns_per_pair(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,center", "--rounds", "2", "--name", "len")
    matches = arena_cli.json("matches", "--tournament", "len")
    records = [SimpleNamespace(turns=m["turns"], reason=m["reason"], seats=[SimpleNamespace(agent=s["agent"], rank=s["rank"]) for s in m["seats"]])
               for m in matches]  # fmt: skip
    lengths = Tally().add(records).lengths(["random", "greedy", "center"])
    by_pair = {}
    for m in matches:
        by_pair.setdefault(tuple(sorted(s["agent"] for s in m["seats"])), []).append(m["turns"])
    assert lengths[0] == pytest.approx(np.mean(by_pair[("greedy", "random")]))
    assert lengths[2] == pytest.approx(np.mean(by_pair[("center", "greedy")]))


def test_each_batch_loads_only_the_matches_stored_since_the_last(arena_cli, monkeypatch):
    """An adaptive run adds up its stored matches batch by batch (arena.adaptive_run.Tally): each match is read
    once, not once per batch; the choices equal those of a run that reads everything again (a fresh process)."""
    from arena import adaptive_run
    from db import queries

    read: list[tuple[int, int]] = []
    load = queries.load_matches

    def counted(session, **kwargs):  # noqa: ANN001, ANN202
        records = load(session, **kwargs)
        if kwargs.get("start") is not None:
            read.append((kwargs["start"][1], len(records)))
        return records

    monkeypatch.setattr(queries, "load_matches", counted)
    agents = "random,greedy,center,random:seed=5"
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--format", "adaptive", "--budget", "70",
              "--seed", "3", "--name", "once", "--quiet")  # fmt: skip
    assert read == [(0, 6), (6, 16), (22, 16), (38, 16), (54, 16)], read  # a first round of 6, then batches of 16:
    # each read starts where the last ended (the last finds the budget spent)
    schedule = arena_cli.rows("select schedule from tournaments where name = 'once'")
    adaptive_run._tallies.clear()  # as a fresh process: every batch reads all the matches again
    monkeypatch.setattr(adaptive_run, "_tallies", type("Forgetful", (dict,), {"__setitem__": lambda *_: None})())
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--format", "adaptive", "--budget", "70",
              "--seed", "3", "--name", "again", "--quiet")  # fmt: skip
    assert arena_cli.rows("select schedule from tournaments where name = 'again'") == schedule


def test_weighted_leaderboard(arena_cli):
    """--weighted: equal selection probabilities (a budget of one round) give the plain fit; chosen batches move it;
    a tournament of another format is refused in one line."""
    agents = "random,greedy,center,random:seed=5"
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--format", "adaptive", "--budget", "6",
              "--name", "one-round", "--quiet")  # fmt: skip
    plain, weighted = (arena_cli.json("leaderboard", "--tournament", "one-round", *extra) for extra in ((), ("--weighted",)))
    assert [(r["agent"], round(r["bt"], 6)) for r in plain] == [(r["agent"], round(r["bt"], 6)) for r in weighted]
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--format", "adaptive", "--budget", "60",
              "--name", "chosen", "--quiet")  # fmt: skip
    plain = {r["agent"]: r for r in arena_cli.json("leaderboard", "--tournament", "chosen")}
    weighted = arena_cli.json("leaderboard", "--tournament", "chosen", "--weighted")
    assert all(r["bt_low"] <= r["bt"] <= r["bt_high"] and r["games"] == plain[r["agent"]]["games"] for r in weighted)
    assert any(abs(r["bt"] - plain[r["agent"]]["bt"]) > 1 for r in weighted)
    assert [r["bt"] for r in weighted] == sorted((r["bt"] for r in weighted), reverse=True)
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "rr", "--quiet")
    result = arena_cli("leaderboard", "--tournament", "rr", "--weighted", ok=False)
    assert result.exit_code == 2 and "--format adaptive" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_gain_of_two_and_three_agents_by_hand():
    """_gains on cases computed by hand. Two agents, one pair: P(wrong order) = Phi(-|d| / sd) times the share of
    Var(d) one more game removes, w v / (1 + w v) (w = p (1 - p)), per unit of game length. Three agents: a game of
    (a, b) also helps the pairs it shares an agent with, by w c^2 / (1 + w v_ab) / v_ij, c = (e_i - e_j)' S (e_a - e_b)."""
    from scipy.stats import norm

    from arena.adaptive import _gains, fit, pair_array

    theta, covariance = fit(2, {(0, 1, 1.0): 7, (0, 1, 0.0): 5})
    d, v = theta[0] - theta[1], covariance[0, 0] + covariance[1, 1] - 2 * covariance[0, 1]
    w = 1 / (1 + math.exp(-d)) * (1 - 1 / (1 + math.exp(-d)))
    (gain,) = _gains(pair_array(2), theta, covariance, None)
    assert gain == pytest.approx(norm.cdf(-abs(d) / math.sqrt(v)) * w * v / (1 + w * v), rel=1e-9)
    assert _gains(pair_array(2), theta, covariance, np.array([4.0]))[0] == pytest.approx(gain / 4)

    cells = {(0, 1, 1.0): 6, (0, 1, 0.0): 5, (0, 2, 1.0): 11, (0, 2, 0.0): 1, (1, 2, 1.0): 10, (1, 2, 0.0): 2}
    theta, covariance = fit(3, cells)
    pairs = all_pairs(3)
    e = np.eye(3)
    expected = []
    for a, b in pairs:
        x = e[a] - e[b]
        p = 1 / (1 + math.exp(-(theta[a] - theta[b])))
        w = p * (1 - p)
        total = 0.0
        for i, j in pairs:
            y = e[i] - e[j]
            v = y @ covariance @ y
            c = y @ covariance @ x
            total += norm.cdf(-abs(theta[i] - theta[j]) / math.sqrt(v)) * w * c**2 / (1 + w * (x @ covariance @ x)) / v
        expected.append(total)
    gains = _gains(pair_array(3), theta, covariance, None)
    assert gains == pytest.approx(expected, rel=1e-9)
    assert gains.argmax() == pairs.index((0, 1))  # the close pair (6-5) before the clear ones (11-1, 10-2)


def _bench() -> Any:
    """A fresh copy of bench/adaptive.py as a module (bench/ is not a package; a test may patch its copy)."""
    spec = importlib.util.spec_from_file_location("bench_adaptive", Path(__file__).parent.parent / "bench" / "adaptive.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_share_rule_is_pluggable_and_the_bench_can_tell_it_the_truth():
    """choose_batch(rule=...) draws with the rule's shares; bench/adaptive.py's told_the_truth rule (the yardstick no
    real scheduler can reach) gives each game to the pair of greatest gain among those the fit orders wrongly."""
    bench = _bench()
    strengths = np.array([0.0, 30.0, 600.0, 1200.0])
    cells = _cells(strengths, 10, 1)
    cells[(0, 1, 1.0)], cells[(0, 1, 0.0)] = 8, 2  # the fit now orders 0 above 1: wrongly
    pairs = all_pairs(4)
    always_last = lambda directions, theta, covariance, gain, rng: np.eye(len(gain))[-1]  # noqa: E731
    assert choose_batch(4, cells, 5, np.random.default_rng(0), explore=0.0, rule=always_last) == [(5, 1.0)] * 5
    batch = choose_batch(4, cells, 3, np.random.default_rng(0), explore=0.0, rule=bench.told_the_truth(strengths))
    assert [(pairs[k], p) for k, p in batch] == [((0, 1), 1.0)] * 3  # the only pair in the wrong order
    truth_told = bench.run(True, np.arange(16) * 80.0, 3, weighted=False, oracle=True)
    assert 0 < truth_told < bench.run(False, np.arange(16) * 80.0, 3, weighted=False)


def test_the_bench_plays_a_fixed_design_told_the_strengths_under_the_same_stop():
    """bench/adaptive.py's second yardstick: misorder_design (the shares of the fewest expected misordered pairs,
    knowing the truth) goes mostly to agents adjacent in the true order, and run(design=...) plays it from the
    first game on, each game to the pair furthest below its share."""
    bench = _bench()
    strengths = np.array([0.0, 200.0, 40.0, 160.0, 80.0, 120.0])  # true order 0 2 4 5 3 1
    share = bench.misorder_design(strengths, 400.0)
    pairs = all_pairs(6)
    rank = np.argsort(np.argsort(strengths))
    apart = np.array([abs(rank[a] - rank[b]) for a, b in pairs])
    assert share.sum() == pytest.approx(1.0)
    by_distance = [share[apart == d].sum() for d in range(1, 6)]
    assert by_distance[0] > 0.5 and by_distance == sorted(by_distance, reverse=True)  # neighbours first, far pairs least
    seen = []
    original, limit = bench.play, bench.LIMIT
    bench.play = lambda pair, strengths, rng: seen.append(pair) or original(pair, strengths, rng)
    bench.LIMIT = 160
    try:
        needed = bench.run(True, np.arange(16) * 80.0, 3, weighted=False, design=np.eye(120)[[0, 15]].mean(axis=0))
    finally:
        bench.play, bench.LIMIT = original, limit
    assert needed == len(seen) == 160  # two pairs alone never order 16 agents: the run ends at its limit
    assert seen[:4] == [all_pairs(16)[0], all_pairs(16)[15]] * 2  # tracked: the pair furthest below its share next
    told = bench.misorder_design(np.arange(16) * 80.0, 450.0)
    assert 0 < bench.run(True, np.arange(16) * 80.0, 3, weighted=False, design=told) < limit


def test_the_bench_reads_a_fixed_budget():
    """bench/adaptive.py --budget-reading: run(until=N) plays N matches whatever the stop says, tracing the rank
    correlation after every batch; budget_reading finds where the runs' mean, and half of the runs, reach 0.95."""
    bench = _bench()
    trace: list[tuple[int, float]] = []
    assert bench.run(False, np.arange(16) * 80.0, 3, weighted=False, trace=trace, until=280) == 288  # to its batch end
    assert [m for m, _ in trace][:9] == [16, 32, 48, 64, 80, 96, 112, 120, 136]  # a round of 120 ends on a short batch (so does the second, at 240)
    assert trace[-1][0] == 288 and all(-1.0 <= c <= 1.0 for _, c in trace)
    curves = [[0.5, 0.96, 0.97], [0.5, 0.90, 0.99], [0.5, 0.80, 0.93]]
    assert bench.budget_reading(curves, [16, 32, 48]) == (48, 48)  # mean 0.887 then 0.963; 1 of 3, then 2 of 3 at 0.95
    assert bench.budget_reading([[0.5, 0.99], [0.5, 0.99], [0.5, 0.0]], [16, 32]) == (None, 32)  # mean 0.66: never
    fast, slow = [[0.5, 0.96, 0.99, 0.99]] * 3, [[0.5, 0.6, 0.9, 0.96], [0.5, 0.7, 0.92, 0.97], [0.5, 0.8, 0.99, 0.99]]
    low, high = bench.budget_interval(fast, slow, [16, 32, 48, 64], [16, 32, 48, 64])
    assert 0.5 <= low <= high <= 32 / 48  # slow's mean reaches 0.95 at 48 or 64 depending on the runs drawn
    assert low < high and bench.budget_reading(slow, [16, 32, 48, 64])[0] == 64
    assert bench.budget_interval(fast, [[0.5, 0.5]] * 3, [16, 32, 48, 64], [16, 32]) is None  # never reached: no interval


def _field_cells(num_agents: int, spread: float, seed: int) -> dict[tuple[int, int, float], float]:
    """One game per pair of agents `spread` Elo apart, with random tic-tac-toe's draw rate."""
    rng = np.random.default_rng(seed)
    cells: dict[tuple[int, int, float], float] = {}
    for a, b in all_pairs(num_agents):
        p = 1 / (1 + 10 ** (spread * (b - a) / 400))
        score = 0.5 if rng.random() < 0.13 else float(rng.random() < p)
        cells[(a, b, score)] = cells.get((a, b, score), 0.0) + 1.0
    return cells


def test_large_fields_are_scored_as_small_ones_without_pairs_by_pairs_matrices(monkeypatch):
    """Beyond EXACT_PAIRS the gains come from an agents x agents Laplacian and the votes from a scan of the pairs by
    gain: the same numbers (to rounding) and the same votes as the pairs x pairs matrices, so the same choices."""
    from arena import adaptive
    from arena.adaptive import _directions, _gains_by_laplacian, _gains_by_matrix, _votes_by_matrix, _votes_by_scan, fit, pair_array

    cells = _field_cells(20, 60.0, 2)
    theta, covariance = fit(20, cells)
    exact = _gains_by_matrix(_directions(20), theta, covariance)
    assert _gains_by_laplacian(pair_array(20), theta, covariance) == pytest.approx(exact, rel=1e-9, abs=1e-12 * exact.max())
    draws = theta + np.random.default_rng(0).standard_normal((500, 20)) @ np.linalg.cholesky(covariance).T
    monkeypatch.setattr(adaptive, "SCAN_BLOCK", 7)  # many blocks: draws resolved in the first, in later ones, in none
    tied = np.random.default_rng(3).integers(0, 20, len(exact)).astype(float)  # votes all over, ties: the first pair
    for gain in (exact, tied):
        scanned = _votes_by_scan(pair_array(20), theta, gain, draws)
        assert (scanned == _votes_by_matrix(pair_array(20), theta, gain, draws)).all()
    assert len(set(scanned)) > 5
    small = choose_batch(20, cells, 16, np.random.default_rng(1))
    monkeypatch.setattr(adaptive, "EXACT_PAIRS", 0)
    assert [k for k, _ in choose_batch(20, cells, 16, np.random.default_rng(1))] == [k for k, _ in small]


def _one_gib_of_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_the_largest_field_plays_its_batches_in_a_small_memory(tmp_path):
    """`arena run-tournament` of MAX_AGENTS agents of equal strength (the worst case: every pair doubtful), a first
    round and 5 batches, completes under a 1 GiB address-space cap (the pairs x pairs matrix it once made was
    7.9 GiB by itself: a MemoryError at the first batch) and in bounded time."""
    from arena.adaptive import MAX_AGENTS
    from arena.adaptive_run import BATCH

    root = Path(__file__).resolve().parent.parent
    agents = ",".join(f"random:seed={i}" for i in range(MAX_AGENTS))
    budget = len(all_pairs(MAX_AGENTS)) + 5 * BATCH
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "arena.cli", "--db", str(tmp_path / "wide.db"), "run-tournament", "--game",
                           "tic_tac_toe", "--agents", agents, "--format", "adaptive", "--budget", str(budget), "--quiet"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
                          preexec_fn=_one_gib_of_address_space)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"played {budget} matches" in done.stderr + done.stdout


def test_a_field_beyond_the_limit_is_refused_in_one_line(arena_cli):
    from arena.adaptive import MAX_AGENTS

    agents = ",".join(f"random:seed={i}" for i in range(MAX_AGENTS + 1))
    for format, budget in (("adaptive", ["--budget", "40000"]), ("ladder", [])):
        result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--format", format, *budget, ok=False)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1, result.stderr
        assert f"--format {format} takes at most {MAX_AGENTS} agents" in lines[0] and f"got {MAX_AGENTS + 1}" in lines[0]
    assert not arena_cli.db_path.exists()  # refused before the database file was made


def test_each_batch_looks_up_only_the_matches_after_the_schedule_it_grew_from(arena_cli, monkeypatch):
    """A ladder of 35,000 matches spent 30 ms of each 16-match batch reading every stored index again: each batch
    after the first round now reads from where the schedule it grew from ended (all stored before it), and the run
    stores the same matches."""
    from db import queries

    starts = []
    real = queries.played_indices
    monkeypatch.setattr(queries, "played_indices", lambda session, tid, start=0: starts.append(start) or real(session, tid, start))
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,minimax:depth=1", "--format", "adaptive",
              "--budget", "51", "--seed", "4", "--name", "grown", "--quiet")  # fmt: skip
    assert starts == [0, 3, 19, 35]  # the first round (3 pairs), then batches of 16
    assert sorted(m["index"] for m in arena_cli.json("matches", "--tournament", "grown", "--limit", "100")) == list(range(51))


def test_the_matches_the_game_broke_count_for_no_pair_and_in_no_weighted_fit(tmp_path):
    """game_error matches (every rank 0) were counted as draws by the scheduler's tally and by the weighted fit of
    `arena leaderboard --weighted`: the weighted rows must be those of the same matches without them."""
    from tests.conftest import Arena, loose_plugin
    from tests.test_plugin_faults import BAD_END

    arena = Arena(tmp_path / "arena.db", (loose_plugin(tmp_path / "plugins", "bad_end", BAD_END),))
    arena("run-tournament", "--game", "badend:how=raise", "--agents", "random,random:seed=1,random:seed=2,greedy",
          "--format", "adaptive", "--budget", "60", "--seed", "4", "--quiet")  # fmt: skip (even: the quick check passes)
    broken = arena.rows("select count(*) from matches where reason = 'game_error'")[0][0]
    assert 0 < broken < 60
    with_them = arena.json("leaderboard", "--tournament", "1", "--weighted")
    arena.execute("delete from match_seats where match_id in (select id from matches where reason = 'game_error')")
    arena.execute("delete from matches where reason = 'game_error'")
    arena.execute("delete from cache")
    assert arena.json("leaderboard", "--tournament", "1", "--weighted") == with_them
    tally = Tally().add([SimpleNamespace(reason="game_error", turns=5, seats=(SimpleNamespace(agent="a", rank=0),
                                                                               SimpleNamespace(agent="b", rank=0)))])  # fmt: skip
    assert (tally.matches, tally.results, tally.turns) == (1, {}, {})
