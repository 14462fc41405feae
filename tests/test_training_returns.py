"""`arena train --algorithm dqn --returns` (chiamp's DQN, report 003): Q regressed by squared error toward each move's
discounted return to the end of its episode, no target network; the returns the replay buffer stores, one real gradient
step (with prioritized replay), a run that plays in a tournament and learns, determinism, resuming, bad input in one line."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.neural import load_network
from agents.neural_train import DQN, ReplayBuffer, TrainConfig, Trajectory, discounted_returns, train
from agents.train_priority import EPSILON
from agents.train_state import read_state, write_state
from arena.plugins import get_registry
from arena.training.metrics import read_metrics
from tests._learners import fed

REGISTRY = get_registry()


def short(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "algorithm": "dqn", "returns": True, "episodes": 60,
            "hidden": (16,), "eval_games": 0}  # fmt: skip
    return TrainConfig(**{**base, **settings})


def episode(length: int, shaped: list[float], reward: float, first: int = 0) -> Trajectory:
    """A learner's episode of `length` moves on a 2-input, 3-action game: observations and actions numbered from `first`."""
    return Trajectory([np.full(2, first + t, dtype=np.float32) for t in range(length)], [np.ones(3, dtype=bool)] * length,
                      [(first + t) % 3 for t in range(length)], shaped, reward)  # fmt: skip


def test_the_buffer_stores_each_moves_discounted_return_and_keeps_it_on_resume():
    """G_t = the shaped rewards still to come plus the final reward, discounted per learner move (discounted_returns),
    written beside each transition, around the ring; saved in the --resume state and restored; a state written before
    returns were stored restores with them at 0 (only a TD run, which never reads them, may go on from one)."""
    won, lost = episode(3, [0.1, 0.0, 0.2], 1.0), episode(2, [0.0, 0.0], -1.0, first=10)
    assert discounted_returns(won, 0.9) == pytest.approx([0.1 + 0.9 * 0.9 * 1.2, 0.9 * 1.2, 1.2])
    buffer = ReplayBuffer(4, 2, 3, 0.9)
    buffer.add_episode(won)
    buffer.add_episode(lost)  # the ring wraps: its second move overwrites slot 0
    assert buffer.size == 4 and buffer.cursor == 1
    assert buffer.returns.dtype == np.float32
    assert list(buffer.returns) == pytest.approx([-1.0, 0.9 * 1.2, 1.2, -0.9])
    assert list(buffer.observations[:, 0]) == [11, 1, 2, 10] and list(buffer.done) == [1, 0, 1, 0]
    meta, arrays = buffer.state()
    assert np.array_equal(arrays["replay.returns"], buffer.returns)
    again = ReplayBuffer(4, 2, 3, 0.9)
    again.restore(meta, arrays)
    assert all(np.array_equal(getattr(again, name), getattr(buffer, name)) for name in ReplayBuffer.FIELDS)
    older = ReplayBuffer(4, 2, 3, 0.9)
    older.restore(meta, {k: v for k, v in arrays.items() if k != "replay.returns"})
    assert not older.returns.any() and np.array_equal(older.rewards, buffer.rewards)


def test_a_gradient_step_regresses_q_toward_the_stored_returns_by_squared_error(tmp_path):
    """A real DQN with --returns --prioritized after 12 episodes: no target network; one gradient step's loss is the
    importance-weighted mean of (G - Q)^2 over the drawn transitions, and their priorities become |G - Q| + epsilon,
    Q measured with the network before the step."""
    config = short(tmp_path, "m.npz", prioritized=True, batch=16, episodes=40)
    with fed(config, REGISTRY, DQN, 12) as (torch_, dqn, _):
        assert dqn.target is None and dqn.priorities is not None and len(dqn.losses) > 0
        priorities, network = copy.deepcopy(dqn.priorities), copy.deepcopy(dqn.network.module)
        sampler = np.random.default_rng()
        sampler.bit_generator.state = dqn.sampler.bit_generator.state
        dqn.gradient_step()
        index, weights = priorities.sample(sampler, dqn.buffer.size, 16, dqn.episode / 40)  # the same draw
        b = dqn.buffer
        with torch_.no_grad():
            values = network(torch_.from_numpy(b.observations[index])).gather(1, torch_.from_numpy(b.actions[index])[:, None]).squeeze(1)
        errors = b.returns[index] - values.numpy()
        assert dqn.losses[-1] == pytest.approx(float(np.mean(weights * errors**2)), rel=1e-5)
        last = {int(i): k for k, i in enumerate(index)}  # a slot drawn twice keeps its last error
        expected = np.abs(errors.astype(np.float64)) + EPSILON
        assert np.allclose(dqn.priorities.raw[list(last)], expected[list(last.values())], rtol=1e-5)


def test_a_returns_run_is_reproducible_recorded_and_plays_in_a_tournament(tmp_path, arena_cli):
    def run(name: str, *options: str) -> bytes:
        arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--episodes", "60", "--hidden", "16",
                  "--eval-every", "30", "--eval-games", "4", "--quiet", "--out", str(tmp_path / name), *options)  # fmt: skip
        return (tmp_path / name).read_bytes()

    first, again, td = run("a.npz", "--returns"), run("b.npz", "--returns"), run("td.npz")
    assert first == again and first != td
    training = load_network(tmp_path / "a.npz").metadata["training"]
    assert training["returns"] is True and "target_sync" not in training and "double" not in training
    assert load_network(tmp_path / "td.npz").metadata["training"]["returns"] is False
    from arena.training.figure import describe_learner

    assert describe_learner(read_metrics(tmp_path / "a.npz")[0]) == "DQN on Monte-Carlo returns, MLP 16"
    meta, arrays = read_state(tmp_path / "a.npz")
    assert meta["shape"]["targets"] == "returns" and not any(name.startswith("target.") for name in arrays)
    assert len(arrays["replay.returns"]) == meta["learner"]["replay"]["size"] > 0
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={tmp_path / 'a.npz'},random", "--rounds", "4",
              "--quiet")  # fmt: skip
    assert all(row["games"] == 4 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))


def test_returns_learn_to_beat_random_in_a_few_hundred_episodes(tmp_path):
    """300 episodes of tic-tac-toe against random: measured 66-75% wins against random (seeds 0-2, 200 games, best
    action), as double DQN's 67-74% on the same seeds, in about 0.9 s against 1.2 s."""
    from agents.neural_train import evaluate_against, untrained

    config = short(tmp_path, "ttt-mc.npz", episodes=300, hidden=(32,))
    summary = train(config, REGISTRY)
    assert summary.plan is not None and summary.policy is not None
    win, _draw, loss = evaluate_against(summary.plan, REGISTRY, summary.policy, "random", 200)
    plan, before = untrained(config, REGISTRY)
    base_win, _draw, _loss = evaluate_against(plan, REGISTRY, before, "random", 200)
    assert win >= 0.55 and win > loss + 0.25 and win >= base_win + 0.15, (win, loss, base_win)


def test_a_td_state_from_before_returns_were_stored_goes_on_as_before(tmp_path):
    """Resume states written before the buffer stored returns have no `replay.returns`: a TD run goes on from one
    exactly as from a state that has them (it never reads them)."""
    half = short(tmp_path, "half.npz", returns=False, episodes=30)
    train(half, REGISTRY)
    meta, arrays = read_state(half.out)
    outs = []
    for name, kept in (("new", arrays), ("old", {k: v for k, v in arrays.items() if k != "replay.returns"})):
        write_state(half.out, meta, kept)
        outs.append(train(short(tmp_path, f"{name}.npz", returns=False, resume=half.out), REGISTRY).out)
    assert Path(outs[0]).read_bytes() == Path(outs[1]).read_bytes()


def test_a_run_goes_on_only_with_the_targets_it_was_trained_with(tmp_path, arena_cli):
    base = ["train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--hidden", "16", "--eval-games", "0", "--quiet"]
    arena_cli(*base, "--episodes", "20", "--out", str(tmp_path / "td.npz"))
    arena_cli(*base, "--episodes", "20", "--returns", "--out", str(tmp_path / "mc.npz"))
    cases = [
        (["--returns", "--resume", str(tmp_path / "td.npz")], "is a dqn mlp 16 network; this run asks for a dqn (--returns) mlp 16 one"),
        (["--resume", str(tmp_path / "mc.npz")], "is a dqn (--returns) mlp 16 network; this run asks for a dqn mlp 16 one"),
    ]  # fmt: skip
    for options, message in cases:
        refused = arena_cli(*base, "--episodes", "40", "--out", str(tmp_path / "x.npz"), *options, ok=False)
        lines = refused.stderr.strip().splitlines()
        assert refused.exit_code == 2 and len(lines) == 1 and message in lines[0], refused.stderr
    assert not any(tmp_path.glob("x.npz*"))
    arena_cli(*base, "--episodes", "40", "--returns", "--resume", str(tmp_path / "mc.npz"), "--out", str(tmp_path / "mc2.npz"))


@pytest.mark.parametrize(
    "options, message",
    [
        (["--algorithm", "reinforce", "--returns"], "--returns is DQN's Monte-Carlo targets: use it with --algorithm dqn, not reinforce"),
        (["--algorithm", "ddpg", "--returns"], "use it with --algorithm dqn, not ddpg"),
        (["--algorithm", "dqn", "--returns", "--no-double"],
         "--no-double chooses how the target network values the next position, and --returns uses no target network"),
    ],
)  # fmt: skip
def test_bad_returns_options_are_refused_in_one_line(tmp_path, arena_cli, options, message):
    refused = arena_cli("train", "--game", "tic_tac_toe", "--episodes", "5", "--out", str(tmp_path / "x.npz"), *options, ok=False)
    lines = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2 and len(lines) == 1 and message in lines[0], refused.stderr
    assert not any(tmp_path.glob("x.npz*"))  # nothing half-written
