"""The web pages: server-rendered (readable without JavaScript), made live by a little vanilla JS.

Each view builds its data with the same library functions as the JSON API, then renders a template.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from arena.errors import ArenaError
from arena.leaderboard import rank_column
from arena.library import analysis, catalog, figures, ladders
from arena.library import matches as matches_library
from arena.library import tournaments as tournaments_library
from arena.library.storage import MAX_ID, Database
from arena.output import fmt
from arena.plugins import Registry
from arena.report import PLOT_KINDS
from arena.server import people
from arena.server.deps import DatabaseDep, RegistryDep
from arena.server.routes.bots import connected

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).parent.parent / "templates")
templates.env.filters["fmt"] = fmt
templates.env.globals["rank_column"] = rank_column  # the heading and note of the rank column, as the CLI's

#: The statuses a tournament can be cancelled in (arena.library.tournaments.cancel).
CANCELLABLE = ("queued", "running", "stopped")
SYSTEM_NAMES = {"bt": "Bradley-Terry", "elo": "Elo", "trueskill": "TrueSkill"}
PAGE = 50


def render(request: Request, template: str, status_code: int = 200, **data: Any) -> Response:
    return templates.TemplateResponse(request, template, data, status_code=status_code)


def intervals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each agent's Bradley-Terry interval and rating sit on a common axis, in percent."""
    if not rows:
        return {}
    low = min(r["bt_low"] for r in rows)
    high = max(r["bt_high"] for r in rows)
    span = (high - low) or 1.0

    def at(value: float) -> float:
        return round(2 + 96 * (value - low) / span, 2)

    return {"low": low, "high": high,
            "rows": {r["agent"]: (at(r["bt_low"]), at(r["bt"]), at(r["bt_high"])) for r in rows}}  # fmt: skip


def heat(data: dict[str, Any]) -> list[list[tuple[Any, str]]]:
    """Each net-wins cell with its colour: green where the row agent won more, red where it lost more."""
    values = [v for row in data["values"] for v in row if v is not None]
    scale = max((abs(v) for v in values), default=1) or 1
    cells = []
    for row in data["values"]:
        line = []
        for v in row:
            if v is None:
                line.append((None, "#eee"))
            else:
                t = abs(v) / scale
                r, g, b = (int(255 - 120 * t), 255, int(255 - 120 * t)) if v > 0 else (255, int(255 - 140 * t), int(255 - 140 * t))
                line.append((v, f"rgb({r},{g},{b})"))
        cells.append(line)
    return cells


@router.get("/")
def home(request: Request, database: DatabaseDep, registry: RegistryDep) -> Response:
    tournaments = tournaments_library.listing(database)
    live = [t for t in tournaments if t["status"] in ("queued", "running")]
    recent = [t for t in reversed(tournaments) if t["status"] not in ("queued", "running")][:20]
    played_games = sorted({t["game_spec"] for t in tournaments})
    return render(request, "home.html", games=catalog.games(registry), live=live, recent=recent, played_games=played_games)


@router.get("/agents")
def agents_page(request: Request, database: DatabaseDep, registry: RegistryDep) -> Response:
    """The agent types (with their parameters) and the named agents: what an agent spec may say."""
    return render(request, "agents.html", **catalog.agents(registry, database))


@router.get("/bots")
async def bots_page(request: Request) -> Response:  # async: the hub lives on the event loop's thread
    bots = connected(request)["bots"]
    holder = await run_in_threadpool(people.signed_in, request) if bots else None
    token = people.form_token(request, request.cookies.get(people.COOKIE, "")) if holder is not None else None
    server = str(request.base_url).rstrip("/")
    return render(request, "bots.html", bots=bots, server=server, socket="ws" + server[4:], form_token=token,
                  games=catalog.games(request.app.state.registry))  # fmt: skip


@router.get("/tournaments/{key}")
def tournament_page(request: Request, key: str, database: DatabaseDep, registry: RegistryDep,
                    offset: Annotated[int, Query(ge=0)] = 0,
                    joined: Annotated[str | None, Query(max_length=2000)] = None) -> Response:  # fmt: skip
    return tournament_view(request, key, database, registry, offset, join={"joined": joined} if joined else None)


def tournament_view(request: Request, key: str, database: Database, registry: Registry, offset: int = 0,
                    status_code: int = 200, join: dict[str, Any] | None = None) -> Response:  # fmt: skip
    """A tournament's page. Signed in, its owner gets a Cancel button while it can be cancelled, and anyone a Join form
    while it is a live ladder; `join`: what the form said (`agent` given and its `error`, or the label `joined`)."""
    t = tournaments_library.one(database, key)
    data: dict[str, Any] = {"t": t, "rows": [], "heat": None, "kinds": PLOT_KINDS, "page": None, "cancel_token": None,
                            "join_token": None, "join": join or {}}  # fmt: skip
    ladder = t["format"] == "ladder" and t["status"] in ("queued", "running")
    owned = t["owner"] is not None and t["status"] in CANCELLABLE
    holder = people.signed_in(request) if ladder or owned else None
    if holder is not None:
        token = people.form_token(request, request.cookies.get(people.COOKIE, ""))
        data["cancel_token"] = token if owned and holder.name == t["owner"] else None
        data["join_token"] = token if ladder else None
    if data["join"].get("joined") and data["join"]["joined"] not in t["agents"] + ladders.waiting(database, t["id"]):
        data["join"] = {}  # (said only of an agent that did join: the address is anyone's to write)
    if t["done"]:
        selection = analysis.select(database, registry, str(t["id"]))
        data["rows"], data["warning"] = analysis.leaderboard_and_warning(database, selection, "bt")
        data["bars"] = intervals(data["rows"])
        data["matrix"] = analysis.matrix_of(database, selection, "net-wins")
        data["heat"] = heat(data["matrix"])
        data["page"] = matches_library.match_page(database, selection, None, PAGE, offset)
    return render(request, "tournament.html", status_code, **data)


@router.get("/tournaments/{key}/figures/{kind}.png")
def figure(key: str, kind: Annotated[str, PathParam(pattern="^[a-z-]+$")], database: DatabaseDep, registry: RegistryDep) -> Response:
    if kind not in PLOT_KINDS:
        raise ArenaError(f"unknown figure '{kind}' (choose: {', '.join(PLOT_KINDS)})")
    png = figures.figure(kind, figures.aggregates(database, registry, key))
    return Response(png, media_type="image/png")


@router.get("/leaderboard")
def leaderboard_page(request: Request, database: DatabaseDep, registry: RegistryDep,
                     game: Annotated[str | None, Query(max_length=500)] = None,
                     tournament: Annotated[str | None, Query(max_length=200)] = None,
                     system: Literal["bt", "elo", "trueskill"] = "bt") -> Response:  # fmt: skip
    tournaments = tournaments_library.listing(database)
    played_games = sorted({t["game_spec"] for t in tournaments})
    if game is None and tournament is None and tournaments:
        game = tournaments[-1]["game_spec"]
    rows: list[dict[str, Any]] = []
    title, warning = "no tournaments yet", None
    if game is not None or tournament is not None:
        selection = analysis.select(database, registry, tournament, game)
        (rows, warning), title = analysis.leaderboard_and_warning(database, selection, system), selection.title
    return render(request, "leaderboard.html", rows=rows, title=title, game=game, tournament=tournament, system=system,
                  systems=SYSTEM_NAMES, played_games=played_games, bars=intervals(rows), warning=warning)  # fmt: skip


@router.get("/matches/{match_id}")
def match_page(request: Request, match_id: Annotated[int, PathParam(ge=1, le=MAX_ID)], database: DatabaseDep,
               registry: RegistryDep) -> Response:  # fmt: skip
    replay = matches_library.replay(database, registry, match_id, positions=True)
    return render(request, "match.html", r=replay)


@router.get("/agents/{name:path}")  # (a label may hold "/": http:url=http://..., linear:weights=dir/w.json)
def agent_page(request: Request, name: str, database: DatabaseDep, registry: RegistryDep,
               game: Annotated[str | None, Query(max_length=500)] = None,
               tournament: Annotated[str | None, Query(max_length=200)] = None,
               offset: Annotated[int, Query(ge=0)] = 0) -> Response:  # fmt: skip
    if game is None and tournament is None:  # the agent's latest tournament
        mine = [t for t in tournaments_library.listing(database) if name in t["agents"]]
        if not mine:
            raise ArenaError(f"no tournament with an agent named '{name}'")
        tournament = str(mine[-1]["id"])
    summary = analysis.agent_results(database, registry, name, tournament, game)
    selection = analysis.select(database, registry, tournament, game)
    page = matches_library.match_page(database, selection, name, PAGE, offset)
    return render(request, "agent.html", s=summary, page=page, game=game, tournament=tournament)
