"""Leaderboard, matrix, statistics, seats and Elo history of a tournament (default: the latest) or a game."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from arena.errors import about
from arena.library import analysis
from arena.results import Selection
from arena.server.answers import Answers
from arena.server.deps import DatabaseDep, RegistryDep
from arena.server.reply import reply
from arena.stats import MatrixKind

router = APIRouter(prefix="/api/v1", tags=["results"])

TournamentQ = Annotated[str | None, Query(description="Tournament id or name (default: the latest).", max_length=200)]
GameQ = Annotated[str | None, Query(description="Every tournament's matches of this game spec.", max_length=500)]


def answers(request: Request) -> Answers:
    return request.app.state.answers


@router.get("/leaderboard", summary="`arena leaderboard --json` (`weighted=true`: `--weighted`)")
async def leaderboard(request: Request, tournament: TournamentQ = None, game: GameQ = None,
                      system: Literal["bt", "elo", "trueskill"] = "bt", weighted: bool = False) -> Response:  # fmt: skip
    database, registry = request.app.state.database, request.app.state.registry

    def rows(selection: Selection) -> Response:
        with about("weighted"):  # (the only one of these that can refuse here: not an adaptive tournament)
            return reply(analysis.leaderboard_and_warning(database, selection, system, weighted)[0])

    return await answers(request).get(request, ("leaderboard", tournament, game, system, weighted),
                                      lambda: analysis.select(database, registry, tournament, game), rows)  # fmt: skip


@router.get("/matrix", summary="`arena matrix --kind K --json`")
async def matrix(request: Request, tournament: TournamentQ = None, game: GameQ = None,
                 kind: MatrixKind = "net-wins") -> Response:  # fmt: skip
    database, registry = request.app.state.database, request.app.state.registry
    return await answers(request).get(request, ("matrix", tournament, game, kind),
                                      lambda: analysis.select(database, registry, tournament, game),
                                      lambda selection: reply(analysis.matrix_of(database, selection, kind)))  # fmt: skip


@router.get("/stats", summary="`arena stats --json`")
def stats(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None) -> Response:
    return reply(analysis.stats(database, registry, tournament, game))


@router.get("/seats", summary="`arena seats --json`")
def seats(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None) -> Response:
    return reply(analysis.seats(database, registry, tournament, game))


@router.get("/elo-history", summary="`arena elo-history --json`")
def elo_history(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None) -> Response:
    return reply(analysis.elo_history(database, registry, tournament, game))
