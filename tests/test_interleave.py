"""Interleaved matches (arena.interleave): batched decisions, the same results as one match at a time."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import arena
from arena.interleave import batch_flags, concurrent_chunks, play_interleaved
from arena.match import match_steps, play_match
from arena.plugins import get_registry
from arena.seeding import derive_seed

REGISTRY = get_registry()


class Counting(arena.Agent):
    """Plays like `random` (its own seeded RNG), answering in batches; records the batch sizes."""

    info = arena.AgentInfo(id="counting")
    batches: list[int] = []
    fail_at: int | None = None

    def act(self, state: arena.State) -> int:
        if self.fail_at is not None and len(state.legal_actions()) == self.fail_at:
            raise ValueError("refused")
        return self.rng.choice(state.legal_actions())

    def batch_key(self) -> Hashable:
        return "counting"

    @classmethod
    def act_batch(cls, agents: Sequence[arena.Agent], views: Sequence[arena.State]) -> list[int]:
        cls.batches.append(len(agents))
        if cls.fail_at is not None and any(len(v.legal_actions()) == cls.fail_at for v in views):
            raise ValueError("refused")
        return [agent.act(view) for agent, view in zip(agents, views)]


def agents_for(game: arena.Game, index: int) -> list[arena.Agent]:
    """`counting` in seat index % players, `random` in the others."""
    seed = derive_seed(7, index)
    players = game.num_players
    agents: list[arena.Agent] = [REGISTRY.agents["random"](game, p, derive_seed(seed, p)) for p in range(players)]
    mine = index % players
    agents[mine] = Counting(game, mine, derive_seed(seed, mine))
    return agents


def results(game_id: str, concurrent: int | None, matches: int = 40) -> list[Any]:
    game = REGISTRY.games[game_id]()
    if concurrent is None:
        return [play_match(game, agents_for(game, i), i, 60) for i in range(matches)]

    def start(index: int) -> tuple[Any, list[arena.Agent]]:
        agents = agents_for(game, index)
        return match_steps(game, agents, index, 60, None, batched=batch_flags(agents)), agents

    done = dict(play_interleaved(range(matches), start, concurrent))
    return [done[i] for i in range(matches)]


def comparable(result: Any) -> tuple:
    return (result.moves, result.scores, result.reason, result.detail, result.turns)


def test_interleaved_equals_sequential_and_batches():
    for game_id in ("connect_four", "incan_gold", "gwent_lite"):
        Counting.batches = []
        sequential = [comparable(r) for r in results(game_id, None)]
        assert Counting.batches == []
        for concurrent in (1, 7, 64):
            Counting.batches = []
            assert [comparable(r) for r in results(game_id, concurrent)] == sequential, (game_id, concurrent)
            assert max(Counting.batches) == min(concurrent, 40) or game_id != "connect_four"
        assert max(Counting.batches) > 1


def test_a_failing_batch_forfeits_the_matches_it_answered():
    Counting.fail_at = 5
    try:
        sequential = [comparable(r) for r in results("connect_four", None, 12)]
        assert [comparable(r) for r in results("connect_four", 6, 12)] == sequential
        assert any(r[2] == "agent_error" for r in sequential)
    finally:
        Counting.fail_at = None


def test_chunks_hold_full_batches():
    chunks = concurrent_chunks(list(range(1000)), 2, 64)
    assert [len(c) for c in chunks] == [256, 256, 256, 232]
    assert sum(chunks, []) == list(range(1000))
    assert [len(c) for c in concurrent_chunks(list(range(10)), 2, 64)] == [10]
