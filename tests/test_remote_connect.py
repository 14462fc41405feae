"""`arena connect`'s pieces without a server: positions rebuilt from their JSON view, messages answered."""

from __future__ import annotations

import json
import random

import pytest

from arena.errors import ArenaError
from arena.plugins import get_registry
from arena.remote import protocol
from arena.remote.connect import Connector, websocket_url

REGISTRY = get_registry()
REBUILDABLE = ["connect_four", "tic_tac_toe", "reversi", "dots_and_boxes"]


@pytest.mark.parametrize("game_id", REBUILDABLE)
def test_state_from_json_rebuilds_every_position_of_random_matches(game_id: str) -> None:
    """The rebuilt state has the same view, legal moves and continuation (moves, end, returns) as the real one."""
    game = REGISTRY.game_class(game_id)()
    rng = random.Random(7)
    for match in range(20):
        state = game.new_initial_state(match)
        while not state.is_terminal():
            seat = state.current_player
            rebuilt = game.state_from_json(json.loads(json.dumps(state.to_json(seat))), seat)
            assert rebuilt.current_player == seat and rebuilt.legal_actions() == state.legal_actions()
            assert rebuilt.to_json(seat) == state.to_json(seat)
            action = rng.choice(state.legal_actions())
            state.apply(action)
            rebuilt.apply(action)
            assert rebuilt.is_terminal() == state.is_terminal()
        assert rebuilt.returns() == state.returns()


def test_games_without_it_say_so() -> None:
    game = REGISTRY.game_class("gwent_lite")()
    with pytest.raises(NotImplementedError, match="gwent_lite"):
        game.state_from_json({}, 0)


def test_connector_answers_acts_with_the_agent_move() -> None:
    game = REGISTRY.game_class("connect_four")()
    connector = Connector(REGISTRY, "minimax:depth=2")
    state = game.new_initial_state(0)
    for action in (0, 6, 1, 6, 2):  # seat 0 threatens 0-1-2-3 on the bottom row: seat 1 must block at 3
        state.apply(action)
    assert connector.handle(json.dumps(protocol.start_message(game, "m1", 1, 1000.0))) is None
    answer = json.loads(connector.handle(json.dumps(protocol.act_message(game, "m1", 1, 1, state, 1000.0, None))) or "{}")
    assert answer["action"] == 3 and answer["match_id"] == "m1" and answer["seq"] == 1 and answer["think_ms"] >= 0


def test_bad_server_urls_and_specs_are_refused() -> None:
    assert websocket_url("http://127.0.0.1:8000/") == "ws://127.0.0.1:8000/api/v1/bots/connect"
    assert websocket_url("https://arena.example") == "wss://arena.example/api/v1/bots/connect"
    with pytest.raises(ArenaError, match="--server"):
        websocket_url("ftp://x")
    with pytest.raises(ArenaError, match="unknown agent type"):
        Connector(REGISTRY, "nosuchagent")
