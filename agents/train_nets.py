"""The network shapes `arena train` offers, as PyTorch modules that take [batch, *observation_shape] float32.

- `mlp`: fully connected ReLU layers over the flattened observation (`--hidden`); saved as Arena's
  `.npz` checkpoint (numpy inference) unless it has a dueling head.
- `resmlp` (the Reversi report's residual network): one fully connected layer to the first `--hidden`
  width, then a residual unit per further width, relu(x + W2 relu(W1 x)), all of one width.
- `conv`: 3x3 convolutions (`--channels`, same padding) over the observation's planes
  ([C, H, W]), then one fully connected layer (the first `--hidden` width) and the output layer. A flat
  observation that starts with board planes (Game.observation_planes: Onitama's 10x5x5, then its cards)
  has its planes convolved and the rest through a ReLU layer of its own size, joined before the dense layer
  (the Onitama report's actor preprocess, without its pooling and batch norm).
- `fcn`: fully convolutional and so independent of the board size: 3x3 convolutions over the
  planes plus a constant plane (so the network sees the board's edges), then a 1x1 convolution to
  one output plane per entry of the game's `action_planes()`, read off as action ids. A network
  trained on 3x3 Dots and Boxes plays 2x2 and 4x4.
- `mdrnn` (the Dots and Boxes report's network, agents/train_mdrnn.py): a 2D recurrent cell (`--cell
  tanh|gru`) of the first `--channels` width swept over the board from its four corners, then a
  per-cell head of a ReLU layer per `--hidden` width (one of 64 unless given), over the lines in one of
  the report's representations (`--representation naive|box|edge`, re-encoded inside the network);
  any board size, Dots and Boxes only.
- `--dueling` (Wang et al., the Reversi report): Q = V + A - mean(A), V from its own head.

Every module but the plain MLP is saved as TorchScript (`torch.jit.script`, so the board size of
`fcn` and `mdrnn` stays free) with the same metadata JSON as the `.npz` checkpoints in the extra file
`arena.json`: input [batch, *observation_shape] float32, output one value per action id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import arena

NETS = ("mlp", "resmlp", "conv", "fcn", "mdrnn")
#: Networks over the flattened observation, whatever its shape (the others read board planes).
FLAT = ("mlp", "resmlp")
#: Networks whose output layer can have any width (`build(outputs=...)`): the others read one output per board cell.
FEATURE_NETS = ("mlp", "resmlp", "conv")
#: Networks that play every board size of their game (the metadata's `size_independent`).
SIZE_INDEPENDENT = ("fcn", "mdrnn")
#: `--net mdrnn`'s board representations (agents/train_mdrnn.py); the first is the default.
REPRESENTATIONS = ("naive", "box", "edge")
#: `--net mdrnn`'s 2D recurrent cells (agents/train_mdrnn.SWEEPS): the report's simple tanh cell (the default) and a GRU.
CELLS = ("tanh", "gru")
#: `--hidden` unless given: two layers of 64, but one for mdrnn's per-cell head (the report's; conv uses only the first).
DEFAULT_HIDDEN = (64, 64)
MDRNN_HIDDEN = (64,)
#: Where the lines of a board of dots lie on its observation (Game.action_planes): horizontal ones on an (n+1) x m
#: block, vertical ones on n x (m+1). The layout `mdrnn`'s representations re-encode.
LINE_PLANES = ((0, 1), (1, 0))
METADATA_FILE = "arena.json"


def board_shape(game: arena.Game, shape: Sequence[int], net: str) -> tuple[int, int, int]:
    """[C, H, W] of the observation (for `conv`, also of the planes a flat observation starts with:
    Game.observation_planes), or ArenaError when `net` cannot read this game's observation."""
    head = game.observation_planes() if len(shape) == 1 and net == "conv" else None
    if head is not None and math.prod(head) <= shape[0]:
        return int(head[0]), int(head[1]), int(head[2])
    if len(shape) != 3:
        raise arena.ArenaError(f"--net {net} needs board planes [channels, rows, cols]; "
                               f"{game.label()} observes a tensor of shape {tuple(shape)}")
    if net in SIZE_INDEPENDENT:
        planes = game.action_planes()
        if not planes:
            raise arena.ArenaError(f"--net {net} needs actions that are board cells; "
                                   f"game '{game.info.id}' declares none (Game.action_planes)")
        cells = sum((shape[1] - r) * (shape[2] - c) for r, c in planes)
        if cells != game.num_distinct_actions:
            raise arena.ArenaError(f"game '{game.info.id}': its action planes cover {cells} cells, "
                                   f"not its {game.num_distinct_actions} actions")
        if net == "mdrnn" and (tuple(planes) != LINE_PLANES or shape[0] < 2):
            raise arena.ArenaError(f"--net mdrnn re-encodes the lines of a board of dots (Dots and Boxes: action planes "
                                   f"{LINE_PLANES}, line planes first); game '{game.info.id}' lays its actions out as {tuple(planes)}")
    return int(shape[0]), int(shape[1]), int(shape[2])


def representation(net: str, given: str | None) -> str | None:
    """The board representation a network reads: `mdrnn`'s (naive unless given), None for the others."""
    return (given or REPRESENTATIONS[0]) if net == "mdrnn" else None


def recurrent_cell(net: str, given: str | None) -> str | None:
    """The recurrent cell a network sweeps with: `mdrnn`'s (tanh unless given), None for the others."""
    return (given or CELLS[0]) if net == "mdrnn" else None


def hidden_widths(net: str, given: tuple[int, ...] | None) -> tuple[int, ...]:
    """The hidden widths a network is built with: those given, else its default (mdrnn's one layer, two for the others)."""
    if given is not None:
        return given
    return MDRNN_HIDDEN if net == "mdrnn" else DEFAULT_HIDDEN


def build(net: str, game: arena.Game, shape: Sequence[int], hidden: Sequence[int], channels: Sequence[int],
          dueling: bool, board: str | None = None, cell: str | None = None, outputs: int | None = None) -> Any:  # fmt: skip
    """The module for `net` (one of NETS); its forward takes [batch, *shape] float32. `board` and `cell`: mdrnn's
    representation (default naive) and recurrent cell (default tanh); `outputs`: the width of a flat network's output
    layer (default one per action id). Imports torch."""
    from agents import train_modules as m

    actions = outputs or game.num_distinct_actions
    if net == "mlp":
        return m.MLP(math.prod(shape), hidden, actions, dueling)
    if net == "resmlp":
        if len(set(hidden)) > 1:
            raise arena.ArenaError(f"--net resmlp: a residual unit keeps its width, so --hidden takes one width, got "
                                   f"{','.join(str(w) for w in hidden)}")  # fmt: skip
        return m.ResidualMLP(math.prod(shape), hidden, actions, dueling)
    if net == "conv":
        c, h, w = board_shape(game, shape, "conv")
        return m.Conv(c, h, w, channels, hidden[0] if hidden else 64, actions, dueling, math.prod(shape) - c * h * w)
    if net == "fcn":
        c, _, _ = board_shape(game, shape, "fcn")
        return m.FCN(c, channels, game.action_planes() or (), dueling)
    if net == "mdrnn":
        from agents.train_mdrnn import MDRNN

        board_shape(game, shape, "mdrnn")
        return MDRNN(board or REPRESENTATIONS[0], channels[0], tuple(hidden) or MDRNN_HIDDEN, dueling, cell or CELLS[0])
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

    from arena.files import write_atomically

    scripted = torch.jit.script(module.eval())
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer, _extra_files={METADATA_FILE: json.dumps(metadata, sort_keys=True)})
    write_atomically(path, buffer.getvalue())


def load_torchscript(torch: Any, path: str) -> tuple[Any, dict[str, Any]]:
    """A TorchScript file written by `save_torchscript`, and its metadata."""
    extra = {METADATA_FILE: ""}
    module = torch.jit.load(path, _extra_files=extra)
    return module.eval(), json.loads(extra[METADATA_FILE] or "{}")
