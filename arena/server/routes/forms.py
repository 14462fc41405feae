"""The forms that act, for a person signed in with a user token: queue a tournament (`/new`: the settings of `POST
/api/v1/tournaments` as form fields), cancel one's own from its page (`POST /tournaments/{id}/cancel`), join a
ladder there (`POST /tournaments/{id}/agents`), and check a connected bot (`POST /bots/{name}/check`). Each calls the
function its API route calls.

A refusal shows the form again with the message and the field it names; nothing is written. The person's token's
name is the tournament's owner, as over the API; the form token guards every post (arena.server.people).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Path, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from arena.errors import ArenaError, shown
from arena.library import ladders, tokens
from arena.library import tournaments as library
from arena.remote.check import MAX_SERVER_SEEDS
from arena.server import people
from arena.server.bodies import NUL, holds_nul
from arena.server.errors import error, refusal
from arena.server.routes.bots import BotCheck, bot_specs, check_report
from arena.server.routes.pages import render, tournament_view
from arena.server.routes.play import form_choices
from arena.server.routes.tournaments import join_refusal
from arena.tournament import FORMATS

router = APIRouter(include_in_schema=False)

#: The form's fields and what an empty one stands for (the API's defaults).
DEFAULTS = {"game": "connect_four", "agents": "random,greedy", "rounds": "1", "seed": "0", "name": "", "format": "round-robin",
            "players": "", "challenger": "", "budget": "", "time_per_move": "", "openings": ""}  # fmt: skip
Text = Annotated[str, Form(max_length=2000)]


def _page(request: Request, holder: tokens.Holder, status: int = 200, form: dict[str, str] | None = None,
          message: str | None = None, field: str | None = None, bots: Sequence[str] = ()) -> Response:  # fmt: skip
    """The New tournament form; `bots`: the connected pull bots' specs, offered first (read on the event loop)."""
    token = people.form_token(request, request.cookies.get(people.COOKIE, ""))
    return render(request, "tournament_new.html", status, person=holder.name, form={**DEFAULTS, **(form or {})},
                  formats=FORMATS, form_token=token, error=message, field=field, **form_choices(request, bots))  # fmt: skip


def _number(form: dict[str, str], field: str, kind: type[int] | type[float]) -> Any:
    """The field as a number (None when empty), or an ArenaError naming it."""
    text = form[field].strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise ArenaError(f"{field}: {'a whole number' if kind is int else 'a number'}, got {text!r}", field) from None


def settings(form: dict[str, str]) -> dict[str, Any]:
    """The keyword arguments of library.submit from the form's fields (empty: the API's default)."""
    for field, value in form.items():
        if holds_nul(value):
            raise ArenaError(f"{field}: {NUL}", field)
    openings = form["openings"].strip() or None
    if openings is not None and not openings.startswith("random:"):
        raise ArenaError("openings: random:N (N random plies before each pair of matches); the server opens no file", "openings")
    rounds, seed = _number(form, "rounds", int), _number(form, "seed", int)
    return {"game": form["game"].strip(), "agents": form["agents"].strip(), "rounds": 1 if rounds is None else rounds,
            "seed": 0 if seed is None else seed, "name": form["name"].strip() or None, "format": form["format"],
            "players": _number(form, "players", int), "challenger": form["challenger"].strip() or None,
            "budget": _number(form, "budget", int),
            "time_per_move": _number(form, "time_per_move", float), "openings": openings}  # fmt: skip


@router.get("/new")
async def new_page(request: Request) -> Response:
    return await people.page_for_person(request, "/new", functools.partial(_page, bots=bot_specs(request)))


@router.post("/new")
async def new_tournament(request: Request, game: Text = "", agents: Text = "", rounds: Text = "", seed: Text = "",
                         name: Text = "", format: Text = "round-robin", players: Text = "", challenger: Text = "",
                         budget: Text = "",
                         time_per_move: Text = "", openings: Text = "",
                         form_token: Annotated[str | None, Form(max_length=200)] = None) -> Response:  # fmt: skip
    holder = await run_in_threadpool(people.person, request)
    people.check_form(request, form_token)
    form = {"game": game, "agents": agents, "rounds": rounds, "seed": seed, "name": name, "format": format,
            "players": players, "challenger": challenger, "budget": budget, "time_per_move": time_per_move,
            "openings": openings}  # fmt: skip
    reach = request.app.state.settings.reach
    try:
        created = await run_in_threadpool(lambda: library.submit(request.app.state.registry, request.app.state.database,
                                                                 **settings(form), owner=holder.name, reach=reach))  # fmt: skip
    except ArenaError as exc:  # the form again, as a form's refusal (400), in the API's words
        _status, message, field = refusal(exc)
        return await run_in_threadpool(_page, request, holder, 400, form, message, field, bot_specs(request))
    return RedirectResponse(f"/tournaments/{created['id']}", 303)


@router.post("/tournaments/{key}/cancel")
async def cancel_tournament(request: Request, key: Annotated[str, Path(max_length=200)],
                            form_token: Annotated[str | None, Form(max_length=200)] = None) -> Response:  # fmt: skip
    """Cancel the person's own tournament (another's: 403, a page saying whose it is: the app's refusal, as over the
    API), then back to its page."""
    holder = await run_in_threadpool(people.person, request)
    people.check_form(request, form_token)
    cancelled = await run_in_threadpool(library.cancel, request.app.state.database, key, holder.name)
    return RedirectResponse(f"/tournaments/{cancelled['id']}", 303)


@router.post("/tournaments/{key}/agents")
async def join_ladder(request: Request, key: Annotated[str, Path(max_length=200)], agent: Text = "",
                      form_token: Annotated[str | None, Form(max_length=200)] = None) -> Response:  # fmt: skip
    """Join a ladder with an agent (any person signed in, as `POST /api/v1/tournaments/{id}/agents`); back to its page,
    which says the agent joins at the next batch boundary, or shows the form again with the refusal."""
    await run_in_threadpool(people.person, request)
    people.check_form(request, form_token)
    state = request.app.state
    try:
        if holds_nul(agent):
            raise ArenaError(f"agent: {NUL}", "agent")
        joined = await run_in_threadpool(ladders.join, state.registry, state.database, key, agent, state.settings.reach)
    except ArenaError as exc:
        status, message, field = join_refusal(exc)
        if status == 404:
            return error(request, status, message, field)
        join = {"agent": agent, "error": message, "field": field}
        return await run_in_threadpool(tournament_view, request, key, state.database, state.registry, 0, status, join)
    label = joined["joining"][-1] if joined.get("joining") else agent
    return RedirectResponse(f"/tournaments/{joined['id']}?joined={quote(str(label))}", 303)


@router.post("/bots/{name:path}/check")  # (a bot's name may hold "/")
async def check_bot(request: Request, name: Annotated[str, Path(max_length=200)], game: Text = "", seeds: Text = "3",
                    form_token: Annotated[str | None, Form(max_length=200)] = None) -> Response:  # fmt: skip
    """`arena check-agent` on a connected bot (as `POST /api/v1/bots/{name}/check`): a page with its report."""
    holder = await run_in_threadpool(people.person, request)
    people.check_form(request, form_token)
    count = seeds.strip()
    if not count.isdecimal() or not 1 <= int(count) <= MAX_SERVER_SEEDS:
        return error(request, 400, f"seeds: a whole number from 1 to {MAX_SERVER_SEEDS}, got {shown(seeds)!r}", "seeds")
    if not game.strip() or holds_nul(game):
        return error(request, 400, "game: give a game spec, e.g. connect_four", "game")
    report = await check_report(request, holder, name, BotCheck(game=game.strip(), seeds=int(count)))
    return report if isinstance(report, Response) else render(request, "bot_check.html", r=report)
