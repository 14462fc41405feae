"""Onitama's study encodings, position by position against what the study's own code returned (tests/fixtures/onitama_study)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from games.onitama import (
    BLUE,
    CARD_NAMES,
    CARDS,
    MASTER,
    PASS,
    RED,
    Onitama,
    OnitamaState,
)

FIXTURE = Path(__file__).parent / "fixtures" / "onitama_study" / "positions.jsonl.gz"
EMPTY = "•"


def records() -> list[dict[str, Any]]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


RECORDS = records()


def study_cells(state: OnitamaState) -> list[str]:
    """Arena's board in the study's notation (b1..b4, B, r1..r4, R, • empty), row 0 first."""
    cells = []
    for code in state.board:
        if not code:
            cells.append(EMPTY)
        else:
            colour = "br"[(code >> 3) - 1]
            cells.append(colour.upper() if code & 7 == MASTER else f"{colour}{(code & 7) + 1}")
    return cells


def rebuild(record: dict[str, Any]) -> OnitamaState:
    board = [record["board"][row * 5 : row * 5 + 5] for row in range(5)]
    game = Onitama(cards=record["cards"])
    return game.study_position(board, record["blue_cards"], record["red_cards"], record["side_card"], record["whose_turn"])


def bits(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8) - ord("0")


def test_the_fixture_covers_both_card_sets_every_card_and_every_piece():
    assert len(RECORDS) > 500
    assert {r["cards"] for r in RECORDS} == {"study5", "all"}
    seen_cards = {c for r in RECORDS for c in (*r["blue_cards"], *r["red_cards"], r["side_card"])}
    assert seen_cards == {name.lower() for name in CARD_NAMES}
    moved = {int(i) // 8 for r in RECORDS for i in r["after"]}
    assert moved == {0, 1, 2, 3, 4} and {r["whose_turn"] for r in RECORDS} == {"blue", "red"}


def test_the_initial_position_is_the_studys():
    assert RECORDS[0]["board"] == ["b1", "b2", "B", "b3", "b4"] + [EMPTY] * 15 + ["r1", "r2", "R", "r3", "r4"]  # its first game's start
    for seed in range(20):
        assert study_cells(Onitama(cards="study5").new_initial_state(seed)) == RECORDS[0]["board"]


@pytest.mark.parametrize("chunk", range(4))
def test_observations_legal_moves_and_results_equal_the_study_code(chunk: int) -> None:
    for record in RECORDS[chunk::4]:
        state = rebuild(record)
        assert study_cells(state) == record["board"]
        for who, player in (("blue", BLUE), ("red", RED)):
            assert np.array_equal(state.board_planes(player).ravel(), bits(record[f"planes_{who}"])), (record, who)
            assert np.array_equal(state.card_vector(player), bits(record[f"cards_{who}"])), (record, who)
            assert np.array_equal(state.observation(player), np.concatenate((bits(record[f"planes_{who}"]), bits(record[f"cards_{who}"]))))
        valid = {i for i, flag in enumerate(record["valid"]) if flag == "1"}
        legal = state.legal_actions()
        if not valid:  # the study has no pass; Arena's official rule passes with an exchange
            assert legal == [PASS, PASS + 1]
            continue
        indices = [state.piece_action(a) for a in legal]
        assert sorted(indices) == sorted(valid) and len(set(indices)) == len(indices), record
        for index_text, expected in record["after"].items():
            child = state.clone()
            child.apply(state.from_piece_action(int(index_text)))
            assert study_cells(child) == expected["board"], (record, index_text)
            if expected["blue_win"] or expected["red_win"]:
                assert child.is_terminal() and child.returns()[BLUE if expected["blue_win"] else RED] == 1.0
                continue
            names = [CARD_NAMES[c].lower() for c in (*child.hands[BLUE], *child.hands[RED], child.side)]
            assert sorted(names[:2]) == sorted(expected["blue_cards"]) and sorted(names[2:4]) == sorted(expected["red_cards"])
            assert names[4] == expected["side_card"]
            assert child.current_player == (BLUE if expected["whose_turn"] == "blue" else RED)


RULES_TABLE = {  # RULES.md's card table, (dx, dy) from the mover's view: the rules the study's order must not change
    "Tiger": {(0, 2), (0, -1)}, "Dragon": {(-2, 1), (2, 1), (-1, -1), (1, -1)}, "Frog": {(-2, 0), (-1, 1), (1, -1)},
    "Rabbit": {(2, 0), (1, 1), (-1, -1)}, "Crab": {(0, 1), (-2, 0), (2, 0)}, "Elephant": {(-1, 1), (1, 1), (-1, 0), (1, 0)},
    "Goose": {(-1, 1), (-1, 0), (1, 0), (1, -1)}, "Rooster": {(1, 1), (-1, 0), (1, 0), (-1, -1)},
    "Monkey": {(-1, 1), (1, 1), (-1, -1), (1, -1)}, "Mantis": {(-1, 1), (1, 1), (0, -1)}, "Horse": {(0, 1), (-1, 0), (0, -1)},
    "Ox": {(0, 1), (1, 0), (0, -1)}, "Crane": {(0, 1), (-1, -1), (1, -1)}, "Boar": {(0, 1), (-1, 0), (1, 0)},
    "Eel": {(-1, 1), (-1, -1), (1, 0)}, "Cobra": {(1, 1), (1, -1), (-1, 0)},
}  # fmt: skip


def test_the_rules_are_unchanged_only_the_order_of_moves_is_the_studys():
    assert {name: set(moves) for name, moves, _ in CARDS} == RULES_TABLE
    assert [name for name, _, _ in CARDS] == list(RULES_TABLE)


def test_study_position_refuses_bad_boards():
    from arena import ArenaError

    board = [["b1", "b2", "B", "b3", "b4"], [EMPTY] * 5, [EMPTY] * 5, [EMPTY] * 5, ["r1", "r2", "R", "r3", "r4"]]
    game = Onitama(cards="study5")
    with pytest.raises(ArenaError, match="blue"):
        game.study_position(board, ["goose", "monkey"], ["dragon", "rooster"], "elephant", "green")
    with pytest.raises(ArenaError, match="twice"):
        game.study_position([row[:] for row in board[:4]] + [["r1", "r1", "R", "r3", "r4"]], ["goose", "monkey"],
                            ["dragon", "rooster"], "elephant", "red")  # fmt: skip
    with pytest.raises(ArenaError, match="card set"):
        game.study_position(board, ["tiger", "monkey"], ["dragon", "rooster"], "elephant", "red")
