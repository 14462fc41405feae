"""One log line per request, cheaply: method, path, status, milliseconds.

A line goes through `logging` at ~35 us (a record, a formatter, a write and a flush per line); this middleware
formats its line itself (~2 us) in the format `arena serve` gives its other log lines, and writes lines in
batches: every `FLUSH_SECONDS` (the app's lifespan runs `flush_every`), when `BATCH` lines wait, and at shutdown.
It writes only when the `arena.server` logger is enabled for INFO (as `arena serve` sets it).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any, TextIO

log = logging.getLogger("arena.server")

#: Seconds a request's line may wait before it is written.
FLUSH_SECONDS = 0.2
#: Lines that wait at most (then they are written at once).
BATCH = 256


class RequestLog:
    """Pure ASGI middleware (no per-request task): one line per HTTP request into `lines`."""

    def __init__(self, app: Any, lines: RequestLines) -> None:
        self.app = app
        self.lines = lines

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def capture(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, capture)
        finally:
            self.lines.add(scope, status, (time.perf_counter() - start) * 1000)


def _printable(text: str) -> str:
    """`text` with every character that could end or forge a log line (control characters) written as an escape."""
    return text if text.isprintable() else "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


class RequestLines:
    """Request lines waiting to be written to `stream` (default: stderr, where `arena serve` logs)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self._lines: list[str] = []
        self._second = -1
        self._stamp = ""

    def add(self, scope: Any, status: int, ms: float) -> None:
        now = time.time()
        second = int(now)
        if second != self._second:  # the date part changes once a second
            self._second, self._stamp = second, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        query = scope.get("query_string", b"")
        raw = scope.get("raw_path") or scope["path"].encode()  # as sent (percent-encoded): a %0a stays three characters
        path = _printable(raw.decode("latin-1") + ("?" + query.decode("latin-1") if query else ""))
        client = (scope.get("client") or ("-", 0))[0]
        millis = int(now % 1 * 1000)
        self._lines.append(f'{self._stamp},{millis:03d} arena.server {client} "{scope["method"]} {path}" {status} {ms:.1f}ms\n')
        if len(self._lines) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._lines:
            return
        lines, self._lines = self._lines, []
        stream = self.stream or sys.stderr
        try:
            stream.write("".join(lines))
            stream.flush()
        except (OSError, ValueError):  # stderr closed: the lines are lost, the requests are not
            pass

    async def flush_every(self, seconds: float = FLUSH_SECONDS) -> None:
        """Write waiting lines every `seconds`, until cancelled (then once more)."""
        try:
            while True:
                await asyncio.sleep(seconds)
                self.flush()
        finally:
            self.flush()
