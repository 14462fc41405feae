"""Arena: a plugin-based game-AI arena.

Plugins import from here: `arena.hookimpl`, `arena.Game`, `arena.GameInfo`, `arena.State`,
`arena.Agent`, `arena.AgentInfo`, `arena.Param`.
"""

import pluggy

hookimpl = pluggy.HookimplMarker("arena")

from arena.api import TERMINAL, Agent, AgentInfo, Game, GameInfo, Shaping, State  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.params import Param  # noqa: E402

__all__ = ["hookimpl", "Agent", "AgentInfo", "ArenaError", "Game", "GameInfo", "Param", "Shaping", "State", "TERMINAL"]
__version__ = "0.1.0"
