"""The network shapes `arena train` offers, as PyTorch modules that take [batch, *observation_shape] float32.

- `mlp`: fully connected ReLU layers over the flattened observation (`--hidden`); saved as Arena's
  `.npz` checkpoint (numpy inference) unless it has a dueling head.
- `conv`: 3x3 convolutions (`--channels`, same padding) over the observation's planes
  ([C, H, W]), then one fully connected layer (the first `--hidden` width) and the output layer.
- `fcn`: fully convolutional and so independent of the board size: 3x3 convolutions over the
  planes plus a constant plane (so the network sees the board's edges), then a 1x1 convolution to
  one output plane per entry of the game's `action_planes()`, read off as action ids. A network
  trained on 3x3 Dots and Boxes plays 2x2 and 4x4.
- `--dueling` (Wang et al., the Reversi report): Q = V + A - mean(A), V from its own head.

Every module but the plain MLP is saved as TorchScript (`torch.jit.script`, so the board size of
`fcn` stays free) with the same metadata JSON as the `.npz` checkpoints in the extra file
`arena.json`: input [batch, *observation_shape] float32, output one value per action id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import arena

NETS = ("mlp", "conv", "fcn")
METADATA_FILE = "arena.json"


def board_shape(game: arena.Game, shape: Sequence[int], net: str) -> tuple[int, int, int]:
    """[C, H, W] of the observation, or ArenaError when `net` cannot read this game's observation."""
    if len(shape) != 3:
        raise arena.ArenaError(f"--net {net} needs board planes [channels, rows, cols]; "
                               f"{game.label()} observes a tensor of shape {tuple(shape)}")
    if net == "fcn":
        planes = game.action_planes()
        if not planes:
            raise arena.ArenaError(f"--net fcn needs actions that are board cells; "
                                   f"game '{game.info.id}' declares none (Game.action_planes)")
        cells = sum((shape[1] - r) * (shape[2] - c) for r, c in planes)
        if cells != game.num_distinct_actions:
            raise arena.ArenaError(f"game '{game.info.id}': its action planes cover {cells} cells, "
                                   f"not its {game.num_distinct_actions} actions")
    return int(shape[0]), int(shape[1]), int(shape[2])


def build(net: str, game: arena.Game, shape: Sequence[int], hidden: Sequence[int], channels: Sequence[int],
          dueling: bool) -> Any:  # fmt: skip
    """The module for `net` (one of NETS); its forward takes [batch, *shape] float32. Imports torch."""
    from agents import train_modules as m

    actions = game.num_distinct_actions
    if net == "mlp":
        return m.MLP(math.prod(shape), hidden, actions, dueling)
    if net == "conv":
        c, h, w = board_shape(game, shape, "conv")
        return m.Conv(c, h, w, channels, hidden[0] if hidden else 64, actions, dueling)
    if net == "fcn":
        c, _, _ = board_shape(game, shape, "fcn")
        return m.FCN(c, channels, game.action_planes() or (), dueling)
    raise arena.ArenaError(f"unknown network '{net}' (choose {', '.join(NETS)})")


def saves_npz(net: str, dueling: bool) -> bool:
    """The plain MLP keeps Arena's numpy checkpoint; every other shape is TorchScript."""
    return net == "mlp" and not dueling


def numpy_layers(module: Any) -> list[tuple[Any, Any]]:
    """A plain MLP's layers as (weights (in, out), bias) float32 arrays: the `.npz` checkpoint's layout."""
    linears = [m for m in module.body if hasattr(m, "weight")] + [module.head.value]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linears]


def save_torchscript(torch: Any, module: Any, path: str, metadata: dict[str, Any]) -> None:
    """The module as TorchScript, with Arena's metadata JSON beside the code (extra file `arena.json`)."""
    import io

    from agents.neural import write_atomically

    scripted = torch.jit.script(module.eval())
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer, _extra_files={METADATA_FILE: json.dumps(metadata, sort_keys=True)})
    write_atomically(path, buffer.getvalue())


def load_torchscript(torch: Any, path: str) -> tuple[Any, dict[str, Any]]:
    """A TorchScript file written by `save_torchscript`, and its metadata."""
    extra = {METADATA_FILE: ""}
    module = torch.jit.load(path, _extra_files=extra)
    return module.eval(), json.loads(extra[METADATA_FILE] or "{}")
