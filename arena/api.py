"""The public contract between Arena and its plugins: games, states and agents.

A game is metadata plus rules (`Game`), played through a small OpenSpiel-like `State`.
An agent type is a class (`Agent`) that is made once per seat and match and answers `act`.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from arena.errors import ArenaError
from arena.params import Param, format_value, validate_params

#: `current_player` of a finished game.
TERMINAL = -1

Evaluation = Callable[["State", int], float]
#: A shaped reward: `shaping(state, action, player)` for `player` playing `action` in `state` (before it is applied).
Shaping = Callable[["State", int, int], float]


def win_loss_returns(winner: int, num_players: int = 2) -> list[float]:
    """Returns of a game won by seat `winner`: 1 for it, -1 for every other seat; all 0 when `winner` is -1 (a draw)."""
    if winner < 0:
        return [0.0] * num_players
    returns = [-1.0] * num_players
    returns[winner] = 1.0
    return returns


@dataclass(frozen=True)
class GameInfo:
    """What a game is, independent of its parameters.

    `version` must change whenever the rules change: results never mix across versions.
    """

    id: str
    version: str
    name: str
    min_players: int = 2
    max_players: int = 2
    params: tuple[Param, ...] = ()
    perfect_information: bool = True
    stochastic: bool = False
    description: str = ""
    #: Per-seat parameters an agent may bring to the table: `seat_params=("deck",)` lets an agent
    #: spec say `seat.deck=...`, which sets the game parameter `deck0`, `deck1`, ... of whichever
    #: seat that agent sits in (so Gwent Lite decks can be compared like agents).
    seat_params: tuple[str, ...] = ()


class State(ABC):
    """A game position. Attribute `current_player` is the seat to act, or TERMINAL at the end.

    Chance (shuffles, draws) comes only from a seeded RNG the state owns, so the same seed
    gives the same match.
    """

    current_player: int

    @abstractmethod
    def legal_actions(self) -> list[int]:
        """The legal action ids for `current_player`, in increasing order."""

    @abstractmethod
    def apply(self, action: int) -> None:
        """Play `action` (assumed legal) for `current_player`."""

    def is_terminal(self) -> bool:
        """True when the game is over (by default: when `current_player` is TERMINAL)."""
        return self.current_player == TERMINAL

    @abstractmethod
    def returns(self) -> list[float]:
        """One number per player; meaningful at the end (higher is better)."""

    @abstractmethod
    def clone(self) -> State:
        """An independent copy: playing on it never changes this state."""

    @abstractmethod
    def action_to_string(self, action: int) -> str:
        """A readable name of `action` in this position."""

    def string_to_action(self, text: str) -> int:
        """The legal action whose name is `text` (or the id written as a number)."""
        for action in self.legal_actions():
            if self.action_to_string(action) == text:
                return action
        try:
            action = int(text)
        except ValueError:
            raise ArenaError(f"no legal action named {text!r}") from None
        if action not in self.legal_actions():
            raise ArenaError(f"action {action} is not legal here")
        return action

    @abstractmethod
    def render(self) -> str:
        """The position as text for people."""

    def render_svg(self) -> str | None:
        """The position as one self-contained inline SVG (viewBox, no external resources), or None: then `render()` text is shown."""
        return None

    def observation(self, player: int) -> Any:
        """A numpy tensor of the position from `player`'s point of view, for learning agents."""
        raise NotImplementedError(f"{type(self).__name__} offers no observation tensor")

    @classmethod
    def observations(cls, states: Sequence[State], players: Sequence[int], out: Any) -> None:
        """Write `states[i].observation(players[i])` into `out[i]` for every i (`out`: a float32 numpy array
        `[len(states), *observation_shape]`), for a network answering many decisions at once. By default
        one observation after another; a game may write the whole batch in a few array operations (the
        conformance suite checks that the rows equal `observation`)."""
        for row, (state, player) in enumerate(zip(states, players)):
            out[row] = state.observation(player)

    def to_json(self, player: int) -> dict[str, Any]:
        """What `player` may see of the position as JSON-ready data (remote agents get it); never anything hidden from that seat."""
        raise NotImplementedError(f"{type(self).__name__} offers no JSON view")

    def rounds_played(self) -> int | None:
        """Rounds begun so far, for games played in rounds (statistics report them); None for others."""
        return None

    def view(self, player: int) -> State:
        """What `player` may see: a clone for perfect information; hidden parts redacted or re-sampled otherwise."""
        return self.clone()


class Game(ABC):
    """A configured game: `info` plus validated `params`; makes initial states from seeds."""

    info: ClassVar[GameInfo]

    def __init__(self, **params: Any) -> None:
        self.params: dict[str, Any] = validate_params(self.info.params, params, f"game '{self.info.id}'")

    @property
    def num_players(self) -> int:
        """Seats in a match: the `players` parameter where the game has one, else its minimum."""
        return int(self.params.get("players", self.info.min_players))

    @property
    @abstractmethod
    def num_distinct_actions(self) -> int:
        """Action ids lie in range(num_distinct_actions); may depend on the parameters."""

    @abstractmethod
    def new_initial_state(self, seed: int = 0) -> State:
        """The start position of a match; all of its chance comes from `seed`."""

    def max_game_length(self) -> int | None:
        """An upper bound on the number of actions in a match, where one is known."""
        return None

    def state_from_json(self, data: dict[str, Any], player: int) -> State:
        """A state that `player` cannot tell from the one whose `State.to_json(player)` gave `data`, with
        `player` to move. Optional: `arena connect` rebuilds the positions it is sent this way, so that an
        Arena agent can play through the remote protocol. Games with hidden information (`perfect_information`
        False) take a keyword `rng: random.Random | None = None` too: the state is then a determinisation, what
        the seat may not see sampled from `rng` (from the data itself when None), and a view of `player`, as
        `State.view` makes (see `arena.sampling.SampledViews._determinised`)."""
        raise NotImplementedError(f"game '{self.info.id}' cannot rebuild a position from its JSON view")

    # Evaluations: optional knowledge that greedy and search agents use.

    def heuristic(self, state: State, player: int) -> float:
        """How good `state` is for `player` (higher is better); games without one raise NotImplementedError."""
        raise NotImplementedError

    def evaluations(self) -> dict[str, Evaluation]:
        """Named evaluation functions; "heuristic" is the game's main one when it has one."""
        if type(self).heuristic is Game.heuristic:
            return {}
        return {"heuristic": self.heuristic}

    def reward_shapings(self) -> dict[str, Shaping]:
        """Named reward shapings for learners (e.g. Reversi's positional rewards): added to the mover's
        reward at every move by `arena train --shaping NAME` and the `arena.envs` environments. None by default."""
        return {}

    def observation_planes(self) -> tuple[int, int, int] | None:
        """[C, H, W] of the board planes a flat observation starts with (the rest a vector: Onitama's cards), so that
        a convolutional network reads them as planes. None (the default): no such head."""
        return None

    def action_planes(self) -> tuple[tuple[int, int], ...] | None:
        """How action ids lie on the observation's board, for size-independent (fully convolutional) networks.

        One (row_trim, col_trim) per output plane: the actions are plane 0's top-left
        (H - row_trim) x (W - col_trim) cells in row-major order, then plane 1's, and so on, where H x W
        are the observation's last two dimensions. None (the default): the actions are not cells.
        Dots and Boxes: ((0, 1), (1, 0)) (horizontal lines, then vertical ones); tic-tac-toe: ((0, 0),).
        """
        return None

    #: Names of the values `features` returns, for linear evaluators.
    feature_names: ClassVar[tuple[str, ...]] = ()

    def features(self, state: State, player: int) -> Sequence[float]:
        """Named numeric features of `state` from `player`'s point of view."""
        raise NotImplementedError(f"game '{self.info.id}' offers no features")

    def label(self) -> str:
        """The game id with its non-default parameters, as a spec."""
        changed = [
            f"{p.name}={format_value(self.params[p.name])}" for p in self.info.params if self.params[p.name] != p.default
        ]
        return self.info.id + (":" + ",".join(changed) if changed else "")


@dataclass(frozen=True)
class AgentInfo:
    """What an agent type is; every agent also takes `seed` (mixed into its per-match RNG)."""

    id: str
    version: str = "1"
    description: str = ""
    params: tuple[Param, ...] = ()


class Agent(ABC):
    """A player. One instance is made per seat and match: `Agent(game, player, seed, **params)`.

    `self.rng` is seeded from the match seed, the seat and the agent's `seed` parameter, so the
    same tournament seed gives the same play.
    """

    info: ClassVar[AgentInfo]

    #: The match's limit per move in seconds, or None; the runner sets it before the first move.
    #: Agents that search by time must answer within it.
    time_per_move: float | None = None
    #: True for agents that answer over a network (arena.remote): their time per move gets the match's
    #: `network_allowance` on top, and the `network_time` they measure is stored apart from think time.
    remote: ClassVar[bool] = False
    #: True for agents a person plays as the match goes (at the terminal, on the server's play page): a tournament
    #: queued for the server to play cannot seat them (nobody would be there to move).
    person: ClassVar[bool] = False
    #: The parameter holding the URL this agent calls (`url` for `http`), or None: a server started with
    #: `--bot-hosts` lets requests give it only URLs of listed hosts (arena.reach).
    url_param: ClassVar[str | None] = None
    network_allowance: float = 0.0
    network_time: float = 0.0
    #: The match's identifier (the runner sets it before the first move); remote agents send it along.
    match_id: str = ""

    def __init__(self, game: Game, player: int, seed: int, **params: Any) -> None:
        self.game = game
        self.player = player
        self.seed = seed
        self.rng = random.Random(seed)
        # Declared parameters, converted and with their defaults, however the agent was made.
        self.params: dict[str, Any] = validate_params(self.info.params, params, f"agent '{self.info.id}'")

    @classmethod
    def check_game(cls, game: Game, params: dict[str, Any]) -> None:
        """Raise ArenaError if this agent cannot play `game`; called before a tournament starts."""

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        """Raise ArenaError if the parameters alone are unusable (e.g. a checkpoint that is no checkpoint);
        called when a named agent is registered without a game."""

    @abstractmethod
    def act(self, state: State) -> int:
        """Choose a legal action in `state`: the live state (perfect information) or this seat's view.

        Never change it: clone before looking ahead. The runner makes an agent that did forfeit.
        """

    @classmethod
    def canonical_params(cls, game: Game, params: dict[str, Any]) -> dict[str, Any]:
        """`params` with the defaults that depend on `game` made explicit: agents whose canonical parameters agree
        are one agent (greedy and greedy:eval=heuristic where the heuristic is the game's default)."""
        return params

    @classmethod
    def files(cls, params: Mapping[str, str]) -> tuple[str, ...]:
        """The files this agent reads, from its parameters as given (text): a server started with `--models-dir`
        lets requests give it only files inside that folder (arena.reach)."""
        return ()

    @classmethod
    def fingerprint(cls, params: dict[str, Any]) -> str:
        """What decides this agent's play beyond its version and parameters (e.g. a checkpoint file's digest), or ""."""
        return ""

    def batch_key(self) -> Hashable | None:
        """None, or a key: agents with equal keys may be asked together through `act_batch`.

        The runner, when it plays several matches at once (`--concurrent-matches`), collects the
        pending decisions of such agents (each of its own match and seat) into one call.
        """
        return None

    @classmethod
    def act_batch(cls, agents: Sequence[Agent], views: Sequence[State]) -> Sequence[int | Exception]:
        """The answers of `agents[i].act(views[i])` for every i, in one go (a network's single forward pass).

        The agents share one `batch_key`; each keeps its own seat, RNG and match. The answers
        must be those that `act` would give one by one: where `act` would raise, the exception in that row.
        """
        return [agent.act(view) for agent, view in zip(agents, views)]

    def end(self, result: Any) -> None:
        """Told the finished match's `arena.match.MatchResult` (scores, reason); remote agents pass it on."""

    def reset(self) -> None:
        """Forget anything kept from a previous match."""

    def close(self) -> None:
        """Release resources at the end of a match."""
