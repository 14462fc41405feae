"""One agent is one row when tournaments (and ladder joins) are created at once: an agent's label, decided from the stored
results of its game (arena.tournament.stored_labels), is checked again in the write's own transaction, serialised with
every other such write (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL). Without that, two processes that
both read before either wrote both kept the plain label for two versions of one plugin agent, and their results made
one leaderboard row."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena import tournament
from arena.errors import ArenaError
from arena.library import ladders
from arena.plugins import Registry, get_registry
from db import queries
from db.session import open_database
from tests.conftest import Arena, loose_plugin

#: A loose-file plugin's agent `corner` (random play) at a version of its own: a new release of one plugin.
CORNER = ("import arena\nfrom agents.random_agent import RandomAgent\n\n__version__ = '{version}'\n\n"
          "class Corner(RandomAgent):\n    info = arena.AgentInfo(id='corner', version='{version}', description='tests')\n\n"
          "@arena.hookimpl\ndef register_agents(register):\n    register(Corner)\n")  # fmt: skip
RENAMED = ("note: 'corner' has results of another agent under that name for this game (another version or other "
           "parameters): this tournament records it as 'corner@2.0', so the two never mix")  # fmt: skip


def corner_plugins(tmp_path: Path, version: str) -> Path:
    """A loose-file plugins folder whose agent `corner` is at `version` (a module of its own per version)."""
    return loose_plugin(tmp_path / f"v{version}", f"corner_{version.replace('.', '_')}", CORNER.format(version=version))


def request(**more: Any) -> tournament.TournamentRequest:
    return tournament.TournamentRequest(game="tic_tac_toe", agents="corner,random", rounds=2, **more)


def before_the_write(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> list[int]:
    """Run `action` once, right after the first time stored_labels reads the stored results: another process writing
    between a creation's (or a join's) reading of the labels and its write. Returns the count of label readings."""
    real = tournament.stored_labels
    readings: list[int] = []

    def reading(session: Any, *args: Any) -> Any:
        labelled = real(session, *args)
        if session is not None:
            readings.append(1)
            if len(readings) == 1:
                action()
        return labelled

    monkeypatch.setattr(tournament, "stored_labels", reading)
    return readings


def write_corner(database_url: str, registry: Registry, **more: Any) -> int:
    with open_database(database_url) as database:
        return tournament.create(registry, database, request(**more))


def test_a_tournament_written_between_the_labels_and_the_write_renames_the_agent(database_url: str, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """`corner` 2.0 reads no stored `corner`; before its write, another process writes a tournament of `corner` 1.0:
    the write finds it and records 2.0 as `corner@2.0` (as when run after it), the note says so, and the leaderboard
    has a row for each (they were one row of both versions' games)."""
    old, new = corner_plugins(tmp_path, "1.0"), corner_plugins(tmp_path, "2.0")
    first: list[int] = []
    before_the_write(monkeypatch, lambda: first.append(write_corner(database_url, get_registry((old,)))))
    played = Arena(database_url, (new,))("run-tournament", "--game", "tic_tac_toe", "--agents", "corner,random",
                                         "--rounds", "2")  # fmt: skip
    assert first == [1] and RENAMED in played.stderr, played.stderr
    Arena(database_url, (old,))("run-tournament", "--resume", "1", "--quiet")
    cli = Arena(database_url, (new,))
    assert [t["renamed"] for t in cli.json("tournaments")] == [{}, {"corner": "corner@2.0"}]
    board = {row["agent"]: row["games"] for row in cli.json("leaderboard", "--game", "tic_tac_toe")}
    assert board == {"corner": 2, "corner@2.0": 2, "random": 4}, board


def test_tournaments_created_at_once_behind_a_lock_are_two_rows(database_url: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """`corner` 1.0 and 2.0 are created from two threads while a third connection holds the write lock (as two
    `arena run-tournament` started at once): both read the labels before either writes; whichever writes second records
    its `corner` as corner@VERSION. On PostgreSQL only the advisory lock that tournament creations share keeps the second
    from checking before the first commits."""
    registries = {version: get_registry((corner_plugins(tmp_path, version),)) for version in ("1.0", "2.0")}
    open_database(database_url).close()  # the schema, before the lock
    real, arrived = queries.create_tournament, threading.Semaphore(0)

    def arriving(*args: Any, **kwargs: Any) -> int:
        arrived.release()
        return real(*args, **kwargs)

    monkeypatch.setattr(queries, "create_tournament", arriving)
    ids: dict[str, int] = {}
    threads = [threading.Thread(target=lambda v=version: ids.setdefault(v, write_corner(database_url, registries[v])))
               for version in registries]  # fmt: skip
    with held_write_lock(database_url):
        for thread in threads:
            thread.start()
        for _ in threads:
            assert arrived.acquire(timeout=60)
        time.sleep(0.5)  # both wait on the lock, their labels read
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(ids) == ["1.0", "2.0"], ids
    cli = Arena(database_url)
    labels = {json.loads(settings)["agents"][0]["label"] for settings, in cli.rows("select settings from tournaments")}
    second = "2.0" if ids["2.0"] > ids["1.0"] else "1.0"
    assert labels == {"corner", f"corner@{second}"}, labels


@contextmanager
def held_write_lock(database_url: str) -> Iterator[None]:
    """A third connection holding the writers' lock: SQLite's BEGIN IMMEDIATE, PostgreSQL's EXCLUSIVE lock on the
    tournaments table (reads go on, inserts wait)."""
    if database_url.startswith("sqlite:///"):
        connection: Any = sqlite3.connect(database_url[len("sqlite:///"):], isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")
    else:
        import psycopg

        connection = psycopg.connect(database_url.replace("postgresql+psycopg://", "postgresql://", 1))
        connection.execute("LOCK TABLE tournaments IN EXCLUSIVE MODE")
    try:
        yield
    finally:
        connection.rollback()
        connection.close()


def test_a_tournament_written_before_a_join_s_write_renames_the_joining_agent(database_url: str, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A ladder join of `corner` 2.0 reads no stored `corner`; before its write, a tournament of `corner` 1.0 is
    written: the join waits as `corner@2.0`, as it does when it comes after."""
    old, new = get_registry((corner_plugins(tmp_path, "1.0"),)), get_registry((corner_plugins(tmp_path, "2.0"),))
    with open_database(database_url) as database:
        tournament.create(new, database, tournament.TournamentRequest(game="tic_tac_toe", agents="random,greedy",
                                                                      format="ladder", name="lad"), status="queued")  # fmt: skip
        readings = before_the_write(monkeypatch, lambda: write_corner(database_url, old))
        joined = ladders.join(new, database, "lad", "corner")
        assert joined["joining"] == ["corner@2.0"] and readings, joined
        with database.session() as session:
            assert [label for label, _ in queries.ladder_joins(session, 1)] == ["corner@2.0"]


def test_labels_that_keep_changing_are_refused_and_nothing_is_written(database_url: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A creation whose labels change before each of its writes gives up after LABEL_ATTEMPTS preparations, with an
    error about its agents, and writes nothing."""
    registry = get_registry((corner_plugins(tmp_path, "2.0"),))
    attempts: list[int] = []

    def changed(*args: Any) -> Callable[[Any], None]:
        attempts.append(1)

        def recheck(connection: Any) -> None:
            raise tournament.LabelsChanged

        return recheck

    monkeypatch.setattr(tournament, "labels_unchanged", changed)
    with open_database(database_url) as database:
        with pytest.raises(ArenaError, match="kept changing") as refused:
            tournament.create(registry, database, request())
        assert refused.value.field == "agents" and len(attempts) == tournament.LABEL_ATTEMPTS
        with database.session() as session:
            assert queries.list_tournaments(session) == []
