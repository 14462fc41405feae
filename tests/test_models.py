"""Users' networks as `neural` agents: TorchScript, torch.export and ONNX files made here from tiny torch modules."""

from __future__ import annotations

import hashlib
import io
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.neural import NeuralAgent
from arena.match import play_match
from arena.observations import observation_shape
from arena.seeding import derive_seed
from arena.testing import check_agent
from tests._models import (
    C4,
    C4_SHAPE,
    FORMATS,
    REGISTRY,
    network,
    save,
    save_all,
    torch,
)
from tests.test_neural import one_error_line


@pytest.fixture(scope="module")
def c4_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One policy-and-value network for connect four in every format, under names that say nothing of it."""
    net = network(C4_SHAPE, 7, seed=1, value=True)
    files = {kind: (net, f"net{i}.bin", kind) for i, kind in enumerate(FORMATS)}
    return save_all(tmp_path_factory.mktemp("c4"), C4_SHAPE, files, {"game": "connect_four", "game_version": "1"})


def moves_of(path: Path, game_id: str = "connect_four", matches: int = 4, **params: str) -> list[list[int]]:
    game = REGISTRY.games[game_id]()
    random_cls = REGISTRY.agents["random"]
    out = []
    for index in range(matches):
        seat = index % 2
        agents = [random_cls(game, p, derive_seed(index, p)) for p in range(game.num_players)]
        agents[seat] = NeuralAgent(game, seat, derive_seed(index, seat), checkpoint=str(path), **params)
        result = play_match(game, agents, index)
        assert result.reason == "normal", result.detail
        out.append(result.moves)
    return out


def test_every_format_plays_the_same_moves(c4_files):
    """The same network in three formats chooses the same actions (argmax, ties to the lowest id)."""
    moves = {kind: moves_of(path) for kind, path in c4_files.items()}
    assert moves["torchscript"] == moves["pt2"] == moves["onnx"]
    for path in c4_files.values():
        check_agent(NeuralAgent, C4, {"checkpoint": str(path), "sample": "true"}, seeds=range(1))


def test_act_batch_answers_as_act(c4_files):
    agents = [NeuralAgent(C4, seat % 2, seat, checkpoint=str(c4_files["onnx"]), sample="true") for seat in range(6)]
    twins = [NeuralAgent(C4, seat % 2, seat, checkpoint=str(c4_files["onnx"]), sample="true") for seat in range(6)]
    states = []
    for n in range(6):
        state = C4.new_initial_state(n)
        for action in range(n):
            state.apply(state.legal_actions()[action % len(state.legal_actions())])
        states.append(state)
    views = [state.view(state.current_player) for state in states]
    for agent, state in zip(agents, states):
        agent.player = state.current_player
    for twin, state in zip(twins, states):
        twin.player = state.current_player
    assert NeuralAgent.act_batch(agents, views) == [twin.act(view) for twin, view in zip(twins, views)]


def outcomes(arena_cli, tournament: int) -> list[tuple]:
    matches = arena_cli.json("matches", "--tournament", str(tournament))
    assert matches and all(m["reason"] == "normal" for m in matches)
    return [(m["index"], m["turns"], [s["agent"] for s in m["seats"]], [s["score"] for s in m["seats"]]) for m in matches]


#: (format, options): each format in process, one match at a time and interleaved; 1 and 2 workers,
#: isolated and not (PyTorch imports cost seconds per process, so isolated runs use ONNX). Isolated
#: agents batch too: a step's decisions cross to their process in one message (tests/test_isolated_batches.py).
RUNS = [("torchscript", []), ("torchscript", ["--concurrent-matches", "8"]), ("pt2", ["--concurrent-matches", "3"]),
        ("torchscript", ["--workers", "2", "--concurrent-matches", "4"]), ("onnx", []), ("onnx", ["--concurrent-matches", "5"]),
        ("onnx", ["--isolate", "--concurrent-matches", "6"]), ("onnx", ["--workers", "2", "--isolate", "--concurrent-matches", "4"])]  # fmt: skip


def test_tournaments_batched_or_not_isolated_or_not_one_and_two_workers(arena_cli, c4_files):
    """The same network gives the same results whatever its format, batching, workers and isolation."""
    results = []
    for number, (kind, options) in enumerate(RUNS, start=1):
        agents = f"neural:checkpoint={c4_files[kind]},sample=true,neural:checkpoint={c4_files[kind]},seed=1,greedy"
        run = arena_cli("run-tournament", "--game", "connect_four", "--agents", agents, "--rounds", "2", "--seed", "3",
                        "--quiet", *options)  # fmt: skip
        assert "note:" not in run.stderr, run.stderr  # isolated or not, nothing is ignored
        results.append([(index, turns, scores) for index, turns, _agents, scores in outcomes(arena_cli, number)])
    assert len(results[0]) == 6
    assert all(result == results[0] for result in results), RUNS
    digests = {hashlib.sha256(path.read_bytes()).hexdigest()[:12] for path in c4_files.values()}
    assert {row[0] for row in arena_cli.rows("select agent_version from match_seats where agent_type = 'neural'")} == {f"1+{d}" for d in digests}


@pytest.fixture(scope="module")
def gwent_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gwent")
    game = REGISTRY.games["gwent_lite"]()
    shape = observation_shape(game)
    net = network(shape, game.num_distinct_actions, seed=2)
    return {kind: save(net, shape, folder / f"gwent.{kind}", kind) for kind in ("torchscript", "onnx")}


def test_hidden_information_game_in_tournaments(arena_cli, gwent_files):
    """Gwent Lite (hidden hands): the network sees its seat's observation only; same results in and
    out of agent processes, batched or not."""
    from arena import tournament
    from db.session import open_database

    database = open_database(f"sqlite:///{arena_cli.db_path}")
    for number, (kind, options) in enumerate([("torchscript", []), ("torchscript", ["--concurrent-matches", "6"]),
                                              ("onnx", ["--concurrent-matches", "2"]), ("onnx", ["--workers", "2", "--isolate"]),
                                              ("onnx", ["--isolate", "--concurrent-matches", "3"])],
                                             start=1):  # fmt: skip
        agents = f"neural:checkpoint={gwent_files[kind]},neural:checkpoint={gwent_files[kind]},seed=1,sample=true,random"
        request = tournament.TournamentRequest(game="gwent_lite", agents=agents, rounds=2, seed=5, name=f"g{number}")
        tournament.create(REGISTRY, database, request)
        # Each tournament deals with its own secret (issue 11): the four share the first one's, to deal alike.
        arena_cli.rows(f"update tournaments set secret = (select secret from tournaments where id = 1) where id = {number}")
        arena_cli("run-tournament", "--resume", f"g{number}", "--quiet", *options)
    runs = [[(i, turns, scores) for i, turns, _agents, scores in outcomes(arena_cli, t)] for t in (1, 2, 3, 4, 5)]
    assert all(run == runs[0] for run in runs)


# ---------------------------------------------------------------- refusals


def test_shapes_that_do_not_fit_are_refused_with_both_shapes(arena_cli, tmp_path):
    ttt = REGISTRY.games["tic_tac_toe"]()
    flat = network(observation_shape(ttt), 9, seed=0)
    cases = {
        "onnx": (save(flat, observation_shape(ttt), tmp_path / "a", "onnx"), ["takes input of shape [batch, 3, 3, 3]", "[batch, 3, 6, 7]"]),
        "torchscript": (save(flat, observation_shape(ttt), tmp_path / "b", "torchscript"), ["does not take connect_four's observations of shape [batch, 3, 6, 7]"]),
        "actions": (save(network(C4_SHAPE, 9), C4_SHAPE, tmp_path / "c", "pt2"), ["gives values of shape [2, 9]", "needs [batch, 7]"]),
        "metadata": (save(network(C4_SHAPE, 7), C4_SHAPE, tmp_path / "d", "torchscript", {"game": "reversi"}), ["is for game 'reversi', not 'connect_four'"]),
        "parameters": (save(network(C4_SHAPE, 7), C4_SHAPE, tmp_path / "e", "onnx", {"game": "connect_four", "game_params": "rows=5"}),
                       ["is for connect_four:rows=5, not connect_four"]),
        "no such parameters": (save(network(C4_SHAPE, 7), C4_SHAPE, tmp_path / "f", "onnx", {"game": "connect_four", "game_params": "size=3"}),
                               ["is for connect_four with parameters 'size=3', not connect_four"]),
    }  # fmt: skip
    for path, fragments in cases.values():
        result = arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", ok=False)
        one_error_line(result, str(path), *fragments)
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])


class Squeezed(torch.nn.Module):
    """A PyTorch habit: `.squeeze()` on the outputs, which drops the batch dimension of a batch of one."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze()


class HalfNaN(torch.nn.Module):
    """NaN for action 6 on positions with exactly two pieces in the first plane (a few moves in), else a plain policy."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = self.net(x)
        poison = torch.zeros_like(values)
        poison[:, 6] = torch.where(x[:, 0].sum(dim=(1, 2)) == 2, torch.tensor(float("nan")), torch.tensor(0.0))
        return values + poison


def test_networks_that_fit_a_batch_of_two_only_are_refused_at_the_start(arena_cli, tmp_path):
    """A batch of one is asked for in play too: a network that squeezes it away, or one exported for a batch of two
    only, is refused in one line before any match (both passed the start and then forfeited, or changed results
    with --concurrent-matches)."""
    program = torch.export.export(network(C4_SHAPE, 7).eval(), (torch.zeros(2, *C4_SHAPE),))  # no dynamic batch
    torch.export.save(program, str(tmp_path / "two.pt2"))
    cases = {
        save(Squeezed(network(C4_SHAPE, 7)), C4_SHAPE, tmp_path / "squeezed.pt", "torchscript"): "gives values of shape [7] for a batch of 1",
        tmp_path / "two.pt2": "takes a batch of two positions but not of one",
    }  # fmt: skip
    for path, fragment in cases.items():
        one_error_line(arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", ok=False),
                       str(path), fragment)  # fmt: skip
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])


def test_a_nan_output_for_a_legal_action_forfeits_that_match_batched_or_not(arena_cli, tmp_path):
    """argmax takes a NaN for the highest value: a network answering NaN for a legal action forfeits (agent_error,
    naming the action) instead of playing it, in that match alone: interleaved, the other matches of its batch play
    on, so the results equal one match at a time."""
    path = save(HalfNaN(network(C4_SHAPE, 7)), C4_SHAPE, tmp_path / "nan.pt", "torchscript")
    results = []
    for number, options in enumerate(([], ["--concurrent-matches", "4"]), start=1):
        arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", "--rounds", "4",
                  "--seed", "2", "--quiet", *options)  # fmt: skip
        matches = arena_cli.json("matches", "--tournament", str(number))
        results.append([(m["index"], m["reason"], m["detail"], m["turns"]) for m in matches])
    assert results[0] == results[1]
    assert all(reason == "agent_error" and "NaN for legal action(s) 6" in detail and turns >= 2
               for _, reason, detail, turns in results[0]), results[0]  # fmt: skip
    # A search taking the network's value (here its best legal output) forfeits the same way, not comparing NaNs.
    arena_cli("run-tournament", "--game", "connect_four", "--agents", f"minimax:depth=1,eval=model,model={path},random",
              "--rounds", "2", "--seed", "2", "--quiet")  # fmt: skip
    searched = arena_cli.json("matches", "--tournament", "3")
    assert {m["reason"] for m in searched} == {"agent_error"} and all("is NaN" in m["detail"] for m in searched), searched


def test_metadata_parameters_left_out_are_the_defaults(arena_cli, tmp_path):
    """README's file contract: `"game_params": ""` is the game at its default parameters, as is any subset of them."""
    for number, params in enumerate(("", "rows=6", "columns=7;rows=6;x_in_row=4")):
        path = save(network(C4_SHAPE, 7), C4_SHAPE, tmp_path / f"m{number}", "torchscript", {"game": "connect_four", "game_params": params})
        arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", "--quiet")
    # Registered without its game, a user's network cannot be checked: the error says to give it.
    one_error_line(arena_cli("agents", "register", "mine", "--type", "neural", "--checkpoint", str(path), ok=False),
                   str(path), "a torchscript network is checked against the game it plays: register it with --game GAME")
    assert "not a .npz" not in arena_cli("agents", "register", "mine", "--type", "neural", "--checkpoint", str(path), ok=False).stderr
    arena_cli("agents", "register", "mine", "--type", "neural", "--checkpoint", str(path), "--game", "connect_four")


def test_fixed_batch_of_one_plays(tmp_path):
    path = save(network(C4_SHAPE, 7, seed=1, value=True), C4_SHAPE, tmp_path / "one.onnx", "onnx", fixed_batch=True)
    agents = [NeuralAgent(C4, s, s, checkpoint=str(path)) for s in range(4)]
    views = [C4.new_initial_state(0)] * 4
    assert NeuralAgent.act_batch(agents, views) == [agent.act(view) for agent, view in zip(agents, views)]
    assert agents[0].model.max_batch == 1


class Marker:
    """Unpickling this creates a file: the test asserts it never exists."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (self.path,))


def test_files_that_are_not_models_and_pickles_are_refused_without_running_anything(arena_cli, tmp_path, c4_files):
    marker = tmp_path / "executed"
    raw = tmp_path / "model.pt"
    raw.write_bytes(pickle.dumps(Marker(marker)))
    saved = tmp_path / "model.pth"
    torch.save({"weights": Marker(marker)}, saved)
    text = tmp_path / "model.onnx"
    text.write_text("hello, not a network\n")
    empty = tmp_path / "empty.pt2"
    empty.write_bytes(b"")
    archive = tmp_path / "other.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("readme.txt", "hi")
    cases = {
        raw: "a pickle", saved: "a pickled PyTorch file", text: "not a model file", empty: "an empty file",
        archive: "a zip archive that is not a model",
    }  # fmt: skip
    for kind, path in c4_files.items():
        truncated = tmp_path / f"truncated-{kind}"
        truncated.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
        cases[truncated] = "truncated" if kind != "onnx" else "not a loadable ONNX network"
    for path, fragment in cases.items():
        result = arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", ok=False)
        one_error_line(result, str(path), fragment)
        result = arena_cli("agents", "register", "x", "--type", "neural", "--checkpoint", str(path), "--game", "connect_four", ok=False)
        one_error_line(result, fragment)
    assert not marker.exists()


def test_a_pt2_archive_never_unpickles_its_payloads(arena_cli, tmp_path, c4_files):
    """torch.export.load unpickles sample inputs (falling back to weights_only=False): Arena drops them
    before loading, and refuses archives whose weights are pickled."""
    marker = tmp_path / "executed"
    payload = io.BytesIO()
    torch.save((Marker(marker),), payload)
    bait, pickled = tmp_path / "bait.pt2", tmp_path / "pickled.pt2"
    with zipfile.ZipFile(c4_files["pt2"]) as source, zipfile.ZipFile(bait, "w") as out, zipfile.ZipFile(pickled, "w") as bad:
        for info in source.infolist():
            data = source.read(info)
            if "/data/sample_inputs/" in info.filename:
                data = payload.getvalue()
            out.writestr(info.filename, data)
            if info.filename.endswith("model_weights_config.json"):
                data = data.replace(b'"use_pickle": false', b'"use_pickle": true', 1)
            bad.writestr(info.filename, data)
    arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={bait},random", "--quiet")
    refused = arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={pickled},random", ok=False)
    one_error_line(refused, "is pickled")
    assert not marker.exists()


def test_device_cuda_without_cuda_is_refused(arena_cli, c4_files):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    for kind in ("torchscript", "onnx"):
        result = arena_cli("run-tournament", "--game", "connect_four", "--agents",
                           f"neural:checkpoint={c4_files[kind]},device=cuda,random", ok=False)  # fmt: skip
        one_error_line(result, "device=cuda")


def test_resume_refuses_a_changed_network(arena_cli, tmp_path):
    from arena import tournament
    from db.session import open_database

    path = save(network(C4_SHAPE, 7, seed=1), C4_SHAPE, tmp_path / "net.ts", "torchscript")
    request = tournament.TournamentRequest(game="connect_four", agents=f"neural:checkpoint={path},random", rounds=1, name="t")
    tournament.create(REGISTRY, open_database(f"sqlite:///{arena_cli.db_path}"), request)
    save(network(C4_SHAPE, 7, seed=2), C4_SHAPE, path, "torchscript")  # retrained at the same path
    one_error_line(arena_cli("run-tournament", "--resume", "t", ok=False), "changed since tournament 1 started")


def test_a_retrained_network_never_mixes_with_the_old_one_in_leaderboards(arena_cli, tmp_path):
    """A named network retrained at the same path plays on as NAME@VERSION; the first version keeps NAME."""
    path = save(network(C4_SHAPE, 7, seed=1), C4_SHAPE, tmp_path / "net.ts", "torchscript")
    arena_cli("agents", "register", "mine", "--type", "neural", "--checkpoint", str(path), "--game", "connect_four")
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "mine,random", "--rounds", "2", "--quiet")
    first = {row["agent"]: row["games"] for row in arena_cli.json("leaderboard", "--game", "connect_four")}
    save(network(C4_SHAPE, 7, seed=2), C4_SHAPE, path, "torchscript")  # retrained at the same path
    for _ in range(2):  # the second version twice: both tournaments count as one agent
        result = arena_cli("run-tournament", "--game", "connect_four", "--agents", "mine,random", "--rounds", "1", "--quiet")
    (label,), = arena_cli.rows("select distinct agent from match_seats where agent like 'mine@%'")
    assert f"note: 'mine' has results of another agent under that name for this game (another version or other parameters): this tournament records it as '{label}'" in result.stderr
    version = label.split("@", 1)[1]
    assert version.startswith("1+") and version != arena_cli.rows("select distinct agent_version from match_seats where agent = 'mine'")[0][0]
    board = {row["agent"]: row["games"] for row in arena_cli.json("leaderboard", "--game", "connect_four")}
    assert board == {"mine": 2, label: 2, "random": 4} and first == {"mine": 2, "random": 2}
    assert arena_cli.rows("select agent from match_seats join matches on matches.id = match_id "
                          "where tournament_id = 1 and agent like 'mine%' limit 1") == [("mine",)]  # fmt: skip


def test_onnx_plays_without_torch(c4_files):
    script = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def guard(name, *args, **kwargs):\n"
        "    if name == 'torch' or name.startswith('torch.'):\n"
        "        raise ImportError('torch is blocked in this test')\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = guard\n"
        "from arena.plugins import get_registry\n"
        "from arena.match import play_match\n"
        "from agents.neural import NeuralAgent\n"
        "g = get_registry().games['connect_four']()\n"
        f"agents = [NeuralAgent(g, 0, 1, checkpoint={str(c4_files['onnx'])!r}), get_registry().agents['random'](g, 1, 2)]\n"
        "NeuralAgent.check_game(g, {'checkpoint': agents[0].params['checkpoint']})\n"
        "assert play_match(g, agents, 0).reason == 'normal'\n"
        "assert 'torch' not in sys.modules, 'playing imported torch'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_games_json_gives_observation_shape_and_actions(arena_cli):
    games = {g["id"]: g for g in arena_cli.json("games")}
    assert set(games) >= set(REGISTRY.games)  # and the test plugins' games
    assert games["connect_four"]["observation_shape"] == [3, 6, 7] and games["connect_four"]["num_actions"] == 7
    for game_id in REGISTRY.games:
        item, game = games[game_id], REGISTRY.games[game_id]()
        assert item["num_actions"] == game.num_distinct_actions
        tensor = np.asarray(game.new_initial_state(0).observation(0))
        assert item["observation_shape"] == list(tensor.shape), game_id


class Refusing(torch.nn.Module):
    """Raises its own error on boards it was not trained for (all zeros)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.max() < 0.5):
            raise RuntimeError("expects normalised boards")
        return x.flatten(1)[:, :7]


def test_a_torchscript_networks_own_error_is_the_line_shown(arena_cli, tmp_path):
    """TorchScript's error ends with the network's own line, 'builtins.RuntimeError: ...': that line is what the
    refusal shows (it showed 'Error: The following operation failed in the TorchScript interpreter.')."""
    path = save(Refusing(), C4_SHAPE, tmp_path / "refusing.pt", "torchscript")
    one_error_line(arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", ok=False),
                   "(RuntimeError: expects normalised boards)")  # fmt: skip


def test_a_damaged_torchscript_file_is_refused_in_one_line(arena_cli, tmp_path, c4_files):
    """torch.jit.load checks no CRC-32: 200 flipped bytes in a weight played with garbage weights, and exported."""
    data = bytearray(c4_files["torchscript"].read_bytes())
    third = len(data) // 3
    data[third : third + 200] = bytes(byte ^ 0xFF for byte in data[third : third + 200])
    damaged = tmp_path / "flip.pt"
    damaged.write_bytes(bytes(data))
    with zipfile.ZipFile(damaged) as archive:
        member = archive.testzip()
    assert member is not None
    onnx_out = tmp_path / "flip.onnx"
    for args in (("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={damaged},random", "--quiet"),
                 ("agents", "register", "flip", "--type", "neural", "--checkpoint", str(damaged), "--game", "connect_four"),
                 ("export", str(damaged), "--out", str(onnx_out))):  # fmt: skip
        one_error_line(arena_cli(*args, ok=False), str(damaged), "not a loadable TorchScript network", repr(member))
    assert not onnx_out.exists() and arena_cli.rows("select count(*) from agents") in ([], [(0,)])


def test_an_onnx_file_with_its_weights_in_another_file_is_refused_in_one_line(arena_cli, tmp_path, c4_files, monkeypatch):
    """onnxruntime, given the file's bytes, looked for the weights relative to the current directory, and the
    agent's version (the .onnx file's digest) did not change with them: such files are refused, saying what to do."""
    import onnx

    folder = tmp_path / "ext"
    folder.mkdir()
    path = folder / "ext.onnx"
    onnx.save_model(onnx.load(str(c4_files["onnx"])), str(path), save_as_external_data=True, location="ext.onnx.data",
                    size_threshold=0)  # fmt: skip
    for where in (tmp_path, folder):  # elsewhere, and where the weights' file is
        monkeypatch.chdir(where)
        for args in (("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", "--quiet"),
                     ("agents", "register", "ext", "--type", "neural", "--checkpoint", str(path), "--game", "connect_four")):  # fmt: skip
            one_error_line(arena_cli(*args, ok=False), str(path), "weights are in another file", "'ext.onnx.data'",
                           "save_as_external_data=False")  # fmt: skip


def test_external_tensors_are_found_wherever_the_model_keeps_them():
    """Initializers, and tensors in node attributes (a Constant's value) too; a file with every tensor inside has none."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.external_data_helper import convert_model_to_external_data

    from agents.models.onnx_format import external_tensor

    constant = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.ones(7, dtype=np.float32), "c"))
    add = helper.make_node("Add", ["x", "c"], ["y"])
    graph = helper.make_graph([constant, add], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 7])])  # fmt: skip
    model = helper.make_model(graph)
    assert external_tensor(model.SerializeToString()) is None
    assert external_tensor(b"\x08not a model") is None  # onnxruntime refuses it in its own words
    convert_model_to_external_data(model, location="w.data", size_threshold=0, convert_attribute=True)
    assert external_tensor(model.SerializeToString()) == ("c", "w.data")
