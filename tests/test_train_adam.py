"""`arena train`'s own Adam gives torch.optim.Adam's numbers bit for bit, its state dicts load in either direction, and
a training run no longer imports torch's compiler (torch._dynamo, 3.4 s of every `arena train` start)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import neural_train, train_ddpg, train_state, train_value
from agents.neural_train import TrainConfig, train
from agents.train_adam import Adam
from arena.plugins import get_registry


def network(seed: int):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(7, 12), torch.nn.Tanh(), torch.nn.Linear(12, 3))


def descend(module, optimizer, steps: int, seed: int, skip_last: bool = False) -> None:
    """`steps` steps on a random regression; with `skip_last`, the last layer's bias gets no gradient (no state)."""
    data = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        inputs, targets = torch.randn(16, 7, generator=data), torch.randn(16, 3, generator=data)
        optimizer.zero_grad()
        loss = ((module(inputs) - targets) ** 2).mean()
        loss.backward()
        if skip_last:
            module[2].bias.grad = None
        optimizer.step()


def same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))


@pytest.mark.parametrize("lr", [1e-3, 0.05])
def test_the_same_weights_and_moments_as_torch_optim_adam(lr):
    ours, theirs = network(3), network(3)
    mine, reference = Adam(torch, ours.parameters(), lr=lr), torch.optim.Adam(theirs.parameters(), lr=lr)
    descend(ours, mine, 40, seed=5, skip_last=True)
    descend(theirs, reference, 40, seed=5, skip_last=True)
    assert same(ours, theirs) and not same(ours, network(3))
    our_arrays, their_arrays = train_state.optimizer_arrays(mine), train_state.optimizer_arrays(reference)
    assert sorted(our_arrays) == sorted(their_arrays) and "adam.3.step" not in our_arrays  # no gradient, no state
    assert all(np.array_equal(our_arrays[k], their_arrays[k]) and our_arrays[k].dtype == their_arrays[k].dtype for k in our_arrays)


def test_state_saved_by_either_goes_on_in_the_other():
    """A checkpoint written with torch.optim.Adam (older runs) resumes with Arena's Adam, and the other way round."""
    for first, second in ((torch.optim.Adam, Adam), (Adam, torch.optim.Adam)):
        make = {Adam: lambda params: Adam(torch, params, lr=0.01), torch.optim.Adam: lambda params: torch.optim.Adam(params, lr=0.01)}
        whole, cut = network(8), network(8)
        whole_optimizer = make[first](whole.parameters())
        descend(whole, whole_optimizer, 20, seed=1)
        descend(whole, whole_optimizer, 15, seed=2)
        cut_optimizer = make[first](cut.parameters())
        descend(cut, cut_optimizer, 20, seed=1)
        arrays = train_state.optimizer_arrays(cut_optimizer)
        resumed = make[second](cut.parameters())
        train_state.load_optimizer(torch, resumed, arrays)
        descend(cut, resumed, 15, seed=2)
        assert same(whole, cut), (first, second)


def torch_adam(torch_module, params, lr):
    return torch_module.optim.Adam(params, lr=lr)


@pytest.mark.parametrize("algorithm, settings, module, suffix", [
    ("dqn", {"net": "conv"}, neural_train, ".pt"),
    ("reinforce", {}, neural_train, ".npz"),
    ("ddpg", {"validity": "dual", "net": "conv"}, train_ddpg, ".pt"),
    ("value", {}, train_value, ".pt"),
])  # fmt: skip
def test_a_training_run_writes_the_bytes_it_wrote_with_torch_optim_adam(tmp_path, monkeypatch, algorithm, settings, module, suffix):
    """Every learner that uses Adam, trained long enough for many gradient steps: the same checkpoint and training state."""
    config = TrainConfig(game="tic_tac_toe", algorithm=algorithm, out=str(tmp_path / f"ours{suffix}"), episodes=60, hidden=(16,), channels=(4, 4),
                         eval_every=1000, eval_games=0, log_every=1000, opponent="random", **settings)  # fmt: skip
    train(config, get_registry())
    monkeypatch.setattr(module, "Adam", torch_adam)
    train(replace(config, out=str(tmp_path / f"torch{suffix}")), get_registry())
    ours_file, torch_file = tmp_path / f"ours{suffix}", tmp_path / f"torch{suffix}"
    assert ours_file.read_bytes() == torch_file.read_bytes()
    ours, theirs = train_state.read_state(str(ours_file))[1], train_state.read_state(str(torch_file))[1]
    assert any(k.endswith(".step") for k in ours) and sorted(ours) == sorted(theirs)
    assert all(np.array_equal(ours[k], theirs[k]) for k in ours)


def test_arena_train_does_not_import_the_compiler(tmp_path):
    script = f"""
import sys
from agents.neural_train import TrainConfig, train
train(TrainConfig(game="tic_tac_toe", algorithm="dqn", out={str(tmp_path / "n.npz")!r}, episodes=30, hidden=(8,), eval_every=1000,
                  eval_games=0, log_every=1000, opponent="random"))
print(sorted(name for name in sys.modules if name.startswith("torch._dynamo")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]" and (tmp_path / "n.npz").is_file()
