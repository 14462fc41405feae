"""The worked example runs at a tiny scale: MaskablePPO (sb3-contrib) on arena.envs, exported to ONNX,
ranked by `arena run-tournament` through the built-in `neural` agent (`neural:checkpoint=FILE`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Arena

pytest.importorskip("sb3_contrib")
pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "train_maskable_ppo.py"


def test_maskable_ppo_example_trains_exports_and_is_ranked(tmp_path):
    out = tmp_path / "ttt-ppo.onnx"
    run = subprocess.run([sys.executable, str(EXAMPLE), "--game", "tic_tac_toe", "--timesteps", "256", "--n-steps", "128",
                          "--out", str(out)], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(out) and "trained MaskablePPO on tic_tac_toe against random" in run.stderr
    arena = Arena(tmp_path / "arena.db")
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={out},random", "--rounds", "4", "--quiet")
    board = arena.json("leaderboard")
    assert sorted(row["agent"] for row in board) == sorted([f"neural:checkpoint={out}", "random"])
    assert all(row["games"] == 4 and row["forfeits"] == 0 for row in board)
    refused = arena("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={out},random", ok=False)
    assert refused.exit_code == 2 and "is for game 'tic_tac_toe'" in refused.stderr
