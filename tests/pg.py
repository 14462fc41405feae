"""A real PostgreSQL for the tests (a pytest plugin, loaded by conftest).

`$ARENA_TEST_POSTGRES_URL` names a server to use; otherwise the session starts `pgserver` (a
PostgreSQL build in a wheel) in one data directory per run, shared by the xdist workers: pgserver
reference-counts the processes that use it (a list of pids beside the data, under a file lock), so
the first worker starts the server and the last one stops and deletes it. As root, pgserver runs
the server as a system user `pgserver` it creates (PostgreSQL refuses to run as root).

Every test gets a database of its own on that server: `database_url`, parametrised over sqlite and
postgresql, is what the storage tests take.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from db.session import Database

ENV = "ARENA_TEST_POSTGRES_URL"
#: The data directory of the pgserver this session started (None with $ARENA_TEST_POSTGRES_URL).
_PGDATA: Path | None = None
#: A role that must give its password (the pgserver trusts every other local connection).
PASSWORD_ROLE, PASSWORD = "arena_password", "right-password"


def _server_url() -> str:
    """A URL of the server's maintenance database (`postgres`), as postgresql+psycopg://."""
    given = os.environ.get(ENV)
    if given:
        return given
    import pgserver

    # Not under pytest's own temp root: pytest keeps that 0700, and a root user's server runs as another user.
    # xdist gives its workers one id per run: they find the same directory, hence the same server.
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        pgdata = Path(tempfile.gettempdir()) / f"arena-pg-{run}"
    else:
        pgdata = Path(tempfile.mkdtemp(prefix="arena-pg-")) / "data"
    server = pgserver.get_server(pgdata, cleanup_mode="delete")
    global _PGDATA
    _PGDATA = Path(server.pgdata)
    return server.get_uri()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stopped_servers() -> None:
    """Delete the data directories of test servers no process uses any more.

    pgserver's last user stops the server and deletes its directory, but the deletion can race the
    server's last writes, and a killed test run never gets that far: whatever is left is removed here
    (never a directory with a live user or a live server: other runs on this machine have theirs).
    """
    for path in Path(tempfile.gettempdir()).glob("arena-pg-*"):
        pgdata = path / "data" if (path / "data").is_dir() else path
        try:
            users = json.loads((pgdata / ".handle_pids.json").read_text() or "[]")
        except (OSError, ValueError):
            users = []
        postmaster = pgdata / "postmaster.pid"
        try:
            server = int(postmaster.read_text().split()[0]) if postmaster.exists() else None
        except (OSError, ValueError, IndexError):
            server = None
        if any(_alive(pid) for pid in users) or (server is not None and _alive(server)):
            continue
        if time.time() - path.stat().st_mtime < 5 and not users:  # just made by a starting run
            continue
        shutil.rmtree(path, ignore_errors=True)


def _as_psycopg(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"postgresql+psycopg://{rest}" if scheme in ("postgresql", "postgres") else url


@pytest.fixture(scope="session")
def postgres_server() -> str:
    return _as_psycopg(_server_url())


def _admin(server_url: str):  # type: ignore[no-untyped-def]
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url).set(drivername="postgresql")
    return psycopg.connect(url.render_as_string(hide_password=False), autocommit=True, connect_timeout=20)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database on the test server, dropped afterwards."""
    from sqlalchemy.engine import make_url

    name = f"arena_{uuid.uuid4().hex[:12]}"
    with _admin(postgres_server) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield make_url(postgres_server).set(database=name).render_as_string(hide_password=False)
    with _admin(postgres_server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def password_url(postgres_url: str) -> str:
    """A URL of the test database as a role whose password the server checks (scram-sha-256), with the right password.

    The session's pgserver trusts local connections: a pg_hba.conf line for this one role, put first,
    makes the server ask for its password (a server named by $ARENA_TEST_POSTGRES_URL is not edited)."""
    from sqlalchemy.engine import make_url

    if _PGDATA is None:
        pytest.skip("checks passwords on the session's own pgserver only (it edits its pg_hba.conf)")
    hba = _PGDATA / "pg_hba.conf"
    line = f"local all {PASSWORD_ROLE} scram-sha-256\n"
    with _admin(make_url(postgres_url).set(database="postgres").render_as_string(hide_password=False)) as admin:
        if not admin.execute("select 1 from pg_roles where rolname = %s", (PASSWORD_ROLE,)).fetchone():
            admin.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")  # (xdist: one test asks for it)
        if line not in hba.read_text():
            hba.write_text(line + hba.read_text())  # in place: the file keeps its owner
        admin.execute("select pg_reload_conf()")
    url = make_url(postgres_url).set(username=PASSWORD_ROLE, password=PASSWORD)
    wrong = url.set(password="wrong", drivername="postgresql").render_as_string(hide_password=False)
    deadline = time.monotonic() + 30
    while True:  # the server reloads its configuration on its own time
        try:
            import psycopg

            psycopg.connect(wrong, connect_timeout=10).close()
        except psycopg.OperationalError as exc:
            if "password authentication failed" in str(exc):
                break
        assert time.monotonic() < deadline, "the server does not ask for the password"
        time.sleep(0.1)
    return url.render_as_string(hide_password=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on a SQLite file and on a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """The storage layer opened on database_url (both backends), its connections closed after the test."""
    from db.session import open_database

    with open_database(database_url) as opened:
        yield opened


def pytest_report_header(config: pytest.Config) -> str:
    from db.session import display_url

    given = os.environ.get(ENV)
    return f"postgresql: {display_url(given) if given else 'pgserver, started by the session'}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller ends after its workers (or the only process)
        _remove_stopped_servers()
