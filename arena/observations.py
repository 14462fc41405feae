"""The shape of a game's observation tensor: what a network playing it takes (`arena games --json` shows it)."""

from __future__ import annotations

import numpy as np

from arena.api import Game
from arena.errors import ArenaError
from arena.params import canonical

_observation_shapes: dict[tuple[str, str, str], tuple[int, ...] | None] = {}


def observation_shape(game: Game) -> tuple[int, ...] | None:
    """The shape of the game's observation tensor, None when it offers none (cached per id, version and parameters)."""
    key = (game.info.id, game.info.version, canonical(game.params))
    if key not in _observation_shapes:
        try:
            tensor = game.new_initial_state(0).observation(0)
        except NotImplementedError:
            _observation_shapes[key] = None
        else:
            _observation_shapes[key] = tuple(int(n) for n in np.shape(tensor))
    return _observation_shapes[key]


def require_observation_shape(game: Game, agent_id: str) -> tuple[int, ...]:
    """The observation shape, or ArenaError naming the agent that needs one."""
    shape = observation_shape(game)
    if shape is None:
        raise ArenaError(f"game '{game.info.id}' offers no observation tensor, which agent '{agent_id}' plays from")
    return shape
