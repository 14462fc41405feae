"""Choosing which stored matches a query is about: one tournament, one game (all tournaments), or the latest."""

from __future__ import annotations

from dataclasses import dataclass

from arena.errors import ArenaError
from arena.params import canonical, parse_spec
from arena.plugins import Registry
from db import queries
from db.models import Tournament
from db.records import MatchRecord
from db.session import Database


@dataclass(frozen=True)
class Selection:
    title: str  # what the numbers are about, for table titles
    records: list[MatchRecord]
    tournament: Tournament | None = None


def get_tournament(database: Database, key: str) -> Tournament:
    with database.session() as session:
        tournament = queries.find_tournament(session, key)
    if tournament is None:
        raise ArenaError(f"no tournament with id or name '{key}'")
    return tournament


def select(
    database: Database, registry: Registry, tournament: str | None = None, game: str | None = None,
    with_legal_counts: bool = False,
) -> Selection:  # fmt: skip
    """The matches a query is about: --tournament, else --game (every tournament, same version and parameters), else the latest tournament."""
    if tournament is not None and game is not None:
        raise ArenaError("give --tournament or --game, not both")
    if game is not None:
        spec = parse_spec(game)
        game_obj = registry.game_class(spec.id)(**spec.params)
        with database.session() as session:
            records = queries.load_matches(
                session, game_id=spec.id, game_version=game_obj.info.version, game_params=canonical(game_obj.params),
                with_legal_counts=with_legal_counts,
            )  # fmt: skip
        return Selection(f"{game_obj.label()} v{game_obj.info.version}, all tournaments", records)
    if tournament is None:
        with database.session() as session:
            latest = queries.list_tournaments(session)
        if not latest:
            raise ArenaError("no tournaments yet: run `arena run-tournament` first")
        found = latest[-1]
    else:
        found = get_tournament(database, tournament)
    with database.session() as session:
        records = queries.load_matches(session, tournament_id=found.id, with_legal_counts=with_legal_counts)
    label = f"tournament {found.id}" + (f" '{found.name}'" if found.name else "")
    return Selection(f"{label} ({found.game_id})", records, found)
