"""Driving a command in a pseudo-terminal: what it wrote, read while it runs (a full terminal buffer would stop it)."""

from __future__ import annotations

import os
import select
import subprocess
import time


def read_until_exit(primary: int, run: subprocess.Popen, seconds: float) -> bytes:
    """Everything `run` writes to the terminal whose primary side is `primary`, until it exits or `seconds` pass; closes `primary`."""
    output, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not select.select([primary], [], [], 0.5)[0]:
            if run.poll() is not None:
                break
            continue
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the command has exited and closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(primary)
    if run.poll() is None:
        run.kill()
    run.wait()
    return output
