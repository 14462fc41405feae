"""The batched path of network agents: choosing for a whole batch in numpy answers as choosing row by row,
connect four's observation tensor (built from look-up tables) is the documented planes, and networks
run with the threads $ARENA_MODEL_THREADS allows."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.models.choose import choose_actions
from agents.neural import choose_action
from arena.plugins import get_registry

REGISTRY = get_registry()


def random_batch(rng: np.random.Generator) -> tuple[np.ndarray, list[list[int]], list[int | None]]:
    """Outputs with ties, huge and tiny scales and (sometimes) non-finite values; legal lists mostly increasing."""
    rows, width = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    outputs = (rng.normal(size=(rows, width)) * rng.choice([1e-3, 1.0, 30.0, 800.0])).astype(np.float32)
    if rng.random() < 0.3:
        outputs = np.round(outputs)  # many ties
    if rng.random() < 0.15:
        outputs[rng.random(outputs.shape) < 0.1] = rng.choice([np.inf, -np.inf, np.nan])
    legal = []
    for _ in range(rows):
        actions = sorted(rng.choice(width, int(rng.integers(1, width + 1)), replace=False).tolist())
        if rng.random() < 0.1:
            rng.shuffle(actions)  # a game may list its actions in any order
        legal.append(actions)
    seeds = [int(rng.integers(1 << 40)) if rng.random() < 0.7 else None for _ in range(rows)]
    return outputs, legal, seeds


def _text(answer: int | Exception) -> int | str:
    return answer if isinstance(answer, int) else f"{type(answer).__name__}: {answer}"


def one_by_one(outputs: np.ndarray, legal: list[int], rng: random.Random | None) -> int | str:
    """choose_action's answer, or the error it raises (a NaN for a legal action), as text to compare."""
    try:
        return choose_action(outputs, legal, rng)
    except ValueError as exc:
        return _text(exc)


def rngs(seeds: list[int | None]) -> list[random.Random | None]:
    return [None if seed is None else random.Random(seed) for seed in seeds]


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_choosing_for_a_batch_answers_as_row_by_row_and_draws_the_same_numbers():
    generator = np.random.default_rng(16)
    for _ in range(1500):
        outputs, legal, seeds = random_batch(generator)
        batched, sequential = rngs(seeds), rngs(seeds)
        answers = choose_actions(outputs, legal, batched)
        assert [_text(answer) for answer in answers] == [one_by_one(outputs[i], legal[i], sequential[i]) for i in range(len(legal))]
        assert all(type(answer) is int or isinstance(answer, ValueError) for answer in answers)
        # Every RNG is left where row-by-row play leaves it (drawn once when sampling among several actions).
        assert [r and r.random() for r in batched] == [r and r.random() for r in sequential]


def test_one_rng_met_twice_in_a_batch_is_drawn_in_row_order():
    outputs = np.array([[0.0, 0.1, 0.2], [0.3, 0.2, 0.1], [1.0, 1.0, 1.0]], dtype=np.float32)
    legal = [[0, 1, 2], [2, 0, 1], [0, 2]]  # the second row goes row by row (not increasing): the order must hold
    shared, twin = random.Random(5), random.Random(5)
    answers = choose_actions(outputs, legal, [shared, shared, shared])
    assert answers == [choose_action(outputs[i], legal[i], twin) for i in range(3)]


def reference_planes(state, player: int) -> np.ndarray:
    """Connect four's documented observation: (own discs, opponent discs, empty), top row first."""
    board = np.array(state.board).reshape(state.rows, state.cols)[::-1]
    own, other = player + 1, 2 - player
    return np.stack([board == own, board == other, board == 0]).astype(np.float32)


def test_connect_four_observation_is_the_documented_planes():
    shuffle = random.Random(4)
    for params in ({}, {"rows": 4, "columns": 9, "x_in_row": 3}, {"rows": 2, "columns": 2, "x_in_row": 2}):
        game = REGISTRY.games["connect_four"](**params)
        for seed in range(25):
            state = game.new_initial_state(seed)
            while True:
                for player in (0, 1, 2):
                    tensor = state.observation(player)
                    expected = reference_planes(state, player)
                    assert tensor.dtype == np.float32 and tensor.flags.c_contiguous and tensor.flags.writeable
                    assert tensor.shape == expected.shape and np.array_equal(tensor, expected)
                if state.is_terminal():
                    break
                state.apply(shuffle.choice(state.legal_actions()))
    tensor = game.new_initial_state(0).observation(0)
    tensor[:] = 7  # the caller's own array: writing to it changes no later observation
    assert game.new_initial_state(0).observation(0).max() == 1.0


THREADS_SCRIPT = """
import sys, torch
from tests._models import network, save
from agents.models import load_model
from pathlib import Path
folder = Path(sys.argv[1])
net = network((3, 6, 7), 7, seed=1, value=True)
for kind in ("torchscript", "onnx"):
    model = load_model(str(save(net, (3, 6, 7), folder / kind, kind)))
print(torch.get_num_threads(), model.session.get_session_options().intra_op_num_threads)
"""


@pytest.mark.parametrize("setting, expected", [(None, "1 1"), ("2", "2 2")])
def test_networks_use_the_threads_the_environment_allows(tmp_path, setting, expected):
    env = {k: v for k, v in os.environ.items() if k != "ARENA_MODEL_THREADS"}
    if setting is not None:
        env["ARENA_MODEL_THREADS"] = setting
    run = subprocess.run([sys.executable, "-c", THREADS_SCRIPT, str(tmp_path)], check=False, capture_output=True, text=True, env=env,
                         timeout=120, cwd=Path(__file__).resolve().parent.parent)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-2:] == expected.split()


def test_a_bad_thread_setting_is_one_clear_error(arena_cli, tmp_path, monkeypatch):
    from tests._models import network, save

    path = save(network((3, 6, 7), 7), (3, 6, 7), tmp_path / "net.onnx", "onnx")
    monkeypatch.setenv("ARENA_MODEL_THREADS", "lots")
    run = arena_cli("run-tournament", "--game", "connect_four", "--agents", f"neural:checkpoint={path},random", "--rounds", "1",
                    "--quiet", ok=False)  # fmt: skip
    assert run.exit_code == 2
    assert "ARENA_MODEL_THREADS" in run.stderr and len(run.stderr.strip().splitlines()) == 1
