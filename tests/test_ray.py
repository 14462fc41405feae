"""The Ray executor on real Ray: a local Ray started for the run, and a two-node cluster started as
separate processes (`ray start --head`, `ray start --address`) with one node killed mid-run.

Every Ray process a test starts is found by the cluster's own GCS address or temp dir and killed by
pid at the end (never `ray stop`: it would stop other clusters on this machine too).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import TEST_PLUGINS, Arena

pytest.importorskip("ray")

BIN = Path(sys.executable).parent
ARENA = str(BIN / "arena")
OBJECT_STORE = str(80 * 1024 * 1024)  # Ray's minimum is 75 MB
# Ray reads ~/.ray (an auth token another user of this machine generated would be enforced by one side
# only): the test's Ray processes get a home of their own.
RAY_HOME = tempfile.mkdtemp(prefix="arena-ray-home-")
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0", "HOME": RAY_HOME, "RAY_AUTH_MODE": "disabled"}


def _matches(arena: Arena, tournament: str) -> list[tuple]:
    return [(m["index"], m["seed"], m["turns"], m["reason"],
             tuple((s["agent"], s["outcome"], s["score"]) for s in m["seats"]))
            for m in arena.json("matches", "--tournament", tournament)]  # fmt: skip


def test_local_ray_for_the_run_equals_one_local_worker(tmp_path):
    """No address: a Ray is started for the run (2 CPUs) and stopped after it; a loose-file plugin agent
    (`center`, from --plugins-dir) reaches the workers with the job; forfeits under isolation are the same."""
    db = tmp_path / "arena.db"
    arena = Arena(db)

    def run(*args: str) -> None:  # in a process of its own, as a user runs it (Ray's driver state stays out of pytest)
        command = [ARENA, "--db", str(db), "--plugins-dir", str(TEST_PLUGINS), "run-tournament", *args, "--quiet"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **RAY_ENV})
        assert result.returncode == 0, result.stderr

    plain = ["--game", "connect_four", "--agents", "random,greedy,center", "--rounds", "4", "--seed", "5"]
    run(*plain, "--name", "local")
    run(*plain, "--name", "ray", "--executor", "ray", "--workers", "2")
    assert _matches(arena, "ray") == _matches(arena, "local") and len(_matches(arena, "local")) == 12
    # Isolated agents inside Ray workers: a timeout and an exception are forfeits, exactly as locally.
    faulty = ["--game", "tic_tac_toe", "--agents", "sleeper:seconds=0.6,raiser:after=1,random", "--rounds", "1",
              "--time-per-move", "0.4", "--memory-limit", "300"]  # fmt: skip
    run(*faulty, "--name", "faulty-local")
    run(*faulty, "--name", "faulty-ray", "--executor", "ray", "--workers", "2")
    ray_faulty = _matches(arena, "faulty-ray")
    assert ray_faulty == _matches(arena, "faulty-local")
    assert {m[3] for m in ray_faulty} == {"timeout", "agent_error"}


def test_bad_ray_options_are_one_line_exit_2(tmp_path):
    arena = Arena(tmp_path / "arena.db")
    result = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--ray-address", "1.2.3.4:1", ok=False)
    assert result.exit_code == 2 and "--ray-address is for --executor ray" in result.stderr
    port = _free_port()
    result = subprocess.run([ARENA, "--db", str(tmp_path / "arena.db"), "run-tournament", "--game", "tic_tac_toe", "--agents",
                             "random,greedy", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--quiet"],
                            capture_output=True, text=True, timeout=120, env={**os.environ, **RAY_ENV})  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: cannot connect to Ray at 127.0.0.1:") and "Traceback" not in result.stderr, result.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ours(process: psutil.Process, *marks: str) -> bool:
    try:
        line = " ".join(process.info["cmdline"] or [])
    except (psutil.NoSuchProcess, psutil.AccessDenied, KeyError):
        return False
    return any(mark in line for mark in marks)


def _cluster_pids(*marks: str) -> set[int]:
    """Every process of the test's cluster: those naming its GCS address or temp dir, and their descendants."""
    found: set[int] = set()
    for process in psutil.process_iter(["cmdline"]):
        if process.pid != os.getpid() and _ours(process, *marks):
            found.add(process.pid)
            try:
                found.update(child.pid for child in process.children(recursive=True))
            except psutil.NoSuchProcess:
                pass
    return found


def _kill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _raylets(address: str) -> set[int]:
    return {p.pid for p in psutil.process_iter(["cmdline", "name"]) if p.info["name"] == "raylet" and _ours(p, address)}


def _ray_start(*args: str) -> None:
    result = subprocess.run([str(BIN / "ray"), "start", "--num-cpus", "1", "--object-store-memory", OBJECT_STORE,
                             "--disable-usage-stats", *args], capture_output=True, text=True, timeout=240,
                            env={**os.environ, **RAY_ENV})  # fmt: skip
    assert result.returncode == 0, result.stderr[-700:]


def test_two_node_cluster_with_a_node_killed_mid_run(tmp_path):
    """A head and a second node (1 CPU each); the second node's raylet is killed once matches are stored:
    its chunks are played again on the head, every match is stored once, and the results equal one local worker's."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    temp_dir = tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp")  # short: Ray's socket paths live under it
    db = tmp_path / "arena.db"
    args = ["run-tournament", "--game", "connect_four", "--agents", "mcts:simulations=30,greedy,random", "--rounds", "12",
            "--seed", "8", "--quiet"]  # fmt: skip
    try:
        # Every fixed default port made free: other clusters may run on this machine (other test workers, other users).
        _ray_start("--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--include-dashboard", "false",
                   "--dashboard-port", str(_free_port()),
                   "--temp-dir", temp_dir)  # fmt: skip
        # Ray names the GCS by the node's address (not 127.0.0.1): its processes are found by the port.
        head_raylets = _raylets(f":{port}")
        _ray_start("--address", address, "--node-ip-address", "127.0.0.1")
        deadline = time.monotonic() + 60
        while len(_raylets(f":{port}")) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        second = _raylets(f":{port}") - head_raylets
        assert len(second) == 1, "the second node did not start"
        arena = Arena(db, plugins_dirs=())
        env = {**os.environ, **RAY_ENV, "ARENA_FLUSH_SECONDS": "0.05"}
        run = subprocess.Popen([ARENA, "--db", str(db), *args, "--name", "cluster", "--executor", "ray", "--ray-address", address],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 240
        while run.poll() is None and time.monotonic() < deadline and arena.rows("select count(*) from matches") in ([], [(0,)]):
            time.sleep(0.1)
        stored = arena.rows("select count(*) from matches")
        assert run.poll() is None, f"the run ended before the node was killed: {run.communicate()}"
        _kill(second)  # the node's raylet dies; its workers go with it
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        assert stored and 0 < stored[0][0] < 36, stored
        subprocess.run([ARENA, "--db", str(db), *args, "--name", "local"], check=True, capture_output=True, timeout=300)
        cluster = _matches(arena, "cluster")
        assert len(cluster) == 36 and [m[0] for m in cluster] == list(range(36))  # each match stored once
        assert cluster == _matches(arena, "local")
        assert arena.rows('select count(*), count(distinct "index") from matches where tournament_id = 1') == [(36, 36)]
    finally:
        _kill(_cluster_pids(f":{port}", temp_dir))
        time.sleep(0.5)
        _kill(_cluster_pids(f":{port}", temp_dir))
        subprocess.run(["rm", "-rf", temp_dir], check=False)
    assert not _cluster_pids(f":{port}", temp_dir)


def test_plugins_dir_travels_with_the_job(tmp_path):
    """The Ray worker loads loose-file plugins from the copy shipped with the job (py_modules), not the driver's path."""
    from arena.executors.ray_executor import _shipped_dir

    assert _shipped_dir(str(TEST_PLUGINS)) == str(TEST_PLUGINS)  # outside Ray: the original directory
