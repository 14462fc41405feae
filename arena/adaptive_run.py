"""Adaptive tournaments (--format adaptive --budget MATCHES): the schedule grows batch by batch.

The tournament is created with a first round (every pair once; with --openings every pair as a
pair of games). When every scheduled match is stored, the next batch of BATCH pairs is drawn by
arena.adaptive from the stored results, with a generator seeded by the tournament seed and the
number of matches scheduled so far, appended to the packed schedule, and its selection
probabilities to the settings; then it is played like any other part of the schedule. So the
choices depend only on the seed and the stored results: a killed run resumes with the same
choices, whatever the number of workers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from arena import ladder
from arena.adaptive import all_pairs, choose_batch, inverse_probability_weights
from arena.errors import ArenaError
from arena.ratings import (
    bradley_terry_counts,
    pair_results_from_counts,
    pairwise_scores,
    separated_ranks,
)
from arena.schedule import Table, decode_schedule, encode_schedule
from arena.seeding import derive_seed
from db import queries
from db.records import MatchRecord
from db.session import Database

#: Pairs chosen at a time: the choices between two batches use every result before them.
BATCH = 16


def adaptive_settings(budget: int | None, num_agents: int, players: int, set_size: int,
                      format: str = "adaptive") -> dict[str, Any]:  # fmt: skip
    """The settings entry of a new adaptive tournament whose first round has every pair once (as a set).

    A ladder (arena.ladder) may have no budget: it plays until cancelled."""
    if players != 2:
        raise ArenaError(f"--format {format} is for two-player games")
    pairs = len(all_pairs(num_agents))
    initial = pairs * set_size
    if budget is None and format != "ladder":
        raise ArenaError("--format adaptive needs --budget MATCHES")
    if budget is not None and budget < initial:
        raise ArenaError(f"--budget must be at least {initial} (a first round of every pair), got {budget}")
    return {"budget": budget, "batch": BATCH, "probabilities": [1.0 / pairs] * initial}


def cells_of(records: Iterable[MatchRecord], labels: Sequence[str]) -> dict[tuple[int, int, float], float]:
    """Pairwise counts by agent position: (a, b, a's score) with a < b."""
    index = {label: i for i, label in enumerate(labels)}
    cells: dict[tuple[int, int, float], float] = {}
    for record in records:
        if len(record.seats) != 2:
            continue
        first, second = record.seats
        a, b = index[first.agent], index[second.agent]
        score = 1.0 if first.rank < second.rank else 0.5 if first.rank == second.rank else 0.0
        if a > b:
            a, b, score = b, a, 1.0 - score
        cells[(a, b, score)] = cells.get((a, b, score), 0.0) + 1.0
    return cells


def next_batch(entry: Mapping[str, Any], labels: Sequence[str], records: Iterable[MatchRecord], seed: int,
               scheduled: int, set_size: int) -> tuple[list[Table], list[float]] | None:  # fmt: skip
    """The next tables and their selection probabilities, or None when the budget is spent."""
    budget = entry["budget"]
    units = int(entry["batch"]) if budget is None else min(int(entry["batch"]), (int(budget) - scheduled) // set_size)
    if units <= 0:
        return None
    records = list(records)
    pairs = all_pairs(len(labels))
    rng = np.random.default_rng(derive_seed(seed, "adaptive", scheduled))
    tables: list[Table] = []
    chosen: list[float] = []
    for k, probability in choose_batch(len(labels), cells_of(records, labels), units, rng, pair_lengths(records, labels)):
        a, b = pairs[k]
        if set_size == 2:
            tables += [(a, b), (b, a)]  # a pair: one opening, the seats swapped
        else:
            tables.append((a, b) if rng.random() < 0.5 else (b, a))
        chosen += [probability] * set_size
    return tables, chosen


def pair_lengths(records: Sequence[MatchRecord], labels: Sequence[str]) -> list[float]:
    """The mean length in turns of each pair's stored games (all_pairs order); the overall mean for a pair not met."""
    index = {label: i for i, label in enumerate(labels)}
    pairs = all_pairs(len(labels))
    totals, counts = np.zeros(len(pairs)), np.zeros(len(pairs))
    position = {pair: k for k, pair in enumerate(pairs)}
    for record in records:
        if len(record.seats) == 2:
            a, b = index[record.seats[0].agent], index[record.seats[1].agent]
            k = position[(a, b) if a < b else (b, a)]
            totals[k] += max(record.turns, 1)
            counts[k] += 1
    overall = totals.sum() / counts.sum() if counts.sum() else 1.0
    return [float(t / c) if c else float(overall) for t, c in zip(totals, counts)]


def extend(database: Database, tournament_id: int) -> bool:
    """Append the next batch to an adaptive tournament (or a ladder) whose scheduled matches are all stored;
    False when none: the budget is spent, or a ladder without budget is settled and nobody waits to join."""
    with database.session() as session:
        tournament = queries.find_tournament(session, tournament_id)
        if tournament is None:
            return False
        settings = json.loads(tournament.settings)
        entry = settings.get("adaptive")
        if entry is None:
            return False
        records = queries.load_matches(session, tournament_id=tournament.id)
        if len(records) < tournament.scheduled:
            return False  # play stopped before the batch was done: --resume finishes it first
        tables = decode_schedule(tournament.schedule, tournament.players)
        seed, scheduled = tournament.seed, tournament.scheduled
        joins = queries.ladder_joins(session, tournament.id) if settings["format"] == ladder.FORMAT else []
    labels = [agent["label"] for agent in settings["agents"]]
    set_size = settings.get("set_size", 1)
    waiting = [agent for label, agent in joins if label not in set(labels)]
    if waiting:  # newcomers, in join order: admitted with their entry round (arena.ladder)
        new_tables = ladder.entry_round(len(labels), len(labels) + len(waiting), set_size)
        probabilities = ladder.entry_probabilities(len(labels) + len(waiting), len(new_tables))
        settings["agents"] = list(settings["agents"]) + waiting
        settings.setdefault("ladder", {"joins": []})["joins"] += [{"agent": agent["label"], "at": scheduled} for agent in waiting]
    else:
        if settings["format"] == ladder.FORMAT and entry["budget"] is None and ladder.settled(len(labels), cells_of(records, labels)):
            return False  # idle until an agent joins
        batch = next_batch(entry, labels, records, seed, scheduled, set_size)
        if batch is None:
            return False
        new_tables, probabilities = batch
    entry["probabilities"] = list(entry["probabilities"]) + probabilities
    tables += new_tables
    queries.extend_schedule(database, tournament_id, encode_schedule(tables), len(tables), settings)
    return True


def weighted_rows(database: Database, tournament_id: int, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaderboard rows of an adaptive tournament with the Bradley-Terry fields (bt, interval, by-prior flags, rank)
    from the inverse-probability weighted fit: each result counts 1 / (its selection probability), scaled to a mean
    of one, so the estimate is the one a uniform choice of pairs would give even where the model is wrong, at a cost
    in variance (bench/adaptive.py measures it)."""
    with database.session() as session:
        tournament = queries.find_tournament(session, tournament_id)
        settings = json.loads(tournament.settings) if tournament is not None else {}
        weights = match_weights(settings)
        if weights is None:
            raise ArenaError("--weighted is for tournaments of --format adaptive (their matches' selection probabilities)")
        records = queries.load_matches(session, tournament_id=tournament_id)
    cells: dict[tuple[str, str, float], float] = {}
    for record in records:
        for a, b, score in pairwise_scores(record):
            cells[(a, b, score)] = cells.get((a, b, score), 0.0) + weights[record.index]
    bt = bradley_terry_counts(pair_results_from_counts(cells))
    ranks = separated_ranks({agent: (r.low, r.high) for agent, r in bt.items()})
    return [{**row, "bt": bt[row["agent"]].rating, "bt_low": bt[row["agent"]].low, "bt_high": bt[row["agent"]].high,
             "bt_low_by_prior": bt[row["agent"]].low_by_prior, "bt_high_by_prior": bt[row["agent"]].high_by_prior,
             "rank": ranks[row["agent"]]} for row in rows]  # fmt: skip


def match_weights(settings: Mapping[str, Any]) -> dict[int, float] | None:
    """Schedule index -> inverse-probability weight of an adaptive tournament's matches (None for other formats)."""
    entry = settings.get("adaptive")
    if entry is None:
        return None
    weights = inverse_probability_weights(entry["probabilities"])
    return {index: float(weight) for index, weight in enumerate(weights)}
