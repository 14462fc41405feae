"""The match runner: turn limit, forfeits of every kind, stored move lists that replay."""

from arena.match import decode_ints, encode_ints, outcomes_from_returns, play_match, replay
from arena.plugins import get_registry
from tests.conftest import TEST_PLUGINS


def _setup(game_id, *agent_ids, **agent_params):
    registry = get_registry([TEST_PLUGINS])
    game = registry.game_class(game_id)()
    agents = [registry.agent_class(a)(game, seat, 7 + seat, **agent_params.get(a, {})) for seat, a in enumerate(agent_ids)]
    return game, agents


def test_turn_limit_is_a_draw_at_exactly_the_limit():
    for limit in (1, 17, 200):
        game, agents = _setup("forever", "random", "random")
        result = play_match(game, agents, seed=1, max_turns=limit)
        assert (result.reason, result.turns, result.outcomes) == ("turn_limit", limit, ["draw", "draw"])
        assert len(result.moves) == limit and sum(result.move_counts) == limit


def test_agent_error_is_a_forfeit_with_the_message():
    game, agents = _setup("connect_four", "random", "raiser", raiser={"after": 2})
    result = play_match(game, agents, seed=3)
    assert result.reason == "agent_error" and result.outcomes == ["win", "loss"]
    assert "boom from raiser" in result.detail and result.turns == 5


def test_illegal_action_is_a_forfeit():
    game, agents = _setup("tic_tac_toe", "illegal", "random")
    result = play_match(game, agents, seed=3)
    assert result.reason == "illegal_action" and result.outcomes == ["loss", "win"] and "10000" in result.detail


def test_timeout_is_a_forfeit():
    game, agents = _setup("tic_tac_toe", "random", "sleeper", sleeper={"seconds": 0.5})
    result = play_match(game, agents, seed=3, time_per_move=0.3)
    assert result.reason == "timeout" and result.outcomes == ["win", "loss"] and result.turns == 1


def test_moves_roundtrip_and_replay():
    game, agents = _setup("connect_four", "random", "greedy")
    result = play_match(game, agents, seed=11)
    assert decode_ints(encode_ints(result.moves)) == result.moves
    assert decode_ints(encode_ints([70000, 1])) == [70000, 1]
    steps = replay(game, 11, result.moves)
    assert len(steps) == result.turns and steps[-1][3].is_terminal()


def test_ranks_and_outcomes():
    assert outcomes_from_returns([1, -1]) == ([1, 2], ["win", "loss"])
    assert outcomes_from_returns([0, 0]) == ([1, 1], ["draw", "draw"])
    assert outcomes_from_returns([5, 9, 9, 1]) == ([3, 1, 1, 4], ["loss", "draw", "draw", "loss"])


def test_an_agent_that_changes_the_state_it_is_given_changes_only_its_copy():
    import pytest

    from arena.testing import check_agent

    game, agents = _setup("connect_four", "meddler", "random")
    result = play_match(game, agents, seed=3)
    state = game.new_initial_state(3)
    for action in result.moves:
        state.apply(action)
    assert result.reason == "normal" and state.is_terminal() and [float(r) for r in state.returns()] == result.scores
    registry = get_registry([TEST_PLUGINS])
    with pytest.raises(AssertionError, match="changed the state"):
        check_agent(registry.agents["meddler"], game)
