"""The reports' learning set-ups at a reduced scale, over several seeds, with honest intervals.

    .venv/bin/python bench/learning.py                 # every set-up, 3 seeds, scale 1
    .venv/bin/python bench/learning.py --scale 0.5 --only dab22-qlearning,ttt-reinforce

For each set-up and seed it trains with `arena train`'s library function (agents.neural_train.train),
then plays the trained network's best action against `random` and `greedy` (`--games` games each,
seats alternating, fixed seeds) and prints, per opponent, the win/draw/loss rates pooled over the
seeds with a Wilson 95% interval on the win rate, and the spread of the per-seed win rates; and, as the
baseline training is measured against, the same network before training (same seed, same initial
weights; an empty table for Q-learning) against `random` and `greedy` (`--no-baseline` skips it). Tabular
Q-learning on 2x2 Dots and Boxes also prints training games per second (the report: 100,000 games in
about 80 s, 1250 games/s). The fully convolutional Dots and Boxes network trained on 3x3 is also
evaluated on 2x2 and 4x4 (the report's tables 7 and 8). Its MDRNN on the box and the edge
representation, trained against greedy on 3x3, is the report's table 3; the same on the edge
representation with a GRU cell (`--cell gru`), its section 2.6. The Santorini report's value networks
(`--algorithm value`, from final results and from MCTS searches) are evaluated as they play, one ply ahead;
chiamp's DQN on Monte-Carlo returns and the Onitama report's validity-head actor have set-ups too.

Training is reproducible for one seed on one machine (torch seeded, one thread), not bit for bit
across machines: CPU kinds, BLAS builds and torch versions change the last bits of sums, and
training amplifies them. Hence several seeds and the spread, not one run.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.neural_train import TrainConfig, evaluate_against, greedy_policy, train, untrained
from agents.train_pool import file_values
from arena.plugins import get_registry

OPPONENTS = ("random", "greedy")


@dataclass(frozen=True)
class Setup:
    name: str
    report: str  # which report's set-up this reduces, and what it measured there
    settings: dict[str, Any]
    episodes: int
    suffix: str = ".npz"
    other_sizes: tuple[str, ...] = ()  # other games a size-independent network is also evaluated on
    opponents: tuple[str, ...] = OPPONENTS  # what the trained and untrained networks are evaluated against


SETUPS = (
    Setup("ttt-reinforce", "README's tic-tac-toe REINFORCE MLP against random",
          {"game": "tic_tac_toe", "algorithm": "reinforce", "opponent": "random"}, 20_000),
    Setup("c4-dqn", "README's connect-four double DQN MLP trained against greedy",
          {"game": "connect_four", "algorithm": "dqn", "opponent": "greedy"}, 2_000),
    Setup("onitama-reinforce", "Onitama report: policy gradient against random, study5 cards",
          {"game": "onitama:cards=study5", "algorithm": "reinforce", "opponent": "random"}, 3_000),
    Setup("dab3-double-dqn", "Dots and Boxes report table 4: double Q 58% against greedy (30,000 games, 3x3)",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy"}, 1_500),
    Setup("dab3-plain-dqn", "Dots and Boxes report table 4: regular Q 43% against greedy (30,000 games, 3x3)",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy", "double": False}, 1_500),
    Setup("dab3-double-dqn-per", "Dots and Boxes report table 5: double Q with prioritized replay 54% against greedy (30,000 games, 3x3)",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy", "prioritized": True}, 1_500),
    Setup("dab3-fcn-dqn", "Dots and Boxes report tables 6-8: size-independent network trained on 3x3 against greedy",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy", "net": "fcn", "channels": (32, 32)}, 1_500,
          ".pt", ("dots_and_boxes:rows=2,cols=2", "dots_and_boxes:rows=4,cols=4")),
    Setup("dab3-mdrnn-box", "Dots and Boxes report table 3: MDRNN, box representation, 37.0% against greedy (10,000 games, 3x3)",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy", "net": "mdrnn", "representation": "box"}, 1_500, ".pt"),
    Setup("dab3-mdrnn-edge", "Dots and Boxes report table 3: MDRNN, edge representation, 43.2% against greedy (10,000 games, 3x3)",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy", "net": "mdrnn", "representation": "edge"}, 1_500, ".pt"),
    Setup("dab3-mdrnn-gru", "Dots and Boxes report section 2.6: MDRNN with a GRU cell, edge representation (the report does not say "
          "which), below the tanh cell after 30,000 games on 3x3 (no figure given)",
          {"game": "dots_and_boxes", "algorithm": "dqn", "opponent": "greedy", "net": "mdrnn", "representation": "edge", "cell": "gru"},
          1_500, ".pt"),
    Setup("reversi-dueling-shaped", "Reversi report: dueling DQN with positional rewards",
          {"game": "reversi", "algorithm": "dqn", "opponent": "random", "net": "conv", "dueling": True,
           "channels": (16, 16), "hidden": (64,), "shaping": "positional"}, 300, ".pt"),
    Setup("onitama-ddpg", "Onitama report: DDPG against minimax depth 1, depth + 1 when it wins 60 of the last 100, study5 cards",
          {"game": "onitama:cards=study5", "algorithm": "ddpg", "opponent": "minimax:depth=1", "promote_at": 0.6, "window": 100},
          1_000, opponents=("random", "minimax:depth=1")),
    Setup("onitama-ddpg-validity", "Onitama report section 5: DDPG with the val_branch_actions actor (its pick for extended training)",
          {"game": "onitama:cards=study5", "algorithm": "ddpg", "opponent": "minimax:depth=1", "promote_at": 0.6, "window": 100,
           "net": "conv", "validity": "val_branch_actions"}, 500, ".pt", opponents=("random", "minimax:depth=1")),
    Setup("santorini-value-ann", "Santorini report: ANN (hidden 256, 64) learned from final results, 92% against random (10,000 games)",
          {"game": "santorini", "algorithm": "value", "opponent": "random", "hidden": (256, 64)}, 2_000, ".pt"),
    Setup("santorini-value-cnn", "Santorini report: CNN (two 16-channel convolutions) learned from final results, 98% against random",
          {"game": "santorini", "algorithm": "value", "opponent": "random", "net": "conv", "channels": (16, 16), "hidden": (64,)},
          2_000, ".pt"),
    Setup("santorini-mcts-ann", "Santorini report: MCTS_ANN, positions valued by 30-simulation MCTS searches, 99% against random",
          {"game": "santorini", "algorithm": "value", "opponent": "random", "hidden": (256, 64), "targets": "mcts:simulations=30"},
          300, ".pt"),
    Setup("c4-dqn-returns", "chiamp's DQN (Monte-Carlo returns, no target network) on connect four against greedy",
          {"game": "connect_four", "algorithm": "dqn", "opponent": "greedy", "returns": True}, 2_000),
    Setup("dab22-qlearning", "Dots and Boxes report table 2: tabular Q on 2x2 against greedy, 30% wins after 100,000 games",
          {"game": "dots_and_boxes:rows=2,cols=2", "algorithm": "qlearning", "opponent": "greedy"}, 20_000),
    Setup("dab22-qlearning-random", "Dots and Boxes report table 1: tabular Q on 2x2 trained against random",
          {"game": "dots_and_boxes:rows=2,cols=2", "algorithm": "qlearning", "opponent": "random"}, 30_000),
)  # fmt: skip


@dataclass
class Pooled:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    per_seed: list[float] = field(default_factory=list)

    def add(self, rates: tuple[float, float, float], games: int) -> None:
        win, draw, loss = (round(r * games) for r in rates)
        self.wins, self.draws, self.losses = self.wins + win, self.draws + draw, self.losses + loss
        self.per_seed.append(rates[0])

    def line(self) -> str:
        n = self.wins + self.draws + self.losses
        low, high = wilson(self.wins, n)
        spread = f"{min(self.per_seed):.0%}-{max(self.per_seed):.0%}"
        return (f"win {self.wins / n:.0%} [95% {low:.0%}-{high:.0%}] draw {self.draws / n:.0%} loss {self.losses / n:.0%} "
                f"of {n}; per seed {spread}")  # fmt: skip


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def run(setup: Setup, seeds: int, scale: float, games: int, folder: Path, baseline: bool) -> None:
    registry = get_registry()
    episodes = max(1, round(setup.episodes * scale))
    print(f"\n{setup.name}: {setup.report}\n  {episodes} episodes per seed, {seeds} seeds, {games} evaluation games per opponent")
    pooled: dict[str, Pooled] = {}
    seconds, cpu = [], []
    for seed in range(seeds):
        out = str(folder / f"{setup.name}-{seed}{setup.suffix}")
        config = TrainConfig(out=out, episodes=episodes, seed=seed, eval_games=0, **setup.settings)
        start, start_cpu = time.perf_counter(), time.process_time()
        summary = train(config, registry)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)  # this process's CPU time: what the machine's load does not stretch
        if baseline:  # the same network (or an empty table) before training, against each opponent
            plan, before = untrained(config, registry)
            for opponent in setup.opponents:
                rates = evaluate_against(plan, registry, before, opponent, games)
                pooled.setdefault(f"untrained vs {opponent}", Pooled()).add(rates, games)
        assert summary.plan is not None and summary.policy is not None
        for opponent in setup.opponents:
            rates = evaluate_against(summary.plan, registry, summary.policy, opponent, games)
            pooled.setdefault(f"{summary.plan.game.label()} vs {opponent}", Pooled()).add(rates, games)
        for spec in setup.other_sizes:
            from arena.tournament import make_game

            other = make_game(registry, spec)
            values = greedy_policy(file_values(out, other))
            for opponent in setup.opponents:
                rates = evaluate_against(summary.plan, registry, values, opponent, games, game=other)
                pooled.setdefault(f"{other.label()} vs {opponent}", Pooled()).add(rates, games)
    rate = episodes / np.mean(seconds)
    print(f"  training: {np.mean(seconds):.1f}s per seed (min {min(seconds):.1f}, max {max(seconds):.1f}), {rate:.0f} games/s; "
          f"CPU {np.mean(cpu):.1f}s per seed (min {min(cpu):.1f}, max {max(cpu):.1f}), {episodes / np.mean(cpu):.0f} games per CPU second")
    for label, result in pooled.items():
        print(f"  {label:<40} {result.line()}")


def main() -> None:
    parser = argparse.ArgumentParser(description="The reports' learning set-ups, reduced, over seeds.")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every set-up's training episodes")
    parser.add_argument("--games", type=int, default=100, help="evaluation games per opponent and seed")
    parser.add_argument("--no-baseline", action="store_true", help="skip the untrained network's games against random")
    parser.add_argument("--only", default="", help="comma-separated set-up names (" + ", ".join(s.name for s in SETUPS) + ")")
    args = parser.parse_args()
    chosen = [s for s in SETUPS if not args.only or s.name in args.only.split(",")]
    import torch

    from agents.models.base import cpu_threads

    available = torch.get_num_threads()
    # Evaluation plays as the `neural` agent does, on cpu_threads() (1 unless $ARENA_MODEL_THREADS): on a busy machine two
    # threads' spin-waiting made the MDRNN's small forward passes about 50 times slower.
    torch.set_num_threads(cpu_threads())
    print(f"torch {torch.__version__}, {available} threads available (training uses 1, evaluation {torch.get_num_threads()})")
    print(f"machine load before: {load()}")
    with tempfile.TemporaryDirectory() as folder:
        for setup in chosen:
            run(setup, args.seeds, args.scale, args.games, Path(folder), not args.no_baseline)
    print(f"\nmachine load after: {load()}")


def load() -> str:
    """The load averages (1, 5, 15 minutes) and the core count: the timing figures mean little without them."""
    import os

    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
