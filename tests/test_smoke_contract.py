from arena.plugins import get_registry
from arena.testing import check_agent, check_game


def test_builtins_conform():
    reg = get_registry()
    for game_cls in reg.games.values():
        game = game_cls()
        check_game(game)
        for agent_cls in reg.agents.values():
            check_agent(agent_cls, game)
