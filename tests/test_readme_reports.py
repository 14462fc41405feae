"""The README's longest report blocks run as written, scaled down (a few episodes, one round, a few simulations): the
Santorini report's whole table (linear weights learned from search, value networks learned from results and from MCTS
searches, then every agent in one tournament and its matrix) and the Onitama report's eight actor designs with their
round robin. Real `arena` processes in a shell, in an empty folder."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

README = Path(__file__).resolve().parent.parent / "README.md"
MEMORY_LIMIT = 8 * 1024**3  # address space per shell and its arena processes (torch maps much more than it uses)


def scaled(start: str, end: str) -> str:
    """The README's lines from the one starting with `start` to the end of the one containing `end`, scaled down."""
    text = README.read_text()
    first = text.index(start)
    block = text[first : text.index("\n", text.index(end, first))]
    block = re.sub(r"--episodes \d+", "--episodes 3", block)
    block = re.sub(r"--rounds \d+", "--rounds 1", block)
    block = block.replace("mcts:simulations=30", "mcts:simulations=3").replace("arena train ", "arena train --eval-games 0 ")
    return block + "\n"


def run(block: str, folder: Path) -> str:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "OMP_NUM_THREADS": "1", "COLUMNS": "400",
           "ARENA_DB": str(folder / "arena.db")}  # fmt: skip
    done = subprocess.run(["bash", "-e", "-c", block], cwd=folder, env=env, capture_output=True, text=True, timeout=600,
                          preexec_fn=limited)  # fmt: skip
    assert done.returncode == 0, f"{block}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_santorini_table_block_runs_as_written(tmp_path):
    block = scaled("# Santorini, the report's RootStrap", "\narena matrix")
    assert block.count("arena train") == 7 and "--targets mcts:simulations=3,rollout=heuristic" in block
    out = run(block, tmp_path)
    for name in ("ann", "cnn", "mcts-ann", "mcts-cnn", "combined"):
        assert (tmp_path / f"santorini-{name}.pt").is_file()
    assert (tmp_path / "santorini-ann.png").stat().st_size > 10_000
    assert "santorini-combined.pt" in out and "santorini-rootstrap.json" in out
    rows = run("arena matrix --csv\n", tmp_path).strip().splitlines()
    assert len(rows) == 10 and rows[-1].startswith("random,")  # the header and the nine agents of the report's table


def test_the_onitama_designs_block_runs_as_written(tmp_path):
    block = scaled('designs="actions_only', "\narena stats")
    out = run(block, tmp_path)
    designs = sorted(path.stem.removeprefix("onitama-") for path in tmp_path.glob("onitama-*.pt"))
    assert designs == sorted(["actions_only", "val_after_actions", "actions_after_val", "val_branch_actions",
                              "val_after_actions_multiply", "actions_after_val_multiply", "val_branch_actions_multiply",
                              "dual"])  # fmt: skip
    assert len(list(tmp_path.glob("onitama-*.png"))) == 9  # a training curve per design, and the Elo history
    assert "onitama-dual.pt" in out and "random" in out
