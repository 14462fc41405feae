"""`neural`: plays a trained multilayer perceptron stored in a numpy checkpoint.

The agent flattens `state.observation(seat)`, runs the network (ReLU hidden layers, linear
output, one output per action id), masks the outputs to the legal actions and plays the best one
(`sample=false`) or samples from the masked softmax with the agent's seeded RNG (`sample=true`).
Policy-gradient checkpoints hold logits and DQN checkpoints hold Q-values: for both, the masked
argmax is the network's choice, so one agent plays either.

Checkpoint format (`arena-mlp`, version 1): an uncompressed `.npz` archive, read with
`allow_pickle=False` (no pickle, so loading a file cannot run code), holding
- `w0, b0, w1, b1, ...`: float32 layer weights of shape (inputs, outputs) and biases, so that a
  layer is `x @ w + b`;
- `metadata`: a JSON string: `format`, `version`, `game`, `game_version`, `game_params`
  (`arena.params.canonical` of the game's parameters), `game_label`, `observation_shape`,
  `num_actions`, `hidden`, `activation`, `output` (`logits` or `q_values`), `algorithm` and
  `training` (the trainer's settings and its final win rate).

Inference is plain numpy: playing a checkpoint needs no PyTorch (importing it costs more than a
second per process, and tournament workers are separate processes). Arena makes a new agent for
every seat of every match, so loaded checkpoints are cached per process, keyed by absolute path,
modification time and size (a retrained file at the same path is read again).

`arena train` (agents/neural_train.py) writes checkpoints; `init_checkpoint` writes an untrained
one (for tests and baselines).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
import random
import stat
import weakref
import zipfile
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

import arena
from agents.models import DEVICES, Model, model_for
from agents.models.choose import choose_actions
from arena.files import write_atomically
from arena.observations import require_observation_shape
from arena.params import canonical, validate_params

FORMAT_NAME = "arena-mlp"
FORMAT_VERSION = 1
METADATA_KEY = "metadata"
OUTPUT_KINDS = ("logits", "q_values")
#: The `output` a trained state-value network's metadata declares (agents/train_value.py): searched with, not played.
VALUE_OUTPUT = "value"

_ZIP_MAGIC = b"PK\x03\x04"  # how every .npz (a zip archive) starts

# Zip entries carry a modification time; a fixed one makes the same weights give the same bytes.
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

#: What a checkpoint's members may inflate to, in all: a small archive with a huge member (a deflate
#: bomb) is refused before anything is inflated. $ARENA_MAX_CHECKPOINT_MB overrides (`max_checkpoint_bytes`).
MAX_CHECKPOINT_BYTES = 256 * 1024 * 1024
MAX_CHECKPOINT_VARIABLE = "ARENA_MAX_CHECKPOINT_MB"

#: One checkpoint file's identity: absolute path, modification time (ns) and size.
FileKey = tuple[str, int, int]


@dataclass(frozen=True)
class Network:
    """A loaded checkpoint: its metadata and its layers, as read-only float32 arrays."""

    path: str
    metadata: dict[str, Any]
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return tuple(self.metadata["observation_shape"])

    @property
    def num_actions(self) -> int:
        return int(self.metadata["num_actions"])

    def outputs(self, observation: Any) -> np.ndarray:
        """One value per action id (logits or Q-values) for one observation tensor."""
        return forward(self.weights, self.biases, np.asarray(observation, dtype=np.float32).reshape(-1))


def forward(weights: Sequence[np.ndarray], biases: Sequence[np.ndarray], x: np.ndarray) -> np.ndarray:
    """The MLP: ReLU after every layer but the last."""
    last = len(weights) - 1
    for index, (w, b) in enumerate(zip(weights, biases)):
        x = x @ w + b
        if index < last:
            x = np.maximum(x, 0.0)
    return x


class NotANumber(ValueError):
    """A network's output is NaN for a legal action: its fault (a forfeit in play; a diverged run in training)."""


def choose_action(outputs: np.ndarray, legal: Sequence[int], rng: random.Random | None) -> int:
    """The legal action with the highest output; with `rng`, a draw from the softmax of the legal outputs. A NaN among
    them is a fault of the network (argmax would take it as the highest): ValueError, the agent's forfeit."""
    values = outputs[list(legal)].astype(np.float64)
    if np.isnan(values).any():
        named = ", ".join(str(action) for action, value in zip(legal, values) if np.isnan(value))
        raise NotANumber(f"the network's output is NaN for legal action(s) {named}")
    if rng is None or len(legal) == 1:
        return int(legal[int(np.argmax(values))])
    weights = np.exp(values - values.max())
    cumulative = np.cumsum(weights)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return int(legal[min(index, len(legal) - 1)])


# ---------------------------------------------------------------- game description


def game_identity(game: arena.Game) -> dict[str, Any]:
    """Which game a trained file is for: id, version, parameters (canonical) and label."""
    return {
        "game": game.info.id,
        "game_version": game.info.version,
        "game_params": canonical(game.params),
        "game_label": game.label(),
    }


def game_description(game: arena.Game) -> dict[str, Any]:
    """What a checkpoint records about the game it is for; `check_compatible` compares it."""
    return {
        **game_identity(game),
        "observation_shape": list(observation_shape(game)),
        "num_actions": game.num_distinct_actions,
    }


def observation_shape(game: arena.Game) -> tuple[int, ...]:
    """The shape of the game's observation tensor (ArenaError for a game that offers none)."""
    return require_observation_shape(game, "neural")


# ---------------------------------------------------------------- writing checkpoints


def checkpoint_bytes(layers: Sequence[tuple[np.ndarray, np.ndarray]], metadata: Mapping[str, Any]) -> bytes:
    """An `.npz` archive of the layers and the metadata JSON, byte for byte the same for the same input."""
    arrays: dict[str, np.ndarray] = {METADATA_KEY: np.array(json.dumps(metadata, sort_keys=True))}
    for index, (w, b) in enumerate(layers):
        arrays[f"w{index}"] = np.ascontiguousarray(w, dtype=np.float32)
        arrays[f"b{index}"] = np.ascontiguousarray(b, dtype=np.float32)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            with archive.open(zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_ZIP_TIME), "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    return buffer.getvalue()


def save_checkpoint(
    path: str | os.PathLike[str], game: arena.Game, layers: Sequence[tuple[np.ndarray, np.ndarray]],
    output: str, algorithm: str, training: Mapping[str, Any],
) -> None:  # fmt: skip
    """Write a checkpoint for `game`; `layers` are (weights (in, out), bias (out,)) pairs."""
    metadata = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        **game_description(game),
        "hidden": [int(np.shape(w)[1]) for w, _ in layers[:-1]],
        "activation": "relu",
        "output": output,
        "algorithm": algorithm,
        "training": dict(training),
    }
    write_atomically(path, checkpoint_bytes(layers, metadata))


def initial_layers(sizes: Sequence[int], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Layers initialised like torch.nn.Linear: uniform in +-1/sqrt(fan_in)."""
    rng = np.random.default_rng(seed)
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / math.sqrt(fan_in)
        layers.append((rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                       rng.uniform(-bound, bound, fan_out).astype(np.float32)))  # fmt: skip
    return layers


def init_checkpoint(game: arena.Game, path: str | os.PathLike[str], hidden: Sequence[int] = (64,), seed: int = 0) -> Path:
    """Write an untrained checkpoint for `game` (random weights from `seed`); returns its path."""
    inputs = math.prod(observation_shape(game))
    layers = initial_layers([inputs, *hidden, game.num_distinct_actions], seed)
    save_checkpoint(path, game, layers, "logits", "untrained", {"seed": seed})
    return Path(path)


# ---------------------------------------------------------------- reading checkpoints


def file_key(path: str | os.PathLike[str]) -> FileKey:
    """The cache key of a checkpoint file; ArenaError when it is missing or not a file."""
    absolute = os.path.abspath(path)
    try:
        status = os.stat(absolute)
    except OSError as exc:
        raise arena.ArenaError(f"checkpoint {path}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(status.st_mode):  # (os.path.isfile would stat the file a second time, for every agent)
        raise arena.ArenaError(f"checkpoint {path}: not a file")
    return (absolute, status.st_mtime_ns, status.st_size)


def load_network(path: str | os.PathLike[str]) -> Network:
    """The checkpoint at `path`, read once per process while the file is unchanged."""
    return _load_cached(file_key(path))


def checkpoint_digest(path: str | os.PathLike[str]) -> str:
    """The first 12 hex digits of the file's SHA-256 (read once per process while the file is unchanged)."""
    return _digest_cached(file_key(path))


@functools.lru_cache(maxsize=32)
def _digest_cached(key: FileKey) -> str:
    with open(key[0], "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()[:12]


@functools.lru_cache(maxsize=32)
def _load_cached(key: FileKey) -> Network:
    return read_checkpoint(key[0])


def read_checkpoint(path: str) -> Network:
    """Read and validate a checkpoint; every problem is one ArenaError line naming the file."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(len(_ZIP_MAGIC))
    except OSError as exc:
        raise arena.ArenaError(f"checkpoint {path}: cannot read it ({exc.strerror or exc})") from None
    if magic != _ZIP_MAGIC:  # numpy would blame pickled data, which is not what is wrong
        raise arena.ArenaError(f"checkpoint {path}: not a .npz checkpoint (not a zip archive)")
    check_inflated_size(path)
    try:
        loaded = np.load(path, allow_pickle=False)
    except Exception as exc:  # an untrusted file: whatever numpy trips on, the file is unusable
        raise arena.ArenaError(f"checkpoint {path}: not a readable .npz checkpoint ({_reason(exc)})") from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise arena.ArenaError(f"checkpoint {path}: not a .npz checkpoint (a single array)")
    try:
        with loaded:
            arrays = {name: loaded[name] for name in loaded.files}
    except Exception as exc:
        raise arena.ArenaError(f"checkpoint {path}: corrupt ({_reason(exc)})") from None
    metadata = _metadata(path, arrays)
    weights, biases = _layers(path, arrays, metadata)
    return Network(path, metadata, weights, biases)


def max_checkpoint_bytes() -> int:
    """$ARENA_MAX_CHECKPOINT_MB in bytes, else MAX_CHECKPOINT_BYTES; read when a checkpoint is, so a bad value is
    one ArenaError then (read when this plugin is imported, it would make the `neural` agent fail to load)."""
    text = os.environ.get(MAX_CHECKPOINT_VARIABLE)
    if text is None:
        return MAX_CHECKPOINT_BYTES
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = math.nan
    if not (megabytes > 0 and math.isfinite(megabytes)):
        raise arena.ArenaError(f"${MAX_CHECKPOINT_VARIABLE} must be a number of megabytes above 0, got {text!r}")
    return int(megabytes * 1024 * 1024)


def check_inflated_size(path: str) -> None:
    """Refuse an archive whose members declare more than `max_checkpoint_bytes()` (zipfile never inflates past a
    member's declared size, so the declared sizes bound what loading it can take)."""
    limit = max_checkpoint_bytes()
    try:
        with zipfile.ZipFile(path) as archive:
            total = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise arena.ArenaError(f"checkpoint {path}: not a readable .npz checkpoint ({_reason(exc)})") from None
    if total > limit:
        raise arena.ArenaError(f"checkpoint {path}: its members inflate to {total / 2**20:.0f} MB, more than the "
                               f"{limit / 2**20:.0f} MB allowed (${MAX_CHECKPOINT_VARIABLE})")  # fmt: skip


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _metadata(path: str, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    if METADATA_KEY not in arrays:
        raise arena.ArenaError(f"checkpoint {path}: no metadata (not an {FORMAT_NAME} checkpoint)")
    try:
        metadata = json.loads(str(arrays[METADATA_KEY][()]))
    except (ValueError, TypeError, IndexError) as exc:
        raise arena.ArenaError(f"checkpoint {path}: unreadable metadata ({_reason(exc)})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise arena.ArenaError(f"checkpoint {path}: not an {FORMAT_NAME} checkpoint")
    if metadata.get("version") != FORMAT_VERSION:
        raise arena.ArenaError(f"checkpoint {path}: format version {metadata.get('version')!r}; this Arena reads version {FORMAT_VERSION}")
    required = {"game": str, "game_version": str, "game_params": str, "observation_shape": list, "num_actions": int,
                "hidden": list, "output": str}  # fmt: skip
    for name, kind in required.items():
        if not isinstance(metadata.get(name), kind):
            raise arena.ArenaError(f"checkpoint {path}: metadata '{name}' missing or not {kind.__name__}")
    if metadata["output"] not in OUTPUT_KINDS:
        raise arena.ArenaError(f"checkpoint {path}: unknown output kind {metadata['output']!r}")
    return metadata


def _layers(path: str, arrays: dict[str, np.ndarray], metadata: dict[str, Any]) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The layers, checked against the sizes the metadata declares."""
    try:
        sizes = [math.prod(int(n) for n in metadata["observation_shape"]), *(int(h) for h in metadata["hidden"]),
                 int(metadata["num_actions"])]  # fmt: skip
    except (TypeError, ValueError):
        raise arena.ArenaError(f"checkpoint {path}: bad sizes in the metadata") from None
    weights, biases = [], []
    for index, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        w, b = arrays.get(f"w{index}"), arrays.get(f"b{index}")
        if w is None or b is None:
            raise arena.ArenaError(f"checkpoint {path}: layer {index} is missing")
        if w.shape != (fan_in, fan_out) or b.shape != (fan_out,):
            raise arena.ArenaError(
                f"checkpoint {path}: layer {index} has shape {w.shape}/{b.shape}, expected {(fan_in, fan_out)}/{(fan_out,)}"
            )
        if w.dtype.kind != "f" or b.dtype.kind != "f" or not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise arena.ArenaError(f"checkpoint {path}: layer {index} holds non-finite or non-float values")
        weights.append(_read_only(w))
        biases.append(_read_only(b))
    return tuple(weights), tuple(biases)


def _read_only(array: np.ndarray) -> np.ndarray:
    """float32, and frozen: one cached array serves every agent of the process."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    array.flags.writeable = False
    return array


# ---------------------------------------------------------------- matching a checkpoint to a game


def check_compatible(network: Network, game: arena.Game, with_params: bool = True) -> None:
    """Raise ArenaError (one line) when `network` was not made for `game`.

    `with_params=False` skips the game parameters: seat parameters (Gwent Lite's decks) change
    the game of single seats after the tournament-wide check, without changing the tensors.
    """
    meta, name = network.metadata, network.path
    if meta["game"] != game.info.id:
        raise arena.ArenaError(f"checkpoint {name} is for game '{meta['game']}', not '{game.info.id}'")
    if meta["game_version"] != game.info.version:
        raise arena.ArenaError(
            f"checkpoint {name} is for {game.info.id} version {meta['game_version']}; version {game.info.version} is installed"
        )
    if with_params and meta["game_params"] != canonical(game.params):
        trained = meta.get("game_label") or meta["game_params"]
        raise arena.ArenaError(f"checkpoint {name} is for {trained} (parameters {meta['game_params']}), not {game.label()}")
    shape = observation_shape(game)
    if network.observation_shape != shape:
        raise arena.ArenaError(f"checkpoint {name} takes observations of shape {network.observation_shape}; {game.label()} gives {shape}")
    if network.num_actions != game.num_distinct_actions:
        raise arena.ArenaError(
            f"checkpoint {name} has {network.num_actions} outputs; {game.label()} has {game.num_distinct_actions} actions"
        )


def require_policy(model: Model, path: str) -> None:
    """Refuse a state-value network (metadata `output: value`) where a move must be played from the network's outputs."""
    if (model.metadata or {}).get("output") == VALUE_OUTPUT:
        raise arena.ArenaError(f"network {path} is a state-value network, with no move of its own to play: "
                               f"search with it, e.g. minimax:depth=1,eval=model,model={path}")  # fmt: skip


# ---------------------------------------------------------------- the agent


class NeuralAgent(arena.Agent):
    info = arena.AgentInfo(
        id="neural",
        version="1",
        description="A trained network (TorchScript, torch.export, ONNX or Arena's .npz MLP): masked argmax or "
        "softmax sample of its per-action outputs.",
        params=(
            arena.Param("checkpoint", "", "the network file (required): TorchScript, torch.export .pt2, ONNX or .npz"),
            arena.Param("sample", False, "sample from the softmax of the legal outputs instead of taking the best"),
            arena.Param("device", "cpu", "where a PyTorch or ONNX network runs", choices=DEVICES),
        ),
    )

    @classmethod
    def check_game(cls, game: arena.Game, params: dict[str, Any]) -> None:
        own = {k: v for k, v in params.items() if k != "seed"}
        values = validate_params(cls.info.params, own, f"agent '{cls.info.id}'")
        require_policy(model_for(_required_key(values["checkpoint"]), game, values["device"], with_params=True), values["checkpoint"])

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        """At registration: the checkpoint must be given, and a readable, well-formed one."""
        checkpoint = str(params.get("checkpoint") or "")
        _required_key(checkpoint)
        from agents.models.sniff import ARENA_MLP, detect

        kind = detect(checkpoint)  # a file that is no network at all: said in its own words
        if kind != ARENA_MLP:
            article = "an" if kind[0] in "aeiou" else "a"  # an onnx, a pt2
            raise arena.ArenaError(f"checkpoint {checkpoint}: {article} {kind} network is checked against the game it plays: "
                                   "register it with --game GAME")  # fmt: skip
        from agents.models.qtable import is_qtable, load_qtable

        if is_qtable(checkpoint):  # Arena's tabular Q-values (arena train --algorithm qlearning), also an .npz of arrays
            load_qtable(checkpoint, "cpu")
        else:
            load_network(checkpoint)

    @classmethod
    def files(cls, params: Mapping[str, str]) -> tuple[str, ...]:
        return (params["checkpoint"],) if params.get("checkpoint") else ()

    @classmethod
    def fingerprint(cls, params: dict[str, Any]) -> str:
        """The checkpoint's content digest: stored as part of the agent's version with every match."""
        return checkpoint_digest(params["checkpoint"]) if params.get("checkpoint") else ""

    def __init__(self, game: arena.Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.model = game_model(game, self.params["checkpoint"], self.params["device"])
        self.sampler = self.rng if self.params["sample"] else None

    def act(self, state: arena.State) -> int:
        observation = np.asarray(state.observation(self.player), dtype=np.float32)
        outputs, _value = self.model.run(observation[None])
        return choose_action(outputs[0], state.legal_actions(), self.sampler)

    def batch_key(self) -> Hashable:
        """Agents playing the same loaded network answer together, in one forward pass (`act_batch`)."""
        return id(self.model)

    @classmethod
    def act_batch(cls, agents: Sequence[arena.Agent], views: Sequence[arena.State]) -> list[int | Exception]:
        """One forward pass for the batch: observations written into the model's reused input array (by the
        game's `State.observations`, the whole batch at once where the game can), then masking and choosing
        for every row at once (`choose_actions`, the answers `act` gives one by one)."""
        model = agents[0].model  # type: ignore[attr-defined]
        batch = model.input_batch(len(agents), observation_shape(agents[0].game))
        type(views[0]).observations(views, [agent.player for agent in agents], batch)
        outputs, _values = model.run(batch)
        return choose_actions(outputs, [view.legal_actions() for view in views], [agent.sampler for agent in agents])  # type: ignore[attr-defined]


#: Per game object (a tournament's worker makes one for its run): the network each (file, device) resolved to,
#: so the agents made for every seat of every match find it without reading the file's status again, and a
#: file rewritten while the run goes on does not mix into its results (its digest was taken when it began).
_models_by_game: weakref.WeakKeyDictionary[arena.Game, dict[tuple[str, str], Model]] = weakref.WeakKeyDictionary()


def game_model(game: arena.Game, checkpoint: str, device: str = "cpu") -> Model:
    """The network in `checkpoint` on `device`, checked to fit `game`: loaded once per process, looked up once per game."""
    known = _models_by_game.get(game)
    if known is None:
        known = _models_by_game[game] = {}
    model = known.get((checkpoint, device))
    if model is None:
        model = known[checkpoint, device] = model_for(_required_key(checkpoint), game, device)
    return model


def _required_key(checkpoint: str) -> FileKey:
    if not checkpoint:
        raise arena.ArenaError(
            "agent 'neural' needs a checkpoint: neural:checkpoint=FILE, or "
            "arena agents register NAME --type neural --checkpoint FILE"
        )
    return file_key(checkpoint)


@arena.hookimpl
def register_agents(register: Callable[[type[arena.Agent]], None]) -> None:
    register(NeuralAgent)


@arena.hookimpl
def register_commands(cli: click.Group) -> None:
    # Imported here: the trainer module is only needed by `arena train`, never by playing.
    from agents.models.export import export_command
    from agents.neural_train import train_command

    cli.add_command(train_command)
    cli.add_command(export_command)
