"""Tournaments: the listing, one tournament, submitting one to the queue, cancelling it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from arena import tournament as tournaments
from arena.errors import ArenaError
from arena.match import DEFAULT_MAX_TURNS
from arena.plugins import Registry
from db import queries, queue
from db.models import Tournament
from db.session import Database

STATUSES = ("queued", "running", "done", "cancelled", "failed")


def _when(value: Any) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def tournament_dict(t: Tournament, done: int) -> dict[str, Any]:
    """One tournament: the `arena tournaments --json` entry plus its game spec, agents, progress and error."""
    settings = json.loads(t.settings)
    return {
        "id": t.id, "name": t.name, "game": t.game_id, "game_version": t.game_version, "format": t.format,
        "rounds": t.rounds, "seed": t.seed, "status": t.status, "matches": t.scheduled, "done": done,
        "created_at": _when(t.created_at),
        "game_spec": settings.get("game", t.game_id), "agents": [a["label"] for a in settings.get("agents", [])],
        "challenger": settings.get("challenger"), "max_turns": t.max_turns, "time_per_move": t.time_per_move,
        "players": t.players, "progress": done / t.scheduled if t.scheduled else 1.0,
        "finished_at": _when(t.finished_at), "error": t.error,
    }  # fmt: skip


def listing(database: Database) -> list[dict[str, Any]]:
    """Every tournament, oldest first."""
    with database.session() as session:
        return [tournament_dict(t, queries.played_count(session, t.id)) for t in queries.list_tournaments(session)]


def one(database: Database, key: str | int) -> dict[str, Any]:
    """One tournament by id or name."""
    with database.session() as session:
        found = queries.find_tournament(session, key)
        if found is None:
            raise ArenaError(f"no tournament with id or name '{key}'")
        return tournament_dict(found, queries.played_count(session, found.id))


def progress(database: Database, tournament_id: int) -> tuple[str, int, int]:
    """(status, matches stored, matches scheduled): cheap enough to poll for live progress."""
    with database.session() as session:
        found = queries.find_tournament(session, tournament_id)
        if found is None:
            raise ArenaError(f"no tournament {tournament_id}")
        return found.status, queries.played_count(session, found.id), found.scheduled


def submit(
    registry: Registry, database: Database, *, game: str, agents: Sequence[str] | str, rounds: int = 1, seed: int = 0,
    max_turns: int = DEFAULT_MAX_TURNS, time_per_move: float | None = None, name: str | None = None,
    format: str = "round-robin", challenger: str | None = None, players: int | None = None, openings: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Validate a tournament exactly as `arena run-tournament` does and queue it for `arena serve`."""
    text = agents if isinstance(agents, str) else ",".join(agents)
    if not text.strip():
        raise ArenaError("agents: give at least two agents")
    request = tournaments.TournamentRequest(
        game=game, agents=text, rounds=rounds, seed=seed, max_turns=max_turns, time_per_move=time_per_move,
        name=name, format=format, challenger=challenger, players=players, openings=openings,
    )  # fmt: skip
    tournament_id = tournaments.create(registry, database, request, status="queued")
    return one(database, tournament_id)


def cancel(database: Database, key: str | int) -> dict[str, Any]:
    """Cancel a queued or running tournament (a server playing it stops at its next match); finished ones stay."""
    found = one(database, key)
    queue.cancel(database, found["id"])
    return one(database, found["id"])
