"""Head-to-head matches for agent tests: one agent against another, seats alternating."""

from __future__ import annotations

from typing import Any

import arena
from arena.match import play_match
from arena.plugins import get_registry
from arena.seeding import derive_seed

Spec = tuple[str, dict[str, Any]]


def duel(game: arena.Game, spec: Spec, other: Spec, n: int) -> list[str]:
    """Outcomes of `spec` in n matches against `other`, seats alternating."""
    registry = get_registry()
    outcomes = []
    for i in range(n):
        seat = i % 2
        specs = [spec, other] if seat == 0 else [other, spec]
        agents = [registry.agents[s[0]](game, p, derive_seed(i, p), **s[1]) for p, s in enumerate(specs)]
        result = play_match(game, agents, derive_seed("duel", i))
        assert result.reason in ("normal", "turn_limit"), result.detail
        outcomes.append(result.outcomes[seat])
    return outcomes
