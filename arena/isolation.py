"""Agents in their own processes, so the runner can kill one that hangs, crashes or eats memory.

Each seat of a worker gets an agent process, reused from match to match. The runner sends the
seat's view of the state (pickled) and waits at most the time per move plus a margin; an agent
that does not answer by then is killed (`timeout`); one that dies, segfaults or exceeds its memory
limit is reported as `agent_crashed`. A killed or dead process is replaced at the next match.

With `--concurrent-matches` each agent of the tournament gets one process instead, hosting that
agent's seats in every running match (agents are named by a handle in each message; entries that
differ only in their seed share one). Agents that
answer in batches (`Agent.batch_key`) cross the boundary once per step: the batch's views in one
message, its actions in one reply, answered inside the process by the agent's own `act_batch`. A
process killed (timeout) or dead (crash) forfeits every seat it played: those of the batch with the
reason, the others (`agent_crashed`) at their next move.
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.util
import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from arena.api import Agent, AgentInfo, Game, State
from arena.errors import ArenaError
from arena.interleave import grouped_act
from arena.lifeline import bind_to_parent
from arena.match import AGENT_CRASHED, AGENT_ERROR, TIMEOUT, Forfeit, unmade
from arena.params import format_value

#: Seconds past the time per move before a silent agent is killed (pickling and scheduling take some).
KILL_MARGIN = 1.0
#: Seconds an agent in its own process (or an in-process agent that is not one of Arena's own, under a
#: watchdog) may take for one move when the tournament sets no time per move ($ARENA_MOVE_DEADLINE).
NO_LIMIT_DEADLINE = float(os.environ.get("ARENA_MOVE_DEADLINE", "60"))
#: Seconds a new agent process may take to start and build its agent.
START_DEADLINE = 60.0
#: What the forkserver imports once, so that every agent process is forked with it loaded instead of importing it
#: itself (about 0.7 s of CPU per process, and a tournament starts one per seat or per agent). Each process still
#: re-runs the imports of the main script (multiprocessing's `__main__` preload does not work for scripts in
#: Python 3.11): for `arena`, the CLI module, preloaded here too.
PRELOAD = ["arena.isolation", "arena.agents", "arena.plugins", "arena.tournament", "arena.cli"]


def forkserver(preload: Sequence[str] = ()) -> Any:
    """multiprocessing's forkserver context, its server preloading PRELOAD and `preload` (the list is read when the
    server starts, with the first process it makes; one server per process)."""
    context = multiprocessing.get_context("forkserver")
    _forget_unreachable_forkserver()
    context.set_forkserver_preload([*PRELOAD, *preload])
    return context


def _forget_unreachable_forkserver() -> None:
    """A forkserver whose socket is gone can start no process again (a /tmp cleaner under a long-running `arena serve`
    removed multiprocessing's pymp-* folder): forget it, so that the next start makes a new one. The old server is
    left running, with the agent processes it made and their matches, and ends with this process."""
    server: Any = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    with server._lock:
        address = server._forkserver_address
        if server._forkserver_pid is None or not isinstance(address, str) or os.path.exists(address):
            return
        if multiprocessing.util.is_abstract_socket_namespace(address):
            return
        os.makedirs(multiprocessing.util.get_temp_dir(), exist_ok=True)  # the folder new sockets are made in
        server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None


#: --memory-limit's range in megabytes: below 50 Python itself does not start; above a terabyte it limits nothing.
MEMORY_LIMIT_RANGE = (50, 1 << 20)


def _limit_memory(megabytes: int | None) -> None:
    if megabytes is None:
        return
    import resource

    limit = megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


def _serve(conn: Connection, plugins_dirs: Sequence[str], game_spec: str, memory_limit: int | None) -> None:
    """The agent process: build agents on request (each named by the runner's handle) and answer for them."""
    bind_to_parent(os.getppid())  # the forkserver, which itself ends with the process that owns it
    from arena.agents import check_as_stored, entry_from_json, installed_version
    from arena.plugins import get_registry
    from arena.tournament import make_game

    registry = get_registry(plugins_dirs)  # before unpickling any state: loose-file plugin modules must exist
    base = make_game(registry, game_spec)
    games: dict[tuple[tuple[str, str], ...], Game] = {}
    _limit_memory(memory_limit)
    agents: dict[int, Agent] = {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the owner closed the pipe, or died
            return
        kind = message[0]
        try:
            if kind == "act":
                conn.send(("action", agents[message[1]].act(message[2])))
            elif kind == "act_batch":
                conn.send(("actions", _answer_batch([agents[handle] for handle in message[1]], message[2])))
            elif kind == "new":
                _, handle, entry_json, seat, seed, time_per_move, game_params = message
                key = tuple(sorted(game_params.items()))
                if key not in games:  # the same game, with the seat parameters (decks) of this seating
                    games[key] = type(base)(**game_params)
                game = games[key]
                entry = entry_from_json(registry, entry_json, game)
                agent = entry.make(registry, game, seat, seed)
                try:
                    check_as_stored(entry, entry_json, installed_version(registry, entry))  # after: the files it read
                except ArenaError:
                    agent.close()
                    raise
                agent.time_per_move = time_per_move
                agents[handle] = agent
                conn.send(("ok", agent.batch_key() is not None))
            elif kind == "close":  # no reply: the runner does not wait for it
                closing = agents.pop(message[1], None)
                if closing is not None:
                    closing.close()
        except MemoryError:
            # Over the memory limit: report it if there is still room to, and leave.
            try:
                conn.send(("crash", "MemoryError: over the memory limit"))
            finally:
                os._exit(70)
        except (BrokenPipeError, ConnectionResetError):  # the owner is gone (Ctrl-C, kill): leave without a word
            os._exit(0)
        except Exception as exc:
            if kind == "close":
                continue
            try:
                if kind == "new" and isinstance(exc, ArenaError):  # the agent cannot be made as configured (a file gone)
                    conn.send(("refused", str(exc)))
                elif kind == "new":  # in the words of the runner's own process (arena.tournament.Player._made)
                    conn.send(("error", unmade(message[3], exc)))
                else:
                    conn.send(("error", f"{type(exc).__name__}: {exc}"))
            except OSError:  # the owner is gone
                os._exit(0)


@dataclass(frozen=True)
class Failed:
    """A row of a batch whose agent raised in its process (its text), answered in place of an action."""

    detail: str


def _answer_batch(agents: Sequence[Agent], views: Sequence[State]) -> list[Any]:
    """The answers of a batch, by the agents' own `act_batch` per batch key (as the runner groups them in its own
    process: arena.interleave.grouped_act); a group whose `act_batch` raises gets its error in each of its rows
    (`Failed`: text crosses the pipe where an exception object might not)."""
    answers: list[Any] = [None] * len(agents)
    for members, actions, _ in grouped_act(agents, views, fatal=(MemoryError,)):
        for i, action in zip(members, actions):
            answers[i] = Failed(f"{type(action).__name__}: {action}") if isinstance(action, Exception) else action
    return answers


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

    def __init__(self, plugins_dirs: Sequence[str], game_spec: str, memory_limit: int | None,
                 preload: Sequence[str] = ()) -> None:  # fmt: skip
        self.plugins_dirs = tuple(plugins_dirs)
        self.preload = list(preload)  # the installed plugins' modules (Registry.installed_modules)
        self.game_spec = game_spec
        self.memory_limit = memory_limit
        self.process: Any = None
        self.conn: Connection | None = None
        self.generation = 0  # how many processes were started: an agent made in an earlier one is gone
        self.handles = itertools.count()
        self.lost = "its agent process was killed"  # why the agents of the last process are gone

    def start(self) -> None:
        """Start the process if it is not running, without waiting for it: processes started one after the other
        this way boot side by side, where the first call to each would otherwise wait for its boot in turn."""
        if self.process is None or not self.process.is_alive():
            self.kill()
            self._start()

    def _start(self) -> None:
        # forkserver: cheap starts, and no inherited database connections or threads.
        context = forkserver(self.preload)
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, self.plugins_dirs, self.game_spec, self.memory_limit), daemon=True)
        try:
            process.start()
        finally:
            child.close()
        self.process, self.conn = process, parent
        self.generation += 1

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None

    def _call(self, message: tuple[Any, ...], deadline: float, what: str) -> Any:
        self.start()
        assert self.conn is not None
        try:
            self.conn.send(message)
            ready = self.conn.poll(deadline)
        except (BrokenPipeError, EOFError, OSError):
            ready = True  # the reply read below reports the crash
        if not ready:
            why = f"no answer to {what} within {deadline:g}s"
            self._lose(TIMEOUT, f"{why}; agent process killed", f"its agent process was killed: {why}")
        try:
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            code = self.process.exitcode if self.process is not None else None
            self.process.join(1) if self.process is not None else None
            code = self.process.exitcode if self.process is not None else code
            why = f"agent process died during {what} ({_describe_exit(code)})"
            self._lose(AGENT_CRASHED, why, f"its {why}")
        if kind == "crash":
            self._lose(AGENT_CRASHED, value, f"its agent process crashed: {value}")
        if kind == "error":
            raise Forfeit(AGENT_ERROR, value)
        if kind == "refused":
            raise ArenaError(value)
        return value

    def _lose(self, reason: str, detail: str, lost: str) -> NoReturn:
        """End the process: this call forfeits with `detail`, and the agents it hosted report `lost` when next asked."""
        self.kill()
        self.lost = lost
        raise Forfeit(reason, detail) from None

    def new_agent(self, entry_json: dict[str, Any], seat: int, seed: int, time_per_move: float | None,
                  game_params: dict[str, str]) -> tuple[int, int, bool]:  # fmt: skip
        """Make an agent in the process: its handle, the process generation it lives in, and whether it answers in batches."""
        handle = next(self.handles)
        batched = self._call(("new", handle, entry_json, seat, seed, time_per_move, game_params), START_DEADLINE, "agent start")
        return handle, self.generation, bool(batched)

    def alive(self, generation: int) -> bool:
        """Is the process an agent was made in (its `generation`) still the running one?"""
        return generation == self.generation and self.process is not None and self.process.is_alive()

    def act(self, handle: int, state: State, deadline: float) -> int:
        return self._call(("act", handle, state), deadline, "act")  # type: ignore[no-any-return]

    def act_batch(self, handles: Sequence[int], states: Sequence[State], deadline: float) -> list[Any]:
        """One message for a batch of decisions, one reply with their answers (`Failed` for a row whose agent raised)."""
        return self._call(("act_batch", list(handles), list(states)), deadline, f"a batch of {len(handles)} decisions")  # type: ignore[no-any-return]

    def forget(self, handle: int, generation: int) -> None:
        """Close an agent in the process (no reply awaited); nothing to do when its process is gone."""
        if not self.alive(generation):
            return
        try:
            self.conn.send(("close", handle))  # type: ignore[union-attr]
        except (BrokenPipeError, EOFError, OSError):  # dead: the next call reports and replaces it
            pass


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
        self.time_limit = time_per_move
        self.deadline = (time_per_move + KILL_MARGIN) if time_per_move is not None else NO_LIMIT_DEADLINE
        self.start_error: Forfeit | None = None
        self.handle, self.generation, self.batched = -1, -1, False
        try:
            game_params = {name: format_value(value) for name, value in game.params.items()}
            self.handle, self.generation, self.batched = process.new_agent(entry_json, player, seed, time_per_move, game_params)
        except Forfeit as exc:  # reported at the agent's first move, so the match records it
            self.start_error = exc

    def _gone(self) -> Forfeit | None:
        """Why this agent cannot answer (it never started, or its process was replaced since), or None."""
        if self.start_error is not None:
            return self.start_error
        process = self.process
        if process.alive(self.generation):
            return None
        if process.generation == self.generation and process.process is not None:  # died by itself, between moves
            return Forfeit(AGENT_CRASHED, f"its agent process died ({_describe_exit(process.process.exitcode)})")
        return Forfeit(AGENT_CRASHED, f"{process.lost} (during another match's move)")

    def act(self, state: State) -> int:
        gone = self._gone()
        if gone is not None:
            raise gone
        return self.process.act(self.handle, state, self.deadline)

    def batch_key(self) -> Hashable | None:
        """Agents of one process that answer in batches there are asked together: one message per step."""
        return ("isolated", id(self.process)) if self.batched and self.start_error is None else None

    @classmethod
    def act_batch(cls, agents: Sequence[Agent], views: Sequence[State]) -> list[Any]:
        """The batch's views to the process in one message, its actions back in one reply. A row whose agent is
        gone, or whose agent's `act_batch` failed in the process, is a Forfeit (the runner raises it in that match);
        a timeout or a crash of the process raises, forfeiting the whole batch with the reason."""
        isolated: list[IsolatedAgent] = list(agents)  # type: ignore[arg-type]
        answers: list[Any] = [agent._gone() for agent in isolated]
        asked = [row for row, gone in enumerate(answers) if gone is None]
        if asked:
            first = isolated[asked[0]]
            deadline = (first.time_limit * len(asked) + KILL_MARGIN) if first.time_limit is not None else NO_LIMIT_DEADLINE
            replies = first.process.act_batch([isolated[row].handle for row in asked], [views[row] for row in asked], deadline)
            for row, reply in zip(asked, replies):
                answers[row] = Forfeit(AGENT_ERROR, reply.detail) if isinstance(reply, Failed) else reply
        return answers

    def close(self) -> None:
        if self.start_error is None:
            self.process.forget(self.handle, self.generation)
