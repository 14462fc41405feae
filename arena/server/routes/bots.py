"""Pull bots: the WebSocket they connect to (`/api/v1/bots/connect`), who is connected (`GET /api/v1/bots`), and
`arena check-agent`'s checks played against a connected bot (`POST /api/v1/bots/{name}/check`).

A bot's first message is `{"type": "hello", "protocol": 1, "agent": NAME, "token": BOT_TOKEN}` (or the
token in an `Authorization: Bearer` header); NAME must be the bot token's name. The server answers
`{"type": "welcome", ...}`, then sends `start`, `act` and `end` messages (arena.remote.protocol) for
every seat of `pull:name=NAME`; the bot answers each `act` with `{"action": ID, "match_id": ...}`.
A refused hello gets `{"type": "error", "error": ...}` and the socket is closed (code 1008). Every message, the hello
too, may come as a text frame or as a binary one holding UTF-8 text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, WebSocket, WebSocketDisconnect
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.types import Message

from arena.library import tokens
from arena.match import ArenaFault, ServerStopping
from arena.params import MAX_NAME_LENGTH, check_name
from arena.remote.browser import HUB_PREFIX as BROWSER_PREFIX
from arena.remote.browser import bots_only
from arena.remote.check import MAX_SERVER_SEEDS, MAX_SERVER_TIME_PER_MOVE, check_agent_spec
from arena.remote.hub import Hub
from arena.remote.protocol import PROTOCOL
from arena.server.bodies import Body
from arena.server.deps import TOKEN_RECHECK_SECONDS, require_token
from arena.server.errors import error
from arena.server.reply import reply

router = APIRouter(prefix="/api/v1", tags=["bots"])
#: The WebSocket checks its own credentials (the token comes in the hello): no read-access dependency.
socket_router = APIRouter(prefix="/api/v1", tags=["bots"])
HELLO_SECONDS = 30.0  # a connection that says nothing is closed after this long
HELLO_BYTES = 64 * 1024  # a hello holds a name and a token: a longer first message is not parsed (on the event loop)
POLICY_VIOLATION = 1008


def _hub(connection: WebSocket | Request) -> Hub | None:
    return getattr(connection.app.state, "bot_hub", None)


def frame_text(message: Message) -> str | None:
    """A received frame's text: a binary frame's bytes are read as UTF-8 (the hello's as every later message's)."""
    text = message.get("text")
    if text is None and message.get("bytes") is not None:
        text = message["bytes"].decode("utf-8", "replace")
    return text


async def _refuse(websocket: WebSocket, error: str) -> None:
    await websocket.send_text(json.dumps({"type": "error", "error": error}))
    await websocket.close(POLICY_VIOLATION)


async def _hello(websocket: WebSocket) -> tuple[str, str] | None:
    """The name the bot may play as and its token, or None (refused, and told why)."""
    try:
        message = await asyncio.wait_for(websocket.receive(), HELLO_SECONDS)
    except TimeoutError:
        await _refuse(websocket, f"no hello within {HELLO_SECONDS:g}s")
        return None
    if message["type"] == "websocket.disconnect":
        return None
    text = frame_text(message) or ""
    if len(text) > HELLO_BYTES:  # parsing 16 MiB of JSON held every request of the server for about 2 s
        await _refuse(websocket, f"the hello is at most {HELLO_BYTES // 1024} KiB: "
                                 '{"type": "hello", "agent": NAME, "token": TOKEN}')
        return None
    try:
        hello = json.loads(text)
    except (ValueError, RecursionError):
        await _refuse(websocket, 'the first message must be JSON: {"type": "hello", "agent": NAME, "token": TOKEN}')
        return None
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        await _refuse(websocket, 'the first message must be {"type": "hello", "agent": NAME, "token": TOKEN}')
        return None
    if hello.get("protocol", PROTOCOL) != PROTOCOL:
        await _refuse(websocket, f"protocol: this server speaks protocol {PROTOCOL}, not {hello.get('protocol')!r}")
        return None
    header = websocket.headers.get("authorization", "")
    token = hello.get("token") or (header[7:].strip() if header.lower().startswith("bearer ") else "")
    if not isinstance(token, str) or not token:
        await _refuse(websocket, "token: a bot token is needed (`arena tokens create --bot NAME`)")
        return None
    holder = await run_in_threadpool(tokens.check, websocket.app.state.database, token, "bot")
    if holder is None:
        await _refuse(websocket, "token: unknown, revoked, or not a bot token")
        return None
    name = hello.get("agent", holder.name)
    if name != holder.name:
        await _refuse(websocket, f"agent: this token plays as '{holder.name}', not {name!r}")
        return None
    if name.startswith(BROWSER_PREFIX):  # those hub names are the play page's (arena.remote.browser)
        await _refuse(websocket, f"agent: names starting with '{BROWSER_PREFIX}' are people's on the play page, not bots'")
        return None
    return holder.name, token


REVOKED = "its token was revoked while connected"


async def _until_revoked(websocket: WebSocket, token: str) -> None:
    """Check the bot's token every TOKEN_RECHECK_SECONDS; once it is revoked, tell the bot and close (its seats in play
    forfeit as a disconnect at once: it cannot come back with that token)."""
    while True:
        await asyncio.sleep(TOKEN_RECHECK_SECONDS)
        if await run_in_threadpool(tokens.check, websocket.app.state.database, token, "bot") is None:
            await _refuse(websocket, "token: revoked while connected")
            return


@socket_router.websocket("/bots/connect")
async def connect(websocket: WebSocket) -> None:
    await websocket.accept()
    hub = _hub(websocket)
    if hub is None or hub.stopping:
        await _refuse(websocket, "this server takes no bots (it is stopping, or it was started without its hub)")
        return
    said = await _hello(websocket)
    if said is None:
        return
    name, token = said
    await websocket.send_text(json.dumps({"type": "welcome", "protocol": PROTOCOL, "agent": name}))
    link = await hub.connected(name, websocket.send_text)
    watcher = asyncio.ensure_future(_until_revoked(websocket, token))
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = frame_text(message)
            if text is not None:
                hub.received(link, text)
    except WebSocketDisconnect:
        pass
    finally:
        revoked = watcher.done() and not watcher.cancelled() and watcher.exception() is None
        watcher.cancel()
        await hub.disconnected(link, REVOKED if revoked else None)


def connected(request: Request) -> dict[str, Any]:
    """The pull bots connected now (not the people at play pages, whose seats pass through the same hub). Call it on the
    event loop's thread, where the hub lives."""
    hub = _hub(request)
    return bots_only(hub.status()) if hub is not None else {"bots": []}


def bot_specs(request: Request) -> list[str]:
    """`pull:name=NAME` of each bot connected now (the play page offers them as opponents): on the event loop's thread."""
    return [f"pull:name={bot['name']}" for bot in connected(request)["bots"]]


@router.get("/bots", summary="Pull bots connected now, by name (connections, seats in play)")
async def connected_bots(request: Request) -> Response:  # async: the hub lives on the event loop's thread
    return reply(connected(request))


class BotCheck(Body):
    """The settings of `arena check-agent`: the game, matches per seat, the time per move and the network allowance."""

    game: str = Field(min_length=1, max_length=500, examples=["connect_four"])
    seeds: int = Field(default=3, ge=1, le=MAX_SERVER_SEEDS, description="Matches per seat.")
    time_per_move: float = Field(default=1.0, gt=0, le=MAX_SERVER_TIME_PER_MOVE, allow_inf_nan=False, description="Seconds.")
    network_allowance: float = Field(default=50.0, ge=0, le=10_000, allow_inf_nan=False,
                                      description="Milliseconds of round trip on top of time_per_move.")


BotName = Annotated[str, Path(min_length=1, max_length=MAX_NAME_LENGTH, description="The bot's name (its bot token's name).")]
AnyToken = Annotated[tokens.Holder, Depends(require_token(None))]


@router.post("/bots/{name:path}/check",  # (a path: a bot token's name may hold "/", sent as %2F)
             summary="Play a connected pull bot through `arena check-agent`'s checks (a user token, or the bot's own)")
async def check_bot(name: BotName, body: BotCheck, request: Request, holder: AnyToken) -> Response:
    """The bot plays every seat of `seeds` matches against random on this server (nothing is stored); the answer is
    `arena check-agent --json`'s report. Async: the hub lives on the event loop's thread; the matches play in a thread."""
    report = await check_report(request, holder, name, body)
    return report if isinstance(report, Response) else reply(report)


async def check_report(request: Request, holder: tokens.Holder, name: str, body: BotCheck) -> dict[str, Any] | Response:
    """check_agent_spec's report for the bot `name` connected here, asked for by `holder` (a user, or the bot itself);
    or the refusal (an error: JSON for the API, a page for a page). Call it on the event loop's thread."""
    check_name(name, "name: a bot's name", "name")
    if holder.kind != "user" and holder.name != name:
        return error(request, 403, f"name: a bot token checks only its own bot ('{holder.name}'), not '{name}'; a user "
                                   "token checks any", "name")  # fmt: skip
    hub = _hub(request)
    if hub is None or hub.stopping or not hub.links.get(name):
        return error(request, 409, f"name: no bot named '{name}' is connected to this server (GET /api/v1/bots lists "
                                   "those that are): connect it, then check it", "name")  # fmt: skip
    checking: set[str] = request.app.state.bot_checks  # names being checked (touched on the event loop's thread only)
    if name in checking:
        return error(request, 409, f"name: '{name}' is being checked already; ask again when that check ends", "name")
    checking.add(name)
    state = request.app.state
    try:
        report: dict[str, Any] = await run_in_threadpool(
            check_agent_spec, state.registry, state.database, f"pull:name={name}", body.game, body.seeds,
            body.time_per_move, body.network_allowance / 1000.0)  # fmt: skip
    except ServerStopping:
        return error(request, 503, "the server is stopping: check the bot again once it is back")
    except ArenaFault as exc:  # the server's own relay to its hub failed: no fault of the bot's
        return error(request, 503, f"the check could not be played: {exc}")
    finally:
        checking.discard(name)
    return report
