"""Leaderboard rows: counts plus Bradley-Terry (with intervals), Elo and TrueSkill, from match records.

Everything a leaderboard needs of the matches is a fold in schedule order (`Standings`): per-agent
counts, pairwise result counts (Bradley-Terry's sufficient statistics), and the running Elo and
TrueSkill states. A fold can be stored and continued with later matches, which gives exactly the
numbers of one pass over all of them; arena.results keeps such a fold per selection, so a leaderboard
over a million stored matches reads only the matches stored since.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.errors import ArenaError
from arena.ratings import (
    PairCells,
    TrueSkillRating,
    bradley_terry_counts,
    bt_ranks,
    count_pairs,
    elo,
    pair_results_from_counts,
    rated,
    trueskill_ratings,
)
from arena.stats import NO_DEAL, AgentCounts, DistinctGames, agent_counts
from db.records import MatchRecord

SYSTEMS = ("bt", "elo", "trueskill")
SORT_KEYS = {"bt": "bt", "elo": "elo", "trueskill": "trueskill_conservative"}


def leaderboard(records: Sequence[MatchRecord], system: str = "bt", bootstrap: int = 100) -> list[dict[str, Any]]:
    """One row per agent, best first by the chosen system.

    `rank` only separates agents whose Bradley-Terry 95% intervals do not overlap: an agent's rank
    is 1 + the number of agents that are clearly better.
    """
    return sort_rows(leaderboard_rows(records, bootstrap), system)


def rank_column(system: str) -> tuple[str, str]:
    """The rank column's heading and the note under the table: sorted by another system than Bradley-Terry, the rank
    (Bradley-Terry's, from its intervals) does not follow the rows, and the heading and note say so."""
    heading = "#" if system == "bt" else "BT #"
    return heading, (f"{heading}: agents share a rank unless their Bradley-Terry 95% intervals are apart (or, where the "
                     "prior sets the ends that face each other, a test of the two tells them apart)"
                     + ("." if system == "bt" else f"; the rows are in {system} order."))  # fmt: skip


def sort_rows(rows: list[dict[str, Any]], system: str) -> list[dict[str, Any]]:
    """Rows best first by `system` (bt, elo or trueskill's conservative mu - 3 sigma)."""
    if system not in SYSTEMS:
        raise ArenaError(f"unknown rating system '{system}' (choose: {', '.join(SYSTEMS)})")
    key = SORT_KEYS[system]
    return sorted(rows, key=lambda row: (-row[key], row["agent"]))


@dataclass
class Standings:
    """What the leaderboard needs of the matches so far, replayed in schedule order; `add` continues it."""

    counts: dict[str, AgentCounts] = field(default_factory=dict)
    pairs: PairCells = field(default_factory=dict)
    elo: dict[str, float] = field(default_factory=dict)
    trueskill: dict[str, tuple[float, float]] = field(default_factory=dict)  # agent -> (mu, sigma^2)
    distinct: DistinctGames = field(default_factory=DistinctGames)

    def add(self, records: Sequence[MatchRecord], moves: Mapping[int, bytes] | None = None, deals: str = NO_DEAL) -> Standings:
        """Continue with `records` (in schedule order); `moves` (match id -> move list) and `deals` (what deals their
        game: arena.stats.deals_of) for the distinct games. Matches the game broke (`game_error`) are no one's result:
        they are skipped."""
        records = rated(records)
        agent_counts(records, self.counts)
        count_pairs(records, self.pairs)
        elo(records, ratings=self.elo)
        trueskill_ratings(records, state=self.trueskill)
        self.distinct.add(records, moves or {}, deals)
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": [asdict(c) for c in self.counts.values()],
            "pairs": [[a, b, score, n] for (a, b, score), n in self.pairs.items()],
            "elo": self.elo,
            "trueskill": {agent: list(state) for agent, state in self.trueskill.items()},
            "distinct": self.distinct.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Standings:
        counts = {}
        for c in data["counts"]:
            c["by_seat"] = {int(seat): value for seat, value in c["by_seat"].items()}
            counts[c["agent"]] = AgentCounts(**c)
        return cls(
            counts,
            {(a, b, score): n for a, b, score, n in data["pairs"]},
            dict(data["elo"]),
            {agent: (mu, var) for agent, (mu, var) in data["trueskill"].items()},
            DistinctGames.from_json(data["distinct"]),
        )

    def copy(self) -> Standings:
        return Standings.from_json(self.to_json())

    def rows(self, bootstrap: int = 100) -> list[dict[str, Any]]:
        """One row per agent, in no particular order."""
        results = pair_results_from_counts(self.pairs)
        bt = bradley_terry_counts(results, intervals=bootstrap > 0)
        ranks = bt_ranks(results, bt)
        rows: list[dict[str, Any]] = []
        for agent, c in self.counts.items():
            mu, var = self.trueskill[agent]
            rating = TrueSkillRating(mu, math.sqrt(var))
            rows.append(
                {
                    "agent": agent,
                    "games": c.games,
                    "wins": c.wins,
                    "draws": c.draws,
                    "losses": c.losses,
                    "forfeits": c.forfeits,
                    "score": c.score,
                    "win_rate": c.win_rate,
                    "bt": bt[agent].rating,
                    "bt_low": bt[agent].low,
                    "bt_high": bt[agent].high,
                    "bt_low_by_prior": bt[agent].low_by_prior,  # the data set no limit below: the prior sets bt_low
                    "bt_high_by_prior": bt[agent].high_by_prior,
                    "elo": self.elo[agent],
                    "trueskill_mu": rating.mu,
                    "trueskill_sigma": rating.sigma,
                    "trueskill_conservative": rating.conservative,
                    "rank": ranks[agent],
                }
            )
        return rows


def leaderboard_rows(records: Iterable[MatchRecord], bootstrap: int = 100) -> list[dict[str, Any]]:
    """One row per agent, in no particular order."""
    return Standings().add(list(records)).rows(bootstrap)


#: A leaderboard row's fields, in order: Standings.rows's, then add_distinct_games's (`arena leaderboard --csv`'s columns).
ROW_FIELDS = ("agent", "games", "wins", "draws", "losses", "forfeits", "score", "win_rate", "bt", "bt_low", "bt_high",
              "bt_low_by_prior", "bt_high_by_prior", "elo", "trueskill_mu", "trueskill_sigma", "trueskill_conservative",
              "rank", "distinct_games", "repeated_games")  # fmt: skip


def add_distinct_games(rows: list[dict[str, Any]], pairs: Sequence[dict[str, Any]]) -> str | None:
    """Give each leaderboard row its distinct games (summed over its pairs, see arena.stats.distinct_games) and
    `repeated_games` (some pair of the agent's played mostly repeats); returns the warning to print, if any."""
    for row in rows:
        mine = [pair for pair in pairs if row["agent"] in pair["agents"]]
        row["distinct_games"] = sum(pair["distinct"] for pair in mine)
        row["repeated_games"] = any(pair["repeated"] for pair in mine)
    return distinct_warning(pairs)


def distinct_warning(pairs: Sequence[dict[str, Any]]) -> str | None:
    """The warning for pairs whose matches are mostly the same game, or None."""
    repeated = [pair for pair in pairs if pair["repeated"]]
    if not repeated:
        return None
    worst = ", ".join(f"{p['pair']}: {p['distinct']} distinct of {p['matches']}" for p in repeated[:3])
    more = f" and {len(repeated) - 3} more" if len(repeated) > 3 else ""
    return (f"warning: fewer than half the games are distinct ({worst}{more}): repeated games are not new evidence, "
            "so the intervals overstate certainty; start the games from varied positions with --openings random:N "
            "or --openings FILE")  # fmt: skip
