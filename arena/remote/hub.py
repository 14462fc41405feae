"""Transport 2, pull: the hub inside `arena serve` that routes matches to bots connected over a WebSocket.

Bots connect out to `/api/v1/bots/connect` (see arena/server/routes/bots.py) and say `hello` with a
bot token and the agent name they play as. The processes that play tournaments (the queue workers)
reach the hub over a local relay socket (127.0.0.1, a random port, a secret; `arena.remote.pull`
is the other end): for each seat of a pull agent they send `start`, then one `act` per move (the
hub answers with the bot's raw reply, or a fault), then `end`.

Routing: a match's seat goes to the least busy connection of that name, and stays there. When a
connection drops, its matches move to another connection of the name, or wait for one to connect;
a pending `act` is sent again (after `start`), so a bot that reconnects within its deadline plays
on. When the server stops, every relay request is answered `server_stopping`: Arena's fault, never
the bot's (the match is not stored and is played again).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from arena.remote.protocol import MAX_ANSWER_BYTES

log = logging.getLogger("arena.remote")

#: Environment variable that tells a playing process where the hub is: "HOST:PORT SECRET".
HUB_ENV = "ARENA_BOT_HUB"
SERVER_STOPPING = "server_stopping"
#: The longest line of the relay (a request or a reply, one JSON object): an `act` carries the position and, for the
#: play page, its picture (some 120 KB on a 20x20 Dots and Boxes board), far beyond asyncio's default of 64 KiB.
RELAY_LINE_LIMIT = 64 << 20
#: The longest first line of the relay: {"secret": ...}, nothing else.
RELAY_HELLO_LIMIT = 4096


@dataclass(eq=False)
class Link:
    """One bot connection: how to send it text, and the seats it plays (by match id)."""

    name: str
    send: Callable[[str], Awaitable[None]]
    number: int
    given: int = 0  # seats given to it so far: ties go to the connection given fewest (matches one after another share too)
    seats: dict[tuple[str, int], Seat] = field(default_factory=dict)  # (match id, seat) -> the seats it plays
    #: The last answer it sent naming a match that awaits no move of this connection (when, the match id): dropped,
    #: and told with the timeout of a move it then did not answer.
    dropped: tuple[float, str] | None = None


@dataclass(eq=False)
class Seat:
    """A seat of a match played by a pull agent: its bot connection (None while none is), its `start`, its pending `act`."""

    name: str
    key: tuple[str, int]  # (match id, seat)
    start: str
    link: Link | None = None
    act: str | None = None
    seq: int | None = None
    answer: asyncio.Future[str] | None = None
    ever_linked: bool = False
    gone: str | None = None  # why its connection was closed for good (its token revoked): no waiting for a return


class _Gone(Exception):
    """The seat's connection was closed for a reason it cannot come back from (its token revoked)."""


async def _hello_line(reader: asyncio.StreamReader) -> bytes:
    """The relay's first line, the secret, read a byte at a time up to RELAY_HELLO_LIMIT (the later lines may be long,
    RELAY_LINE_LIMIT, but only once the secret is known: else any local process could make the server hold them)."""
    line = bytearray()
    while len(line) < RELAY_HELLO_LIMIT:
        byte = await reader.read(1)
        if not byte or byte == b"\n":
            return bytes(line)
        line += byte
    raise ValueError("the relay's hello is too long")


class Hub:
    """Bots by name, seats by (match id, seat), and the relay server the playing processes talk to."""

    def __init__(self) -> None:
        self.links: dict[str, list[Link]] = {}
        self.seats: dict[tuple[str, int], Seat] = {}
        self.arrivals: dict[str, asyncio.Event] = {}
        self.secret = secrets.token_urlsafe(24)
        self.stopping = False
        self.server: asyncio.AbstractServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.address = ""
        self._numbers = 0

    # ---- the relay: the playing processes' side ----

    async def start(self) -> str:
        """Listen for the playing processes on 127.0.0.1; returns the value of `HUB_ENV` for them."""
        self.loop = asyncio.get_running_loop()
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0, limit=RELAY_LINE_LIMIT)
        host, port = self.server.sockets[0].getsockname()[:2]
        self.address = f"{host}:{port} {self.secret}"
        return self.address

    def stop_soon(self) -> None:
        """The server is stopping: answer every pending and later request `server_stopping` (never the bot's fault)."""
        self.stopping = True
        for seat in self.seats.values():
            if seat.answer is not None and not seat.answer.done():
                seat.answer.set_exception(_Stopping())

    def stop_threadsafe(self) -> None:
        """`stop_soon` from a signal handler or another thread (before the server closes the bots' sockets)."""
        self.stopping = True
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.stop_soon)

    async def close(self) -> None:
        self.stop_soon()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        mine: set[tuple[str, int]] = set()  # the seats this playing process opened: forgotten when it goes
        try:
            _nodelay(writer)
            hello = json.loads(await _hello_line(reader) or b"null")
            secret = str(hello.get("secret", "")).encode("utf-8", "replace") if isinstance(hello, dict) else b""
            if not secrets.compare_digest(secret, self.secret.encode()):
                return
            while line := await reader.readline():
                request = json.loads(line)
                reply = await self._request(request, mine)
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, ValueError, RecursionError, asyncio.IncompleteReadError):
            pass
        except (KeyError, TypeError, AttributeError) as exc:  # a request without op, message, match_id or seat
            log.warning("relay: a malformed request (%s: %s): connection closed", type(exc).__name__, exc)
        finally:
            for key in mine:
                self._forget(key)
            writer.close()

    async def _request(self, request: dict[str, Any], mine: set[tuple[str, int]]) -> dict[str, Any]:
        if self.stopping:
            return {"fault": SERVER_STOPPING, "detail": "the server is stopping"}
        op, message = request["op"], request["message"]
        key = (message["match_id"], message["seat"])
        try:
            if op == "start":
                mine.add(key)
                return await self._start(request["agent"], key, message, request["deadline"])
            if op == "act":
                return await self._act(key, message, request["deadline"])
            if op == "end":
                self._end(key, message)
                mine.discard(key)
                return {"ok": True}
        except _Stopping:
            return {"fault": SERVER_STOPPING, "detail": "the server is stopping"}
        return {"fault": "bad_request", "detail": f"unknown op {op!r}"}

    async def _start(self, name: str, key: tuple[str, int], message: dict[str, Any], deadline: float) -> dict[str, Any]:
        seat = self.seats[key] = Seat(name, key, json.dumps(message, separators=(",", ":")))
        if not self._links_of(name):
            arrived = self.arrivals.setdefault(name, asyncio.Event())
            try:
                await asyncio.wait_for(arrived.wait(), deadline)
            except TimeoutError:
                pass
        if seat.link is None and not await self._place(seat):
            del self.seats[key]
            return {"fault": "agent_disconnected", "detail": f"no bot is connected to this server as '{name}' (waited {deadline:g}s)"}
        return {"ok": True}

    async def _act(self, key: tuple[str, int], message: dict[str, Any], deadline: float) -> dict[str, Any]:
        seat = self.seats.get(key)
        if seat is None:
            return {"fault": "agent_disconnected", "detail": "the match was not started"}
        seat.act, seat.seq = json.dumps(message, separators=(",", ":")), message.get("seq")
        seat.answer = asyncio.get_running_loop().create_future()
        asked = time.monotonic()
        try:
            if seat.link is not None:
                await self._send(seat.link, seat.act)
            elif not await self._place(seat) and seat.gone is not None:
                return {"fault": "agent_disconnected", "detail": f"the bot '{seat.name}': {seat.gone}"}
            return {"answer": await asyncio.wait_for(asyncio.shield(seat.answer), deadline)}
        except _Gone as exc:
            return {"fault": "agent_disconnected", "detail": f"the bot '{seat.name}': {exc}"}
        except TimeoutError:
            if seat.link is None:
                return {"fault": "agent_disconnected",
                        "detail": f"the bot '{seat.name}' disconnected and did not come back within {deadline:g}s"}
            dropped = seat.link.dropped
            note = "" if dropped is None or dropped[0] < asked else (
                f"; an answer naming match_id {dropped[1]!r}, which awaits no move of this connection, was dropped "
                f"(an answer names the match_id of the act it answers: {seat.key[0]!r})")  # fmt: skip
            return {"fault": "timeout", "detail": f"no answer within {deadline:g}s{note}"}
        finally:
            seat.act = seat.seq = seat.answer = None

    def _end(self, key: tuple[str, int], message: dict[str, Any]) -> None:
        seat = self.seats.get(key)
        if seat is not None and seat.link is not None:
            asyncio.ensure_future(self._send(seat.link, json.dumps(message, separators=(",", ":"))))
        self._forget(key)

    def _forget(self, key: tuple[str, int]) -> None:
        seat = self.seats.pop(key, None)
        if seat is not None and seat.link is not None:
            seat.link.seats.pop(key, None)

    # ---- the bots' side ----

    def _links_of(self, name: str) -> list[Link]:
        return self.links.get(name, [])

    async def _place(self, seat: Seat) -> bool:
        """Give the seat to its name's least busy connection: send `start`, then the pending `act` if any."""
        links = self._links_of(seat.name)
        if not links:
            return False
        link = min(links, key=lambda candidate: (len(candidate.seats), candidate.given, candidate.number))
        link.given += 1
        seat.link, seat.ever_linked, seat.gone = link, True, None
        link.seats[seat.key] = seat
        await self._send(link, seat.start)
        if seat.act is not None:
            await self._send(link, seat.act)
        return True

    async def _send(self, link: Link, text: str) -> None:
        try:
            await link.send(text)
        except Exception:  # the socket is going: `disconnected` moves its seats
            log.info("bot '%s' (connection %s): sending failed", link.name, link.number)

    async def connected(self, name: str, send: Callable[[str], Awaitable[None]]) -> Link:
        """A bot said hello as `name`: seats left without a connection of that name come to it."""
        self._numbers += 1
        link = Link(name, send, self._numbers)
        self.links.setdefault(name, []).append(link)
        for seat in list(self.seats.values()):
            if seat.name == name and seat.link is None and seat.ever_linked:
                await self._place(seat)
        arrived = self.arrivals.pop(name, None)
        if arrived is not None:
            arrived.set()
        return link

    async def disconnected(self, link: Link, gone: str | None = None) -> None:
        """The connection is gone: its seats go to another connection of the name, or wait for one; with `gone` (why
        it cannot come back: its token revoked) those left without a connection forfeit now, not at their deadline."""
        links = self.links.get(link.name, [])
        if link in links:
            links.remove(link)
        if not links:
            self.links.pop(link.name, None)
        orphans, link.seats = list(link.seats.values()), {}
        for seat in orphans:
            seat.link = None
            if not self.stopping and not await self._place(seat) and gone is not None:
                seat.gone = gone
                if seat.answer is not None and not seat.answer.done():
                    seat.answer.set_exception(_Gone(gone))

    def received(self, link: Link, text: str) -> None:
        """A bot's answer: to the pending act of the match it names (`match_id`), else to a pending act of this connection."""
        try:  # (an answer too long for any act is not parsed here, on the event loop: the act's own check refuses it)
            data = json.loads(text) if len(text) <= MAX_ANSWER_BYTES else None
        except (ValueError, RecursionError):  # not JSON, or arrays nested thousands deep: the act's own check says so
            data = None
        waiting = [seat for seat in link.seats.values() if seat.answer is not None and not seat.answer.done()]
        if isinstance(data, dict) and isinstance(data.get("match_id"), str):  # one act at a time per match
            named = data["match_id"]
            waiting = [seat for seat in waiting if seat.key[0] == named]
            if not waiting and not any(key[0] == named for key in link.seats):  # no match of this connection
                link.dropped = (time.monotonic(), named[:80])
            if waiting and "seq" in data and data["seq"] != waiting[0].seq:
                return  # an answer to an earlier act, sent again after a reconnection and answered already
        if waiting:
            waiting[0].answer.set_result(text)  # type: ignore[union-attr]

    def status(self) -> dict[str, Any]:
        """Connected bots by name (connections and seats in play): `GET /api/v1/bots`."""
        return {
            "bots": [{"name": name, "connections": len(links), "playing": sum(len(link.seats) for link in links)}
                     for name, links in sorted(self.links.items())],
        }  # fmt: skip


class _Stopping(Exception):
    pass


def _nodelay(writer: asyncio.StreamWriter) -> None:
    import socket

    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
