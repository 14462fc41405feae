"""The remote-agent protocol, version 1: the JSON messages Arena sends and the answer it accepts.

Every message is an object with `type` ("start", "act" or "end") and `protocol` (1). The agent
answers `act` with `{"action": <id>}` (optionally `"think_ms"`: its own thinking time, so Arena
can tell network time apart more exactly); `start` and `end` may be answered with anything.
The README's "Remote agents" section shows a full exchange.

Versions: the messages of a protocol version only gain fields (games' `state` views included), and a bot
ignores fields it does not know; removing a field or changing its meaning bumps PROTOCOL. Additions within
version 1 are listed in the README ("Versions").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from arena.api import Game, State
from arena.match import ArenaFault, MatchResult

PROTOCOL = 1

# Faults of a remote agent, beside the runner's own `timeout` and `illegal_action`.
BAD_REPLY = "bad_reply"
AGENT_DISCONNECTED = "agent_disconnected"


class BadReply(ValueError):
    """An answer that is not `{"action": <integer>}`."""


class BotError(Exception):
    """An answer `{"error": "..."}`: the bot says it cannot move (`arena connect` when its agent fails)."""


def game_json(game: Game) -> dict[str, Any]:
    params = {name: list(value) if isinstance(value, tuple) else value for name, value in game.params.items()}
    return {"id": game.info.id, "version": game.info.version, "params": params}


def start_message(game: Game, match_id: str, seat: int, deadline_ms: float | None, seed: int) -> dict[str, Any]:
    """`seed`: for the bot's own randomness, the seed Arena gives an agent of its own in this seat (the same for the
    same tournament seed, match and seat: a seeded bot replays its match; it tells nothing of a hidden deal)."""
    return {"type": "start", "protocol": PROTOCOL, "match_id": match_id, "game": game_json(game), "seat": seat,
            "num_players": game.num_players, "deadline_ms": deadline_ms, "seed": seed}  # fmt: skip


def act_message(
    game: Game, match_id: str, seq: int, seat: int, state: State, deadline_ms: float | None, last_rtt_ms: float | None,
) -> dict[str, Any]:  # fmt: skip
    """One decision: `state` is what `seat` may see (`State.to_json(seat)`), never anything else."""
    legal = state.legal_actions()
    return {
        "type": "act", "protocol": PROTOCOL, "match_id": match_id, "seq": seq, "game": game_json(game), "seat": seat,
        "num_players": game.num_players, "state": state.to_json(seat), "legal_actions": legal,
        "legal_names": legal_names(state, legal), "deadline_ms": deadline_ms, "last_rtt_ms": last_rtt_ms,
    }  # fmt: skip


def end_message(match_id: str, seat: int, result: MatchResult) -> dict[str, Any]:
    return {"type": "end", "protocol": PROTOCOL, "match_id": match_id, "seat": seat, "returns": list(result.scores),
            "outcome": result.outcomes[seat], "reason": result.reason, "detail": result.detail, "turns": result.turns}  # fmt: skip


def encode(message: dict[str, Any]) -> bytes:
    """A message as sent; one that is not JSON (a game's `to_json` giving a numpy array) is Arena's fault, never the
    bot's: the match is not scored."""
    try:
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode()  # NaN is no JSON: bots' parsers refuse it
    except (TypeError, ValueError) as exc:
        raise ArenaFault(f"could not encode the message for a remote agent as JSON: {exc}") from None


#: The most an answer may hold, on either transport: a move's answer is a few bytes; a bot must not make Arena read 200 MB.
MAX_ANSWER_BYTES = 1 << 20
TOO_LONG = f"an answer of more than {MAX_ANSWER_BYTES:,} bytes (a move's answer takes a few)"


def parse_answer(body: bytes | str) -> tuple[int, float | None]:
    """The action id and the agent's own think time in seconds (None when not given) of an `act` answer."""
    if len(body) > MAX_ANSWER_BYTES // 4 and len(body if isinstance(body, bytes) else body.encode()) > MAX_ANSWER_BYTES:
        raise BadReply(TOO_LONG)
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # (RecursionError: arrays nested thousands deep)
        if "integer string conversion" in str(exc):  # JSON, with a number of thousands of digits (Python's limit)
            raise BadReply(f"a number of more than 4300 digits: {_excerpt(body)}") from None
        raise BadReply(f"not JSON: {_excerpt(body)}") from None
    if isinstance(data, dict) and "action" not in data and isinstance(data.get("error"), str):
        raise BotError(_excerpt(data["error"], 300))
    if not isinstance(data, dict) or "action" not in data:
        raise BadReply(f'expected {{"action": <id>}}, got {_excerpt(body)}')
    action = data["action"]
    if type(action) is not int:  # bools, floats and strings are ill-typed
        raise BadReply(f'"action" must be an integer, got {_excerpt(json.dumps(action))}')
    think = data.get("think_ms")
    if isinstance(think, (int, float)) and not isinstance(think, bool) and think >= 0:
        return action, think / 1000.0
    return action, None


def legal_names(state: State, legal: Sequence[int]) -> list[str]:
    return [state.action_to_string(a) for a in legal]


def _excerpt(body: bytes | str, limit: int = 80) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return repr(text if len(text) <= limit else text[:limit] + "...")
