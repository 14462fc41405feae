"""SPRT: LLRs pinned to independently computed references, error rates of simulated tests within alpha and beta,
a run that stops at its decision, resumes exactly after an interruption, and `arena sprt` recomputing it."""

import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp

from arena import sprt
from arena.errors import ArenaError
from arena.sprt import (
    SprtParams,
    decision,
    elo_interval,
    llr,
    logistic,
    pentanomial,
    trinomial,
)
from tests._interrupt import cut_and_whole
from tests.conftest import Arena
from tests.test_scale_and_faults import ARENA, _done, _matches

# fastchess's app/tests/sprt_test.cpp (results of its own implementation, as W, L, D and LL, LD, WL, DD, WD, WW):
# (counts as Arena orders them: [L, D, W] or [LL, LD, WL+DD, WD, WW], elo0, elo1, model, LLR to 0.01).
REFERENCES = [
    ([36027, 68692, 36433], 0, 2, "normalized", 0.92),
    ([10650, 20431, 10871], -1.75, 0.25, "normalized", 2.30),
    ([0, 0, 4250], 0, 10, "normalized", 120.56),
    ([21184, 40708, 21404], 0.5, 2.5, "logistic", -1.57),
    ([57030, 106593, 57433], 0, 2, "logistic", -2.59),
    ([365, 16618, 36029 + 200, 16974, 390], 0, 2, "normalized", 2.25),
    ([127, 4883, 10311 + 401, 5150, 104], -1.75, 0.25, "normalized", 3.01),
    ([0, 0, 0, 0, 5550], 0, 5, "normalized", 111.82),
    ([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, "logistic", -3.07),
    ([871, 26175, 55003 + 980, 26678, 821], 0, 2, "logistic", -4.98),
]


@pytest.mark.parametrize("counts, elo0, elo1, model, expected", REFERENCES)
def test_llr_matches_the_references(counts, elo0, elo1, model, expected):
    assert llr(counts, SprtParams(elo0, elo1, model=model)) == pytest.approx(expected, rel=0.01, abs=0.005)


def _llr_by_a_general_solver(counts, elo0, elo1, model):
    """The GSPRT's LLR computed another way: each hypothesis' maximum-likelihood distribution found by a general
    constrained optimizer (scipy's SLSQP over the simplex, softmax-parametrized), not by the secular equation
    arena.sprt solves; regularization of empty categories to 0.001 as Fishtest and fastchess do."""
    n = np.array([c if c > 0 else 1e-3 for c in counts], dtype=float)
    total, freq = n.sum(), n / n.sum()
    scores = np.linspace(0.0, 1.0, len(counts))

    def probabilities(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    def constraint(elo):
        if model == "logistic":
            return lambda q: q @ scores - 1.0 / (1.0 + 10.0 ** (-elo / 400.0))
        t = elo / (800.0 / math.log(10.0)) * (math.sqrt(2.0) if len(counts) == 5 else 1.0)  # normalized Elo as a t-value
        return lambda q: (q @ scores - 0.5) - t * math.sqrt(q @ (scores - q @ scores) ** 2)

    def mle(elo):
        c = constraint(elo)
        result = minimize(lambda z: -freq @ (z - logsumexp(z)), np.log(freq), method="SLSQP",
                          constraints=[{"type": "eq", "fun": lambda z: c(probabilities(z))}], options={"ftol": 1e-15, "maxiter": 1000})  # fmt: skip
        return probabilities(result.x)

    return total * float(freq @ (np.log(mle(elo1)) - np.log(mle(elo0))))


@pytest.mark.parametrize("counts, elo0, elo1, model", [
    ([3, 40, 95, 52, 10], 0, 10, "logistic"), ([3, 40, 95, 52, 10], 0, 10, "normalized"),
    ([0, 5, 30, 60, 25], 0, 50, "logistic"), ([871, 26175, 55983, 26678, 821], 0, 2, "logistic"),
    ([365, 16618, 36229, 16974, 390], 0, 2, "normalized"), ([20, 30, 50], -5, 5, "logistic"), ([40, 10, 50], 0, 5, "normalized"),
])  # fmt: skip
def test_llr_equals_a_general_solvers(counts, elo0, elo1, model):
    """Pentanomial and trinomial LLRs agree with an independent computation (to 1e-6 where fastchess pins 0.01)."""
    assert llr(counts, SprtParams(elo0, elo1, model=model)) == pytest.approx(_llr_by_a_general_solver(counts, elo0, elo1, model), abs=1e-6)


def test_llr_of_wins_and_losses_is_the_binomial_ratio():
    """Without draws (a draw count of 0 is regularized to 0.001), the maximum-likelihood distributions are the
    binomial ones, so the LLR is W log(s1/s0) + L log((1-s1)/(1-s0)), computed here by hand."""
    wins, losses = 560, 440
    s0, s1 = logistic(0), logistic(20)  # 0.5 and 1 / (1 + 10^-0.05) = 0.528751
    by_hand = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
    assert by_hand == pytest.approx(560 * 0.055910 - 440 * 0.059221, abs=1e-3)  # = 5.2518
    assert llr([losses, 0, wins], SprtParams(0, 20)) == pytest.approx(by_hand, abs=0.01)


def test_bounds_decisions_and_estimates():
    params = SprtParams(0, 10)
    assert params.lower_bound == pytest.approx(-math.log(19)) and params.upper_bound == pytest.approx(math.log(19))
    assert decision(3.0, params) == "H1" and decision(-3.0, params) == "H0" and decision(0.5, params) is None
    assert trinomial([0, 0.5, 1, 1]) == [1, 1, 2] and pentanomial([0, 0.5, 1, 1.5, 2, 2]) == [1, 1, 1, 1, 2]
    elo, low, high, los = elo_interval([100, 0, 100])
    assert elo == pytest.approx(0) and low < 0 < high and los == pytest.approx(0.5)
    elo, low, high, los = elo_interval([30, 40, 130])  # score 0.75: +190.8 Elo
    assert elo == pytest.approx(190.85, abs=0.1) and low < elo < high and los > 0.999


@pytest.mark.parametrize("counts, wins, games", [([0, 0, 50], 50, 50), ([1, 0, 49], 49, 50), ([0, 0, 0, 0, 25], 25, 25),
                                                 ([3, 0, 47], 47, 50), ([50, 0, 0], 0, 50)])
def test_intervals_of_perfect_and_near_perfect_records_are_not_overconfident(counts, wins, games):
    """Each end stays within 15% of the exact (Clopper-Pearson) bound of the same record in Elo, and is infinite only
    where the record has no result on that side (a Wald interval on the counts alone put 50-0's lower end at +1139
    where the exact one says +446; 49-1 printed 'no upper limit' where the exact bound is +1317); 25 pairs won are
    25 units, as the pentanomial counts them; all draws give an interval of about +-40 Elo for 30 games, not +-1."""
    from scipy.stats import beta

    def exact(quantile: float, a: float, b: float) -> float:
        score = beta.ppf(quantile, a, b)
        return -math.inf if score <= 0 else math.inf if score >= 1 else -400 * math.log10(1 / score - 1)

    elo, low, high, los = elo_interval(counts)
    exact_low = exact(0.025, wins, games - wins + 1) if wins else -math.inf
    exact_high = exact(0.975, wins + 1, games - wins) if wins < games else math.inf
    for end, bound in ((low, exact_low), (high, exact_high)):
        assert end == bound if math.isinf(bound) else abs(end - bound) < 0.3 * abs(bound), (end, bound)
    assert abs(low - exact_low) < 0.15 * abs(exact_low) if wins else abs(high - exact_high) < 0.15 * abs(exact_high)
    assert low <= elo <= high and (los > 0.999 if wins > games / 2 else los < 0.001)
    elo, low, high, los = elo_interval([0, 30, 0])
    assert elo == 0 and 30 < high < 50 and low == pytest.approx(-high) and los == pytest.approx(0.5)


def test_the_estimate_lies_inside_its_interval_and_the_interval_narrows_with_results():
    rng = np.random.default_rng(3)
    for _ in range(200):
        counts = [int(c) for c in rng.choice([0, 0, 1, 2, 5, 20, 100], size=rng.choice([3, 5]))]
        if sum(counts) == 0:
            continue
        elo, low, high, _ = elo_interval(counts)
        assert low <= elo <= high and low < high, counts
        _, low4, high4, _ = elo_interval([4 * c for c in counts])
        assert low <= low4 and high4 <= high, counts


@pytest.mark.parametrize("counts", [[0, 0, 1], [0, 0, 3], [0, 1, 4], [2, 3, 9], [1, 0, 49], [5, 1, 0], [0, 0, 1, 0, 2],
                                    [0, 1, 2, 4, 6], [3, 0, 0, 0, 0], [40, 20, 60]])
def test_los_agrees_with_the_interval(counts):
    """LOS over 97.5% exactly when the interval's lower end is above 0 (and under 2.5% when its upper end is below 0):
    3 wins of 3 printed 'LOS 99.8%' beside an interval from -83 Elo."""
    _, low, high, los = elo_interval(counts)
    assert (los > 0.975) == (low > 0) and (los < 0.025) == (high < 0), (los, low, high)
    assert 0.5 < elo_interval([0, 0, 1])[3] < 0.9  # one win of one game: likelier than not, far from sure


def test_the_verdict_names_the_hypotheses_as_given():
    """Negative hypotheses are not said to be 'stronger' (the wording read '+-20' and 'stronger by 0 Elo')."""
    from arena.sprt_run import summary_lines

    base = {"test": "b", "base": "a", "model": "logistic", "alpha": 0.05, "beta": 0.05, "statistic": "trinomial",
            "games": 10, "counts": [0, 0, 10], "llr": 3.0, "lower_bound": -2.94, "upper_bound": 2.94,
            "elo": None, "elo_low": 300.0, "elo_high": None, "los": 1.0}  # fmt: skip
    lines = summary_lines({**base, "elo0": -20, "elo1": 20, "decision": "H1"})
    assert "H1 accepted: +20 Elo for b against a is far likelier than -20" in lines[1] and "+-" not in lines[1]
    lines = summary_lines({**base, "elo0": -100, "elo1": 0, "decision": "H0"})
    assert "H0 accepted: -100 Elo for b against a is far likelier than +0" in lines[1] and "stronger" not in lines[1]
    lines = summary_lines({**base, "elo0": 0, "elo1": 10, "decision": "H0", "elo": -0.01})
    assert "(b is not stronger by 10 Elo)" in lines[1] and "Elo difference +0.0 (95% +300.0 .. no upper limit)" in lines[2]


def _simulate(true_elo, params, draw_rate, paired, rng, limit=3000):
    """One test on simulated games: B's result per game drawn at the given Elo and draw rate."""
    s = logistic(true_elo)
    win, draw = s - draw_rate / 2, draw_rate
    counts = [0] * (5 if paired else 3)
    for _ in range(limit):
        total = 0.0
        for _game in range(2 if paired else 1):
            r = rng.random()
            total += 1.0 if r < win else 0.5 if r < win + draw else 0.0
        counts[round(total * 2)] += 1
        verdict = decision(llr(counts, params), params)
        if verdict:
            return verdict
    return None


@pytest.mark.parametrize("paired", [True, False])
def test_simulated_error_rates_stay_within_alpha_and_beta(paired):
    """300 simulated tests at each hypothesis' Elo: H1 accepted at elo0 (a false positive) about alpha of the
    time at most, H0 accepted at elo1 (a false negative) about beta at most (binomial noise: sd 0.013)."""
    params = SprtParams(0, 60, alpha=0.05, beta=0.05)
    rng = random.Random(7)
    runs = 300
    false_positives = sum(_simulate(0, params, 0.3, paired, rng) == "H1" for _ in range(runs))
    false_negatives = sum(_simulate(60, params, 0.3, paired, rng) == "H0" for _ in range(runs))
    assert false_positives / runs <= 0.05 + 0.03 and false_negatives / runs <= 0.05 + 0.03, (false_positives, false_negatives)
    # 50 Elo apart, tested for elo0=0, elo1=10: H1, nearly always.
    accepted = sum(_simulate(50, SprtParams(0, 10), 0.3, paired, rng) == "H1" for _ in range(30))
    assert accepted >= 28


def test_parse_sprt():
    assert sprt.parse_sprt("elo0=0,elo1=10") == SprtParams(0, 10)
    assert sprt.parse_sprt("elo0=-1,elo1=3,alpha=0.1,beta=0.2,model=normalized") == SprtParams(-1, 3, 0.1, 0.2, "normalized")


@pytest.mark.parametrize("text, message", [
    ("elo1=10", "needs elo0 and elo1"), ("elo0=5,elo1=1", "elo0 < elo1"), ("elo0=0,elo1=5,alpha=0.7", "alpha"),
    ("elo0=0,elo1=x", "must be a number"), ("elo0=0,elo1=5,model=bayes", "model"), ("elo0=0,elo1=5,gamma=1", "--sprt takes"),
    ("elo0=0,elo1=10000", "elo1 must be between -2000 and 2000"), ("elo0=0,elo1=10,elo1=20", "elo1 given twice"),
    ("elo0=-300,elo1=0,model=normalized", "elo0 must be between -200 and 200"),
])  # fmt: skip
def test_bad_sprt_is_one_line_and_exit_2(arena_cli, text, message):
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--sprt", text, ok=False)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("model", sprt.MODELS)
@pytest.mark.parametrize("counts", [[0, 0, 9], [9, 0, 0], [0, 9, 0], [1000, 0, 1], [0, 0, 0, 0, 9], [9, 0, 0, 0, 0], [0, 0, 9, 0, 0],
                                    [1, 0, 0, 0, 1000]])  # fmt: skip
def test_every_accepted_hypothesis_has_a_likelihood_ratio_even_for_one_sided_records(counts, model):
    """At the bounds --sprt accepts, the MLE exists for records of all wins, all losses or all draws (a bound past them
    once crashed the run after its first game, leaving it half-written)."""
    top = sprt.MAX_ELO[model]
    for elo0, elo1 in ((0.0, top), (-top, top), (top - 1.0, top), (-top, 1.0 - top)):
        assert math.isfinite(sprt.llr(counts, SprtParams(elo0, elo1, model=model)))


def test_sprt_needs_two_agents(arena_cli):
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,center", "--sprt",
                       "elo0=0,elo1=10", ok=False)  # fmt: skip
    assert result.exit_code == 2 and "two agents" in result.stderr


def test_an_agent_against_itself_accepts_h0_or_runs_out(arena_cli):
    result = arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,random:seed=1", "--sprt",
                       "elo0=0,elo1=60", "--openings", "random:2", "--rounds", "150", "--name", "self")  # fmt: skip
    assert "pair 1: LLR" in result.stderr and "(bounds -2.94, 2.94)" in result.stderr
    report = arena_cli.json("sprt", "self")
    assert report["decision"] in ("H0", "inconclusive") and report["statistic"] == "pentanomial"
    assert f"LLR {report['llr']:.2f}" in result.stdout and "LOS" in result.stdout
    assert len(arena_cli.json("matches", "--tournament", "self")) == 2 * report["pairs"]


def test_a_clearly_stronger_agent_is_accepted_and_play_stops_there(arena_cli):
    result = arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy", "--sprt", "elo0=0,elo1=10",
                       "--name", "strong")  # fmt: skip
    report = arena_cli.json("sprt", "strong")
    assert report["decision"] == "H1" and report["statistic"] == "trinomial" and report["elo_low"] > 100
    assert "H1 accepted" in result.stdout and report["games"] == len(arena_cli.json("matches", "--tournament", "strong")) < 150
    # greedy lost one game of 106 (seed 0): the interval has an upper end all the same (it said 'no upper limit')
    assert report["counts"] == [1, 0, 105] and report["elo_low"] < report["elo"] < report["elo_high"] < 1500
    assert f"(95% {report['elo_low']:+.1f} .. {report['elo_high']:+.1f})" in result.stdout
    again = arena_cli("run-tournament", "--resume", "strong")  # decided: nothing more to play
    assert "played 0 matches" in again.stderr
    # The same stored matches under other parameters: `arena sprt --sprt` recomputes the test.
    other = arena_cli.json("sprt", "strong", "--sprt", "elo0=0,elo1=5,alpha=0.01,beta=0.01")
    assert other["llr"] != report["llr"] and other["lower_bound"] == pytest.approx(math.log(0.01 / 0.99))


def test_workers_store_the_matches_one_worker_does(arena_cli):
    """Workers finish chunks in any order; the test still takes matches in schedule order and play stops at the
    deciding one, so two workers store exactly the matches one does (they stored up to 336 against 81)."""
    sprt = ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,random:seed=1", "--sprt", "elo0=0,elo1=60",
            "--rounds", "5000", "--quiet"]  # fmt: skip
    arena_cli(*sprt, "--name", "one")
    arena_cli(*sprt, "--name", "two", "--workers", "2")
    one, two = (arena_cli.json("matches", "--tournament", name) for name in ("one", "two"))
    assert [m["index"] for m in one] == list(range(81))  # H0 accepted at game 81
    def played(matches: list) -> list:
        return [(m["index"], m["seed"], m["turns"], [s["outcome"] for s in m["seats"]]) for m in matches]

    assert played(two) == played(one)


def test_matches_finished_out_of_order_are_taken_in_schedule_order():
    """What the run does with the workers' outcomes when an SPRT counts them (chunks finish in any order)."""
    from types import SimpleNamespace

    from arena.tournament import MatchTask, ScheduleOrder

    tasks = [MatchTask(index, (0, 1)) for index in (2, 3, 5, 6, 7, 8)]  # 0, 1 and 4 were stored already

    def taken(order: ScheduleOrder, *indices: int) -> list[int]:
        return [o.schedule_index for index in indices for o in order.add(SimpleNamespace(schedule_index=index))]  # type: ignore[arg-type]

    order = ScheduleOrder(tasks)
    assert taken(order, 5, 6, 2) == [2] and sorted(order.held) == [5, 6]  # 3 not back yet: 5 and 6 wait
    assert taken(order, 8, 3, 7) == [3, 5, 6, 7, 8] and not order.held
    # Play stops before 3 is back (Ctrl-C, an error): what waits is taken out of turn, and passed over later.
    order = ScheduleOrder(tasks)
    assert taken(order, 5, 2, 6) == [2] and [o.schedule_index for o in order.rest()] == [5, 6] and not order.held
    assert taken(order, 3, 7) == [3, 7]


def test_an_interrupted_sprt_resumes_exactly(tmp_path, arena_cli):
    """Stopped part-way (the storage path of a kill: whatever was flushed stays), resumed: the same matches and the
    same decision at the same pair as an uninterrupted run."""
    def check_cut():
        report = arena_cli.json("sprt", "cut")
        assert report["decision"] == "continue"
        # The state the run stored with its matches is the one recomputed from them.
        assert report["stored"] == {"units": report["pairs"], "counts": report["counts"], "llr": pytest.approx(report["llr"]),
                                    "decision": None, "agrees": True}  # fmt: skip

    cut_and_whole(arena_cli.db_path, 7, check_cut, game="connect_four", agents="center,greedy", rounds=200, seed=4,
                  openings="random:3", sprt="elo0=0,elo1=20")  # fmt: skip
    cut, whole = arena_cli.json("sprt", "cut"), arena_cli.json("sprt", "whole")
    assert cut["decision"] in ("H0", "H1") and {**cut, "tournament": 0} == {**whole, "tournament": 0}
    assert cut["stored"]["agrees"] and cut["stored"]["decision"] == cut["decision"]
    strip = lambda ms: [(m["index"], m["seed"], m["turns"], [s["outcome"] for s in m["seats"]]) for m in ms]
    assert strip(arena_cli.json("matches", "--tournament", "cut")) == strip(arena_cli.json("matches", "--tournament", "whole"))


def test_an_sprt_killed_with_kill_9_resumes_the_test_exactly(tmp_path):
    """A real `arena run-tournament --sprt` process killed with SIGKILL part-way, then --resume: the same matches, LLR
    and decision as a run never killed."""
    db = tmp_path / "arena.db"
    env = dict(os.environ, ARENA_DB=str(db), ARENA_FLUSH_SECONDS="0.02")
    args = ["run-tournament", "--game", "connect_four", "--agents", "greedy,greedy:seed=1", "--openings", "random:2",
            "--sprt", "elo0=0,elo1=5", "--rounds", "150", "--seed", "5", "--quiet"]  # fmt: skip
    log = (tmp_path / "victim.log").open("w")
    victim = subprocess.Popen([ARENA, *args, "--name", "killed"], env=env, cwd=tmp_path, start_new_session=True,
                              stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    arena = Arena(db, plugins_dirs=())  # reads the file only once it exists
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and victim.poll() is None and _done(arena, "killed") < 3:
        time.sleep(0.02)
    assert victim.poll() is None, f"the run ended before it was killed: {(tmp_path / 'victim.log').read_text()}"
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    stored = _done(arena, "killed")
    report = arena.json("sprt", "killed")
    assert report["decision"] == "continue"
    # Killed between two transactions: the state stored is that of the matches stored (none seen but not stored).
    assert report["stored"] is None or (report["stored"]["agrees"] and report["stored"]["units"] == report["pairs"])
    subprocess.run([ARENA, "run-tournament", "--resume", "killed", "--quiet"], env=env, cwd=tmp_path, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([ARENA, *args, "--name", "straight"], env=env, cwd=tmp_path, check=True, capture_output=True)
    killed, straight = arena.json("sprt", "killed"), arena.json("sprt", "straight")
    assert 0 < stored < 2 * killed["pairs"], "killed part-way"
    assert {**killed, "tournament": 0} == {**straight, "tournament": 0}
    assert _matches(arena, "killed") == _matches(arena, "straight")


@pytest.mark.parametrize("edit", [
    "update sprt_states set decision = 'H1', llr = 9.5",  # a decision the matches do not give
    "update sprt_states set counts = '[0, 0, 9, 0, 0]'",
    "update sprt_states set units = units + 1",
    "update sprt_states set pending = '{\"999\": 1.0}'",  # a score of a match that is not stored
])  # fmt: skip
def test_a_resume_refuses_a_stored_state_its_matches_do_not_give(arena_cli, edit):
    """The resume checks the stored state against the one its stored matches give (the recomputation `arena sprt`
    runs): an edited or corrupt row is refused in one line (exit 2) and nothing more is played; `arena sprt` prints
    the disagreement. With the row put back, the resume goes on to a decision."""
    kept = []

    def edit_the_stored_state():
        with sqlite3.connect(arena_cli.db_path) as c:
            (tid,) = c.execute("select id from tournaments where name = 'cut'").fetchone()
            kept.append(c.execute("select units, counts, llr, decision, pending from sprt_states where tournament_id = ?", (tid,)).fetchone())
            assert c.execute(f"{edit} where tournament_id = ?", (tid,)).rowcount == 1

    with pytest.raises(ArenaError, match="stored SPRT state .* disagrees with the one its stored matches give"):
        cut_and_whole(arena_cli.db_path, 6, edit_the_stored_state, game="connect_four", agents="center,greedy",
                      rounds=200, seed=4, openings="random:3", sprt="elo0=0,elo1=20")  # fmt: skip
    before = len(arena_cli.json("matches", "--tournament", "cut"))
    result = arena_cli("run-tournament", "--resume", "cut", ok=False)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "disagrees with the one its stored matches give" in result.stderr and "Traceback" not in result.stderr
    assert len(arena_cli.json("matches", "--tournament", "cut")) == before  # nothing more played
    report = arena_cli.json("sprt", "cut")
    assert report["stored"]["agrees"] is False and report["decision"] == "continue"
    assert "warning: the state the run stored" in arena_cli("sprt", "cut").stdout
    with sqlite3.connect(arena_cli.db_path) as c:  # the row as the run stored it: the resume goes on
        c.execute("update sprt_states set units = ?, counts = ?, llr = ?, decision = ?, pending = ?", kept[0])
    arena_cli("run-tournament", "--resume", "cut", "--quiet")
    assert arena_cli.json("sprt", "cut")["stored"]["agrees"] and arena_cli.json("sprt", "cut")["decision"] in ("H0", "H1")


def test_the_stored_state_follows_every_flush_on_sqlite_and_postgresql(arena_db, monkeypatch):
    """Stored after every match (each flush rewrites the one row), on both databases: it ends equal to the recomputed test."""
    from arena import tournament

    monkeypatch.setattr(tournament, "FLUSH_SECONDS", 0.0)
    arena_db("run-tournament", "--game", "connect_four", "--agents", "random,greedy", "--sprt", "elo0=0,elo1=10",
             "--openings", "random:2", "--rounds", "12", "--name", "flushed", "--quiet")  # fmt: skip
    report = arena_db.json("sprt", "flushed")
    assert report["stored"] == {"units": report["pairs"], "counts": report["counts"], "llr": pytest.approx(report["llr"]),
                                "decision": report["decision"] if report["decision"] in ("H0", "H1") else None, "agrees": True}  # fmt: skip
    assert report["pairs"] >= 3


ABANDONED = """
import os, sys, threading, time
from arena import tournament
from arena.library.storage import open_database
from arena.plugins import get_registry

tournament.FLUSH_SECONDS = 1e9  # nothing written by the play thread: only keep_pending's save can store them
registry, database = get_registry(()), open_database(sys.argv[1])
tournament_id = tournament.create(registry, database, tournament.TournamentRequest(
    name="cut", game="connect_four", agents="center,greedy", rounds=200, seed=4, openings="random:3", sprt="elo0=0,elo1=20"))
saves = []

def abandon() -> None:  # as the queue worker's heartbeat does for a match that will not end: store, then exit
    saves[0]()
    os._exit(75)

def progress(done: int, total: int) -> None:
    if done >= 7:
        threading.Thread(target=abandon).start()
        time.sleep(60)  # the play thread, stuck

tournament.play(database, registry, tournament_id, progress=progress, keep_pending=saves.append)
"""


def test_an_abandoned_sprt_stores_its_pending_matches_with_their_state(tmp_path):
    """A worker abandoning an SPRT tournament stuck in a match (arena.server.runner) stores the matches it played and
    had not written, with the test's state as of them: the stored state agrees with its matches, and the resumed
    test ends as a run never abandoned."""
    db = tmp_path / "arena.db"
    cut = subprocess.run([sys.executable, "-c", ABANDONED, f"sqlite:///{db}"], capture_output=True, text=True, timeout=120)
    assert cut.returncode == 75, cut.stderr
    arena = Arena(db, plugins_dirs=())
    assert _done(arena, "cut") == 7  # all of them, written by the save alone
    report = arena.json("sprt", "cut")
    assert report["decision"] == "continue" and report["stored"]["agrees"] and report["stored"]["units"] == report["pairs"]
    arena("run-tournament", "--resume", "cut", "--quiet")
    arena("run-tournament", "--game", "connect_four", "--agents", "center,greedy", "--rounds", "200", "--seed", "4",
          "--openings", "random:3", "--sprt", "elo0=0,elo1=20", "--name", "whole", "--quiet")  # fmt: skip
    cut, whole = arena.json("sprt", "cut"), arena.json("sprt", "whole")
    assert cut["decision"] in ("H0", "H1") and {**cut, "tournament": 0} == {**whole, "tournament": 0}
    assert _matches(arena, "cut") == _matches(arena, "whole")
