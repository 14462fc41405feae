"""`arena connect`: serve any Arena agent to a remote `arena serve` as a pull bot (it connects out: NAT and firewalls are fine).

It says hello with a bot token, then for every seat the server gives it makes the agent (the spec's type
and parameters, seeded from the match id), rebuilds each position it is sent with the game's
`Game.state_from_json` and answers with the agent's move and its own think time. A dropped connection is
made again (a pending act comes back); a refused hello ends it with the server's reason.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.agents import AgentEntry, build_entry
from arena.api import Agent, Game
from arena.errors import ArenaError
from arena.params import parse_spec
from arena.plugins import Registry
from arena.remote.protocol import PROTOCOL

#: Seconds between attempts to connect again, doubling up to the last.
RETRY = (0.5, 1.0, 2.0, 5.0)
#: Of a move's deadline, what the agent may think (the rest is for the round trip).
THINK_SHARE = 0.8


class Refused(ArenaError):
    """The server refused the hello (bad token, wrong name): trying again will not help."""


@dataclass
class Seat:
    game: Game
    agent: Agent


def websocket_url(server: str) -> str:
    """`http://host:port` (or `ws://...`) -> `ws://host:port/api/v1/bots/connect`."""
    base = server.rstrip("/")
    if base.startswith("http"):
        base = "ws" + base[4:]
    if not base.startswith(("ws://", "wss://")):
        raise ArenaError(f"--server must be http(s)://HOST:PORT or ws(s)://HOST:PORT, got {server!r}")
    return base + "/api/v1/bots/connect"


class Connector:
    """Plays the seats one connection receives: `handle(text)` returns the answer to send, or None."""

    def __init__(self, registry: Registry, spec: str) -> None:
        self.registry = registry
        self.spec = parse_spec(spec)
        if self.spec.id not in registry.agents:
            raise ArenaError(f"unknown agent type '{self.spec.id}' (types: {', '.join(sorted(registry.agents))})")
        self.seats: dict[tuple[str, int], Seat] = {}

    def _seat(self, message: dict[str, Any]) -> Seat:
        key = (message["match_id"], message["seat"])
        seat = self.seats.get(key)
        if seat is None:
            described = message["game"]
            game_cls = self.registry.game_class(described["id"])
            if game_cls.info.version != described["version"]:
                raise ArenaError(f"game '{described['id']}' is version {described['version']} on the server, "
                                 f"{game_cls.info.version} here: its moves may mean other things")  # fmt: skip
            game = game_cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in described["params"].items()})
            entry: AgentEntry = build_entry(self.registry, str(self.spec), self.spec.id, dict(self.spec.params), game)
            seed = int.from_bytes(hashlib.sha256(message["match_id"].encode()).digest()[:8], "big")
            seat = self.seats[key] = Seat(game, entry.make(self.registry, game, message["seat"], seed))
        return seat

    def handle(self, text: str) -> str | None:
        message = json.loads(text)
        kind = message.get("type")
        if kind == "start":
            self._seat(message)
        elif kind == "act":
            seat = self._seat(message)
            deadline = message.get("deadline_ms")
            seat.agent.time_per_move = None if deadline is None else deadline / 1000.0 * THINK_SHARE
            state = seat.game.state_from_json(message["state"], message["seat"])
            start = time.perf_counter()
            action = seat.agent.act(state)
            think_ms = (time.perf_counter() - start) * 1000.0
            return json.dumps({"action": int(action), "match_id": message["match_id"], "seq": message["seq"],
                               "think_ms": round(think_ms, 3)})  # fmt: skip
        elif kind == "end":
            ended = self.seats.pop((message["match_id"], message["seat"]), None)
            if ended is not None:
                ended.agent.close()
        return None


def serve(registry: Registry, server: str, token: str, spec: str, say: Callable[[str], None],
          once: bool = False) -> None:  # fmt: skip
    """Connect, play, and connect again when the connection drops (until refused, or after one connection if `once`)."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
    from websockets.sync.client import connect

    url = websocket_url(server)
    connector = Connector(registry, spec)
    attempt = 0
    while True:
        try:
            with connect(url, open_timeout=30, max_size=2**24) as socket:
                socket.send(json.dumps({"type": "hello", "protocol": PROTOCOL, "token": token}))
                welcome = json.loads(socket.recv(30))
                if welcome.get("type") != "welcome":
                    raise Refused(f"the server refused the bot: {welcome.get('error', welcome)}")
                attempt = 0
                say(f"connected to {url} as {welcome['agent']}, playing {spec}")
                for text in socket:
                    answer = connector.handle(text if isinstance(text, str) else text.decode())
                    if answer is not None:
                        socket.send(answer)
        except InvalidURI as exc:
            raise ArenaError(f"--server: {exc}") from None
        except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as exc:
            if once:
                raise ArenaError(f"connection to {url} lost: {exc}") from None
            wait = RETRY[min(attempt, len(RETRY) - 1)]
            attempt += 1
            say(f"connection to {url} lost ({type(exc).__name__}: {exc}); trying again in {wait:g} s")
            time.sleep(wait)
