"""Shared fixtures: real SQLite files, the real CLI through click's runner, the test plugins."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import cli

FIXTURES = Path(__file__).parent / "fixtures"
TEST_PLUGINS = FIXTURES / "plugins"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "arena.db"


class Arena:
    """Runs `arena` commands in-process against one database file."""

    def __init__(self, db_path: Path, plugins_dirs: tuple[Path, ...] = (TEST_PLUGINS,)) -> None:
        self.db_path = db_path
        self.plugins_dirs = plugins_dirs
        self.runner = CliRunner()

    def __call__(self, *args: str, ok: bool = True) -> Result:
        argv = ["--db", f"sqlite:///{self.db_path}"]
        for d in self.plugins_dirs:
            argv += ["--plugins-dir", str(d)]
        result = self.runner.invoke(cli, argv + list(args), catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, f"arena {' '.join(args)} failed ({result.exit_code}):\n{result.stdout}\n{result.stderr}"
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "--json").stdout)

    def rows(self, sql: str) -> list[tuple]:
        if not self.db_path.exists():
            return []
        with sqlite3.connect(self.db_path) as connection:
            return connection.execute(sql).fetchall()


@pytest.fixture
def arena_cli(db_path: Path) -> Arena:
    return Arena(db_path)
