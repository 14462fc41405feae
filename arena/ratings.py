"""Ratings from match records: pure functions, matches in (in schedule order), numbers out.

Rankings of more than two players are decomposed into pairwise results (a seat ranked ahead of
another beat it; equal ranks drew); Elo scales each pairwise update by 1/(players-1) so a match
moves a rating about as much as one two-player game does.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Iterable, Sequence

import trueskill

from db.records import MatchRecord

ELO_START = 1000.0
ELO_K = 32.0


def pairwise_scores(record: MatchRecord) -> list[tuple[str, str, float]]:
    """(a, b, score of a against b) for each pair of seats: 1 ahead, 0.5 level, 0 behind."""
    result = []
    for a, b in combinations(record.seats, 2):
        score = 1.0 if a.rank < b.rank else 0.5 if a.rank == b.rank else 0.0
        result.append((a.agent, b.agent, score))
    return result


def expected_score(rating_a: float, rating_b: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))


@dataclass(frozen=True)
class EloPoint:
    """Ratings of the agents of one match just after it, with its position in schedule order."""

    n: int  # 1-based count of matches replayed so far
    match_id: int
    ratings: dict[str, float]


def elo(records: Iterable[MatchRecord], k: float = ELO_K, start: float = ELO_START) -> tuple[dict[str, float], list[EloPoint]]:
    """Elo replayed in the order given (schedule order): final ratings and the history after each match."""
    ratings: dict[str, float] = {}
    history: list[EloPoint] = []
    for n, record in enumerate(records, start=1):
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


def trueskill_ratings(records: Iterable[MatchRecord], draw_probability: float = 0.10) -> dict[str, TrueSkillRating]:
    """TrueSkill (mu 25, sigma 25/3) replayed in order; a match of N seats is rated as a ranking of N teams of one."""
    env = trueskill.TrueSkill(draw_probability=draw_probability)
    ratings: dict[str, trueskill.Rating] = {}
    for record in records:
        seats = record.seats
        groups = [(ratings.setdefault(seat.agent, env.create_rating()),) for seat in seats]
        ranks = [seat.rank for seat in seats]
        rated = env.rate(groups, ranks=ranks)
        for seat, (rating,) in zip(seats, rated):
            ratings[seat.agent] = rating
    return {agent: TrueSkillRating(r.mu, r.sigma) for agent, r in ratings.items()}


def agents_in(records: Sequence[MatchRecord]) -> list[str]:
    """Every agent label that appears, in order of first appearance."""
    seen: dict[str, None] = {}
    for record in records:
        for seat in record.seats:
            seen.setdefault(seat.agent, None)
    return list(seen)
