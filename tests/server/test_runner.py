"""The server's queue workers as real processes (arena.server.runner.QueueRunner), without the web server."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path

from arena.library import queue, tournaments
from arena.library.storage import Database, open_database
from arena.plugins import get_registry
from arena.server.runner import ABANDON_SECONDS, QueueRunner
from tests.conftest import TEST_PLUGINS
from tests.server.conftest import SETTINGS
from tests.server.serving import wait_for


def playing_a_sleeper(tmp_path: Path) -> tuple[Database, int, QueueRunner]:
    """A runner of one worker (600 s leases) whose worker is in a match that will not end soon (a sleeper's 60 s move)."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    database = open_database(url)
    registry = get_registry((str(TEST_PLUGINS),))
    tid = tournaments.submit(registry, database, game="tic_tac_toe", agents="sleeper:seconds=60,random")["id"]
    runner = QueueRunner(url, replace(SETTINGS, workers=1, lease_seconds=600))
    runner.start(database)
    try:
        wait_for(lambda: runner.slots[0].playing.value == tid, "the worker playing the tournament")
    except BaseException:
        runner.close(timeout=1.0)
        raise
    return database, tid, runner


def test_a_worker_that_does_not_stop_in_time_is_killed_and_its_tournament_let_go(tmp_path: Path) -> None:
    """Stopping, the server waits for its workers; one still in a match when that wait ends is killed, and the
    tournament it held is let go at once (before, it waited for its lease: 600 s here)."""
    database, tid, runner = playing_a_sleeper(tmp_path)
    try:
        time.sleep(1.0)  # the match under way: the sleeper's first move (60 s)
    finally:
        began = time.monotonic()
        runner.close(timeout=1.0)  # its match will not end, and it would leave by itself only after ABANDON_SECONDS
    assert time.monotonic() - began < ABANDON_SECONDS
    assert queue.held_by(database, "test/0") == []  # the lease ended: anyone may resume it now
    assert tournaments.one(database, tid)["status"] == "running"


def test_a_worker_that_dies_during_the_stop_has_its_tournament_let_go(tmp_path: Path) -> None:
    """A queue worker that dies while the server stops (a SIGTERM to the whole group can take the local Ray down, and
    Ray's core the driver with it) no longer holds its tournament until the lease runs out (600 s here)."""
    database, tid, runner = playing_a_sleeper(tmp_path)
    try:
        runner.stop_soon()
        worker = runner.slots[0].process
        os.kill(worker.pid, signal.SIGKILL)  # only the worker this test's runner started, by its id
        worker.join(30)
    finally:
        runner.close(timeout=30.0)
    assert queue.held_by(database, "test/0") == []  # the lease ended: anyone may resume it now
    assert tournaments.one(database, tid)["status"] == "running"
