"""arena train's algorithms and network shapes, each in a short run on tic-tac-toe with its curve drawn;
the metrics file, the progress output, `arena plot training`, plain against double DQN, self-play
against past snapshots, game-provided reward shaping, and a fully convolutional network trained on
one Dots and Boxes size playing others."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("matplotlib")

import arena
from agents.models.qtable import load_qtable
from agents.neural import load_network
from agents.neural_train import TrainConfig, train
from agents.train_nets import load_torchscript
from arena.plugins import get_registry
from arena.training.figure import training_figure
from arena.training.metrics import metrics_path, read_metrics

REGISTRY = get_registry()

SHAPES = [  # algorithm, network, dueling head, file, the learner as the figure's title names it
    ("reinforce", "mlp", False, "ttt.npz", "REINFORCE, MLP 32"),
    ("reinforce", "conv", False, "ttt.pt", "REINFORCE, convolutional network 8-8 + dense 32"),
    ("reinforce", "fcn", False, "ttt.pt", "REINFORCE, fully convolutional network 8-8"),
    ("dqn", "mlp", False, "ttt.npz", "double DQN, MLP 32"),
    ("dqn", "mlp", True, "ttt.pt", "double DQN, dueling MLP 32"),
    ("dqn", "conv", True, "ttt.pt", "double DQN, dueling convolutional network 8-8 + dense 32"),
    ("dqn", "fcn", False, "ttt.pt", "double DQN, fully convolutional network 8-8"),
    ("qlearning", "mlp", False, "ttt.npz", "tabular Q-learning"),
]


def short(tmp_path: Path, name: str, **settings) -> TrainConfig:
    base = {"game": "tic_tac_toe", "out": str(tmp_path / name), "episodes": 200, "hidden": (32,), "channels": (8, 8),
            "eval_every": 50, "eval_games": 10, "log_every": 20, "window": 50}  # fmt: skip
    return TrainConfig(**{**base, **settings})


@pytest.mark.parametrize("algorithm, net, dueling, name, learner", SHAPES, ids=[f"{a}-{n}{'-dueling' if d else ''}" for a, n, d, *_ in SHAPES])
def test_short_run_writes_a_playable_file_and_its_curve(tmp_path, arena_cli, algorithm, net, dueling, name, learner):
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
    assert training_figure(rows).get_suptitle() == f"Training {learner} on tic_tac_toe against random"
    png = tmp_path / "curve.png"  # `arena plot training CHECKPOINT` draws every algorithm's and network's curve
    arena_cli("plot", "training", config.out, "--out", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    # The file plays: legal actions on a fresh board, by the agent that reads its format.
    state = REGISTRY.games["tic_tac_toe"]().new_initial_state(0)
    observation = np.asarray(state.observation(0), dtype=np.float32)
    if name.endswith(".pt"):
        module, metadata = load_torchscript(torch, config.out)
        assert metadata["game"] == "tic_tac_toe" and metadata["net"] == net and metadata["dueling"] == dueling
        assert tuple(module(torch.from_numpy(observation)[None]).shape) == (1, 9)
    elif algorithm == "qlearning":
        model = load_qtable(config.out, "cpu")
        assert model.metadata["format"] == "arena-qtable" and len(model.table) > 50
        assert model.run(observation[None])[0].shape == (1, 9)
    else:
        assert load_network(config.out).outputs(observation).shape == (9,)


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


def test_several_runs_are_compared_on_shared_axes(arena_cli, tmp_path):
    """The Dots and Boxes report's figure 6: training with and without prioritized replay, one figure."""
    from arena.training.figure import comparison_figure

    runs = []
    for name, extra in (("uniform.npz", ()), ("per.npz", ("--prioritized",))):
        arena_cli("train", "--game", "tic_tac_toe", "--algorithm", "dqn", "--episodes", "60", "--hidden", "8", "--window", "20",
                  "--log-every", "10", "--eval-every", "30", "--eval-games", "4", "--quiet", *extra, "--out", str(tmp_path / name))  # fmt: skip
        runs.append((name, read_metrics(tmp_path / name)))
    png = tmp_path / "compared.png"
    arena_cli("plot", "training", str(tmp_path / "uniform.npz"), str(tmp_path / "per.npz"), "--out", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figure = comparison_figure(runs)
    top, bottom = figure.axes
    for line, (name, rows) in zip(top.get_lines(), runs, strict=True):
        train = [row for row in rows if row["kind"] == "train"]
        assert list(line.get_ydata()) == [row["win_rate"] - row["loss_rate"] for row in train]
        assert list(line.get_xdata()) == [row["episode"] for row in train] and line.get_label().startswith(name)
    assert "with prioritized replay" in top.get_lines()[1].get_label() and "with prioritized" not in top.get_lines()[0].get_label()
    assert [len(line.get_xdata()) for line in bottom.get_lines()] == [2, 2]  # each run's evaluations
    refused = arena_cli("plot", "training", str(tmp_path / "uniform.npz"), str(tmp_path / "none.npz"), "--out", str(png), ok=False)
    assert refused.exit_code == 2 and "no training metrics" in refused.stderr


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
    # The snapshots are checkpoint files in OUT's pool directory (self.pool/), the trained file's copy last.
    pool = sorted(p.name for p in (tmp_path / "self.pool").iterdir())
    assert pool == [f"self-{n:07d}.npz" for n in (0, 20, 40, 60, 80, 100)]
    assert (tmp_path / "self.pool" / "self-0000100.npz").read_bytes() != (tmp_path / "self.npz").read_bytes()  # metadata
    assert load_network(tmp_path / "self.pool" / "self-0000040.npz").metadata["training"]["snapshot_after_episodes"] == 40
    assert all(np.array_equal(a, b) for a, b in zip(load_network(tmp_path / "self.pool" / "self-0000100.npz").weights,
                                                    load_network(tmp_path / "self.npz").weights))  # fmt: skip
    # The pool is used: the same run against only the latest snapshot trains another network; a repeat the same one.
    train(replace(config, out=str(tmp_path / "latest.npz"), self_pool=1), REGISTRY)
    train(replace(config, out=str(tmp_path / "again.npz")), REGISTRY)
    assert (tmp_path / "self.npz").read_bytes() == (tmp_path / "again.npz").read_bytes()
    pooled, latest = load_network(tmp_path / "self.npz"), load_network(tmp_path / "latest.npz")  # weights: the metadata differs anyway
    assert not all(np.array_equal(a, b) for a, b in zip(pooled.weights, latest.weights))


def test_self_play_against_another_runs_checkpoint_files(tmp_path):
    """A run's pool directory feeds a later run (`--opponent-pool`): its files, of any network shape, are the
    opponents besides the later run's own snapshots; same files, same result; a file for another game is refused."""
    first = short(tmp_path, "first.pt", algorithm="dqn", net="conv", opponent="self", snapshot_every=30, episodes=60, eval_games=0)
    train(first, REGISTRY)
    pool_dir = tmp_path / "first.pool"
    assert sorted(p.name for p in pool_dir.iterdir()) == ["first-0000000.pt", "first-0000030.pt", "first-0000060.pt"]
    files = f"{pool_dir / 'first-0000030.pt'},{pool_dir / 'first-0000060.pt'}"
    later = short(tmp_path, "later.npz", opponent="self", opponent_pool=files, snapshot_every=25, episodes=100, eval_games=0)
    train(later, REGISTRY)
    assert read_metrics(later.out)[0]["opponent_pool"] == files
    title = training_figure(read_metrics(later.out)).get_suptitle()
    assert title == "Training REINFORCE, MLP 32 on tic_tac_toe against past versions of itself and given checkpoints"
    assert len(list((tmp_path / "later.pool").iterdir())) == 5  # given only files: its own snapshots beside OUT
    train(replace(later, out=str(tmp_path / "again.npz")), REGISTRY)
    train(replace(later, out=str(tmp_path / "alone.npz"), opponent_pool=None), REGISTRY)
    weights = {name: load_network(tmp_path / name).weights for name in ("later.npz", "again.npz", "alone.npz")}
    assert all(np.array_equal(a, b) for a, b in zip(weights["later.npz"], weights["again.npz"]))
    assert not all(np.array_equal(a, b) for a, b in zip(weights["later.npz"], weights["alone.npz"]))
    # A directory: every checkpoint in it at the start, and this run's snapshots are written there too.
    train(short(tmp_path, "third.npz", opponent="self", opponent_pool=str(pool_dir), snapshot_every=50, episodes=50, eval_games=0), REGISTRY)
    assert {"third-0000000.npz", "third-0000050.npz", "first-0000000.pt"} <= {p.name for p in pool_dir.iterdir()}
    with pytest.raises(arena.ArenaError, match="already holds third-0000000.npz"):
        train(short(tmp_path, "third.npz", opponent="self", opponent_pool=str(pool_dir), episodes=50, eval_games=0), REGISTRY)
    c4 = tmp_path / "c4.npz"
    train(TrainConfig(game="connect_four", out=str(c4), episodes=2, hidden=(8,), eval_games=0), REGISTRY)
    with pytest.raises(arena.ArenaError, match="is for game 'connect_four', not 'tic_tac_toe'"):
        train(short(tmp_path, "bad.npz", opponent="self", opponent_pool=f"{c4}", episodes=10), REGISTRY)
    with pytest.raises(arena.ArenaError, match="--opponent-pool is for self-play"):
        train(short(tmp_path, "bad.npz", opponent_pool=str(pool_dir), episodes=10), REGISTRY)
    with pytest.raises(arena.ArenaError, match="no checkpoint file"):
        train(short(tmp_path, "bad.npz", opponent="self", opponent_pool=str(tmp_path / "missing.npz"), episodes=10), REGISTRY)
    assert not (tmp_path / "bad.npz").exists() and not (tmp_path / "bad.pool").exists()


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
        ({"net": "conv", "game": "gwent_lite"}, "needs board planes"),
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


TRAIN_ROW = {"kind": "train", "episode": 1, "window": 1, "win_rate": 1.0, "draw_rate": 0.0, "loss_rate": 0.0, "loss": None,
             "epsilon": None, "seconds": 0.1}  # fmt: skip


def test_metrics_file_survives_a_half_written_last_line(tmp_path):
    path = tmp_path / "x.npz.metrics.jsonl"
    path.write_text(json.dumps({"kind": "settings", "game": "g"}) + "\n" + json.dumps(TRAIN_ROW) + "\n{\"kind\": \"tr")
    assert [row["kind"] for row in read_metrics(tmp_path / "x.npz")] == ["settings", "train"]


@pytest.mark.parametrize("row, fault", [
    ({"kind": "train", "episode": "x"}, "its 'window' is missing"),
    ({**TRAIN_ROW, "episode": "x"}, "its 'episode' is not a number"),
    ({**TRAIN_ROW, "loss": "high"}, "its 'loss' is not a number"),
    ({"kind": "eval", "episode": 5, "games": 10, "win_rate": 0.5}, "its 'opponent' is missing"),
    ({"kind": "promote", "opponent": "greedy"}, "its 'episode' is missing"),
])  # fmt: skip
def test_a_metrics_row_without_its_numbers_is_one_line_naming_file_and_line(arena_cli, tmp_path, row, fault):
    """`arena plot training` gave a KeyError traceback for a row with values missing; read_metrics names the line."""
    path = tmp_path / "g.npz.metrics.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in ({"kind": "settings", "game": "g"}, TRAIN_ROW, row)) + "\n")
    refused = arena_cli("plot", "training", str(tmp_path / "g.npz"), "--out", str(tmp_path / "x.png"), ok=False)
    assert refused.exit_code == 2 and refused.stderr.strip().splitlines() == [
        f"Error: {path}: line 3 is not a metrics row: {fault}"], refused.stderr
    assert not (tmp_path / "x.png").exists()


def test_tabular_q_table_plays_in_tournaments_and_has_learned(tmp_path, arena_cli):
    """The Q-table file is played by the built-in `neural` agent. 3,000 episodes of 2x2 Dots and Boxes against random
    (about a second) take the table from the untrained table's 39-41% wins against random to 68-73% (seeds 0-2,
    200 games each); the tournament below is 100 games."""
    out = tmp_path / "dab22-q.npz"
    train(TrainConfig(game="dots_and_boxes:rows=2,cols=2", algorithm="qlearning", opponent="random", episodes=3000,
                      out=str(out), eval_games=0), REGISTRY)  # fmt: skip
    game = "dots_and_boxes:rows=2,cols=2"
    arena_cli("run-tournament", "--game", game, "--agents", f"neural:checkpoint={out},random", "--rounds", "100", "--quiet")
    (row,) = [r for r in arena_cli.json("leaderboard") if r["agent"].startswith("neural")]
    assert row["games"] == 100 and row["forfeits"] == 0
    assert row["wins"] >= 55, row
    refused = arena_cli("run-tournament", "--game", "dots_and_boxes", "--agents", f"neural:checkpoint={out},random", ok=False)
    assert refused.exit_code == 2 and "rows=2" in refused.stderr


def test_damaged_q_tables_are_refused_in_one_line(tmp_path, arena_cli):
    import io

    good = tmp_path / "q.npz"
    train(short(tmp_path, "q.npz", algorithm="qlearning", episodes=20, eval_games=0), REGISTRY)
    with np.load(good, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    cases = {"bad-keys.npz": {**arrays, "keys": arrays["keys"][:, :-4]},
             "bad-format.npz": {**arrays, "metadata": np.array(json.dumps({"format": "arena-qtable", "version": 9}))}}  # fmt: skip
    for name, content in cases.items():
        buffer = io.BytesIO()
        np.savez(buffer, **content)
        (tmp_path / name).write_bytes(buffer.getvalue())
        refused = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={tmp_path / name},random", ok=False)
        assert refused.exit_code == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert "do not fit" in refused.stderr or "not an arena-qtable version 1" in refused.stderr


def test_a_q_table_registers_without_a_game(tmp_path, arena_cli):
    """Registration without --game read a Q-table as an MLP .npz: 'not an arena-mlp checkpoint'. Now it is read as
    the Q-table it is, registered, and checked against the game when it plays; a damaged one is refused in its words."""
    train(short(tmp_path, "q.npz", algorithm="qlearning", episodes=20, eval_games=0), REGISTRY)
    arena_cli("agents", "register", "q", "--type", "neural", "--checkpoint", str(tmp_path / "q.npz"))
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "q,random", "--rounds", "1", "--quiet")
    refused = arena_cli("run-tournament", "--game", "connect_four", "--agents", "q,random", ok=False)
    assert refused.exit_code == 2 and "is for game 'tic_tac_toe'" in refused.stderr
    with np.load(tmp_path / "q.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    np.savez(tmp_path / "v9.npz", **{**arrays, "metadata": np.array(json.dumps({"format": "arena-qtable", "version": 9}))})
    refused = arena_cli("agents", "register", "v9", "--type", "neural", "--checkpoint", str(tmp_path / "v9.npz"), ok=False)
    assert refused.exit_code == 2 and refused.stderr.strip().splitlines() == [
        f"Error: checkpoint {tmp_path / 'v9.npz'}: not an arena-qtable version 1 table"]


def test_a_q_table_is_held_to_the_checkpoint_size_bound(tmp_path, arena_cli, monkeypatch):
    """A Q-table is an .npz like the others: what its members inflate to is bounded ($ARENA_MAX_CHECKPOINT_MB), and a
    bad bound is one line, where a Q-table was read whatever the bound said."""
    train(short(tmp_path, "q.npz", algorithm="qlearning", episodes=20, eval_games=0), REGISTRY)
    agents = f"neural:checkpoint={tmp_path / 'q.npz'},random"
    for bound, fragment in (("0.000001", "more than the 0 MB allowed"), ("abc", "must be a number of megabytes")):
        monkeypatch.setenv("ARENA_MAX_CHECKPOINT_MB", bound)
        refused = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", agents, "--name", f"b{bound}", ok=False)
        assert refused.exit_code == 2 and fragment in refused.stderr, refused.stderr


def test_progress_bar_on_a_terminal_shows_the_win_rate(tmp_path):
    """On a terminal `arena train` draws a progress bar with episodes done and the current win rate (no lines);
    piped, it prints progress lines instead (test_cli_records_metrics_and_plots_them)."""
    import os
    import pty
    import re
    import shutil
    import subprocess
    import sys

    from tests._terminal import read_until_exit

    executable = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"
    primary, secondary = pty.openpty()
    out = tmp_path / "q.npz"
    command = [executable, "train", "--game", "dots_and_boxes:rows=2,cols=2", "--algorithm", "qlearning", "--opponent", "random",
               "--episodes", "4000", "--eval-games", "0", "--out", str(out)]  # fmt: skip
    run = subprocess.Popen(command, cwd=tmp_path, stdin=secondary, stdout=secondary, stderr=secondary)
    os.close(secondary)
    output = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", read_until_exit(primary, run, 120).decode())
    assert run.returncode == 0, output
    assert re.search(r"episodes .*\d+/4000 .*win 0\.\d\d loss 0\.\d\d", output), output
    assert "episode 400/4000:" not in output and out.is_file()


def test_double_dqn_learns_to_beat_random_in_a_few_hundred_episodes(tmp_path):
    """300 episodes of tic-tac-toe against random: measured 67-73% wins against random (seeds 0-2, 200 games, best
    action), where the untrained networks win 34-39%; the conv network 73-79% (untrained 27-47%)."""
    from agents.neural_train import evaluate_against, untrained

    config = short(tmp_path, "ttt-dqn.npz", algorithm="dqn", episodes=300, eval_games=0)
    summary = train(config, REGISTRY)
    assert summary.plan is not None and summary.policy is not None
    win, _draw, loss = evaluate_against(summary.plan, REGISTRY, summary.policy, "random", 200)
    plan, before = untrained(config, REGISTRY)  # the same initial weights, not trained (bench/learning.py's baseline)
    base_win, _draw, _loss = evaluate_against(plan, REGISTRY, before, "random", 200)
    assert win >= 0.55 and win > loss + 0.25 and win >= base_win + 0.15, (win, loss, base_win)


def test_torchscript_files_are_the_same_bytes_in_every_process(tmp_path):
    """Same seed, same file, byte for byte, whatever the process's string hashing (PYTHONHASHSEED): TorchScript wrote
    nn.Linear's and nn.Conv2d's constants in the order of a Python set, so files differed from process to process."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from agents.neural_train import TrainConfig, train\n"
        "folder = sys.argv[1]\n"
        "for net in ('resmlp', 'conv', 'fcn', 'mdrnn'):\n"
        "    train(TrainConfig(game='dots_and_boxes:rows=2,cols=2', out=f'{folder}/{net}.pt', algorithm='dqn', net=net,\n"
        "                      episodes=4, hidden=(8,), channels=(4, 4), eval_games=0))\n"
    )  # fmt: skip
    root = Path(__file__).resolve().parent.parent
    for hash_seed in ("1", "2"):
        (tmp_path / hash_seed).mkdir()
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        subprocess.run([sys.executable, "-c", script, str(tmp_path / hash_seed)], env=env, check=True, timeout=120, cwd=tmp_path)
    for net in ("resmlp", "conv", "fcn", "mdrnn"):
        assert (tmp_path / "1" / f"{net}.pt").read_bytes() == (tmp_path / "2" / f"{net}.pt").read_bytes(), net


def test_the_residual_network_adds_its_input_and_plays_from_its_file(tmp_path, arena_cli):
    """--net resmlp (the Reversi report's): a residual unit is relu(x + F(x)), so with F's weights at zero it passes
    x on; a short run writes a TorchScript file that plays, and the figure names the network."""
    from agents.train_modules import ResidualUnit

    unit = ResidualUnit(4)
    with torch.no_grad():
        for layer in unit.inner:
            if hasattr(layer, "weight"):
                layer.weight.zero_()
                layer.bias.zero_()
    x = torch.tensor([[1.0, -2.0, 3.0, 0.5]])
    assert torch.equal(unit(x), torch.relu(x))
    config = short(tmp_path, "res.pt", algorithm="dqn", net="resmlp", dueling=True, hidden=(16, 16, 16), episodes=40, eval_games=0)
    train(config, REGISTRY)
    module, metadata = load_torchscript(torch, config.out)
    assert metadata["net"] == "resmlp" and sum(name.endswith("inner.0.weight") for name, _ in module.named_parameters()) == 2
    assert training_figure(read_metrics(config.out)).get_suptitle().startswith("Training double DQN, dueling residual MLP 16-16-16")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"neural:checkpoint={config.out},random", "--rounds", "2", "--quiet")
    with pytest.raises(arena.ArenaError, match="one width"):
        train(short(tmp_path, "bad.pt", algorithm="dqn", net="resmlp", hidden=(16, 8)), REGISTRY)


@pytest.mark.parametrize("algorithm", ["dqn", "ddpg"])
def test_conv_reads_the_board_planes_at_the_head_of_onitamas_flat_observation(tmp_path, algorithm):
    """Onitama observes 10x5x5 board planes then its cards, flat: --net conv convolves the planes and passes the cards
    through a layer of their own (the Onitama report's actor preprocess), and the file plays."""
    game = REGISTRY.games["onitama"](cards="study5")
    assert game.observation_planes() == (10, 5, 5)
    config = short(tmp_path, "oni.pt", game="onitama:cards=study5", algorithm=algorithm, net="conv", episodes=6, eval_games=0,
                   log_every=2)  # fmt: skip
    train(config, REGISTRY)
    module, metadata = load_torchscript(torch, config.out)
    assert metadata["net"] == "conv"
    observation = torch.from_numpy(np.asarray(game.new_initial_state(0).observation(0), dtype=np.float32))[None]
    assert observation.shape == (1, 260)
    values = module(observation)
    assert tuple(values.shape) == (1, game.num_distinct_actions)
    for part in (slice(0, 250), slice(250, 260)):  # the planes and the cards both reach the output
        changed = observation.clone()
        changed[0, part] = 1.0 - changed[0, part]
        assert not torch.equal(module(changed), values), part
