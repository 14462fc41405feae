"""`linear`: one ply of look-ahead maximising weights · game.features(state, player).

The agent plays every legal action on a copy of its view and keeps the one whose resulting
position has the highest linear value for its seat; a position where the game is over counts by
its result instead (a win beats any value). Ties are broken by the seeded RNG.

Weights (`weights=w1,...,wN`, one per name in `game.feature_names`):
1. given weights must have exactly one value per feature;
2. without weights the game's own `default_weights` is used if the game defines that attribute
   (not part of the contract yet), else the weights published with the game's features
   (`agents._search.PUBLISHED_WEIGHTS`: for Santorini the Santorini report's manual weights
   0,2,4,-1,0,-2,-4,1);
3. otherwise the agent refuses the game and says how many weights it needs, for which features.
`weights=FILE` reads them from a weights file (agents/linear_weights.py) that
`arena train --algorithm treestrap|rootstrap` writes; a file for another game or with the wrong
number of weights is refused when the tournament starts, and its digest is part of the version.
Games that offer no features are refused.

The same evaluator is minimax's `eval=linear,weights=...`. One ply needs no hidden information,
so the agent also plays on the views of imperfect-information games that offer features.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import arena
from agents._search import agent_params, linear_evaluation, resolve_weights, terminal_value
from agents.linear_weights import WeightsText, weights_files, weights_fingerprint


def _validated(params: dict[str, Any]) -> dict[str, Any]:
    return agent_params(LinearAgent.info, params)


class LinearAgent(arena.Agent):
    info = arena.AgentInfo(
        id="linear",
        version="1",
        description="One-ply search maximising a weighted sum of the game's features.",
        params=(
            arena.Param("weights", WeightsText(), "one weight per game feature, or a weights file (default: the game's published weights)",
                        type=WeightsText),  # fmt: skip
        ),
    )

    @classmethod
    def check_game(cls, game: arena.Game, params: dict[str, Any]) -> None:
        resolve_weights(cls.info.id, game, _validated(params)["weights"] or None)

    @classmethod
    def files(cls, params: Mapping[str, str]) -> tuple[str, ...]:
        return weights_files(params)

    @classmethod
    def fingerprint(cls, params: dict[str, Any]) -> str:
        return weights_fingerprint(_validated(params))

    def __init__(self, game: arena.Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.weights = resolve_weights(self.info.id, game, self.params["weights"] or None)
        self.evaluate = linear_evaluation(game, self.weights)

    def act(self, state: arena.State) -> int:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        me = state.current_player
        best_value = -float("inf")
        best: list[int] = []
        for action in actions:
            child = state.clone()
            child.apply(action)
            if child.current_player < 0:
                value = terminal_value(child.returns(), me)
            else:
                value = self.evaluate(child, me)
            if value > best_value:
                best_value, best = value, [action]
            elif value == best_value:
                best.append(action)
        return best[0] if len(best) == 1 else self.rng.choice(best)


@arena.hookimpl
def register_agents(register):
    register(LinearAgent)
