"""Wall-clock limits in tests on a shared machine: one clean match of a few is the evidence.

A two-core CI machine running two test workers once stalled one for two seconds mid-move ("seat 0
took 2.962s, limit 1s"). What these tests check is that an agent stops by itself at the runner's
limit; an agent that ignores the limit overruns every time, so it still fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from arena.match import MatchResult

T = TypeVar("T")


def one_of_three_in_time(play: Callable[[int], MatchResult], ok: tuple[str, ...] = ("turn_limit",)) -> MatchResult:
    """The first of three matches (`play(attempt)`) that ends by a reason in `ok`; fails if none does."""
    details = []
    for attempt in range(3):
        result = play(attempt)
        if result.reason in ok:
            return result
        details.append(f"{result.reason}: {result.detail}")
    pytest.fail(f"no match of three ended by {' or '.join(ok)}: {details}")


def fastest_of_three(work: Callable[[], T]) -> tuple[float, T]:
    """The wall-clock seconds of the fastest of three calls of `work`, and what that call returned (a stall only
    adds time)."""
    tries = []
    for _ in range(3):
        start = time.perf_counter()
        value = work()
        tries.append((time.perf_counter() - start, value))
    return min(tries, key=lambda timed: timed[0])
