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


def test_leaderboard_csv_has_the_same_columns_with_matches_or_none(arena_cli):
    """The header of an empty leaderboard is that of a full one (it was the table's: rank first, bt_interval), and
    every field of the JSON rows is a column."""
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "2", "--quiet")
    full = list(csv.reader(io.StringIO(arena_cli("leaderboard", "--csv").stdout)))
    empty = list(csv.reader(io.StringIO(arena_cli("leaderboard", "--game", "connect_four", "--csv").stdout)))
    assert len(full) == 3 and len(empty) == 1
    assert empty[0] == full[0] == list(arena_cli.json("leaderboard")[0])


def test_tournaments_csv_writes_the_renamed_agents_as_json(arena_cli):
    """`renamed` (given label -> recorded label) is a JSON object in its cell, not Python's repr of a dict."""
    for agents in ("random,greedy", "random:seed=0,greedy"):  # the second is `random` again: recorded as `random`
        arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--rounds", "1", "--quiet")
    rows = list(csv.DictReader(io.StringIO(arena_cli("tournaments", "--csv").stdout)))
    assert [json.loads(row["renamed"]) for row in rows] == [t["renamed"] for t in arena_cli.json("tournaments")]
    assert json.loads(rows[1]["renamed"]) == {"random:seed=0": "random"}
