"""Choosing which stored matches a query is about: one tournament, one game (all tournaments), or the latest."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from typing import Any

from arena.errors import ArenaError, about, shown
from arena.heap import collector_paused
from arena.leaderboard import Standings, add_distinct_games, sort_rows
from arena.params import canonical, parse_game_spec
from arena.plugins import Registry
from arena.stats import NO_DEAL, deals_of
from db import queries
from db.models import Tournament
from db.records import MatchRecord
from db.session import Database


class Selection:
    """The matches of a query: what they are (`title`), a cache `key`, the data `fingerprint`, and the records (loaded on first use)."""

    def __init__(self, title: str, key: str, fingerprint: str, load: Callable[[], list[MatchRecord]],
                 tournament: Tournament | None = None, load_moves: Callable[[], dict[int, bytes]] | None = None,
                 filters: dict[str, Any] | None = None, deals: str = NO_DEAL) -> None:  # fmt: skip
        self.title = title
        self.deals = deals  # what deals the game's matches (arena.stats.deals_of): for telling games apart
        self.filters = filters or {}  # queries.load_matches' keyword arguments that select these matches
        self.key = key
        self.fingerprint = fingerprint
        self._load = load
        self._load_moves = load_moves
        self.tournament = tournament
        self.standings: Standings | None = None  # see arena.results.standings

    @cached_property
    def moves(self) -> dict[int, bytes]:
        """Match id -> stored move list, for counting distinct games (loaded on first use)."""
        return self._load_moves() if self._load_moves is not None else {}

    @cached_property
    def records(self) -> list[MatchRecord]:
        with collector_paused():
            return self._load()


def get_tournament(database: Database, key: str) -> Tournament:
    with database.session() as session:
        tournament = queries.find_tournament(session, key)
    if tournament is None:
        raise ArenaError(f"no tournament with id or name '{shown(key)}'")
    return tournament


def select(
    database: Database, registry: Registry, tournament: str | None = None, game: str | None = None,
    with_legal_counts: bool = False,
) -> Selection:  # fmt: skip
    """The matches a query is about: --tournament, else --game (every tournament, same version and parameters),
    else the latest tournament."""
    if tournament is not None and game is not None:
        raise ArenaError("give --tournament or --game, not both")
    if game is not None:
        with about("game"):
            spec = parse_game_spec(game)
            game_obj = registry.game_class(spec.id)(**spec.params)
        version, params = game_obj.info.version, canonical(game_obj.params)

        def load_game() -> list[MatchRecord]:
            with database.session() as session:
                return queries.load_matches(session, game_id=spec.id, game_version=version, game_params=params,
                                            with_legal_counts=with_legal_counts)  # fmt: skip

        def load_game_moves() -> dict[int, bytes]:
            with database.session() as session:
                return queries.load_move_lists(session, game_id=spec.id, game_version=version, game_params=params)

        with database.session() as session:
            fingerprint = queries.game_fingerprint(session, spec.id, version, params)
        return Selection(f"{game_obj.label()} v{version}, all tournaments", f"game:{spec.id}:{version}:{params}",
                         fingerprint, load_game, load_moves=load_game_moves,
                         filters={"game_id": spec.id, "game_version": version, "game_params": params},
                         deals=deals_of(game_obj.info))  # fmt: skip
    with database.session() as session:  # one session: a repeated query costs little more than its fingerprint
        found = queries.latest_tournament(session) if tournament is None else queries.find_tournament(session, tournament)
        if found is None:
            raise ArenaError("no tournaments yet: run `arena run-tournament` first" if tournament is None
                             else f"no tournament with id or name '{shown(tournament)}'")  # fmt: skip
        fingerprint = queries.tournament_fingerprint(session, found.id)

    def load_tournament() -> list[MatchRecord]:
        with database.session() as session:
            return queries.load_matches(session, tournament_id=found.id, with_legal_counts=with_legal_counts)

    def load_tournament_moves() -> dict[int, bytes]:
        with database.session() as session:
            return queries.load_move_lists(session, tournament_id=found.id)

    label = f"tournament {found.id}" + (f" '{found.name}'" if found.name else "")
    installed = registry.games.get(found.game_id)  # (a game no longer installed: its matches told apart by moves alone)
    return Selection(f"{label} ({found.game_id})", f"tournament:{found.id}", fingerprint, load_tournament, found,
                     load_tournament_moves, {"tournament_id": found.id},
                     deals_of(installed.info if installed is not None else None))  # fmt: skip


def tournament_rows(database: Database) -> list[dict[str, Any]]:
    """Every tournament, oldest first, as JSON-ready dicts (`arena tournaments --json`, GET /api/v1/tournaments).

    Keys: id, name, game (the game id), game_spec (with its parameters, e.g. `onitama:cards=study5`),
    game_version, agents (their labels, in the order given), renamed (label given -> label recorded, for agents
    stored results made another label: arena.tournament.stored_labels), format, challenger, rounds, seed,
    players, status, matches (scheduled), done (stored), progress (done / matches, 0..1),
    created_at and finished_at (ISO 8601 UTC, seconds; finished_at null until done), owner (the user token's name
    that submitted it over HTTP; null for one made with the CLI).
    """
    with database.session() as session:
        done = queries.played_counts(session)
        return [tournament_row(t, done.get(t.id, 0)) for t in queries.list_tournaments(session)]


def tournament_row(t: Tournament, done: int) -> dict[str, Any]:
    """One tournament as `tournament_rows` lists it (`done`: its matches stored), plus its turn limit, time per
    move and, for one that failed, the error."""
    try:
        settings = json.loads(t.settings or "{}")
    except ValueError:
        settings = {}
    return {
        "id": t.id, "name": t.name, "game": t.game_id, "game_spec": settings.get("game", t.game_id),
        "game_version": t.game_version, "agents": [a.get("label", "") for a in settings.get("agents", ())],
        "renamed": {a["given"]: a["label"] for a in settings.get("agents", ()) if a.get("given")},
        "format": t.format, "challenger": settings.get("challenger"), "rounds": t.rounds, "seed": t.seed,
        "players": t.players, "status": t.status, "matches": t.scheduled, "done": done,
        "progress": done / t.scheduled if t.scheduled else 0.0,
        "created_at": _iso(t.created_at), "finished_at": _iso(t.finished_at),
        "max_turns": t.max_turns, "time_per_move": t.time_per_move, "error": t.error, "owner": t.owner,
    }  # fmt: skip


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def cached(database: Database, kind: str, selection: Selection, compute: Callable[[list[MatchRecord]], Any]) -> Any:
    """`compute(records)` for this selection, from the cache while no result has been stored since it was computed."""
    return _cached(database, kind, selection, lambda: compute(selection.records))


def leaderboard(database: Database, selection: Selection) -> list[dict[str, Any]]:
    """The selection's leaderboard rows (unsorted: see arena.leaderboard.sort_rows), from the cache while current.

    Uncached, they come from the selection's stored standings plus the matches stored since (see
    `standings`), never from a pass over every match: fast however many matches are stored.
    """
    return _cached(database, "leaderboard", selection, lambda: standings(database, selection).rows())


#: Bump when a stored answer's computation changes (a figure computed otherwise): answers stored before are then
#: computed again, not served from the database's cache after an upgrade.
ANSWERS_FORMAT = 3  # 3: distinct games told apart by their deal too, in games with chance


def _cached(database: Database, kind: str, selection: Selection, compute: Callable[[], Any]) -> Any:
    key = f"{kind}@{ANSWERS_FORMAT}:{selection.key}"
    with database.session() as session:
        payload = queries.get_cached(session, key, selection.fingerprint)
    if payload is not None:
        return json.loads(payload)
    with collector_paused():  # analyses are pure functions over records: they make no cycles
        value = compute()
    try:
        queries.put_cached(database, key, selection.fingerprint, json.dumps(value))
    except Exception:  # a read-only database still answers, just without caching
        pass
    return value


#: Bump when Standings' stored form changes: older stored folds are then recomputed.
STANDINGS_FORMAT = 3  # 2: N-player pairwise results weighed (arena.ratings.pair_weight); 3: distinct games by deal


def standings(database: Database, selection: Selection) -> Standings:
    """The leaderboard's fold over the selection's matches in schedule order, continued from the stored one.

    A stored fold covers every match before a position (tournament id, schedule index) such that no
    match can still arrive before it: the tournaments before its tournament were complete (their
    revisions are stored; a changed one voids the fold) and the indices before it all stored. Reading
    it and the matches from its position on gives exactly the numbers of a pass over all matches.
    The fold moves on over the matches stored without a gap and is stored again.
    """
    if selection.standings is not None:
        return selection.standings
    selection.standings = _standings(database, selection)
    return selection.standings


def _standings(database: Database, selection: Selection) -> Standings:
    key = f"standings:{selection.key}"
    with database.session() as session, session.begin():  # one read snapshot on SQLite: revisions and matches agree
        tournaments = queries.scope_tournaments(session, **selection.filters)
        if not tournaments:
            return Standings()
        stored = _stored_standings(queries.get_cache_entry(session, key), tournaments)
        closed, position, base = stored or ([], (tournaments[0][0], 0), Standings())
        with collector_paused():
            tail = queries.load_matches(session, **selection.filters, start=position)
            moves = queries.load_move_lists(session, **selection.filters, start=position)
    scheduled = {tid: count for tid, _, count in tournaments}
    revision = {tid: rev for tid, rev, _ in tournaments}
    following = {tournaments[i][0]: tournaments[i + 1][0] for i in range(len(tournaments) - 1)}
    tid, index = position

    def close_complete() -> None:
        nonlocal tid, index
        while index >= scheduled[tid] and tid in following:
            closed.append((tid, revision[tid]))
            tid, index = following[tid], 0

    gap = len(tail)
    for i, record in enumerate(tail):
        close_complete()
        if (record.tournament_id, record.index) != (tid, index):
            gap = i
            break
        index += 1
    else:
        close_complete()
    with collector_paused():
        base.add(tail[:gap], moves, selection.deals)
        if (tid, index) != position:
            payload = {"format": STANDINGS_FORMAT, "closed": closed, "position": [tid, index], "standings": base.to_json()}
            try:
                queries.put_cached(database, key, f"{tid}:{index}", json.dumps(payload))
            except Exception:  # a read-only database still answers
                pass
        return base.copy().add(tail[gap:], moves, selection.deals) if gap < len(tail) else base


def _stored_standings(
    entry: tuple[str, str] | None, tournaments: list[tuple[int, int, int]],
) -> tuple[list[tuple[int, int]], tuple[int, int], Standings] | None:  # fmt: skip
    """The stored fold when it is still valid for these tournaments, else None."""
    if entry is None:
        return None
    try:
        data = json.loads(entry[1])
        if data.get("format") != STANDINGS_FORMAT:
            return None
        closed = [(int(tid), int(rev)) for tid, rev in data["closed"]]
        tid, index = int(data["position"][0]), int(data["position"][1])
        standings = Standings.from_json(data["standings"])
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):  # not a fold this version wrote: recompute
        return None
    before = [(t, rev) for t, rev, _ in tournaments if t < tid]
    if before != closed or tid not in {t for t, _, _ in tournaments}:
        return None
    return closed, (tid, index), standings


def distinct_games_of(database: Database, selection: Selection) -> list[dict[str, Any]]:
    """arena.stats.distinct_games for the selection (cached like the leaderboard, from its standings)."""
    return _cached(database, "distinct", selection, lambda: standings(database, selection).distinct.rows())


def leaderboard_of(database: Database, selection: Selection, system: str = "bt") -> tuple[list[dict[str, Any]], str | None]:
    """The sorted leaderboard rows with their distinct-games fields, and the repeated-games warning (or None)."""
    rows = sort_rows(leaderboard(database, selection), system)
    warning = add_distinct_games(rows, distinct_games_of(database, selection))
    return rows, warning


def game_error_notice(database: Database, tournament_id: int) -> str | None:
    """A line saying how many of the tournament's matches the game itself broke (`game_error`), or None."""
    with database.session() as session:
        count = queries.reason_counts(session, tournament_id).get("game_error", 0)
    if not count:
        return None
    return (f"warning: {count} match(es) of tournament {tournament_id} ended in game_error: the game failed "
            "(see `arena matches`, detail), not an agent; they count for no one and are left out of every rating")
