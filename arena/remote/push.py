"""Transport 1, push: agent type `http` POSTs the protocol's messages to a bot's URL (`{url}/start`, `/act`, `/end`).

One kept-alive connection per bot URL and thread (arena.remote.connection), reused match after match.
The connect and read timeouts come from the move's deadline (time per move + network allowance).
Faults are typed: no answer in time is `timeout`; an answer that is not `{"action": <integer>}` (or not
HTTP at all) is `bad_reply`; a refused connection, an HTTP error status or a dropped socket is
`agent_disconnected`.
"""

from __future__ import annotations

import atexit
import time
from typing import Any

from arena import hookimpl
from arena.api import Agent, AgentInfo, Game, State
from arena.errors import ArenaError
from arena.match import (
    AGENT_DISCONNECTED,
    AGENT_ERROR,
    BAD_REPLY,
    TIMEOUT,
    ArenaFault,
    Forfeit,
    MatchResult,
)
from arena.params import MAX_TIME_PER_MOVE, Param
from arena.remote import protocol
from arena.remote.connection import (
    ConnectionFailed,
    Disconnected,
    NotHttp,
    close_all,
    connection_for,
    url_problem,
)

#: Seconds for the `end` message, which changes nothing (its errors are ignored).
END_TIMEOUT = 1.0
#: Seconds at least for the answer to `start`, which is no move's time (a bot may get ready then: load a model).
START_TIMEOUT = 5.0

atexit.register(close_all)


def check_remote_game(game: Game) -> None:
    """Refuse a game whose states offer no JSON view: a remote agent could not be told the position."""
    state = game.new_initial_state(0)
    try:
        state.to_json(0)
    except NotImplementedError:
        raise ArenaError(f"game '{game.info.id}' offers no JSON view (State.to_json), so remote agents cannot play it") from None


class RemoteAgent(Agent):
    """What push and pull agents share: the deadline, the messages, the round-trip bookkeeping."""

    remote = True

    def __init__(self, game: Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.seq = 0
        self.last_rtt: float | None = None
        self.best_rtt: float | None = None  # the fastest exchange seen: the link's own round trip
        self.round_trips: list[float] = []  # seconds, one per answered move (arena check-agent reads them)
        self.network_trips: list[float] = []  # the same less the think time the bot reported (all of it when it did not)
        self.started = False  # `start` sent

    @classmethod
    def check_game(cls, game: Game, params: dict[str, Any]) -> None:
        check_remote_game(game)

    def begin(self) -> None:
        """Send the match's `start`, once. The runner calls it before the first move (arena.match), so that neither
        the exchange nor a wait for the bot counts as that move's time; `act` calls it where nothing did."""
        if not self.started:
            self.started = True
            self._start()

    def _start(self) -> None:
        raise NotImplementedError

    def deadline(self) -> float:
        """Seconds this move may take, round trip included."""
        if self.time_per_move is None:
            return float(self.params["timeout"])
        return self.time_per_move + self.network_allowance

    def deadline_ms(self) -> float:
        return round(self.deadline() * 1000.0, 3)

    def act_message(self, state: State) -> dict[str, Any]:
        self.seq += 1
        last = None if self.last_rtt is None else round(self.last_rtt * 1000.0, 3)
        try:
            return protocol.act_message(self.game, self.match_id, self.seq, self.player, state, self.deadline_ms(), last)
        except Exception as exc:  # the game's JSON view failed: Arena's fault, never the agent's
            raise ArenaFault(f"could not encode the position for a remote agent: {type(exc).__name__}: {exc}") from exc

    def record_round_trip(self, elapsed: float, think: float | None) -> None:
        """Count this exchange's network time: the elapsed time minus the agent's own think time when it says
        (and is plausible), else the fastest exchange seen so far (the link's round trip), at most `elapsed`."""
        self.last_rtt = elapsed
        self.round_trips.append(elapsed)
        network = elapsed - think if think is not None and think <= elapsed else None  # what the bot's own time leaves
        self.network_trips.append(elapsed if network is None else network)
        if self.best_rtt is None or elapsed < self.best_rtt:
            self.best_rtt = elapsed
        self.network_time += min(elapsed, self.best_rtt) if network is None else network

    def answer(self, body: bytes | str, elapsed: float) -> int:
        if elapsed > self.deadline():
            raise Forfeit(TIMEOUT, f"seat {self.player} answered after {elapsed:.3f}s, limit {self.deadline():g}s")
        try:
            action, think = protocol.parse_answer(body)
        except protocol.BadReply as exc:
            raise Forfeit(BAD_REPLY, f"seat {self.player}: {exc}") from None
        except protocol.BotError as exc:
            raise Forfeit(AGENT_ERROR, f"seat {self.player}: the bot cannot move: {exc}") from None
        self.record_round_trip(elapsed, think)
        return action


class HttpAgent(RemoteAgent):
    """A bot elsewhere that Arena calls over HTTP."""

    info = AgentInfo(
        id="http", version="1", description="a remote bot answering Arena's JSON protocol over HTTP (push)",
        params=(
            Param("url", "", "the bot's base URL: Arena POSTs to {url}/start, {url}/act and {url}/end"),
            Param("timeout", 30.0, "seconds per move when the match sets no time per move", min=0.001, max=MAX_TIME_PER_MOVE),
        ),
    )  # fmt: skip
    url_param = "url"

    def __init__(self, game: Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.url = self.params["url"].rstrip("/")
        self.start_status: int | None = None  # the HTTP status of its /start answer (arena check-agent reports others than 2xx)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        url = str(params.get("url", ""))
        problem = url_problem(url)
        if problem is not None:
            raise ArenaError(f"agent 'http' needs url=http://HOST:PORT (got {url!r}: {problem})")

    @classmethod
    def check_game(cls, game: Game, params: dict[str, Any]) -> None:
        cls.check_params(params)
        super().check_game(game, params)

    def _post(self, path: str, message: dict[str, Any], deadline: float) -> tuple[int, bytes, float]:
        body = protocol.encode(message)
        start = time.perf_counter()
        try:
            status, answer = connection_for(self.url).post(path, body, deadline)
        except ConnectionFailed as exc:
            raise Forfeit(AGENT_DISCONNECTED, f"seat {self.player}: {path}: cannot connect: {exc}") from None
        except TimeoutError:
            raise Forfeit(TIMEOUT, f"seat {self.player}: no answer to {path} within {deadline:g}s") from None
        except NotHttp as exc:
            raise Forfeit(BAD_REPLY, f"seat {self.player}: {path}: {exc}") from None
        except Disconnected as exc:
            raise Forfeit(AGENT_DISCONNECTED, f"seat {self.player}: {path}: {exc}") from None
        return status, answer, time.perf_counter() - start

    def _start(self) -> None:
        """Send `start` (its answer is ignored, but the connection must work); it also measures the link."""
        message = protocol.start_message(self.game, self.match_id, self.player, self.deadline_ms(), self.seed)
        self.start_status, _answer, elapsed = self._post("/start", message, max(self.deadline(), START_TIMEOUT))
        self.best_rtt = elapsed

    def act(self, state: State) -> int:
        self.begin()
        message = self.act_message(state)
        status, answer, elapsed = self._post("/act", message, self.deadline())
        if 300 <= status < 400:
            raise Forfeit(BAD_REPLY, f"seat {self.player}: /act answered HTTP {status}, a redirect (Arena follows none)")
        if status >= 400:
            raise Forfeit(AGENT_DISCONNECTED, f"seat {self.player}: /act answered HTTP {status}")
        return self.answer(answer, elapsed)

    def end(self, result: MatchResult) -> None:
        if not self.started:
            return
        try:
            connection_for(self.url).post("/end", protocol.encode(protocol.end_message(self.match_id, self.player, result)),
                                          END_TIMEOUT)  # fmt: skip
        except (OSError, ValueError, ArenaFault):  # the connection's faults, or a message not sent; `end` changes nothing
            pass


@hookimpl
def register_agents(register: Any) -> None:
    register(HttpAgent)
