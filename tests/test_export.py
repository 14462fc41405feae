"""`arena export`: networks Arena trains (and users' TorchScript and torch.export files) written as ONNX that plays
the same moves on onnxruntime alone. Real training runs, real files, real onnxruntime; a subprocess without PyTorch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.models import load_model
from agents.models.export import sample_observations
from arena.plugins import get_registry
from tests import _models  # skips without torch and onnxruntime
from tests.conftest import Arena

REGISTRY = get_registry()

# (game, training options, file): each kind of network `arena train` writes, small and quick.
TRAINED = [
    ("tic_tac_toe", ["--algorithm", "dqn"], "mlp.npz"),  # Arena's numpy MLP: written as an ONNX graph, no PyTorch
    ("connect_four", ["--algorithm", "dqn", "--net", "conv", "--dueling"], "conv.pt"),
    ("reversi", ["--algorithm", "dqn", "--net", "resmlp"], "res.pt"),
    ("dots_and_boxes", ["--algorithm", "dqn", "--net", "fcn"], "fcn.pt"),  # size-independent
    ("dots_and_boxes", ["--algorithm", "dqn", "--net", "mdrnn"], "mdrnn.pt"),  # scripted loops over the board
    ("santorini", ["--algorithm", "value", "--net", "mlp"], "value.pt"),  # two outputs: zeros and the state value
    ("onitama", ["--algorithm", "ddpg", "--validity", "dual"], "dual.pt"),  # log softmax + log sigmoid
]


def train(arena_cli, tmp_path: Path, game: str, options: list[str], name: str) -> Path:
    out = tmp_path / name
    arena_cli("train", "--game", game, *options, "--episodes", "3", "--eval-games", "0", "--quiet", "--out", str(out))
    return out


@pytest.mark.parametrize(("game", "options", "name"), TRAINED, ids=[t[2] for t in TRAINED])
def test_a_trained_network_exports_to_onnx_with_the_same_outputs(arena_cli, tmp_path, game, options, name):
    source = train(arena_cli, tmp_path, game, options, name)
    out = tmp_path / (source.stem + ".onnx")
    result = arena_cli("export", str(source), "--out", str(out))
    assert result.stdout.strip() == str(out) and "largest difference" in result.stderr
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as any new file: readable by a server of another user
    original, exported = load_model(str(source)), load_model(str(out))
    assert exported.format == "onnx" and exported.metadata is not None
    assert exported.metadata["game"] == game and exported.metadata["format"] == "onnx"
    positions = sample_observations(REGISTRY.games[game](), 50, seed=7)  # other positions than the export checked
    (values, value), (want, want_value) = exported.run(positions), original.run(positions)
    np.testing.assert_allclose(values, want, rtol=1e-4, atol=1e-5)
    assert (value is None) == (want_value is None)
    if value is not None:
        np.testing.assert_allclose(value, want_value, rtol=1e-4, atol=1e-5)
    assert list(exported.declared_input()[1:]) in ([*positions.shape[1:]], [positions.shape[1], "side1", "side2"])


def test_the_onnx_file_plays_the_same_moves_in_a_tournament_without_pytorch(arena_cli, tmp_path):
    source = train(arena_cli, tmp_path, "connect_four", ["--algorithm", "dqn", "--net", "conv"], "c4.pt")
    exported = tmp_path / "c4.onnx"
    arena_cli("export", str(source), "--out", str(exported))
    no_torch = "import sys; sys.modules['torch'] = None; from arena.cli import main; sys.argv[0] = 'arena'; main()"
    moves = {}
    for network, runner in ((exported, [sys.executable, "-c", no_torch]), (source, [str(Path(sys.executable).parent / "arena")])):
        db = tmp_path / f"{network.suffix[1:]}.db"
        done = subprocess.run([*runner, "--db", str(db), "run-tournament", "--game", "connect_four", "--agents",
                               f"neural:checkpoint={network},greedy", "--rounds", "2", "--seed", "3", "--quiet"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
        assert done.returncode == 0, done.stderr
        played = Arena(db)
        moves[network.suffix] = [played.json("replay", str(m["id"]))["moves"] for m in played.json("matches")]
    assert moves[".onnx"] == moves[".pt"] and len(moves[".pt"]) == 2


def test_a_torch_export_file_and_a_file_without_metadata(arena_cli, tmp_path):
    net = _models.network(_models.C4_SHAPE, 7, value=True)
    meta = {"game": "connect_four", "game_version": _models.C4.info.version, "game_params": ""}
    pt2 = _models.save(net, _models.C4_SHAPE, tmp_path / "net.pt2", "pt2", meta)
    arena_cli("export", str(pt2), "--out", str(tmp_path / "net.onnx"))
    assert load_model(str(tmp_path / "net.onnx")).run(np.zeros((3, *_models.C4_SHAPE), np.float32))[1].shape == (3,)
    bare = _models.save(net, _models.C4_SHAPE, tmp_path / "bare.pt", "torchscript")
    refused = arena_cli("export", str(bare), "--out", str(tmp_path / "bare.onnx"), ok=False)
    assert refused.exit_code == 2 and "names no game; say which with --game" in refused.stderr
    arena_cli("export", str(bare), "--out", str(tmp_path / "bare.onnx"), "--game", "connect_four")
    assert load_model(str(tmp_path / "bare.onnx")).metadata is None


def test_refusals_say_why_in_one_line_and_write_nothing(arena_cli, tmp_path):
    source = train(arena_cli, tmp_path, "tic_tac_toe", ["--algorithm", "dqn"], "t.npz")
    table = train(arena_cli, tmp_path, "tic_tac_toe", ["--algorithm", "qlearning"], "q.npz")
    arena_cli("export", str(source), "--out", str(tmp_path / "t.onnx"))
    before = sorted(p.name for p in tmp_path.iterdir())
    cases = [
        ([str(source), "--out", str(tmp_path / "t.bin")], "name the ONNX file FILE.onnx"),
        ([str(tmp_path / "t.onnx"), "--out", str(tmp_path / "u.onnx")], "ONNX already"),
        ([str(table), "--out", str(tmp_path / "q.onnx")], "not a network"),
        ([str(source), "--out", str(tmp_path / "x.onnx"), "--game", "connect_four"], "tic_tac_toe"),
        ([str(source), "--out", str(tmp_path / "nowhere" / "x.onnx")], f"folder {tmp_path / 'nowhere'} does not exist"),
        ([str(source), "--out", str(tmp_path / "x.onnx"), "--game", "chess"], "chess"),
    ]
    (tmp_path / "folder.onnx").mkdir()
    cases.append(([str(source), "--out", str(tmp_path / "folder.onnx")], "folder.onnx: it is a folder"))
    before.append("folder.onnx")
    before.sort()
    for args, says in cases:
        result = arena_cli("export", *args, ok=False)
        assert result.exit_code == 2 and says in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no file, no temporary left behind
