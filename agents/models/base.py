"""One interface over every network format: a batch of observations in, per-action values (and a state value) out."""

from __future__ import annotations

import json
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

import arena

#: The optional JSON a network file may carry about the game it is for (`{"game": "connect_four",
#: "game_version": "1", ...}`): a TorchScript or .pt2 extra file, or an ONNX metadata property.
METADATA_NAME = "arena.json"
ONNX_METADATA_KEY = "arena"

DEVICES = ("cpu", "cuda")

#: Threads one network may use on the CPU (PyTorch's intra-op threads, ONNX Runtime's intra-op pool).
THREADS_VARIABLE = "ARENA_MODEL_THREADS"


def cpu_threads() -> int:
    """$ARENA_MODEL_THREADS, else 1. Tournament workers already take a core each, and the networks games
    are played with are small: more threads gain little even at batch 64, and on a busy machine their
    spin-waiting made a forward pass several times slower (bench/models.py measures it)."""
    text = os.environ.get(THREADS_VARIABLE, "1")
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise arena.ArenaError(f"${THREADS_VARIABLE} must be a whole number of at least 1, got {text!r}")
    return threads


class Model(ABC):
    """A loaded network. `run` takes float32 observations `[batch, *observation_shape]` and returns
    `(values [batch, num_actions], state values [batch] or None)`.

    `max_batch` is 1 for networks exported with a fixed batch of one (they are run one row at a
    time); `check_fits` finds it out.
    """

    format: ClassVar[str]

    def __init__(self, path: str, device: str, metadata: dict[str, Any] | None) -> None:
        self.path = path
        self.device = device
        self.metadata = metadata
        self.max_batch: int | None = None
        self._inputs = threading.local()  # per thread: the array batches of observations are written into

    def input_batch(self, rows: int, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 array [rows, *shape] to write a batch of observations into, then `run`: reused from
        call to call (one per thread), so a step of interleaved matches allocates no input."""
        buffer: np.ndarray | None = getattr(self._inputs, "buffer", None)
        if buffer is None or buffer.shape[1:] != shape or len(buffer) < rows:
            buffer = self._inputs.buffer = np.empty((max(rows, 0 if buffer is None else len(buffer)), *shape), dtype=np.float32)
        return buffer[:rows]

    @abstractmethod
    def forward(self, batch: np.ndarray) -> Sequence[np.ndarray]:
        """The network's raw outputs (first: per-action values; optional second: state values)."""

    def declared_input(self) -> tuple[int | str | None, ...] | None:
        """The input shape the file declares, batch first (symbolic sizes as names), where it declares one."""
        return None

    def run(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        if self.max_batch is not None and len(batch) > self.max_batch:
            parts = [self.run(batch[i : i + self.max_batch]) for i in range(0, len(batch), self.max_batch)]
            values = [p[1] for p in parts]
            return np.concatenate([p[0] for p in parts]), None if values[0] is None else np.concatenate(values)  # type: ignore[arg-type]
        outputs = self.forward(batch)
        policy = np.asarray(outputs[0], dtype=np.float32)
        value = np.asarray(outputs[1], dtype=np.float32).reshape(len(batch)) if len(outputs) > 1 else None
        return policy, value


def parse_metadata(path: str, text: str | bytes | None) -> dict[str, Any] | None:
    """The file's optional arena metadata (None when absent); ArenaError when it is not a JSON object."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise arena.ArenaError(f"checkpoint {path}: its {METADATA_NAME} is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise arena.ArenaError(f"checkpoint {path}: its {METADATA_NAME} is not a JSON object")
    return data


def first_line(exc: BaseException) -> str:
    """An exception as one short line (PyTorch and onnxruntime errors run over many lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    stated = [line for line in lines if re.match(r"([A-Za-z_]+\.)*[A-Za-z]+(Error|Exception): ", line)]
    if stated:  # TorchScript: a traceback of its code, then the error's own line, last ("RuntimeError: mat1 and mat2 ...",
        text = re.sub(r"^([A-Za-z_]+\.)+", "", stated[-1])  # or "builtins.RuntimeError: ..." for one its code raised)
    else:
        for line in lines:  # others put the useful part after a preamble
            if "shape" in line or "size" in line or "dimension" in line:
                text = line
                break
    name = type(exc).__name__
    text = text if len(text) <= 300 else text[:297] + "..."
    if stated:  # the error's own line names its type (TorchScript's torch.jit.Error names the network's RuntimeError)
        return text
    return f"{name}: {text}" if text else name
