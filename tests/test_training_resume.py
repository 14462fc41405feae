"""`arena train --resume`: a run goes on from a checkpoint it wrote, with its weights, optimiser, replay buffer,
random generators and counts, and ends with the same files as a run that never stopped; `--save-every` and
Ctrl-C write what a killed or stopped run needs; checkpoints of another game or network are refused in one line."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.neural_train import TrainConfig, TrainingInterrupted, train
from agents.train_state import read_state, state_path
from arena.plugins import get_registry
from arena.training.metrics import read_metrics
from tests.conftest import loose_plugin

REGISTRY = get_registry()
ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"

# An opponent that plays at random and, when ARENA_TEST_SIGNAL=N:NAME is set, sends itself signal NAME when its N-th
# instance is made (one per training episode): a real signal at a known episode, whatever the machine's speed.
SIGNALLER = '''
import os, signal
import arena

MADE = [0]


class Signaller(arena.Agent):
    info = arena.AgentInfo(id="signaller", version="1", description="random; signals its own process (tests)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        MADE[0] += 1
        at, _, name = os.environ.get("ARENA_TEST_SIGNAL", ":").partition(":")
        if at and MADE[0] == int(at):
            os.kill(os.getpid(), getattr(signal, "SIG" + name))

    def act(self, state):
        return self.rng.choice(state.legal_actions())


@arena.hookimpl
def register_agents(register):
    register(Signaller)
'''


def short(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "episodes": 100, "hidden": (16,), "channels": (4, 4),
            "eval_every": 20, "eval_games": 4, "log_every": 10, "window": 30}  # fmt: skip
    return TrainConfig(**{**base, **settings})


def stop_after(calls: int):
    """A `stop` that turns true at its `calls`+1-th question (asked once before each episode)."""
    asked = [0]

    def stop() -> bool:
        asked[0] += 1
        return asked[0] > calls

    return stop


def rows_without_seconds(path: str) -> list[dict]:
    rows = read_metrics(path)
    for row in rows:
        row.pop("seconds", None)
        row.pop("resumed_from", None)
        row.pop("resumed_at", None)
    return rows


SETUPS = [  # algorithm, network, dueling, prioritized replay, Monte-Carlo returns, DDPG's validity design, file: every learner
    # kind, every saved format, a target network and none
    ("reinforce", "mlp", False, False, False, None, "r.npz"),
    ("dqn", "conv", True, False, False, None, "d.pt"),
    ("dqn", "mlp", False, True, False, None, "p.npz"),
    ("dqn", "mlp", False, False, True, None, "m.npz"),
    ("ddpg", "mlp", False, False, False, None, "g.npz"),
    ("ddpg", "mlp", False, False, False, "val_branch_actions_multiply", "v.pt"),
    ("qlearning", "mlp", False, False, False, None, "q.npz"),
]


@pytest.mark.parametrize("algorithm, net, dueling, prioritized, returns, validity, name", SETUPS,
                         ids=[s[0] + ("-prioritized" if s[3] else "") + ("-returns" if s[4] else "") + (f"-{s[5]}" if s[5] else "")
                              for s in SETUPS])  # fmt: skip
def test_a_stopped_self_play_run_resumed_ends_as_an_uninterrupted_one(tmp_path, algorithm, net, dueling, prioritized, returns, validity,
                                                                       name):  # fmt: skip
    """Stopped after 37 of 100 episodes (mid-batch for REINFORCE, between snapshots, between metric lines), then
    resumed: the checkpoint, its state, every pool snapshot and every metric but the clock are the same bytes
    (with prioritized replay, its priorities and the annealing of beta go on where they were; with --returns, the
    buffer's returns, and no target network; with a validity design, its layers, its valid rate's window and its validity
    losses since the last metric line)."""
    settings = {"algorithm": algorithm, "net": net, "dueling": dueling, "prioritized": prioritized, "returns": returns, "validity": validity,
                "opponent": "self", "snapshot_every": 15, "self_pool": 2}  # fmt: skip
    (tmp_path / "whole").mkdir()
    (tmp_path / "cut").mkdir()
    whole = short(tmp_path / "whole", name, **settings)
    train(whole, REGISTRY)
    cut = short(tmp_path / "cut", name, **settings)
    with pytest.raises(TrainingInterrupted, match=f"stopped after 37 of 100 episodes: wrote {cut.out} and {name}.resume"):
        train(cut, REGISTRY, stop=stop_after(37))
    meta, arrays = read_state(cut.out)
    assert meta["episodes"] == 37 and len(meta["pool"]["own"]) == 3  # snapshots after 0, 15 and 30 episodes
    if algorithm == "dqn":
        assert {"adam.0.exp_avg", "replay.observations", "replay.returns"} <= set(arrays)
        assert ("target.head.value.weight" in arrays) != returns and ("replay.priorities" in arrays) == prioritized
    if algorithm == "reinforce":
        assert len(arrays["pending.lengths"]) == 37 % 16  # the episodes waiting for their batch
    if validity:
        assert {"net.validity.weight", "target.validity.weight"} <= set(arrays) and len(meta["learner"]["validity"]["recent"]) == 30
    summary = train(replace(cut, resume=cut.out), REGISTRY)
    assert summary.episodes == 100
    for folder in ("whole", "cut"):
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == sorted([name, f"{name}.resume", f"{name}.metrics.jsonl",
                                                                                 Path(name).stem + ".pool"])  # fmt: skip
    assert Path(cut.out).read_bytes() == Path(whole.out).read_bytes()
    assert state_path(cut.out).read_bytes() != b"" and read_state(cut.out)[0]["learner"] == read_state(whole.out)[0]["learner"]
    cut_arrays, whole_arrays = read_state(cut.out)[1], read_state(whole.out)[1]  # weights, buffer, priorities, bit for bit
    assert sorted(cut_arrays) == sorted(whole_arrays) and all(np.array_equal(cut_arrays[k], whole_arrays[k]) for k in cut_arrays)
    pools = [sorted((tmp_path / folder / (Path(name).stem + ".pool")).iterdir()) for folder in ("whole", "cut")]
    assert [p.name for p in pools[0]] == [p.name for p in pools[1]] and len(pools[0]) == 8  # 0, 15, ..., 90 and 100
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(*pools, strict=True))
    assert rows_without_seconds(cut.out) == rows_without_seconds(whole.out)
    assert read_metrics(cut.out)[0]["resumed_at"] == 37


def test_reinforce_extended_past_its_end_equals_one_longer_run(tmp_path):
    """REINFORCE has no schedule: 50 episodes then --resume to 100 is one run of 100, although 50 is not a multiple of
    the batch (the state keeps the last partial batch unapplied; the 50-episode file has it applied)."""
    whole, half = short(tmp_path, "whole.npz"), short(tmp_path, "half.npz", episodes=50)
    train(whole, REGISTRY)
    train(half, REGISTRY)
    assert len(read_state(half.out)[1]["pending.lengths"]) == 50 % 16
    more = replace(whole, out=str(tmp_path / "more.npz"), resume=half.out)
    train(more, REGISTRY)
    assert Path(more.out).read_bytes() == Path(whole.out).read_bytes()
    rows = read_metrics(more.out)  # the earlier run's curve, then this one's
    assert [r["episode"] for r in rows if r["kind"] == "train"] == list(range(10, 101, 10))
    assert rows[0]["resumed_from"] == half.out and rows[0]["episodes"] == 100


def test_dqn_extended_goes_on_from_its_weights_with_the_longer_runs_epsilon(tmp_path):
    """DQN's epsilon decays over the first half of --episodes: a run extended from 60 to 120 episodes explores as a
    120-episode run does from episode 60 on (the same here: both at their floor), so it differs from one run of 120
    only by its first 60 episodes; it starts from the stored network, not from new weights."""
    half = short(tmp_path, "half.npz", algorithm="dqn", episodes=60)
    train(half, REGISTRY)
    more = replace(half, out=str(tmp_path / "more.npz"), episodes=120, resume=half.out)
    train(more, REGISTRY)
    fresh = replace(more, out=str(tmp_path / "fresh.npz"), resume=None)
    train(fresh, REGISTRY)
    epsilons = [r["epsilon"] for r in read_metrics(more.out) if r["kind"] == "train"]
    assert epsilons[5] == pytest.approx(0.05) and epsilons[6:] == [pytest.approx(0.05)] * 6
    meta = read_state(more.out)[0]
    assert meta["episodes"] == 120 and meta["learner"]["episode"] == 120
    assert meta["learner"]["steps"] > read_state(half.out)[0]["learner"]["steps"] > 0
    assert Path(more.out).read_bytes() != Path(fresh.out).read_bytes()


def test_a_run_against_a_fixed_opponent_goes_on_in_self_play(tmp_path):
    """Curriculum: trained against random, then resumed against past versions of itself; with no past version yet,
    the learner as it was resumed is the first one."""
    first = short(tmp_path, "first.npz", episodes=30, eval_games=0)
    train(first, REGISTRY)
    then = replace(first, out=str(tmp_path / "then.npz"), episodes=70, opponent="self", snapshot_every=25, resume=first.out)
    train(then, REGISTRY)
    assert sorted(p.name for p in (tmp_path / "then.pool").iterdir()) == [f"then-{n:07d}.npz" for n in (30, 50, 70)]
    assert read_metrics(then.out)[0]["opponent"] == "self" and read_state(then.out)[0]["episodes"] == 70


def test_resume_refuses_what_does_not_fit_in_one_line(tmp_path, arena_cli):
    trained = tmp_path / "t.npz"
    arena_cli("train", "--game", "tic_tac_toe", "--episodes", "20", "--hidden", "16", "--eval-games", "0", "--out", str(trained))
    base = ["train", "--episodes", "40", "--eval-games", "0", "--resume", str(trained)]
    cases = [
        (["--game", "connect_four", "--hidden", "16", "--out", str(tmp_path / "a.npz")], f"--resume {trained} was trained on tic_tac_toe (game version 1), not on connect_four (version 1)"),
        (["--game", "tic_tac_toe", "--out", str(tmp_path / "b.npz")], "is a reinforce mlp 16 network; this run asks for a reinforce mlp 64-64 one"),
        (["--game", "tic_tac_toe", "--hidden", "16", "--algorithm", "dqn", "--out", str(tmp_path / "c.npz")], "this run asks for a dqn mlp 16"),
        (["--game", "tic_tac_toe", "--hidden", "16", "--net", "conv", "--out", str(tmp_path / "d.pt")], "asks for a reinforce conv 32-32 + dense 16"),
        (["--game", "tic_tac_toe", "--hidden", "16", "--episodes", "20", "--out", str(tmp_path / "e.npz")],
         "--episodes 20 is the total to reach, and " + str(trained) + " has trained 20 episodes already: give more than 20"),
        (["--game", "tic_tac_toe", "--hidden", "16", "--save-every", "0", "--out", str(tmp_path / "f.npz")], "--save-every must be at least 1"),
    ]  # fmt: skip
    for options, message in cases:
        refused = arena_cli(*base, *options, ok=False)
        lines = refused.stderr.strip().splitlines()
        assert refused.exit_code == 2 and len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], refused.stderr
    # A checkpoint without its state, a state that belongs to an earlier version of the file, a damaged state.
    other = tmp_path / "other.npz"
    shutil.copy(trained, other)
    good = ["--game", "tic_tac_toe", "--hidden", "16", "--out", str(tmp_path / "g.npz")]
    refused = arena_cli("train", "--episodes", "40", "--resume", str(other), *good, ok=False)
    assert refused.exit_code == 2 and f"no training state {other}.resume beside {other}" in refused.stderr
    shutil.copy(state_path(trained), state_path(other))
    data = bytearray(other.read_bytes())
    data[len(data) // 2] ^= 1  # a weight changed: another file than the state was written with
    other.write_bytes(bytes(data))
    refused = arena_cli("train", "--episodes", "40", "--resume", str(other), *good, ok=False)
    assert refused.exit_code == 2 and "belongs to another version of" in refused.stderr
    state_path(trained).write_bytes(b"PK\x03\x04 not a zip")
    refused = arena_cli("train", "--episodes", "40", "--resume", str(trained), *good, ok=False)
    assert refused.exit_code == 2 and "is not a training state" in refused.stderr
    refused = arena_cli("train", "--episodes", "40", "--resume", str(tmp_path / "none.npz"), *good, ok=False)
    assert refused.exit_code == 2 and "--resume: no checkpoint file" in refused.stderr
    assert not any((tmp_path / n).exists() for n in ("a.npz", "b.npz", "c.npz", "d.pt", "e.npz", "f.npz", "g.npz"))


def run_arena(args: list[str], cwd: Path, signal_at: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("ARENA_TEST_SIGNAL", None)
    if signal_at:
        env["ARENA_TEST_SIGNAL"] = signal_at
    return subprocess.run([ARENA, *args], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_ctrl_c_and_kill_then_resume_as_the_command_line_does(tmp_path, arena_cli, monkeypatch):
    """The real command in its own process: Ctrl-C (SIGINT) stops after the episode under way, writes the checkpoint
    and its state and exits with 130; SIGKILL loses what came after the last --save-every; either run, resumed
    (`arena train ... --resume`), ends with the bytes of one that never stopped."""
    plugins = loose_plugin(tmp_path / "plugins", "signaller", SIGNALLER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_TEST_SIGNAL", raising=False)
    dqn = ["train", "--plugins-dir", str(plugins), "--game", "tic_tac_toe", "--opponent", "signaller", "--episodes", "60",
           "--hidden", "16", "--eval-games", "0", "--quiet", "--algorithm", "dqn"]  # fmt: skip
    arena_cli(*dqn, "--out", "whole.npz")
    # Ctrl-C during the 25th episode: stopped after it, at once resumable.
    stopped = run_arena([*dqn, "--out", "int.npz"], tmp_path, signal_at="25:INT")
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stderr.strip() == "stopped after 25 of 60 episodes: wrote int.npz and int.npz.resume; go on with the same command and --resume int.npz"
    assert read_state(tmp_path / "int.npz")[0]["episodes"] == 25
    assert arena_cli(*dqn, "--out", "int.npz", "--resume", "int.npz").stdout.strip() == "int.npz"
    assert (tmp_path / "int.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()
    # SIGKILL during the 35th episode, saved every 10: it goes on from 30, and ends the same.
    killed = run_arena([*dqn, "--save-every", "10", "--out", "kill.npz"], tmp_path, signal_at="35:KILL")
    assert killed.returncode == -signal.SIGKILL
    assert read_state(tmp_path / "kill.npz")[0]["episodes"] == 30
    arena_cli(*dqn, "--save-every", "10", "--out", "kill.npz", "--resume", "kill.npz")
    assert (tmp_path / "kill.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()
    refused = arena_cli(*dqn, "--out", "again.npz", "--resume", "kill.npz", ok=False)  # it is where it was going
    assert refused.exit_code == 2 and "has trained 60 episodes already" in refused.stderr
