"""The training metrics file: JSON Lines beside the checkpoint (`CHECKPOINT.metrics.jsonl`), written as training goes.

One object per line, flushed as written, so a run stopped half-way still has its curve:
- `{"kind": "train", "episode", "window", "win_rate", "draw_rate", "loss_rate", "loss", "epsilon", "seconds"}`
  every `log_every` episodes: rates over the last `window` episodes, the mean training loss since
  the previous line (null before the first update), the exploration rate (null when the algorithm has none);
  with `arena train --algorithm ddpg --validity`, also `valid_rate` (the share of the window's learner moves whose
  best action before the legal mask was legal) and `validity_loss` (the validity layer's mean squared error since
  the previous line);
- `{"kind": "eval", "episode", "opponent", "games", "win_rate", "draw_rate", "loss_rate"}` every
  `eval_every` episodes: the learner playing its best action against a fixed opponent on fixed seeds.
The first line is `{"kind": "settings", ...}`: what was trained and how.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from arena.errors import ArenaError

SUFFIX = ".metrics.jsonl"
KINDS = ("settings", "train", "eval", "promote")  # promote: the curriculum raised the opponent (arena train --promote-at)


def metrics_path(checkpoint: str | os.PathLike[str]) -> Path:
    """Where the metrics of `checkpoint` go: the checkpoint's name plus `.metrics.jsonl`."""
    path = Path(checkpoint)
    return path.with_name(path.name + SUFFIX)


class MetricsWriter:
    """Appends rows to a fresh file, one JSON object per line (its `kind` one of `kinds`), flushed at once.

    Also the log of `arena evolve-decks` (games.gwent_decks), whose kinds are its own.
    """

    def __init__(self, path: str | os.PathLike[str], kinds: tuple[str, ...] = KINDS) -> None:
        self.path = Path(path)
        self.kinds = kinds
        try:
            self.handle: TextIO | None = open(self.path, "w", encoding="utf-8")
        except OSError as exc:
            raise ArenaError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def write(self, kind: str, **values: Any) -> None:
        assert kind in self.kinds and self.handle is not None
        self.handle.write(json.dumps({"kind": kind, **values}, sort_keys=True) + "\n")
        self.handle.flush()

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def __enter__(self) -> MetricsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Per kind, the numbers a row must hold (the figures and a resumed run read them), the numbers it may hold or leave
#: null, and the other values it must hold.
NUMBERS = {"train": ("episode", "window", "win_rate", "draw_rate", "loss_rate"), "eval": ("episode", "games", "win_rate"),
           "promote": ("episode",)}  # fmt: skip
OPTIONAL_NUMBERS = {"train": ("loss", "epsilon", "seconds", "valid_rate", "validity_loss", "actor_loss")}
REQUIRED = {"eval": ("opponent",), "promote": ("opponent",)}


def read_metrics(source: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a metrics file, given the file or its checkpoint; ArenaError (one line) when missing or damaged."""
    path = Path(source)
    if not path.name.endswith(SUFFIX):
        path = metrics_path(path)
    return read_rows(path, KINDS, "training metrics", "metrics row", "arena train writes them beside the checkpoint",
                     metrics_row_problem)  # fmt: skip


def metrics_row_problem(row: dict[str, Any]) -> str | None:
    """What is wrong with a metrics row (a value missing, or not a number), or None."""
    kind = row["kind"]
    for key in REQUIRED.get(kind, ()) + NUMBERS.get(kind, ()):
        if key not in row:
            return f"its '{key}' is missing"
    wrong = [key for key in NUMBERS.get(kind, ()) if not _is_number(row[key])]
    wrong += [key for key in OPTIONAL_NUMBERS.get(kind, ()) if row.get(key) is not None and not _is_number(row[key])]
    return f"its '{wrong[0]}' is not a number" if wrong else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_rows(
    path: Path, kinds: tuple[str, ...], what: str, row_name: str, hint: str,
    problem: Callable[[dict[str, Any]], str | None] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of a JSON Lines file that a `MetricsWriter` wrote with these `kinds`; a half-written last line (a run
    killed while writing it) is left out; ArenaError (one line, ending with `hint` when the file is missing) otherwise,
    also for a row in which `problem` finds something wrong (naming it)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ArenaError(f"no {what} at {path} ({exc.strerror or exc}); {hint}") from None
    except UnicodeDecodeError:
        raise ArenaError(f"{path}: not UTF-8 text, so no {what}") from None
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            if number == len(lines) and rows:  # a run killed while writing its last line
                break
            raise ArenaError(f"{path}: line {number} is not JSON") from None
        if not isinstance(row, dict) or row.get("kind") not in kinds:
            raise ArenaError(f"{path}: line {number} is not a {row_name}")
        wrong = problem(row) if problem is not None else None
        if wrong is not None:
            raise ArenaError(f"{path}: line {number} is not a {row_name}: {wrong}")
        rows.append(row)
    return rows
