"""Leaderboard, matrix, statistics, seats and Elo history of a tournament (default: the latest) or a game."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from starlette.responses import Response

from arena.library import analysis
from arena.server.deps import DatabaseDep, RegistryDep
from arena.server.reply import reply

router = APIRouter(prefix="/api/v1", tags=["results"])

TournamentQ = Annotated[str | None, Query(description="Tournament id or name (default: the latest).", max_length=200)]
GameQ = Annotated[str | None, Query(description="Every tournament's matches of this game spec.", max_length=500)]


#: Serialized answers by request, with the data fingerprint they were computed at: a repeated request for
#: unchanged data costs one fingerprint query. Any stored batch changes the fingerprint. Bounded.
_answers: dict[tuple, tuple[str, Response]] = {}
_ANSWERS_MAX = 512


_computing: dict[tuple, threading.Lock] = {}


def _memo(key: tuple, selection: analysis.Selection, compute: Callable[[], Any]) -> Response:
    """The answer for `key` at the selection's fingerprint; requests arriving while it is computed wait for that
    one computation instead of each repeating it (after every stored batch, many clients ask at once)."""
    hit = _answers.get(key)
    if hit is not None and hit[0] == selection.fingerprint:
        return hit[1]
    with _computing.setdefault(key, threading.Lock()):
        hit = _answers.get(key)
        if hit is not None and hit[0] == selection.fingerprint:
            return hit[1]
        response = reply(compute())
        if len(_answers) >= _ANSWERS_MAX:
            _answers.clear()
        _answers[key] = (selection.fingerprint, response)
    return response


@router.get("/leaderboard", summary="`arena leaderboard --json`")
def leaderboard(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None,
                system: Literal["bt", "elo", "trueskill"] = "bt") -> Response:  # fmt: skip
    selection = analysis.select(database, registry, tournament, game)
    return _memo((database.url, "leaderboard", selection.key, system), selection,
                 lambda: analysis.leaderboard_of(database, selection, system))  # fmt: skip


@router.get("/matrix", summary="`arena matrix --kind K --json`")
def matrix(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None,
           kind: Literal["net-wins", "win-rate", "games", "avg-turns"] = "net-wins") -> Response:  # fmt: skip
    selection = analysis.select(database, registry, tournament, game)
    return _memo((database.url, "matrix", selection.key, kind), selection, lambda: analysis.matrix_of(database, selection, kind))


@router.get("/stats", summary="`arena stats --json`")
def stats(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None) -> Response:
    return reply(analysis.stats(database, registry, tournament, game))


@router.get("/seats", summary="`arena seats --json`")
def seats(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None) -> Response:
    return reply(analysis.seats(database, registry, tournament, game))


@router.get("/elo-history", summary="`arena elo-history --json`")
def elo_history(database: DatabaseDep, registry: RegistryDep, tournament: TournamentQ = None, game: GameQ = None) -> Response:
    return reply(analysis.elo_history(database, registry, tournament, game))
