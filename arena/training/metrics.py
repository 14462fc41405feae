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


def read_metrics(source: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a metrics file, given the file or its checkpoint; ArenaError (one line) when missing or damaged."""
    path = Path(source)
    if not path.name.endswith(SUFFIX):
        path = metrics_path(path)
    return read_rows(path, KINDS, "training metrics", "metrics row", "arena train writes them beside the checkpoint")


def read_rows(path: Path, kinds: tuple[str, ...], what: str, row_name: str, hint: str) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file that a `MetricsWriter` wrote with these `kinds`; a half-written last line (a run
    killed while writing it) is left out; ArenaError (one line, ending with `hint` when the file is missing) otherwise."""
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
        rows.append(row)
    return rows
