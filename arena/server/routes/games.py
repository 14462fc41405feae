"""Games and agent types: what the plugins offer."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from arena.errors import about
from arena.library import catalog
from arena.server.deps import RegistryDep
from arena.server.reply import reply

router = APIRouter(prefix="/api/v1", tags=["games"])


@router.get("/games", summary="Every game: players, parameters, number of actions, observation shape")
def list_games(registry: RegistryDep) -> Response:
    return reply(catalog.games(registry))


@router.get("/games/{game}", summary="One game (a spec with parameters is fine: connect_four:rows=5)")
def one_game(game: str, registry: RegistryDep) -> Response:
    with about("game"):
        return reply(catalog.game(registry, game))


@router.get("/agent-types", summary="Agent types from the plugins, with their parameters")
def agent_types(registry: RegistryDep) -> Response:
    return reply(catalog.agent_types(registry))
