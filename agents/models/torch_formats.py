"""TorchScript (`torch.jit.save`) and `torch.export` (`.pt2`) networks, run by PyTorch.

PyTorch is imported here only: ONNX and Arena's .npz networks play without it.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

import arena
from agents.models.base import (
    METADATA_NAME,
    Model,
    cpu_threads,
    first_line,
    parse_metadata,
)
from agents.models.sniff import TORCH_EXPORT, TORCHSCRIPT, sanitised_pt2


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise arena.ArenaError("playing TorchScript and torch.export networks needs PyTorch: pip install -e \".[rl]\"") from None
    return torch


def torch_device(device: str) -> Any:
    """The device, checked; on the CPU, PyTorch's threads set to `cpu_threads()` (a setting of the whole process)."""
    torch = _torch()
    if device == "cuda" and not torch.cuda.is_available():
        raise arena.ArenaError("device=cuda: this PyTorch sees no CUDA device (use device=cpu)")
    if device == "cpu":
        threads = cpu_threads()
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    return torch.device(device)


class TorchModel(Model):
    """A callable torch module; outputs a tensor, or a tuple/list of one or two tensors."""

    def __init__(self, path: str, device: str, metadata: dict[str, Any] | None, module: Any) -> None:
        super().__init__(path, device, metadata)
        self.module = module
        self.torch = _torch()

    def forward(self, batch: np.ndarray) -> Sequence[np.ndarray]:
        torch = self.torch
        with torch.inference_mode():
            out = self.module(torch.from_numpy(np.ascontiguousarray(batch)).to(self.device))
        if isinstance(out, torch.Tensor):
            return [out.float().cpu().numpy()]
        if isinstance(out, (tuple, list)) and 1 <= len(out) <= 2 and all(isinstance(t, torch.Tensor) for t in out):
            return [t.float().cpu().numpy() for t in out]
        raise arena.ArenaError(
            f"network {self.path} returned {type(out).__name__}; it must return a tensor of per-action values, "
            "or a tuple (per-action values, state value)"
        )


class TorchScriptModel(TorchModel):
    format = TORCHSCRIPT


class ExportedModel(TorchModel):
    format = TORCH_EXPORT


def check_crcs(path: str) -> None:
    """Read every member of the zip archive through, so zipfile checks its CRC-32: torch.jit.load checks none, and a
    damaged file would load and play with garbage weights (numpy and torch.export's loader read through zipfile).
    BadZipFile naming the first damaged member."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            try:
                with archive.open(info) as member:
                    while member.read(1 << 20):
                        pass
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                said = str(exc) if info.filename in str(exc) else f"{exc} in {info.filename!r}"
                raise zipfile.BadZipFile(said) from None


def load_torchscript(path: str, device: str) -> TorchScriptModel:
    torch = _torch()
    target = torch_device(device)
    extra = {METADATA_NAME: ""}
    try:
        check_crcs(path)
        module = torch.jit.load(path, map_location=target, _extra_files=extra)
    except Exception as exc:  # an untrusted file: whatever PyTorch trips on, it is unusable
        raise arena.ArenaError(f"checkpoint {path}: not a loadable TorchScript network ({first_line(exc)})") from None
    module.eval()
    return TorchScriptModel(path, device, parse_metadata(path, extra[METADATA_NAME]), module)


def load_exported(path: str, device: str) -> ExportedModel:
    torch = _torch()
    target = torch_device(device)
    extra = {METADATA_NAME: ""}
    try:
        program = torch.export.load(io.BytesIO(sanitised_pt2(path)), extra_files=extra)
        module = program.module()
        if target.type != "cpu":
            module = module.to(target)
    except Exception as exc:
        raise arena.ArenaError(f"checkpoint {path}: not a loadable torch.export program ({first_line(exc)})") from None
    return ExportedModel(path, device, parse_metadata(path, extra[METADATA_NAME]), module)
