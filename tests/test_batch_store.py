"""Storing batches of results (db.bulk: executemany on SQLite, COPY and one statement on PostgreSQL):
every column of every match and seat reads back as it was played, whatever the seat count, with or
without the optional columns; a batch overlapping matches stored already stores only the new ones,
and each batch bumps the tournament's revision once. On SQLite and on PostgreSQL."""

from __future__ import annotations

import random

from arena.schedule import encode_schedule
from db import queries
from db.models import Match, MatchSeat
from db.session import Database

AGENTS = [("alpha", "random", '{"seed": 1}', "1"), ("beta, the second", "greedy", "{}", "2"), ("gamma", "mcts", '{"x": "é"}', "3")]


def _outcomes(rng: random.Random, tables: list[list[int]]) -> list[queries.MatchOutcome]:
    outcomes = []
    for index, table in enumerate(tables):
        n = len(table)
        network = [rng.random() for _ in table] if index % 3 == 0 else None
        outcomes.append(queries.MatchOutcome(
            index, rng.randrange(2**63), table, rng.randrange(1, 99), rng.choice(["normal", "illegal_action", "turn_limit"]),
            "bad move 'x'\n" if index % 4 == 0 else None, bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60))),
            bytes(rng.randrange(1, 9) for _ in range(3)), rng.random(), [rng.choice([1.0, 0.0, -1.0, 0.5]) for _ in table],
            [rng.choice(["win", "draw", "loss"]) for _ in table], [rng.randint(1, n) for _ in table],
            [rng.random() for _ in table], [rng.randrange(50) for _ in table],
            rng.randrange(1, 5) if index % 2 else None, rng.randrange(n) if index % 5 else None, index % 3, network,
        ))  # fmt: skip
    return outcomes


def test_batches_read_back_exactly_and_each_match_is_stored_once(database: Database) -> None:
    rng = random.Random(15)
    tables = [rng.sample(range(len(AGENTS)), rng.choice([2, 3])) for _ in range(120)]
    tid = queries.create_tournament(
        database, name=None, game_id="g", game_version="1", game_params="", format="round-robin", rounds=1, seed=1,
        max_turns=100, time_per_move=None, players=3, settings={"agents": []}, schedule=encode_schedule(tables),
        scheduled=len(tables),
    )  # fmt: skip
    keys = queries.TournamentKeys(tid, "g", "1", "", AGENTS)
    outcomes = _outcomes(rng, tables)
    shuffled = outcomes[:]
    rng.shuffle(shuffled)  # batches arrive in finishing order, not schedule order
    queries.save_results(database, keys, shuffled[:70])
    queries.save_results(database, keys, shuffled[50:])  # 20 of these are stored already
    queries.save_results(database, keys, [])  # nothing to store: nothing written, no revision
    with database.session() as session:
        assert queries.tournament_fingerprint(session, tid) == f"{tid}@2"
        matches = {m.index: m for m in session.query(Match).filter(Match.tournament_id == tid)}
        seats = session.query(MatchSeat).join(Match).filter(Match.tournament_id == tid).count()
        assert sorted(matches) == list(range(len(tables))) and seats == sum(len(t) for t in tables)
        for outcome in outcomes:
            match = matches[outcome.schedule_index]
            assert (match.seed, match.turns, match.reason, match.detail, match.moves, match.legal_counts, match.rounds,
                    match.first_player, match.opening_plies, match.status, match.game_id) == (
                    outcome.seed, outcome.turns, outcome.reason, outcome.detail, outcome.moves, outcome.legal_counts,
                    outcome.rounds, outcome.first_player, outcome.opening_plies, "done", "g")  # fmt: skip
            assert abs(match.duration - outcome.duration) < 1e-9 and match.finished_at is not None
            stored = [(s.seat, s.agent, s.agent_type, s.agent_params, s.agent_version, s.score, s.outcome, s.rank,
                       s.think_time, s.moves, s.network_time) for s in match.seats]  # fmt: skip
            expected = [(seat, *AGENTS[position], outcome.scores[seat], outcome.outcomes[seat], outcome.ranks[seat],
                         outcome.think_times[seat], outcome.move_counts[seat],
                         outcome.network_times[seat] if outcome.network_times else None)
                        for seat, position in enumerate(outcome.seating)]  # fmt: skip
            assert stored == expected
