"""Every query command takes --json and --csv (DESIGN: one library, two formats for scripts)."""

from __future__ import annotations

import csv
import io
import json

QUERIES = [["leaderboard"], ["matrix"], ["stats"], ["seats"], ["matches"], ["tournaments"], ["elo-history"], ["games"],
           ["agents", "list"], ["agents", "show", "lucky"], ["replay", "1"], ["sprt", "duel"], ["plugins"]]  # fmt: skip


def test_every_query_command_takes_json_and_csv(arena_cli):
    arena_cli("agents", "register", "lucky", "--type", "random", "--param", "seed=7")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "4",
              "--sprt", "elo0=0,elo1=10", "--name", "duel", "--quiet")  # fmt: skip
    for args in QUERIES:
        assert json.loads(arena_cli(*args, "--json").stdout), args
        rows = list(csv.reader(io.StringIO(arena_cli(*args, "--csv").stdout)))
        assert len(rows) >= 2 and all(len(row) == len(rows[0]) for row in rows), (args, rows)


def test_csv_of_stats_and_replay_say_what_each_figure_is(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "2", "--quiet",
              "--openings", "random:2")  # fmt: skip
    stats = list(csv.DictReader(io.StringIO(arena_cli("stats", "--csv").stdout)))
    data = arena_cli.json("stats")
    mean = next(row for row in stats if row["table"] == "match_length" and row["subject"] == "all matches" and row["statistic"] == "mean")
    assert float(mean["value"]) == data["match_length"]["mean"]
    moves = list(csv.DictReader(io.StringIO(arena_cli("replay", "1", "--csv").stdout)))
    replay = arena_cli.json("replay", "1")
    assert [int(m["action"]) for m in moves] == [m["action"] for m in replay["moves"]]
    assert [m["agent"] for m in moves[:2]] == ["", ""] and moves[2]["agent"] and moves[2]["turn"] == "1"  # the opening: nobody's
