"""Tournaments: list, one, submit to the queue, cancel, join a ladder, and live progress as Server-Sent Events."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Request
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from arena.errors import ArenaError
from arena.library import ladders, tokens
from arena.library import tournaments as library
from arena.library.storage import id_from_text
from arena.match import DEFAULT_MAX_TURNS
from arena.params import MAX_TIME_PER_MOVE
from arena.server.bodies import Body
from arena.server.deps import TOKEN_RECHECK_SECONDS, DatabaseDep, RegistryDep, SettingsDep, Writer, presented_token
from arena.server.errors import error
from arena.server.reply import reply
from arena.tournament import MAX_SCHEDULED, MAX_TURNS, Format

router = APIRouter(prefix="/api/v1", tags=["tournaments"])

Key = Annotated[str, Path(max_length=200, description="Tournament id or name.")]
FINAL = ("done", "cancelled", "failed")


class TournamentCreate(Body):
    """The settings of `arena run-tournament`, checked by the same code."""

    game: str = Field(min_length=1, max_length=500, examples=["connect_four"])
    agents: list[Annotated[str, Field(min_length=1, max_length=2000)]] = Field(
        min_length=1, max_length=200, examples=[["random", "greedy", "minimax:depth=2"]])
    rounds: int = Field(default=1, ge=1, le=1_000_000)
    seed: int = Field(default=0, ge=-(2**63), le=2**63 - 1)
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=MAX_TURNS)
    time_per_move: float | None = Field(default=None, gt=0, le=MAX_TIME_PER_MOVE, allow_inf_nan=False)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    format: Format = "round-robin"
    challenger: str | None = Field(default=None, min_length=1, max_length=2000)
    players: int | None = Field(default=None, ge=1, le=64)
    budget: int | None = Field(default=None, ge=1, le=MAX_SCHEDULED,
                               description="Matches in all: needed by format adaptive; a ladder without one plays until cancelled.")
    openings: str | list[Annotated[str, Field(max_length=10_000)]] | None = Field(
        default=None, min_length=1, max_length=100_000,
        description="random:N, or the openings themselves: one string per opening, its plies as in a --openings file "
                    "(a server opens no file a request names).")  # fmt: skip


@router.get("/tournaments", summary="Every tournament with its game spec, agents, status and progress")
def list_tournaments(database: DatabaseDep) -> Response:
    return reply(library.listing(database))


@router.get("/tournaments/{key}", summary="One tournament; status is queued, running, stopped, done, cancelled or failed")
def one_tournament(key: Key, database: DatabaseDep) -> Response:
    return reply(library.one(database, key))


@router.post("/tournaments", status_code=201, summary="Queue a tournament (needs a token); the server plays it")
def create_tournament(body: TournamentCreate, request: Request, registry: RegistryDep, database: DatabaseDep,
                      settings: SettingsDep, holder: Writer) -> Response:  # fmt: skip
    if isinstance(body.openings, str) and not body.openings.startswith("random:"):
        return error(request, 400, "openings: give random:N, or a list of openings (one string of plies each); "
                     "the server opens no file a request names", "openings")  # fmt: skip
    created = library.submit(registry, database, **body.model_dump(), owner=holder.name, reach=settings.reach)
    return reply(created, 201, {"Location": f"/api/v1/tournaments/{created['id']}"})


@router.post("/tournaments/{key}/cancel",
             summary="Cancel a queued, running or stopped tournament (needs the token that submitted it: another gets 403)")
def cancel_tournament(key: Key, database: DatabaseDep, holder: Writer) -> Response:
    return reply(library.cancel(database, key, holder.name))


class LadderJoin(Body):
    """An agent to join a ladder at its next batch boundary."""

    agent: str = Field(min_length=1, max_length=2000, examples=["minimax:depth=2"],
                       description="An agent spec or a named agent, checked as tournament creation checks agents.")


@router.post("/tournaments/{key}/agents", status_code=201,
             summary="Join a ladder (needs a token): the agent plays the field at the ladder's next batch boundary")
def join_ladder(key: Key, body: LadderJoin, request: Request, registry: RegistryDep, database: DatabaseDep,
                settings: SettingsDep, _holder: Writer) -> Response:  # fmt: skip
    try:
        joined = ladders.join(registry, database, key, body.agent, settings.reach)
    except ArenaError as exc:
        return error(request, *join_refusal(exc))
    return reply(joined, 201, {"Location": f"/api/v1/tournaments/{joined['id']}"})


def join_refusal(exc: ArenaError) -> tuple[int, str, str]:
    """(status, message, field) of a refused join: 409 for an agent in the ladder already, 404 for no such ladder, else
    400; the field is `tournament` where the ladder is at fault (none, finished, full), else `agent`."""
    message = str(exc)
    status = 409 if isinstance(exc, ladders.AlreadyIn) else 404 if message.startswith("no ") else 400
    about_ladder = status == 404 or exc.field == "tournament" or re.match(r"(tournament|ladder) \d+ ", message)
    return status, message, "tournament" if about_ladder else "agent"


def _existing(key: Key, database: DatabaseDep) -> int:
    """The tournament's id, or 404 before any event is sent."""
    return int(library.one(database, key)["id"])


def _event(status: str, done: int, total: int) -> ServerSentEvent:
    data = {"status": status, "done": done, "matches": total, "progress": done / total if total else 1.0}
    return ServerSentEvent(data=data, event="end" if status in FINAL else "progress", id=str(done))


@router.get("/tournaments/{key}/events", response_class=EventSourceResponse,
            summary="Live progress: an event (id = matches stored) whenever matches are stored or the status changes")
async def tournament_events(
    tournament_id: Annotated[int, Depends(_existing)], request: Request, database: DatabaseDep, settings: SettingsDep,
    last_event_id: Annotated[str | None, Header()] = None,
) -> AsyncIterator[ServerSentEvent]:  # fmt: skip
    seen = id_from_text(last_event_id) if last_event_id else None  # not a count of matches: start afresh
    status_seen: str | None = "running" if seen is not None else None  # a reconnect already had the running events
    recheck = time.monotonic() + TOKEN_RECHECK_SECONDS
    while True:
        if settings.private and time.monotonic() >= recheck:  # a token revoked since the stream opened ends it
            recheck = time.monotonic() + TOKEN_RECHECK_SECONDS
            if await run_in_threadpool(tokens.check, database, presented_token(request) or "") is None:
                return
        status, done, total = await run_in_threadpool(library.progress, database, tournament_id)
        if done != seen or status != status_seen:
            yield _event(status, done, total)
            seen, status_seen = done, status
        if status in FINAL or await request.is_disconnected():
            return
        await asyncio.sleep(settings.poll_seconds)
