"""Ratings and statistics checked against independent recomputation from the stored rows."""

import math
import sqlite3
from collections import defaultdict

import numpy as np
import trueskill


def _stored(db_path):
    """Matches straight from SQLite, in schedule order: [(turns, [(agent, outcome, rank), ...])]."""
    with sqlite3.connect(db_path) as c:
        matches = c.execute("select id, turns from matches where status='done' order by tournament_id, \"index\"").fetchall()
        seats = defaultdict(list)
        for mid, agent, outcome, rank in c.execute("select match_id, agent, outcome, rank from match_seats order by match_id, seat"):
            seats[mid].append((agent, outcome, rank))
    return [(turns, seats[mid]) for mid, turns in matches]


def test_elo_trueskill_counts_matrices_stats_match_recomputation(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,center", "--rounds", "10", "--seed", "4", "--quiet")
    stored = _stored(arena_cli.db_path)

    elo = defaultdict(lambda: 1000.0)
    env = trueskill.TrueSkill(draw_probability=0.10)
    ts = defaultdict(env.create_rating)
    wins, draws, losses = defaultdict(int), defaultdict(int), defaultdict(int)
    for _turns, ((a, oa, ra), (b, ob, rb)) in stored:
        score = {"win": 1.0, "draw": 0.5, "loss": 0.0}[oa]
        expected = 1 / (1 + 10 ** ((elo[b] - elo[a]) / 400))
        elo[a], elo[b] = elo[a] + 32 * (score - expected), elo[b] - 32 * (score - expected)
        (ts[a],), (ts[b],) = env.rate([(ts[a],), (ts[b],)], ranks=[ra, rb])
        for agent, outcome in ((a, oa), (b, ob)):
            {"win": wins, "draw": draws, "loss": losses}[outcome][agent] += 1

    board = arena_cli.json("leaderboard", "--system", "elo")
    assert [r["agent"] for r in board] == sorted(elo, key=lambda a: -elo[a])
    for row in board:
        agent = row["agent"]
        assert math.isclose(row["elo"], elo[agent], abs_tol=1e-9)
        assert math.isclose(row["trueskill_mu"], ts[agent].mu, abs_tol=1e-5)
        assert math.isclose(row["trueskill_sigma"], ts[agent].sigma, abs_tol=1e-5)
        assert (row["wins"], row["draws"], row["losses"], row["games"]) == (
            wins[agent], draws[agent], losses[agent], wins[agent] + draws[agent] + losses[agent])

    agents = [r["agent"] for r in arena_cli.json("leaderboard")]
    net = arena_cli.json("matrix", "--kind", "net-wins")
    games = arena_cli.json("matrix", "--kind", "games")
    turns = arena_cli.json("matrix", "--kind", "avg-turns")
    rate = arena_cli.json("matrix", "--kind", "win-rate")
    drawn = arena_cli.json("matrix", "--kind", "draw-rate")
    assert net["agents"] == agents and net["kind"] == "net-wins"
    for i, x in enumerate(agents):
        for j, y in enumerate(agents):
            if i == j:
                assert net["values"][i][j] is None
                continue
            between = [(t, s) for t, s in stored if {x, y} == {s[0][0], s[1][0]}]
            x_wins = sum(1 for _, s in between for agent, outcome, _ in s if agent == x and outcome == "win")
            y_wins = sum(1 for _, s in between for agent, outcome, _ in s if agent == y and outcome == "win")
            assert net["values"][i][j] == x_wins - y_wins
            assert games["values"][i][j] == len(between)
            assert math.isclose(turns["values"][i][j], np.mean([t for t, _ in between]))
            assert math.isclose(rate["values"][i][j], x_wins / len(between))
            assert math.isclose(drawn["values"][i][j], (len(between) - x_wins - y_wins) / len(between))

    stats = arena_cli.json("stats")
    lengths = [t for t, _ in stored]
    assert stats["match_length"]["count"] == len(lengths)
    assert math.isclose(stats["match_length"]["mean"], np.mean(lengths))
    assert math.isclose(stats["match_length"]["median"], np.median(lengths))
    assert math.isclose(stats["match_length"]["p90"], np.percentile(lengths, 90))
    assert stats["match_length"]["max"] == max(lengths)
    # Tic-tac-toe: the legal moves before turn t are exactly 10 - t.
    assert stats["legal_moves_per_turn"]["max"] == 9
    assert stats["legal_moves_per_turn"]["count"] == sum(lengths)
    expected_legal = [9 - k for t in lengths for k in range(t)]
    assert math.isclose(stats["legal_moves_per_turn"]["mean"], np.mean(expected_legal))

    history = arena_cli.json("elo-history")
    assert len(history) == len(stored) and history[-1]["n"] == len(stored)
    final = {}
    for point in history:
        final.update(point["ratings"])
    assert all(math.isclose(final[a], elo[a]) for a in agents)

    csv = arena_cli("matrix", "--kind", "net-wins", "--csv").stdout.splitlines()
    assert csv[0] == "agent," + ",".join(agents)


def test_multiplayer_decomposition():
    from arena.ratings import elo, pairwise_scores, trueskill_ratings
    from db.records import MatchRecord, SeatRecord

    seats = tuple(SeatRecord(i, name, 0.0, o, r, 0.0, 1) for i, (name, o, r) in
                  enumerate([("a", "loss", 2), ("b", "win", 1), ("c", "loss", 2)]))
    record = MatchRecord(1, 1, 0, 0, "g", "1", 10, "normal", seats)
    assert pairwise_scores(record) == [("a", "b", 0.0), ("a", "c", 0.5), ("b", "c", 1.0)]
    ratings, _ = elo([record])
    assert math.isclose(ratings["b"], 1016.0) and math.isclose(ratings["a"], 992.0) and math.isclose(sum(ratings.values()), 3000.0)
    ts = trueskill_ratings([record])
    assert ts["b"].mu > ts["a"].mu and math.isclose(ts["a"].mu, ts["c"].mu, abs_tol=0.05)
