"""One kept-alive HTTP/1.1 connection to a push bot, for agent type `http` (arena.remote.push).

The standard library's `http.client`, not a full client: per move Arena sends one small POST and reads
one small answer, so what matters is the work around it. A request goes out in one `send` (headers and
body together: no Nagle/delayed-ACK stall, TCP_NODELAY on), and the connection is checked before it is
reused (a bot that closed it, e.g. restarted, gets a new one, as a pooled client would). Measured on
loopback, this costs about a third of the CPU time per move of an `httpx.Client` (bench/remote.py: 3.0x to 3.4x).
Errors are raised as `ConnectionFailed` (no connection could be made), `TimeoutError` (no complete answer
in time), `Disconnected` (the socket closed before the answer) and `NotHttp` (an answer that is not HTTP).
"""

from __future__ import annotations

import http.client
import io
import select
import socket
import threading
import time
from urllib.parse import urlsplit

from arena.remote.protocol import MAX_ANSWER_BYTES, TOO_LONG


class ConnectionFailed(OSError):
    """No connection to the bot could be made (refused, unreachable, or not within the time)."""


class Disconnected(OSError):
    """The bot closed the connection before its answer was complete."""


class NotHttp(ValueError):
    """The bot's answer is not an HTTP response."""


def url_problem(url: str) -> str | None:
    """What is wrong with a bot's base URL (scheme, host, port), or None when it can be connected to."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (reading it checks it: a port that is no number or past 65535 raises)
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL with a host"
    return None


class BotConnection:
    """POSTs to one bot's base URL over one kept-alive connection (not thread-safe: one per thread)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.https = parts.scheme == "https"
        self.prefix = parts.path.rstrip("/")
        self.headers = {"Host": parts.netloc, "Content-Type": "application/json"}
        self.conn: http.client.HTTPConnection | None = None

    def _open(self, timeout: float) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=timeout)
        try:
            conn.connect()
        except OSError as exc:  # refused, unreachable, or the connect timed out
            conn.close()
            raise ConnectionFailed(f"{type(exc).__name__}: {exc}") from None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def _usable(self, timeout: float) -> http.client.HTTPConnection:
        """The kept-alive connection, or a new one when there is none or the bot closed it (or sent stray bytes)."""
        conn = self.conn
        if conn is not None and (conn.sock is None or _readable(conn.sock)):
            conn.close()
            conn = None
        if conn is None:
            conn = self.conn = self._open(timeout)
        conn.sock.settimeout(timeout)
        return conn

    def post(self, path: str, body: bytes, timeout: float) -> tuple[int, bytes]:
        """POST `body` to `{url}{path}`; the status and the body of the answer, all within `timeout` seconds (the
        connection and the request a step each, the answer in all: a bot sending it a byte at a time is cut off)."""
        conn = self._usable(timeout)
        try:
            # http.client sends a bytes body in the same `send` as the headers.
            conn.request("POST", self.prefix + path, body=body, headers=self.headers)
            real = conn.sock
            conn.sock = _Deadline(real, timeout)
            try:
                response = conn.getresponse()
                data = response.read(MAX_ANSWER_BYTES + 1)
            finally:
                if isinstance(conn.sock, _Deadline):
                    conn.sock = real
                else:  # getresponse dropped the socket of a closing answer (HTTP/1.0, Connection: close) before its body
                    real.close()  # was read: the wrapper's close left it open for the read, closed now it is done
            if len(data) > MAX_ANSWER_BYTES:
                self.close()
                raise NotHttp(TOO_LONG)
        except http.client.RemoteDisconnected as exc:
            self.close()
            raise Disconnected(f"the bot disconnected without an answer ({exc})") from None
        except http.client.IncompleteRead as exc:
            self.close()
            raise Disconnected(f"the bot disconnected in the middle of its answer ({exc!r})") from None
        except http.client.HTTPException as exc:
            self.close()
            raise NotHttp(f"not an HTTP answer: {type(exc).__name__}: {exc}") from None
        except TimeoutError:
            self.close()
            raise
        except OSError as exc:
            self.close()
            raise Disconnected(f"the connection failed: {type(exc).__name__}: {exc}") from None
        if response.length:  # http.client returns what came before the socket closed: short of its Content-Length
            self.close()
            raise Disconnected(f"the bot disconnected in the middle of its answer ({len(data)} of "
                               f"{len(data) + response.length} bytes)")  # fmt: skip
        if response.will_close:
            self.close()
        return response.status, data

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class _Deadline:
    """A socket as http.client reads an answer through it, every read given what is left of one deadline."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self.sock, self.until = sock, time.monotonic() + seconds

    def recv_into(self, buffer: memoryview, nbytes: int = 0, flags: int = 0) -> int:
        left = self.until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the answer was not complete by its deadline")
        self.sock.settimeout(left)
        return self.sock.recv_into(buffer, nbytes, flags)

    def makefile(self, mode: str = "rb", buffering: int | None = None) -> io.BufferedReader:
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        """Nothing: http.client closes the connection of a closing answer before reading its body (a real socket waits
        for its readers, this wrapper's are unknown to it); `post` closes the socket once the body is read."""

    def _decref_socketios(self) -> None:
        pass


def _readable(sock: socket.socket) -> bool:
    """Whether an idle kept-alive socket has something to read: the bot closed it (or wrote out of turn)."""
    if hasattr(select, "poll"):  # any descriptor number, unlike select()
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])


_connections: dict[tuple[str, int], BotConnection] = {}
_lock = threading.Lock()


def connection_for(url: str) -> BotConnection:
    """The kept-alive connection to a bot URL of this thread (reused match after match)."""
    key = (url, threading.get_ident())
    with _lock:
        found = _connections.get(key)
        if found is None:
            found = _connections[key] = BotConnection(url)
        return found


def close_all() -> None:
    with _lock:
        for found in _connections.values():
            found.close()
        _connections.clear()
