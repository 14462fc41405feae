"""A real Ray cluster of separate processes on this machine, for the tests and bench/scale.py.

`ray start --head` and `ray start --address` as a user runs them, with a small object store, no
dashboard, every port free, a temp dir and a home of its own (Ray reads ~/.ray: an auth token
another user of this machine generated would be enforced by one side only). Its processes are
found by the cluster's GCS port or its temp dir and killed by pid (never `ray stop`: that stops
every cluster on the machine).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

BIN = Path(sys.executable).parent
OBJECT_STORE = str(80 * 1024 * 1024)  # Ray's minimum is 75 MB
#: Seconds a `ray start` or a node's arrival may take on a loaded machine.
START_TIMEOUT = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_env(home: str) -> dict[str, str]:
    """What the Ray processes (and a driver talking to them) get in their environment."""
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0", "HOME": home, "RAY_AUTH_MODE": "disabled"}


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.info["cmdline"] or [])
    except (psutil.NoSuchProcess, psutil.AccessDenied, KeyError):
        return ""


class RayCluster:
    """Nodes of `cpus` CPUs each; `stop()` (or leaving the `with`) kills every process of the cluster."""

    def __init__(self) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp_dir = tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp")  # short: Ray's socket paths live under it
        self.home = tempfile.mkdtemp(prefix="arena-ray-home-")
        self.env = {**os.environ, **ray_env(self.home)}
        self.nodes: list[set[int]] = []  # raylet pids, one set per node

    def __enter__(self) -> RayCluster:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _ray_start(self, cpus: int, *args: str) -> None:
        result = subprocess.run([str(BIN / "ray"), "start", "--num-cpus", str(cpus), "--object-store-memory", OBJECT_STORE,
                                 "--disable-usage-stats", "--node-ip-address", "127.0.0.1", *args],
                                capture_output=True, text=True, timeout=START_TIMEOUT, env=self.env)  # fmt: skip
        if result.returncode != 0:
            raise AssertionError(f"ray start failed: {result.stderr[-700:]}")

    def raylets(self) -> set[int]:
        """The raylet (one per node) of every node of this cluster: they name its GCS port."""
        mark = f":{self.port}"
        return {p.pid for p in psutil.process_iter(["cmdline", "name"]) if p.info["name"] == "raylet" and mark in _cmdline(p)}

    def add_node(self, cpus: int = 1) -> set[int]:
        """Start the head (the first call) or one more node; returns the new node's raylet pids."""
        before = self.raylets()
        if not self.nodes:
            # Every fixed default port made free: other clusters may run on this machine (other test workers, other users).
            self._ray_start(cpus, "--head", "--port", str(self.port), "--include-dashboard", "false",
                            "--dashboard-port", str(free_port()), "--temp-dir", self.temp_dir)  # fmt: skip
        else:
            self._ray_start(cpus, "--address", self.address)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.raylets() - before and time.monotonic() < deadline:
            time.sleep(0.2)
        new = self.raylets() - before
        if not new:
            raise AssertionError("the Ray node did not start")
        self.nodes.append(new)
        return new

    def kill_node(self, raylets: set[int]) -> None:
        """SIGKILL a node's raylet: its workers die with it, as when its machine goes away."""
        _kill(raylets)

    def pids(self) -> set[int]:
        """Every process of this cluster: those naming its GCS port or temp dir, and their descendants."""
        marks = (f":{self.port}", self.temp_dir)
        found: set[int] = set()
        for process in psutil.process_iter(["cmdline"]):
            if process.pid != os.getpid() and any(mark in _cmdline(process) for mark in marks):
                found.add(process.pid)
                try:
                    found.update(child.pid for child in process.children(recursive=True))
                except psutil.NoSuchProcess:
                    pass
        return found

    def stop(self) -> None:
        for _ in range(3):  # a dying raylet may still start a worker: look again
            pids = self.pids()
            if not pids:
                break
            _kill(pids)
            time.sleep(0.5)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        shutil.rmtree(self.home, ignore_errors=True)


def _kill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
