"""ONNX networks, run by onnxruntime: TensorFlow, JAX or PyTorch users export to ONNX, and playing needs no PyTorch.

A file that keeps its weights in other files (ONNX external data) is refused: onnxruntime, given the file's bytes,
would look for them relative to the current directory, and the agent's version (the file's SHA-256) would not change
with them, so the results of two networks would mix. Such a model is saved again with its weights inside.
"""

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


def external_tensor(data: bytes) -> tuple[str, str] | None:
    """The name of the first tensor whose values the ONNX model `data` keeps in another file, and that file's name;
    None when it keeps them all inside (or is not an ONNX model at all, which onnxruntime then says)."""
    import onnx
    from google.protobuf.message import Message

    def search(message: Message) -> tuple[str, str] | None:  # every message field: graphs, initializers, attributes, functions
        if isinstance(message, onnx.TensorProto) and message.data_location == onnx.TensorProto.EXTERNAL:
            return message.name, {entry.key: entry.value for entry in message.external_data}.get("location", "")
        for field, value in message.ListFields():
            if field.message_type is None:  # numbers, strings, bytes
                continue
            for item in [value] if isinstance(value, Message) else value:
                found = search(item)
                if found is not None:
                    return found
        return None

    try:
        model = onnx.load_model_from_string(data)
    except Exception:  # an untrusted file: whatever the parser trips on, onnxruntime refuses it in its own words
        return None
    return search(model)


def read_model(path: str) -> bytes:
    """The file's bytes; ArenaError (one line) when it keeps weights in other files."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise arena.ArenaError(f"checkpoint {path}: cannot read it ({exc.strerror or exc})") from None
    external = external_tensor(data)
    if external is not None:
        name, location = external
        raise arena.ArenaError(f"checkpoint {path}: an ONNX network whose weights are in another file ('{name}' in "
                               f"{location!r}); save the model with its weights inside: "
                               "onnx.save_model(model, FILE, save_as_external_data=False)")  # fmt: skip
    return data


def load_onnx(path: str, device: str) -> OnnxModel:
    try:
        import onnx  # noqa: F401 (checked here: external_tensor reads the file with it)
        import onnxruntime
    except ImportError:
        raise arena.ArenaError("playing ONNX networks needs onnxruntime and onnx: pip install -e \".[models]\"") from None
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
    data = read_model(path)
    try:
        session = onnxruntime.InferenceSession(data, options, providers=providers)
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
