"""Users' networks as agents: whatever format, one `Model` that maps observations to per-action values.

`model_for(path, game, device)` recognises the file's format from its content (`sniff`), loads it
once per process and device (keyed by the file's path, modification time and size, so a retrained
file is read again), and checks once per game that it fits (`fit.check_fits`): the observation
tensor batched in, one value per action id out, an optional state value.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

import arena
from agents.models.base import DEVICES, Model
from agents.models.fit import check_fits
from agents.models.sniff import ARENA_MLP, ONNX, TORCHSCRIPT, detect
from arena.params import canonical

__all__ = ["DEVICES", "Model", "check_fits", "load_model", "model_for"]


class MlpModel(Model):
    """Arena's own `.npz` MLP (agents.neural), run by numpy."""

    format = ARENA_MLP

    def __init__(self, path: str, device: str, network: Any) -> None:
        super().__init__(path, device, network.metadata)
        self.network = network

    def forward(self, batch: np.ndarray) -> Sequence[np.ndarray]:
        from agents.neural import forward

        return [forward(self.network.weights, self.network.biases, batch.reshape(len(batch), -1))]


def load_model(path: str, device: str = "cpu") -> Model:
    """The network at `path`, not yet checked against a game; ArenaError (one line) when it is not one."""
    kind = detect(path)
    if kind == ARENA_MLP:
        if device != "cpu":
            raise arena.ArenaError(f"checkpoint {path}: Arena's .npz networks run on the CPU (numpy); use device=cpu")
        from agents.models.qtable import is_qtable, load_qtable

        if is_qtable(path):  # tabular Q-values (arena train --algorithm qlearning), also an .npz of arrays
            return load_qtable(path, device)
        from agents.neural import read_checkpoint

        return MlpModel(path, device, read_checkpoint(path))
    if kind == ONNX:
        from agents.models.onnx_format import load_onnx

        return load_onnx(path, device)
    from agents.models.torch_formats import load_exported, load_torchscript

    return load_torchscript(path, device) if kind == TORCHSCRIPT else load_exported(path, device)


FileKey = tuple[str, int, int]


@functools.lru_cache(maxsize=16)
def _cached(key: FileKey, device: str) -> Model:
    return load_model(key[0], device)


_fitted: set[tuple[FileKey, str, str, str, str, bool]] = set()
#: Per game object, the (file, device, with_params) already found to fit it: a tournament makes an agent
#: for every seat of every match with the same game, and its canonical parameters cost more than the rest.
_fitted_games: weakref.WeakKeyDictionary[arena.Game, set[tuple[FileKey, str, bool]]] = weakref.WeakKeyDictionary()


def model_for(key: FileKey, game: arena.Game, device: str = "cpu", with_params: bool = False) -> Model:
    """The network of file `key` on `device`, checked (once per file, device and game) to fit `game`."""
    model = _cached(key, device)
    seen = _fitted_games.get(game)
    if seen is not None and (key, device, with_params) in seen:
        return model
    pair = (key, device, game.info.id, game.info.version, canonical(game.params), with_params)
    if pair not in _fitted:
        check_fits(model, game, with_params)
        _fitted.add(pair)
    _fitted_games.setdefault(game, set()).add((key, device, with_params))
    return model
