"""Network agents: matches per second unbatched against --concurrent-matches, ONNX Runtime against
TorchScript, and the memory of a worker with a network loaded.

    .venv/bin/python bench/models.py [--matches 512] [--concurrent 64]

A small CNN for connect four (two 3x3 convolutions of 32 channels, a 64-unit layer, a policy head of
7 and a value head), exported from the same weights as TorchScript and ONNX, plays itself
(`sample=true`, so matches differ) through the library's tournament runner (one worker, a real
SQLite file). Target: --concurrent-matches 64 at least 5x the matches per second of one match at a
time, on the CPU; the same for ONNX with each agent in its own process (`--isolate`: a batch crosses to
its process in one message). It also prints the share of each run spent in the network's forward passes (the
ceiling: what batching can still gain once everything else is free) and the forward pass alone at
batch 1 and 64. Networks run with $ARENA_MODEL_THREADS threads (default 1).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.models.base import THREADS_VARIABLE, cpu_threads  # noqa: E402
from arena import tournament  # noqa: E402
from arena.plugins import get_registry  # noqa: E402
from db.session import open_database  # noqa: E402


def export(folder: Path) -> dict[str, Path]:
    import torch
    from c4_cnn import SmallCNN  # torch only here: each isolated agent process re-runs this script's imports (arena.isolation.PRELOAD)

    torch.manual_seed(0)
    net = SmallCNN().eval()
    example = torch.zeros(2, 3, 6, 7)
    paths = {"torchscript": folder / "c4_cnn.pt", "onnx": folder / "c4_cnn.onnx"}
    torch.jit.save(torch.jit.script(net), str(paths["torchscript"]))
    torch.onnx.export(net, (example,), str(paths["onnx"]), input_names=["observation"], output_names=["values", "value"],
                      dynamic_axes={"observation": {0: "batch"}, "values": {0: "batch"}, "value": {0: "batch"}},
                      dynamo=False)  # fmt: skip
    return paths


def timed_run(path: Path, matches: int, concurrent: int, folder: Path, workers: int = 1, isolate: bool = False) -> tuple[float, float]:
    """Matches per second, and the share of the run's time spent in the network's forward passes (`Model.run`) in
    this process (none when isolated: the network runs in the agents' processes)."""
    from agents.models.base import Model

    spent = [0.0]
    run = Model.run

    def timed(self: Model, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        began = time.perf_counter()
        try:
            return run(self, batch)
        finally:
            spent[0] += time.perf_counter() - began

    Model.run = timed  # type: ignore[method-assign]
    try:
        played, seconds = _play(path, matches, concurrent, folder, workers, isolate)
    finally:
        Model.run = run  # type: ignore[method-assign]
    return played / seconds, spent[0] / seconds


def _play(path: Path, matches: int, concurrent: int, folder: Path, workers: int, isolate: bool = False) -> tuple[int, float]:
    registry = get_registry()
    database = open_database(f"sqlite:///{folder / f'bench-{time.monotonic_ns()}.db'}")
    agents = f"neural:checkpoint={path},sample=true,neural:checkpoint={path},sample=true,seed=1"
    request = tournament.TournamentRequest(game="connect_four", agents=agents, rounds=matches, seed=1)
    tournament_id = tournament.create(registry, database, request)
    start = time.perf_counter()
    played = tournament.play(database, registry, tournament_id, workers=workers, concurrent=concurrent, isolate=isolate)
    return played, time.perf_counter() - start


def forward_latency(path: Path, batch: int, repeats: int = 200) -> float:
    """Seconds per forward pass of `batch` connect-four observations, through Arena's loader."""
    from agents.models import load_model

    model = load_model(str(path))
    observations = np.random.default_rng(0).random((batch, 3, 6, 7), dtype=np.float32)
    model.run(observations)
    start = time.perf_counter()
    for _ in range(repeats):
        model.run(observations)
    return (time.perf_counter() - start) / repeats


MEMORY_SCRIPT = """
import json, sys, psutil
process = psutil.Process()
import arena.tournament, agents.neural  # what a worker has loaded before any network
before = process.memory_info().rss
from agents.models import load_model
model = load_model(sys.argv[1])
import numpy as np
model.run(np.zeros((64, 3, 6, 7), dtype=np.float32))
print(json.dumps({"before": before, "after": process.memory_info().rss, "torch": "torch" in sys.modules}))
"""


def worker_memory(path: Path) -> dict[str, float]:
    run = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(path)], capture_output=True, text=True, check=True, cwd=ROOT)
    data = json.loads(run.stdout.strip().splitlines()[-1])
    return {"before_mb": data["before"] / 2**20, "after_mb": data["after"] / 2**20, "torch": data["torch"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=512)
    parser.add_argument("--concurrent", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        paths = export(folder)
        print(f"connect four, small CNN against itself, {args.matches} matches, 1 worker, CPU "
              f"(threads per network: {cpu_threads()}, ${THREADS_VARIABLE})")  # fmt: skip
        rates, shares = {}, {}
        for kind, path in paths.items():
            one, shares[kind, 1] = timed_run(path, args.matches, 1, folder)
            many, shares[kind, args.concurrent] = timed_run(path, args.matches, args.concurrent, folder)
            rates[kind] = (one, many)
            print(f"  {kind:12s} one at a time {one:8.1f} matches/s   --concurrent-matches {args.concurrent}: "
                  f"{many:8.1f} matches/s   speed-up {many / one:5.1f}x (target >= 5x)")  # fmt: skip
        isolated = {concurrent: timed_run(paths["onnx"], args.matches, concurrent, folder, isolate=True)[0]
                    for concurrent in (1, args.concurrent)}  # fmt: skip
        print(f"  onnx, --isolate (each agent in its own process): one at a time {isolated[1]:8.1f} matches/s   "
              f"--concurrent-matches {args.concurrent}: {isolated[args.concurrent]:8.1f} matches/s   "
              f"speed-up {isolated[args.concurrent] / isolated[1]:5.1f}x")  # fmt: skip
        print("share of each run's time in the network's forward passes (the rest: games, match loop, masking, storing):")
        for kind in paths:
            one, many = shares[kind, 1], shares[kind, args.concurrent]
            print(f"  {kind:12s} one at a time {one:6.1%}   --concurrent-matches {args.concurrent}: {many:6.1%}   "
                  f"(with free forward passes the batched run would be {1 / (1 - many):4.2f}x faster)")  # fmt: skip
        print("forward pass through Arena's loader (ms):")
        for batch in (1, args.concurrent):
            ts, ort = forward_latency(paths["torchscript"], batch), forward_latency(paths["onnx"], batch)
            print(f"  batch {batch:3d}: TorchScript {ts * 1e3:7.3f}   ONNX Runtime {ort * 1e3:7.3f}   TorchScript/ONNX {ts / ort:5.2f}")
        print("ONNX Runtime against TorchScript, matches/s: "
              f"one at a time {rates['onnx'][0] / rates['torchscript'][0]:.2f}x, "
              f"batched {rates['onnx'][1] / rates['torchscript'][1]:.2f}x")  # fmt: skip
        print("memory of a worker process (RSS, MB) before and after loading the network and one batch of 64:")
        for kind, path in paths.items():
            memory = worker_memory(path)
            grown = memory["after_mb"] - memory["before_mb"]
            print(f"  {kind:12s} {memory['before_mb']:7.1f} -> {memory['after_mb']:7.1f}  (+{grown:.1f}; "
                  f"torch imported: {memory['torch']})")  # fmt: skip


if __name__ == "__main__":
    main()
