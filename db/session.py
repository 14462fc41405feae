"""Opening a database: URL resolution, SQLite pragmas, and migrations run on first use.

SQLite files and PostgreSQL servers (through psycopg 3) are both first-class: `postgresql://` and
`postgres://` URLs are normalised to `postgresql+psycopg://`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

T = TypeVar("T")

DEFAULT_URL = "sqlite:///arena.db"
#: The newest migration in db/migrations/versions (a test checks it against Alembic's head), so that
#: opening a current database needs no Alembic import: commands start faster.
HEAD_REVISION = "0012"
MIGRATIONS = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS = 60_000
#: Seconds to wait for a PostgreSQL server to answer before saying it is down.
CONNECT_TIMEOUT = 10
#: The query options of a sqlite:/// URL that the driver reads itself; others are SQLite URI parameters (uri=true).
PYSQLITE_OPTIONS = {"timeout", "isolation_level", "detect_types", "check_same_thread", "cached_statements", "uri"}
#: SQLSTATEs of PostgreSQL transactions that may simply be tried again: serialization failure, deadlock.
RETRYABLE_SQLSTATES = ("40001", "40P01")


class StorageError(Exception):
    """The database cannot be opened, read or written; the message says which and why."""


def resolve_url(url: str | None = None) -> str:
    """`--db` beats `$ARENA_DB` beats ./arena.db; a bare file path means a SQLite file.

    `postgresql://` and `postgres://` mean PostgreSQL through psycopg 3 (`postgresql+psycopg://`).
    """
    text = url or os.environ.get("ARENA_DB") or DEFAULT_URL
    if "://" not in text:
        return f"sqlite:///{text}"
    scheme, rest = text.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return text


def display_url(url: str) -> str:
    """The URL as messages show it: without its password (given as user:password@, or as ?password=, libpq's way)."""
    try:
        parsed = make_url(url)
        if "password" in parsed.query:
            parsed = parsed.set(query={**parsed.query, "password": "***"})
        return parsed.render_as_string(hide_password=True).replace("password=%2A%2A%2A", "password=***")
    except (ArgumentError, ValueError):
        return url.split("://", 1)[0] + "://..." if "://" in url else url


def _parse(resolved: str) -> URL:
    try:
        parsed = make_url(resolved)
        parsed.port  # noqa: B018  (a port that is not a number fails here, not at connect time)
    except (ArgumentError, ValueError):
        raise StorageError(f"cannot parse database URL {display_url(resolved)!r}") from None
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise StorageError(f"unsupported database {backend!r} in {display_url(resolved)} (use sqlite:/// or postgresql://)")
    ignored = sorted(set(parsed.query) - PYSQLITE_OPTIONS) if backend == "sqlite" and "uri" not in parsed.query else []
    if ignored:  # the driver would ignore them with a warning (mode=ro, and then write all the same)
        raise StorageError(f"SQLite URL option(s) {', '.join(ignored)} in {display_url(resolved)} are read only as a SQLite "
                           f"URI: write sqlite:///file:PATH?{'&'.join(f'{k}=...' for k in ignored)}&uri=true")  # fmt: skip
    return parsed


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    # WAL lets readers and several writing processes share the file; busy_timeout makes writers wait, not fail.
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    if _foreign_tables(cursor):  # another program's file: leave its journal mode alone (upgrade refuses it)
        cursor.close()
        return
    if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "memory":
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_interrupted(context: ExceptionContext) -> None:
    """Ctrl-C (or SystemExit) inside a SQLite statement, between the rows of an executemany say: the statement is
    reset and its transaction rolled back, as after any error. SQLAlchemy would treat the connection as lost (right for
    a network driver, whose protocol state is then unknown) and close it with the statement still open, which leaves
    SQLite's write lock held for as long as the traceback lives: the run's last writes on its way out (the matches
    played, the tournament `stopped`) then found the database locked."""
    if not isinstance(context.original_exception, Exception):
        context.is_disconnect = False


def _foreign_tables(cursor: Any) -> list[str]:
    """The tables of a SQLite file that has tables but no Arena schema (no alembic_version): another program's."""
    names = [row[0] for row in cursor.execute("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")]
    return [] if "alembic_version" in names else sorted(names)


def alembic_config() -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


@dataclass
class Database:
    url: str
    engine: Engine
    sessions: sessionmaker[Session]

    def session(self) -> Session:
        return self.sessions()

    def close(self) -> None:
        """Close the pool's connections (a command run in-process, as in tests, leaves none open behind it)."""
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def display(self) -> str:
        """The URL without its password, for messages."""
        return display_url(self.url)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name


def database_exists(url: str | None = None) -> bool:
    """False only for a SQLite file that does not exist yet (a server database is assumed to exist)."""
    try:
        path = _sqlite_file(resolve_url(url))
        return path is None or path.exists()
    except (ArgumentError, ValueError, OSError):
        return True  # open_database reports the bad URL or path


def open_database(url: str | None = None, migrate: bool = True, create: bool = True) -> Database:
    """Open (and create or upgrade, on first use) the database at `url`.

    With `create=False` (commands that only read) a SQLite file that does not exist is not created: the
    answer is that of an empty database (an in-memory one)."""
    resolved = resolve_url(url)
    shown = display_url(resolved)
    parsed = _parse(resolved)
    is_sqlite = parsed.get_backend_name() == "sqlite"
    path = _sqlite_file(resolved)
    if path is not None:
        try:
            parent, exists = path.resolve().parent, path.exists()
        except OSError as exc:  # a name too long for the file system, say
            raise StorageError(f"cannot open database {shown}: {exc.strerror or exc}") from None
        if not parent.is_dir():
            raise StorageError(f"cannot open database {shown}: directory {parent} does not exist")
        if not create and not exists:  # nothing stored there yet: read an empty database, create no file
            return open_database("sqlite://", migrate)
    connect_args: dict[str, Any] = {"timeout": BUSY_TIMEOUT_MS / 1000} if is_sqlite else {"connect_timeout": CONNECT_TIMEOUT}
    try:
        engine = create_engine(resolved, connect_args=connect_args)
    except ImportError as exc:
        if exc.name == "psycopg":
            hint = " (install it: pip install 'arena[postgres]')"
        elif not is_sqlite:
            hint = " (Arena talks to PostgreSQL through psycopg 3: write postgresql://...)"
        else:
            hint = ""
        raise StorageError(f"cannot open database {shown}: no driver {exc.name or exc}{hint}") from None
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open database {shown}: {_short(exc)}") from None
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "handle_error", _sqlite_interrupted)
    database = Database(resolved, engine, sessionmaker(engine, expire_on_commit=False))
    if migrate:
        try:
            upgrade(database)
        except StorageError:
            database.close()
            raise
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot open database {shown}: {_short(exc)}") from None
        except Exception as exc:  # a migration step failed on the data it found; the upgrade was rolled back
            raise StorageError(f"cannot upgrade database {shown}: {type(exc).__name__}: {exc}") from None
    return database


def _short(exc: SQLAlchemyError) -> str:
    """The first meaningful line of a driver's error (psycopg puts "connection failed:" before the reason)."""
    orig = getattr(exc, "orig", None)
    lines = [line.strip() for line in str(orig if orig is not None else exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    return "; ".join(lines[:2]) if lines[0].endswith(":") else lines[0]


def head_revision() -> str | None:
    """Alembic's head, read from the migration scripts."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(database: Database) -> str | None:
    with database.engine.connect() as connection:
        return _revision_on(connection)


def server_version(database: Database) -> str:
    """What the database says it is, e.g. "SQLite 3.45.1" or "PostgreSQL 16.4"."""
    with database.engine.connect() as connection:
        if database.dialect == "sqlite":
            return "SQLite " + str(connection.exec_driver_sql("select sqlite_version()").scalar())
        version = str(connection.exec_driver_sql("show server_version").scalar())
        return f"PostgreSQL {version.split()[0]}"


def database_status(database: Database) -> dict[str, Any]:
    """Which database this is and where its schema stands: what `arena db check` prints."""
    try:
        server = server_version(database)
        revision = current_revision(database)
        with database.engine.connect() as connection:
            foreign = sorted(inspect(connection).get_table_names()) if revision is None else []
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open database {database.display}: {_short(exc)}") from None
    known = revision is None or revision in known_revisions()
    return {"url": database.display, "dialect": database.dialect, "server": server, "revision": revision,
            "head": HEAD_REVISION, "current": revision == HEAD_REVISION, "known": known,
            "foreign_tables": foreign}  # fmt: skip


def known_revisions() -> set[str]:
    """Every schema revision this Arena's migrations know."""
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def upgrade(database: Database) -> None:
    """Bring the schema to the newest migration; cheap when it already is.

    Several processes may open a new database at once. The database itself serialises them: the
    upgrade runs in one write transaction taken before anything is read (SQLite `BEGIN EXCLUSIVE`,
    a transaction-scoped advisory lock on PostgreSQL), and Alembic reads the revision inside it, so
    the first process migrates and the others, once they get the lock, find the schema current.
    Nothing here opens the SQLite file outside SQLite: closing any descriptor of a file drops every
    POSIX lock the process holds on it, SQLite's own included (a WAL database then loses commits).
    """
    if current_revision(database) == HEAD_REVISION:
        return
    from alembic import command

    config = alembic_config()
    with database.engine.connect() as connection:
        dialect = database.engine.dialect.name
        sqlite = dialect == "sqlite"
        if sqlite:
            # pysqlite begins transactions only before DML, so Alembic's DDL would be committed step
            # by step and a failing migration would leave the schema half-upgraded: one explicit
            # transaction makes the whole upgrade all or nothing, and EXCLUSIVE makes it the only writer.
            driver = connection.connection.driver_connection
            previous = driver.isolation_level  # type: ignore[union-attr]
            driver.isolation_level = None  # type: ignore[union-attr]
            retrying(lambda: connection.exec_driver_sql("BEGIN EXCLUSIVE"))
        elif dialect == "postgresql":
            connection.execute(text("select pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        try:
            if _revision_on(connection) is None:
                _refuse_foreign(database, connection)
            if _revision_on(connection) != HEAD_REVISION:
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
            connection.commit()
        finally:
            if sqlite:
                connection.rollback()  # after a failure; nothing left to undo after the commit
                driver.isolation_level = previous  # type: ignore[union-attr]


def _refuse_foreign(database: Database, connection: Any) -> None:
    """A database with tables but no Arena schema belongs to another program: Arena adds none of its tables to it."""
    names = sorted(inspect(connection).get_table_names())
    if names:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise StorageError(f"database {database.display} holds another program's tables ({shown}) and no Arena schema: "
                           f"give Arena a database of its own")  # fmt: skip


#: Key of the PostgreSQL advisory lock that serialises first migrations ("arena" in ASCII).
MIGRATION_LOCK_KEY = 0x6172656E61


def _revision_on(connection: Any) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("select version_num from alembic_version")).scalar()


def _sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = parsed.database.removeprefix("file:") if parsed.query.get("uri") else parsed.database
    return Path(path).expanduser()


#: Key of the PostgreSQL advisory lock that serialises the writes which give agents their labels (tournament creation,
#: ladder joins: arena.tournament.stored_labels), "labels" in ASCII.
LABELS_LOCK_KEY = 0x6C6162656C73


@contextmanager
def serialised_write(database: Database, advisory: int | None = None) -> Iterator[Connection]:
    """A connection in one write transaction that is serialised with every other such transaction: on SQLite it begins
    with BEGIN IMMEDIATE (the writers' lock at once), on PostgreSQL the caller locks its row (SELECT ... FOR UPDATE), or
    gives the key of a transaction-scoped advisory lock (`advisory`) taken first, for writes that have no row to lock.
    Commit inside; anything left uncommitted, or an exception, rolls back."""
    with database.engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        elif advisory is not None:
            connection.execute(text("select pg_advisory_xact_lock(:key)"), {"key": advisory})
        try:
            yield connection
        finally:
            connection.rollback()  # after a commit there is nothing left to undo


def retrying(operation: Callable[[], T], attempts: int = 8) -> T:
    """Run a write, trying again while SQLite says another process holds the lock (beyond busy_timeout),
    or PostgreSQL chose this transaction as a deadlock's or a serialization conflict's victim."""
    for attempt in range(attempts):
        try:
            return operation()
        except DBAPIError as exc:
            if attempt == attempts - 1 or not _retryable(exc):
                raise
            if "locked" in str(exc).lower():  # a whole busy timeout went by: say why nothing seems to happen
                logging.getLogger("arena.db").warning(
                    "the database is locked by another process (waited %.0f s); still trying (%d of %d)",
                    BUSY_TIMEOUT_MS / 1000 * (attempt + 1), attempt + 2, attempts)  # fmt: skip
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _retryable(exc: DBAPIError) -> bool:
    if getattr(exc.orig, "sqlstate", None) in RETRYABLE_SQLSTATES:
        return True
    message = str(exc.orig).lower()  # the driver's words only: str(exc) holds the SQL too ("... SKIP LOCKED")
    return isinstance(exc, OperationalError) and ("locked" in message or "busy" in message)
