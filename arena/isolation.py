"""Agents in their own processes, so the runner can kill one that hangs, crashes or eats memory.

Each seat of a worker gets an agent process, reused from match to match. The runner sends the
seat's view of the state (pickled) and waits at most the time per move plus a margin; an agent
that does not answer by then is killed (`timeout`); one that dies, segfaults or exceeds its memory
limit is reported as `agent_crashed`. A killed or dead process is replaced at the next match.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from arena.api import Agent, AgentInfo, Game, State
from arena.lifeline import bind_to_parent
from arena.match import AGENT_CRASHED, AGENT_ERROR, TIMEOUT, Forfeit
from arena.params import format_value

#: Seconds past the time per move before a silent agent is killed (pickling and scheduling take some).
KILL_MARGIN = 1.0
#: Seconds an agent in its own process (or an in-process agent that is not one of Arena's own, under a
#: watchdog) may take for one move when the tournament sets no time per move ($ARENA_MOVE_DEADLINE).
NO_LIMIT_DEADLINE = float(os.environ.get("ARENA_MOVE_DEADLINE", "60"))
#: Seconds a new agent process may take to start and build its agent.
START_DEADLINE = 60.0


def _limit_memory(megabytes: int | None) -> None:
    if megabytes is None:
        return
    import resource

    limit = megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _serve(conn: Connection, plugins_dirs: Sequence[str], game_spec: str, memory_limit: int | None) -> None:
    """The agent process: build agents on request and answer `act` for them."""
    bind_to_parent(os.getppid())  # the forkserver, which itself ends with the process that owns it
    from arena.agents import entry_from_json
    from arena.plugins import get_registry
    from arena.tournament import make_game

    registry = get_registry(plugins_dirs)  # before unpickling any state: loose-file plugin modules must exist
    base = make_game(registry, game_spec)
    games: dict[tuple[tuple[str, str], ...], Game] = {}
    _limit_memory(memory_limit)
    agent: Agent | None = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the owner closed the pipe, or died
            return
        kind = message[0]
        try:
            if kind == "new":
                _, entry_json, seat, seed, time_per_move, game_params = message
                if agent is not None:
                    agent.close()
                key = tuple(sorted(game_params.items()))
                if key not in games:  # the same game, with the seat parameters (decks) of this seating
                    games[key] = type(base)(**game_params)
                game = games[key]
                agent = entry_from_json(registry, entry_json, game).make(registry, game, seat, seed)
                agent.time_per_move = time_per_move
                conn.send(("ok", None))
            elif kind == "act":
                assert agent is not None
                conn.send(("action", agent.act(message[1])))
            elif kind == "close":
                if agent is not None:
                    agent.close()
                    agent = None
                conn.send(("ok", None))
        except MemoryError:
            # Over the memory limit: report it if there is still room to, and leave.
            try:
                conn.send(("crash", "MemoryError: over the memory limit"))
            finally:
                os._exit(70)
        except (BrokenPipeError, ConnectionResetError):  # the owner is gone (Ctrl-C, kill): leave without a word
            os._exit(0)
        except Exception as exc:
            try:
                conn.send(("error", f"{type(exc).__name__}: {exc}"))
            except OSError:  # the owner is gone
                os._exit(0)


class _Deadline(BaseException):
    """Raised into an in-process agent by the watchdog's alarm (a BaseException: agents' `except Exception` miss it)."""


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Deadline


def watch(agent: Agent, time_per_move: float | None) -> None:
    """A per-move watchdog for an agent in this process: a move that takes longer than the deadline (the time per
    move plus KILL_MARGIN, else NO_LIMIT_DEADLINE) is interrupted and forfeited (`timeout`). It uses SIGALRM,
    so only in a process's main thread (elsewhere the agent plays unwatched); --isolate is the hard boundary."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return
    deadline = (time_per_move + KILL_MARGIN) if time_per_move is not None else NO_LIMIT_DEADLINE
    inner = agent.act
    signal.signal(signal.SIGALRM, _alarm)

    def act(state: State) -> int:
        signal.setitimer(signal.ITIMER_REAL, deadline, 1.0)  # re-fires each second if the first is swallowed
        try:
            try:
                return inner(state)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Deadline:
            raise Forfeit(TIMEOUT, f"no answer within {deadline:g}s; the in-process watchdog stopped the agent") from None

    agent.act = act  # type: ignore[method-assign]


class AgentProcess:
    """One child process hosting one seat's agent; restarted after it is killed or dies."""

    def __init__(self, plugins_dirs: Sequence[str], game_spec: str, memory_limit: int | None) -> None:
        self.plugins_dirs = tuple(plugins_dirs)
        self.game_spec = game_spec
        self.memory_limit = memory_limit
        self.process: Any = None
        self.conn: Connection | None = None

    def _start(self) -> None:
        # forkserver: cheap starts, and no inherited database connections or threads.
        context = multiprocessing.get_context("forkserver")
        parent, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, self.plugins_dirs, self.game_spec, self.memory_limit), daemon=True
        )
        self.process.start()
        child.close()
        self.conn = parent

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None

    def _call(self, message: tuple[Any, ...], deadline: float, what: str) -> Any:
        if self.process is None or not self.process.is_alive():
            self.kill()
            self._start()
        assert self.conn is not None
        try:
            self.conn.send(message)
            ready = self.conn.poll(deadline)
        except (BrokenPipeError, EOFError, OSError):
            ready = True  # the reply read below reports the crash
        if not ready:
            self.kill()
            raise Forfeit(TIMEOUT, f"no answer to {what} within {deadline:g}s; agent process killed")
        try:
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            code = self.process.exitcode if self.process is not None else None
            self.process.join(1) if self.process is not None else None
            code = self.process.exitcode if self.process is not None else code
            self.kill()
            raise Forfeit(AGENT_CRASHED, f"agent process died during {what} ({_describe_exit(code)})") from None
        if kind == "crash":
            self.kill()
            raise Forfeit(AGENT_CRASHED, value)
        if kind == "error":
            raise Forfeit(AGENT_ERROR, value)
        return value

    def new_agent(self, entry_json: dict[str, Any], seat: int, seed: int, time_per_move: float | None,
                  game_params: dict[str, str]) -> None:  # fmt: skip
        self._call(("new", entry_json, seat, seed, time_per_move, game_params), START_DEADLINE, "agent start")

    def act(self, state: State, deadline: float) -> int:
        return self._call(("act", state), deadline, "act")


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "exit code unknown"
    if code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class IsolatedAgent(Agent):
    """The runner's side of an agent that lives in an AgentProcess."""

    info = AgentInfo(id="isolated", description="proxy for an agent in its own process")

    def __init__(self, process: AgentProcess, game: Game, player: int, seed: int, entry_json: dict[str, Any],
                 time_per_move: float | None) -> None:  # fmt: skip
        super().__init__(game, player, seed)
        self.process = process
        self.deadline = (time_per_move + KILL_MARGIN) if time_per_move is not None else NO_LIMIT_DEADLINE
        self.start_error: Forfeit | None = None
        try:
            game_params = {name: format_value(value) for name, value in game.params.items()}
            process.new_agent(entry_json, player, seed, time_per_move, game_params)
        except Forfeit as exc:  # reported at the agent's first move, so the match records it
            self.start_error = exc

    def act(self, state: State) -> int:
        if self.start_error is not None:
            raise self.start_error
        return self.process.act(state, self.deadline)
