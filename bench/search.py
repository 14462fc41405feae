"""Search speed: alpha-beta nodes per second and MCTS simulations per second, and OpenSpiel's MCTS.

    /work/bench-venv/bin/python bench/search.py            # with OpenSpiel's MCTSBot for comparison
    .venv/bin/python bench/search.py                       # ours only (no open_spiel here)
    ... bench/search.py --repeats 5 --simulations 1000

For connect four, Reversi and Santorini (a game not registered yet is skipped with a message):
- minimax: from a fixed set of seeded positions (random play-outs of a few lengths), one search
  to a fixed depth per position, with each transposition-table key (`tt=auto`: the game's key()
  or the attribute key; `render`; `off`) and with `order=eval`: total nodes, seconds, nodes/s. Nodes = every position
  the search visits (interior and leaves; the children made only to order moves are not counted).
- mcts: `simulations` random-play-out simulations from each position: simulations/s.
- On connect four, OpenSpiel's Python MCTSBot (RandomRolloutEvaluator with 1 rollout, the same
  c = sqrt(2), the same number of simulations) from the same positions (the action encodings are
  the same), with solve=True (its default) and solve=False; the ratio ours / OpenSpiel's is
  printed against the faster of the two. The target is >= 2x.

Rates are per CPU second of this process (time.process_time: the searches are single-threaded,
and other work on the 2 shared cores then disturbs them less), the median over `repeats` runs
with the spread (min..max); the median wall-clock rate is printed after "wall".
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

import arena
from agents.minimax import MinimaxAgent
from arena.plugins import get_registry

REGISTRY = get_registry()
GAMES = ("connect_four", "reversi", "santorini")
#: Alpha-beta depth per game: deep enough that ordering and the table matter, a few seconds a run.
DEPTHS = {"connect_four": 6, "reversi": 6, "santorini": 4}
#: Lengths of the random openings that make the benchmark positions (several per game).
PLIES = {"connect_four": (0, 4, 8, 12), "reversi": (0, 10, 20, 30), "santorini": (4, 8, 14, 20)}


def positions(game: arena.Game, plies: tuple[int, ...], seeds: int = 2) -> list[tuple[list[int], arena.State]]:
    """Seeded random positions (and the actions that lead to them), none of them finished."""
    found = []
    for seed in range(seeds):
        for length in plies:
            rng = random.Random(f"{seed}-{length}")
            state = game.new_initial_state(seed)
            moves: list[int] = []
            for _ in range(length):
                action = rng.choice(state.legal_actions())
                candidate = state.clone()
                candidate.apply(action)
                if candidate.is_terminal():
                    break
                state = candidate
                moves.append(action)
            found.append((moves, state))
    return found


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):10.0f}  ({min(values):.0f}..{max(values):.0f})"


def bench_minimax(game: arena.Game, states: list[arena.State], depth: int, repeats: int) -> None:
    agent_cls = REGISTRY.agents["minimax"]
    for tt, order in (("auto", "history"), ("render", "history"), ("off", "history"), ("auto", "eval")):
        rates, walls, seconds, nodes = [], [], [], 0
        for _ in range(repeats):
            total_nodes, cpu, wall = 0, 0.0, 0.0
            for state in states:
                agent = agent_cls(game, state.current_player, 0, depth=depth, tt=tt, order=order)
                start, start_cpu = time.perf_counter(), time.process_time()
                agent.act(state.clone())
                cpu += time.process_time() - start_cpu
                wall += time.perf_counter() - start
                assert isinstance(agent, MinimaxAgent)
                total_nodes += int(agent.stats.get("nodes", 0))
            rates.append(total_nodes / cpu)
            walls.append(total_nodes / wall)
            seconds.append(cpu)
            nodes = total_nodes
        print(
            f"  minimax depth {depth} tt={tt:6} order={order:7}  nodes {nodes:8d}  cpu s {statistics.median(seconds):6.2f}  "
            f"nodes/s {spread(rates)}  wall {statistics.median(walls):8.0f}",
            flush=True,
        )


def bench_mcts(game: arena.Game, states: list[arena.State], simulations: int, repeats: int) -> float:
    agent_cls = REGISTRY.agents["mcts"]
    rates, walls = [], []
    for r in range(repeats):
        cpu, wall = 0.0, 0.0
        for state in states:
            agent = agent_cls(game, state.current_player, r, simulations=simulations)
            start, start_cpu = time.perf_counter(), time.process_time()
            agent.act(state.clone())
            cpu += time.process_time() - start_cpu
            wall += time.perf_counter() - start
        rates.append(simulations * len(states) / cpu)
        walls.append(simulations * len(states) / wall)
    print(f"  mcts {simulations} simulations{'':28}sims/s  {spread(rates)}  wall {statistics.median(walls):8.0f}", flush=True)
    return statistics.median(rates)


def bench_openspiel(move_lists: list[list[int]], simulations: int, repeats: int) -> float | None:
    """OpenSpiel's Python MCTSBot on connect four from the same positions; None without open_spiel."""
    try:
        import numpy as np
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        print("  OpenSpiel: skipped (open_spiel is not installed in this Python; run with /work/bench-venv/bin/python)")
        return None
    game = pyspiel.load_game("connect_four")
    best: float | None = None
    for solve in (True, False):
        rates, walls = [], []
        for r in range(repeats):
            cpu, wall = 0.0, 0.0
            for i, moves in enumerate(move_lists):
                state = game.new_initial_state()
                for action in moves:
                    state.apply_action(action)
                bot = mcts.MCTSBot(
                    game,
                    uct_c=math.sqrt(2),
                    max_simulations=simulations,
                    evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(r * 100 + i)),
                    solve=solve,
                    random_state=np.random.RandomState(r * 100 + i + 1),
                )
                start, start_cpu = time.perf_counter(), time.process_time()
                bot.step(state)
                cpu += time.process_time() - start_cpu
                wall += time.perf_counter() - start
            rates.append(simulations * len(move_lists) / cpu)
            walls.append(simulations * len(move_lists) / wall)
        print(f"  OpenSpiel MCTSBot solve={solve!s:5}{'':22}sims/s  {spread(rates)}  wall {statistics.median(walls):8.0f}", flush=True)
        rate = statistics.median(rates)
        best = rate if best is None else max(best, rate)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--games", nargs="*", default=list(GAMES))
    args = parser.parse_args()
    ours: dict[str, float] = {}
    for game_id in args.games:
        if game_id not in REGISTRY.games:
            print(f"{game_id}: skipped, not registered yet")
            continue
        game = REGISTRY.games[game_id]()
        found = positions(game, PLIES.get(game_id, (0, 6, 12)))
        states = [s for _, s in found]
        print(f"{game_id}: {len(states)} positions", flush=True)
        bench_minimax(game, states, DEPTHS.get(game_id, 3), args.repeats)
        ours[game_id] = bench_mcts(game, states, args.simulations, args.repeats)
        if game_id == "connect_four":
            theirs = bench_openspiel([m for m, _ in found], args.simulations, args.repeats)
            if theirs:
                ratio = ours[game_id] / theirs
                verdict = "meets" if ratio >= 2 else "BELOW"
                print(f"  ours {ours[game_id]:.0f} sims/s / OpenSpiel {theirs:.0f} sims/s = {ratio:.2f}x ({verdict} the 2x target)")
        print(flush=True)


if __name__ == "__main__":
    main()
