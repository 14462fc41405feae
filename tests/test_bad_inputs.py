"""Bad input of every kind from the probe of issue 11: one line on stderr, exit code 2, nothing written."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from tests.conftest import Arena, loose_plugin


def _one_line_error(result, fragment: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and fragment in lines[0], result.stderr


def test_a_checkpoint_that_inflates_beyond_the_bound_is_refused(arena_cli, tmp_path):
    from agents.neural import MAX_CHECKPOINT_BYTES, init_checkpoint
    from arena.plugins import get_registry

    game = get_registry().game_class("tic_tac_toe")()
    bomb = init_checkpoint(game, tmp_path / "bomb.npz")
    with zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as archive:  # about 0.3 MB on disk
        extra = zipfile.ZipInfo("extra.npy")
        extra.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(extra, "w", force_zip64=True) as member:
            chunk = bytes(1 << 20)
            for _ in range(MAX_CHECKPOINT_BYTES // len(chunk) + 1):
                member.write(chunk)
    assert bomb.stat().st_size < 2 * 1024 * 1024
    _one_line_error(arena_cli("agents", "register", "bomb", "--type", "neural", "--checkpoint", str(bomb), ok=False), "inflate")
    _one_line_error(arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={bomb},random",
                              ok=False), "inflate")  # fmt: skip


def test_register_checks_the_checkpoint_file(arena_cli, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("not a network")
    _one_line_error(arena_cli("agents", "register", "junk", "--type", "neural", "--checkpoint", str(junk), ok=False), "checkpoint")
    for game in ([], ["--game", "tic_tac_toe"]):  # no checkpoint at all: refused now, not when a tournament starts
        _one_line_error(arena_cli("agents", "register", "nn", "--type", "neural", *game, ok=False), "needs a checkpoint")
    assert arena_cli.rows("select count(*) from agents") in ([], [(0,)])


@pytest.mark.parametrize("command", [[], ["db"], ["agents"], ["tokens"]])
def test_a_group_alone_shows_its_help_not_an_error(command):
    """`arena` alone (a newcomer's first command) and a group alone print the help, not "Error: Usage: ..."."""
    from click.testing import CliRunner

    from arena.cli import cli

    result = CliRunner().invoke(cli, command, prog_name="arena", catch_exceptions=False)
    assert result.exit_code in (0, 2) and "Error" not in result.output, result.output  # click 8.1 exits 0, 8.2+ 2
    assert result.output.startswith(" ".join(["Usage: arena", *command, "[OPTIONS] COMMAND [ARGS]..."])), result.output
    assert "Commands:" in result.output


GOOD = ["--game", "tic_tac_toe", "--agents", "random,greedy"]


@pytest.mark.parametrize("args,fragment", [
    (["--rounds", "10000000000"], "more than the 10,000,000 matches"),
    (["--seed", "1180591620717411303424"], "--seed must be between"),
    (["--seed", "-9223372036854775809"], "--seed must be between"),
    (["--time-per-move", "nan"], "--time-per-move"),
    (["--time-per-move", "inf"], "--time-per-move"),
    (["--time-per-move", "-1"], "--time-per-move"),
    (["--name", ""], "--name must be"),
    (["--name", "   "], "--name must be"),
    (["--name", "x" * 201], "--name must be"),
    (["--max-turns", "9223372036854775808"], "--max-turns must be between 1 and 1,000,000"),
    (["--format", "adaptive", "--budget", "99999999999"], "--budget must be at most 10,000,000"),
    (["--format", "ladder", "--budget", "99999999999"], "--budget must be at most 10,000,000"),
    (["--memory-limit", "99999999999999999999"], "--memory-limit must be between 50 and"),
    (["--sprt", "elo0=0,elo1=5,alpha=1e-320"], "alpha must be at least 1e-09"),
])  # fmt: skip
def test_bad_tournament_options(arena_cli, args, fragment):
    _one_line_error(arena_cli("run-tournament", *GOOD, *args, ok=False), fragment)
    assert not arena_cli.db_path.exists()  # refused before the database file was made


@pytest.mark.parametrize("args,fragment", [
    (["check-agent", "random", "--game", "tic_tac_toe", "--time-per-move", "nan"], "--time-per-move"),
    (["check-agent", "random", "--game", "tic_tac_toe", "--time-per-move", "inf"], "--time-per-move"),
    (["check-agent", "random", "--game", "tic_tac_toe", "--network-allowance", "nan"], "--network-allowance"),
    (["play", "--game", "tic_tac_toe", "--against", "random", "--max-turns", "99999999999999999999"], "--max-turns"),
    (["evolve-decks", "--population", "99999999999999", "--survivors", "2", "--out", "log.jsonl"], "an evolution may play"),
    (["--db", "x" * 300 + ".db", "leaderboard"], "File name too long"),
    (["--db", "sqlite:///y.db?mode=ro", "leaderboard"], "option(s) mode in sqlite:///y.db?mode=ro are read only as a SQLite URI"),
    (["run-tournament", "--resume", "1", "--rounds", "5"], "do not give --rounds"),
    # options with a default count as given when they are given, even as the default: the stored settings are played
    (["run-tournament", "--resume", "1", "--seed", "0", "--max-turns", "3"], "do not give --seed, --max-turns"),
    (["run-tournament", "--resume", "1", "--time-per-move", "0.5", "--format", "gauntlet"], "do not give --time-per-move, --format"),
    (["run-tournament", "--resume", "1", "--network-allowance", "50"], "do not give --network-allowance"),
    (["agents", "register", "twice", "--type", "random", "--param", "seed=1", "--param", "seed=2"], "'seed' given twice"),
    (["--plugins-dir", "nowhere", "games"], "Directory 'nowhere' does not exist"),
    (["--plugins-dir", "/dev/null", "games"], "'--plugins-dir': '/dev/null' is not a folder"),  # (click's own Path lets a device through)
    (["train", "--game", "tic_tac_toe", "--plugins-dir", "nowhere", "--out", "x.npz"], "Directory 'nowhere' does not exist"),
    (["run-tournament", "--game", "incan_gold:players=abc", "--agents", "random,greedy,random:seed=1", "--players", "3"],
     "bad value 'abc' for parameter 'players'"),
    (["run-tournament", "--game", "incan_gold:players=4", "--agents", "random,greedy,random:seed=1", "--players", "3"],
     "--players and the game's players parameter disagree"),
    (["--db", "x" * 300 + ".db", "run-tournament", *GOOD], "File name too long"),
    # An agent's budget per move beyond any use: a run that would never end (or the server's worker held for years).
    (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,mcts:simulations=1000000000000"],
     "bad value '1000000000000' for parameter 'simulations' of agent 'mcts': must be <= 1e+07"),
    (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,mcts:time=1e308"],
     "bad value '1e308' for parameter 'time' of agent 'mcts': must be <= 86400"),
    (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,minimax:time=86401"],
     "bad value '86401' for parameter 'time' of agent 'minimax': must be <= 86400"),
    (["run-tournament", "--game", "tic_tac_toe", "--agents", "random,http:url=http://127.0.0.1:9,timeout=1e9"],
     "parameter 'timeout' of agent 'http': must be <= 86400"),
    (["agents", "register", "slow", "--type", "mcts", "--param", "simulations=10000001"], "must be <= 1e+07"),
    # `arena connect`: checked before it connects (nothing listens at those addresses: it never gets that far).
    (["connect", "random", "--server", "http://127.0.0.1:99999", "--token", "x"], "a port from 1 to 65535"),
    (["connect", "random", "--server", "ws://127.0.0.1:70000", "--token", "x"], "a port from 1 to 65535"),
    (["connect", "random", "--server", "http://127.0.0.1:port", "--token", "x"], "a port from 1 to 65535"),
    (["connect", "random", "--server", "http://:8000", "--token", "x"], "--server must be"),
    (["connect", "random", "--server", "http://127.0.0.1:9", "--token", "x", "--log", "/nonexistent/x.log"],
     "--log: cannot write /nonexistent/x.log: No such file or directory"),
    (["train", "--game", "tic_tac_toe", "--episodes", "99999999999999999999", "--out", "x.npz"],
     "--episodes must be between 1 and 10,000,000"),
    (["check-agent", "random", "--game", "tic_tac_toe", "--seeds", "99999999999999999999"], "1<=x<=10000000"),
    # A pull bot is checked through its server (tests/test_remote_pull.py); these never get that far.
    (["check-agent", "pull:name=bot", "--game", "tic_tac_toe"], "add --server URL"),
    (["check-agent", "pull:name=bot", "--game", "tic_tac_toe", "--server", "http://127.0.0.1:9", "--token", ""],
     "--server needs --token"),
    (["check-agent", "greedy", "--game", "tic_tac_toe", "--server", "http://127.0.0.1:9", "--token", "x"],
     "give pull:name=NAME, not 'greedy'"),
    (["check-agent", "pull:name=bot,wait=3", "--game", "tic_tac_toe", "--server", "http://127.0.0.1:9", "--token", "x"],
     "give pull:name=NAME, not 'pull:name=bot,wait=3'"),
    (["check-agent", "pull:name=bot", "--game", "tic_tac_toe", "--server", "ftp://x", "--token", "x"], "--server must be"),
    (["check-agent", "pull:name=bot", "--game", "tic_tac_toe", "--server", "http://127.0.0.1:9", "--token", "x", "--seeds", "11"],
     "--seeds is at most 10 with --server"),
    (["check-agent", "pull:name=bot", "--game", "tic_tac_toe", "--server", "http://127.0.0.1:9", "--token", "x",
      "--time-per-move", "61"], "--time-per-move is at most 60 with --server"),
    (["evolve-decks", "--games", "100000000000000000000", "--out", "log.jsonl"], "an even number from 2 to 10,000,000"),
    (["evolve-decks", "--games", "99999999999999999999", "--out", "log.jsonl"], "an even number from 2 to 10,000,000"),
    (["agents", "register", "z", "--type", "neural", "--checkpoint", "/dev/zero"], "/dev/zero is not a regular file"),
    (["play", "--game", "tic_tac_toe", "--against", "human"], "--against human: that is you, the person at this terminal"),
    (["play", "--game", "tic_tac_toe", "--against", "human:name=ada", "--name", "ada"], "that is you"),
    (["agents", "register", 'a"b', "--type", "random"], """an agent's name has no spaces, control characters or any of , : = " /"""),
    (["agents", "register", "a/b", "--type", "random"], "any of , : = \" /"),
    (["agents", "register", "007", "--type", "random"], "not digits alone"),
    (["report", "--out", ""], "--out is empty"),
    (["report", "--out", "missing/r"], "cannot write missing/r: folder missing does not exist"),
    (["plot", "net-wins", "--out", "missing/p.png"], "cannot write missing/p.png: folder missing does not exist"),
    (["plot", "evolution", "empty.jsonl", "--out", "e.png"], "no generation in this deck evolution log"),
])  # fmt: skip
def test_numbers_and_names_beyond_any_use_are_one_line(arena_cli, tmp_path, monkeypatch, args, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.jsonl").write_text("")
    _one_line_error(arena_cli(*args, ok=False), fragment)
    assert not (tmp_path / "log.jsonl").exists() and arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])
    assert arena_cli.rows("select count(*) from agents") in ([], [(0,)])
    assert not [p.name for p in tmp_path.iterdir() if p.is_dir() or p.suffix in (".png", ".html")]  # no folder, no figure


#: More digits than int() reads (4,300): such a number names no tournament, and an opening of that many plies is none.
HUGE = "9" * 5000


@pytest.fixture(scope="module")
def played_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("played") / "arena.db"
    Arena(db)("run-tournament", *GOOD, "--rounds", "2", "--name", "t1", "--quiet")
    return db


@pytest.fixture
def played_cli(played_db, tmp_path, monkeypatch) -> Arena:
    """A copy of a database with one played tournament (id 1, 't1'), in a fresh working folder."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(played_db, tmp_path / "arena.db")
    return Arena(tmp_path / "arena.db")


@pytest.mark.parametrize("args,fragment", [
    (["run-tournament", *GOOD, "--openings", f"random:{HUGE}"], "--openings random:N needs a whole number of plies from 1 to 1,000,000"),
    (["run-tournament", *GOOD, "--openings", "huge.txt"], "--openings huge.txt line 1: '99999"),
    (["run-tournament", "--resume", HUGE], "no tournament with id or name '99999"),
    *[([command, "--tournament", HUGE], "no tournament with id or name '99999")
      for command in ("leaderboard", "matrix", "stats", "seats", "elo-history", "matches")],
    (["report", "--tournament", HUGE, "--out", "r"], "no tournament with id or name '99999"),
    (["plot", "net-wins", "--tournament", HUGE, "--out", "p.png"], "no tournament with id or name '99999"),
    (["sprt", HUGE], "no tournament with id or name '99999"),
    (["leaderboard", "--tournament", "١"], "no tournament with id or name '١'"),  # an Arabic-Indic 1 is no id
    (["leaderboard", "--tournament", "１"], "no tournament with id or name '１'"),  # nor a fullwidth one
    (["leaderboard", "--tournament", "9223372036854775808"], "no tournament with id or name"),  # past a 64-bit id
])  # fmt: skip
def test_ids_are_ascii_numbers_of_64_bits_and_longer_numbers_name_nothing(played_cli, tmp_path, args, fragment):
    (tmp_path / "huge.txt").write_text(HUGE + "\n")
    result = played_cli(*args, ok=False)
    _one_line_error(result, fragment)
    assert len(result.stderr) < 500  # the number is not repeated whole
    assert played_cli.rows("select count(*) from tournaments") == [(1,)] and not (tmp_path / "r").exists()


def test_a_name_of_other_digits_than_ascii_is_a_name(played_cli):
    played_cli("run-tournament", *GOOD, "--rounds", "1", "--name", "１", "--quiet")  # not read as id 1 ('t1')
    assert played_cli.json("leaderboard", "--tournament", "１") == played_cli.json("leaderboard", "--tournament", "2")
    _one_line_error(played_cli("run-tournament", *GOOD, "--name", "12", ok=False), "cannot be a number")


def test_agent_names_outside_the_old_wording_still_register_and_play(played_cli):
    """The rule is a name that reads back in a spec: x(y) and emoji are fine and play under their names."""
    played_cli("agents", "register", "x(y)", "--type", "random", "--param", "seed=5")
    played_cli("agents", "register", "🙂", "--type", "random", "--param", "seed=6")
    played_cli("run-tournament", "--game", "connect_four", "--agents", "x(y),🙂,greedy", "--rounds", "1", "--quiet")
    assert {row["agent"] for row in played_cli.json("leaderboard")} == {"x(y)", "🙂", "greedy"}


def test_logs_that_are_not_text_or_not_json_are_refused_in_one_line(arena_cli, tmp_path):
    binary, garbage = tmp_path / "b.jsonl", tmp_path / "g.jsonl"
    binary.write_bytes(b"\xff\xfe\n")
    garbage.write_text("not json\n")
    (tmp_path / "b.pt.metrics.jsonl").write_bytes(b"\xff\n")
    _one_line_error(arena_cli("plot", "evolution", str(binary), "--out", str(tmp_path / "x.png"), ok=False), "not UTF-8 text")
    _one_line_error(arena_cli("plot", "training", str(tmp_path / "b.pt"), "--out", str(tmp_path / "x.png"), ok=False),
                    "not UTF-8 text")  # fmt: skip
    _one_line_error(arena_cli("plot", "evolution", str(garbage), "--out", str(tmp_path / "x.png"), ok=False), "line 1 is not JSON")
    assert not (tmp_path / "x.png").exists()


def test_a_refused_tournament_on_an_existing_database_writes_nothing(arena_cli):
    arena_cli("run-tournament", *GOOD, "--rounds", "1", "--quiet")
    _one_line_error(arena_cli("run-tournament", *GOOD, "--rounds", "10000000000", ok=False), "more than")
    assert arena_cli.rows("select count(*) from tournaments") == [(1,)]


@pytest.mark.parametrize("command", [
    ["run-tournament", "--game", "no_such_game", "--agents", "random,greedy"],
    ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,no_such_agent"],
    ["leaderboard"], ["tournaments"], ["matches"], ["stats"], ["replay", "1"], ["db", "verify"],
    ["run-tournament", "--resume", "1"], ["agents", "list"], ["sprt", "1"], ["plot", "net-wins", "--out", "x.png"],
    ["report", "--out", "r"], ["tokens", "list"], ["tokens", "revoke", "bob"], ["db", "check"],
    ["agents", "register", "x", "--type", "nope"], ["agents", "register", "x", "--type", "minimax", "--param", "depth=0"],
    ["agents", "register", "a b", "--type", "random"], ["agents", "register", "x", "--type", "random", "--game", "nope"],
    ["play", "--game", "tic_tac_toe", "--against", "random", "--seat", "5"],
    ["run-tournament", "--game", "tic_tac_toe", "--agents", "human,greedy", "--queue"],  # (nobody would move for human)
])  # fmt: skip
def test_bad_input_creates_no_database_file(tmp_path, command):
    db = tmp_path / "new.db"
    arena_cli = Arena(db)
    result = arena_cli(*command, ok=False)  # an empty answer (tournaments, db verify) or one line and exit code 2
    assert result.exit_code == 0 or (result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1), result.stderr
    assert not db.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("args,fragment", [
    (["--lease", "nan"], "'--lease': a number of seconds, got nan"),  # (click's FloatRange lets nan through)
    (["--ladder-turn", "nan"], "'--ladder-turn': a number of seconds, got nan"),
    (["--play-time-per-move", "nan"], "'--play-time-per-move': a number of seconds, got nan"),
    (["--host", ""], "'--host': give an address"),  # (not every interface, as binding to '' would)
    (["--host", " "], "'--host': give an address"),
    (["--server-id", ""], "'--server-id': give a name"),
    (["--ray-address", ""], "--ray-address is for --executor ray"),  # (not taken for "no address")
    (["--executor", "ray", "--ray-address", ""], "--ray-address takes HOST:PORT"),
    (["--bot-hosts", ""], "'--bot-hosts': give host names, addresses or networks"),
    (["--bot-hosts", "bots.example.org,,10.0.0.0/8"], "'--bot-hosts': an empty item"),
    (["--bot-hosts", "127.1"], "'--bot-hosts': '127.1' is neither a host name nor an address or network"),
    (["--bot-hosts", "10.0.0.0/33"], "'--bot-hosts': '10.0.0.0/33' is neither"),
    (["--models-dir", "/no/such/folder"], "'--models-dir': Directory '/no/such/folder' does not exist"),
    (["--models-dir", "/dev/null"], "'--models-dir': '/dev/null' is not a folder"),
])  # fmt: skip
def test_bad_serve_options_are_one_line_before_anything_listens(tmp_path, args, fragment):
    db = tmp_path / "new.db"
    _one_line_error(Arena(db)("serve", "--port", "0", *args, ok=False), fragment)
    assert not db.exists()


def test_agent_names_longer_than_the_column_are_refused(arena_cli):
    _one_line_error(arena_cli("agents", "register", "a" * 201, "--type", "random", ok=False), "at most 200")


def test_a_plugin_with_an_unknown_hook_is_reported_like_a_broken_plugin(tmp_path):
    plugins = loose_plugin(tmp_path / "plugins", "typo", "import arena\n\n@arena.hookimpl\ndef register_agentz(register):\n    pass\n")
    arena_cli = Arena(tmp_path / "a.db", plugins_dirs=(plugins,))
    result = arena_cli("games")  # everything else still works
    assert "plugin 'typo'" in result.stderr and "register_agentz" in result.stderr and "Traceback" not in result.stderr
    listed = arena_cli("plugins")
    assert "typo" not in listed.stdout


def test_a_checkpoint_path_with_a_comma_can_be_quoted(arena_cli, tmp_path):
    from agents.neural import init_checkpoint
    from arena.plugins import get_registry

    path = init_checkpoint(get_registry().game_class("tic_tac_toe")(), tmp_path / "net,v2:final.npz")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f'neural:checkpoint="{path}",random', "--rounds", "2",
              "--name", "quoted", "--quiet")  # fmt: skip
    agents = {s["agent"] for m in arena_cli.json("matches") for s in m["seats"]}
    assert agents == {f'neural:checkpoint="{path}"', "random"}
    arena_cli("run-tournament", "--resume", "quoted", "--quiet")  # the stored spec reads back
    _one_line_error(arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={path},random",
                              ok=False), "")  # fmt: skip  (unquoted: split at the comma)


@pytest.mark.parametrize("args", [
    ["--db", "", "tournaments"], ["tournaments", "--db", " "],
    ["report", "--out", "r", "--db", ""], ["plot", "net-wins", "--out", "x.png", "--db", ""], ["tokens", "list", "--db", ""],
])  # fmt: skip
def test_an_empty_db_option_is_refused_not_taken_for_the_default(tmp_path, monkeypatch, args):
    """On the group and every command, those defined outside arena.cli (report, plot, tokens) included."""
    from click.testing import CliRunner

    from arena.cli import cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "--db is empty" in result.output and "Traceback" not in result.output
    assert not list(tmp_path.iterdir())  # not ./arena.db either


SHARED_CLONE_GAME = '''
import dataclasses

import arena
from games.tic_tac_toe import TicTacToe, TicTacToeState


class SharedState(TicTacToeState):
    __slots__ = ()

    def clone(self):
        twin = super().clone()
        twin.__class__, twin.board = SharedState, self.board  # the bug: the board is shared
        return twin


class SharedTicTacToe(TicTacToe):
    info = dataclasses.replace(TicTacToe.info, id="shared_ttt")

    def new_initial_state(self, seed=0):
        state = SharedState.__new__(SharedState)
        TicTacToeState.__init__(state)
        return state


@arena.hookimpl
def register_games(register):
    register(SharedTicTacToe)
'''


def test_a_plugin_game_that_fails_a_quick_conformance_check_is_refused_before_it_blames_agents(tmp_path):
    """A clone that shares state would make mcts (which looks ahead on clones) forfeit for 'changing the real state'."""
    plugins = loose_plugin(tmp_path / "plugins", "shared_ttt", SHARED_CLONE_GAME)
    arena_cli = Arena(tmp_path / "a.db", plugins_dirs=(plugins,))
    result = arena_cli("run-tournament", "--game", "shared_ttt", "--agents", "random,mcts:simulations=20", ok=False)
    _one_line_error(result, "fails a quick conformance check")
    assert "changed the original" in result.stderr
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])


@pytest.mark.parametrize("agent,fragment", [
    ("pull:name=bot", "agent 'pull' plays only in tournaments submitted to `arena serve`, where its bot connects"),
    ("browser:name=alice", "agent 'browser' is a person on `arena serve`'s play page, and plays only there"),  # (not "its bot")
])  # fmt: skip
def test_agents_of_the_server_are_refused_elsewhere_saying_where_they_play(tmp_path, agent, fragment):
    db = tmp_path / "new.db"
    _one_line_error(Arena(db)("run-tournament", "--game", "tic_tac_toe", "--agents", f"{agent},random", ok=False), fragment)
    assert not db.exists()
