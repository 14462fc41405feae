"""Transport 2, pull: agent type `pull` plays a seat through a bot connected to `arena serve` (arena.remote.hub).

The bot has no open port: it connects out to the server's WebSocket and says which agent name it
plays as; a tournament seats it as `pull:name=NAME`. This process talks to the server's hub over a
local relay socket (one kept-alive connection per process and thread, lines of JSON, Nagle off). The
faults are those of the push transport; a relay that fails or a server that stops is Arena's fault
(`ArenaFault`): the match is not scored, and is played again when the tournament resumes.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from typing import Any, ClassVar

from arena import hookimpl
from arena.api import AgentInfo, Game, State
from arena.errors import ArenaError
from arena.match import (
    AGENT_DISCONNECTED,
    ArenaFault,
    Forfeit,
    MatchResult,
    ServerStopping,
)
from arena.params import MAX_TIME_PER_MOVE, Param, check_name
from arena.remote import protocol
from arena.remote.hub import HUB_ENV, SERVER_STOPPING
from arena.remote.push import RemoteAgent

#: Seconds the relay may take beyond the move's deadline before Arena counts itself at fault. The hub answers by the
#: deadline and a server that died closes the relay at once, so this only waits out a server that is alive but not
#: running: a loaded or paused machine (this project's CI machine has stalled for 24 s). 10 s failed a tournament there.
RELAY_GRACE = 60.0


class Relay:
    """This process's line-JSON connection to the server's hub."""

    def __init__(self, address: str) -> None:
        where, _, secret = address.partition(" ")
        host, _, port = where.rpartition(":")
        try:
            self.sock = socket.create_connection((host, int(port)), timeout=10.0)
        except (OSError, ValueError) as exc:
            raise ArenaFault(f"cannot reach the server's bot hub at {where}: {exc}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")
        self._send({"secret": secret})

    def _send(self, data: dict[str, Any]) -> None:
        self.sock.sendall(protocol.encode(data) + b"\n")

    def request(self, data: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            self.sock.settimeout(timeout)
            self._send(data)
            line = self.file.readline()
        except OSError as exc:
            raise ArenaFault(f"the server's bot hub did not answer: {type(exc).__name__}: {exc}") from None
        if not line:
            raise ArenaFault("the server's bot hub closed the relay")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        self.file.close()
        self.sock.close()


_relays: dict[int, Relay] = {}
_relays_lock = threading.Lock()


def relay() -> Relay:
    key = threading.get_ident()
    with _relays_lock:
        found = _relays.get(key)
    if found is None:
        address = os.environ.get(HUB_ENV)
        if not address:
            raise ArenaFault("no bot hub: pull agents play only in tournaments of `arena serve`")
        found = Relay(address)
        with _relays_lock:
            _relays[key] = found
    return found


def drop_relay() -> None:
    with _relays_lock:
        found = _relays.pop(threading.get_ident(), None)
    if found is not None:
        found.close()


class PullAgent(RemoteAgent):
    """A bot connected to this server under `name`."""

    info = AgentInfo(
        id="pull", version="1", description="a bot connected to `arena serve` over its WebSocket (pull), by name",
        params=(
            Param("name", "", "the agent name the bot announced in its hello (its bot token's name)"),
            Param("timeout", 30.0, "seconds per move when the match sets no time per move", min=0.001, max=MAX_TIME_PER_MOVE),
            Param("wait", 10.0, "seconds a match waits at its start for a bot of that name to be connected", min=0.0,
                  max=MAX_TIME_PER_MOVE),
        ),
    )  # fmt: skip
    #: Where it plays, said when it is asked to play elsewhere (no hub in this process).
    plays_where: ClassVar[str] = ("plays only in tournaments submitted to `arena serve`, where its bot connects (use "
                                  "http:url=... to call a bot that listens)")  # fmt: skip

    def __init__(self, game: Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.name = str(self.params["name"])

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        name = str(params.get("name", ""))
        if not name or any(ch.isspace() for ch in name):
            raise ArenaError(f"agent '{cls.info.id}' needs name=NAME, the name it connects as (got {name!r})")
        # A bot announces its token's name, which passes check_name; other names (`browser:bob`, the hub's name of
        # bob's play page) would let a seat take a person's page over, and no bot could ever answer to them.
        check_name(name, f"agent '{cls.info.id}': name=NAME, the name of a bot token,")

    @classmethod
    def check_game(cls, game: Game, params: dict[str, Any]) -> None:
        cls.check_params(params)
        if not os.environ.get(HUB_ENV):
            raise ArenaError(f"agent '{cls.info.id}' {cls.plays_where}")
        super().check_game(game, params)

    def _call(self, op: str, message: dict[str, Any], deadline: float) -> tuple[dict[str, Any], float]:
        start = time.perf_counter()
        try:
            reply = relay().request({"op": op, "agent": self.name, "message": message, "deadline": deadline},
                                    deadline + RELAY_GRACE)  # fmt: skip
        except ArenaFault:
            drop_relay()
            raise
        elapsed = time.perf_counter() - start
        fault = reply.get("fault")
        if fault == SERVER_STOPPING:
            raise ServerStopping("the server is stopping: the match is played again later")
        if fault is not None:
            raise Forfeit(str(fault), f"seat {self.player}: {reply.get('detail', fault)}")
        return reply, elapsed

    def _start(self) -> None:
        """Send `start`: the hub waits up to `wait` seconds for a bot of this name to be connected."""
        message = protocol.start_message(self.game, self.match_id, self.player, self.deadline_ms(), self.seed)
        self._call("start", message, float(self.params["wait"]))

    def act(self, state: State) -> int:
        self.begin()
        reply, elapsed = self._call("act", self.act_message(state), self.deadline())
        if "answer" not in reply:
            raise Forfeit(AGENT_DISCONNECTED, f"seat {self.player}: the hub answered {reply!r}")
        return self.answer(reply["answer"], elapsed)

    def end(self, result: MatchResult) -> None:
        if not self.started:
            return
        try:
            self._call("end", protocol.end_message(self.match_id, self.player, result), 1.0)
        except (ArenaFault, Forfeit):
            pass


@hookimpl
def register_agents(register: Any) -> None:
    register(PullAgent)
