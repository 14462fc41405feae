"""Strength of the search agents: the win rates the project promises, at full size.

    .venv/bin/python bench/strength.py                 # everything (long: about half an hour on 2 cores)
    .venv/bin/python bench/strength.py --only santorini_depth --games 200
    .venv/bin/python bench/strength.py --quick         # fewer games, for a smoke run

Checks (targets in brackets):
- santorini_depth: Santorini, minimax depth 3 vs depth 2 with the report's manual weights
  (the game's heuristic = eval=linear with weights 0,2,4,-1,0,-2,-4,1), seats alternating [>= 90% of 200];
- santorini_time: Santorini, minimax depth 4 self-play, median seconds per move over each game's moves [<= 0.25 s];
- c4_mcts: connect four, mcts 1000 simulations vs random [>= 95% of 200] and vs greedy [most games];
- vs_random: every search agent (default parameters, linear only where it has weights) against
  random on every built-in two-player game it accepts [clearly better: we print the win rate];
- multi_player: mcts against random in all other seats on the games of 3+ players (Incan Gold).

Matches use arena.match.play_match with seats alternating and per-match seeds; each line prints
wins/draws/losses, the win rate and a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import arena
from arena.match import play_match
from arena.plugins import get_registry
from arena.seeding import derive_seed

REGISTRY = get_registry()
Spec = tuple[str, dict[str, Any]]


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def duel(game: arena.Game, spec: Spec, other: Spec, n: int, label: str = "") -> tuple[int, int, int]:
    """Play n matches of `spec` against `other`, seats alternating; print and return (wins, draws, losses)."""
    wins = draws = losses = 0
    start = time.perf_counter()
    for i in range(n):
        seat = i % 2
        specs = [spec, other] if seat == 0 else [other, spec]
        agents = [REGISTRY.agents[s[0]](game, p, derive_seed(label, i, p), **s[1]) for p, s in enumerate(specs)]
        result = play_match(game, agents, derive_seed(label, "match", i))
        if result.reason not in ("normal", "turn_limit"):
            print(f"  match {i}: {result.reason} {result.detail}", file=sys.stderr)
        outcome = result.outcomes[seat]
        wins += outcome == "win"
        draws += outcome == "draw"
        losses += outcome == "loss"
    low, high = wilson(wins, n)
    name = lambda s: s[0] + (":" + ",".join(f"{k}={v}" for k, v in s[1].items()) if s[1] else "")  # noqa: E731
    print(
        f"{game.label():16} {name(spec):28} vs {name(other):22} W{wins:4} D{draws:4} L{losses:4}  "
        f"win {wins / n:6.1%} [{low:.2f}, {high:.2f}]  {time.perf_counter() - start:6.1f}s",
        flush=True,
    )
    return wins, draws, losses


def santorini_depth(games: int) -> None:
    game = REGISTRY.games["santorini"]()
    print("# Santorini: depth 3 vs depth 2, manual weights 0,2,4,-1,0,-2,-4,1 (target >= 90%)")
    duel(game, ("minimax", {"depth": 3}), ("minimax", {"depth": 2}), games, "s32")


def santorini_time(games: int) -> None:
    game = REGISTRY.games["santorini"]()
    print("# Santorini: minimax depth 4 self-play, seconds per move (target: median <= 0.25 s)")
    medians: list[float] = []
    cpu_medians: list[float] = []
    for g in range(games):
        agents = [REGISTRY.agents["minimax"](game, p, derive_seed("s4", g, p), depth=4) for p in range(2)]
        state = game.new_initial_state(derive_seed("s4", g))
        times: list[float] = []
        cpu_times: list[float] = []
        while not state.is_terminal() and len(times) < 200:
            seat = state.current_player
            start, start_cpu = time.perf_counter(), time.process_time()
            action = agents[seat].act(state.view(seat))
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - start_cpu)
            state.apply(action)
        medians.append(statistics.median(times))
        cpu_medians.append(statistics.median(cpu_times))
        print(
            f"game {g}: {len(times)} moves, median {statistics.median(times):.3f} s "
            f"(cpu {statistics.median(cpu_times):.3f} s), p90 {sorted(times)[int(0.9 * (len(times) - 1))]:.3f} s, "
            f"max {max(times):.3f} s",
            flush=True,
        )
    print(f"median of the per-game medians: {statistics.median(medians):.3f} s wall, {statistics.median(cpu_medians):.3f} s cpu")


def c4_mcts(games: int) -> None:
    game = REGISTRY.games["connect_four"]()
    print("# Connect four: mcts 1000 simulations (targets: >= 95% vs random, most games vs greedy)")
    duel(game, ("mcts", {"simulations": 1000}), ("random", {}), games, "c4r")
    duel(game, ("mcts", {"simulations": 1000}), ("greedy", {}), games, "c4g")


def vs_random(games: int) -> None:
    print("# Every search agent vs random on every two-player game it accepts (default parameters)")
    for game_id in sorted(REGISTRY.games):
        game = REGISTRY.games[game_id]()
        if game.num_players != 2:
            continue
        for agent_id in ("minimax", "mcts", "linear"):
            try:
                REGISTRY.agents[agent_id].check_game(game, {})
            except arena.ArenaError as refused:
                print(f"{game_id:16} {agent_id:28} refused: {refused}")
                continue
            duel(game, (agent_id, {}), ("random", {}), games, f"vr-{game_id}-{agent_id}")


def multi_player(games: int) -> None:
    """mcts in one seat (rotating) against random in all the others, on games of 3+ players."""
    print("# mcts (1000 simulations) vs random in every other seat, games of more than two players")
    for game_id in sorted(REGISTRY.games):
        game = REGISTRY.games[game_id]()
        n = game.num_players
        if n <= 2:
            continue
        wins = 0
        start = time.perf_counter()
        for i in range(games):
            seat = i % n
            agents = [
                REGISTRY.agents["mcts" if p == seat else "random"](game, p, derive_seed("mp", game_id, i, p))
                for p in range(n)
            ]
            result = play_match(game, agents, derive_seed("mp", game_id, "match", i))
            wins += result.outcomes[seat] == "win"
        low, high = wilson(wins, games)
        print(
            f"{game.label():16} mcts alone first in {wins}/{games} = {wins / games:.1%} [{low:.2f}, {high:.2f}] "
            f"(random would be about {1 / n:.0%})  {time.perf_counter() - start:.1f}s",
            flush=True,
        )


CHECKS: dict[str, tuple[Callable[[int], None], int, int]] = {
    # name: (function, full-size games, quick games)
    "santorini_depth": (santorini_depth, 200, 20),
    "santorini_time": (santorini_time, 5, 1),
    "c4_mcts": (c4_mcts, 200, 20),
    "vs_random": (vs_random, 40, 6),
    "multi_player": (multi_player, 60, 6),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(CHECKS), action="append", help="run only these checks")
    parser.add_argument("--games", type=int, help="games per pairing (default: each check's full size)")
    parser.add_argument("--quick", action="store_true", help="small numbers of games")
    args = parser.parse_args()
    for name in args.only or CHECKS:
        function, full, quick = CHECKS[name]
        needed = {"santorini_depth": "santorini", "santorini_time": "santorini"}.get(name)
        if needed and needed not in REGISTRY.games:
            print(f"# {name}: skipped, game '{needed}' is not registered")
            continue
        function(args.games or (quick if args.quick else full))
        print()


if __name__ == "__main__":
    main()
