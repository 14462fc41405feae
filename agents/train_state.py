"""Resumable training: the state file `arena train` writes beside every checkpoint, and `--resume` reads.

`OUT.resume` (e.g. `ttt.npz.resume`) is an uncompressed zip of `.npy` arrays read without pickle, like
the `.npz` checkpoints, holding what the checkpoint alone does not:
- `meta`: a JSON string: format `arena-train-state` version 1, the episodes trained, the game
  (id, version, parameters), the network's shape (algorithm, net, hidden, channels, dueling, and
  DQN's `targets` when they are Monte-Carlo returns), the SHA-256 of the checkpoint written with
  it, the learner's counters and random generators' states (Python's `random` state as a list,
  numpy's bit generator state as a dict), the REINFORCE baseline, the outcomes of the last
  `window` episodes and the losses since the last metrics line, and, for self-play, the snapshot
  files this run wrote;
- `net.*`, `target.*` (DQN's target network, none with `--returns`), `adam.*` (the optimiser's
  moments and step count), the DQN replay buffer (`replay.*`, its filled part, each move's
  discounted return included), REINFORCE's episodes not yet used in an update (`pending.*`), or
  the Q-table (`q.keys`, `q.values`): float32 arrays stored bit for bit.

The weights are stored here too, so the state of a REINFORCE run taken before its final partial batch
was applied (the checkpoint holds the network after it) continues exactly as a longer run would.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import arena

FORMAT_NAME = "arena-train-state"
FORMAT_VERSION = 1
SUFFIX = ".resume"
META = "meta"
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

Arrays = dict[str, np.ndarray]


def state_path(checkpoint: str | os.PathLike[str]) -> Path:
    """Where the training state of `checkpoint` goes: the checkpoint's name plus `.resume`."""
    path = Path(checkpoint)
    return path.with_name(path.name + SUFFIX)


def file_digest(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_state(checkpoint: str | os.PathLike[str], meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Path:
    """Write the state of the run that just wrote `checkpoint`, tied to that file by its digest."""
    from arena.files import write_atomically

    meta = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **meta, "checkpoint_sha256": file_digest(checkpoint)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        members = {META: np.array(json.dumps(meta, sort_keys=True)), **arrays}
        for name, array in members.items():
            with archive.open(zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_ZIP_TIME), "w") as member:
                np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)
    target = state_path(checkpoint)
    write_atomically(target, buffer.getvalue())
    return target


def read_state(checkpoint: str | os.PathLike[str]) -> tuple[dict[str, Any], Arrays]:
    """The training state beside `checkpoint`, checked to belong to it; ArenaError (one line) otherwise."""
    source = Path(checkpoint)
    if not source.is_file():
        raise arena.ArenaError(f"--resume: no checkpoint file {source}")
    path = state_path(source)
    if not path.is_file():
        raise arena.ArenaError(f"--resume: no training state {path} beside {source}: only a checkpoint arena train wrote "
                               f"(with its .resume file) can be resumed")  # fmt: skip
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        meta = json.loads(str(arrays.pop(META)[()]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        raise arena.ArenaError(f"--resume: {path} is not a training state ({type(exc).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME or meta.get("version") != FORMAT_VERSION:
        raise arena.ArenaError(f"--resume: {path} is not an {FORMAT_NAME} file of version {FORMAT_VERSION}")
    if meta.get("checkpoint_sha256") != file_digest(source):
        raise arena.ArenaError(f"--resume: {path} belongs to another version of {source} (the file changed since it was written)")
    return meta, arrays


def network_shape(algorithm: str, net: str, hidden: Sequence[int], channels: Sequence[int], dueling: bool,
                  representation: str | None = None, cell: str | None = None, returns: bool = False,
                  validity: str | None = None) -> dict[str, Any]:  # fmt: skip
    """What decides whether stored weights fit a run: the algorithm (logits or Q-values, which optimiser parts),
    the network and, of the widths, only those the network uses (and mdrnn's board representation and recurrent
    cell: the cell only when it is not the tanh one, so that the states written before `--cell` was offered, all
    tanh, still fit a run that asks for tanh); and DQN's Monte-Carlo targets (`--returns`: no target network, the
    buffer's returns read), and DDPG's actor design (`--validity`), likewise only when asked for."""
    if algorithm == "qlearning":
        return {"algorithm": algorithm}
    shapes: dict[str, dict[str, Any]] = {"mlp": {"hidden": list(hidden)}, "resmlp": {"hidden": list(hidden)},
                                         "conv": {"hidden": list(hidden[:1]), "channels": list(channels)},
                                         "fcn": {"channels": list(channels)},
                                         "mdrnn": {"hidden": list(hidden), "channels": list(channels[:1]),
                                                   "representation": representation}}  # fmt: skip
    if net == "mdrnn" and cell not in (None, "tanh"):
        shapes["mdrnn"]["cell"] = cell
    widths = shapes[net]
    if algorithm == "ddpg":  # its critic is an MLP of every hidden width, whatever the actor's network
        widths["critic"] = list(hidden)
    targets = {"targets": "returns"} if returns else {}
    design = {"validity": validity} if validity else {}
    return {"algorithm": algorithm, "net": net, "dueling": dueling, **widths, **targets, **design}


def check_fits(meta: Mapping[str, Any], game: Mapping[str, Any], shape: Mapping[str, Any], source: str) -> None:
    """Refuse, in one line, a state of another game or another network shape than the run asks for."""
    stored = meta["game"]
    if any(stored.get(key) != game.get(key) for key in ("game", "game_version", "game_params")):
        raise arena.ArenaError(f"--resume {source} was trained on {stored.get('game_label')} (game version {stored.get('game_version')}), "
                               f"not on {game.get('game_label')} (version {game.get('game_version')})")  # fmt: skip
    if dict(meta["shape"]) != dict(shape):
        raise arena.ArenaError(f"--resume {source} is a {describe(meta['shape'])} network; this run asks for a {describe(shape)} "
                               f"one (give the options it was trained with)")  # fmt: skip


def describe(shape: Mapping[str, Any]) -> str:
    """`dqn dueling conv 8-8 + dense 32`, `dqn (--returns) mlp 64-64`, `reinforce mlp 64-64`, `qlearning table`,
    `treestrap linear weights`."""
    if shape["algorithm"] == "qlearning":
        return "qlearning table"
    if "net" not in shape:
        return f"{shape['algorithm']} linear weights"
    dueling = "dueling " if shape["dueling"] else ""
    channels = "-".join(str(w) for w in shape.get("channels", []))
    hidden = "-".join(str(w) for w in shape.get("hidden", []))
    widths = {"mlp": hidden, "resmlp": hidden, "conv": f"{channels} + dense {hidden}", "fcn": channels,
              "mdrnn": f"{channels} + dense {hidden}, {shape.get('representation')} representation, {shape.get('cell', 'tanh')} cell"
              }[shape["net"]]  # fmt: skip
    critic = f" with critic {'-'.join(str(w) for w in shape['critic'])}" if "critic" in shape else ""
    returns = "(--returns) " if shape.get("targets") == "returns" else ""
    design = f" ({shape['validity']} actor)" if shape.get("validity") else ""
    design += f" (--targets {shape['value_targets']})" if shape.get("value_targets") else ""
    return f"{shape['algorithm']} {returns}{dueling}{shape['net']} {widths}{critic}{design}"


# ---------------------------------------------------------------- torch parts, bit for bit


def module_arrays(prefix: str, module: Any) -> Arrays:
    return {f"{prefix}.{name}": tensor.detach().numpy().copy() for name, tensor in module.state_dict().items()}


def load_module(torch: Any, prefix: str, module: Any, arrays: Arrays) -> None:
    start = prefix + "."
    module.load_state_dict({name[len(start):]: torch.from_numpy(array.copy()) for name, array in arrays.items()
                            if name.startswith(start)})  # fmt: skip


def optimizer_arrays(optimizer: Any, prefix: str = "adam") -> Arrays:
    """Adam's per-parameter moments and step counts (its settings come from the run's options), as `PREFIX.INDEX.KEY`."""
    out: Arrays = {}
    for index, values in optimizer.state_dict()["state"].items():
        for key, tensor in values.items():
            out[f"{prefix}.{index}.{key}"] = tensor.detach().numpy().copy()
    return out


def load_optimizer(torch: Any, optimizer: Any, arrays: Arrays, prefix: str = "adam") -> None:
    state: dict[int, dict[str, Any]] = {}
    for name, array in arrays.items():
        if name.startswith(prefix + "."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = torch.from_numpy(array.copy())
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})


def random_state(rng: Any) -> list[Any]:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def set_random_state(rng: Any, saved: list[Any]) -> None:
    rng.setstate((saved[0], tuple(saved[1]), saved[2]))
