"""The progress bar of long commands (a tournament's matches, a training run's episodes), on stderr.

On stderr, so that what a command prints on stdout (a leaderboard, a summary) can go to a file or a
pipe while the bar still shows on the terminal. Drawn only when enabled (the caller checks that
stderr is a terminal and no --quiet was given); otherwise every call returns at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: Seconds between two redraws: thousands of matches a second would otherwise redraw thousands of times.
REDRAW_SECONDS = 0.1


class ProgressBar:
    """`label` done of the total, a line of text from the caller, time left.

    No refresh thread: it is redrawn from `update`, so worker processes may be forked while it shows
    (arena.executors.local.start_method)."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.bar: Any = None
        self.task: Any = None
        self.updated = 0.0
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[text]}"),
                                TimeRemainingColumn(), console=Console(stderr=True), transient=True, auto_refresh=False)  # fmt: skip

    def __enter__(self) -> ProgressBar:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def update(self, done: int, total: int, text: Callable[[float | None], str]) -> None:
        """`done` of `total` so far; `text(speed)` gives the bar's line (speed: per second, None until measured). The
        first call only starts the count (a resumed run's earlier part is not speed)."""
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task("", total=total, completed=done, text=text(None))
            return
        now = time.monotonic()
        if done < total and now - self.updated < REDRAW_SECONDS:
            return
        self.updated = now
        self.bar.update(self.task, completed=done, text=text(self.bar.tasks[0].speed), refresh=True)
