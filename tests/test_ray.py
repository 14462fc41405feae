"""The Ray executor on real Ray: a local Ray started for one run, and a two-node cluster started as
separate processes (`ray start --head`, `ray start --address`, tests/ray_cluster.py) on which a
tournament loses a node mid-run, isolated agents forfeit, and `arena serve --executor ray` plays its
queue into PostgreSQL.

Loose-file plugins come from a copy of the test plugins in the test's own directory, so the shipped
copy is what the Ray workers load (a worker that does not find it fails: see _shipped_dir). Every
Ray process a test starts is killed by pid at the end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import pytest

from arena.library import tokens
from arena.library.storage import open_database
from tests.conftest import TEST_PLUGINS, Arena
from tests.ray_cluster import RayCluster, free_port, ray_env

pytest.importorskip("ray")

ARENA = str(Path(sys.executable).parent / "arena")
DEADLINE = 300  # seconds any one run may take on a loaded machine
# A sleeper (deterministic: first legal move) gives every run a floor of wall time that no machine beats,
# while it costs no CPU: the node is always killed mid-run, on a fast idle machine too.
AGENTS = "mcts:simulations=30,sleeper:seconds=0.05,center"
TOURNAMENT = ["--game", "connect_four", "--agents", AGENTS, "--rounds", "8", "--seed", "8"]  # 24 matches


def _matches(arena: Arena, tournament: str) -> list[tuple]:
    return [(m["index"], m["seed"], m["turns"], m["reason"],
             tuple((s["agent"], s["outcome"], s["score"]) for s in m["seats"]))
            for m in arena.json("matches", "--tournament", tournament)]  # fmt: skip


def _plugins(tmp_path: Path) -> Path:
    copy = tmp_path / "my-plugins"
    shutil.copytree(TEST_PLUGINS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _arena(db: Path | str, plugins: Path, env: dict[str, str], *args: str) -> None:
    """`arena` in a process of its own, as a user runs it (Ray's driver state stays out of pytest)."""
    command = [ARENA, "--db", str(db), "--plugins-dir", str(plugins), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE, env=env, check=False)
    assert result.returncode == 0, result.stderr[-2000:]


def test_local_ray_for_the_run_equals_one_local_worker(tmp_path):
    """No address: a Ray is started for the run (2 CPUs) and stopped after it; a loose-file plugin agent
    (`center`, from --plugins-dir) reaches the workers with the job; results equal one local worker's.
    The tournament is adaptive, so it is played in parts (a first round, then batches chosen from the
    stored results): one local Ray serves every part (one Ray session on disk, not one per part)."""
    db, plugins = tmp_path / "arena.db", _plugins(tmp_path)
    ray_tmp = tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp")  # short: Ray's socket paths live under it
    env = {**os.environ, **ray_env(str(tmp_path / "home")), "RAY_TMPDIR": ray_tmp}
    adaptive = ["run-tournament", "--game", "connect_four", "--agents", "random,greedy,center", "--format", "adaptive",
                "--budget", "40", "--seed", "5", "--quiet"]  # fmt: skip  (a first round of 3, then 16, 16 and 5)
    try:
        _arena(db, plugins, env, *adaptive, "--name", "local")
        _arena(db, plugins, env, *adaptive, "--name", "ray", "--executor", "ray", "--workers", "2")
        sessions = [path.name for path in Path(ray_tmp).glob("**/session_2*")]
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert len(sessions) == 1, sessions
    arena = Arena(db)
    assert _matches(arena, "ray") == _matches(arena, "local") and len(_matches(arena, "local")) == 40


def test_bad_ray_options_are_one_line_exit_2(tmp_path):
    arena = Arena(tmp_path / "arena.db")
    result = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--ray-address", "1.2.3.4:1", ok=False)
    assert result.exit_code == 2 and "--ray-address is for --executor ray" in result.stderr
    result = subprocess.run([ARENA, "--db", str(tmp_path / "arena.db"), "run-tournament", "--game", "tic_tac_toe", "--agents",
                             "random,greedy", "--executor", "ray", "--ray-address", f"127.0.0.1:{free_port()}", "--quiet"],
                            check=False, capture_output=True, text=True, timeout=120, env={**os.environ, **ray_env(str(tmp_path))})  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: cannot connect to Ray at 127.0.0.1:") and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "arena.db").exists()  # refused before anything is written: no file, no stuck tournament
    with socket.socket() as listener:  # something listens there, but no Ray: it says nothing (Ray retried it for good)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        started = time.monotonic()
        result = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--executor", "ray",
                       "--ray-address", f"127.0.0.1:{listener.getsockname()[1]}", ok=False)  # fmt: skip
    assert result.exit_code == 2 and "is no Ray head" in result.stderr and time.monotonic() - started < 60, result.stderr
    for address in ("notanaddress", "127.0.0.1:99999", "http://127.0.0.1:1", ""):
        result = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--executor", "ray",
                       "--ray-address", address, ok=False)  # fmt: skip
        assert result.exit_code == 2 and "--ray-address takes HOST:PORT" in result.stderr, (address, result.stderr)
    assert not (tmp_path / "arena.db").exists()
    # Without Ray installed (its import blocked here): one line, and no tournament written to be left `stopped`
    blocked = ("import sys; sys.modules['ray'] = None; sys.argv = sys.argv[1:]; from arena.cli import main; main()")
    result = subprocess.run([sys.executable, "-c", blocked, "arena", "--db", str(tmp_path / "arena.db"), "run-tournament", "--game",
                             "tic_tac_toe", "--agents", "random,greedy", "--executor", "ray"],
                            check=False, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "Error: --executor ray needs Ray: pip install 'arena[ray]'"], result.stderr
    assert not (tmp_path / "arena.db").exists()


def _wait(predicate, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _stop(server: subprocess.Popen) -> None:
    """SIGTERM (the server stops its queue workers), then SIGKILL whatever of it is left, by pid."""
    try:
        children = psutil.Process(server.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def _stored(arena: Arena, tournament: str) -> int:
    rows = arena.rows(f"select count(*) from matches m join tournaments t on t.id = m.tournament_id where t.name = '{tournament}'")
    return rows[0][0] if rows else 0


def test_two_node_cluster_node_killed_isolation_and_serve(tmp_path, postgres_url):
    """A head and a second node (1 CPU each), as a user starts them:
    - isolated agents (--time-per-move, --memory-limit) forfeit inside Ray workers exactly as locally;
    - the second node's raylet is killed once matches are stored: its chunks are played again on the head,
      every match is stored once, and the results equal one local worker's;
    - `arena serve --executor ray --ray-address` plays a queued tournament on the cluster into PostgreSQL."""
    db, plugins = tmp_path / "arena.db", _plugins(tmp_path)
    arena = Arena(db)
    with RayCluster() as cluster:
        cluster.add_node(1)
        second = cluster.add_node(1)
        env = {**cluster.env, "ARENA_FLUSH_SECONDS": "0.05"}
        on_cluster = ["--executor", "ray", "--ray-address", cluster.address, "--quiet"]
        # Isolated agents inside Ray workers: a timeout, an exception and a process over its memory limit.
        faulty = ["run-tournament", "--game", "tic_tac_toe", "--agents", "sleeper:seconds=0.6,raiser:after=1,crasher:how=memory,random",
                  "--rounds", "1", "--time-per-move", "0.4", "--memory-limit", "300", "--seed", "3"]  # fmt: skip
        _arena(db, plugins, env, *faulty, "--name", "faulty-ray", *on_cluster)
        _arena(db, plugins, env, *faulty, "--name", "faulty-local", "--quiet")
        ray_faulty = _matches(arena, "faulty-ray")
        assert ray_faulty == _matches(arena, "faulty-local") and len(ray_faulty) == 6
        assert {m[3] for m in ray_faulty} == {"timeout", "agent_error", "agent_crashed"}
        # An SPRT: chunks come back in any order, and the cluster stores exactly the matches one local worker does.
        sprt = ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,random:seed=1", "--sprt", "elo0=0,elo1=60",
                "--rounds", "5000"]  # fmt: skip
        _arena(db, plugins, env, *sprt, "--name", "sprt-ray", *on_cluster)
        _arena(db, plugins, env, *sprt, "--name", "sprt-local", "--quiet")
        assert _matches(arena, "sprt-ray") == _matches(arena, "sprt-local") and len(_matches(arena, "sprt-local")) == 81
        # A node dies mid-run.
        log = (tmp_path / "cluster-run.log").open("w")
        run = subprocess.Popen([ARENA, "--db", str(db), "--plugins-dir", str(plugins), "run-tournament", *TOURNAMENT,
                                "--name", "cluster", *on_cluster], env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        try:
            _wait(lambda: run.poll() is not None or _stored(arena, "cluster") > 0, "the first stored matches")
            stored = _stored(arena, "cluster")
            assert run.poll() is None, f"the run ended before the node was killed: {(tmp_path / 'cluster-run.log').read_text()}"
            cluster.kill_node(second)  # the node's raylet dies; its workers go with it
            assert run.wait(timeout=DEADLINE) == 0, (tmp_path / "cluster-run.log").read_text()
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert 0 < stored < 24, stored
        # The server plays its queue on the cluster (one node left) into a PostgreSQL database.
        token = tokens.create(open_database(postgres_url), "ray")
        port = free_port()
        serve_log = tmp_path / "serve.log"
        server = subprocess.Popen([ARENA, "--db", postgres_url, "--plugins-dir", str(plugins), "serve", "--port", str(port),
                                   "--executor", "ray", "--ray-address", cluster.address],
                                  env=env, stdout=serve_log.open("w"), stderr=subprocess.STDOUT)  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            client = httpx.Client(timeout=60)

            def answers() -> bool:
                assert server.poll() is None, serve_log.read_text()
                try:
                    return client.get(url + "/api/v1/games").status_code == 200
                except httpx.HTTPError:
                    return False

            _wait(answers, "arena serve")
            body = {"game": "connect_four", "agents": AGENTS.split(","), "rounds": 8, "seed": 8, "name": "served"}
            created = client.post(url + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"})
            assert created.status_code == 201, created.text
            status = url + f"/api/v1/tournaments/{created.json()['id']}"
            _wait(lambda: client.get(status).json()["status"] in ("done", "failed"), "the served tournament")
            assert client.get(status).json()["status"] == "done", serve_log.read_text()[-2000:]
        finally:
            _stop(server)
    _arena(db, plugins, dict(os.environ), "run-tournament", *TOURNAMENT, "--name", "local", "--quiet")
    local = _matches(arena, "local")
    cluster_matches = _matches(arena, "cluster")
    assert len(cluster_matches) == 24 and [m[0] for m in cluster_matches] == list(range(24))  # each match stored once
    assert cluster_matches == local
    assert arena.rows("select count(*), count(distinct \"index\") from matches m join tournaments t on t.id = m.tournament_id "
                      "where t.name = 'cluster'") == [(24, 24)]  # fmt: skip
    assert _matches(Arena(postgres_url), "served") == local
    assert not cluster.pids(), "a process of the cluster outlived the test"
