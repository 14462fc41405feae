"""Tournament throughput: arena overhead against a bare loop, 1 -> 2 workers, and the seed tournament shape.

    .venv/bin/python bench/tournament.py [--overhead-matches 20000] [--scaling-matches 40] [--seed-rounds 2500]
        [--adaptive-budgets 5000 20000] [--skip overhead scaling seed adaptive]

- Overhead: `arena run-tournament`'s library path (schedule written first, every match stored) with
  `random` agents on connect four and 1 worker, against a bare loop over the same games and agents
  through the same Game API, in the same run. Target: at least 0.5 of the bare loop's matches/s.
- Scaling: a tournament of CPU-bound agents (mcts) with 2 workers against 1. Target: 1.7x.
- Seed shape: 9 agents, round-robin, 2500 rounds (90,000 matches) of Onitama `study5` with fast
  agents: wall time, matches/s and peak memory (of the whole process tree).
- Adaptive: `--format adaptive` runs of 8 `random` agents at tic-tac-toe, a short and a long budget: matches/s
  of each, and the long run's time per match against the short one's (1.0: each batch costs the same however
  long the run). Before, each batch rewrote every earlier match's selection probability as JSON and decoded and
  re-packed the whole schedule: 2.0 at 20,000 against 5,000 (10.3 s and 81.2 s); now 0.97 (12.1 s and 47.0 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena import tournament
from arena.plugins import get_registry
from arena.seeding import derive_seed
from db.session import open_database

ARENA = str(Path(sys.executable).parent / "arena")


def bare_loop(matches: int) -> float:
    """Matches/s of the same games and agents with no arena around them."""
    registry = get_registry()
    game = registry.game_class("connect_four")()
    random_agent = registry.agent_class("random")
    started = time.perf_counter()
    for index in range(matches):
        seed = derive_seed(0, index)
        agents = [random_agent(game, seat, derive_seed(seed, seat, 0)) for seat in range(2)]
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            state.apply(agents[state.current_player].act(state))
    return matches / (time.perf_counter() - started)


def arena_run(agents: str, game: str, rounds: int, workers: int, db_dir: str) -> tuple[float, int]:
    """Matches/s of a whole stored tournament through the library (what `arena run-tournament` calls)."""
    registry = get_registry()
    database = open_database(f"sqlite:///{db_dir}/bench-{time.monotonic_ns()}.db")
    request = tournament.TournamentRequest(game=game, agents=agents, rounds=rounds, seed=0)
    started = time.perf_counter()
    tid = tournament.create(registry, database, request)
    played = tournament.play(database, registry, tid, workers)
    return played / (time.perf_counter() - started), played


def overhead(matches: int, tmp: str, repeats: int = 3) -> None:
    # The machine is shared and noisy: bare and arena runs alternate, and each pair gives a ratio.
    ratios = []
    for _ in range(repeats):
        bare = bare_loop(matches)
        ours, played = arena_run("random,random:seed=1", "connect_four", matches, 1, tmp)  # one match per round
        ratios.append(ours / bare)
        print(f"overhead: bare loop {bare:,.0f} matches/s, arena run-tournament {ours:,.0f} matches/s "
              f"({played} matches stored) -> ratio {ours / bare:.2f}")  # fmt: skip
    print(f"overhead: median ratio {statistics.median(ratios):.2f} of {repeats} (target >= 0.5)")


def scaling(matches: int, tmp: str) -> None:
    agents = "mcts:simulations=300,mcts:simulations=300,seed=1"
    one, _ = arena_run(agents, "connect_four", matches, 1, tmp)
    two, _ = arena_run(agents, "connect_four", matches, 2, tmp)
    print(f"scaling: mcts tournament 1 worker {one:.2f} matches/s, 2 workers {two:.2f} matches/s "
          f"-> {two / one:.2f}x (target >= 1.7x; {os.cpu_count()} cores)")  # fmt: skip


def seed_shape(rounds: int, workers: str, tmp: str) -> None:
    agents = ("random,random:seed=1,random:seed=2,greedy,greedy:seed=1,greedy:seed=2,"
              "minimax:depth=1,minimax:depth=1,seed=1,minimax:depth=1,seed=2")  # fmt: skip
    db = f"{tmp}/seed-shape.db"
    command = [ARENA, "--db", db, "run-tournament", "--game", "onitama:cards=study5", "--agents", agents,
               "--rounds", str(rounds), "--seed", "1", "--workers", workers, "--quiet"]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True)
    wall = time.perf_counter() - started
    matches = rounds * 36
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"seed shape: 9 agents x {rounds} rounds = {matches:,} onitama study5 matches with {workers} worker(s): "
          f"{wall:.0f} s wall, {matches / wall:,.0f} matches/s, peak memory of the largest process {peak:.0f} MB")  # fmt: skip
    started = time.perf_counter()
    subprocess.run([ARENA, "--db", db, "leaderboard"], check=True)
    print(f"leaderboard of those matches: {time.perf_counter() - started:.1f} s (uncached)")


def adaptive(budgets: list[int], tmp: str) -> None:
    agents = ",".join(f"random:seed={i}" for i in range(8))
    per_match = []
    for budget in budgets:
        command = [ARENA, "--db", f"{tmp}/adaptive-{budget}.db", "run-tournament", "--game", "tic_tac_toe", "--agents",
                   agents, "--format", "adaptive", "--budget", str(budget), "--quiet"]  # fmt: skip
        started = time.perf_counter()
        subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        per_match.append(wall / budget)
        print(f"adaptive: 8 agents, budget {budget:,}: {wall:.1f} s, {budget / wall:,.0f} matches/s")
    print(f"adaptive: time per match at {budgets[-1]:,} against {budgets[0]:,}: {per_match[-1] / per_match[0]:.2f} "
          "(1.0: linear in the run's length)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # 20,000 matches take about 1.5 s; with far fewer, one-time set-up (SQLAlchemy compiling its first
    # statements, about 10 ms) weighs in: 2000 matches read about 0.04 lower.
    parser.add_argument("--overhead-matches", type=int, default=20_000)
    parser.add_argument("--scaling-matches", type=int, default=40)
    parser.add_argument("--seed-rounds", type=int, default=250, help="2500 for the full 90,000-match shape")
    parser.add_argument("--seed-workers", default="auto")
    parser.add_argument("--adaptive-budgets", type=int, nargs=2, default=[5000, 20_000])
    parser.add_argument("--skip", nargs="*", default=[], choices=["overhead", "scaling", "seed", "adaptive"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if "overhead" not in args.skip:
            overhead(args.overhead_matches, tmp)
        if "scaling" not in args.skip:
            scaling(args.scaling_matches, tmp)
        if "seed" not in args.skip:
            seed_shape(args.seed_rounds, args.seed_workers, tmp)
        if "adaptive" not in args.skip:
            adaptive(args.adaptive_budgets, tmp)


if __name__ == "__main__":
    main()
