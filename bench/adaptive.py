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
about +-0.07). Printed too, as the yardstick of that target: the best fixed design for this
field (oracle_design_ratio: the share of games per pair, found knowing the true strengths, that
minimizes the summed variance of the adjacent differences) needs this ratio of round-robin's
games for the same precision. Last, a scheduler told the truth (told_the_truth: each game goes to
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.adaptive import ShareRule, all_pairs, choose_batch, fit, inverse_probability_weights, shares_of_draws, thompson_shares

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
    truth = (strengths * np.log(10.0) / 400.0)[None, :]

    def shares(directions: np.ndarray, theta: np.ndarray, covariance: np.ndarray, gain: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:  # fmt: skip
        return shares_of_draws(directions, theta, gain, truth)

    return shares


def run(adaptive: bool, strengths: np.ndarray, seed: int, weighted: bool = True,
        correlation: Callable[[np.ndarray, np.ndarray], float] = kendall, oracle: bool = False) -> int:  # fmt: skip
    rng = np.random.default_rng(seed)
    rule = told_the_truth(strengths) if oracle else thompson_shares
    pairs = all_pairs(AGENTS)
    counts: dict[tuple[int, int, float], float] = {}  # what the scheduler sees: plain counts
    played: list[tuple[int, float, float]] = []  # (pair index, score, selection probability)
    initial = [k for k in rng.permutation(len(pairs))]  # round-robin order: a fresh shuffle of every pair per round
    queue = list(initial)
    while len(played) < LIMIT:
        if not adaptive or len(played) < len(pairs):
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
        if done(counted, strengths, correlation):
            return len(played)
    return len(played)


def field(args: argparse.Namespace, run_number: int) -> np.ndarray:
    """The true strengths of one run: evenly spaced, or (--random) drawn from the run's own generator."""
    if not args.random:
        return np.arange(AGENTS) * args.step
    return np.random.default_rng([args.seed, run_number, 7]).normal(0.0, 4.0 * args.step, AGENTS)


def oracle_design_ratio(strengths: np.ndarray, steps: int = 2000) -> float:
    """Games the best fixed design needs, as a ratio of round-robin's, for the same sum of the variances of the
    differences between agents adjacent in the true order (Fisher information of the Bradley-Terry model at the
    true strengths; the design, a share of the games per pair, found by Frank-Wolfe on the simplex)."""
    n = len(strengths)
    pairs = all_pairs(n)
    directions = np.zeros((len(pairs), n))
    for k, (a, b) in enumerate(pairs):
        directions[k, a], directions[k, b] = 1.0, -1.0
    p = 1.0 / (1.0 + np.exp(-(directions @ strengths) * np.log(10.0) / 400.0))
    w = p * (1.0 - p)
    order = np.argsort(strengths)
    contrasts = np.zeros((n - 1, n))
    contrasts[np.arange(n - 1), order[1:]], contrasts[np.arange(n - 1), order[:-1]] = 1.0, -1.0

    def criterion(share: np.ndarray) -> tuple[float, np.ndarray]:
        covariance = np.linalg.inv((directions.T * (w * share)) @ directions + np.ones((n, n)))  # the mean pinned
        return float(np.trace(contrasts @ covariance @ contrasts.T)), covariance

    share = np.full(len(pairs), 1.0 / len(pairs))
    round_robin, _ = criterion(share)
    for t in range(steps):
        _, covariance = criterion(share)
        m = covariance @ contrasts.T @ contrasts @ covariance
        best = int(np.argmin(-w * np.einsum("ki,ij,kj->k", directions, m, directions)))
        share *= 1.0 - 2.0 / (t + 3.0)
        share[best] += 2.0 / (t + 3.0)
    return criterion(share)[0] / round_robin


def ratio_interval(adaptive: list[int], round_robin: list[int], resamples: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of mean(adaptive) / mean(round_robin) over runs (resampled by run, so a run's field
    stays paired with itself): the run-to-run noise of the ratio."""
    a, b = np.asarray(adaptive, dtype=float), np.asarray(round_robin, dtype=float)
    index = np.random.default_rng(0).integers(len(a), size=(resamples, len(a)))
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
    args = parser.parse_args()
    strengths = np.arange(AGENTS) * args.step
    shape = f"strengths random, sd {4 * args.step:g}" if args.random else f"{args.step:g} Elo apart (0..{strengths[-1]:g})"
    print(f"{AGENTS} simulated agents {shape}, draw rate {DRAW_RATE}, "
          f"batches of {BATCH}, {args.runs} runs each, stop at {args.correlation} 0.95 or separation")  # fmt: skip
    results = {}
    correlation = CORRELATIONS[args.correlation]
    for name, adaptive, weighted, told, runs in (("round-robin", False, False, False, args.runs),
                                                 ("adaptive, plain fit", True, False, False, args.runs),
                                                 ("adaptive, IPW fit", True, True, False, args.ipw_runs),
                                                 ("told the truth", True, False, True, args.runs)):  # fmt: skip
        if runs <= 0:
            continue
        start = time.perf_counter()
        needed = [run(adaptive, field(args, r), args.seed * 1000 + r, weighted, correlation, told) for r in range(runs)]
        results[name] = needed
        print(f"{name:>20}: matches needed mean {statistics.mean(needed):8.1f}  median {statistics.median(needed):8.1f}  "
              f"min {min(needed)}  max {max(needed)}  ({runs} runs, {sum(n >= LIMIT for n in needed)} stopped at the "
              f"{LIMIT} limit, {time.perf_counter() - start:.1f} s)", flush=True)  # fmt: skip
    oracle = statistics.mean(oracle_design_ratio(field(args, r)) for r in range(args.runs if args.random else 1))
    print(f"the best fixed design, knowing the true strengths: {oracle:.2f}x round-robin's matches for the same precision "
          "of the adjacent differences (the yardstick of the 0.5x target)")  # fmt: skip
    for name in ("adaptive, plain fit", "adaptive, IPW fit", "told the truth"):
        if name not in results:
            continue
        round_robin = results["round-robin"][: len(results[name])]  # the same runs' fields
        base = statistics.mean(round_robin)
        median = statistics.median(results[name]) / statistics.median(round_robin)
        low, high = ratio_interval(results[name], round_robin)
        tail = "no scheduler can be told which orders are wrong" if name == "told the truth" else "target <= 0.5x"
        print(f"{name} / round-robin: {statistics.mean(results[name]) / base:.2f}x of the matches "
              f"(95% interval over runs {low:.2f}..{high:.2f}; median {median:.2f}x); {tail}")  # fmt: skip


if __name__ == "__main__":
    main()
