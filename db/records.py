"""Plain records that leave the database: analysis works on these, never on ORM objects."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SeatRecord:
    seat: int
    agent: str
    score: float
    outcome: str
    rank: int
    think_time: float
    moves: int
    network_time: float = 0.0  # a remote agent's round trips, apart from its think time


@dataclass(frozen=True, slots=True)
class MatchRecord:
    id: int
    tournament_id: int
    index: int
    seed: int
    game_id: str
    game_version: str
    turns: int
    reason: str
    seats: tuple[SeatRecord, ...]
    legal_counts: bytes | None = None
    detail: str | None = None
    rounds: int | None = None  # for games played in rounds
    first_player: int | None = None  # the seat that moved first

    def agents(self) -> tuple[str, ...]:
        return tuple(s.agent for s in self.seats)
