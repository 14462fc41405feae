"""Per-move overhead of the remote transports on connect four, against the same choice made in-process.

The pull transport: agent type `pull` in this process (as in a server's queue worker), the server
(`arena serve`'s app with its bot hub) in a second process, and examples/remote/pull_bot.py connected
to it over the WebSocket in a third: each move crosses the relay socket and the WebSocket both ways.

The push transport: agent type `http` calling examples/remote/push_bot.py (a random bot, standard
library only, Nagle disabled) started here as a subprocess on 127.0.0.1. The in-process baseline:
the built-in `random` agent. Both are timed per `act` call over the positions of real matches, so
the difference is what the transport costs per move (encoding the position, the HTTP round trip
on loopback, parsing the answer). Target: p50 <= 1 ms per move.

Then where Arena's own CPU time goes per push move (process CPU time, so other load on the machine
barely moves it): building the `act` message (the game's `to_json`, legal ids and names), encoding
it, parsing the answer, and the HTTP client itself: Arena's (arena.remote.connection, http.client)
beside an `httpx.Client` posting the same bytes over one kept-alive connection, which the push
transport used before (p50 1.34 ms per move then, under load).

    .venv/bin/python bench/remote.py [--moves 3000]
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import random
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.plugins import get_registry
from tests._bots import push_bot, running

PULL_BOT = Path(__file__).resolve().parent.parent / "examples" / "remote" / "pull_bot.py"


def positions(game, count: int, seed: int = 0):
    rng = random.Random(seed)
    found: list = []
    match = 0
    while len(found) < count:
        state = game.new_initial_state(match)
        match += 1
        while not state.is_terminal() and len(found) < count:
            found.append(state.clone())
            state.apply(rng.choice(state.legal_actions()))
    return found


def timed(agent, states) -> list[float]:
    clock = time.perf_counter
    times = []
    for state in states:
        start = clock()
        agent.act(state)
        times.append(clock() - start)
    return times


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000.0, ordered[int(0.99 * (len(ordered) - 1))] * 1000.0


def _serve(db_path: str, port: int, ready: Any) -> None:
    """The server's side in its own process, as in production: `arena serve`'s app with its bot hub, no queue workers."""
    import uvicorn

    from arena.library.storage import open_database
    from arena.remote.hub import HUB_ENV
    from arena.server import Settings, create_app

    database = open_database(f"sqlite:///{db_path}")
    class Ready(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)  # the app's lifespan has started the hub and set HUB_ENV
            ready.put(os.environ[HUB_ENV])

    server = Ready(uvicorn.Config(create_app(database, get_registry(), Settings(workers=0)), host="127.0.0.1", port=port,
                                  log_level="warning"))  # fmt: skip
    server.run()


@contextlib.contextmanager
def served_hub(db_path: Path) -> Iterator[tuple[str, str]]:
    """A server process with its bot hub; this process may seat `pull` agents (HUB_ENV); yields (URL, bot token)."""
    from arena.library import tokens
    from arena.library.storage import open_database
    from arena.remote.hub import HUB_ENV

    token = tokens.create(open_database(f"sqlite:///{db_path}"), "bench", "bot")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    context = multiprocessing.get_context("spawn")
    ready = context.Queue()
    process = context.Process(target=_serve, args=(str(db_path), port, ready), daemon=True)
    process.start()
    try:
        os.environ[HUB_ENV] = ready.get(timeout=120)
        yield f"http://127.0.0.1:{port}", token
    finally:
        process.kill()
        process.join(30)


def cpu_per_call(function, items) -> float:
    """Process CPU microseconds per call of `function` over `items`."""
    start = time.process_time()
    for item in items:
        function(item)
    return (time.process_time() - start) / len(items) * 1e6


def breakdown(game, states, url: str) -> None:
    """Arena's CPU time per push move, part by part (see the module's docstring)."""
    import httpx

    from arena.remote import protocol
    from arena.remote.connection import BotConnection

    messages = [protocol.act_message(game, "bench", 1, 0, state, 1000.0, 0.4) for state in states]
    bodies = [protocol.encode(message) for message in messages]
    parts = {
        "act message (to_json, legal ids, names)": cpu_per_call(
            lambda state: protocol.act_message(game, "bench", 1, 0, state, 1000.0, 0.4), states),
        "JSON encoding": cpu_per_call(protocol.encode, messages),
        "answer parsing": cpu_per_call(protocol.parse_answer, [b'{"action": 3, "think_ms": 0.05}'] * len(states)),
    }  # fmt: skip
    ours = BotConnection(url)
    parts["HTTP client: Arena's (http.client)"] = cpu_per_call(lambda body: ours.post("/act", body, 5.0), bodies)
    ours.close()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx.Client(base_url=url, limits=limits, headers={"content-type": "application/json"}) as client:
        client.post("/act", content=bodies[0])
        parts["HTTP client: httpx.Client, for comparison"] = cpu_per_call(
            lambda body: client.post("/act", content=body, timeout=5.0).content, bodies)  # fmt: skip
    print("Arena's CPU time per push move (process time, microseconds):")
    for name, micros in parts.items():
        print(f"  {name + ':':45s} {micros:8.1f} us")
    ratio = parts["HTTP client: httpx.Client, for comparison"] / parts["HTTP client: Arena's (http.client)"]
    print(f"  httpx.Client / Arena's client: {ratio:.1f}x the CPU per move")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3000)
    args = parser.parse_args()
    registry = get_registry()
    game = registry.game_class("connect_four")()
    states = positions(game, args.moves)
    local = registry.agent_class("random")(game, 0, 0)
    local_p50, local_p99 = summary(timed(local, states))
    print(f"connect four, {len(states)} positions; load: {os.getloadavg()[0]:.2f} (1-minute average)")
    print(f"in-process random agent:  p50 {local_p50:.4f} ms  p99 {local_p99:.4f} ms per move")
    with push_bot() as url:
        agent = registry.agent_class("http")(game, 0, 0, url=url)
        agent.match_id = "bench"
        timed(agent, states[:200])  # warm up: the connection, the bot's imports
        push = timed(agent, states)
        breakdown(game, states[:1000], url)
    with tempfile.TemporaryDirectory() as tmp, served_hub(Path(tmp) / "bench.db") as (url, token):
        with running([sys.executable, str(PULL_BOT), url, token]):
            agent = registry.agent_class("pull")(game, 0, 0, name="bench")
            agent.match_id = "bench"
            timed(agent, states[:200])
            pull = timed(agent, states)
    for name, times in (("push (http, loopback)", push), ("pull (WebSocket, loopback)", pull)):
        p50, p99 = summary(times)
        print(f"{name + ':':27s} p50 {p50:.4f} ms  p99 {p99:.4f} ms per move")
        print(f"{'  overhead per move:':27s} p50 {p50 - local_p50:.4f} ms  p99 {p99 - local_p99:.4f} ms"
              f"  (target p50 <= 1 ms: {'met' if p50 - local_p50 <= 1.0 else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
