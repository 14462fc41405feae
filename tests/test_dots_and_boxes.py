"""Dots and Boxes: conformance over sizes, OpenSpiel's encoding, a double box, properties over random
play, parameter checks, the greedy and heuristic evaluations, and golden play-throughs."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import TERMINAL, ArenaError
from arena.plugins import get_registry
from arena.testing import check_agent, check_game
from games.dots_and_boxes import DotsAndBoxes, DotsAndBoxesState
from tests._golden import check_golden, transcript

REGISTRY = get_registry()


def play(state: DotsAndBoxesState, *names: str) -> DotsAndBoxesState:
    """Draw lines given by name, in order."""
    for name in names:
        state.apply(state.string_to_action(name))
    return state


def box_sides(state: DotsAndBoxesState) -> list[int]:
    return [state.sides(box) for box in range(state.layout.rows * state.layout.cols)]


# ---- conformance ----


@pytest.mark.parametrize(
    "params, seeds",
    [({}, 20), ({"rows": 1, "cols": 1}, 20), ({"rows": 2, "cols": 3}, 20), ({"rows": 1, "cols": 9}, 10),
     ({"rows": 9, "cols": 9}, 5)],
)  # fmt: skip
def test_conformance(params: dict[str, int], seeds: int) -> None:
    check_game(DotsAndBoxes(**params), seeds=range(seeds))


@pytest.mark.parametrize("agent_spec", ["random", "greedy", "greedy:eval=heuristic"])
@pytest.mark.parametrize("params", [{}, {"rows": 1, "cols": 1}, {"rows": 2, "cols": 3}])
def test_agents_conform(agent_spec: str, params: dict[str, int]) -> None:
    agent_id, _, evaluation = agent_spec.partition(":eval=")
    agent_params = {"eval": evaluation} if evaluation else {}
    check_agent(REGISTRY.agents[agent_id], DotsAndBoxes(**params), agent_params, seeds=range(3))


def test_random_agent_on_the_largest_tested_board() -> None:
    check_agent(REGISTRY.agents["random"], DotsAndBoxes(rows=9, cols=9), seeds=range(2))


def test_registered_as_a_plugin() -> None:
    assert REGISTRY.games["dots_and_boxes"] is DotsAndBoxes


# ---- parameters ----


def test_defaults_are_three_by_three() -> None:
    game = DotsAndBoxes()
    assert game.params == {"rows": 3, "cols": 3}
    assert game.num_distinct_actions == 24 == game.max_game_length()
    assert game.label() == "dots_and_boxes"


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rows": 0}, r"parameter 'rows' of game 'dots_and_boxes': must be >= 1"),
        ({"cols": -2}, r"parameter 'cols' of game 'dots_and_boxes': must be >= 1"),
        ({"cols": 21}, r"parameter 'cols' of game 'dots_and_boxes': must be <= 20"),
        ({"rows": "three"}, r"parameter 'rows' of game 'dots_and_boxes': expected an integer"),
        ({"rows": 2.5}, r"parameter 'rows' of game 'dots_and_boxes': expected an integer"),
        ({"size": 3}, r"unknown parameter 'size' for game 'dots_and_boxes'"),
    ],
)
def test_bad_parameters(params: dict[str, object], message: str) -> None:
    with pytest.raises(ArenaError, match=message):
        DotsAndBoxes(**params)


def test_parameters_from_the_command_line_are_strings() -> None:
    game = DotsAndBoxes(rows="2", cols="4")
    assert (game.layout.rows, game.layout.cols) == (2, 4)
    assert game.label() == "dots_and_boxes:rows=2,cols=4"


# ---- OpenSpiel's encoding ----


def test_encoding_two_by_two() -> None:
    game = DotsAndBoxes(rows=2, cols=2)
    state = game.new_initial_state()
    assert game.num_distinct_actions == 12
    names = [state.action_to_string(a) for a in range(12)]
    assert names == ["h(0,0)", "h(0,1)", "h(1,0)", "h(1,1)", "h(2,0)", "h(2,1)",
                     "v(0,0)", "v(0,1)", "v(0,2)", "v(1,0)", "v(1,1)", "v(1,2)"]  # fmt: skip
    assert [state.string_to_action(n) for n in names] == list(range(12))


def test_encoding_two_by_three() -> None:
    state = DotsAndBoxes(rows=2, cols=3).new_initial_state()
    assert state.layout.num_lines == 17
    assert state.string_to_action("h(2,2)") == 8  # r*C + c
    assert state.string_to_action("v(0,0)") == 9  # (R+1)*C + r*(C+1) + c
    assert state.string_to_action("v(1,3)") == 16
    assert state.string_to_action(" V( 1 , 2 ) ") == 15
    assert state.string_to_action("7") == 7


@pytest.mark.parametrize("text", ["h(3,0)", "h(0,2)", "v(2,0)", "v(0,3)", "x(0,0)", "h0,0", "", "12"])
def test_bad_action_names(text: str) -> None:
    state = DotsAndBoxes(rows=2, cols=2).new_initial_state()
    with pytest.raises(ArenaError):
        state.string_to_action(text)


def test_drawn_line_is_not_legal_again() -> None:
    state = play(DotsAndBoxes(rows=2, cols=2).new_initial_state(), "h(1,1)")
    assert 3 not in state.legal_actions()
    with pytest.raises(ArenaError, match="already drawn"):
        state.string_to_action("h(1,1)")


# ---- hand-built positions ----


def test_one_line_completes_two_boxes() -> None:
    # A 1x3 strip with every line drawn but v(0,1) and v(0,3): v(0,1) closes boxes 0 and 1 at once.
    state = play(DotsAndBoxes(rows=1, cols=3).new_initial_state(),
                 "h(0,0)", "h(0,1)", "h(0,2)", "h(1,0)", "h(1,1)", "h(1,2)", "v(0,0)", "v(0,2)")  # fmt: skip
    assert state.current_player == 0 and state.scores == [0, 0]
    play(state, "v(0,1)")
    assert state.scores == [2, 0]  # the mover scores both boxes
    assert state.owner == [0, 0, -1]
    assert state.current_player == 0  # and moves again
    play(state, "v(0,3)")
    assert state.scores == [3, 0]
    assert state.is_terminal() and state.current_player == TERMINAL
    assert state.returns() == [1.0, -1.0]
    assert state.render().splitlines() == [
        "+---+---+---+",
        "| 0 | 0 | 0 |",
        "+---+---+---+",
        "boxes 3-0, game over",
    ]


def test_single_box_keeps_the_turn_and_no_box_passes_it() -> None:
    state = play(DotsAndBoxes(rows=1, cols=2).new_initial_state(), "h(0,0)", "h(1,0)", "v(0,0)")
    assert state.current_player == 1
    play(state, "v(0,1)")  # player 1 closes box 0
    assert state.scores == [0, 1] and state.current_player == 1
    play(state, "h(0,1)")  # no box: the turn passes
    assert state.current_player == 0


def test_draw_on_an_even_board() -> None:
    # 1x2: player 0 and player 1 one box each.
    state = play(DotsAndBoxes(rows=1, cols=2).new_initial_state(),
                 "h(0,0)", "h(1,0)", "v(0,0)", "h(0,1)", "v(0,1)", "h(1,1)", "v(0,2)")  # fmt: skip
    assert state.scores == [1, 1]
    assert state.is_terminal()
    assert state.returns() == [0.0, 0.0]


# ---- properties over random legal play ----


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.lists(st.integers(0, 10**6), max_size=80))
def test_random_play_keeps_the_rules(rows: int, cols: int, choices: list[int]) -> None:
    game = DotsAndBoxes(rows=rows, cols=cols)
    state = game.new_initial_state()
    num_lines = game.num_distinct_actions
    drawn: set[int] = set()
    for pick in choices:
        if state.is_terminal():
            break
        legal = state.legal_actions()
        assert legal == [a for a in range(num_lines) if a not in drawn]  # the undrawn lines, in order
        action = legal[pick % len(legal)]
        player = state.current_player
        closed_before = sum(1 for s in box_sides(state) if s == 4)
        scores_before = list(state.scores)
        state.apply(action)
        drawn.add(action)
        sides = box_sides(state)
        completed = sum(1 for s in sides if s == 4) - closed_before
        assert 0 <= completed <= 2
        assert state.scores[player] == scores_before[player] + completed  # the mover scores them
        assert state.scores[1 - player] == scores_before[1 - player]
        assert sum(state.scores) == sum(1 for s in sides if s == 4)  # scores sum to completed boxes
        assert all((owner >= 0) == (s == 4) for owner, s in zip(state.owner, sides))
        if len(drawn) == num_lines:
            assert state.is_terminal()  # the game ends when every line is drawn, and only then
        else:
            assert not state.is_terminal()
            assert state.current_player == (player if completed else 1 - player)  # extra turn iff a box
    if state.is_terminal():
        a, b = state.scores
        assert state.returns() == ([1.0, -1.0] if a > b else [-1.0, 1.0] if b > a else [0.0, 0.0])


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 10**9))
def test_observation_planes(rows: int, cols: int, seed: int) -> None:
    game = DotsAndBoxes(rows=rows, cols=cols)
    rng = random.Random(seed)
    state = game.new_initial_state()
    for _ in range(rng.randrange(game.num_distinct_actions + 1)):
        state.apply(rng.choice(state.legal_actions()))
    for player in (0, 1):
        obs = state.observation(player)
        assert obs.shape == (4, rows + 1, cols + 1) and obs.dtype == np.float32
        assert obs[0].sum() + obs[1].sum() == bin(state.drawn).count("1")
        assert obs[2].sum() == state.scores[player] and obs[3].sum() == state.scores[1 - player]
        for action in range(game.num_distinct_actions):
            kind, r, c = state.layout.describe(action)
            assert obs[0 if kind == "h" else 1, r, c] == (action not in state.legal_actions())


# ---- evaluations and the greedy agent ----


def test_evaluations() -> None:
    game = DotsAndBoxes()
    assert set(game.evaluations()) == {"heuristic", "greedy"}


def test_heuristic_one_ply() -> None:
    game = DotsAndBoxes(rows=1, cols=2)
    three_sides = play(game.new_initial_state(), "h(0,0)", "h(1,0)", "v(0,0)")  # player 1 to move, box 0 open
    assert game.heuristic(three_sides, 1) == 1.0  # there to take
    assert game.heuristic(three_sides, 0) == -1.0  # handed over
    taken = play(three_sides.clone(), "v(0,1)")
    assert game.heuristic(taken, 1) == 1.0 and game.evaluations()["greedy"](taken, 1) == 1.0
    over = play(taken.clone(), "h(0,1)", "h(1,1)", "v(0,2)")  # player 1 takes box 1 as well
    assert over.is_terminal() and over.scores == [0, 2]
    assert game.heuristic(over, 1) == 102.0  # a win is worth 100, plus the box lead
    assert game.heuristic(over, 0) == -102.0
    assert game.heuristic(play(game.new_initial_state(), "h(0,0)"), 0) == 0.0


def test_heuristic_values_a_finished_game_by_its_result() -> None:
    game = DotsAndBoxes(rows=1, cols=1)
    state = play(game.new_initial_state(), "h(0,0)", "h(1,0)", "v(0,0)", "v(0,1)")
    assert state.returns() == [-1.0, 1.0]
    assert game.heuristic(state, 1) == 101.0
    assert game.heuristic(state, 0) == -101.0


def _agent(spec: str, game: DotsAndBoxes, seat: int, seed: int):
    agent_id, _, evaluation = spec.partition(":eval=")
    params = {"eval": evaluation} if evaluation else {}
    return REGISTRY.agents[agent_id](game, seat, seed, **params)


@pytest.mark.parametrize("spec", ["greedy", "greedy:eval=heuristic"])
def test_greedy_captures_when_it_can(spec: str) -> None:
    game = DotsAndBoxes()
    state = play(game.new_initial_state(), "h(1,1)", "h(2,1)", "v(1,1)")  # box (1,1) has three sides
    assert state.current_player == 1
    for seed in range(5):
        assert _agent(spec, game, 1, seed).act(state.clone()) == state.string_to_action("v(1,2)")


def test_greedy_is_random_when_it_cannot_capture() -> None:
    # The report's greedy player: no capture, so any line; safe or not, the choice varies with the seed.
    game = DotsAndBoxes()
    state = play(game.new_initial_state(), "h(1,1)", "h(2,1)")
    picks = {_agent("greedy", game, 0, seed).act(state.clone()) for seed in range(40)}
    third_sides = {state.string_to_action("v(1,1)"), state.string_to_action("v(1,2)")}
    assert len(picks) > 5
    assert picks & third_sides  # it does not know to avoid them


def test_heuristic_greedy_avoids_the_third_side() -> None:
    game = DotsAndBoxes()
    state = play(game.new_initial_state(), "h(1,1)", "h(2,1)")
    third_sides = {state.string_to_action("v(1,1)"), state.string_to_action("v(1,2)")}
    picks = {_agent("greedy:eval=heuristic", game, 0, seed).act(state.clone()) for seed in range(40)}
    assert len(picks) > 5
    assert not picks & third_sides


def test_heuristic_greedy_beats_greedy() -> None:
    """Not a rules test: a sanity check that the safer evaluation is the stronger player on 3x3."""
    from arena.match import play_match

    game = DotsAndBoxes()
    score = 0.0
    for seed in range(40):
        seat = seed % 2
        agents = [_agent("greedy", game, p, seed * 2 + p) for p in range(2)]
        agents[seat] = _agent("greedy:eval=heuristic", game, seat, seed * 2 + seat)
        score += play_match(game, agents, seed).scores[seat]
    assert score > 10


# ---- golden play-throughs ----


@pytest.mark.parametrize(
    "name, params, seed, agents",
    [
        ("dots_and_boxes_random_random", {}, 1, ("random", "random")),
        ("dots_and_boxes_greedy_vs_heuristic_2x3", {"rows": 2, "cols": 3}, 5, ("greedy", "greedy:eval=heuristic")),
        ("dots_and_boxes_random_policy_1x1", {"rows": 1, "cols": 1}, 3, None),
    ],
)
def test_golden_playthrough(name: str, params: dict[str, int], seed: int, agents: tuple[str, str] | None) -> None:
    check_golden(name, transcript(DotsAndBoxes(**params), seed, agents))


def test_default_weights_reproduce_the_heuristic_before_the_end() -> None:
    game = DotsAndBoxes(rows=2, cols=3)
    rng = random.Random(5)
    state = game.new_initial_state()
    assert len(game.features(state, 0)) == len(game.feature_names) == len(game.default_weights)
    while not state.is_terminal():
        for player in (0, 1):
            value = sum(w * f for w, f in zip(DotsAndBoxes.default_weights, game.features(state, player)))
            assert value == game.heuristic(state, player)
        state.apply(rng.choice(state.legal_actions()))
