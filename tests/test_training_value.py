"""`arena train --algorithm value`: the Santorini report's afterstate value networks (its ANN and CNN), learned from
final results, written as TorchScript state-value files that search plays (`minimax:eval=model`) and `neural` refuses."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.neural_train import TrainConfig, TrainingInterrupted, evaluate_against, train, untrained
from agents.train_nets import load_torchscript
from agents.train_state import read_state
from agents.train_value import final_targets
from arena.observations import observation_shape
from arena.plugins import get_registry
from arena.training.figure import training_figure
from arena.training.metrics import read_metrics

REGISTRY = get_registry()


def short(tmp_path: Path, name: str = "v.pt", **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "algorithm": "value", "episodes": 600, "hidden": (32,),
            "channels": (8, 8), "eval_every": 200, "eval_games": 20, "log_every": 50, "window": 100, "seed": 3}  # fmt: skip
    return TrainConfig(**{**base, **settings})


def test_targets_are_the_final_result_for_the_seat_to_move_discounted_per_later_move():
    assert final_targets([1.0, -1.0, 1.0], 1.0, 0.5) == [0.25, -0.5, 1.0]
    assert final_targets([-1.0, -1.0], -1.0, 1.0) == [1.0, 1.0]  # the report's plain R: the opponent's afterstates won
    assert final_targets([1.0], 0.0, 0.9) == [0.0]  # a draw or the turn limit
    assert final_targets([1.0, 1.0], 1.0, 0.5, finishing=True) == [0.25, 0.5]  # the learner's own move won, one later


@pytest.mark.parametrize("net", ["mlp", "conv"])
def test_a_trained_value_network_loses_less_than_its_untrained_self_and_minimax_plays_it(tmp_path, arena_cli, net):
    """1000 episodes on tic-tac-toe against greedy (which takes wins and blocks): played one ply ahead, the network
    loses at most half of 200 games to greedy, where the same network untrained loses them all (it takes a win in one,
    which a finished afterstate shows, but does not block). The file is TorchScript with `output: value`, and a real
    tournament plays it through minimax at depth 1 (the report's agents) and through MCTS's evaluation."""
    config = short(tmp_path, net=net, opponent="greedy", episodes=1000, eval_every=250)
    summary = train(config, REGISTRY)
    assert summary.plan is not None and summary.policy is not None
    _win, _draw, lost = evaluate_against(summary.plan, REGISTRY, summary.policy, "greedy", 200)
    plan, before = untrained(config, REGISTRY)
    _win, _draw, lost_before = evaluate_against(plan, REGISTRY, before, "greedy", 200)
    assert lost_before == 1.0 and lost <= 0.5, (lost, lost_before)
    module, metadata = load_torchscript(torch, config.out)
    assert metadata["output"] == "value" and metadata["algorithm"] == "value" and metadata["net"] == net
    policy, value = module(torch.zeros(3, *observation_shape(REGISTRY.games["tic_tac_toe"]())))
    assert tuple(policy.shape) == (3, 9) and not policy.any() and tuple(value.shape) == (3,) and value.abs().max() <= 1
    rows = read_metrics(config.out)
    losses = [row["loss"] for row in rows if row["kind"] == "train"]
    assert len(losses) == 20 and all(loss is not None and loss >= 0 for loss in losses)
    assert training_figure(rows).get_suptitle().startswith("Training afterstate values, ")
    model = f"model={config.out}"
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"minimax:depth=1,eval=model,{model},mcts:simulations=20,{model},random",
              "--rounds", "4", "--seed", "1")  # fmt: skip
    board = arena_cli.json("leaderboard", "--json")
    assert sum(row["games"] for row in board) == 24


def test_the_learner_takes_a_win_in_one_whatever_its_network_says():
    """A finished afterstate is valued by its result, not the network: an untrained learner's greedy move takes an
    immediate win wherever one exists (random tic-tac-toe positions)."""
    config = TrainConfig(game="tic_tac_toe", out="unused.pt", algorithm="value", hidden=(8,))
    _plan, policy = untrained(config, REGISTRY)
    game = REGISTRY.games["tic_tac_toe"]()
    rng = random.Random(5)
    checked = 0
    for seed in range(300):
        state = game.new_initial_state(seed)
        for _ in range(rng.randrange(3, 7)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        mover, legal = state.current_player, state.legal_actions()
        wins = []
        for action in legal:
            child = state.clone()
            child.apply(action)
            if child.is_terminal() and child.returns()[mover] > 0:
                wins.append(action)
        if wins:
            observation = np.asarray(state.observation(mover), dtype=np.float32)
            assert policy(observation, legal, state) in wins
            checked += 1
    assert checked > 30


@pytest.mark.parametrize("targets", ["result", "mcts:simulations=5"])
def test_same_seed_same_bytes_and_a_stopped_run_resumed_ends_as_an_uninterrupted_one(tmp_path, targets):
    (tmp_path / "whole").mkdir()
    (tmp_path / "again").mkdir()
    (tmp_path / "cut").mkdir()
    whole = short(tmp_path / "whole", episodes=120, targets=targets)
    train(whole, REGISTRY)
    train(short(tmp_path / "again", episodes=120, targets=targets), REGISTRY)
    assert Path(whole.out).read_bytes() == (tmp_path / "again" / "v.pt").read_bytes()
    assert load_torchscript(torch, whole.out)[1]["training"]["targets"] == targets
    from arena.training.figure import describe_learner  # the plot's title says what the values were learnt from

    said = describe_learner(read_metrics(whole.out)[0])
    assert said.endswith(", targets from mcts:simulations=5") if targets != "result" else "targets" not in said, said
    cut = short(tmp_path / "cut", episodes=120, targets=targets)
    with pytest.raises(TrainingInterrupted, match="stopped after 45 of 120 episodes"):
        asked = [0]

        def stop() -> bool:
            asked[0] += 1
            return asked[0] > 45

        train(cut, REGISTRY, stop=stop)
    meta, arrays = read_state(cut.out)
    assert meta["episodes"] == 45 and {"net.body.head.value.weight", "adam.0.exp_avg"} <= set(arrays)
    train(replace(cut, resume=cut.out), REGISTRY)
    assert Path(cut.out).read_bytes() == Path(whole.out).read_bytes()
    assert read_state(cut.out)[0]["learner"] == read_state(whole.out)[0]["learner"]


BAD = [  # arguments after `arena train --algorithm value`, and what the one line says
    (["--game", "tic_tac_toe", "--net", "fcn", "--out", "x.pt"], "--net mlp, resmlp, conv, not fcn"),
    (["--game", "reversi", "--shaping", "positional", "--out", "x.pt"], "takes no --shaping"),
    (["--game", "tic_tac_toe", "--batch", "4", "--out", "x.pt"], "takes no --batch"),
    (["--game", "tic_tac_toe", "--opponent", "self", "--out", "x.pt"], "not --opponent self"),
    (["--game", "incan_gold", "--out", "x.pt"], "two-player games of perfect information"),
    (["--game", "gwent_lite", "--out", "x.pt"], "two-player games of perfect information"),
    (["--game", "tic_tac_toe", "--out", "x.npz"], "name it *.pt"),
    (["--game", "tic_tac_toe", "--targets", "random", "--out", "x.pt"], "--targets takes 'result' or an mcts spec"),
    (["--game", "tic_tac_toe", "--targets", "mcts:time=1", "--out", "x.pt"], "--targets takes 'result' or an mcts spec"),
    (["--game", "tic_tac_toe", "--targets", "mcts:simulations=0", "--out", "x.pt"], "simulations"),
    (["--game", "tic_tac_toe", "--targets", "nosuch", "--out", "x.pt"], "--targets: unknown target search 'nosuch'"),
]


@pytest.mark.parametrize("arguments, message", BAD, ids=[b[1] for b in BAD])
def test_what_it_cannot_use_is_refused_in_one_line_before_anything_is_written(tmp_path, arena_cli, monkeypatch, arguments,
                                                                               message):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    refused = arena_cli("train", "--algorithm", "value", *arguments, ok=False)
    assert refused.exit_code == 2 and message in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and list(tmp_path.glob("x.*")) == []


def test_targets_are_for_the_value_learner_only(tmp_path, arena_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    refused = arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--targets", "mcts", "--out", "x.npz", ok=False)
    assert refused.exit_code == 2 and "--targets is what --algorithm value learns from, not --algorithm dqn" in refused.stderr
    refused = arena_cli("train", "--game", "santorini", "--algorithm", "treestrap", "--targets", "mcts", "--out", "x.json", ok=False)
    assert refused.exit_code == 2 and "it takes no --targets" in refused.stderr


def test_targets_take_an_mcts_agent_registered_by_name(tmp_path, arena_cli):
    arena_cli("agents", "register", "quick-mcts", "--type", "mcts", "--param", "simulations=4")
    out = tmp_path / "named.pt"
    arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "value", "--targets", "quick-mcts", "--episodes", "10",
              "--eval-games", "0", "--quiet", "--out", str(out))  # fmt: skip
    assert load_torchscript(torch, str(out))[1]["training"]["targets"] == "quick-mcts"
    arena_cli("agents", "register", "not-a-search", "--type", "greedy")
    refused = arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "value", "--targets", "not-a-search", "--out",
                        str(tmp_path / "x.pt"), ok=False)  # fmt: skip
    assert refused.exit_code == 2 and "--targets takes 'result' or an mcts spec" in refused.stderr


def test_a_search_value_is_for_the_seat_to_move():
    """MCTSAgent.root_value, the --targets value: positive where the seat to move wins in one, negative where it
    cannot stop the other's two threats (tic-tac-toe, 300 simulations of random play-outs)."""
    from agents.mcts import MCTSAgent

    game = REGISTRY.games["tic_tac_toe"]()
    search = MCTSAgent(game, 0, 1, simulations=300)
    winning = game.new_initial_state(0)
    for action in (0, 3, 1, 4):  # X: 0, 1; O: 3, 4; X to move wins at 2
        winning.apply(action)
    assert search.root_value(winning) > 0.5
    lost = game.new_initial_state(0)
    for action in (0, 1, 4, 8, 6):  # X: 0, 4, 6 threatens 2 and 3; O (1, 8) has no win in one and cannot block both
        lost.apply(action)
    assert lost.current_player == 1 and search.root_value(lost) < -0.3


def test_a_value_run_goes_on_only_with_the_targets_it_was_trained_with(tmp_path, arena_cli):
    first = tmp_path / "r.pt"
    arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "value", "--episodes", "6", "--eval-games", "0", "--quiet",
              "--out", str(first))  # fmt: skip
    refused = arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "value", "--episodes", "12", "--targets",
                        "mcts:simulations=5", "--resume", str(first), "--out", str(tmp_path / "s.pt"), ok=False)  # fmt: skip
    assert refused.exit_code == 2 and "--targets mcts:simulations=5" in refused.stderr, refused.stderr


def test_a_value_network_is_no_self_play_opponent(tmp_path, arena_cli):
    """A past checkpoint given to draw self-play opponents from must have moves of its own: a value file is refused."""
    pool = tmp_path / "pool"
    pool.mkdir()
    train(short(pool, episodes=3, eval_games=0), REGISTRY)
    refused = arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "reinforce", "--opponent", "self", "--opponent-pool",
                        str(pool), "--episodes", "4", "--out", str(tmp_path / "x.npz"), ok=False)  # fmt: skip
    assert refused.exit_code == 2 and "is a state-value network" in refused.stderr, refused.stderr


def test_the_neural_agent_refuses_a_value_network_and_says_how_to_play_it(tmp_path, arena_cli):
    config = short(tmp_path, episodes=5, eval_games=0)
    train(config, REGISTRY)
    refused = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={config.out},random", ok=False)
    assert refused.exit_code == 2 and "state-value network" in refused.stderr
    assert f"minimax:depth=1,eval=model,model={config.out}" in refused.stderr
