"""Every query Arena runs. Functions take a Database or Session and return plain values or records."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select, update
from sqlalchemy.orm import Session

from db.models import CacheEntry, Match, MatchSeat, NamedAgent, Tournament, utcnow
from db.records import MatchRecord, SeatRecord
from db.session import Database, retrying

# ---------------------------------------------------------------- driver-level bulk statements


def _executemany(connection: Connection, sql_template: str, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """executemany straight through the DB-API driver, in the driver's own parameter style.

    SQLAlchemy's per-row parameter processing cost more than the rest of storing a match (measured
    about 40 us of a 60 us insert), so the hot bulk writes skip it; `{}` in the template takes the
    placeholders, in `names` order. Values must already be plain Python values.
    """
    style = connection.dialect.paramstyle
    if style == "qmark":
        marks = ["?"] * len(names)
    elif style == "format":
        marks = ["%s"] * len(names)
    elif style == "numeric":
        marks = [f":{i + 1}" for i in range(len(names))]
    elif style == "named":
        marks = [f":{n}" for n in names]
        rows = [dict(zip(names, row)) for row in rows]  # type: ignore[misc]
    else:  # pyformat
        marks = [f"%({n})s" for n in names]
        rows = [dict(zip(names, row)) for row in rows]  # type: ignore[misc]
    if rows:
        connection.exec_driver_sql(sql_template.format(*marks), rows)  # type: ignore[arg-type]


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
    result = session.execute(delete(NamedAgent).where(NamedAgent.name == name))
    return getattr(result, "rowcount", 0) > 0


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
        connection = session.connection()
        _executemany(
            connection,
            'INSERT INTO matches (tournament_id, "index", game_id, game_version, game_params, seed, status) '
            "VALUES ({}, {}, {}, {}, {}, {}, {})",
            ("tournament_id", "index", "game_id", "game_version", "game_params", "seed", "status"),
            [(tid, plan.index, game_id, game_version, game_params, plan.seed, "pending") for plan in schedule],
        )  # fmt: skip
        ids = dict(session.execute(select(Match.index, Match.id).where(Match.tournament_id == tid)).all())
        _executemany(
            connection,
            "INSERT INTO match_seats (match_id, seat, agent, agent_type, agent_params, agent_version) "
            "VALUES ({}, {}, {}, {}, {}, {})",
            ("match_id", "seat", "agent", "agent_type", "agent_params", "agent_version"),
            [(ids[plan.index], s.seat, s.agent, s.agent_type, s.agent_params, s.agent_version)
             for plan in schedule for s in plan.seats],
        )  # fmt: skip
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
    first_player: int | None = None


def save_results(database: Database, tournament_id: int, results: Iterable[MatchOutcome]) -> None:
    """Store a batch of results of one tournament in one transaction (a match already done is left as it is)."""
    results = list(results)
    if not results:
        return
    now = utcnow().isoformat(sep=" ", timespec="microseconds")  # the driver gets plain text, as SQLAlchemy stores it
    match_rows = [(r.turns, r.reason, r.detail, r.moves, r.legal_counts, r.duration, now, r.rounds, r.first_player, r.match_id)
                  for r in results]  # fmt: skip
    seat_rows = [
        (r.scores[seat], r.outcomes[seat], r.ranks[seat], r.think_times[seat], r.move_counts[seat], r.match_id, seat)
        for r in results
        for seat in range(len(r.scores))
    ]

    def write() -> None:
        with database.engine.begin() as connection:
            _executemany(
                connection,
                "UPDATE matches SET status = 'done', turns = {}, reason = {}, detail = {}, moves = {}, legal_counts = {}, "
                "duration = {}, finished_at = {}, rounds = {}, first_player = {} WHERE id = {} AND status = 'pending'",
                ("turns", "reason", "detail", "moves", "legal_counts", "duration", "finished_at", "rounds", "first_player", "id"),
                match_rows,
            )  # fmt: skip
            _executemany(
                connection,
                "UPDATE match_seats SET score = {}, outcome = {}, rank = {}, think_time = {}, moves = {} "
                "WHERE match_id = {} AND seat = {}",
                ("score", "outcome", "rank", "think_time", "moves", "match_id", "seat"),
                seat_rows,
            )  # fmt: skip
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
               Match.turns, Match.reason, Match.detail, Match.rounds, Match.first_player]  # fmt: skip
    if with_legal_counts:
        columns.append(Match.legal_counts)
    query = select(*columns).where(*conditions).order_by(Match.tournament_id, Match.index)
    if limit is not None:
        query = query.limit(limit)
    match_rows: Sequence[Any] = session.connection().execute(query).all()
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
    current_id: int | None = None
    current: list[SeatRecord] = []
    seat_rows: Any = session.connection().execute(seat_query)  # played matches: every column is set
    for match_id, seat, agent_label, score, outcome, rank, think, moves in seat_rows:
        if match_id != current_id:
            if current_id is not None:
                seats[current_id] = tuple(current)
            current_id, current = match_id, []
        current.append(SeatRecord(seat, agent_label, score, outcome, rank, think or 0.0, moves or 0))
    if current_id is not None:
        seats[current_id] = tuple(current)
    legal_column = 11 if with_legal_counts else None
    return [
        MatchRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], seats.get(row[0], ()),
                    row[legal_column] if legal_column else None, row[8], row[9], row[10])
        for row in match_rows
    ]  # fmt: skip


def get_match(session: Session, match_id: int) -> Match | None:
    return session.get(Match, match_id)


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
