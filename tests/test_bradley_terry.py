"""Bradley-Terry: recovers known strengths, intervals cover them, finite for undefeated agents, order-independent."""

import random

import numpy as np

from arena.ratings import bradley_terry, separated_ranks
from db.records import MatchRecord, SeatRecord


def simulate(strengths, matches, seed, draw_rate=0.0):
    rng = random.Random(seed)
    names = list(strengths)
    records = []
    for k in range(matches):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** ((strengths[b] - strengths[a]) / 400))
        if rng.random() < draw_rate:
            oa, ob, ra, rb = "draw", "draw", 1, 1
        elif rng.random() < p:
            oa, ob, ra, rb = "win", "loss", 1, 2
        else:
            oa, ob, ra, rb = "loss", "win", 2, 1
        seats = (SeatRecord(0, a, 0.0, oa, ra, 0.0, 1), SeatRecord(1, b, 0.0, ob, rb, 0.0, 1))
        records.append(MatchRecord(k, 1, k, k, "g", "1", 10, "normal", seats))
    return records


def test_intervals_cover_known_strengths():
    strengths = {"a": -300, "b": -100, "c": 0, "d": 150, "e": 250}
    centred = {k: v - np.mean(list(strengths.values())) + 1000 for k, v in strengths.items()}
    covered = total = 0
    for seed in range(30):
        ratings = bradley_terry(simulate(strengths, 600, seed), bootstrap=100, seed=seed)
        for agent, r in ratings.items():
            assert r.low <= r.rating <= r.high
            covered += r.low <= centred[agent] <= r.high
            total += 1
    assert 0.88 <= covered / total <= 1.0, covered / total


def test_undefeated_agent_is_finite_and_on_top():
    records = [r for r in simulate({"x": 0, "y": 0}, 40, 1)]
    fixed = []
    for r in records:  # make "x" win every game
        seats = tuple(SeatRecord(s.seat, s.agent, 0.0, "win" if s.agent == "x" else "loss", 1 if s.agent == "x" else 2, 0.0, 1) for s in r.seats)
        fixed.append(MatchRecord(r.id, 1, r.index, r.seed, "g", "1", 10, "normal", seats))
    ratings = bradley_terry(fixed)
    assert np.isfinite(ratings["x"].rating) and ratings["x"].rating > ratings["y"].rating + 300
    assert np.isfinite(ratings["x"].high)


def test_order_independent_and_ties_as_half():
    records = simulate({"a": 0, "b": 100, "c": 200}, 500, 3, draw_rate=0.3)
    forward = bradley_terry(records, seed=5)
    backward = bradley_terry(list(reversed(records)), seed=5)
    assert forward == backward


def test_separated_ranks():
    ranks = separated_ranks({"a": (1100, 1200), "b": (1050, 1150), "c": (900, 1000), "d": (700, 800)})
    assert ranks == {"a": 1, "b": 1, "c": 3, "d": 4}
