"""Tables: people playing matches on `arena serve`'s play page (agent `browser`, arena.remote.browser).

A table is one person's live one-match tournament, made by `arena.remote.play.one_match` (as `arena
play` makes its own) and played by `tournament.play` in a thread of the server, with the opponents in
agent processes of their own (`isolate`), each move within the table's time per move
(`Settings.play_time_per_move`, the match's time per move: search agents keep to it, and one that does
not, or crashes, is stopped and forfeits, so no opponent holds a table or the server). The person's
seat is fed through the bot hub like a pull bot's: the hub sends the table `start`, `act` (with the
seat's own `view` of the board) and `end`; the page reads the table by long-polling, and a click
answers the pending `act`. The match is stored and rated like any other.

Faults: a move that is not one of the pending act's legal ids is refused (nothing is sent); a person
who leaves (the Leave button, or a page not seen for `Settings.play_idle_seconds` while a move is
awaited) forfeits with `agent_disconnected`, at once or, while an opponent thinks, when its move is
made; one who does not move within the browser agent's `timeout` (PERSON_SECONDS, not the opponents' time per
move) forfeits with `timeout`. When the server stops, the match is not scored: its tournament is
cancelled. All of a table's state changes on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool

from arena import tournament
from arena.errors import ArenaError, first_line
from arena.library import analysis, queue
from arena.library import matches as matches_library
from arena.library import tournaments as tournaments_library
from arena.library.storage import Database
from arena.plugins import Registry
from arena.reach import ANYWHERE, Reach
from arena.remote.browser import check_person, hub_name
from arena.remote.hub import Hub, Link
from arena.remote.play import one_match
from arena.remote.pull import drop_relay

log = logging.getLogger("arena.server")

#: waiting: the opponents are to move; your_move: an act is pending; finishing: the match ended, being stored.
LIVE = ("starting", "waiting", "your_move", "finishing")


class Busy(ArenaError):
    """The person has a game going already (one live table per person: the hub routes their seat by name)."""


@dataclass(eq=False)
class Table:
    id: int  # the tournament's id
    person: str
    game: str
    against: str
    seat: int
    status: str = "starting"
    version: int = 0
    act: dict[str, Any] | None = None
    board: dict[str, Any] | None = None  # the last view the seat was shown (svg or text)
    end: dict[str, Any] | None = None
    result: dict[str, Any] | None = None  # the stored match: its id and seats
    error: str | None = None
    match_id: str | None = None  # the protocol's id of the match this page plays (from its first message)
    played: str | None = None  # the name of the person's last move, shown while the opponents think
    leaving: str | None = None
    watchers: int = 0
    seen: float = field(default_factory=time.monotonic)
    link: Link | None = None
    thread: threading.Thread | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def touch(self) -> None:
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def snapshot(self) -> dict[str, Any]:
        """What the page shows: never more than the seat's own view (the act's `state` and `view`)."""
        act = self.act
        legal = [] if act is None else [{"id": a, "name": n} for a, n in zip(act["legal_actions"], act["legal_names"])]
        return {
            "id": self.id, "person": self.person, "game": self.game, "against": self.against, "seat": self.seat,
            "status": self.status, "version": self.version, "board": self.board, "legal": legal,
            "deadline_ms": None if act is None else act.get("deadline_ms"), "move": None if act is None else act.get("seq"),
            "played": self.played, "leaving": self.leaving, "end": self.end, "result": self.result, "error": self.error,
        }  # fmt: skip


class Tables:
    """The live tables of one server, by tournament id (finished ones stay readable until the server stops)."""

    def __init__(self, hub: Hub, database: Database, registry: Registry, idle_seconds: float, time_per_move: float,
                 plugins_dirs: Sequence[str] = (), worker: str = "server", lease_seconds: float = 30.0,
                 reach: Reach = ANYWHERE) -> None:  # fmt: skip
        self.hub, self.database, self.registry, self.idle_seconds = hub, database, registry, idle_seconds
        self.time_per_move = time_per_move  # the opponents'; the person's seat keeps the browser agent's own time
        self.plugins_dirs = tuple(plugins_dirs)  # for the opponents' processes
        self.worker, self.lease_seconds = worker, lease_seconds  # the games' claim (db.queue.PLAY_PREFIX), renewed
        self.reach = reach  # the hosts opponents may call, the files they may read (--bot-hosts, --models-dir)
        self.tables: dict[int, Table] = {}
        self.opening: set[str] = set()
        self.watchers: set[asyncio.Future[None]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.keeper: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Keep this server's games claimed, and cancel those of servers that were killed (they stayed `running`, shown
        live, with nobody to play or cancel them), every third of a lease while the server runs."""
        self.keeper = asyncio.get_running_loop().create_task(self._keep())

    async def _keep(self) -> None:
        while True:
            live = [t.id for t in self.tables.values() if t.status in LIVE]
            try:
                await run_in_threadpool(queue.hold_games, self.database, live, self.worker, self.lease_seconds)
                lost = await run_in_threadpool(queue.cancel_lost_games, self.database)
                if lost:
                    log.info("cancelled %d play page game(s) of servers that stopped while they were played", lost)
            except Exception as exc:  # noqa: BLE001  (the database away for a moment: try again at the next turn)
                log.warning("keeping the play page's games: %s", first_line(exc))
            await asyncio.sleep(self.lease_seconds / 3)

    def get(self, table_id: int, person: str) -> Table:
        table = self.tables.get(table_id)
        if table is None or table.person != person:  # another person's table is none of this one's business
            raise ArenaError(f"no game {table_id} of yours on this server (games live while the server runs)")
        return table

    def live_of(self, person: str) -> Table | None:
        return next((t for t in self.tables.values() if t.person == person and t.status in LIVE), None)

    async def open(self, person: str, game: str, against: str, seat: int) -> Table:
        """Create the match and start playing it; bad input raises ArenaError naming the field."""
        check_person(person)
        going = self.live_of(person)
        if going is not None or person in self.opening:
            if going is not None and going.leaving is not None:  # one page per person: the hub knows them by name
                raise Busy(f"you left game {going.id}: it ends (your forfeit is stored) once the opponents' move in hand is "
                           "made, within their time per move; start another then")  # fmt: skip
            raise Busy(f"you are playing game {going.id if going else '(starting)'} already: finish it or leave it first")
        self.loop = asyncio.get_running_loop()
        self.opening.add(person)  # a second request of theirs while this one creates the match is refused too
        try:
            return await self._open(person, game, against, seat)
        finally:
            self.opening.discard(person)

    async def _open(self, person: str, game: str, against: str, seat: int) -> Table:
        spec = f"browser:name={person}"

        def create() -> tuple[int, str]:
            tournament_id = one_match(self.registry, self.database, game, against, seat, spec, people_against=False,
                                      time_per_move=self.time_per_move, owner=person, reach=self.reach,
                                      held_by=(self.worker, self.lease_seconds))  # fmt: skip
            return tournament_id, str(tournaments_library.one(self.database, tournament_id)["game_spec"])

        tournament_id, game_spec = await run_in_threadpool(create)
        table = self.tables[tournament_id] = Table(tournament_id, person, game_spec, against, seat)

        async def send(text: str) -> None:
            self._received(table, json.loads(text))

        table.link = await self.hub.connected(hub_name(person), send)
        table.thread = threading.Thread(target=self._play, args=(table,), name=f"table-{tournament_id}", daemon=True)
        table.thread.start()
        watcher = asyncio.ensure_future(self._watch(table))
        self.watchers.add(watcher)  # held until done (the loop keeps only weak references to tasks)
        watcher.add_done_callback(self.watchers.discard)
        return table

    # ---- the match, in its thread ----

    def _play(self, table: Table) -> None:
        outcome, error = "over", None
        try:
            tournament.play(self.database, self.registry, table.id, isolate=True, plugins_dirs=self.plugins_dirs)
        except Exception as exc:  # noqa: BLE001  (the server stopping: ServerStopping; or the match could not be played)
            outcome, error = "cancelled", f"{type(exc).__name__}: {exc}"
            log.warning("game %s was not scored: %s", table.id, error)
            try:
                tournaments_library.cancel(self.database, table.id)
            except Exception:
                log.exception("cancelling game %s", table.id)
        finally:
            drop_relay()
        result = self._stored(table.id) if outcome == "over" else None
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._finished, table, outcome, error, result)

    def _stored(self, tournament_id: int) -> dict[str, Any] | None:
        """The stored match (id, seats, reason) and its final position, as the replay page draws it."""
        try:
            selection = analysis.select(self.database, self.registry, str(tournament_id))
            played = matches_library.matches(self.database, selection)
            if not played:
                return None
            match = played[0]
            final = matches_library.replay(self.database, self.registry, match["id"], positions=True)["positions"][-1]
            return {**match, "final": {"svg": final["svg"], "text": final["text"]}}
        except Exception:
            log.exception("reading game %s back", tournament_id)
            return None

    def _finished(self, table: Table, outcome: str, error: str | None, result: dict[str, Any] | None) -> None:
        table.status, table.error, table.act = outcome, error, None
        if result is not None:
            table.result = result
            table.board = result["final"]
        if table.link is not None:
            asyncio.ensure_future(self.hub.disconnected(table.link))
        table.touch()

    # ---- the hub's messages and the person's answers, on the loop ----

    def _received(self, table: Table, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if table.match_id is None:
            table.match_id = message.get("match_id")
        elif message.get("match_id") != table.match_id:  # a seat of `browser:name=...` in another tournament: not this page's
            return
        if kind == "start":
            table.status = "waiting"
        elif kind == "act":
            table.act, table.board, table.status = message, message.get("view"), "your_move"
            if table.leaving is not None:
                self._answer(table, {"leave": table.leaving})
        elif kind == "end":
            table.act, table.end, table.status = None, message, "finishing"
        table.touch()

    def _answer(self, table: Table, answer: dict[str, Any]) -> None:
        act = table.act
        if act is None or table.link is None:
            return
        table.act, table.status = None, "waiting"
        self.hub.received(table.link, json.dumps({**answer, "match_id": act["match_id"], "seq": act["seq"]}))
        table.touch()

    def move(self, table: Table, action: int) -> None:
        """Answer the pending act with `action`, one of its legal ids (else ArenaError naming `action`)."""
        act = table.act
        if act is None:
            raise ArenaError(f"action: it is not your move (the game is {table.status.replace('_', ' ')})")
        if action not in act["legal_actions"]:
            names = ", ".join(f"{a} ({n})" for a, n in zip(act["legal_actions"], act["legal_names"]))
            raise ArenaError(f"action: {action} is not a legal move here; legal: {names}")
        table.played = act["legal_names"][act["legal_actions"].index(action)]
        self._answer(table, {"action": action})

    def leave(self, table: Table, why: str) -> None:
        """The person leaves: a pending move, or the next one, forfeits (`agent_disconnected`)."""
        if table.status not in LIVE or table.leaving is not None:
            return
        table.leaving = why
        self._answer(table, {"leave": why})

    async def watch(self, table: Table, seen: int, timeout: float) -> dict[str, Any]:
        """The table once its version differs from `seen` (or after `timeout` seconds): a long poll that shows the page is there."""
        table.watchers += 1
        try:
            if table.version == seen:
                try:
                    await asyncio.wait_for(table.changed.wait(), timeout)
                except TimeoutError:
                    pass
        finally:
            table.watchers -= 1
            table.seen = time.monotonic()
        return table.snapshot()

    async def _watch(self, table: Table) -> None:
        """A person whose page is gone while their move is awaited has left."""
        step = max(0.05, min(1.0, self.idle_seconds / 4))
        while table.status in LIVE:
            await asyncio.sleep(step)
            if table.act is not None and table.watchers == 0 and time.monotonic() - table.seen > self.idle_seconds:
                self.leave(table, f"left the page (not seen for {self.idle_seconds:g} s)")

    async def close(self, timeout: float = 15.0) -> None:
        """The server stops (the hub answers `server_stopping`): wait a little for the tables' threads to cancel."""
        if self.keeper is not None:
            self.keeper.cancel()
        threads = [t.thread for t in self.tables.values() if t.thread is not None and t.thread.is_alive()]
        if threads:
            def join() -> None:
                for thread in threads:
                    thread.join(timeout)

            await asyncio.get_running_loop().run_in_executor(None, join)
