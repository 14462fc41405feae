"""Any Arena game as a single-agent Gymnasium environment against any Arena agent (`arena.envs.gymnasium_env`).

The learner takes one seat; every other seat is played by the opponent, an Arena agent spec
(`random`, `greedy`, `minimax:depth=2`, `neural:checkpoint=FILE`), made for each episode exactly as
a tournament makes it and given the live state (perfect information) or its seat's view. `seat`
is `"alternate"` (episode k sits in seat k mod players; `reset(seed=...)` restarts the count) or a
fixed seat number. The observation is the learner's observation tensor (float32); the action
mask (int8 over the game's distinct actions) is in `info["action_mask"]` and `action_masks()`
returns it as booleans for sb3-contrib's MaskablePPO. Rewards, the turn limit, shaping and
illegal actions work as in the AEC environment (`arena.envs.aec`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from arena.agents import AgentEntry, resolve, seated_game
from arena.api import Agent, Game, State
from arena.envs import _common
from arena.errors import ArenaError
from arena.match import DEFAULT_MAX_TURNS
from arena.params import parse_specs
from arena.plugins import Registry, get_registry
from arena.seeding import derive_seed

ALTERNATE = "alternate"
#: Episodes in a row `reset` may start before one leaves the learner a move.
RESET_ATTEMPTS = 100


def opponent_entry(registry: Registry, text: str, game: Game) -> AgentEntry:
    """One inline agent spec, checked against the game as a tournament checks it."""
    specs = parse_specs(text)
    if len(specs) != 1:
        raise ArenaError(f"opponent takes one agent spec, got {len(specs)} in {text!r}")
    return resolve(registry, specs[0], game, None)


class ArenaGymEnv(gymnasium.Env):
    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium's own shape)
    max_turns: int  # these three are set by _common.configure
    reward_kind: str
    shaping: _common.Shaping | None

    def __init__(
        self, game: str | Game, opponent: str = "random", seat: str | int = ALTERNATE, players: int | None = None,
        max_turns: int = DEFAULT_MAX_TURNS, reward: str = "outcome", shaping: str | None = None,
        render_mode: str | None = None, registry: Registry | None = None,
    ) -> None:  # fmt: skip
        self.registry = registry if registry is not None else get_registry()
        self.game = _common.make_game(game, players, self.registry)
        self.players = self.game.num_players
        if seat != ALTERNATE and not (isinstance(seat, int) and 0 <= seat < self.players):
            raise ArenaError(f"seat must be '{ALTERNATE}' or a seat number from 0 to {self.players - 1}, got {seat!r}")
        self.seat_choice = seat
        self.opponent = opponent_entry(self.registry, opponent, self.game)
        self._make: Callable[[Game, int, int], Agent] = self.opponent.maker(self.registry)
        _common.configure(self, max_turns, reward, shaping, render_mode)
        self.observation_space = spaces.Box(**_common.box_bounds(_common.observation_shape(self.game)))
        self.action_space = spaces.Discrete(self.game.num_distinct_actions)
        self.episodes = 0
        self.state: State | None = None
        self._games: dict[int, Game] = {}

    def _game_for(self, seat: int) -> Game:
        """The game with the seat parameters (e.g. Gwent decks) the opponent brings to its seats."""
        if not self.opponent.seat_params:
            return self.game
        if seat not in self._games:
            self._games[seat] = seated_game(self.game, [None if s == seat else self.opponent for s in range(self.players)])
        return self._games[seat]

    # ---------------------------------------------------------------- the Gymnasium API

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """A new episode where the learner is to move. One the opponents end (or take to the turn limit) before the
        learner's first move (only possible in odd games) is started again, as the next episode, at most
        RESET_ATTEMPTS times in a row: then ArenaError (a turn limit too small for the seat, or such a game)."""
        super().reset(seed=seed)
        if seed is not None:
            self.episodes = 0
        for _ in range(RESET_ATTEMPTS):
            terminated, truncated = self._start()
            if not (terminated or truncated):
                return self._observation(), self._info()
        self.done = True  # step() refuses until a reset succeeds
        ended = f"the turn limit (max_turns={self.max_turns})" if truncated else "the end of the game"
        raise ArenaError(f"reset: {RESET_ATTEMPTS} episodes in a row reached {ended} before the learner "
                         f"(seat {self.seat}) had a move; raise max_turns or take another seat")  # fmt: skip

    def _start(self) -> tuple[bool, bool]:
        """A new episode, played until the learner is to move: (terminated, truncated) before its first move."""
        self.seat = self.episodes % self.players if self.seat_choice == ALTERNATE else int(self.seat_choice)
        self.episodes += 1
        game_seed = _common.match_seed(self.np_random)
        game = self._game_for(self.seat)
        self.state = game.new_initial_state(game_seed)
        self.opponents = {s: self._make(game, s, derive_seed(game_seed, s)) for s in range(self.players) if s != self.seat}
        self.turns = 0
        self.done = False
        _, terminated, truncated = self._play_opponents()
        return terminated, truncated

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.state is None or self.done:
            raise RuntimeError("the episode is over: call reset()")
        legal = self.state.legal_actions()
        if int(action) not in legal:
            self.done = True
            return self._observation(), _common.ILLEGAL_REWARD, True, False, {**self._info(), "illegal_action": True}
        reward = 0.0
        if self.shaping is not None:
            reward += float(self.shaping(self.state, int(action), self.seat))
        self.state.apply(int(action))
        self.turns += 1
        final, terminated, truncated = self._play_opponents()
        self.done = terminated or truncated
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward + final, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions as booleans over the game's distinct actions (what MaskablePPO asks for)."""
        return self._mask().astype(bool)

    def render(self) -> str | None:
        return _common.render(self.state, self.render_mode)

    def close(self) -> None:
        self.state = None

    # ---------------------------------------------------------------- inside

    def _play_opponents(self) -> tuple[float, bool, bool]:
        """Opponents move until the learner is to move; (final reward, terminated, truncated)."""
        state = self.state
        assert state is not None
        while not state.is_terminal() and self.turns < self.max_turns and state.current_player != self.seat:
            player = state.current_player
            legal = state.legal_actions()
            action = self.opponents[player].act(state if self.game.info.perfect_information else state.view(player))
            if action not in legal:
                raise ArenaError(f"opponent '{self.opponent.label}' answered {action!r}, not a legal action")
            state.apply(int(action))
            self.turns += 1
        if state.is_terminal():
            return _common.final_rewards(state, self.reward_kind)[self.seat], True, False
        return 0.0, False, self.turns >= self.max_turns

    def _mask(self) -> np.ndarray:
        if self.state is None or self.done or self.state.is_terminal():
            return np.zeros(self.game.num_distinct_actions, dtype=np.int8)
        return _common.action_mask(self.game, self.state.legal_actions())

    def _observation(self) -> np.ndarray:
        assert self.state is not None
        return _common.observe(self.state, self.seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask(), "seat": self.seat, "turns": self.turns}
