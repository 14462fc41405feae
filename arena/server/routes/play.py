"""Playing in the browser: sign in and out, the play pages, and their JSON API (`/api/v1/play`).

The pages post forms (with the form token, see arena.server.people); the table page's script long-polls
`GET /api/v1/play/{id}` and posts moves to `POST /api/v1/play/{id}/move`. The API takes a bearer token
too, so a person may play from a script. Bad input is a 4xx whose message and `field` name the field.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Path, Query, Request
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from arena.errors import ArenaError
from arena.library import catalog
from arena.library import tokens as tokens_library
from arena.library.storage import MAX_ID
from arena.server import people
from arena.server.bodies import NUL, Body, holds_nul
from arena.server.deps import TOKEN_RECHECK_SECONDS
from arena.server.errors import error, guess_field
from arena.server.play import Busy, Table, Tables
from arena.server.reply import reply
from arena.server.routes.bots import bot_specs
from arena.server.routes.pages import render

router = APIRouter(include_in_schema=False)
#: Signing in and out: open even on a `--private` server (whose reads need the very token it takes).
signin_router = APIRouter(include_in_schema=False)
api_router = APIRouter(prefix="/api/v1", tags=["play"])

GameId = Annotated[int, Path(ge=1, le=MAX_ID, description="The game's id (its tournament's id).")]
LONG_POLL = 20.0  # seconds a `GET /api/v1/play/{id}` waits for a change at most


class PlayCreate(Body):
    """A game for the signed-in person: the game spec, the opponents (agent specs or named agents), their own seat."""

    game: str = Field(min_length=1, max_length=500, examples=["connect_four"])
    against: str = Field(min_length=1, max_length=2000, examples=["minimax:depth=2"])
    seat: int = Field(default=0, ge=0, le=63)


class Move(Body):
    action: int = Field(ge=0, le=2**31, description="The action id, one of the pending move's legal ids.")


def play_field(message: str, field: str | None = None) -> str | None:
    """The form field a message is about (the play form's names: game, against, seat, action, name); `field`, the
    ArenaError's own, where it has one."""
    if field is not None:
        return {"agents": "against", "players": "against"}.get(field, field)
    named = re.match(r"(action|name|game|against|seat|form_token): ", message)
    if named:
        return named.group(1)
    if "--seat" in message or re.search(r"\bseats?\b", message) and "agent" not in message:
        return "seat"
    if "--against" in message:
        return "against"
    field = guess_field(message)
    return {"agents": "against", "agent": "against", "players": "against"}.get(field or "", field)


def form_field(exc: ArenaError, message: str) -> str | None:
    """The field a refusal of the play form is about (play_field); none for a person busy with another game, which is
    no field's fault."""
    return None if isinstance(exc, Busy) else play_field(message, exc.field)


def tables_of(request: Request) -> Tables:
    tables: Tables = request.app.state.tables
    return tables


def in_form_words(message: str) -> str:
    """A library message in the play form's words: `--seat must be...` -> `seat must be...`."""
    return re.sub(r"--(seat|against|game|name)\b", r"\1", message)


def refused(request: Request, exc: ArenaError) -> Response:
    message = in_form_words(str(exc))
    status = 409 if isinstance(exc, Busy) else 404 if message.startswith("no ") else 400
    return error(request, status, message, form_field(exc, message))


# ---- signing in and out ----


@signin_router.get("/signin")
def signin_page(request: Request, next: Annotated[str | None, Query(max_length=500)] = None) -> Response:
    return render(request, "signin.html", next=people.local_path(next), error=None)


@signin_router.post("/signin")
def signin(request: Request, token: Annotated[str, Form(max_length=500)] = "",
           next: Annotated[str | None, Form(max_length=500)] = None) -> Response:  # fmt: skip
    people.check_same_origin(request)
    token = token.strip()
    holder = tokens_library.check(request.app.state.database, token, "user") if token else None
    if holder is None:
        message = "token: unknown, revoked, or not a user token (`arena tokens create NAME` makes one)"
        return render(request, "signin.html", 401, next=people.local_path(next), error=message)
    response = RedirectResponse(people.local_path(next), 303)
    people.sign_in(response, token)
    return response


@signin_router.post("/signout")
def signout(request: Request, form_token: Annotated[str | None, Form(max_length=200)] = None) -> Response:
    people.check_form(request, form_token)
    response = RedirectResponse("/", 303)
    people.sign_out(response)
    return response


# ---- the pages ----


def form_choices(request: Request, bots: Sequence[str] = ()) -> dict[str, Any]:
    """The games and the agents a form offers: `bots` (the connected pull bots' specs, read on the event loop) first,
    then the agent types that play unattended, then the named agents."""
    registry, database = request.app.state.registry, request.app.state.database
    agents = catalog.agents(registry, database)
    types = [t["type"] for t in agents["types"] if t["type"] not in ("browser", "human", "pull", "http")]
    return {"games": catalog.games(registry), "agent_names": [*bots, *types, *(a["name"] for a in agents["named"])]}


def _new_page(request: Request, holder: tokens_library.Holder, status: int = 200, bots: Sequence[str] = (),
              **data: Any) -> Response:  # fmt: skip
    """The play form; `bots`: the connected pull bots' specs, offered first as opponents (read on the event loop)."""
    live = tables_of(request).live_of(holder.name)
    form = {"game": "tic_tac_toe", "against": "random", "seat": "0", **data.pop("form", {})}
    token = people.form_token(request, request.cookies.get(people.COOKIE, ""))
    return render(request, "play_new.html", status, person=holder.name, live=live, form=form, form_token=token,
                  error=data.get("error"), field=data.get("field"), **form_choices(request, bots))  # fmt: skip


@router.get("/play")
async def play_page(request: Request) -> Response:
    return await people.page_for_person(request, "/play", functools.partial(_new_page, bots=bot_specs(request)))


@router.post("/play")
async def play_start(request: Request, game: Annotated[str, Form(max_length=500)] = "",
                     against: Annotated[str, Form(max_length=2000)] = "", seat: Annotated[str, Form(max_length=20)] = "0",
                     form_token: Annotated[str | None, Form(max_length=200)] = None) -> Response:  # fmt: skip
    holder = await run_in_threadpool(people.person, request)
    people.check_form(request, form_token)
    form = {"game": game, "against": against, "seat": seat}
    try:
        if not game.strip():
            raise ArenaError("game: choose a game")
        if not against.strip():
            raise ArenaError("against: give an opponent (an agent spec such as random, or a named agent)")
        if not seat.strip().isdecimal():
            raise ArenaError(f"seat: a seat number (0 moves first), got {seat!r}")
        for name, value in form.items():
            if holds_nul(value):
                raise ArenaError(f"{name}: {NUL}")
        table = await tables_of(request).open(holder.name, game.strip(), against.strip(), int(seat))
    except ArenaError as exc:
        message = in_form_words(str(exc))
        status = 409 if isinstance(exc, Busy) else 400
        return await run_in_threadpool(functools.partial(_new_page, request, holder, status, bot_specs(request), form=form,
                                                         error=message, field=form_field(exc, message)))  # fmt: skip
    return RedirectResponse(f"/play/{table.id}", 303)


@router.get("/play/{game_id}")
async def table_page(request: Request, game_id: GameId) -> Response:
    holder = await run_in_threadpool(people.signed_in, request)
    if holder is None:
        return RedirectResponse(f"/signin?next=/play/{game_id}", 303)
    try:
        table = tables_of(request).get(game_id, holder.name)
    except ArenaError as exc:
        return refused(request, exc)
    token = people.form_token(request, request.cookies.get(people.COOKIE, ""))
    return render(request, "play.html", t=table.snapshot(), form_token=token)


# ---- the JSON API the page uses ----


async def _table(request: Request, game_id: int) -> tuple[Table, Tables]:
    holder = await run_in_threadpool(people.person, request)
    tables = tables_of(request)
    return tables.get(game_id, holder.name), tables


@api_router.post("/play", status_code=201, summary="Start a game for the signed-in person (a user token) against agents")
async def api_start(request: Request, holder: Annotated[tokens_library.Holder, Depends(people.person)], body: PlayCreate) -> Response:
    people.check_form(request, None)  # (the person is known first, as a dependency: no token, a 401 before any 422)
    try:
        table = await tables_of(request).open(holder.name, body.game, body.against, body.seat)
    except ArenaError as exc:
        return refused(request, exc)
    return reply(table.snapshot(), 201, {"Location": f"/api/v1/play/{table.id}"})


@api_router.get("/play/{game_id}", summary="A game as its person sees it; with `seen`, waits (up to `wait` s) until it changes")
async def api_state(request: Request, game_id: GameId, seen: Annotated[int, Query(ge=-1)] = -1,
                    wait: Annotated[float, Query(ge=0, le=LONG_POLL)] = 0) -> Response:  # fmt: skip
    try:
        table, tables = await _table(request, game_id)
    except ArenaError as exc:
        return refused(request, exc)
    if not (wait > 0 and seen >= 0):
        return reply(table.snapshot())
    deadline = time.monotonic() + wait
    while True:  # in slices: a token revoked while it waits answers 401 (not the game) within the recheck interval
        state = await tables.watch(table, seen, max(0.0, min(TOKEN_RECHECK_SECONDS, deadline - time.monotonic())))
        await run_in_threadpool(people.person, request)
        if state["version"] != seen or time.monotonic() >= deadline:
            return reply(state)


@api_router.post("/play/{game_id}/move", summary="Play a move: one of the pending move's legal action ids")
async def api_move(request: Request, game_id: GameId, body: Move) -> Response:
    try:
        table, tables = await _table(request, game_id)
        people.check_form(request, None)
        tables.move(table, body.action)
    except ArenaError as exc:
        return refused(request, exc)
    return reply(table.snapshot())


@api_router.post("/play/{game_id}/leave", summary="Leave the game: the person forfeits it (agent_disconnected)")
async def api_leave(request: Request, game_id: GameId) -> Response:
    try:
        table, tables = await _table(request, game_id)
        people.check_form(request, None)
        tables.leave(table, "left the game")
    except ArenaError as exc:
        return refused(request, exc)
    return reply(table.snapshot())
