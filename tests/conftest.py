"""Shared fixtures: real SQLite files, a real PostgreSQL (tests/pg.py), the real CLI through click's runner, the test plugins."""

from __future__ import annotations

import json
import multiprocessing.util
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings
from sqlalchemy import Engine, create_engine
from sqlalchemy.pool import NullPool

from arena.cli import cli

pytest_plugins = ["tests.pg"]

# No per-example deadline: a loaded 2-core machine runs an example of a property test in more than Hypothesis's 200 ms
# now and then (the tests that time things bound them themselves).
settings.register_profile("arena", deadline=None)
settings.load_profile("arena")

FIXTURES = Path(__file__).parent / "fixtures"
_TMPDIR = "ARENA_TESTS_TMPDIR"


def pytest_configure(config: pytest.Config) -> None:
    """One short temporary folder for the whole run, the workers and every process they start (TMPDIR): what a killed
    process leaves behind (multiprocessing's pymp-*, a browser profile, a Ray staging folder) goes when the run ends."""
    if os.environ.get("PYTEST_XDIST_WORKER") or _TMPDIR in os.environ:
        return  # a worker, or a run inside a run: the folder is the controller's
    multiprocessing.util.get_temp_dir()  # this process's own, made where it was: removed at its exit, after the folder
    # Where pgserver keeps its lock files (platformdirs' runtime folder, else TMPDIR/runtime-UID): outside the folder,
    # which workers that end after this process would otherwise make again after it is removed.
    os.environ.setdefault("XDG_RUNTIME_DIR", os.path.join(tempfile.gettempdir(), f"runtime-{os.geteuid()}"))
    os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="arena-tests-")
    os.environ[_TMPDIR] = os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def pytest_unconfigure(config: pytest.Config) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("TMPDIR") == os.environ.get(_TMPDIR):
        shutil.rmtree(os.environ.pop(_TMPDIR), ignore_errors=True)
TEST_PLUGINS = FIXTURES / "plugins"


def loose_plugin(folder: Path, name: str, source: str) -> Path:
    """A loose-file plugins folder (made if need be) holding `name`.py with `source`; returns the folder."""
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    return folder


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "arena.db"


class Arena:
    """Runs `arena` commands in-process against one database: a SQLite file (a path) or a URL."""

    def __init__(self, db: Path | str, plugins_dirs: tuple[Path, ...] = (TEST_PLUGINS,)) -> None:
        self.url = db if isinstance(db, str) else f"sqlite:///{db}"
        # A SQLite file is never created by looking at it (rows() of a missing file are []).
        self.db_path = db if isinstance(db, Path) else (Path(db[len("sqlite:///"):]) if db.startswith("sqlite:///") else None)
        self.plugins_dirs = plugins_dirs
        self.runner = CliRunner()
        self._engine: Engine | None = None

    def __call__(self, *args: str, ok: bool = True) -> Result:
        argv = ["--db", self.url]
        for d in self.plugins_dirs:
            argv += ["--plugins-dir", str(d)]
        result = self.runner.invoke(cli, argv + list(args), catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, f"arena {' '.join(args)} failed ({result.exit_code}):\n{result.stdout}\n{result.stderr}"
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "--json").stdout)

    def rows(self, sql: str) -> list[tuple]:
        """Rows of a query in plain SQL (the same on SQLite and PostgreSQL); [] before the schema exists."""
        return self._run(sql, fetch=True)

    def execute(self, sql: str) -> None:
        self._run(sql, fetch=False)

    def _run(self, sql: str, fetch: bool) -> list[tuple]:
        if self.db_path is not None and not self.db_path.exists():
            return []
        if self.db_path is not None:
            with sqlite3.connect(self.db_path, timeout=30) as connection:
                try:
                    rows = connection.execute(sql).fetchall()
                    return rows if fetch else []
                except sqlite3.OperationalError as exc:
                    if "no such table" in str(exc):  # before the schema is made
                        return []
                    raise
        if self._engine is None:  # one engine (no pool: nothing held between queries), made once: polls must be quick
            self._engine = create_engine(self.url.replace("postgresql://", "postgresql+psycopg://", 1), poolclass=NullPool)
        try:
            with self._engine.begin() as connection:
                cursor = connection.connection.cursor()  # the driver's own: no parameter parsing ('%' stays '%')
                cursor.execute(sql)
                return [tuple(row) for row in cursor.fetchall()] if fetch else []  # (fetched only when asked)
        except Exception as exc:  # the driver's own error (a raw cursor)
            if "does not exist" in str(exc):  # before the schema is made
                return []
            raise


@pytest.fixture
def arena_cli(db_path: Path) -> Arena:
    return Arena(db_path)


@pytest.fixture
def arena_db(database_url: str) -> Arena:
    """The CLI on a SQLite file and, as a second run of the test, on a PostgreSQL database."""
    return Arena(database_url)
