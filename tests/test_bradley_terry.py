"""Bradley-Terry: recovers known strengths, intervals cover them (exactly computed at gaps 0..800 Elo), finite and
honest for undefeated agents, order-independent, a function of the pairwise counts alone."""

import math
import random

import numpy as np

from arena.ratings import (
    bradley_terry,
    bradley_terry_counts,
    bt_ranks,
    pair_results,
    pair_results_from_counts,
    separated_ranks,
)
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
    for seed in range(15):
        ratings = bradley_terry(simulate(strengths, 600, seed))
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
    forward = bradley_terry(records)
    backward = bradley_terry(list(reversed(records)))
    assert forward == backward


def test_separated_ranks():
    ranks = separated_ranks({"a": (1100, 1200), "b": (1050, 1150), "c": (900, 1000), "d": (700, 800)})
    assert ranks == {"a": 1, "b": 1, "c": 3, "d": 4}


def _ranks(cells):
    results = pair_results_from_counts({k: v for k, v in cells.items() if v})
    ratings = bradley_terry_counts(results)
    return ratings, bt_ranks(results, ratings)


def test_a_clear_head_to_head_separates_agents_whose_intervals_overlap():
    """Both beat c every time, so both intervals are bounded above by the prior alone and overlap; 84-16 between them
    is still a difference the games show: the likelihood-ratio test of their difference tells them apart."""
    ratings, ranks = _ranks({("a", "b", 1.0): 84, ("a", "b", 0.0): 16, ("a", "c", 1.0): 100, ("b", "c", 1.0): 100})
    assert ratings["a"].low < ratings["b"].high and ratings["a"].high_by_prior and ratings["b"].high_by_prior
    assert ranks == {"a": 1, "b": 2, "c": 3}
    _, even = _ranks({("a", "b", 1.0): 52, ("a", "b", 0.0): 48, ("a", "c", 1.0): 100, ("b", "c", 1.0): 100})
    assert even == {"a": 1, "b": 1, "c": 3}


def test_the_pairwise_test_separates_equal_agents_about_one_time_in_twenty():
    """Two equally strong agents (60 games between them) that both beat a third every time (so their upper ends come
    from the prior and the pair's own test decides): told apart in about 5% of 400 runs."""
    rng = random.Random(3)
    apart = 0
    for _ in range(400):
        a_wins = sum(rng.random() < 0.5 for _ in range(60))
        _, ranks = _ranks({("a", "b", 1.0): a_wins, ("a", "b", 0.0): 60 - a_wins, ("a", "c", 1.0): 30, ("b", "c", 1.0): 30})
        apart += ranks["a"] != ranks["b"]
    assert 0.02 <= apart / 400 <= 0.09, apart


def test_a_field_of_equal_agents_keeps_the_intervals_rule():
    """24 equal agents, 6 games a pair, everyone scoring: no interval end is the prior's, so only intervals that are
    apart separate ranks (rarely), not a 5% test per pair (about 14 of the 276 pairs)."""
    rng = random.Random(5)
    names = [f"a{i:02d}" for i in range(24)]
    cells = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            wins = sum(rng.random() < 0.5 for _ in range(6))
            cells[(a, b, 1.0)], cells[(a, b, 0.0)] = wins, 6 - wins
    ratings, ranks = _ranks(cells)
    assert not any(r.low_by_prior or r.high_by_prior for r in ratings.values())
    assert ranks == separated_ranks({agent: (r.low, r.high) for agent, r in ratings.items()})


def _two_agents(wins, losses, draws=0):
    cells = {("a", "b", 1.0): wins, ("a", "b", 0.0): losses, ("a", "b", 0.5): draws}
    return bradley_terry_counts(pair_results_from_counts({k: v for k, v in cells.items() if v}))


def test_perfect_and_near_perfect_records_have_the_estimate_inside():
    perfect = _two_agents(50, 0)
    a, b = perfect["a"], perfect["b"]
    # The estimate lies strictly inside its interval, on both sides, for the winner and the loser.
    assert a.low + 50 < a.rating < a.high - 50 and b.low + 50 < b.rating < b.high - 50
    # 50-0 gives no upper limit for the winner (nor lower for the loser): the prior sets that bound, and says so.
    assert a.high_by_prior and not a.low_by_prior and b.low_by_prior and not b.high_by_prior
    # The lower bound is the data's: 50 straight wins put the difference above ~550 Elo at 95%.
    assert 1250 < a.low < 1300
    near = _two_agents(49, 1)
    a1 = near["a"]
    assert a1.low < a1.rating < a1.high and not a1.high_by_prior and not a1.low_by_prior
    assert a1.rating < a.rating and a1.high < a.high  # one loss: a lower estimate and a bounded interval
    drawn = _two_agents(49, 0, draws=1)  # a draw is half a point to the loser: bounded again
    assert not drawn["a"].high_by_prior


def test_open_sides_need_a_whole_group_without_losses_to_outsiders():
    # a and b beat c every time and split their own games: both are unbounded above, c below.
    cells = {("a", "c", 1.0): 10, ("b", "c", 1.0): 10, ("a", "b", 1.0): 5, ("a", "b", 0.0): 5}
    ratings = bradley_terry_counts(pair_results_from_counts(cells))
    assert ratings["a"].high_by_prior and ratings["b"].high_by_prior and not ratings["c"].high_by_prior
    assert ratings["c"].low_by_prior and not ratings["a"].low_by_prior
    assert all(r.low < r.rating < r.high for r in ratings.values())


def test_interval_coverage_at_gaps_0_to_800_elo_computed_exactly():
    """Two agents, 50 games without draws: every possible record k-(50-k) is fitted once and weighted by its
    binomial probability, so the coverage below is exact (no simulation noise) for each strength gap."""
    games = 50
    intervals = {}
    for k in range(games + 1):
        cells = {("a", "b", 1.0): k, ("a", "b", 0.0): games - k}
        rating = bradley_terry_counts(pair_results_from_counts({key: v for key, v in cells.items() if v}))["a"]
        assert rating.low <= rating.rating <= rating.high
        intervals[k] = (rating.low, rating.high)
    for gap in (0, 100, 200, 400, 600, 800):
        p = 1 / (1 + 10 ** (-gap / 400))
        truth = 1000 + gap / 2  # a's centred rating
        coverage = sum(math.comb(games, k) * p**k * (1 - p) ** (games - k) * (low <= truth <= high)
                       for k, (low, high) in intervals.items())  # fmt: skip
        assert 0.92 <= coverage <= 0.995, (gap, coverage)


def test_interval_coverage_of_a_simulated_field_with_extreme_gaps():
    """Three agents at 0, gap/2 and gap Elo, 90 matches per run: perfect records between the extremes are
    common at 800 Elo; the intervals still cover the truth about 95% of the time. (No draws: draws at a fixed
    rate regardless of strength would make the truth differ from the simulated strengths.)"""
    covered = total = 0
    for gap in (0, 400, 800):
        strengths = {"a": 0.0, "b": gap / 2, "c": float(gap)}
        centred = {k: v - gap / 2 + 1000 for k, v in strengths.items()}
        for seed in range(12):
            for agent, r in bradley_terry(simulate(strengths, 90, seed)).items():
                assert r.low <= r.rating <= r.high
                covered += r.low <= centred[agent] <= r.high
                total += 1
    assert 0.88 <= covered / total <= 1.0, covered / total


def test_fit_is_a_function_of_the_pairwise_counts():
    records = simulate({"a": 0, "b": 100, "c": 200}, 300, 4, draw_rate=0.2)
    cells = {}
    for r in records:
        (s, t) = r.seats
        score = 1.0 if s.rank < t.rank else 0.5 if s.rank == t.rank else 0.0
        cells[(s.agent, t.agent, score)] = cells.get((s.agent, t.agent, score), 0) + 1
    from_counts = bradley_terry_counts(pair_results_from_counts(cells))
    assert from_counts == bradley_terry_counts(pair_results(records)) == bradley_terry(records)


def plackett_luce(strengths, players, rounds, seed):
    """Matches of `players` seats: every group of that many agents plays once per round, finishing in an order drawn
    from the Plackett-Luce model (whose pairwise marginals are Bradley-Terry's, so the fit is consistent)."""
    from itertools import combinations

    rng = random.Random(seed)
    records = []
    for _ in range(rounds):
        for group in combinations(sorted(strengths), players):
            left, order = list(group), []
            while left:
                weights = [10 ** (strengths[a] / 400) for a in left]
                pick = rng.choices(range(len(left)), weights)[0]
                order.append(left.pop(pick))
            seats = tuple(SeatRecord(s, a, 0.0, "win" if order.index(a) == 0 else "loss", order.index(a) + 1, 0.0, 1)
                          for s, a in enumerate(group))  # fmt: skip
            records.append(MatchRecord(len(records), 1, len(records), len(records), "g", "1", 10, "normal", seats))
    return records


def test_intervals_of_four_player_matches_cover_as_two_player_ones_do():
    """The pairwise results of one 4-player finishing order are weighed 3 / 5 (arena.ratings.pair_weight): counted as
    independent games, 95% intervals covered about 88% of the time on this field."""
    strengths = {name: 400 * x / math.log(10) for name, x in zip("abcde", np.linspace(0.0, 1.5, 5))}
    centred = {k: v - np.mean(list(strengths.values())) + 1000 for k, v in strengths.items()}
    covered = total = 0
    for seed in range(120):
        for agent, r in bradley_terry(plackett_luce(strengths, 4, 10, seed)).items():
            covered += r.low <= centred[agent] <= r.high
            total += 1
    assert 0.925 <= covered / total <= 0.99, covered / total
