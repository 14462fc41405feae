"""arena train's algorithms and network shapes, each in a short run on tic-tac-toe with its curve drawn;
the metrics file, the progress output, `arena plot training`, plain against double DQN, self-play
against past snapshots, game-provided reward shaping, and a fully convolutional network trained on
one Dots and Boxes size playing others."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("matplotlib")

import arena
from agents.neural import load_network
from agents.neural_train import TrainConfig, train
from agents.tabular_q import load_table
from agents.train_nets import load_torchscript
from arena.plugins import get_registry
from arena.training.figure import training_figure
from arena.training.metrics import metrics_path, read_metrics

REGISTRY = get_registry()

SHAPES = [
    ("reinforce", "mlp", False, "ttt.npz"),
    ("reinforce", "conv", False, "ttt.pt"),
    ("reinforce", "fcn", False, "ttt.pt"),
    ("dqn", "mlp", False, "ttt.npz"),
    ("dqn", "mlp", True, "ttt.pt"),
    ("dqn", "conv", True, "ttt.pt"),
    ("dqn", "fcn", False, "ttt.pt"),
    ("qlearning", "mlp", False, "ttt.npz"),
]


def short(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "episodes": 200, "hidden": (32,), "channels": (8, 8),
            "eval_every": 50, "eval_games": 10, "log_every": 20, "window": 50}  # fmt: skip
    return TrainConfig(**{**base, **settings})


@pytest.mark.parametrize("algorithm, net, dueling, name", SHAPES, ids=[f"{a}-{n}{'-dueling' if d else ''}" for a, n, d, _ in SHAPES])
def test_short_run_writes_a_playable_file_and_its_curve(tmp_path, algorithm, net, dueling, name):
    config = short(tmp_path, name, algorithm=algorithm, net=net, dueling=dueling)
    summary = train(config, REGISTRY)
    assert summary.episodes == 200 and Path(config.out).is_file()
    rows = read_metrics(config.out)
    kinds = [row["kind"] for row in rows]
    assert kinds[0] == "settings" and kinds.count("train") == 10 and kinds.count("eval") == 4
    train_rows = [row for row in rows if row["kind"] == "train"]
    assert [row["episode"] for row in train_rows] == list(range(20, 201, 20))
    assert all(0 <= row["win_rate"] <= 1 and row["window"] <= 50 for row in train_rows)
    assert any(row["loss"] is not None for row in train_rows)
    assert (train_rows[-1]["epsilon"] is None) == (algorithm == "reinforce")
    png = tmp_path / "curve.png"
    png.write_bytes(_render(training_figure(rows)))
    assert png.stat().st_size > 10_000
    # The file plays: legal actions on a fresh board, by the agent that reads its format.
    state = REGISTRY.games["tic_tac_toe"]().new_initial_state(0)
    observation = np.asarray(state.observation(0), dtype=np.float32)
    if name.endswith(".pt"):
        module, metadata = load_torchscript(torch, config.out)
        assert metadata["game"] == "tic_tac_toe" and metadata["net"] == net and metadata["dueling"] == dueling
        assert tuple(module(torch.from_numpy(observation)[None]).shape) == (1, 9)
    elif algorithm == "qlearning":
        table, metadata = load_table(config.out)
        assert metadata["format"] == "arena-qtable" and len(table) > 50
    else:
        assert load_network(config.out).outputs(observation).shape == (9,)


def _render(fig) -> bytes:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def test_cli_records_metrics_and_plots_them(arena_cli, tmp_path):
    out = tmp_path / "c.npz"
    result = arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--episodes", "100", "--hidden", "16",
                       "--eval-every", "50", "--eval-games", "10", "--eval-opponent", "greedy", "--out", str(out))  # fmt: skip
    assert "episode 10/100" in result.stderr and "against greedy" in result.stderr
    rows = read_metrics(metrics_path(out))
    assert [row["opponent"] for row in rows if row["kind"] == "eval"] == ["greedy", "greedy"]
    png = tmp_path / "curve.png"
    arena_cli("plot", "training", str(out), "--out", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    refused = arena_cli("plot", "training", str(tmp_path / "none.npz"), "--out", str(png), ok=False)
    assert refused.exit_code == 2 and "no training metrics" in refused.stderr
    refused = arena_cli("plot", "training", "--out", str(png), ok=False)
    assert refused.exit_code == 2 and "needs the checkpoint" in refused.stderr


def test_plain_and_double_dqn_differ_and_each_is_reproducible(tmp_path):
    def run(name: str, double: bool) -> bytes:
        train(short(tmp_path, name, algorithm="dqn", double=double, episodes=60, eval_games=0), REGISTRY)
        return (tmp_path / name).read_bytes()

    double, plain, plain_again = run("d.npz", True), run("p.npz", False), run("p2.npz", False)
    assert plain == plain_again and plain != double
    assert load_network(tmp_path / "p.npz").metadata["training"]["double"] is False


def test_self_play_draws_opponents_from_past_snapshots(tmp_path):
    config = short(tmp_path, "self.npz", opponent="self", self_pool=3, snapshot_every=20, episodes=100, eval_games=0)
    train(config, REGISTRY)
    settings = read_metrics(config.out)[0]
    assert settings["opponent"] == "self" and settings["self_pool"] == 3 and settings["snapshot_every"] == 20


def test_reward_shaping_comes_from_the_game(tmp_path):
    config = TrainConfig(game="reversi", out=str(tmp_path / "r.pt"), algorithm="dqn", net="conv", dueling=True,
                         channels=(4,), hidden=(16,), shaping="positional", episodes=4, eval_games=0)  # fmt: skip
    train(config, REGISTRY)
    assert read_metrics(config.out)[0]["shaping"] == "positional"
    with pytest.raises(arena.ArenaError, match="offers no reward shaping 'positional'"):
        train(short(tmp_path, "x.npz", shaping="positional"), REGISTRY)
    assert not (tmp_path / "x.npz").exists() and not metrics_path(tmp_path / "x.npz").exists()


def test_fcn_trained_on_one_dots_and_boxes_size_plays_others(tmp_path, arena_cli):
    config = TrainConfig(game="dots_and_boxes:rows=3,cols=3", out=str(tmp_path / "dab.pt"), algorithm="dqn", net="fcn",
                         channels=(8, 8), episodes=20, eval_games=0)  # fmt: skip
    train(config, REGISTRY)
    module, metadata = load_torchscript(torch, config.out)
    assert metadata["size_independent"] is True and metadata["observation_shape"] == [4, 4, 4]
    for rows, cols in ((2, 2), (4, 4), (2, 5)):
        game = REGISTRY.games["dots_and_boxes"](rows=rows, cols=cols)
        state = game.new_initial_state(0)
        while not state.is_terminal():
            observation = torch.from_numpy(np.asarray(state.observation(state.current_player), dtype=np.float32))[None]
            values = module(observation)[0].detach().numpy()
            assert values.shape == (game.num_distinct_actions,)
            legal = state.legal_actions()
            state.apply(legal[int(np.argmax(values[legal]))])
    # The built-in `neural` agent plays the file on the other sizes too (its metadata says size_independent),
    # but not on another game.
    for size in ("rows=2,cols=2", "rows=4,cols=4"):
        arena_cli("run-tournament", "--game", f"dots_and_boxes:{size}", "--agents", f"neural:checkpoint={config.out},random",
                  "--rounds", "2", "--quiet")  # fmt: skip
        board = arena_cli.json("leaderboard")
        assert all(row["games"] == 2 and row["forfeits"] == 0 for row in board)
    refused = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={config.out},random", ok=False)
    assert refused.exit_code == 2 and "is for game 'dots_and_boxes'" in refused.stderr


def test_torchscript_files_from_training_play_in_tournaments(tmp_path, arena_cli):
    config = short(tmp_path, "ttt-conv.pt", algorithm="dqn", net="conv", dueling=True, episodes=20, eval_games=0)
    train(config, REGISTRY)
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={config.out},random", "--rounds", "2", "--quiet")
    assert all(row["games"] == 2 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))
    refused = arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={config.out},random", ok=False)
    assert refused.exit_code == 2 and "is for game 'tic_tac_toe'" in refused.stderr


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"net": "conv", "game": "onitama"}, "needs board planes"),
        ({"net": "fcn", "game": "connect_four"}, "actions that are board cells"),
        ({"net": "conv", "out": "ttt.npz"}, "name it *.pt"),
        ({"dueling": True, "algorithm": "reinforce"}, "--dueling is a Q-value head"),
        ({"algorithm": "qlearning", "net": "conv"}, "tabular"),
        ({"eval_opponent": "nobody"}, "unknown evaluation opponent 'nobody'"),
        ({"self_pool": 0}, "--self-pool"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_written(tmp_path, settings, message):
    out = str(tmp_path / settings.pop("out", "net.pt" if settings.get("net") in ("conv", "fcn") else "net.npz"))
    with pytest.raises(arena.ArenaError, match=message.replace("*", r"\*")):
        train(TrainConfig(**{"game": "tic_tac_toe", "out": out, "episodes": 5, **settings}), REGISTRY)
    assert list(tmp_path.iterdir()) == []


def test_metrics_file_survives_a_half_written_last_line(tmp_path):
    path = tmp_path / "x.npz.metrics.jsonl"
    path.write_text(json.dumps({"kind": "settings", "game": "g"}) + "\n" + json.dumps({"kind": "train", "episode": 1}) + "\n{\"kind\": \"tr")
    assert [row["kind"] for row in read_metrics(tmp_path / "x.npz")] == ["settings", "train"]
