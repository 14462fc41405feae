"""Prioritized experience replay (`arena train --algorithm dqn --prioritized`, agents/train_priority.py): sampling
follows the priorities, the importance-sampling weights and their annealing, new transitions at the greatest priority,
the priorities a real gradient step writes, the recorded settings, determinism, and bad input in one line."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.neural import load_network
from agents.neural_train import DQN, TrainConfig, train
from agents.train_priority import EPSILON, Priorities
from agents.train_state import read_state
from arena.plugins import get_registry
from arena.training.metrics import read_metrics
from tests._learners import fed

REGISTRY = get_registry()


def filled(td_errors: list[float], alpha: float = 0.6, beta: float = 0.4, capacity: int = 16) -> Priorities:
    priorities = Priorities(capacity, alpha, beta)
    priorities.added(0, len(td_errors))
    priorities.update(np.arange(len(td_errors)), np.array(td_errors))
    return priorities


def test_sampling_frequencies_follow_the_priorities_raised_to_alpha():
    errors = [0.0, 0.5, 1.0, 3.0, -7.0]  # the sign of a TD error does not matter
    priorities = filled(errors)
    expected = (np.abs(errors) + EPSILON) ** 0.6
    expected /= expected.sum()
    assert np.allclose(priorities.probabilities(5), expected)
    index, _ = priorities.sample(np.random.default_rng(1), 5, 200_000, 0.0)
    frequencies = np.bincount(index, minlength=5) / 200_000
    assert np.allclose(frequencies, expected, atol=0.004), (frequencies, expected)
    assert frequencies[0] < 0.001  # a transition the network already predicts is (almost) never drawn again
    # alpha 0 is uniform sampling, whatever the errors; only filled slots are drawn.
    uniform = filled(errors, alpha=0.0)
    assert np.allclose(uniform.probabilities(5), 0.2)
    index, _ = uniform.sample(np.random.default_rng(1), 5, 50_000, 0.0)
    assert index.max() == 4 and np.allclose(np.bincount(index) / 50_000, 0.2, atol=0.01)


def test_importance_sampling_weights_are_normalised_and_beta_is_annealed_to_one():
    priorities = filled([0.1, 1.0, 4.0, 9.0], beta=0.4)
    assert [priorities.beta_at(p) for p in (0.0, 0.25, 0.5, 1.0, 1.5)] == pytest.approx([0.4, 0.55, 0.7, 1.0, 1.0])
    probabilities = priorities.probabilities(4)
    for progress, beta in ((0.0, 0.4), (0.5, 0.7), (1.0, 1.0)):
        index, weights = priorities.sample(np.random.default_rng(2), 4, 400, progress)
        assert weights.dtype == np.float32 and set(index) == {0, 1, 2, 3}
        raw = (4 * probabilities[index]) ** -beta  # (N P(i))^-beta over its maximum, the least likely slot's
        assert np.allclose(weights, raw / (4 * probabilities.min()) ** -beta, rtol=1e-6)
        assert weights[index == 0].max() == pytest.approx(1.0) and weights.max() == pytest.approx(1.0)
    # At beta 1 the weights undo the skew exactly: P(i) w_i is the same for every slot.
    index, weights = priorities.sample(np.random.default_rng(2), 4, 400, 1.0)
    assert np.allclose(probabilities[index] * weights, probabilities.min())


def test_new_transitions_get_the_greatest_priority_and_wrap_around():
    priorities = filled([0.5, 2.0, 0.25], capacity=4)
    assert priorities.max_raw == pytest.approx(2.0 + EPSILON)
    priorities.added(3, 2)  # slots 3 and 0: the ring wraps
    assert priorities.raw[3] == priorities.raw[0] == pytest.approx(2.0 + EPSILON)
    assert priorities.raw[1] == pytest.approx(2.0 + EPSILON) and priorities.raw[2] == pytest.approx(0.25 + EPSILON)
    assert np.allclose(priorities.powered, priorities.raw**0.6)
    fresh = Priorities(4)
    fresh.added(0, 2)
    assert list(fresh.raw[:2]) == [1.0, 1.0] and fresh.max_raw == 1.0


def test_a_gradient_step_weights_its_loss_and_writes_the_td_errors_as_priorities(tmp_path):
    """A real DQN on tic-tac-toe after 12 episodes: one gradient step draws as the priorities say, its loss is the
    IS-weighted mean of the Huber losses, and the drawn slots' priorities become |TD error| + epsilon, measured with
    the networks as they were before the step; the other slots keep theirs."""
    config = TrainConfig(game="tic_tac_toe", out=str(tmp_path / "p.npz"), algorithm="dqn", prioritized=True, episodes=40,
                         hidden=(16,), batch=16, eval_games=0)  # fmt: skip
    with fed(config, REGISTRY, DQN, 12) as (torch_, dqn, _):
        size = dqn.buffer.size
        assert dqn.priorities is not None and size > 16 and len(dqn.losses) > 0
        assert len(set(dqn.priorities.raw[:size])) > 10  # the steps so far wrote their TD errors
        priorities, network, target = copy.deepcopy(dqn.priorities), copy.deepcopy(dqn.network.module), copy.deepcopy(dqn.target)
        sampler = np.random.default_rng()
        sampler.bit_generator.state = dqn.sampler.bit_generator.state
        dqn.gradient_step()
        index, weights = priorities.sample(sampler, size, 16, dqn.episode / 40)  # the same draw
        b = dqn.buffer
        with torch_.no_grad():
            observations, following = torch_.from_numpy(b.observations[index]), torch_.from_numpy(b.next_observations[index])
            masks = torch_.from_numpy(b.next_masks[index])
            best = network(following).masked_fill(~masks, -1e9).argmax(dim=1, keepdim=True)  # double DQN
            next_values = target(following).masked_fill(~masks, -1e9).gather(1, best).squeeze(1)
            targets = torch_.from_numpy(b.rewards[index]) + 0.99 * (1 - torch_.from_numpy(b.done[index])) * next_values
            values = network(observations).gather(1, torch_.from_numpy(b.actions[index])[:, None]).squeeze(1)
            huber = torch_.nn.functional.smooth_l1_loss(values, targets, reduction="none")
        assert dqn.losses[-1] == pytest.approx(float((torch_.from_numpy(weights) * huber).mean()), rel=1e-5)
        assert dqn.losses[-1] != pytest.approx(float(huber.mean()), rel=1e-3)  # the weights matter
        last = {int(i): k for k, i in enumerate(index)}  # a slot drawn twice keeps its last error
        expected = np.abs((targets - values).numpy().astype(np.float64)) + EPSILON
        assert np.allclose(dqn.priorities.raw[list(last)], expected[list(last.values())], rtol=1e-6)
        untouched = np.setdiff1d(np.arange(size), index)
        assert np.array_equal(dqn.priorities.raw[untouched], priorities.raw[untouched])
        assert dqn.priorities.max_raw == max(priorities.max_raw, float(expected.max()))


def test_prioritized_runs_are_reproducible_recorded_and_differ_from_uniform(tmp_path, arena_cli):
    def run(name: str, *options: str) -> bytes:
        arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--episodes", "60", "--hidden", "16",
                  "--eval-games", "0", "--quiet", "--out", str(tmp_path / name), *options)  # fmt: skip
        return (tmp_path / name).read_bytes()

    first, again = run("a.npz", "--prioritized"), run("b.npz", "--prioritized")
    uniform, skewed = run("u.npz"), run("s.npz", "--prioritized", "--priority-alpha", "1", "--priority-beta", "0.5")
    assert first == again and len({first, uniform, skewed}) == 3
    settings = read_metrics(tmp_path / "a.npz")[0]
    assert settings["prioritized"] is True and settings["priority_alpha"] == 0.6 and settings["priority_beta"] == 0.4
    assert settings["priority_epsilon"] == EPSILON
    training = load_network(tmp_path / "s.npz").metadata["training"]
    assert (training["prioritized"], training["priority_alpha"], training["priority_beta"]) == (True, 1.0, 0.5)
    assert read_metrics(tmp_path / "u.npz")[0]["prioritized"] is False
    meta, arrays = read_state(tmp_path / "a.npz")
    size = meta["learner"]["replay"]["size"]
    assert arrays["replay.priorities"].shape == (size,) and np.allclose(arrays["replay.powered"], arrays["replay.priorities"] ** 0.6)
    assert meta["learner"]["priorities"]["max"] >= arrays["replay.priorities"].max() > 1.0  # the greatest ever seen
    assert "replay.priorities" not in read_state(tmp_path / "u.npz")[1]


@pytest.mark.parametrize(
    "options, message",
    [
        (["--algorithm", "reinforce", "--prioritized"], "--prioritized is prioritized experience replay: use it with --algorithm dqn, not reinforce"),
        (["--algorithm", "qlearning", "--prioritized"], "use it with --algorithm dqn, not qlearning"),
        (["--algorithm", "dqn", "--priority-alpha", "0.5"], "--priority-alpha sets prioritized experience replay: give --prioritized too"),
        (["--algorithm", "dqn", "--prioritized", "--priority-alpha", "1.5"], "--priority-alpha must be between 0 and 1, got 1.5"),
        (["--algorithm", "dqn", "--prioritized", "--priority-beta", "nan"], "--priority-beta must be between 0 and 1, got nan"),
        (["--algorithm", "dqn", "--prioritized", "--priority-beta", "-0.1"], "--priority-beta must be between 0 and 1, got -0.1"),
    ],
)
def test_bad_priority_options_are_refused_in_one_line(tmp_path, arena_cli, options, message):
    out = tmp_path / "x.npz"
    refused = arena_cli("train", "--game", "tic_tac_toe", "--episodes", "5", "--out", str(out), *options, ok=False)
    lines = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2 and len(lines) == 1 and message in lines[0], refused.stderr
    assert not any(tmp_path.glob("x.npz*"))  # nothing half-written


def test_a_uniform_run_goes_on_with_prioritized_replay(tmp_path):
    """--prioritized may be turned on when resuming: every stored transition starts at priority 1, as a new one would."""
    base = TrainConfig(game="tic_tac_toe", out=str(tmp_path / "u.npz"), algorithm="dqn", episodes=30, hidden=(16,), eval_games=0)
    train(base, REGISTRY)
    size = read_state(base.out)[0]["learner"]["replay"]["size"]
    more = TrainConfig(**{**base.__dict__, "out": str(tmp_path / "p.npz"), "episodes": 40, "prioritized": True, "resume": base.out})
    train(more, REGISTRY)
    meta, arrays = read_state(more.out)
    assert meta["learner"]["replay"]["size"] > size and len(set(arrays["replay.priorities"])) > 10
    assert Path(more.out).read_bytes() != Path(base.out).read_bytes()
