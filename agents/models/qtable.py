"""Tabular Q-values as a network (`arena train --algorithm qlearning` writes them, format `arena-qtable`).

The `.npz` holds `keys` (uint8 [positions, key bytes]: the bytes of the float32 observation the
learner saw), `values` (float32 [positions, num_actions]) and a `metadata` JSON string; it is read
without pickle. A position the table never saw has all-zero values, so the agent then plays the
lowest legal action id (ties go to the lowest id, as for every network).
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

import arena
from agents.models.base import Model

FORMAT_NAME = "arena-qtable"
FORMAT_VERSION = 1
MEMBERS = ("keys.npy", "metadata.npy", "values.npy")


def is_qtable(path: str) -> bool:
    """An `.npz` archive with exactly the members a Q-table has (the caller knows it is an .npz of arrays)."""
    with zipfile.ZipFile(path) as archive:
        return sorted(archive.namelist()) == list(MEMBERS)


class QTableModel(Model):
    format = FORMAT_NAME

    def __init__(self, path: str, device: str, metadata: dict[str, Any], table: dict[bytes, np.ndarray]) -> None:
        super().__init__(path, device, metadata)
        self.table = table
        self.shape = tuple(int(n) for n in metadata["observation_shape"])
        self.zeros = np.zeros(int(metadata["num_actions"]), dtype=np.float32)

    def declared_input(self) -> tuple[int | str | None, ...]:
        return ("batch", *self.shape)

    def forward(self, batch: np.ndarray) -> Sequence[np.ndarray]:
        rows = np.ascontiguousarray(batch, dtype=np.float32).reshape(len(batch), -1)
        return [np.stack([self.table.get(row.tobytes(), self.zeros) for row in rows])]


def load_qtable(path: str, device: str) -> QTableModel:
    """The Q-table at `path`, checked against the sizes its metadata declares; ArenaError (one line) otherwise."""
    if device != "cpu":
        raise arena.ArenaError(f"checkpoint {path}: Q-tables run on the CPU (numpy); use device=cpu")
    from agents.neural import check_inflated_size

    check_inflated_size(path)  # as every .npz: a member that would inflate past the bound is refused before it is
    try:
        with np.load(path, allow_pickle=False) as archive:
            metadata = json.loads(str(archive["metadata"][()]))
            keys, values = archive["keys"], archive["values"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise arena.ArenaError(f"checkpoint {path}: unreadable Q-table ({type(exc).__name__}: {exc})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME or metadata.get("version") != FORMAT_VERSION:
        raise arena.ArenaError(f"checkpoint {path}: not an {FORMAT_NAME} version {FORMAT_VERSION} table")
    try:
        key_bytes = 4 * math.prod(int(n) for n in metadata["observation_shape"])
        actions = int(metadata["num_actions"])
    except (KeyError, TypeError, ValueError):
        raise arena.ArenaError(f"checkpoint {path}: metadata 'observation_shape' or 'num_actions' missing") from None
    if keys.dtype != np.uint8 or values.dtype != np.float32 or len(keys) != len(values) or \
            (len(keys) and keys.shape[1] != key_bytes) or values.shape[1:] != (actions,):  # fmt: skip
        raise arena.ArenaError(f"checkpoint {path}: keys {keys.shape} and values {values.shape} do not fit "
                               f"observations of {key_bytes} bytes and {actions} actions")  # fmt: skip
    table = {bytes(key): row for key, row in zip(keys, values)}
    return QTableModel(path, device, metadata, table)
