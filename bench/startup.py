"""How long an `arena` command takes to start: the suite starts hundreds of `arena` processes (commands, tournament
workers, servers), and a user waits for each command. Times whole commands, each in a new process, and the two parts
every process pays: importing the command line and loading the plugins.

    .venv/bin/python bench/startup.py [--runs 8]

Prints the median wall time of each command over --runs runs (in an empty folder, on a database made once), and the
median of importing `arena.cli` and of `arena.plugins.load()` in a new interpreter. No target: a figure to compare
before and after a change. 2026-11-28, `--runs 6`, a slow host, before (5c98d14) and after (e94b629) the
plugin metadata and lazy-import changes: --help 2.70 -> 1.37 s, games 2.32 -> 1.61 s, leaderboard 1.89 -> 1.31 s,
matrix 2.15 -> 1.34 s, run-tournament 2.38 -> 1.49 s; import arena.cli 1.30 -> 0.99 s, plugins.load() 0.43 -> 0.19 s.
Later that day, `arena train` (DQN, 3 episodes), `--runs 5`: with torch.optim.Adam 9.17 s, with agents/train_adam.py 4.93 s
(torch.optim imports torch._dynamo).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARENA = str(Path(sys.executable).parent / "arena")
TOURNAMENT = ["run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "1", "--quiet"]
COMMANDS = [["--help"], ["games"], ["leaderboard"], ["matrix"], TOURNAMENT,
            ["train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--episodes", "3", "--eval-games", "0", "--out", "t.npz"]]  # fmt: skip
PARTS = {
    "import arena.cli": "import time; t = time.perf_counter(); import arena.cli; print(time.perf_counter() - t)",
    "plugins.load()": "import time, arena.cli, arena.plugins as p; t = time.perf_counter(); p.load(); "
    "print(time.perf_counter() - t)",
}


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        env = {**os.environ, "ARENA_DB": str(cwd / "arena.db")}
        subprocess.run([ARENA, *TOURNAMENT], cwd=cwd, env=env, capture_output=True, check=True)  # a stored tournament
        print(f"median of {runs} runs, each a new process")
        for command in COMMANDS:
            times = [wall([ARENA, *command], cwd, env) for _ in range(runs)]
            print(f"  arena {' '.join(command)[:60]:<60} {statistics.median(times):6.2f} s")
        for name, code in PARTS.items():
            parts = [float(subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                                          check=True).stdout) for _ in range(runs)]  # fmt: skip
            print(f"  {name:<66} {statistics.median(parts):6.2f} s")


if __name__ == "__main__":
    main()
