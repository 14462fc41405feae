"""Turning agent specs (inline `random:seed=3` or registered names) into playable agent entries."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.api import Agent, Game
from arena.errors import ArenaError, did_you_mean, plugin_code
from arena.params import Param, Spec, format_value, parse_specs, validate_params
from arena.plugins import Registry
from arena.seeding import derive_seed

SEAT_PREFIX = "seat."

#: Every agent takes `seed`: it is mixed with the match seed and the seat into the agent's RNG.
SEED_PARAM = Param("seed", 0, "mixed into the agent's per-match random seed")


def declared_params(agent_cls: type[Agent]) -> tuple[Param, ...]:
    own = agent_cls.info.params
    return own if any(p.name == "seed" for p in own) else own + (SEED_PARAM,)


def params_json(params: dict[str, Any], seat_params: dict[str, str]) -> str:
    """Validated parameters (defaults filled in) and seat parameters as one sorted JSON text: what match seats store."""
    values = {k: format_value(v) for k, v in params.items()}
    values.update({f"{SEAT_PREFIX}{k}": v for k, v in seat_params.items()})
    return json.dumps(dict(sorted(values.items())))


def validated(agent_cls: type[Agent], type_id: str, raw: dict[str, str], game: Game) -> tuple[dict[str, Any], dict[str, str]]:
    """An agent's raw parameters validated against its type, with every default filled in (those that depend on the
    game too: Agent.canonical_params), and its seat parameters apart."""
    seat_params = {k[len(SEAT_PREFIX):]: v for k, v in raw.items() if k.startswith(SEAT_PREFIX)}
    own = {k: v for k, v in raw.items() if not k.startswith(SEAT_PREFIX)}
    values = validate_params(declared_params(agent_cls), own, f"agent '{type_id}'")
    with plugin_code(f"agent '{type_id}': its canonical_params"):
        return agent_cls.canonical_params(game, values), seat_params


def validated_alone(agent_cls: type[Agent], type_id: str, raw: dict[str, str]) -> dict[str, Any]:
    """An agent's raw parameters checked without a game, as far as that goes: names, values and ranges, then its type's
    check_params (a checkpoint that is no checkpoint). Seat parameters (which set a game's) are refused: without a game
    they set nothing. Returns the values, defaults filled in (`seed` included)."""
    values = validate_params(declared_params(agent_cls), raw, f"agent '{type_id}'")
    with plugin_code(f"agent '{type_id}': its check_params"):
        agent_cls.check_params({k: v for k, v in values.items() if k != "seed"})
    return values


@dataclass(frozen=True)
class AgentEntry:
    """One agent of a tournament: its label in the results and everything needed to rebuild it."""

    label: str
    type_id: str
    raw_params: dict[str, str]
    version: str
    game: str | None = None
    checkpoint: str | None = None
    params: dict[str, Any] = field(default_factory=dict)  # validated, `seed` included
    seat_params: dict[str, str] = field(default_factory=dict)  # game parameters for this agent's seat
    given: str | None = None  # the label it was given, when stored results made it another (tournament.stored_labels)

    def game_params_for(self, seat: int) -> dict[str, str]:
        """The game parameters this agent sets when it sits in `seat` (`seat.deck` -> `deck0` in seat 0)."""
        return {f"{name}{seat}": value for name, value in self.seat_params.items()}

    def to_json(self) -> dict[str, Any]:
        given = {"given": self.given} if self.given is not None else {}
        return {"label": self.label, "type": self.type_id, "params": self.raw_params, "version": self.version,
                "game": self.game, "checkpoint": self.checkpoint, **given}  # fmt: skip

    def params_json(self) -> str:
        return params_json(self.params, self.seat_params)

    def identity(self) -> tuple[str, str, str]:
        """What makes two entries one agent whatever their labels: type, version and parameters, defaults filled in."""
        return self.type_id, self.version, self.params_json()

    def maker(self, registry: Registry) -> Callable[[Game, int, int], Agent]:
        """`make(game, seat, match_seed)` with the lookups done once (tournaments make agents every match)."""
        agent_cls = registry.agent_class(self.type_id)
        params = {k: v for k, v in self.params.items() if k != "seed"}
        agent_seed = self.params.get("seed", 0)

        def make(game: Game, seat: int, match_seed: int) -> Agent:
            return agent_cls(game, seat, derive_seed(match_seed, seat, agent_seed), **params)

        return make

    def make(self, registry: Registry, game: Game, seat: int, match_seed: int) -> Agent:
        """This agent for one seat of one match; its RNG seed mixes the match seed, the seat and `seed`."""
        return self.maker(registry)(game, seat, match_seed)


def build_entry(
    registry: Registry, label: str, type_id: str, raw: dict[str, str], game: Game,
    restricted_to: str | None = None, checkpoint: str | None = None,
) -> AgentEntry:  # fmt: skip
    """Validate an agent against its type and the game; raises ArenaError with the reason."""
    agent_cls = registry.agent_class(type_id)
    if checkpoint is not None:
        # A checkpoint is handed to the agent as its `checkpoint` parameter.
        if not any(p.name == "checkpoint" for p in declared_params(agent_cls)):
            raise ArenaError(f"agent type '{type_id}' takes no checkpoint file")
        raw = {**raw, "checkpoint": checkpoint}
    for name in (k[len(SEAT_PREFIX):] for k in raw if k.startswith(SEAT_PREFIX)):
        if name not in game.info.seat_params:
            offered = ", ".join(game.info.seat_params) or "none"
            raise ArenaError(f"game '{game.info.id}' takes no seat parameter '{name}' (seat parameters: {offered})")
    params, seat_params = validated(agent_cls, type_id, raw, game)
    if restricted_to is not None and restricted_to != game.info.id:
        raise ArenaError(f"agent '{label}' is registered for game '{restricted_to}', not '{game.info.id}'")
    entry = AgentEntry(label, type_id, dict(raw), agent_cls.info.version, restricted_to, checkpoint, params, seat_params)
    for seat in range(game.num_players):  # a bad deck is bad input now, not a crash in the middle
        with plugin_code(f"game '{game.info.id}' with the seat parameters of '{label}'"):
            game_for_seat(type(game), game.params, entry.game_params_for(seat))
    without_seed = {k: v for k, v in params.items() if k != "seed"}
    with plugin_code(f"agent '{type_id}': its check_game"):
        agent_cls.check_game(game, without_seed)
    return replace(entry, version=installed_version(registry, entry))


def installed_version(registry: Registry, entry: AgentEntry) -> str:
    """The version `entry` plays as now: its type's version, plus its fingerprint where it has one (a checkpoint's
    digest), so the stored version says exactly what played: a retrained checkpoint at the same path is another agent."""
    agent_cls = registry.agent_class(entry.type_id)
    with plugin_code(f"agent '{entry.type_id}': its fingerprint"):
        fingerprint = agent_cls.fingerprint({k: v for k, v in entry.params.items() if k != "seed"})
    return f"{agent_cls.info.version}+{fingerprint}" if fingerprint else agent_cls.info.version


def check_as_stored(entry: AgentEntry, stored: dict[str, Any], now: str | None = None, tournament: int | None = None) -> None:
    """Refuse an agent that is no longer what its tournament stored (`stored`, AgentEntry.to_json with its version):
    `now` (default: `entry.version`) is the version it plays as; results would mix."""
    before, now = stored.get("version"), entry.version if now is None else now
    if before is not None and before != now:
        since = "its tournament" if tournament is None else f"tournament {tournament}"
        raise ArenaError(f"agent '{entry.label}' changed since {since} started (version {before}, now {now}), so its "
                         "results would mix: start a new tournament")  # fmt: skip


#: Why a registered name followed by parameters is refused (resolve, one_agent).
NAME_WITH_PARAMS = "'{name}' is a registered agent name; give its parameters at registration"


def resolve(registry: Registry, spec: Spec, game: Game, named: dict[str, Any] | None) -> AgentEntry:
    """An entry for an inline spec, or for a registered name (`named` is its stored row as a dict)."""
    if named is not None:
        if spec.params:
            raise ArenaError(NAME_WITH_PARAMS.format(name=spec.id))
        return build_entry(registry, spec.id, named["type"], named["params"], game, named["game"], named["checkpoint"])
    if spec.id not in registry.agents:
        known = ", ".join(sorted(registry.agents))
        raise ArenaError(f"unknown agent '{spec.id}': not a registered name nor an agent type{did_you_mean(spec.id, registry.agents)} "
                         f"(types: {known};"
                         " loose-file plugins load from ./plugins, $ARENA_PLUGINS_DIR and --plugins-dir)")  # fmt: skip
    return build_entry(registry, str(spec), spec.id, dict(spec.params), game)


#: `lookup(name)`: the named agent stored under `name` (its row as a dict: type, params, game, checkpoint), or None.
Lookup = Callable[[str], dict[str, Any] | None]


def one_agent(registry: Registry, text: str, option: str, what: str = "agent",
              lookup: Lookup | None = None) -> tuple[Spec, dict[str, Any] | None]:  # fmt: skip
    """The one agent an option outside a tournament names (`arena train --opponent`, `arena evolve-decks --agent`):
    an inline spec, or a name registered with `arena agents register` (its stored row, found by `lookup`)."""
    specs = parse_specs(text)
    if len(specs) != 1:
        raise ArenaError(f"{option} takes one agent, got {len(specs)} in {text!r}")
    spec = specs[0]
    if spec.id in registry.agents:  # a name is never an agent type (arena agents register refuses it): no look-up
        return spec, None
    named = lookup(spec.id) if lookup is not None else None
    if named is not None and spec.params:
        raise ArenaError(f"{option}: {NAME_WITH_PARAMS.format(name=spec.id)}")
    if named is None:
        known = ", ".join(sorted(registry.agents))
        raise ArenaError(f"{option}: unknown {what} '{spec.id}': not an agent type nor an agent registered in the database "
                         f"(--db; types: {known})")  # fmt: skip
    return spec, named


def stored_spec(named: dict[str, Any]) -> Spec:
    """The inline spec a registered agent (its stored row, as a Lookup gives it) stands for: its type and parameters,
    its checkpoint file as the `checkpoint` parameter (as build_entry hands it to the agent)."""
    checkpoint = {"checkpoint": str(named["checkpoint"])} if named.get("checkpoint") else {}
    return Spec(str(named["type"]), {**{str(k): str(v) for k, v in named["params"].items()}, **checkpoint})


def resolve_all(registry: Registry, text: str, game: Game, lookup: Lookup) -> list[AgentEntry]:
    """Entries for a comma-separated agent list; `lookup(name)` returns a stored named agent or None."""
    return distinct(resolve_each(registry, text, game, lookup))


def resolve_each(registry: Registry, text: str, game: Game, lookup: Lookup) -> list[AgentEntry]:
    """resolve_all without its check that the entries are distinct (a caller joining two lists checks them together)."""
    return [resolve(registry, spec, game, lookup(spec.id) if not spec.params else None) for spec in parse_specs(text)]


def distinct(entries: list[AgentEntry]) -> list[AgentEntry]:
    """`entries`, refused when one label is listed twice or two labels are one agent."""
    labels = [e.label for e in entries]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ArenaError(f"agent '{duplicates[0]}' is listed twice; give each agent once (e.g. random:seed=1,random:seed=2)")
    seen: dict[tuple[str, str, str], str] = {}
    for entry in entries:  # `random` and `random:seed=0` play alike: rated apart they would be two agents of one
        first = seen.setdefault(entry.identity(), entry.label)
        if first != entry.label:
            raise ArenaError(f"agents '{first}' and '{entry.label}' are {SAME_AGENT}")
    return entries


#: Why two labels of one agent are refused (resolve_all, and a ladder's join).
SAME_AGENT = ("the same agent (same type and parameters, defaults included); give each agent once, or another seed "
              "(e.g. random:seed=1)")  # fmt: skip


def same_agent(registry: Registry, entry: AgentEntry, stored: Sequence[dict[str, Any]], game: Game) -> str | None:
    """The label of the first of `stored` (agents as AgentEntry.to_json wrote them) that is `entry`'s agent under
    another label, or None. Stored agents that no longer build (a plugin gone, a file moved) are skipped."""
    for data in stored:
        if data["label"] == entry.label:  # the same label is the caller's to answer ("in already"), without a build
            continue
        try:
            other = entry_from_json(registry, data, game)
        except ArenaError:
            continue
        if other.identity() == entry.identity():
            return str(data["label"])
    return None


def stored_identity(registry: Registry, data: dict[str, Any], game: Game) -> tuple[str, str, str] | None:
    """AgentEntry.identity of an agent as a tournament of `game` stored it (AgentEntry.to_json; the version it played
    at), or None when its type is gone or its parameters no longer validate."""
    raw = {**data["params"], **({"checkpoint": data["checkpoint"]} if data.get("checkpoint") else {})}
    try:
        params, seat_params = validated(registry.agent_class(data["type"]), data["type"], raw, game)
    except ArenaError:
        return None
    return data["type"], str(data.get("version", "")), params_json(params, seat_params)


def entry_from_json(registry: Registry, data: dict[str, Any], game: Game) -> AgentEntry:
    return build_entry(registry, data["label"], data["type"], data["params"], game, data.get("game"), data.get("checkpoint"))


def seated_game(game: Game, seats: Sequence[AgentEntry | None]) -> Game:
    """`game` with the seat parameters (e.g. decks) of the agents in these seats; None is a seat that brings none."""
    params: dict[str, str] = {}
    for seat, entry in enumerate(seats):
        if entry is not None:
            params.update(entry.game_params_for(seat))
    return game_for_seat(type(game), game.params, params) if params else game


def game_for_seat(game_cls: type[Game], base: dict[str, Any], seat_params: dict[str, str]) -> Game:
    """The game with some seats' parameters set by the agents sitting there."""
    if not seat_params:
        return game_cls(**base)
    return game_cls(**{**{k: format_value(v) for k, v in base.items()}, **seat_params})
