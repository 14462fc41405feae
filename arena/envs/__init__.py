"""Every Arena game as a standard RL environment, so users train with the libraries they know.

- `pettingzoo_env(game, players=None, ...)`: a PettingZoo AEC environment, all seats as agents.
- `gymnasium_env(game, opponent="random", seat="alternate", ...)`: a Gymnasium environment where
  the learner plays one seat against any Arena agent spec.

Both need the `envs` extra (`pip install -e ".[envs]"`: pettingzoo, gymnasium); they are imported
only when called, so `import arena.envs` works without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.envs.aec import ArenaAECEnv
    from arena.envs.gym_env import ArenaGymEnv

__all__ = ["gymnasium_env", "pettingzoo_env"]


def _need(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        raise ArenaError(f"arena.envs needs {module}, which is not installed: pip install -e \".[envs]\"") from None


def pettingzoo_env(game: Any, **options: Any) -> ArenaAECEnv:
    """A PettingZoo AEC environment over `game` (a spec such as "connect_four" or a Game); see arena.envs.aec."""
    _need("pettingzoo")
    from arena.envs.aec import ArenaAECEnv

    return ArenaAECEnv(game, **options)


def gymnasium_env(game: Any, opponent: str = "random", seat: str | int = "alternate", **options: Any) -> ArenaGymEnv:
    """A Gymnasium environment: the learner against `opponent` (an Arena agent spec); see arena.envs.gym_env."""
    _need("gymnasium")
    from arena.envs.gym_env import ArenaGymEnv

    return ArenaGymEnv(game, opponent=opponent, seat=seat, **options)
