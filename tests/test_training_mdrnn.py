"""`arena train --net mdrnn --representation naive|box|edge --cell tanh|gru`: the Dots and Boxes report's 2D recurrent Q-network.

Each representation's re-encoding of the game's observation, and its read-off back to action ids,
against hand-written tensors on a 2x2 board; the anti-diagonal sweep of either cell against the
cell-by-cell recurrence; the edge representation's symmetry with either cell (a turned or mirrored
board gets the correspondingly permuted Q-values); the head's ReLU layer per `--hidden` width; short
training runs whose files play 2x2, 3x3 and 4x4 through `neural:checkpoint=`; and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import arena
from agents.neural_train import TrainConfig, train
from agents.neural_train import plan as train_plan
from agents.train_mdrnn import MDRNN, GRUSweep, Sweep, decode, encode
from agents.train_nets import load_torchscript
from arena.plugins import get_registry
from arena.training.figure import describe_learner
from arena.training.metrics import read_metrics
from games.dots_and_boxes import layout

REGISTRY = get_registry()

# 2x2 boxes: h(r, c) is action r*2 + c (0-5), v(r, c) is 6 + r*3 + c (6-11). Drawn: h(0,0), h(1,0), v(0,0), v(0,1)
# (which completes the top-left box: its owner plane is set, and ignored), h(2,1), v(1,2).
DRAWN = ("h(0,0)", "h(1,0)", "v(0,0)", "v(0,1)", "h(2,1)", "v(1,2)")


def observation(rows: int, cols: int, drawn: list[int] | tuple[str, ...]) -> torch.Tensor:
    """The game's own observation [1, 4, rows + 1, cols + 1] after drawing `drawn` (action ids or texts)."""
    state = REGISTRY.games["dots_and_boxes"](rows=rows, cols=cols).new_initial_state(0)
    for line in drawn:
        state.apply(state.string_to_action(line) if isinstance(line, str) else line)
    return torch.from_numpy(np.asarray(state.observation(state.current_player), dtype=np.float32))[None]


def test_each_representation_re_encodes_the_observation_as_the_report_draws_it():
    x = observation(2, 2, DRAWN)
    assert x[0, 2, 0, 0] + x[0, 3, 0, 0] == 1  # the completed box is someone's: the representations leave that out
    naive = [[[1, 0, -1], [1, 0, -1], [0, 1, -1]],  # horizontal lines from each dot; the last column's leave the board
             [[1, 1, 0], [0, 0, 1], [-1, -1, -1]]]  # vertical lines; the last row's leave the board
    box = [[[1, 0], [1, 0]],  # top line of each box
           [[1, 0], [0, 1]],  # bottom
           [[1, 1], [0, 0]],  # left
           [[1, 0], [0, 1]]]  # right
    edge = [[[-1, 1, 1, -1],  # v(0,0) h(0,0): the top-left dot's two lines side by side
             [0, 1, 1, 0],  # v(1,0) h(1,0) v(0,1) h(0,1)
             [0, 0, 0, 0],  # h(2,0) v(1,1) h(1,1) v(0,2)
             [-1, 1, 1, -1]]]  # h(2,1) v(1,2); the four corners hold no line
    for representation, expected in (("naive", naive), ("box", box), ("edge", edge)):
        assert torch.equal(encode(x, representation), torch.tensor([expected], dtype=torch.float32)), representation


def test_each_representation_reads_its_outputs_back_as_action_ids():
    naive = torch.arange(18.0).view(1, 3, 3, 2)  # cell [r, c], output k: (3r + c) * 2 + k
    assert decode(naive, "naive", 2, 2).tolist() == [[0, 2, 6, 8, 12, 14, 1, 3, 5, 7, 9, 11]]
    box = torch.arange(16.0).view(1, 2, 2, 4)  # box (r, c)'s top, bottom, left, right: (2r + c) * 4 + 0..3
    # A line between two boxes gets the mean of both boxes' outputs for it: h(1,0) = (bottom of (0,0) + top of (1,0)) / 2.
    assert decode(box, "box", 2, 2).tolist() == [[0, 4, 4.5, 8.5, 9, 13, 2, 4.5, 7, 10, 12.5, 15]]
    edge = torch.arange(16.0).view(1, 4, 4, 1)  # cell [i, j]: 4i + j
    assert decode(edge, "edge", 2, 2).tolist() == [[2, 7, 5, 10, 8, 13, 1, 6, 11, 4, 9, 14]]


def test_sweep_along_anti_diagonals_is_the_cell_by_cell_recurrence():
    torch.manual_seed(0)
    sweep = Sweep(3, 5)
    x = torch.randn(2, 3, 4, 3)
    expected = torch.zeros(2, 3, 4, 5)
    for i in range(3):
        for j in range(4):
            previous = torch.zeros(2, 5)
            previous = previous + expected[:, i - 1, j] if i else previous
            previous = previous + expected[:, i, j - 1] if j else previous
            expected[:, i, j] = torch.tanh(sweep.input(x[:, i, j]) + sweep.recurrent(previous))
    assert torch.allclose(sweep(x), expected, atol=1e-6)
    # The network sums the sweeps from the four corners: each is the same sweep of the flipped grid, flipped back.
    network = MDRNN("box", 5, (8,), False)
    grid = torch.randn(2, 4, 3, 4)
    corners = [network.sweep(grid.permute(0, 2, 3, 1).flip(dims)).flip(dims) for dims in ([], [2], [1], [1, 2])]
    assert torch.allclose(network.features(grid), sum(corners), atol=1e-6)


def test_gru_sweep_along_anti_diagonals_is_the_cell_by_cell_gru_on_the_mean_of_the_predecessors():
    torch.manual_seed(3)
    sweep = GRUSweep(3, 5)
    x = torch.randn(2, 3, 4, 3)
    expected = torch.zeros(2, 3, 4, 5)
    w_z, w_r, w_c = sweep.input.weight.split(5)
    b_z, b_r, b_c = sweep.input.bias.split(5)
    u_z, u_r = sweep.recurrent.weight.split(5)
    u_c = sweep.candidate.weight
    for i in range(3):
        for j in range(4):
            predecessors = ([expected[:, i - 1, j]] if i else []) + ([expected[:, i, j - 1]] if j else [])
            s = sum(predecessors) / len(predecessors) if predecessors else torch.zeros(2, 5)
            z = torch.sigmoid(x[:, i, j] @ w_z.T + b_z + s @ u_z.T)
            r = torch.sigmoid(x[:, i, j] @ w_r.T + b_r + s @ u_r.T)
            candidate = torch.tanh(x[:, i, j] @ w_c.T + b_c + (r * s) @ u_c.T)
            expected[:, i, j] = (1 - z) * s + z * candidate
    assert torch.allclose(sweep(x), expected, atol=1e-6)
    assert expected.abs().max() < 1  # a mix of states in (-1, 1): the mean keeps it there
    network = MDRNN("edge", 5, (8,), False, "gru")
    assert isinstance(network.sweep, GRUSweep)
    grid = torch.randn(2, 1, 4, 4)
    corners = [network.sweep(grid.permute(0, 2, 3, 1).flip(dims)).flip(dims) for dims in ([], [2], [1], [1, 2])]
    assert torch.allclose(network.features(grid), sum(corners), atol=1e-6)


def test_the_head_has_a_relu_layer_per_hidden_width():
    torch.manual_seed(4)
    network = MDRNN("edge", 8, (16, 12), False)
    linears = [(m.in_features, m.out_features) for m in network.head if isinstance(m, torch.nn.Linear)]
    assert linears == [(8, 16), (16, 12), (12, 1)]
    assert sum(p.numel() for p in network.head.parameters()) == 8 * 16 + 16 + 16 * 12 + 12 + 12 + 1
    x = observation(3, 3, [0, 5])
    features = network.features(encode(x, "edge"))
    first, second, last = (m for m in network.head if isinstance(m, torch.nn.Linear))
    by_hand = last(torch.relu(second(torch.relu(first(features)))))
    assert torch.allclose(network(x), decode(by_hand, "edge", 3, 3), atol=1e-6)
    # Unless --hidden is given, mdrnn's head is the report's one layer of 64 (the other networks' default is 64,64).
    plan = train_plan(TrainConfig(game="dots_and_boxes", out="unused.pt", algorithm="dqn", net="mdrnn"), REGISTRY)
    assert plan.config.hidden == (64,) and plan.config.cell == "tanh" and plan.config.representation == "naive"
    assert train_plan(TrainConfig(game="dots_and_boxes", out="unused.pt", algorithm="dqn", net="conv"), REGISTRY).config.hidden == (64, 64)


def test_dueling_head_is_scripted_and_its_values_average_to_the_state_value():
    torch.manual_seed(2)
    network = MDRNN("naive", 8, (8,), True)
    scripted = torch.jit.script(network)
    for rows, cols in ((2, 2), (4, 3)):
        x = observation(rows, cols, [0, 3])
        q = scripted(x)
        assert q.shape == (1, layout(rows, cols).num_lines) and torch.allclose(q, network(x))
        value = network.value(network.features(encode(x, "naive")).mean(dim=(1, 2)))
        assert torch.allclose(q.mean(dim=1, keepdim=True), value, atol=1e-6)  # Q = V + A - mean(A)


def symmetries(rows: int, cols: int) -> list[tuple[int, int, object]]:
    """The eight turns and mirrors of an n x m board: (rows, cols) of the board they make, and the map of dots."""
    n, m = rows, cols
    return [(n, m, lambda r, c: (r, c)), (m, n, lambda r, c: (c, n - r)), (n, m, lambda r, c: (n - r, m - c)),
            (m, n, lambda r, c: (m - c, r)), (m, n, lambda r, c: (c, r)), (n, m, lambda r, c: (r, m - c)),
            (n, m, lambda r, c: (n - r, c)), (m, n, lambda r, c: (m - c, n - r))]  # fmt: skip


def line_map(rows: int, cols: int, to_rows: int, to_cols: int, dots: object) -> list[int]:
    """Where each line of the n x m board goes: its two dots mapped, then the line between them on the new board."""
    source, target = layout(rows, cols), layout(to_rows, to_cols)
    image = []
    for action in range(source.num_lines):
        kind, r, c = source.describe(action)
        (r1, c1), (r2, c2) = dots(r, c), dots(r + (kind == "v"), c + (kind == "h"))  # type: ignore[operator]
        image.append(target.h(r1, min(c1, c2)) if r1 == r2 else target.v(min(r1, r2), c1))
    return image


@pytest.mark.parametrize("rows, cols, cell", [(3, 3, "tanh"), (2, 3, "tanh"), (3, 3, "gru"), (2, 3, "gru")])
def test_edge_representation_gives_a_turned_or_mirrored_board_the_turned_q_values(rows, cols, cell):
    """By construction: one U for both predecessors (the grid's transpose; the GRU's mean of them too), the same cell
    from the four corners, summed (its mirrors), and a turn of the board is a turn of the edge grid. An untrained
    network will do; a 2x3 board turned a quarter is a 3x2 board, which the same network plays."""
    torch.manual_seed(1)
    network = MDRNN("edge", 16, (32, 8), False, cell)
    drawn = [0, 4, 5, 9, 13, 14] if (rows, cols) == (3, 3) else [0, 2, 3, 8, 10]
    with torch.no_grad():
        q = network(observation(rows, cols, drawn))[0]
        for to_rows, to_cols, dots in symmetries(rows, cols):
            image = line_map(rows, cols, to_rows, to_cols, dots)
            assert sorted(image) == list(range(len(image)))
            turned = network(observation(to_rows, to_cols, [image[a] for a in drawn]))[0]
            assert torch.allclose(turned[image], q, atol=1e-5)
        # The box representation is not symmetric (the report's reason for the edge one): a turned board's lines
        # change places within their boxes.
        box = MDRNN("box", 16, (32,), False, cell)
        to_rows, to_cols, dots = symmetries(rows, cols)[1]
        image = line_map(rows, cols, to_rows, to_cols, dots)
        turned = box(observation(to_rows, to_cols, [image[a] for a in drawn]))[0]
        assert not torch.allclose(turned[image], box(observation(rows, cols, drawn))[0], atol=1e-3)


def test_a_trained_file_plays_every_board_size_through_neural(tmp_path, arena_cli):
    def run(name: str, representation: str) -> TrainConfig:
        config = TrainConfig(game="dots_and_boxes", out=str(tmp_path / name), algorithm="dqn", opponent="greedy", net="mdrnn",
                             representation=representation, channels=(8,), hidden=(16,), batch=16, episodes=6, eval_games=0)  # fmt: skip
        train(config, REGISTRY)
        return config

    edge = run("edge.pt", "edge")
    module, metadata = load_torchscript(torch, edge.out)
    assert metadata["net"] == "mdrnn" and metadata["representation"] == "edge" and metadata["size_independent"] is True
    assert describe_learner(read_metrics(edge.out)[0]) == "double DQN, MDRNN 8 + dense 16, edge representation"
    assert run("again.pt", "edge") and Path(edge.out).read_bytes() == (tmp_path / "again.pt").read_bytes()  # same seed, same bytes
    box = run("box.pt", "box")
    assert load_torchscript(torch, box.out)[1]["representation"] == "box"
    x = observation(4, 4, [0, 7, 30])
    assert module(x).shape == (1, 40)  # the TorchScript module, board size free
    for size in ("rows=2,cols=2", "rows=3,cols=3", "rows=4,cols=4"):
        arena_cli("run-tournament", "--game", f"dots_and_boxes:{size}", "--agents",
                  f"neural:checkpoint={edge.out},neural:checkpoint={box.out},random", "--rounds", "2", "--quiet")  # fmt: skip
        board = arena_cli.json("leaderboard")
        assert all(row["games"] == 4 and row["forfeits"] == 0 for row in board)
    # Going on from it needs the same representation.
    with pytest.raises(arena.ArenaError, match="is a dqn mdrnn 8 \\+ dense 16, edge representation, tanh cell network; this run asks for"):
        train(TrainConfig(game="dots_and_boxes", out=str(tmp_path / "more.pt"), algorithm="dqn", net="mdrnn", representation="box",
                          channels=(8,), hidden=(16,), episodes=8, resume=edge.out), REGISTRY)  # fmt: skip


def test_a_trained_gru_file_is_the_same_for_the_same_seed_and_plays_every_board_size(tmp_path, arena_cli):
    out = tmp_path / "gru.pt"
    train_args = ["train", "--game", "dots_and_boxes:rows=2,cols=2", "--algorithm", "dqn", "--net", "mdrnn", "--representation",
                  "edge", "--cell", "gru", "--channels", "8", "--hidden", "16,8", "--batch", "16", "--eval-games", "0", "--quiet"]  # fmt: skip
    arena_cli(*train_args, "--episodes", "6", "--out", str(out))
    arena_cli(*train_args, "--episodes", "6", "--out", str(tmp_path / "again.pt"))
    assert out.read_bytes() == (tmp_path / "again.pt").read_bytes()  # same seed, same bytes
    module = torch.jit.load(str(out))  # the plain TorchScript file
    assert module.sweep.original_name == "GRUSweep" and module(observation(4, 4, [0, 7, 30])).shape == (1, 40)
    metadata = load_torchscript(torch, str(out))[1]
    assert metadata["cell"] == "gru" and metadata["training"]["cell"] == "gru" and metadata["training"]["hidden"] == [16, 8]
    assert describe_learner(read_metrics(str(out))[0]) == "double DQN, MDRNN 8 + dense 16-8, edge representation, GRU cell"
    for size in ("rows=2,cols=2", "rows=3,cols=3", "rows=4,cols=4"):
        arena_cli("run-tournament", "--game", f"dots_and_boxes:{size}", "--agents", f"neural:checkpoint={out},random", "--rounds", "2",
                  "--quiet")  # fmt: skip
        assert all(row["games"] == 2 and row["forfeits"] == 0 for row in arena_cli.json("leaderboard"))
    # Going on from it needs the same cell and head: another is refused in one line, writing nothing.
    more = tmp_path / "more.pt"
    for other, asked in ((["--hidden", "16,8"], "16-8, edge representation, tanh cell one"), (["--cell", "gru", "--hidden", "16"], "16, edge representation, gru cell one")):
        args = [a for a in train_args if a not in ("--cell", "gru", "--hidden", "16,8")] + other  # fmt: skip
        result = arena_cli(*args, "--episodes", "8", "--resume", str(out), "--out", str(more), ok=False)
        assert result.exit_code == 2 and "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert f"is a dqn mdrnn 8 + dense 16-8, edge representation, gru cell network; this run asks for a dqn mdrnn 8 + dense {asked}" in result.stderr
    assert not more.exists()
    arena_cli(*train_args, "--episodes", "8", "--resume", str(out), "--out", str(more))
    assert load_torchscript(torch, str(more))[1]["training"]["episodes"] == 8


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"net": "fcn", "representation": "edge"}, "--representation is the board representation of --net mdrnn, not of --net fcn"),
        ({"net": "mlp", "representation": "box", "out": "x.npz"}, "not of --net mlp"),
        ({"game": "connect_four"}, "--net mdrnn needs actions that are board cells; game 'connect_four' declares none"),
        ({"game": "tic_tac_toe"}, "--net mdrnn re-encodes the lines of a board of dots"),
        ({"representation": "diagonal"}, "unknown representation 'diagonal'"),
        ({"net": "fcn", "cell": "gru"}, "--cell is the recurrent cell of --net mdrnn, not of --net fcn"),
        ({"net": "mlp", "cell": "tanh", "out": "x.npz"}, "--cell is the recurrent cell of --net mdrnn, not of --net mlp"),
        ({"cell": "lstm"}, "unknown cell 'lstm' \\(choose tanh, gru\\)"),
    ],
)
def test_refusals_write_nothing(tmp_path, settings, message):
    config = {"game": "dots_and_boxes", "net": "mdrnn", "algorithm": "dqn", "episodes": 2, **settings}
    config["out"] = str(tmp_path / config.pop("out", "net.pt"))
    with pytest.raises(arena.ArenaError, match=message):
        train(TrainConfig(**config), REGISTRY)
    assert list(tmp_path.iterdir()) == []


def test_refusals_on_the_command_line_are_one_line_and_exit_2(tmp_path, arena_cli):
    out = str(tmp_path / "x.pt")
    for args, message in ((["--game", "dots_and_boxes", "--net", "fcn", "--representation", "box"], "not of --net fcn"),
                          (["--game", "connect_four", "--net", "mdrnn"], "declares none (Game.action_planes)"),
                          (["--game", "dots_and_boxes", "--net", "mdrnn", "--representation", "diagonal"], "'diagonal' is not one of"),
                          (["--game", "dots_and_boxes", "--net", "conv", "--cell", "gru"], "--cell is the recurrent cell of --net mdrnn, not of --net conv"),
                          (["--game", "dots_and_boxes", "--cell", "gru"], "not of --net mlp"),
                          (["--game", "dots_and_boxes", "--net", "mdrnn", "--cell", "lstm"], "'lstm' is not one of 'tanh', 'gru'")):  # fmt: skip
        result = arena_cli("train", *args, "--algorithm", "dqn", "--episodes", "2", "--out", out, ok=False)
        assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []
