"""Which kind of network file this is, read from its content (never from its name), without unpickling anything.

- a zip archive whose members are all `.npy` arrays: Arena's own MLP checkpoint (`arena-mlp`), or
  its tabular Q-values (`keys`, `values`, `metadata`: agents/models/qtable.py tells them apart);
- a zip archive with TorchScript's layout (`code/`, `constants.pkl`, `data.pkl` under one folder):
  `torchscript`, read by `torch.jit.load`, whose unpickler builds TorchScript objects only;
- a zip archive with `archive_format` = `pt2`: a `torch.export` program (`torch-export`); its
  weights and constants must be raw tensors (no pickled payloads), which `check_pt2` verifies;
- a protocol-buffer stream starting with field 1 (`ir_version`): `onnx`, read by onnxruntime;
- anything else is refused: a pickle (`torch.save`, plain `pickle`) by name, since loading one can
  run any code; other zip archives and other bytes as not a model.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable

import arena

ARENA_MLP, TORCHSCRIPT, TORCH_EXPORT, ONNX = "arena-mlp", "torchscript", "torch-export", "onnx"
FORMATS = (ARENA_MLP, TORCHSCRIPT, TORCH_EXPORT, ONNX)

_ZIP_MAGIC = b"PK\x03\x04"
_PICKLE_PROTOCOL = 0x80  # protocols 2-5 start with PROTO
_ONNX_FIRST_BYTE = 0x08  # ModelProto field 1 (ir_version), varint
_EXPECTED = "TorchScript (torch.jit.save), torch.export (.pt2), ONNX or an Arena .npz checkpoint"


def refuse(path: str, why: str) -> arena.ArenaError:
    return arena.ArenaError(f"checkpoint {path}: {why}")


def detect(path: str) -> str:
    """The format of the network file at `path` (one of FORMATS); ArenaError with one line otherwise."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        raise refuse(path, f"cannot read it ({exc.strerror or exc})") from None
    if head.startswith(_ZIP_MAGIC):
        return _zip_format(path)
    if len(head) >= 2 and head[0] == _PICKLE_PROTOCOL and 2 <= head[1] <= 5:
        raise refuse(path, "a pickle (torch.save or pickle), which Arena never loads because it can run code; "
                           f"save the network as {_EXPECTED}")  # fmt: skip
    if head[:1] == bytes([_ONNX_FIRST_BYTE]):
        return ONNX
    if not head:
        raise refuse(path, "an empty file, not a model")
    raise refuse(path, f"not a model file (expected {_EXPECTED})")


def _zip_format(path: str) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if names and all(name.endswith(".npy") for name in names):
                return ARENA_MLP
            folder, members = _one_folder(names)
            if "archive_format" in members and archive.read(folder + "archive_format").strip() == b"pt2":
                check_pt2(path, archive, folder)
                return TORCH_EXPORT
            if "data.pkl" in members and "constants.pkl" in members and "code/" in members:
                return TORCHSCRIPT
    except (zipfile.BadZipFile, EOFError, OSError) as exc:  # truncated or damaged: no central directory
        raise refuse(path, f"a damaged or truncated zip archive ({exc})") from None
    if any(name.endswith(".pkl") for name in names):
        raise refuse(path, "a pickled PyTorch file (torch.save), which Arena never loads because it can run code; "
                           f"save the network as {_EXPECTED}")  # fmt: skip
    raise refuse(path, f"a zip archive that is not a model (expected {_EXPECTED})")


def _one_folder(names: Iterable[str]) -> tuple[str, set[str]]:
    """PyTorch archives keep every member under one top folder: that folder, and the members' first
    path parts inside it (folders with a trailing slash)."""
    names = list(names)
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) != 1 or not all("/" in name for name in names):
        return "", set()
    folder = tops.pop() + "/"
    members = set()
    for name in names:
        rest = name[len(folder):]
        members.add(rest.split("/", 1)[0] + "/" if "/" in rest else rest)
    return folder, members


#: Payload configurations of a .pt2 archive: every entry must be a raw tensor.
_PT2_CONFIGS = ("data/weights/", "data/constants/")
#: What a .pt2 archive of exported programs may hold; compiled code (AOTInductor, ExecuTorch) is refused.
_PT2_ALLOWED = ("models/", "data/weights/", "data/constants/", "data/sample_inputs/", "extra/", ".data/",
                "archive_format", "archive_version", "byteorder")


def check_pt2(path: str, archive: zipfile.ZipFile, folder: str) -> None:
    """Refuse a torch.export archive that holds pickled payloads (torch.export.load would unpickle them).

    Weights and constants are described by JSON configurations; an entry with `use_pickle`, a
    custom or opaque object, or a legacy weights file (`data/weights/NAME.pt`) is a pickle. The
    sample inputs (also a pickle) are never read: `sanitised_pt2` drops them. Compiled payloads
    (AOTInductor or ExecuTorch libraries) are refused too.
    """
    for name in archive.namelist():
        inner = name[len(folder):]
        if not inner.startswith(_PT2_ALLOWED):
            raise refuse(path, f"a torch.export archive holding {inner}, which Arena does not load (exported programs only)")
        for config_folder in _PT2_CONFIGS:
            if not inner.startswith(config_folder):
                continue
            leaf = inner[len(config_folder):]
            if leaf.endswith(".pt"):
                raise refuse(path, f"a torch.export archive with pickled payloads ({inner}), which Arena never loads")
            if leaf.endswith("_config.json"):
                try:
                    entries = json.loads(archive.read(name))["config"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise refuse(path, f"a damaged torch.export archive ({inner}: {exc})") from None
                for key, entry in entries.items():
                    pickled = entry.get("use_pickle") or not str(entry.get("path_name", "")).startswith(("weight_", "tensor_"))
                    if pickled:
                        raise refuse(path, f"a torch.export archive whose '{key}' is pickled, which Arena never loads")


def sanitised_pt2(path: str) -> bytes:
    """The .pt2 archive with its sample inputs (a pickle) emptied: torch.export.load then reads no pickle."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = b"" if "/data/sample_inputs/" in info.filename else source.read(info)
            target.writestr(info.filename, data)
    return buffer.getvalue()
