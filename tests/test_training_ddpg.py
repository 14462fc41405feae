"""DDPG (`arena train --algorithm ddpg`, agents/train_ddpg.py): a short run writes the actor, which the `neural` agent
plays in real tournaments (Onitama on the study's cards included); same seed, same bytes; the actor's step raises the
critic's Q on a fixed batch and leaves the critic alone; soft target updates; the --promote-at curriculum; bad input."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.neural import load_network
from agents.neural_train import TrainConfig, train
from agents.train_ddpg import DDPG, action_vector
from agents.train_state import read_state
from arena.plugins import get_registry
from arena.training.figure import training_figure
from arena.training.metrics import read_metrics
from tests._learners import fed
from tests.conftest import loose_plugin

REGISTRY = get_registry()

# An opponent with a `depth` that plays at random whatever it is: the curriculum's mechanics without minimax's strength.
SHALLOW = '''
import arena


class Shallow(arena.Agent):
    info = arena.AgentInfo(id="shallow", version="1", description="random, whatever its depth (tests)",
                           params=(arena.Param("depth", 1, "ignored", min=1, max=3),))

    def act(self, state):
        return self.rng.choice(state.legal_actions())


@arena.hookimpl
def register_agents(register):
    register(Shallow)
'''


def short(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "algorithm": "ddpg", "episodes": 40, "hidden": (16,),
            "batch": 16, "eval_games": 0, "log_every": 10, "window": 10}  # fmt: skip
    return TrainConfig(**{**base, **settings})


def test_action_vector_is_the_softmax_over_the_legal_actions():
    vector = action_vector(np.array([5.0, 1.0, 2.0, 0.0], dtype=np.float32), [1, 2])
    assert vector[0] == 0 and vector[3] == 0 and vector.sum() == pytest.approx(1.0)
    assert vector[2] / vector[1] == pytest.approx(np.e)


def test_a_short_run_writes_an_actor_the_neural_agent_plays_and_is_reproducible(tmp_path, arena_cli):
    config = short(tmp_path, "a.npz", episodes=25)
    train(config, REGISTRY)
    train(short(tmp_path, "b.npz", episodes=25), REGISTRY)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    train(short(tmp_path, "c.npz", episodes=25, noise=0.3), REGISTRY)
    assert (tmp_path / "c.npz").read_bytes() != (tmp_path / "a.npz").read_bytes()
    network = load_network(config.out)
    assert network.metadata["algorithm"] == "ddpg" and network.metadata["output"] == "logits"
    assert network.metadata["training"]["tau"] == 0.005 and network.metadata["training"]["noise"] == 0.1
    rows = read_metrics(config.out)
    assert rows[0]["actor_lr"] == pytest.approx(0.0001) and rows[0]["critic_hidden"] == [16]
    assert any(row["loss"] is not None for row in rows if row["kind"] == "train")  # the critic's loss
    assert training_figure(rows).get_suptitle() == "Training DDPG, MLP 16 actor, MLP 16 critic on tic_tac_toe against random"
    meta, arrays = read_state(config.out)
    assert meta["learner"]["steps"] > 0 and {"critic.mlp.head.value.weight", "target_critic.mlp.head.value.weight",
                                              "target.head.value.weight", "critic_adam.0.exp_avg", "replay.vectors"} <= set(arrays)  # fmt: skip
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={config.out},random", "--rounds", "4", "--quiet")
    assert all(row["games"] == 4 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))


def test_onitama_study_cards_against_minimax_then_a_tournament(tmp_path, arena_cli):
    """The report's set-up, a few episodes: Onitama on the study's five cards against minimax depth 1; a conv actor
    too (the MLP critic is the same)."""
    game = "onitama:cards=study5"
    config = short(tmp_path, "o.npz", game=game, opponent="minimax:depth=1", episodes=6)
    train(config, REGISTRY)
    assert load_network(config.out).outputs(np.zeros(260, dtype=np.float32)).shape == (202,)  # one output per action id
    arena_cli("run-tournament", "--game", game, "--agents", f"neural:checkpoint={config.out},random", "--rounds", "2", "--quiet")
    assert all(row["games"] == 2 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))
    conv = short(tmp_path, "c.pt", game="dots_and_boxes:rows=2,cols=2", net="conv", channels=(4,), episodes=10)
    train(conv, REGISTRY)
    assert read_state(conv.out)[0]["shape"] == {"algorithm": "ddpg", "net": "conv", "dueling": False, "hidden": [16],
                                                "channels": [4], "critic": [16]}  # fmt: skip


def test_the_actor_step_raises_q_on_a_fixed_batch_and_targets_move_by_tau(tmp_path):
    with fed(short(tmp_path, "q.npz"), REGISTRY, DDPG, 8) as (torch_, ddpg, checked):
        assert ddpg.steps > 0
        index = np.arange(32)
        observations = torch_.from_numpy(ddpg.buffer.observations[index])
        masks = torch_.from_numpy(ddpg.buffer.masks[index])
        critic = copy.deepcopy(ddpg.critic.state_dict())

        def q() -> float:
            with torch_.no_grad():
                return float(ddpg.critic(observations, ddpg.policy(ddpg.network, observations, masks)).mean())

        start = q()
        assert ddpg.actor_step(observations, masks) == pytest.approx(-start)  # its loss before the step: -Q
        for _ in range(20):
            ddpg.actor_step(observations, masks)
        assert q() > start + 1e-4, (q(), start)
        assert all(torch_.equal(critic[k], v) for k, v in ddpg.critic.state_dict().items())  # only the actor moved
        # A gradient step moves each target parameter tau of the way to its network's.
        target = copy.deepcopy(ddpg.target_critic.state_dict())
        ddpg.gradient_step()
        for name, value in ddpg.target_critic.state_dict().items():
            assert torch_.allclose(value, 0.995 * target[name] + 0.005 * ddpg.critic.state_dict()[name], atol=1e-6)
        # The legal actions only: the executed action and the stored vector.
        state = checked.game.new_initial_state(0)
        state.apply(4)
        legal = state.legal_actions()
        action = ddpg.choose(np.asarray(state.observation(1), dtype=np.float32).reshape(-1), legal, state)
        assert action in legal and ddpg.vectors[-1][4] == 0


def test_promote_at_raises_the_opponents_depth_and_resumes_where_it_was(tmp_path):
    """Against `shallow` (random, with a depth): each time 5 of the last 10 are won, depth + 1, the window starts
    again, a `promote` metric line is written; at its greatest depth it stays. A run stopped after a promotion and
    resumed ends byte for byte as one that was not stopped."""
    from agents.neural_train import TrainingInterrupted

    plugins = loose_plugin(tmp_path / "plugins", "shallow", SHALLOW)
    registry = get_registry([str(plugins)])
    config = short(tmp_path, "p.npz", opponent="shallow:depth=1", promote_at=0.5, episodes=80, algorithm="dqn", log_every=1)
    train(config, registry)
    promotions = [row for row in read_metrics(config.out) if row["kind"] == "promote"]
    assert [row["opponent"] for row in promotions] == ["shallow:depth=2", "shallow:depth=3"]
    assert promotions[0]["episode"] >= 10 and promotions[1]["episode"] >= promotions[0]["episode"] + 10
    assert read_state(config.out)[0]["opponent_now"] == "shallow:depth=3"
    rows = read_metrics(config.out)
    for promotion in promotions:  # the train row of the promoting episode shows the full window that earned it
        (earned,) = [row for row in rows if row["kind"] == "train" and row["episode"] == promotion["episode"]]
        assert earned["window"] == 10 and earned["win_rate"] >= 0.5
    assert all(row["window"] > 0 for row in rows if row["kind"] == "train")
    figure = training_figure(rows)
    assert figure.get_suptitle().endswith("against shallow:depth=1, then shallow:depth=2, then shallow:depth=3")
    marked = [text.get_text() for text in figure.axes[0].texts]
    assert marked == ["now shallow:depth=2", "now shallow:depth=3"]
    cut = short(tmp_path, "cut.npz", opponent="shallow:depth=1", promote_at=0.5, episodes=80, algorithm="dqn", log_every=1)
    with pytest.raises(TrainingInterrupted):
        train(cut, registry, stop=lambda: bool(read_metrics(cut.out)) and any(r["kind"] == "promote" for r in read_metrics(cut.out)))
    assert read_state(cut.out)[0]["opponent_now"] == "shallow:depth=2"
    train(short(tmp_path, "cut.npz", opponent="shallow:depth=1", promote_at=0.5, episodes=80, algorithm="dqn", log_every=1,
                resume=cut.out), registry)
    assert Path(cut.out).read_bytes() == Path(config.out).read_bytes()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--algorithm", "dqn", "--tau", "0.1"], "--tau is DDPG's: use it with --algorithm ddpg, not dqn"),
        (["--algorithm", "reinforce", "--noise", "0.1"], "--noise is DDPG's: use it with --algorithm ddpg, not reinforce"),
        (["--algorithm", "ddpg", "--tau", "0"], "--tau must be in (0, 1], got 0.0"),
        (["--algorithm", "ddpg", "--noise", "-1"], "--noise must be 0 or more, got -1.0"),
        (["--algorithm", "ddpg", "--dueling"], "--dueling is a Q-value head"),
        (["--algorithm", "ddpg", "--prioritized"], "use it with --algorithm dqn, not ddpg"),
        (["--algorithm", "ddpg", "--promote-at", "1.5", "--opponent", "minimax:depth=1"], "--promote-at is a win rate in (0, 1], got 1.5"),
        (["--algorithm", "ddpg", "--promote-at", "0.6"], "--promote-at raises the opponent's depth: give an opponent with a depth parameter"),
    ],
)
def test_bad_ddpg_options_are_refused_in_one_line(tmp_path, arena_cli, options, message):
    refused = arena_cli("train", "--game", "tic_tac_toe", "--episodes", "5", "--out", str(tmp_path / "x.npz"), *options, ok=False)
    lines = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2 and len(lines) == 1 and message in lines[0], refused.stderr
    assert not any(tmp_path.glob("x.npz*"))
