"""Bots as real subprocesses on 127.0.0.1: started on a free port, killed (by pid) when the test ends."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUSH_BOT = ROOT / "examples" / "remote" / "push_bot.py"
FAULT_BOTS = Path(__file__).parent / "fixtures" / "remote_bots"
MEMORY_LIMIT = 512 * 1024 * 1024


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@contextlib.contextmanager
def running(argv: list[str], started: str = r"(https?|wss?)://127\.0\.0\.1:\d+", wait: float = 120.0) -> Iterator[str]:
    """Start `argv`, wait for the first line naming its URL, yield that URL; kill the process after."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit_memory,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], wait)
        line = process.stdout.readline().decode() if ready else ""
        found = re.search(r"(https?|wss?)://127\.0\.0\.1:\d+", line)
        if found is None:
            process.kill()
            raise AssertionError(f"{argv} did not start: {line!r} {process.stderr.read().decode() if process.stderr else ''}")
        yield found.group(0)
    finally:
        process.kill()
        process.wait(10)


def push_bot(script: Path = PUSH_BOT) -> contextlib.AbstractContextManager[str]:
    return running([sys.executable, str(script), "0"])


def fault_bot(name: str) -> contextlib.AbstractContextManager[str]:
    return push_bot(FAULT_BOTS / f"{name}.py")
