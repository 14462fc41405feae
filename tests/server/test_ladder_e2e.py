"""The continuous ladder on a real `arena serve` process (127.0.0.1, a random free port): an agent joins over HTTP
while the ladder plays, plays the field first, shows on the leaderboard and the page; cancel stops it; and a
server killed with kill -9 mid-ladder and restarted makes the same choices as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import psutil

from arena.adaptive_run import stored_probabilities
from arena.library import tokens
from arena.library.storage import open_database
from arena.schedule import decode_schedule
from tests.conftest import Arena
from tests.server.serving import ARENA, DEADLINE, free_port, http, wait_for
from tests.server.test_e2e import stored

FIELD = ["random", "greedy", "minimax:depth=1"]
NEWCOMER = "mcts:simulations=20"


def ladder(db_path: Path, tournament_id: int) -> tuple[list[list[str]], dict]:
    """The ladder's schedule (agents by seat, match by match) and settings, as stored."""
    with sqlite3.connect(db_path, timeout=30) as c:
        packed, players, settings = c.execute("select schedule, players, settings from tournaments where id = ?",
                                              (tournament_id,)).fetchone()  # fmt: skip
    settings = json.loads(settings)
    labels = [agent["label"] for agent in settings["agents"]]
    return [[labels[p] for p in table] for table in decode_schedule(packed, players)], settings


def test_join_a_running_ladder_over_http_then_cancel(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    auth = {"Authorization": f"Bearer {tokens.create(open_database(f'sqlite:///{db_path}'), 'e2e')}"}
    server = serve(db_path)
    body = {"game": "tic_tac_toe", "agents": FIELD, "format": "ladder", "seed": 3, "name": "live"}
    created = http.post(server.url + "/api/v1/tournaments", json=body, headers=auth)
    assert created.status_code == 201, created.text
    url = f"{server.url}/api/v1/tournaments/{created.json()['id']}"
    wait_for(lambda: http.get(url).json()["done"] >= 3, "the first round")  # no budget: it plays on
    joined = http.post(url + "/agents", json={"agent": NEWCOMER}, headers=auth)
    # waiting for the next batch, or (the ladder plays on meanwhile) admitted already
    assert joined.status_code == 201 and [NEWCOMER] in (joined.json()["joining"], joined.json()["agents"][len(FIELD):]), joined.text
    assert http.post(url + "/agents", json={"agent": NEWCOMER}, headers=auth).status_code == 409

    def entry_played() -> bool:
        _, settings = ladder(db_path, 1)
        joins = settings.get("ladder", {}).get("joins", [])
        return bool(joins) and http.get(url).json()["done"] >= joins[0]["at"] + 3

    wait_for(entry_played, "the newcomer's entry round")
    tables, settings = ladder(db_path, 1)
    at = settings["ladder"]["joins"][0]["at"]
    assert at >= 3 and all(NEWCOMER not in t for t in tables[:at])  # admitted at a batch boundary after the join
    assert [sorted(set(t) - {NEWCOMER}) for t in tables[at:at + 3]] == [[a] for a in FIELD]  # the whole field, first
    assert len(stored_probabilities(settings["adaptive"])) == len(tables)
    board = http.get(server.url + "/api/v1/leaderboard", params={"tournament": "live"}).json()
    assert {row["agent"] for row in board} == {*FIELD, NEWCOMER}
    assert all(row["bt_low"] <= row["bt"] <= row["bt_high"] for row in board)  # honest intervals, newcomer included
    page = http.get(f"{server.url}/tournaments/live")
    assert page.status_code == 200 and page.text.count(NEWCOMER) >= 2  # settings and leaderboard
    assert http.get(url).json()["agents"] == [*FIELD, NEWCOMER]
    cancelled = http.post(url + "/cancel", headers=auth).json()
    assert cancelled["status"] == "cancelled"
    wait_for(lambda: any("tournament 1: " in line and ("lost" in line or "done" in line or "stopped" in line)
                         for line in server.log.read_text().splitlines()), "the worker to stop playing it")  # fmt: skip
    done = http.get(url).json()["done"]
    assert http.get(url).json()["status"] == "cancelled" and done == len(stored(db_path, 1)) // 2
    assert server.stop() in (0, -signal.SIGTERM)


def test_a_ladder_gives_its_only_worker_to_a_tournament_submitted_behind_it(tmp_path: Path, serve) -> None:  # noqa: ANN001
    """A ladder never ends: on a server with one queue worker it must not keep the queue from everything else."""
    db_path = tmp_path / "arena.db"
    auth = {"Authorization": f"Bearer {tokens.create(open_database(f'sqlite:///{db_path}'), 'e2e')}"}
    server = serve(db_path)  # one queue worker (the default)
    body = {"game": "tic_tac_toe", "agents": FIELD, "format": "ladder", "seed": 3, "name": "endless"}
    assert http.post(server.url + "/api/v1/tournaments", json=body, headers=auth).status_code == 201
    ladder_url = f"{server.url}/api/v1/tournaments/endless"
    wait_for(lambda: http.get(ladder_url).json()["done"] >= 3, "the ladder's first round")
    body = {"game": "tic_tac_toe", "agents": ["random", "greedy"], "rounds": 4, "seed": 1, "name": "behind"}
    assert http.post(server.url + "/api/v1/tournaments", json=body, headers=auth).status_code == 201
    wait_for(lambda: http.get(f"{server.url}/api/v1/tournaments/behind").json()["status"] == "done", "the tournament behind it")
    assert http.get(f"{server.url}/api/v1/tournaments/behind").json()["done"] == 4
    log = server.log.read_text()
    assert "tournament 1: gives way" in log and log.index("tournament 1: gives way") < log.index("tournament 2: claimed")
    wait_for(lambda: server.log.read_text().count("tournament 1: claimed by") == 2, "the ladder to be claimed again")
    assert http.get(ladder_url).json()["status"] == "running"
    assert http.post(ladder_url + "/cancel", headers=auth).json()["status"] == "cancelled"
    assert server.stop() in (0, -signal.SIGTERM)


def test_two_ladders_take_turns_on_one_worker(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    auth = {"Authorization": f"Bearer {tokens.create(open_database(f'sqlite:///{db_path}'), 'e2e')}"}
    server = serve(db_path, None, "--ladder-turn", "1")  # one queue worker; turns of a second
    for name in ("first", "second"):  # two equal agents: these ladders never settle, they play on
        body = {"game": "tic_tac_toe", "agents": ["random", "random:seed=2"], "format": "ladder", "seed": 1, "name": name}
        assert http.post(server.url + "/api/v1/tournaments", json=body, headers=auth).status_code == 201

    def turns(tournament_id: int) -> int:
        return server.log.read_text().count(f"tournament {tournament_id}: claimed by")

    wait_for(lambda: turns(1) >= 2 and turns(2) >= 2, "two turns of each ladder")
    log = server.log.read_text()
    assert log.index("tournament 1: gives way") < log.index("tournament 2: claimed by")
    for name in ("first", "second"):
        url = f"{server.url}/api/v1/tournaments/{name}"
        assert http.get(url).json()["done"] >= 2 and http.get(url).json()["status"] == "running"
        assert http.post(url + "/cancel", headers=auth).json()["status"] == "cancelled"
    assert server.stop() in (0, -signal.SIGTERM)


def test_kill_9_mid_ladder_then_restart_makes_the_same_choices(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    cli = Arena(db_path)
    field = "random,greedy,mcts:simulations=800"

    def queue_ladder(name: str) -> None:  # the join waits before the ladder plays: admitted at the first boundary
        cli("run-tournament", "--game", "connect_four", "--agents", field, "--format", "ladder", "--budget", "54",
            "--seed", "5", "--name", name, "--queue")  # fmt: skip
        cli("tournaments", "join", name, "minimax:depth=1")

    queue_ladder("killed")
    port = free_port()
    server = serve(db_path, port)
    wait_for(lambda: len(stored(db_path, 1)) // 2 >= 10, "matches chosen after the newcomer's entry round")
    children = server.children()
    server.stop(signal.SIGKILL)
    wait_for(lambda: not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children), "its worker to die with it")
    done_at_kill = len(stored(db_path, 1)) // 2
    assert 10 <= done_at_kill < 54
    restarted = serve(db_path, port)  # same port: the same server name, so it takes its ladder back at once
    wait_for(lambda: http.get(f"{restarted.url}/api/v1/tournaments/1").json()["status"] == "done", "the resumed ladder")
    restarted.stop()
    queue_ladder("uninterrupted")
    cli("run-tournament", "--resume", "uninterrupted", "--quiet")
    killed, uninterrupted = ladder(db_path, 1), ladder(db_path, 2)
    assert killed[0] == uninterrupted[0] and len(killed[0]) == 54  # the same choices, match by match
    assert killed[1]["adaptive"]["probabilities"] == uninterrupted[1]["adaptive"]["probabilities"]
    assert stored(db_path, 1) == stored(db_path, 2)
    assert cli.json("leaderboard", "--tournament", "killed") == cli.json("leaderboard", "--tournament", "uninterrupted")


def rows_of(db_path: Path) -> list[tuple]:
    """The first ladder's stored seats ([] until the CLI has made the database)."""
    try:
        return stored(db_path, 1)
    except sqlite3.OperationalError:
        return []


def test_cli_ladder_picks_up_a_join_from_another_process_and_stops_when_cancelled(tmp_path: Path) -> None:
    db_path = tmp_path / "arena.db"
    arena = [ARENA, "--db", f"sqlite:///{db_path}"]
    env = {**os.environ, "ARENA_FLUSH_SECONDS": "0.2"}
    playing = subprocess.Popen([*arena, "run-tournament", "--game", "tic_tac_toe", "--agents", ",".join(FIELD), "--format",
                                "ladder", "--name", "open", "--quiet"], env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_for(lambda: len(rows_of(db_path)) // 2 >= 3, "the first round")
        joined = subprocess.run([*arena, "tournaments", "join", "open", NEWCOMER, "--json"], capture_output=True, text=True, timeout=DEADLINE, check=False)
        answer = json.loads(joined.stdout) if joined.returncode == 0 else {}
        # waiting for the next batch, or (the ladder plays on meanwhile) admitted already
        assert [NEWCOMER] in (answer.get("joining"), answer.get("agents", [])[len(FIELD):]), joined.stderr
        wait_for(lambda: NEWCOMER in {row[4] for row in rows_of(db_path)}, "the newcomer's first match")
        cancelled = subprocess.run([*arena, "tournaments", "cancel", "open"], capture_output=True, text=True, timeout=DEADLINE, check=False)
        assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout
        assert playing.wait(timeout=DEADLINE) == 0  # at its next batch boundary
        assert "played" in playing.stderr.read()
    finally:
        if playing.poll() is None:
            playing.kill()
            playing.wait(timeout=30)
    tables, settings = ladder(db_path, 1)
    at = settings["ladder"]["joins"][0]["at"]
    assert all(NEWCOMER in t for t in tables[at:at + 3]) and all(NEWCOMER not in t for t in tables[:at])
