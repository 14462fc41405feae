"""`arena play`: a person against agents, as a one-match tournament (stored and rated like any other)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence

from arena import tournament
from arena.agents import AgentEntry
from arena.errors import ArenaError, about
from arena.library.tournaments import renamed_notes, stop
from arena.match import DEFAULT_MAX_TURNS, DEFAULT_NETWORK_ALLOWANCE
from arena.params import check_name, parse_specs
from arena.plugins import Registry
from arena.reach import ANYWHERE, Reach
from db.session import Database


def human_spec(name: str) -> str:
    check_name(name, "--name: a person's name")
    return "human" if name == "human" else f"human:name={name}"


def one_match(
    registry: Registry, database: Database, game_spec: str, against: str, seat: int, person: str,
    seed: int | None = None, max_turns: int = DEFAULT_MAX_TURNS, time_per_move: float | None = None,
    people_against: bool = True, network_allowance: float = DEFAULT_NETWORK_ALLOWANCE, owner: str | None = None,
    reach: Reach = ANYWHERE, held_by: tuple[str, float] | None = None,
) -> int:  # fmt: skip
    """A one-match tournament (status running, for the caller to play) with the agent `person` in `seat` and the
    agents of `against` in the others; returns its id. Without `people_against` (the server's play page, where
    nobody sits at the server's terminal) the others may not be people. `owner`: the user token's name that starts it
    over HTTP (the play page's person). `reach`: the hosts the others may call and the files they may read (a
    server's --bot-hosts and --models-dir). `held_by`: the play page's server (its worker id, lease seconds), which
    holds the game from its first write."""
    with about("against"):
        opponents = [str(spec) for spec in parse_specs(against)]
    if not opponents:
        raise ArenaError("--against needs at least one agent", "against")
    if not 0 <= seat <= len(opponents):
        raise ArenaError(f"--seat must be between 0 and {len(opponents)}, got {seat}", "seat")
    if people_against and person in opponents:  # not "listed twice": the person's own seat is --seat
        raise ArenaError(f"--against {person}: that is you, the person at this terminal, and your seat is --seat {seat}; an "
                         f"opponent is another agent (a second person here: human:name=NAME)", "against")  # fmt: skip
    with database.session() as session:  # before they are made (and read their files)
        reach.check(registry, against, tournament.named_agents(session), "against")
    agents = opponents[:seat] + [person] + opponents[seat:]
    request = tournament.TournamentRequest(
        game=game_spec, agents=",".join(agents), rounds=1, seed=secrets.randbelow(2**31) if seed is None else seed,
        max_turns=max_turns, time_per_move=time_per_move, players=len(agents), network_allowance=network_allowance,
        owner=owner, held_by=held_by,
    )  # fmt: skip
    def others_checked(entries: list[AgentEntry]) -> None:
        others = entries[:seat] + entries[seat + 1:]
        if not people_against:
            tournament.check_unattended(registry, others)

    return tournament.create(registry, database, request, check=others_checked)


def play_against(
    registry: Registry, database: Database, game_spec: str, against: str, seat: int = 0, name: str = "human",
    seed: int | None = None, max_turns: int = DEFAULT_MAX_TURNS, time_per_move: float | None = None,
    plugins_dirs: Sequence[str] = (), notify: Callable[[str], None] | None = None,
) -> int:  # fmt: skip
    """Seat the person (agent `human`) in `seat` and the agents of `against` in the others, play the match; returns the
    tournament id. `notify` is told, before the first move, of each agent recorded under another label."""
    tournament_id = one_match(registry, database, game_spec, against, seat, human_spec(name), seed, max_turns, time_per_move)
    if notify is not None:
        for note in renamed_notes(database, tournament_id):
            notify(note)
    try:
        tournament.play(database, registry, tournament_id, plugins_dirs=plugins_dirs)
    except KeyboardInterrupt:  # the person left with Ctrl-C: the game is stopped, not running for good
        stop(database, tournament_id)
        raise
    return tournament_id
