"""Stored matches: a filtered page, one match with its moves, its replay with every position rendered."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from arena.library import analysis
from arena.library import matches as library
from arena.library.storage import MAX_ID
from arena.server.deps import DatabaseDep, RegistryDep
from arena.server.reply import reply
from arena.server.routes.results import GameQ, TournamentQ, answers

router = APIRouter(prefix="/api/v1", tags=["matches"])
MatchId = Annotated[int, Path(ge=1, le=MAX_ID)]


@router.get("/matches", summary="`arena matches --json`, a page at a time; the total is in X-Total-Count")
async def list_matches(
    request: Request, tournament: TournamentQ = None, game: GameQ = None,
    agent: Annotated[str | None, Query(max_length=300, description="Only this agent's matches.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100, offset: Annotated[int, Query(ge=0)] = 0,
) -> Response:  # fmt: skip
    database, registry = request.app.state.database, request.app.state.registry

    def page(selection: analysis.Selection) -> Response:
        found = library.match_page(database, selection, agent, limit, offset)
        return reply(found["matches"], headers={"X-Total-Count": str(found["total"])})

    return await answers(request).get(request, ("matches", tournament, game, agent, limit, offset),
                                      lambda: analysis.select(database, registry, tournament, game), page)  # fmt: skip


@router.get("/matches/{match_id}", summary="One match with its moves and legal-move counts")
def one_match(match_id: MatchId, database: DatabaseDep) -> Response:
    return reply(library.match(database, match_id))


@router.get("/matches/{match_id}/replay", summary="`arena replay --json` plus every position rendered (text, SVG)")
def replay(match_id: MatchId, database: DatabaseDep, registry: RegistryDep) -> Response:
    return reply(library.replay(database, registry, match_id, positions=True))
