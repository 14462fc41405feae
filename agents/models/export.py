"""`arena export`: a network Arena plays, written as ONNX, so that it plays where only onnxruntime is installed
(no PyTorch), from other languages, or on another runtime.

Arena's `.npz` MLP is written as an ONNX graph directly (Flatten, then MatMul, Add and Relu per layer: no
PyTorch needed); TorchScript and `torch.export` files go through `torch.onnx.export` (the TorchScript-based
exporter: it takes scripted modules, loops and all, which the dynamo exporter does not). The batch dimension
is dynamic, and the board's too for a network whose metadata says `size_independent`. The file's metadata
(`arena.json`: game, version, parameters, training) goes into the ONNX metadata property `arena`.

Nothing is written unless the ONNX file fits the game and gives the same outputs as the original on real
positions of the game (random plies from its start): `check_fits`, then both run on the same batch, on the
temporary file that `arena.files.write_atomically` renames only then.
"""

from __future__ import annotations

import io
import json
import logging
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

import arena
from agents.models import check_fits, load_model
from agents.models.base import ONNX_METADATA_KEY, Model, first_line
from agents.models.sniff import ARENA_MLP, ONNX, TORCH_EXPORT, TORCHSCRIPT, sanitised_pt2
from arena.files import check_writable, write_atomically
from arena.observations import require_observation_shape
from arena.plugins import CommandContext, command_registry, plugins_dir_option

#: Positions the outputs are compared on, and how close they must be (float32 through two runtimes).
SAMPLE_POSITIONS = 32
RTOL, ATOL = 1e-4, 1e-5
OPSET = 17
INPUT, OUTPUTS = "observation", ("values", "value")


@dataclass(frozen=True)
class Exported:
    """What `export_onnx` wrote: the file, the game it was checked on, its outputs and how close they came."""

    path: str
    source_format: str
    game: str
    outputs: int
    max_difference: float


def export_onnx(source: str, out: str, game: arena.Game | None, game_class: Callable[[str], type[arena.Game]]) -> Exported:
    """Write the network in `source` as ONNX at `out`, checked on `game` (default: the game its metadata names,
    whose class `game_class(id)` gives). ArenaError, and nothing written, when it cannot be."""
    if Path(out).suffix != ".onnx":
        raise arena.ArenaError(f"--out {out}: name the ONNX file FILE.onnx")
    check_writable(out)  # a folder, or no folder to write in: refused before the export's work
    if Path(out).exists() and Path(out).resolve() == Path(source).resolve():
        raise arena.ArenaError(f"--out {out}: that is the network being exported")
    model = load_model(source)
    if model.format == ONNX:
        raise arena.ArenaError(f"checkpoint {source}: it is ONNX already")
    if model.format not in (ARENA_MLP, TORCHSCRIPT, TORCH_EXPORT):  # a Q-table: values in a table, no network
        raise arena.ArenaError(f"checkpoint {source} is a table of values ({model.format}), not a network: it has no ONNX form")
    if game is None:
        game = _game_of_metadata(source, model.metadata, game_class)
    check_fits(model, game)
    batch = sample_observations(game, SAMPLE_POSITIONS)
    expected = model.run(batch)
    data = _onnx_bytes(model, batch, len(expected) if expected[1] is not None else 1)
    data = _with_metadata(data, model.metadata)
    difference = 0.0

    def same_outputs(written: str) -> None:  # on the temporary file, before it takes the name `out`
        nonlocal difference
        difference = _check_same(load_model(written), game, batch, expected, source)

    write_atomically(out, data, check=same_outputs)
    return Exported(out, model.format, game.label(), 1 if expected[1] is None else 2, difference)


def _game_of_metadata(source: str, metadata: dict[str, Any] | None, game_class: Callable[[str], type[arena.Game]]) -> arena.Game:
    """The game the file's metadata names, at its parameters (canonical: "key=value" pairs joined by ';')."""
    if not metadata or not metadata.get("game"):
        raise arena.ArenaError(f"checkpoint {source}: its metadata names no game; say which with --game")
    text = str(metadata.get("game_params") or "")
    params = dict(item.split("=", 1) for item in text.split(";") if "=" in item)
    return game_class(str(metadata["game"]))(**params)


def sample_observations(game: arena.Game, count: int, seed: int = 0) -> np.ndarray:
    """`count` float32 observations of real positions (random plies from the start, the seat to move's view)."""
    shape = require_observation_shape(game, "neural")
    rng = random.Random(seed)
    rows: list[np.ndarray] = []
    state = game.new_initial_state(seed)
    while len(rows) < count:
        if state.is_terminal() or state.current_player < 0:
            seed += 1
            state = game.new_initial_state(seed)
            continue
        rows.append(np.asarray(state.observation(state.current_player), dtype=np.float32).reshape(shape))
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    return np.stack(rows)


def _onnx_bytes(model: Model, batch: np.ndarray, outputs: int) -> bytes:
    if model.format == ARENA_MLP:
        return _mlp_graph(model, batch.shape[1:])
    import torch

    names = list(OUTPUTS[:outputs])
    if model.format == TORCH_EXPORT:
        return _exported_program_bytes(torch, model.path, names)
    module = model.module  # type: ignore[attr-defined]
    axes: dict[int, str] = {0: "batch"}
    if (model.metadata or {}).get("size_independent"):  # the board's sides too: it plays every board size
        axes.update({axis: f"side{axis - 1}" for axis in range(2, batch.ndim)})
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter's deprecation notice, and tracing notes
        try:
            torch.onnx.export(module, (torch.from_numpy(batch[:2].copy()),), buffer,  # type: ignore[arg-type]  # it takes a buffer
                              input_names=[INPUT], output_names=names,
                              dynamic_axes={INPUT: axes, **{name: {0: "batch"} for name in names}}, opset_version=OPSET,
                              dynamo=False)  # fmt: skip
        except Exception as exc:  # whatever the exporter trips on, this network has no ONNX form here
            raise arena.ArenaError(f"checkpoint {model.path}: PyTorch cannot export it to ONNX ({first_line(exc)})") from None
    return buffer.getvalue()


def _exported_program_bytes(torch: Any, path: str, names: list[str]) -> bytes:
    """A `torch.export` program through the dynamo exporter (its dynamic batch is the program's own)."""
    program = torch.export.load(io.BytesIO(sanitised_pt2(path)))
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its notes on optional operator libraries (torchvision) it did not find
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exported = torch.onnx.export(program, dynamo=True, verbose=False, input_names=[INPUT], output_names=names,
                                         opset_version=OPSET)  # fmt: skip
    except Exception as exc:
        raise arena.ArenaError(f"checkpoint {path}: PyTorch cannot export it to ONNX ({first_line(exc)})") from None
    finally:
        quiet.setLevel(level)
    return bytes(exported.model_proto.SerializeToString())


def _mlp_graph(model: Model, shape: tuple[int, ...]) -> bytes:
    """Arena's MLP as ONNX: flatten, then x @ W + b per layer, ReLU after every layer but the last."""
    from onnx import TensorProto, helper, numpy_helper

    network = model.network  # type: ignore[attr-defined]
    nodes = [helper.make_node("Flatten", [INPUT], ["h0"], axis=1)]
    weights = []
    last = len(network.weights) - 1
    for index, (w, b) in enumerate(zip(network.weights, network.biases)):
        weights += [numpy_helper.from_array(np.asarray(w, np.float32), f"w{index}"),
                    numpy_helper.from_array(np.asarray(b, np.float32), f"b{index}")]  # fmt: skip
        nodes += [helper.make_node("MatMul", [f"h{index}", f"w{index}"], [f"m{index}"]),
                  helper.make_node("Add", [f"m{index}", f"b{index}"], [OUTPUTS[0] if index == last else f"a{index}"])]  # fmt: skip
        if index < last:
            nodes.append(helper.make_node("Relu", [f"a{index}"], [f"h{index + 1}"]))
    actions = int(network.weights[-1].shape[1])
    graph = helper.make_graph(
        nodes, "arena_mlp",
        [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, ["batch", *shape])],
        [helper.make_tensor_value_info(OUTPUTS[0], TensorProto.FLOAT, ["batch", actions])],
        weights,
    )  # fmt: skip
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="arena")
    return bytes(onnx_model.SerializeToString())


def _with_metadata(data: bytes, metadata: dict[str, Any] | None) -> bytes:
    import onnx

    model = onnx.load_from_string(data)
    if metadata:
        entry = model.metadata_props.add()
        entry.key, entry.value = ONNX_METADATA_KEY, json.dumps({**metadata, "format": "onnx"}, sort_keys=True)
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def _check_same(exported: Model, game: arena.Game, batch: np.ndarray, expected: tuple[np.ndarray, np.ndarray | None],
                source: str) -> float:  # fmt: skip
    """The largest difference between the ONNX file's outputs and the original's; ArenaError past RTOL/ATOL."""
    check_fits(exported, game)
    got = exported.run(batch)
    difference = 0.0
    for name, mine, theirs in zip(OUTPUTS, got, expected):
        if theirs is None:
            continue
        if mine is None or mine.shape != theirs.shape or not np.allclose(mine, theirs, rtol=RTOL, atol=ATOL):
            worst = float(np.max(np.abs(mine - theirs))) if mine is not None and mine.shape == theirs.shape else float("nan")
            raise arena.ArenaError(f"checkpoint {source}: the ONNX export's {name} differ from the original's "
                                   f"(largest difference {worst:.3g}): not written")  # fmt: skip
        difference = max(difference, float(np.max(np.abs(mine - theirs))) if mine.size else 0.0)
    return difference


@click.command("export")
@click.argument("checkpoint", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", required=True, metavar="FILE.onnx", help="The ONNX file to write.")
@click.option("--game", "game_spec", default=None,
              help="The game to check it on (default: the game its metadata names; needed for files without one).")
@plugins_dir_option
@click.pass_obj
def export_command(ctx: CommandContext | None, checkpoint: str, out: str, game_spec: str | None,
                   plugins_dirs: tuple[str, ...]) -> None:  # fmt: skip
    """Write a network (TorchScript, torch.export or Arena's .npz) as ONNX, checked to give the same values.

    The ONNX file plays as `neural:checkpoint=FILE.onnx` with onnxruntime alone (no PyTorch), and runs
    from any language with an ONNX runtime."""
    from arena.tournament import make_game

    registry, _ = command_registry(ctx, plugins_dirs)
    game = make_game(registry, game_spec) if game_spec is not None else None
    done = export_onnx(checkpoint, out, game, registry.game_class)
    click.echo(f"wrote {done.path}: {done.source_format} network for {done.game}, {done.outputs} output(s), "
               f"largest difference from the original {done.max_difference:.2g} on {SAMPLE_POSITIONS} positions", err=True)
    click.echo(done.path)
