"""Tournaments of more than two players: balanced tables, rankings, pairwise matrices, ratings."""

from collections import Counter

import pytest


@pytest.mark.parametrize("players", [3, 4, 6])
def test_incan_gold_tables(arena_cli, players):
    agents = ["greedy", "random"] + [f"random:seed={i}" for i in range(1, players - 1)] + ["greedy:seed=1"]
    rounds = players * 2
    arena_cli("run-tournament", "--game", "incan_gold", "--players", str(players), "--agents", ",".join(agents),
              "--rounds", str(rounds), "--seed", "2", "--max-turns", "2000", "--quiet")  # fmt: skip
    matches = arena_cli.json("matches")
    assert all(len(m["seats"]) == players for m in matches)
    # Balanced seating: every agent sits in every seat equally often.
    seat_counts = Counter((s["agent"], s["seat"]) for m in matches for s in m["seats"])
    per_agent = Counter(s["agent"] for m in matches for s in m["seats"])
    for agent, total in per_agent.items():
        assert {seat_counts[(agent, seat)] for seat in range(players)} == {total // players}
    # Meetings: every pair of agents shares the same number of tables.
    games = arena_cli.json("matrix", "--kind", "games")
    off_diagonal = {v for i, row in enumerate(games["values"]) for j, v in enumerate(row) if i != j}
    assert len(off_diagonal) == 1 and off_diagonal.pop() > 0
    # Ranks allow ties; outcomes follow them.
    for m in matches:
        ranks = [s["rank"] for s in m["seats"]]
        assert min(ranks) == 1
        for s in m["seats"]:
            assert s["outcome"] == ("loss" if s["rank"] > 1 else "draw" if ranks.count(1) > 1 else "win")
    board = arena_cli.json("leaderboard")
    best = {r["agent"]: r for r in board}
    assert best["greedy"]["bt"] > best["random"]["bt"] and best["greedy"]["elo"] > best["random"]["elo"]
    assert best["greedy"]["trueskill_mu"] > best["random"]["trueskill_mu"]
    net = arena_cli.json("matrix", "--kind", "net-wins")
    g, r = net["agents"].index("greedy"), net["agents"].index("random")
    assert net["values"][g][r] > 0 and net["values"][g][r] == -net["values"][r][g]
    stats = arena_cli.json("stats")
    assert stats["match_length"]["count"] == len(matches)
    assert stats["legal_moves_per_turn"]["max"] == 2
    assert stats["rounds"]["count"] == len(matches) and stats["rounds"]["max"] <= 5


def test_players_must_fit_the_game(arena_cli):
    result = arena_cli("run-tournament", "--game", "incan_gold", "--players", "9", "--agents", "random,greedy", ok=False)
    assert result.exit_code == 2 and "3 to 8 players" in result.stderr
    result = arena_cli("run-tournament", "--game", "incan_gold", "--players", "4", "--agents", "random,greedy,random:seed=1", ok=False)
    assert result.exit_code == 2 and "at least 4 agents" in result.stderr
