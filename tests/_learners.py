"""A learner core (DQN, DDPG) built as `arena train` builds it and fed a few real episodes, for tests of one update."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from agents.neural_train import Episodes, Plan, TrainConfig, plan, seeded_torch
from arena.plugins import Registry


@contextlib.contextmanager
def fed(config: TrainConfig, registry: Registry, make: Callable[[Any, Plan], Any], episodes: int) -> Iterator[tuple[Any, Any, Plan]]:
    """(torch, the core, its plan) after the core has played and learned from `episodes` episodes, inside seeded torch."""
    checked = plan(config, registry)
    with seeded_torch(config) as torch:
        core = make(torch, checked)
        games = Episodes(checked, registry, checked.opponent)
        for number in range(episodes):
            core.learn(games.play(number, core.choose), number)
        yield torch, core, checked
