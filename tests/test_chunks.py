"""How matches go to worker processes: chunks of about half a second of play (arena.executors.chunks), sent ahead
and taken back as they finish (arena.executors.local)."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import SimpleNamespace

import pytest

import arena.executors.local as local
from arena.executors.chunks import CHUNK_SECONDS, ChunkSizer


def test_chunks_hold_about_half_a_second_of_play_within_their_bounds():
    sizer = ChunkSizer(most=64)
    assert sizer.size() == 1  # nothing measured yet
    sizer.add([SimpleNamespace(duration=0.1)] * 4)
    assert sizer.size() == int(CHUNK_SECONDS / 0.1) == 5
    sizer.add([SimpleNamespace(duration=10.0)])  # a long match: the mean is what counts
    assert sizer.size() == 1
    fast = ChunkSizer(most=64)
    fast.add([SimpleNamespace(duration=0.0001)] * 100)
    assert fast.size() == 64
    interleaved = ChunkSizer(most=32, least=32)  # --concurrent-matches on Ray: full chunks, whatever the durations
    interleaved.add([SimpleNamespace(duration=5.0)])
    assert interleaved.size() == 32


RECORD = "ARENA_TEST_CHUNK_RECORD"


def _play_then_die_at_100(tasks):
    """Stands in for a worker's chunk: 10 ms a match, and the worker dies (os._exit) 1 s into match 100. Each chunk
    played, and the death, are written down with their time."""
    outcomes = []
    for task in tasks:
        if task.schedule_index == 100:
            time.sleep(1.0)
            with open(os.environ[RECORD], "a") as record:
                record.write(f"died {time.monotonic()}\n")
            os._exit(3)
        time.sleep(0.01)
        outcomes.append(SimpleNamespace(schedule_index=task.schedule_index, duration=0.01))
    with open(os.environ[RECORD], "a") as record:
        record.write(f"chunk {time.monotonic()} {tasks[0].schedule_index} {tasks[-1].schedule_index}\n")
    return outcomes


def test_chunks_finished_before_a_worker_dies_are_taken_back(monkeypatch, tmp_path):
    """The run is busy storing while chunks finish, then a worker dies: the finished chunks' matches are still
    yielded (before, the next send raised BrokenProcessPool first and they were played again)."""
    monkeypatch.setenv(RECORD, str(tmp_path / "record"))
    monkeypatch.setattr(local, "_play_chunk_in_worker", _play_then_die_at_100)
    # Chunks of 5 whatever the machine's load makes of the 10 ms matches: the chunks in flight at the 30th match are
    # past it, and match 100 is sent only after the sleep.
    monkeypatch.setattr(local, "ChunkSizer", lambda most: SimpleNamespace(size=lambda: 5, add=lambda outcomes: None))
    tasks = [SimpleNamespace(schedule_index=index) for index in range(4000)]
    yielded = []
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        with pytest.raises(BrokenProcessPool):
            for outcome in local._timed_chunks(pool, tasks, 2):  # type: ignore[arg-type]
                yielded.append(outcome.schedule_index)
                if len(yielded) == 30:
                    time.sleep(2.5)  # the run stores a batch meanwhile
    lines = [line.split() for line in (tmp_path / "record").read_text().splitlines()]
    died = next(float(line[1]) for line in lines if line[0] == "died")
    # a chunk played well before the death was sent back before it: every one of its matches was taken
    sent = [(int(first), int(last)) for kind, when, *span in lines if kind == "chunk" and float(when) < died - 0.2
            for first, last in [span]]  # fmt: skip
    assert any(first > max(yielded[:30]) for first, _ in sent), (sent, yielded)  # some finished during the sleep
    assert all(set(range(first, last + 1)) <= set(yielded) for first, last in sent), (sent, sorted(yielded))
    assert len(yielded) == len(set(yielded))
