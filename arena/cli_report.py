"""`arena report` and `arena plot`: the report's figures from the stored matches, one command away.

arena.cli attaches these two commands at its end. This module does not import arena.cli (that
would be an import cycle: arena.cli imports this module), so it declares the options every command
takes (--db, --plugins-dir, --tournament, --game) itself, with the same names and meaning, and
reaches the database and plugins through the group's context object (arena.cli.Context).
matplotlib is imported only when a figure is drawn, so other commands do not pay for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from arena.errors import ArenaError
from arena.library import figures
from arena.plugins import db_option, plugins_dir_option
from arena.report import PLOT_KINDS, Aggregates

if TYPE_CHECKING:
    from arena.library.storage import Database
    from arena.plugins import Registry


class _Context(Protocol):
    """The part of arena.cli.Context these commands use."""

    db_url: str | None
    plugins_dirs: list[str]

    def database(self, create: bool = True) -> Database: ...

    def registry(self) -> Registry: ...


def _options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--tournament/--game to choose the matches, --db/--plugins-dir as on every arena command."""
    command = db_options(command)
    command = click.option("--game", "game_spec", default=None, help="Every match of this game (same version and parameters).")(command)
    return click.option("--tournament", "tournament_key", default=None, metavar="ID|NAME",
                        help="One tournament (default: the latest).")(command)


def db_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--db and --plugins-dir, as on every arena command, for commands defined outside arena.cli."""

    @click.option("--db", "db_url", metavar="URL", help="Database URL or SQLite file (default $ARENA_DB, else ./arena.db).")
    @plugins_dir_option
    @click.pass_obj
    @functools.wraps(command)
    def wrapper(ctx: _Context, db_url: str | None, plugins_dirs: tuple[str, ...], **kwargs: Any) -> Any:
        if db_url is not None:
            ctx.db_url = db_option(db_url)
        ctx.plugins_dirs.extend(plugins_dirs)
        return command(ctx, **kwargs)

    return wrapper


def load(ctx: _Context, tournament_key: str | None, game_spec: str | None) -> Aggregates:
    """The selected matches (with legal-move counts, for the histogram) and their tournaments' settings."""
    return figures.aggregates(ctx.database(create=False), ctx.registry(), tournament_key, game_spec)


_need_matplotlib = figures.need_matplotlib


@click.command("report")
@click.option("--out", "out_text", required=True, type=click.Path(file_okay=False),
              help="Directory for the PNG figures and report.html (made if need be, in a folder that exists).")
@_options
def report_command(ctx: _Context, out_text: str, tournament_key: str | None, game_spec: str | None) -> None:
    """Write every figure as PNG plus one self-contained report.html (figures, tables, settings)."""
    _need_matplotlib()
    from arena.files import check_writable
    from arena.report import build_report

    if not out_text.strip():  # Path("") is the current folder
        raise ArenaError("--out is empty: give the folder for the report (e.g. --out report)")
    out_dir = Path(out_text)
    check_writable(out_dir, new_folder=True)  # before loading what may be 90,000 matches
    report = build_report(load(ctx, tournament_key, game_spec), out_dir)
    click.echo(f"wrote {report.html} and {len(report.figures)} figures in {out_dir}", err=True)


TRAINING = "training"
EVOLUTION = "evolution"


@click.command("plot")
@click.argument("kind", metavar="KIND", type=click.Choice((*PLOT_KINDS, TRAINING, EVOLUTION)))
@click.argument("files", nargs=-1, metavar="[FILE...]")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Image file: .png (or .svg, .pdf).")
@_options
def plot_command(ctx: _Context, kind: str, files: tuple[str, ...], out: Path, tournament_key: str | None,
                 game_spec: str | None) -> None:  # fmt: skip
    """Draw one figure of the report: elo-history, ratings, outcomes, net-wins, avg-turns, match-length, legal-moves
    or seats; or `training CHECKPOINT...`: the training curves arena train recorded beside that checkpoint (several
    checkpoints: their runs compared on shared axes); or `evolution FILE`: the win rates per generation of an arena
    evolve-decks log."""
    _need_matplotlib()
    from arena.report import plot, write_figure

    if kind == TRAINING:
        if not files:
            raise ArenaError("arena plot training needs the checkpoint (or its .metrics.jsonl file): "
                             "arena plot training FILE [FILE...] --out FILE.png")
        from arena.training.figure import comparison_figure, training_figure
        from arena.training.metrics import read_metrics

        runs = [(Path(file).name, read_metrics(file)) for file in files]
        if len(runs) == 1:
            write_figure(lambda: training_figure(runs[0][1]), out)
        else:
            write_figure(lambda: comparison_figure(runs), out)
    elif kind == EVOLUTION:
        if len(files) != 1:
            raise ArenaError("arena plot evolution needs the log of arena evolve-decks: arena plot evolution FILE --out FILE.png")
        from arena.evolution import evolution_figure, read_evolution

        generations = read_evolution(files[0])
        if not any(row["kind"] == "generation" for row in generations):
            raise ArenaError(f"{files[0]}: no generation in this deck evolution log, so nothing to draw (arena evolve-decks "
                             f"writes a line per generation)")  # fmt: skip
        write_figure(lambda: evolution_figure(generations), out)
    else:
        if files:
            raise ArenaError(f"arena plot {kind} takes no file argument (only 'training' and 'evolution' do)")
        from arena.files import check_writable

        if out.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise ArenaError(f"--out must end in .png, .svg or .pdf, got '{out.name}'")
        check_writable(out)  # before loading the matches
        plot(kind, load(ctx, tournament_key, game_spec), out)
    click.echo(f"wrote {out}", err=True)
