"""Stored matches: lists with filters and paging, one match with its moves, and replays."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from arena import agents as agent_specs
from arena import results
from arena.api import Game, State
from arena.errors import ArenaError
from arena.match import decode_ints
from arena.plugins import Registry
from arena.seeding import game_seed
from arena.verify import replay_or_explain
from db import queries
from db.records import MatchRecord
from db.session import Database

log = logging.getLogger("arena.library")


def match_to_dict(record: MatchRecord) -> dict[str, Any]:
    """One entry of `arena matches --json`."""
    return {
        "id": record.id, "tournament": record.tournament_id, "index": record.index, "seed": record.seed,
        "game": record.game_id, "game_version": record.game_version, "turns": record.turns, "reason": record.reason,
        "detail": record.detail,
        "seats": [{"seat": s.seat, "agent": s.agent, "score": s.score, "outcome": s.outcome, "rank": s.rank,
                   "think_time": s.think_time, "network_time": s.network_time} for s in record.seats],
    }  # fmt: skip


def matches(database: Database, selection: results.Selection, agent: str | None = None, limit: int | None = None,
            offset: int = 0) -> list[dict[str, Any]]:  # fmt: skip
    """The selection's played matches in schedule order, only `agent`'s if given, `offset` skipped, at most `limit`."""
    if limit is not None and limit < 1:
        raise ArenaError(f"limit must be at least 1, got {limit}")
    if offset < 0:
        raise ArenaError(f"offset must not be negative, got {offset}")
    with database.session() as session:
        records = queries.load_matches(session, agent=agent, limit=limit, offset=offset, **selection.filters)
    return [match_to_dict(r) for r in records]


def match_page(database: Database, selection: results.Selection, agent: str | None = None, limit: int = 50,
               offset: int = 0) -> dict[str, Any]:  # fmt: skip
    """A page of matches plus the total: {"total", "limit", "offset", "matches"}."""
    page = matches(database, selection, agent, limit, offset)
    with database.session() as session:
        total = queries.count_matches(session, agent=agent, **selection.filters)
    return {"total": total, "limit": limit, "offset": offset, "matches": page}


def match(database: Database, match_id: int) -> dict[str, Any]:
    """One match: its `arena matches --json` entry plus its moves, legal-move counts, duration and agents' versions."""
    with database.session() as session:
        row = queries.get_match(session, match_id)
        if row is None or row.status != "done":
            raise ArenaError(f"no match {match_id}")
        data = {
            "id": row.id, "tournament": row.tournament_id, "index": row.index, "seed": row.seed, "game": row.game_id,
            "game_version": row.game_version, "game_params": row.game_params, "turns": row.turns, "reason": row.reason,
            "detail": row.detail,
            "seats": [{"seat": s.seat, "agent": s.agent, "score": s.score, "outcome": s.outcome, "rank": s.rank,
                       "think_time": s.think_time, "network_time": s.network_time or 0.0, "moves": s.moves, "type": s.agent_type,
                       "params": json.loads(s.agent_params), "version": s.agent_version} for s in row.seats],
            "moves": decode_ints(row.moves), "legal_counts": decode_ints(row.legal_counts), "duration": row.duration,
            "first_player": row.first_player, "rounds": row.rounds, "opening_plies": row.opening_plies or 0,
            "finished_at": row.finished_at.isoformat(timespec="seconds") if row.finished_at else None,
        }  # fmt: skip
    return data


@dataclass
class Replay:
    """A stored match re-played: the game as it was played, the start, and (turn, seat, text, state after) per move."""

    data: dict[str, Any]  # the match (see `match`)
    game: Game
    initial: State
    steps: list[tuple[int, int, str, State]]

    def to_json(self) -> dict[str, Any]:
        """`arena replay --json`."""
        d, moves, opening = self.data, self.data["moves"], self.data["opening_plies"]
        return {"id": d["id"], "game": self.game.label(), "seed": d["seed"], "reason": d["reason"], "detail": d["detail"],
                "opening_plies": opening,
                "seats": [{"seat": s["seat"], "agent": s["agent"], "outcome": s["outcome"], "score": s["score"]} for s in d["seats"]],
                "moves": [{"turn": t - opening if t > opening else None, "seat": seat, "action": moves[t - 1],
                           "text": text, "opening": t <= opening} for t, seat, text, _ in self.steps]}  # fmt: skip


def load_replay(database: Database, registry: Registry, match_id: int) -> Replay:
    data = match(database, match_id)
    game_cls = registry.game_class(data["game"])
    if game_cls.info.version != data["game_version"]:
        raise ArenaError(f"match {match_id} was played with {data['game']} v{data['game_version']}; "
                         f"v{game_cls.info.version} is installed")  # fmt: skip
    seat_params = {f"{key[len(agent_specs.SEAT_PREFIX):]}{s['seat']}": value
                   for s in data["seats"] for key, value in s["params"].items()
                   if key.startswith(agent_specs.SEAT_PREFIX)}  # fmt: skip
    raw = dict(item.split("=", 1) for item in data["game_params"].split(";") if item)
    game = game_cls(**{**raw, **seat_params})  # the seats' own parameters (decks) as they were played
    with database.session() as session:  # the seed of the game's own chance mixes the tournament's secret
        row = queries.get_match(session, match_id)
        deal = game_seed(game, data["seed"], row.tournament.secret if row is not None else None)
    return Replay(data, game, game.new_initial_state(deal), replay_or_explain(game, deal, data["moves"], f"match {match_id}"))


def render_svg(state: State) -> str | None:
    """The board as SVG where the game draws one (the optional `State.render_svg()` hook); None where it draws none,
    or where drawing fails (the game's fault: the position is shown as `render_text` gives it, never a 500)."""
    draw = getattr(state, "render_svg", None)
    if draw is None:
        return None
    try:
        svg = draw()
    except NotImplementedError:
        return None
    except Exception:  # noqa: BLE001  (a plugin game's drawing code)
        log.warning("%s: render_svg raised", type(state).__name__, exc_info=True)
        return None
    return svg if isinstance(svg, str) else None


def render_text(state: State) -> str:
    """The position as `render()` gives it, or a line saying the game could not draw it (a plugin's fault, never a 500,
    and never charged to the seat being shown it)."""
    try:
        return str(state.render())
    except Exception as exc:  # noqa: BLE001  (a plugin game's own code)
        return f"(the game could not draw this position: {type(exc).__name__}: {exc})"


def _legal_count(state: State) -> int:
    return 0 if state.is_terminal() else len(state.legal_actions())


def _position(state: State, perfect_information: bool) -> dict[str, Any]:
    """One position of a replay for spectators: its SVG where the game draws one, its text, the seat to move and the
    legal-move count. A game of hidden information draws only public information (README, "Board pictures"), but its
    `render()` may show everything (Gwent Lite's both hands): its text is left out where the SVG is drawn."""
    svg = render_svg(state)
    text = render_text(state) if perfect_information or svg is None else None
    return {"text": text, "svg": svg, "to_move": None if state.is_terminal() else state.current_player,
            "legal_moves": _legal_count(state)}  # fmt: skip


def replay(database: Database, registry: Registry, match_id: int, positions: bool = False) -> dict[str, Any]:
    """`arena replay --json`; `positions` adds every position rendered (text and, where the game draws it, SVG),
    starting with the initial one, and per move the legal-move count before it and the mover's mean think time."""
    loaded = load_replay(database, registry, match_id)
    data = loaded.to_json()
    if not positions:
        return data
    seats = {s["seat"]: s for s in loaded.data["seats"]}
    states = [loaded.initial] + [state for _, _, _, state in loaded.steps]
    for ply, move in enumerate(data["moves"]):
        seat = seats.get(move["seat"], {})
        move["legal_moves"] = _legal_count(states[ply])
        if move["opening"]:
            move["agent"], move["think_time"] = "(opening)", None
            continue
        move["agent"] = seat.get("agent")
        made = seat.get("moves") or 0
        move["think_time"] = (seat.get("think_time") or 0.0) / made if made else None  # per-move times are not stored
    public = loaded.game.info.perfect_information
    data["positions"] = [_position(s, public) for s in states]
    data["turns"], data["tournament"] = loaded.data["turns"], loaded.data["tournament"]
    return data
