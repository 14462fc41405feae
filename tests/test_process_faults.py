"""kill -9 and Ctrl-C of a running tournament: no child process survives its owner, and Ctrl-C says one line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.test_storage_faults import limit_child

ARENA = str(Path(sys.executable).parent / "arena")


def _child() -> None:
    """The run's preexec_fn: bounded memory, and Ctrl-C answered as in a terminal even if the test process was
    started with SIGINT ignored (an ignored signal stays ignored across exec)."""
    limit_child()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    db = tmp_path / "run.db"
    env = dict(os.environ, ARENA_DB=str(db), ARENA_FLUSH_SECONDS="0.05")
    run = subprocess.Popen([ARENA, "run-tournament", "--game", "connect_four", "--agents", "greedy,random,mcts:simulations=30",
                            "--rounds", "4000", "--quiet", *extra], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_child)  # fmt: skip
    return run, db


def _wait_for_play(run: subprocess.Popen, db: Path, children: int) -> list[psutil.Process]:
    """Wait until matches are being stored and the run has its child processes; returns every descendant."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        stored = 0
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=5) as c:
                    stored = c.execute("select count(*) from matches").fetchone()[0]
            except sqlite3.OperationalError:
                pass  # not migrated yet
        descendants = psutil.Process(run.pid).children(recursive=True)
        if stored and len(descendants) >= children:
            return descendants
        time.sleep(0.1)
    raise AssertionError("the run did not start playing in time")


def _assert_all_end(processes: list[psutil.Process]) -> None:
    _gone, alive = psutil.wait_procs(processes, timeout=30)
    for process in alive:  # clean up before failing: only processes this test started
        process.kill()
    assert not alive, [(p.pid, p.name()) for p in alive]


@pytest.mark.parametrize("extra,children", [(("--workers", "2"), 2), (("--isolate",), 2), (("--isolate", "--workers", "2"), 4)])
def test_kill_9_leaves_no_child_behind(tmp_path, extra, children):
    run, db = _start(tmp_path, *extra)
    descendants = _wait_for_play(run, db, children)
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=30)
    _assert_all_end(descendants)


def test_ctrl_c_with_isolated_agents_and_workers_says_what_is_kept(tmp_path):
    run, db = _start(tmp_path, "--isolate", "--workers", "2")
    descendants = _wait_for_play(run, db, 4)
    os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    _out, err = run.communicate(timeout=60)
    assert run.returncode == 130
    _assert_all_end(descendants)
    with sqlite3.connect(db) as c:
        stored = c.execute("select count(*) from matches").fetchone()[0]
        status = c.execute("select status from tournaments").fetchone()[0]
    assert stored > 0 and status == "stopped", err  # what was played is kept; --resume plays the rest
    assert err.splitlines() == [f"tournament 1: stopped, {stored} of 12000 matches stored; "
                                "`arena run-tournament --resume 1` plays the rest", "Aborted."], err


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path):
    """`kill` (or `timeout`) sends SIGTERM: what was played is kept, the tournament is `stopped` (not left `running`
    with nobody playing it) and the run says how to go on."""
    run, db = _start(tmp_path, "--workers", "2")
    descendants = _wait_for_play(run, db, 2)
    os.kill(run.pid, signal.SIGTERM)
    _out, err = run.communicate(timeout=60)
    _assert_all_end(descendants)
    with sqlite3.connect(db) as c:
        stored = c.execute("select count(*) from matches").fetchone()[0]
        status = c.execute("select status from tournaments").fetchone()[0]
    assert run.returncode == 143 and status == "stopped" and stored > 0, (run.returncode, status, err)
    assert err.splitlines() == [f"tournament 1: stopped, {stored} of 12000 matches stored; "
                                "`arena run-tournament --resume 1` plays the rest", "Terminated."], err


def test_ctrl_c_pressed_again_and_again_stops_the_run_once_and_cleanly(tmp_path):
    """Four Ctrl-Cs 20 ms apart: the later ones do not cut short what the first one writes (no traceback, the
    tournament `stopped`)."""
    run, db = _start(tmp_path, "--workers", "2")
    descendants = _wait_for_play(run, db, 2)
    for _press in range(4):
        os.killpg(run.pid, signal.SIGINT)
        time.sleep(0.02)
    _out, err = run.communicate(timeout=60)
    _assert_all_end(descendants)
    with sqlite3.connect(db) as c:
        status = c.execute("select status from tournaments").fetchone()[0]
    assert run.returncode == 130 and status == "stopped" and "Traceback" not in err, (run.returncode, status, err)
    assert err.splitlines()[-1] == "Aborted.", err


@pytest.mark.parametrize("extra", [(), ("--workers", "2")])
def test_a_run_stops_when_its_tournament_is_cancelled_elsewhere(tmp_path, extra):
    """`arena tournaments cancel` while `arena run-tournament` plays it: the run stops within a flush of its results
    and says so; what was played is kept and the tournament stays cancelled."""
    run, db = _start(tmp_path, *extra)
    try:
        _wait_for_play(run, db, 0)
        cancel = subprocess.run([ARENA, "--db", str(db), "tournaments", "cancel", "1"], capture_output=True, text=True,
                                timeout=60, preexec_fn=limit_child)  # fmt: skip
        assert cancel.returncode == 0, cancel.stderr
        _out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=30)
    with sqlite3.connect(db) as c:
        stored = c.execute("select count(*) from matches").fetchone()[0]
        status = c.execute("select status from tournaments").fetchone()[0]
    assert run.returncode == 0 and status == "cancelled" and 0 < stored < 12000, (stored, status, err)
    assert "cancelled (`arena tournaments cancel`) during the run" in err


@pytest.mark.parametrize("how,workers", [("exit", "1"), ("segfault", "1"), ("exit", "2")])
def test_an_in_process_agent_that_kills_its_process_loses_and_the_tournament_goes_on(tmp_path, how, workers):
    """The agent ends its worker process: the run says so in one line and plays the rest with each agent in its own
    process, where the agent loses every match it crashes; the results are those of an --isolate run."""
    from tests.conftest import TEST_PLUGINS

    db = tmp_path / "crash.db"
    base = [ARENA, "--db", str(db), "--plugins-dir", str(TEST_PLUGINS), "run-tournament", "--game", "tic_tac_toe",
            "--agents", f"random,greedy,crasher:how={how}", "--rounds", "4", "--quiet"]  # fmt: skip
    env = dict(os.environ, ARENA_FLUSH_SECONDS="0")
    runs = {}
    for name, extra in (("c", ["--workers", workers]), ("isolated", ["--isolate"])):
        runs[name] = subprocess.run([*base, "--name", name, *extra], env=env, cwd=tmp_path, capture_output=True, text=True,
                                    timeout=300, preexec_fn=limit_child)  # fmt: skip
        assert runs[name].returncode == 0, runs[name].stderr
    notes = [line for line in runs["c"].stderr.splitlines() if "worker process died" in line]
    assert len(notes) == 1 and "each agent in its own process" in notes[0], runs["c"].stderr
    with sqlite3.connect(db) as c:
        played = {name: c.execute("select m.\"index\", m.reason, m.turns, m.moves from matches m join tournaments t "
                                  "on t.id = m.tournament_id where t.name = ? order by m.\"index\"", (name,)).fetchall()
                  for name in runs}  # fmt: skip
    assert len(played["c"]) == 12 and sum(reason == "agent_crashed" for _, reason, _, _ in played["c"]) == 8
    assert played["c"] == played["isolated"]


def test_sys_exit_in_an_agent_is_its_fault_only(tmp_path):
    from tests.conftest import Arena

    arena_cli = Arena(tmp_path / "q.db")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,quitter", "--rounds", "2", "--quiet")
    matches = arena_cli.json("matches")
    assert len(matches) == 2 and all(m["reason"] == "agent_error" and "sys.exit(3)" in m["detail"] for m in matches)


@pytest.mark.parametrize("how,isolate", [("hang", False), ("spin", False), ("spin", True)])
def test_an_agent_that_hangs_loses_by_timeout_at_the_default_deadline_and_the_run_goes_on(tmp_path, how, isolate):
    """No time per move: in-process (a worker of the run) the watchdog stops a sleeping or a spinning agent; isolated,
    its process is killed. Either way at the default move deadline, shortened here to 1 s."""
    from tests.conftest import TEST_PLUGINS

    db = tmp_path / "hang.db"
    env = dict(os.environ, ARENA_MOVE_DEADLINE="1")  # the default move deadline (60 s), shortened for the test
    run = subprocess.run([ARENA, "--db", str(db), "--plugins-dir", str(TEST_PLUGINS), "run-tournament", "--game",
                          "tic_tac_toe", "--agents", f"random,crasher:how={how}", "--rounds", "2", "--quiet",
                          *(["--isolate"] if isolate else [])], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=limit_child)  # fmt: skip
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(db) as c:
        rows = c.execute("select reason, detail from matches").fetchall()
    stopped_by = "agent process killed" if isolate else "watchdog"
    assert len(rows) == 2 and all(reason == "timeout" and "within 1s" in detail and stopped_by in detail
                                  for reason, detail in rows), rows  # fmt: skip


def test_ctrl_c_with_workers_loses_little_of_what_was_played(tmp_path):
    """Workers send their matches back in chunks of about half a second of play, so a Ctrl-C loses little of what
    they played: here matches of ~0.1 s. Chunks of a fixed 64 matches (the rule before) held ~6 s of play each, and
    an interrupt 3 s after the first stored match lost about 60 played matches."""
    from tests.conftest import TEST_PLUGINS

    db, log = tmp_path / "run.db", tmp_path / "ended.log"
    diarist = f"diarist:seconds=0.02,log={log}"
    run = subprocess.Popen([ARENA, "--db", str(db), "--plugins-dir", str(TEST_PLUGINS), "run-tournament", "--game",
                            "tic_tac_toe", "--agents", f"{diarist},{diarist},seed=1", "--rounds", "2000", "--workers", "2",
                            "--quiet"], env=dict(os.environ, ARENA_FLUSH_SECONDS="0"), cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_child)  # fmt: skip
    try:
        _wait_for_play(run, db, 2)
        time.sleep(3)
        os.killpg(run.pid, signal.SIGINT)
        _out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)
    assert run.returncode == 130, err
    with sqlite3.connect(db) as c:
        stored = c.execute("select count(*) from matches").fetchone()[0]
    ended = len(log.read_text().splitlines()) // 2  # both seats write a line
    assert stored > 0 and 0 <= ended - stored <= 20, (ended, stored, err)
