"""`arena serve` under load: requests/s and p50/p99 latency of the leaderboard, matrix and matches endpoints at
1, 8 and 32 concurrent clients, first on a quiet server (cached answers), then while a tournament is being played
into the same database (every stored batch invalidates the cache of the tournament being played).

The load generator runs in a second process (an httpx/asyncio client), the server in a third (`arena serve`).
Targets (issue 13): cached leaderboard >= 1,000 requests/s with p99 <= 50 ms at 32 clients; p99 <= 1 s while matches land.

    .venv/bin/python bench/server.py [--seconds 3] [--rounds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENDPOINTS = {
    "leaderboard": "/api/v1/leaderboard?tournament={t}",
    "matrix": "/api/v1/matrix?tournament={t}&kind=net-wins",
    "matches": "/api/v1/matches?tournament={t}&limit=50&offset=100",
}
CLIENTS = (1, 8, 32)


def load(url: str, clients: int, seconds: float) -> dict[str, float]:
    """Run in the load-generator process: `clients` concurrent loops of GET url for `seconds`."""
    import httpx

    async def run() -> dict[str, float]:
        latencies: list[float] = []
        errors = 0
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(limits=limits, timeout=30) as client:
            end = time.perf_counter() + seconds

            async def worker() -> None:
                nonlocal errors
                while time.perf_counter() < end:
                    start = time.perf_counter()
                    try:
                        response = await client.get(url)
                        errors += response.status_code != 200
                    except httpx.HTTPError:
                        errors += 1
                    latencies.append(time.perf_counter() - start)

            began = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(clients)))
            elapsed = time.perf_counter() - began
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
        return {"requests": len(latencies), "rps": len(latencies) / elapsed, "p50_ms": pick(0.50), "p99_ms": pick(0.99),
                "errors": errors}  # fmt: skip

    return asyncio.run(run())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def arena(*args: str) -> str:
    binary = str(Path(sys.executable).parent / "arena")
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def measure(base: str, tournament: int, seconds: float, title: str) -> list[dict]:
    print(f"\n{title}")
    print(f"{'endpoint':<12} {'clients':>7} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
    rows = []
    for name, path in ENDPOINTS.items():
        for clients in CLIENTS:
            out = subprocess.run([sys.executable, __file__, "--load", base + path.format(t=tournament), str(clients), str(seconds)],
                                 check=True, capture_output=True, text=True).stdout  # fmt: skip
            figures = json.loads(out)
            rows.append({"endpoint": name, "clients": clients, **figures})
            print(f"{name:<12} {clients:>7} {figures['rps']:>8.0f} {figures['p50_ms']:>8.1f} {figures['p99_ms']:>8.1f} {figures['errors']:>6}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=40, help="rounds of the stored tournament (10 matches a round)")
    parser.add_argument("--load", nargs=3, metavar=("URL", "CLIENTS", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        print(json.dumps(load(args.load[0], int(args.load[1]), float(args.load[2]))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/bench.db"
        arena("--db", db, "run-tournament", "--game", "connect_four", "--agents", "random,greedy,random:seed=1,greedy:seed=1,minimax:depth=1",
              "--rounds", str(args.rounds), "--seed", "1", "--name", "stored", "--quiet")  # fmt: skip
        token = arena("--db", db, "tokens", "create", "bench").strip()
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        began = time.perf_counter()
        server = subprocess.Popen([str(Path(sys.executable).parent / "arena"), "--db", db, "serve", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            import httpx

            while True:
                try:
                    if httpx.get(base + "/api/v1/games", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.02)
            print(f"arena serve answered its first request {time.perf_counter() - began:.2f} s after it was started "
                  f"({os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f})")  # fmt: skip
            for name, path in ENDPOINTS.items():  # warm the cache once
                httpx.get(base + path.format(t=1), timeout=60)
            quiet = measure(base, 1, args.seconds, f"Quiet server, tournament of {args.rounds * 10} stored matches (cached answers)")
            body = {"game": "connect_four", "agents": ["random", "greedy", "random:seed=2", "minimax:depth=1"], "rounds": 100000, "seed": 2}
            live = httpx.post(base + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=120).json()
            deadline = time.time() + 60
            while httpx.get(f"{base}/api/v1/tournaments/{live['id']}").json()["done"] == 0 and time.time() < deadline:
                time.sleep(0.2)
            landing = measure(base, live["id"], args.seconds, "While matches land (the tournament being played; its cache is invalidated every batch)")
            done = httpx.get(f"{base}/api/v1/tournaments/{live['id']}").json()["done"]
            httpx.post(f"{base}/api/v1/tournaments/{live['id']}/cancel", headers={"Authorization": f"Bearer {token}"})
            print(f"\n{done} matches of the live tournament stored during the second phase")
            cached = next(r for r in quiet if r["endpoint"] == "leaderboard" and r["clients"] == 32)
            worst = max(r["p99_ms"] for r in landing)
            print(f"cached leaderboard at 32 clients: {cached['rps']:.0f} req/s (target >= 1000: ratio {cached['rps'] / 1000:.2f}), "
                  f"p99 {cached['p99_ms']:.1f} ms (target <= 50)")
            print(f"while matches land: worst p99 {worst:.0f} ms (target <= 1000)")
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
