"""Typed SQLAlchemy 2.0 models. Alembic migrations in db/migrations create and upgrade these tables."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, ForeignKey, Index, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class NamedAgent(Base):
    """An agent type plus parameters (plus optional game and checkpoint) saved under a name."""

    __tablename__ = "agents"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    type: Mapped[str] = mapped_column(String(100))
    params: Mapped[str] = mapped_column(Text, default="{}")  # JSON object of raw parameter values
    game: Mapped[str | None] = mapped_column(String(100))
    checkpoint: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The name of the user token that registered it over HTTP, the only one that may remove it there; None: made with
    # the CLI (on the server's machine).
    owner: Mapped[str | None] = mapped_column(String(200))


class Tournament(Base):
    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200), unique=True)
    game_id: Mapped[str] = mapped_column(String(100))
    game_version: Mapped[str] = mapped_column(String(50))
    game_params: Mapped[str] = mapped_column(Text)  # canonical key=value;... text
    format: Mapped[str] = mapped_column(String(50))
    rounds: Mapped[int]
    seed: Mapped[int] = mapped_column(BigInteger)  # 63-bit derived seeds
    max_turns: Mapped[int]
    time_per_move: Mapped[float | None]
    players: Mapped[int]
    settings: Mapped[str] = mapped_column(Text)  # JSON: agents and their specs, everything needed to resume
    # The whole schedule, written before the first match: for each match in order, the position (in
    # settings' agent list) of the agent in each seat, as arena.schedule.encode_schedule packs it. A match
    # row is written when the match has been played; the pending matches are the scheduled ones without a row.
    schedule: Mapped[bytes] = mapped_column(LargeBinary)
    scheduled: Mapped[int] = mapped_column(default=0, server_default="0")  # matches in the schedule
    status: Mapped[str] = mapped_column(String(20), default="running", index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    # Mixed into the seeds of a hidden-information game's chance (arena.seeding.game_seed); never shown or exported.
    secret: Mapped[str | None] = mapped_column(String(64))
    # Bumped by every batch of stored results: cached analyses compare it to know they are current.
    revision: Mapped[int] = mapped_column(default=0, server_default="0")
    # The tournament queue of `arena serve`: status queued -> running -> done | cancelled | failed;
    # a server playing it holds a lease (its worker id, until when), renewed while it plays.
    claimed_by: Mapped[str | None] = mapped_column(String(200))
    lease_until: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)  # why it failed
    # The name of the user token that submitted it over HTTP (a play page's person), the only one that may cancel it
    # there; None: made with the CLI (on the server's machine).
    owner: Mapped[str | None] = mapped_column(String(200))

    matches: Mapped[list[Match]] = relationship(back_populates="tournament", cascade="all, delete-orphan")


class Match(Base):
    __tablename__ = "matches"
    __table_args__ = (UniqueConstraint("tournament_id", "index", name="uq_match_schedule"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    index: Mapped[int]  # position in the schedule: ratings replay matches in this order
    game_id: Mapped[str] = mapped_column(String(100))
    game_version: Mapped[str] = mapped_column(String(50))
    game_params: Mapped[str] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)  # 63-bit derived seeds
    status: Mapped[str] = mapped_column(String(20), default="done")  # rows are written once played: always done
    turns: Mapped[int | None]
    reason: Mapped[str | None] = mapped_column(String(30))
    detail: Mapped[str | None] = mapped_column(Text)
    moves: Mapped[bytes | None] = mapped_column(LargeBinary)  # arena.match.encode_ints
    legal_counts: Mapped[bytes | None] = mapped_column(LargeBinary)  # legal actions before each move
    duration: Mapped[float | None]
    finished_at: Mapped[datetime | None]
    rounds: Mapped[int | None]  # for games played in rounds
    first_player: Mapped[int | None]  # the seat that moved first
    # The first plies of `moves` that were the match's opening (arena.openings), played by no agent.
    opening_plies: Mapped[int] = mapped_column(default=0, server_default="0")

    tournament: Mapped[Tournament] = relationship(back_populates="matches")
    seats: Mapped[list[MatchSeat]] = relationship(back_populates="match", cascade="all, delete-orphan", order_by="MatchSeat.seat")


class MatchSeat(Base):
    __tablename__ = "match_seats"
    __table_args__ = (Index("ix_match_seats_agent", "agent"),)

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(primary_key=True)
    agent: Mapped[str] = mapped_column(String(300))  # the label shown in leaderboards
    agent_type: Mapped[str] = mapped_column(String(100))
    agent_params: Mapped[str] = mapped_column(Text)  # JSON of the validated parameters
    agent_version: Mapped[str] = mapped_column(String(50))
    score: Mapped[float | None]
    outcome: Mapped[str | None] = mapped_column(String(10))  # win | draw | loss
    rank: Mapped[int | None]
    think_time: Mapped[float | None]  # seconds, summed over the seat's moves
    network_time: Mapped[float | None]  # seconds of a remote agent's round trips (not in think_time)
    moves: Mapped[int | None]  # actions this seat made

    match: Mapped[Match] = relationship(back_populates="seats")


class CacheEntry(Base):
    """An expensive analysis (e.g. a leaderboard over a million matches) and the data revision it was computed at."""

    __tablename__ = "cache"

    key: Mapped[str] = mapped_column(String(500), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(Text)
    payload: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Token(Base):
    """An API token of `arena serve`: only a digest is kept, and an indexed prefix to find it."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(10), default="user", server_default="user")  # user | bot
    prefix: Mapped[str] = mapped_column(String(20), index=True)
    digest: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]


class SprtStateRow(Base):
    """The state of a tournament's SPRT as its run last stored it, with the matches it had seen (arena.sprt_run)."""

    __tablename__ = "sprt_states"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    units: Mapped[int]  # games (or pairs) counted: a contiguous prefix of the schedule
    counts: Mapped[str] = mapped_column(Text)  # JSON list: trinomial or pentanomial counts
    llr: Mapped[float]
    decision: Mapped[str | None] = mapped_column(String(10))  # H0 | H1 | None (going on)
    pending: Mapped[str] = mapped_column(Text)  # JSON {schedule index: B's score or null}: stored, not yet counted
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class LadderJoin(Base):
    """An agent that asked to join a running ladder, in join order (id); admitted at the ladder's next batch boundary."""

    __tablename__ = "ladder_joins"
    __table_args__ = (UniqueConstraint("tournament_id", "label", name="uq_ladder_join"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(300))
    entry: Mapped[str] = mapped_column(Text)  # JSON: the agent's entry as settings["agents"] holds it (AgentEntry.to_json)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
