"""Alembic migrations: a database made by an older version upgrades on first use and keeps its data."""

import sqlite3

from alembic import command

from db.session import HEAD_REVISION, StorageError, alembic_config, current_revision, open_database


def database_at(path, revision):
    """A database (a SQLite file, or a URL) with the schema of an older version."""
    with open_database(path if isinstance(path, str) else f"sqlite:///{path}", migrate=False) as old:
        config = alembic_config()
        with old.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
        assert current_revision(old) == revision


def test_old_database_upgrades_on_first_use(arena_db):
    """Every migration, from the first, on SQLite and on PostgreSQL."""
    arena_cli, url = arena_db, arena_db.url
    database_at(url, "0001")
    arena_cli.execute("""insert into agents (name, type, params, created_at) values ('kept', 'random', '{"seed": "4"}', '2026-01-01')""")
    arena_cli("run-tournament", "--game", "incan_gold", "--agents", "random,greedy,kept", "--rounds", "3", "--quiet")
    with open_database(url) as upgraded:
        assert current_revision(upgraded) == HEAD_REVISION
    assert arena_cli.json("agents", "show", "kept")["type"] == "random"
    assert {m["reason"] for m in arena_cli.json("matches")} <= {"normal", "turn_limit"}
    assert arena_cli.rows("select count(*) from matches where rounds between 1 and 5") == [(3,)]


def test_tournament_interrupted_before_0005_resumes_after_the_upgrade(tmp_path, arena_cli):
    """0005 moved the schedule into the tournament row: a half-played tournament stored the old way
    (a row per scheduled match, pending ones included) finishes with the results of an uninterrupted run."""
    from tests.conftest import Arena

    def insert(connection, table, row):
        known = {info[1] for info in connection.execute(f"pragma table_info({table})")}
        row = {name: value for name, value in row.items() if name in known}  # columns of later migrations go
        names = ", ".join(f'"{name}"' for name in row)
        connection.execute(f"insert into {table} ({names}) values ({', '.join('?' * len(row))})", list(row.values()))

    arena_cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy,random:seed=7", "--rounds", "3",
              "--seed", "5", "--name", "whole", "--quiet")  # fmt: skip
    columns = {table: [row[1] for row in arena_cli.rows(f"pragma table_info({table})")] for table in ("tournaments", "matches", "match_seats")}

    old_path = tmp_path / "old.db"
    database_at(old_path, "0004")
    with sqlite3.connect(arena_cli.db_path) as new, sqlite3.connect(old_path) as c:
        tournament = dict(zip(columns["tournaments"], new.execute("select * from tournaments").fetchone()))
        old_columns = {row[1] for row in c.execute("pragma table_info(tournaments)")}
        for dropped in set(tournament) - old_columns:  # schedule, scheduled, and whatever later versions added
            del tournament[dropped]
        insert(c, "tournaments", tournament)
        played = 4  # of 9: the rest was pending when the process died
        for row in new.execute('select * from matches order by "index"'):
            match = dict(zip(columns["matches"], row))
            if match["index"] >= played:  # a pending row kept only the schedule
                for result in ("turns", "reason", "detail", "moves", "legal_counts", "duration", "finished_at", "rounds", "first_player"):
                    match[result] = None
                match["status"] = "pending"
            insert(c, "matches", match)
            for seat_row in new.execute("select * from match_seats where match_id = ? order by seat", (match["id"],)):
                seat = dict(zip(columns["match_seats"], seat_row))
                seat.pop("network_time", None)  # added in 0006
                if match["index"] >= played:
                    for result in ("score", "outcome", "rank", "think_time", "moves"):
                        seat[result] = None
                insert(c, "match_seats", seat)

    resumed = Arena(old_path)
    assert resumed.json("tournaments")[0]["done"] == played  # the upgrade ran: pending rows are gone
    assert current_revision(open_database(f"sqlite:///{old_path}")) == HEAD_REVISION
    assert resumed.json("tournaments")[0]["matches"] == 9
    resumed("run-tournament", "--resume", "whole", "--quiet")
    query = ('select m."index", m.seed, m.moves, s.seat, s.agent, s.agent_params, s.outcome from matches m '
             'join match_seats s on s.match_id = m.id order by m."index", s.seat')  # fmt: skip
    assert resumed.rows(query) == arena_cli.rows(query)
    assert len(resumed.rows(query)) == 18


def test_a_failing_upgrade_leaves_the_database_as_it_was(tmp_path):
    """SQLite DDL is transactional, but only inside an explicit transaction: a migration that fails
    half-way must not leave columns added and the revision unchanged."""
    path = tmp_path / "old.db"
    database_at(path, "0004")
    with sqlite3.connect(path) as c:  # settings that are not JSON: 0005 fails after adding its columns
        c.execute("insert into tournaments (game_id, game_version, game_params, format, rounds, seed, max_turns, players, "
                  "settings, status, created_at) values ('connect_four', '1', '', 'round-robin', 1, 0, 200, 2, '{', 'done', '2026-01-01')")  # fmt: skip
    try:
        open_database(f"sqlite:///{path}")
        raise AssertionError("the upgrade should have failed")
    except StorageError:
        pass
    assert current_revision(open_database(f"sqlite:///{path}", migrate=False)) == "0004"
    with sqlite3.connect(path) as c:
        assert "schedule" not in [row[1] for row in c.execute("pragma table_info(tournaments)")]


def test_another_programs_database_is_refused_and_left_as_it_was(arena_db):
    """A database with tables but no Arena schema: every command (reads too) refuses it, and adds nothing to it."""
    if arena_db.db_path is not None:
        with sqlite3.connect(arena_db.db_path) as made:  # (arena_db.execute runs nothing on a file not made yet)
            made.execute("create table users (id integer)")
    else:
        arena_db.execute("create table users (id integer)")
    journal = arena_db.rows("pragma journal_mode") if arena_db.url.startswith("sqlite") else None
    for argv in (["leaderboard"], ["tournaments"], ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy"]):
        refused = arena_db(*argv, ok=False)
        assert refused.exit_code == 2 and "holds another program's tables (users) and no Arena schema" in refused.stderr
    tables = "select name from sqlite_master where type = 'table'" if journal is not None else \
        "select table_name from information_schema.tables where table_schema = current_schema()"  # fmt: skip
    assert arena_db.rows(tables) == [("users",)]
    if journal is not None:
        assert arena_db.rows("pragma journal_mode") == journal  # not switched to WAL
    checked = arena_db("db", "check").stdout  # looking is fine, and says what it found
    assert "another program's tables (users) and no Arena schema" in checked and arena_db.json("db", "check")["foreign_tables"] == ["users"]


def test_a_released_tournament_is_not_held_any_more(arena_db):
    """db.queue.held_by names only live claims: a tournament a worker released (a ladder that gave way) keeps its
    claimed_by, but is not the one a worker that dies afterwards is blamed for (arena.server.runner)."""
    from db import queue

    arena_db("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--queue")
    with open_database(arena_db.url) as database:
        claimed = queue.claim(database, "w/0", 30.0)
        assert claimed is not None and queue.held_by(database, "w/0") == [claimed]
        queue.release(database, claimed, "w/0")
        assert queue.held_by(database, "w/0") == []


def test_rows_from_before_0012_have_no_owner(arena_db):
    """0012 keeps who submitted a tournament or registered a named agent over HTTP: rows from before have none (as rows
    made with the CLI), so over HTTP nobody cancels or removes them. Its downgrade drops the column and keeps every row
    (no copy of the table, whose drop would delete a tournament's matches)."""
    url = arena_db.url
    database_at(url, "0011")
    arena_db.execute("""insert into agents (name, type, params, created_at) values ('kept', 'random', '{}', '2026-01-01')""")
    assert arena_db.json("agents", "show", "kept")["owner"] is None  # upgraded on first use
    arena_db("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "2", "--quiet")
    arena_db.execute("update tournaments set owner = 'alice'")  # as if submitted over HTTP
    with open_database(url, migrate=False) as database:
        config = alembic_config()
        with database.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0011")
        assert current_revision(database) == "0011"
    assert arena_db.rows("select count(*) from matches") == [(2,)]
    assert [tournament["owner"] for tournament in arena_db.json("tournaments")] == [None]  # upgraded again: the owner was dropped
    assert arena_db.rows("select count(*) from matches") == [(2,)] and arena_db.json("agents", "show", "kept")["owner"] is None
