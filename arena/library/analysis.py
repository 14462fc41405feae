"""Leaderboards, matrices, statistics, seats and Elo history of a selection of stored matches.

Each function returns what `arena <command> --json` prints and `/api/v1/<resource>` serves.
"""

from __future__ import annotations

from typing import Any

from arena import results
from arena.adaptive_run import weighted_rows
from arena.errors import ArenaError
from arena.leaderboard import sort_rows
from arena.plugins import Registry
from arena.ratings import elo
from arena.stats import MATRIX_KINDS, matrix, seat_results, turn_stats
from db import queries
from db.session import Database

Selection = results.Selection


def select(database: Database, registry: Registry, tournament: str | None = None, game: str | None = None,
           with_legal_counts: bool = False) -> Selection:  # fmt: skip
    return results.select(database, registry, tournament, game, with_legal_counts)


def leaderboard_and_warning(database: Database, selection: Selection, system: str = "bt",
                            weighted: bool = False) -> tuple[list[dict[str, Any]], str | None]:  # fmt: skip
    """The rows (with their distinct-games fields) and the repeated-games warning, or None.

    `weighted`: an adaptive tournament's Bradley-Terry fields from its inverse-probability weighted fit."""
    rows, warning = results.leaderboard_of(database, selection, system)
    if not rows and "game_version" in selection.filters:
        warning = other_versions_note(database, selection.filters["game_id"], selection.filters["game_version"]) or warning
    if weighted:
        if selection.tournament is None:
            raise ArenaError("--weighted is for one tournament of --format adaptive: give --tournament")
        rows = sort_rows(weighted_rows(database, selection.tournament.id, rows), system)
    return rows, warning


def other_versions_note(database: Database, game_id: str, version: str) -> str | None:
    """Why a game's leaderboard is empty when its tournaments were played at another version (a rules change bumps it,
    and results never mix across versions), or None."""
    with database.session() as session:
        others = queries.other_versions(session, game_id, version)
    if not others:
        return None
    shown = ", ".join(f"v{other} ({count} tournament{'s' if count != 1 else ''})" for other, count in others)
    return (f"no matches of {game_id} v{version}, the version installed; stored: {shown}, which never mix with it: "
            "see them with --tournament ID (arena tournaments lists them)")


def leaderboard_of(database: Database, selection: Selection, system: str = "bt") -> list[dict[str, Any]]:
    return results.leaderboard_of(database, selection, system)[0]


def leaderboard(database: Database, registry: Registry, tournament: str | None = None, game: str | None = None,
                system: str = "bt") -> list[dict[str, Any]]:  # fmt: skip
    """Rows best first by `system` (bt, elo or trueskill)."""
    return leaderboard_of(database, select(database, registry, tournament, game), system)


def matrix_of(database: Database, selection: Selection, kind: str) -> dict[str, Any]:
    if kind not in MATRIX_KINDS:
        raise ArenaError(f"unknown matrix kind '{kind}' (choose: {', '.join(MATRIX_KINDS)})")
    agents = [row["agent"] for row in leaderboard_of(database, selection, "bt")]
    return {"kind": kind, "agents": agents, "values": matrix(selection.records, kind, agents)}


def matrix_data(database: Database, registry: Registry, kind: str = "net-wins", tournament: str | None = None,
                game: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Row agent against column agent, agents in leaderboard order."""
    return matrix_of(database, select(database, registry, tournament, game), kind)


def stats_of(database: Database, selection: Selection) -> dict[str, Any]:
    """Match length, end reasons, legal moves per turn, think time, distinct games (the selection needs legal-move counts)."""
    data = turn_stats(selection.records)
    data["distinct_games"] = results.distinct_games_of(database, selection)
    return data


def stats(database: Database, registry: Registry, tournament: str | None = None, game: str | None = None) -> dict[str, Any]:
    return stats_of(database, select(database, registry, tournament, game, with_legal_counts=True))


def seats_of(selection: Selection) -> dict[str, Any]:
    return seat_results(selection.records)


def seats(database: Database, registry: Registry, tournament: str | None = None, game: str | None = None) -> dict[str, Any]:
    return seats_of(select(database, registry, tournament, game))


def elo_history_of(selection: Selection) -> list[dict[str, Any]]:
    """The Elo of the agents of each match just after it, in schedule order."""
    _, history = elo(selection.records)
    return [{"n": p.n, "match_id": p.match_id, "ratings": p.ratings} for p in history]


def elo_history(database: Database, registry: Registry, tournament: str | None = None, game: str | None = None) -> list[dict[str, Any]]:
    return elo_history_of(select(database, registry, tournament, game))


def agent_results(database: Database, registry: Registry, agent: str, tournament: str | None = None,
                  game: str | None = None) -> dict[str, Any]:  # fmt: skip
    """An agent's results against each opponent in the selection: games, wins, draws, losses, score rate
    (in matches of more than two players, who finished ahead of whom)."""
    from arena.ratings import pairwise_scores

    selection = select(database, registry, tournament, game)
    records = [r for r in selection.records if agent in r.agents()]
    if not records:
        raise ArenaError(f"no matches of agent '{agent}' in {selection.title}")
    table: dict[str, dict[str, Any]] = {}
    for record in records:
        for a, b, score in pairwise_scores(record):
            if agent not in (a, b) or a == b:
                continue
            opponent, mine = (b, score) if a == agent else (a, 1.0 - score)
            row = table.setdefault(opponent, {"opponent": opponent, "games": 0, "wins": 0, "draws": 0, "losses": 0, "score": 0.0})
            row["games"] += 1
            row["score"] += mine
            row["wins" if mine == 1.0 else "draws" if mine == 0.5 else "losses"] += 1
    opponents = sorted(table.values(), key=lambda r: r["opponent"])
    for row in opponents:
        row["score_rate"] = row["score"] / row["games"]
    return {"agent": agent, "title": selection.title, "matches": len(records), "opponents": opponents}
