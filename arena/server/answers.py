"""The server's cache of encoded answers: a repeated read of unchanged data is served from memory, on the event loop.

An answer is stored with the database's data version (arena.library.storage.DataVersion) read *before* it was
computed, and served from memory while the version is the same: never after a commit it may not have seen. A commit
through this process shows at once; one by another process (a CLI run into the same database, the queue's
players) within the version's check interval (5 ms).

When the version moved (any commit, to any tournament), the answer is checked in the threadpool against its
selection's fingerprint (one small query: the revision of the tournaments it covers) and recomputed only if that
changed, so matches landing in one tournament do not make every other tournament's answers recomputed. Requests for
one key that arrive while it is being checked or computed wait for that one computation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from arena.library.analysis import Selection
from arena.library.storage import DataVersion


class Answers:
    """Encoded answers by key (at most `limit`; all dropped when full), each valid at one data version."""

    def __init__(self, version: DataVersion, limit: int = 512) -> None:
        self.version = version
        self.limit = limit
        self._answers: dict[Hashable, tuple[Any, tuple[str, str], Response]] = {}
        self._requests: dict[tuple[str, bytes], Hashable] = {}  # (path, query string) -> key, for `FastAnswers`
        self._computing: dict[Hashable, threading.Lock] = {}
        self.computed = 0  # answers computed, not served from memory or revalidated: what a test watches

    async def get(self, request: Request, key: Hashable, select: Callable[[], Selection],
                  answer: Callable[[Selection], Response]) -> Response:  # fmt: skip
        """The answer for `key`: from memory while nothing was committed since it was computed (no thread hop); else,
        in the threadpool, `answer(select())` unless the selection's fingerprint shows its data did not change.
        The same request (path and query string) is answered before routing next time (see `FastAnswers`)."""
        if len(self._requests) >= 4 * self.limit:  # requests differing only in ignored parameters: each its own entry
            self._requests.clear()
        self._requests[(request.scope["path"], request.scope["query_string"])] = key
        hit = self._answers.get(key)
        if hit is not None and hit[0] == self.version.current():
            return hit[2]
        return await run_in_threadpool(self._compute, key, select, answer)

    def current(self, path: str, query: bytes) -> Response | None:
        """The stored answer to this exact request if it is current, else None."""
        key = self._requests.get((path, query))
        hit = self._answers.get(key) if key is not None else None
        if hit is not None and hit[0] == self.version.current():
            return hit[2]
        return None

    def _compute(self, key: Hashable, select: Callable[[], Selection], answer: Callable[[Selection], Response]) -> Response:
        with self._computing.setdefault(key, threading.Lock()):
            version = self.version.current()
            hit = self._answers.get(key)
            if hit is not None and hit[0] == version:  # another request computed it while this one waited
                return hit[2]
            selection = select()
            fingerprint = (selection.key, selection.fingerprint)
            if hit is not None and hit[1] == fingerprint:
                response = hit[2]
            else:
                response = answer(selection)
                self.computed += 1
            if len(self._answers) >= self.limit or len(self._requests) >= 4 * self.limit:
                self._answers.clear()
                self._requests.clear()
                # the locks too: one per key ever asked would grow without bound (a request still waiting on a
                # dropped lock at worst computes its answer once more)
                self._computing.clear()
            self._answers[key] = (version, fingerprint, response)
            return response


class FastAnswers:
    """Pure ASGI middleware: a GET that was answered before (same path and query string, so the same validated
    parameters) and whose answer is current is sent from memory without routing, validation or dependencies.
    Not on a private server (there every read checks its token)."""

    def __init__(self, app: Any, answers: Answers) -> None:
        self.app = app
        self.answers = answers

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            response = self.answers.current(scope["path"], scope["query_string"])
            if response is not None:
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
