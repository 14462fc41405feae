"""The tournament queue of `arena serve`, in the tournaments table: short, exclusive claims with leases.

A claim is one short transaction. On PostgreSQL the candidate row is read with
SELECT ... FOR UPDATE SKIP LOCKED, so servers claiming at once take different rows without
waiting; on SQLite the transaction starts with BEGIN IMMEDIATE (writers are serialised). In both,
the UPDATE repeats the claimable condition and its row count says whether the claim was won, so a
tournament is never held by two servers at once.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, or_, select, update

from db.models import Tournament, utcnow
from db.session import Database, retrying, serialised_write

#: Formats that never end by themselves (a continuous ladder): claimed after every other tournament (among them,
#: the one that waited longest first), and their worker goes to another tournament that waits (gives_way).
ENDLESS = ("ladder",)


#: `claimed_by` of a game on a server's play page: this prefix and the server's worker id. The server renews its lease
#: while it holds the game (in memory: a person plays it there); the queue never claims one, and a game whose lease
#: ran out (its server was killed) is cancelled by any server (`cancel_lost_games`).
PLAY_PREFIX = "play:"


def _claimable(now: datetime):  # type: ignore[no-untyped-def]
    """Queued, or running under a lease that ran out (its server died or stopped); never a play page's game."""
    return or_(
        and_(Tournament.status == "queued", or_(Tournament.lease_until.is_(None), Tournament.lease_until < now)),
        and_(Tournament.status == "running", Tournament.claimed_by.is_not(None), Tournament.lease_until < now,
             ~Tournament.claimed_by.startswith(PLAY_PREFIX, autoescape=True)),
    )


def claim(database: Database, worker: str, lease_seconds: float) -> int | None:
    """Claim the oldest claimable tournament for `worker`, mark it running; its id, or None."""

    def attempt() -> int | None:
        now = utcnow()
        with serialised_write(database) as connection:
            endless = Tournament.format.in_(ENDLESS)
            waited = case((endless, Tournament.lease_until)).asc().nulls_first()  # ladders: the longest released first
            query = select(Tournament.id).where(_claimable(now)).order_by(endless, waited, Tournament.id).limit(1)
            if connection.dialect.name != "sqlite":
                query = query.with_for_update(skip_locked=True)
            tournament_id = connection.execute(query).scalar()
            if tournament_id is None:
                return None
            won = connection.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, _claimable(now))
                .values(status="running", claimed_by=worker, lease_until=now + timedelta(seconds=lease_seconds))
            ).rowcount
            connection.commit()
        return tournament_id if won == 1 else None

    return retrying(attempt)


def is_endless(database: Database, tournament_id: int) -> bool:
    """Does this tournament never end by itself (a ladder)?"""
    with database.engine.connect() as connection:
        return bool(connection.execute(select(Tournament.format.in_(ENDLESS)).where(Tournament.id == tournament_id)).scalar())


def gives_way(database: Database, tournament_id: int, to_endless: bool = False) -> bool:
    """Is this an endless tournament (a ladder) that another claimable tournament waits behind: one that is not
    endless, or (`to_endless`: its turn is over) any?"""
    if not is_endless(database, tournament_id):
        return False
    with database.engine.connect() as connection:
        waiting = select(Tournament.id).where(_claimable(utcnow()), Tournament.id != tournament_id)
        if not to_endless:
            waiting = waiting.where(Tournament.format.not_in(ENDLESS))
        return connection.execute(waiting.limit(1)).first() is not None


def renew(database: Database, tournament_id: int, worker: str, lease_seconds: float) -> bool:
    """Extend `worker`'s lease; False when it holds the tournament no more (cancelled, or taken over)."""

    def write() -> bool:
        with database.engine.begin() as connection:
            return connection.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.claimed_by == worker, Tournament.status == "running")
                .values(lease_until=utcnow() + timedelta(seconds=lease_seconds))
            ).rowcount == 1

    return retrying(write)


def holds(database: Database, tournament_id: int, worker: str) -> bool:
    """Whether `worker` still holds the tournament (it is running under its claim: not cancelled, not taken over)."""
    with database.engine.connect() as connection:
        found = connection.execute(select(Tournament.id).where(
            Tournament.id == tournament_id, Tournament.claimed_by == worker, Tournament.status == "running")).first()
    return found is not None


def held_by(database: Database, worker: str) -> list[int]:
    """The tournaments `worker` holds: running under its claim with a lease not yet run out (one it gave up, a ladder
    that gave way say, keeps its claimed_by but its lease ended when it was released)."""
    with database.engine.connect() as connection:
        rows = connection.execute(select(Tournament.id).where(
            Tournament.claimed_by == worker, Tournament.status == "running", Tournament.lease_until > utcnow()))  # fmt: skip
        return sorted(int(row[0]) for row in rows)


def release(database: Database, tournament_id: int, worker: str, status: str | None = None, error: str | None = None) -> None:
    """Give the tournament up: its lease ends now (anyone may resume it); `status` (failed) with `error` if given."""
    values: dict[str, object] = {"lease_until": utcnow() - timedelta(seconds=1)}
    if status is not None:
        values.update(status=status, error=error, finished_at=utcnow())

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.claimed_by == worker, Tournament.status == "running")
                .values(**values)
            )

    retrying(write)


def release_all(database: Database, worker_prefix: str) -> int:
    """End the leases of every tournament held by workers named `worker_prefix`...: a restarted server
    takes its own tournaments back at once instead of waiting for the leases to run out."""

    def write() -> int:
        with database.engine.begin() as connection:
            return connection.execute(
                update(Tournament)
                .where(Tournament.claimed_by.startswith(worker_prefix, autoescape=True), Tournament.status == "running")
                .values(lease_until=utcnow() - timedelta(seconds=1))
            ).rowcount

    return retrying(write)


#: A tournament not finished: it may still be played (resumed, for a stopped one), cancelled, or joined (a ladder).
UNFINISHED = ("queued", "running", "stopped")


def cancel(database: Database, tournament_id: int) -> str | None:
    """Cancel a queued, running or stopped tournament; its status afterwards (None: no such tournament)."""

    def write() -> str | None:
        with database.engine.begin() as connection:
            connection.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.status.in_(UNFINISHED))
                .values(status="cancelled", finished_at=utcnow())
            )
            return connection.execute(select(Tournament.status).where(Tournament.id == tournament_id)).scalar()

    return retrying(write)


def take_here(database: Database, tournament_id: int) -> str | None:
    """A tournament a process is about to play by itself (`arena run-tournament --resume`), taken off the queue: a
    queued one, or one whose server's lease ran out, becomes running with no claim (no server claims it then). Its
    status afterwards, or "held" when a server plays it under a live lease (left as it is); None: no such tournament."""

    def attempt() -> str | None:
        now = utcnow()
        with serialised_write(database) as connection:
            query = select(Tournament.status, Tournament.claimed_by, Tournament.lease_until > now).where(Tournament.id == tournament_id)
            if connection.dialect.name != "sqlite":
                query = query.with_for_update()
            row = connection.execute(query).first()
            if row is None:
                return None
            current, claimed_by, live = row
            if current == "running" and claimed_by is not None and live:
                return "held"
            if current == "queued" or (current == "running" and claimed_by is not None):
                connection.execute(update(Tournament).where(Tournament.id == tournament_id)
                                   .values(status="running", claimed_by=None, lease_until=None))  # fmt: skip
                connection.commit()
                return "running"
            return str(current)

    return retrying(attempt)


def status(database: Database, tournament_id: int) -> str | None:
    with database.engine.connect() as connection:
        return connection.execute(select(Tournament.status).where(Tournament.id == tournament_id)).scalar()


def play_hold(worker: str, lease_seconds: float) -> dict[str, Any]:
    """The claim columns of a play page's game that `worker` holds for `lease_seconds` more: written with the game
    (db.queries.create_tournament), then renewed by hold_games."""
    return {"claimed_by": PLAY_PREFIX + worker, "lease_until": utcnow() + timedelta(seconds=lease_seconds)}


def hold_games(database: Database, tournament_ids: list[int], worker: str, lease_seconds: float) -> None:
    """The play page's games this server holds, their lease renewed for `lease_seconds` more."""
    if not tournament_ids:
        return

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(
                update(Tournament).where(Tournament.id.in_(tournament_ids), Tournament.status == "running")
                .values(**play_hold(worker, lease_seconds))
            )  # fmt: skip

    retrying(write)


def cancel_lost_games(database: Database) -> int:
    """Cancel the play page's games whose server stopped renewing them (killed: the game lived in its memory); how many."""

    def write() -> int:
        with database.engine.begin() as connection:
            return connection.execute(
                update(Tournament).where(Tournament.status == "running", Tournament.lease_until < utcnow(),
                                         Tournament.claimed_by.startswith(PLAY_PREFIX, autoescape=True))
                .values(status="cancelled", finished_at=utcnow(), error="its server stopped while the game was played")
            ).rowcount  # fmt: skip

    return retrying(write)
