"""Counts, pairwise matrices and turn-length statistics: pure functions over match records."""

from __future__ import annotations

import base64
import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal, get_args

import numpy as np

from arena.match import decode_ints
from arena.ratings import rated
from db.records import MatchRecord


@dataclass
class AgentCounts:
    agent: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0  # losses by an own fault (illegal action, error, timeout, crash)
    think_time: float = 0.0
    moves: int = 0
    by_seat: dict[int, list[float]] = field(default_factory=dict)  # seat -> [games, score]

    @property
    def score(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def think_per_move(self) -> float:
        return self.think_time / self.moves if self.moves else 0.0


def agent_counts(records: Iterable[MatchRecord], counts: dict[str, AgentCounts] | None = None) -> dict[str, AgentCounts]:
    """Per-agent counts of `records`, added to `counts` (updated in place) when given."""
    counts = {} if counts is None else counts
    for record in records:
        fault = record.reason not in ("normal", "turn_limit")
        for seat in record.seats:
            c = counts.get(seat.agent)
            if c is None:
                c = counts[seat.agent] = AgentCounts(seat.agent)
            c.games += 1
            if seat.outcome == "win":
                c.wins += 1
            elif seat.outcome == "draw":
                c.draws += 1
            else:
                c.losses += 1
                if fault and seat.score < 0:
                    c.forfeits += 1
            c.think_time += seat.think_time
            c.moves += seat.moves
            by_seat = c.by_seat.setdefault(seat.seat, [0, 0.0])
            by_seat[0] += 1
            by_seat[1] += 1.0 if seat.outcome == "win" else 0.5 if seat.outcome == "draw" else 0.0
    return counts


#: Fewer distinct games than this share of a pair's matches: its results are mostly repeats.
DISTINCT_SHARE_WARNING = 0.5


#: What deals a match's game, for telling games apart (DistinctGames.add).
NO_DEAL, BY_SEED, BY_TOURNAMENT = "none", "seed", "tournament"
#: A match's deal as bytes of its digest, by what deals its game.
_DEAL_BYTES: dict[str, Callable[[MatchRecord], bytes]] = {
    NO_DEAL: lambda record: b"",
    BY_SEED: lambda record: b"%d" % record.seed,
    BY_TOURNAMENT: lambda record: b"%d:%d" % (record.tournament_id, record.seed),
}


@dataclass
class DistinctGames:
    """Per group of agents that met (a pair, for two players): matches, and the distinct games among them.

    Two matches are the same game when the same agents sat in the same seats and the same move list
    (openings included) was played, in a game with chance also from the same deal (`deals`: the match
    seed, and for hidden information the tournament too, whose secret is mixed into its deals; Gwent
    Lite's random decks made 20 matches of two deterministic agents look like 4 games): deterministic
    agents repeat one game, and counting each repeat as new evidence makes every interval look far
    surer than it is. A game is kept as a 64-bit
    digest of its seating and moves (BLAKE2b; two different games share one with odds of about
    n^2 / 2^65: 3e-8 at a million matches), in a sorted array per group, so the counts can be
    stored and continued cheaply.
    """

    matches: Counter[tuple[str, ...]] = field(default_factory=Counter)
    games: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)  # sorted unique uint64 digests
    _new: dict[tuple[str, ...], list[int]] = field(default_factory=dict)

    def add(self, records: Iterable[MatchRecord], moves: Mapping[int, bytes], deals: str = NO_DEAL) -> DistinctGames:
        """Count `records`; `moves` maps match id to its stored move list; `deals` says what deals a match's game
        (NO_DEAL: no chance, BY_SEED: the match seed, BY_TOURNAMENT: the seed and the tournament's secret)."""
        deal = _DEAL_BYTES[deals]
        for record in records:
            seating = record.agents()
            group = tuple(sorted(seating))
            self.matches[group] += 1
            digest = hashlib.blake2b("\x1f".join(seating).encode() + b"\x00" + moves.get(record.id, b"") + b"\x00" + deal(record),
                                     digest_size=8)  # fmt: skip
            self._new.setdefault(group, []).append(int.from_bytes(digest.digest(), "little"))
        return self

    def _merge(self) -> None:
        for group, digests in self._new.items():
            new = np.unique(np.array(digests, dtype=np.uint64))
            known = self.games.get(group, np.empty(0, dtype=np.uint64))
            at = np.searchsorted(known, new)
            present = known[np.minimum(at, len(known) - 1)] == new if len(known) else np.zeros(len(new), dtype=bool)
            self.games[group] = np.insert(known, at[~present], new[~present])
        self._new.clear()

    def rows(self) -> list[dict[str, Any]]:
        """One row per group: `repeated` marks fewer distinct games than half its matches."""
        self._merge()
        rows = []
        for group in sorted(self.matches):
            count, distinct = self.matches[group], len(self.games[group])
            rows.append({"pair": " vs ".join(group), "agents": list(group), "matches": count, "distinct": distinct,
                         "repeated": distinct < DISTINCT_SHARE_WARNING * count})  # fmt: skip
        return rows

    def to_json(self) -> list[list[Any]]:
        self._merge()
        return [[list(group), count, base64.b64encode(self.games[group].astype("<u8").tobytes()).decode()]
                for group, count in self.matches.items()]  # fmt: skip

    @classmethod
    def from_json(cls, data: list[list[Any]]) -> DistinctGames:
        found = cls()
        for group, count, digests in data:
            key = tuple(group)
            found.matches[key] = count
            found.games[key] = np.frombuffer(base64.b64decode(digests), dtype="<u8").astype(np.uint64)
        return found


def distinct_games(records: Iterable[MatchRecord], moves: Mapping[int, bytes], deals: str = NO_DEAL) -> list[dict[str, Any]]:
    """Per group of agents that met: matches and distinct games among them (see DistinctGames)."""
    return DistinctGames().add(records, moves, deals).rows()


def deals_of(game_info: Any) -> str:
    """What deals a game's matches (DistinctGames): nothing without chance, the seed, or the seed and the tournament's
    secret for hidden information (arena.seeding.game_seed)."""
    if game_info is None or not game_info.stochastic:
        return NO_DEAL
    return BY_SEED if game_info.perfect_information else BY_TOURNAMENT


MatrixKind = Literal["net-wins", "win-rate", "draw-rate", "games", "avg-turns"]
MATRIX_KINDS: tuple[str, ...] = get_args(MatrixKind)


def matrix(records: Sequence[MatchRecord], kind: str, agents: Sequence[str]) -> list[list[float | None]]:
    """A square matrix over `agents`, row agent against column agent; None where undefined (game_error matches skipped).

    net-wins: row's wins minus its losses against column (pairwise finishes in N-player matches);
    win-rate: row's wins / games against column; draw-rate: the games neither finished ahead / games (so the row's loss
    rate is 1 - win-rate - draw-rate); games: matches together; avg-turns: mean turns.
    """
    if kind not in MATRIX_KINDS:
        raise ValueError(f"unknown matrix kind {kind!r}")
    records = rated(records)
    index = {agent: i for i, agent in enumerate(agents)}
    n = len(agents)
    wins = np.zeros((n, n))
    draws = np.zeros((n, n))
    games = np.zeros((n, n))
    turns = np.zeros((n, n))
    for record in records:
        for a, b in combinations(record.seats, 2):
            i, j = index.get(a.agent), index.get(b.agent)
            if i is None or j is None:
                continue
            games[i, j] += 1
            games[j, i] += 1
            turns[i, j] += record.turns
            turns[j, i] += record.turns
            if a.rank < b.rank:
                wins[i, j] += 1
            elif b.rank < a.rank:
                wins[j, i] += 1
            else:
                draws[i, j] += 1
                draws[j, i] += 1
    values: list[list[float | None]] = []
    for i in range(n):
        row: list[float | None] = []
        for j in range(n):
            if i == j:
                row.append(None)
            elif kind == "games":
                row.append(int(games[i, j]))
            elif games[i, j] == 0:  # never met: no figure (a net 0 would read as an even record)
                row.append(None)
            elif kind == "net-wins":
                row.append(int(wins[i, j] - wins[j, i]))
            elif kind == "win-rate":
                row.append(float(wins[i, j] / games[i, j]))
            elif kind == "draw-rate":
                row.append(float(draws[i, j] / games[i, j]))
            else:
                row.append(float(turns[i, j] / games[i, j]))
        values.append(row)
    return values


def distribution(values: Sequence[float] | np.ndarray) -> dict[str, float | int | None]:
    """count, mean, median, p90, max (None when empty)."""
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return {"count": 0, "mean": None, "median": None, "p90": None, "max": None}
    return {
        "count": int(array.size),
        "mean": float(array.mean()),
        "median": float(np.median(array)),
        "p90": float(np.percentile(array, 90)),
        "max": float(array.max()),
    }


def turn_stats(records: Sequence[MatchRecord]) -> dict[str, Any]:
    """Match length overall, per pair of agents and per reason; legal moves per turn; think time per move."""
    lengths = [r.turns for r in records]
    per_pair: dict[str, list[int]] = defaultdict(list)
    per_reason: dict[str, list[int]] = defaultdict(list)
    for r in records:
        per_pair[" vs ".join(sorted(r.agents()))].append(r.turns)
        per_reason[r.reason].append(r.turns)
    legal_dist = distribution(legal_move_counts(records))
    legal_summary = {k: legal_dist[k] for k in ("count", "mean", "median", "max")}
    counts = agent_counts(records)
    return {
        "matches": len(records),
        "match_length": distribution(lengths),
        "per_pair": {pair: distribution(v) for pair, v in sorted(per_pair.items())},
        "per_reason": {reason: distribution(v) for reason, v in sorted(per_reason.items())},
        "reasons": dict(sorted(Counter(r.reason for r in records).items())),
        "legal_moves_per_turn": legal_summary,
        "rounds": distribution([r.rounds for r in records if r.rounds is not None]),
        "think_time_per_move": {agent: c.think_per_move for agent, c in sorted(counts.items())},
    }


def legal_move_counts(records: Iterable[MatchRecord]) -> np.ndarray:
    """Every stored legal-moves-per-turn value, for histograms."""
    parts = [np.asarray(decode_ints(r.legal_counts), dtype=np.int64) for r in records if r.legal_counts]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def seat_results(records: Sequence[MatchRecord]) -> dict[str, Any]:
    """Score by seat (win 1, draw 0.5, loss 0) for the whole selection and for every agent: the first-mover advantage."""
    records = rated(records)

    def summary(games: float, score: float) -> dict[str, float | int | None]:
        return {"games": int(games), "score": score, "score_rate": score / games if games else None}

    overall: dict[int, list[float]] = {}
    for record in records:
        for seat in record.seats:
            total = overall.setdefault(seat.seat, [0, 0.0])
            total[0] += 1
            total[1] += 1.0 if seat.outcome == "win" else 0.5 if seat.outcome == "draw" else 0.0
    first = [0, 0.0]  # games and score of whoever moved first (in Onitama the cards decide who)
    for record in records:
        for seat in record.seats:
            if seat.seat == record.first_player:
                first[0] += 1
                first[1] += 1.0 if seat.outcome == "win" else 0.5 if seat.outcome == "draw" else 0.0
    counts = agent_counts(records)
    return {
        "overall": [dict(seat=seat, **summary(*overall[seat])) for seat in sorted(overall)],
        "first_mover": summary(*first),
        "agents": {
            agent: [dict(seat=seat, **summary(*c.by_seat[seat])) for seat in sorted(c.by_seat)]
            for agent, c in sorted(counts.items())
        },
    }


def place_counts(records: Iterable[MatchRecord]) -> dict[str, list[int]]:
    """Per agent, how often it finished in each place: list[k] = matches finished in place k + 1.

    Places are the stored ranks (1 = best; tied players share the better place, so with a tie for
    first the next player is third). Every list is as long as the largest table in the records.
    """
    counts: dict[str, list[int]] = {}
    size = 0
    for record in records:
        size = max(size, len(record.seats))
        for seat in record.seats:
            places = counts.setdefault(seat.agent, [])
            if len(places) < seat.rank:
                places.extend([0] * (seat.rank - len(places)))
            places[seat.rank - 1] += 1
    return {agent: places + [0] * (size - len(places)) for agent, places in sorted(counts.items())}
