"""The public conformance suite over every registered game and agent."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.plugins import get_registry
from arena.testing import agent_problems, check_agent, check_game, check_position, positions
from tests._bots import push_bot
from tests.conftest import TEST_PLUGINS

REGISTRY = get_registry()
# Search agents get small budgets here: conformance is about legality and determinism, not strength.
FAST_PARAMS = {"mcts": {"simulations": 20}, "minimax": {"depth": 1}}


@pytest.mark.parametrize("game_id", sorted(REGISTRY.games))
def test_game_conforms(game_id):
    check_game(REGISTRY.games[game_id](), seeds=range(10))


@pytest.mark.parametrize("game_id", sorted(REGISTRY.games))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_position_keeps_the_contract(game_id, data):
    """Positions Hypothesis draws (and shrinks: a failure prints the seed and the fewest actions that reach it)."""
    check_position(data.draw(positions(REGISTRY.games[game_id]())))


# `human` reads a person's moves: tests/test_remote_check.py plays it through standard input instead.
LOCAL_AGENTS = sorted(a for a in REGISTRY.agents if a != "human" and not REGISTRY.agents[a].remote)


@pytest.fixture(scope="module")
def example_bot_url():
    with push_bot() as url:
        yield url


@pytest.mark.parametrize("game_id", sorted(REGISTRY.games))
def test_remote_agent_conforms_with_the_example_bot(game_id, example_bot_url):
    """Agent type `http` on every game, against examples/remote/push_bot.py (a random bot: not deterministic)."""
    game = REGISTRY.games[game_id]()
    assert agent_problems(REGISTRY.agents["http"], game, {"url": example_bot_url}, seeds=range(2), deterministic=False) == []


@pytest.mark.parametrize("agent_id", LOCAL_AGENTS)
@pytest.mark.parametrize("game_id", sorted(REGISTRY.games))
def test_agent_conforms(agent_id, game_id, tmp_path):
    game = REGISTRY.games[game_id]()
    agent_cls = REGISTRY.agents[agent_id]
    params = dict(FAST_PARAMS.get(agent_id, {}))
    if agent_id == "neural":  # it plays a checkpoint: an untrained one made for this game
        from agents.neural import init_checkpoint

        params["checkpoint"] = str(init_checkpoint(game, tmp_path / "net.npz", hidden=(16,)))
    try:
        agent_cls.check_game(game, params)
    except ArenaError as exc:
        pytest.skip(f"{agent_id} does not play {game_id}: {exc}")
    check_agent(agent_cls, game, params, seeds=range(2))


def test_example_and_fixture_plugins_conform():
    registry = get_registry([TEST_PLUGINS])
    game = registry.games["connect_four"]()
    check_agent(registry.agents["center"], game)
    forever = registry.games["forever"]()
    check_game(forever, seeds=range(2))
