"""What the PettingZoo and Gymnasium environments share: the game, its tensors, masks, rewards and seeds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.api import Game, Shaping, State
from arena.errors import ArenaError
from arena.match import LOSS, WIN, outcomes_from_returns
from arena.plugins import Registry, get_registry
from arena.tournament import game_with_players

REWARDS = ("outcome", "returns")

#: A learner that plays an illegal action loses: this reward, and the episode ends (as in Arena matches).
ILLEGAL_REWARD = -1.0


def make_game(game: str | Game, players: int | None, registry: Registry | None) -> Game:
    """A configured game from a spec (`connect_four:rows=5`) or a Game instance; ArenaError when it cannot be played."""
    if isinstance(game, Game):
        if players is not None and players != game.num_players:
            raise ArenaError(f"the game given is set up for {game.num_players} players, not {players}")
        configured = game
    else:
        configured = game_with_players(registry if registry is not None else get_registry(), game, players)
    state = configured.new_initial_state(0)
    try:
        state.observation(max(state.current_player, 0))
    except NotImplementedError:
        raise ArenaError(f"game '{configured.info.id}' offers no observation tensor, which the environments need") from None
    return configured


def observation_shape(game: Game) -> tuple[int, ...]:
    return tuple(int(n) for n in np.shape(game.new_initial_state(0).observation(0)))


def observe(state: State, player: int) -> np.ndarray:
    """`player`'s observation tensor, float32: the game encodes only what that seat may see."""
    return np.asarray(state.observation(player), dtype=np.float32).copy()


def action_mask(game: Game, legal: Sequence[int]) -> np.ndarray:
    """int8 over the game's distinct actions, 1 where legal (what Gymnasium's `Discrete.sample(mask=)` takes)."""
    mask = np.zeros(game.num_distinct_actions, dtype=np.int8)
    mask[list(legal)] = 1
    return mask


def shaping(game: Game, name: str | None) -> Shaping | None:
    """The game's reward shaping called `name` (None: no shaping); ArenaError naming the ones offered."""
    if name is None:
        return None
    offered = game.reward_shapings()
    if name not in offered:
        known = ", ".join(sorted(offered)) or "none"
        raise ArenaError(f"game '{game.info.id}' offers no reward shaping '{name}' (offered: {known})")
    return offered[name]


def configure(env: Any, max_turns: int, reward: str, shaping_name: str | None, render_mode: str | None) -> None:
    """Check and set what both environments take beside the game (`env.game` must be set)."""
    if max_turns < 1:
        raise ArenaError(f"max_turns must be at least 1, got {max_turns}")
    if reward not in REWARDS:
        raise ArenaError(f"unknown reward '{reward}' (choose {', '.join(REWARDS)})")
    if render_mode is not None and render_mode not in env.metadata["render_modes"]:
        raise ValueError(f"render_mode must be one of {env.metadata['render_modes']}, got {render_mode!r}")
    env.max_turns, env.reward_kind, env.render_mode = max_turns, reward, render_mode
    env.shaping = shaping(env.game, shaping_name)


def final_rewards(state: State, kind: str) -> list[float]:
    """The end-of-game reward of every seat: +1/0/-1 by outcome (as Arena ranks), or the game's own returns."""
    returns = [float(r) for r in state.returns()]
    if kind == "returns":
        return returns
    outcomes = outcomes_from_returns(returns)[1]
    return [1.0 if o == WIN else -1.0 if o == LOSS else 0.0 for o in outcomes]


def match_seed(np_random: np.random.Generator) -> int:
    """A 63-bit game seed from the environment's seeded generator: all chance comes from it."""
    return int(np_random.integers(0, 2**63 - 1))


def box_bounds(shape: Sequence[int]) -> dict[str, Any]:
    """Box arguments for an observation tensor whose range the game does not declare."""
    return {"low": -math.inf, "high": math.inf, "shape": tuple(shape), "dtype": np.float32}


def render(state: State | None, mode: str | None) -> str | None:
    """The position as text: printed for "human", returned for "ansi"."""
    if state is None:
        return None
    text = state.render()
    if mode == "human":
        print(text)
        return None
    return text
