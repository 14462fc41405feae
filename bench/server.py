"""`arena serve` under load: requests/s and p50/p99 latency of the leaderboard, matrix and matches endpoints at
1, 8 and 32 concurrent clients, first on a quiet server (cached answers), then while a tournament is being played
into the same database (every stored batch invalidates the cache of the tournament being played).

The load generator runs in a second process: `wrk` when installed (Debian: `apt-get install wrk`), else a raw
asyncio HTTP/1.1 keep-alive client (`--client asyncio`); the server in a third (`arena serve`).
Targets (issue 13): cached leaderboard >= 1,000 requests/s with p99 <= 50 ms at 32 clients; p99 <= 1 s while matches land.

    .venv/bin/python bench/server.py [--seconds 3] [--rounds 40] [--client auto|wrk|asyncio]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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
    """Run in the load-generator process: `clients` keep-alive connections, each sending GET url and reading the
    whole answer in a loop for `seconds` (raw HTTP/1.1 over asyncio, on uvloop when installed: an httpx client
    costs several times the server's own time per request and, on 2 cores, starves the server it measures)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    request = f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode()

    async def run() -> dict[str, float]:
        latencies: list[float] = []
        errors = 0
        end = time.perf_counter() + seconds

        async def connection() -> None:
            nonlocal errors
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            try:
                while time.perf_counter() < end:
                    start = time.perf_counter()
                    writer.write(request)
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
                    await reader.readexactly(length)
                    errors += not head.startswith(b"HTTP/1.1 200")
                    latencies.append(time.perf_counter() - start)
            finally:
                writer.close()

        began = time.perf_counter()
        await asyncio.gather(*(connection() for _ in range(clients)))
        elapsed = time.perf_counter() - began
        latencies.sort()

        def pick(q: float) -> float:
            return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
        return {"requests": len(latencies), "rps": len(latencies) / elapsed, "p50_ms": pick(0.50), "p99_ms": pick(0.99),
                "errors": errors}  # fmt: skip

    try:
        import uvloop

        return uvloop.run(run())
    except ImportError:
        return asyncio.run(run())


def load_wrk(url: str, clients: int, seconds: float) -> dict[str, float]:
    """The same measurement with `wrk` (one thread; C, so the client's cost per request is small)."""
    out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{max(1, round(seconds))}s", "--latency", url], check=True, capture_output=True,
                         text=True).stdout  # fmt: skip
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def ms(text: str) -> float:
        number = text.rstrip("usm")
        return float(number) * scale[text[len(number):]]

    figures: dict[str, float] = {"errors": 0}
    for line in out.splitlines():
        words = line.split()
        if line.startswith("Requests/sec:"):
            figures["rps"] = float(words[1])
        elif words[:1] == ["50%"]:
            figures["p50_ms"] = ms(words[1])
        elif words[:1] == ["99%"]:
            figures["p99_ms"] = ms(words[1])
        elif "requests in" in line:
            figures["requests"] = int(words[0])
        elif line.strip().startswith(("Non-2xx", "Socket errors")):
            figures["errors"] += sum(int(w.strip(",")) for w in words if w.strip(",").isdigit())
    return figures


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def arena(*args: str) -> str:
    binary = str(Path(sys.executable).parent / "arena")
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def cpu_seconds(pid: int) -> float:
    """CPU time the server process has used (user + system): per request, a figure the other processes' load hardly moves."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(base: str, tournament: int, seconds: float, title: str, client: str, server_pid: int) -> list[dict]:
    print(f"\n{title}")
    print(f"{'endpoint':<12} {'clients':>7} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'server CPU us/req':>17}")
    rows = []
    for name, path in ENDPOINTS.items():
        for clients in CLIENTS:
            url = base + path.format(t=tournament)
            cpu = cpu_seconds(server_pid)
            if client == "wrk":
                figures = load_wrk(url, clients, seconds)
            else:
                out = subprocess.run([sys.executable, __file__, "--load", url, str(clients), str(seconds)], check=True,
                                     capture_output=True, text=True).stdout  # fmt: skip
                figures = json.loads(out)
            figures["cpu_us"] = (cpu_seconds(server_pid) - cpu) / max(1, figures["requests"]) * 1e6
            rows.append({"endpoint": name, "clients": clients, **figures})
            print(f"{name:<12} {clients:>7} {figures['rps']:>8.0f} {figures['p50_ms']:>8.1f} {figures['p99_ms']:>8.1f} "
                  f"{figures['errors']:>6} {figures['cpu_us']:>17.0f}")  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=40, help="rounds of the stored tournament (10 matches a round)")
    parser.add_argument("--client", choices=("auto", "wrk", "asyncio"), default="auto",
                        help="load generator: wrk (Debian's `apt-get install wrk`), a raw asyncio HTTP/1.1 client, or wrk when installed")
    parser.add_argument("--load", nargs=3, metavar=("URL", "CLIENTS", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        print(json.dumps(load(args.load[0], int(args.load[1]), float(args.load[2]))))
        return
    client = ("wrk" if shutil.which("wrk") else "asyncio") if args.client == "auto" else args.client
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/bench.db"
        arena("--db", db, "run-tournament", "--game", "connect_four",
              "--agents", "random,greedy,random:seed=1,greedy:seed=1,minimax:depth=1",
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
            for path in ENDPOINTS.values():  # warm the cache once
                httpx.get(base + path.format(t=1), timeout=60)
            print(f"load generator: {client} in its own process; {os.cpu_count()} cores shared with the server")
            quiet = measure(base, 1, args.seconds, f"Quiet server, tournament of {args.rounds * 10} stored matches (cached answers)",
                            client, server.pid)  # fmt: skip
            body = {"game": "connect_four", "agents": ["random", "greedy", "random:seed=2", "minimax:depth=1"], "rounds": 100000, "seed": 2}
            live = httpx.post(base + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=120).json()
            deadline = time.time() + 60
            while httpx.get(f"{base}/api/v1/tournaments/{live['id']}").json()["done"] == 0 and time.time() < deadline:
                time.sleep(0.2)
            landing = measure(base, live["id"], args.seconds,
                              "While matches land (the tournament being played; its cache is invalidated every batch)",
                              client, server.pid)  # fmt: skip
            done = httpx.get(f"{base}/api/v1/tournaments/{live['id']}").json()["done"]
            httpx.post(f"{base}/api/v1/tournaments/{live['id']}/cancel", headers={"Authorization": f"Bearer {token}"}, timeout=120)
            print(f"\n{done} matches of the live tournament stored during the second phase")
            cached = next(r for r in quiet if r["endpoint"] == "leaderboard" and r["clients"] == 32)
            worst = max(r["p99_ms"] for r in landing)
            print(f"cached leaderboard at 32 clients: {cached['rps']:.0f} req/s (target >= 1000: ratio {cached['rps'] / 1000:.2f}), "
                  f"p99 {cached['p99_ms']:.1f} ms (target <= 50)")
            print(f"while matches land: worst p99 {worst:.0f} ms (target <= 1000)")
            print(f"server CPU per cached leaderboard request: {cached['cpu_us']:.0f} us, i.e. at most "
                  f"{1e6 / max(cached['cpu_us'], 1):.0f} requests/s on one whole core (load average now {os.getloadavg()[0]:.1f})")
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
