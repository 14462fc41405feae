"""Per-move overhead of the remote transports on connect four, against the same choice made in-process.

The push transport: agent type `http` calling examples/remote/push_bot.py (a random bot, standard
library only, Nagle disabled) started here as a subprocess on 127.0.0.1. The in-process baseline:
the built-in `random` agent. Both are timed per `act` call over the positions of real matches, so
the difference is what the transport costs per move (encoding the position, the HTTP round trip
on loopback, parsing the answer). Target: p50 <= 1 ms per move.

    .venv/bin/python bench/remote.py [--moves 3000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.plugins import get_registry  # noqa: E402
from tests._bots import push_bot  # noqa: E402


def positions(game, count: int, seed: int = 0):
    rng = random.Random(seed)
    found, match = [], 0
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3000)
    args = parser.parse_args()
    registry = get_registry()
    game = registry.game_class("connect_four")()
    states = positions(game, args.moves)
    local = registry.agent_class("random")(game, 0, 0)
    local_p50, local_p99 = summary(timed(local, states))
    print(f"connect four, {len(states)} positions")
    print(f"in-process random agent:  p50 {local_p50:.4f} ms  p99 {local_p99:.4f} ms per move")
    with push_bot() as url:
        agent = registry.agent_class("http")(game, 0, 0, url=url)
        agent.match_id = "bench"
        timed(agent, states[:200])  # warm up: the connection, the bot's imports
        push = timed(agent, states)
    push_p50, push_p99 = summary(push)
    print(f"push (http, loopback):    p50 {push_p50:.4f} ms  p99 {push_p99:.4f} ms per move")
    print(f"push overhead per move:   p50 {push_p50 - local_p50:.4f} ms  p99 {push_p99 - local_p99:.4f} ms"
          f"  (target p50 <= 1 ms: {'met' if push_p50 - local_p50 <= 1.0 else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
