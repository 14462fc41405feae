"""Gwent Lite: conformance, decks, hand-built positions, rule properties, the greedy rule, golden play-throughs."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import TERMINAL, ArenaError
from arena.match import play_match
from arena.plugins import get_registry
from arena.seeding import derive_seed
from arena.testing import check_agent, check_game
from games.gwent_lite import PASS, GwentLite, GwentLiteState, random_deck, rule_choice
from tests._golden import check_golden, transcript

REGISTRY = get_registry()
FLAT = "+".join(["4"] * 25)  # 25 fours: 100
SKEWED = "+".join(["1"] * 24 + ["76"])  # the largest legal card
LONG = "+".join(["2"] * 20 + ["3"] * 20)  # 40 cards, sum 100


def position(
    hands: Sequence[Sequence[int]], *, totals: Sequence[int] = (0, 0), active: Sequence[bool] = (True, True),
    wins: Sequence[int] = (0, 0), to_move: int = 0, first_starter: int = 0, decks: Sequence[Sequence[int]] = ((), ()),
) -> GwentLiteState:  # fmt: skip
    """A position built by hand: nothing played yet, each deck list is what the hand and deck hold."""
    state = GwentLite(deck0=FLAT, deck1=FLAT).new_initial_state(0)
    state.hands = [list(hands[0]), list(hands[1])]
    state.decks = [list(decks[0]), list(decks[1])]
    state.decklists = (tuple(sorted([*hands[0], *decks[0]])), tuple(sorted([*hands[1], *decks[1]])))
    state.totals = list(totals)
    state.active = list(active)
    state.wins = list(wins)
    state.current_player = to_move
    state.first_starter = first_starter
    return state


# ---- conformance ----


@pytest.mark.parametrize("params", [{}, {"deck0": FLAT}, {"deck0": SKEWED, "deck1": LONG}])
def test_conformance(params: dict) -> None:
    check_game(GwentLite(**params), seeds=range(10))


@pytest.mark.parametrize("agent_id", ["random", "greedy"])
@pytest.mark.parametrize("params", [{}, {"deck0": FLAT, "deck1": SKEWED}])
def test_agents_conform(agent_id: str, params: dict) -> None:
    check_agent(REGISTRY.agents[agent_id], GwentLite(**params), seeds=range(2))


def test_metadata() -> None:
    game = GwentLite()
    assert (game.info.min_players, game.info.max_players, game.num_players) == (2, 2, 2)
    assert not game.info.perfect_information and game.info.stochastic
    assert game.num_distinct_actions == 11
    assert game.max_game_length() == 38  # (16 cards + 3 passes) per seat


# ---- decks ----


def test_random_decks_are_legal_and_seeded() -> None:
    for seed in range(200):
        deck = random_deck(random.Random(seed))
        assert len(deck) == 25 and sum(deck) == 100 and min(deck) >= 1
    one, two = GwentLite().new_initial_state(5), GwentLite().new_initial_state(5)
    assert one.decklists == two.decklists and one.hands == two.hands and one.decks == two.decks
    assert GwentLite().new_initial_state(6).decklists != one.decklists


def test_explicit_decks() -> None:
    state = GwentLite(deck0=FLAT, deck1=LONG).new_initial_state(3)
    assert state.decklists == (tuple([4] * 25), tuple([2] * 20 + [3] * 20))
    assert Counter(state.hands[1] + state.decks[1]) == Counter([2] * 20 + [3] * 20)
    assert len(state.hands[0]) == len(state.hands[1]) == 10
    assert GwentLite(deck0=FLAT).label() == f"gwent_lite:deck0={FLAT}"


@pytest.mark.parametrize(
    ("deck", "message"),
    [("4+4", "at least 25"), ("+".join(["4"] * 24 + ["0"]), ">= 1"), ("+".join(["5"] * 25), "at most 100"),
     ("4,4", "joined by '+'"), ("x+" + FLAT, "joined by '+'")],
)  # fmt: skip
def test_bad_decks_are_refused_clearly(deck: str, message: str) -> None:
    with pytest.raises(ArenaError, match="deck1") as error:
        GwentLite(deck1=deck)
    assert message in str(error.value)


def test_round_one_starter_is_drawn_from_the_seed() -> None:
    starters = {GwentLite().new_initial_state(seed).current_player for seed in range(20)}
    assert starters == {0, 1}


# ---- actions ----


def test_legal_actions_are_pass_and_the_hand_only() -> None:
    state = position([[5, 3, 2], [1] * 10])
    assert state.legal_actions() == [0, 1, 2, 3]
    state.current_player = 1
    assert state.legal_actions() == list(range(11))


def test_action_strings() -> None:
    state = position([[5, 3, 2, 3], [1]])
    assert [state.action_to_string(a) for a in state.legal_actions()] == [
        "pass", "play 5 (slot 1)", "play 3 (slot 2)", "play 2 (slot 3)", "play 3 (slot 4)",
    ]  # fmt: skip
    assert state.string_to_action("pass") == PASS
    assert state.string_to_action("play 3 (slot 4)") == 4
    assert state.string_to_action("slot 2") == 2 and state.string_to_action("play 3") == 2
    assert state.string_to_action("3") == 3
    for bad in ("play 9", "slot 7", "play 2 (slot 1)", "dance"):
        with pytest.raises(ArenaError):
            state.string_to_action(bad)


# ---- hand-built positions ----


def test_turns_alternate_and_the_last_card_takes_a_player_out() -> None:
    state = position([[5, 3], [4]], decks=([1, 1, 1], [2, 2, 2]))
    state.apply(1)  # P0 plays 5
    assert state.totals == [5, 0] and state.hands[0] == [3] and state.current_player == 1
    state.apply(1)  # P1 plays its last card: out
    assert state.active == [True, False] and state.current_player == 0
    state.apply(1)  # P0 plays its last card: both out, the round ends
    assert state.round == 2 and state.wins == [1, 0] and state.round_results == [(8, 4)]


def test_a_tie_counts_for_both_and_the_other_starter_begins() -> None:
    state = position([[5, 1], [5, 1]], decks=([9, 9, 9], [8, 8, 8]), first_starter=0)
    state.apply(1)  # P0: 5
    state.apply(1)  # P1: 5
    state.apply(PASS)
    state.apply(PASS)
    assert state.wins == [1, 1] and state.round == 2
    assert state.current_player == 1  # after a tie, the player who did not start round 1
    assert state.hands == [[1, 9, 9, 9], [1, 8, 8, 8]]  # 3 cards drawn each, from the top (end)


def test_the_round_winner_starts_and_draws_stop_at_ten() -> None:
    state = position([[1] * 9, [7]], decks=([2, 3, 4], [5, 6, 7, 8]), first_starter=0)
    state.apply(PASS)  # P0 passes at 0
    state.apply(1)  # P1 plays 7 and is out: P1 wins the round
    assert state.wins == [0, 1] and state.current_player == 1
    assert state.hands[0] == [1] * 9 + [4]  # only one card fits in P0's hand
    assert state.hands[1] == [8, 7, 6]


def test_a_double_win_at_once_is_a_draw() -> None:
    state = position([[3], [3]], wins=(1, 1))
    state.apply(1)
    state.apply(1)
    assert state.is_terminal() and state.current_player == TERMINAL
    assert state.wins == [2, 2] and state.returns() == [0.0, 0.0]


def test_two_round_wins_win_the_game() -> None:
    state = position([[4], [3]], wins=(1, 0))
    state.apply(1)
    state.apply(1)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    state = position([[2], [3]], wins=(1, 1), to_move=1)
    state.apply(1)
    state.apply(1)
    assert state.returns() == [-1.0, 1.0]


def test_render_and_observation() -> None:
    state = position([[5, 3, 2], [4, 4]], totals=(6, 2))
    text = state.render()
    assert "hand [5 3 2]" in text and "hand [4 4]" in text and "total   6" in text
    view = state.view(0)
    assert "hand [5 3 2]" in view.render() and "hand [? ?]" in view.render()
    obs = state.observation(0)
    assert obs.shape == (102,)
    assert obs[76] == pytest.approx(5 / 76) and obs[79] == 0.0  # own hand, then empty slots


# ---- properties ----


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**40), pass_bias=st.floats(0.0, 0.6), explicit=st.booleans())
def test_rules_properties(seed: int, pass_bias: float, explicit: bool) -> None:
    game = GwentLite(deck0=LONG, deck1=SKEWED) if explicit else GwentLite()
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    steps = 0
    while not state.is_terminal():
        assert state.active[state.current_player]
        for p in (0, 1):
            assert len(state.hands[p]) <= 10
            # Every card is in the deck, in hand or played.
            assert Counter(state.decks[p] + state.hands[p] + state.played[p]) == Counter(state.decklists[p])
            assert state.totals[p] == sum(state.on_table[p])
        assert state.round <= 3
        legal = state.legal_actions()
        assert legal == list(range(len(state.hands[state.current_player]) + 1))
        state.apply(PASS if rng.random() < pass_bias else rng.choice(legal))
        steps += 1
    assert steps <= game.max_game_length()
    assert len(state.round_results) <= 3
    # Round wins follow from the round totals, a tie counting for both.
    for p in (0, 1):
        assert state.wins[p] == sum(1 for result in state.round_results if result[p] >= result[1 - p])
    assert max(state.wins) == 2
    expected = 0.0 if state.wins[0] == state.wins[1] else (1.0 if state.wins[0] > state.wins[1] else -1.0)
    assert state.returns() == [expected, -expected]


# ---- the greedy rule ----


def greedy_action(state: GwentLiteState, seed: int = 0) -> int:
    agent = REGISTRY.agents["greedy"](GwentLite(), state.current_player, seed)
    return agent.act(state.view(state.current_player))


def test_rule_choice() -> None:
    assert rule_choice(10, 4, False, [1, 5], 0, 0) == PASS  # round already won
    assert rule_choice(10, 4, True, [3, 1, 5], 0, 0) == 1  # ahead, opponent in: cheapest pressure
    assert rule_choice(4, 10, False, [9, 7, 2, 8], 0, 0) == 7  # the smallest card that takes the lead
    assert rule_choice(4, 10, True, [2, 3, 2], 0, 0) == 3  # none takes it alone: the biggest
    assert rule_choice(0, 30, True, [2, 3, 2], 0, 0) == PASS  # cannot win this round: save the cards
    assert rule_choice(0, 7, False, [2, 3, 2], 1, 0) == 3  # the whole hand ties, and a tie wins the game
    assert rule_choice(0, 7, False, [2, 3, 2], 0, 0) == PASS  # a tie that would only cost cards


def test_greedy_agent_plays_the_rule() -> None:
    # The opponent is out at 10: play the 7 (slot 3), the smallest card that takes the lead.
    state = position([[9, 2, 7, 8], [4, 4]], totals=(4, 10), active=(True, False))
    assert all(greedy_action(state, s) == 3 for s in range(5))
    # The round is won: pass.
    state = position([[9, 2, 7, 8], [4, 4]], totals=(12, 10), active=(True, False))
    assert all(greedy_action(state, s) == PASS for s in range(5))
    # Hopeless: pass and keep the cards.
    state = position([[1, 2], [4, 4]], totals=(0, 20), active=(True, False))
    assert all(greedy_action(state, s) == PASS for s in range(5))


def test_greedy_follows_the_rule_through_the_agent() -> None:
    """Apart from immediate wins and blocks the agent's card is the one `rule_choice` picks."""
    game = GwentLite()
    agent_cls = REGISTRY.agents["greedy"]
    agree = total = 0
    for seed in range(30):
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            me = state.current_player
            if state.wins == [0, 0]:  # no immediate wins or losses to take first
                hand = state.hands[me]
                wanted = rule_choice(state.totals[me], state.totals[1 - me], state.active[1 - me], hand, 0, 0)
                action = agent_cls(game, me, seed).act(state.view(me))
                played = hand[action - 1] if action else PASS
                agree += played == wanted
                total += 1
            state.apply(rng.choice(state.legal_actions()))
    assert total > 100 and agree == total


def test_greedy_beats_random() -> None:
    game = GwentLite()
    greedy, rand = REGISTRY.agents["greedy"], REGISTRY.agents["random"]
    wins = 0
    matches = 80
    for match in range(matches):
        seat = match % 2
        agents = [(greedy if p == seat else rand)(game, p, derive_seed(match, p)) for p in range(2)]
        result = play_match(game, agents, derive_seed("greedy-vs-random", match))
        assert result.reason == "normal"
        wins += result.outcomes[seat] == "win"
    assert wins / matches > 0.8


# ---- golden play-throughs ----


def test_golden_random_policy() -> None:
    check_golden("gwent_lite_random_policy", transcript(GwentLite(), seed=4))


def test_golden_greedy_vs_random_explicit_decks() -> None:
    game = GwentLite(deck0=LONG, deck1="+".join(["1"] * 10 + ["3"] * 10 + ["10"] * 5))
    check_golden("gwent_lite_greedy_random_explicit", transcript(game, 2, ("greedy", "random")))
