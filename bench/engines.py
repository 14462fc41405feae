"""Game-engine speed: random play-outs through each engine's own API, steps/s and games/s.

Run from the benchmark environment that `make bench` builds in the repository (`.venv-bench`: it
has open_spiel and pettingzoo beside an editable install of Arena), from the repository root:

    make bench                                              # builds .venv-bench, then runs every benchmark
    .venv-bench/bin/python bench/engines.py                 # ~2 s per engine
    .venv-bench/bin/python bench/engines.py --budget 1 --games reversi,dots_and_boxes

Every engine runs the same loop in one process: pick `random.choice` of the legal actions,
apply it, until the game is over; a new game starts until the time budget is spent. Arena's
built-in games are measured through the public Game/State API (default parameters), OpenSpiel's
through pyspiel, and PettingZoo's connect_four_v3 through its AEC API with random legal moves from
the action mask. The ratios at the end are the figures the engine targets are stated in. The
machine is shared and noisy: run it more than once before believing a ratio.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

# A random play-out of a game with no declared bound is cut off here (it still counts as a game).
STEP_CAP = 2000


@dataclass
class Figure:
    engine: str
    game: str
    steps: int
    games: int
    seconds: float

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds


@dataclass
class Engine:
    """One engine on one game: `play_one(seed) -> steps` plays a whole game."""

    engine: str
    game: str
    play_one: Callable[[int], int]


def measure(engines: list[Engine], budget: float, rounds: int) -> list[Figure]:
    """Give every engine `budget` seconds in total, in `rounds` interleaved slices.

    The machine is shared: interleaving spreads a burst of load over all engines instead of
    charging it to whichever one happened to run then, which keeps the ratios honest.
    """
    figures = [Figure(e.engine, e.game, 0, 0, 0.0) for e in engines]
    for e in engines:
        e.play_one(0)  # warm-up: tables, caches, imports
    clock = time.perf_counter
    slice_ = budget / rounds
    for _ in range(rounds):
        for e, f in zip(engines, figures):
            start = clock()
            elapsed = 0.0
            while elapsed < slice_:  # the clock is read once per game
                f.steps += e.play_one(f.games + 1)
                f.games += 1
                elapsed = clock() - start
            f.seconds += elapsed
    return figures


def arena_engines(only: set[str] | None) -> list[Engine]:
    from arena.plugins import get_registry

    engines = []
    registry = get_registry()
    for game_id in sorted(registry.games):
        if only and game_id not in only:
            continue
        game = registry.games[game_id]()
        bound = game.max_game_length() or STEP_CAP
        rng = random.Random(1)
        choice = rng.choice

        def play_one(seed: int, game=game, bound=bound, choice=choice) -> int:
            state = game.new_initial_state(seed)
            steps = 0
            while not state.is_terminal() and steps < bound:
                state.apply(choice(state.legal_actions()))
                steps += 1
            return steps

        engines.append(Engine("arena", game_id, play_one))
    return engines


# Our game id -> (OpenSpiel name, parameters) at the same size as our default parameters.
OPENSPIEL_GAMES = {
    "tic_tac_toe": ("tic_tac_toe", {}),
    "connect_four": ("connect_four", {}),
    "dots_and_boxes": ("dots_and_boxes", {"num_rows": 3, "num_cols": 3}),
    "reversi": ("othello", {}),
}


def openspiel_engines(only: set[str] | None) -> list[Engine]:
    try:
        import pyspiel
    except ImportError as exc:
        print(f"OpenSpiel figures skipped (use the bench venv): {exc}", file=sys.stderr)
        return []
    engines = []
    for ours, (name, params) in OPENSPIEL_GAMES.items():
        if only and ours not in only:
            continue
        game = pyspiel.load_game(name, params)
        rng = random.Random(1)
        choice = rng.choice

        def play_one(seed: int, game=game, choice=choice) -> int:
            state = game.new_initial_state()
            steps = 0
            while not state.is_terminal():
                state.apply_action(choice(state.legal_actions()))
                steps += 1
            return steps

        engines.append(Engine("openspiel", ours, play_one))
    return engines


def pettingzoo_engines(only: set[str] | None) -> list[Engine]:
    if only and "connect_four" not in only:
        return []
    try:
        import numpy as np
        from pettingzoo.classic import connect_four_v3
    except ImportError as exc:  # pettingzoo's classic games also need pygame
        print(f"PettingZoo figures skipped (use the bench venv): {exc}", file=sys.stderr)
        return []
    env = connect_four_v3.env()
    rng = random.Random(1)
    choice = rng.choice
    flatnonzero = np.flatnonzero

    def play_one(seed: int) -> int:
        env.reset(seed=seed)
        steps = 0
        for _agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                action = int(choice(flatnonzero(observation["action_mask"])))
                steps += 1
            env.step(action)
        return steps

    return [Engine("pettingzoo", "connect_four", play_one)]


def print_table(figures: list[Figure]) -> None:
    print(f"{'engine':<11} {'game':<16} {'steps/s':>11} {'games/s':>10} {'avg len':>8} {'games':>7}")
    for f in figures:
        print(
            f"{f.engine:<11} {f.game:<16} {f.steps_per_s:>11,.0f} {f.games_per_s:>10,.1f}"
            f" {f.steps / max(f.games, 1):>8.1f} {f.games:>7}"
        )


# Arena game -> the OpenSpiel ratio (steps/s) it should reach.
TARGETS = {"tic_tac_toe": 0.5, "connect_four": 0.5, "dots_and_boxes": 0.5, "reversi": 0.3}
PETTINGZOO_TARGET = 10.0


def print_ratios(figures: list[Figure]) -> None:
    ours = {f.game: f for f in figures if f.engine == "arena"}
    spiel = {f.game: f for f in figures if f.engine == "openspiel"}
    zoo = next((f for f in figures if f.engine == "pettingzoo"), None)
    if spiel:
        print("\nArena / OpenSpiel (steps/s; games are the same size, so games/s gives the same ratio)")
        for game, target in TARGETS.items():
            if game in ours and game in spiel:
                ratio = ours[game].steps_per_s / spiel[game].steps_per_s
                verdict = "ok" if ratio >= target else "BELOW TARGET"
                print(f"  {game:<16} {ratio:6.2f}   target >= {target:g}   {verdict}")
    else:
        print("\nArena / OpenSpiel: skipped (open_spiel missing)")
    if zoo is not None:
        print(f"\nArena game / PettingZoo connect_four_v3 (steps/s; target >= {PETTINGZOO_TARGET:g}x)")
        for game, figure in sorted(ours.items()):
            ratio = figure.steps_per_s / zoo.steps_per_s
            verdict = "ok" if ratio >= PETTINGZOO_TARGET else "BELOW TARGET"
            print(f"  {game:<16} {ratio:7.1f}x  {verdict}")
    else:
        print("\nArena / PettingZoo: skipped (pettingzoo missing)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per engine (default 2)")
    parser.add_argument("--games", default="", help="comma-separated Arena game ids to measure (default all)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved slices per engine (default 4)")
    parser.add_argument("--arena-only", action="store_true", help="skip OpenSpiel and PettingZoo")
    args = parser.parse_args(argv)
    only = {g.strip() for g in args.games.split(",") if g.strip()} or None

    engines = arena_engines(only)
    if not args.arena_only:
        engines += openspiel_engines(only)
        engines += pettingzoo_engines(only)
    figures = measure(engines, args.budget, max(1, args.rounds))
    print(
        f"random play-outs, one process, {args.budget:g} s per engine in {args.rounds} interleaved slices,"
        f" Python {sys.version.split()[0]}\n"
    )
    print_table(figures)
    print_ratios(figures)


if __name__ == "__main__":
    main()
