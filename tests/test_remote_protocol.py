"""The remote protocol's messages, and every built-in game's JSON view: serialisable, and never a leak."""

from __future__ import annotations

import json
import random

import pytest

from arena.match import MatchResult
from arena.plugins import get_registry
from arena.remote import protocol

REGISTRY = get_registry()
BUILT_IN = ["tic_tac_toe", "connect_four", "reversi", "dots_and_boxes", "onitama", "santorini", "incan_gold", "gwent_lite"]


def positions(game, count: int, seed: int = 0):
    """Up to `count` positions from random play-outs (every one a state someone has to move in)."""
    rng = random.Random(seed)
    found = 0
    match = 0
    while found < count:
        state = game.new_initial_state(match)
        match += 1
        while not state.is_terminal() and found < count:
            yield state
            found += 1
            state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("game_id", BUILT_IN)
def test_every_built_in_game_sends_json(game_id):
    game = REGISTRY.game_class(game_id)()
    for state in positions(game, 60):
        seat = state.current_player
        message = protocol.act_message(game, "m1", 1, seat, state.view(seat), 1000.0, None)
        again = json.loads(protocol.encode(message))
        assert again["legal_actions"] == state.legal_actions()
        assert len(again["legal_names"]) == len(again["legal_actions"])
        assert again["game"] == {"id": game_id, "version": game.info.version, "params": again["game"]["params"]}


@pytest.mark.parametrize("game_id", [g for g in BUILT_IN if not get_registry().game_class(g).info.perfect_information])
def test_hidden_information_never_leaks(game_id):
    """A view re-samples everything its seat may not see (other hands, deck order, pending choices): so the JSON
    a seat is sent must be the same from the real state and from any view of it. Checked for every seat over
    many positions; and the views must really differ from the real state, or the check could not fail."""
    game = REGISTRY.game_class(game_id)()
    differed = 0
    for state in positions(game, 400, seed=7):
        for seat in range(game.num_players):
            sent = state.to_json(seat)
            for view in (state.view(seat), state.view(seat).view(seat)):
                assert view.to_json(seat) == sent
            differed += state.view(seat).render() != state.render() or _hidden(state) != _hidden(state.view(seat))
    assert differed > 100


def _hidden(state):
    return repr([getattr(state, name, None) for name in ("deck", "decks", "hands", "choices")])


def test_gwent_sends_own_hand_and_never_the_opponents_or_deck_order():
    game = REGISTRY.game_class("gwent_lite")()
    for state in positions(game, 300, seed=3):
        for seat in (0, 1):
            data = state.to_json(seat)
            assert data["hand"] == state.hands[seat]
            text = json.dumps(data)
            assert "decks" not in data and "hands" not in data
            other = state.hands[1 - seat]
            assert data["unplayed"][1 - seat] == sorted(other + state.decks[1 - seat])  # public: deck list minus played
            assert len(text) < 2000


def test_incan_gold_hides_others_pending_choices():
    game = REGISTRY.game_class("incan_gold")(players=4)
    for state in positions(game, 300, seed=5):
        for seat in range(4):
            data = state.to_json(seat)
            assert data["chosen"] == [c is not None for c in state.choices]
            assert data["deck"] == sorted(data["deck"])  # the composition only, never the order


def test_answers_are_parsed_strictly():
    assert protocol.parse_answer(b'{"action": 3}') == (3, None)
    assert protocol.parse_answer(b'{"action": 3, "think_ms": 12}') == (3, 0.012)
    for bad in (b"", b"3", b'{"move": 3}', b'{"action": "3"}', b'{"action": 3.0}', b'{"action": true}', b"\xff"):
        with pytest.raises(protocol.BadReply):
            protocol.parse_answer(bad)
    with pytest.raises(protocol.BadReply, match="more than 4300 digits"):  # JSON still, but no int Python makes from text
        protocol.parse_answer(b'{"action": ' + b"1" * 5000 + b"}")


def test_start_and_end_messages():
    game = REGISTRY.game_class("connect_four")()
    start = protocol.start_message(game, "ab", 1, 150.0, 7)
    assert start["type"] == "start" and start["protocol"] == protocol.PROTOCOL and start["num_players"] == 2
    result = MatchResult([1.0, -1.0], ["win", "loss"], [1, 2], 7, "normal")
    end = protocol.end_message("ab", 1, result)
    assert (end["returns"], end["outcome"], end["reason"]) == ([1.0, -1.0], "loss", "normal")
    json.dumps(start), json.dumps(end)


@pytest.mark.parametrize("game_id", [g for g in BUILT_IN if not get_registry().game_class(g).info.perfect_information])
def test_the_whole_act_message_is_the_same_from_any_view(game_id):
    """Not only `state`: legal ids and names too are what the seat's own view gives, so nothing in the message can
    tell the other seats' hidden items (hands, deck order, pending choices) from any re-sample of them."""
    game = REGISTRY.game_class(game_id)()
    for state in positions(game, 200, seed=11):
        seat = state.current_player
        sent = protocol.encode(protocol.act_message(game, "m", 3, seat, state, 500.0, 1.5))
        for view in (state.view(seat), state.view(seat).view(seat)):
            assert protocol.encode(protocol.act_message(game, "m", 3, seat, view, 500.0, 1.5)) == sent


def test_a_position_that_is_not_json_is_arenas_fault_never_the_bots() -> None:
    """A game whose `to_json` gives something JSON cannot hold (a numpy array) stops the match unscored (ArenaFault),
    before any bot is asked: the bot is not charged a loss for it, over push or pull."""
    import numpy as np

    from arena.match import ArenaFault, play_match
    from arena.remote.push import HttpAgent

    registry = get_registry()
    game = registry.game_class("tic_tac_toe")()
    state_cls = type(game.new_initial_state(0))
    original = state_cls.to_json
    try:
        state_cls.to_json = lambda self, player: {"board": np.zeros(9)}  # type: ignore[method-assign]
        with pytest.raises(ArenaFault, match="could not encode the message for a remote agent as JSON"):
            protocol.encode({"type": "act", "state": game.new_initial_state(0).to_json(0)})
        with pytest.raises(ArenaFault, match="could not encode"):  # NaN is no JSON either
            protocol.encode({"type": "act", "state": {"value": float("nan")}})
        bot = HttpAgent(game, 0, 0, url="http://127.0.0.1:9")  # nothing listens there: never reached
        bot.started = True
        with pytest.raises(ArenaFault):
            play_match(game, [bot, registry.agent_class("random")(game, 1, 0)], seed=0)
    finally:
        state_cls.to_json = original  # type: ignore[method-assign]


def test_every_built_in_game_says_what_its_state_holds_for_bot_authors():
    """`arena games --json` (and GET /api/v1/games/ID) give each game's `state` layout: its State.to_json docstring, which
    names every key the view holds, so that a bot written in another language needs no Python source."""
    import re

    from arena.library.catalog import games, json_view_doc

    listed = {entry["id"]: entry["state"] for entry in games(REGISTRY)}
    for game_id in ("tic_tac_toe", "connect_four", "reversi", "dots_and_boxes", "onitama", "santorini", "gwent_lite", "incan_gold"):
        game = REGISTRY.games[game_id]()
        doc = json_view_doc(game)
        assert doc and listed[game_id] == doc, game_id
        state = game.new_initial_state(1)
        keys = set(state.to_json(state.current_player if state.current_player >= 0 else 0))
        assert not [key for key in keys if not re.search(rf"`{key}`|\b{key}\b", doc)], (game_id, doc)
