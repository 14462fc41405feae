"""Tournaments: validate, write the whole schedule, then play the pending matches and store results in batches."""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar, get_args

from sqlalchemy.exc import IntegrityError

from arena.adaptive_run import adaptive_settings, extend
from arena.agents import (
    AgentEntry,
    check_as_stored,
    distinct,
    entry_from_json,
    installed_version,
    resolve_all,
    resolve_each,
    seated_game,
    stored_identity,
)
from arena.api import Agent, AgentInfo, Game, State
from arena.errors import ArenaError, about, plugin_code
from arena.executors import Executor
from arena.heap import frozen_heap
from arena.interleave import batch_flags, play_interleaved
from arena.isolation import AgentProcess, IsolatedAgent, watch
from arena.ladder import FORMAT as LADDER
from arena.ladder import IDLE_SECONDS
from arena.match import (
    AGENT_ERROR,
    DEFAULT_MAX_TURNS,
    DEFAULT_NETWORK_ALLOWANCE,
    MAX_TURNS,
    Forfeit,
    MatchResult,
    encode_ints,
    match_steps,
    play_match,
    unmade,
)
from arena.openings import check_openings, opening_for, parse_openings
from arena.params import MAX_TIME_PER_MOVE, canonical, parse_game_spec
from arena.plugins import Registry
from arena.schedule import Table, decode_schedule, encode_schedule, gauntlet, random_tables, round_robin, round_robin_sets
from arena.seeding import derive_seed, game_seed
from arena.sprt_run import SprtMonitor, sprt_settings
from db import queries
from db.models import Tournament
from db.session import Database

Format = Literal["round-robin", "gauntlet", "tables", "adaptive", "ladder"]
FORMATS: tuple[str, ...] = get_args(Format)
#: The most matches one tournament may schedule (the schedule is written whole before play starts).
MAX_SCHEDULED = 10_000_000
#: Seeds are stored as 64-bit integers.
SEED_RANGE = (-(2**63), 2**63 - 1)
#: Longest tournament name (the column's size, on every database).
MAX_NAME = 200
#: Results are written at least this often ($ARENA_FLUSH_SECONDS overrides), and at most this many matches at a time.
FLUSH_SECONDS = float(os.environ.get("ARENA_FLUSH_SECONDS", "2.0"))
FLUSH_MATCHES = 2000
#: Seconds keep_pending's save waits for the play thread to finish a write of its own before leaving it to that thread.
PENDING_WAIT_SECONDS = 10.0

Progress = Callable[[int, int], None]
T = TypeVar("T")


def make_game(registry: Registry, spec_text: str) -> Game:
    return game_with_players(registry, spec_text, None)


@dataclass
class TournamentRequest:
    game: str
    agents: str
    rounds: int = 1
    seed: int = 0
    max_turns: int = DEFAULT_MAX_TURNS
    time_per_move: float | None = None
    name: str | None = None
    format: str = "round-robin"
    challenger: str | None = None
    players: int | None = None
    openings: str | Sequence[str] | None = None  # random:N, a file of openings, or a list of their lines (arena.openings)
    network_allowance: float = DEFAULT_NETWORK_ALLOWANCE  # seconds remote agents get on top of time_per_move
    sprt: str | None = None  # elo0=..,elo1=..[,alpha,beta,model]: stop once B (the second agent) is judged (arena.sprt)
    budget: int | None = None  # --format adaptive (or ladder, optional): matches in all (arena.adaptive_run)
    owner: str | None = None  # the user token's name that submits it over HTTP (None: the CLI, the server's machine)
    held_by: tuple[str, float] | None = None  # a play page's game: its server's worker and lease seconds (db.queue.play_hold)


def _game_with_players(registry: Registry, request: TournamentRequest) -> Game:
    return game_with_players(registry, request.game, request.players)


def game_with_players(registry: Registry, spec_text: str, players: int | None) -> Game:
    """The game of `spec_text` for `players` seats (None: as the spec says); ArenaError if it cannot seat them."""
    with about("game"):
        spec = parse_game_spec(spec_text)
        game_cls = registry.game_class(spec.id)
    params = dict(spec.params)
    if players is not None:
        info = game_cls.info
        if not info.min_players <= players <= info.max_players:
            seats = f"{info.min_players}" if info.min_players == info.max_players else f"{info.min_players} to {info.max_players}"
            raise ArenaError(f"game '{info.id}' is for {seats} players, not {players}", "players")
        if info.min_players != info.max_players:
            if "players" in params:
                with about("game"), plugin_code(f"game '{spec.id}'"):
                    given = game_cls(**params).num_players  # the game checks its own parameter first
                if given != players:
                    raise ArenaError("--players and the game's players parameter disagree", "players")
            params["players"] = str(players)
    with about("game"), plugin_code(f"game '{spec.id}'"):
        return game_cls(**params)


def named_agents(session: Any) -> Callable[[str], dict[str, Any] | None]:
    """`lookup(name)` for arena.agents.resolve_all: a named agent stored in the database (None: no session, or no such name)."""

    def lookup(name: str) -> dict[str, Any] | None:
        row = queries.get_named_agent(session, name) if session is not None else None
        if row is None:
            return None
        return {"type": row.type, "params": json.loads(row.params), "game": row.game, "checkpoint": row.checkpoint}

    return lookup


def stored_labels(session: Any, registry: Registry, game: Game, entries: list[AgentEntry]) -> list[AgentEntry]:
    """The entries under the labels their agents have in stored results of this game (and game version), so that a
    leaderboard's row is one agent and one agent is one row:
    - an agent stored under another label takes that label (`random:seed=0` after `random`: the same agent);
    - a label stored for another agent (a network retrained at the same path, a new release of a plugin, a name
      registered again with other parameters) is taken as LABEL@VERSION, or LABEL@2, LABEL@3... when the versions
      agree. The label's first agent keeps the plain name.
    A renamed entry keeps the label it was given as `given`."""
    if session is None:
        return entries
    stored = queries.stored_agents(session, game.info.id, game.info.version)
    identities = {label: stored_identity(registry, data, game) for label, data in stored.items()}
    labels_of: dict[tuple[str, str, str], str] = {}
    for label, identity in identities.items():
        if identity is not None:
            labels_of.setdefault(identity, label)
    renamed = []
    for entry in entries:
        identity, label = entry.identity(), entry.label
        if label not in stored:
            label = labels_of.get(identity, label)
        elif identities[label] != identity and (identities[label] is not None or stored[label].get("version") != entry.version):
            label = labels_of.get(identity) or _fresh_label(entry, stored[label].get("version"), set(stored))
        renamed.append(entry if label == entry.label else replace(entry, label=label, given=entry.label))
    for moved in (entry for entry in renamed if entry.given is not None):
        other = next((entry for entry in renamed if entry is not moved and entry.label == moved.label), None)
        if other is not None:
            raise ArenaError(f"agents '{moved.given}' and '{other.given or other.label}' would both be recorded as "
                             f"'{moved.label}' (stored results of this game decide the labels): give them other names")  # fmt: skip
    return renamed


#: Times a tournament (or a ladder join) is prepared when the labels it was prepared with are no longer those its
#: write finds (LabelsChanged): another process wrote agents of the same game in between, each time.
LABEL_ATTEMPTS = 3


class LabelsChanged(Exception):
    """Raised in a write's serialised transaction (labels_unchanged): the stored results of the game now give the agents
    other labels than they were prepared with (another process wrote a tournament or a ladder join of the game since);
    nothing is written, and the caller prepares again."""


def labels_unchanged(registry: Registry, game: Game, entries: list[AgentEntry]) -> Callable[[Any], None]:
    """`recheck(connection)` for a write of `entries` (as stored_labels gave them): LabelsChanged unless the stored
    results, read again in the write's own transaction (serialised with every other writer of labels), give them the
    same labels, so that two processes that prepared at once cannot both take one label for two agents."""
    listed = [entry if entry.given is None else replace(entry, label=entry.given, given=None) for entry in entries]
    prepared = [(entry.label, entry.given) for entry in entries]

    def recheck(connection: Any) -> None:
        try:
            now = stored_labels(connection, registry, game, listed)
        except ArenaError:  # two agents would now share a label: preparing again says so, about its input
            raise LabelsChanged from None
        if [(entry.label, entry.given) for entry in now] != prepared:
            raise LabelsChanged

    return recheck


def with_final_labels(attempt: Callable[[], T], field: str) -> T:
    """`attempt()` (which prepares its agents' labels, then writes them with labels_unchanged's recheck), again while
    another process's write changes the labels in between, at most LABEL_ATTEMPTS times; `field` names the agents' input."""
    for tries in itertools.count(1):
        try:
            return attempt()
        except LabelsChanged:
            if tries == LABEL_ATTEMPTS:
                raise ArenaError("the labels of these agents kept changing while they were written (other tournaments or "
                                 "ladder joins of this game were written at the same time): try again", field) from None  # fmt: skip
    raise AssertionError("unreachable")


def renamed_note(given: str, label: str) -> str:
    """Why a tournament records the agent given as `given` under `label` (stored_labels)."""
    if label.startswith(given + "@"):
        return (f"'{given}' has results of another agent under that name for this game (another version or other "
                f"parameters): this tournament records it as '{label}', so the two never mix")  # fmt: skip
    return (f"'{given}' is the agent with results for this game as '{label}' (same type, version and parameters): "
            f"this tournament records it under that name")  # fmt: skip


def _fresh_label(entry: AgentEntry, stored_version: str | None, taken: set[str]) -> str:
    """LABEL@VERSION when the stored agent of that label has another version, else LABEL@2, LABEL@3...: the first not taken."""
    first = [f"{entry.label}@{entry.version}"] if stored_version != entry.version else []
    candidates = itertools.chain(first, (f"{entry.label}@{n}" for n in itertools.count(2)))
    return next(candidate for candidate in candidates if candidate not in taken)


def check_clock(time_per_move: float | None, network_allowance: float) -> None:
    """Refuse a think time (seconds) or network allowance (seconds) that is no limit: negative, nan, inf, over a day."""
    if time_per_move is not None and not (0 < time_per_move <= MAX_TIME_PER_MOVE):
        raise ArenaError(f"--time-per-move must be a number of seconds above 0 and at most {MAX_TIME_PER_MOVE:g}, "
                         f"got {time_per_move:g}")  # fmt: skip
    if not math.isfinite(network_allowance) or not 0 <= network_allowance <= MAX_TIME_PER_MOVE:
        raise ArenaError(f"--network-allowance must be at least 0 (and finite), got {network_allowance * 1000:g}")


def prepare(registry: Registry, database: Database | None,
            request: TournamentRequest) -> tuple[Game, list[AgentEntry], list[Table], dict[str, Any], str | None]:
    """Check everything and build the schedule (agent positions by seat, match by match), the settings and the secret
    (a hidden-information game's, mixed into its deals); nothing is written."""
    if request.rounds < 1:
        raise ArenaError(f"--rounds must be at least 1, got {request.rounds}")
    if not 1 <= request.max_turns <= MAX_TURNS:
        raise ArenaError(f"--max-turns must be between 1 and {MAX_TURNS:,}, got {request.max_turns}")
    if request.budget is not None and request.budget > MAX_SCHEDULED:
        raise ArenaError(f"--budget must be at most {MAX_SCHEDULED:,} matches (a tournament's limit), got {request.budget}")
    check_clock(request.time_per_move, request.network_allowance)
    if not SEED_RANGE[0] <= request.seed <= SEED_RANGE[1]:
        raise ArenaError(f"--seed must be between {SEED_RANGE[0]} and {SEED_RANGE[1]} (a 64-bit integer), got {request.seed}")
    if request.name is not None and not 0 < len(request.name.strip()) <= MAX_NAME:
        raise ArenaError(f"--name must be 1 to {MAX_NAME} characters, not only spaces")
    if request.format not in FORMATS:
        raise ArenaError(f"unknown format '{request.format}' (choose: {', '.join(FORMATS)})")
    game = _game_with_players(registry, request)
    if not registry.is_builtin("game", game.info.id):  # Arena's own games pass the conformance suite in its tests
        from arena.testing import game_problem

        problem = game_problem(game, request.seed)
        if problem is not None:
            raise ArenaError(f"game '{game.info.id}' fails a quick conformance check, so its matches would blame the agents: "
                             f"{problem} (arena.testing.check_game says more)")  # fmt: skip
    with database.session() if database is not None else contextlib.nullcontext(None) as session:
        existing = queries.find_tournament(session, request.name) if session is not None and request.name is not None else None
        if existing is not None:
            more = f"; `arena run-tournament --resume {request.name}` finishes it" if existing.status in ("running", "stopped") else ""
            raise ArenaError(f"a tournament named '{request.name}' exists already ({existing.status}): choose another name{more}",
                             "name")  # fmt: skip
        if request.name is not None and queries.is_number(request.name):
            raise ArenaError("a tournament name cannot be a number (numbers are tournament ids)", "name")
        if request.name is not None and ("/" in request.name or request.name != request.name.strip()
                                         or not request.name.isprintable()):
            raise ArenaError(f"--name: a tournament name has no '/', no control characters and no spaces at its ends (it is part "
                             f"of page addresses), got {request.name!r}", "name")  # fmt: skip
        lookup = named_agents(session)
        challenger: list[AgentEntry] = []  # resolved apart, so that its errors are about the challenger
        if request.format == "gauntlet":
            if not request.challenger:
                raise ArenaError("--format gauntlet needs --challenger AGENT")
            with about("challenger"):
                challenger = resolve_all(registry, request.challenger, game, lookup)
        elif request.challenger:
            raise ArenaError("--challenger is only for --format gauntlet")
        with about("agents"):
            listed = distinct(challenger + resolve_each(registry, request.agents, game, lookup))
            entries = stored_labels(session, registry, game, listed)
    players = game.num_players
    if request.format == "gauntlet":
        if players != 2:
            raise ArenaError("the gauntlet format is for two-player games")
        schedule: Callable[[int], list[Table]] = lambda rounds: gauntlet(len(entries), rounds)  # noqa: E731
    elif request.format == "tables":
        if request.openings is not None:
            raise ArenaError("--openings plays each group as a set in every seating: give it with round-robin, not --format tables")
        schedule = lambda rounds: random_tables(len(entries), rounds, players, request.seed)  # noqa: E731
    elif request.format in ("adaptive", "ladder"):  # a first round; the rest is chosen as results come (arena.adaptive_run)
        first = round_robin_sets(len(entries), 1, players) if request.openings is not None else round_robin(len(entries), 1, players)
        schedule = lambda rounds: first  # noqa: E731
    elif request.openings is not None:
        schedule = lambda rounds: round_robin_sets(len(entries), rounds, players)  # noqa: E731
    else:
        schedule = lambda rounds: round_robin(len(entries), rounds, players)  # noqa: E731
    per_round = len(schedule(1))
    if per_round * request.rounds > MAX_SCHEDULED:  # refused before the schedule takes any memory
        raise ArenaError(f"{request.rounds} rounds of {per_round} matches is more than the {MAX_SCHEDULED:,} matches a "
                         "tournament may schedule; play it as several tournaments")  # fmt: skip
    tables = schedule(request.rounds)
    settings: dict[str, Any] = {
        "game": game.label(),
        "agents": [entry.to_json() for entry in entries],
        "format": request.format,
        "challenger": entries[0].label if request.format == "gauntlet" else None,
        "network_allowance": request.network_allowance,
    }
    secret = None if game.info.perfect_information else secrets.token_hex(16)  # before the openings: it deals their sets
    if request.openings is not None:
        with about("openings"):
            set_size = 2 if request.format == "gauntlet" else players
            openings = parse_openings(request.openings, game, game_seed(game, derive_seed(request.seed, 0), secret))
            later = -(-request.budget // set_size) if request.format in ("adaptive", "ladder") and request.budget else None
            check_openings(SeatedGames(game, entries), openings, tables, set_size, request.seed, secret, later)
        settings.update(openings=openings, set_size=set_size)
    if request.format in ("adaptive", "ladder"):
        settings["adaptive"] = adaptive_settings(request.budget, len(entries), players, settings.get("set_size", 1), request.format)
    elif request.budget is not None:
        raise ArenaError("--budget is only for --format adaptive or ladder")
    if request.sprt is not None:
        if request.format != "round-robin":
            raise ArenaError("--sprt plays the round-robin of two agents (A,B); leave out --format")
        settings["sprt"] = sprt_settings(request.sprt, [entry.label for entry in entries], players, request.openings is not None)
    return game, entries, tables, settings, secret


def create(registry: Registry, database: Database, request: TournamentRequest, status: str = "running",
           check: Callable[[list[AgentEntry]], None] | None = None) -> int:  # fmt: skip
    """Validate the request and write the tournament with its full schedule; returns its id.

    `status` "queued" leaves it to `arena serve`'s queue; "running" is for the caller to play now.
    `check(entries)`, the caller's own test of the resolved agents (in seat order), may refuse before anything is written.
    """
    with frozen_heap():
        return _create(registry, database, request, status, check)


def check_unattended(registry: Registry, entries: Sequence[AgentEntry], field: str = "agents", challenger: bool = False) -> None:
    """A tournament the server plays alone (queued, or a ladder's newcomer) seats no person: nobody would be there to
    move, so every match of theirs would be a forfeit. `field` names the input; a gauntlet's challenger (the first
    entry) is its own."""
    for index, entry in enumerate(entries):
        if registry.agent_class(entry.type_id).person:
            named = "challenger" if challenger and index == 0 else field
            raise ArenaError(f"{named}: '{entry.label}' is a person, who plays as the match goes, and nobody would be there "
                             "to play that seat (a person plays with `arena play`, or on the server's /play page)", named)  # fmt: skip


def _create(registry: Registry, database: Database, request: TournamentRequest, status: str,
            check: Callable[[list[AgentEntry]], None] | None) -> int:  # fmt: skip
    def attempt() -> int:
        game, entries, tables, settings, secret = prepare(registry, database, request)
        if status == "queued":
            check_unattended(registry, entries, challenger=request.format == "gauntlet")
        if check is not None:
            check(entries)
        recheck = labels_unchanged(registry, game, entries)  # (labels another process wrote since prepare read them)
        with taken_name("a tournament", request.name):  # (one of the same name written since prepare looked)
            return _write(database, request, game, tables, settings, secret, status, recheck)

    return with_final_labels(attempt, "agents")


@contextlib.contextmanager
def taken_name(what: str, name: str | None) -> Iterator[None]:
    """A write refused by the database's unique name (another process wrote one of that name since the check before
    it): the error the check gives, about `name`, not the database's own words (which read as a 503)."""
    try:
        yield
    except IntegrityError:
        if name is None:
            raise
        raise ArenaError(f"{what} named '{name}' exists already: choose another name", "name") from None


def _write(database: Database, request: TournamentRequest, game: Game, tables: list[Table], settings: dict[str, Any],
           secret: str | None, status: str, recheck: Callable[[Any], None] | None = None) -> int:
    return queries.create_tournament(
        database, name=request.name, game_id=game.info.id, game_version=game.info.version,
        game_params=canonical(game.params), format=request.format, rounds=request.rounds, seed=request.seed,
        max_turns=request.max_turns, time_per_move=request.time_per_move, players=game.num_players,
        settings=settings, schedule=encode_schedule(tables), scheduled=len(tables), status=status,
        secret=secret, owner=request.owner, recheck=recheck, held_by=request.held_by,
    )  # fmt: skip


# ---------------------------------------------------------------- playing


class MatchTask(NamedTuple):  # one per match: a named tuple is cheaper to make and to send to a worker
    schedule_index: int  # the match's seed is derive_seed(tournament seed, schedule_index)
    seating: Table  # agent positions (in Setup.agents) by seat


@dataclass
class Setup:
    """What a worker needs to play any match of one tournament."""

    game_spec: str
    agents: list[dict[str, Any]]
    seed: int
    max_turns: int
    time_per_move: float | None
    plugins_dirs: tuple[str, ...] = ()
    isolate: bool = False
    memory_limit: int | None = None  # megabytes per agent process
    openings: dict[str, Any] | None = None  # the settings' openings (arena.openings), or None
    set_size: int = 1  # consecutive matches that share a seed and an opening (2 for a pair)
    secret: str | None = None  # the tournament's, mixed into a hidden-information game's chance (never shown)
    concurrent: int = 1  # matches interleaved in one worker, their network decisions batched (arena.interleave)
    network_allowance: float = DEFAULT_NETWORK_ALLOWANCE


def _same_code(data: dict[str, Any]) -> str:
    """An agent entry (its JSON) without its label and seed: entries with equal keys play the same code and files."""
    params = {name: value for name, value in data["params"].items() if name != "seed"}
    return json.dumps({**data, "label": None, "params": params}, sort_keys=True)


class Unmade(Agent):
    """Stands in for an agent whose constructor raised: its first move forfeits (`agent_error`) with the reason."""

    info = AgentInfo(id="unmade", description="an agent that could not be made")

    def __init__(self, game: Game, player: int, seed: int, detail: str) -> None:
        super().__init__(game, player, seed)
        self.detail = detail

    def act(self, state: State) -> int:
        raise Forfeit(AGENT_ERROR, self.detail)


class SeatedGames:
    """The tournament's game with the seat parameters (e.g. decks) of the agents in each seating, made once a seating."""

    def __init__(self, game: Game, entries: Sequence[AgentEntry]) -> None:
        self.game, self.entries = game, entries
        self.any = any(entry.seat_params for entry in entries)
        self.made: dict[Table, Game] = {}

    def __call__(self, seating: Table) -> Game:
        if not self.any:
            return self.game
        game = self.made.get(seating)
        if game is None:
            game = self.made[seating] = seated_game(self.game, [self.entries[position] for position in seating])
        return game


class Player:
    """Plays matches of one tournament: builds the game once and agents per match (in agent processes if isolated)."""

    def __init__(self, setup: Setup, registry: Registry) -> None:
        self.setup = setup
        self.preload = registry.installed_modules()  # what agent processes are forked with (arena.isolation.forkserver)
        self.game = make_game(registry, setup.game_spec)
        self.registry = registry
        self.entries = [entry_from_json(registry, data, self.game) for data in setup.agents]
        # Every agent's version is checked against the stored one when it is first made in this worker (a process, a
        # Ray task: an error there stops the run in one line, where a pool's initializer would break the pool), and
        # those whose version holds a fingerprint (a checkpoint's digest) each time one is made: a file rewritten during
        # the run would otherwise be played under the version stored at its start.
        self.fingerprinted = [entry.version != registry.agent_class(entry.type_id).info.version for entry in self.entries]
        self._checked = [False] * len(self.entries)
        self.makers = [entry.maker(registry) for entry in self.entries]
        # Remote agents already live outside this process: they are never isolated.
        self.remote = [registry.agent_class(entry.type_id).remote for entry in self.entries]
        # The per-move watchdog is for agents that are not Arena's own (README: Processes). Arena's remote agents bound
        # every wait themselves (the network's deadline, the relay's grace beyond it: a watchdog would charge them with a
        # stall of the server), and a person at the terminal (`human`) may think as long as the match allows.
        self.watched = [not registry.is_builtin("agent", entry.type_id) for entry in self.entries]
        # Agent processes (isolated agents): one per seat when matches are played one at a time, one per agent of
        # the tournament when they are interleaved (it hosts that agent's seats of every running match).
        self.processes: dict[int, AgentProcess] = {}
        self._interleaved = setup.concurrent > 1
        # Interleaved, entries that differ only in their seed (a network playing itself) share one process: their
        # decisions of a step cross in one message and go through one forward pass instead of one per entry.
        hosts: dict[str, int] = {}
        self._host = [hosts.setdefault(_same_code(data), position) for position, data in enumerate(setup.agents)]
        self._game_for = SeatedGames(self.game, self.entries)
        # Arena's own agents, or agents in their own processes, may be handed the live state (see play_match).
        self.trusted = setup.isolate or all(registry.is_builtin("agent", entry.type_id) for entry in self.entries)

    def _made(self, position: int, game: Game, seat: int, seed: int) -> Agent:
        """The agent at `position` made for this seat; one whose making raised forfeits at its first move (as it does
        in an agent process), where the run would otherwise stop with the plugin's traceback. An ArenaError (the agent
        cannot be made as configured: its checkpoint gone since the tournament began) stops the run in one line, here
        and in agent processes alike: `--resume` goes on once it is mended."""
        try:
            agent = self.makers[position](game, seat, seed)
        except (ArenaError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001  (a plugin's constructor: its fault, recorded in its match)
            return Unmade(game, seat, seed, unmade(seat, exc))
        if self.fingerprinted[position] or not self._checked[position]:  # after making it: what it read is checked
            entry = self.entries[position]
            try:
                check_as_stored(entry, self.setup.agents[position],
                                installed_version(self.registry, entry) if self.fingerprinted[position] else None)  # fmt: skip
            except ArenaError:
                agent.close()
                raise
            self._checked[position] = True
        return agent

    def _agents(self, task: MatchTask, seed: int, game: Game) -> list[Agent]:
        if not self.setup.isolate:
            agents = [self._made(position, game, seat, seed) for seat, position in enumerate(task.seating)]
            if not self.trusted:  # not Arena's own: a per-move watchdog, so that a hang never stops the run
                for agent, position in zip(agents, task.seating):
                    if self.watched[position]:
                        watch(agent, self.setup.time_per_move)
            return agents
        slots = [self._host[position] if self._interleaved else seat for seat, position in enumerate(task.seating)]
        starting = list(zip(slots, task.seating))
        if self._interleaved and not self.processes:  # the first match: every agent's process boots at once
            starting += [(self._host[position], position) for position in range(len(self.entries))]
        for slot, position in starting:
            if not self.remote[position]:
                self._process(slot).start()
        return [
            self._made(position, game, seat, seed) if self.remote[position] else
            IsolatedAgent(self._process(slot), game, seat, seed, self.setup.agents[position], self.setup.time_per_move)
            for seat, (slot, position) in enumerate(zip(slots, task.seating))
        ]  # fmt: skip

    def _process(self, slot: int) -> AgentProcess:
        process = self.processes.get(slot)
        if process is None:
            process = self.processes[slot] = AgentProcess(self.setup.plugins_dirs, self.setup.game_spec, self.setup.memory_limit,
                                                          self.preload)  # fmt: skip
        return process

    def _fresh(self, used: list[Agent], task: MatchTask, seed: int, game: Game) -> list[Agent]:
        """New agents for a match played again (see play_match); `used` are closed and replaced in place."""
        for agent in used:
            agent.close()
        used[:] = self._agents(task, seed, game)
        return used

    def _prepare(self, task: MatchTask) -> tuple[int, int, Game, Sequence[int], list[Agent]]:
        """The match's seed, the seed of the game's own chance, the game, the opening and the agents."""
        set_size = self.setup.set_size
        seed = derive_seed(self.setup.seed, task.schedule_index - task.schedule_index % set_size)  # a set shares its seed
        game = self._game_for(task.seating)
        deal = game_seed(game, seed, self.setup.secret)  # the game's own chance: agents cannot predict it
        opening = opening_for(game, self.setup.openings, task.schedule_index // set_size, deal)
        return seed, deal, game, opening, self._agents(task, seed, game)

    def play(self, task: MatchTask) -> queries.MatchOutcome:
        start = time.perf_counter()
        seed, deal, game, opening, agents = self._prepare(task)
        try:
            result = play_match(game, agents, seed, self.setup.max_turns, self.setup.time_per_move, opening,
                                self.setup.network_allowance, remake=lambda: self._fresh(agents, task, seed, game),
                                trusted=self.trusted, game_seed=deal)  # fmt: skip
        finally:
            for agent in agents:
                agent.close()
        return outcome_of(task, seed, result, time.perf_counter() - start)

    def play_all(self, tasks: Sequence[MatchTask]) -> Iterator[queries.MatchOutcome]:
        """Every task's outcome: one match after another, or `concurrent` at a time (in finishing order)."""
        if self.setup.concurrent <= 1 or len(tasks) <= 1:
            for task in tasks:
                yield self.play(task)
            return
        running: dict[int, tuple[int, float, list[Agent]]] = {}  # by schedule index: seed, start time, agents

        def start(task: MatchTask) -> tuple[Any, list[Agent]]:
            seed, deal, game, opening, agents = self._prepare(task)
            running[task.schedule_index] = (seed, time.perf_counter(), agents)
            setup = self.setup
            steps = match_steps(game, agents, seed, setup.max_turns, setup.time_per_move, opening, batched=batch_flags(agents),
                                network_allowance=setup.network_allowance, remake=lambda: self._fresh(agents, task, seed, game),
                                trusted=self.trusted, game_seed=deal)  # fmt: skip
            return steps, agents

        try:
            for task, result in play_interleaved(tasks, start, self.setup.concurrent):
                seed, began, agents = running.pop(task.schedule_index)
                for agent in agents:
                    agent.close()
                yield outcome_of(task, seed, result, time.perf_counter() - began)
        finally:
            for _seed, _began, agents in running.values():
                for agent in agents:
                    agent.close()

    def close(self) -> None:
        for process in self.processes.values():
            process.kill()
        self.processes.clear()


class ScheduleOrder:
    """Matches taken in schedule order (that of `tasks`): one that finishes early is held until those before it are in."""

    def __init__(self, tasks: Sequence[MatchTask]) -> None:
        self._order = iter(task.schedule_index for task in tasks)
        self._wanted = next(self._order, None)
        self._taken: set[int] = set()  # taken out of turn (rest): passed over when their turn comes
        self.held: dict[int, queries.MatchOutcome] = {}

    def add(self, outcome: queries.MatchOutcome) -> list[queries.MatchOutcome]:
        """The outcomes whose turn has now come, in order (none while an earlier match is missing)."""
        self.held[outcome.schedule_index] = outcome
        ready = []
        while self._wanted is not None and (self._wanted in self.held or self._wanted in self._taken):
            if self._wanted in self.held:
                ready.append(self.held.pop(self._wanted))
            self._wanted = next(self._order, None)
        return ready

    def rest(self) -> list[queries.MatchOutcome]:
        """Every outcome held, in order, out of turn (play stops before their turn comes)."""
        rest = [self.held.pop(index) for index in sorted(self.held)]
        self._taken.update(outcome.schedule_index for outcome in rest)
        return rest


def storable_text(text: str | None) -> str | None:
    """Text as both databases store it: PostgreSQL's text holds no NUL (an agent's error message may), so it is written
    as the two characters \\0 on SQLite too, and both read the same."""
    return text if text is None or "\0" not in text else text.replace("\0", "\\0")


def outcome_of(task: MatchTask, seed: int, result: MatchResult, duration: float) -> queries.MatchOutcome:
    return queries.MatchOutcome(
        schedule_index=task.schedule_index, seed=seed, seating=task.seating, turns=result.turns, reason=result.reason,
        detail=storable_text(result.detail), moves=encode_ints(result.opening + result.moves),
        legal_counts=encode_ints(result.legal_counts),
        duration=duration, scores=result.scores, outcomes=result.outcomes, ranks=result.ranks,
        think_times=result.think_times, move_counts=result.move_counts, rounds=result.rounds,
        first_player=result.first_player, opening_plies=len(result.opening),
        network_times=result.network_times if any(result.network_times) else None,
    )  # fmt: skip


def play(
    database: Database, registry: Registry, tournament_id: int, workers: int = 1, progress: Progress | None = None,
    plugins_dirs: Sequence[str] = (), isolate: bool = False, memory_limit: int | None = None,
    concurrent: int = 1, notify: Callable[[str], None] | None = None, log: Callable[[str], None] | None = None,
    executor: Executor | None = None, trust_agents: bool = False, idle: Callable[[float], None] | None = None,
    keep_pending: Callable[[Callable[[], None]], None] | None = None,
) -> int:  # fmt: skip
    """Play every pending match of the tournament; returns how many were played.

    Agents run in their own processes with `isolate`, and always when there is a time per move and
    more than one worker (a worker must never hang on an agent), and on a game of hidden information
    when any agent is not one of Arena's own, unless `trust_agents` (an agent in the runner's process
    can read what its seat may not see). `concurrent` > 1 interleaves that many matches in each
    worker and batches their networks' decisions (arena.interleave), isolated or not (an isolated
    agent's batch crosses to its process in one message, see arena.isolation).
    A tournament run as an SPRT stops at the match that decides the test (in schedule order),
    reporting each step to `log`; an adaptive tournament grows batch by batch. A ladder (arena.ladder)
    admits the agents that joined at each batch boundary and plays until its budget, or until it is
    cancelled; settled without a budget, it calls `idle(seconds)` (default: sleep) between looks for
    joins; `idle` may raise to stop (the server's queue worker does, when it is stopped or loses its claim).
    `keep_pending` is given a function that stores the matches played and not yet written (results are written in
    batches), with an SPRT's state as of those matches, for another thread to call when this one is stuck in a match
    that will not end.
    """
    if concurrent < 1:
        raise ArenaError(f"--concurrent-matches must be at least 1, got {concurrent}")
    if executor is None:  # this machine: this process, or `workers` processes
        from arena.executors.local import LocalPool

        executor = LocalPool(workers)
    with frozen_heap(), executor.held():  # one Ray connection for every part of an adaptive tournament
        args = (database, registry, tournament_id, executor, progress, plugins_dirs, isolate, memory_limit, concurrent, notify, log,
                trust_agents, keep_pending)  # fmt: skip
        played = _play(*args)
        while True:
            cancelled, open_ladder = _state(database, tournament_id)
            if cancelled:
                break
            grown_from = extend(database, tournament_id)  # an adaptive tournament or a ladder: its next batch, chosen from the results
            if grown_from is not None:
                played += _play(*args, first=grown_from)
            elif not open_ladder:
                break
            else:  # a ladder that is settled and has no budget: wait for an agent to join (or a cancel)
                (idle or time.sleep)(IDLE_SECONDS)
        queries.finish_tournament(database, tournament_id)
        return played


def _state(database: Database, tournament_id: int) -> tuple[bool, bool]:
    """(cancelled, a ladder without budget): a ladder goes on until cancelled, or until its budget is spent."""
    with database.session() as session:
        found = queries.find_tournament(session, tournament_id)
        if found is None or found.status == "cancelled":
            return True, False
        return False, found.format == LADDER and json.loads(found.settings)["adaptive"]["budget"] is None


def sprt_state(monitor: SprtMonitor | None) -> queries.SprtStateValues | None:
    """What a run of --sprt stores with its matches: its test's state (None for other tournaments)."""
    return None if monitor is None else monitor.state.stored()


def _check_unchanged(tournament: Tournament, game: Game, started: Sequence[dict[str, Any]], entries: Sequence[AgentEntry]) -> None:
    """Refuse to go on with a game or an agent that is not the one the tournament started with: results would mix.

    `started` is the settings' agent list, as written at creation; `entries` are those agents as installed now.
    """
    if game.info.version != tournament.game_version:
        raise ArenaError(
            f"tournament {tournament.id} was started with {game.info.id} version {tournament.game_version}; "
            f"version {game.info.version} is installed, so its results would mix: start a new tournament"
        )
    for data, entry in zip(started, entries):
        check_as_stored(entry, data, tournament=tournament.id)


def _play(
    database: Database, registry: Registry, tournament_id: int, executor: Executor, progress: Progress | None,
    plugins_dirs: Sequence[str], isolate: bool, memory_limit: int | None, concurrent: int = 1,
    notify: Callable[[str], None] | None = None, log: Callable[[str], None] | None = None, trust_agents: bool = False,
    keep_pending: Callable[[Callable[[], None]], None] | None = None, first: int = 0,
) -> int:  # fmt: skip
    """Play the tournament's pending matches; `first`: every match before it is stored already (an adaptive tournament's
    batch after the schedule it grew from), so only the rest is looked up: a ladder's batch no longer reads every index
    stored before it."""
    monitor = None
    with database.session() as session:
        tournament = queries.find_tournament(session, tournament_id)
        if tournament is None:
            raise ArenaError(f"no tournament {tournament_id}")
        settings = json.loads(tournament.settings)
        tables = decode_schedule(tournament.schedule, tournament.players, first)  # the tables from `first` on
        played = queries.played_indices(session, tournament.id, first)
        # A worker must never hang on an agent: parallel play under a time limit isolates them.
        isolate = isolate or memory_limit is not None or (tournament.time_per_move is not None and executor.parallel)
        if not trust_agents and not isolate and not make_game(registry, settings["game"]).info.perfect_information:
            isolate = not all(registry.is_builtin("agent", data["type"]) for data in settings["agents"])
        setup = Setup(settings["game"], settings["agents"], tournament.seed, tournament.max_turns, tournament.time_per_move,
                      tuple(str(Path(d).resolve()) for d in plugins_dirs), isolate, memory_limit,
                      settings.get("openings"), settings.get("set_size", 1), tournament.secret, concurrent,
                      settings.get("network_allowance", DEFAULT_NETWORK_ALLOWANCE))  # fmt: skip
        game = make_game(registry, setup.game_spec)
        entries = [entry_from_json(registry, data, game) for data in setup.agents]
        _check_unchanged(tournament, game, setup.agents, entries)
        keys = queries.TournamentKeys(
            tournament.id, tournament.game_id, tournament.game_version, tournament.game_params,
            [(entry.label, entry.type_id, entry.params_json(), entry.version) for entry in entries],
        )  # fmt: skip
        if "sprt" in settings:  # the test's state: as the run stored it (checked against the stored matches), else recomputed
            saved = queries.load_sprt_state(session, tournament.id)
            stored = queries.load_matches(session, tournament_id=tournament.id)
            monitor = SprtMonitor(settings["sprt"], stored, log, saved, tournament.id)
    tournament_id = tournament.id
    if tournament.status == "stopped":  # resumed: running again (after the checks above; no write for a running one)
        queries.restart_tournament(database, tournament_id)
    tasks = [MatchTask(first + n, table) for n, table in enumerate(tables) if first + n not in played]
    if monitor is not None and monitor.decided:
        tasks = []
    stored_before = first + len(played)  # the matches stored before this run
    done, total = stored_before, first + len(tables)
    if progress:
        progress(done, total)
    buffer: list[queries.MatchOutcome] = []
    # An SPRT counts matches in schedule order and play stops at the deciding one: matches are taken (stored, counted)
    # in that order whatever order the workers finish them in, so the stored ones end at the decision.
    order = ScheduleOrder(tasks) if monitor is not None else None

    def take(outcome: queries.MatchOutcome) -> bool:
        """Into the buffer and the test (under `pending`); True once the test has decided."""
        nonlocal done
        buffer.append(outcome)
        done += 1
        # The test counts the match before it is stored: its state is stored with the matches it has seen.
        return monitor is not None and monitor.update(outcome.schedule_index, outcome.seating, outcome.ranks)

    def take_held() -> None:
        """Play stops before the decision (Ctrl-C, an error, a server's stop): the matches held for their turn are
        taken too. Each comes after one not played yet, so the test only keeps their scores pending."""
        for outcome in order.rest() if order is not None else ():
            take(outcome)

    # The buffer and the test's state change together under this lock, so that keep_pending's save (from another
    # thread) stores matches and state that agree; a match stored already is left as it is (a second write is harmless).
    pending = threading.Lock()
    last_flush = time.monotonic()
    if keep_pending is not None:

        def save_pending() -> None:
            if not pending.acquire(timeout=PENDING_WAIT_SECONDS):  # the play thread is itself writing: it stores them
                return
            try:
                take_held()
                queries.save_results(database, keys, list(buffer), sprt_state(monitor))
            finally:
                pending.release()

        keep_pending(save_pending)
    interrupted = False
    outcomes = executor.results(setup, registry, tasks)
    try:
        for finished in outcomes:
            decided = cancelled = False
            with pending:
                for outcome in [finished] if order is None else order.add(finished):
                    decided = take(outcome)
                    if decided:
                        break  # the matches after the deciding one are dropped
                if len(buffer) >= FLUSH_MATCHES or time.monotonic() - last_flush >= FLUSH_SECONDS:
                    queries.save_results(database, keys, buffer, sprt_state(monitor))
                    buffer.clear()
                    last_flush = time.monotonic()
                    cancelled = _state(database, tournament_id)[0]  # `arena tournaments cancel` from elsewhere: stop here
            if progress:  # every match played (held ones too): a server's progress also checks for a stop
                progress(done + (len(order.held) if order is not None else 0), total)
            if decided or cancelled:
                break  # decided: matches still running are dropped, so the stored ones end at the decision
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        outcomes.close()  # play stopped early (decided, or progress raised): no further matches start
        if monitor is not None and not monitor.decided:
            with pending:
                take_held()
        # Whatever was played is kept, even when play stops early: --resume plays only the rest. On Ctrl-C, what can
        # be kept quickly: one try, a short wait on a SQLite lock (another process may hold it).
        if interrupted:
            with contextlib.suppress(Exception):
                queries.save_results(database, keys, buffer, sprt_state(monitor), patient=False)
        else:
            queries.save_results(database, keys, buffer, sprt_state(monitor))
    return done - stored_before
