"""Reversi: conformance, OpenSpiel's encoding, hand-built positions, properties against a plain
square-by-square reference, the heuristic, and golden play-throughs."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import TERMINAL, ArenaError
from arena.plugins import get_registry
from arena.testing import check_agent, check_game
from games.reversi import PASS, Reversi, ReversiState
from tests._golden import check_golden, transcript

REGISTRY = get_registry()
GAME = Reversi()
EMPTY_ROWS = ["........"] * 8


def board(*rows: str) -> list[str]:
    """Eight rows, the given ones first and empty rows after."""
    return list(rows) + EMPTY_ROWS[len(rows) :]


# ---- a plain reference: a dict board walked square by square ----

DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


def grid(state: ReversiState) -> dict[tuple[int, int], int]:
    """(row, col) -> 0 Black / 1 White, read through render() so the reference shares no bit tricks."""
    cells = {}
    for row, line in enumerate(state.render().splitlines()[1:9]):
        for col, char in enumerate(line.split()[1:]):
            if char in "xo":
                cells[(row, col)] = "xo".index(char)
    return cells


def ref_flips(cells: dict[tuple[int, int], int], row: int, col: int, player: int) -> set[tuple[int, int]]:
    flipped: set[tuple[int, int]] = set()
    for dr, dc in DIRECTIONS:
        run = []
        r, c = row + dr, col + dc
        while (r, c) in cells and cells[(r, c)] == 1 - player:
            run.append((r, c))
            r, c = r + dr, c + dc
        if run and cells.get((r, c)) == player:
            flipped.update(run)
    return flipped


def ref_moves(cells: dict[tuple[int, int], int], player: int) -> list[int]:
    return [
        r * 8 + c
        for r in range(8)
        for c in range(8)
        if (r, c) not in cells and ref_flips(cells, r, c, player)
    ]  # fmt: skip


# ---- conformance ----


def test_conformance() -> None:
    check_game(GAME, seeds=range(20))


@pytest.mark.parametrize("agent_id", ["random", "greedy"])
def test_agents_conform(agent_id: str) -> None:
    check_agent(REGISTRY.agents[agent_id], GAME, seeds=range(3))


def test_registered_as_a_plugin() -> None:
    assert REGISTRY.games["reversi"] is Reversi


def test_no_parameters() -> None:
    with pytest.raises(ArenaError, match="unknown parameter 'size' for game 'reversi'"):
        Reversi(size=6)


# ---- OpenSpiel's encoding ----


def test_metadata_and_start() -> None:
    assert GAME.num_distinct_actions == 65
    assert GAME.num_players == 2
    assert GAME.max_game_length() >= 119  # 60 placing moves and at most 59 passes between them
    state = GAME.new_initial_state()
    assert state.current_player == 0  # Black moves first
    assert state.legal_actions() == [19, 26, 37, 44]
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["d3", "c4", "f5", "e6"]
    assert grid(state) == {(3, 3): 1, (4, 4): 1, (3, 4): 0, (4, 3): 0}  # White d4 e5, Black e4 d5
    assert state.render().splitlines()[4] == "4 . . . o x . . ."


def test_action_strings_both_ways() -> None:
    state = GAME.new_initial_state()
    assert state.action_to_string(0) == "a1"
    assert state.action_to_string(63) == "h8"
    assert state.action_to_string(PASS) == "pass"
    assert state.string_to_action("d3") == 19
    assert state.string_to_action(" F5 ") == 37
    assert state.string_to_action("44") == 44  # an id written as a number
    for bad in ("a1", "pass", "i3", "d9", "", "63"):
        with pytest.raises(ArenaError):
            state.string_to_action(bad)


def test_first_move_flips_one_disc() -> None:
    state = GAME.new_initial_state()
    state.apply(19)  # d3 flips d4
    assert state.current_player == 1
    assert state.disc_counts() == (4, 1)
    assert state.legal_actions() == [18, 20, 34]  # c3, e3, c5


# ---- hand-built positions ----


def test_forced_pass() -> None:
    # White's only disc c1 sits beside two Black discs: White cannot trap anything, Black can (d1).
    state = ReversiState.from_board(board("xxo....."), to_move=1)
    assert not state.is_terminal()
    assert state.legal_actions() == [PASS]
    assert state.string_to_action("pass") == PASS
    state.apply(PASS)
    assert state.current_player == 0
    assert state.legal_actions() == [3]
    state.apply(3)  # d1 flips c1: White has no disc left, nobody can move
    assert state.is_terminal()
    assert state.current_player == TERMINAL
    assert state.legal_actions() == []
    assert state.returns() == [1.0, -1.0]


def test_pass_is_illegal_with_a_placing_move() -> None:
    state = GAME.new_initial_state()
    assert PASS not in state.legal_actions()
    with pytest.raises(ArenaError):
        state.string_to_action("pass")


def test_game_ends_when_neither_can_move_on_a_partial_board() -> None:
    # Black h1 turns b1..g1; White's lone a8 then traps nothing and nothing can trap it.
    state = ReversiState.from_board(["xoooooo."] + EMPTY_ROWS[1:7] + ["o......."], to_move=0)
    assert state.legal_actions() == [7]
    state.apply(7)
    assert state.is_terminal()
    assert state.disc_counts() == (8, 1)
    assert state.returns() == [1.0, -1.0]


def test_equal_counts_draw() -> None:
    level = ReversiState.from_board(board("xxxxoooo"), to_move=0)
    assert level.is_terminal()
    assert level.returns() == [0.0, 0.0]


def test_flips_in_several_lines_at_once() -> None:
    state = ReversiState.from_board(
        ["x.x.x...", ".ooo....", "xo.ox...", ".ooo....", "x.x.x...", "........", "........", "........"],
        to_move=0,
    )
    assert 18 in state.legal_actions()  # c3, surrounded by White in all 8 directions, each backed by Black
    state.apply(18)
    cells = grid(state)
    assert all(cells[(r, c)] == 0 for r in range(1, 4) for c in range(1, 4) if (r, c) in cells)
    assert state.disc_counts() == (17, 0)


def test_from_board_checks_its_input() -> None:
    with pytest.raises(ArenaError, match="8 rows"):
        ReversiState.from_board(["xo"], to_move=0)
    with pytest.raises(ArenaError, match="0 or 1"):
        ReversiState.from_board(EMPTY_ROWS, to_move=2)


# ---- properties over random legal play ----


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=125))
def test_random_play_matches_the_reference(choices: list[int]) -> None:
    state = GAME.new_initial_state()
    for pick in choices:
        if state.is_terminal():
            break
        player = state.current_player
        cells = grid(state)
        legal = state.legal_actions()
        mine, theirs = ref_moves(cells, player), ref_moves(cells, 1 - player)
        if mine:
            assert legal == mine
        else:  # pass only when there is no placing move, and then it is the only action
            assert theirs, "a player with no move is only asked to move when the opponent has one"
            assert legal == [PASS]
        action = legal[pick % len(legal)]
        before = state.disc_counts()
        copy = state.clone()
        state.apply(action)
        after = state.disc_counts()
        if action == PASS:
            assert after == before
            assert state.current_player == 1 - player
            continue
        row, col = divmod(action, 8)
        expected = ref_flips(cells, row, col, player)
        assert expected, "a placing move flips at least one disc"
        cells_after = grid(state)
        changed = {sq for sq in cells if cells_after[sq] != cells[sq]}
        assert changed == expected  # flips only along the lines from the new disc
        assert cells_after[(row, col)] == player
        assert sum(after) == sum(before) + 1
        assert after[player] == before[player] + 1 + len(expected)
        assert after[1 - player] == before[1 - player] - len(expected)
        assert copy.disc_counts() == before  # the clone did not move
        # The game is over exactly when neither player can place a disc.
        over = not ref_moves(cells_after, 0) and not ref_moves(cells_after, 1)
        assert state.is_terminal() == over
    if state.is_terminal():
        black, white = state.disc_counts()
        assert state.returns() == ([1.0, -1.0] if black > white else [-1.0, 1.0] if white > black else [0.0, 0.0])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**9))
def test_observation_planes(seed: int) -> None:
    rng = random.Random(seed)
    state = GAME.new_initial_state()
    for _ in range(rng.randrange(60)):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    cells = grid(state)
    for player in (0, 1):
        obs = state.observation(player)
        assert obs.shape == (3, 8, 8) and obs.dtype == np.float32
        assert (obs.sum(axis=0) == 1).all()
        for (r, c), owner in cells.items():
            assert obs[0 if owner == player else 1, r, c] == 1


# ---- heuristic and the greedy agent ----


START = ["........", "........", "........", "...ox...", "...xo...", "........", "........", "........"]


def test_heuristic_prefers_corners_and_shuns_x_squares() -> None:
    corner = ReversiState.from_board(["x......."] + START[1:], to_move=1)
    x_square = ReversiState.from_board([START[0], ".x......"] + START[2:], to_move=1)
    assert GAME.heuristic(corner, 0) > GAME.heuristic(GAME.new_initial_state(), 0) > GAME.heuristic(x_square, 0)
    assert GAME.heuristic(corner, 1) == pytest.approx(-GAME.heuristic(corner, 0))


def test_heuristic_values_a_finished_game_by_its_result() -> None:
    won = ReversiState.from_board(board("xxxxxxxo"), to_move=0)
    assert won.is_terminal()
    assert GAME.heuristic(won, 0) >= 10000
    assert GAME.heuristic(won, 1) <= -10000


def test_greedy_takes_the_corner() -> None:
    # The start position plus White b1 and Black c1: Black may play a1 (turning b1) or an opening move.
    state = ReversiState.from_board([".ox....."] + START[1:], to_move=0)
    assert state.legal_actions() == [0, 19, 26, 37, 44]
    greedy = REGISTRY.agents["greedy"]
    for seed in range(5):
        assert greedy(GAME, 0, seed).act(state.clone()) == 0


def test_features_are_named() -> None:
    state = GAME.new_initial_state()
    assert len(GAME.features(state, 0)) == len(GAME.feature_names)
    state.apply(19)
    assert GAME.features(state, 0)[0] == 3.0  # 4 Black discs against 1 White


# ---- golden play-throughs ----


@pytest.mark.parametrize(
    "name, seed, agents",
    [
        ("reversi_random_random", 1, ("random", "random")),
        ("reversi_greedy_random", 2, ("greedy", "random")),
    ],
)
def test_golden_playthrough(name: str, seed: int, agents: tuple[str, str]) -> None:
    check_golden(name, transcript(GAME, seed, agents))


def test_golden_with_a_forced_pass() -> None:
    """A seeded random policy whose game has passes in it: pins the pass encoding too."""
    text = transcript(GAME, 8)
    assert text.count(" pass\n") == 2
    check_golden("reversi_random_policy_passes", text)


def test_default_weights_reproduce_the_heuristic_before_the_end() -> None:
    rng = random.Random(5)
    state = GAME.new_initial_state()
    while not state.is_terminal():
        for player in (0, 1):
            value = sum(w * f for w, f in zip(Reversi.default_weights, GAME.features(state, player)))
            assert value == pytest.approx(GAME.heuristic(state, player))
        state.apply(rng.choice(state.legal_actions()))
