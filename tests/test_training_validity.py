"""`arena train --algorithm ddpg --validity DESIGN` (agents/train_validity.py): the Onitama report's eight actor designs
each train and write a TorchScript file the `neural` agent plays in a real tournament; the validity layer's error falls
over a short run; a multiply design's policy is zero on illegal actions and its file's masked argmax is the policy's;
the valid rate reaches the metrics and the figure; plain DDPG is untouched; bad input is refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.neural import load_network
from agents.neural_train import VALIDITY_DESIGNS, TrainConfig, train
from agents.train_nets import load_torchscript
from agents.train_state import read_state
from agents.train_validity import ValidityDDPG
from arena.plugins import get_registry
from arena.training.figure import training_figure
from arena.training.metrics import read_metrics
from tests._learners import fed

REGISTRY = get_registry()


def short(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "algorithm": "ddpg", "episodes": 20, "hidden": (16,),
            "batch": 16, "eval_games": 0, "log_every": 10, "window": 10}  # fmt: skip
    return TrainConfig(**{**base, **settings})


@pytest.mark.parametrize("design", VALIDITY_DESIGNS)
def test_every_design_trains_and_writes_a_file_the_neural_agent_plays(tmp_path, arena_cli, design):
    config = short(tmp_path, f"{design}.pt", validity=design)
    train(config, REGISTRY)
    module, metadata = load_torchscript(torch, config.out)
    assert metadata["validity"] == design and metadata["output"] == "logits" and metadata["algorithm"] == "ddpg"
    assert metadata["training"]["validity"] == design and metadata["training"]["validity_features"] == 16
    assert module(torch.zeros(1, 3, 3, 3)).shape == (1, 9)
    meta, arrays = read_state(config.out)
    assert meta["shape"]["validity"] == design and "target.actions.weight" in arrays  # the design's layers, targets too
    assert ("net.validity.weight" in arrays) == (design != "actions_only")
    assert ("net.validity_preprocess.body.0.weight" in arrays) == (design == "dual")
    rows = [row for row in read_metrics(config.out) if row["kind"] == "train"]
    assert all(0 <= row["valid_rate"] <= 1 for row in rows)
    assert (rows[-1]["validity_loss"] is None) == (design == "actions_only")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={config.out},random", "--rounds", "2", "--quiet")
    assert all(row["games"] == 2 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))


def test_a_conv_design_on_onitama_study_cards_against_minimax_then_a_tournament(tmp_path, arena_cli):
    """The report's set-up, a few episodes: a conv preprocess over Onitama's board planes and cards, minimax depth 1."""
    game = "onitama:cards=study5"
    config = short(tmp_path, "o.pt", game=game, net="conv", channels=(4,), opponent="minimax:depth=1", episodes=4,
                   validity="actions_after_val_multiply")  # fmt: skip
    train(config, REGISTRY)
    module, metadata = load_torchscript(torch, config.out)
    assert module(torch.zeros(1, 260)).shape == (1, 202) and metadata["net"] == "conv"
    arena_cli("run-tournament", "--game", game, "--agents", f"neural:checkpoint={config.out},random", "--rounds", "2", "--quiet")
    assert all(row["games"] == 2 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))


def test_the_validity_error_of_a_branch_design_falls_over_a_short_run(tmp_path):
    """val_branch_actions at a critic rate of 0.01 (the actor's 0.001), seed 0: the validity layer's mean squared error
    towards the legal mask over the last 20 of 100 episodes is under half of that over the first 20 (0.237 -> 0.079)."""
    config = short(tmp_path, "b.pt", validity="val_branch_actions", episodes=100, hidden=(32,), lr=0.01, log_every=20, window=20)
    train(config, REGISTRY)
    losses = [row["validity_loss"] for row in read_metrics(config.out) if row["kind"] == "train"]
    assert len(losses) == 5 and losses[-1] < 0.5 * losses[0], losses
    assert losses == sorted(losses, reverse=True)  # falling at every row


def test_a_multiply_designs_policy_is_zero_on_illegal_actions_and_its_file_plays_its_best_action(tmp_path):
    config = short(tmp_path, "m.pt", validity="val_branch_actions_multiply")
    with fed(config, REGISTRY, ValidityDDPG, 12) as (torch_, ddpg, checked):
        observations = torch_.from_numpy(ddpg.buffer.observations[: ddpg.buffer.size])
        masks = torch_.from_numpy(ddpg.buffer.masks[: ddpg.buffer.size])
        with torch_.no_grad():
            policy = ddpg.policy(ddpg.network.module, observations, masks)
            actor = ddpg.network.module
            features = torch_.relu(actor.preprocess(observations))
            product = torch_.softmax(actor.actions(features), dim=1) * torch_.sigmoid(actor.validity(features)) * masks
        assert bool((policy[~masks] == 0).all()) and torch_.allclose(policy.sum(dim=1), torch_.ones(len(policy)))
        assert torch_.allclose(policy, product / product.sum(dim=1, keepdim=True), atol=1e-6)  # softmax * validity, renormalised
        path = tmp_path / "saved.pt"
        ddpg.network.save(str(path), checked.game, "logits", "ddpg", {"net": "mlp", "dueling": False, "validity": ddpg.design})
        module = load_torchscript(torch_, str(path))[0]
        for row in range(len(policy)):
            with torch_.no_grad():
                outputs = module(observations[row].view(1, *checked.shape))[0].numpy()
            legal = np.flatnonzero(ddpg.buffer.masks[row])
            assert legal[np.argmax(outputs[legal])] == int(policy[row].argmax())


def test_the_valid_rate_is_drawn_and_plain_ddpg_is_unchanged(tmp_path):
    config = short(tmp_path, "v.pt", validity="dual")
    train(config, REGISTRY)
    figure = training_figure(read_metrics(config.out))
    assert figure.get_suptitle() == "Training DDPG, MLP 16 dual actor, MLP 16 critic on tic_tac_toe against random"
    assert any(line.get_label().startswith("valid rate") for line in figure.axes[0].get_lines())
    losses = [line.get_label() for line in figure.axes[1].get_lines()]  # the critic's and the actor's, as the report draws
    assert losses[:2] == ["critic loss, squared TD error (mean since previous point)",
                          "actor loss, -Q(s, mu(s)) + validity error (mean since previous point)"]  # fmt: skip
    plain = short(tmp_path, "p.npz")
    train(plain, REGISTRY)
    rows = read_metrics(plain.out)
    trained = [row for row in rows if row["kind"] == "train" and row["loss"] is not None]
    assert trained and all(isinstance(row["actor_loss"], float) for row in trained)
    assert "validity" not in rows[0] and "validity" not in load_network(plain.out).metadata["training"]
    assert not any("valid_rate" in row for row in rows) and "validity" not in read_state(plain.out)[0]["shape"]
    assert not any(line.get_label().startswith("valid rate") for line in training_figure(rows).axes[0].get_lines())


@pytest.mark.parametrize(
    "options, out, message",
    [
        (["--algorithm", "dqn", "--validity", "dual"], "x.pt", "--validity is a design of DDPG's actor: use it with --algorithm ddpg, not dqn"),
        (["--algorithm", "ddpg", "--net", "fcn", "--validity", "val_branch_actions"], "x.pt",
         "--validity builds its layers on a network's features: use --net mlp, resmlp, conv, not fcn"),
        (["--algorithm", "treestrap", "--validity", "dual"], "x.npz", "it takes no --validity"),
        (["--algorithm", "ddpg", "--validity", "dual"], "x.npz", "this network is saved as TorchScript, so name it *.pt"),  # even an mlp
    ],
)
def test_bad_validity_options_are_refused_in_one_line(tmp_path, arena_cli, options, out, message):
    refused = arena_cli("train", "--game", "tic_tac_toe", "--episodes", "5", "--out", str(tmp_path / out), *options, ok=False)
    lines = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2 and len(lines) == 1 and message in lines[0], refused.stderr
    assert not any(tmp_path.glob("x.*"))
