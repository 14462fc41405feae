"""Does a network fit a game? Checked when the tournament starts, so a bad file never fails mid-match.

In: the game's observation tensor, batched (`[batch, *observation_shape]`, float32). Out: one value
per action id (`[batch, num_actions]`), and optionally a state value (`[batch]` or `[batch, 1]`).
The check reads the input shape the file declares (ONNX) and runs the network on a batch of two
zero observations (and of one, for networks exported with a fixed batch of one); the message
gives both shapes. A file's own metadata (`arena.json`) may name its game and version: they must
match too, and its game parameters unless it says `"size_independent": true`.
"""

from __future__ import annotations

import numpy as np

import arena
from agents.models.base import Model, first_line
from arena.observations import require_observation_shape
from arena.params import canonical


def _shape(dims: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def check_fits(model: Model, game: arena.Game, with_params: bool = True) -> None:
    """Raise ArenaError (one line, both shapes) unless `model` takes `game`'s observations and gives its actions."""
    if model.format == "arena-mlp":
        from agents.neural import check_compatible

        check_compatible(model.network, game, with_params)  # type: ignore[attr-defined]
    else:
        _check_metadata(model, game, with_params)
    shape = require_observation_shape(game, "neural")
    wanted = f"[batch, {', '.join(str(d) for d in shape)}]" if shape else "[batch]"
    declared = model.declared_input()
    if declared is not None:
        fixed = [d if isinstance(d, int) else None for d in declared[1:]]
        if len(declared) != len(shape) + 1 or any(d is not None and d != s for d, s in zip(fixed, shape)):
            shown = "[" + ", ".join(str(d) for d in declared) + "]"
            raise arena.ArenaError(f"network {model.path} takes input of shape {shown}; "
                                   f"{game.label()} gives observations of shape {wanted}")
    actions = game.num_distinct_actions
    for batch, (policy, value) in _probe(model, shape, wanted, game):
        if policy.shape != (batch, actions):
            raise arena.ArenaError(
                f"network {model.path} gives values of shape {_shape(policy.shape)} for a batch of {batch}; "
                f"{game.label()} needs [batch, {actions}] (one value per action id)"
            )
        if value is not None and value.size != batch:
            raise arena.ArenaError(f"network {model.path}: its second output (the state value) must be [batch] or [batch, 1]")


def _probe(model: Model, shape: tuple[int, ...], wanted: str, game: arena.Game) -> list[tuple[int, Outputs]]:
    """The network's outputs on zeros, for a batch of two and a batch of one (play asks for both: one position at a
    time, or many); one that takes only one position at a time is then run one row at a time (`max_batch`)."""
    try:
        two = _outputs(model, 2, shape)
        if two[0].ndim == 0 or two[0].shape[0] != 2:
            raise ValueError(f"output of shape {_shape(two[0].shape)} for a batch of 2")
    except Exception as failed:
        try:
            one = _outputs(model, 1, shape)
        except Exception:
            raise arena.ArenaError(
                f"network {model.path} does not take {game.label()}'s observations of shape {wanted} ({first_line(failed)})"
            ) from None
        model.max_batch = 1
        return [(1, one)]
    try:
        one = _outputs(model, 1, shape)
    except Exception as failed:
        raise arena.ArenaError(f"network {model.path} takes a batch of two positions but not of one ({first_line(failed)}): "
                               "Arena asks for one at a time too; export it with a dynamic batch size") from None  # fmt: skip
    return [(2, two), (1, one)]


#: A network's policy output and its value output (None without one).
Outputs = tuple[np.ndarray, np.ndarray | None]


def _outputs(model: Model, batch: int, shape: tuple[int, ...]) -> Outputs:
    outputs = model.forward(np.zeros((batch, *shape), dtype=np.float32))
    value = np.asarray(outputs[1]) if len(outputs) > 1 else None
    return np.asarray(outputs[0]), value


def _check_metadata(model: Model, game: arena.Game, with_params: bool) -> None:
    meta = model.metadata
    if not meta:
        return
    if "game" in meta and meta["game"] != game.info.id:
        raise arena.ArenaError(f"network {model.path} is for game '{meta['game']}', not '{game.info.id}'")
    if "game_version" in meta and str(meta["game_version"]) != game.info.version:
        raise arena.ArenaError(
            f"network {model.path} is for {game.info.id} version {meta['game_version']}; version {game.info.version} is installed"
        )
    # A size-independent network (arena train --net fcn) plays the game at other parameters (board sizes);
    # the probe below still checks that it takes this game's observations and gives its actions.
    if with_params and "game_params" in meta and not meta.get("size_independent"):
        made_for = _game_of(game, str(meta["game_params"]))
        if made_for is None or canonical(made_for.params) != canonical(game.params):
            named = made_for.label() if made_for is not None else f"{game.info.id} with parameters {meta['game_params']!r}"
            raise arena.ArenaError(f"network {model.path} is for {named}, not {game.label()}")


def _game_of(game: arena.Game, params: str) -> arena.Game | None:
    """The game of the metadata's `game_params` ("key=value" pairs joined by ';' or ','; those left out, and all of
    them when it is "", at their defaults), or None if this game takes no such parameters."""
    try:
        given = dict(item.strip().split("=", 1) for item in params.replace(",", ";").split(";") if item.strip())
        return type(game)(**given)
    except (ValueError, TypeError, arena.ArenaError):
        return None
