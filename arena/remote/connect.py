"""`arena connect`: serve any Arena agent to a remote `arena serve` as a pull bot (it connects out: NAT and firewalls are fine).

It says hello with a bot token, then for every seat the server gives it makes the agent (the spec's type
and parameters, seeded from the match id), rebuilds each position it is sent with the game's
`Game.state_from_json` and answers with the agent's move and its own think time. A dropped connection is
made again (a pending act comes back); a refused hello ends it with the server's reason.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import urlsplit

from arena.agents import AgentEntry, build_entry, validated_alone
from arena.api import Agent, Game, State
from arena.errors import ArenaError
from arena.params import parse_spec
from arena.plugins import Registry
from arena.remote.protocol import PROTOCOL
from arena.seeding import derive_seed

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
    #: Samples what the seat may not see when a hidden-information position is rebuilt (seeded from the match).
    rng: random.Random

    def rebuild(self, data: dict[str, Any], seat: int) -> State:
        """The position of an act's `state`: for hidden information a determinisation sampled from `rng`."""
        if self.game.info.perfect_information:
            return self.game.state_from_json(data, seat)
        return self.game.state_from_json(data, seat, rng=self.rng)  # type: ignore[call-arg]


def server_url(server: str) -> str:
    """`http://host:port` (or `ws://...`, `https`, `wss`) as http(s)://host:port, no trailing slash; a URL that names no
    host, or a port outside 1-65535, is refused here (not by a traceback at the first connection)."""
    base = server.rstrip("/")
    if base.startswith("ws"):
        base = "http" + base[2:]
    expected = f"--server must be http(s)://HOST:PORT or ws(s)://HOST:PORT, got {server!r}"
    if not base.startswith(("http://", "https://")):
        raise ArenaError(expected)
    parts = urlsplit(base)
    try:
        port = parts.port
    except ValueError:  # not a number, or out of 0-65535
        port = -1
    if not parts.hostname or port is not None and not 1 <= port <= 65535:
        raise ArenaError(f"{expected} (a host, and a port from 1 to 65535)")
    return base


def websocket_url(server: str) -> str:
    """`http://host:port` (or `ws://...`) -> `ws://host:port/api/v1/bots/connect` (server_url's checks)."""
    return "ws" + server_url(server)[4:] + "/api/v1/bots/connect"


class Connector:
    """Plays the seats one connection receives: `handle(text)` returns the answer to send, or None."""

    def __init__(self, registry: Registry, spec: str, say: Callable[[str], None] = lambda _line: None) -> None:
        self.registry = registry
        self.say = say  # where a seat's failure is told (the bot's console)
        self.spec = parse_spec(spec)
        if self.spec.id not in registry.agents:
            raise ArenaError(f"unknown agent type '{self.spec.id}' (types: {', '.join(sorted(registry.agents))})")
        # Its parameters are checked now, as far as they can be without the game: not when the first match comes.
        validated_alone(registry.agent_class(self.spec.id), self.spec.id, dict(self.spec.params))
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
            seed = message.get("seed")  # the seat's seed (a start says it): the same match plays the same way again
            if not isinstance(seed, int) or isinstance(seed, bool):  # a server of before it did: the match id
                seed = int.from_bytes(hashlib.sha256(message["match_id"].encode()).digest()[:8], "big")
            agent = entry.make(self.registry, game, message["seat"], seed)
            seat = self.seats[key] = Seat(game, agent, random.Random(derive_seed(seed, message["seat"], "determinise")))
        return seat

    def handle(self, text: str) -> str | None:
        """The answer to one message from the server. A seat that cannot be played (a game this agent cannot play, an
        agent that raises) is answered `{"error": ...}`, which forfeits that seat only (`agent_error`): the bot plays on."""
        message = json.loads(text)
        kind = message.get("type")
        if kind == "start":
            try:
                self._seat(message)
            except Exception:  # noqa: BLE001  (the act that follows fails again, and answers why)
                pass
        elif kind == "act":
            try:
                return self._act(message)
            except Exception as exc:  # noqa: BLE001  (the agent's or the game's fault, in this seat only)
                reason = str(exc) if isinstance(exc, ArenaError) else f"{type(exc).__name__}: {exc}"
                self.say(f"match {message.get('match_id')} seat {message.get('seat')}: cannot move: {reason}")
                return json.dumps({"error": reason, "match_id": message.get("match_id"), "seq": message.get("seq")})
        elif kind == "end":
            ended = self.seats.pop((message["match_id"], message["seat"]), None)
            if ended is not None:
                ended.agent.close()
        return None

    def _act(self, message: dict[str, Any]) -> str:
        seat = self._seat(message)
        deadline = message.get("deadline_ms")
        seat.agent.time_per_move = None if deadline is None else deadline / 1000.0 * THINK_SHARE
        state = seat.rebuild(message["state"], message["seat"])
        start = time.perf_counter()
        action = seat.agent.act(state)
        think_ms = (time.perf_counter() - start) * 1000.0
        return json.dumps({"action": int(action), "match_id": message["match_id"], "seq": message["seq"],
                           "think_ms": round(think_ms, 3)})  # fmt: skip


def open_log(path: str | None) -> TextIO | None:
    """The --log file, opened to append (None without one); one that cannot be opened is an ArenaError naming it."""
    if path is None:
        return None
    try:
        return open(path, "a", encoding="utf-8")
    except OSError as exc:
        raise ArenaError(f"--log: cannot write {path}: {exc.strerror or exc}") from None


def serve(registry: Registry, server: str, token: str, spec: str, say: Callable[[str], None],
          once: bool = False, log_path: str | None = None) -> None:  # fmt: skip
    """Connect, play, and connect again when the connection drops (until refused, or after one connection if `once`).
    The file at `log_path` gets every message received, one a line, as it arrives. The server's URL, the agent's spec
    and the log file are checked before the first connection."""
    url = websocket_url(server)
    connector = Connector(registry, spec, say)
    log = open_log(log_path)
    try:
        _serve(url, token, spec, connector, say, once, log)
    finally:
        if log is not None:
            log.close()


def _serve(url: str, token: str, spec: str, connector: Connector, say: Callable[[str], None], once: bool,
           log: TextIO | None) -> None:  # fmt: skip
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
    from websockets.sync.client import connect

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
                for received in socket:
                    text = received if isinstance(received, str) else received.decode()
                    if log is not None:
                        log.write(text + "\n")
                        log.flush()
                    answer = connector.handle(text)
                    if answer is not None:
                        socket.send(answer)
        except InvalidURI as exc:
            raise ArenaError(f"--server: {exc}") from None
        except InvalidStatus as exc:
            status = exc.response.status_code
            if 400 <= status < 500 and status not in (408, 429):  # not a WebSocket of arena serve there: retrying will not help
                raise ArenaError(f"--server: {url} refused the WebSocket with HTTP {status}; give the server's own "
                                 "address, http://HOST:PORT, with no path") from None  # fmt: skip
            _wait_to_retry(url, exc, attempt, once, say)
            attempt += 1
        except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as exc:
            _wait_to_retry(url, exc, attempt, once, say)
            attempt += 1


def _wait_to_retry(url: str, exc: Exception, attempt: int, once: bool, say: Callable[[str], None]) -> None:
    """After a lost connection: ArenaError if `once`, else say so and wait before the next attempt."""
    if once:
        raise ArenaError(f"connection to {url} lost: {exc}") from None
    wait = RETRY[min(attempt, len(RETRY) - 1)]
    say(f"connection to {url} lost ({type(exc).__name__}: {exc}); trying again in {wait:g} s")
    time.sleep(wait)
