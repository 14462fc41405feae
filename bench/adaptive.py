"""Adaptive scheduling against round-robin on simulated agents of known strength.

16 simulated agents (strengths spaced STEP Elo apart, or with --random drawn from a normal of sd
STEP * 4 per run, games won with the logistic Elo probability, draws at a fixed rate). Both
schedulers play in batches of 16 matches; after each batch the Bradley-Terry fit is checked against
the truth: for the adaptive schedule (arena.adaptive.choose_batch, what --format adaptive runs)
both the plain fit (what the leaderboard shows: consistent under an adaptive design when the model
holds, since the choices depend only on past results) and the inverse-probability weighted fit
(the estimate of a uniform design, robust to a wrong model, at a cost in variance). A run ends when every adjacent pair of agents
is separated (95% intervals that do not overlap) or when Kendall's rank correlation with the truth
reaches 0.95 (--correlation spearman: Spearman's). Printed: matches needed per run (mean, median), and the ratio adaptive / round-robin
(target <= 0.5) with its 95% bootstrap interval over runs (20 runs leave it about +-0.17; 100 runs
about +-0.07). Printed too, as yardsticks of that target: the best fixed design for this field
(oracle_design_ratio: the share of games per pair, found knowing the true strengths, that
minimizes the summed variance of the adjacent differences) needs this ratio of round-robin's
games for the same precision; and played under the same stop ("fixed, told strengths"), the
fixed design of the fewest expected misordered pairs after as many games as round-robin needs
(misorder_design, found knowing the true strengths), each game to the pair furthest below its
share, from the first game on. Last, a scheduler told the truth (told_the_truth: each game goes to
a pair the fit orders wrongly, which no real scheduler can know): it beats the best fixed design by
far, through the stopping time (it mends exactly the orders the stop is waiting for), and its
figure shows how much of the gap to the target is information the games have not given yet.

    .venv/bin/python bench/adaptive.py [--runs 50] [--step 40] [--seed 0] [--random]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.adaptive import (
    ShareRule,
    _directions,
    all_pairs,
    choose_batch,
    fit,
    inverse_probability_weights,
    shares_of_draws,
    thompson_shares,
)
from arena.ratings import ELO_PER_NATURAL

AGENTS = 16
BATCH = 16
DRAW_RATE = 0.1
LIMIT = 12_000


def kendall(estimate: np.ndarray, truth: np.ndarray) -> float:
    n = len(truth)
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            sign = np.sign(estimate[i] - estimate[j]) * np.sign(truth[i] - truth[j])
            concordant += sign > 0
            discordant += sign < 0
    return (concordant - discordant) / (n * (n - 1) / 2)


def spearman(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Spearman's rank correlation: the correlation of the two rankings' positions (no ties in continuous fits)."""
    return float(np.corrcoef(np.argsort(np.argsort(estimate)), np.argsort(np.argsort(truth)))[0, 1])


CORRELATIONS = {"kendall": kendall, "spearman": spearman}


def separated(theta: np.ndarray, covariance: np.ndarray, truth: np.ndarray) -> bool:
    """Every pair adjacent in the true order has non-overlapping 95% (Laplace) intervals."""
    order = np.argsort(truth)
    sd = np.sqrt(np.diag(covariance))
    centred = theta - theta.mean()
    for low, high in zip(order[:-1], order[1:]):
        if centred[high] - 1.96 * sd[high] <= centred[low] + 1.96 * sd[low]:
            return False
    return True


def play(pair: tuple[int, int], strengths: np.ndarray, rng: np.random.Generator) -> float:
    """First agent's score in one simulated game."""
    a, b = pair
    p = 1.0 / (1.0 + 10.0 ** ((strengths[b] - strengths[a]) / 400.0))
    r = rng.random()
    if r < DRAW_RATE:
        return 0.5
    return 1.0 if rng.random() < p else 0.0


def done(cells: dict, strengths: np.ndarray, correlation: Callable[[np.ndarray, np.ndarray], float] = kendall) -> bool:
    theta, covariance = fit(AGENTS, cells)
    return correlation(theta, strengths) >= 0.95 or separated(theta, covariance, strengths)


def told_the_truth(strengths: np.ndarray) -> ShareRule:
    """A share rule no real scheduler can have: the next game goes to the pair of greatest gain among those the fit
    orders otherwise than the true strengths (thompson_shares with the truth as its one draw). Its figure says how
    much of the gap to the target is information the games have not given yet."""
    truth = (strengths / ELO_PER_NATURAL)[None, :]

    def shares(pairs: np.ndarray, theta: np.ndarray, covariance: np.ndarray, gain: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:  # fmt: skip
        return shares_of_draws(pairs, theta, gain, truth)

    return shares


def run(adaptive: bool, strengths: np.ndarray, seed: int, weighted: bool = True,
        correlation: Callable[[np.ndarray, np.ndarray], float] = kendall, oracle: bool = False,
        design: np.ndarray | None = None, trace: list[tuple[int, float]] | None = None, until: int = 0) -> int:  # fmt: skip
    """Matches one run needs: round-robin (adaptive False), the adaptive schedule after a first round (told the
    truth with oracle), or a fixed design's shares from the first game (design: each game to the pair furthest
    below its share so far). With `until`, the run plays that many matches whatever the stop says and appends the
    matches so far and the fit's rank correlation with the truth after every batch to `trace` (the budget reading)."""
    rng = np.random.default_rng(seed)
    rule = told_the_truth(strengths) if oracle else thompson_shares
    pairs = all_pairs(AGENTS)
    counts: dict[tuple[int, int, float], float] = {}  # what the scheduler sees: plain counts
    played: list[tuple[int, float, float]] = []  # (pair index, score, selection probability)
    initial = [k for k in rng.permutation(len(pairs))]  # round-robin order: a fresh shuffle of every pair per round
    queue = list(initial)
    tracked = np.zeros(len(pairs))
    while len(played) < LIMIT:
        if design is not None:
            batch = []
            for _ in range(BATCH):
                k = int(np.argmax(design * (tracked.sum() + 1.0) - tracked))
                tracked[k] += 1.0
                batch.append((k, 1.0))
        elif not adaptive or len(played) < len(pairs):
            if not queue:
                queue = list(rng.permutation(len(pairs)))
            batch = [(queue.pop(0), 1.0 / len(pairs)) for _ in range(min(BATCH, len(queue)))]
        else:
            batch = choose_batch(AGENTS, counts, BATCH, rng, rule=rule)
        for k, probability in batch:
            score = play(pairs[k], strengths, rng)
            a, b = pairs[k]
            counts[(a, b, score)] = counts.get((a, b, score), 0.0) + 1.0
            played.append((k, score, probability))
        weights = inverse_probability_weights([p for _, _, p in played]) if weighted else np.ones(len(played))
        counted: dict[tuple[int, int, float], float] = {}
        for (k, score, _), weight in zip(played, weights):
            a, b = pairs[k]
            counted[(a, b, score)] = counted.get((a, b, score), 0.0) + float(weight)
        if until:
            assert trace is not None
            trace.append((len(played), correlation(fit(AGENTS, counted)[0], strengths)))
            if len(played) >= until:
                return len(played)
        elif done(counted, strengths, correlation):
            return len(played)
    return len(played)


def budget_reading(curves: list[list[float]] | np.ndarray, matches: list[int]) -> tuple[int | None, int | None]:
    """From runs played to a fixed number of matches (each a correlation per batch, batches ending at `matches`): the
    matches after which the mean correlation over runs reaches 0.95, and after which half the runs are at 0.95 or
    more (what a user of --budget gets on average, and in the median run); None when never within the runs."""
    table = np.asarray(curves)
    found = []
    for series in (table.mean(axis=0) >= 0.95, (table >= 0.95).mean(axis=0) >= 0.5):
        found.append(matches[int(np.argmax(series))] if series.any() else None)
    return found[0], found[1]


def budget_interval(adaptive: list[list[float]], round_robin: list[list[float]], adaptive_matches: list[int],
                    round_robin_matches: list[int], resamples: int = 1000) -> tuple[float, float] | None:  # fmt: skip
    """95% bootstrap interval of the budget reading's ratio (adaptive's budget for a mean correlation of 0.95 over
    round-robin's), runs resampled by run as in ratio_interval; None when a resample's mean never reaches 0.95. The
    mean curve rises slowly near 0.95, so where it crosses moves a lot with the runs drawn (hundreds of matches for
    round-robin at 40 Elo with 300 runs)."""
    a, b = np.asarray(adaptive), np.asarray(round_robin)
    ratios = []
    for rows in resampled_runs(len(a), resamples):
        found_a, found_b = budget_reading(a[rows], adaptive_matches)[0], budget_reading(b[rows], round_robin_matches)[0]
        if found_a is None or found_b is None:
            return None
        ratios.append(found_a / found_b)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def field(args: argparse.Namespace, run_number: int) -> np.ndarray:
    """The true strengths of one run: evenly spaced, or (--random) drawn from the run's own generator."""
    if not args.random:
        return np.arange(AGENTS) * args.step
    return np.random.default_rng([args.seed, run_number, 7]).normal(0.0, 4.0 * args.step, AGENTS)


def frank_wolfe(gradient: Callable[[np.ndarray], np.ndarray], size: int, steps: int) -> np.ndarray:
    """A share of the games per pair (a point of the simplex) that lowers a criterion of the design, by Frank-Wolfe:
    each step moves the shares towards the one pair where the criterion falls fastest."""
    share = np.full(size, 1.0 / size)
    for t in range(steps):
        best = int(np.argmin(gradient(share)))
        share *= 1.0 - 2.0 / (t + 3.0)
        share[best] += 2.0 / (t + 3.0)
    return share


def _information(strengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair's direction e_a - e_b, its true difference in log-odds, and the Fisher information of one game of
    it."""
    directions = _directions(len(strengths))
    difference = directions @ strengths / ELO_PER_NATURAL
    p = 1.0 / (1.0 + np.exp(-difference))
    return directions, difference, p * (1.0 - p)


def _design_covariance(directions: np.ndarray, information: np.ndarray, share: np.ndarray) -> np.ndarray:
    """The covariance of the strengths after games shared out by `share`, each pair's game worth `information` (the
    mean pinned)."""
    return np.linalg.inv((directions.T * (information * share)) @ directions + np.ones((len(directions.T),) * 2))


def oracle_design_ratio(strengths: np.ndarray, steps: int = 2000) -> float:
    """Games the best fixed design needs, as a ratio of round-robin's, for the same sum of the variances of the
    differences between agents adjacent in the true order (Fisher information of the Bradley-Terry model at the
    true strengths; the design, a share of the games per pair, found by Frank-Wolfe on the simplex)."""
    n = len(strengths)
    directions, _, w = _information(strengths)
    order = np.argsort(strengths)
    contrasts = np.zeros((n - 1, n))
    contrasts[np.arange(n - 1), order[1:]], contrasts[np.arange(n - 1), order[:-1]] = 1.0, -1.0

    def gradient(share: np.ndarray) -> np.ndarray:
        c = _design_covariance(directions, w, share)
        return -w * np.einsum("ki,ij,kj->k", directions, c @ contrasts.T @ contrasts @ c, directions)

    def criterion(share: np.ndarray) -> float:
        return float(np.trace(contrasts @ _design_covariance(directions, w, share) @ contrasts.T))

    round_robin = np.full(len(w), 1.0 / len(w))
    return criterion(frank_wolfe(gradient, len(w), steps)) / criterion(round_robin)


def misorder_design(strengths: np.ndarray, games: float, steps: int = 1500) -> np.ndarray:
    """The fixed design, knowing the true strengths, of the fewest expected misordered pairs after `games` games: the
    shares that lower the sum over pairs of Phi(-|delta| / sd) (delta the true difference, sd^2 the variance of its
    estimate under the design), found by Frank-Wolfe. What the Kendall stop counts, where oracle_design_ratio's
    criterion is the separation stop's; bench runs play it under the same stop (run(design=...))."""
    directions, difference, w = _information(strengths)
    delta = np.abs(difference)

    def gradient(share: np.ndarray) -> np.ndarray:
        cross = directions @ _design_covariance(directions, games * w, share) @ directions.T
        v = np.maximum(np.diag(cross), 1e-12)
        falls = norm.pdf(delta / np.sqrt(v)) * delta / (2.0 * v**1.5)  # d Phi(-delta / sqrt(v)) / dv, per pair
        return -(falls @ cross**2) * w * games  # dv_ij / d share_k = -games w_k cross[ij, k]^2

    return frank_wolfe(gradient, len(w), steps)


def resampled_runs(runs: int, resamples: int) -> np.ndarray:
    """The bootstrap's rows: `resamples` draws of `runs` run numbers with replacement, the same for every call."""
    return np.random.default_rng(0).integers(runs, size=(resamples, runs))


def ratio_interval(adaptive: list[int], round_robin: list[int], resamples: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of mean(adaptive) / mean(round_robin) over runs (resampled by run, so a run's field
    stays paired with itself): the run-to-run noise of the ratio."""
    a, b = np.asarray(adaptive, dtype=float), np.asarray(round_robin, dtype=float)
    index = resampled_runs(len(a), resamples)
    ratios = a[index].mean(axis=1) / b[index].mean(axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="runs per scheduler (the ratio's interval says how noisy)")
    parser.add_argument("--step", type=float, default=40.0, help="Elo between adjacent agents")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ipw-runs", type=int, default=5, help="runs of the slow weighted fit (it often needs the limit)")
    parser.add_argument(
        "--correlation",
        choices=sorted(CORRELATIONS),
        default="kendall",
        help="the rank correlation whose 0.95 ends a run (Kendall: at most 3 of 120 pairs misordered)",
    )
    parser.add_argument("--random", action="store_true", help="strengths drawn at random (sd 4 x step), one field per run")
    parser.add_argument("--budget-reading", type=int, default=0, metavar="MATCHES",
                        help="instead: round-robin and adaptive each play MATCHES matches per run; print the matches after "
                             "which the mean rank correlation over runs reaches 0.95, and the median run's")  # fmt: skip
    args = parser.parse_args()
    if args.budget_reading:
        budget_main(args)
        return
    strengths = np.arange(AGENTS) * args.step
    shape = f"strengths random, sd {4 * args.step:g}" if args.random else f"{args.step:g} Elo apart (0..{strengths[-1]:g})"
    print(f"{AGENTS} simulated agents {shape}, draw rate {DRAW_RATE}, "
          f"batches of {BATCH}, {args.runs} runs each, stop at {args.correlation} 0.95 or separation")  # fmt: skip
    results: dict[str, list[int]] = {}
    correlation = CORRELATIONS[args.correlation]

    def design(r: int) -> np.ndarray:  # the fewest expected misorders after as many games as round-robin needs
        return misorder_design(field(args, r), statistics.mean(results["round-robin"]))

    schedulers: list[tuple[str, int, Callable[[int], int]]] = [
        ("round-robin", args.runs, lambda r: run(False, field(args, r), args.seed * 1000 + r, False, correlation)),
        ("adaptive, plain fit", args.runs, lambda r: run(True, field(args, r), args.seed * 1000 + r, False, correlation)),
        ("adaptive, IPW fit", args.ipw_runs, lambda r: run(True, field(args, r), args.seed * 1000 + r, True, correlation)),
        ("fixed, told strengths", args.runs,
         lambda r: run(True, field(args, r), args.seed * 1000 + r, False, correlation, design=design(r))),
        ("told the truth", args.runs,
         lambda r: run(True, field(args, r), args.seed * 1000 + r, False, correlation, oracle=True)),
    ]  # fmt: skip
    for name, runs, needs in schedulers:
        if runs <= 0:
            continue
        start = time.perf_counter()
        needed = [needs(r) for r in range(runs)]
        results[name] = needed
        print(f"{name:>21}: matches needed mean {statistics.mean(needed):8.1f}  median {statistics.median(needed):8.1f}  "
              f"min {min(needed)}  max {max(needed)}  ({runs} runs, {sum(n >= LIMIT for n in needed)} stopped at the "
              f"{LIMIT} limit, {time.perf_counter() - start:.1f} s)", flush=True)  # fmt: skip
    oracle = statistics.mean(oracle_design_ratio(field(args, r)) for r in range(args.runs if args.random else 1))
    print(f"the best fixed design, knowing the true strengths: {oracle:.2f}x round-robin's matches for the same precision "
          "of the adjacent differences (the separation stop's criterion)")  # fmt: skip
    tails = {"told the truth": "no scheduler can be told which orders are wrong",
             "fixed, told strengths": "the best fixed design found, told the true strengths, under the same stop"}  # fmt: skip
    for name in ("adaptive, plain fit", "adaptive, IPW fit", "fixed, told strengths", "told the truth"):
        if name not in results:
            continue
        round_robin = results["round-robin"][: len(results[name])]  # the same runs' fields
        base = statistics.mean(round_robin)
        median = statistics.median(results[name]) / statistics.median(round_robin)
        low, high = ratio_interval(results[name], round_robin)
        tail = tails.get(name, "target <= 0.5x")
        print(f"{name} / round-robin: {statistics.mean(results[name]) / base:.2f}x of the matches "
              f"(95% interval over runs {low:.2f}..{high:.2f}; median {median:.2f}x); {tail}")  # fmt: skip


def budget_main(args: argparse.Namespace) -> None:
    """The budget reading: the matches a fixed budget needs for a ranking at 0.95, on average and in the median run."""
    correlation = CORRELATIONS[args.correlation]
    print(f"{AGENTS} simulated agents, {args.runs} runs each played to {args.budget_reading} matches (budget reading, "
          f"{args.correlation} 0.95)")  # fmt: skip
    found: dict[str, tuple[int | None, int | None]] = {}
    traced: dict[str, tuple[list[list[float]], list[int]]] = {}
    for name, adaptive in (("round-robin", False), ("adaptive", True)):
        start = time.perf_counter()
        curves: list[list[tuple[int, float]]] = [[] for _ in range(args.runs)]
        for r, curve in enumerate(curves):
            run(adaptive, field(args, r), args.seed * 1000 + r, False, correlation, trace=curve, until=args.budget_reading)
        matches = [m for m, _ in curves[0]]  # the same batches in every run of a scheduler
        traced[name] = [[c for _, c in curve] for curve in curves], matches
        found[name] = budget_reading(*traced[name])
        print(f"{name:>12}: mean correlation reaches 0.95 after {found[name][0]} matches, half the runs after "
              f"{found[name][1]} ({time.perf_counter() - start:.1f} s)", flush=True)  # fmt: skip
    for k, label in enumerate(("mean", "median run")):
        a, b = found["adaptive"][k], found["round-robin"][k]
        print(f"adaptive / round-robin ({label}): " + (f"{a / b:.2f}x" if a and b else "not reached within the budget"))
    interval = budget_interval(traced["adaptive"][0], traced["round-robin"][0], traced["adaptive"][1], traced["round-robin"][1])
    print("95% interval of the mean's ratio over runs (bootstrap): "
          + (f"{interval[0]:.2f}..{interval[1]:.2f}" if interval else "none: some resamples never reach 0.95"))


if __name__ == "__main__":
    main()
