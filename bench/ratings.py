"""Ratings at size: Elo, TrueSkill and Bradley-Terry (profile-likelihood intervals) over a million stored matches,
and the leaderboard query on that database: cold (nothing stored), uncached (the stored standings
current, the leaderboard's cache entry dropped), just after a new batch of matches landed (what a live
server sees after every stored batch), and cached.

    .venv/bin/python bench/ratings.py [--matches 1000000] [--agents 12] [--db FILE]

Builds the database once (a synthetic round-robin of agents of known strength, stored through the
same queries the arena uses) and reuses it on later runs. It is large (about 360 MB for a million
matches) and goes by default to the system's temporary directory, `arena-bench-1m.db` there
(/tmp/arena-bench-1m.db on Linux); the benchmark says where before writing it, and how large it
is after. Delete the file to rebuild it, or choose another with --db. Targets: ratings under 30 s
together; an uncached leaderboard under 1 s (also right after a batch lands); a cached one under 0.2 s.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.leaderboard import leaderboard_rows, sort_rows
from arena.match import encode_ints
from arena.plugins import get_registry
from arena.ratings import bradley_terry, elo, trueskill_ratings
from arena.results import leaderboard_of, select
from arena.schedule import encode_schedule, round_robin
from arena.seeding import derive_seed
from db import queries
from db.session import open_database


def build(db_url: str, matches: int, agents: int) -> None:
    database = open_database(db_url)
    names = [f"agent{i:02d}" for i in range(agents)]
    strength = {name: 60.0 * i for i, name in enumerate(names)}
    pairs = agents * (agents - 1) // 2
    rounds = max(1, matches // pairs)
    tables = round_robin(agents, rounds)[:matches]
    print(f"building {len(tables):,} matches of {agents} agents ...", flush=True)
    started = time.perf_counter()
    settings = {"game": "connect_four", "agents": [{"label": name} for name in names], "format": "round-robin", "challenger": None}
    tid = queries.create_tournament(
        database, name="million", game_id="connect_four", game_version="1", game_params="columns=7;rows=6;x_in_row=4",
        format="round-robin", rounds=rounds, seed=1, max_turns=200, time_per_move=None, players=2,
        settings=settings, schedule=encode_schedule(tables), scheduled=len(tables),
    )  # fmt: skip
    keys = queries.TournamentKeys(tid, "connect_four", "1", "columns=7;rows=6;x_in_row=4",
                                  [(name, "synthetic", "{}", "1") for name in names])
    rng = random.Random(7)
    moves = encode_ints([3] * 20)
    legal = encode_ints([7] * 20)
    batch = []
    for index, table in enumerate(tables):
        a, b = names[table[0]], names[table[1]]
        p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
        roll = rng.random()
        if roll < 0.05:
            outcome, scores, ranks = ["draw", "draw"], [0.0, 0.0], [1, 1]
        elif roll < 0.05 + 0.95 * p:
            outcome, scores, ranks = ["win", "loss"], [1.0, -1.0], [1, 2]
        else:
            outcome, scores, ranks = ["loss", "win"], [-1.0, 1.0], [2, 1]
        batch.append(queries.MatchOutcome(index, derive_seed(1, index), table, 20, "normal", None, moves, legal, 0.001, scores,
                                          outcome, ranks, [0.0005, 0.0005], [10, 10]))  # fmt: skip
        if len(batch) == 50_000:
            queries.save_results(database, keys, batch)
            batch.clear()
    queries.save_results(database, keys, batch)
    queries.finish_tournament(database, tid)
    print(f"built in {time.perf_counter() - started:.1f} s", flush=True)


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - started
    print(f"{label:<44} {elapsed:8.2f} s", flush=True)
    return value, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=12)
    parser.add_argument("--db", default=str(Path(tempfile.gettempdir()) / "arena-bench-1m.db"),
                        help="SQLite file for the synthetic matches (default: %(default)s; about 360 MB per million matches)")  # fmt: skip
    args = parser.parse_args()
    url = f"sqlite:///{args.db}"
    if not Path(args.db).exists():
        print(f"writing the benchmark database to {args.db} (about {360 * args.matches / 1e6:.0f} MB; kept for later runs,"
              " delete it to rebuild, --db to put it elsewhere)", flush=True)  # fmt: skip
        build(url, args.matches, args.agents)
    else:
        print(f"reusing the benchmark database {args.db} (delete it to rebuild)", flush=True)
    print(f"database {args.db}: {Path(args.db).stat().st_size / 1e6:,.0f} MB", flush=True)
    database = open_database(url)
    registry = get_registry()
    # A clean start: drop cached analyses so the first query computes.
    with database.engine.begin() as connection:
        connection.exec_driver_sql("delete from cache")
    selection = select(database, registry, tournament="million")
    records, load_s = timed("load matches from SQLite", lambda: selection.records)
    print(f"{len(records):,} matches")
    _, elo_s = timed("Elo (schedule order)", lambda: elo(records))
    _, ts_s = timed("TrueSkill", lambda: trueskill_ratings(records))
    _, bt_s = timed("Bradley-Terry with 95% intervals", lambda: bradley_terry(records))
    print(f"{'ratings together':<44} {elo_s + ts_s + bt_s:8.2f} s   (target < 30 s; loading adds {load_s:.1f} s)")
    # Over the game's selection (every connect four tournament), so the batch landed below counts in it.
    def query() -> list[dict]:
        return leaderboard_of(database, select(database, registry, game="connect_four"), "bt")[0]

    def drop(like: str) -> None:
        with database.engine.begin() as connection:
            connection.exec_driver_sql(f"delete from cache where key like '{like}'")

    _, cold = timed("leaderboard query, cold (no stored standings)", query)
    drop("leaderboard:%")
    drop("distinct:%")
    uncached_rows, first = timed("leaderboard query, uncached (standings stored)", query)
    assert uncached_rows == leaderboard_of(database, select(database, registry, game="connect_four"), "bt")[0]
    landed = land_batch(database, 2_000)
    live_rows, live = timed(f"leaderboard query after {landed:,} more matches landed", query)
    _, second = timed("leaderboard query, cached", query)
    check = select(database, registry, game="connect_four")
    full = sort_rows(leaderboard_rows(check.records), "bt")
    assert [{k: r[k] for k in full[0]} for r in live_rows] == full, "the stored fold differs from one pass over every match"
    print("uncached leaderboard equals leaderboard_rows over every match: yes")
    command = [str(Path(sys.executable).parent / "arena"), "--db", url, "leaderboard", "--tournament", "million", "--json"]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    cli_s = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "arena"), "--version"], check=True, capture_output=True)
    startup_s = time.perf_counter() - started
    print(f"{'arena leaderboard --json (whole process)':<44} {cli_s:8.2f} s   (of which interpreter + imports ~{startup_s:.2f} s)")
    print(f"uncached query: {first * 1000:.0f} ms, after a batch landed: {live * 1000:.0f} ms (target < 1000 ms; "
          f"cold, once per selection: {cold:.1f} s)")
    print(f"cached query: {second * 1000:.1f} ms (target < 200 ms)")


def land_batch(database, matches: int) -> int:  # type: ignore[no-untyped-def]
    """Schedule and store `matches` more matches in a second tournament of the same game (a live server's batch)."""
    names = [f"agent{i:02d}" for i in range(2)]
    tables = round_robin(2, matches)[:matches]
    settings = {"game": "connect_four", "agents": [{"label": name} for name in names], "format": "round-robin", "challenger": None}
    tid = queries.create_tournament(
        database, name=None, game_id="connect_four", game_version="1", game_params="columns=7;rows=6;x_in_row=4",
        format="round-robin", rounds=matches, seed=2, max_turns=200, time_per_move=None, players=2,
        settings=settings, schedule=encode_schedule(tables), scheduled=len(tables),
    )  # fmt: skip
    keys = queries.TournamentKeys(tid, "connect_four", "1", "columns=7;rows=6;x_in_row=4", [(n, "synthetic", "{}", "1") for n in names])
    queries.save_results(database, keys, [
        queries.MatchOutcome(i, derive_seed(2, i), table, 20, "normal", None, encode_ints([3] * 20), encode_ints([7] * 20),
                             0.001, [1.0, -1.0], ["win", "loss"], [1, 2], [0.0005, 0.0005], [10, 10])
        for i, table in enumerate(tables)
    ])  # fmt: skip
    return matches


if __name__ == "__main__":
    main()
