"""Training `neural` checkpoints with reinforcement learning: REINFORCE or DQN, against any Arena agent.

The learner takes one seat (seat = episode number modulo the number of players, so seats
alternate) and every other seat is the opponent: any agent spec, made through `arena.agents` as a
tournament makes it, or `self` (a frozen copy of the learner, refreshed every `SELF_REFRESH`
episodes). The learner acts from its own `state.observation(seat)` with illegal actions masked out;
opponents get the live state (perfect information) or their seat's view, as in `arena.match`.
Its reward is +1 for a win, 0 for a draw (or the turn limit) and -1 for a loss, at the end.

- `reinforce`: Monte-Carlo policy gradient on the masked softmax of the network's logits, with a
  running-mean baseline and an entropy bonus, one update per `batch` episodes (as the Onitama
  report's policy-gradient agent).
- `dqn`: Q-learning with a replay buffer, a target network (synced every `TARGET_SYNC` gradient
  steps), double-DQN targets, epsilon-greedy exploration decaying linearly over the first half of
  training, and masked maxima over the next position's legal actions.

PyTorch is imported only when training starts (`import_torch`); the checkpoint is plain numpy
(agents/neural.py). Same settings and seed give the same checkpoint bytes: torch is seeded, runs
on one thread, and every episode's game and opponent seeds derive from the seed.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import click
import numpy as np

import arena
from agents.neural import (
    check_writable,
    choose_action,
    forward,
    observation_shape,
    save_checkpoint,
)
from arena.agents import AgentEntry, resolve, seated_game
from arena.match import DEFAULT_MAX_TURNS, DRAW, LOSS, WIN, outcomes_from_returns
from arena.params import parse_specs
from arena.plugins import Registry, get_registry
from arena.seeding import derive_seed
from arena.tournament import make_game

if TYPE_CHECKING:
    import torch

ALGORITHMS = ("reinforce", "dqn")
SELF = "self"
TORCH_REQUIREMENT = "torch==2.13.0"

#: Defaults that differ by algorithm: learning rate, and `batch` (episodes per update for
#: reinforce, transitions per minibatch for dqn).
DEFAULT_LR = {"reinforce": 0.003, "dqn": 0.001}
DEFAULT_BATCH = {"reinforce": 16, "dqn": 64}

ENTROPY_BONUS = 0.01
BASELINE_MOMENTUM = 0.05  # the running-mean baseline moves this far towards each batch's mean return
REPLAY_CAPACITY = 20_000
TARGET_SYNC = 200  # dqn gradient steps between target-network copies
EPSILON_START, EPSILON_END, EPSILON_DECAY_SHARE = 1.0, 0.05, 0.5
SELF_REFRESH = 250  # episodes between refreshes of the frozen copy the learner plays against
MASKED = -1e9  # the logit of an illegal action: exp() is exactly 0, and 0 * MASKED stays finite

Layers = list[tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class TrainConfig:
    game: str
    out: str
    algorithm: str = "reinforce"
    opponent: str = "random"
    episodes: int = 2000
    hidden: tuple[int, ...] = (64, 64)
    lr: float | None = None  # None: DEFAULT_LR of the algorithm
    batch: int | None = None  # None: DEFAULT_BATCH of the algorithm
    gamma: float = 0.99
    seed: int = 0
    max_turns: int = DEFAULT_MAX_TURNS
    window: int = 500  # win rates are reported over the last `window` episodes


@dataclass(frozen=True)
class TrainSummary:
    episodes: int
    window: int  # episodes the rates are over
    win_rate: float
    draw_rate: float
    loss_rate: float
    seconds: float
    out: str


@dataclass
class Trajectory:
    """The learner's side of one episode: what it saw, which actions were legal, what it did, how it ended."""

    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    reward: float = 0.0
    outcome: str = DRAW


class Player(Protocol):
    def act(self, state: arena.State) -> int: ...


Chooser = Callable[[np.ndarray, list[int]], int]


# ---------------------------------------------------------------- checking the request (no torch needed)


@dataclass(frozen=True)
class Plan:
    """A validated request: the game, how to make opponents, where to write."""

    config: TrainConfig
    game: arena.Game
    opponent: AgentEntry | None  # None: play against the frozen copy of the learner
    inputs: int
    lr: float
    batch: int


def parse_hidden(text: str) -> tuple[int, ...]:
    """`64,64` -> (64, 64): one positive width per hidden layer."""
    try:
        widths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise arena.ArenaError(f"--hidden takes layer widths like 64,64, got {text!r}") from None
    if not all(1 <= w <= 4096 for w in widths):
        raise arena.ArenaError(f"--hidden widths must be between 1 and 4096, got {text!r}")
    return widths


def check_numbers(config: TrainConfig) -> None:
    if config.algorithm not in ALGORITHMS:
        raise arena.ArenaError(f"unknown algorithm '{config.algorithm}' (choose {', '.join(ALGORITHMS)})")
    if config.episodes < 1:
        raise arena.ArenaError(f"--episodes must be at least 1, got {config.episodes}")
    if config.lr is not None and not (math.isfinite(config.lr) and config.lr > 0):
        raise arena.ArenaError(f"--lr must be a positive number, got {config.lr}")
    if config.batch is not None and config.batch < 1:
        raise arena.ArenaError(f"--batch must be at least 1, got {config.batch}")
    if not 0 < config.gamma <= 1:
        raise arena.ArenaError(f"--gamma must be in (0, 1], got {config.gamma}")
    if config.max_turns < 1 or config.window < 1:
        raise arena.ArenaError("--max-turns and --window must be at least 1")


def make_opponent_entry(registry: Registry, text: str, game: arena.Game) -> AgentEntry | None:
    """The opponent spec checked as a tournament checks its agents; None for `self`."""
    if text == SELF:
        return None
    specs = parse_specs(text)
    if len(specs) != 1:
        raise arena.ArenaError(f"--opponent takes one agent spec, got {len(specs)} in {text!r}")
    if specs[0].id not in registry.agents:
        known = ", ".join(sorted(registry.agents))
        raise arena.ArenaError(f"unknown opponent '{specs[0].id}': give an agent type with its parameters or 'self' (types: {known})")
    return resolve(registry, specs[0], game, None)


def plan(config: TrainConfig, registry: Registry) -> Plan:
    """Check everything the user gave before any training (and before importing torch)."""
    check_numbers(config)
    game = make_game(registry, config.game)
    inputs = math.prod(observation_shape(game))
    opponent = make_opponent_entry(registry, config.opponent, game)
    check_writable(config.out)
    lr = config.lr if config.lr is not None else DEFAULT_LR[config.algorithm]
    batch = config.batch if config.batch is not None else DEFAULT_BATCH[config.algorithm]
    return Plan(config, game, opponent, inputs, lr, batch)


def import_torch() -> Any:
    """PyTorch, or one clear line saying how to install it."""
    try:
        import torch
    except ImportError:
        raise arena.ArenaError(f"arena train needs PyTorch, which is not installed: pip install {TORCH_REQUIREMENT}") from None
    return torch


# ---------------------------------------------------------------- playing episodes


class FrozenPolicy:
    """The learner's network at one moment, playing a seat by sampling its masked softmax."""

    def __init__(self, layers: Layers, player: int, seed: int) -> None:
        self.weights = tuple(w for w, _ in layers)
        self.biases = tuple(b for _, b in layers)
        self.player = player
        self.rng = random.Random(seed)

    def act(self, state: arena.State) -> int:
        observation = np.asarray(state.observation(self.player), dtype=np.float32).reshape(-1)
        return choose_action(forward(self.weights, self.biases, observation), state.legal_actions(), self.rng)


class Episodes:
    """Plays the learner's episodes: seat rotation, seeds, opponents, the turn limit."""

    def __init__(self, plan: Plan, registry: Registry) -> None:
        self.plan = plan
        self.game = plan.game
        self.players = plan.game.num_players
        self.make = plan.opponent.maker(registry) if plan.opponent is not None else None
        self.frozen: Layers = []
        self._games: dict[int, arena.Game] = {}

    def game_for(self, seat: int) -> arena.Game:
        """The game, with the seat parameters (e.g. Gwent decks) the opponent brings to its seats."""
        entry = self.plan.opponent
        if entry is None or not entry.seat_params:
            return self.game
        if seat not in self._games:
            self._games[seat] = seated_game(self.game, [None if other == seat else entry for other in range(self.players)])
        return self._games[seat]

    def opponents(self, game: arena.Game, seat: int, seed: int) -> list[Player | None]:
        seats: list[Player | None] = []
        for other in range(self.players):
            if other == seat:
                seats.append(None)
            elif self.make is None:
                seats.append(FrozenPolicy(self.frozen, other, derive_seed(seed, other)))
            else:
                seats.append(self.make(game, other, seed))
        return seats

    def play(self, number: int, choose: Chooser) -> Trajectory:
        """Episode `number`: the learner sits in seat number % players and picks with `choose(observation, legal)`."""
        seat = number % self.players
        seed = derive_seed(self.plan.config.seed, "episode", number)
        game = self.game_for(seat)
        opponents = self.opponents(game, seat, seed)
        state = game.new_initial_state(seed)
        live = game.info.perfect_information
        trajectory = Trajectory()
        for _ in range(self.plan.config.max_turns):
            if state.is_terminal():
                break
            player = state.current_player
            legal = state.legal_actions()
            opponent = opponents[player]
            if opponent is None:
                action = self._learner_move(state, seat, legal, choose, trajectory)
            else:
                action = _opponent_move(opponent, state if live else state.view(player), legal, self.plan.config.opponent)
            state.apply(action)
        if state.is_terminal():  # else the turn limit: a draw, reward 0
            trajectory.outcome = outcomes_from_returns(state.returns())[1][seat]
            trajectory.reward = {WIN: 1.0, LOSS: -1.0}.get(trajectory.outcome, 0.0)
        return trajectory

    def _learner_move(self, state: arena.State, seat: int, legal: list[int], choose: Chooser, trajectory: Trajectory) -> int:
        observation = np.asarray(state.observation(seat), dtype=np.float32).reshape(-1)
        mask = np.zeros(self.game.num_distinct_actions, dtype=bool)
        mask[legal] = True
        action = choose(observation, legal)
        trajectory.observations.append(observation)
        trajectory.masks.append(mask)
        trajectory.actions.append(action)
        return action


def _opponent_move(opponent: Player, state: arena.State, legal: list[int], spec: str) -> int:
    try:
        action = opponent.act(state)
    except Exception as exc:  # the opponent's fault, reported as bad input rather than a traceback
        raise arena.ArenaError(f"opponent '{spec}' failed: {type(exc).__name__}: {exc}") from None
    if action not in legal:
        raise arena.ArenaError(f"opponent '{spec}' answered {action!r}, not a legal action")
    return int(action)


# ---------------------------------------------------------------- networks


def build_network(torch: Any, inputs: int, hidden: Sequence[int], outputs: int) -> torch.nn.Sequential:
    sizes = [inputs, *hidden, outputs]
    modules: list[Any] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        modules += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
    return torch.nn.Sequential(*modules[:-1])  # no ReLU after the output layer


def numpy_layers(network: torch.nn.Sequential) -> Layers:
    """The network's Linear layers as (weights (in, out), bias) float32 arrays, the checkpoint's layout."""
    parameters = list(network.parameters())  # weight, bias, weight, bias, ...: Linear layers in order
    return [(w.detach().numpy().T.copy(), b.detach().numpy().copy()) for w, b in zip(parameters[0::2], parameters[1::2])]


def masked_outputs(network: Any, observations: Any, masks: Any) -> Any:
    return network(observations).masked_fill(~masks, MASKED)


# ---------------------------------------------------------------- REINFORCE


def discounted_returns(trajectory: Trajectory, gamma: float) -> list[float]:
    """The learner's return from each of its moves: the final reward, discounted by the moves left."""
    steps = len(trajectory.actions)
    return [trajectory.reward * gamma ** (steps - 1 - t) for t in range(steps)]


class Reinforce:
    """Policy gradient with a running-mean baseline; the network's outputs are logits."""

    output = "logits"

    def __init__(self, torch: Any, plan: Plan) -> None:
        self.torch = torch
        self.plan = plan
        self.network = build_network(torch, plan.inputs, plan.config.hidden, plan.game.num_distinct_actions)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=plan.lr)
        self.rng = random.Random(derive_seed(plan.config.seed, "actions"))
        self.layers = numpy_layers(self.network)
        self.baseline = 0.0
        self.pending: list[Trajectory] = []

    def choose(self, observation: np.ndarray, legal: list[int]) -> int:
        outputs = forward([w for w, _ in self.layers], [b for _, b in self.layers], observation)
        return choose_action(outputs, legal, self.rng)

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        if trajectory.actions:
            self.pending.append(trajectory)
        last = episode == self.plan.config.episodes - 1
        if self.pending and (len(self.pending) >= self.plan.batch or last):
            self.update(self.pending)
            self.pending = []

    def update(self, batch: list[Trajectory]) -> None:
        torch = self.torch
        returns = np.array([g for t in batch for g in discounted_returns(t, self.plan.config.gamma)], dtype=np.float32)
        advantages = torch.from_numpy(returns - np.float32(self.baseline))
        observations = torch.from_numpy(np.stack([o for t in batch for o in t.observations]))
        masks = torch.from_numpy(np.stack([m for t in batch for m in t.masks]))
        actions = torch.tensor([a for t in batch for a in t.actions], dtype=torch.int64)
        log_probs = torch.log_softmax(masked_outputs(self.network, observations, masks), dim=1)
        chosen = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
        entropy = -(log_probs.exp() * log_probs).sum(dim=1)
        loss = -(chosen * advantages).mean() - ENTROPY_BONUS * entropy.mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        # The baseline moves after the update, so no episode is compared with a mean that includes itself.
        self.baseline += BASELINE_MOMENTUM * (float(returns.mean()) - self.baseline)
        self.layers = numpy_layers(self.network)

    def settings(self) -> dict[str, Any]:
        return {"entropy_bonus": ENTROPY_BONUS, "baseline": "running mean", "baseline_momentum": BASELINE_MOMENTUM}


# ---------------------------------------------------------------- DQN


class ReplayBuffer:
    """A ring of transitions (observation, mask of the next legal actions, action, reward, next observation, done)."""

    def __init__(self, capacity: int, inputs: int, actions: int) -> None:
        self.observations = np.zeros((capacity, inputs), dtype=np.float32)
        self.next_observations = np.zeros((capacity, inputs), dtype=np.float32)
        self.next_masks = np.zeros((capacity, actions), dtype=bool)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.done = np.zeros(capacity, dtype=np.float32)
        self.capacity, self.size, self.cursor = capacity, 0, 0

    def add_episode(self, trajectory: Trajectory) -> int:
        """Store the episode's transitions: from each learner move to its next move, the last to the end."""
        steps = len(trajectory.actions)
        for t in range(steps):
            i = self.cursor
            self.observations[i] = trajectory.observations[t]
            self.actions[i] = trajectory.actions[t]
            final = t == steps - 1
            self.rewards[i] = trajectory.reward if final else 0.0
            self.done[i] = 1.0 if final else 0.0
            if final:
                self.next_observations[i] = 0.0
                self.next_masks[i] = True  # any finite target: it is multiplied by (1 - done) = 0
            else:
                self.next_observations[i] = trajectory.observations[t + 1]
                self.next_masks[i] = trajectory.masks[t + 1]
            self.cursor = (i + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)
        return steps


class DQN:
    """Double DQN over masked Q-values; the network's outputs are Q-values."""

    output = "q_values"

    def __init__(self, torch: Any, plan: Plan) -> None:
        self.torch = torch
        self.plan = plan
        actions = plan.game.num_distinct_actions
        self.network = build_network(torch, plan.inputs, plan.config.hidden, actions)
        self.target = build_network(torch, plan.inputs, plan.config.hidden, actions)
        self.target.load_state_dict(self.network.state_dict())
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=plan.lr)
        self.buffer = ReplayBuffer(REPLAY_CAPACITY, plan.inputs, actions)
        self.rng = random.Random(derive_seed(plan.config.seed, "actions"))
        self.sampler = np.random.default_rng(derive_seed(plan.config.seed, "replay"))
        self.layers = numpy_layers(self.network)
        self.steps = 0
        self.episode = 0

    def epsilon(self) -> float:
        decay_episodes = max(1.0, EPSILON_DECAY_SHARE * self.plan.config.episodes)
        share = min(1.0, self.episode / decay_episodes)
        return EPSILON_START + share * (EPSILON_END - EPSILON_START)

    def choose(self, observation: np.ndarray, legal: list[int]) -> int:
        if self.rng.random() < self.epsilon():
            return self.rng.choice(legal)
        outputs = forward([w for w, _ in self.layers], [b for _, b in self.layers], observation)
        return choose_action(outputs, legal, None)

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        self.episode = episode + 1
        added = self.buffer.add_episode(trajectory)
        if self.buffer.size < self.plan.batch:
            return
        for _ in range(added):  # one gradient step per move played keeps the replay ratio fixed
            self.gradient_step()
        self.layers = numpy_layers(self.network)

    def gradient_step(self) -> None:
        torch, buffer = self.torch, self.buffer
        index = self.sampler.integers(0, buffer.size, self.plan.batch)
        observations = torch.from_numpy(buffer.observations[index])
        next_observations = torch.from_numpy(buffer.next_observations[index])
        next_masks = torch.from_numpy(buffer.next_masks[index])
        actions = torch.from_numpy(buffer.actions[index])
        rewards = torch.from_numpy(buffer.rewards[index])
        done = torch.from_numpy(buffer.done[index])
        with torch.no_grad():
            # Double DQN: the online network picks the next action, the target network values it.
            best_next = masked_outputs(self.network, next_observations, next_masks).argmax(dim=1, keepdim=True)
            next_values = self.target(next_observations).gather(1, best_next).squeeze(1)
            targets = rewards + self.plan.config.gamma * (1.0 - done) * next_values
        values = self.network(observations).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = torch.nn.functional.smooth_l1_loss(values, targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        if self.steps % TARGET_SYNC == 0:
            self.target.load_state_dict(self.network.state_dict())

    def settings(self) -> dict[str, Any]:
        return {"replay_capacity": REPLAY_CAPACITY, "target_sync": TARGET_SYNC, "double": True,
                "epsilon": [EPSILON_START, EPSILON_END, EPSILON_DECAY_SHARE]}  # fmt: skip


# ---------------------------------------------------------------- the loop


class Tally:
    """Outcomes of the last `window` episodes."""

    def __init__(self, window: int) -> None:
        self.recent: deque[str] = deque(maxlen=window)

    def add(self, outcome: str) -> None:
        self.recent.append(outcome)

    def rates(self) -> tuple[float, float, float]:
        n = max(1, len(self.recent))
        return (self.recent.count(WIN) / n, self.recent.count(DRAW) / n, self.recent.count(LOSS) / n)

    def line(self) -> str:
        win, draw, loss = self.rates()
        return f"win {win:.2f} draw {draw:.2f} loss {loss:.2f} over the last {len(self.recent)}"


def train(config: TrainConfig, registry: Registry | None = None, report: Callable[[str], None] | None = None) -> TrainSummary:
    """Train and write the checkpoint to `config.out`; ArenaError (nothing written) on bad input."""
    registry = registry if registry is not None else get_registry()
    checked = plan(config, registry)
    torch = import_torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # determinism, and the machines this runs on have few cores
    try:
        with torch.random.fork_rng(devices=[]):  # seed torch without changing the caller's global RNG
            torch.manual_seed(derive_seed(config.seed, "torch"))
            return _train(torch, checked, registry, report or (lambda line: None))
    finally:
        torch.set_num_threads(threads)


def _train(torch: Any, plan: Plan, registry: Registry, report: Callable[[str], None]) -> TrainSummary:
    config = plan.config
    learner: Reinforce | DQN = Reinforce(torch, plan) if config.algorithm == "reinforce" else DQN(torch, plan)
    episodes = Episodes(plan, registry)
    tally = Tally(config.window)
    every = max(1, config.episodes // 10)
    start = time.perf_counter()
    for number in range(config.episodes):
        if number % SELF_REFRESH == 0:
            episodes.frozen = learner.layers  # arrays are replaced, never changed in place, by updates
        trajectory = episodes.play(number, learner.choose)
        learner.learn(trajectory, number)
        tally.add(trajectory.outcome)
        if (number + 1) % every == 0 and number + 1 < config.episodes:
            report(f"episode {number + 1}/{config.episodes}: {tally.line()} ({time.perf_counter() - start:.1f}s)")
    seconds = time.perf_counter() - start
    win, draw, loss = tally.rates()
    training = {**asdict(config), "hidden": list(config.hidden), "lr": plan.lr, "batch": plan.batch,
                "self_refresh": SELF_REFRESH, "torch": torch.__version__, **learner.settings(),
                "last": {"episodes": len(tally.recent), "win": win, "draw": draw, "loss": loss}}  # fmt: skip
    del training["out"]  # where the file went is not part of what it is
    save_checkpoint(config.out, plan.game, learner.layers, learner.output, config.algorithm, training)
    # Where the file went is printed once, by the command (stdout), not in this line.
    report(f"trained {config.algorithm} on {plan.game.label()} against {config.opponent}: {config.episodes} episodes "
           f"in {seconds:.1f}s, {tally.line()}")  # fmt: skip
    return TrainSummary(config.episodes, len(tally.recent), win, draw, loss, seconds, config.out)


# ---------------------------------------------------------------- `arena train`


class _Context(Protocol):
    """The part of arena.cli.Context this command uses."""

    plugins_dirs: list[str]

    def registry(self) -> Registry: ...


@click.command("train")
@click.option("--game", "game_spec", required=True, help="Game spec, e.g. tic_tac_toe or connect_four:rows=5.")
@click.option("--algorithm", type=click.Choice(ALGORITHMS), default="reinforce", show_default=True)
@click.option("--opponent", default="random", show_default=True, help="An agent spec, or 'self' (a frozen copy of the learner).")
@click.option("--episodes", type=int, default=2000, show_default=True)
@click.option("--hidden", default="64,64", show_default=True, help="Hidden layer widths.")
@click.option("--lr", type=float, default=None, help="Learning rate (default: reinforce 0.003, dqn 0.001).")
@click.option("--batch", type=int, default=None, help="Episodes per update (reinforce, 16) or minibatch size (dqn, 64).")
@click.option("--gamma", type=float, default=0.99, show_default=True, help="Discount per move of the learner.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-turns", type=int, default=DEFAULT_MAX_TURNS, show_default=True, help="An episode this long is a draw.")
@click.option("--window", type=int, default=500, show_default=True, help="Win rates are over the last K episodes.")
@click.option("--out", required=True, help="The checkpoint file to write (.npz).")
@click.option("--plugins-dir", "plugins_dirs", multiple=True, metavar="DIR", help="Load loose-file plugins from DIR.")
@click.option("--quiet", is_flag=True, help="No progress lines.")
@click.pass_obj
def train_command(ctx: _Context | None, game_spec: str, algorithm: str, opponent: str, episodes: int, hidden: str,
                  lr: float | None, batch: int | None, gamma: float, seed: int, max_turns: int, window: int, out: str,
                  plugins_dirs: tuple[str, ...], quiet: bool) -> None:  # fmt: skip
    """Train a `neural` agent by reinforcement learning and write its checkpoint (needs PyTorch)."""
    if ctx is not None:
        ctx.plugins_dirs.extend(plugins_dirs)
        registry = ctx.registry()
    else:
        registry = get_registry(plugins_dirs)
    config = TrainConfig(game=game_spec, out=out, algorithm=algorithm, opponent=opponent, episodes=episodes,
                         hidden=parse_hidden(hidden), lr=lr, batch=batch, gamma=gamma, seed=seed, max_turns=max_turns,
                         window=window)  # fmt: skip
    # Errors (ArenaError) go up to the `arena` group, which prints them as one line and exits with 2.
    train(config, registry, None if quiet else lambda line: click.echo(line, err=True))
    click.echo(str(Path(out)))
