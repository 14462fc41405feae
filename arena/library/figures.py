"""The report's figures (`arena report`, `arena plot`, the server's PNGs) from one place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena import results
from arena.errors import ArenaError
from arena.plugins import Registry
from db.session import Database

if TYPE_CHECKING:
    from arena.report import Aggregates


def need_matplotlib() -> None:
    try:
        import matplotlib
    except ImportError:
        raise ArenaError("figures need matplotlib: pip install 'arena[report]'") from None
    matplotlib.use("Agg")  # headless: figures are only ever written to files


def aggregates(database: Database, registry: Registry, tournament: str | None = None, game: str | None = None) -> Aggregates:
    """The selected matches (with legal-move counts, for the histogram) and their tournaments' settings."""
    from arena.report import Aggregates, TournamentSettings

    selection = results.select(database, registry, tournament, game, with_legal_counts=True)
    if selection.tournament is not None:
        rows = [selection.tournament]
    else:  # --game: every tournament that contributed matches
        ids = sorted({record.tournament_id for record in selection.records})
        rows = [results.get_tournament(database, str(i)) for i in ids]
    return Aggregates(selection.records, selection.title, [TournamentSettings.from_row(row) for row in rows])


def figure(kind: str, agg: Aggregates, fmt: str = "png") -> bytes:
    """One figure of the report as file bytes."""
    need_matplotlib()
    from arena.report import draw, render

    return render(draw(kind, agg), fmt)
