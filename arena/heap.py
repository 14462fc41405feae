"""Keeping the cyclic garbage collector off long-lived objects while a tournament runs."""

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
