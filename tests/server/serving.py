"""A real `arena serve` in a subprocess for the end-to-end and browser tests: started on a random free port,
waited for (failing fast with its log if it exits), and killed only by its own pid."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import TEST_PLUGINS

ARENA = str(Path(sys.executable).parent / "arena")
DEADLINE = 120.0  # seconds any one wait may take on a loaded machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


class ServeProcess:
    """`arena serve` in a subprocess: started, waited for, killed only by its own pid."""

    def __init__(self, db_path: Path, port: int, log: Path, *extra: str, session: bool = False) -> None:
        self.port, self.log = port, log
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "ARENA_FLUSH_SECONDS": "0.2"}
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [ARENA, "--db", f"sqlite:///{db_path}", "--plugins-dir", str(TEST_PLUGINS), "serve", "--port", str(port),
             "--lease", "3", *extra],
            stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env, preexec_fn=_limit_memory,
            start_new_session=session,  # its own process group, as a service manager starts it
        )  # fmt: skip
        self.ready_after = self._wait_ready()

    def _wait_ready(self) -> float:
        while time.monotonic() - self.started < DEADLINE:
            if self.process.poll() is not None:
                raise AssertionError(f"arena serve exited with {self.process.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/api/v1/games", timeout=2).status_code in (200, 401):  # (401: a --private one)
                    return time.monotonic() - self.started
            except httpx.HTTPError:
                time.sleep(0.05)
        raise AssertionError(f"arena serve did not answer in {DEADLINE} s:\n{self.log.read_text()}")

    def children(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=60)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator:
    started: list[ServeProcess] = []

    def start(db_path: Path, port: int | None = None, *extra: str, session: bool = False) -> ServeProcess:
        server = ServeProcess(db_path, port or free_port(), tmp_path / "serve.log", *extra, session=session)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=30)


def wait_for(predicate, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")



#: One client for the tests' requests, with a timeout that a loaded machine does not trip (httpx's default is 5 s).
http = httpx.Client(timeout=DEADLINE)
