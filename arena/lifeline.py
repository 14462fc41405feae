"""Child processes (pool workers, isolated agents) that end when the process that owns them dies.

`kill -9` of a tournament must leave nothing behind: a child asks the kernel to send it SIGKILL when
its parent dies (Linux `prctl(PR_SET_PDEATHSIG)`), and leaves at once if its parent is already gone.
Children also ignore Ctrl-C: the terminal sends SIGINT to the whole process group, and only the
parent should answer it (one line, then it ends its children).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1


def bind_to_parent(parent_pid: int) -> None:
    """Call first thing in a child: die with `parent_pid`, and leave Ctrl-C to it.

    A child started by a forkserver on the parent's behalf (its kernel parent is the forkserver) watches
    instead the pipe multiprocessing keeps to the process that asked for it, and leaves when it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != parent_pid:
        watched = multiprocessing.parent_process()
        if watched is not None and watched.pid == parent_pid and watched.sentinel is not None:
            _leave_when_ready(watched.sentinel)
            return
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the request was made
        os._exit(1)


def _leave_when_ready(sentinel: int) -> None:
    """End this process as soon as `sentinel` (the parent's end of a pipe) is ready: the parent is gone."""
    from multiprocessing.connection import wait

    def watch() -> None:
        wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="arena-lifeline", daemon=True).start()
