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
#: Every built-in game (the games/ package), some with parameters that change what the JSON view holds.
BUILT_IN = sorted(game_id for game_id, cls in REGISTRY.games.items() if cls.__module__.startswith("games."))
CONFIGS = [(game_id, {}) for game_id in BUILT_IN] + [
    ("incan_gold", {"players": 5, "artifacts": "2020", "unclaimed": "returned"}),
    ("santorini", {"limits": "roxley"}),
    ("onitama", {"cards": "study5"}),
]


def _wire(data: dict) -> dict:
    """What the bot gets: the JSON view after a trip through the wire format."""
    return json.loads(json.dumps(data))


def test_every_built_in_game_is_covered() -> None:
    assert {"connect_four", "tic_tac_toe", "reversi", "dots_and_boxes", "santorini", "onitama", "gwent_lite",
            "incan_gold"} <= set(BUILT_IN)  # fmt: skip


@pytest.mark.parametrize(("game_id", "params"), CONFIGS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(CONFIGS)])
def test_state_from_json_round_trips_every_position_of_random_matches(game_id: str, params: dict) -> None:
    """state -> to_json(seat) -> state_from_json: the same view, current player, legal moves (and names) and
    observation for that seat. Perfect information: the same continuation too (moves, end, returns). Hidden
    information: a playable determinisation (its own views and a play-out to the end work) whose unseen parts
    really are sampled: two RNGs give different hidden parts somewhere."""
    game = REGISTRY.game_class(game_id)(**params)
    hidden = not game.info.perfect_information
    rng = random.Random(7)
    sampled = 0
    for match in range(12):
        state = game.new_initial_state(match)
        while not state.is_terminal():
            seat = state.current_player
            data = _wire(state.to_json(seat))
            rebuilt = game.state_from_json(data, seat, rng=random.Random(match)) if hidden else game.state_from_json(data, seat)
            _assert_same_for(seat, state, rebuilt)
            action = rng.choice(state.legal_actions())
            if hidden:
                other = game.state_from_json(data, seat, rng=random.Random(match + 1000))
                _assert_same_for(seat, state, other)
                sampled += rebuilt.render() != other.render() or repr(_hidden(rebuilt)) != repr(_hidden(other))
                _assert_same_for(seat, rebuilt, rebuilt.view(seat))
                _play_out(rebuilt, rng, game.num_players)
            else:
                rebuilt.apply(action)
            state.apply(action)
            if not hidden:
                assert rebuilt.is_terminal() == state.is_terminal()
        if not hidden:
            assert rebuilt.returns() == state.returns()
    assert not hidden or sampled > 50


def _assert_same_for(seat: int, state, rebuilt) -> None:
    assert rebuilt.current_player == state.current_player == seat
    assert rebuilt.to_json(seat) == state.to_json(seat)
    legal = state.legal_actions()
    assert rebuilt.legal_actions() == legal
    assert [rebuilt.action_to_string(a) for a in legal] == [state.action_to_string(a) for a in legal]
    try:
        expected = state.observation(seat)
    except NotImplementedError:
        return
    assert rebuilt.observation(seat).tolist() == expected.tolist()


def _hidden(state) -> list:
    return [getattr(state, name, None) for name in ("deck", "decks", "hands", "choices")]


def _play_out(state, rng: random.Random, players: int) -> None:
    """A search agent plays its determinisation forward to the end: it must hold together."""
    state = state.clone()
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    assert len(state.returns()) == players


def test_hidden_information_rebuilds_are_reproducible_and_default_to_the_data() -> None:
    game = REGISTRY.game_class("gwent_lite")()
    state = game.new_initial_state(3)
    data = _wire(state.to_json(state.current_player))
    seat = state.current_player
    one, two = (game.state_from_json(data, seat, rng=random.Random(5)) for _ in range(2))
    assert one.render() == two.render() and one.hands == two.hands and one.decks == two.decks
    assert game.state_from_json(data, seat).decks == game.state_from_json(data, seat).decks
    assert one.viewer == seat


def test_games_without_it_say_so() -> None:
    from arena.api import Game

    class Bare(Game):
        info = REGISTRY.game_class("tic_tac_toe").info
        num_distinct_actions = 9

        def new_initial_state(self, seed: int = 0):
            raise NotImplementedError

    with pytest.raises(NotImplementedError, match="tic_tac_toe"):
        Bare().state_from_json({}, 0)


def test_connector_answers_acts_with_the_agent_move() -> None:
    game = REGISTRY.game_class("connect_four")()
    connector = Connector(REGISTRY, "minimax:depth=2")
    state = game.new_initial_state(0)
    for action in (0, 6, 1, 6, 2):  # seat 0 threatens 0-1-2-3 on the bottom row: seat 1 must block at 3
        state.apply(action)
    assert connector.handle(json.dumps(protocol.start_message(game, "m1", 1, 1000.0, 7))) is None
    answer = json.loads(connector.handle(json.dumps(protocol.act_message(game, "m1", 1, 1, state, 1000.0, None))) or "{}")
    assert answer["action"] == 3 and answer["match_id"] == "m1" and answer["seq"] == 1 and answer["think_ms"] >= 0


def test_bad_server_urls_and_specs_are_refused() -> None:
    assert websocket_url("http://127.0.0.1:8000/") == "ws://127.0.0.1:8000/api/v1/bots/connect"
    assert websocket_url("https://arena.example") == "wss://arena.example/api/v1/bots/connect"
    with pytest.raises(ArenaError, match="--server"):
        websocket_url("ftp://x")
    with pytest.raises(ArenaError, match="unknown agent type"):
        Connector(REGISTRY, "nosuchagent")
