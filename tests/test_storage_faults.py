"""Probes of storage faults: a new SQLite file opened by several writers while readers poll it."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parent.parent


def limit_child() -> None:
    """preexec_fn of the probes' child processes: bounded memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, resource.RLIM_INFINITY))


WRITER = """
import os, sys
from sqlalchemy import text
from db.session import open_database
database = open_database(sys.argv[1])
def add(name):
    with database.engine.connect() as c:
        c.execute(text("insert into agents (name, type, params, created_at) values (:n, 'random', '{}', '2020-01-01')"), {"n": name})
        c.commit()
add("first")
print("ready", flush=True)
sys.stdin.readline()
add("second")
print("written", flush=True)
os._exit(0)
"""


def test_a_process_that_created_the_file_keeps_its_sqlite_locks(tmp_path):
    """The root of the loss: after creating (and migrating) a new file, the writer must still hold SQLite's
    shared lock on it, or another process closing its last connection checkpoints and deletes the WAL under
    the writer, whose next commits go to a deleted file."""
    db = tmp_path / "new.db"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, f"sqlite:///{db}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, cwd=ROOT, preexec_fn=limit_child)  # fmt: skip
    try:
        assert writer.stdout.readline().strip() == "ready"
        inode = os.stat(db).st_ino
        with open("/proc/locks") as locks:
            held = [line for line in locks if f":{inode} " in line and f" {writer.pid} " in line]
        assert held, "the writer holds no POSIX lock on the database file it created"
        reader = sqlite3.connect(db)  # another process opens and closes the file: the last connection outside the writer
        assert reader.execute("select count(*) from agents").fetchone() == (1,)
        reader.close()
        writer.stdin.write("\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "written"
    finally:
        writer.kill()
        writer.wait()
    with sqlite3.connect(db) as c:
        assert sorted(c.execute("select name from agents")) == [("first",), ("second",)]


def test_new_file_with_writers_and_readers_keeps_every_match(tmp_path):
    """The probe of issue 11, repeated: writers start on a file that does not exist yet while readers poll
    `arena tournaments --json`; every match a writer reports is stored, and no reader fails."""
    rounds, writers, runs = 8, 3, 2  # tic-tac-toe, 3 agents: 3 matches a round
    for run in range(runs):
        db = tmp_path / f"new{run}.db"
        env = dict(os.environ, ARENA_DB=str(db), ARENA_FLUSH_SECONDS="0")  # a commit per match
        procs = [subprocess.Popen([ARENA, "run-tournament", "--game", "tic_tac_toe", "--agents", "random,random:seed=1,greedy",
                                   "--rounds", str(rounds), "--seed", str(i), "--name", f"w{i}", "--quiet"], env=env,
                                  cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  preexec_fn=limit_child) for i in range(writers)]  # fmt: skip
        failures: list[str] = []
        readers: list[subprocess.Popen] = []
        deadline = time.monotonic() + 180
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:  # two readers at a time, all along
            for reader in [r for r in readers if r.poll() is not None]:
                readers.remove(reader)
                if reader.returncode != 0:
                    failures.append(reader.stderr.read())
                reader.stderr.close()
            while len(readers) < 2:
                readers.append(subprocess.Popen([ARENA, "tournaments", "--json"], env=env, cwd=tmp_path,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                                preexec_fn=limit_child))  # fmt: skip
            time.sleep(0.05)
        for reader in readers:
            reader.wait(timeout=60)
            if reader.returncode != 0:
                failures.append(reader.stderr.read())
            reader.stderr.close()
        for p in procs:
            _out, err = p.communicate(timeout=180)
            assert p.returncode == 0, err
            assert int(re.search(r"played (\d+) matches", err).group(1)) == 3 * rounds
        assert not failures, failures
        with sqlite3.connect(db) as c:
            assert c.execute("pragma integrity_check").fetchone() == ("ok",)
            counts = dict(c.execute("select t.name, count(m.id) from tournaments t left join matches m "
                                    "on m.tournament_id = t.id and m.status = 'done' group by t.name"))  # fmt: skip
            statuses = {row[0] for row in c.execute("select status from tournaments")}
        assert counts == {f"w{i}": 3 * rounds for i in range(writers)}, (run, counts)
        assert statuses == {"done"}


def test_ctrl_c_between_the_rows_of_a_write_leaves_no_lock_behind(tmp_path):
    """A real SIGINT lands while SQLite is inserting the rows of an executemany. The write is undone and its lock let
    go at once, while the KeyboardInterrupt is still being handled: that is where a run stores what it played and
    marks its tournament stopped (before, the cut statement kept the lock: 'database is locked')."""
    import signal

    from sqlalchemy import text

    from db.session import open_database

    path = tmp_path / "cut.db"
    database = open_database(f"sqlite:///{path}")
    with database.engine.begin() as connection:
        connection.execute(text("create table numbers (n integer)"))

    class Row(int):
        pass

    def adapt(value: Row) -> int:  # runs between rows, inside the driver's executemany
        if value == 50:
            os.kill(os.getpid(), signal.SIGINT)
        return int(value)

    sqlite3.register_adapter(Row, adapt)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with database.engine.begin() as connection:
            connection.exec_driver_sql("insert into numbers values (?)", [(Row(i),) for i in range(100)])
        raise AssertionError("the SIGINT did not interrupt the write")
    except KeyboardInterrupt:
        other = sqlite3.connect(path, timeout=0.5)  # another writer, still inside the except block
        other.execute("insert into numbers values (-1)")
        other.commit()
        other.close()
    finally:
        signal.signal(signal.SIGINT, previous)
        del sqlite3.adapters[(Row, sqlite3.PrepareProtocol)]
    with database.engine.begin() as connection:  # the pooled connection is usable; the cut write left nothing
        assert connection.execute(text("select n from numbers")).scalars().all() == [-1]


def test_a_database_that_is_down_is_not_taken_for_a_locked_one():
    """Only the driver's words tell a lock: the statement's own text (the queue's FOR UPDATE SKIP LOCKED) made a
    PostgreSQL outage read as "the database is locked by another process (waited 60 s)"."""
    from sqlalchemy.exc import OperationalError

    from db.session import _retryable

    down = OperationalError("SELECT id FROM tournaments FOR UPDATE SKIP LOCKED", {}, Exception("connection refused"))
    locked = OperationalError("INSERT INTO matches VALUES (1)", {}, Exception("database is locked"))
    assert not _retryable(down) and _retryable(locked)
