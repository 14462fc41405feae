"""Keeping the cyclic garbage collector away from work where it can find nothing to free."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Hide every object alive now (imported modules, the registry, the schedule) from the collector.

    A tournament allocates small objects for every match, and each full collection would walk the
    whole heap again, some 50,000 objects of imported SQLAlchemy and numpy alone: measured 17 us of
    a 100 us connect-four match. Objects made inside are collected as usual (search trees with cycles
    included). Nested uses leave the freezing to the outermost.
    """
    outermost = gc.get_freeze_count() == 0
    if outermost:
        gc.freeze()
    try:
        yield
    finally:
        if outermost:
            gc.unfreeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector while code builds many objects that form no cycles.

    Loading a million match records (some three million objects) spent 3.6 s of 13 s in
    collections that found nothing, and the pure analyses over them (Elo, TrueSkill, ...) 0.9 s of
    2.6. In a search agent, a full collection of a tournament worker's heap (40+ ms) could overrun
    a short time per move between two deadline checks. Reference counting still frees everything;
    a cycle made meanwhile waits for the next collection after the pause.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
