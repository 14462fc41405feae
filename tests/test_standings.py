"""The leaderboard's stored fold (arena.results.standings) equals one pass over every match, whatever
order the matches are stored in, across tournaments, gaps, interruptions and a tampered store (on
SQLite, and on PostgreSQL)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena import results
from arena.leaderboard import Standings, leaderboard_rows
from arena.params import canonical
from arena.plugins import get_registry
from arena.schedule import encode_schedule
from arena.stats import distinct_games
from db import queries
from db.session import Database, open_database

AGENTS = ["a", "b", "c", "d", "e"]
REASONS = ["normal", "normal", "normal", "turn_limit", "illegal_action"]


def _game_keys() -> tuple[str, str]:
    game = get_registry().game_class("tic_tac_toe")()
    return game.info.version, canonical(game.params)


def _tournament(database: Database, rng: random.Random, matches: int) -> tuple[int, list[queries.MatchOutcome], queries.TournamentKeys]:
    version, params = _game_keys()
    tables = []
    for _ in range(matches):
        seats = rng.choice([2, 2, 2, 3])  # a few matches of three seats: rankings, not just wins
        tables.append(rng.sample(range(len(AGENTS)), seats))
    tid = queries.create_tournament(
        database, name=None, game_id="tic_tac_toe", game_version=version, game_params=params, format="round-robin",
        rounds=1, seed=rng.randrange(1000), max_turns=200, time_per_move=None, players=2,
        settings={"game": "tic_tac_toe", "agents": [{"label": a} for a in AGENTS]},
        schedule=encode_schedule(tables), scheduled=len(tables),
    )  # fmt: skip
    keys = queries.TournamentKeys(tid, "tic_tac_toe", version, params, [(a, "synthetic", "{}", "1") for a in AGENTS])
    outcomes = []
    for index, table in enumerate(tables):
        ranks = [rng.randint(1, len(table)) for _ in table]
        best = min(ranks)
        labels = ["win" if r == best and ranks.count(best) == 1 else "draw" if r == best else "loss" for r in ranks]
        scores = [1.0 if o == "win" else 0.0 if o == "draw" else -1.0 for o in labels]
        moves = bytes(rng.choice([[1, 2], [3], [1, 2, 3]]))  # few distinct games: repeats are counted
        outcomes.append(queries.MatchOutcome(index, index, table, 9, rng.choice(REASONS), None, moves, b"", 0.001, scores,
                                             labels, ranks, [rng.random() / 100 for _ in table], [4] * len(table)))  # fmt: skip
    return tid, outcomes, keys


def _check(database: Database, selection_of: list) -> None:  # type: ignore[type-arg]
    for make in selection_of:
        folded = results.standings(database, make())
        fresh = make()
        assert folded.rows() == leaderboard_rows(fresh.records)
        assert folded.distinct.rows() == distinct_games(fresh.records, fresh.moves)


@pytest.mark.parametrize("seed, database_url", [*((seed, "sqlite") for seed in range(6)), (0, "postgresql")], indirect=["database_url"])
def test_stored_fold_equals_one_pass(database: Database, seed: int) -> None:
    rng = random.Random(seed)
    registry = get_registry()
    tournaments = [_tournament(database, rng, rng.randint(20, 60)) for _ in range(3)]
    pending = [(keys, outcome) for _, outcomes, keys in tournaments for outcome in outcomes]
    rng.shuffle(pending)  # finishing order is not schedule order: gaps open and close
    selections = [lambda tid=tid: results.select(database, registry, tournament=str(tid)) for tid, _, _ in tournaments]
    selections.append(lambda: results.select(database, registry, game="tic_tac_toe"))
    _check(database, selections)
    while pending:
        size = rng.randint(1, 25)
        batch, pending = pending[:size], pending[size:]
        for _, _, keys in tournaments:
            queries.save_results(database, keys, [outcome for k, outcome in batch if k is keys])
        if rng.random() < 0.5:
            _check(database, selections)
    _check(database, selections)
    # The fold moved on to the end: a later read loads no match at all, and answers the same.
    stored = results.standings(database, selections[-1]())
    assert stored.rows() == leaderboard_rows(selections[-1]().records)


def test_tampered_or_stale_fold_is_recomputed(database: Database) -> None:
    rng = random.Random(9)
    registry = get_registry()
    tid, outcomes, keys = _tournament(database, rng, 40)
    queries.save_results(database, keys, outcomes[:30])
    selection = results.select(database, registry, game="tic_tac_toe")
    assert results.standings(database, selection).rows() == leaderboard_rows(selection.records)
    with database.engine.begin() as connection:
        connection.exec_driver_sql("update cache set payload = '{\"format\": 1, \"closed\": 7}'")
    assert results.standings(database, selection).rows() == leaderboard_rows(selection.records)
    # A tournament the fold had closed gets a new batch (its revision moves): the fold is not trusted.
    second_tid, second, second_keys = _tournament(database, rng, 10)
    queries.save_results(database, keys, outcomes[30:])
    queries.save_results(database, second_keys, second)
    selection = results.select(database, registry, game="tic_tac_toe")
    assert results.standings(database, selection).rows() == leaderboard_rows(selection.records)
    queries.save_results(database, keys, outcomes[:1])  # a duplicate batch: stored once, revision bumped
    selection = results.select(database, registry, game="tic_tac_toe")
    assert results.standings(database, selection).rows() == leaderboard_rows(selection.records)


def test_empty_selection_has_empty_standings(tmp_path: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    rng = random.Random(1)
    _tournament(database, rng, 5)
    selection = results.select(database, get_registry(), game="tic_tac_toe")
    assert results.standings(database, selection).rows() == [] == Standings().rows()
