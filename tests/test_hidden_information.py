"""Hidden information is enforced: a view holds nothing its seat may not see.

Three kinds of evidence, for Incan Gold and Gwent Lite:
- a peeking walk over everything reachable from a view (attributes, __dict__ and __slots__,
  containers, closures, gc referents; modules, classes and module namespaces skipped) finds none of
  the hidden values: the real state or its containers, the real RNG or a copy of its state, the
  real view key, the true deck orders and the opponent's true hand as ordered sequences (wherever
  a chance match of the re-sampled one is negligible);
- a view depends only on what its seat has seen: two real states that differ only in hidden parts
  (deck orders, the opponent's hand, the others' pending choices, the RNG) give identical views,
  so nothing hidden can be recovered from a view at all, whatever the encoding;
- the same peeking agent plays real matches through arena.match.play_match.
Views are also playable, reproducible, re-sampled again when viewed, and viewing never changes
the real state.
"""

from __future__ import annotations

import functools
import gc
import math
import random
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import arena
from arena.match import play_match
from arena.seeding import derive_seed
from games.gwent_lite import GwentLite, GwentLiteState
from games.incan_gold import IncanGold, IncanGoldState

# ---- the peeking walk ----


_namespaces: tuple[int, set[int]] = (-1, set())


def _module_namespaces() -> set[int]:
    """The ids of every module's namespace, gathered again only when a module was imported (or removed) since the last
    walk: gathering them is a pass over sys.modules, and the tests walk thousands of times."""
    global _namespaces
    if _namespaces[0] != len(sys.modules):
        _namespaces = (len(sys.modules), {id(vars(m)) for m in list(sys.modules.values()) if m is not None})
    return _namespaces[1]


@functools.cache
def _slot_names(klass: type) -> tuple[str, ...]:
    return tuple(name for base in klass.__mro__ for name in vars(base).get("__slots__", ()))


def reachable(root: object) -> Iterator[object]:
    """Every object reachable from `root`, modules, classes and module namespaces excepted."""
    skip = _module_namespaces()
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in skip or isinstance(obj, (types.ModuleType, type)):
            continue
        seen.add(id(obj))
        yield obj
        children: list[object] = list(gc.get_referents(obj))
        for name in _slot_names(type(obj)):
            if hasattr(obj, name):
                children.append(getattr(obj, name))
        if hasattr(obj, "__dict__") and not isinstance(obj, type):
            children.append(vars(obj))
        if isinstance(obj, types.FunctionType):
            children += [cell.cell_contents for cell in obj.__closure__ or () if _cell_filled(cell)]
            children += [obj.__defaults__, obj.__kwdefaults__]
        if isinstance(obj, types.MethodType):
            children += [obj.__self__, obj.__func__]
        if isinstance(obj, types.CellType) and _cell_filled(obj):
            children.append(obj.cell_contents)
        stack.extend(children)


def _cell_filled(cell: types.CellType) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:
        return False
    return True


def ordered_draw_chance(sequence: Sequence[int], pool: Sequence[int]) -> float:
    """The chance that drawing len(sequence) cards in order from `pool` (a multiset) gives exactly `sequence`."""
    left = Counter(pool)
    size = len(pool)
    chance = 1.0
    for card in sequence:
        if left[card] == 0:
            return 0.0
        chance *= left[card] / size
        left[card] -= 1
        size -= 1
    return chance


def contains_run(haystack: Sequence[Any], needle: Sequence[int]) -> bool:
    n = len(needle)
    first = needle[0]
    return any(haystack[i] == first and list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


@dataclass
class Secrets:
    """What a seat may not see in one real position."""

    objects: dict[int, str] = field(default_factory=dict)  # id -> name: the real state, its RNG and containers
    rng_state: tuple = ()
    ints: dict[int, str] = field(default_factory=dict)
    sequences: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)

    def add_sequence(self, name: str, sequence: Sequence[int], chance: float) -> None:
        # Only where a re-sampled sequence matches the true one by chance with a negligible probability.
        if sequence and chance < 1e-7:
            self.sequences.append((name, tuple(sequence)))


def _real_objects(real: IncanGoldState | GwentLiteState) -> dict[int, str]:
    objects = {id(real): "the real state", id(real._rng): "the real RNG"}
    for name in type(real).__slots__:
        value = getattr(real, name)
        if isinstance(value, list):
            objects[id(value)] = f"real.{name}"
            objects.update({id(item): f"real.{name}[]" for item in value if isinstance(item, list)})
    return objects


def incan_gold_secrets(real: IncanGoldState, seat: int) -> Secrets:
    secrets = Secrets(_real_objects(real), real._rng.getstate(), {real._view_key: "the real view key"})
    secrets.add_sequence("the true deck order", real.deck, ordered_draw_chance(real.deck, real.deck))
    return secrets


def gwent_secrets(real: GwentLiteState, seat: int) -> Secrets:
    secrets = Secrets(_real_objects(real), real._rng.getstate(), {real._view_key: "the real view key"})
    opponent = 1 - seat
    pool = real.unseen(opponent)
    hand, deck = real.hands[opponent], real.decks[opponent]
    secrets.add_sequence("the opponent's true hand", hand, ordered_draw_chance(hand, pool))
    secrets.add_sequence("the opponent's true deck order", deck, ordered_draw_chance(deck, pool))
    own = real.decks[seat]
    secrets.add_sequence("the seat's own true deck order", own, ordered_draw_chance(own, own))
    return secrets


def find_leaks(root: object, secrets: Secrets) -> list[str]:
    """What of `secrets` a walk from `root` can reach."""
    found: list[str] = []
    rng_words = secrets.rng_state[1]
    for obj in reachable(root):
        if id(obj) in secrets.objects:
            found.append(secrets.objects[id(obj)])
        if isinstance(obj, random.Random) and obj.getstate() == secrets.rng_state:
            found.append("a copy of the real RNG's state")
        if isinstance(obj, np.random.Generator):
            found.append("a numpy generator (the games use none)")
        if isinstance(obj, int) and not isinstance(obj, bool) and obj in secrets.ints:
            found.append(secrets.ints[obj])
        if isinstance(obj, np.ndarray):
            obj = obj.ravel().tolist()
        if isinstance(obj, (list, tuple)) and obj:
            if obj == secrets.rng_state or obj == rng_words:
                found.append("the real RNG's state")
            for name, sequence in secrets.sequences:
                if len(obj) >= len(sequence) and contains_run(obj, sequence):
                    found.append(name)
    return found


# ---- real positions to look at ----

GAMES: dict[str, tuple[Callable[[], arena.Game], Callable[[Any, int], Secrets]]] = {
    "incan_gold_3": (lambda: IncanGold(), incan_gold_secrets),
    "incan_gold_5_2020": (lambda: IncanGold(players=5, artifacts="2020", unclaimed="returned"), incan_gold_secrets),
    "gwent_lite": (lambda: GwentLite(), gwent_secrets),
    "gwent_lite_explicit": (lambda: GwentLite(deck0="+".join(["2"] * 20 + ["3"] * 20)), gwent_secrets),
}


def positions(game: arena.Game, seeds: range, stay: float = 0.75) -> Iterator[arena.State]:
    """Real positions along seeded play-throughs that lean to staying in / playing cards."""
    for seed in seeds:
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            yield state
            legal = state.legal_actions()
            action = legal[-1] if rng.random() < stay else rng.choice(legal)
            state.apply(action)
        yield state


def fingerprint(state: object) -> Any:
    """Everything a state holds, with RNGs as their states: equal fingerprints, indistinguishable states."""
    if isinstance(state, random.Random):
        return ("rng", state.getstate())
    if isinstance(state, (list, tuple)):
        return type(state).__name__, [fingerprint(item) for item in state]
    slots = _slot_names(type(state))
    if slots:
        return {name: fingerprint(getattr(state, name)) for name in slots}
    return state


def snapshot(state: IncanGoldState | GwentLiteState) -> Any:
    return fingerprint(state), state.render()


# ---- the tests ----


@pytest.mark.parametrize("name", sorted(GAMES))
def test_views_hold_no_hidden_values(name: str) -> None:
    make, secrets_of = GAMES[name]
    game = make()
    looked = 0
    for index, real in enumerate(positions(game, range(10))):
        if index % 3:
            continue
        before = snapshot(real)
        for seat in range(game.num_players):
            secrets = secrets_of(real, seat)
            view = real.view(seat)
            deeper = view.view(seat)  # a view of a view: what a determinising search walks
            played = view.clone()  # and a view played forward, as a search would
            rng = random.Random(index)
            for _ in range(6):
                if played.is_terminal():
                    break
                played.apply(rng.choice(played.legal_actions()))
            for where, root in (("view", view), ("view of the view", deeper), ("view played on", played)):
                leaks = find_leaks(root, secrets)
                assert not leaks, f"{name} position {index} seat {seat}: the {where} holds {sorted(set(leaks))}"
            looked += 1
        assert snapshot(real) == before, f"{name}: view() changed the real state"
    assert looked > 50


def _hide_differently(real: Any, seat: int, rng: random.Random) -> Any:
    """A real state that differs from `real` only in what `seat` may not see."""
    other = real.clone()
    other._rng = random.Random(rng.getrandbits(64))  # another chance future
    if isinstance(real, IncanGoldState):
        rng.shuffle(other.deck)
        for p, choice in enumerate(other.choices):
            if choice is not None and p != seat:
                other.choices[p] = 1 - choice
    else:
        opponent = 1 - seat
        pool = other.hands[opponent] + other.decks[opponent]
        rng.shuffle(pool)
        size = len(other.hands[opponent])
        other.hands[opponent], other.decks[opponent] = pool[:size], pool[size:]
        rng.shuffle(other.decks[seat])
    return other


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_view_depends_only_on_what_its_seat_has_seen(name: str) -> None:
    game = GAMES[name][0]()
    rng = random.Random(7)
    compared = 0
    for real in positions(game, range(8)):
        if real.is_terminal():
            continue
        for seat in range(game.num_players):
            twin = _hide_differently(real, seat, rng)
            one, two = real.view(seat), twin.view(seat)
            assert fingerprint(one) == fingerprint(two), f"{name}: a view of seat {seat} shows hidden differences"
            assert (one.observation(seat) == two.observation(seat)).all()
            assert (real.observation(seat) == twin.observation(seat)).all()
            compared += 1
    assert compared > 100


def test_incan_gold_pending_choices_are_resampled_fairly() -> None:
    game = IncanGold(players=6)
    agree = total = 0
    for real in positions(game, range(40)):
        if real.is_terminal():
            continue
        seat = real.current_player
        view = real.view(seat)
        for p, choice in enumerate(real.choices):
            if choice is not None:
                assert view.choices[p] is not None  # who has chosen is public; what is not
                agree += view.choices[p] == choice
                total += 1
        assert view.choices[seat] is None
    assert total > 300 and 0.4 < agree / total < 0.6


def test_own_pending_choice_is_kept_in_its_view() -> None:
    state = IncanGold(players=4).new_initial_state(2)
    state.apply(0)  # seat 0 leaves (hidden)
    assert state.view(0).choices[0] == 0
    assert all(state.view(0).choices[p] is None for p in (2, 3))


def test_gwent_view_redeals_the_opponent_hand_from_the_unseen_cards() -> None:
    game = GwentLite()
    same_hand = total = 0
    expected = 0.0
    for real in positions(game, range(20), stay=0.9):
        if real.is_terminal():
            continue
        seat = real.current_player
        opponent = 1 - seat
        view = real.view(seat)
        assert view.hands[seat] == real.hands[seat]  # the seat's own hand, order included
        assert len(view.hands[opponent]) == len(real.hands[opponent])
        assert len(view.decks[opponent]) == len(real.decks[opponent])
        assert Counter(view.hands[opponent] + view.decks[opponent]) == Counter(real.unseen(opponent))
        assert Counter(view.decks[seat]) == Counter(real.decks[seat])
        assert view.played == real.played and view.totals == real.totals and view.wins == real.wins
        same_hand += view.hands[opponent] == real.hands[opponent]
        expected += ordered_draw_chance(real.hands[opponent], real.unseen(opponent))
        total += 1
    # The re-dealt hand equals the true one (in order) no more often than a blind deal would.
    assert total > 200 and same_hand <= expected + 3 * math.sqrt(expected) + 3, (same_hand, expected)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_views_are_playable_reproducible_and_resampled_again(name: str) -> None:
    game = GAMES[name][0]()
    different = total = 0
    for index, real in enumerate(positions(game, range(4))):
        if real.is_terminal() or index % 2:
            continue
        seat = real.current_player
        view = real.view(seat)
        assert view.current_player == seat and view.legal_actions() == real.legal_actions()
        assert fingerprint(real.view(seat)) == fingerprint(view)  # same position, same view
        # Views of a view are fresh re-samples each time (a determinising search needs that) ...
        first, second = view.view(seat), view.view(seat)
        different += fingerprint(first) != fingerprint(second)
        total += 1
        # ... and every view plays to the end like a real state.
        rng = random.Random(index)
        steps = 0
        while not first.is_terminal():
            first.apply(rng.choice(first.legal_actions()))
            steps += 1
        assert steps <= game.max_game_length() and len(first.returns()) == game.num_players
    assert total > 20 and different / total > 0.9


# ---- the peeking agent in real matches ----


def spied(game: arena.Game) -> tuple[arena.Game, list[Any]]:
    """The same game as a subclass that keeps the real states it hands out, so the test (never the
    agent's walk, which starts at its view) can name the secrets of the live position."""
    real: list[Any] = []

    class Spied(type(game)):  # type: ignore[misc, valid-type]
        def new_initial_state(self, seed: int = 0) -> Any:
            state = super().new_initial_state(seed)
            real.append(state)
            return state

    return Spied(**game.params), real


class PeekingAgent(arena.Agent):
    """Walks everything reachable from its view looking for hidden values, then plays at random."""

    info = arena.AgentInfo(id="peeking", description="test agent that looks for leaks in its views")
    real: list[Any]
    secrets_of: Callable[[Any, int], Secrets]
    found: list[str]
    views: int

    def act(self, state: arena.State) -> int:
        real = self.real[-1]
        assert state is not real
        secrets = self.secrets_of(real, self.player)
        self.found += find_leaks(state, secrets)
        self.found += find_leaks(state.view(self.player), secrets)
        self.views += 1
        return self.rng.choice(state.legal_actions())


@pytest.mark.parametrize("name", sorted(GAMES))
def test_peeking_agent_finds_nothing_in_real_matches(name: str) -> None:
    make, secrets_of = GAMES[name]
    for seed in range(3):
        game, real = spied(make())
        agents: list[arena.Agent] = []
        for seat in range(game.num_players):
            agent = PeekingAgent(game, seat, derive_seed(seed, seat))
            agent.real, agent.secrets_of, agent.found, agent.views = real, secrets_of, [], 0
            agents.append(agent)
        result = play_match(game, agents, derive_seed("peek", seed), max_turns=5000)
        assert result.reason == "normal", result.detail
        assert sum(agent.views for agent in agents) == result.turns
        for agent in agents:
            assert not agent.found, f"{name} seed {seed} seat {agent.player} found {sorted(set(agent.found))}"


def test_the_walk_does_find_planted_secrets() -> None:
    """The walk is not blind: a state that carries the real RNG, its state or the true order is caught."""
    real = IncanGold().new_initial_state(1)
    for _ in range(4):
        real.apply(1)
    secrets = incan_gold_secrets(real, 0)
    assert secrets.sequences, "the deck order is long enough to search for"
    leaky = real.view(0)
    assert not find_leaks(leaky, secrets)
    leaky.deck = real.deck[:]
    assert "the true deck order" in find_leaks(leaky, secrets)
    leaky = real.view(0)
    leaky._rng = real._rng
    assert "the real RNG" in find_leaks(leaky, secrets)
    leaky = real.view(0)
    leaky._view_stream = random.Random()
    leaky._view_stream.setstate(real._rng.getstate())
    assert "a copy of the real RNG's state" in find_leaks(leaky, secrets)
    hidden_in_closure = (lambda: real.deck)  # noqa: E731  (a closure over the real deck)
    assert "real.deck" in find_leaks([hidden_in_closure], secrets)
    gwent = GwentLite().new_initial_state(3)
    gwent_leaky = gwent.view(0)
    gwent_leaky.last = {"peek": tuple(gwent.hands[1])}  # type: ignore[assignment]
    assert "the opponent's true hand" in find_leaks(gwent_leaky, gwent_secrets(gwent, 0))
    assert math.isfinite(ordered_draw_chance([1, 2], [1, 2, 2]))
