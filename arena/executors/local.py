"""The local executor: this process, or a pool of worker processes on this machine."""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arena.errors import ArenaError
from arena.executors.chunks import ChunkSizer, most_per_chunk
from arena.interleave import concurrent_chunks
from arena.isolation import forkserver
from arena.lifeline import bind_to_parent
from arena.plugins import get_registry

if TYPE_CHECKING:
    from arena.plugins import Registry
    from arena.tournament import MatchTask, Player, Setup
    from db.queries import MatchOutcome

log = logging.getLogger("arena")

#: The most matches in a chunk sent to a worker (see arena.executors.chunks).
MAX_CHUNK = 64
#: Chunks sent to each worker ahead (on Ctrl-C the queued ones are never played, so they cost nothing).
IN_FLIGHT_PER_WORKER = 8

#: Libraries with native thread pools that a forked child may not be able to use.
FORK_UNSAFE_MODULES = ("torch", "tensorflow", "jax")

_worker: Player | None = None


def _init_worker(setup: Setup, parent_pid: int) -> None:
    from arena.tournament import Player

    global _worker
    bind_to_parent(parent_pid)  # a worker never outlives the run that started it (kill -9 included)
    _worker = Player(setup, get_registry(setup.plugins_dirs))
    atexit.register(_worker.close)
    gc.freeze()  # for the worker's whole life: see arena.heap


def _play_chunk_in_worker(tasks: list[MatchTask]) -> list[MatchOutcome]:
    assert _worker is not None
    return list(_worker.play_all(tasks))


def start_method(isolate: bool) -> str:
    """How worker processes start: fork where that is safe, else spawn.

    A forked worker is ready in about 10 ms; a spawned one takes about 0.5 s (a new interpreter
    importing Arena and its plugins), which on a 40-match mcts tournament measured 1.72x for two
    workers against 1.94x forked. Forking is safe while the parent runs no other thread (the
    progress bar refreshes without one) and the workers never touch the parent's database
    connections (they only play), on Linux (macOS system libraries break in forked children).
    Workers of isolated agents come from a forkserver (arena.isolation.forkserver, with Arena and the
    plugins preloaded: ready in milliseconds where a spawned worker imports them for about 0.7 s): each
    starts its own forkserver for its agents, and a forked worker would inherit the parent's forkserver
    state. Workers of a parent that has
    loaded a library whose native thread pools do not survive a fork (an agent plugin's PyTorch:
    GNU OpenMP can hang in a forked child) are spawned.
    """
    if isolate:
        return "forkserver"
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return "spawn"
    if any(name in sys.modules for name in FORK_UNSAFE_MODULES):
        return "spawn"
    return "fork"


@dataclass
class LocalPool:
    """`workers` processes on this machine; one means play in this process."""

    workers: int = 1

    @property
    def parallel(self) -> bool:
        return self.workers > 1

    def held(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # a pool's workers are made for one part of the schedule (its Setup)

    def results(self, setup: Setup, registry: Registry, tasks: Sequence[MatchTask]) -> Generator[MatchOutcome, None, None]:
        # Agents other than Arena's own play in a worker process even with one worker, unless isolated already:
        # one that calls os._exit or segfaults then ends a worker, not the run, which plays the rest isolated.
        # (Only where a child process may be started: not in a daemonic process, as a server's tournament runner is.)
        # A person (arena play) reads this process's terminal: a match with one is played here, whoever the others are.
        own = setup.isolate or all(registry.is_builtin("agent", data["type"]) for data in setup.agents)
        person = any(registry.agent_class(data["type"]).person for data in setup.agents)
        if (self.workers <= 1 or len(tasks) <= 1) and (own or person or multiprocessing.current_process().daemon):
            from arena.tournament import Player

            player = Player(setup, registry)
            try:
                yield from player.play_all(tasks)
            finally:
                player.close()
            return
        method = start_method(setup.isolate)
        context = forkserver(registry.installed_modules()) if method == "forkserver" else multiprocessing.get_context(method)
        sent: set[int] = set()  # schedule indices of the matches the workers sent back
        with ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init_worker,
                                 initargs=(setup, os.getpid())) as pool:  # fmt: skip
            try:
                if setup.concurrent > 1:  # each worker interleaves its chunk's matches
                    chunks = pool.map(_play_chunk_in_worker, concurrent_chunks(tasks, self.workers, setup.concurrent))
                    outcomes: Iterator[MatchOutcome] = (outcome for chunk_outcomes in chunks for outcome in chunk_outcomes)
                else:
                    outcomes = _timed_chunks(pool, tasks, self.workers)
                for outcome in outcomes:
                    sent.add(outcome.schedule_index)
                    yield outcome
            except KeyboardInterrupt:
                # Ctrl-C (workers ignore it: see arena.lifeline): end the workers now instead of waiting for their chunks.
                _end_pool(pool)
                raise
            except BrokenProcessPool:
                if setup.isolate:  # not an agent (each has its own process): the worker itself died
                    raise ArenaError("a worker process died while playing; the matches it had sent back are stored: "
                                     "--resume the tournament to play the rest") from None  # fmt: skip
            finally:  # stopped early (the caller closed us): drop the matches not started yet instead of playing them
                pool.shutdown(wait=True, cancel_futures=True)
        rest = [task for task in tasks if task.schedule_index not in sent]
        if rest:  # a worker died under an agent (os._exit, a segfault): that agent now loses its matches, in its own process
            log.warning("note: a worker process died while playing (an agent in it exited or crashed): the other %d matches "
                        "are played with each agent in its own process (as with --isolate)", len(rest))  # fmt: skip
            yield from self.results(replace(setup, isolate=True), registry, rest)


def _timed_chunks(pool: ProcessPoolExecutor, tasks: Sequence[MatchTask], workers: int) -> Iterator[MatchOutcome]:
    """The tasks' outcomes, a chunk's as soon as it is played (chunks finish in any order, as on Ray), with
    IN_FLIGHT_PER_WORKER chunks per worker sent ahead. A chunk is sent back whole, so its size is what a Ctrl-C or a
    worker's death can lose of the matches played: chunks of a fixed count (64 by the number of matches) held a
    minute of play of slow agents. When a worker dies (the pool breaks), the chunks played meanwhile are still
    yielded before BrokenProcessPool is raised: only the others are played again."""
    sizer = ChunkSizer(most_per_chunk(len(tasks), workers, MAX_CHUNK))
    position = 0
    in_flight: set[Future[list[MatchOutcome]]] = set()
    broken: BrokenProcessPool | None = None
    while (position < len(tasks) and broken is None) or in_flight:
        while broken is None and position < len(tasks) and len(in_flight) < IN_FLIGHT_PER_WORKER * workers:
            size = sizer.size()
            try:
                in_flight.add(pool.submit(_play_chunk_in_worker, list(tasks[position : position + size])))
            except BrokenProcessPool as exc:
                broken = exc
                break
            position += size
        if not in_flight:
            break
        done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
        for future in done:
            try:
                outcomes = future.result()
            except BrokenProcessPool as exc:  # the pool fails every chunk in flight: those played are taken first
                broken = exc
                continue
            sizer.add(outcomes)
            yield from outcomes
    if broken is not None:
        raise broken


def _end_pool(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers at once. Its manager thread then fails the futures still pending; for one cancelled
    meanwhile CPython raises InvalidStateError there: that is expected, so it is not printed."""
    previous = threading.excepthook

    def quiet(args: threading.ExceptHookArgs) -> None:
        if not isinstance(args.exc_value, InvalidStateError):
            previous(args)

    threading.excepthook = quiet
    try:
        manager = getattr(pool, "_executor_manager_thread", None)
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.kill()
        pool.shutdown(wait=False)
        if manager is not None:
            manager.join(10)
    finally:
        threading.excepthook = previous
