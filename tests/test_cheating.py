"""Agents that change the state they are given, or reach the real one, never change a result (issue 11)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from arena.match import play_match
from arena.plugins import get_registry
from tests.conftest import TEST_PLUGINS

PERFECT = ["tic_tac_toe", "connect_four", "reversi", "dots_and_boxes", "onitama", "santorini"]


@pytest.mark.parametrize("game", PERFECT)
def test_cheaters_on_every_perfect_information_game_leave_results_that_replay(arena_cli, game):
    arena_cli("run-tournament", "--game", game, "--agents", "doubler,scribbler,reacher,random", "--rounds", "2", "--quiet")
    matches = arena_cli.json("matches")
    assert len(matches) == 12
    verified = arena_cli("db", "verify")
    assert verified.exit_code == 0 and "12 matches replayed, 0 do not" in verified.stdout
    caught = 0
    for match in matches:
        agents = {s["agent"]: s for s in match["seats"]}
        if "reacher" in agents:  # it changes the real state through the runner's frame: caught, it forfeits
            assert match["reason"] != "normal", match
            if agents["reacher"]["outcome"] == "loss":
                assert match["reason"] == "agent_error" and "changed the game's own state" in match["detail"], match
                caught += 1
        if match["reason"] == "normal" and game == "tic_tac_toe":
            assert match["turns"] >= 5, match  # the probe's cheater "won" in one move
    assert caught >= 4


def test_the_same_probe_through_play_match(tmp_path):
    registry = get_registry([TEST_PLUGINS])
    game = registry.game_class("tic_tac_toe")()
    for cheater in ("doubler", "scribbler", "reacher"):
        for seed in range(10):
            agents = [registry.agent_class(cheater)(game, 0, seed), registry.agent_class("random")(game, 1, seed)]
            result = play_match(game, agents, seed)
            state = game.new_initial_state(seed)
            for action in result.moves:
                assert action in state.legal_actions()
                state.apply(action)
            if result.reason == "normal":
                assert state.is_terminal() and [float(r) for r in state.returns()] == result.scores
                assert result.turns >= 5  # the probe's cheater won in one move


def test_db_verify_reports_a_stored_result_its_moves_do_not_give(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "4", "--name", "t", "--quiet")
    assert arena_cli("db", "verify", "--tournament", "t").exit_code == 0
    match_id, moves = arena_cli.rows("select id, moves from matches where reason = 'normal' order by id limit 1")[0]
    other_id = arena_cli.rows(f"select id from matches where id != {match_id} order by id limit 1")[0][0]
    with sqlite3.connect(arena_cli.db_path) as c:
        c.execute("update matches set moves = ? where id = ?", (moves[:3], match_id))  # two moves and the win stored
        c.execute("update matches set turns = 2 where id = ?", (match_id,))
        c.execute("update match_seats set score = -score where match_id = ?", (other_id,))
    result = arena_cli("db", "verify", "--tournament", "t", ok=False)
    assert result.exit_code == 1
    assert f"match {match_id} " in result.stdout and "not over" in result.stdout
    assert f"match {other_id} " in result.stdout and "stored scores" in result.stdout
    data = arena_cli("db", "verify", "--json", ok=False)
    assert data.exit_code == 1
    # A move list that breaks the rules: `arena replay` says so in one line, exit code 2.
    with sqlite3.connect(arena_cli.db_path) as c:
        c.execute("update matches set moves = ? where id = ?", (b"B" + bytes([4, 4]), match_id))
    replayed = arena_cli("replay", str(match_id), ok=False)
    assert replayed.exit_code == 2 and len(replayed.stderr.strip().splitlines()) == 1, replayed.stderr
    assert "does not replay" in replayed.stderr and "Traceback" not in replayed.stderr


BROKEN = TEST_PLUGINS.parent / "broken"


@pytest.mark.parametrize("how", ["raise", "empty", "long"])
def test_a_game_that_breaks_is_recorded_as_game_error_and_rated_for_no_one(db_path, how):
    from tests.conftest import Arena

    arena_cli = Arena(db_path, plugins_dirs=(TEST_PLUGINS, BROKEN))
    run = arena_cli("run-tournament", "--game", f"broken:how={how}", "--agents", "random,random:seed=1", "--rounds", "8",
                    "--quiet")  # fmt: skip
    assert "ended in game_error: the game " in run.stderr and "Traceback" not in run.stderr
    matches = arena_cli.json("matches")
    assert len(matches) == 8
    broken = [m for m in matches if m["reason"] == "game_error"]
    assert broken == [m for m in matches if m["seed"] % 2]  # the game breaks on odd seeds only
    assert 0 < len(broken) < 8 and all(s["outcome"] == "none" for m in broken for s in m["seats"])
    words = {"raise": "failed to apply", "empty": "no legal action", "long": "not over after its max_game_length() of 10 actions"}
    assert all(words[how] in m["detail"] for m in broken), broken
    board = {row["agent"]: row for row in arena_cli.json("leaderboard")}
    assert sum(row["games"] for row in board.values()) == 2 * (8 - len(broken))  # only the normal matches count
    assert all(row["forfeits"] == 0 for row in board.values())
    assert arena_cli.json("stats")["reasons"]["game_error"] == len(broken)
    assert arena_cli("db", "verify").exit_code == 0


def test_an_sprt_counts_no_game_error(db_path):
    from tests.conftest import Arena

    arena_cli = Arena(db_path, plugins_dirs=(TEST_PLUGINS, BROKEN))
    arena_cli("run-tournament", "--game", "broken:how=raise", "--agents", "random,random:seed=1", "--sprt", "elo0=0,elo1=400",
              "--rounds", "6", "--name", "s", "--quiet")  # fmt: skip
    matches = arena_cli.json("matches")
    normal = [m for m in matches if m["reason"] != "game_error"]
    assert 0 < len(normal) < len(matches)
    report = arena_cli.json("sprt", "s")
    assert report["games"] == len(normal)  # a broken match is nobody's loss, win or draw


def _versioned_games(version: str, gone: bool) -> str:
    """A loose plugin of tic-tac-toe as `versioned_ttt` at `version`, and as `gone_ttt` too when `gone`."""
    games = "VersionedTicTacToe" + (", GoneTicTacToe" if gone else "")
    return f"""
import dataclasses
import arena
from games.tic_tac_toe import TicTacToe

class VersionedTicTacToe(TicTacToe):
    info = dataclasses.replace(TicTacToe.info, id="versioned_ttt", version="{version}")

class GoneTicTacToe(TicTacToe):
    info = dataclasses.replace(TicTacToe.info, id="gone_ttt", version="1")

@arena.hookimpl
def register_games(register):
    for game in ({games},):
        register(game)
"""


def test_db_verify_checks_every_match_it_can_and_counts_those_of_games_not_installed_at_their_version(tmp_path, db_path):
    """Matches of a game at another version, or gone, are counted and named, not an error that stops at the first:
    every other match is checked (exit code 1 for a mismatch, else 3 while some could not be checked)."""
    from tests.conftest import Arena, loose_plugin

    before = Arena(db_path, plugins_dirs=(loose_plugin(tmp_path / "old", "games_then", _versioned_games("1", True)),))
    for game in ("versioned_ttt", "gone_ttt", "tic_tac_toe"):
        before("run-tournament", "--game", game, "--agents", "random,greedy", "--rounds", "2", "--name", game, "--quiet")
    assert before("db", "verify").exit_code == 0
    now = Arena(db_path, plugins_dirs=(loose_plugin(tmp_path / "new", "games_now", _versioned_games("2", False)),))
    result = now("db", "verify", ok=False)
    assert result.exit_code == 3, result.output
    assert result.stdout.splitlines() == [
        "2 matches replayed, 0 do not lead to their stored result",
        "4 matches of games not installed at their version were not checked: versioned_ttt v1 (2: v2 is installed), "
        "gone_ttt v1 (2: not installed)",
    ]
    data = json.loads(now("db", "verify", "--json", ok=False).stdout)
    assert data["checked"] == 2 and [(u["game"], u["matches"]) for u in data["unchecked"]] == [("versioned_ttt", 2), ("gone_ttt", 2)]
    assert now("db", "verify", "--tournament", "tic_tac_toe").exit_code == 0
    with sqlite3.connect(db_path) as c:
        c.execute("update match_seats set score = -score where match_id = (select max(id) from matches)")
    mismatched = now("db", "verify", ok=False)
    assert mismatched.exit_code == 1 and "1 do not lead" in mismatched.stdout and "4 matches of games" in mismatched.stdout
