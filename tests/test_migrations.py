"""Alembic migrations: a database made by an older version upgrades on first use and keeps its data."""

import sqlite3

from alembic import command

from db.session import HEAD_REVISION, alembic_config, current_revision, open_database


def test_old_database_upgrades_on_first_use(tmp_path, arena_cli):
    url = f"sqlite:///{arena_cli.db_path}"
    old = open_database(url, migrate=False)
    config = alembic_config()
    with old.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    assert current_revision(old) == "0001"
    with sqlite3.connect(arena_cli.db_path) as c:
        c.execute("insert into agents (name, type, params, created_at) values ('kept', 'random', '{}', '2026-01-01')")
    arena_cli("run-tournament", "--game", "incan_gold", "--agents", "random,greedy,kept", "--rounds", "3", "--quiet")
    assert current_revision(open_database(url)) == HEAD_REVISION
    assert arena_cli.json("agents", "show", "kept")["type"] == "random"
    assert {m["reason"] for m in arena_cli.json("matches")} <= {"normal", "turn_limit"}
    assert arena_cli.rows("select count(*) from matches where rounds between 1 and 5") == [(3,)]
