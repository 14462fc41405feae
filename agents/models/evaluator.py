"""A network as search knowledge: priors over the legal actions and a state value, batched and cached.

Used by `minimax` (`eval=model`: the value at the leaves) and `mcts` (`model=FILE`: PUCT priors and
values instead of play-outs). The network sees the observation of the seat to move; its value
output (second output) is that seat's expected return; a network with one output (Q-values) is
valued by its best legal Q-value. Two-player games only: the other seat's value is the negation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import arena
from agents.models import model_for
from agents.neural import NotANumber, checkpoint_digest, file_key, game_model

#: Positions whose network output is kept (per agent); the cache is emptied when it is full.
CACHE_LIMIT = 1 << 16


def require_model_game(agent_id: str, game: arena.Game, model_path: str) -> None:
    """Refuse games a network evaluation cannot serve, and files that do not fit the game."""
    if not model_path:
        raise arena.ArenaError(f"agent '{agent_id}': a network evaluation needs model=FILE")
    if game.num_players != 2:
        raise arena.ArenaError(f"agent '{agent_id}': a network's value is for two-player games, not {game.num_players} players")
    model_for(file_key(model_path), game, with_params=True)


def model_fingerprint(params: dict[str, Any]) -> str:
    """The network file's digest, so results say which network guided the search."""
    return checkpoint_digest(params["model"]) if params.get("model") else ""


class NetworkEvaluator:
    def __init__(self, game: arena.Game, model_path: str) -> None:
        self.model = game_model(game, model_path)
        self.cache: dict[bytes, tuple[np.ndarray, float]] = {}
        self.evaluations = 0  # forward-pass rows, for statistics

    def infer(self, states: Sequence[arena.State]) -> list[tuple[np.ndarray, float]]:
        """Per state (not finished): (the network's values over action ids, the value for the seat to move)."""
        keys, missing, observations = [], [], []
        for index, state in enumerate(states):
            observation = np.asarray(state.observation(state.current_player), dtype=np.float32)
            key = observation.tobytes()
            keys.append(key)
            if key not in self.cache:
                missing.append(index)
                observations.append(observation)
        if missing:
            outputs, values = self.model.run(np.stack(observations))
            self.evaluations += len(missing)
            if len(self.cache) + len(missing) > CACHE_LIMIT:
                self.cache.clear()
            for row, index in enumerate(missing):
                if values is not None:
                    value = float(values[row])
                else:  # Q-values: the best legal one
                    value = float(outputs[row][states[index].legal_actions()].max())
                if math.isnan(value):  # a search would compare it silently (every comparison false): the agent's fault
                    raise NotANumber(f"the network's value of a position is NaN ({self.model.path})")
                self.cache[keys[index]] = (outputs[row], value)
        return [self.cache[key] for key in keys]

    def value(self, state: arena.State, player: int) -> float:
        """The value of a position (not finished) for `player` (an `Evaluation` for minimax)."""
        _outputs, value = self.infer([state])[0]
        return value if state.current_player == player else -value

    def values(self, states: Sequence[arena.State], player: int) -> list[float]:
        return [v if s.current_player == player else -v for s, (_o, v) in zip(states, self.infer(states))]


def priors(outputs: np.ndarray, legal: Sequence[int]) -> list[float]:
    """The softmax of the network's values over the legal actions."""
    values = outputs[list(legal)].astype(np.float64)
    weights = np.exp(values - values.max())
    total = float(weights.sum())
    return [float(w) / total for w in weights] if total > 0 and math.isfinite(total) else [1.0 / len(legal)] * len(legal)
