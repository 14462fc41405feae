"""The tree stays as clean as STYLE asks: `ruff check .` and `mypy` (its files and options in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-m", "ruff", "check", "--no-cache", "."], [sys.executable, "-m", "mypy", "--cache-dir", "/dev/null"]],
    ids=["ruff", "mypy"],
)
def test_the_tree_is_lint_clean(command: list[str]) -> None:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
