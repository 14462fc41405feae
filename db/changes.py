"""A cheap signal that a database's data may have changed, from any process: what a server's answer cache checks.

`DataVersion(database).current()` returns a value that differs from every earlier one once anything was committed
to the database since, by this process or any other:

- SQLite: `PRAGMA data_version` on a connection of its own that never writes (SQLite changes it whenever another
  connection, in any process, commits to the file); an in-memory database has no other process, so there the
  signal is this process's commits alone;
- PostgreSQL: the current transaction snapshot (`txid_current_snapshot()`): two equal snapshots see exactly the
  same committed transactions, so a commit anywhere changes it (a conservative signal: it moves for commits to
  other databases of the server too).

The database is asked at most once every `interval` seconds: a commit by another process shows within that
long. A commit through this process's own engine shows at once: the connection that committed bumps a counter
when it goes back to the pool, which is after its commit.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import threading
import time
import weakref
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from db.session import Database, _sqlite_file

#: Seconds between two looks at the database: the longest a commit by another process stays unseen.
DEFAULT_INTERVAL = 0.005


class DataVersion:
    """Equal values from `current()` mean nothing was committed in between (give or take `interval` for other processes)."""

    def __init__(self, database: Database, interval: float = DEFAULT_INTERVAL) -> None:
        self.interval = interval
        self._database = database
        self._lock = threading.Lock()
        self._commits = _commits_of(database.engine)
        self._remote: Any = None
        self._checked = float("-inf")
        self._fresh = itertools.count()  # a value never seen before, when the database cannot be asked
        self._connection: sqlite3.Connection | Connection | None = None
        self._sqlite = database.dialect == "sqlite"
        self._path = _sqlite_file(database.url) if self._sqlite else None

    def current(self) -> tuple[int, Any]:
        now = time.monotonic()
        with self._lock:
            if now - self._checked >= self.interval:
                self._remote = self._ask()
                self._checked = time.monotonic()
            return self._commits.count, self._remote

    def close(self) -> None:
        """Close the connection it asks on (a later `current()` opens another)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _ask(self) -> Any:
        if self._sqlite and self._path is None:
            return None  # in memory: no other process can write to it
        try:
            if self._connection is None:
                self._connection = self._connect()
            if isinstance(self._connection, sqlite3.Connection):
                return self._connection.execute("PRAGMA data_version").fetchone()[0]
            return self._connection.execute(text("SELECT txid_current_snapshot()::text")).scalar()
        except (sqlite3.Error, SQLAlchemyError):  # the server went away: answer something new (nothing cached stays
            if self._connection is not None:         # valid) and connect again next time
                with contextlib.suppress(sqlite3.Error, SQLAlchemyError):
                    self._connection.close()
            self._connection = None
            return ("unknown", next(self._fresh))

    def _connect(self) -> sqlite3.Connection | Connection:
        if self._path is not None:
            return sqlite3.connect(str(self._path), check_same_thread=False, isolation_level=None)
        return self._database.engine.connect().execution_options(isolation_level="AUTOCOMMIT")


_COMMITTED = "arena_committed"


class _Commits:
    """This process's commits through one engine, counted when their connection goes back to the pool (after the commit)."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0
        self._lock = threading.Lock()
        event.listen(engine, "commit", self._committing)
        event.listen(engine.pool, "checkin", self._returned)

    @staticmethod
    def _committing(connection: Connection) -> None:
        connection.connection.info[_COMMITTED] = True  # remembered on the pooled connection until its checkin

    def _returned(self, _dbapi_connection: Any, record: Any) -> None:
        if record is not None and record.info.pop(_COMMITTED, False):
            with self._lock:
                self.count += 1


_engines: weakref.WeakKeyDictionary[Engine, _Commits] = weakref.WeakKeyDictionary()
_engines_lock = threading.Lock()


def _commits_of(engine: Engine) -> _Commits:
    with _engines_lock:
        commits = _engines.get(engine)
        if commits is None:
            commits = _engines[engine] = _Commits(engine)
        return commits
