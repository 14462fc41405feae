"""A real `arena serve` process on 127.0.0.1 (a random free port), driven with httpx: submit with a token,
watch the events, read results equal to the CLI's, kill -9 and restart, two servers on one database."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import psutil
import pytest

from arena.library import tokens
from arena.library.storage import open_database
from tests.conftest import Arena
from tests.server.serving import ARENA, DEADLINE, free_port, http, wait_for


def events(url: str, last_event_id: str | None = None) -> list[tuple[str, str, dict]]:
    """(event, id, data) of every event until the stream ends."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    found, fields = [], {}
    with httpx.stream("GET", url, headers=headers, timeout=DEADLINE) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if not line:
                if "data" in fields:
                    found.append((fields.get("event", "message"), fields.get("id", ""), json.loads(fields["data"])))
                fields = {}
            elif not line.startswith(":"):
                key, _, value = line.partition(":")
                fields[key] = value.strip()
    return found


def test_submit_watch_and_read_like_the_cli(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    server = serve(db_path)
    print(f"arena serve answered {server.ready_after:.2f} s after it was started")
    body = {"game": "connect_four", "agents": ["random", "greedy", "center", "minimax:depth=1"], "rounds": 4, "seed": 5}
    assert http.post(server.url + "/api/v1/tournaments", json=body).status_code == 401
    assert http.post(server.url + "/api/v1/tournaments", json=body, headers={"Authorization": "Bearer bad"}).status_code == 401
    # A body over the limit is refused before anything reads it (an anonymous 300 MB POST held ~1 GB to answer 401);
    # chunked, without a Content-Length, too; a chunked body within it reaches the route whole.
    big = b"[" + b"0," * (8 * 1024 * 1024) + b"0]"
    for content in (big, iter([big[i:i + 65536] for i in range(0, len(big), 65536)])):
        refused = http.post(server.url + "/api/v1/tournaments", content=content, headers={"Content-Type": "application/json"})
        assert refused.status_code == 413 and refused.json()["field"] == "body", refused.text
    data = json.dumps({**body, "game": "no_such_game"}).encode()
    chunks = iter([data[i:i + 7] for i in range(0, len(data), 7)])
    bad = http.post(server.url + "/api/v1/tournaments", content=chunks, headers={"Authorization": f"Bearer {token}",
                                                                               "Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["field"] == "game", bad.text
    created = http.post(server.url + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"})
    assert created.status_code == 201, created.text
    tournament = created.json()
    seen = events(f"{server.url}/api/v1/tournaments/{tournament['id']}/events")
    assert seen[-1][0] == "end" and seen[-1][2]["status"] == "done" and seen[-1][2]["done"] == tournament["matches"] == 24
    ids = [int(event_id) for _, event_id, _ in seen]
    assert ids == sorted(ids) and ids[-1] == 24
    # Reconnecting with the last id misses nothing and repeats nothing: the end, at once.
    assert events(f"{server.url}/api/v1/tournaments/{tournament['id']}/events", "24") == [seen[-1]]
    cli = Arena(db_path)
    for system in ("bt", "elo", "trueskill"):
        api = http.get(server.url + "/api/v1/leaderboard", params={"tournament": tournament["id"], "system": system}).json()
        assert api == cli.json("leaderboard", "--tournament", str(tournament["id"]), "--system", system)
    assert http.get(server.url + "/api/v1/tournaments/1").json()["status"] == "done"
    forged = "/tournaments/x%0a2000-01-01%2000:00:00,000%20arena.server%20FORGED%00"  # a line of its own, and a NUL
    assert http.get(server.url + forged).status_code == 400  # (a NUL: refused before any lookup)
    assert server.stop() in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down cleanly
    log = server.log.read_text()
    lines = log.splitlines()
    assert "\x00" not in log and not any(line.startswith("2000-01-01") for line in lines)
    assert any(f'"GET {forged}" 400' in line for line in lines)  # the address as it was sent
    assert any('"POST /api/v1/tournaments" 201' in line for line in lines)
    assert sum('"GET /api/v1/leaderboard' in line for line in lines) == 3  # one line per request


def stored(db_path: Path, tournament_id: int) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(db_path) as c:
        return c.execute(
            'select m."index", m.seed, m.moves, s.seat, s.agent, s.outcome from matches m join match_seats s on '
            's.match_id = m.id where m.tournament_id = ? order by m."index", s.seat', (tournament_id,)).fetchall()


def test_kill_9_mid_tournament_then_restart_resumes_exactly(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    port = free_port()
    server = serve(db_path, port)
    # Slow enough (~8 s idle) that results stored every 2 s leave matches to play when the server is killed.
    body = {"game": "connect_four", "agents": ["mcts:simulations=2000", "greedy", "random"], "rounds": 10, "seed": 9, "name": "killed"}
    tournament = http.post(server.url + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"}).json()
    url = f"{server.url}/api/v1/tournaments/{tournament['id']}"
    wait_for(lambda: http.get(url).json()["done"] > 0, "the first stored matches")
    children = server.children()
    assert children, "the queue worker process"
    server.stop(signal.SIGKILL)
    wait_for(lambda: not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children), "its worker to die with it")
    done_at_kill = len(stored(db_path, tournament["id"])) // 2
    assert 0 < done_at_kill < 30
    restarted = serve(db_path, port)  # same port: the same server name, so it takes its tournament back at once
    wait_for(lambda: http.get(url).json()["status"] == "done", "the resumed tournament to finish")
    restarted.stop()
    rows = stored(db_path, tournament["id"])
    assert sorted({row[0] for row in rows}) == list(range(30)) and len(rows) == 60  # every scheduled match, once
    cli = Arena(db_path)
    cli("run-tournament", "--game", "connect_four", "--agents", "mcts:simulations=2000,greedy,random", "--rounds", "10",
        "--seed", "9", "--name", "uninterrupted", "--quiet")  # fmt: skip
    assert rows == stored(db_path, tournament["id"] + 1)
    assert cli.json("leaderboard", "--tournament", "killed") == cli.json("leaderboard", "--tournament", "uninterrupted")


def test_sigterm_stops_cleanly_and_two_servers_share_one_queue(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    # A lease no stall of the machine outlasts: a claim taken over while its holder was paused would be claimed twice.
    first, second = serve(db_path, None, "--lease", "60"), serve(db_path, None, "--lease", "60")
    auth = {"Authorization": f"Bearer {token}"}
    body = {"game": "connect_four", "agents": ["mcts:simulations=20", "greedy"], "rounds": 6}
    ids = [http.post(first.url + "/api/v1/tournaments", json={**body, "seed": n}, headers=auth).json()["id"] for n in range(4)]
    wait_for(lambda: all(http.get(f"{second.url}/api/v1/tournaments/{i}").json()["status"] == "done" for i in ids), "all four")
    log = first.log.read_text()
    claims = [line.split("tournament ")[1].split(":")[0] for line in log.splitlines() if "claimed by" in line]
    assert sorted(claims, key=int) == [str(i) for i in ids]  # each tournament claimed once, by one of the two
    for i in ids:
        assert len({row[0] for row in stored(db_path, i)}) == len(stored(db_path, i)) // 2 == 6
    # SIGTERM while playing: exits 0 promptly, the tournament stays resumable (running, lease given back).
    # Slow enough (mcts 2000 simulations, ~100 s idle) that it is still running when SIGTERM comes, however long
    # stopping the second server takes on a loaded machine (with mcts 20 it was once played to its end meanwhile).
    slow = {**body, "agents": ["mcts:simulations=2000", "greedy"], "rounds": 400, "seed": 99}
    long = http.post(first.url + "/api/v1/tournaments", json=slow, headers=auth).json()
    second.stop()
    wait_for(lambda: http.get(f"{first.url}/api/v1/tournaments/{long['id']}").json()["done"] > 0, "matches of the long one")
    begun = time.monotonic()
    assert first.stop(signal.SIGTERM) in (0, -signal.SIGTERM) and time.monotonic() - begun < 60  # not the ~100 s left
    assert "Application shutdown complete" in first.log.read_text()
    after = Arena(db_path).json("tournaments")[-1]
    assert after["status"] == "running" and 0 < after["done"] < 400


def test_sigterm_to_the_whole_process_group_stops_the_server(serve, tmp_path: Path) -> None:
    """A service manager (systemd's default) sends SIGTERM to every process of the service at once: the queue workers
    as well as the server. The server still stops cleanly and promptly, leaving nothing behind."""
    server = serve(tmp_path / "arena.db", None, "--workers", "2", session=True)
    workers = server.children()
    assert len(workers) >= 2, workers
    time.sleep(1.0)  # the workers are polling the queue
    begun = time.monotonic()
    os.killpg(server.process.pid, signal.SIGTERM)  # its own group: the server and what it started, nothing else
    try:
        code = server.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        raise AssertionError(f"arena serve still running 60 s after SIGTERM to its group:\n{server.log.read_text()}") from None
    assert code in (0, -signal.SIGTERM) and time.monotonic() - begun < 60
    # The workers end with it: they may still be leaving as it exits (a loaded machine measured a worker running then).
    _gone, alive = psutil.wait_procs(workers, timeout=30)
    alive = [worker for worker in alive if worker.status() != psutil.STATUS_ZOMBIE]
    for worker in alive:  # clean up before failing: only processes this test's server started
        worker.kill()
    assert not alive, alive


def test_a_killed_queue_worker_is_replaced_and_its_tournament_resumed(tmp_path: Path, serve) -> None:  # noqa: ANN001
    """A queue worker killed while it plays (SIGKILL, as the OOM killer sends) is noticed and replaced, in one line of
    the log naming it and its signal; the tournament it held is resumed once its lease (3 s here) runs out, every
    match stored once, and a tournament submitted afterwards is played: each within DEADLINE, on one queue worker."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    server = serve(db_path)
    auth = {"Authorization": f"Bearer {token}"}
    body = {"game": "connect_four", "agents": ["mcts:simulations=2000", "greedy", "random"], "rounds": 10, "seed": 9}
    held = http.post(server.url + "/api/v1/tournaments", json=body, headers=auth).json()
    wait_for(lambda: http.get(f"{server.url}/api/v1/tournaments/{held['id']}").json()["done"] > 0, "the first stored matches")
    (started,) = [line for line in server.log.read_text().splitlines() if "queue worker" in line and ": pid " in line]
    worker, pid = started.split("queue worker ")[1].split(": pid ")
    assert int(pid) in {child.pid for child in server.children()}  # a process this test's server started
    os.kill(int(pid), signal.SIGKILL)
    later = http.post(server.url + "/api/v1/tournaments", json={**body, "agents": ["random", "greedy"], "rounds": 2},
                      headers=auth).json()  # fmt: skip
    for tournament in (held, later):
        url = f"{server.url}/api/v1/tournaments/{tournament['id']}"
        deadline = time.monotonic() + DEADLINE
        while http.get(url).json()["status"] != "done":
            assert time.monotonic() < deadline, f"tournament {tournament['id']} not done {DEADLINE:g} s on:\n{server.log.read_text()}"
            time.sleep(0.1)
    lines = server.log.read_text().splitlines()
    (died,) = [line for line in lines if "died" in line]
    assert f"queue worker {worker} (pid {pid}) died, killed by SIGKILL; tournament {held['id']} it held" in died
    assert "; replaced" in died  # (in 1 s: it died within QUICK_DEATH_SECONDS of its start)
    replacements = [line for line in lines if f"queue worker {worker}: pid " in line]
    assert len(replacements) == 2 and not replacements[1].endswith(f": pid {pid}")
    rows = stored(db_path, held["id"])
    assert sorted({row[0] for row in rows}) == list(range(30)) and len(rows) == 60  # every scheduled match, once
    assert server.stop() in (0, -signal.SIGTERM)


def test_a_cancel_frees_the_queue_worker_even_in_the_middle_of_a_very_long_match(tmp_path: Path, serve) -> None:  # noqa: ANN001
    """A tournament whose match would take hours (mcts with ten million simulations a move) is cancelled: the worker
    playing it exits ABANDON_SECONDS later, in one line of the log, and the server's new worker plays the next
    tournament (within 60 s, on one queue worker)."""
    from arena.server.runner import ABANDON_SECONDS, ABANDONED_EXIT

    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    server = serve(db_path)
    auth = {"Authorization": f"Bearer {token}"}
    # Its first match (random against greedy) is over in milliseconds and waits in the batch of results to write
    # (ARENA_FLUSH_SECONDS 0.2 here); the second never ends.
    endless = http.post(server.url + "/api/v1/tournaments", headers=auth, json={
        "game": "connect_four", "agents": ["random", "greedy", "mcts:simulations=10000000"], "rounds": 1}).json()  # fmt: skip
    wait_for(lambda: http.get(f"{server.url}/api/v1/tournaments/{endless['id']}").json()["status"] == "running", "its claim")
    (started,) = [line for line in server.log.read_text().splitlines() if "queue worker" in line and ": pid " in line]
    worker = psutil.Process(int(started.rsplit(": pid ", 1)[1]))
    assert worker in server.children()  # a process this test's server started
    claimed_cpu = worker.cpu_times().user
    wait_for(lambda: worker.cpu_times().user > claimed_cpu + 2.0, "the first move's search under way (2 s of CPU)")
    assert http.post(f"{server.url}/api/v1/tournaments/{endless['id']}/cancel", headers=auth).json()["status"] == "cancelled"
    cancelled_at = time.monotonic()
    later = http.post(server.url + "/api/v1/tournaments", headers=auth,
                      json={"game": "tic_tac_toe", "agents": ["random", "greedy"], "rounds": 2}).json()  # fmt: skip
    deadline = time.monotonic() + DEADLINE
    while http.get(f"{server.url}/api/v1/tournaments/{later['id']}").json()["status"] != "done":
        assert time.monotonic() < deadline, f"the next tournament not played {DEADLINE:g} s on:\n{server.log.read_text()}"
        time.sleep(0.1)
    assert time.monotonic() - cancelled_at >= ABANDON_SECONDS  # the match under way was given its grace first
    lines = server.log.read_text().splitlines()
    assert [line for line in lines if f"tournament {endless['id']}: no longer held by" in line]
    (died,) = [line for line in lines if "died" in line]
    assert f"exit code {ABANDONED_EXIT}" in died and "; replaced" in died
    assert http.get(f"{server.url}/api/v1/tournaments/{endless['id']}").json()["status"] == "cancelled"
    assert [row[0] for row in stored(db_path, endless["id"])] == [0, 0]  # the finished match kept (its two seats)
    assert server.stop() in (0, -signal.SIGTERM)


@pytest.mark.parametrize("lease", ["3", "1"])
def test_a_tournament_that_kills_its_workers_fails_after_three_deaths(tmp_path: Path, serve, lease: str) -> None:  # noqa: ANN001
    """An agent that ends the process it plays in (crasher: os._exit) takes the queue worker down each time the
    tournament is resumed: the third death marks it failed, with the reason, and the queue goes on. Also when the
    lease has run out before the server looks at the death (a 1 s lease; a stall of the machine): the death counts."""
    from arena.server.runner import WORKER_DEATHS

    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    server = serve(db_path, None, "--lease", lease)
    auth = {"Authorization": f"Bearer {token}"}
    killer = http.post(server.url + "/api/v1/tournaments", headers=auth,
                       json={"game": "tic_tac_toe", "agents": ["crasher:how=exit", "random"], "rounds": 1}).json()  # fmt: skip
    later = http.post(server.url + "/api/v1/tournaments", headers=auth,
                      json={"game": "tic_tac_toe", "agents": ["random", "greedy"], "rounds": 2}).json()  # fmt: skip
    for tournament, status in ((killer, "failed"), (later, "done")):
        url = f"{server.url}/api/v1/tournaments/{tournament['id']}"
        deadline = time.monotonic() + 120
        while http.get(url).json()["status"] != status:
            assert time.monotonic() < deadline, f"tournament {tournament['id']} not {status}:\n{server.log.read_text()}"
            time.sleep(0.2)
    assert f"died {WORKER_DEATHS} times (the last exit code 3)" in http.get(f"{server.url}/api/v1/tournaments/{killer['id']}").json()["error"]
    died = [line for line in server.log.read_text().splitlines() if "died" in line and "queue worker" in line]
    assert len(died) == WORKER_DEATHS and f"tournament {killer['id']} it held failed" in died[-1]
    assert server.stop() in (0, -signal.SIGTERM)


def test_a_second_server_on_a_busy_port_takes_nothing_and_port_0_names_servers_apart(tmp_path: Path, serve) -> None:  # noqa: ANN001
    """`arena serve` takes its port before its app starts: a second one started on the same port by mistake exits with
    one line and exit 2 without taking back the running server's tournament (its app would have done so first, its
    queue sharing the server id HOST:PORT); servers started with --port 0 get the port the system chose in their id."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    first = serve(db_path)
    auth = {"Authorization": f"Bearer {token}"}
    slow = {"game": "connect_four", "agents": ["mcts:simulations=2000", "greedy"], "rounds": 400}
    long = http.post(first.url + "/api/v1/tournaments", json=slow, headers=auth).json()
    wait_for(lambda: http.get(f"{first.url}/api/v1/tournaments/{long['id']}").json()["done"] > 0, "its first matches")
    log = tmp_path / "second.log"
    second = subprocess.run([ARENA, "--db", f"sqlite:///{db_path}", "serve", "--port", str(first.port)], timeout=DEADLINE,
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)  # fmt: skip
    text = log.read_text()
    assert second.returncode == 2 and text.strip() == f"Error: cannot listen on 127.0.0.1:{first.port}: Address already in use", text
    assert "took back" not in first.log.read_text()
    before = http.get(f"{first.url}/api/v1/tournaments/{long['id']}").json()["done"]
    wait_for(lambda: http.get(f"{first.url}/api/v1/tournaments/{long['id']}").json()["done"] > before, "more of its matches")
    assert http.post(f"{first.url}/api/v1/tournaments/{long['id']}/cancel", headers=auth).status_code == 200

    # --port 0: the server's id has the port the system chose, so two such servers never share their claims.
    log = tmp_path / "zero.log"
    zero = subprocess.Popen([ARENA, "--db", f"sqlite:///{db_path}", "serve", "--port", "0"], stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)  # fmt: skip
    try:
        wait_for(lambda: "serving on" in log.read_text() and ": pid " in log.read_text(), "the --port 0 server")
        port = int(log.read_text().split("serving on http://127.0.0.1:")[1].split()[0])
        assert port != 0 and f"queue worker {socket.gethostname()}:127.0.0.1:{port}/0: pid" in log.read_text()
        assert http.get(f"http://127.0.0.1:{port}/api/v1/games").status_code == 200
    finally:
        zero.terminate()
        zero.wait(timeout=60)


def test_the_port_is_taken_listening_before_the_app_starts() -> None:
    """A bound socket that does not listen yet would let a second server bind the port too (SO_REUSEADDR) and start
    its queue before either listens: `listen` returns a listening socket, so the second is refused at once."""
    import click
    import pytest

    from arena.cli_server import listen

    first = listen("127.0.0.1", 0)
    try:
        port = first.getsockname()[1]
        with pytest.raises(click.ClickException, match=f"cannot listen on 127.0.0.1:{port}: Address already in use"):
            listen("127.0.0.1", port)
    finally:
        first.close()


def test_sigterm_to_the_group_of_a_server_playing_on_ray_releases_its_tournament(serve, tmp_path: Path) -> None:
    """`--executor ray`: a service manager's SIGTERM reaches the local Ray's processes as well as the server and its
    queue workers. The server still stops cleanly: the tournament it was playing is let go at once (not held until
    its lease runs out), neither failed nor lost, and what was played is stored (Ray's driver takes SIGTERM for
    itself, and its processes die under the queue worker)."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    server = serve(db_path, None, "--executor", "ray", "--match-workers", "1", "--lease", "600", session=True)
    body = {"game": "connect_four", "agents": ["mcts:simulations=300", "greedy"], "rounds": 400, "seed": 3}
    held = http.post(server.url + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"}).json()
    url = f"{server.url}/api/v1/tournaments/{held['id']}"
    wait_for(lambda: http.get(url).json()["done"] > 0, "the first matches played on Ray")
    descendants = psutil.Process(server.process.pid).children(recursive=True)
    os.killpg(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        raise AssertionError(f"arena serve still running 60 s after SIGTERM to its group:\n{server.log.read_text()}") from None
    _gone, alive = psutil.wait_procs(descendants, timeout=30)
    for process in alive:  # only processes this test's server started
        process.kill()
    log = server.log.read_text()
    # The worker leaves storing what was played; or, now and then, Ray's core ends it (its local Ray died of the same
    # signal) before it can, and the server lets its tournament go instead (tests/server/test_runner.py).
    let_go = re.search(r"ended during the stop \(.*\) holding tournament \d+: let go", log)
    assert ("what was played is stored" in log or let_go) and "failed" not in log, log
    cli = Arena(db_path)
    ((status, claimed_by, lease_until, now),) = cli.rows(
        "select status, claimed_by, lease_until, datetime('now') from tournaments")  # fmt: skip
    assert status in ("queued", "running") and (claimed_by is None or lease_until < now), (status, claimed_by, lease_until)
    assert not alive, [(p.pid, p.name()) for p in alive]


def test_a_request_line_holds_no_control_character() -> None:
    """The log line of an address holding a control character escapes it (an ASGI server may hand over a decoded
    path: then a newline would start a forged line of the client's choosing)."""
    import io

    from arena.server.request_log import RequestLines

    out = io.StringIO()
    lines = RequestLines(out)
    lines.add({"method": "GET", "path": "/x\n2000-01-01 FORGED\x00", "query_string": b"a=\r1"}, 404, 1.0)
    lines.flush()
    (line,) = out.getvalue().splitlines()
    assert '"GET /x\\x0a2000-01-01 FORGED\\x00?a=\\x0d1" 404' in line, line


def test_a_server_with_several_match_workers_plays_a_tournament_as_the_cli_does(tmp_path: Path, serve) -> None:  # noqa: ANN001
    """`arena serve --match-workers 2`: each tournament is played by a pool of two worker processes, as `--workers 2`
    plays it (a queue worker is a daemonic process, which may start none: every tournament failed)."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "e2e")
    server = serve(db_path, None, "--match-workers", "2")
    body = {"game": "connect_four", "agents": ["mcts:simulations=20", "greedy", "random"], "rounds": 4, "seed": 5, "name": "served"}
    created = http.post(server.url + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"}).json()
    url = f"{server.url}/api/v1/tournaments/{created['id']}"
    wait_for(lambda: http.get(url).json()["status"] in ("done", "failed"), "the served tournament")
    assert http.get(url).json()["status"] == "done", server.log.read_text()
    cli = Arena(db_path)
    cli("run-tournament", "--game", "connect_four", "--agents", "mcts:simulations=20,greedy,random", "--rounds", "4",
        "--seed", "5", "--name", "here", "--workers", "2", "--quiet")  # fmt: skip
    played = {name: cli.rows("select m.\"index\", m.reason, m.turns, m.moves from matches m join tournaments t on "
                             f"t.id = m.tournament_id where t.name = '{name}' order by m.\"index\"") for name in ("served", "here")}  # fmt: skip
    assert len(played["served"]) == 12 and played["served"] == played["here"]
