"""Adaptive scheduling against round-robin on simulated agents of known strength.

16 simulated agents (strengths spaced STEP Elo apart, games won with the logistic Elo probability,
draws at a fixed rate). Both schedulers play in batches of 16 matches; after each batch the
Bradley-Terry fit is checked against the truth: for the adaptive schedule both the
inverse-probability weighted fit (what an adaptive tournament's leaderboard shows) and the plain
fit (also consistent under an adaptive design when the model holds: the choices depend only on
past results). A run ends when every adjacent pair of agents
is separated (95% intervals that do not overlap) or when Kendall's rank correlation with the truth
reaches 0.95. Printed: matches needed per run (mean, median), and the ratio adaptive / round-robin
(target <= 0.5).

    .venv/bin/python bench/adaptive.py [--runs 20] [--step 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.adaptive import all_pairs, choose, fit, inverse_probability_weights, selection_probabilities  # noqa: E402

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


def done(cells: dict, strengths: np.ndarray) -> bool:
    theta, covariance = fit(AGENTS, cells)
    return kendall(theta, strengths) >= 0.95 or separated(theta, covariance, strengths)


def run(adaptive: bool, strengths: np.ndarray, seed: int, weighted: bool = True) -> int:
    rng = np.random.default_rng(seed)
    pairs = all_pairs(AGENTS)
    counts: dict[tuple[int, int, float], float] = {}  # what the scheduler sees: plain counts
    played: list[tuple[int, int, float]] = []  # (pair index, score, selection probability)
    initial = [k for k in rng.permutation(len(pairs))]  # round-robin order: a fresh shuffle of every pair per round
    queue = list(initial)
    while len(played) < LIMIT:
        if not adaptive or len(played) < len(pairs):
            if not queue:
                queue = list(rng.permutation(len(pairs)))
            batch = [(queue.pop(0), 1.0 / len(pairs)) for _ in range(min(BATCH, len(queue)))]
        else:
            probabilities = selection_probabilities(AGENTS, counts)
            batch = [(k, float(probabilities[k])) for k in choose(probabilities, BATCH, rng)]
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
        if done(counted, strengths):
            return len(played)
    return len(played)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--step", type=float, default=40.0, help="Elo between adjacent agents")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    strengths = np.arange(AGENTS) * args.step
    print(f"{AGENTS} simulated agents {args.step:g} Elo apart (0..{strengths[-1]:g}), draw rate {DRAW_RATE}, "
          f"batches of {BATCH}, {args.runs} runs each")  # fmt: skip
    results = {}
    for name, adaptive, weighted in (("round-robin", False, False), ("adaptive, IPW fit", True, True),
                                     ("adaptive, plain fit", True, False)):  # fmt: skip
        start = time.perf_counter()
        needed = [run(adaptive, strengths, args.seed * 1000 + r, weighted) for r in range(args.runs)]
        results[name] = needed
        print(f"{name:>20}: matches needed mean {statistics.mean(needed):8.1f}  median {statistics.median(needed):8.1f}  "
              f"min {min(needed)}  max {max(needed)}  ({time.perf_counter() - start:.1f} s)")  # fmt: skip
    base = statistics.mean(results["round-robin"])
    for name in ("adaptive, IPW fit", "adaptive, plain fit"):
        print(f"{name} / round-robin: {statistics.mean(results[name]) / base:.2f}x of the matches "
              f"(median {statistics.median(results[name]) / statistics.median(results['round-robin']):.2f}x); target <= 0.5x")


if __name__ == "__main__":
    main()
