"""The server's answer cache: served from memory while the data is unchanged, never stale after a match lands, whether
it was stored by this process or by another one (a CLI run into the same database), on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import time

from sqlalchemy import text

from arena.library import tokens
from arena.library.storage import DataVersion, open_database
from tests.conftest import TEST_PLUGINS
from tests.server.conftest import Server
from tests.server.serving import ARENA

AGENTS = ["random", "greedy", "center"]


def computed(server: Server) -> int:
    return server.client.app.state.answers.computed


def test_cached_answers_are_the_clis_and_change_when_a_match_lands_here(played: Server) -> None:
    paths = {("/api/v1/leaderboard", "game=connect_four"): ("leaderboard", "--game", "connect_four"),
             ("/api/v1/leaderboard", "system=elo"): ("leaderboard", "--system", "elo"),
             ("/api/v1/matrix", "kind=win-rate&tournament=1"): ("matrix", "--kind", "win-rate", "--tournament", "1")}  # fmt: skip
    for (path, query), argv in paths.items():
        assert played.client.get(f"{path}?{query}").json() == played.cli.json(*argv)
    first = computed(played)
    for (path, query), argv in paths.items():  # unchanged data: from memory, computed no more
        assert played.client.get(f"{path}?{query}").json() == played.cli.json(*argv)
    assert computed(played) == first
    fast = played.client.app.state.answers.current("/api/v1/leaderboard", b"game=connect_four")  # sent before routing
    assert fast is not None and fast.body == played.client.get("/api/v1/leaderboard?game=connect_four").content
    page = played.client.get("/api/v1/matches", params={"limit": 5, "offset": 2})
    again = played.client.get("/api/v1/matches", params={"limit": 5, "offset": 2})
    assert again.json() == page.json() and again.headers["x-total-count"] == page.headers["x-total-count"] == "12"

    # Another tournament, played and stored by this process: the next answers include it, at once.
    before = played.client.get("/api/v1/leaderboard?game=connect_four").json()
    played.submit(game="connect_four", agents=["greedy", "center"], rounds=3, seed=8, name="second")
    assert played.play() == [(2, "done")]
    for (path, query), argv in paths.items():
        assert played.client.get(f"{path}?{query}").json() == played.cli.json(*argv)
    assert played.client.get("/api/v1/leaderboard?game=connect_four").json() != before
    assert played.client.app.state.answers.current("/api/v1/leaderboard", b"game=connect_four").body != fast.body
    assert played.client.get("/api/v1/leaderboard").json() == played.cli.json("leaderboard", "--tournament", "second")


def test_requests_that_differ_only_in_ignored_parameters_do_not_grow_the_cache(played: Server) -> None:
    """Each (path, query string) maps to its answer's key; on a quiet server (every request answered from memory) that
    map was never trimmed, so one leaderboard asked with ever new junk parameters grew the server without end."""
    answers = played.client.app.state.answers
    answers.limit = 8
    first = played.client.get("/api/v1/leaderboard?game=connect_four").json()
    for i in range(100):
        assert played.client.get(f"/api/v1/leaderboard?game=connect_four&junk{i}=x").json() == first
        assert len(answers._requests) <= 4 * answers.limit
    assert computed(played) == 1  # the answer itself stays: only the map of requests to it is trimmed


def test_a_match_stored_by_another_process_shows_within_the_check_interval(queue_server: Server) -> None:
    server = queue_server
    server.submit(game="connect_four", agents=AGENTS, rounds=2, seed=3, name="first")
    assert server.play() == [(1, "done")]
    cached = server.client.get("/api/v1/leaderboard?game=connect_four").json()
    assert server.client.get("/api/v1/leaderboard?game=connect_four").json() == cached
    done = computed(server)
    # A CLI run into the same database, in a process of its own.
    subprocess.run([ARENA, "--db", server.database.url, "--plugins-dir", str(TEST_PLUGINS), "run-tournament", "--game", "connect_four",
                    "--agents", "greedy,center", "--rounds", "3", "--seed", "4", "--name", "other", "--quiet"],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    time.sleep(2 * server.client.app.state.answers.version.interval)
    now = server.client.get("/api/v1/leaderboard?game=connect_four").json()
    assert now == server.cli.json("leaderboard", "--game", "connect_four") != cached
    assert computed(server) == done + 1
    # The stored tournament's own answer did not change: revalidated by its fingerprint, not computed again.
    assert server.client.get("/api/v1/leaderboard?tournament=first").json() == server.cli.json("leaderboard", "--tournament", "first")
    computed_first = computed(server)
    subprocess.run([ARENA, "--db", server.database.url, "tokens", "create", "someone"], check=True, capture_output=True, timeout=300)
    time.sleep(2 * server.client.app.state.answers.version.interval)
    assert server.client.get("/api/v1/leaderboard?tournament=first").json() == server.cli.json("leaderboard", "--tournament", "first")
    assert computed(server) == computed_first


def test_data_version_moves_with_every_commit_and_only_then(database_url: str) -> None:
    database = open_database(database_url)
    other = open_database(database_url)  # another engine: as another process, it does not tell this one
    version = DataVersion(database, interval=0)
    try:
        start = version.current()
        tokens.create(other, "elsewhere")
        moved = version.current()
        assert moved != start
        if database.dialect == "sqlite":  # (PostgreSQL's snapshot also moves for other tests' databases on the server)
            with database.session() as session:  # reads change nothing
                session.execute(text("select count(*) from tournaments"))
            assert version.current() == moved
        tokens.create(database, "here")  # through this engine: seen at once, whatever the interval
        slow = DataVersion(database, interval=3600)
        seen = slow.current()
        tokens.create(database, "again")
        assert slow.current() != seen
        slow.close()
    finally:
        version.close()
        database.engine.dispose()
        other.engine.dispose()
