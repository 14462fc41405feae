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

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena import ladder
from arena.adaptive import MAX_AGENTS, all_pairs, choose_batch, inverse_probability_weights
from arena.errors import ArenaError
from arena.match import GAME_ERROR
from arena.ratings import (
    bradley_terry_counts,
    bt_ranks,
    pair_results_from_counts,
    pair_weight,
    pairwise_scores,
    rated,
)
from arena.schedule import Table, extend_encoded
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
    if num_agents > MAX_AGENTS:
        raise ArenaError(f"--format {format} takes at most {MAX_AGENTS} agents (each batch weighs every pair of them), "
                         f"got {num_agents}: split the field, or play it as a round-robin", "agents")  # fmt: skip
    pairs = len(all_pairs(num_agents))
    initial = pairs * set_size
    if budget is None and format != "ladder":
        raise ArenaError("--format adaptive needs --budget MATCHES")
    if budget is not None and budget < initial:
        raise ArenaError(f"--budget must be at least {initial} (a first round of every pair), got {budget}")
    return {"budget": budget, "batch": BATCH, "probabilities": pack_probabilities([1.0 / pairs] * initial)}


def pack_probabilities(values: Sequence[float] | np.ndarray) -> str:
    """The selection probabilities as stored (settings.adaptive.probabilities): float64 little-endian, base64. Each
    batch rewrites them and every reader of the settings parses them; as a JSON list of numbers that made a long run
    quadratic (bench/tournament.py's adaptive runs)."""
    return base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode("ascii")


def stored_probabilities(entry: Mapping[str, Any]) -> np.ndarray:
    """The selection probabilities of an adaptive tournament's matches, in schedule order."""
    stored = entry["probabilities"]
    if isinstance(stored, str):
        return np.frombuffer(base64.b64decode(stored, validate=True), dtype="<f8")
    return np.asarray(stored, dtype=float)  # a JSON list: as tournaments stored them before


@dataclass
class Tally:
    """What the scheduler needs of a tournament's stored matches, added up match by match by agent label: the
    results of each pair ((x, y, x's score) with x < y) and the turns of its games (total, count)."""

    matches: int = 0  # the first `matches` of the schedule are counted
    results: dict[tuple[str, str, float], float] = field(default_factory=dict)
    turns: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def add(self, records: Iterable[MatchRecord]) -> Tally:
        for record in records:
            self.matches += 1
            if len(record.seats) != 2 or record.reason == GAME_ERROR:  # a match the game broke tells nothing of the pair
                continue
            first, second = record.seats
            x, y = first.agent, second.agent
            score = 1.0 if first.rank < second.rank else 0.5 if first.rank == second.rank else 0.0
            if x > y:
                x, y, score = y, x, 1.0 - score
            self.results[(x, y, score)] = self.results.get((x, y, score), 0.0) + 1.0
            turns = self.turns.setdefault((x, y), [0.0, 0.0])
            turns[0] += max(record.turns, 1)
            turns[1] += 1
        return self

    def cells(self, labels: Sequence[str]) -> dict[tuple[int, int, float], float]:
        """Pairwise counts by agent position: (a, b, a's score) with a < b."""
        index = {label: i for i, label in enumerate(labels)}
        cells: dict[tuple[int, int, float], float] = {}
        for (x, y, score), count in sorted(self.results.items()):
            a, b = index[x], index[y]
            cells[(a, b, score) if a < b else (b, a, 1.0 - score)] = count
        return cells

    def lengths(self, labels: Sequence[str]) -> list[float]:
        """The mean length in turns of each pair's stored games (all_pairs order); the overall mean for a pair not met."""
        total = sum(turns for turns, _ in self.turns.values())
        count = sum(count for _, count in self.turns.values())
        overall = total / count if count else 1.0
        means = []
        for a, b in all_pairs(len(labels)):
            x, y = sorted((labels[a], labels[b]))
            turns, games = self.turns.get((x, y), (0.0, 0.0))
            means.append(float(turns / games) if games else float(overall))
        return means


#: The tallies of the adaptive tournaments this process extends, each over a complete prefix of the schedule:
#: stored matches never change, so a batch loads only the matches stored since the last one (each batch used to
#: reload every match, which made a long run quadratic). Keyed by database, tournament id and creation time.
_tallies: dict[tuple[str, int, str], Tally] = {}


def tally_of(database: Database, session: Any, tournament: Any) -> Tally:
    """The tally of the tournament's stored matches from the first up to the first one not stored yet."""
    key = (str(database.url), tournament.id, str(tournament.created_at))
    tally = _tallies.get(key) or Tally()
    records = queries.load_matches(session, tournament_id=tournament.id, start=(tournament.id, tally.matches))
    contiguous = next((n for n, record in enumerate(records) if record.index != tally.matches + n), len(records))
    _tallies[key] = tally.add(records[:contiguous])
    return tally


def next_batch(entry: Mapping[str, Any], labels: Sequence[str], tally: Tally, seed: int,
               scheduled: int, set_size: int) -> tuple[list[Table], list[float]] | None:  # fmt: skip
    """The next tables and their selection probabilities, or None when the budget is spent."""
    budget = entry["budget"]
    units = int(entry["batch"]) if budget is None else min(int(entry["batch"]), (int(budget) - scheduled) // set_size)
    if units <= 0:
        return None
    pairs = all_pairs(len(labels))
    rng = np.random.default_rng(derive_seed(seed, "adaptive", scheduled))
    tables: list[Table] = []
    chosen: list[float] = []
    for k, probability in choose_batch(len(labels), tally.cells(labels), units, rng, tally.lengths(labels)):
        a, b = pairs[k]
        if set_size == 2:
            tables += [(a, b), (b, a)]  # a pair: one opening, the seats swapped
        else:
            tables.append((a, b) if rng.random() < 0.5 else (b, a))
        chosen += [probability] * set_size
    return tables, chosen


def extend(database: Database, tournament_id: int) -> int | None:
    """Append the next batch to an adaptive tournament (or a ladder) whose scheduled matches are all stored: the length
    of the schedule it grew from (every match before it stored); None when none: the budget is spent, or a ladder
    without budget is settled and nobody waits to join."""
    with database.session() as session:
        tournament = queries.find_tournament(session, tournament_id)
        if tournament is None:
            return None
        settings = json.loads(tournament.settings)
        entry = settings.get("adaptive")
        if entry is None:
            return None
        tally = tally_of(database, session, tournament)
        if tally.matches < tournament.scheduled:
            return None  # play stopped before the batch was done: --resume finishes it first
        schedule = tournament.schedule
        seed, scheduled = tournament.seed, tournament.scheduled
        joins = queries.ladder_joins(session, tournament.id) if settings["format"] == ladder.FORMAT else []
    labels = [agent["label"] for agent in settings["agents"]]
    set_size = settings.get("set_size", 1)
    room = None if entry["budget"] is None else (int(entry["budget"]) - scheduled) // set_size * set_size
    if room is not None and room <= 0:
        return None  # the budget is spent: no batch, and no newcomer (it joined a ladder about to end)
    waiting = [agent for label, agent in joins if label not in set(labels)]
    if waiting:  # newcomers, in join order: admitted with their entry round (arena.ladder), within the budget
        new_tables = ladder.entry_round(len(labels), len(labels) + len(waiting), set_size)[:room]
        probabilities = ladder.entry_probabilities(len(labels) + len(waiting), len(new_tables))
        settings["agents"] = list(settings["agents"]) + waiting
        settings.setdefault("ladder", {"joins": []})["joins"] += [{"agent": agent["label"], "at": scheduled} for agent in waiting]
    else:
        if settings["format"] == ladder.FORMAT and entry["budget"] is None and ladder.settled(len(labels), tally.cells(labels)):
            return None  # idle until an agent joins
        batch = next_batch(entry, labels, tally, seed, scheduled, set_size)
        if batch is None:
            return None
        new_tables, probabilities = batch
    entry["probabilities"] = pack_probabilities(np.concatenate([stored_probabilities(entry), probabilities]))
    queries.extend_schedule(database, tournament_id, extend_encoded(schedule, new_tables),
                            scheduled + len(new_tables), settings, scheduled)  # fmt: skip
    return scheduled  # (extended by this process or, meanwhile, by another: either way there is a batch to play)


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
    for record in rated(records):  # (as every rating: not the matches the game itself broke)
        weight = weights[record.index] * pair_weight(record)
        for a, b, score in pairwise_scores(record):
            cells[(a, b, score)] = cells.get((a, b, score), 0.0) + weight
    results = pair_results_from_counts(cells)
    bt = bradley_terry_counts(results)
    ranks = bt_ranks(results, bt)
    return [{**row, "bt": bt[row["agent"]].rating, "bt_low": bt[row["agent"]].low, "bt_high": bt[row["agent"]].high,
             "bt_low_by_prior": bt[row["agent"]].low_by_prior, "bt_high_by_prior": bt[row["agent"]].high_by_prior,
             "rank": ranks[row["agent"]]} for row in rows]  # fmt: skip


def match_weights(settings: Mapping[str, Any]) -> dict[int, float] | None:
    """Schedule index -> inverse-probability weight of an adaptive tournament's matches (None for other formats)."""
    entry = settings.get("adaptive")
    if entry is None:
        return None
    weights = inverse_probability_weights(stored_probabilities(entry))
    return {index: float(weight) for index, weight in enumerate(weights)}
