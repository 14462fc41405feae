"""Where a tournament's matches are played: a local process pool, or a Ray cluster.

An executor turns the pending matches (MatchTask) of one tournament (Setup) into played matches
(MatchOutcome), in any order; the driver (arena.tournament) stores them in batches as they come,
so resume, determinism and forfeits do not depend on the executor.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.plugins import Registry
    from arena.tournament import MatchTask, Setup
    from db.queries import MatchOutcome

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    @property
    def parallel(self) -> bool:
        """Plays more than one match at a time (agents under a time limit are then isolated: a worker must never hang)."""
        ...

    def results(self, setup: Setup, registry: Registry, tasks: Sequence[MatchTask]) -> Generator[MatchOutcome, None, None]:
        """Play every task once; yield each played match as soon as it is known."""
        ...

    def held(self) -> AbstractContextManager[None]:
        """Within this block, what `results` sets up (a Ray connection) serves every call: one run, many parts."""
        ...


def parse_workers(text: str) -> int:
    """The value of a --workers option: a positive number, or `auto` (this machine's cores)."""
    if text == "auto":
        return os.cpu_count() or 1
    try:
        value = int(text)
    except ValueError:
        raise ArenaError(f"--workers must be a positive number or 'auto', got {text!r}") from None
    if value < 1:
        raise ArenaError(f"--workers must be at least 1, got {value}")
    return value


def make_executor(kind: str, workers: int = 1, ray_address: str | None = None) -> Executor:
    """The executor the CLI (and the server) names: `local` with `workers` processes, or `ray`."""
    if kind == "local":
        if ray_address is not None:  # '' too: not taken for "no address"
            raise ArenaError("--ray-address is for --executor ray")
        from arena.executors.local import LocalPool

        return LocalPool(workers)
    if kind == "ray":
        from arena.executors.ray_executor import RayExecutor, _import_ray, check_address

        _import_ray()  # now too: without Ray installed, the run is refused before its tournament is written
        if ray_address is not None:
            check_address(ray_address)  # now: a run that cannot reach its cluster writes nothing
        return RayExecutor(ray_address, workers)
    raise ArenaError(f"unknown executor '{kind}' (choose: {', '.join(EXECUTORS)})")
