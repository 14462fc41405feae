"""Santorini: conformance, rules on hand-built positions, limits, features, properties, golden play-throughs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena
from arena.plugins import get_registry
from arena.testing import check_agent, check_game
from games.santorini import BOX, MANUAL_WEIGHTS, PLACE, Santorini, SantoriniState
from tests._golden import check_golden, transcript

# Written out again from the module docstring: N, NE, E, SE, S, SW, W, NW with N towards row 0.
COMPASS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))


# ---- conformance ----


@pytest.mark.parametrize("limits", ["unlimited", "roxley"])
def test_conformance(limits: str) -> None:
    check_game(Santorini(limits=limits), seeds=range(12))


def test_registered_under_its_id() -> None:
    assert get_registry().games["santorini"] is Santorini


@pytest.mark.parametrize("agent_id", ["random", "greedy"])
def test_agents_conform(agent_id: str) -> None:
    check_agent(get_registry().agents[agent_id], Santorini(), seeds=range(2))


def test_greedy_conforms_with_limits() -> None:
    check_agent(get_registry().agents["greedy"], Santorini(limits="roxley"), seeds=range(1))


def test_bad_limits_are_refused() -> None:
    with pytest.raises(arena.ArenaError, match="limits.*choose one of unlimited, roxley"):
        Santorini(limits="infinite")
    with pytest.raises(arena.ArenaError, match="unknown parameter 'gods'"):
        Santorini(gods="apollo")


def test_max_game_length_is_a_bound() -> None:
    assert Santorini().max_game_length() == 105
    assert Santorini(limits="roxley").max_game_length() == 4 + sum(BOX) + 1


# ---- placement ----


def test_placement_is_part_of_the_game_in_roxley_order() -> None:
    state = Santorini().new_initial_state(0)
    assert state.legal_actions() == list(range(PLACE, PLACE + 25))
    seats = []
    for square in ("c3", "c2", "b3", "d3"):
        seats.append(state.current_player)
        state.apply(state.string_to_action(f"place {square}"))
    assert seats == [0, 0, 1, 1]
    assert state.current_player == 0
    assert state.legal_actions() and all(a < PLACE for a in state.legal_actions())
    assert "3  0. 0X 0A 0Y 0." in state.render()
    assert "2  0. 0. 0B 0. 0." in state.render()


def test_cannot_place_on_an_occupied_square() -> None:
    state = Santorini().new_initial_state(0)
    state.apply(state.string_to_action("place c3"))
    assert PLACE + 12 not in state.legal_actions()
    with pytest.raises(arena.ArenaError):
        state.string_to_action("place c3")


# ---- hand-built positions ----


def _names(state: SantoriniState) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]


def test_a_dome_blocks_moving_and_building() -> None:
    state = Santorini().position(
        """
        0. 0. 0. 0. 0X
        0. 0. D. 0. 0.
        0. 0. 0A D. 0.
        0. 0. 0. 0. 0.
        0B 0. 0. 0. 0Y
        """,
        to_move=0,
    )
    names = _names(state)
    assert names
    for name in names:
        assert "-c4" not in name and "-d3" not in name
        assert "build c4" not in name and "build d3" not in name
    assert "W1 c3-b4 build c3" in names


def test_climb_at_most_one_level_and_drop_any_number() -> None:
    state = Santorini().position(
        """
        0. 0. 0. 0. 0X
        0. 2. 1. 0. 0.
        0. 0. 0A 0. 0.
        0. 0. 0. 0. 0.
        2B 0. 0. 0. 0Y
        """,
        to_move=0,
    )
    names = _names(state)
    assert not any(n.startswith("W1 c3-b4") for n in names), "level 0 to 2 is two levels up"
    assert any(n.startswith("W1 c3-c4") for n in names)
    assert any(n.startswith("W2 a1-b1") for n in names), "level 2 down to 0"


def test_win_by_climbing_to_level_three() -> None:
    game = Santorini()
    state = game.position(
        """
        0. 0. 0. 0. 0X
        0. 0. 3. 3. 0.
        0. 0. 2A 0. 0.
        0. 0. 0. 0. 0.
        1B 3. 0. 0. 0Y
        """,
        to_move=0,
    )
    wins = [a for a in state.legal_actions() if state.action_to_string(a).endswith("wins")]
    assert [state.action_to_string(a) for a in wins] == ["W1 c3-c4 wins", "W1 c3-d4 wins"]
    # One id per winning move: its build direction points back to the square left.
    assert wins == [(0 * 8 + 0) * 8 + 4, (0 * 8 + 1) * 8 + 5]
    assert not any(a >> 3 in (0, 1) for a in state.legal_actions() if a not in wins)
    assert not any(n.startswith("W2 a1-b1") for n in _names(state)), "level 1 cannot climb to 3"
    assert state.string_to_action("W1 c3-c4") == wins[0]
    before = state.levels[:]
    state.apply(wins[0])
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert state.levels == before, "a winning move builds nothing"
    assert "Winner: seat 0 (climbed to level 3)" in state.render()
    assert game.heuristic(state, 0) == 9999 and game.heuristic(state, 1) == -9999


def test_no_move_loss() -> None:
    game = Santorini()
    state = game.position(
        """
        0X 2. 0. 2. 0Y
        2. 2. 0. 2. 1.
        0. 0. 0. 0. 0.
        0. 0. 0. 0. 0A
        0B 0. 0. 0. 0.
        """,
        to_move=0,
    )
    assert not state.is_terminal()
    state.apply(state.string_to_action("W1 e2-e3 build e4"))
    assert state.is_terminal()
    assert state.returns() == [1.0, -1.0]
    assert state.win_way == "blocked"
    assert "cannot move and build" in state.render()
    # The same stuck position built directly is already over.
    stuck = game.position("\n".join(state.render().splitlines()[:6]), to_move=1)
    assert stuck.is_terminal() and stuck.returns() == [1.0, -1.0]


def test_roxley_exhausted_blocks_cannot_be_built() -> None:
    game = Santorini(limits="roxley")
    state = game.position(
        """
        3. 3. 3. 3. 3.
        3. 3. 3. 3. 3.
        3. 3. 2. 0A 0.
        3. 3. 0. 0. 0.
        0B 0. 0X 0. 0Y
        """,
        to_move=0,
    )
    assert state.pieces == [22 - 15, 18 - 15, 14 - 14, 18]
    names = _names(state)
    assert names and not any(n.endswith("build c3") for n in names), "no level-3 block left for c3"
    assert "W1 d3-c2 build b3" in names, "domes are still in the box"
    state.apply(state.string_to_action("W1 d3-c2 build b3"))
    assert state.pieces == [7, 3, 0, 17]
    assert "Box: 7 level-1, 3 level-2, 0 level-3, 17 domes" in state.render()


def test_roxley_empty_box_means_the_mover_loses() -> None:
    game = Santorini(limits="roxley")
    board = """
        0. 0. 0. 0. 0X
        0. 1. 0. 0. 0.
        0. 0. 0A 0. 0.
        0. 0. 0. 0. 0.
        0B 0. 0. 0. 0Y
    """
    some = game.position(board, to_move=0, pieces=[0, 18, 14, 18])
    assert all(n.endswith("build b4") for n in _names(some)), "only the level-1 square can take a block"
    empty = game.position(board, to_move=0, pieces=[0, 0, 0, 0])
    assert empty.is_terminal() and empty.returns() == [-1.0, 1.0]


def test_position_validation() -> None:
    game = Santorini()
    with pytest.raises(arena.ArenaError):
        game.position("0A 0B 0X", to_move=0)
    with pytest.raises(arena.ArenaError):
        game.position("0A 0B 0X 0. 0.\n" + "0. 0. 0. 0. 0.\n" * 4, to_move=0)  # no Y
    with pytest.raises(arena.ArenaError):
        game.position("DA 0B 0X 0Y 0.\n" + "0. 0. 0. 0. 0.\n" * 4, to_move=0)  # on a dome
    with pytest.raises(arena.ArenaError):
        game.position("5A 0B 0X 0Y 0.\n" + "0. 0. 0. 0. 0.\n" * 4, to_move=0)


def test_render_round_trips_through_position() -> None:
    game = Santorini()
    rng = random.Random(3)
    state = game.new_initial_state(3)
    for _ in range(20):
        state.apply(rng.choice(state.legal_actions()))
    again = game.position("\n".join(state.render().splitlines()[:6]), to_move=state.current_player)
    assert again.render() == state.render() and again.legal_actions() == state.legal_actions()


def test_strings_parse_both_ways() -> None:
    state = Santorini().position(
        """
        0. 0. 0. 0. 0X
        0. 0. 0. 0. 0.
        0. 0. 0A 0. 0.
        0. 0. 0. 0. 0.
        0B 0. 0. 0. 0Y
        """,
        to_move=0,
    )
    action = state.string_to_action("W1 c3-d4 build d5")
    assert action == (0 * 8 + 1) * 8 + 0
    assert state.action_to_string(action) == "W1 c3-d4 build d5"
    assert state.string_to_action("w1 C3-D4 build D5") == action
    assert state.string_to_action(str(action)) == action
    with pytest.raises(arena.ArenaError):
        state.string_to_action("W1 c3-e5 build d5")
    with pytest.raises(arena.ArenaError):
        state.string_to_action("W1 c3-d4 dance")


# ---- features and heuristic ----


def test_features_are_the_reports_eight() -> None:
    game = Santorini()
    state = game.position(
        """
        0. 0. 0. 0. 0Y
        0. 2X 0. 0. 0.
        0. 0. 1A 0. 0.
        0. 0. 0. 0. 0.
        0B 0. 0. 0. 0.
        """,
        to_move=0,
    )
    assert len(game.feature_names) == 8
    expected = [0.5, 0.5, 0.0, 0.5, 0.5, 0.0, 0.5, 0.75]  # centre 0, corner 1, b4 = sqrt(2)/sqrt(8) = 0.5
    assert game.features(state, 0) == pytest.approx(expected)
    assert game.features(state, 1) == pytest.approx(expected[4:] + expected[:4])
    assert game.heuristic(state, 0) == pytest.approx(float(np.dot(expected, [0, 2, 4, -1, 0, -2, -4, 1])))
    assert list(MANUAL_WEIGHTS) == [0, 2, 4, -1, 0, -2, -4, 1]


def test_heuristic_is_the_dot_product_along_random_play() -> None:
    game = Santorini()
    rng = random.Random(8)
    state = game.new_initial_state(8)
    while not state.is_terminal():
        for player in (0, 1):
            features = game.features(state, player)
            assert all(0.0 <= f <= 1.0 for f in features)
            assert game.heuristic(state, player) == pytest.approx(float(np.dot(features, MANUAL_WEIGHTS)))
        state.apply(rng.choice(state.legal_actions()))


# ---- observation ----


def test_observations() -> None:
    state = Santorini().position(
        """
        0. 0. 0. 0. 0Y
        0. 2X 0. 0. 0.
        0. 0. 1A 0. D.
        0. 0. 0. 0. 0.
        0B 0. 0. 0. 0.
        """,
        to_move=0,
    )
    obs = state.observation(1)
    assert obs.shape == (2, 5, 5) and obs.dtype == np.float32
    assert obs[0, 2, 4] == 1.0 and obs[0, 1, 1] == 0.5 and obs[0, 2, 2] == 0.25
    assert obs[1, 1, 1] == 1 and obs[1, 0, 4] == 1 and obs[1, 2, 2] == -1 and obs[1, 4, 0] == -1
    assert np.array_equal(state.observation(0)[1], -obs[1])
    onehot = state.observation_onehot(0)
    assert onehot.shape == (325,) and onehot.sum() == 25
    assert onehot[12 * 13 + 5 + 1] == 1  # c3: own worker on level 1
    assert onehot[6 * 13 + 9 + 2] == 1  # b4: opponent worker on level 2
    assert onehot[14 * 13 + 4] == 1  # e3: dome


# ---- properties over random legal play ----


def _reference_legal(state: SantoriniState) -> list[int]:
    """Every id tried against the rules as RULES.md states them."""
    if state.placed < 4:
        return [PLACE + sq for sq in range(25) if sq not in state.workers]
    p = state.current_player
    levels = state.levels
    result = []
    for w in (0, 1):
        src = state.workers[2 * p + w]
        others = {sq for i, sq in enumerate(state.workers) if i != 2 * p + w}
        for md, (dr, dc) in enumerate(COMPASS):
            r, c = src // 5 + dr, src % 5 + dc
            if not (0 <= r < 5 and 0 <= c < 5):
                continue
            dst = r * 5 + c
            if dst in others or levels[dst] == 4 or levels[dst] > levels[src] + 1:
                continue
            if levels[dst] == 3:
                result.append((w * 8 + md) * 8 + (md + 4) % 8)
                continue
            for bd, (br, bc) in enumerate(COMPASS):
                r2, c2 = r + br, c + bc
                if not (0 <= r2 < 5 and 0 <= c2 < 5):
                    continue
                b = r2 * 5 + c2
                if b in others or b == dst or levels[b] == 4:
                    continue
                if state.pieces is not None and state.pieces[levels[b]] == 0:
                    continue
                result.append((w * 8 + md) * 8 + bd)
    return sorted(result)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    limits=st.sampled_from(["unlimited", "roxley"]),
    choices=st.lists(st.integers(0, 10**6), max_size=110),
)
def test_random_play_keeps_the_invariants(seed: int, limits: str, choices: list[int]) -> None:
    game = Santorini(limits=limits)
    state = game.new_initial_state(seed)
    for choice in choices:
        if state.is_terminal():
            break
        legal = state.legal_actions()
        assert legal == _reference_legal(state)
        names = [state.action_to_string(a) for a in legal]
        assert len(set(names)) == len(names), "one id per distinct move"
        action = legal[choice % len(legal)]
        mover = state.current_player
        before = state.clone()
        assert before.key() == state.key() and hash(state.key()) == hash(before.key())
        state.apply(action)
        assert state.key() != before.key()
        levels, old = state.levels, before.levels
        assert all(new >= prev for new, prev in zip(levels, old)), "levels never decrease"
        changed = [sq for sq in range(25) if levels[sq] != old[sq]]
        if action >= PLACE:
            assert changed == []
        else:
            w = 2 * mover + (action >> 6)
            src, dst = before.workers[w], state.workers[w]
            assert max(abs(src // 5 - dst // 5), abs(src % 5 - dst % 5)) == 1
            assert levels[dst] <= old[src] + 1, "a worker never climbs more than one level"
            assert old[dst] < 4 and before.occupant[dst] < 0
            if state.is_terminal() and state.win_way == "climb":
                assert changed == [] and levels[dst] == 3 and old[src] == 2
            else:
                assert len(changed) == 1 and levels[changed[0]] == old[changed[0]] + 1, "one block per turn"
                assert max(abs(changed[0] // 5 - dst // 5), abs(changed[0] % 5 - dst % 5)) == 1
        for sq in range(25):
            assert levels[sq] != 4 or old[sq] >= 3, "a dome goes only on level 3"
        for i, sq in enumerate(state.workers):
            if sq >= 0:
                assert state.occupant[sq] == i and levels[sq] < 4
        assert sum(1 for o in state.occupant if o >= 0) == sum(1 for sq in state.workers if sq >= 0)
        if state.pieces is not None:
            assert state.pieces == [BOX[k] - sum(1 for lv in levels if lv > k) for k in range(4)]
            assert min(state.pieces) >= 0
        if state.is_terminal():
            assert state.returns()[mover] == 1.0
            if state.win_way == "blocked":
                stuck = state.clone()
                stuck.current_player = 1 - mover
                assert _reference_legal(stuck) == []


def test_winning_moves_have_one_id_each_in_random_games() -> None:
    rng = random.Random(1)
    game = Santorini()
    seen = 0
    for seed in range(40):
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            moves = [a >> 3 for a in legal]
            for a in legal:
                if state.action_to_string(a).endswith("wins"):
                    seen += 1
                    assert moves.count(a >> 3) == 1
            state.apply(rng.choice(legal))
    assert seen > 0


# ---- golden play-throughs ----


@pytest.mark.parametrize(
    "name, limits, seed, agents",
    [
        ("santorini_unlimited_random_greedy", "unlimited", 3, ("random", "greedy")),
        ("santorini_roxley_random_policy", "roxley", 5, None),
    ],
)
def test_golden_playthrough(name: str, limits: str, seed: int, agents: tuple[str, str] | None) -> None:
    check_golden(name, transcript(Santorini(limits=limits), seed, agents))


def test_centrality_uses_euclidean_distance() -> None:
    game = Santorini()
    state = game.position(
        """
        0. 0. 0. 0. 0.
        0. 0. 0A 0. 0.
        0. 0. 0. 0. 0.
        0. 0. 0. 0. 0.
        0B 0X 0. 0. 0Y
        """,
        to_move=0,
    )
    assert game.features(state, 0)[3] == pytest.approx((1 / math.sqrt(8) + 1.0) / 2)
