"""Ladders (arena.ladder): an agent joins a running ladder; the queue worker playing it admits it at its next batch."""

from __future__ import annotations

import json
from typing import Any

from arena import tournament as tournaments
from arena.adaptive import MAX_AGENTS
from arena.agents import SAME_AGENT, AgentEntry, resolve_all, same_agent
from arena.api import Game
from arena.errors import ArenaError
from arena.ladder import FORMAT
from arena.library.tournaments import one
from arena.plugins import Registry
from arena.reach import ANYWHERE, Reach
from db import queries, queue
from db.session import Database


class AlreadyIn(ArenaError):
    """The agent plays in the ladder already, or waits to join it (HTTP 409)."""


def join(registry: Registry, database: Database, key: str | int, agent: str,
         reach: Reach = ANYWHERE) -> dict[str, Any]:  # fmt: skip
    """Queue `agent` (a spec or a named agent) to join ladder `key`, checked as tournament creation checks agents.

    Returns the ladder as the tournament listing shows it, plus `joining`: the agents waiting for the
    next batch boundary, in join order (this one last). Nothing is written unless the join is valid.
    `reach`: the hosts the agent may call and the files it may read (a server's --bot-hosts and --models-dir)."""
    if not agent.strip():
        raise ArenaError("agent: give one agent (a spec such as minimax:depth=2, or a named agent)")

    def attempt() -> tuple[int, AgentEntry, str]:
        ladder_id, game, resolved, entries = _prepared(registry, database, key, agent, reach)

        def no_twin(stored: list[dict[str, Any]]) -> None:
            twin = same_agent(registry, resolved[0], stored, game)
            if twin is not None:
                raise AlreadyIn(f"agent: '{resolved[0].label}' and '{twin}', in ladder {ladder_id} already, are {SAME_AGENT}")

        # The ladder's agents (playing and waiting) are counted and compared in the join's own serialised transaction,
        # which writes nothing when it refuses: joins at once cannot pass the limit or bring one agent twice. The label
        # is checked there again (a tournament or join of the game written since it was decided: prepared again).
        added = queries.add_ladder_join(database, ladder_id, entries[0].label, entries[0].to_json(), MAX_AGENTS, no_twin,
                                        tournaments.labels_unchanged(registry, game, entries))  # fmt: skip
        return ladder_id, entries[0], added

    ladder_id, entry, added = tournaments.with_final_labels(attempt, "agent")
    if added == "full":  # one already in is told so first (AlreadyIn)
        raise ArenaError(f"ladder {ladder_id} has {MAX_AGENTS} agents (playing or waiting to join), the most a ladder "
                         "takes: it takes no more agents")  # fmt: skip
    if added == "in":
        raise AlreadyIn(f"agent '{entry.label}' is in ladder {ladder_id} already (give another seed or name to add a copy)")
    # waiting first, then the row: a ladder that admits the agent in between shows it in the row's agents
    joining = waiting(database, ladder_id)
    return {**one(database, ladder_id), "joining": joining}


def _prepared(registry: Registry, database: Database, key: str | int, agent: str,
              reach: Reach) -> tuple[int, Game, list[AgentEntry], list[AgentEntry]]:  # fmt: skip
    """The ladder's id and game, `agent` resolved, and its entry under the label stored results give it (a list of one
    each); nothing is written."""
    with database.session() as session:
        found = queries.find_tournament(session, key)
        if found is None:
            raise ArenaError(f"no tournament with id or name '{key}'")
        if found.format != FORMAT:
            raise ArenaError(f"tournament {found.id} is a {found.format} tournament, not a ladder: only a ladder can be joined")
        if found.status not in queue.UNFINISHED:
            raise ArenaError(f"ladder {found.id} is {found.status}: it takes no more agents")
        settings = json.loads(found.settings)
        budget = settings["adaptive"]["budget"]
        if budget is not None and found.scheduled >= budget:
            raise ArenaError(f"ladder {found.id} has scheduled its budget of {budget} matches: it takes no more agents")
        try:
            game = tournaments.game_with_players(registry, settings["game"], found.players)
        except ArenaError as exc:  # the ladder's game, no longer installed: about the tournament, not the agent joining
            exc.field = "tournament"
            raise
        if game.info.version != found.game_version:
            raise ArenaError(f"ladder {found.id} plays {game.info.id} version {found.game_version}; version "
                             f"{game.info.version} is installed, so results would mix: start a new ladder")  # fmt: skip
        lookup = tournaments.named_agents(session)
        reach.check(registry, agent, lookup, "agent")  # before it is made (and reads its files)
        resolved = resolve_all(registry, agent, game, lookup)
        if len(resolved) != 1:
            raise ArenaError(f"agent: give one agent, not {len(resolved)}")
        entries = tournaments.stored_labels(session, registry, game, resolved)
        tournaments.check_unattended(registry, entries, field="agent")
        return found.id, game, resolved, entries


def waiting(database: Database, ladder_id: int) -> list[str]:
    """The agents that joined a ladder and wait for its next batch boundary, in join order."""
    with database.session() as session:
        found = queries.find_tournament(session, ladder_id)
        admitted = {data["label"] for data in json.loads(found.settings)["agents"]} if found is not None else set()
        return [label for label, _ in queries.ladder_joins(session, ladder_id) if label not in admitted]
