"""Ratings from match records: pure functions, matches in (in schedule order), numbers out.

Rankings of more than two players are decomposed into pairwise results (a seat ranked ahead of
another beat it; equal ranks drew); Elo scales each pairwise update by 1/(players-1) so a match
moves a rating about as much as one two-player game does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist

import numpy as np
import trueskill

from arena.match import GAME_ERROR
from db.records import MatchRecord


def rated(records: Iterable[MatchRecord]) -> list[MatchRecord]:
    """The matches that say something about the agents: not those the game itself broke (`game_error`)."""
    return [record for record in records if record.reason != GAME_ERROR]


ELO_START = 1000.0
ELO_K = 32.0


def pairwise_scores(record: MatchRecord) -> list[tuple[str, str, float]]:
    """(a, b, score of a against b) for each pair of seats: 1 ahead, 0.5 level, 0 behind."""
    result = []
    for a, b in combinations(record.seats, 2):
        score = 1.0 if a.rank < b.rank else 0.5 if a.rank == b.rank else 0.0
        result.append((a.agent, b.agent, score))
    return result


def pair_weight(record: MatchRecord) -> float:
    """What each pairwise result of a match counts in Bradley-Terry: 1 for two players, 3 / (K + 1) for K.

    The K (K - 1) / 2 pairwise results of one finishing order are not independent games: at equal strengths an
    agent's pairwise wins in a match are K minus its uniformly random place, of variance (K^2 - 1) / 12, where
    K - 1 independent games would give (K - 1) / 4, (K + 1) / 3 times less. Counted at full weight they make the
    intervals too narrow (a simulated field of 4-player matches: 88% coverage for 95% intervals); weighed by the
    inverse (the composite likelihood's magnitude adjustment, exact at equal strengths) they cover as
    two-player results do."""
    players = len(record.seats)
    return 1.0 if players <= 2 else 3.0 / (players + 1)


def expected_score(rating_a: float, rating_b: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))


@dataclass(frozen=True)
class EloPoint:
    """Ratings of the agents of one match just after it, with its position in schedule order."""

    n: int  # 1-based count of matches replayed so far
    match_id: int
    ratings: dict[str, float]


def elo(
    records: Iterable[MatchRecord], k: float = ELO_K, start: float = ELO_START, ratings: dict[str, float] | None = None,
) -> tuple[dict[str, float], list[EloPoint]]:  # fmt: skip
    """Elo replayed in the order given (schedule order): final ratings and the history after each match.

    `ratings`, when given, holds the ratings after earlier matches and is updated in place: replaying
    a prefix and then the rest gives exactly the numbers of one replay of everything.
    """
    ratings = {} if ratings is None else ratings
    history: list[EloPoint] = []
    for n, record in enumerate(rated(records), start=1):
        if len(record.seats) == 2:  # the common case, without the general pairwise bookkeeping
            first, second = record.seats
            ra, rb = ratings.get(first.agent, start), ratings.get(second.agent, start)
            score = 1.0 if first.rank < second.rank else 0.5 if first.rank == second.rank else 0.0
            change = k * (score - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
            ratings[first.agent], ratings[second.agent] = ra + change, rb - change
            history.append(EloPoint(n, record.id, {first.agent: ra + change, second.agent: rb - change}))
            continue
        for seat in record.seats:
            ratings.setdefault(seat.agent, start)
        players = len(record.seats)
        scale = k / max(1, players - 1)
        delta: dict[str, float] = {seat.agent: 0.0 for seat in record.seats}
        for a, b, score in pairwise_scores(record):
            change = scale * (score - expected_score(ratings[a], ratings[b]))
            delta[a] += change
            delta[b] -= change
        for agent, change in delta.items():
            ratings[agent] += change
        history.append(EloPoint(n, record.id, {agent: ratings[agent] for agent in delta}))
    return ratings, history


@dataclass(frozen=True)
class TrueSkillRating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        return self.mu - 3.0 * self.sigma


def trueskill_ratings(
    records: Iterable[MatchRecord], draw_probability: float = 0.10, state: dict[str, tuple[float, float]] | None = None,
) -> dict[str, TrueSkillRating]:  # fmt: skip
    """TrueSkill (mu 25, sigma 25/3, beta sigma/2, tau sigma/100) replayed in order.

    `state`, when given, holds each agent's (mu, sigma^2) after earlier matches and is updated in
    place (as `elo`'s `ratings`), so a replay can continue where a stored one stopped.

    A two-player match is rated with the closed-form two-player update, which equals the
    `trueskill` package's factor-graph result (to its own numerical precision: ~1e-6) and is about
    80 times faster, which matters at a million matches; a match of more seats is rated by the
    package as a ranking of N teams of one.
    """
    env = trueskill.TrueSkill(draw_probability=draw_probability)
    beta2, tau2 = env.beta**2, env.tau**2
    margin = _NORMAL.inv_cdf((draw_probability + 1.0) / 2.0) * math.sqrt(2.0) * env.beta
    ratings = {} if state is None else state  # agent -> (mu, sigma^2)
    start = (env.mu, env.sigma**2)
    for record in records:
        seats = record.seats
        if len(seats) == 2:
            a, b = seats
            if a.rank > b.rank:
                a, b = b, a  # a is the winner (or level)
            mu_a, var_a = ratings.get(a.agent, start)
            mu_b, var_b = ratings.get(b.agent, start)
            var_a += tau2
            var_b += tau2
            c = math.sqrt(2.0 * beta2 + var_a + var_b)
            t, e = (mu_a - mu_b) / c, margin / c
            v, w = _v_w_draw(t, e) if a.rank == b.rank else _v_w_win(t, e)
            ratings[a.agent] = (mu_a + var_a / c * v, var_a * (1.0 - var_a / c**2 * w))
            ratings[b.agent] = (mu_b - var_b / c * v, var_b * (1.0 - var_b / c**2 * w))
            continue
        groups = [(env.create_rating(*_mu_sigma(ratings.get(seat.agent, start))),) for seat in seats]
        rated = env.rate(groups, ranks=[seat.rank for seat in seats])
        for seat, (rating,) in zip(seats, rated):
            ratings[seat.agent] = (rating.mu, rating.sigma**2)
    return {agent: TrueSkillRating(mu, math.sqrt(var)) for agent, (mu, var) in ratings.items()}


_NORMAL = NormalDist()


def _mu_sigma(rating: tuple[float, float]) -> tuple[float, float]:
    return rating[0], math.sqrt(rating[1])


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _v_w_win(t: float, e: float) -> tuple[float, float]:
    x = t - e
    denominator = _cdf(x)
    v = -x if denominator < 1e-300 else _pdf(x) / denominator  # the limit for a hugely surprising win
    return v, v * (v + x)


def _v_w_draw(t: float, e: float) -> tuple[float, float]:
    sign = -1.0 if t < 0 else 1.0  # v is odd in t and w even: compute at |t| for stability
    t = abs(t)
    denominator = _cdf(e - t) - _cdf(-e - t)
    if denominator < 1e-300:
        return sign * (e - t), 1.0
    v = (_pdf(-e - t) - _pdf(e - t)) / denominator
    w = v * v + ((e - t) * _pdf(e - t) - (-e - t) * _pdf(-e - t)) / denominator
    return sign * v, w


def agents_in(records: Sequence[MatchRecord]) -> list[str]:
    """Every agent label that appears, in order of first appearance."""
    seen: dict[str, None] = {}
    for record in records:
        for seat in record.seats:
            seen.setdefault(seat.agent, None)
    return list(seen)


# ---------------------------------------------------------------- Bradley-Terry

ELO_PER_NATURAL = 400.0 / math.log(10.0)  # one unit of log-odds in Elo points
#: Gaussian prior on each strength, in log-odds units: weak (about 520 Elo), but enough to keep
#: an agent that won or lost every game at a finite rating.
BT_PRIOR_SD = 3.0


@dataclass(frozen=True)
class BTRating:
    rating: float  # Elo scale, the agents' mean at 1000
    low: float  # 95% interval (profile likelihood, see bradley_terry)
    high: float
    low_by_prior: bool = False  # the data set no lower limit (the agent never scored): the prior sets `low`
    high_by_prior: bool = False  # the data set no upper limit (the agent never lost a point): the prior sets `high`


@dataclass(frozen=True)
class PairResults:
    """Every pairwise result as (pair, score) cells with counts: the sufficient statistics of Bradley-Terry."""

    agents: list[str]
    first: np.ndarray  # agent index of each cell's first agent
    second: np.ndarray
    score: np.ndarray  # first's score in the cell: 1, 0.5 or 0
    count: np.ndarray  # how many results the cell holds (a float: inverse-probability weights are allowed)


#: Pairwise results counted by (a, b, a's score) with a < b: what Bradley-Terry needs of the matches.
PairCells = dict[tuple[str, str, float], float]


def count_pairs(records: Iterable[MatchRecord], cells: PairCells | None = None) -> PairCells:
    """Add the pairwise results of `records` to `cells` (a new dict when None), each weighed by pair_weight."""
    cells = {} if cells is None else cells
    for record in records:
        weight = pair_weight(record)
        for a, b, score in pairwise_scores(record):
            if a > b:
                a, b, score = b, a, 1.0 - score
            key = (a, b, score)
            cells[key] = cells.get(key, 0) + weight
    return cells


def pair_results(records: Iterable[MatchRecord]) -> PairResults:
    return pair_results_from_counts(count_pairs(records))


def pair_results_from_counts(cells: Mapping[tuple[str, str, float], float]) -> PairResults:
    """PairResults from {(agent a, agent b, a's score 1 / 0.5 / 0): count}: what a store of pairwise counts keeps."""
    merged: dict[tuple[str, str, float], float] = {}
    for (a, b, score), count in cells.items():
        if a > b:
            a, b, score = b, a, 1.0 - score
        merged[(a, b, score)] = merged.get((a, b, score), 0.0) + count
    agents = sorted({name for a, b, _ in merged for name in (a, b)})
    index = {agent: i for i, agent in enumerate(agents)}
    keys = sorted(merged)  # a fixed order: the fit never depends on match order
    return PairResults(
        agents,
        np.array([index[k[0]] for k in keys], dtype=np.int64),
        np.array([index[k[1]] for k in keys], dtype=np.int64),
        np.array([k[2] for k in keys], dtype=float),
        np.array([merged[k] for k in keys], dtype=float),
    )


def _expit(x: np.ndarray) -> np.ndarray:
    """The logistic function, stable for large |x|."""
    return np.exp(-np.logaddexp(0.0, -x))


class _Posterior:
    """The Bradley-Terry log-likelihood of the pair cells plus the weak Gaussian prior (log-odds units)."""

    def __init__(self, n: int, first: np.ndarray, second: np.ndarray, score: np.ndarray, count: np.ndarray) -> None:
        self.n, self.first, self.second = n, first, second
        self.wins = score * count
        self.losses = (1.0 - score) * count
        self.count = count
        self.precision = 1.0 / BT_PRIOR_SD**2

    def value(self, theta: np.ndarray) -> float:
        d = theta[self.first] - theta[self.second]
        # log p = -log(1 + e^-d), log(1 - p) = -log(1 + e^d)
        loglik = -(self.wins * np.logaddexp(0.0, -d)).sum() - (self.losses * np.logaddexp(0.0, d)).sum()
        return float(loglik - 0.5 * self.precision * theta @ theta)

    def gradient_and_precision(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The gradient and minus the Hessian (positive definite thanks to the prior)."""
        n, first, second = self.n, self.first, self.second
        p = _expit(theta[first] - theta[second])
        residual = self.wins - self.count * p  # d(log-likelihood)/d(theta_first - theta_second)
        grad = -self.precision * theta
        grad += np.bincount(first, weights=residual, minlength=n)
        grad -= np.bincount(second, weights=residual, minlength=n)
        curvature = self.count * p * (1.0 - p)
        hessian = np.diag(np.full(n, self.precision))
        np.add.at(hessian, (first, first), curvature)
        np.add.at(hessian, (second, second), curvature)
        np.add.at(hessian, (first, second), -curvature)
        np.add.at(hessian, (second, first), -curvature)
        return grad, hessian

    def maximize(self, theta: np.ndarray, direction: np.ndarray | None = None, level: float = 0.0) -> np.ndarray:
        """The maximum by Newton's method; with `direction`, the maximum on the plane direction . theta = level.

        The objective is concave and the prior makes its Hessian negative definite, so plain Newton
        steps (a Cholesky solve of an n x n system per step; with the constraint, the same factor
        solves the Lagrange system) converge in a handful of iterations: measured about 20x faster
        than scipy's L-BFGS on the same problem.
        """
        from scipy.linalg import cho_factor, cho_solve  # here: most commands never need scipy

        theta = theta.copy()
        for _ in range(100):
            grad, hessian = self.gradient_and_precision(theta)
            factor = cho_factor(hessian)
            step = cho_solve(factor, grad)
            if direction is not None:
                along = cho_solve(factor, direction)
                multiplier = (direction @ step - (level - direction @ theta)) / (direction @ along)
                step -= multiplier * along
            theta += step
            if np.abs(step).max() < 1e-10:
                break
        return theta


def _fit_bt(n: int, first: np.ndarray, second: np.ndarray, score: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Maximum a-posteriori strengths (log-odds units) under the weak Gaussian prior."""
    return _Posterior(n, first, second, score, count).maximize(np.zeros(n))


#: Half the 95% quantile of chi-square with one degree of freedom: the profile drop at a 95% bound.
_PROFILE_DROP = 0.5 * NormalDist().inv_cdf(0.975) ** 2


def bradley_terry(records: Iterable[MatchRecord], intervals: bool = True) -> dict[str, BTRating]:
    """Bradley-Terry ratings on the Elo scale with 95% intervals (profile likelihood: see bradley_terry_counts);
    independent of match order. Ties count as half a win for each side; a match of more than two players counts as
    its pairwise results."""
    return bradley_terry_counts(pair_results(records), intervals=intervals)


def bradley_terry_counts(results: PairResults, intervals: bool = True) -> dict[str, BTRating]:
    """Bradley-Terry from pairwise counts alone (see pair_results_from_counts), with profile-likelihood 95% intervals.

    The estimate is the maximum a posteriori under a weak Gaussian prior (BT_PRIOR_SD log-odds per
    agent). An agent's interval is every centred rating whose profile log-posterior lies within
    1.92 (chi-square, one degree of freedom) of the maximum, so the estimate always lies inside it.
    Where the data set no limit on one side (an agent that never lost a point, or never scored one,
    against the agents it could be compared with), the likelihood is flat that way and only the prior
    bounds the interval: `high_by_prior` / `low_by_prior` say so, and the bound is then a statement
    of the prior, not of the games. A parametric bootstrap (the former method) gives a 50-0 record an
    interval of zero width above the estimate: every re-drawn data set is 50-0 again.
    """
    n = len(results.agents)
    if n == 0:
        return {}
    posterior = _Posterior(n, results.first, results.second, results.score, results.count)
    theta = posterior.maximize(np.zeros(n))
    centred = theta - theta.mean()
    open_high, open_low = _open_sides(results)
    ratings = {}
    for i, agent in enumerate(results.agents):
        rating = ELO_START + centred[i] * ELO_PER_NATURAL
        low = high = centred[i]
        if intervals and n > 1:
            low, high = _profile_interval(posterior, theta, i)
        ratings[agent] = BTRating(float(rating), float(ELO_START + low * ELO_PER_NATURAL),
                                  float(ELO_START + high * ELO_PER_NATURAL), bool(open_low[i] and intervals and n > 1),
                                  bool(open_high[i] and intervals and n > 1))  # fmt: skip
    return ratings


def _profile_interval(posterior: _Posterior, theta: np.ndarray, i: int) -> tuple[float, float]:
    """The 95% profile interval of agent i's centred strength (log-odds), by bracketing and Brent's method."""
    from scipy.optimize import brentq

    n = posterior.n
    direction = np.full(n, -1.0 / n)
    direction[i] += 1.0
    best = posterior.value(theta)
    estimate = float(direction @ theta)
    _, hessian = posterior.gradient_and_precision(theta)
    spread = math.sqrt(max(float(direction @ np.linalg.solve(hessian, direction)), 1e-12))  # the Laplace sd: a first step
    start = {1.0: theta, -1.0: theta}

    def drop(level: float, side: float) -> float:
        start[side] = posterior.maximize(start[side], direction, level)
        return best - posterior.value(start[side]) - _PROFILE_DROP

    bounds = []
    for side in (-1.0, 1.0):
        step = 2.0 * spread
        inner, outer = estimate, estimate + side * step
        while drop(outer, side) < 0:
            inner, outer = outer, outer + side * step
            step *= 2.0
        bounds.append(brentq(drop, min(inner, outer), max(inner, outer), args=(side,), xtol=1e-4))
    return bounds[0], bounds[1]


def _open_sides(results: PairResults) -> tuple[np.ndarray, np.ndarray]:
    """For each agent: whether the data leave its strength unbounded above, and below.

    Agent i's strength is unbounded above when some set of agents containing i (not all of them)
    never lost a point to an agent outside it: raise the whole set and the likelihood only grows.
    The smallest such set is every agent reachable from i by "scored against": when that is not
    everyone, the upper bound comes from the prior alone. Likewise below.
    """
    n = len(results.agents)
    scored_against: list[set[int]] = [set() for _ in range(n)]  # scored_against[k]: agents that took a point (or half) from k
    for a, b, score, count in zip(results.first.tolist(), results.second.tolist(), results.score.tolist(), results.count.tolist()):
        if count <= 0:
            continue
        if score < 1.0:
            scored_against[a].add(b)
        if score > 0.0:
            scored_against[b].add(a)
    lost_to: list[set[int]] = [set() for _ in range(n)]  # the reverse relation, for the lower side
    for k, others in enumerate(scored_against):
        for m in others:
            lost_to[m].add(k)

    def reaches_all(start: int, edges: list[set[int]]) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for m in edges[todo.pop()]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return len(seen) == n

    high = np.array([not reaches_all(i, scored_against) for i in range(n)])
    low = np.array([not reaches_all(i, lost_to) for i in range(n)])
    return high, low


def separated_ranks(intervals: dict[str, tuple[float, float]], apart: Iterable[tuple[str, str]] = ()) -> dict[str, int]:
    """1 + the number of agents found stronger than this one: those whose whole interval lies above this agent's, and
    the `apart` pairs (stronger, weaker) a test of their difference separates. Agents not told apart share a rank."""
    above = {agent: {other for other, (low, _) in intervals.items() if other != agent and low > high}
             for agent, (_, high) in intervals.items()}  # fmt: skip
    for stronger, weaker in apart:
        above[weaker].add(stronger)
    return {agent: 1 + len(others) for agent, others in above.items()}


#: Up to this many agents, every pair whose intervals overlap is tested on its own (bt_ranks): at most 2016 tests.
PAIR_TEST_AGENTS = 64


def bt_ranks(results: PairResults, ratings: dict[str, BTRating]) -> dict[str, int]:
    """Ranks from Bradley-Terry: an agent is above another when their intervals are apart or, where the ends of the
    two intervals that face each other are set by the prior alone (`low_by_prior` of the stronger, `high_by_prior` of
    the weaker), when the profile likelihood-ratio test of "equally strong" rejects it at 95% (the constrained
    maximum's log-posterior more than 1.92 below the maximum). Two agents that both beat a third every time have
    upper ends from the prior, which overlap however clearly one beat the other; elsewhere the intervals decide (a
    test per pair would tell equal agents apart about 5% of the time, many in a large field). Past PAIR_TEST_AGENTS
    agents, intervals alone decide."""
    intervals = {agent: (r.low, r.high) for agent, r in ratings.items()}
    n = len(results.agents)
    if n < 2 or n > PAIR_TEST_AGENTS:
        return separated_ranks(intervals)
    posterior = _Posterior(n, results.first, results.second, results.score, results.count)
    theta = posterior.maximize(np.zeros(n))
    best = posterior.value(theta)
    covariance = np.linalg.inv(posterior.gradient_and_precision(theta)[1])
    apart = []
    for i, j in combinations(range(n), 2):
        a, b = results.agents[i], results.agents[j]
        upper, lower = (ratings[a], ratings[b]) if theta[i] > theta[j] else (ratings[b], ratings[a])
        if upper.low > lower.high or not (upper.low_by_prior or lower.high_by_prior):
            continue  # apart already, or their intervals' facing ends are the games' own: those decide, as ever
        direction = np.zeros(n)
        direction[i], direction[j] = 1.0, -1.0
        # Newton from the quadratic approximation's constrained maximum: a step or two from the exact one
        spread = covariance[:, i] - covariance[:, j]
        start = theta - spread * (theta[i] - theta[j]) / max(spread[i] - spread[j], 1e-12)
        if best - posterior.value(posterior.maximize(start, direction, 0.0)) > _PROFILE_DROP:
            apart.append((a, b) if theta[i] > theta[j] else (b, a))
    return separated_ranks(intervals, apart)
