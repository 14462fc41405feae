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
(Sherman-Morrison): the information gain on the ranking per unit of game length. Each next game
goes, Thompson-style, to a pair the posterior doubts: THOMPSON_SAMPLES draws of the strengths from
N(theta, S), each giving its vote to the pair of greatest gain among those it orders otherwise than
the fit, and the pair drawn with the votes' shares as probabilities (the covariance updated as if
the games chosen before it in the batch were played); or, with probability EXPLORE, to a pair
drawn uniformly, so that every pair keeps a positive probability; agents with fewer than
NEWCOMER_GAMES games are placed first. Each
match's selection probability is stored, so that a Bradley-Terry fit can weigh each result by the
inverse of its probability (normalized to a mean of one) and estimate what a uniform design would
have (inverse_probability_weights; bench/adaptive.py measures it).

Fields of more than EXACT_PAIRS pairs are scored the same way without any pairs x pairs matrix: the
gain's sum over (i, j) is the quadratic form (e_a - e_b)' S L S (e_a - e_b), L the Laplacian of the
weights P(wrong order) / Var over the pairs (an n x n matrix), and a draw's vote is found by
scanning the pairs from the greatest gain down, in blocks: memory grows with the pairs, time with
draws x pairs, and a field of MAX_AGENTS agents takes a few seconds per batch (README, "Adaptive
scheduling"). Smaller fields keep the pairs x pairs computation, so their choices are unchanged
bit for bit.

Everything here is a pure function of counts and a seeded generator: same seed and same results,
same choices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np

from arena.ratings import _Posterior, pair_results_from_counts

#: The uniform share of the selection probabilities: every pair stays possible (inverse-probability weights stay finite).
EXPLORE = 0.1
#: An agent with fewer games than this is a newcomer: its pairs are chosen before any other.
NEWCOMER_GAMES = 2
#: Posterior draws behind each choice's shares (thompson_shares): the smallest share of a pair so chosen is 1 / this.
THOMPSON_SAMPLES = 1000
#: The most agents an adaptive tournament or a ladder may have: a batch's time grows with draws x pairs.
MAX_AGENTS = 256
#: Fields of at most this many pairs (32 agents) are scored with the pairs x pairs matrices (their choices as ever).
EXACT_PAIRS = 496
#: Pairs a vote's scan looks at per block, in fields of more than EXACT_PAIRS pairs.
SCAN_BLOCK = 1024

Pair = tuple[int, int]
#: (a, b, a's score 1 / 0.5 / 0) -> (weighted) count, agents by position.
Cells = Mapping[tuple[int, int, float], float]
#: (pairs, theta, covariance, gain, rng) -> each pair's share of the next game: thompson_shares, or a benchmark's
#: rule that is told the truth (bench/adaptive.py).
ShareRule = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def all_pairs(num_agents: int) -> list[Pair]:
    return list(combinations(range(num_agents), 2))


def pair_array(num_agents: int) -> np.ndarray:
    """all_pairs as a (pairs, 2) array of agent positions."""
    return np.array(all_pairs(num_agents), dtype=np.int64).reshape(-1, 2)


def fit(num_agents: int, cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    """MAP strengths (log-odds, by agent position) and their Laplace covariance, from pairwise counts."""
    names = {i: f"{i:06d}" for i in range(num_agents)}  # zero-padded: sorting keeps positions in order
    results = pair_results_from_counts({(names[a], names[b], s): c for (a, b, s), c in cells.items() if c > 0})
    index = np.array([int(name) for name in results.agents], dtype=np.int64)
    posterior = _Posterior(num_agents, index[results.first], index[results.second], results.score, results.count)
    theta = posterior.maximize(np.zeros(num_agents))
    _, precision = posterior.gradient_and_precision(theta)
    return theta, np.linalg.inv(precision)


def order_wrong(difference: np.ndarray | float, variance: np.ndarray | float) -> np.ndarray:
    """P(the fitted order of two agents is wrong): Phi(-|d| / sd), d their fitted difference, sd^2 its variance."""
    from scipy.special import erfc  # here, not at the top: scipy.special costs every `arena` command ~0.3 s to import

    return 0.5 * erfc(np.abs(difference) / np.sqrt(np.maximum(variance, 1e-12)) / math.sqrt(2.0))  # type: ignore[no-any-return]


def _directions(num_agents: int) -> np.ndarray:
    """One row per pair of all_pairs: e_a - e_b."""
    pairs = pair_array(num_agents)
    directions = np.zeros((len(pairs), num_agents))
    directions[np.arange(len(pairs)), pairs[:, 0]] = 1.0
    directions[np.arange(len(pairs)), pairs[:, 1]] = -1.0
    return directions


def _gains(pairs: np.ndarray, theta: np.ndarray, covariance: np.ndarray, lengths: np.ndarray | None) -> np.ndarray:
    """Each pair's gain: sum over pairs (i, j) of P(order of i, j wrong) x relative Var(theta_i - theta_j) reduction
    by one more game of the pair, divided by the pair's expected game length."""
    exact = len(pairs) <= EXACT_PAIRS
    gain = _gains_by_matrix(_directions(len(theta)), theta, covariance) if exact else _gains_by_laplacian(pairs, theta, covariance)
    return _settled(gain if lengths is None else gain / np.maximum(lengths, 1e-9))


def _settled(gain: np.ndarray) -> np.ndarray:
    """The gains rounded to 12 significant digits of the largest: pairs the fit makes alike (after a round of every pair
    once, say) have gains equal but for rounding noise, which the two ways of computing them (or two builds of numpy)
    order differently; rounded, they are equal whatever computed them (choose_batch orders them at random)."""
    top = float(gain.max(initial=0.0))
    return gain if top <= 0.0 or not np.isfinite(top) else np.round(gain / top, 12) * top


def _gains_by_matrix(directions: np.ndarray, theta: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """_gains with the pairs x pairs matrix of the c_ij (small fields)."""
    d = directions @ theta
    cross = directions @ covariance @ directions.T  # cross[ij, ab] = c_ij for a game of ab
    v = np.maximum(np.diag(cross), 1e-12)
    p = 1.0 / (1.0 + np.exp(-d))
    w = p * (1.0 - p)  # Fisher information of one game of each pair
    wrong = order_wrong(d, v)
    reduction = cross**2 * (w / (1.0 + w * v))[None, :] / v[:, None]  # [ij, ab]: relative variance reduction
    return wrong @ reduction  # type: ignore[no-any-return]


def _gains_by_laplacian(pairs: np.ndarray, theta: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """_gains without a pairs x pairs matrix: sum_ij q_ij c_ij^2 = u' L u, u = S (e_a - e_b), q_ij = P(wrong) / v_ij and
    L the Laplacian of the weights q, so each pair's sum is (e_a - e_b)' S L S (e_a - e_b)."""
    a, b = pairs[:, 0], pairs[:, 1]
    d = theta[a] - theta[b]
    v = np.maximum(covariance[a, a] + covariance[b, b] - 2.0 * covariance[a, b], 1e-12)
    p = 1.0 / (1.0 + np.exp(-d))
    w = p * (1.0 - p)
    weights = np.zeros_like(covariance)
    weights[a, b] = weights[b, a] = order_wrong(d, v) / v
    form = covariance @ (np.diag(weights.sum(axis=1)) - weights) @ covariance
    summed = np.maximum(form[a, a] + form[b, b] - 2.0 * form[a, b], 0.0)  # >= 0 but for rounding
    return summed * w / (1.0 + w * v)  # type: ignore[no-any-return]


def selection_probabilities(num_agents: int, cells: Cells, lengths: Sequence[float] | None = None,
                            explore: float = EXPLORE) -> np.ndarray:  # fmt: skip
    """Each pair's gain (see _gains) as probabilities mixed with a uniform share: a soft view of where games help.

    A game of pair (a, b) lowers the variance of every difference theta_i - theta_j, not only its
    own (the fit ties all agents together): by w (c_ij)^2 / (1 + w v_ab), c_ij = (e_i - e_j)' S (e_a - e_b).
    """
    theta, covariance = fit(num_agents, cells)
    gain = _gains(pair_array(num_agents), theta, covariance, None if lengths is None else np.asarray(lengths, dtype=float))
    uniform = np.full(len(gain), 1.0 / len(gain))
    if gain.sum() <= 0 or not np.isfinite(gain.sum()):
        return uniform
    return (1.0 - explore) * gain / gain.sum() + explore * uniform


def thompson_shares(pairs: np.ndarray, theta: np.ndarray, covariance: np.ndarray, gain: np.ndarray,
                    rng: np.random.Generator, samples: int = THOMPSON_SAMPLES) -> np.ndarray:  # fmt: skip
    """Each pair's share of `samples` draws of the strengths from the posterior N(theta, covariance): a draw goes to
    the pair of greatest gain among those the draw orders otherwise than the fit (Thompson sampling of "which orders
    are wrong"), or to the pair of greatest gain overall when the draw orders every pair as the fit does.

    A pair gets games only where the posterior finds its order wrong together with the rest of a plausible
    ranking, in proportion to how often: a batch spreads over the doubtful pairs instead of piling onto the one
    of greatest gain. The shares are the exact probabilities of the draw choose_batch makes from them."""
    factor = np.linalg.cholesky(covariance + 1e-12 * np.eye(len(theta)))
    draws = theta + rng.standard_normal((samples, len(theta))) @ factor.T
    return shares_of_draws(pairs, theta, gain, draws)


def shares_of_draws(pairs: np.ndarray, theta: np.ndarray, gain: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Each pair's share of the votes of `draws` (one row of strengths each): a draw votes for the pair of greatest
    gain among those it orders otherwise than the fit theta, or for the pair of greatest gain when it orders none so."""
    picks = _votes_by_matrix(pairs, theta, gain, draws) if len(pairs) <= EXACT_PAIRS else _votes_by_scan(pairs, theta, gain, draws)
    return np.bincount(picks, minlength=len(gain)) / len(draws)  # type: ignore[no-any-return]


def _votes_by_matrix(pairs: np.ndarray, theta: np.ndarray, gain: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Each draw's pair (shares_of_draws) from the draws x pairs matrix of differences (small fields)."""
    directions = _directions(len(theta))
    fitted = directions @ theta
    oriented = directions * np.where(fitted < 0.0, -1.0, 1.0)[:, None]  # each pair's fitted winner first
    wrong = (draws @ oriented.T <= 0.0) | (fitted == 0.0)  # [draw, pair]: the draw orders the pair otherwise than the
    # fit, or the fit ties the pair (agents of equal scores after a round of every pair once): doubtful in every draw
    picks = np.where(wrong, gain, -np.inf).argmax(axis=1)  # the greatest gain among the draw's doubtful pairs
    picks[~wrong.any(axis=1)] = int(np.argmax(gain))
    return picks  # type: ignore[no-any-return]


def _votes_by_scan(pairs: np.ndarray, theta: np.ndarray, gain: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """_votes_by_matrix's picks, scanning the pairs from the greatest gain down (ties: the first pair) in blocks of
    SCAN_BLOCK: each draw stops at its first doubtful pair, and no draws x pairs matrix is made."""
    a, b = pairs[:, 0], pairs[:, 1]
    fitted = theta[a] - theta[b]
    sign = np.where(fitted < 0.0, -1.0, 1.0)
    order = np.argsort(-gain, kind="stable")
    picks = np.full(len(draws), order[0])  # a draw that orders every pair as the fit: the greatest gain
    waiting = np.arange(len(draws))
    for start in range(0, len(order), SCAN_BLOCK):
        block = order[start:start + SCAN_BLOCK]
        rows = draws[waiting]
        wrong = (sign[block] * (rows[:, a[block]] - rows[:, b[block]]) <= 0.0) | (fitted[block] == 0.0)
        found = wrong.any(axis=1)
        picks[waiting[found]] = block[wrong[found].argmax(axis=1)]
        waiting = waiting[~found]
        if len(waiting) == 0:
            break
    return picks


def games_per_agent(num_agents: int, cells: Cells) -> np.ndarray:
    games = np.zeros(num_agents)
    for (a, b, _), count in cells.items():
        games[a] += count
        games[b] += count
    return games


def choose_batch(num_agents: int, cells: Cells, size: int, rng: np.random.Generator,
                 lengths: Sequence[float] | None = None, explore: float = EXPLORE,
                 rule: ShareRule = thompson_shares) -> list[tuple[int, float]]:  # fmt: skip
    """The next `size` games: (pair index of all_pairs, the probability with which that pair was selected).

    Each game in turn: with probability 1 - explore a pair drawn with its share by `rule` (thompson_shares:
    the pair of greatest gain among those a posterior draw orders otherwise than the fit), otherwise a
    pair drawn uniformly (so every pair keeps a positive probability and inverse-probability weights
    exist); the stored probability is (1 - explore) x share + explore / pairs. A pair with an agent
    that has played fewer than NEWCOMER_GAMES games comes first, with share one (newcomers are placed
    before anything else is refined). After each choice the covariance is updated as if that game had
    been played (Sherman-Morrison on the precision), so one batch spreads over the pairs instead of
    repeating the best one. On bench/adaptive.py the greedy choice (the pair of greatest gain) measured
    0.66x round-robin's matches at 40 Elo, drawing pairs in proportion to their gain 0.84x.
    """
    theta, covariance = fit(num_agents, cells)
    games = games_per_agent(num_agents, cells)
    length = None if lengths is None else np.asarray(lengths, dtype=float)
    pairs = pair_array(num_agents)
    p = 1.0 / (1.0 + np.exp(-(theta[pairs[:, 0]] - theta[pairs[:, 1]])))
    w = p * (1.0 - p)
    chosen: list[tuple[int, float]] = []
    tiebreak = rng.random(len(pairs)) * 1e-14  # (below _settled's rounding: pairs of equal gain in a random order, not
    for _ in range(size):                      # the first pair's; any other order of the gains is kept)
        gain = _gains(pairs, theta, covariance, length)
        gain = gain + tiebreak * gain.max(initial=0.0)
        newcomer = np.minimum(games[pairs[:, 0]], games[pairs[:, 1]]) < NEWCOMER_GAMES
        share = np.zeros(len(pairs))
        if newcomer.any():  # among the newcomers' pairs, the fewest games first, then the greatest gain
            share[int(np.lexsort((-gain, games[pairs].sum(axis=1), ~newcomer))[0])] = 1.0
        else:
            share = rule(pairs, theta, covariance, gain, rng)
        k = int(rng.choice(len(pairs), p=share)) if rng.random() >= explore else int(rng.integers(len(pairs)))
        chosen.append((k, (1.0 - explore) * share[k] + explore / len(pairs)))
        a, b = pairs[k]
        u = covariance[:, a] - covariance[:, b]  # S (e_a - e_b)
        covariance = covariance - w[k] * np.outer(u, u) / (1.0 + w[k] * (u[a] - u[b]))
        games[pairs[k]] += 1
    return chosen


def inverse_probability_weights(probabilities: Sequence[float] | np.ndarray) -> np.ndarray:
    """Each match's weight 1 / p, scaled to a mean of one (uniform choice: every weight is one)."""
    inverse = 1.0 / np.asarray(probabilities, dtype=float)
    return inverse * len(inverse) / inverse.sum()
