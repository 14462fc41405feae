"""Stored matches: a filtered page, one match with its moves, its replay with every position rendered."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.responses import Response

from arena.library import analysis
from arena.library import matches as library
from arena.server.deps import DatabaseDep, RegistryDep
from arena.server.reply import reply
from arena.server.routes.results import GameQ, TournamentQ

router = APIRouter(prefix="/api/v1", tags=["matches"])
MatchId = Annotated[int, Path(ge=1, le=2**62)]


@router.get("/matches", summary="`arena matches --json`, a page at a time; the total is in X-Total-Count")
def list_matches(
    database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None,
    agent: Annotated[str | None, Query(max_length=300, description="Only this agent's matches.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100, offset: Annotated[int, Query(ge=0)] = 0,
) -> Response:  # fmt: skip
    page = library.match_page(database, analysis.select(database, registry, tournament, game), agent, limit, offset)
    headers = {"X-Total-Count": str(page["total"])}
    return reply(page["matches"], headers=headers)


@router.get("/matches/{match_id}", summary="One match with its moves and legal-move counts")
def one_match(match_id: MatchId, database: DatabaseDep) -> Response:
    return reply(library.match(database, match_id))


@router.get("/matches/{match_id}/replay", summary="`arena replay --json` plus every position rendered (text, SVG)")
def replay(match_id: MatchId, database: DatabaseDep, registry: RegistryDep) -> Response:
    return reply(library.replay(database, registry, match_id, positions=True))
