"""Printing query results: a readable table, or --json, or --csv."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Sequence

import click
from rich.console import Console
from rich.table import Table


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        size = abs(value)
        if size >= 100:
            return f"{value:.1f}"
        if size >= 1 or value == 0:
            return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
        return f"{value:.3g}"
    return str(value)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        text_column = i == 0 or column == "agent"
        table.add_column(column, justify="left" if text_column else "right", no_wrap=text_column)
    for row in rows:
        table.add_row(*(fmt(v) for v in row))
    Console(width=max(200, Console().width)).print(table)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def print_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(["" if v is None else v for v in row] for row in rows)
    click.echo(buffer.getvalue(), nl=False)
