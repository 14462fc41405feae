"""Small real networks made at test time, saved as TorchScript, torch.export (.pt2) and ONNX files.

Each is a tiny torch.nn.Module seeded by `seed`: a convolution over planes for observations of
three dimensions, else a linear layer; one value per action id, and with `value=True` a second
output (tanh state value), as Arena's file contract says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

# Every user of these helpers makes torch modules and runs ONNX files: a module importing them is skipped without both.
torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from torch import nn

from arena.observations import observation_shape
from arena.plugins import get_registry

FORMATS = ("torchscript", "pt2", "onnx")
REGISTRY = get_registry()
C4 = REGISTRY.games["connect_four"]()
C4_SHAPE = observation_shape(C4)


class Body(nn.Module):
    def __init__(self, shape: Sequence[int], hidden: int) -> None:
        super().__init__()
        if len(shape) == 3:
            self.features: nn.Module = nn.Sequential(nn.Conv2d(shape[0], 4, 3, padding=1), nn.ReLU(), nn.Flatten())
            width = 4 * shape[1] * shape[2]
        else:
            self.features = nn.Flatten()
            width = math.prod(shape)
        self.hidden = nn.Sequential(nn.Linear(width, hidden), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.hidden(self.features(x))


class PolicyNet(nn.Module):
    def __init__(self, shape: Sequence[int], actions: int, hidden: int = 16) -> None:
        super().__init__()
        self.body = Body(shape, hidden)
        self.policy = nn.Linear(hidden, actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.policy(self.body(x))


class PolicyValueNet(PolicyNet):
    def __init__(self, shape: Sequence[int], actions: int, hidden: int = 16) -> None:
        super().__init__(shape, actions, hidden)
        self.value = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[override]
        h = self.body(x)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(1)


def network(shape: Sequence[int], actions: int, seed: int = 0, value: bool = False) -> nn.Module:
    torch.manual_seed(seed)
    net = (PolicyValueNet if value else PolicyNet)(tuple(shape), actions)
    return net.eval()


def save(net: nn.Module, shape: Sequence[int], path: Path, kind: str, metadata: dict[str, Any] | None = None,
         fixed_batch: bool = False) -> Path:  # fmt: skip
    """Write `net` as `kind` (one of FORMATS) at `path` (any name: Arena reads the content)."""
    example = torch.zeros(2 if not fixed_batch else 1, *shape)
    text = json.dumps(metadata) if metadata else None
    if kind == "torchscript":
        torch.jit.save(torch.jit.script(net), str(path), _extra_files={"arena.json": text} if text else None)
    elif kind == "pt2":
        dynamic = None if fixed_batch else ({0: torch.export.Dim("batch", min=1, max=4096)},)
        program = torch.export.export(net, (example,), dynamic_shapes=dynamic)
        torch.export.save(program, str(path), extra_files={"arena.json": text} if text else None)
    elif kind == "onnx":
        outputs = ["values", "value"][: 2 if isinstance(net, PolicyValueNet) else 1]
        axes = None if fixed_batch else {"observation": {0: "batch"}, **{name: {0: "batch"} for name in outputs}}
        torch.onnx.export(net, (example,), str(path), input_names=["observation"], output_names=outputs,
                          dynamic_axes=axes, dynamo=False)  # fmt: skip
        if text:
            import onnx

            model = onnx.load(str(path))
            entry = model.metadata_props.add()
            entry.key, entry.value = "arena", text
            onnx.save(model, str(path))
    else:
        raise ValueError(kind)
    return path


def save_all(folder: Path, shape: Sequence[int], files: Mapping[str, tuple[nn.Module, str, str]],
             metadata: dict[str, Any] | None = None) -> dict[str, Path]:  # fmt: skip
    """Each network written as `files[key] = (network, file name, format)` into `folder`, keyed as given."""
    return {key: save(net, shape, folder / name, kind, metadata) for key, (net, name, kind) in files.items()}
