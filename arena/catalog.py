"""What the installed games are: the dicts `arena games --json` prints (and the HTTP API serves).

Besides metadata and parameters, each game says what a network playing it takes and gives: the
shape of its observation tensor (`observation_shape`, null for a game without one) and the number
of action ids (`num_actions`), both for the game's default parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.api import Game
from arena.errors import ArenaError
from arena.params import canonical
from arena.plugins import Registry

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


def describe_game(registry: Registry, game_id: str) -> dict[str, Any]:
    """One game as `arena games --json` shows it."""
    game_cls = registry.game_class(game_id)
    info = game_cls.info
    game = game_cls()
    shape = observation_shape(game)
    return {
        "id": info.id, "version": info.version, "name": info.name, "plugin": registry.owner("game", info.id),
        "players": [info.min_players, info.max_players], "perfect_information": info.perfect_information,
        "stochastic": info.stochastic,
        "params": [{"name": p.name, "default": p.default, "help": p.help} for p in info.params],
        "description": info.description,
        "observation_shape": None if shape is None else list(shape),
        "num_actions": game.num_distinct_actions,
    }  # fmt: skip


def describe_games(registry: Registry) -> list[dict[str, Any]]:
    """Every installed game, by id."""
    return [describe_game(registry, game_id) for game_id in sorted(registry.games)]
