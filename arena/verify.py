"""Re-verifying stored matches: their moves, replayed from their seeds, must lead to the results stored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from arena.agents import SEAT_PREFIX
from arena.api import Game
from arena.errors import ArenaError
from arena.match import GAME_ERROR, NORMAL, REASONS, TURN_LIMIT, decode_ints, replay
from arena.plugins import Registry
from arena.seeding import game_seed
from db import queries

#: Every way a seat forfeits: the runner's (illegal action, timeout, error, crash) and the remote agents' (bad reply,
#: disconnected), each of which ends a match before the game is over.
FORFEITS = tuple(reason for reason in REASONS if reason not in (NORMAL, TURN_LIMIT, GAME_ERROR))


def stored_game(registry: Registry, game_id: str, version: str, params: str, seat_params: Sequence[str], what: str) -> Game:
    """The game a stored match was played with, the seats' own parameters (decks) included."""
    game_cls = registry.game_class(game_id)
    if game_cls.info.version != version:
        raise ArenaError(f"{what} was played with {game_id} v{version}; v{game_cls.info.version} is installed")
    raw = dict(item.split("=", 1) for item in params.split(";") if item)
    for seat, text in enumerate(seat_params):
        for key, value in json.loads(text).items():
            if key.startswith(SEAT_PREFIX):
                raw[f"{key[len(SEAT_PREFIX):]}{seat}"] = value
    return game_cls(**raw)


def replay_or_explain(game: Game, seed: int, moves: Sequence[int], what: str) -> list[Any]:
    """`arena.match.replay`, with a move list that does not replay reported as bad data in one line."""
    try:
        return replay(game, seed, moves)
    except Exception as exc:
        raise ArenaError(f"{what} does not replay: {exc} (`arena db verify` checks every stored match)") from None


def problem(game: Game, match: queries.StoredMatch) -> str | None:
    """Why the stored match's moves do not lead to its stored result, or None when they do."""
    moves = decode_ints(match.moves)
    if len(moves) != match.turns + match.opening_plies:
        return f"{len(moves)} moves stored for {match.turns} turns after {match.opening_plies} opening plies"
    deal = game_seed(game, match.seed, match.secret)
    try:
        steps = replay(game, deal, moves)
    except Exception as exc:
        return f"moves do not replay: {exc}"
    state = steps[-1][3] if steps else game.new_initial_state(deal)
    terminal = state.is_terminal()
    if match.reason == NORMAL:
        if not terminal:
            return f"stored as finished ({match.reason}) but the game is not over after its {len(moves)} moves"
        returns = tuple(float(r) for r in state.returns())
        if returns != tuple(match.scores):
            return f"stored scores {list(match.scores)} but the moves give {list(returns)}"
        return None
    if terminal:
        return f"stored as {match.reason} but the game was over after its {len(moves)} moves"
    if match.reason == TURN_LIMIT and match.turns != match.max_turns:
        return f"stored as turn_limit after {match.turns} turns; the limit is {match.max_turns}"
    if match.reason not in FORFEITS + (TURN_LIMIT, GAME_ERROR):
        return f"unknown reason {match.reason!r}"
    return None


def not_installed(registry: Registry, game_id: str, version: str) -> str | None:
    """Why matches of `game_id` at `version` cannot be replayed here ("not installed", "v2 is installed"), or None."""
    game_cls = registry.games.get(game_id)
    if game_cls is None:
        return "not installed"
    return None if game_cls.info.version == version else f"v{game_cls.info.version} is installed"


def verify(database: Any, registry: Registry, tournament_id: int | None = None) -> dict[str, Any]:
    """Replay every stored match (of one tournament, or all): how many were checked, those that do not match, and
    the matches of games not installed at the version they were played with (`unchecked`: counted per game)."""
    checked, mismatches = 0, []
    games: dict[tuple[str, ...], Game] = {}
    unchecked: dict[tuple[str, str], dict[str, Any]] = {}
    with database.session() as session:
        for match in queries.stored_matches(session, tournament_id):
            why = not_installed(registry, match.game_id, match.game_version)
            if why is not None:
                entry = unchecked.setdefault((match.game_id, match.game_version),
                                             {"game": match.game_id, "version": match.game_version, "why": why, "matches": 0})  # fmt: skip
                entry["matches"] += 1
                continue
            key = (match.game_id, match.game_version, match.game_params) + match.seat_params
            if key not in games:
                games[key] = stored_game(registry, match.game_id, match.game_version, match.game_params,
                                         match.seat_params, f"match {match.id}")  # fmt: skip
            checked += 1
            found = problem(games[key], match)
            if found is not None:
                mismatches.append({"match": match.id, "tournament": match.tournament_id, "reason": match.reason,
                                   "problem": found})  # fmt: skip
    return {"checked": checked, "mismatches": mismatches, "unchecked": list(unchecked.values())}


def unchecked_line(unchecked: Sequence[dict[str, Any]]) -> str | None:
    """The line that counts and names the matches verify could not check, or None when it checked every one."""
    if not unchecked:
        return None
    count = sum(item["matches"] for item in unchecked)
    games = ", ".join(f"{item['game']} v{item['version']} ({item['matches']}: {item['why']})" for item in unchecked)
    return f"{count} {'match' if count == 1 else 'matches'} of games not installed at their version were not checked: {games}"
