"""Leaderboard rows: counts plus Elo and TrueSkill, from match records."""

from __future__ import annotations

from typing import Any, Sequence

from arena.errors import ArenaError
from arena.ratings import elo, trueskill_ratings
from arena.stats import agent_counts
from db.records import MatchRecord

SYSTEMS = ("elo", "trueskill")


def leaderboard(records: Sequence[MatchRecord], system: str = "elo") -> list[dict[str, Any]]:
    """One row per agent, best first by the chosen system."""
    if system not in SYSTEMS:
        raise ArenaError(f"unknown rating system '{system}' (choose: {', '.join(SYSTEMS)})")
    counts = agent_counts(records)
    elo_ratings, _ = elo(records)
    ts = trueskill_ratings(records)
    rows = []
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
                "elo": elo_ratings[agent],
                "trueskill_mu": rating.mu,
                "trueskill_sigma": rating.sigma,
                "trueskill_conservative": rating.conservative,
            }
        )
    key = "elo" if system == "elo" else "trueskill_conservative"
    rows.sort(key=lambda row: (-row[key], row["agent"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows
