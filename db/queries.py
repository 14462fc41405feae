"""Every query Arena runs. Functions take a Database or Session and return plain values or records."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from sqlalchemy import Connection, delete, func, insert, literal, select, tuple_, update
from sqlalchemy.orm import Session

from db import bulk
from db.models import CacheEntry, LadderJoin, Match, MatchSeat, NamedAgent, SprtStateRow, Tournament, utcnow
from db.queue import play_hold
from db.records import MatchRecord, SeatRecord
from db.session import BUSY_TIMEOUT_MS, LABELS_LOCK_KEY, Database, retrying, serialised_write

#: Milliseconds a run stopping on Ctrl-C waits on a SQLite lock for its last write (see save_results).
IMPATIENT_MS = 3000
#: The largest id a row can have (a signed 64-bit integer in SQLite and PostgreSQL): a larger number names no row.
MAX_ID = 2**63 - 1


def is_number(text: str) -> bool:
    """Whether `text` is a number as ids are written: ASCII digits only ('１' or '٣' are text, though Python's int()
    reads them)."""
    return text.isascii() and text.isdigit()


def id_from_text(text: str) -> int | None:
    """The id a user's `text` names (a tournament's, a match's, an event's), or None: ASCII digits up to MAX_ID. A longer
    number names no row; it is never given to int(), which refuses more than 4,300 digits."""
    digits = text.lstrip("0") or "0"
    if not is_number(text) or len(digits) > len(str(MAX_ID)):
        return None
    value = int(digits)
    return value if value <= MAX_ID else None

# ---------------------------------------------------------------- named agents


def get_named_agent(session: Session, name: str) -> NamedAgent | None:
    return session.scalar(select(NamedAgent).where(NamedAgent.name == name))


def list_named_agents(session: Session) -> list[NamedAgent]:
    return list(session.scalars(select(NamedAgent).order_by(NamedAgent.name)))


def add_named_agent(
    session: Session, name: str, type_id: str, params: dict[str, str], game: str | None, checkpoint: str | None,
    owner: str | None = None,
) -> NamedAgent:
    agent = NamedAgent(name=name, type=type_id, params=json.dumps(params, sort_keys=True), game=game, checkpoint=checkpoint,
                       owner=owner)
    session.add(agent)
    return agent


def remove_named_agent(session: Session, name: str) -> bool:
    result = session.execute(delete(NamedAgent).where(NamedAgent.name == name))
    return getattr(result, "rowcount", 0) > 0


# ---------------------------------------------------------------- tournaments and schedules


def create_tournament(
    database: Database, *, name: str | None, game_id: str, game_version: str, game_params: str, format: str,
    rounds: int, seed: int, max_turns: int, time_per_move: float | None, players: int, settings: dict[str, Any],
    schedule: bytes, scheduled: int, status: str = "running", secret: str | None = None, owner: str | None = None,
    recheck: Callable[[Connection], None] | None = None, held_by: tuple[str, float] | None = None,
) -> int:  # fmt: skip
    """Write the tournament with its whole schedule (packed seatings, see Tournament.schedule); returns its id.
    `held_by`: a play page's game, written held by that server's worker for that many seconds (db.queue.play_hold), so
    that no moment finds it running and held by nobody.

    `recheck(connection)` runs first in the write's transaction, which is serialised with every other tournament
    creation and ladder join (they decide agents' labels from what the others wrote): it may read and raise to write
    nothing (arena.tournament.labels_unchanged)."""

    def write() -> int:
        with serialised_write(database, LABELS_LOCK_KEY) as connection:
            if recheck is not None:
                recheck(connection)
            tournament_id = connection.execute(insert(Tournament).values(
                name=name, game_id=game_id, game_version=game_version, game_params=game_params, format=format,
                rounds=rounds, seed=seed, max_turns=max_turns, time_per_move=time_per_move, players=players,
                settings=json.dumps(settings, sort_keys=True), schedule=schedule, scheduled=scheduled, status=status,
                secret=secret, owner=owner, **(play_hold(*held_by) if held_by is not None else {}),
            ).returning(Tournament.id)).scalar_one()  # fmt: skip
            connection.commit()
        return int(tournament_id)

    return retrying(write)


def extend_schedule(database: Database, tournament_id: int, schedule: bytes, scheduled: int, settings: dict[str, Any],
                    previous: int) -> None:  # fmt: skip
    """Replace a growing (adaptive) tournament's schedule of `previous` matches and its settings; it is running again
    until played.

    A tournament cancelled meanwhile stays cancelled, and keeps its schedule; one another process extended meanwhile
    (its schedule no longer `previous` long: a server that took it over from one that stalled) keeps that one's."""

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(
                update(Tournament).where(Tournament.id == tournament_id, Tournament.status != "cancelled",
                                         Tournament.scheduled == previous).values(
                    schedule=schedule, scheduled=scheduled, settings=json.dumps(settings, sort_keys=True),
                    status="running", finished_at=None,
                )
            )  # fmt: skip

    retrying(write)


def add_ladder_join(database: Database, tournament_id: int, label: str, entry: dict[str, Any], most: int,
                    check: Callable[[list[dict[str, Any]]], None] = lambda entries: None,
                    recheck: Callable[[Connection], None] | None = None) -> Literal["added", "in", "full"]:  # fmt: skip
    """Queue an agent to join a ladder (admitted at its next batch boundary), unless its label is in the ladder already,
    playing or waiting ("in"), or the ladder holds `most` agents so counted ("full"); "added" when queued. `check` is
    given every agent in the ladder (playing or waiting: their entries) and may raise to refuse the join. The checks and
    the write are one transaction serialised with every other join (and the ladder's row locked), so joins at once
    cannot take the ladder past `most`, nor bring it one agent twice, together; and with every tournament creation, so
    that `recheck(connection)`, run first, sees the labels they wrote (as create_tournament's)."""

    def write() -> Literal["added", "in", "full"]:
        with serialised_write(database, LABELS_LOCK_KEY) as connection:
            if recheck is not None:
                recheck(connection)
            query = select(Tournament.settings).where(Tournament.id == tournament_id)
            if connection.dialect.name != "sqlite":
                query = query.with_for_update()
            settings = json.loads(connection.execute(query).scalar_one())
            joined = connection.execute(select(LadderJoin.entry).where(LadderJoin.tournament_id == tournament_id)).scalars()
            entries = list(settings["agents"]) + [json.loads(text) for text in joined]
            labels = {agent["label"] for agent in entries}
            if label not in labels and len(labels) >= most:  # one in already is told so ("in")
                return "full"
            check(entries)  # before "in": an agent in under another label is told which
            if label in labels:
                return "in"
            connection.execute(insert(LadderJoin).values(tournament_id=tournament_id, label=label, entry=json.dumps(entry, sort_keys=True)))
            connection.commit()
        return "added"

    return retrying(write)


def ladder_joins(session: Session, tournament_id: int) -> list[tuple[str, dict[str, Any]]]:
    """Every join of a ladder, in join order: (label, entry), admitted or still waiting."""
    rows = session.execute(
        select(LadderJoin.label, LadderJoin.entry).where(LadderJoin.tournament_id == tournament_id).order_by(LadderJoin.id)
    )
    return [(label, json.loads(entry)) for label, entry in rows]


def stored_agents(session: Session | Connection, game_id: str, game_version: str) -> dict[str, dict[str, Any]]:
    """Each agent label that tournaments of this game (and game version) hold, with its entry (AgentEntry.to_json) in
    the first of them; an agent waiting to join a ladder holds its label too (from its join on, it is that label's)."""
    of_game = (Tournament.game_id == game_id, Tournament.game_version == game_version)
    joins: dict[int, list[dict[str, Any]]] = {}
    for tournament_id, entry in session.execute(select(LadderJoin.tournament_id, LadderJoin.entry).join(
            Tournament, Tournament.id == LadderJoin.tournament_id).where(*of_game).order_by(LadderJoin.id)):  # fmt: skip
        joins.setdefault(tournament_id, []).append(json.loads(entry))
    first: dict[str, dict[str, Any]] = {}
    for tournament_id, settings in session.execute(select(Tournament.id, Tournament.settings).where(*of_game).order_by(Tournament.id)):
        for agent in [*json.loads(settings).get("agents", ()), *joins.get(tournament_id, ())]:
            first.setdefault(agent["label"], agent)
    return first


def find_tournament(session: Session, key: str | int) -> Tournament | None:
    """A tournament by id or by name."""
    text = str(key)
    number = id_from_text(text)
    if number is not None:
        found = session.get(Tournament, number)
        if found is not None:
            return found
    return session.scalar(select(Tournament).where(Tournament.name == text))


def list_tournaments(session: Session) -> list[Tournament]:
    return list(session.scalars(select(Tournament).order_by(Tournament.id)))


def latest_tournament(session: Session) -> Tournament | None:
    return session.scalars(select(Tournament).order_by(Tournament.id.desc()).limit(1)).first()


def played_count(session: Session, tournament_id: int) -> int:
    return session.scalar(select(func.count()).where(Match.tournament_id == tournament_id)) or 0


def played_counts(session: Session) -> dict[int, int]:
    """Matches stored per tournament id (tournaments without any are absent)."""
    rows = session.execute(select(Match.tournament_id, func.count()).group_by(Match.tournament_id))
    return {tournament_id: count for tournament_id, count in rows}


def played_indices(session: Session, tournament_id: int, start: int = 0) -> set[int]:
    """Schedule indices of the matches already played (stored), from `start` on."""
    rows = session.connection().execute(select(Match.index).where(Match.tournament_id == tournament_id, Match.index >= start))
    return {index for (index,) in rows}


class MatchOutcome(NamedTuple):
    """One played match, ready to store: seats are agent positions (see Tournament.schedule).

    A named tuple, not a frozen dataclass: one is made per match, and it was measured at 1.7 us against 0.3.
    """

    schedule_index: int  # (not `index`: a tuple has an index method)
    seed: int
    seating: Sequence[int]
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
    opening_plies: int = 0  # the first plies of `moves` were the opening's, not the agents'
    network_times: Sequence[float] | None = None  # remote agents' round trips; None: all local


@dataclass(frozen=True)
class TournamentKeys:
    """What every stored match of one tournament repeats: its game, and each agent's columns by position."""

    tournament_id: int
    game_id: str
    game_version: str
    game_params: str
    agents: Sequence[tuple[str, str, str, str]]  # (label, type, parameters JSON, version)


class SprtStateValues(NamedTuple):
    """A tournament's SPRT state as stored (see SprtStateRow): counted units, counts, LLR, decision, uncounted scores."""

    units: int
    counts: list[int]
    llr: float
    decision: str | None
    pending: dict[int, float | None]


def save_results(database: Database, keys: TournamentKeys, results: Iterable[MatchOutcome],
                 sprt_state: SprtStateValues | None = None, patient: bool = True) -> None:  # fmt: skip
    """Store a batch of played matches of one tournament in one transaction; a match stored already is left as it is.

    `sprt_state`, the state of the tournament's SPRT after these matches, is written in the same transaction.
    Not `patient` (a run stopping on Ctrl-C): one try, waiting at most IMPATIENT_MS on a SQLite lock; the
    matches not stored then are played again by --resume."""
    # In schedule order: concurrent writers of one tournament then take row locks in the same order
    # (on PostgreSQL, two runs resuming one tournament would otherwise deadlock on each other's rows).
    results = sorted(results, key=lambda r: r.schedule_index)
    if not results:
        return
    insert = bulk.insert_postgresql if database.dialect == "postgresql" else bulk.insert_sqlite

    def write() -> None:
        with database.engine.begin() as connection, _impatient(database, connection, not patient):
            insert(connection, keys, results)
            connection.execute(
                update(Tournament).where(Tournament.id == keys.tournament_id).values(revision=Tournament.revision + 1)
            )
            if sprt_state is not None:
                connection.execute(_sprt_state_upsert(database, keys.tournament_id, sprt_state))

    if patient:
        retrying(write)
    else:
        write()


@contextlib.contextmanager
def _impatient(database: Database, connection: Connection, impatient: bool = True) -> Iterator[None]:
    """On SQLite, if `impatient`: this connection waits at most IMPATIENT_MS on a lock while inside, and its wait is
    restored before it goes back to the pool (the pragma needs no lock, so it runs after a failed write too)."""
    driver = connection.connection.driver_connection if impatient and database.dialect == "sqlite" else None
    if driver is not None:
        driver.execute(f"PRAGMA busy_timeout = {IMPATIENT_MS}")
    try:
        yield
    finally:
        if driver is not None:
            driver.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _upsert_insert(database: Database) -> Any:
    """The dialect's INSERT with ON CONFLICT. PostgreSQL's is imported only for a PostgreSQL database: its dialect
    package costs every `arena` command on SQLite ~0.1 s to import."""
    if database.dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert
    from sqlalchemy.dialects import sqlite

    return sqlite.insert


def _sprt_state_upsert(database: Database, tournament_id: int, state: SprtStateValues) -> Any:
    insert = _upsert_insert(database)
    values = {"units": state.units, "counts": json.dumps(state.counts), "llr": state.llr, "decision": state.decision,
              "pending": json.dumps({str(k): v for k, v in sorted(state.pending.items())}), "updated_at": utcnow()}  # fmt: skip
    statement = insert(SprtStateRow).values(tournament_id=tournament_id, **values)
    return statement.on_conflict_do_update(index_elements=[SprtStateRow.tournament_id], set_=values)


def load_sprt_state(session: Session, tournament_id: int) -> SprtStateValues | None:
    """The SPRT state a tournament's run last stored, or None (no --sprt, nothing played yet, or stored before 0010)."""
    row = session.get(SprtStateRow, tournament_id)
    if row is None:
        return None
    pending = {int(k): v for k, v in json.loads(row.pending).items()}
    return SprtStateValues(row.units, list(json.loads(row.counts)), row.llr, row.decision, pending)


def check_writable(database: Database) -> None:
    """Raise the database's own error now if it cannot be written (a read-only SQLite file, a role without UPDATE): a
    write that changes nothing, which SQLite and PostgreSQL still refuse. For a server, which would otherwise start
    and fail at its first write."""

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(update(Tournament).where(literal(False)).values(status=Tournament.status))

    retrying(write)


def stop_tournament(database: Database, tournament_id: int) -> None:
    """A running tournament its CLI run left before the end (Ctrl-C): `stopped`, until `--resume` plays the rest. Not one
    a server holds (it stays running: its lease runs out and a server takes it back). One quick try: another process
    may hold SQLite's lock, and the run is leaving."""
    with database.engine.begin() as connection, _impatient(database, connection):
        connection.execute(update(Tournament).where(Tournament.id == tournament_id, Tournament.status == "running",
                                                    Tournament.claimed_by.is_(None)).values(status="stopped"))  # fmt: skip


def restart_tournament(database: Database, tournament_id: int) -> None:
    """A stopped tournament resumed: running again."""

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(update(Tournament).where(Tournament.id == tournament_id, Tournament.status == "stopped")
                               .values(status="running"))  # fmt: skip

    retrying(write)


def finish_tournament(database: Database, tournament_id: int) -> None:
    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(  # a tournament cancelled meanwhile stays cancelled
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.status != "cancelled")
                .values(status="done", finished_at=utcnow())
            )

    retrying(write)


# ---------------------------------------------------------------- reading results


def _game_conditions(game_id: str | None, game_version: str | None, game_params: str | None) -> list[Any]:
    """Tournaments of one game, version and parameters (each left out when None)."""
    conditions: list[Any] = []
    if game_id is not None:
        conditions.append(Tournament.game_id == game_id)
    if game_version is not None:
        conditions.append(Tournament.game_version == game_version)
    if game_params is not None:
        conditions.append(Tournament.game_params == game_params)
    return conditions


def _match_conditions(tournament_id: int | None, game_id: str | None, game_version: str | None, game_params: str | None,
                      start: tuple[int, int] | None = None) -> list[Any]:  # fmt: skip
    """Played matches of one tournament and/or one game (version, parameters), from position `start` (tournament id, index) on."""
    conditions: list[Any] = [Match.status == "done"]
    if start is not None:
        # A row-value comparison: the (tournament_id, index) index finds the first match at once.
        conditions.append(tuple_(Match.tournament_id, Match.index) >= tuple_(literal(start[0]), literal(start[1])))
    if tournament_id is not None:
        conditions.append(Match.tournament_id == tournament_id)
    # The game is a tournament's: selecting its tournaments lets the (tournament_id, index) index find the matches.
    game_conditions = _game_conditions(game_id, game_version, game_params)
    if game_conditions:
        if start is not None:  # only the tournaments from `start` on: the index search skips the others' matches
            game_conditions.append(Tournament.id >= start[0])
        conditions.append(Match.tournament_id.in_(select(Tournament.id).where(*game_conditions)))
    return conditions


def load_move_lists(
    session: Session, *, tournament_id: int | None = None, game_id: str | None = None,
    game_version: str | None = None, game_params: str | None = None, start: tuple[int, int] | None = None,
) -> dict[int, bytes]:  # fmt: skip
    """Match id -> stored move list (arena.match.encode_ints) of the played matches selected as load_matches does."""
    query = select(Match.id, Match.moves).where(*_match_conditions(tournament_id, game_id, game_version, game_params, start))
    return {match_id: moves or b"" for match_id, moves in session.connection().execute(query)}


def load_matches(
    session: Session, *, tournament_id: int | None = None, game_id: str | None = None,
    game_version: str | None = None, game_params: str | None = None, with_legal_counts: bool = False,
    agent: str | None = None, limit: int | None = None, offset: int = 0, start: tuple[int, int] | None = None,
) -> list[MatchRecord]:  # fmt: skip
    """Played matches as records, in schedule order (tournament, then schedule index); from position `start` on when given."""
    conditions = _match_conditions(tournament_id, game_id, game_version, game_params, start)
    if agent is not None:
        conditions.append(Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.agent == agent)))
    columns = [Match.id, Match.tournament_id, Match.index, Match.seed, Match.game_id, Match.game_version,
               Match.turns, Match.reason, Match.detail, Match.rounds, Match.first_player]  # fmt: skip
    if with_legal_counts:
        columns.append(Match.legal_counts)
    query = select(*columns).where(*conditions).order_by(Match.tournament_id, Match.index)
    if limit is not None:
        query = query.limit(min(limit, MAX_ID))
    if offset:
        query = query.offset(min(offset, MAX_ID))  # past every row: an empty page, not a database overflow
    match_rows: Sequence[Any] = session.connection().execute(query).all()
    if not match_rows:
        return []
    seat_query = (
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.agent, MatchSeat.score, MatchSeat.outcome,
               MatchSeat.rank, MatchSeat.think_time, MatchSeat.moves, MatchSeat.network_time)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(*conditions)
        .order_by(MatchSeat.match_id, MatchSeat.seat)
    )  # fmt: skip
    if limit is not None or offset:
        seat_query = seat_query.where(MatchSeat.match_id.in_([row[0] for row in match_rows]))
    # Seats arrive grouped by match id: one pass builds each match's tuple (a million matches load in seconds).
    seats: dict[int, tuple[SeatRecord, ...]] = {}
    current_id: int | None = None
    current: list[SeatRecord] = []
    seat_rows: Any = session.connection().execute(seat_query)  # played matches: every column is set
    for match_id, seat, agent_label, score, outcome, rank, think, moves, network in seat_rows:
        if match_id != current_id:
            if current_id is not None:
                seats[current_id] = tuple(current)
            current_id, current = match_id, []
        current.append(SeatRecord(seat, agent_label, score, outcome, rank, think or 0.0, moves or 0, network or 0.0))
    if current_id is not None:
        seats[current_id] = tuple(current)
    legal_column = 11 if with_legal_counts else None
    return [
        MatchRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], seats.get(row[0], ()),
                    row[legal_column] if legal_column else None, row[8], row[9], row[10])
        for row in match_rows
    ]  # fmt: skip


def count_matches(session: Session, *, tournament_id: int | None = None, game_id: str | None = None,
                  game_version: str | None = None, game_params: str | None = None, agent: str | None = None) -> int:
    """How many played matches load_matches would return with the same filters (for paging)."""
    conditions = _match_conditions(tournament_id, game_id, game_version, game_params)
    if agent is not None:
        conditions.append(Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.agent == agent)))
    return session.scalar(select(func.count()).select_from(Match).where(*conditions)) or 0


def get_match(session: Session, match_id: int) -> Match | None:
    return session.get(Match, match_id) if abs(match_id) <= MAX_ID else None


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


def other_versions(session: Session, game_id: str, game_version: str) -> list[tuple[str, int]]:
    """(game version, tournaments) of a game's tournaments played at other versions than `game_version`, by version."""
    rows = session.execute(
        select(Tournament.game_version, func.count()).where(Tournament.game_id == game_id, Tournament.game_version != game_version)
        .group_by(Tournament.game_version).order_by(Tournament.game_version)
    ).all()
    return [(version, int(count)) for version, count in rows]


def scope_tournaments(
    session: Session, *, tournament_id: int | None = None, game_id: str | None = None, game_version: str | None = None,
    game_params: str | None = None,
) -> list[tuple[int, int, int]]:  # fmt: skip
    """(id, revision, scheduled matches) of the tournaments a selection covers, by id."""
    conditions = _game_conditions(game_id, game_version, game_params)
    if tournament_id is not None:
        conditions.append(Tournament.id == tournament_id)
    rows = session.execute(
        select(Tournament.id, Tournament.revision, Tournament.scheduled).where(*conditions).order_by(Tournament.id)
    ).all()
    return [(tid, revision, scheduled) for tid, revision, scheduled in rows]


def get_cache_entry(session: Session, key: str) -> tuple[str, str] | None:
    """(fingerprint, payload) stored under `key`, whatever its fingerprint."""
    entry = session.get(CacheEntry, key)
    return (entry.fingerprint, entry.payload) if entry is not None else None


def get_cached(session: Session, key: str, fingerprint: str) -> str | None:
    entry = session.get(CacheEntry, key)
    return entry.payload if entry is not None and entry.fingerprint == fingerprint else None


def put_cached(database: Database, key: str, fingerprint: str, payload: str) -> None:
    """Insert or replace one entry in one statement: two processes computing the same entry both succeed."""
    insert = _upsert_insert(database)
    values = {"key": key, "fingerprint": fingerprint, "payload": payload, "updated_at": utcnow()}
    statement = insert(CacheEntry).values(**values)
    statement = statement.on_conflict_do_update(index_elements=[CacheEntry.key], set_={k: v for k, v in values.items() if k != "key"})

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(statement)

    retrying(write)


# ---------------------------------------------------------------- replays (arena db verify)


@dataclass(frozen=True)
class StoredMatch:
    """What replaying one stored match needs: its game, seed, moves and the result it claims."""

    id: int
    tournament_id: int
    game_id: str
    game_version: str
    game_params: str
    seed: int
    turns: int
    reason: str
    moves: bytes
    max_turns: int
    opening_plies: int  # the first plies of `moves` were the opening's, not the agents'
    secret: str | None  # the tournament's (arena.seeding.game_seed); never shown
    scores: tuple[float, ...]
    seat_params: tuple[str, ...]  # each seat's agent parameters (JSON), for the seat parameters (decks) it brought


def stored_matches(session: Session, tournament_id: int | None = None) -> Iterator[StoredMatch]:
    """Played matches (of one tournament, or all) in schedule order, with their seats."""
    query = (
        select(Match.id, Match.tournament_id, Match.game_id, Match.game_version, Match.game_params, Match.seed,
               Match.turns, Match.reason, Match.moves, Tournament.max_turns, Match.opening_plies, Tournament.secret)
        .join(Tournament, Tournament.id == Match.tournament_id)
        .order_by(Match.tournament_id, Match.index)
    )  # fmt: skip
    seats = select(MatchSeat.match_id, MatchSeat.score, MatchSeat.agent_params).order_by(MatchSeat.match_id, MatchSeat.seat)
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
        seats = seats.join(Match, Match.id == MatchSeat.match_id).where(Match.tournament_id == tournament_id)
    by_match: dict[int, list[tuple[float, str]]] = {}
    for match_id, score, params in session.execute(seats):
        by_match.setdefault(match_id, []).append((score or 0.0, params))
    for row in session.execute(query):
        seat_rows = by_match.get(row[0], [])
        yield StoredMatch(*row[:6], row[6] or 0, row[7] or "", row[8] or b"", row[9], row[10] or 0, row[11], tuple(s for s, _ in seat_rows),
                          tuple(p for _, p in seat_rows))  # fmt: skip


def reason_counts(session: Session, tournament_id: int) -> dict[str, int]:
    """How many of the tournament's played matches ended for each reason."""
    query = select(Match.reason, func.count()).where(Match.tournament_id == tournament_id).group_by(Match.reason)
    return {reason or "": count for reason, count in session.execute(query)}
