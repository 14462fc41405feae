"""The log of a deck evolution (`arena evolve-decks`, games.gwent_decks) and its figure (`arena plot evolution FILE`).

JSON Lines, one object per line, flushed as written (arena.training.metrics.MetricsWriter), so a run
stopped half-way keeps the generations it finished:
- the first line, `{"kind": "settings", ...}`: the game, the playing agent and the algorithm's numbers;
- then one `{"kind": "generation", ...}` per generation: `generation` (from 1), `decks` (the pool in
  order, each `{"deck", "origin", "wins", "draws", "losses", "win_rate"}`, origin `random`,
  `survivor` or `offspring`), `best` (`{"deck", "win_rate", "spec"}`: the deck that ranked first,
  and the agent spec that plays it), `best_win_rate`, `survivors_win_rate` (mean over the decks kept
  for the next generation), `mean_win_rate` (over the pool: 0.5 whenever every game has a winner and
  a loser or is a draw, since one deck's win is another's loss), `benchmark` (the best deck against
  fixed random decks: `{"decks", "games", "wins", "draws", "losses", "win_rate"}`, null without one)
  and `abnormal_endings` (`{reason: matches}` for matches that did not end normally, such as an
  illegal move: empty when every match did).
Win rates count a draw as half a win. No clock times: the file is the same, byte for byte, for
the same seed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.training.metrics import read_rows

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KINDS = ("settings", "generation")

BEST_COLOR, SURVIVORS_COLOR, MEAN_COLOR, BENCHMARK_COLOR = "#2e7d32", "#1565c0", "#9e9e9e", "#c62828"


def read_evolution(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of an evolution log; ArenaError (one line) when it is missing or is not one."""
    return read_rows(Path(path), KINDS, "deck evolution log", "deck evolution row", "arena evolve-decks --out FILE writes one")


def evolution_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Win rates per generation: the best deck's, the survivors' mean and the pool's mean (all within the pool, against
    the other decks of that generation), and the best deck's against the fixed benchmark decks where there are some."""
    from matplotlib.figure import Figure

    settings = next((row for row in rows if row["kind"] == "settings"), {})
    generations = [row for row in rows if row["kind"] == "generation"]
    fig = Figure(figsize=(8.5, 5), layout="constrained")
    axes = fig.subplots()
    x = [row["generation"] for row in generations]
    survivors = axes.plot(x, [row["survivors_win_rate"] for row in generations], "s-", color=SURVIVORS_COLOR, markersize=3,
                          label="survivors' mean, against the pool")  # fmt: skip
    mean = axes.plot(x, [row["mean_win_rate"] for row in generations], "--", color=MEAN_COLOR,
                     label="pool mean (0.5: each game one deck's win, the other's loss)")  # fmt: skip
    lines = axes.plot(x, [row["best_win_rate"] for row in generations], "o-", color=BEST_COLOR, markersize=4, zorder=3,
                      label="best deck, against the pool")  # fmt: skip
    scored = [(row["generation"], row["benchmark"]) for row in generations if row.get("benchmark")]
    if scored:
        decks, games = scored[-1][1]["decks"], scored[-1][1]["games"]
        lines += axes.plot([g for g, _ in scored], [b["win_rate"] for _, b in scored], "D-", color=BENCHMARK_COLOR, markersize=4,
                           label=f"best deck against {decks} fixed random decks ({games} games)")  # fmt: skip
    if not generations:
        axes.text(0.5, 0.5, "no generation finished yet", ha="center", va="center", transform=axes.transAxes)
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("generation")
    axes.set_ylabel("win rate (a draw is half)")
    axes.grid(alpha=0.3)
    axes.legend(handles=lines[:1] + survivors + mean + lines[1:], loc="best", fontsize=8)  # the best deck first (drawn last: on top)
    if x:
        axes.set_xticks(x if len(x) <= 20 else x[:: max(1, len(x) // 10)])
    agent = settings.get("agent", "?")
    fig.suptitle(f"Deck evolution on {settings.get('game', '?')}, played by {agent}: population {settings.get('population', '?')}, "
                 f"survivors {settings.get('survivors', '?')}")  # fmt: skip
    return fig
