"""Weights of a linear evaluation as a file, and the `weights` parameter that takes numbers or such a file.

`arena train --algorithm treestrap|rootstrap` (agents/train_bootstrap.py) writes a small JSON file,
format `arena-linear-weights` version 1:

    {"format": "arena-linear-weights", "version": 1, "game": "santorini", "game_version": "1",
     "game_params": "limits=unlimited", "game_label": "santorini", "feature_names": [...],
     "weights": [w1, ..., wN], "algorithm": "treestrap", "seed": 0, "episodes": 100,
     "settings": {...}}

`linear:weights=FILE` and `minimax:eval=linear,weights=FILE` play it: the `weights` parameter of
both agents is a `WeightsText`, either numbers `w1,...,wN` (kept in the canonical form `0,2,4`, as
the tuple of numbers it used to be) or the path of such a file. A file is refused in one line when
the tournament starts if it cannot be read, is not this format, is for another game, or does not
give one weight per feature of the game (its feature names must be the game's). The game's
parameters may differ (the features are the same functions). The file's SHA-256 is part of the
agent's version (`1+3f2a...`), as for network checkpoints, so results say which weights played.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import arena
from arena.params import format_value

FORMAT_NAME = "arena-linear-weights"
FORMAT_VERSION = 1
#: A weights file is a few hundred bytes; anything far larger is not one (and is not read whole).
MAX_BYTES = 1 << 20


def numbers_in(text: str) -> tuple[float, ...] | None:
    """`text` as comma-separated numbers, or None when it is not (then it names a file)."""
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        return None


class WeightsText(str):
    """The `weights` parameter: "" (the game's default weights), numbers `w1,...,wN`, or a weights file's path.

    Numbers (given as text or as a sequence) are kept in the canonical form `format_value` gives a
    tuple of floats (`0.0,2` -> `0,2`), so specs and stored parameters read as before files were
    accepted; they must be finite. Anything else is a path, checked when the agent meets its game.
    """

    def __new__(cls, value: Any = "") -> WeightsText:
        if isinstance(value, str):
            text = value.strip()
            numbers = numbers_in(text) if text else ()
        else:
            numbers = tuple(float(v) for v in value)  # a sequence of numbers, from Python
            text = ""
        if numbers is None:
            return super().__new__(cls, text)
        if not all(math.isfinite(n) for n in numbers):
            raise arena.ArenaError(f"weights {value!r}: every weight must be a finite number")
        return super().__new__(cls, format_value(numbers))

    @property
    def is_file(self) -> bool:
        return bool(self) and numbers_in(self) is None


def weights_metadata(game: arena.Game) -> dict[str, Any]:
    """What a weights file records about its game; `check_fits` compares it."""
    from agents.neural import game_identity

    return {**game_identity(game), "feature_names": list(game.feature_names)}


def weights_bytes(game: arena.Game, weights: Sequence[float], details: Mapping[str, Any]) -> bytes:
    """The file's bytes: format, the game, the weights, then `details` (algorithm, seed, settings, ...)."""
    data = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **weights_metadata(game),
            "weights": [float(w) for w in weights], **details}  # fmt: skip
    return (json.dumps(data, indent=1, sort_keys=False) + "\n").encode()


def write_weights(path: str | os.PathLike[str], game: arena.Game, weights: Sequence[float], details: Mapping[str, Any]) -> None:
    """Write a weights file atomically (a reader never sees half of it)."""
    from arena.files import write_atomically

    write_atomically(path, weights_bytes(game, weights, details))


def read_weights(path: str) -> dict[str, Any]:
    """A weights file's contents, checked for format; ArenaError (one line) otherwise. Cached while the file is unchanged."""
    from agents.neural import file_key

    try:
        key = file_key(path)
    except arena.ArenaError:
        raise arena.ArenaError(f"weights file {path}: cannot read it (no such file)") from None
    return _read_cached(key)


@functools.lru_cache(maxsize=32)
def _read_cached(key: tuple[str, int, int]) -> dict[str, Any]:
    path = key[0]
    if key[2] > MAX_BYTES:
        raise arena.ArenaError(f"weights file {path}: not an {FORMAT_NAME} file ({key[2]} bytes)")
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise arena.ArenaError(f"weights file {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError:
        raise arena.ArenaError(f"weights file {path}: not an {FORMAT_NAME} file (not JSON)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise arena.ArenaError(f"weights file {path}: not an {FORMAT_NAME} file")
    if data.get("version") != FORMAT_VERSION:
        raise arena.ArenaError(f"weights file {path}: {FORMAT_NAME} version {data.get('version')!r}, "
                               f"this Arena reads version {FORMAT_VERSION}")  # fmt: skip
    weights = data.get("weights")
    if (not isinstance(weights, list) or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights)
            or not all(math.isfinite(w) for w in weights)):  # fmt: skip
        raise arena.ArenaError(f"weights file {path}: 'weights' must be a list of finite numbers")
    if not isinstance(data.get("game"), str) or not isinstance(data.get("feature_names"), list):
        raise arena.ArenaError(f"weights file {path}: it names no game or features")
    return data


def file_weights(agent_id: str, game: arena.Game, path: str) -> tuple[float, ...]:
    """The weights of the file at `path` for `game`; ArenaError naming the agent and file when they do not fit."""
    try:
        data = read_weights(path)
    except arena.ArenaError as error:
        raise arena.ArenaError(f"agent '{agent_id}': {error}") from None
    check_fits(agent_id, data, game, path)
    return tuple(float(w) for w in data["weights"])


def check_fits(agent_id: str, data: Mapping[str, Any], game: arena.Game, path: str) -> None:
    """Refuse a file for another game, or whose weights are not one per feature of the game."""
    gid = game.info.id
    if data["game"] != gid:
        raise arena.ArenaError(f"agent '{agent_id}': weights file {path} is for game '{data['game']}', not '{gid}'")
    names, n = list(game.feature_names), len(data["weights"])
    if n != len(names):
        raise arena.ArenaError(f"agent '{agent_id}': weights file {path} has {n} weights but game '{gid}' has "
                               f"{len(names)} features ({', '.join(names)})")  # fmt: skip
    if list(data["feature_names"]) != names:
        raise arena.ArenaError(f"agent '{agent_id}': weights file {path} weighs features ({', '.join(map(str, data['feature_names']))}), "
                               f"not game '{gid}''s ({', '.join(names)})")  # fmt: skip


def weights_files(params: Mapping[str, str]) -> tuple[str, ...]:
    """The weights file `weights` names (as given, text), if it names one: the file an agent reads (Agent.files)."""
    try:
        value = WeightsText(params.get("weights", ""))
    except arena.ArenaError:  # not finite numbers: no file (the agent's validation says what is wrong)
        return ()
    return (str(value),) if value.is_file else ()


def weights_fingerprint(params: Mapping[str, Any]) -> str:
    """The weights file's digest when `weights` names a file, else "": part of the agent's stored version."""
    value = params.get("weights")
    if not isinstance(value, WeightsText) or not value.is_file:
        return ""
    from agents.neural import checkpoint_digest

    return checkpoint_digest(value)
