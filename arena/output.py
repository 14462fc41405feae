"""Printing query results: a readable table, or --json, or --csv.

Tables fit the terminal they are printed on. On a terminal the width is the terminal's; when a
table is wider, the caller's `fit` steps are tried in order (drop a column, or shorten one with
an ellipsis) until it fits, and a line under the table names what was left out. Rows never wrap.
Printed to a pipe or a file, a table keeps every column at its full width (the full data is also
in --json and --csv). Titles are split only between their phrases (" - "), never inside one.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isfinite(value) and value == int(value):  # a whole number as one, at any size (87 beside 200, not 200.0)
            return str(int(value))
        size = abs(value)
        if size >= 100:
            return f"{value:.1f}"
        if size >= 1:
            return f"{value:.3f}".rstrip("0").rstrip(".")
        return f"{value:.3g}"
    return str(value)


@dataclass(frozen=True)
class Drop:
    """A fit step: leave out this column."""

    column: str


@dataclass(frozen=True)
class Shorten:
    """A fit step: cut this column's cells (with an ellipsis) down to `min_width` characters at most."""

    column: str
    min_width: int


FitStep = Drop | Shorten


def terminal_width() -> int | None:
    """The width of the terminal stdout is attached to; None for a pipe or a file (print everything)."""
    console = Console()
    return console.width if console.is_terminal else None


def table_width(widths: Sequence[int]) -> int:
    """Characters a boxed table with these column widths takes: a border and two spaces per column, one closing border."""
    return sum(widths) + 3 * len(widths) + 1


def _default_fit(columns: Sequence[str], numeric: Sequence[bool]) -> list[FitStep]:
    """Without the caller's order: shorten text columns after the first, then the first (a label) to 24 characters, then
    drop columns from the right, then shorten the first further (a long label went before any figure)."""
    steps: list[FitStep] = [Shorten(c, 16) for c, num in zip(columns[1:], numeric[1:]) if not num]
    steps += [Shorten(columns[0], 24)] + [Drop(c) for c in reversed(columns[2:])]
    return steps + [Shorten(columns[0], 12)]


def cut_cells(values: Sequence[str], width: int) -> list[str]:
    """The cells of one column cut to `width` characters with an ellipsis: at the end, unless that makes two different
    values read alike (labels that differ only at their end, `neural:checkpoint=a.pt`, `...=b.pt`), then in the middle."""
    def end(value: str) -> str:
        return value if cell_len(value) <= width else value[: max(1, width - 1)] + "…"

    ends = [end(value) for value in values]
    if len(set(ends)) == len(set(values)) or width < 5:
        return ends
    head = (width - 1) * 2 // 5
    tail = width - 1 - head
    return [value if cell_len(value) <= width else value[:head] + "…" + value[len(value) - tail:] for value in values]


def fit_columns(columns: Sequence[str], cells: Sequence[Sequence[str]], width: int | None,
                steps: Sequence[FitStep]) -> tuple[list[int], dict[int, int]]:  # fmt: skip
    """Which columns to keep and how wide: (kept column indices, {index: cut width}); everything when width is None."""
    natural = [max([cell_len(columns[i])] + [cell_len(row[i]) for row in cells]) for i in range(len(columns))]
    kept = list(range(len(columns)))
    cut: dict[int, int] = {}
    if width is None:
        return kept, cut
    index = {name: i for i, name in enumerate(columns)}

    def excess() -> int:
        return table_width([cut.get(i, natural[i]) for i in kept]) - width

    for step in steps:
        if excess() <= 0:
            break
        i = index.get(step.column)
        if i is None or i not in kept:
            continue
        if isinstance(step, Drop):
            if len(kept) > 1:
                kept.remove(i)
        else:
            current = cut.get(i, natural[i])
            target = max(step.min_width, current - excess())
            if target < current:
                cut.pop(i, None)
                cut[i] = target  # the dict's order is that of the latest cuts
    while excess() > 0 and len(kept) > 1:  # the steps were not enough: leave out columns from the right, never squeeze
        kept.pop()  # one to nothing (the terminal would shrink the narrowest first: an id or a rank)
    if excess() > 0:
        cut[kept[0]] = max(1, cut.get(kept[0], natural[kept[0]]) - excess())
    for i in reversed(list(cut)):  # a later drop may have made room: give it back, latest cut (most important) first
        if i in kept and excess() < 0:
            cut[i] = min(natural[i], cut[i] - excess())
            if cut[i] == natural[i]:
                del cut[i]
    return kept, {i: w for i, w in cut.items() if i in kept}


def split_title(title: str, width: int | None) -> list[str]:
    """The title as lines no wider than `width`, broken only between its " - " phrases (one line off a terminal)."""
    lines = _pack(title.split(" - "), " - ", width)
    return [line if width is None or cell_len(line) <= width else line[: max(1, width - 1)] + "…" for line in lines]


def _pack(parts: Sequence[str], separator: str, width: int | None) -> list[str]:
    """The parts joined by `separator` into as few lines no wider than `width` as they go (a part is never split)."""
    lines: list[str] = []
    for part in parts:
        if lines and (width is None or cell_len(lines[-1]) + cell_len(separator) + cell_len(part) <= width):
            lines[-1] += separator + part
        else:
            lines.append(part)
    return lines


def fits(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> bool:
    """True when the table is printed whole: off a terminal, or narrow enough for it."""
    width = terminal_width()
    if width is None:
        return True
    natural = [max([cell_len(c)] + [cell_len(fmt(row[i])) for row in rows]) for i, c in enumerate(columns)]
    return table_width(natural) <= width


def numbered(agents: Sequence[str]) -> tuple[list[str], str]:
    """Column headers 1..n for agents that do not fit as names, and the note saying who is who."""
    note = "columns: " + ", ".join(f"{i}:\u00a0{a}" for i, a in enumerate(agents, 1))  # no line break inside an entry
    return [str(i) for i in range(1, len(agents) + 1)], note


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], fit: Sequence[FitStep] | None = None,
                note: str | Sequence[str | tuple[str, str]] | None = None) -> None:  # fmt: skip
    """A boxed table: numbers right-aligned, text left-aligned; fitted to the terminal (see the module docstring).

    `fit`: the steps to try, in order, when the table is wider than the terminal (default: shorten
    text columns, then drop columns from the right). `note`: lines printed under the table; a (column, line)
    pair is printed only when that column is shown.
    """
    width = terminal_width()
    cells = [[fmt(v) for v in row] for row in rows]
    numeric = [bool(rows) and all(_is_number(row[i]) or row[i] is None for row in rows) and any(_is_number(row[i]) for row in rows)
               for i in range(len(columns))]  # fmt: skip
    steps = list(fit) if fit is not None else _default_fit(columns, numeric)
    kept, cut = fit_columns(columns, cells, width, steps)
    table = Table(show_edge=True, pad_edge=True)
    for i in kept:
        table.add_column(columns[i], justify="right" if numeric[i] else "left", no_wrap=True, overflow="ellipsis",
                         max_width=cut.get(i))  # fmt: skip
    for i, width_i in cut.items():  # cut here, not by the table: where the end tells rows apart, the middle goes
        for row, value in zip(cells, cut_cells([row[i] for row in cells], width_i)):
            row[i] = value
    for row in cells:
        table.add_row(*(row[i] for i in kept))
    console = Console(width=width if width is not None else 100_000, soft_wrap=False)
    for line in split_title(title, width):
        console.print(line, markup=False, highlight=False, no_wrap=True, overflow="ellipsis")
    console.print(table)
    hidden = [columns[i] for i in range(len(columns)) if i not in kept]
    notes = []
    for item in [note] if isinstance(note, str) else note or ():
        column, text = (None, item) if isinstance(item, str) else item
        if column not in hidden:
            notes.append(text)
    if hidden:
        notes.append(f"(left out to fit {width} columns: {', '.join(hidden)}; --json or --csv shows every column)")
    elif cut:
        notes.append("(… = cut to fit the terminal; --json or --csv shows every value in full)")
    for text in notes:
        for line in _pack(text.split(" "), " ", width):  # prose: wrapped between words
            console.print(line, markup=False, highlight=False, no_wrap=True, style="dim")


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def json_cell(value: Any) -> Any:
    """A CSV cell's value: a list or a mapping as JSON, anything else as it is."""
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def print_record_csv(record: Mapping[str, Any]) -> None:
    """One record (a named agent, an SPRT summary) as a header and one row; lists and mappings in a cell as JSON."""
    print_csv(list(record), [[json_cell(v) for v in record.values()]])


def print_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(["" if v is None else v for v in row] for row in rows)
    click.echo(buffer.getvalue(), nl=False)

