"""Onitama: conformance, rules on hand-built positions, encodings, properties, golden play-throughs."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena
from arena.plugins import get_registry
from arena.testing import check_agent, check_game
from games.onitama import BLUE, CARD_NAMES, CARDS, MASTER, PASS, RED, STAMPS, STUDY5, Onitama, OnitamaState
from tests._golden import check_golden, transcript

VARIANTS = ("all", "study5", "Tiger+Crab+Ox+Eel+Cobra")


# ---- conformance ----


@pytest.mark.parametrize("cards", VARIANTS)
def test_conformance(cards: str) -> None:
    check_game(Onitama(cards=cards))


def test_registered_under_its_id() -> None:
    assert get_registry().games["onitama"] is Onitama


@pytest.mark.parametrize("agent_id", ["random", "greedy"])
@pytest.mark.parametrize("cards", ["all", "study5"])
def test_agents_conform(agent_id: str, cards: str) -> None:
    check_agent(get_registry().agents[agent_id], Onitama(cards=cards))


@pytest.mark.parametrize(
    "value, message",
    [
        ("study6", "five card names"),
        ("Tiger+Crab+Ox+Eel", "five card names"),
        ("Tiger+Crab+Ox+Eel+Cobra+Boar", "five card names"),
        ("Tiger+Crab+Ox+Eel+Unicorn", "unknown Onitama card 'Unicorn'"),
        ("Tiger+Crab+Ox+Eel+tiger", "listed twice"),
        ("Tiger++Ox+Eel+Cobra", "five card names"),
    ],
)
def test_bad_card_sets_are_refused(value: str, message: str) -> None:
    with pytest.raises(arena.ArenaError, match=message):
        Onitama(cards=value)


def test_card_set_names_are_case_insensitive() -> None:
    assert Onitama(cards="tiger+CRAB+Ox+eel+Cobra").setup.card_set == Onitama(cards="Tiger+Crab+Ox+Eel+Cobra").setup.card_set
    assert Onitama(cards="STUDY5").setup.card_set == STUDY5


# ---- setup ----


def _cards_in_play(state: OnitamaState) -> list[int]:
    return sorted([*state.hands[BLUE], *state.hands[RED], state.side])


def test_start_position_and_first_player_follow_the_side_card() -> None:
    game = Onitama()
    firsts = set()
    for seed in range(60):
        state = game.new_initial_state(seed)
        assert state.current_player == STAMPS[state.side]
        firsts.add(state.current_player)
        assert len(set(_cards_in_play(state))) == 5
        assert state.render().splitlines()[1] == "5 b b B b b"
        assert state.render().splitlines()[5] == "1 r r R r r"
    assert firsts == {BLUE, RED}, "both colours start in some deal"


def test_study5_deals_all_five_cards_in_every_game() -> None:
    game = Onitama(cards="study5")
    sides = set()
    for seed in range(40):
        state = game.new_initial_state(seed)
        assert _cards_in_play(state) == sorted(STUDY5)
        assert state.current_player == STAMPS[state.side]
        sides.add(CARD_NAMES[state.side])
    assert sides == {"Dragon", "Elephant", "Goose", "Rooster", "Monkey"}


def test_explicit_card_list_is_the_set_in_play() -> None:
    game = Onitama(cards="Tiger+Crab+Ox+Eel+Cobra")
    for seed in range(10):
        names = {CARD_NAMES[c] for c in _cards_in_play(game.new_initial_state(seed))}
        assert names == {"Tiger", "Crab", "Ox", "Eel", "Cobra"}


def test_same_seed_same_deal_and_seeds_differ() -> None:
    game = Onitama()
    assert game.new_initial_state(7).render() == game.new_initial_state(7).render()
    assert len({game.new_initial_state(s).render() for s in range(20)}) > 10


# ---- hand-built positions ----


def test_win_by_temple_way_of_the_stream() -> None:
    game = Onitama()
    state = game.position(
        """
        ..b..
        ..R..
        .....
        .....
        ..B..
        """,
        blue=("Crab", "Boar"), red=("Ox", "Eel"), side="Cobra", to_move=RED,
    )  # fmt: skip
    action = state.string_to_action("Ox c4-c5")
    state.apply(action)
    assert state.is_terminal() and state.current_player == arena.TERMINAL
    assert state.returns() == [-1.0, 1.0]
    assert state.win_way == "stream"
    assert "Winner: Red (seat 1) by the Way of the Stream" in state.render()
    assert state.legal_actions() == []


def test_a_pawn_on_the_enemy_temple_does_not_win() -> None:
    game = Onitama()
    state = game.position(
        """
        .....
        ..r..
        B....
        .....
        ..R..
        """,
        blue=("Crab", "Boar"), red=("Ox", "Eel"), side="Cobra", to_move=RED,
    )  # fmt: skip
    state.apply(state.string_to_action("Ox c4-c5"))
    assert not state.is_terminal()
    assert state.current_player == BLUE


def test_win_by_capture_way_of_the_stone() -> None:
    game = Onitama()
    state = game.position(
        """
        .....
        ..B..
        ..R..
        .....
        ..r..
        """,
        blue=("Crab", "Boar"), red=("Ox", "Eel"), side="Cobra", to_move=BLUE,
    )  # fmt: skip
    # Blue faces down the board: Boar's forward step takes c4 to c3, onto the Red master.
    state.apply(state.string_to_action("Boar c4-c3"))
    assert state.is_terminal()
    assert state.returns() == [1.0, -1.0]
    assert state.win_way == "stone"


def test_forced_pass_gives_away_the_chosen_card() -> None:
    game = Onitama()
    # Blue's pieces fill the bottom row; Crab and Boar only go forward (off the board) or sideways.
    state = game.position(
        """
        ..R..
        .....
        .....
        .....
        Bbbbb
        """,
        blue=("Boar", "Crab"), red=("Ox", "Eel"), side="Cobra", to_move=BLUE,
    )  # fmt: skip
    assert state.legal_actions() == [PASS, PASS + 1]
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["pass Crab", "pass Boar"]
    board_before = state.board[:]
    state.apply(state.string_to_action("pass Boar"))
    assert state.board == board_before
    assert state.side == CARD_NAMES.index("Boar")
    assert {CARD_NAMES[c] for c in state.hands[BLUE]} == {"Crab", "Cobra"}
    assert state.current_player == RED


def test_no_pass_while_a_move_exists() -> None:
    state = Onitama(cards="study5").new_initial_state(0)
    assert all(a < PASS for a in state.legal_actions())


def test_action_ids_do_not_depend_on_deal_order() -> None:
    game = Onitama()
    board = """
        b.B.b
        .b...
        ..r..
        ...b.
        rrR.r
    """
    first = game.position(board, blue=("Tiger", "Crab"), red=("Ox", "Eel"), side="Cobra", to_move=RED)
    second = game.position(board, blue=("Crab", "Tiger"), red=("Eel", "Ox"), side="Cobra", to_move=RED)
    assert first.legal_actions() == second.legal_actions()
    assert [first.action_to_string(a) for a in first.legal_actions()] == [
        second.action_to_string(a) for a in second.legal_actions()
    ]


def test_action_encoding_is_documented_layout() -> None:
    state = Onitama().position(
        """
        ..B..
        .....
        .....
        .....
        ..R..
        """,
        blue=("Tiger", "Crab"), red=("Ox", "Eel"), side="Cobra", to_move=RED,
    )  # fmt: skip
    # Red's pov square is the fixed square: c1 = row 4, col 2 = 22. Ox (card 11) < Eel (14): Ox is slot 0.
    assert state.string_to_action("Ox c1-c2") == 22 * 8 + 0 * 4 + 0
    assert state.string_to_action("Eel c1-b2") == 22 * 8 + 1 * 4 + 0
    state.apply(state.string_to_action("Ox c1-c2"))
    # Blue sees its master on c5 (fixed 2) from its own side: pov square 24 - 2 = 22. Tiger is slot 0.
    assert state.string_to_action("Tiger c5-c3") == 22 * 8 + 0 * 4 + 0


def test_string_to_action_accepts_ids_and_rejects_illegal_moves() -> None:
    state = Onitama(cards="study5").new_initial_state(3)
    action = state.legal_actions()[0]
    assert state.string_to_action(str(action)) == action
    assert state.string_to_action(state.action_to_string(action).lower()) == action
    with pytest.raises(arena.ArenaError):
        state.string_to_action("Tiger a1-a3")
    with pytest.raises(arena.ArenaError):
        state.string_to_action("pass Goose")
    with pytest.raises(arena.ArenaError):
        state.string_to_action("fly away")


def test_position_validation() -> None:
    game = Onitama(cards="study5")
    good = "..B..\n.....\n.....\n.....\n..R.."
    with pytest.raises(arena.ArenaError):
        game.position(good, blue=("Tiger", "Crab"), red=("Ox", "Eel"), side="Cobra", to_move=0)
    with pytest.raises(arena.ArenaError):
        game.position("..B..\n.....\n.....\n.....\n.....", blue=("Dragon", "Goose"), red=("Rooster", "Monkey"),
                      side="Elephant", to_move=0)  # fmt: skip
    assert game.position(good, blue=("Dragon", "Goose"), red=("Rooster", "Monkey"), side="Elephant", to_move=0)


# ---- observation ----


def test_study5_observation_is_the_reports_planes_and_card_vector() -> None:
    state = Onitama(cards="study5").new_initial_state(4)
    for player in (BLUE, RED):
        obs = state.observation(player)
        assert obs.shape == (260,) and obs.dtype == np.float32
        planes = obs[:250].reshape(10, 5, 5)
        assert np.array_equal(planes, state.board_planes(player))
        # The fixed board for both players (as the study): Blue's row 0, Red's row 4, pawns 1-4 on files a, b, d, e.
        own, other = (0, 4) if player == BLUE else (4, 0)
        for pawn, col in enumerate((0, 1, 3, 4)):
            assert planes[pawn, own, col] == 1 and planes[pawn].sum() == 1
            assert planes[5 + pawn, other, col] == 1 and planes[5 + pawn].sum() == 1
        assert planes[4, own, 2] == 1 and planes[9, other, 2] == 1
        cards = obs[250:]
        mine = [STUDY5[i] for i in range(5) if cards[i]]
        theirs = [STUDY5[i] for i in range(5) if cards[5 + i]]
        assert tuple(mine) == state.hands[player] and tuple(theirs) == state.hands[1 - player]


def test_observation_for_all_cards_names_the_side_card() -> None:
    state = Onitama().new_initial_state(9)
    obs = state.observation(RED)
    assert obs.shape == (298,)
    cards = obs[250:]
    assert cards.sum() == 5 and cards[16 + state.side] == 1  # own cards, side card, opponent's (the study's order)
    assert {i for i in range(16) if cards[i]} == set(state.hands[RED])
    assert {i for i in range(16) if cards[32 + i]} == set(state.hands[BLUE])


def test_pov_action_squares_match_observation_planes() -> None:
    """The from-square of every move id (a pov square: turned for Blue) is where the observation shows one of the mover's pieces."""
    rng = random.Random(2)
    state = Onitama().new_initial_state(2)
    for _ in range(30):
        if state.is_terminal():
            break
        planes = state.board_planes(state.current_player)
        own = planes[:5].sum(axis=0)
        for action in state.legal_actions():
            if action < PASS:
                pov = action >> 3
                sq = pov if state.current_player == RED else 24 - pov
                assert own[sq // 5, sq % 5] == 1
        state.apply(rng.choice(state.legal_actions()))


def test_study_piece_actions_map_one_to_one() -> None:
    rng = random.Random(12)
    game = Onitama(cards="study5")
    for seed in range(6):
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            moves = [a for a in legal if a < PASS]
            indices = [state.piece_action(a) for a in moves]
            assert len(set(indices)) == len(indices) and all(0 <= i < 40 for i in indices)
            assert [state.from_piece_action(i) for i in indices] == moves
            for index in set(range(40)) - set(indices):
                with pytest.raises(arena.ArenaError):
                    state.from_piece_action(index)
            state.apply(rng.choice(legal))
    for seed in range(10):
        start = game.new_initial_state(seed)
        corner, temple = ("a1", "c1") if start.current_player == RED else ("a5", "c5")
        for action in start.legal_actions():
            origin = start.action_to_string(action).split()[1][:2]
            if origin == corner:  # pawn 1 starts on file a for both colours (the study's b1 and r1)
                assert start.piece_action(action) // 8 == 0
            if origin == temple:
                assert start.piece_action(action) // 8 == 4


# ---- heuristic ----


def test_heuristic_is_zero_sum_and_large_at_the_end() -> None:
    game = Onitama()
    rng = random.Random(5)
    for seed in range(5):
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            assert game.heuristic(state, 0) == pytest.approx(-game.heuristic(state, 1))
            state.apply(rng.choice(state.legal_actions()))
        winner = 0 if state.returns()[0] > 0 else 1
        assert game.heuristic(state, winner) == 1000 and game.heuristic(state, 1 - winner) == -1000


def test_heuristic_sees_master_threats_and_material() -> None:
    game = Onitama()
    cards = {"blue": ("Crab", "Boar"), "red": ("Ox", "Eel"), "side": "Cobra"}
    threatened = game.position(".....\n..B..\n..R..\n.....\n..r..", **cards, to_move=BLUE)
    assert threatened.can_win_now(BLUE)
    assert game.heuristic(threatened, BLUE) > 50  # Blue to move takes the master next action
    quiet = game.position("..B..\n.....\n.....\nb....\n..R..", **cards, to_move=RED)
    assert game.features(quiet, BLUE)[0] == 1.0  # one pawn up
    assert 0 < game.heuristic(quiet, BLUE) < 50


def test_heuristic_is_the_linear_features_plus_a_side_to_move_bonus() -> None:
    game = Onitama()
    weights = np.array(game.default_weights)
    rng = random.Random(6)
    for seed in range(5):
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            for player in (BLUE, RED):
                f = game.features(state, player)
                mover = state.current_player == player
                bonus = 97.0 * (f[2] and mover) - 97.0 * (f[1] and not mover)
                assert game.heuristic(state, player) == pytest.approx(float(np.dot(weights, f)) + bonus)
            state.apply(rng.choice(state.legal_actions()))


# ---- properties over random legal play ----


def _reference_moves(state: OnitamaState) -> set[str]:
    """The legal moves written out from RULES.md directly: x = file 0..4, y = rank 1..5; Red (bottom)
    applies a card's (dx, dy) as written, Blue (top) applies (-dx, -dy)."""
    p = state.current_player
    sign = 1 if p == RED else -1
    pieces = {}
    for sq, code in enumerate(state.board):
        if code:
            pieces[(sq % 5, 5 - sq // 5)] = code >> 3
    moves = set()
    for (x, y), owner in pieces.items():
        if owner != p + 1:
            continue
        for card in state.hands[p]:
            for dx, dy in CARDS[card][1]:
                tx, ty = x + sign * dx, y + sign * dy
                if 0 <= tx < 5 and 1 <= ty <= 5 and pieces.get((tx, ty)) != p + 1:
                    moves.add(f"{CARD_NAMES[card]} {'abcde'[x]}{y}-{'abcde'[tx]}{ty}")
    return moves


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), cards=st.sampled_from(VARIANTS), choices=st.lists(st.integers(0, 10**6), max_size=120))
def test_random_play_keeps_the_invariants(seed: int, cards: str, choices: list[int]) -> None:
    game = Onitama(cards=cards)
    state = game.new_initial_state(seed)
    in_play = _cards_in_play(state)
    pieces = sum(1 for c in state.board if c)
    for choice in choices:
        if state.is_terminal():
            break
        legal = state.legal_actions()
        names = [state.action_to_string(a) for a in legal]
        assert len(set(names)) == len(legal), "one id per distinct move"
        reference = _reference_moves(state)
        if reference:
            assert set(names) == reference
        else:
            assert legal == [PASS, PASS + 1], "pass only (and always) when no pawn move exists"
        mover = state.current_player
        winning = []
        for action in legal:
            child = state.clone()
            child.apply(action)
            winning.append(child.is_terminal())
        assert state.can_win_now(mover) == any(winning)
        assert state.key() == state.clone().key()
        state.apply(legal[choice % len(legal)])
        assert _cards_in_play(state) == in_play, "the five cards are conserved"
        now = sum(1 for c in state.board if c)
        assert now in (pieces, pieces - 1), "pieces never increase, at most one is captured"
        pieces = now
        masters = [sum(1 for c in state.board if c == (p + 1) * 8 + MASTER) for p in (BLUE, RED)]
        if state.is_terminal():
            assert state.returns()[mover] == 1.0, "only the mover can win"
        else:
            assert masters == [1, 1]
            assert state.current_player == 1 - mover
            assert [state.board[state.masters[p]] for p in (BLUE, RED)] == [8 + MASTER, 16 + MASTER]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 60))
def test_clone_is_independent_and_equal(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    state = Onitama().new_initial_state(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    copy = state.clone()
    assert copy.render() == state.render() and copy.legal_actions() == state.legal_actions()
    before = state.render()
    while not copy.is_terminal():
        copy.apply(rng.choice(copy.legal_actions()))
    assert state.render() == before


# ---- golden play-throughs ----


@pytest.mark.parametrize(
    "name, cards, seed, agents",
    [
        ("onitama_study5_random_greedy", "study5", 11, ("random", "greedy")),
        ("onitama_all_greedy_random", "all", 4, ("greedy", "random")),
        ("onitama_five_random_policy", "Tiger+Crab+Ox+Eel+Cobra", 2, None),
    ],
)
def test_golden_playthrough(name: str, cards: str, seed: int, agents: tuple[str, str] | None) -> None:
    check_golden(name, transcript(Onitama(cards=cards), seed, agents))
