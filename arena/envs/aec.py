"""Any Arena game as a PettingZoo AEC environment (`arena.envs.pettingzoo_env`).

Agents are `player_0 .. player_{n-1}` (seat order). Each observes `{"observation", "action_mask"}`:
its own observation tensor (the game encodes only what that seat may see, so hidden hands and
simultaneous choices stay hidden) and an int8 mask over the game's distinct actions, all zeros
when it is not that agent's turn (as PettingZoo's classic games). Chance comes from the
environment's seeded generator (`reset(seed=...)`): same seed, same game. A game still running
after `max_turns` actions is truncated for every agent with reward 0, as an Arena match is a draw
at its turn limit. An illegal action ends the game: the mover gets -1 and the others 0
(`infos[agent]["illegal_action"]`), like PettingZoo's `TerminateIllegalWrapper` and Arena's forfeits.

Rewards come at the end: +1/0/-1 by outcome (`reward="outcome"`, Arena's win/draw/loss) or the
game's own returns (`reward="returns"`); `shaping=NAME` adds one of the game's reward shapings
(`Game.reward_shapings()`) to the mover's reward at every move.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from arena.api import Game, State
from arena.envs import _common
from arena.match import DEFAULT_MAX_TURNS
from arena.plugins import Registry


class ArenaAECEnv(AECEnv):
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi"], "render_fps": 1, "name": "arena_v0", "is_parallelizable": False,
    }

    def __init__(
        self, game: str | Game, players: int | None = None, max_turns: int = DEFAULT_MAX_TURNS,
        reward: str = "outcome", shaping: str | None = None, render_mode: str | None = None,
        registry: Registry | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.game = _common.make_game(game, players, registry)
        _common.configure(self, max_turns, reward, shaping, render_mode)
        self.metadata = {**self.metadata, "name": f"arena_{self.game.info.id}_v{self.game.info.version}"}  # type: ignore[misc]  # per game, on the instance
        self.possible_agents = [f"player_{seat}" for seat in range(self.game.num_players)]
        shape = _common.observation_shape(self.game)
        n = self.game.num_distinct_actions
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(**_common.box_bounds(shape)),
                "action_mask": spaces.Box(low=0, high=1, shape=(n,), dtype=np.int8),
            })
            for agent in self.possible_agents
        }  # fmt: skip
        self.action_spaces = {agent: spaces.Discrete(n) for agent in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.state: State | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self.state is None:
            self.np_random, _ = seeding.np_random(seed)
        self.state = self.game.new_initial_state(_common.match_seed(self.np_random))
        self.turns = 0
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.state.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.state is not None, "reset() first"
        seat = self.seat(agent)
        mask = np.zeros(self.game.num_distinct_actions, dtype=np.int8)
        if not self.state.is_terminal() and self.state.current_player == seat and not self._ended():
            mask = _common.action_mask(self.game, self.state.legal_actions())
        return {"observation": _common.observe(self.state, seat), "action_mask": mask}

    def _ended(self) -> bool:
        return any(self.terminations.values()) or any(self.truncations.values())

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.state is not None, "reset() first"
        seat = self.seat(agent)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        legal = self.state.legal_actions()
        if action is None or int(action) not in legal:
            self.rewards[agent] = _common.ILLEGAL_REWARD
            self.infos[agent] = {"illegal_action": True}
            self._end(terminated=True)
        else:
            if self.shaping is not None:
                self.rewards[agent] += float(self.shaping(self.state, int(action), seat))
            self.state.apply(int(action))
            self.turns += 1
            if self.state.is_terminal():
                for a, value in zip(self.possible_agents, _common.final_rewards(self.state, self.reward_kind)):
                    self.rewards[a] += value
                self._end(terminated=True)
            elif self.turns >= self.max_turns:
                self._end(terminated=False)
            else:
                self.agent_selection = self.possible_agents[self.state.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end(self, terminated: bool) -> None:
        """Every agent is done; they leave one by one through `step(None)`, starting after the mover."""
        flags = self.terminations if terminated else self.truncations
        for agent in self.agents:
            flags[agent] = True
        self.agent_selection = self.agents[(self.agents.index(self.agent_selection) + 1) % len(self.agents)]

    def render(self) -> str | None:
        return _common.render(self.state, self.render_mode)

    def close(self) -> None:
        self.state = None
