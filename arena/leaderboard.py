"""Leaderboard rows: counts plus Bradley-Terry (with intervals), Elo and TrueSkill, from match records."""

from __future__ import annotations

from typing import Any, Sequence

from arena.errors import ArenaError
from arena.ratings import bradley_terry, elo, rated, separated_ranks, trueskill_ratings
from arena.stats import agent_counts
from db.records import MatchRecord

SYSTEMS = ("bt", "elo", "trueskill")
SORT_KEYS = {"bt": "bt", "elo": "elo", "trueskill": "trueskill_conservative"}


def leaderboard(records: Sequence[MatchRecord], system: str = "bt", bootstrap: int = 100) -> list[dict[str, Any]]:
    """One row per agent, best first by the chosen system.

    `rank` only separates agents whose Bradley-Terry 95% intervals do not overlap: an agent's rank
    is 1 + the number of agents that are clearly better.
    """
    return sort_rows(leaderboard_rows(records, bootstrap), system)


def sort_rows(rows: list[dict[str, Any]], system: str) -> list[dict[str, Any]]:
    """Rows best first by `system` (bt, elo or trueskill's conservative mu - 3 sigma)."""
    if system not in SYSTEMS:
        raise ArenaError(f"unknown rating system '{system}' (choose: {', '.join(SYSTEMS)})")
    key = SORT_KEYS[system]
    return sorted(rows, key=lambda row: (-row[key], row["agent"]))


def leaderboard_rows(records: Sequence[MatchRecord], bootstrap: int = 100) -> list[dict[str, Any]]:
    """One row per agent, in no particular order (matches the game broke, `game_error`, are no one's result)."""
    records = rated(records)
    counts = agent_counts(records)
    elo_ratings, _ = elo(records)
    ts = trueskill_ratings(records)
    bt = bradley_terry(records, bootstrap=bootstrap)
    ranks = separated_ranks({agent: (r.low, r.high) for agent, r in bt.items()})
    rows: list[dict[str, Any]] = []
    for agent, c in counts.items():
        rating = ts[agent]
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
                "elo": elo_ratings[agent],
                "trueskill_mu": rating.mu,
                "trueskill_sigma": rating.sigma,
                "trueskill_conservative": rating.conservative,
            }
        )
    for row in rows:
        row["rank"] = ranks[row["agent"]]
    return rows


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
