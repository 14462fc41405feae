"""The server's queue workers as real processes (arena.server.runner.QueueRunner), without the web server."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from arena.library import queue, tournaments
from arena.library.storage import open_database
from arena.plugins import get_registry
from arena.server.runner import ABANDON_SECONDS, QueueRunner
from tests.conftest import TEST_PLUGINS
from tests.server.conftest import SETTINGS
from tests.server.serving import wait_for


def test_a_worker_that_does_not_stop_in_time_is_killed_and_its_tournament_let_go(tmp_path: Path) -> None:
    """Stopping, the server waits for its workers; one still in a match when that wait ends is killed, and the
    tournament it held is let go at once (before, it waited for its lease: 600 s here)."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    database = open_database(url)
    registry = get_registry((str(TEST_PLUGINS),))
    tid = tournaments.submit(registry, database, game="tic_tac_toe", agents="sleeper:seconds=60,random")["id"]
    runner = QueueRunner(url, replace(SETTINGS, workers=1, lease_seconds=600))
    runner.start(database)
    try:
        wait_for(lambda: runner.slots[0].playing.value == tid, "the worker playing the tournament")
        time.sleep(1.0)  # the match under way: the sleeper's first move (60 s)
    finally:
        began = time.monotonic()
        runner.close(timeout=1.0)  # its match will not end, and it would leave by itself only after ABANDON_SECONDS
    assert time.monotonic() - began < ABANDON_SECONDS
    assert queue.held_by(database, "test/0") == []  # the lease ended: anyone may resume it now
    assert tournaments.one(database, tid)["status"] == "running"
