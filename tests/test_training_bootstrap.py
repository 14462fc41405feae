"""arena train --algorithm treestrap|rootstrap: the search values and the update on a hand-checked Santorini position,
short runs writing a weights file (deterministic, resumable), the file playing as `linear:weights=FILE` and
`minimax:eval=linear,weights=FILE` in a real tournament, and bad input refused in one line."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest

import arena
from agents.linear_weights import FORMAT_NAME, WeightsText
from agents.neural_train import TrainConfig, TrainingInterrupted, train
from agents.train_bootstrap import WIN_TARGET, Bootstrap, Search, gradient_step, initial_weights, plan, win_target
from arena.plugins import get_registry
from arena.training.metrics import read_metrics
from tests.test_minimax import plain_minimax

REGISTRY = get_registry()
SANTORINI = REGISTRY.games["santorini"]()
FEATURES = len(SANTORINI.feature_names)

# Seat 0 to move: A stands on level 2 beside a level-3 tower, so A can win at once.
WINNING = """
2A 3 0 0 0
0  0 0 0 0
0  0 1 0 0
0  0 0 0 0
0B 0 0 0X 0Y
"""
# The same with a quiet board: nobody can climb to level 3 within two plies.
QUIET = """
1A 0 0 0 0
0  2 0 0 0
0  0 1 0 0
0  0 0 0 0
0B 0 0 0X 1Y
"""


def brute_minimax(state: arena.State, depth: int, root: int, weights: np.ndarray) -> float:
    """Plain minimax, written apart from the trainer's, with its values of finished games: what `Search` must find."""
    return plain_minimax(state, depth, root, lambda s, p: float(np.dot(weights, SANTORINI.features(s, p))), win_target)


def config(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "santorini", "out": str(tmp_path / name), "algorithm": "treestrap", "opponent": "self", "episodes": 2,
            "depth": 2, "max_turns": 16, "eval_games": 0, "log_every": 1}  # fmt: skip
    return TrainConfig(**{**base, **settings})


@pytest.mark.parametrize("board", [WINNING, QUIET], ids=["win-in-one", "quiet"])
def test_search_values_are_minimax_values_and_treestrap_records_every_interior_node(board):
    state = SANTORINI.position(board, 0)
    weights = np.array([0.3, -0.2, 0.9, -0.5, 0.1, 0.4, -0.7, 0.2])
    expected = brute_minimax(state, 2, 0, weights)
    full = Search(SANTORINI, weights.tolist(), 0)
    value, moves = full.root_values(state, 2, full=True)
    pruned = Search(SANTORINI, weights.tolist(), 0)
    assert pruned.root_values(state, 2, full=False) == (value, moves)  # alpha-beta: the same value and best moves
    assert value == pytest.approx(expected, abs=1e-9) and pruned.nodes < full.nodes
    assert pruned.interior == []  # RootStrap's search records nothing: only the root is updated
    children = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        children.append(child)
    interior = [c for c in children if c.current_player >= 0]
    assert len(full.interior) == len(interior) + 1  # every non-terminal child (one ply left) and the root, last
    for (features, node_value), child in zip(full.interior, interior):
        assert list(features) == SANTORINI.features(child, 0)
        assert node_value == pytest.approx(brute_minimax(child, 1, 0, weights), abs=1e-9)
    assert full.interior[-1] == (SANTORINI.features(state, 0), value)
    if board is WINNING:
        assert value == WIN_TARGET and all(children[i].current_player < 0 for i, a in enumerate(state.legal_actions()) if a in moves)


def test_the_update_is_sgd_on_the_squared_error_towards_the_search_values():
    state = SANTORINI.position(WINNING, 0)
    phi = SANTORINI.features(state, 0)
    assert phi[0] == phi[2] == 0.5 and phi[4] == 1.0  # A on level 2, B on level 0; both of seat 1's workers on level 0
    # RootStrap from zero weights at a won position: w = lr * (9999 - 0) * phi(root), by hand.
    weights = np.zeros(FEATURES)
    assert gradient_step(weights, [(phi, WIN_TARGET)], 1e-5) == WIN_TARGET**2
    assert weights.tolist() == pytest.approx([1e-5 * WIN_TARGET * f for f in phi])
    # TreeStrap: the sum over the nodes of lr * error * features, errors taken with the weights before the step.
    weights = np.array([0.3, -0.2, 0.9, -0.5, 0.1, 0.4, -0.7, 0.2])
    search = Search(SANTORINI, weights.tolist(), 0)
    search.root_values(SANTORINI.position(QUIET, 0), 2, full=True)
    nodes = search.interior
    errors = [v - sum(w * f for w, f in zip(weights, feats)) for feats, v in nodes]
    expected = [w + 1e-6 * sum(e * feats[k] for e, (feats, _) in zip(errors, nodes)) for k, w in enumerate(weights)]
    mse = gradient_step(weights, nodes, 1e-6)
    assert mse == pytest.approx(float(np.mean(np.square(errors)))) and weights.tolist() == pytest.approx(expected, rel=1e-12)
    after = sum((v - float(np.dot(weights, f))) ** 2 for f, v in nodes)
    assert after < sum(e * e for e in errors)  # the step lowered the squared error over the tree


@pytest.mark.parametrize("algorithm", ["rootstrap", "treestrap"])
def test_a_learner_move_updates_as_its_algorithm_says(tmp_path, algorithm):
    checked = plan(config(tmp_path, "w.json", algorithm=algorithm), REGISTRY)
    weights = np.array([0.3, -0.2, 0.9, -0.5, 0.1, 0.4, -0.7, 0.2])
    learner = Bootstrap(checked, REGISTRY, weights)
    state = SANTORINI.position(QUIET, 0)
    search = Search(SANTORINI, weights.tolist(), 0)
    value, moves = search.root_values(state, 2, full=True)
    before = weights.copy()
    action = learner.learner_move(state, random.Random(0))
    assert action in moves
    phi = np.array(SANTORINI.features(state, 0))
    if algorithm == "rootstrap":  # the root alone: a step along its features
        assert (weights - before).tolist() == pytest.approx((checked.lr * (value - before @ phi) * phi).tolist(), rel=1e-12)
    else:
        expected = before.copy()
        gradient_step(expected, search.interior, checked.lr)
        assert weights.tolist() == expected.tolist()
        assert not np.allclose(weights - before, checked.lr * (value - before @ phi) * phi)


@pytest.mark.parametrize("algorithm", ["treestrap", "rootstrap"])
def test_short_run_writes_a_weights_file_byte_for_byte_from_its_seed(tmp_path, algorithm):
    first = config(tmp_path, "a.json", algorithm=algorithm)
    summary = train(first, REGISTRY)
    data = json.loads(Path(first.out).read_text())
    assert summary.episodes == 2 and data["format"] == FORMAT_NAME and data["game"] == "santorini"
    assert data["feature_names"] == list(SANTORINI.feature_names) and len(data["weights"]) == FEATURES
    assert data["algorithm"] == algorithm and data["seed"] == 0 and data["episodes"] == 2
    assert data["settings"]["depth"] == 2 and data["settings"]["lr"] == {"treestrap": 1e-6, "rootstrap": 1e-5}[algorithm]
    assert data["weights"] != initial_weights(first, FEATURES).tolist()  # training moved them
    assert all(-1 <= w <= 1 for w in initial_weights(first, FEATURES))
    again = config(tmp_path, "b.json", algorithm=algorithm)
    train(again, REGISTRY)
    assert Path(again.out).read_bytes() == Path(first.out).read_bytes()
    other = config(tmp_path, "c.json", algorithm=algorithm, seed=1)
    train(other, REGISTRY)
    assert json.loads(Path(other.out).read_text())["weights"] != data["weights"]
    rows = read_metrics(first.out)
    assert [row["kind"] for row in rows] == ["settings", "train", "train"]
    assert rows[0]["algorithm"] == algorithm and rows[0]["opponent"] == "self" and rows[1]["loss"] > 0
    pytest.importorskip("matplotlib")
    from arena.training.figure import training_figure

    name = {"treestrap": "TreeStrap(minimax)", "rootstrap": "RootStrap(alpha-beta)"}[algorithm]
    assert training_figure(rows).get_suptitle() == f"Training {name}, linear weights, depth 2 on santorini against itself"


def test_a_stopped_run_resumed_ends_with_the_same_file(tmp_path):
    straight = config(tmp_path, "straight.json", episodes=3)
    train(straight, REGISTRY)
    asked = iter([False, True])  # stop before the second episode
    stopped = config(tmp_path, "stopped.json", episodes=3)
    with pytest.raises(TrainingInterrupted, match="stopped after 1 of 3 episodes"):
        train(stopped, REGISTRY, stop=lambda: next(asked))
    assert json.loads(Path(stopped.out).read_text())["episodes"] == 1
    train(config(tmp_path, "stopped.json", episodes=3, resume=stopped.out), REGISTRY)
    assert Path(stopped.out).read_bytes() == Path(straight.out).read_bytes()
    strip = [{k: v for k, v in row.items() if k not in ("seconds", "resumed_from", "resumed_at")} for row in read_metrics(stopped.out)]
    assert strip == [{k: v for k, v in row.items() if k != "seconds"} for row in read_metrics(straight.out)]
    with pytest.raises(arena.ArenaError, match="is a treestrap linear weights network; this run asks for a rootstrap"):
        train(config(tmp_path, "other.json", episodes=5, algorithm="rootstrap", resume=straight.out), REGISTRY)


def test_other_games_with_features_and_other_opponents(tmp_path):
    dab = config(tmp_path, "dab.json", game="dots_and_boxes:rows=2,cols=2", opponent="greedy", episodes=3, max_turns=200,
                 eval_games=4, eval_every=3, eval_opponent="greedy")  # fmt: skip
    train(dab, REGISTRY)
    data = json.loads(Path(dab.out).read_text())
    assert data["game"] == "dots_and_boxes" and data["game_params"] == "cols=2;rows=2" and len(data["weights"]) == 3
    evals = [row for row in read_metrics(dab.out) if row["kind"] == "eval"]
    assert len(evals) == 1 and evals[0]["opponent"] == "greedy" and evals[0]["games"] == 4
    assert read_metrics(dab.out)[0]["opponent"] == "greedy"


def test_weights_parameter_takes_numbers_as_before_or_a_file():
    assert WeightsText("0.0,2,4") == "0,2,4" and not WeightsText("0,2,4").is_file
    assert WeightsText((0.0, 2.0, -1.5)) == "0,2,-1.5" and WeightsText() == "" and not WeightsText().is_file
    assert WeightsText(" w.json ").is_file and WeightsText("1,2,x").is_file
    with pytest.raises(arena.ArenaError, match="finite"):
        WeightsText("1,nan")


def test_the_file_plays_in_a_tournament_and_bad_files_are_refused(tmp_path, arena_cli):
    out = tmp_path / "ts.json"
    result = arena_cli("train", "--game", "santorini", "--algorithm", "rootstrap", "--episodes", "2", "--depth", "1",
                       "--max-turns", "20", "--eval-games", "0", "--out", str(out))  # fmt: skip
    assert result.stdout.strip() == str(out)
    spec = f"minimax:depth=1,eval=linear,weights={out}"
    assert f"play it: --agents {spec}" in result.stderr and "trained rootstrap (depth 1, lr 1e-05)" in result.stderr
    arena_cli("run-tournament", "--game", "santorini", "--agents", f"{spec},linear:weights={out},random", "--rounds", "1", "--quiet")
    board = arena_cli.json("leaderboard")
    assert len(board) == 3 and all(row["games"] == 2 and row["forfeits"] == 0 for row in board)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()[:12]
    versions = set(arena_cli.rows("select agent_type, agent_version from match_seats where agent_type != 'random'"))
    assert versions == {("minimax", f"1+{digest}"), ("linear", f"1+{digest}")}  # which weights played, stored with every match
    dab = tmp_path / "dab.json"
    arena_cli("train", "--game", "dots_and_boxes:rows=2,cols=2", "--algorithm", "treestrap", "--episodes", "1", "--depth", "1",
              "--eval-games", "0", "--out", str(dab), "--quiet")  # fmt: skip
    short = tmp_path / "short.json"
    short.write_text(out.read_text().replace('"weights": [', '"weights": [1.0, 2.0], "old": ['))
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2, 3]")
    for weights, message in [(dab, "is for game 'dots_and_boxes', not 'santorini'"), (short, "has 2 weights but game 'santorini' has 8"),
                             (junk, f"not an {FORMAT_NAME} file"), (tmp_path / "none.json", "cannot read it")]:  # fmt: skip
        for agent in (f"linear:weights={weights}", f"minimax:eval=linear,weights={weights}"):
            refused = arena_cli("run-tournament", "--game", "santorini", "--agents", f"{agent},random", ok=False)
            assert refused.exit_code == 2 and message in refused.stderr, refused.stderr
            assert len(refused.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--game", "tic_tac_toe"], "game 'tic_tac_toe' offers none"),
        (["--hidden", "32"], "learns the weights of a linear evaluation: it takes no --hidden"),
        (["--net", "conv"], "it takes no --net"),
        (["--dueling"], "it takes no --dueling"),
        (["--shaping", "positional"], "it takes no --shaping"),
        (["--depth", "0"], "--depth must be between 1 and 8"),
        (["--lr", "-1"], "--lr must be a positive number"),
        (["--opponent", "nobody"], "unknown opponent 'nobody'"),
        (["--resume", "missing.json"], "--resume: no checkpoint file"),
        (["--algorithm", "reinforce", "--depth", "2"], "--depth is the search depth of --algorithm treestrap and rootstrap"),
        (["--promote-at", "0.6", "--opponent", "minimax:depth=1"], "it takes no --promote-at"),
        (["--prioritized"], "--prioritized is prioritized experience replay: use it with --algorithm dqn, not treestrap"),
        (["--tau", "0.1"], "--tau is DDPG's: use it with --algorithm ddpg, not treestrap"),
        (["--algorithm", "ddpg", "--depth", "2"], "--depth is the search depth of --algorithm treestrap and rootstrap"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, arena_cli, args, message):
    out = tmp_path / "out" / "w.json"
    out.parent.mkdir()
    argv = ["train", "--episodes", "2", "--out", str(out), *args]
    for option, default in (("--game", "santorini"), ("--algorithm", "treestrap")):
        if option not in args:
            argv += [option, default]
    refused = arena_cli(*argv, ok=False)
    assert refused.exit_code == 2 and message in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert list(out.parent.iterdir()) == []


def test_diverging_weights_stop_with_one_line_and_no_weights_file(tmp_path):
    with pytest.raises(arena.ArenaError, match="the weights diverged"):
        train(config(tmp_path, "big.json", lr=1e300, episodes=1), REGISTRY)
    assert not (tmp_path / "big.json").exists()
