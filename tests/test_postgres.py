"""PostgreSQL as a first-class database: URLs, `arena db check`, and every failure as one line, exit 2."""

import socket
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text as text_sql
from sqlalchemy.engine import make_url

from arena.cli import cli
from db.session import HEAD_REVISION, display_url, open_database, resolve_url
from tests.conftest import Arena


def _run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _one_line_error(result, fragment: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_urls_are_normalised_to_psycopg_3():
    assert resolve_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert resolve_url("postgres://u:pw@h:5433/db") == "postgresql+psycopg://u:pw@h:5433/db"
    assert resolve_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert resolve_url("results.db") == "sqlite:///results.db"
    assert display_url("postgresql+psycopg://u:secret@h/db") == "postgresql+psycopg://u:***@h/db"
    shown = display_url("postgresql:///arena?host=/tmp/pg&user=arena&password=secret")  # libpq's own way to give it
    assert "secret" not in shown and "password=***" in shown


def test_db_check_names_the_database_and_its_revision(database_url):
    url = make_url(database_url)
    if url.get_backend_name() == "postgresql":  # a password in the URL (the test server trusts anyone) is never shown
        database_url = url.set(password="secret", drivername="postgresql").render_as_string(hide_password=False)
    empty = _run("--db", database_url, "db", "check")
    assert empty.exit_code == 0, empty.stderr
    assert "revision -" in empty.stdout and "secret" not in empty.stdout
    if url.get_backend_name() == "sqlite":  # looking creates no file
        assert "no file yet" in empty.stdout and not Path(url.database).exists()
    else:
        assert "empty" in empty.stdout
    Arena(database_url)("db", "upgrade")
    checked = Arena(database_url).json("db", "check")
    assert checked["revision"] == checked["head"] == HEAD_REVISION and checked["current"] is True
    assert "secret" not in checked["url"]
    expected = "PostgreSQL" if url.get_backend_name() == "postgresql" else "SQLite"
    assert checked["server"].startswith(expected) and checked["dialect"] == url.get_backend_name()
    text = _run("--db", database_url, "db", "check").stdout
    assert f"revision {HEAD_REVISION}, the newest" in text and "secret" not in text
    with open_database(database_url) as database, database.engine.begin() as connection:  # a revision no migration knows
        connection.execute(text_sql("update alembic_version set version_num = '9999'"))
    unknown = _run("--db", database_url, "db", "check")
    assert unknown.exit_code == 0 and "revision 9999, unknown to this Arena" in unknown.stdout, unknown.stdout
    assert Arena(database_url).json("db", "check")["known"] is False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unusable_postgresql_urls_are_one_line_exit_2(postgres_url):
    server = make_url(postgres_url)
    cases = [
        ("postgresql://arena@127.0.0.1:notaport/arena", "cannot parse database URL"),
        (f"postgresql://arena:pw@127.0.0.1:{_free_port()}/arena", "cannot open database postgresql+psycopg://arena:***@127.0.0.1"),
        (server.set(username="nobody").render_as_string(hide_password=False), 'role "nobody" does not exist'),
        (server.set(database="no_such_db").render_as_string(hide_password=False), 'database "no_such_db" does not exist'),
        ("postgresql+psycopg2://arena@127.0.0.1/arena", "no driver psycopg2"),
        ("mysql://arena@127.0.0.1/arena", "unsupported database 'mysql'"),
    ]
    for url, fragment in cases:
        for command in (["leaderboard"], ["db", "check"], ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy"]):
            result = _run("--db", url, *command)
            _one_line_error(result, fragment)
            assert ":pw@" not in result.stderr


@pytest.mark.parametrize("dialect", ["postgresql"])
def test_every_command_on_postgresql(postgres_url, dialect, tmp_path):
    """The README's commands against a PostgreSQL URL given as postgresql:// (normalised to psycopg 3)."""
    arena = Arena(postgres_url.replace("postgresql+psycopg://", "postgresql://", 1))
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,center", "--rounds", "2", "--seed", "3",
          "--name", "pg", "--quiet")  # fmt: skip
    assert len(arena.json("matches")) == 6
    assert arena.json("tournaments")[0]["done"] == 6
    assert {r["agent"] for r in arena.json("leaderboard")} == {"random", "greedy", "center"}
    for command in (["matrix"], ["stats"], ["seats"], ["elo-history"], ["replay", "1"], ["games"], ["plugins"], ["db", "upgrade"]):
        arena(*command)
    arena("report", "--out", str(tmp_path / "report"))
    assert (tmp_path / "report" / "report.html").exists()
    arena("plot", "net-wins", "--out", str(tmp_path / "net-wins.png"))
    assert (tmp_path / "net-wins.png").stat().st_size > 0
    arena("agents", "register", "deep", "--type", "minimax", "--param", "depth=2")
    assert any(a["name"] == "deep" for a in arena.json("agents", "list")["named"])
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "deep,random", "--rounds", "2", "--name", "named", "--quiet")
    arena("run-tournament", "--resume", "named", "--quiet")  # nothing left to play
    named = {t["name"]: t for t in arena.json("tournaments")}["named"]
    assert (named["done"], named["status"]) == (2, "done") and arena.json("agents", "show", "deep")["type"] == "minimax"
    arena("agents", "remove", "deep")
    token = arena("tokens", "create", "someone").stdout.strip().splitlines()[-1]
    assert [t["name"] for t in arena.json("tokens", "list")] == ["someone"] and token not in arena("tokens", "list").stdout
    arena("tokens", "revoke", "someone")


def test_wrong_password_and_missing_driver_are_one_line_exit_2(password_url, monkeypatch):
    url = make_url(password_url)
    assert _run("--db", password_url, "db", "check").exit_code == 0  # the right password
    wrong = url.set(password="not-the-password").render_as_string(hide_password=False)
    for command in (["db", "check"], ["leaderboard"], ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy"]):
        result = _run("--db", wrong, *command)
        _one_line_error(result, f'password authentication failed for user "{url.username}"')
        assert "not-the-password" not in result.stderr
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    result = _run("--db", password_url, "db", "check")
    _one_line_error(result, "no driver psycopg (install it: pip install 'arena[postgres]')")
