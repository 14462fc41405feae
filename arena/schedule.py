"""Tournament schedules: which agents sit in which seats, match by match, before any is played."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from arena.errors import ArenaError
from arena.match import append_ints, decode_ints, encode_ints
from arena.seeding import derive_seed

Table = tuple[int, ...]  # agent indices by seat


def _rotate(table: Table, by: int) -> Table:
    by %= len(table)
    return table[by:] + table[:by]


def round_robin(num_agents: int, rounds: int, players: int = 2) -> list[Table]:
    """Every group of `players` agents meets once per round; seats rotate from round to round.

    With two players this is the classic round-robin with seats alternating between rounds, so
    after an even number of rounds both seat orders are played equally. With more players each
    group's seating rotates cyclically, so over `players` rounds every agent sits in every seat
    once at every table.
    """
    if num_agents < players:
        raise ArenaError(f"a round-robin of {players}-player matches needs at least {players} agents, got {num_agents}")
    groups = list(combinations(range(num_agents), players))
    return [_rotate(group, r) for r in range(rounds) for group in groups]


def round_robin_sets(num_agents: int, rounds: int, players: int = 2) -> list[Table]:
    """Every group of `players` agents plays one set per round: one match per rotation of its seats.

    With two players a set is a pair, the seats swapped; with N players every agent sits in every
    seat once. The matches of a set are consecutive and share an opening (see arena.openings).
    """
    if num_agents < players:
        raise ArenaError(f"a round-robin of {players}-player matches needs at least {players} agents, got {num_agents}")
    groups = list(combinations(range(num_agents), players))
    return [_rotate(group, k) for _ in range(rounds) for group in groups for k in range(players)]


def random_tables(num_agents: int, rounds: int, players: int, seed: int) -> list[Table]:
    """Balanced random tables: each round the agents sit in a circle in a fresh random order, and every `players`
    agents next to each other in it make a table, so every agent plays `players` matches a round, once in every
    seat, against neighbours drawn anew each round. `num_agents` matches a round, where round-robin plays every
    group of `players` (C(n, players): 70 for 8 agents at 4 seats, 495 for 12). The order is a function of `seed`
    and the round alone (a hash of each agent's place, not a generator), so the same seed gives the same tables."""
    if num_agents < players:
        raise ArenaError(f"tables of {players} players need at least {players} agents, got {num_agents}")
    tables: list[Table] = []
    for r in range(rounds):
        circle = sorted(range(num_agents), key=lambda agent: derive_seed(seed, "tables", r, agent))
        tables += [tuple(circle[(start + seat) % num_agents] for seat in range(players)) for start in range(num_agents)]
    return tables


def gauntlet(num_agents: int, rounds: int, challenger: int = 0) -> list[Table]:
    """The challenger plays every other agent in both seat orders, each round (consecutive: a pair)."""
    if num_agents < 2:
        raise ArenaError("a gauntlet needs a challenger and at least one opponent")
    tables: list[Table] = []
    for _ in range(rounds):
        for other in range(num_agents):
            if other != challenger:
                tables.append((challenger, other))
                tables.append((other, challenger))
    return tables


def encode_schedule(tables: Sequence[Table]) -> bytes:
    """The schedule as stored (Tournament.schedule): every table's agent positions, flattened and packed."""
    return encode_ints(_positions(tables))


def _positions(tables: Sequence[Table]) -> list[int]:
    return [position for table in tables for position in table]


def decode_schedule(data: bytes, players: int, start: int = 0) -> list[Table]:
    """The tables of a stored schedule, in schedule order, from table `start` on (those before it are not read: a long
    adaptive run's batch decodes only its own tables)."""
    flat = iter(decode_ints(data, start * players))
    return list(zip(*[flat] * players))


def extend_encoded(data: bytes, tables: Sequence[Table]) -> bytes:
    """encode_schedule(decoded `data` + tables), without decoding `data` when its packing holds the new positions
    too (as it always does for the positions of an adaptive field, below 256)."""
    return append_ints(data, _positions(tables))
