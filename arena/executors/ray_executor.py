"""The Ray executor: matches played as Ray tasks, in chunks, on every node of a cluster.

Patterns from Ray's documentation: the setup is `ray.put` once and passed by reference; matches go
in chunks of about half a second of play (a match can take milliseconds: one task per match would cost more than
the match; arena.executors.chunks); at
most a few chunks per CPU are in flight (`ray.wait`), and the driver yields each chunk's matches as
soon as it finishes, so they are stored in batches as they come. A chunk whose worker or node
died is a fault of the cluster, never of an agent: it is sent again (each match is stored once
anyway: ON CONFLICT DO NOTHING).

Loose-file plugins (`--plugins-dir`) travel with the job as Ray `py_modules` (a copy of each
directory under a name of its own); entry-point plugins must be installed on every node, as Arena itself.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError, first_line
from arena.executors.chunks import ChunkSizer, most_per_chunk

if TYPE_CHECKING:
    from arena.plugins import Registry
    from arena.tournament import MatchTask, Player, Setup
    from db.queries import MatchOutcome

#: Object store of a Ray started for one run: the setup and results are small.
OBJECT_STORE_BYTES = 100 * 1024 * 1024
#: Chunks in flight per CPU of the cluster: enough to keep every CPU busy while the driver stores.
IN_FLIGHT_PER_CPU = 2
#: A chunk is sent again at most this many times after its worker or node died.
MAX_RESENDS = 5
MAX_CHUNK = 32
#: Seconds to wait for the cluster's address to answer.
CONNECT_TIMEOUT = 10


# ---------------------------------------------------------------- on the workers

_players: dict[str, Player] = {}


def shipped_name(original: str) -> str:
    """The name a loose-file plugins directory travels under: one per directory, whatever its own name."""
    return "arena_plugins_" + hashlib.sha256(original.encode()).hexdigest()[:12]


def _shipped_dir(original: str) -> str:
    """Where the copy of a plugins directory shipped with the job (a Ray py_module) is on this node.

    Never the driver's path: a node of another machine does not have it, so a copy that did not
    arrive is an error here too, not a silent fallback that works only on the driver's machine.
    """
    name = shipped_name(original)
    for entry in sys.path:
        if "_ray_pkg_" in entry and (Path(entry) / name).is_dir():
            return str(Path(entry) / name)
    raise ArenaError(f"the loose-file plugins of {original} did not reach this Ray worker ({socket.gethostname()})")


def _player(setup: Setup, key: str) -> Player:
    """One Player per tournament per worker process, kept while the worker lives (Ray reuses workers)."""
    player = _players.get(key)
    if player is None:
        from arena.plugins import get_registry
        from arena.tournament import Player

        dirs = tuple(_shipped_dir(d) for d in setup.plugins_dirs)
        setup = replace(setup, plugins_dirs=dirs)
        player = _players[key] = Player(setup, get_registry(dirs))
        atexit.register(player.close)
    return player


def play_chunk(setup: Setup, key: str, chunk: list[MatchTask]) -> list[MatchOutcome]:
    player = _player(setup, key)
    return list(player.play_all(chunk))  # with --concurrent-matches, interleaved as in a local worker


# ---------------------------------------------------------------- on the driver


@dataclass
class RayExecutor:
    """Play on the Ray cluster at `address`, or on a Ray started for this run with `cpus` CPUs.

    Each `results` call connects to Ray (or starts it) and lets go at its end, unless it runs inside
    `held()`: then the first call's connection serves every later one until the block ends (an
    adaptive tournament plays its schedule in many parts: one Ray for the whole run, not one per part).
    """

    address: str | None = None
    cpus: int = 1
    parallel: bool = True
    _held: contextlib.ExitStack | None = field(default=None, init=False, repr=False)
    _joined: tuple[str, ...] | None = field(default=None, init=False, repr=False)  # the held connection's plugins

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Keep the connection the first `results` call makes until the end of the block."""
        with contextlib.ExitStack() as stack:
            self._held = stack
            try:
                yield
            finally:
                self._held, self._joined = None, None

    def results(self, setup: Setup, registry: Registry, tasks: Sequence[MatchTask]) -> Generator[MatchOutcome, None, None]:
        if not tasks:
            return
        ray = _import_ray()
        with contextlib.ExitStack() as own:
            self._join(ray, setup.plugins_dirs, self._held if self._held is not None else own)
            yield from self._send(ray, ray.remote(num_cpus=1, max_retries=2)(play_chunk), setup, tasks)

    def _join(self, ray: Any, plugins_dirs: tuple[str, ...], stack: contextlib.ExitStack) -> None:
        """Connect for this run unless the held connection (with these plugins) is still up; `stack` lets go of it."""
        if self._joined == plugins_dirs and ray.is_initialized():
            return
        # Ray uploads local directories only with the job (ray.init), then unpacks them once per node.
        staging = stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-ray-plugins-"))
        runtime_env = {"py_modules": [_stage(d, staging) for d in plugins_dirs]} if plugins_dirs else None
        if self._connect(ray, runtime_env):
            stack.callback(ray.shutdown)  # before the staged copies go (last in, first out)
        if stack is self._held:
            self._joined = plugins_dirs

    def _connect(self, ray: Any, runtime_env: dict[str, Any] | None) -> bool:
        """Connect (or start a local Ray); True when this run owns the Ray session and must shut it down."""
        if ray.is_initialized():
            if runtime_env:
                raise ArenaError("loose-file plugins travel only with a Ray session Arena starts (this process has one already)")
            return False
        options: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False, "runtime_env": runtime_env}
        try:
            with _own_signal_handlers(ray):
                if self.address:
                    _check_reachable(self.address)
                    ray.init(address=self.address, **options)
                else:
                    ray.init(num_cpus=self.cpus, object_store_memory=OBJECT_STORE_BYTES, include_dashboard=False,
                             _node_ip_address="127.0.0.1", **options)  # (no look for this machine's address: 8.8.8.8)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local Ray"
            raise ArenaError(f"cannot connect to Ray at {where}: {first_line(exc) or type(exc).__name__}") from None
        return True

    def _send(self, ray: Any, remote: Any, setup: Setup, tasks: Sequence[MatchTask]) -> Iterator[MatchOutcome]:
        from ray.exceptions import RayTaskError

        cpus = max(1, int(ray.cluster_resources().get("CPU", self.cpus)))
        key = hashlib.sha256(pickle.dumps(setup)).hexdigest()[:16]
        setup_ref = ray.put(setup)
        most = most_per_chunk(len(tasks), cpus, MAX_CHUNK)
        # Interleaved matches (--concurrent-matches) batch their agents' decisions across a chunk's matches: their
        # chunks keep the full size (their durations are the interleaved wall time, not a match's own).
        sizer = ChunkSizer(most, least=most if setup.concurrent > 1 else 1)
        position = 0  # the tasks before it went out, in schedule order
        again: list[list[MatchTask]] = []  # chunks whose worker or node died, to send again first
        resends: dict[int, int] = {}
        in_flight: dict[Any, list[MatchTask]] = {}
        limit = cpus * IN_FLIGHT_PER_CPU
        try:
            while position < len(tasks) or again or in_flight:
                while (position < len(tasks) or again) and len(in_flight) < limit:
                    if again:
                        chunk = again.pop()
                    else:
                        chunk = list(tasks[position : position + sizer.size()])
                        position += len(chunk)
                    in_flight[remote.remote(setup_ref, key, chunk)] = chunk
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in ready:
                    chunk = in_flight.pop(ref)
                    try:
                        outcomes = ray.get(ref)
                    except RayTaskError as exc:  # our code raised in the worker: a real error, not a cluster fault
                        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                        if isinstance(cause, ArenaError):
                            raise cause from None
                        raise ArenaError(f"a Ray task failed: {type(cause).__name__}: {first_line(cause)}") from None
                    except ray.exceptions.RayError as exc:  # the worker or its node died: play the chunk elsewhere
                        first = chunk[0].schedule_index
                        resends[first] = resends.get(first, 0) + 1
                        if resends[first] > MAX_RESENDS:
                            raise ArenaError(
                                f"matches from {first} failed on {MAX_RESENDS + 1} Ray workers ({type(exc).__name__}); "
                                "--resume the tournament when the cluster is healthy (or try --isolate)"
                            ) from None
                        again.append(chunk)
                        continue
                    sizer.add(outcomes)
                    yield from outcomes
        finally:  # stopped early (the caller closed us): a cluster that outlives this run plays nothing more of it
            for ref in in_flight:
                with contextlib.suppress(Exception):  # already finished, or its node is gone
                    ray.cancel(ref)


def _stage(original: str, staging: str) -> str:
    """A copy of a plugins directory under the name it travels by (see shipped_name)."""
    target = Path(staging) / shipped_name(original)
    shutil.copytree(original, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return str(target)


def check_address(address: str) -> None:
    """A --ray-address Ray could connect to: `auto`, HOST:PORT or ray://HOST:PORT, and for the last two something
    listening there; else ArenaError in one line (before a tournament is written)."""
    text = address.strip()
    if text == "auto":
        return
    target = text.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if "://" in target or not host or not port.isdecimal() or not 0 < int(port) < 65536:
        raise ArenaError(f"--ray-address takes HOST:PORT, ray://HOST:PORT or auto, not {address!r}")
    try:
        _check_reachable(target)
    except ConnectionError as exc:
        raise ArenaError(f"cannot connect to Ray at {address}: {exc}") from None


@contextlib.contextmanager
def _own_signal_handlers(ray: Any) -> Iterator[None]:
    """Keep this process's own SIGTERM and SIGINT handlers through ray.init, which sets its own (a SIGTERM then ends the
    process at once, stack dump and all): Ray's Python handler is not set meanwhile, and whatever its core set is
    replaced by ours again after. A server's queue worker has handlers that leave stopping to the server, which stops it
    between matches and lets its tournament go; a process with the default disposition gets Ray's."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kept = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    own = {signum: handler for signum, handler in kept.items() if callable(handler) and handler is not signal.default_int_handler}
    utils: Any = getattr(getattr(ray, "_private", None), "utils", None)
    setter = getattr(utils, "set_sigterm_handler", None) if signal.SIGTERM in own else None
    if setter is not None:
        utils.set_sigterm_handler = lambda handler: None  # (ray.init looks it up when it calls it)
    try:
        yield
    finally:
        if setter is not None:
            utils.set_sigterm_handler = setter
        for signum, handler in own.items():
            signal.signal(signum, handler)


def _check_reachable(address: str) -> None:
    """Fail at once on a HOST:PORT nobody listens on (Ray itself would retry its GCS for minutes)."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdecimal():
        return  # "auto", ray://...: Ray resolves those
    try:
        connection = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {address} ({exc.strerror or exc})") from None
    with connection:
        if not _speaks_grpc(connection):
            raise ConnectionError(f"{address} is no Ray head: what listens there does not speak gRPC (Ray's GCS port, "
                                  "6379 by default, is the address; Ray would try it for minutes)")  # fmt: skip


def _speaks_grpc(connection: socket.socket) -> bool:
    """Whether the server at the other end speaks HTTP/2, as every Ray server (gRPC) does: one opens each connection
    with a SETTINGS frame (its preface), answered here with ours. A plain TCP listener, a web server, a database
    say nothing of the kind within CONNECT_TIMEOUT."""
    try:
        connection.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(3) + b"\x04" + bytes(5))  # preface, empty SETTINGS
        header = b""
        while len(header) < 9:
            chunk = connection.recv(9 - len(header))
            if not chunk:
                return False
            header += chunk
    except OSError:
        return False
    return header[3] == 0x04  # the frame's type: SETTINGS


def _import_ray() -> Any:
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    try:
        import ray
    except ImportError:
        raise ArenaError("--executor ray needs Ray: pip install 'arena[ray]'") from None
    return ray
