"""Tournaments: the listing, one tournament, submitting one to the queue, cancelling it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena import results
from arena import tournament as tournaments
from arena.errors import ArenaError, about, shown
from arena.library import tokens
from arena.match import DEFAULT_MAX_TURNS
from arena.params import parse_specs
from arena.plugins import Registry
from arena.reach import ANYWHERE, Reach
from db import queries, queue
from db.session import Database

STATUSES = ("queued", "running", "stopped", "done", "cancelled", "failed")


def listing(database: Database) -> list[dict[str, Any]]:
    """Every tournament, oldest first (`arena tournaments --json`)."""
    return results.tournament_rows(database)


def one(database: Database, key: str | int) -> dict[str, Any]:
    """One tournament by id or name, as the listing shows it."""
    with database.session() as session:
        found = queries.find_tournament(session, key)
        if found is None:
            raise ArenaError(f"no tournament with id or name '{shown(str(key))}'")
        return results.tournament_row(found, queries.played_count(session, found.id))


def renamed_notes(database: Database, tournament_id: int) -> list[str]:
    """One note for each agent the tournament records under another label than it was given (stored results)."""
    return [tournaments.renamed_note(given, label) for given, label in one(database, tournament_id)["renamed"].items()]


def progress(database: Database, tournament_id: int) -> tuple[str, int, int]:
    """(status, matches stored, matches scheduled): cheap enough to poll for live progress."""
    with database.session() as session:
        found = queries.find_tournament(session, tournament_id)
        if found is None:
            raise ArenaError(f"no tournament {tournament_id}")
        return found.status, queries.played_count(session, found.id), found.scheduled


def stop(database: Database, tournament_id: int) -> str | None:
    """A run interrupted (Ctrl-C): its tournament marked `stopped`, and the line that says what is kept and how to go
    on; None when the database cannot be reached quickly (another process holding SQLite's lock, say: the tournament
    then stays `running`, resumable all the same)."""
    try:
        queries.stop_tournament(database, tournament_id)
        status, stored, scheduled = progress(database, tournament_id)
    except Exception:  # noqa: BLE001  (the process is leaving: nothing more to do about it)
        return None
    if status != "stopped":  # it ended meanwhile, was cancelled, or a server holds it
        return None
    return (f"tournament {tournament_id}: {status}, {stored} of {scheduled} matches stored; "
            f"`arena run-tournament --resume {tournament_id}` plays the rest")


def take_here(database: Database, tournament_id: int) -> None:
    """Before `arena run-tournament --resume` plays a tournament in this process: taken off the queue (a queued one, or
    one a server left), or ArenaError when it may not be played here: cancelled, or a server plays it now."""
    status = queue.take_here(database, tournament_id)
    if status == "cancelled":
        raise ArenaError(f"tournament {tournament_id} was cancelled: nothing more is played (what was played stays)")
    if status == "held":
        raise ArenaError(f"tournament {tournament_id} is being played by `arena serve`, which plays the rest (a server that is "
                         "gone lets it go when its lease runs out, 30 s by default: then --resume plays it here)")  # fmt: skip


def submit(
    registry: Registry, database: Database, *, game: str, agents: Sequence[str] | str, rounds: int = 1, seed: int = 0,
    max_turns: int = DEFAULT_MAX_TURNS, time_per_move: float | None = None, name: str | None = None,
    format: str = "round-robin", challenger: str | None = None, players: int | None = None, openings: str | Sequence[str] | None = None,
    budget: int | None = None, owner: str | None = None, reach: Reach = ANYWHERE,
) -> dict[str, Any]:  # fmt: skip
    """Validate a tournament exactly as `arena run-tournament` does and queue it for `arena serve`; `owner`: the user
    token's name that submits it over HTTP, the one that may cancel it there (None: the CLI's); `reach`: the hosts
    its agents may call and the files they may read (a server's --bot-hosts and --models-dir), checked before any is read."""
    if not isinstance(agents, str):
        for count, item in enumerate(agents, 1):
            with about("agents"):
                if len(parse_specs(item)) != 1:
                    raise ArenaError(f"one agent per item of the list, got {item!r}")
                if len(parse_specs(",".join(agents[:count]))) != count:  # "2" after "linear:weights=1" is one of its values
                    raise ArenaError(f"one agent per item of the list: {item!r} reads as a value of the item before it, "
                                     f"{agents[count - 2]!r}; give that value in its item")  # fmt: skip
    text = agents if isinstance(agents, str) else ",".join(agents)
    if not text.strip():
        raise ArenaError("agents: give at least two agents")
    request = tournaments.TournamentRequest(
        game=game, agents=text, rounds=rounds, seed=seed, max_turns=max_turns, time_per_move=time_per_move,
        name=name, format=format, challenger=challenger, players=players, openings=openings, budget=budget, owner=owner,
    )  # fmt: skip
    with database.session() as session:
        lookup = tournaments.named_agents(session)
        if format == "gauntlet" and challenger:
            reach.check(registry, challenger, lookup, "challenger")
        reach.check(registry, text, lookup, "agents")
    tournament_id = tournaments.create(registry, database, request, status="queued")
    return one(database, tournament_id)


def cancel(database: Database, key: str | int, by: str | None = None) -> dict[str, Any]:
    """Cancel a queued, running or stopped tournament (a server playing it stops at its next match); one cancelled already
    stays so; a finished one (done, failed) is refused: there is nothing left to cancel. `by`: the user token's name
    that asks over HTTP, refused (tokens.NotOwner) unless it submitted the tournament; None: the CLI, which may."""
    found = one(database, key)
    tokens.check_owner("tournament", str(found["name"] or found["id"]), found["owner"], by, ("submitted", "cancel"),
                       "arena tournaments cancel")  # fmt: skip
    status = queue.cancel(database, found["id"])
    if status in ("done", "failed"):  # (decided in the write: one that finished meanwhile is not said to be cancelled)
        raise ArenaError(f"tournament {found['id']} is {status}: only a queued, running or stopped one can be cancelled")
    return one(database, found["id"])
