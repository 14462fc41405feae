"""Workers, resume after kill -9, agent isolation, several writers on one database (SQLite and PostgreSQL)."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Arena

ARENA = str(Path(sys.executable).parent / "arena")


def _matches(arena_cli, tournament):
    return [(m["index"], m["seed"], m["turns"], m["reason"], tuple((s["agent"], s["outcome"], s["score"]) for s in m["seats"]))
            for m in arena_cli.json("matches", "--tournament", tournament)]


def test_same_results_with_1_2_and_4_workers(arena_cli):
    for workers in ("1", "2", "4"):
        arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy,random:seed=1", "--rounds", "6",
                  "--seed", "3", "--workers", workers, "--name", f"w{workers}", "--quiet")
    assert _matches(arena_cli, "w1") == _matches(arena_cli, "w2") == _matches(arena_cli, "w4")
    boards = [arena_cli.json("leaderboard", "--tournament", f"w{w}") for w in ("1", "2", "4")]
    assert boards[0] == boards[1] == boards[2]
    moves = [arena_cli.rows(f"select \"index\", moves from matches where tournament_id={t} order by \"index\"") for t in (1, 2, 3)]
    assert moves[0] == moves[1] == moves[2]


def test_isolated_agents_that_crash_hang_or_eat_memory(arena_cli):
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--rounds", "1", "--time-per-move", "1", "--workers", "2",
              "--memory-limit", "300", "--quiet",
              "--agents", "crasher:how=exit,crasher:how=segfault,crasher:how=kill,crasher:how=hang,crasher:how=memory,random")
    matches = arena_cli.json("matches")
    assert len(matches) == 15
    expected = {"crasher:how=exit": ("agent_crashed", "exit code 3"), "crasher:how=segfault": ("agent_crashed", "SIGSEGV"),
                "crasher:how=kill": ("agent_crashed", "SIGKILL"), "crasher:how=hang": ("timeout", "killed"),
                "crasher:how=memory": ("agent_crashed", "memory")}
    for m in matches:
        loser = next(s["agent"] for s in m["seats"] if s["outcome"] == "loss")
        reason, fragment = expected[loser]
        assert m["reason"] == reason and fragment.lower() in m["detail"].lower(), m
    board = {r["agent"]: r for r in arena_cli.json("leaderboard")}
    assert board["random"]["wins"] == 5


def test_bad_input_on_scale_options(arena_cli):
    for args, fragment in [
        (["--workers", "0"], "--workers"),
        (["--memory-limit", "10"], "--memory-limit"),
        (["--format", "gauntlet"], "--challenger"),
        (["--challenger", "random"], "only for --format gauntlet"),
        (["--players", "3"], "is for 2 players, not 3"),
    ]:
        result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", *args, ok=False)
        assert result.exit_code == 2 and fragment in result.stderr and len(result.stderr.splitlines()) == 1, (args, result.stderr)
    result = arena_cli("run-tournament", "--resume", "1", "--game", "tic_tac_toe", ok=False)
    assert result.exit_code == 2
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])


def _done(arena, name):
    rows = arena.rows("select count(*) from matches m join tournaments t on t.id=m.tournament_id "
                      f"where t.name='{name}' and m.status='done'")  # fmt: skip
    return rows[0][0] if rows else 0


@pytest.mark.parametrize("workers, database_url", [("1", "sqlite"), ("2", "sqlite"), ("2", "postgresql")], indirect=["database_url"])
def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path, workers, database_url):
    arena = Arena(database_url, plugins_dirs=())
    env = dict(os.environ, ARENA_DB=database_url, ARENA_FLUSH_SECONDS="0.02")
    # mcts makes the run last seconds (about 3 s on 2 idle cores), so that the kill lands part-way even when a poll of
    # PostgreSQL is slow: with greedy agents every match could be stored before the first poll saw one
    args = ["run-tournament", "--game", "connect_four", "--agents", "greedy,random,mcts:simulations=400", "--rounds", "40",
            "--seed", "21", "--quiet", "--workers", workers]
    total = 3 * 40
    with (tmp_path / "victim.log").open("w") as log:  # the child holds its own copy of the file
        victim = subprocess.Popen([ARENA, *args, "--name", "killed"], env=env, cwd=tmp_path, start_new_session=True,
                                  stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and victim.poll() is None and _done(arena, "killed") == 0:
        time.sleep(0.05)
    assert victim.poll() is None, f"the run ended before it was killed: {(tmp_path / 'victim.log').read_text()}"
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    stored = _done(arena, "killed")
    assert 0 < stored < total, "kill the run part-way: adjust the size if this machine is much faster or slower"
    subprocess.run([ARENA, "run-tournament", "--resume", "killed", "--quiet", "--workers", workers], env=env, cwd=tmp_path,
                   check=True, capture_output=True)  # fmt: skip
    subprocess.run([ARENA, *args, "--name", "straight"], env=env, cwd=tmp_path, check=True, capture_output=True)
    killed, straight = _matches(arena, "killed"), _matches(arena, "straight")
    assert len(killed) == total and [m[0] for m in killed] == list(range(total))
    assert killed == straight
    assert arena.json("leaderboard", "--tournament", "killed") == arena.json("leaderboard", "--tournament", "straight")


def test_eight_tournaments_at_once_in_one_database(tmp_path, database_url):
    """Eight processes open one new database at once (one migrates, the others wait) and write into it."""
    env = dict(os.environ, ARENA_DB=database_url)
    processes = [
        subprocess.Popen([ARENA, "run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,random:seed=2",
                          "--rounds", "20", "--seed", str(i), "--name", f"p{i}", "--quiet"],
                         env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(8)
    ]  # fmt: skip
    for p in processes:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "locked" not in err
    arena = Arena(database_url, plugins_dirs=())
    assert arena.rows("select count(*), sum(case when status='done' then 1 else 0 end) from matches") == [(480, 480)]
    assert arena.rows("select count(*) from tournaments where status='done'") == [(8,)]
    assert arena.rows("select count(*) from match_seats") == [(960,)]


def test_two_runs_resuming_one_tournament_store_each_match_once(tmp_path, database_url):
    """Both runs play the pending matches; whichever stores a match first wins, the other's copy is dropped."""
    from arena import tournament
    from arena.plugins import get_registry
    from db.session import open_database

    request = tournament.TournamentRequest(game="connect_four", agents="random,greedy,random:seed=2", rounds=40, seed=4, name="twice")
    database = open_database(database_url)
    tournament.create(get_registry(), database, request)
    database.engine.dispose()
    env = dict(os.environ, ARENA_DB=database_url, ARENA_FLUSH_SECONDS="0")  # store after every match: the runs interleave
    runs = [subprocess.Popen([ARENA, "run-tournament", "--resume", "twice", "--quiet"], env=env, cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    for run in runs:
        _out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    arena = Arena(database_url, plugins_dirs=())
    assert arena.rows('select count(*), count(distinct "index") from matches') == [(120, 120)]
    assert arena.rows("select count(*) from match_seats") == [(240,)]
    arena("run-tournament", "--game", "connect_four", "--agents", "random,greedy,random:seed=2", "--rounds", "40",
          "--seed", "4", "--name", "once", "--quiet")  # fmt: skip
    assert _matches(arena, "twice") == _matches(arena, "once")


DECK_A = "+".join(["4"] * 25)  # 25 fours
DECK_B = "+".join(["1"] * 24 + ["76"])  # one huge card and filler


@pytest.mark.parametrize("isolate", [False, True])
def test_decks_against_decks_on_gwent_lite(arena_cli, isolate):
    extra = ["--isolate"] if isolate else []
    arena_cli("run-tournament", "--game", "gwent_lite", "--rounds", "6", "--quiet", *extra,
              "--agents", f"greedy:seat.deck={DECK_A},greedy:seed=1,seat.deck={DECK_B},random:seat.deck={DECK_A}")
    matches = arena_cli.json("matches")
    assert len(matches) == 18 and {m["reason"] for m in matches} == {"normal"}
    replayed = arena_cli.json("replay", str(matches[0]["id"]))  # replays with the seats' decks
    assert len(replayed["moves"]) == matches[0]["turns"]
    stored = arena_cli.rows("select agent_params from match_seats where agent like 'greedy:seat.deck=4%'")
    assert all(f'"seat.deck": "{DECK_A}"' in row[0] for row in stored)


def test_bad_seat_parameter_is_bad_input(arena_cli):
    for agents, fragment in [("greedy:seat.cards=x,random", "no seat parameter 'cards'"),
                             ("greedy:seat.deck=1+2,random", "deck")]:
        result = arena_cli("run-tournament", "--game", "gwent_lite", "--agents", agents, ok=False)
        assert result.exit_code == 2 and fragment in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "greedy:seat.deck=1,random", ok=False)
    assert result.exit_code == 2 and "takes no seat parameter" in result.stderr


def test_workers_fork_only_when_it_is_safe(monkeypatch):
    import threading
    import types

    from arena.executors.local import FORK_UNSAFE_MODULES, start_method

    for name in FORK_UNSAFE_MODULES:  # another test in this process may have trained with PyTorch
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert start_method(isolate=False) == ("fork" if sys.platform.startswith("linux") else "spawn")
    assert start_method(isolate=True) == "forkserver"  # isolated agents: each worker starts its own forkserver
    with monkeypatch.context() as patched:  # an agent plugin brought PyTorch into the parent
        patched.setitem(sys.modules, "torch", types.ModuleType("torch"))
        assert start_method(isolate=False) == "spawn"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert start_method(isolate=False) == "spawn"  # never fork a process that runs another thread
    finally:
        stop.set()
        other.join()


def test_workers_with_the_progress_bar_on_a_terminal(tmp_path):
    """On a terminal the progress bar draws (without a thread of its own) while forked workers play."""
    import pty

    from tests._terminal import read_until_exit

    primary, secondary = pty.openpty()
    db = tmp_path / "tty.db"
    run = subprocess.Popen([ARENA, "--db", str(db), "run-tournament", "--game", "connect_four", "--agents", "random,greedy",
                            "--rounds", "40", "--workers", "2"], stdin=secondary, stdout=secondary, stderr=secondary)  # fmt: skip
    os.close(secondary)
    output = read_until_exit(primary, run, 120)
    text = output.decode(errors="replace")
    assert run.returncode == 0, text
    assert "games/s" in text and "played 40 matches" in text, text  # the bar was drawn
    with sqlite3.connect(db) as c:
        assert c.execute("select count(*) from matches").fetchone() == (40,)


def test_the_progress_bar_is_drawn_on_stderr_while_stdout_goes_to_a_file(tmp_path):
    """`arena run-tournament ... > out.txt` on a terminal: the bar shows on the terminal (stderr), and the file gets the
    leaderboard alone, with no bar in it."""
    import pty

    from tests._terminal import read_until_exit

    primary, secondary = pty.openpty()
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        run = subprocess.Popen([ARENA, "--db", str(tmp_path / "tty.db"), "run-tournament", "--game", "connect_four",
                                "--agents", "random,greedy", "--rounds", "40"], stdin=secondary, stdout=stdout, stderr=secondary)  # fmt: skip
        os.close(secondary)
        terminal = read_until_exit(primary, run, 120).decode(errors="replace")
    assert run.returncode == 0, terminal
    assert "games/s" in terminal and "played 40 matches" in terminal, terminal
    text = out.read_text()
    assert "Leaderboard" in text and "games/s" not in text and "\x1b" not in text, text
