"""Incan Gold: conformance, hand-built positions, rule properties, the greedy evaluation, golden play-throughs."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import TERMINAL, ArenaError
from arena.match import outcomes_from_returns, play_match
from arena.plugins import get_registry
from arena.seeding import derive_seed
from arena.testing import check_agent, check_game
from games.incan_gold import (
    ARTIFACT,
    HAZARD,
    LEAVE,
    STAY,
    IncanGold,
    IncanGoldState,
    current_record,
    decision_value,
    is_artifact,
    is_hazard,
)  # fmt: skip
from tests._golden import check_golden, transcript

REGISTRY = get_registry()
FIRE, MUMMY, ROCKS, SNAKES, SPIDERS = (HAZARD + h for h in range(5))
ART1, ART2, ART3, ART4, ART5 = (ARTIFACT + i for i in range(5))


def position(
    players: int = 3, *, path: Sequence[int] = (), path_gems: int = 0, round_gems: Sequence[int] | None = None,
    gems: Sequence[int] | None = None, deck: Sequence[int] = (), inside: Sequence[bool] | None = None,
    round: int = 1, **params: str,
) -> IncanGoldState:  # fmt: skip
    """A decision turn built by hand; `deck` is listed bottom first (its last card is revealed next)."""
    state = IncanGold(players=players, **params).new_initial_state(0)
    state.round = round
    state.path = list(path)
    state.path_gems = path_gems
    state.deck = list(deck)
    state.inside = list(inside) if inside is not None else [True] * players
    state.round_gems = list(round_gems) if round_gems is not None else [0] * players
    state.gems = list(gems) if gems is not None else [0] * players
    state.choices = [None] * players
    state.current_player = state.inside.index(True)
    return state


def play(state: IncanGoldState, *actions: int) -> IncanGoldState:
    for action in actions:
        state.apply(action)
    return state


# ---- conformance ----


@pytest.mark.parametrize(
    "params",
    [{}, {"players": 4}, {"players": 6, "artifacts": "2020"}, {"players": 8},
     {"players": 5, "treasures": "bga", "unclaimed": "returned", "tiebreak": "artifacts"}],
)  # fmt: skip
def test_conformance(params: dict) -> None:
    check_game(IncanGold(**params), seeds=range(8))


@pytest.mark.parametrize("agent_id", ["random", "greedy"])
@pytest.mark.parametrize("players", [3, 6])
def test_agents_conform(agent_id: str, players: int) -> None:
    check_agent(REGISTRY.agents[agent_id], IncanGold(players=players), seeds=range(2), max_turns=2000)


def test_metadata_and_parameters() -> None:
    game = IncanGold()
    assert (game.info.min_players, game.info.max_players, game.num_players) == (3, 8, 3)
    assert not game.info.perfect_information and game.info.stochastic
    assert game.num_distinct_actions == 2
    assert IncanGold(players=8).num_players == 8
    for bad in ({"players": 2}, {"players": 9}, {"treasures": "mine"}, {"artifacts": "2010"}, {"unclaimed": "kept"}):
        with pytest.raises(ArenaError):
            IncanGold(**bad)
    # Every turn follows a card that did not end the round; in round r at most 15 treasures, r artifacts
    # and 5 first hazards: (75 + 15 + 25) turns of at most one action per player.
    assert IncanGold().max_game_length() == 115 * 3
    assert IncanGold(players=8, treasures="bga").max_game_length() == 110 * 8


def test_deck_contents() -> None:
    state = IncanGold().new_initial_state(4)
    cards = Counter(state.deck + state.path)
    assert sum(cards[c] for c in cards if c < HAZARD) == 15
    assert sorted(c for c in cards.elements() if c < HAZARD) == [1, 2, 3, 4, 5, 5, 7, 7, 9, 11, 11, 13, 14, 15, 17]
    assert all(cards[HAZARD + h] == 3 for h in range(5))
    assert [c for c in cards if is_artifact(c)] == [ART1]  # one artifact shuffled in for round 1
    bga = IncanGold(treasures="bga").new_initial_state(4)
    assert len(bga.deck) + len(bga.path) == 30 and 17 not in bga.deck + bga.path  # chiamp's 30-card round-1 deck


def test_actions_and_strings() -> None:
    state = IncanGold().new_initial_state(1)
    assert state.legal_actions() == [LEAVE, STAY]
    assert [state.action_to_string(a) for a in (0, 1)] == ["leave", "stay"]
    assert state.string_to_action("leave") == LEAVE and state.string_to_action(" Stay ") == STAY
    assert state.string_to_action("1") == STAY
    with pytest.raises(ArenaError):
        state.string_to_action("run")


def test_same_seed_same_match() -> None:
    game = IncanGold(players=5)
    one, two = game.new_initial_state(9), game.new_initial_state(9)
    rng = random.Random(1)
    while not one.is_terminal():
        action = rng.choice(one.legal_actions())
        one.apply(action)
        two.apply(action)
        assert one.render() == two.render()
    assert one.returns() == two.returns()


# ---- hand-built positions ----


def test_first_card_is_revealed_with_everyone_inside() -> None:
    state = IncanGold(players=4).new_initial_state(3)
    assert len(state.path) == 1 and all(state.inside) and state.current_player == 0


def test_choices_are_taken_in_turn_by_players_inside_only() -> None:
    state = position(4, path=[5], inside=[False, True, False, True], deck=[3, 3])
    assert state.current_player == 1
    state.apply(STAY)
    assert state.current_player == 3
    state.apply(STAY)  # the last choice resolves the turn and reveals the next card
    assert state.path == [5, 3] and state.current_player == 1
    assert state.round_gems == [0, 1, 0, 1] and state.path_gems == 1


def test_treasure_split_leaves_remainder_on_path() -> None:
    state = position(3, path=[1], deck=[11])
    play(state, STAY, STAY, STAY)
    assert state.round_gems == [3, 3, 3] and state.path_gems == 2


def test_artifact_goes_to_a_lone_leaver() -> None:
    state = position(3, path=[5, ART1, 7], path_gems=3, round_gems=[4, 4, 4], deck=[2, 9])
    play(state, LEAVE, STAY, STAY)
    assert state.gems == [7, 0, 0]  # round gems + all 3 path gems
    assert state.artifact_points == [5, 0, 0] and state.artifacts_held[0] == [ART1]
    assert ART1 not in state.path and state.artifacts_taken == 1
    assert state.inside == [False, True, True]
    assert state.round_gems == [0, 8, 8] and state.path_gems == 1  # the 9 split between the two inside
    assert state.current_player == 1


def test_no_artifact_when_two_leave() -> None:
    state = position(3, path=[5, ART1, 7], path_gems=3, round_gems=[4, 4, 4], deck=[2, 9])
    play(state, LEAVE, LEAVE, STAY)
    assert state.gems == [5, 5, 0]  # 3 path gems split: 1 each, 1 stays on the path
    assert state.artifact_points == [0, 0, 0] and ART1 in state.path
    assert state.path_gems == 1 + 0  # the remainder, then the 9 all to the one inside
    assert state.round_gems == [0, 0, 13]


def test_leavers_split_path_remainders() -> None:
    state = position(4, path=[5, 7], path_gems=7, round_gems=[2, 2, 2, 2], deck=[9, 4])
    play(state, LEAVE, STAY, LEAVE, LEAVE)
    assert state.gems == [4, 0, 4, 4] and state.path_gems == 1 + 0  # 7 // 3 = 2 each, 1 stays
    assert state.round_gems[1] == 2 + 4  # the next card (4) all to the one inside


def test_everyone_leaving_ends_the_round_and_abandons_the_remainder() -> None:
    state = position(3, path=[5, 7], path_gems=7, round_gems=[1, 1, 1], deck=[9, 4])
    play(state, LEAVE, LEAVE, LEAVE)
    assert state.gems == [3, 3, 3] and state.gems_abandoned == 1
    assert state.round == 2 and all(state.inside) and len(state.path) == 1


def test_second_hazard_busts_the_players_inside() -> None:
    state = position(3, path=[FIRE, 5], path_gems=2, round_gems=[1, 1, 1], gems=[10, 10, 10], deck=[3, FIRE, FIRE])
    play(state, LEAVE, STAY, STAY)
    assert state.gems == [13, 10, 10]  # the leaver banked round gems and the path
    assert state.gems_lost == 2  # the two stayers' round gems
    assert state.removed == [FIRE]  # the second fire leaves the game
    assert state.round == 2  # and the round is over
    assert Counter(state.deck + state.path)[FIRE] == 2


def test_first_hazard_of_a_kind_does_nothing() -> None:
    state = position(3, path=[FIRE], round_gems=[1, 1, 1], deck=[MUMMY])
    play(state, STAY, STAY, STAY)
    assert state.round == 1 and state.path == [FIRE, MUMMY] and state.round_gems == [1, 1, 1]


def test_artifact_values_2006_and_2020() -> None:
    state = position(3, path=[ART2, ART3], deck=[1, 1])
    state.artifacts_taken = 2
    play(state, LEAVE, STAY, STAY)
    assert state.artifact_points[0] == 5 + 10  # the third artifact taken is worth 5, the fourth 10
    state = position(3, path=[ART2, ART3], deck=[1, 1], artifacts="2020")
    play(state, STAY, LEAVE, STAY)
    assert state.artifact_points[1] == 7 + 8


@pytest.mark.parametrize("unclaimed", ["removed", "returned"])
def test_unclaimed_artifact_at_round_end(unclaimed: str) -> None:
    state = position(3, path=[ART1, 4], deck=[2, 3], unclaimed=unclaimed)
    play(state, LEAVE, LEAVE, LEAVE)
    assert state.round == 2
    held = state.deck + state.path
    if unclaimed == "removed":
        assert ART1 in state.removed and ART1 not in held
    else:
        assert ART1 not in state.removed and ART1 in held
    assert ART2 in held  # round 2's artifact was shuffled in


def test_last_round_ends_the_game_with_scores_as_returns() -> None:
    state = position(3, path=[5], round_gems=[1, 1, 1], gems=[10, 20, 10], deck=[2, 3], round=5)
    state.artifact_points = [5, 0, 0]
    play(state, LEAVE, LEAVE, LEAVE)
    assert state.is_terminal() and state.current_player == TERMINAL and state.legal_actions() == []
    assert state.returns() == [16.0, 21.0, 11.0]
    tied = position(3, path=[5], gems=[10, 10, 15], deck=[2], round=5, tiebreak="artifacts")
    tied.artifact_points = [5, 5, 0]
    tied.artifacts_held = [[ART1], [], []]
    play(tied, LEAVE, LEAVE, LEAVE)
    assert tied.returns() == [15.1, 15.0, 15.0]


def test_ties_share_a_rank() -> None:
    game = IncanGold()
    state = position(3, path=[5], gems=[10, 10, 4], deck=[2], round=5)
    play(state, LEAVE, LEAVE, LEAVE)
    assert outcomes_from_returns(state.returns()) == ([1, 1, 3], ["draw", "draw", "loss"])
    assert game.num_players == 3


def test_render_shows_public_facts_but_never_pending_choices() -> None:
    state = position(3, path=[FIRE, 5], path_gems=2, round_gems=[1, 2, 3], deck=[3, 4])
    before = state.render()
    state.apply(LEAVE)
    assert state.render() == before.replace("*P0", " P0").replace(" P1:", "*P1:")
    assert "fire" in before and "gems on path: 2" in before and "inside" in before
    play(state, STAY, STAY)
    assert "P0:leave P1:stay P2:stay" in state.render()  # revealed once everyone has chosen


def test_observation_is_from_the_players_point_of_view() -> None:
    state = position(4, path=[FIRE, 5], path_gems=2, round_gems=[1, 2, 3, 4], deck=[3, 4])
    assert state.observation(0).shape == (4 * 4 + 36,)
    assert state.observation(2)[0] == pytest.approx(3 / 20)  # own round gems come first
    before = [state.observation(p) for p in range(4)]
    state.apply(LEAVE)
    after = [state.observation(p) for p in range(4)]
    assert (before[1] == after[1]).all() and (before[2] == after[2]).all()  # P0's choice is not visible
    assert not (before[0] == after[0]).all()  # but P0 knows its own


# ---- properties ----


def gem_total(state: IncanGoldState) -> int:
    return state.path_gems + sum(state.round_gems) + sum(state.gems) + state.gems_lost + state.gems_abandoned


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(3, 8), seed=st.integers(0, 2**40), stay_bias=st.floats(0.3, 0.95),
    unclaimed=st.sampled_from(["removed", "returned"]), treasures=st.sampled_from(["official", "bga"]),
)  # fmt: skip
def test_rules_properties(players: int, seed: int, stay_bias: float, unclaimed: str, treasures: str) -> None:
    game = IncanGold(players=players, unclaimed=unclaimed, treasures=treasures)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    steps = 0
    while not state.is_terminal():
        player = state.current_player
        assert state.inside[player] and state.choices[player] is None  # a player outside never acts
        hazards = [c for c in state.path if is_hazard(c)]
        assert len(hazards) == len(set(hazards))  # never two of a kind on the path
        round_before, removed_before = state.round, len(state.removed)
        state.apply(STAY if rng.random() < stay_bias else LEAVE)
        steps += 1
        # Conservation: every gem revealed is on the path, with a player, lost to a hazard or abandoned.
        assert gem_total(state) == state.gems_revealed
        # Artifacts: one per round so far, each in the deck, on the path, held, or removed.
        artifacts = [c for c in state.deck + state.path + state.removed if is_artifact(c)]
        artifacts += [c for held in state.artifacts_held for c in held]
        assert sorted(artifacts) == [ARTIFACT + i for i in range(min(state.round, 5))]
        new_hazards = [c for c in state.removed[removed_before:] if is_hazard(c)]
        if new_hazards:  # a second hazard ended the round at once
            assert len(new_hazards) == 1 and (state.round == round_before + 1 or state.is_terminal())
        cards = state.deck + state.path + state.removed + [c for held in state.artifacts_held for c in held]
        assert len([c for c in cards if not is_artifact(c)]) == len(game.config.treasures) + 15
    assert steps <= game.max_game_length()
    assert state.round == 5
    assert state.returns() == [float(g + a) for g, a in zip(state.gems, state.artifact_points)]


# ---- the greedy evaluation ----


def greedy_action(state: IncanGoldState, seed: int = 0) -> int:
    game = IncanGold(players=state.num_players)
    agent = REGISTRY.agents["greedy"](game, state.current_player, seed)
    return agent.act(state.view(state.current_player))


def test_greedy_leaves_when_the_expected_loss_exceeds_the_gain() -> None:
    # Fire, mummy and rocks are out and 6 of their copies lie in a 10-card deck: a bust is 60% likely.
    deck = [FIRE, FIRE, MUMMY, MUMMY, ROCKS, ROCKS, 1, 2, 3, 4]
    risky = position(3, path=[FIRE, MUMMY, ROCKS, 9], round_gems=[12, 12, 12], deck=deck)
    assert all(greedy_action(risky, s) == LEAVE for s in range(5))
    # Nothing at stake yet: staying can only gain.
    safe = position(3, path=[FIRE, MUMMY, ROCKS], deck=deck)
    assert all(greedy_action(safe, s) == STAY for s in range(5))
    # A rich path and no hazard on it: staying is free of risk.
    rich = position(3, path=[15, 17], path_gems=4, round_gems=[10, 10, 10], deck=[5, 9, FIRE, SNAKES])
    assert all(greedy_action(rich, s) == STAY for s in range(5))


def test_decision_value_is_gain_minus_loss() -> None:
    game = IncanGold()
    state = position(3, path=[FIRE, 5], path_gems=2, round_gems=[3, 3, 3], gems=[7, 0, 0], deck=[FIRE, 6, 9, 12])
    record = current_record(state)
    leave = decision_value(game.config, record, 0, LEAVE)
    stay = decision_value(game.config, record, 0, STAY)
    assert leave == 7 + 3 + 2
    gain = (6 // 3 + 9 // 3 + 12 // 3) / 4
    loss = 1 / 4 * (3 + 2)
    assert stay == pytest.approx(leave + gain - loss)


def test_greedy_plays_the_evaluation_through_the_agent() -> None:
    """In rounds 1-4 the greedy agent's choice is the one `decision_value` prefers (unless equal)."""
    game = IncanGold(players=4)
    agent_cls = REGISTRY.agents["greedy"]
    checked = 0
    for seed in range(12):
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal() and state.round < 5:
            player = state.current_player
            record = current_record(state)
            leave = decision_value(game.config, record, player, LEAVE)
            stay = decision_value(game.config, record, player, STAY)
            if leave != stay:
                chosen = agent_cls(game, player, seed).act(state.view(player))
                assert chosen == (STAY if stay > leave else LEAVE)
                checked += 1
            state.apply(rng.choice([LEAVE, STAY, STAY]))
    assert checked > 100


@pytest.mark.parametrize("players", [3, 4, 6])
def test_greedy_ranks_ahead_of_random(players: int) -> None:
    game = IncanGold(players=players)
    greedy, rand = REGISTRY.agents["greedy"], REGISTRY.agents["random"]
    greedy_ranks: list[int] = []
    random_ranks: list[int] = []
    for match in range(45):
        seat = match % players
        agents = [(greedy if p == seat else rand)(game, p, derive_seed(match, p)) for p in range(players)]
        result = play_match(game, agents, derive_seed("greedy-vs-random", players, match), max_turns=2000)
        assert result.reason == "normal"
        greedy_ranks.append(result.ranks[seat])
        random_ranks += [r for p, r in enumerate(result.ranks) if p != seat]
    greedy_mean = sum(greedy_ranks) / len(greedy_ranks)
    random_mean = sum(random_ranks) / len(random_ranks)
    assert greedy_mean < 1.5 < random_mean, (greedy_mean, random_mean)


# ---- golden play-throughs ----


def test_golden_random_policy() -> None:
    check_golden("incan_gold_random_policy_3p", transcript(IncanGold(), seed=3))


def test_golden_greedy_vs_random_2020() -> None:
    game = IncanGold(players=4, artifacts="2020")
    check_golden("incan_gold_greedy_random_4p_2020", transcript(game, 11, ("greedy", "random", "random", "random")))
