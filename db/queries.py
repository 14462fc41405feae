"""Every query Arena runs. Functions take a Database or Session and return plain values or records."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session

from db.models import CacheEntry, Match, MatchSeat, NamedAgent, Tournament, utcnow
from db.records import MatchRecord, SeatRecord
from db.session import Database, retrying

# ---------------------------------------------------------------- named agents


def get_named_agent(session: Session, name: str) -> NamedAgent | None:
    return session.scalar(select(NamedAgent).where(NamedAgent.name == name))


def list_named_agents(session: Session) -> list[NamedAgent]:
    return list(session.scalars(select(NamedAgent).order_by(NamedAgent.name)))


def add_named_agent(
    session: Session, name: str, type_id: str, params: dict[str, str], game: str | None, checkpoint: str | None
) -> NamedAgent:
    agent = NamedAgent(name=name, type=type_id, params=json.dumps(params, sort_keys=True), game=game, checkpoint=checkpoint)
    session.add(agent)
    return agent


def remove_named_agent(session: Session, name: str) -> bool:
    return session.execute(delete(NamedAgent).where(NamedAgent.name == name)).rowcount > 0


# ---------------------------------------------------------------- tournaments and schedules


@dataclass(frozen=True)
class SeatPlan:
    seat: int
    agent: str
    agent_type: str
    agent_params: str
    agent_version: str


@dataclass(frozen=True)
class MatchPlan:
    index: int
    seed: int
    seats: tuple[SeatPlan, ...]


def create_tournament(
    database: Database, *, name: str | None, game_id: str, game_version: str, game_params: str, format: str,
    rounds: int, seed: int, max_turns: int, time_per_move: float | None, players: int, settings: dict[str, Any],
    schedule: Sequence[MatchPlan],
) -> int:  # fmt: skip
    """Write the tournament and its whole schedule in one transaction; returns the tournament id."""
    return retrying(lambda: _create_tournament(database, name, game_id, game_version, game_params, format, rounds, seed,
                                               max_turns, time_per_move, players, settings, schedule))  # fmt: skip


def _create_tournament(
    database: Database, name: str | None, game_id: str, game_version: str, game_params: str, format: str,
    rounds: int, seed: int, max_turns: int, time_per_move: float | None, players: int, settings: dict[str, Any],
    schedule: Sequence[MatchPlan],
) -> int:  # fmt: skip
    with database.session() as session, session.begin():
        tournament = Tournament(
            name=name, game_id=game_id, game_version=game_version, game_params=game_params, format=format,
            rounds=rounds, seed=seed, max_turns=max_turns, time_per_move=time_per_move, players=players,
            settings=json.dumps(settings, sort_keys=True),
        )  # fmt: skip
        session.add(tournament)
        session.flush()
        tid = tournament.id
        match_rows = [
            {"tournament_id": tid, "index": plan.index, "game_id": game_id, "game_version": game_version,
             "game_params": game_params, "seed": plan.seed, "status": "pending"}
            for plan in schedule
        ]  # fmt: skip
        for start in range(0, len(match_rows), 20_000):
            session.execute(insert(Match), match_rows[start : start + 20_000])
        ids = dict(session.execute(select(Match.index, Match.id).where(Match.tournament_id == tid)).all())
        seat_rows = [
            {"match_id": ids[plan.index], "seat": s.seat, "agent": s.agent, "agent_type": s.agent_type,
             "agent_params": s.agent_params, "agent_version": s.agent_version}
            for plan in schedule
            for s in plan.seats
        ]  # fmt: skip
        for start in range(0, len(seat_rows), 20_000):
            session.execute(insert(MatchSeat), seat_rows[start : start + 20_000])
    return tid


def find_tournament(session: Session, key: str | int) -> Tournament | None:
    """A tournament by id or by name."""
    text = str(key)
    if text.isdigit():
        found = session.get(Tournament, int(text))
        if found is not None:
            return found
    return session.scalar(select(Tournament).where(Tournament.name == text))


def list_tournaments(session: Session) -> list[Tournament]:
    return list(session.scalars(select(Tournament).order_by(Tournament.id)))


def tournament_counts(session: Session, tournament_id: int) -> dict[str, int]:
    rows = session.execute(
        select(Match.status, func.count()).where(Match.tournament_id == tournament_id).group_by(Match.status)
    ).all()
    return {status: count for status, count in rows}


def pending_matches(session: Session, tournament_id: int) -> list[tuple[int, int, int]]:
    """(match id, schedule index, seed) of every match not yet played, in schedule order."""
    rows = session.execute(
        select(Match.id, Match.index, Match.seed)
        .where(Match.tournament_id == tournament_id, Match.status == "pending")
        .order_by(Match.index)
    ).all()
    return [tuple(row) for row in rows]  # type: ignore[misc]


def schedule_seats(session: Session, tournament_id: int) -> dict[int, list[str]]:
    """Match id -> agent labels by seat, for every match of the tournament."""
    rows = session.execute(
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.agent)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.tournament_id == tournament_id)
        .order_by(MatchSeat.match_id, MatchSeat.seat)
    ).all()
    seats: dict[int, list[str]] = {}
    for match_id, _seat, agent in rows:
        seats.setdefault(match_id, []).append(agent)
    return seats


@dataclass(frozen=True)
class MatchOutcome:
    """One played match, ready to store."""

    match_id: int
    turns: int
    reason: str
    detail: str | None
    moves: bytes
    legal_counts: bytes
    duration: float
    scores: Sequence[float]
    outcomes: Sequence[str]
    ranks: Sequence[int]
    think_times: Sequence[float]
    move_counts: Sequence[int]
    rounds: int | None = None


_UPDATE_MATCH = (
    update(Match)
    .where(Match.id == bindparam("b_id"), Match.status == "pending")
    .values(
        status="done", turns=bindparam("b_turns"), reason=bindparam("b_reason"), detail=bindparam("b_detail"),
        moves=bindparam("b_moves"), legal_counts=bindparam("b_legal"), duration=bindparam("b_duration"),
        finished_at=bindparam("b_finished"), rounds=bindparam("b_rounds"),
    )
)  # fmt: skip
_UPDATE_SEAT = (
    update(MatchSeat)
    .where(MatchSeat.match_id == bindparam("b_id"), MatchSeat.seat == bindparam("b_seat"))
    .values(score=bindparam("b_score"), outcome=bindparam("b_outcome"), rank=bindparam("b_rank"),
            think_time=bindparam("b_think"), moves=bindparam("b_nmoves"))
)  # fmt: skip


def save_results(database: Database, tournament_id: int, results: Iterable[MatchOutcome]) -> None:
    """Store a batch of results of one tournament in one transaction (a match already done is left as it is)."""
    results = list(results)
    if not results:
        return
    now = utcnow()
    match_rows = [
        {"b_id": r.match_id, "b_turns": r.turns, "b_reason": r.reason, "b_detail": r.detail, "b_moves": r.moves,
         "b_legal": r.legal_counts, "b_duration": r.duration, "b_finished": now, "b_rounds": r.rounds}
        for r in results
    ]  # fmt: skip
    seat_rows = [
        {"b_id": r.match_id, "b_seat": seat, "b_score": r.scores[seat], "b_outcome": r.outcomes[seat],
         "b_rank": r.ranks[seat], "b_think": r.think_times[seat], "b_nmoves": r.move_counts[seat]}
        for r in results
        for seat in range(len(r.scores))
    ]  # fmt: skip
    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(_UPDATE_MATCH, match_rows)
            connection.execute(_UPDATE_SEAT, seat_rows)
            connection.execute(
                update(Tournament).where(Tournament.id == tournament_id).values(revision=Tournament.revision + 1)
            )

    retrying(write)


def finish_tournament(database: Database, tournament_id: int) -> None:
    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(
                update(Tournament).where(Tournament.id == tournament_id).values(status="done", finished_at=utcnow())
            )

    retrying(write)


# ---------------------------------------------------------------- reading results


def load_matches(
    session: Session, *, tournament_id: int | None = None, game_id: str | None = None,
    game_version: str | None = None, game_params: str | None = None, with_legal_counts: bool = False,
    agent: str | None = None, limit: int | None = None,
) -> list[MatchRecord]:  # fmt: skip
    """Played matches as records, in schedule order (tournament, then schedule index)."""
    conditions = [Match.status == "done"]
    if tournament_id is not None:
        conditions.append(Match.tournament_id == tournament_id)
    if game_id is not None:
        conditions.append(Match.game_id == game_id)
    if game_version is not None:
        conditions.append(Match.game_version == game_version)
    if game_params is not None:
        conditions.append(Match.game_params == game_params)
    if agent is not None:
        conditions.append(Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.agent == agent)))
    columns = [Match.id, Match.tournament_id, Match.index, Match.seed, Match.game_id, Match.game_version,
               Match.turns, Match.reason, Match.detail, Match.rounds]  # fmt: skip
    if with_legal_counts:
        columns.append(Match.legal_counts)
    query = select(*columns).where(*conditions).order_by(Match.tournament_id, Match.index)
    if limit is not None:
        query = query.limit(limit)
    match_rows = session.connection().execute(query).all()
    if not match_rows:
        return []
    seat_query = (
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.agent, MatchSeat.score, MatchSeat.outcome,
               MatchSeat.rank, MatchSeat.think_time, MatchSeat.moves)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(*conditions)
        .order_by(MatchSeat.match_id, MatchSeat.seat)
    )  # fmt: skip
    if limit is not None:
        seat_query = seat_query.where(MatchSeat.match_id.in_([row[0] for row in match_rows]))
    # Seats arrive grouped by match id: one pass builds each match's tuple (a million matches load in seconds).
    seats: dict[int, tuple[SeatRecord, ...]] = {}
    current_id, current = None, []
    for match_id, seat, agent_label, score, outcome, rank, think, moves in session.connection().execute(seat_query):
        if match_id != current_id:
            if current_id is not None:
                seats[current_id] = tuple(current)
            current_id, current = match_id, []
        current.append(SeatRecord(seat, agent_label, score, outcome, rank, think or 0.0, moves or 0))
    if current_id is not None:
        seats[current_id] = tuple(current)
    legal_column = 10 if with_legal_counts else None
    return [
        MatchRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], seats.get(row[0], ()),
                    row[legal_column] if legal_column else None, row[8], row[9])
        for row in match_rows
    ]  # fmt: skip


def get_match(session: Session, match_id: int) -> Match | None:
    return session.get(Match, match_id)


def games_with_matches(session: Session) -> list[tuple[str, str, str, int]]:
    """(game id, version, params, number of played matches) for every game with results."""
    rows = session.execute(
        select(Match.game_id, Match.game_version, Match.game_params, func.count())
        .where(Match.status == "done")
        .group_by(Match.game_id, Match.game_version, Match.game_params)
        .order_by(Match.game_id)
    ).all()
    return [tuple(row) for row in rows]  # type: ignore[misc]


# ---------------------------------------------------------------- fingerprints and the analysis cache


def tournament_fingerprint(session: Session, tournament_id: int) -> str:
    revision = session.scalar(select(Tournament.revision).where(Tournament.id == tournament_id))
    return f"{tournament_id}@{revision}"


def game_fingerprint(session: Session, game_id: str, game_version: str, game_params: str) -> str:
    rows = session.execute(
        select(Tournament.id, Tournament.revision)
        .where(Tournament.game_id == game_id, Tournament.game_version == game_version, Tournament.game_params == game_params)
        .order_by(Tournament.id)
    ).all()
    return ",".join(f"{tid}@{revision}" for tid, revision in rows)


def get_cached(session: Session, key: str, fingerprint: str) -> str | None:
    entry = session.get(CacheEntry, key)
    return entry.payload if entry is not None and entry.fingerprint == fingerprint else None


def put_cached(database: Database, key: str, fingerprint: str, payload: str) -> None:
    def write() -> None:
        with database.session() as session, session.begin():
            entry = session.get(CacheEntry, key)
            if entry is None:
                session.add(CacheEntry(key=key, fingerprint=fingerprint, payload=payload))
            else:
                entry.fingerprint, entry.payload, entry.updated_at = fingerprint, payload, utcnow()

    retrying(write)
