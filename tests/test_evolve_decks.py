"""`arena evolve-decks` (games.gwent_decks): legal mutations, selection, determinism, the log, the CLI and its bad inputs."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import ArenaError
from arena.evolution import read_evolution
from arena.executors.local import LocalPool
from arena.plugins import get_registry
from games.gwent_decks import OFFSPRING, RANDOM, SURVIVOR, Evolution, EvolveConfig, Tally, evolve, mutate, rank, repair
from games.gwent_lite import MAX_DECK_SUM, MIN_DECK, parse_deck, random_deck

REGISTRY = get_registry()
FLAT = (4,) * 25
#: A run small enough for a test: 3 decks (3 pairings of 2 games), 1 benchmark deck.
TINY = ("--population", "3", "--generations", "2", "--survivors", "1", "--offspring", "1", "--benchmark", "1")


def legal(deck: tuple[int, ...]) -> bool:
    parse_deck("+".join(map(str, deck)), "deck")  # the game's own check: raises on an illegal deck
    return len(deck) == MIN_DECK and sum(deck) == MAX_DECK_SUM and list(deck) == sorted(deck)


# ---- mutation and repair ----


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**40), rate=st.floats(0.0, 1.0), sigma=st.floats(0.01, 200.0))
def test_a_mutated_random_deck_is_always_legal(seed: int, rate: float, sigma: float) -> None:
    rng = random.Random(seed)
    deck = tuple(sorted(random_deck(rng)))
    for _ in range(3):  # offspring of offspring, as generations go
        deck = mutate(deck, rng, rate, sigma)
        assert legal(deck)


@settings(max_examples=150, deadline=None)
@given(cards=st.lists(st.integers(-10_000, 10_000), min_size=MIN_DECK, max_size=MIN_DECK), seed=st.integers(0, 2**32))
def test_repair_makes_any_cards_a_legal_deck(cards: list[int], seed: int) -> None:
    assert legal(repair(cards, random.Random(seed)))


def test_mutation_moves_cards_and_keeps_a_legal_deck_unmutated_at_rate_zero() -> None:
    rng = random.Random(1)
    assert mutate(FLAT, rng, 0.0, 3.0) == FLAT
    changed = [mutate(FLAT, rng, 0.5, 2.0) != FLAT for _ in range(50)]
    assert sum(changed) >= 45  # half the cards move by at least 1: almost never a flat deck again
    small = [sum(abs(a - b) for a, b in zip(sorted(mutate(FLAT, rng, 0.1, 1.0)), FLAT)) for _ in range(200)]
    big = [sum(abs(a - b) for a, b in zip(sorted(mutate(FLAT, rng, 0.1, 8.0)), FLAT)) for _ in range(200)]
    assert sum(big) > 2 * sum(small)  # sigma sets how far cards move


def test_repair_spreads_the_difference_and_is_seeded() -> None:
    over = [5] + [4] * 24  # one point too many: taken from one card
    repaired = repair(over, random.Random(0))
    assert sum(repaired) == 100 and sum((Counter(over) - Counter(repaired)).values()) == 1
    under = [1] + [4] * 24  # three points short: given back at random
    assert sum(repair(under, random.Random(0))) == 100
    assert repair(under, random.Random(7)) == repair(under, random.Random(7))
    assert repair([0] * 24 + [200], random.Random(0)) == (1,) * 24 + (76,)  # clipped to 1..76, then 100 exactly


# ---- selection ----


def test_rank_puts_the_highest_win_rate_first_and_keeps_pool_order_on_ties() -> None:
    tallies = [Tally(1, 0, 3), Tally(3, 0, 1), Tally(3, 1, 0), Tally(2, 2, 0), Tally(0, 0, 0)]
    assert rank(tallies) == [2, 1, 3, 0, 4]  # 0.875, then 0.75 twice in pool order (two draws count one win), 0.25, no games
    assert Tally(2, 2, 0).win_rate == 0.75 and Tally(3, 1, 0).win_rate == 0.875


def test_next_pool_is_survivors_with_their_offspring_then_random_decks() -> None:
    config = EvolveConfig(population=8, survivors=2, offspring=2, mutation=0.5, sigma=3.0)
    evolution = Evolution(config, REGISTRY, LocalPool(1))
    rng = random.Random(3)
    decks = [tuple(sorted(random_deck(rng))) for _ in range(8)]
    pool = evolution.next_pool(decks, [5, 2], rng)
    assert [origin for _, origin in pool] == [SURVIVOR, OFFSPRING, OFFSPRING, SURVIVOR, OFFSPRING, OFFSPRING, RANDOM, RANDOM]
    assert pool[0][0] == decks[5] and pool[3][0] == decks[2]
    assert all(legal(deck) for deck, _ in pool)


def test_each_generation_keeps_the_previous_ones_best_decks(tmp_path: Path) -> None:
    config = EvolveConfig(agent="random", population=6, generations=3, survivors=2, offspring=1, benchmark=0, seed=5)
    rows = evolve(config, REGISTRY, LocalPool(1), str(tmp_path / "log.jsonl"))
    for before, after in zip(rows, rows[1:]):
        ranked = sorted(enumerate(before["decks"]), key=lambda item: (-item[1]["win_rate"], item[0]))
        assert [deck["deck"] for deck in after["decks"][0::2][:2]] == [deck["deck"] for _, deck in ranked[:2]]
        assert [deck["origin"] for deck in after["decks"]] == [SURVIVOR, OFFSPRING, SURVIVOR, OFFSPRING, RANDOM, RANDOM]
        assert before["best"]["deck"] == ranked[0][1]["deck"] == after["decks"][0]["deck"]
    for row in rows:
        assert row["best_win_rate"] == max(deck["win_rate"] for deck in row["decks"])
        assert all(deck["wins"] + deck["draws"] + deck["losses"] == 5 * 2 for deck in row["decks"])  # 5 others, 2 games each
        assert row["mean_win_rate"] == pytest.approx(0.5, abs=1e-3)  # one deck's win is another's loss


# ---- determinism and the log ----


def test_same_seed_same_bytes_whatever_the_workers_other_seed_other_log(tmp_path: Path) -> None:
    config = EvolveConfig(agent="random", population=5, generations=2, survivors=2, benchmark=3, seed=11)
    paths = [tmp_path / f"{name}.jsonl" for name in ("a", "b", "c", "d")]
    evolve(config, REGISTRY, LocalPool(1), str(paths[0]))
    evolve(config, REGISTRY, LocalPool(1), str(paths[1]))
    evolve(config, REGISTRY, LocalPool(2), str(paths[2]))
    evolve(EvolveConfig(agent="random", population=5, generations=2, survivors=2, benchmark=3, seed=12), REGISTRY, LocalPool(1),
           str(paths[3]))  # fmt: skip
    assert paths[0].read_bytes() == paths[1].read_bytes() == paths[2].read_bytes()
    assert paths[0].read_bytes() != paths[3].read_bytes()


def test_a_stopped_run_keeps_the_generations_it_finished(tmp_path: Path) -> None:
    out = tmp_path / "log.jsonl"

    def stop(row: dict, seconds: float) -> None:
        if row["generation"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evolve(EvolveConfig(agent="random", population=4, generations=5, survivors=1, benchmark=0), REGISTRY, LocalPool(1), str(out),
               report=stop)  # fmt: skip
    rows = read_evolution(out)
    assert [row["kind"] for row in rows] == ["settings", "generation", "generation"]
    assert rows[0]["population"] == 4 and rows[0]["agent"] == "random"


# ---- the command ----


def test_cli_evolves_decks_prints_a_playable_spec_and_plots(arena_cli, tmp_path: Path) -> None:
    out = tmp_path / "decks.jsonl"
    result = arena_cli("evolve-decks", "--agent", "greedy", *TINY, "--out", str(out))
    assert "generation 1/2: best" in result.stderr and "generation 2/2" in result.stderr
    spec = result.stdout.strip().splitlines()[-1].removeprefix("best deck: ")
    rows = read_evolution(out)
    assert [row["kind"] for row in rows] == ["settings", "generation", "generation"]
    assert spec == rows[-1]["best"]["spec"] == f"greedy:seat.deck={rows[-1]['best']['deck']}"
    assert legal(tuple(int(card) for card in rows[-1]["best"]["deck"].split("+")))
    assert rows[-1]["benchmark"]["games"] == 2 and rows[-1]["abnormal_endings"] == {}
    assert json.loads(out.read_text().splitlines()[1])["generation"] == 1
    played = arena_cli("run-tournament", "--game", "gwent_lite", "--agents", f"{spec},greedy:seed=1", "--quiet")
    assert "played 1 match" in played.stderr
    png = tmp_path / "evo.png"
    arena_cli("plot", "evolution", str(out), "--out", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    refused = arena_cli("plot", "evolution", str(tmp_path / "none.jsonl"), "--out", str(png), ok=False)
    assert refused.exit_code == 2 and "no deck evolution log" in refused.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--game", "connect_four"), "decks are evolved for gwent_lite only"),
    (("--game", "gwent_lite:deck0=" + "+".join(["4"] * 25)), "without parameters"),
    (("--population", "3", "--survivors", "2"), "more than --population 3"),
    (("--population", "1", "--survivors", "1", "--offspring", "0"), "--population must be at least 2"),
    (("--games", "3"), "--games must be an even number"),
    (("--mutation", "1.5"), "--mutation is the chance"),
    (("--sigma", "0"), "--sigma must be a positive number"),
    (("--generations", "0"), "--generations must be at least 1"),
    (("--benchmark", "-1"), "--benchmark must be 0"),
    (("--agent", "nosuch"), "unknown agent 'nosuch'"),
    (("--agent", "greedy:seat.deck=" + "+".join(["4"] * 25)), "without seat parameters"),
    (("--agent", "greedy,random"), "takes one agent"),
    (("--agent", "human"), "is a person"),
    (("--agent", "minimax:depth=2"), "imperfect information"),
    (("--agent", "mcts:simulations=0"), "simulations"),
    (("--workers", "0"), "--workers must be at least 1"),
])  # fmt: skip
def test_bad_inputs_say_one_line_and_write_nothing(arena_cli, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    out = tmp_path / "decks.jsonl"
    result = arena_cli("evolve-decks", *args, "--out", str(out), ok=False)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not out.exists()


def test_the_library_refuses_the_same_inputs() -> None:
    with pytest.raises(ArenaError, match="more than --population"):
        Evolution(EvolveConfig(population=4, survivors=3), REGISTRY, LocalPool(1))
