"""Evolving Gwent Lite decks with a genetic algorithm, as report 003 (chiamp/dqn-boardgames) does.

Every generation one agent (any spec that plays gwent_lite, the same for both seats) plays each deck
of the pool against every other deck, `games` games a pairing, half with each deck in seat 0 (a
pair of games shares its seed, the decks swapped: each deck starts once). The `survivors` decks
with the highest win rate (a draw is half a win; ties go to the deck earlier in the pool) go to the
next generation, in their order, each followed by `offspring` mutated copies; random legal decks
(`games.gwent_lite.random_deck`) fill the rest of the pool, as the first pool is filled.

Mutation: each card, with probability `rate`, moves by a step drawn from a normal distribution of
mean 0 and spread `sigma`, rounded to a whole number away from zero (so at least 1, as chiamp's).
Repair to a legal deck: each card is clipped to 1..76 (the largest card a legal deck can hold),
then the deck is brought back to a sum of exactly 100, one point at a time, each point taken from
(or given to) a card drawn at random (only cards above 1 give points). The deck keeps its 25 cards,
so every deck the algorithm makes has 25 cards >= 1 summing to exactly 100, like chiamp's.
Decks are kept sorted (the order of a deck list plays no part: the game shuffles it).

Matches are played by Arena's own code (arena.tournament.Player, through an executor: one process,
or `workers` processes), with the tournaments' turn limit. Everything is drawn from the seed: the
same seed gives the same log, byte for byte, whatever the number of workers.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import arena
from arena.agents import AgentEntry, build_entry, one_agent, stored_spec
from arena.evolution import KINDS
from arena.executors import Executor
from arena.library.catalog import stored_agent_lookup
from arena.match import DEFAULT_MAX_TURNS, DRAW, LOSS, NORMAL, WIN
from arena.params import Spec, parse_game_spec
from arena.plugins import Registry
from arena.seeding import derive_seed
from arena.tournament import MAX_SCHEDULED, MatchTask, Setup, make_game
from arena.training.metrics import MetricsWriter
from games.gwent_lite import MAX_CARD, MAX_DECK_SUM, random_deck

GAME = "gwent_lite"
Deck = tuple[int, ...]
#: Told of each generation as it ends: its row of the log and the seconds it took.
Report = Callable[[dict[str, Any], float], None]
#: Where a deck of the pool came from.
RANDOM, SURVIVOR, OFFSPRING = "random", "survivor", "offspring"


@dataclass(frozen=True)
class EvolveConfig:
    """What `arena evolve-decks` takes (its options, same names and defaults)."""

    agent: str = "greedy"
    population: int = 16
    generations: int = 10
    games: int = 2
    survivors: int = 4
    offspring: int = 1
    mutation: float = 0.1
    sigma: float = 2.0
    benchmark: int = 8
    seed: int = 0
    game: str = GAME
    db: str | None = None  # where an --agent given by name is registered (None: $ARENA_DB, else ./arena.db)


def check_config(config: EvolveConfig) -> None:
    """Refuse numbers the algorithm cannot run with, in one line each (ArenaError)."""
    if config.population < 2:
        raise arena.ArenaError(f"--population must be at least 2 (decks play each other), got {config.population}")
    if config.generations < 1:
        raise arena.ArenaError(f"--generations must be at least 1, got {config.generations}")
    if not 2 <= config.games <= MAX_SCHEDULED or config.games % 2:
        raise arena.ArenaError(f"--games must be an even number from 2 to {MAX_SCHEDULED:,} (each deck sits in each seat as often), "
                               f"got {config.games}")  # fmt: skip
    if config.survivors < 1 or config.offspring < 0:
        raise arena.ArenaError(f"--survivors must be at least 1 and --offspring at least 0, got {config.survivors} and {config.offspring}")
    kept = config.survivors * (1 + config.offspring)
    if kept > config.population:
        raise arena.ArenaError(f"--survivors {config.survivors} with --offspring {config.offspring} make {kept} decks, more than "
                               f"--population {config.population}")  # fmt: skip
    if not 0 <= config.mutation <= 1:
        raise arena.ArenaError(f"--mutation is the chance that a card mutates, from 0 to 1, got {config.mutation:g}")
    if not (math.isfinite(config.sigma) and config.sigma > 0):
        raise arena.ArenaError(f"--sigma must be a positive number, got {config.sigma:g}")
    if config.benchmark < 0:
        raise arena.ArenaError(f"--benchmark must be 0 (none) or more decks, got {config.benchmark}")
    per_generation = (config.population * (config.population - 1) // 2 + config.benchmark) * config.games
    if per_generation * config.generations > MAX_SCHEDULED:  # one evolution plays at most what one tournament may
        raise arena.ArenaError(f"--population {config.population}, --games {config.games}, --benchmark {config.benchmark} and "
                               f"--generations {config.generations} make {per_generation * config.generations:,} games, more "
                               f"than the {MAX_SCHEDULED:,} an evolution may play")  # fmt: skip


# ---------------------------------------------------------------- decks


def deck_text(deck: Sequence[int]) -> str:
    """A deck as `seat.deck` and the game's deck0/deck1 take it: values joined by '+'."""
    return "+".join(str(card) for card in deck)


def repair(cards: Sequence[int], rng: random.Random) -> Deck:
    """A legal deck from any cards: each clipped to 1..76, then the sum brought to exactly 100 a point at a time (a
    point taken from a random card above 1, or given to a random card); sorted. Needs at least 25 cards."""
    deck = [min(MAX_CARD, max(1, card)) for card in cards]
    excess = sum(deck) - MAX_DECK_SUM
    while excess > 0:
        giving = [index for index, card in enumerate(deck) if card > 1]
        deck[rng.choice(giving)] -= 1
        excess -= 1
    while excess < 0:  # no card passes 76: with 24 others of at least 1, a card of 77 would make the sum above 100
        deck[rng.randrange(len(deck))] += 1
        excess += 1
    return tuple(sorted(deck))


def mutate(deck: Sequence[int], rng: random.Random, rate: float, sigma: float) -> Deck:
    """A mutated copy: each card, with probability `rate`, moved by a normal step (spread `sigma`) rounded away from 0;
    then repaired (see `repair`)."""
    cards = list(deck)
    for index in range(len(cards)):
        if rng.random() < rate:
            step = rng.gauss(0.0, sigma)
            cards[index] += int(math.copysign(max(1, round(abs(step))), step))
    return repair(cards, rng)


def new_random_deck(rng: random.Random) -> Deck:
    return tuple(sorted(random_deck(rng)))


# ---------------------------------------------------------------- playing


@dataclass
class Tally:
    """One deck's games in one generation (or in its benchmark)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def exact_rate(self) -> Fraction:
        """The win rate (a draw is half), exactly: what decks are ranked by. 0 without a game."""
        return Fraction(2 * self.wins + self.draws, 2 * self.games) if self.games else Fraction(0)

    @property
    def win_rate(self) -> float:
        return float(self.exact_rate)

    def add(self, outcome: str) -> None:
        if outcome == WIN:
            self.wins += 1
        elif outcome == DRAW:
            self.draws += 1
        elif outcome == LOSS:
            self.losses += 1  # `none` (the game broke): nobody's result, as in tournaments


def rank(tallies: Sequence[Tally]) -> list[int]:
    """Positions from the highest win rate to the lowest; equal rates in pool order (survivors, then the rest)."""
    return sorted(range(len(tallies)), key=lambda position: (-tallies[position].exact_rate, position))


def pair_tasks(pairs: Sequence[tuple[int, int]], games: int) -> list[MatchTask]:
    """`games` matches per pair, seats swapped from one match to the next (a set of two: they share a seed)."""
    return [MatchTask(index * games + k, (a, b) if k % 2 == 0 else (b, a)) for index, (a, b) in enumerate(pairs) for k in range(games)]


@dataclass
class Played:
    tallies: list[Tally]
    abnormal: Counter[str] = field(default_factory=Counter)  # reason -> matches that did not end normally


class Evolution:
    """The checked settings and what every generation needs: the agent, the game, the executor."""

    def __init__(self, config: EvolveConfig, registry: Registry, executor: Executor, plugins_dirs: Sequence[str] = ()) -> None:
        check_config(config)
        spec = parse_game_spec(config.game)
        if spec.id != GAME:
            raise arena.ArenaError(f"--game: decks are evolved for {GAME} only (its seats bring decks), not '{spec.id}'")
        if spec.params:
            raise arena.ArenaError(f"--game: give {GAME} without parameters (each seat's deck comes from the evolution)")
        self.config = config
        self.registry = registry
        self.executor = executor
        self.plugins_dirs = tuple(str(Path(folder).resolve()) for folder in plugins_dirs)  # where workers find loose plugins
        self.game = make_game(registry, GAME)
        spec, named = one_agent(registry, config.agent, "--agent", lookup=stored_agent_lookup(config.db))
        if named is not None and named["game"] not in (None, GAME):
            raise arena.ArenaError(f"--agent: '{spec.id}' is registered for game '{named['game']}', not '{GAME}'")
        self.agent = stored_spec(named) if named is not None else spec  # what plays, and what the best deck's spec names
        if any(name.startswith("seat.") for name in self.agent.params):
            raise arena.ArenaError("--agent: give the agent without seat parameters; the evolution gives each seat its deck")
        if registry.agent_class(self.agent.id).person:
            raise arena.ArenaError(f"--agent: '{self.agent.id}' is a person; the evolution plays its games alone")
        self.entry(new_random_deck(random.Random(0)), str(self.agent))  # its parameters checked, and that it plays the game

    def spec(self, deck: Sequence[int]) -> str:
        """The agent spec that plays `deck`: `greedy:seat.deck=...`."""
        return str(Spec(self.agent.id, {**self.agent.params, "seat.deck": deck_text(deck)}))

    def entry(self, deck: Sequence[int], label: str) -> AgentEntry:
        return build_entry(self.registry, label, self.agent.id, {**self.agent.params, "seat.deck": deck_text(deck)}, self.game)

    def play(self, decks: Sequence[Deck], pairs: Sequence[tuple[int, int]], seed: int) -> Played:
        """Play `games` matches for each pair of positions in `decks`; each position's tally."""
        setup = Setup(GAME, [self.entry(deck, f"deck{position}").to_json() for position, deck in enumerate(decks)], seed,
                      DEFAULT_MAX_TURNS, None, self.plugins_dirs, set_size=2)  # fmt: skip
        played = Played([Tally() for _ in decks])
        for outcome in self.executor.results(setup, self.registry, pair_tasks(pairs, self.config.games)):
            for seat, position in enumerate(outcome.seating):
                played.tallies[position].add(outcome.outcomes[seat])
            if outcome.reason != NORMAL:
                played.abnormal[outcome.reason] += 1
        return played

    def settings(self) -> dict[str, Any]:
        settings = {**asdict(self.config), "agent": str(self.agent), "game": GAME, "max_turns": DEFAULT_MAX_TURNS}
        del settings["db"]  # where a name was looked up is not what played (and a database URL may hold a password)
        return settings

    def run(self) -> Iterator[dict[str, Any]]:
        """Each generation's row of the log (see arena.evolution), as soon as it is played."""
        config = self.config
        rng = random.Random(derive_seed(config.seed, "evolve-decks"))
        pool = [(new_random_deck(rng), RANDOM) for _ in range(config.population)]
        bench_rng = random.Random(derive_seed(config.seed, "benchmark decks"))
        references = [new_random_deck(bench_rng) for _ in range(config.benchmark)]
        pairs = list(combinations(range(config.population), 2))
        for generation in range(1, config.generations + 1):
            decks = [deck for deck, _ in pool]
            played = self.play(decks, pairs, derive_seed(config.seed, "generation", generation))
            rates = [tally.win_rate for tally in played.tallies]
            ranking = rank(played.tallies)
            kept = ranking[: config.survivors]
            best = decks[ranking[0]]
            benchmark = None
            if references:  # the same decks and seeds every generation: the curve moves only with the best deck
                bench = self.play([best, *references], [(0, k) for k in range(1, len(references) + 1)],
                                  derive_seed(config.seed, "benchmark matches"))  # fmt: skip
                tally = bench.tallies[0]
                benchmark = {"decks": len(references), "games": tally.games, "wins": tally.wins, "draws": tally.draws,
                             "losses": tally.losses, "win_rate": round(tally.win_rate, 4)}  # fmt: skip
                played.abnormal.update(bench.abnormal)
            yield {
                "generation": generation,
                "decks": [{"deck": deck_text(deck), "origin": origin, "wins": tally.wins, "draws": tally.draws,
                           "losses": tally.losses, "win_rate": round(tally.win_rate, 4)}
                          for (deck, origin), tally in zip(pool, played.tallies)],
                "best": {"deck": deck_text(best), "win_rate": round(rates[ranking[0]], 4), "spec": self.spec(best)},
                "best_win_rate": round(rates[ranking[0]], 4),
                "survivors_win_rate": round(sum(rates[position] for position in kept) / len(kept), 4),
                "mean_win_rate": round(sum(rates) / len(rates), 4),
                "benchmark": benchmark,
                "abnormal_endings": dict(sorted(played.abnormal.items())),
            }  # fmt: skip
            if generation < config.generations:
                pool = self.next_pool(decks, kept, rng)

    def next_pool(self, decks: Sequence[Deck], kept: Sequence[int], rng: random.Random) -> list[tuple[Deck, str]]:
        """The survivors in their rank order, each followed by its offspring; then random decks up to the population."""
        config = self.config
        pool: list[tuple[Deck, str]] = []
        for position in kept:
            pool.append((decks[position], SURVIVOR))
            pool += [(mutate(decks[position], rng, config.mutation, config.sigma), OFFSPRING) for _ in range(config.offspring)]
        pool += [(new_random_deck(rng), RANDOM) for _ in range(config.population - len(pool))]
        return pool


def evolve(config: EvolveConfig, registry: Registry, executor: Executor, out: str, report: Report | None = None,
           plugins_dirs: Sequence[str] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """Run the evolution, writing its log to `out` as it goes (see arena.evolution); returns the generation rows.

    Everything is checked before the file is made. `report(row, seconds)` hears of each generation as it ends.
    """
    evolution = Evolution(config, registry, executor, plugins_dirs)
    rows = []
    with MetricsWriter(out, KINDS) as writer:
        writer.write("settings", **evolution.settings())
        start = time.perf_counter()
        for row in evolution.run():
            writer.write("generation", **row)
            rows.append(row)
            if report is not None:
                report(row, time.perf_counter() - start)
            start = time.perf_counter()
    return rows
