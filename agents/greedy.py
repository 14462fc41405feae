"""`greedy`: win now if possible, else stop the opponent's immediate win, else best heuristic one ply ahead.

The evaluation is the game's `greedy` evaluation when it offers one (a game whose reports define
the greedy player differently, such as Dots and Boxes), else its `heuristic`; `eval=NAME` picks
another of the game's evaluations. Ties are broken at random from the seeded RNG.
"""

from __future__ import annotations

from typing import Any

import arena
from agents._search import explicit_eval
from arena.api import Evaluation


def _default_eval(game: arena.Game) -> str:
    names = game.evaluations()
    return "greedy" if "greedy" in names else "heuristic"


def _wins(state: arena.State, player: int) -> bool:
    """True when `state` is over and `player` strictly beats every other seat."""
    if not state.is_terminal():
        return False
    returns = state.returns()
    mine = returns[player]
    return all(mine > r for i, r in enumerate(returns) if i != player)


class GreedyAgent(arena.Agent):
    info = arena.AgentInfo(
        id="greedy",
        description="Immediate win, else block an immediate loss, else maximise the game's heuristic one ply ahead.",
        params=(arena.Param("eval", "", "evaluation to maximise (default: the game's greedy or heuristic one)"),),
    )

    @classmethod
    def canonical_params(cls, game: arena.Game, params: dict[str, Any]) -> dict[str, Any]:
        return explicit_eval(params, _default_eval(game))

    @classmethod
    def check_game(cls, game: arena.Game, params: dict[str, Any]) -> None:
        names = game.evaluations()
        wanted = params.get("eval") or _default_eval(game)
        if wanted not in names:
            if not names:
                raise arena.ArenaError(f"agent 'greedy' needs a heuristic, and game '{game.info.id}' offers none")
            raise arena.ArenaError(
                f"agent 'greedy': game '{game.info.id}' has no evaluation '{wanted}' (it has: {', '.join(sorted(names))})"
            )

    def __init__(self, game: arena.Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.check_game(game, params)
        self.evaluate: Evaluation = game.evaluations()[params.get("eval") or _default_eval(game)]

    def act(self, state: arena.State) -> int:
        me = state.current_player
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        children = []
        for action in actions:
            child = state.clone()
            child.apply(action)
            children.append((action, child))

        winning = [a for a, child in children if _wins(child, me)]
        if winning:
            return self.rng.choice(winning)

        safe = [(a, child) for a, child in children if not self._opponent_wins_next(child, me)]
        candidates = safe or children

        best_value = float("-inf")
        best: list[int] = []
        for action, child in candidates:
            value = self.evaluate(child, me)
            if value > best_value:
                best_value, best = value, [action]
            elif value == best_value:
                best.append(action)
        return self.rng.choice(best)

    @staticmethod
    def _opponent_wins_next(state: arena.State, me: int) -> bool:
        """True when the next player is an opponent who has a move that wins at once."""
        opponent = state.current_player
        if state.is_terminal() or opponent == me:
            return False
        for reply in state.legal_actions():
            after = state.clone()
            after.apply(reply)
            if _wins(after, opponent):
                return True
        return False


@arena.hookimpl
def register_agents(register):
    register(GreedyAgent)
