"""Tournaments through the real CLI on real SQLite files (the storage tests also on PostgreSQL)."""

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.schedule import decode_schedule, encode_schedule, extend_encoded, gauntlet, random_tables, round_robin


def test_round_robin_alternates_seats():
    tables = round_robin(3, 2)
    assert tables[:3] == [(0, 1), (0, 2), (1, 2)] and tables[3:] == [(1, 0), (2, 0), (2, 1)]
    many = round_robin(4, 3, players=3)
    seats = Counter((agent, seat) for table in many for seat, agent in enumerate(table))
    assert len(many) == 12 and set(seats.values()) == {3}
    assert gauntlet(3, 1) == [(0, 1), (1, 0), (0, 2), (2, 0)]


@pytest.mark.parametrize("agents, players", [(8, 4), (12, 4), (5, 3), (4, 4), (6, 2)])
def test_random_tables_are_balanced_and_a_function_of_the_seed(agents, players):
    """Every agent plays `players` matches a round, once in each seat, at tables of distinct agents drawn anew."""
    tables = random_tables(agents, 3, players, seed=11)
    assert len(tables) == 3 * agents and all(len(set(table)) == players for table in tables)
    for r in range(3):
        this_round = tables[r * agents:(r + 1) * agents]
        seats = Counter((agent, seat) for table in this_round for seat, agent in enumerate(table))
        assert set(seats) == {(a, s) for a in range(agents) for s in range(players)} and set(seats.values()) == {1}
    assert tables == random_tables(agents, 3, players, seed=11)
    if agents > players + 1:  # more than one circle of neighbours: the rounds differ, and so do the seeds
        assert tables[:agents] != tables[agents:2 * agents] and tables != random_tables(agents, 3, players, seed=12)


def test_tables_format_plays_balanced_random_tables_and_refuses_openings(arena_cli):
    agents = ",".join(["random"] + [f"random:seed={k}" for k in range(1, 8)])
    arena_cli("run-tournament", "--game", "incan_gold", "--players", "4", "--agents", agents, "--format", "tables",
              "--rounds", "2", "--seed", "3", "--name", "tables", "--quiet")  # fmt: skip
    matches = arena_cli.json("matches", "--tournament", "tables")
    assert len(matches) == 16  # 8 a round, where round-robin would play C(8, 4) = 70
    played = Counter(seat["agent"] for m in matches for seat in m["seats"])
    assert set(played.values()) == {8}
    refused = arena_cli("run-tournament", "--game", "incan_gold", "--players", "4", "--agents", agents, "--format", "tables",
                        "--openings", "random:2", ok=False)  # fmt: skip
    assert refused.exit_code == 2 and "--format tables" in refused.stderr


def test_tournament_stores_every_match(arena_db):
    arena_cli = arena_db
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy,center", "--rounds", "4", "--seed", "5",
              "--name", "t1", "--quiet")
    matches = arena_cli.json("matches", "--tournament", "t1")
    assert len(matches) == 12
    assert [m["index"] for m in matches] == list(range(12))
    for m in matches:
        assert set(m) >= {"id", "index", "seed", "turns", "reason", "seats"}
        assert [s["seat"] for s in m["seats"]] == [0, 1]
        assert set(m["seats"][0]) >= {"seat", "agent", "score", "outcome"}
    pairs = Counter(tuple(s["agent"] for s in m["seats"]) for m in matches)
    assert pairs[("random", "greedy")] == pairs[("greedy", "random")] == 2
    stored = arena_cli.rows("select game_id, game_version, game_params, status, moves is not null, legal_counts is not null from matches")
    assert set(stored) == {("connect_four", "1", "columns=7;rows=6;x_in_row=4", "done", 1, 1)}
    seats = arena_cli.rows("select agent, agent_type, agent_params, agent_version, think_time >= 0, moves > 0 from match_seats")
    assert ("center", "center", '{"noise": "0", "seed": "0"}', "1.0", 1, 1) in seats


def test_same_seed_same_results(arena_cli):
    for name in ("a", "b"):
        arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "6", "--seed", "9",
                  "--name", name, "--quiet")
    strip = lambda ms: [(m["seed"], m["turns"], m["reason"], [(s["agent"], s["outcome"]) for s in m["seats"]]) for m in ms]
    assert strip(arena_cli.json("matches", "--tournament", "a")) == strip(arena_cli.json("matches", "--tournament", "b"))
    assert arena_cli.json("leaderboard", "--tournament", "a") == arena_cli.json("leaderboard", "--tournament", "b")
    assert arena_cli.rows("select moves from matches where tournament_id=1") == arena_cli.rows("select moves from matches where tournament_id=2")


def test_greedy_beats_random_on_connect_four(arena_cli):
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy", "--rounds", "50", "--quiet")
    board = {row["agent"]: row for row in arena_cli.json("leaderboard")}
    assert board["greedy"]["wins"] >= 45 and board["greedy"]["elo"] > board["random"]["elo"] + 100


def test_never_ending_game_draws_at_the_limit(arena_cli):
    for limit in ("200", "37"):
        arena_cli("run-tournament", "--game", "forever", "--agents", "random,center", "--rounds", "3", "--max-turns", limit,
                  "--name", f"forever{limit}", "--quiet")
        matches = arena_cli.json("matches", "--tournament", f"forever{limit}")
        assert {(m["turns"], m["reason"]) for m in matches} == {(int(limit), "turn_limit")}
        assert {s["outcome"] for m in matches for s in m["seats"]} == {"draw"}


def test_faulty_agents_forfeit_and_the_tournament_goes_on(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "raiser:after=1,illegal,sleeper:seconds=0.6,random",
              "--rounds", "2", "--time-per-move", "0.5", "--quiet")
    matches = arena_cli.json("matches")
    assert len(matches) == 12
    culprit = {"agent_error": "raiser:after=1", "illegal_action": "illegal", "timeout": "sleeper:seconds=0.6"}
    assert {m["reason"] for m in matches} == set(culprit)
    for m in matches:
        losers = [s["agent"] for s in m["seats"] if s["outcome"] == "loss"]
        assert losers == [culprit[m["reason"]]], m
        if m["reason"] == "agent_error":
            assert "boom from raiser" in m["detail"]
    board = {row["agent"]: row for row in arena_cli.json("leaderboard")}
    assert board["random"]["losses"] == 0 and board["illegal"]["forfeits"] >= 4


def test_named_agents(arena_db):
    arena_cli = arena_db
    arena_cli("agents", "register", "careful", "--type", "greedy", "--param", "eval=heuristic", "--game", "connect_four")
    arena_cli("agents", "register", "lucky", "--type", "random", "--param", "seed=3")
    shown = arena_cli.json("agents", "show", "careful")
    assert (shown["type"], shown["params"], shown["game"]) == ("greedy", {"eval": "heuristic"}, "connect_four")
    listed = arena_cli.json("agents", "list")
    assert [n["name"] for n in listed["named"]] == ["careful", "lucky"]
    assert {"random", "greedy", "center"} <= {t["type"] for t in listed["types"]}
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "careful,lucky,random", "--rounds", "2", "--quiet")
    assert {row["agent"] for row in arena_cli.json("leaderboard")} == {"careful", "lucky", "random"}
    bad = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "careful,random", ok=False)
    assert bad.exit_code == 2 and "registered for game 'connect_four'" in bad.stderr
    arena_cli("agents", "remove", "lucky")
    assert [n["name"] for n in arena_cli.json("agents", "list")["named"]] == ["careful"]


def test_replay_shows_every_move(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--quiet")
    match = arena_cli.json("matches")[0]
    replayed = arena_cli.json("replay", str(match["id"]))
    assert len(replayed["moves"]) == match["turns"]
    assert replayed["moves"][0]["text"].startswith("x(")
    text = arena_cli("replay", str(match["id"])).stdout
    assert "   1. " in text and "end: normal" in text


def test_gauntlet(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--format", "gauntlet", "--challenger", "greedy",
              "--agents", "random,center", "--rounds", "2", "--quiet")
    matches = arena_cli.json("matches")
    assert len(matches) == 8
    assert all("greedy" in [s["agent"] for s in m["seats"]] for m in matches)
    assert Counter(m["seats"][0]["agent"] for m in matches)["greedy"] == 4
    # random and center never met: no figure there in any kind but games (0), not a net 0 that reads as even
    for kind in ("net-wins", "win-rate", "draw-rate", "avg-turns", "games"):
        matrix = arena_cli.json("matrix", "--kind", kind)
        i, j = matrix["agents"].index("random"), matrix["agents"].index("center")
        assert matrix["values"][i][j] == matrix["values"][j][i] == (0 if kind == "games" else None), (kind, matrix)


def test_leaderboard_across_tournaments_by_game(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "3", "--quiet")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,center", "--rounds", "3", "--quiet")
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy", "--rounds", "3", "--quiet")
    rows = {r["agent"]: r for r in arena_cli.json("leaderboard", "--game", "tic_tac_toe")}
    assert rows["random"]["games"] == 6 and rows["greedy"]["games"] == 3 and rows["center"]["games"] == 3
    assert arena_cli.json("leaderboard", "--game", "connect_four:rows=5") == []



def test_one_agent_is_one_row_across_tournaments_and_one_row_one_agent(arena_db):
    """An agent given under another label than its stored results takes theirs; a name registered again with other
    parameters is another agent, recorded as NAME@2."""
    arena_cli = arena_db
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "2", "--quiet")
    arena_cli("agents", "register", "bob", "--type", "mcts", "--param", "simulations=5")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "bob,random:seed=0", "--rounds", "2", "--quiet")
    arena_cli("agents", "remove", "bob")
    arena_cli("agents", "register", "bob", "--type", "mcts", "--param", "simulations=50")
    again = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "bob,greedy", "--rounds", "2", "--quiet")
    assert ("note: 'bob' has results of another agent under that name for this game (another version or other "
            "parameters): this tournament records it as 'bob@2', so the two never mix") in again.stderr  # fmt: skip
    inline = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "mcts:simulations=50,mcts:simulations=5",
                       "--rounds", "2", "--quiet")  # fmt: skip
    assert "note: 'mcts:simulations=5' is the agent with results for this game as 'bob'" in inline.stderr
    board = {row["agent"]: row["games"] for row in arena_cli.json("leaderboard", "--game", "tic_tac_toe")}
    assert board == {"random": 4, "greedy": 4, "bob": 4, "bob@2": 4}
    renamed = [t["renamed"] for t in arena_cli.json("tournaments")]
    assert renamed == [{}, {"random:seed=0": "random"}, {"bob": "bob@2"},
                       {"mcts:simulations=50": "bob@2", "mcts:simulations=5": "bob"}]  # fmt: skip
    params = arena_cli.rows("select distinct agent, agent_params from match_seats where agent like 'bob%' order by agent")
    assert [(label, json.loads(p)["simulations"]) for label, p in params] == [("bob", "5"), ("bob@2", "50")]
    arena_cli("agents", "remove", "bob")
    arena_cli("agents", "register", "bob", "--type", "mcts", "--param", "simulations=70")
    arena_cli("agents", "register", "bob@3", "--type", "random", "--param", "seed=7")  # the label the new bob would take
    clash = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "bob,bob@3", ok=False)
    assert clash.exit_code == 2 and clash.stderr.strip() == (
        "Error: agents 'bob' and 'bob@3' would both be recorded as 'bob@3' (stored results of this game decide the "
        "labels): give them other names")  # fmt: skip
    assert len(arena_cli.json("tournaments")) == 4

def test_a_default_that_depends_on_the_game_is_made_explicit_before_agents_are_compared(arena_db):
    """greedy's eval defaults to the game's greedy evaluation where it has one, else its heuristic: greedy:eval=...
    naming that default is greedy, across tournaments too; naming another evaluation is another agent."""
    arena_cli = arena_db
    arena_cli("run-tournament", "--game", "dots_and_boxes", "--agents", "greedy,random", "--rounds", "1", "--quiet")
    same = arena_cli("run-tournament", "--game", "dots_and_boxes", "--agents", "greedy:eval=greedy,random", "--rounds", "1",
                     "--quiet")  # fmt: skip
    assert "note: 'greedy:eval=greedy' is the agent with results for this game as 'greedy'" in same.stderr
    arena_cli("run-tournament", "--game", "dots_and_boxes", "--agents", "greedy:eval=heuristic,greedy", "--rounds", "1",
              "--quiet")  # fmt: skip
    board = {row["agent"]: row["games"] for row in arena_cli.json("leaderboard", "--game", "dots_and_boxes")}
    assert board == {"greedy": 3, "random": 2, "greedy:eval=heuristic": 1}


@pytest.mark.parametrize(
    "args, message",
    [
        (["run-tournament", "--game", "chess", "--agents", "random,greedy"], "unknown game 'chess' (known: "),  # no near name
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,wizard"], "unknown agent 'wizard'"),
        (["run-tournament", "--game", "connect_four:rows=x", "--agents", "random,greedy"], "bad value 'x' for parameter 'rows'"),
        (["run-tournament", "--game", "connect_four:depth=3", "--agents", "random,greedy"], "unknown parameter 'depth'"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random:depth=3,greedy"], "unknown parameter 'depth'"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,random"], "listed twice"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,random:seed=0"], "'random' and 'random:seed=0' are the same"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "minimax:depth=3,minimax,random"], "are the same agent"),
        (["run-tournament", "--game", "connect_four", "--agents", "greedy,greedy:eval=heuristic"], "are the same agent"),
        (["run-tournament", "--game", "dots_and_boxes", "--agents", "greedy:eval=greedy,greedy"], "are the same agent"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "mcts:eval=heuristic,mcts"], "are the same agent"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "0"], "--rounds"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "x"], "not a valid integer"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--max-turns", "0"], "--max-turns"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--time-per-move", "-1"], "--time-per-move"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--workers", "zero"], "--workers"),
        (["run-tournament", "--game", "forever", "--agents", "greedy,random"], "offers none"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random"], "at least 2 agents"),
        (["run-tournament", "--resume", "nope"], "no tournament"),
        (["leaderboard", "--tournament", "99"], "no tournament"),
        (["leaderboard", "--system", "glicko"], "glicko"),
        (["matrix", "--kind", "bogus"], "bogus"),
        (["replay", "12345"], "no match 12345"),
        (["agents", "show", "ghost"], "no agent named 'ghost'"),
        (["agents", "register", "x", "--type", "minimaxx"], "unknown agent type 'minimaxx'; did you mean 'minimax'?"),
        (["run-tournament", "--game", "conect_four", "--agents", "random,greedy"], "'conect_four'; did you mean 'connect_four'?"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,gredy"], "agent type; did you mean 'greedy'?"),
        (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,mcts:simulation=9"], "did you mean 'simulations'?"),
        (["agents", "register", "x", "--type", "greedy", "--param", "eval"], "expected key=value"),
        (["no-such-command"], "No such command"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(arena_cli, args, message):
    result = arena_cli(*args, ok=False)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])
    assert arena_cli.rows("select count(*) from agents") in ([], [(0,)])


def test_existing_tournament_name_is_refused_without_writing(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "same", "--quiet")
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "same", ok=False)
    assert result.stderr.strip() == "Error: a tournament named 'same' exists already (done): choose another name"
    assert result.exit_code == 2 and arena_cli.rows("select count(*) from tournaments") == [(1,)]
    arena_cli.execute("update tournaments set status = 'running'")  # one not finished: say how to finish it
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "same", ok=False)
    assert result.stderr.strip() == ("Error: a tournament named 'same' exists already (running): choose another name; "
                                     "`arena run-tournament --resume same` finishes it")  # fmt: skip


def test_unreachable_and_unwritable_database(tmp_path):
    from tests.conftest import Arena

    missing = Arena(tmp_path / "no" / "such" / "dir" / "arena.db")
    result = missing("leaderboard", ok=False)
    assert result.exit_code == 2 and result.stderr.startswith("Error: cannot open database") and len(result.stderr.splitlines()) == 1
    # Root ignores file modes, so "unwritable" is a read-only SQLite URI on an existing database.
    Arena(tmp_path / "ro.db")("db", "upgrade")
    runner = CliRunner()
    url = f"sqlite:///file:{tmp_path / 'ro.db'}?mode=ro&uri=true"
    result = runner.invoke(cli, ["--db", url, "run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy"])
    assert result.exit_code == 2 and result.stderr.startswith("Error:") and len(result.stderr.splitlines()) == 1, result.stderr
    assert Arena(tmp_path / "ro.db").rows("select count(*) from tournaments") == [(0,)]
    # The server too, before it listens (it failed inside uvicorn's start, a traceback and exit code 3); with no queue
    # worker (--workers 0) it serves a read-only database as before.
    import subprocess
    import sys
    from pathlib import Path

    served = subprocess.run([str(Path(sys.executable).parent / "arena"), "--db", url, "serve", "--port", "0", "--workers", "1"],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert served.returncode == 2 and served.stderr == "Error: database: attempt to write a readonly database\n", served.stderr


def test_leaderboard_cache_follows_new_results(arena_db):
    arena_cli = arena_db
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "4", "--quiet")
    first = arena_cli.json("leaderboard", "--game", "tic_tac_toe")
    from arena.results import ANSWERS_FORMAT  # stored answers carry it: an upgrade that bumps it computes them again

    assert arena_cli.rows(f"select count(*) from cache where key like 'leaderboard@{ANSWERS_FORMAT}:game:tic_tac_toe%'") == [(1,)]
    assert arena_cli.json("leaderboard", "--game", "tic_tac_toe") == first  # served from the cache
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,center", "--rounds", "4", "--quiet")
    second = {r["agent"]: r for r in arena_cli.json("leaderboard", "--game", "tic_tac_toe")}
    assert second["random"]["games"] == 8 and "center" in second
    # A stale entry is never served: tamper with the stored payload, then store a new result.
    arena_cli.execute("update cache set payload='[]'")
    assert arena_cli.json("leaderboard", "--game", "tic_tac_toe") == []  # same fingerprint: the cache answers
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "1", "--quiet")
    assert arena_cli.json("leaderboard", "--game", "tic_tac_toe") != []


def test_a_games_leaderboard_says_when_its_matches_were_played_at_another_version(arena_cli):
    """A rules change bumps a game's version and its results never mix: `--game` at the installed version then finds
    nothing, and says that the stored tournaments are of another version and how to see them (an empty table before)."""
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "1", "--quiet")
    arena_cli.execute("update tournaments set game_version = '0'")
    result = arena_cli("leaderboard", "--game", "tic_tac_toe")
    assert "no matches of tic_tac_toe v1, the version installed; stored: v0 (1 tournament)" in result.output
    assert "--tournament ID" in result.output and arena_cli.json("leaderboard", "--game", "tic_tac_toe") == []


def test_first_mover_is_stored_and_scored(arena_cli):
    """In Onitama the side card decides who moves first, so seat and first mover differ."""
    from arena.plugins import get_registry

    arena_cli("run-tournament", "--game", "onitama:cards=study5", "--agents", "greedy,random", "--rounds", "10", "--quiet")
    game = get_registry().game_class("onitama")(cards="study5")
    matches = arena_cli.json("matches")
    stored = dict(arena_cli.rows("select id, first_player from matches"))
    for m in matches:
        assert stored[m["id"]] == game.new_initial_state(m["seed"]).current_player
    assert {stored[m["id"]] for m in matches} == {0, 1}
    seats = arena_cli.json("seats")
    first_wins = sum(1 for m in matches for s in m["seats"] if s["seat"] == stored[m["id"]] and s["outcome"] == "win")
    assert seats["first_mover"]["games"] == 10 and seats["first_mover"]["score"] == first_wins


VERSIONED_GAME = '''
import dataclasses, os
import arena
from games.tic_tac_toe import TicTacToe

class VersionedTicTacToe(TicTacToe):
    info = dataclasses.replace(TicTacToe.info, id="versioned_ttt", version=os.environ.get("VERSIONED_TTT", "1"))

@arena.hookimpl
def register_games(register):
    register(VersionedTicTacToe)
'''


def test_resume_refuses_a_game_whose_rules_changed(tmp_path):
    """A rules change bumps the game's version; a tournament started at the old version does not go on at the new one."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from arena import tournament
    from arena.plugins import get_registry
    from db.session import open_database
    from tests.conftest import loose_plugin

    plugins = loose_plugin(tmp_path / "plugins", "versioned", VERSIONED_GAME)
    db = tmp_path / "arena.db"
    request = tournament.TournamentRequest(game="versioned_ttt", agents="random,greedy", rounds=2, name="old-rules")
    tournament.create(get_registry((str(plugins),)), open_database(f"sqlite:///{db}"), request)
    arena = str(Path(sys.executable).parent / "arena")
    command = [arena, "--db", str(db), "--plugins-dir", str(plugins), "run-tournament", "--resume", "old-rules", "--quiet"]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "VERSIONED_TTT": "2"})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "Error: tournament 1 was started with versioned_ttt version 1; version 2 is installed, "
        "so its results would mix: start a new tournament"
    ]
    finished = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "VERSIONED_TTT": "1"})
    assert finished.returncode == 0, finished.stderr


def test_a_stopped_run_is_listed_stopped_until_resumed(tmp_path):
    """A run left by Ctrl-C is `stopped` (tests/test_process_faults.py sends the real one); --resume makes it running
    and plays it to done; a stopped one may be cancelled."""
    from arena import tournament
    from arena.library import tournaments
    from arena.plugins import get_registry
    from db.session import open_database

    registry = get_registry()
    database = open_database(f"sqlite:///{tmp_path / 'stop.db'}")
    request = tournament.TournamentRequest(game="tic_tac_toe", agents="random,greedy", rounds=2)
    first, second = (tournament.create(registry, database, request) for _ in range(2))
    for tournament_id in (first, second):
        assert tournaments.stop(database, tournament_id) == (
            f"tournament {tournament_id}: stopped, 0 of 2 matches stored; `arena run-tournament --resume {tournament_id}` "
            "plays the rest")  # fmt: skip
        assert tournaments.one(database, tournament_id)["status"] == "stopped"
    assert tournament.play(database, registry, first) == 2
    assert tournaments.one(database, first)["status"] == "done"
    assert tournaments.stop(database, first) is None and tournaments.one(database, first)["status"] == "done"
    assert tournaments.cancel(database, second)["status"] == "cancelled"
    from db import queue  # one a server holds is left to its lease (a server takes it back), Ctrl-C or not

    held = tournament.create(registry, database, request, status="queued")
    assert queue.claim(database, "srv:1/0", 30.0) == held
    assert tournaments.stop(database, held) is None and tournaments.one(database, held)["status"] == "running"


def test_a_name_taken_between_the_check_and_the_write_is_the_checks_error(database, monkeypatch):
    """Two submissions of one name at once both pass the look-up before the write; the database's unique name refuses
    the second, which was a raw database error (a 503 over HTTP, naming no field). Now it is the same refusal as the
    look-up's, about `name`. The race is made certain here by a look-up that finds nothing."""
    from arena import tournament
    from arena.errors import ArenaError
    from arena.library import catalog
    from arena.plugins import get_registry
    from db import queries

    registry = get_registry()
    request = tournament.TournamentRequest(game="tic_tac_toe", agents="random,greedy", name="dup")
    tournament.create(registry, database, request, status="queued")
    catalog.register_agent(registry, database, "twin", "random", {})
    monkeypatch.setattr(queries, "find_tournament", lambda session, key: None)
    monkeypatch.setattr(queries, "get_named_agent", lambda session, name: None)
    with pytest.raises(ArenaError, match="a tournament named 'dup' exists already") as refused:
        tournament.create(registry, database, request, status="queued")
    assert refused.value.field == "name"
    with pytest.raises(ArenaError, match="an agent named 'twin' exists already") as refused:
        catalog.register_agent(registry, database, "twin", "random", {})
    assert refused.value.field == "name"


@pytest.mark.parametrize("players,first,then", [
    (2, [(0, 1), (1, 0), (2, 3)], [(3, 0), (1, 2)]),  # one byte per position, as every adaptive field
    (2, [], [(0, 1)]), (2, [(0, 1)], []),
    (3, [(0, 1, 2), (2, 1, 0)], [(300, 1, 2)]),  # a position past 255: two bytes each, the earlier ones re-packed
    (2, [(0, 300), (300, 0)], [(1, 2), (2, 1), (0, 1)]),
])  # fmt: skip
def test_a_schedule_extended_and_read_from_a_table_on_as_if_decoded_whole(players, first, then):
    """extend_encoded (a batch appended to the packed schedule without decoding it) and decode_schedule from a start
    (a batch reads only its own tables) give what decoding, appending and encoding everything gives."""
    whole = first + then
    extended = extend_encoded(encode_schedule(first), then)
    assert extended == encode_schedule(whole) and decode_schedule(extended, players) == whole
    for start in range(len(whole) + 2):
        assert decode_schedule(extended, players, start) == whole[start:]
