"""Adaptive scheduling: after a first round, spend each next game where it makes the ranking surer.

Round-robin spends most games on pairs whose order is already clear (a 1000-Elo favourite against
the weakest agent). Here, as in the active sampling behind Chatbot Arena's leaderboard, every
pair (i, j) is scored from the current Bradley-Terry fit (the MAP fit of arena.ratings, and its
Laplace covariance S):

    gain(a, b) = sum over pairs (i, j) of P(the order of i and j is wrong)
                 * (relative reduction of Var(theta_i - theta_j) by one game of a against b)
                 / expected length of a game of (a, b)

where P(wrong order) = Phi(-|d| / sd) with d = theta_i - theta_j and sd^2 = Var(d), and one game
of (a, b) with win probability p adds Fisher information w = p(1 - p) along e_a - e_b, which
lowers Var(theta_i - theta_j) by w c^2 / (1 + w v_ab), c = (e_i - e_j)' S (e_a - e_b)
(Sherman-Morrison): the information gain on the ranking per unit of game length. The next pairs are drawn with probability
proportional to the gain, mixed with a uniform share (EXPLORE) so that every pair keeps a
positive probability; each match's selection probability is stored, so that a Bradley-Terry fit
can weigh each result by the inverse of its probability (normalized to a mean of one) and estimate
what a uniform design would have (inverse_probability_weights; bench/adaptive.py measures it).

Everything here is a pure function of counts and a seeded generator: same seed and same results,
same choices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from arena.ratings import _Posterior, pair_results_from_counts

#: The uniform share of the selection probabilities: every pair stays possible (inverse-probability weights stay finite).
EXPLORE = 0.1

Pair = tuple[int, int]
#: (a, b, a's score 1 / 0.5 / 0) -> (weighted) count, agents by position.
Cells = Mapping[tuple[int, int, float], float]


def all_pairs(num_agents: int) -> list[Pair]:
    return list(combinations(range(num_agents), 2))


def fit(num_agents: int, cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    """MAP strengths (log-odds, by agent position) and their Laplace covariance, from pairwise counts."""
    names = {i: f"{i:06d}" for i in range(num_agents)}  # zero-padded: sorting keeps positions in order
    results = pair_results_from_counts({(names[a], names[b], s): c for (a, b, s), c in cells.items() if c > 0})
    index = np.array([int(name) for name in results.agents], dtype=np.int64)
    posterior = _Posterior(num_agents, index[results.first], index[results.second], results.score, results.count)
    theta = posterior.maximize(np.zeros(num_agents))
    _, precision = posterior.gradient_and_precision(theta)
    return theta, np.linalg.inv(precision)


def selection_probabilities(num_agents: int, cells: Cells, lengths: Sequence[float] | None = None,
                            explore: float = EXPLORE) -> np.ndarray:  # fmt: skip
    """The probability of choosing each pair of all_pairs(num_agents) for the next game.

    A game of pair (a, b) lowers the variance of every difference theta_i - theta_j, not only its
    own (the fit ties all agents together): by w (c_ij)^2 / (1 + w v_ab), c_ij = (e_i - e_j)' S (e_a - e_b).
    Its gain is the sum over all pairs (i, j) of P(the order of i and j is wrong) times the relative
    variance reduction of their difference: where the ranking is uncertain, and how much one game
    of (a, b) settles it, directly or through the others.
    """
    pairs = np.array(all_pairs(num_agents), dtype=np.int64).reshape(-1, 2)
    theta, covariance = fit(num_agents, cells)
    directions = np.zeros((len(pairs), num_agents))
    directions[np.arange(len(pairs)), pairs[:, 0]] = 1.0
    directions[np.arange(len(pairs)), pairs[:, 1]] = -1.0
    d = directions @ theta
    cross = directions @ covariance @ directions.T  # cross[ij, ab] = c_ij for a game of ab
    v = np.maximum(np.diag(cross), 1e-12)
    p = 1.0 / (1.0 + np.exp(-d))
    w = p * (1.0 - p)  # Fisher information of one game of each pair
    wrong = np.array([0.5 * math.erfc(abs(x) / math.sqrt(2.0)) for x in d / np.sqrt(v)])
    reduction = cross**2 * (w / (1.0 + w * v))[None, :] / v[:, None]  # [ij, ab]: relative variance reduction
    gain = wrong @ reduction
    if lengths is not None:
        gain = gain / np.maximum(np.asarray(lengths, dtype=float), 1e-9)
    uniform = np.full(len(pairs), 1.0 / len(pairs))
    if gain.sum() <= 0 or not np.isfinite(gain.sum()):
        return uniform
    return (1.0 - explore) * gain / gain.sum() + explore * uniform


def choose(probabilities: np.ndarray, size: int, rng: np.random.Generator) -> list[int]:
    """`size` pair indices drawn independently (with replacement) with the given probabilities."""
    return [int(k) for k in rng.choice(len(probabilities), size=size, p=probabilities)]


def inverse_probability_weights(probabilities: Sequence[float]) -> np.ndarray:
    """Each match's weight 1 / p, scaled to a mean of one (uniform choice: every weight is one)."""
    inverse = 1.0 / np.asarray(probabilities, dtype=float)
    return inverse * len(inverse) / inverse.sum()
