"""ONNX networks, run by onnxruntime: TensorFlow, JAX or PyTorch users export to ONNX, and playing needs no PyTorch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import arena
from agents.models.base import (
    ONNX_METADATA_KEY,
    Model,
    cpu_threads,
    first_line,
    parse_metadata,
)
from agents.models.sniff import ONNX


class OnnxModel(Model):
    format = ONNX

    def __init__(self, path: str, device: str, metadata: dict[str, Any] | None, session: Any) -> None:
        super().__init__(path, device, metadata)
        self.session = session
        self.input_name = session.get_inputs()[0].name
        self.output_names = [output.name for output in session.get_outputs()[:2]]

    def forward(self, batch: np.ndarray) -> Sequence[np.ndarray]:
        return self.session.run(self.output_names, {self.input_name: batch})  # type: ignore[no-any-return]

    def declared_input(self) -> tuple[int | str | None, ...] | None:
        return tuple(self.session.get_inputs()[0].shape)


def load_onnx(path: str, device: str) -> OnnxModel:
    try:
        import onnxruntime
    except ImportError:
        raise arena.ArenaError("playing ONNX networks needs onnxruntime: pip install -e \".[models]\"") from None
    providers = ["CPUExecutionProvider"]
    if device == "cuda":
        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            raise arena.ArenaError("device=cuda: this onnxruntime has no CUDA provider (install onnxruntime-gpu, or use device=cpu)")
        providers.insert(0, "CUDAExecutionProvider")
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: a refused file is reported in one line below
    options.intra_op_num_threads = cpu_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        with open(path, "rb") as handle:
            session = onnxruntime.InferenceSession(handle.read(), options, providers=providers)
    except Exception as exc:
        raise arena.ArenaError(f"checkpoint {path}: not a loadable ONNX network ({first_line(exc)})") from None
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1:
        raise arena.ArenaError(f"checkpoint {path}: the network takes {len(inputs)} inputs; it must take one (the observations)")
    if inputs[0].type != "tensor(float)":
        raise arena.ArenaError(f"checkpoint {path}: the network's input is {inputs[0].type}; it must be float32 (tensor(float))")
    if not 1 <= len(outputs) <= 2:
        raise arena.ArenaError(f"checkpoint {path}: the network has {len(outputs)} outputs; it must have 1 or 2 (values, state value)")
    metadata = session.get_modelmeta().custom_metadata_map.get(ONNX_METADATA_KEY)
    return OnnxModel(path, device, parse_metadata(path, metadata), session)
