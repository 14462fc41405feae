"""Beyond one machine: Ray against the local pool on the same cores, PostgreSQL against SQLite.

    .venv/bin/python bench/scale.py [--matches 200] [--storage-matches 20000] [--postgres URL] [--skip-ray] [--skip-storage]

- Ray: a connect four tournament of `mcts:simulations=200` agents played with the local pool (1
  and 2 workers) and with Ray on the same 2 cores: a local Ray of 2 CPUs, and a cluster of two
  nodes of 1 CPU each started as separate processes (`ray start --head`, `ray start --address`).
  Matches per second of the whole stored tournament (schedule, play, store); Ray's start is timed
  apart (a cluster is started once and plays many tournaments). Target: Ray >= 0.85x the local
  pool's throughput on the same cores.
- Storage: the same 20,000-match random tournament (connect four, `random` against `random:seed=1`)
  stored in a SQLite file and in a PostgreSQL database: matches per second of the whole run, and
  matches stored per second of the time spent storing (the driver's batches). PostgreSQL is the
  server at --postgres (or $ARENA_TEST_POSTGRES_URL), else a `pgserver` started in a temp dir
  (a Unix socket on this machine). Target: PostgreSQL >= 0.5x SQLite.

The machine is shared and noisy: each figure is printed with the ratio it is judged by, from runs
made one right after the other.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.ray_cluster, tests.pg

from arena import tournament  # noqa: E402
from arena.executors import Executor  # noqa: E402
from arena.executors.local import LocalPool  # noqa: E402
from arena.plugins import get_registry  # noqa: E402
from db import queries  # noqa: E402
from db.session import Database, open_database  # noqa: E402

MCTS = "mcts:simulations=200,mcts:simulations=200,seed=1"
RANDOM = "random,random:seed=1"


def run(database: Database, agents: str, rounds: int, executor: Executor) -> tuple[float, int]:
    """Matches/s of one whole stored tournament (what `arena run-tournament` does), and how many were played."""
    registry = get_registry()
    request = tournament.TournamentRequest(game="connect_four", agents=agents, rounds=rounds, seed=0)
    started = time.perf_counter()
    tid = tournament.create(registry, database, request)
    played = tournament.play(database, registry, tid, executor=executor)
    return played / (time.perf_counter() - started), played


def sqlite(tmp: str) -> Database:
    return open_database(f"sqlite:///{tmp}/bench-{uuid.uuid4().hex[:8]}.db")


# ---------------------------------------------------------------- Ray against the local pool


def ray_against_local(matches: int, tmp: str) -> None:
    import ray

    from arena.executors.ray_executor import RayExecutor
    from tests.ray_cluster import RayCluster, ray_env

    rounds = matches  # two agents: one match per round
    figures: dict[str, float] = {}
    for workers in (1, 2):
        figures[f"local pool, {workers} worker{'s' * (workers > 1)}"], played = run(sqlite(tmp), MCTS, rounds, LocalPool(workers))
    home = tempfile.mkdtemp(prefix="arena-ray-home-")
    os.environ.update(ray_env(home))
    started = time.perf_counter()
    ray.init(num_cpus=2, object_store_memory=80 * 1024 * 1024, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    print(f"ray: a local Ray of 2 CPUs started in {time.perf_counter() - started:.1f} s (not counted below)")
    try:
        figures["Ray, local (2 CPUs)"], _ = run(sqlite(tmp), MCTS, rounds, RayExecutor(None, 2))
    finally:
        ray.shutdown()
    with RayCluster() as cluster:
        started = time.perf_counter()
        cluster.add_node(1)
        cluster.add_node(1)
        ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
        print(f"ray: a cluster of two 1-CPU nodes started in {time.perf_counter() - started:.1f} s (not counted below)")
        try:
            figures["Ray, two nodes of 1 CPU"], _ = run(sqlite(tmp), MCTS, rounds, RayExecutor(cluster.address, 2))
        finally:
            ray.shutdown()
    pool = figures["local pool, 2 workers"]
    print(f"ray: connect four, {MCTS}, {played} matches, {os.cpu_count()} cores")
    for name, rate in figures.items():
        print(f"  {name:28} {rate:6.2f} matches/s  ({rate / pool:.2f}x the local pool of 2 workers)")
    worst = min(figures["Ray, local (2 CPUs)"], figures["Ray, two nodes of 1 CPU"]) / pool
    print(f"ray: worst Ray / local pool on the same cores = {worst:.2f} (target >= 0.85)")


# ---------------------------------------------------------------- PostgreSQL against SQLite


@contextmanager
def postgres_database(given: str | None) -> Iterator[str]:
    """A new database on the server at `given` (or a pgserver started here), dropped afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    server = None
    if given is None:
        import pgserver

        server = pgserver.get_server(Path(tempfile.mkdtemp(prefix="arena-pg-bench-")) / "data", cleanup_mode="delete")
        given = server.get_uri()
    admin_url = make_url(given).set(drivername="postgresql")
    name = f"arena_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url.render_as_string(hide_password=False), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin_url.render_as_string(hide_password=False), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if server is not None:
            with contextlib.suppress(OSError):  # the deletion can race the stopping server's last writes
                server.cleanup()


def timed_saves() -> tuple[list[float], Callable[[], None]]:
    """Count the seconds the driver spends in save_results (its batches), until undone."""
    spent: list[float] = []
    original = queries.save_results

    def save_results(*args, **kwargs):  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - began)

    queries.save_results = save_results  # tournament.py calls queries.save_results: it finds this one
    return spent, lambda: setattr(queries, "save_results", original)


def storage(matches: int, postgres: str | None, tmp: str) -> None:
    figures: dict[str, tuple[float, float]] = {}
    with postgres_database(postgres) as pg_url:
        for name, url in (("SQLite", None), ("PostgreSQL", pg_url), ("SQLite", None), ("PostgreSQL", pg_url)):
            database = sqlite(tmp) if url is None else open_database(url)
            if url is not None:  # a fresh schema per run: the same empty start as a new SQLite file
                with database.engine.begin() as connection:
                    connection.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
                database = open_database(url)
            spent, undo = timed_saves()
            try:
                rate, played = run(database, RANDOM, matches, LocalPool(1))
            finally:
                undo()
            stored = played / sum(spent)
            print(f"storage: {name:10} {played} matches, whole run {rate:7,.0f} matches/s, storing {stored:8,.0f} matches/s "
                  f"({len(spent)} batches, {sum(spent):.2f} s)")  # fmt: skip
            best = figures.get(name)
            figures[name] = (max(rate, best[0]), max(stored, best[1])) if best else (rate, stored)
            database.engine.dispose()
    (sq_run, sq_store), (pg_run, pg_store) = figures["SQLite"], figures["PostgreSQL"]
    print(f"storage: PostgreSQL / SQLite (best of 2 each): whole run {pg_run / sq_run:.2f}, storing {pg_store / sq_store:.2f} "
          "(target >= 0.5)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=200,
                        help="matches of the mcts tournament (40 mostly measures the first tasks warming Ray up)")
    parser.add_argument("--storage-matches", type=int, default=20000, help="matches of the random tournament")
    parser.add_argument("--postgres", default=os.environ.get("ARENA_TEST_POSTGRES_URL"), help="a PostgreSQL server's URL")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--skip-storage", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-scale-") as tmp:
        if not args.skip_storage:
            storage(args.storage_matches, args.postgres, tmp)
        if not args.skip_ray:
            ray_against_local(args.matches, tmp)


if __name__ == "__main__":
    main()
