"""Time drawing the whole report (arena report) for a big tournament, from match records in memory.

    .venv/bin/python bench/report.py                        # 9 agents x 2500 round-robins = 90,000 matches (the Onitama study's size)
    .venv/bin/python bench/report.py --agents 30 --rounds 20 --out /tmp/report30   # 8,700 matches, keep the files to look at

Loading 90,000 matches from SQLite is the storage layer's job and is not timed here: the records
are synthetic (db.records.MatchRecord), made in memory with a seeded generator: agents of evenly
spread strength, logistic outcomes with some draws, match lengths that grow when the agents are
close, and about 14 legal moves per turn (Onitama's average), stored as arena.match encodes them.

Prints the seconds of each aggregate (the same pure functions the CLI uses), of each figure
(draw + PNG) and of the HTML, and the total.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from arena.match import encode_ints
from arena.report import PLOT_KINDS, Aggregates, TournamentSettings, draw, render, render_html
from db.records import MatchRecord, SeatRecord

ONITAMA_AGENTS = ["actions_after_val_multiply", "actions_only", "val_branch_actions", "val_after_actions",
                  "actions_after_val", "dual", "val_branch_actions_multiply", "val_after_actions_multiply", "random"]  # fmt: skip
LONG_NAME = "minimax:depth=3,eval=linear,weights=0,2,4,-1,0,-2,-4,1"


def agent_names(count: int) -> list[str]:
    if count <= len(ONITAMA_AGENTS):
        return ONITAMA_AGENTS[:count]
    names = ONITAMA_AGENTS + [f"mcts:simulations={100 * i}" for i in range(1, 11)] + [LONG_NAME]
    names += [f"agent_{i:02d}" for i in range(count - len(names))]
    return names[:count]


def synthetic_records(agents: list[str], rounds: int, seed: int = 0, max_turns: int = 200) -> list[MatchRecord]:
    """A round-robin of `rounds` rounds, seats alternating by round, with seeded random results."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.0, -1.0, len(agents))  # log-odds
    pairs = list(combinations(range(len(agents)), 2))
    records = []
    index = 0
    for round_ in range(rounds):
        for a, b in pairs:
            first, second = (a, b) if round_ % 2 == 0 else (b, a)
            p_first = 1 / (1 + np.exp(strength[second] - strength[first] - 0.1))  # a small first-seat edge
            turns = int(np.clip(rng.normal(40 + 20 * (1 - abs(strength[first] - strength[second])), 15), 5, max_turns))
            draw_ = turns >= max_turns or rng.random() < 0.05
            first_wins = rng.random() < p_first
            outcomes = ("draw", "draw") if draw_ else ("win", "loss") if first_wins else ("loss", "win")
            scores = {"win": 1.0, "draw": 0.0, "loss": -1.0}
            ranks = {"win": 1, "draw": 1, "loss": 2}
            seats = tuple(
                SeatRecord(seat, agents[who], scores[outcome], outcome, ranks[outcome], 0.001 * turns, (turns + 1 - seat) // 2)
                for seat, (who, outcome) in enumerate(zip((first, second), outcomes))
            )
            legal = np.clip(rng.poisson(14, turns), 1, 40)
            index += 1
            records.append(MatchRecord(index, 1, index - 1, int(rng.integers(2**62)), "onitama", "1", turns,
                                       "turn_limit" if turns >= max_turns else "normal", seats, encode_ints(legal.tolist())))  # fmt: skip
    return records


def settings(agents: list[str], rounds: int, seed: int) -> TournamentSettings:
    return TournamentSettings(
        id=1, name="bench", game="onitama", game_id="onitama", game_version="1", game_params="cards=all", format="round-robin",
        challenger=None, rounds=rounds, seed=seed, max_turns=200, time_per_move=None, players=2, status="done",
        created_at="-", finished_at=None, agents=tuple({"label": a, "type": "synthetic", "params": {}, "version": "1"} for a in agents),
    )  # fmt: skip


def timed(label: str, seconds: dict[str, float], action: object) -> object:
    start = time.perf_counter()
    result = action()  # type: ignore[operator]
    seconds[label] = time.perf_counter() - start
    print(f"  {label:<28} {seconds[label]:7.2f} s", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="Keep the PNGs and report.html here (default: a temporary directory).")
    args = parser.parse_args()

    agents = agent_names(args.agents)
    start = time.perf_counter()
    records = synthetic_records(agents, args.rounds, args.seed)
    print(f"{len(records)} synthetic matches, {len(agents)} agents, {args.rounds} rounds (made in {time.perf_counter() - start:.1f} s)")

    title = f"tournament 1 'bench' (onitama, synthetic {len(records)} matches)"
    agg = Aggregates(records, title, [settings(agents, args.rounds, args.seed)])
    seconds: dict[str, float] = {}
    print("aggregates (the CLI's pure functions over the records):")
    timed("leaderboard (Elo, TS, BT)", seconds, lambda: agg.rows)
    timed("Elo history", seconds, lambda: agg.elo_series)
    for kind in ("net-wins", "avg-turns", "win-rate", "games"):
        timed(f"matrix {kind}", seconds, lambda kind=kind: agg.matrix(kind))
    timed("turn_stats", seconds, lambda: agg.stats)
    timed("histograms + seat counts", seconds, lambda: (agg.length_histogram, agg.legal_histogram, agg.seats))
    aggregate_total = sum(seconds.values())

    out = args.out or Path(tempfile.mkdtemp(prefix="arena-report-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    print("figures (draw + PNG):")
    images: dict[str, bytes] = {}
    for kind in PLOT_KINDS:
        images[kind] = timed(kind, seconds, lambda kind=kind: render(draw(kind, agg)))  # type: ignore[assignment]
        (out / f"{kind}.png").write_bytes(images[kind])
    html = timed("report.html", seconds, lambda: render_html(agg, images))
    (out / "report.html").write_text(html, encoding="utf-8")  # type: ignore[arg-type]
    drawing_total = sum(seconds.values()) - aggregate_total
    print(f"aggregates {aggregate_total:.2f} s + figures and HTML {drawing_total:.2f} s = "
          f"{aggregate_total + drawing_total:.2f} s; files in {out}")


if __name__ == "__main__":
    main()
