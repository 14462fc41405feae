"""Games, agent types and named agents: what can play, as JSON-ready data."""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

from arena import agents as agent_specs
from arena.api import Game, State
from arena.errors import ArenaError, about
from arena.library import tokens
from arena.observations import observation_shape
from arena.params import check_name, parse_game_spec
from arena.plugins import Registry
from arena.reach import ANYWHERE, Reach
from db import queries
from db.queries import is_number
from db.session import Database, open_database


def _shape(game: Game) -> tuple[int | None, list[int] | None]:
    """(number of actions, observation shape) of a game, where it offers them."""
    try:
        actions: int | None = int(game.num_distinct_actions)
    except Exception:  # a third-party game may need parameters to know
        actions = None
    try:
        shape = observation_shape(game)
    except Exception:  # a game whose initial state fails at default parameters
        shape = None
    return actions, None if shape is None else list(shape)


def games(registry: Registry) -> list[dict[str, Any]]:
    """Every game: id, version, players, parameters (the `arena games --json` shape), and what a network
    playing it takes and gives at default parameters: `observation_shape` (null without one) and `num_actions`."""
    data = []
    for game_id in sorted(registry.games):
        game_cls = registry.games[game_id]
        info = game_cls.info
        entry: dict[str, Any] = {
            "id": info.id, "version": info.version, "name": info.name, "plugin": registry.owner("game", info.id),
            "players": [info.min_players, info.max_players], "perfect_information": info.perfect_information,
            "stochastic": info.stochastic,
            "params": [{"name": p.name, "default": p.default, "help": p.help} for p in info.params],
            "description": info.description,
        }  # fmt: skip
        try:
            default = game_cls()
        except Exception:  # noqa: BLE001  (a plugin game that needs a parameter, or cannot be made: listed, without them)
            entry["num_actions"], entry["observation_shape"], entry["state"] = None, None, None
        else:
            entry["num_actions"], entry["observation_shape"] = _shape(default)
            entry["state"] = json_view_doc(default)
        data.append(entry)
    return data


def json_view_doc(game: Game) -> str | None:
    """What a remote bot's `state` holds in this game: its `State.to_json` docstring (None: no JSON view, so no remote
    play), for bot authors who do not read the game's Python."""
    try:
        view = type(game.new_initial_state(0)).to_json
    except Exception:  # noqa: BLE001  (a third-party game may need parameters to start: _shape says nothing either)
        return None
    return None if view is State.to_json or not view.__doc__ else inspect.cleandoc(view.__doc__)


def game(registry: Registry, game_id: str) -> dict[str, Any]:
    """One game, with `num_actions` and `observation_shape` for the parameters in `game_id`."""
    spec = parse_game_spec(game_id)
    game_cls = registry.game_class(spec.id)
    entry = next(g for g in games(registry) if g["id"] == game_cls.info.id)
    entry["num_actions"], entry["observation_shape"] = _shape(game_cls(**spec.params))
    return entry


def agent_types(registry: Registry) -> list[dict[str, Any]]:
    return [
        {"type": a.info.id, "version": a.info.version, "plugin": registry.owner("agent", a.info.id),
         "params": [p.describe() for p in agent_specs.declared_params(a)], "description": a.info.description}
        for _, a in sorted(registry.agents.items())
    ]  # fmt: skip


def _named_to_dict(row: Any) -> dict[str, Any]:
    return {"name": row.name, "type": row.type, "params": json.loads(row.params), "game": row.game,
            "checkpoint": row.checkpoint, "created_at": row.created_at.isoformat(timespec="seconds"), "owner": row.owner}  # fmt: skip


def named_agents(database: Database) -> list[dict[str, Any]]:
    with database.session() as session:
        return [_named_to_dict(row) for row in queries.list_named_agents(session)]


def stored_agent_lookup(db_url: str | None) -> agent_specs.Lookup:
    """`lookup(name)` for a command that names one agent outside a tournament (arena train, arena evolve-decks): the
    agent registered under `name` in the database at `db_url` (default $ARENA_DB, else ./arena.db), or None. The
    database is opened only when a name is looked up, and a SQLite file that does not exist is not made."""
    from arena import tournament

    def lookup(name: str) -> dict[str, Any] | None:
        database = open_database(db_url, create=False)
        try:
            with database.session() as session:
                return tournament.named_agents(session)(name)
        finally:
            database.close()

    return lookup


def named_agent(database: Database, name: str) -> dict[str, Any]:
    with database.session() as session:
        row = queries.get_named_agent(session, name)
        if row is None:
            raise ArenaError(f"no agent named '{name}'")
        return _named_to_dict(row)


def agents(registry: Registry, database: Database) -> dict[str, Any]:
    """`arena agents list --json`: agent types (from plugins) and named agents (from the database)."""
    return {"types": agent_types(registry), "named": named_agents(database)}


def check_agent_name(registry: Registry, name: str) -> None:
    """The rule for a named agent's name, the same from `arena agents register` and POST /api/v1/agents: a name in an
    agent spec (arena.params.check_name), without '/' (it is part of page addresses), not digits alone (read as an id)
    and not an agent type's."""
    check_name(name, "an agent's name", "name", also="/")
    if is_number(name):
        raise ArenaError(f"an agent's name is not digits alone (a number is read as a tournament or match id), got {name!r}", "name")
    if name in registry.agents:
        raise ArenaError(f"'{name}' is an agent type; choose another name", "name")


def register_agent(
    registry: Registry, database: Database, name: str, type_id: str, params: dict[str, str],
    game_spec: str | None = None, checkpoint: str | None = None, owner: str | None = None,
    reach: Reach = ANYWHERE,
) -> dict[str, Any]:  # fmt: skip
    """Check and save a named agent (type plus parameters, optional game and checkpoint); returns it. `owner`: the user
    token's name that registers it over HTTP, the one that may remove it there (None: the CLI's); `reach`: the
    hosts it may call and the files it may read (a server's --bot-hosts and --models-dir), checked before any is read."""
    from arena import tournament

    check_agent_name(registry, name)
    raw = {str(k): str(v) for k, v in params.items()}
    with about("type"):
        agent_cls = registry.agent_class(type_id)
    checkpoint = os.path.abspath(checkpoint) if checkpoint else None
    for field, given in (("params", raw), ("checkpoint", {**raw, "checkpoint": checkpoint or ""})):  # before any is read
        why = reach.refusal(agent_cls, name, given)
        if why is not None:
            raise ArenaError(f"{field}: {why}", field)
    if checkpoint is not None and not os.path.isfile(checkpoint):
        kind = "does not exist" if not os.path.exists(checkpoint) else "is a folder" if os.path.isdir(checkpoint) else \
            "is not a regular file (a device, a pipe or a socket)"
        raise ArenaError(f"checkpoint file {checkpoint} {kind}", "checkpoint")
    if game_spec is not None:
        with about("game"):
            game_obj = tournament.make_game(registry, game_spec)
        agent_specs.build_entry(registry, name, type_id, raw, game_obj, None, checkpoint)
        game_id: str | None = game_obj.info.id
    else:
        if checkpoint and not any(p.name == "checkpoint" for p in agent_specs.declared_params(agent_cls)):
            raise ArenaError(f"agent type '{type_id}' takes no checkpoint file")
        # A checkpoint is read now, not at play.
        agent_specs.validated_alone(agent_cls, type_id, {**raw, **({"checkpoint": checkpoint} if checkpoint else {})})
        game_id = None
    with tournament.taken_name("an agent", name), database.session() as session, session.begin():
        if queries.get_named_agent(session, name) is not None:
            raise ArenaError(f"an agent named '{name}' exists already (remove it first)", "name")
        queries.add_named_agent(session, name, type_id, raw, game_id, checkpoint, owner)
    return named_agent(database, name)


def remove_agent(database: Database, name: str, by: str | None = None) -> None:
    """Remove a named agent (its past results stay). `by`: the user token's name that asks over HTTP, refused
    (tokens.NotOwner) unless it registered the agent; None: the CLI, which may."""
    with database.session() as session, session.begin():
        row = queries.get_named_agent(session, name)
        if row is not None:
            tokens.check_owner("agent", name, row.owner, by, ("registered", "remove"), "arena agents remove")
        if not queries.remove_named_agent(session, name):
            raise ArenaError(f"no agent named '{name}'")
