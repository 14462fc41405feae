"""Parity with OpenSpiel: the same seeded random play-outs through our engines and through pyspiel
must see the same player to move, the same legal actions (same ids) and the same action names at
every step, and end with the same returns.

open-spiel is in the test extra, so `make test` runs it; it skips only where pyspiel is not installed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from arena.api import TERMINAL, Game
from games.connect_four import ConnectFour
from games.dots_and_boxes import DotsAndBoxes
from games.reversi import Reversi
from games.tic_tac_toe import TicTacToe

pyspiel = pytest.importorskip("pyspiel")

PLAYOUTS = 1000


def _dots_and_boxes_name(ours: Any, player: int, action: int) -> str:
    """OpenSpiel writes h(0,1) by player 0 as "P1(h,0,1)"."""
    kind, r, c = ours.layout.describe(action)
    return f"P{player + 1}({kind},{r},{c})"


def _same_name(ours: Any, player: int, action: int) -> str:
    return ours.action_to_string(action)


CASES: list[tuple[str, Callable[[], Game], str, dict[str, int], Callable[[Any, int, int], str]]] = [
    ("tic_tac_toe", TicTacToe, "tic_tac_toe", {}, _same_name),
    ("connect_four", ConnectFour, "connect_four", {}, _same_name),
    ("connect_four:5x4,k=3", lambda: ConnectFour(rows=5, columns=4, x_in_row=3), "connect_four",
     {"rows": 5, "columns": 4, "x_in_row": 3}, _same_name),
    ("connect_four:4x9,k=5", lambda: ConnectFour(rows=4, columns=9, x_in_row=5), "connect_four",
     {"rows": 4, "columns": 9, "x_in_row": 5}, _same_name),
    ("reversi", Reversi, "othello", {}, _same_name),
    ("dots_and_boxes", DotsAndBoxes, "dots_and_boxes", {"num_rows": 3, "num_cols": 3}, _dots_and_boxes_name),
    ("dots_and_boxes:1x1", lambda: DotsAndBoxes(rows=1, cols=1), "dots_and_boxes",
     {"num_rows": 1, "num_cols": 1}, _dots_and_boxes_name),
    ("dots_and_boxes:2x3", lambda: DotsAndBoxes(rows=2, cols=3), "dots_and_boxes",
     {"num_rows": 2, "num_cols": 3}, _dots_and_boxes_name),
    ("dots_and_boxes:3x2", lambda: DotsAndBoxes(rows=3, cols=2), "dots_and_boxes",
     {"num_rows": 3, "num_cols": 2}, _dots_and_boxes_name),
    ("dots_and_boxes:5x4", lambda: DotsAndBoxes(rows=5, cols=4), "dots_and_boxes",
     {"num_rows": 5, "num_cols": 4}, _dots_and_boxes_name),
]  # fmt: skip


@pytest.mark.parametrize("label, make, spiel_name, spiel_params, name_of", CASES, ids=[c[0] for c in CASES])
def test_random_playouts_match_openspiel(
    label: str, make: Callable[[], Game], spiel_name: str, spiel_params: dict[str, int],
    name_of: Callable[[Any, int, int], str],
) -> None:  # fmt: skip
    game = make()
    spiel_game = pyspiel.load_game(spiel_name, spiel_params)
    assert game.num_distinct_actions == spiel_game.num_distinct_actions()
    steps = 0
    for seed in range(PLAYOUTS):
        rng = random.Random(seed)
        ours = game.new_initial_state(seed)
        theirs = spiel_game.new_initial_state()
        while not theirs.is_terminal():
            where = f"{label} seed {seed} step {steps}"
            player = theirs.current_player()
            assert ours.current_player == player, where
            legal = theirs.legal_actions()
            assert ours.legal_actions() == legal, where
            action = rng.choice(legal)
            assert name_of(ours, player, action) == theirs.action_to_string(player, action), where
            ours.apply(action)
            theirs.apply_action(action)
            steps += 1
        assert ours.is_terminal() and ours.current_player == TERMINAL, f"{label} seed {seed}: we did not end"
        assert ours.returns() == theirs.returns(), f"{label} seed {seed}: returns differ"
    assert steps > PLAYOUTS


def test_reversi_observation_matches_openspiel() -> None:
    """OpenSpiel's planes are (empty, own, opponent); ours are (own, opponent, empty)."""
    game, spiel_game = Reversi(), pyspiel.load_game("othello")
    for seed in range(20):
        rng = random.Random(seed)
        ours, theirs = game.new_initial_state(), spiel_game.new_initial_state()
        while not theirs.is_terminal():
            for player in (0, 1):
                expected = np.array(theirs.observation_tensor(player), dtype=np.float32).reshape(3, 8, 8)
                assert (ours.observation(player)[[2, 0, 1]] == expected).all()
            action = rng.choice(theirs.legal_actions())
            ours.apply(action)
            theirs.apply_action(action)
