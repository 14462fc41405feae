"""Playing the queue: claim a tournament, play it with the CLI's `tournament.play`, give it back.

`arena serve` runs `Settings.workers` of these loops, each in its own process (so the web server
keeps its interpreter to itself). A claim is a lease renewed by a heartbeat thread while matches
are played; losing it (cancelled, or taken over after a stall) or being asked to stop ends play
after the current match: what was played is stored, the rest is resumable, as with the CLI.
`drain` plays until the queue is empty, in this process: tests use it. A worker that dies while the server
runs (the OOM killer, a crash) is noticed within WATCH_SECONDS, logged in one line and replaced; the tournament
it held is left to its lease, which runs out unrenewed, and the next worker to claim resumes it.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from arena import tournament
from arena.errors import ArenaError, first_line
from arena.executors import make_executor
from arena.library import queue
from arena.library.storage import Database, open_database
from arena.match import ServerStopping
from arena.plugins import Registry, get_registry
from arena.server.settings import Settings

log = logging.getLogger("arena.server")


class Stopped(Exception):
    """Play stops after the current match: the server is stopping, or the tournament is no longer ours."""


class GivesWay(Exception):
    """A ladder stops after the current match for a tournament that waits; it is claimed again after that one
    (after an ordinary tournament, when that ends; after another ladder, when that one's turn is over)."""


#: Seconds between two looks, while a ladder plays, for a tournament waiting behind it (db.queue.gives_way).
GIVE_WAY_SECONDS = 1.0
#: Seconds between two looks, while a tournament plays, at whether this worker still holds it (not cancelled).
HOLD_LOOK_SECONDS = 1.0
#: Seconds between two looks of the server at whether each of its queue workers is alive.
WATCH_SECONDS = 1.0
#: A worker that dies sooner than this after its start is replaced after a wait that doubles each time (up to
#: MAX_RESPAWN_WAIT seconds): one that cannot start at all does not respawn in a tight loop.
QUICK_DEATH_SECONDS = 10.0
MAX_RESPAWN_WAIT = 60.0
#: A queue worker whose tournament was cancelled (or taken over) waits this long for the match under way to end, then
#: exits with ABANDONED_EXIT (the server starts another): one very long match cannot hold a worker after a cancel.
ABANDON_SECONDS = 10.0
ABANDONED_EXIT = 75
#: The tournament held by a worker that died this many times (on this server) fails instead of being resumed again.
WORKER_DEATHS = 3


@dataclass
class Claimed:
    """A tournament this worker holds, with its heartbeat."""

    database: Database
    tournament_id: int
    worker: str
    lease_seconds: float
    stop: Any  # threading.Event or multiprocessing.Event: the whole worker stops
    turn_seconds: float = 60.0  # a ladder's turn while another ladder waits (Settings.ladder_turn_seconds)
    endless: bool = False  # a ladder (db.queue.is_endless): only it looks for tournaments waiting behind it
    abandon_after: float | None = None  # a queue worker's process: exit this long after losing the claim mid-match

    def __post_init__(self) -> None:
        self.lost = threading.Event()
        self.finished = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"lease-{self.tournament_id}", daemon=True)
        self.next_look = time.monotonic() + GIVE_WAY_SECONDS
        self.turn_ends = time.monotonic() + self.turn_seconds
        self.save_pending: Callable[[], None] | None = None  # tournament.play's: store the matches not yet written

    def keep_pending(self, save: Callable[[], None]) -> None:
        self.save_pending = save

    def _beat(self) -> None:
        renew_at = time.monotonic() + self.lease_seconds / 3
        stopping_since: float | None = None
        while not self.finished.wait(min(HOLD_LOOK_SECONDS, self.lease_seconds / 3)):
            if self.abandon_after is not None and self.stop.is_set():
                stopping_since = stopping_since or time.monotonic()
                if time.monotonic() - stopping_since >= self.abandon_after:
                    self._leave_on_stop()
            try:
                if time.monotonic() >= renew_at:
                    renew_at = time.monotonic() + self.lease_seconds / 3
                    held = queue.renew(self.database, self.tournament_id, self.worker, self.lease_seconds)
                else:  # a read between renewals: a cancel stops play after the current match, not a third of a lease later
                    held = queue.holds(self.database, self.tournament_id, self.worker)
                if not held:
                    self.lost.set()  # cancelled, or another server took it over
                    self._abandon_if_stuck()
                    return
            except Exception:  # a database hiccup: try again at the next beat (the lease has slack)
                log.exception("renewing the claim on tournament %s", self.tournament_id)

    def _abandon_if_stuck(self) -> None:
        """In a queue worker's process: if the match under way outlasts abandon_after, store the matches finished and
        not yet written (tournament.play's keep_pending), then end the process (the server replaces it; the tournament
        is no longer this worker's)."""
        if self.abandon_after is None or self.finished.wait(self.abandon_after) or self._ended():
            return  # (ended as it should: the worker is only taking its executor down)
        self._exit(False, logging.ERROR, "tournament %s: no longer held by %s (cancelled or taken over), and its match "
                   "under way has not ended %.0f s later: this worker exits (the matches played before it are stored), the "
                   "server starts another", self.tournament_id, self.worker, self.abandon_after)  # fmt: skip

    def _leave_on_stop(self) -> None:
        """In a queue worker's process: the server stops, and the match under way has not ended abandon_after seconds
        later (or never will: a SIGTERM to the whole group killed the local Ray it was waiting on). Store the matches
        finished and not yet written, let the tournament go (a restarted server or another one resumes it at once, the
        match under way played again from its seed), and end the process."""
        if self._ended():
            return  # it ended as it should: the worker is only taking its executor down, and the server waits for it
        self._exit(True, logging.INFO, "tournament %s: stopped; what was played is stored (the match under way had not "
                   "ended %.0f s after the stop: it is played again on resume)", self.tournament_id, self.abandon_after)  # fmt: skip

    def _ended(self) -> bool:
        try:
            return queue.status(self.database, self.tournament_id) in ("done", "failed")
        except Exception:  # noqa: BLE001  (the database away: as if not: the match under way is still stuck)
            return False

    def _exit(self, release: bool, level: int, line: str, *args: Any) -> NoReturn:
        """Store the matches finished and not yet written (tournament.play's keep_pending), let the tournament go if
        `release`, log the line and end this queue worker's process (ABANDONED_EXIT)."""
        try:
            if self.save_pending is not None:
                self.save_pending()
            if release:
                queue.release(self.database, self.tournament_id, self.worker)
        except Exception:  # noqa: BLE001  (the database away: they are played again by whoever resumes it)
            log.exception("storing the played matches of tournament %s", self.tournament_id)
        log.log(level, line, *args)
        logging.shutdown()
        os._exit(ABANDONED_EXIT)

    def progress(self, done: int, total: int) -> None:
        self._check()

    def _check(self) -> None:
        if self.stop.is_set() or self.lost.is_set():
            raise Stopped()
        now = time.monotonic()
        if self.endless and now >= self.next_look:  # a ladder never ends: it must not hold the worker from the queue
            self.next_look = now + GIVE_WAY_SECONDS
            # To another ladder only when this one's turn is over, idle or not: two settled ladders handed one worker
            # back and forth every second (a release, a claim and two log lines each time), doing nothing either way.
            if queue.gives_way(self.database, self.tournament_id, to_endless=now >= self.turn_ends):
                raise GivesWay()

    def idle(self, seconds: float) -> None:
        """A settled ladder waits for joins: asleep, woken at once when the worker is asked to stop."""
        self.stop.wait(seconds)
        self._check()


def play_claimed(database: Database, registry: Registry, tournament_id: int, settings: Settings, worker: str, stop: Any,
                 abandon_after: float | None = None) -> str:  # fmt: skip
    """Play a claimed tournament to its end (or until stopped); its outcome: done, stopped, lost, gave way (a ladder,
    for a tournament waiting in the queue) or failed. With `abandon_after` (a queue worker's own process), a claim lost
    mid-match ends the process that many seconds later if the match has not ended (Claimed._abandon_if_stuck)."""
    claimed = Claimed(database, tournament_id, worker, settings.lease_seconds, stop, settings.ladder_turn_seconds,
                      queue.is_endless(database, tournament_id), abandon_after)  # fmt: skip
    claimed.thread.start()
    try:
        executor = make_executor(settings.executor, settings.match_workers, settings.ray_address)
        played = tournament.play(database, registry, tournament_id, settings.match_workers, claimed.progress,
                                 settings.plugins_dirs, executor=executor, idle=claimed.idle,
                                 keep_pending=claimed.keep_pending)  # fmt: skip
        log.info("tournament %s: played %s matches, done", tournament_id, played)
        return "done"
    except GivesWay:
        log.info("tournament %s: gives way to a tournament waiting in the queue; what was played is stored", tournament_id)
        queue.release(database, tournament_id, worker)
        return "gave way"
    except (Stopped, ServerStopping):
        outcome = "lost" if claimed.lost.is_set() else "stopped"
        log.info("tournament %s: %s; what was played is stored", tournament_id, outcome)
        queue.release(database, tournament_id, worker)
        return outcome
    except (ArenaError, Exception) as exc:  # noqa: BLE001  (a tournament that cannot be played fails; the server goes on)
        message = str(exc) if isinstance(exc, ArenaError) else f"{type(exc).__name__}: {exc}"
        log.error("tournament %s failed: %s", tournament_id, message)
        queue.release(database, tournament_id, worker, status="failed", error=message)
        return "failed"
    except BaseException:  # SystemExit, KeyboardInterrupt: the process leaves, and lets its tournament go first
        with contextlib.suppress(Exception):
            queue.release(database, tournament_id, worker)
        raise
    finally:
        claimed.finished.set()
        claimed.thread.join()


def drain(database: Database, registry: Registry, settings: Settings, worker: str | None = None,
          stop: Any = None) -> list[tuple[int, str]]:  # fmt: skip
    """Claim and play tournaments until none is left (or `stop` is set); (id, outcome) of each."""
    stop = stop if stop is not None else threading.Event()
    worker = worker or f"{settings.worker_id}/drain"
    outcomes = []
    while not stop.is_set():
        tournament_id = queue.claim(database, worker, settings.lease_seconds)
        if tournament_id is None:
            break
        outcomes.append((tournament_id, play_claimed(database, registry, tournament_id, settings, worker, stop)))
    return outcomes


def _die_with_parent() -> None:
    """Linux: the kernel kills this process when the server dies (kill -9 included), so no orphan plays on."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class StopFlag:
    """The server's request to its queue workers to stop, shared without a lock: a worker killed at any moment cannot
    leave it held. (A multiprocessing.Event has one: a worker killed while holding it, by a SIGTERM to the whole
    process group as a service manager sends, left the server hung in set() for good.) Read by polling."""

    def __init__(self, context: Any) -> None:
        self.value = context.RawValue("b", 0)

    def set(self) -> None:
        self.value.value = 1

    def is_set(self) -> bool:
        return bool(self.value.value)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking within 50 ms of a stop request; whether stop was asked."""
        deadline = time.monotonic() + seconds
        while not self.is_set() and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(0.05, left))
        return self.is_set()


def _left_to_the_server(signum: int, frame: Any) -> None:
    """A queue worker's answer to SIGINT and SIGTERM: none; the server, signalled too, stops it between matches."""


def _worker_main(url: str, settings: Settings, worker: str, stop: Any, parent: int, playing: Any) -> None:
    _die_with_parent()
    # Started daemonic (ended with the server however it exits), it may still start the pool of --match-workers (a
    # daemonic process may start none: every tournament failed). The server stops it, kills it past a deadline, and
    # the kernel kills it with the server (above). With one match worker it stays daemonic, and plays plugin agents in
    # its own process, as before: a pool here is spawned (this process runs threads), 0.5 s a part of a ladder.
    if settings.executor == "local" and settings.match_workers > 1:
        multiprocessing.current_process().daemon = False
    # The server decides when to stop: Ctrl-C, and a service manager's SIGTERM, reach the whole group. A handler that
    # does nothing, not SIG_IGN: an ignored signal stays ignored in the processes this one starts (agents, Ray).
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _left_to_the_server)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    database = open_database(url)
    registry = get_registry(settings.plugins_dirs)
    while not stop.is_set() and os.getppid() == parent:
        try:
            tournament_id = queue.claim(database, worker, settings.lease_seconds)
        except Exception as exc:  # the database is away for a moment: look again later (one line each time, no traceback)
            log.warning("claiming from the queue failed, tried again in %g s: %s: %s", settings.poll_seconds,
                        type(exc).__name__, first_line(exc))  # fmt: skip
            tournament_id = None
        if tournament_id is None:
            stop.wait(settings.poll_seconds)
            continue
        log.info("tournament %s: claimed by %s", tournament_id, worker)
        playing.value = tournament_id  # for the server, should this process die: whose tournament it was
        try:
            play_claimed(database, registry, tournament_id, settings, worker, stop, abandon_after=ABANDON_SECONDS)
        finally:
            playing.value = 0


def how_it_ended(exitcode: int | None) -> str:
    """A process's end in words: `killed by SIGKILL`, `exit code 1`."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    if exitcode == ABANDONED_EXIT:
        return f"exit code {exitcode}: it left a match of a tournament no longer its own (cancelled or taken over)"
    return f"exit code {exitcode}"


@dataclass
class Slot:
    """One of the server's queue workers: its name, its process, when that started, the wait before a quick respawn, and
    the tournament its process plays (a shared integer, 0 for none)."""

    worker: str
    process: Any
    started: float
    playing: Any  # multiprocessing RawValue("q")
    wait: float = 0.0


class QueueRunner:
    """The server's playing processes: started with the app, replaced when one dies, stopped (cleanly, resumably) with it."""

    def __init__(self, url: str, settings: Settings) -> None:
        self.url, self.settings = url, settings
        self.context = multiprocessing.get_context("spawn")  # the web server runs threads: never fork it
        self.stop = StopFlag(self.context)
        self.slots: list[Slot] = []
        self.watcher: threading.Thread | None = None
        self.deaths: dict[int, int] = {}  # tournament id -> how many workers died holding it
        self.database: Database | None = None

    def start(self, database: Database) -> None:
        self.database = database
        taken_back = queue.release_all(database, f"{self.settings.worker_id}/")
        if taken_back:
            log.info("took back %s tournaments this server was playing when it stopped", taken_back)
        self.slots = [self._spawn(f"{self.settings.worker_id}/{n}") for n in range(self.settings.workers)]
        self.watcher = threading.Thread(target=self._watch, args=(database,), name="arena-queue-watch", daemon=True)
        self.watcher.start()

    def _spawn(self, worker: str, wait: float = 0.0) -> Slot:
        playing = self.context.RawValue("q", 0)
        process = self.context.Process(target=_worker_main, name=f"arena-queue-{worker.rsplit('/', 1)[-1]}", daemon=True,
                                       args=(self.url, self.settings, worker, self.stop, os.getpid(), playing))  # fmt: skip
        process.start()
        log.info("queue worker %s: pid %s", worker, process.pid)
        return Slot(worker, process, time.monotonic(), playing, wait)

    def _watch(self, database: Database) -> None:
        """Until the server stops: replace each queue worker that died, after one line in the log."""
        while not self.stop.wait(WATCH_SECONDS):
            for n, slot in enumerate(self.slots):
                if slot.process.exitcode is not None and not self.stop.is_set():
                    self.slots[n] = self._replace(database, slot)

    def _replace(self, database: Database, dead: Slot) -> Slot:
        """A new worker, of the same name, in place of a dead one (after a wait if it died right after its start)."""
        quick = time.monotonic() - dead.started < QUICK_DEATH_SECONDS
        wait = min(max(2 * dead.wait, WATCH_SECONDS), MAX_RESPAWN_WAIT) if quick else 0.0
        ended = how_it_ended(dead.process.exitcode)
        try:
            # The tournament it was playing, if it still holds it, whatever its lease says: a lease can run out
            # before this look (a stall of the machine; a short --lease), and the death must still count.
            playing = dead.playing.value
            held = [playing] if playing and queue.holds(database, playing, dead.worker) else queue.held_by(database, dead.worker)
            fate = self._fate(database, dead.worker, held, ended)
        except Exception:  # noqa: BLE001  (the database away for a moment: the line says less, the worker is replaced)
            fate = "its tournament unknown (the database did not answer)"
        log.error("queue worker %s (pid %s) died, %s; %s; replaced%s", dead.worker, dead.process.pid, ended, fate,
                  f" in {wait:.0f} s" if wait else "")  # fmt: skip
        dead.process.join()
        if self.stop.is_set() or (wait and self.stop.wait(wait)):
            return dead  # the server stops (or stopped meanwhile): nothing to replace
        return self._spawn(dead.worker, wait)

    def _fate(self, database: Database, worker: str, held: list[int], ended: str) -> str:
        """What becomes of the tournament a dead worker held: resumed after its lease, or, the WORKER_DEATHS-th time a
        worker died holding it (an agent that kills the process playing it), failed with the reason."""
        if not held:
            return "it held no tournament"
        tournament_id = held[0]
        deaths = self.deaths[tournament_id] = self.deaths.get(tournament_id, 0) + 1
        if deaths < WORKER_DEATHS:
            return f"tournament {tournament_id} it held is resumed when its lease ({self.settings.lease_seconds:.0f} s) runs out"
        error = f"the queue workers playing it died {deaths} times (the last {ended}): an agent of it kills its process?"
        queue.release(database, tournament_id, worker, status="failed", error=error)
        return f"tournament {tournament_id} it held failed: {error}"

    def stop_soon(self) -> None:
        """Ask every worker to stop after its current match and claim nothing more (safe from a signal handler)."""
        self.stop.set()

    def close(self, timeout: float = ABANDON_SECONDS + 50) -> None:
        """Ask every worker to stop after its current match, wait (a worker whose match does not end leaves by itself
        ABANDON_SECONDS after the stop, storing what was played; the rest is room for a loaded or stalled machine),
        then make sure: a worker still there is killed, and one that died holding its tournament has it let go, at once."""
        self.stop_soon()
        if self.watcher is not None:
            self.watcher.join()  # no worker is started after this
        deadline = time.monotonic() + timeout  # one wait for all of them (they stop side by side)
        for slot in self.slots:
            slot.process.join(max(0.0, deadline - time.monotonic()))
            if slot.process.is_alive():
                log.warning("queue worker %s did not stop in %.0f s: killed, and its tournament let go (resumable at once)",
                            slot.process.pid, timeout)  # fmt: skip
                slot.process.kill()
                slot.process.join()
            elif slot.playing.value and slot.process.exitcode not in (0, ABANDONED_EXIT):
                # It died during the stop holding its tournament (a SIGTERM to the whole group can kill the local Ray
                # its driver runs on, and Ray's core may then end the driver): let it go now, not when its lease runs out.
                log.warning("queue worker %s ended during the stop (%s) holding tournament %s: let go (resumable at once; "
                            "the matches it had not yet stored are played again)", slot.process.pid,
                            how_it_ended(slot.process.exitcode), slot.playing.value)  # fmt: skip
            else:
                continue  # it left as it should, having let its tournament go itself
            playing = slot.playing.value
            if playing and self.database is not None:
                with contextlib.suppress(Exception):  # the database away: the lease runs out instead
                    queue.release(self.database, playing, slot.worker)
        self.slots.clear()
