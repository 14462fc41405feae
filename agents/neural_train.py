"""Training agents with reinforcement learning: REINFORCE, DQN (double or plain), tabular Q-learning or DDPG, against any Arena agent.

The learner takes one seat (seat = episode number modulo the number of players, so seats
alternate) and every other seat is the opponent: any agent spec, made through `arena.agents` as a
tournament makes it, or `self` (self-play against past versions of the learner: a checkpoint file
is written into the pool directory every `snapshot_every` episodes, and each episode's opponent is
drawn by the seeded RNG from the last `self_pool` of them and the past checkpoints given with
`opponent_pool`, e.g. another run's: agents/train_pool.py). The learner acts from its own `state.observation(seat)`
with illegal actions masked out; opponents get the live state (perfect information) or their
seat's view, as in `arena.match`. Its reward is +1 for a win, 0 for a draw (or the turn limit) and
-1 for a loss, at the end, plus the game's shaped reward of each of its moves with `--shaping NAME`
(`Game.reward_shapings()`, e.g. Reversi's positional rewards).

- `reinforce`: Monte-Carlo policy gradient on the masked softmax of the network's logits, with a
  running-mean baseline and an entropy bonus, one update per `batch` episodes (as the Onitama
  report's policy-gradient agent).
- `dqn`: Q-learning with a replay buffer, a target network (synced every `TARGET_SYNC` gradient
  steps), double-DQN targets (`--no-double`: plain DQN targets, the Dots and Boxes report's
  comparison), epsilon-greedy exploration decaying linearly over the first half of training, and
  masked maxima over the next position's legal actions; `--prioritized`: prioritized experience
  replay (agents/train_priority.py, the Dots and Boxes report's other comparison); `--returns`:
  chiamp's variant (report 003), Q regressed by squared error toward each move's discounted return
  to the end of the episode instead of a bootstrapped target, with no target network (the replay
  buffer stays).
- `qlearning`: tabular Q-learning over the observation tensor's bytes (agents/tabular_q.py), for
  small games (the Dots and Boxes report's 2x2 player).
- `ddpg`: an actor network and an MLP critic Q(s, a) over an action vector, with target networks
  and exploration noise on the actor's output (agents/train_ddpg.py, the Onitama report's agent).
- `value`: a state-value network over afterstates, epsilon-greedy, moved towards each game's final
  result (agents/train_value.py, the Santorini report's ANN and CNN); `minimax:eval=model` plays it.

Networks (`--net mlp|conv|fcn|mdrnn`, `--dueling`: agents/train_nets.py; `--representation` and `--cell` of the
Dots and Boxes report's MDRNN: agents/train_mdrnn.py): the plain MLP is saved as the numpy `.npz`
checkpoint agent `neural` plays; the others as TorchScript `.pt` files.

Metrics go to `OUT.metrics.jsonl` as training goes (arena/training/metrics.py): the win rate over
the last `window` episodes, the loss and epsilon every `log_every` episodes, and the greedy
policy's results against `eval_opponent` on fixed seeds every `eval_every` episodes;
`arena plot training OUT` draws them. On a terminal a progress bar shows the current win rate.

Every checkpoint gets its training state beside it (`OUT.resume`, agents/train_state.py), written again
every `save_every` episodes and when `stop()` turns true (the command's Ctrl-C); `resume` goes on from it
to `episodes` in all, and a stopped run resumed ends with the same files as one that never stopped.

PyTorch is imported only when training starts (`import_torch`). Same settings and seed give the
same checkpoint bytes on one machine: torch is seeded, runs on one thread, and every episode's
game and opponent seeds derive from the seed. Across machines (CPU kinds, BLAS builds, torch
versions) floating-point sums may differ in the last bits, and training amplifies that.
"""

from __future__ import annotations

import contextlib
import copy
import math
import random
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click
import numpy as np

import arena
from agents import train_nets, train_priority, train_state
from agents.neural import (
    NotANumber,
    choose_action,
    forward,
    game_description,
    observation_shape,
    save_checkpoint,
)
from agents.train_adam import Adam
from agents.train_pool import (
    Pool,
    Values,
    file_values,
    load_given,
    load_own,
    plan_pool,
    pool_record,
)
from arena.agents import AgentEntry, one_agent, resolve, seated_game
from arena.files import check_writable
from arena.library.catalog import stored_agent_lookup
from arena.match import DEFAULT_MAX_TURNS, DRAW, LOSS, WIN, outcomes_from_returns
from arena.params import Spec
from arena.plugins import CommandContext, Registry, command_db, command_registry, get_registry, plugins_dir_option
from arena.progress import ProgressBar
from arena.seeding import derive_seed
from arena.tournament import MAX_SCHEDULED, make_game
from arena.training.metrics import MetricsWriter, metrics_path, read_metrics

if TYPE_CHECKING:
    from agents.train_ddpg import DDPG

#: Linear evaluation weights learned from search values (agents/train_bootstrap.py): no network, no torch.
BOOTSTRAP = ("treestrap", "rootstrap")
#: A state-value network learned from final results over afterstates (agents/train_value.py).
VALUE = "value"
#: `--targets` of --algorithm value unless given: the game's final result.
RESULT_TARGETS = "result"
ALGORITHMS = ("reinforce", "dqn", "qlearning", "ddpg", VALUE, *BOOTSTRAP)
SELF = "self"
#: `--validity`: the Onitama report's DDPG actor designs (agents/train_validity.py), by its names.
VALIDITY_DESIGNS = ("actions_only", "val_after_actions", "actions_after_val", "val_branch_actions", "val_after_actions_multiply",
                    "actions_after_val_multiply", "val_branch_actions_multiply", "dual")  # fmt: skip
TORCH_REQUIREMENT = "torch==2.13.0"

#: Defaults that differ by algorithm: learning rate, and `batch` (episodes per update for
#: reinforce, transitions per minibatch for dqn and ddpg). Tabular Q-learning's step size is its lr;
#: ddpg's is the critic's (the actor's a tenth); RootStrap's and TreeStrap's are the Santorini report's (Veness et al.'s).
DEFAULT_LR = {"reinforce": 0.003, "dqn": 0.001, "qlearning": 0.1, "ddpg": 0.001, VALUE: 0.001, "rootstrap": 1e-5, "treestrap": 1e-6}
DEFAULT_BATCH = {"reinforce": 16, "dqn": 64, "qlearning": 1, "ddpg": 64, VALUE: 1}

ENTROPY_BONUS = 0.01
BASELINE_MOMENTUM = 0.05  # the running-mean baseline moves this far towards each batch's mean return
REPLAY_CAPACITY = 20_000
TARGET_SYNC = 200  # dqn gradient steps between target-network copies
EPSILON_START, EPSILON_END, EPSILON_DECAY_SHARE = 1.0, 0.05, 0.5
SELF_REFRESH = 250  # default episodes between snapshots of the learner for self-play
MASKED = -1e9  # the logit of an illegal action: exp() is exactly 0, and 0 * MASKED stays finite

Layers = list[tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class TrainConfig:
    game: str
    out: str
    algorithm: str = "reinforce"
    opponent: str = "random"
    episodes: int = 2000
    hidden: tuple[int, ...] | None = None  # None: the network's default (train_nets.hidden_widths): 64,64, mdrnn's 64
    lr: float | None = None  # None: DEFAULT_LR of the algorithm
    batch: int | None = None  # None: DEFAULT_BATCH of the algorithm
    gamma: float = 0.99
    seed: int = 0
    max_turns: int = DEFAULT_MAX_TURNS
    window: int = 500  # win rates are reported over the last `window` episodes
    net: str = "mlp"
    channels: tuple[int, ...] = (32, 32)
    representation: str | None = None  # --net mdrnn: its board representation (None: train_nets.REPRESENTATIONS[0], naive)
    cell: str | None = None  # --net mdrnn: its recurrent cell (None: train_nets.CELLS[0], tanh)
    dueling: bool = False
    double: bool = True
    prioritized: bool = False  # dqn: prioritized experience replay (agents/train_priority.py)
    returns: bool = False  # dqn: Monte-Carlo targets, each move's discounted return (chiamp's DQN), no target network
    priority_alpha: float | None = None  # None: train_priority.ALPHA
    priority_beta: float | None = None  # None: train_priority.BETA, the start of its annealing to 1
    tau: float | None = None  # ddpg: the target networks' soft-update share (None: train_ddpg.TAU)
    noise: float | None = None  # ddpg: the exploration noise's standard deviation (None: train_ddpg.NOISE)
    shaping: str | None = None
    self_pool: int = 1  # this run's past snapshots kept for self-play
    snapshot_every: int = SELF_REFRESH
    opponent_pool: str | None = None  # self-play: a directory or files of past checkpoints (agents/train_pool.py)
    log_every: int | None = None  # None: episodes // 200
    eval_every: int | None = None  # None: episodes // 10
    eval_games: int = 50  # 0: no evaluation
    eval_opponent: str = "random"
    resume: str | None = None  # a checkpoint this trainer wrote (with its .resume state) to go on from
    save_every: int | None = None  # episodes between writes of the checkpoint and its state during the run
    promote_at: float | None = None  # curriculum: the opponent's depth + 1 when the window's win rate reaches this
    depth: int | None = None  # treestrap/rootstrap: plies searched at every move (None: train_bootstrap.DEFAULT_DEPTH)
    validity: str | None = None  # ddpg: the Onitama report's actor design with a validity layer (train_validity.DESIGNS)
    targets: str = RESULT_TARGETS  # value: what chosen positions move towards, the final result or an mcts spec's search value
    db: str | None = None  # where opponents given by name are registered (None: $ARENA_DB, else ./arena.db)

    @property
    def widths(self) -> tuple[int, ...]:
        """The hidden widths the network is built with: --hidden, or the network's default."""
        return train_nets.hidden_widths(self.net, self.hidden)


#: Options that say where and how often to write (or where names are looked up), not what is trained: not part of the
#: file's settings (a database URL may hold a password).
NOT_SETTINGS = ("out", "resume", "save_every", "db")
#: Settings of one network only, left out of the others' files (so that those are byte for byte what they were before
#: the option was offered): mdrnn's recurrent cell.
NET_SETTINGS = {"cell": "mdrnn"}
#: Likewise, settings of one algorithm only: what --algorithm value learns from, DQN's --returns, DDPG's --validity.
ALGORITHM_SETTINGS = {"targets": VALUE, "returns": "dqn", "validity": "ddpg"}
#: Settings left out while unset, also by their own algorithm (plain DDPG's files are what they were before --validity).
UNSET_SETTINGS = ("validity",)


@dataclass(frozen=True)
class TrainSummary:
    episodes: int
    window: int  # episodes the rates are over
    win_rate: float
    draw_rate: float
    loss_rate: float
    seconds: float
    out: str
    plan: Plan | None = field(default=None, repr=False, compare=False)
    policy: Chooser | None = field(default=None, repr=False, compare=False)  # the trained learner's best move, for evaluation


@dataclass
class Trajectory:
    """The learner's side of one episode: what it saw, which actions were legal, what it did, how it ended."""

    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    shaped: list[float] = field(default_factory=list)  # the game's shaped reward of each move (0 without shaping)
    reward: float = 0.0  # at the end
    outcome: str = DRAW

    def step_rewards(self) -> list[float]:
        """The reward after each of the learner's moves: its shaped reward, plus the final reward after the last."""
        rewards = list(self.shaped)
        if rewards:
            rewards[-1] += self.reward
        return rewards


class Player(Protocol):
    def act(self, state: arena.State) -> int: ...


#: A learner's move: from its observation, the legal actions and the position itself (which an afterstate learner,
#: agents/train_value.py, looks one move ahead from; the others decide from the observation alone).
Chooser = Callable[[np.ndarray, list[int], arena.State], int]


def final_reward(outcome: str) -> float:
    """A learner's reward at the end of a game: +1 a win, -1 a loss, 0 a draw (or the turn limit)."""
    return {WIN: 1.0, LOSS: -1.0}.get(outcome, 0.0)


def greedy_policy(values: Values) -> Chooser:
    """The best legal action by a network's (or table's) per-action values."""
    return lambda observation, legal, state: choose_action(values(observation), legal, None)


def epsilon_at(episode: int, episodes: int) -> float:
    """Epsilon-greedy exploration after `episode` of `episodes`: from EPSILON_START down to EPSILON_END over the first
    EPSILON_DECAY_SHARE of training, linearly, then flat."""
    share = min(1.0, episode / max(1.0, EPSILON_DECAY_SHARE * episodes))
    return EPSILON_START + share * (EPSILON_END - EPSILON_START)


# ---------------------------------------------------------------- checking the request (no torch needed)


@dataclass(frozen=True)
class Plan:
    """A validated request: the game, how to make opponents, where to write."""

    config: TrainConfig
    game: arena.Game
    opponent: AgentEntry | None  # None: play against past versions of the learner
    evaluator: AgentEntry | None  # the fixed evaluation opponent; None: no evaluation
    shape: tuple[int, ...]
    inputs: int
    lr: float
    batch: int
    log_every: int
    eval_every: int
    pool: Pool | None = None  # self-play: where snapshots go, and the given past checkpoints
    pool_opponents: tuple[Values, ...] = ()  # the given past checkpoints, loaded and checked against the game
    resumed: Resumed | None = None  # --resume: the stored state to go on from
    targets: AgentEntry | None = None  # --algorithm value --targets SPEC: the search that values its positions


@dataclass(frozen=True)
class Resumed:
    """A training state read for `--resume` (agents/train_state.py), checked against the run's game and network."""

    source: str
    meta: dict[str, Any]
    arrays: train_state.Arrays
    own: tuple[tuple[Path, Values], ...]  # the self-play snapshots it wrote that it still draws from

    @property
    def episodes(self) -> int:
        return int(self.meta["episodes"])


class TrainingInterrupted(Exception):
    """Training stopped when asked (Ctrl-C): the checkpoint and its state were written, to go on with --resume."""


def parse_widths(text: str, option: str = "--hidden") -> tuple[int, ...]:
    """`64,64` -> (64, 64): one positive width per layer."""
    try:
        widths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise arena.ArenaError(f"{option} takes layer widths like 64,64, got {text!r}") from None
    if not all(1 <= w <= 4096 for w in widths):
        raise arena.ArenaError(f"{option} widths must be between 1 and 4096, got {text!r}")
    return widths


parse_hidden = parse_widths


def check_numbers(config: TrainConfig) -> None:
    if config.algorithm not in ALGORITHMS:
        raise arena.ArenaError(f"unknown algorithm '{config.algorithm}' (choose {', '.join(ALGORITHMS)})")
    if not 1 <= config.episodes <= MAX_SCHEDULED:  # a run plays at most what one tournament may
        raise arena.ArenaError(f"--episodes must be between 1 and {MAX_SCHEDULED:,} (a tournament's limit), got {config.episodes}")
    if config.lr is not None and not (math.isfinite(config.lr) and config.lr > 0):
        raise arena.ArenaError(f"--lr must be a positive number, got {config.lr}")
    if config.batch is not None and config.batch < 1:
        raise arena.ArenaError(f"--batch must be at least 1, got {config.batch}")
    if not 0 < config.gamma <= 1:
        raise arena.ArenaError(f"--gamma must be in (0, 1], got {config.gamma}")
    if config.max_turns < 1 or config.window < 1:
        raise arena.ArenaError("--max-turns and --window must be at least 1")
    if config.self_pool < 1 or config.snapshot_every < 1:
        raise arena.ArenaError("--self-pool and --snapshot-every must be at least 1")
    if (config.log_every is not None and config.log_every < 1) or (config.eval_every is not None and config.eval_every < 1):
        raise arena.ArenaError("--log-every and --eval-every must be at least 1")
    if config.eval_games < 0:
        raise arena.ArenaError(f"--eval-games must be 0 or more, got {config.eval_games}")
    if config.promote_at is not None and not (math.isfinite(config.promote_at) and 0 < config.promote_at <= 1):
        raise arena.ArenaError(f"--promote-at is a win rate in (0, 1], got {config.promote_at}")
    if config.save_every is not None and config.save_every < 1:
        raise arena.ArenaError(f"--save-every must be at least 1, got {config.save_every}")
    if config.net not in train_nets.NETS:
        raise arena.ArenaError(f"unknown network '{config.net}' (choose {', '.join(train_nets.NETS)})")
    if config.representation is not None:
        if config.representation not in train_nets.REPRESENTATIONS:
            raise arena.ArenaError(f"unknown representation '{config.representation}' (choose {', '.join(train_nets.REPRESENTATIONS)})")
        if config.net != "mdrnn":
            raise arena.ArenaError(f"--representation is the board representation of --net mdrnn, not of --net {config.net}")
    if config.cell is not None:
        if config.cell not in train_nets.CELLS:
            raise arena.ArenaError(f"unknown cell '{config.cell}' (choose {', '.join(train_nets.CELLS)})")
        if config.net != "mdrnn":
            raise arena.ArenaError(f"--cell is the recurrent cell of --net mdrnn, not of --net {config.net}")
    if config.algorithm in BOOTSTRAP:
        from agents.train_bootstrap import check_options

        check_options(config)
    elif config.depth is not None:
        raise arena.ArenaError(f"--depth is the search depth of --algorithm {' and '.join(BOOTSTRAP)}")
    if config.algorithm == VALUE:
        from agents.train_value import check_options as check_value_options

        check_value_options(config)
    elif config.targets != RESULT_TARGETS:
        raise arena.ArenaError(f"--targets is what --algorithm value learns from, not --algorithm {config.algorithm}")
    if config.algorithm == "qlearning" and (config.net != "mlp" or config.dueling):
        raise arena.ArenaError("--algorithm qlearning is tabular: it takes no --net or --dueling")
    if config.dueling and config.algorithm != "dqn":
        raise arena.ArenaError("--dueling is a Q-value head: use it with --algorithm dqn")
    check_priorities(config)
    check_returns(config)
    check_ddpg(config)


def check_ddpg(config: TrainConfig) -> None:
    """--tau in (0, 1] and --noise at least 0, --validity one of the report's designs on a network with a feature output,
    for --algorithm ddpg only."""
    if config.validity is not None:
        from agents.train_validity import check_validity

        check_validity(config)
    for name, value in (("tau", config.tau), ("noise", config.noise)):
        if value is None:
            continue
        if config.algorithm != "ddpg":
            raise arena.ArenaError(f"--{name} is DDPG's: use it with --algorithm ddpg, not {config.algorithm}")
        if not math.isfinite(value) or value < 0 or (name == "tau" and not 0 < value <= 1):
            wanted = "in (0, 1]" if name == "tau" else "0 or more"
            raise arena.ArenaError(f"--{name} must be {wanted}, got {value}")


def check_returns(config: TrainConfig) -> None:
    """--returns replaces DQN's bootstrapped targets (dqn only); with no target network, --no-double means nothing."""
    if not config.returns:
        return
    if config.algorithm != "dqn":
        raise arena.ArenaError(f"--returns is DQN's Monte-Carlo targets: use it with --algorithm dqn, not {config.algorithm}")
    if not config.double:
        raise arena.ArenaError("--no-double chooses how the target network values the next position, and --returns uses no "
                               "target network: give one or the other")  # fmt: skip


def check_priorities(config: TrainConfig) -> None:
    """--prioritized is a replay buffer's (dqn); its alpha and beta are in [0, 1] and need it."""
    if config.prioritized and config.algorithm != "dqn":
        raise arena.ArenaError(f"--prioritized is prioritized experience replay: use it with --algorithm dqn, not {config.algorithm}")
    given = [(name, value) for name, value in (("alpha", config.priority_alpha), ("beta", config.priority_beta)) if value is not None]
    for name, value in given:
        if not config.prioritized:
            raise arena.ArenaError(f"--priority-{name} sets prioritized experience replay: give --prioritized too")
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise arena.ArenaError(f"--priority-{name} must be between 0 and 1, got {value}")


def check_suffix(config: TrainConfig) -> None:
    """`.npz` for the plain MLP and the Q-table, `.pt` (TorchScript) for every other network."""
    npz = config.algorithm == "qlearning" or (config.algorithm != VALUE and config.validity is None
                                              and train_nets.saves_npz(config.net, config.dueling))  # fmt: skip
    wanted = ".npz" if npz else ".pt"
    if Path(config.out).suffix.lower() != wanted:
        what = "TorchScript" if wanted == ".pt" else "the .npz checkpoint"
        raise arena.ArenaError(f"--out: this network is saved as {what}, so name it *{wanted}, not '{Path(config.out).name}'")


def make_opponent_entry(registry: Registry, text: str, game: arena.Game, option: str = "--opponent",
                        db: str | None = None) -> AgentEntry | None:  # fmt: skip
    """The opponent (an agent spec, or a name registered in the database `db`) checked as a tournament checks its
    agents; None for `self`."""
    if text == SELF and option == "--opponent":
        return None
    what = "opponent" if option == "--opponent" else "evaluation opponent"
    spec, named = one_agent(registry, text, option, what, stored_agent_lookup(db))
    return resolve(registry, spec, game, named)


def plan(config: TrainConfig, registry: Registry) -> Plan:
    """Check everything the user gave before any training (and before importing torch)."""
    check_numbers(config)
    if config.algorithm in BOOTSTRAP:
        raise arena.ArenaError(f"--algorithm {config.algorithm} learns linear weights, not a network: agents.train_bootstrap plans it")
    # The defaults, spelled out.
    config = replace(config, representation=train_nets.representation(config.net, config.representation),
                     cell=train_nets.recurrent_cell(config.net, config.cell), hidden=config.widths)  # fmt: skip
    game = make_game(registry, config.game)
    shape = observation_shape(game)
    if config.net not in train_nets.FLAT:
        train_nets.board_shape(game, shape, config.net)
    if config.shaping is not None:
        offered = game.reward_shapings()
        if config.shaping not in offered:
            offered_text = ", ".join(sorted(offered)) or "none"
            raise arena.ArenaError(f"game '{game.info.id}' offers no reward shaping '{config.shaping}' (offered: {offered_text})")
    opponent = make_opponent_entry(registry, config.opponent, game, db=config.db)
    targets = None
    if config.algorithm == VALUE:
        from agents.train_value import check_game, target_search

        check_game(game, opponent)
        targets = target_search(registry, config.targets, game, config.db)
    if config.promote_at is not None and (opponent is None or "depth" not in opponent.params):
        raise arena.ArenaError(f"--promote-at raises the opponent's depth: give an opponent with a depth parameter "
                               f"(e.g. minimax:depth=1), not '{config.opponent}'")  # fmt: skip
    if config.opponent_pool and opponent is not None:
        raise arena.ArenaError("--opponent-pool is for self-play: use it with --opponent self")
    evaluator = make_opponent_entry(registry, config.eval_opponent, game, "--eval-opponent", config.db) if config.eval_games else None
    check_writable(config.out)
    check_suffix(config)
    check_writable(metrics_path(config.out))
    resumed = read_resumed(config, game)
    if config.resume:
        check_writable(train_state.state_path(config.out))
    start, stored_pool = (resumed.episodes, resumed.meta.get("pool")) if resumed is not None else (0, None)
    pool = None
    if opponent is None:
        pool = plan_pool(config.opponent_pool, config.out, config.episodes, config.snapshot_every, start, stored_pool)
    pool_opponents = tuple(load_given(pool, game)) if pool is not None else ()
    if resumed is not None and pool is not None:
        resumed = replace(resumed, own=tuple(load_own(stored_pool, config.self_pool, game)))
    lr = config.lr if config.lr is not None else DEFAULT_LR[config.algorithm]
    batch = config.batch if config.batch is not None else DEFAULT_BATCH[config.algorithm]
    log_every = config.log_every or max(1, config.episodes // 200)
    eval_every = config.eval_every or max(1, config.episodes // 10)
    return Plan(config, game, opponent, evaluator, shape, math.prod(shape), lr, batch, log_every, eval_every, pool, pool_opponents,
                resumed, targets)  # fmt: skip


def network_shape(config: TrainConfig) -> dict[str, Any]:
    shape = train_state.network_shape(config.algorithm, config.net, config.widths, config.channels, config.dueling,
                                      config.representation, config.cell, config.returns, config.validity)  # fmt: skip
    if config.algorithm == VALUE and config.targets != RESULT_TARGETS:  # what its values mean (states before --targets: result)
        shape["value_targets"] = config.targets
    return shape


def deeper(registry: Registry, entry: AgentEntry, game: arena.Game) -> AgentEntry | None:
    """The curriculum's next opponent: the same agent with its `depth` one more (`minimax:depth=1` -> `minimax:depth=2`);
    None when the agent takes no deeper one."""
    text = str(Spec(entry.type_id, {**entry.raw_params, "depth": str(int(entry.params["depth"]) + 1)}))
    try:
        return make_opponent_entry(registry, text, game)
    except arena.ArenaError:
        return None


def promote(plan: Plan, registry: Registry, episodes: Episodes, tally: Tally) -> str | None:
    """--promote-at: when the last `window` episodes' win rate reaches it, the next episodes are against the opponent one
    deeper, and the window starts again (the next promotion needs a full window against it); the new label, or None."""
    config = plan.config
    if config.promote_at is None or episodes.entry is None or len(tally.recent) < config.window or tally.rates()[0] < config.promote_at:
        return None
    promoted = deeper(registry, episodes.entry, plan.game)
    if promoted is None:
        return None
    episodes.use(promoted, registry)
    tally.recent.clear()
    return promoted.label


def read_resumed(config: TrainConfig, game: arena.Game, description: dict[str, Any] | None = None,
                 shape: dict[str, Any] | None = None) -> Resumed | None:  # fmt: skip
    """`--resume FILE`: its state, refused in one line if it is for another game or network, or has no episodes left.
    `description` and `shape`: what the state must match (default: the game's and this config's network's)."""
    if not config.resume:
        return None
    meta, arrays = train_state.read_state(config.resume)
    train_state.check_fits(meta, description or game_description(game), shape or network_shape(config), config.resume)
    done = int(meta["episodes"])
    if config.episodes <= done:
        raise arena.ArenaError(f"--episodes {config.episodes} is the total to reach, and {config.resume} has trained {done} "
                               f"episodes already: give more than {done}")  # fmt: skip
    return Resumed(config.resume, meta, arrays, ())


def import_torch() -> Any:
    """PyTorch, or one clear line saying how to install it."""
    try:
        import torch
    except ImportError:
        raise arena.ArenaError(f"arena train needs PyTorch, which is not installed: pip install {TORCH_REQUIREMENT}") from None
    return torch


# ---------------------------------------------------------------- playing episodes


class FrozenPolicy:
    """A fixed version of the learner playing a seat: its best action (`rng` None) or a draw from the masked softmax."""

    def __init__(self, values: Values, player: int, rng: random.Random | None) -> None:
        self.values = values
        self.player = player
        self.rng = rng

    def act(self, state: arena.State) -> int:
        observation = np.asarray(state.observation(self.player), dtype=np.float32).reshape(-1)
        return choose_action(self.values(observation), state.legal_actions(), self.rng)


def opponent_seated(game: arena.Game, opponent: AgentEntry | None, seat: int) -> arena.Game:
    """The game with the seat parameters (e.g. Gwent decks) `opponent` brings to every seat but the learner's `seat`."""
    if opponent is None or not opponent.seat_params:
        return game
    return seated_game(game, [None if other == seat else opponent for other in range(game.num_players)])


class Episodes:
    """Plays the learner's episodes: seat rotation, seeds, opponents, the turn limit."""

    def __init__(self, plan: Plan, registry: Registry, opponent: AgentEntry | None, label: str = "episode") -> None:
        self.plan = plan
        self.game = plan.game
        self.players = plan.game.num_players
        self.label = label
        self.pool: list[Values] = []  # past versions of the learner, for self-play
        self.shaping = plan.game.reward_shapings()[plan.config.shaping] if plan.config.shaping else None
        self.use(opponent, registry)

    def use(self, opponent: AgentEntry | None, registry: Registry) -> None:
        """Play the next episodes against `opponent` (None: the self-play pool)."""
        self.entry = opponent
        self.make = opponent.maker(registry) if opponent is not None else None
        self._games: dict[int, arena.Game] = {}

    def game_for(self, seat: int) -> arena.Game:
        """The game, with the seat parameters (e.g. Gwent decks) the opponent brings to its seats."""
        if seat not in self._games:
            self._games[seat] = opponent_seated(self.game, self.entry, seat)
        return self._games[seat]

    def opponents(self, game: arena.Game, seat: int, seed: int) -> list[Player | None]:
        seats: list[Player | None] = []
        for other in range(self.players):
            if other == seat:
                seats.append(None)
            elif self.make is None:
                rng = random.Random(derive_seed(seed, other))
                seats.append(FrozenPolicy(self.pool[rng.randrange(len(self.pool))], other, rng))
            else:
                seats.append(self.make(game, other, seed))
        return seats

    def play(self, number: int, choose: Chooser) -> Trajectory:
        """Episode `number`: the learner sits in seat number % players and picks with `choose(observation, legal)`."""
        seat = number % self.players
        seed = derive_seed(self.plan.config.seed, self.label, number)
        game = self.game_for(seat)
        opponents = self.opponents(game, seat, seed)
        state = game.new_initial_state(seed)
        live = game.info.perfect_information
        trajectory = Trajectory()
        spec = self.entry.label if self.entry is not None else SELF
        for _ in range(self.plan.config.max_turns):
            if state.is_terminal():
                break
            player = state.current_player
            legal = state.legal_actions()
            opponent = opponents[player]
            if opponent is None:
                action = self._learner_move(state, seat, legal, choose, trajectory)
            else:
                action = _opponent_move(opponent, state if live else state.view(player), legal, spec)
            state.apply(action)
        if state.is_terminal():  # else the turn limit: a draw, reward 0
            trajectory.outcome = outcomes_from_returns(state.returns())[1][seat]
            trajectory.reward = final_reward(trajectory.outcome)
        return trajectory

    def _learner_move(self, state: arena.State, seat: int, legal: list[int], choose: Chooser, trajectory: Trajectory) -> int:
        observation = np.asarray(state.observation(seat), dtype=np.float32).reshape(-1)
        mask = np.zeros(self.game.num_distinct_actions, dtype=bool)
        mask[legal] = True
        action = choose(observation, legal, state)
        trajectory.observations.append(observation)
        trajectory.masks.append(mask)
        trajectory.actions.append(action)
        trajectory.shaped.append(float(self.shaping(state, action, seat)) if self.shaping is not None else 0.0)
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


class Net:
    """A trainable network of one of `train_nets.NETS`, with fast single-observation inference for play.

    The plain MLP plays from numpy copies of its layers (refreshed after each update), as the
    `.npz` checkpoint does; other shapes run the torch module without gradients.
    """

    def __init__(self, torch: Any, plan: Plan, module: Any = None) -> None:
        """The network `--net` asks for, or `module` (always saved as TorchScript)."""
        config = plan.config
        self.torch = torch
        self.shape = plan.shape
        self.npz = module is None and train_nets.saves_npz(config.net, config.dueling)
        if module is None:
            module = train_nets.build(config.net, plan.game, plan.shape, config.widths, config.channels, config.dueling,
                                      config.representation, config.cell)  # fmt: skip
        self.module = module
        self.layers: Layers = []
        self.refresh()

    def __call__(self, flat: Any) -> Any:
        """The module on a batch of flattened observations (a tensor [batch, inputs])."""
        return self.module(flat.view(-1, *self.shape))

    def refresh(self) -> None:
        if self.npz:
            self.layers = train_nets.numpy_layers(self.module)
        self.values: Values = self.frozen_values(self.layers, None if self.npz else self.module)

    def frozen(self) -> Values:
        """This network as it is now, unaffected by later updates."""
        return self.frozen_values(self.layers, None if self.npz else copy.deepcopy(self.module))

    def frozen_values(self, layers: Layers, module: Any) -> Values:
        if module is None:
            weights, biases = [w for w, _ in layers], [b for _, b in layers]
            return lambda observation: forward(weights, biases, observation)
        torch, shape = self.torch, self.shape

        def values(observation: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                return module(torch.from_numpy(observation).view(1, *shape))[0].numpy()

        return values

    def save(self, path: str, game: arena.Game, output: str, algorithm: str, training: dict[str, Any]) -> None:
        if self.npz:
            save_checkpoint(path, game, self.layers, output, algorithm, training)
            return
        train_nets.save_torchscript(self.torch, self.module, path, torchscript_metadata(game, output, algorithm, training))


def torchscript_metadata(game: arena.Game, output: str, algorithm: str, training: dict[str, Any]) -> dict[str, Any]:
    """The `arena.json` of a trained TorchScript file: the game, the network's shape and output kind, the training."""
    metadata = {"format": "arena-torchscript", "version": 1, **game_description(game), "net": training["net"],
                "dueling": training["dueling"], "size_independent": training["net"] in train_nets.SIZE_INDEPENDENT,
                "output": output, "algorithm": algorithm, "training": training}  # fmt: skip
    for key in ("representation", "cell", "validity"):  # mdrnn's; ddpg's actor design
        if training.get(key):
            metadata[key] = training[key]
    return metadata


def masked_outputs(network: Any, observations: Any, masks: Any) -> Any:
    return network(observations).masked_fill(~masks, MASKED)


# ---------------------------------------------------------------- REINFORCE


def discounted_returns(trajectory: Trajectory, gamma: float) -> list[float]:
    """The learner's return from each of its moves: the rewards still to come, discounted by the moves between."""
    returns, running = [], 0.0
    for reward in reversed(trajectory.step_rewards()):
        running = reward + gamma * running
        returns.append(running)
    return returns[::-1]


class Reinforce:
    """Policy gradient with a running-mean baseline; the network's outputs are logits."""

    output = "logits"

    def __init__(self, torch: Any, plan: Plan) -> None:
        self.torch = torch
        self.plan = plan
        self.network = Net(torch, plan)
        self.optimizer = Adam(torch, self.network.module.parameters(), lr=plan.lr)
        self.rng = random.Random(derive_seed(plan.config.seed, "actions"))
        self.baseline = 0.0
        self.pending: list[Trajectory] = []
        self.losses: list[float] = []

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int:
        return choose_action(self.network.values(observation), legal, self.rng)

    def epsilon(self) -> float | None:
        return None

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        if trajectory.actions:
            self.pending.append(trajectory)
        if len(self.pending) >= self.plan.batch:
            self.update(self.pending)
            self.pending = []

    def finish(self) -> None:
        """The last episodes, fewer than a batch, make one more update at the end of the run."""
        if self.pending:
            self.update(self.pending)
            self.pending = []

    def state(self) -> tuple[dict[str, Any], train_state.Arrays]:
        arrays = {**train_state.module_arrays("net", self.network.module), **train_state.optimizer_arrays(self.optimizer),
                  **pending_arrays(self.pending)}  # fmt: skip
        meta = {"rng": train_state.random_state(self.rng), "baseline": self.baseline,
                "pending": [[t.reward, t.outcome] for t in self.pending]}  # fmt: skip
        return meta, arrays

    def restore(self, meta: dict[str, Any], arrays: train_state.Arrays) -> None:
        train_state.load_module(self.torch, "net", self.network.module, arrays)
        train_state.load_optimizer(self.torch, self.optimizer, arrays)
        train_state.set_random_state(self.rng, meta["rng"])
        self.baseline = float(meta["baseline"])
        self.pending = pending_trajectories(meta["pending"], arrays)
        self.network.refresh()

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
        self.losses.append(float(loss.detach()))
        # The baseline moves after the update, so no episode is compared with a mean that includes itself.
        self.baseline += BASELINE_MOMENTUM * (float(returns.mean()) - self.baseline)
        self.network.refresh()

    def settings(self) -> dict[str, Any]:
        return {"entropy_bonus": ENTROPY_BONUS, "baseline": "running mean", "baseline_momentum": BASELINE_MOMENTUM}


def pending_arrays(pending: list[Trajectory]) -> train_state.Arrays:
    """Episodes waiting for their batch, as flat arrays with each episode's number of moves."""
    if not pending:
        return {}
    return {"pending.lengths": np.array([len(t.actions) for t in pending], dtype=np.int64),
            "pending.observations": np.stack([o for t in pending for o in t.observations]),
            "pending.masks": np.stack([m for t in pending for m in t.masks]),
            "pending.actions": np.array([a for t in pending for a in t.actions], dtype=np.int64),
            "pending.shaped": np.array([r for t in pending for r in t.shaped], dtype=np.float64)}  # fmt: skip


def pending_trajectories(ends: list[list[Any]], arrays: train_state.Arrays) -> list[Trajectory]:
    out: list[Trajectory] = []
    start = 0
    for (reward, outcome), length in zip(ends, arrays.get("pending.lengths", ()), strict=True):
        moves = slice(start, start + int(length))
        out.append(Trajectory(list(arrays["pending.observations"][moves]), list(arrays["pending.masks"][moves]),
                              [int(a) for a in arrays["pending.actions"][moves]],
                              [float(r) for r in arrays["pending.shaped"][moves]], float(reward), outcome))  # fmt: skip
        start += int(length)
    return out


# ---------------------------------------------------------------- DQN


class ReplayBuffer:
    """A ring of transitions (observation, mask of the next legal actions, action, reward, next observation, done, and
    the discounted return from the move to the end of its episode, `discounted_returns` with `gamma`)."""

    FIELDS: tuple[str, ...] = ("observations", "next_observations", "next_masks", "actions", "rewards", "done", "returns")

    def __init__(self, capacity: int, inputs: int, actions: int, gamma: float) -> None:
        self.observations = np.zeros((capacity, inputs), dtype=np.float32)
        self.next_observations = np.zeros((capacity, inputs), dtype=np.float32)
        self.next_masks = np.zeros((capacity, actions), dtype=bool)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.done = np.zeros(capacity, dtype=np.float32)
        self.returns = np.zeros(capacity, dtype=np.float32)
        self.capacity, self.size, self.cursor, self.gamma = capacity, 0, 0, gamma

    def add_episode(self, trajectory: Trajectory) -> int:
        """Store the episode's transitions: from each learner move to its next move, the last to the end."""
        steps = len(trajectory.actions)
        rewards, returns = trajectory.step_rewards(), discounted_returns(trajectory, self.gamma)
        for t in range(steps):
            i = self.cursor
            self.observations[i] = trajectory.observations[t]
            self.actions[i] = trajectory.actions[t]
            final = t == steps - 1
            self.rewards[i], self.returns[i] = rewards[t], returns[t]
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

    def state(self) -> tuple[dict[str, Any], train_state.Arrays]:
        """Its counters, and its filled part as `replay.FIELD` arrays, for the --resume state."""
        filled = slice(0, self.size)
        arrays = {f"replay.{name}": getattr(self, name)[filled] for name in self.FIELDS}
        return {"size": self.size, "cursor": self.cursor, "capacity": self.capacity}, arrays

    def restore(self, meta: dict[str, Any], arrays: train_state.Arrays) -> None:
        if meta["capacity"] != self.capacity:
            raise arena.ArenaError(f"--resume: the replay buffer holds {meta['capacity']} transitions, this version {self.capacity}")
        self.size, self.cursor = int(meta["size"]), int(meta["cursor"])
        for name in self.FIELDS:
            if name == "returns" and "replay.returns" not in arrays:
                continue  # a state written before returns were stored: a TD run's (network_shape), which never reads them
            getattr(self, name)[: self.size] = arrays[f"replay.{name}"]


class DQN:
    """DQN over masked Q-values, with double-DQN targets unless `double` is off, or with `returns` each move's discounted
    return as its target (mean squared error, no target network; else the Huber loss); the outputs are Q-values."""

    output = "q_values"

    def __init__(self, torch: Any, plan: Plan) -> None:
        config = plan.config
        self.torch = torch
        self.plan = plan
        self.network = Net(torch, plan)
        self.target = None if config.returns else copy.deepcopy(self.network.module)
        self.optimizer = Adam(torch, self.network.module.parameters(), lr=plan.lr)
        self.buffer = ReplayBuffer(REPLAY_CAPACITY, plan.inputs, plan.game.num_distinct_actions, config.gamma)
        self.priorities = None
        if config.prioritized:
            alpha = config.priority_alpha if config.priority_alpha is not None else train_priority.ALPHA
            beta = config.priority_beta if config.priority_beta is not None else train_priority.BETA
            self.priorities = train_priority.Priorities(REPLAY_CAPACITY, alpha, beta)
        self.rng = random.Random(derive_seed(plan.config.seed, "actions"))
        self.sampler = np.random.default_rng(derive_seed(plan.config.seed, "replay"))
        self.steps = 0
        self.episode = 0
        self.losses: list[float] = []

    def epsilon(self) -> float:
        return epsilon_at(self.episode, self.plan.config.episodes)

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int:
        if self.rng.random() < self.epsilon():
            return self.rng.choice(legal)
        return choose_action(self.network.values(observation), legal, None)

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        self.episode = episode + 1
        start = self.buffer.cursor
        added = self.buffer.add_episode(trajectory)
        if self.priorities is not None:
            self.priorities.added(start, added)
        if self.buffer.size < self.plan.batch:
            return
        for _ in range(added):  # one gradient step per move played keeps the replay ratio fixed
            self.gradient_step()
        self.network.refresh()

    def gradient_step(self) -> None:
        torch, buffer = self.torch, self.buffer
        if self.priorities is None:
            index, weights = self.sampler.integers(0, buffer.size, self.plan.batch), None
        else:
            progress = self.episode / self.plan.config.episodes
            index, weights = self.priorities.sample(self.sampler, buffer.size, self.plan.batch, progress)
        observations = torch.from_numpy(buffer.observations[index])
        actions = torch.from_numpy(buffer.actions[index])
        targets = self.td_targets(index) if self.target is not None else torch.from_numpy(buffer.returns[index])
        values = self.network(observations).gather(1, actions.unsqueeze(1)).squeeze(1)
        # Huber towards bootstrapped targets; chiamp's squared error towards returns.
        error = torch.nn.functional.smooth_l1_loss if self.target is not None else torch.nn.functional.mse_loss
        if weights is None:
            loss = error(values, targets)
        else:  # each draw's loss weighted by its importance-sampling weight; its TD error (or return - Q) is its new priority
            assert self.priorities is not None
            losses = error(values, targets, reduction="none")
            loss = (torch.from_numpy(weights) * losses).mean()
            self.priorities.update(index, (targets - values).detach().numpy())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.losses.append(float(loss.detach()))
        self.steps += 1
        if self.target is not None and self.steps % TARGET_SYNC == 0:
            self.target.load_state_dict(self.network.module.state_dict())

    def td_targets(self, index: np.ndarray) -> Any:
        """r + gamma * (1 - done) * the next position's value, the next action picked as double or plain DQN picks it."""
        torch, buffer, target = self.torch, self.buffer, self.target
        assert target is not None
        next_observations = torch.from_numpy(buffer.next_observations[index])
        next_masks = torch.from_numpy(buffer.next_masks[index])
        rewards = torch.from_numpy(buffer.rewards[index])
        done = torch.from_numpy(buffer.done[index])
        with torch.no_grad():
            next_target = target(next_observations.view(-1, *self.plan.shape)).masked_fill(~next_masks, MASKED)
            if self.plan.config.double:
                # Double DQN: the online network picks the next action, the target network values it.
                best_next = masked_outputs(self.network, next_observations, next_masks).argmax(dim=1, keepdim=True)
                next_values = next_target.gather(1, best_next).squeeze(1)
            else:  # plain DQN: the target network both picks and values it
                next_values = next_target.max(dim=1).values
            return rewards + self.plan.config.gamma * (1.0 - done) * next_values

    def finish(self) -> None:
        pass

    def state(self) -> tuple[dict[str, Any], train_state.Arrays]:
        replay, replay_arrays = self.buffer.state()
        target = train_state.module_arrays("target", self.target) if self.target is not None else {}
        arrays = {**train_state.module_arrays("net", self.network.module), **target, **train_state.optimizer_arrays(self.optimizer),
                  **replay_arrays}  # fmt: skip
        meta = {"rng": train_state.random_state(self.rng), "sampler": self.sampler.bit_generator.state, "steps": self.steps,
                "episode": self.episode, "replay": replay}  # fmt: skip
        if self.priorities is not None:
            meta["priorities"], priority_arrays = self.priorities.state(self.buffer.size)
            arrays.update(priority_arrays)
        return meta, arrays

    def restore(self, meta: dict[str, Any], arrays: train_state.Arrays) -> None:
        train_state.load_module(self.torch, "net", self.network.module, arrays)
        if self.target is not None:
            train_state.load_module(self.torch, "target", self.target, arrays)
        train_state.load_optimizer(self.torch, self.optimizer, arrays)
        train_state.set_random_state(self.rng, meta["rng"])
        self.sampler.bit_generator.state = meta["sampler"]
        self.steps, self.episode = int(meta["steps"]), int(meta["episode"])
        self.buffer.restore(meta["replay"], arrays)
        if self.priorities is not None:
            self.priorities.restore(meta.get("priorities"), arrays, self.buffer.size)
        self.network.refresh()

    def settings(self) -> dict[str, Any]:
        prioritized = {}
        if self.priorities is not None:  # the values used, defaults included; beta is annealed from it to 1
            prioritized = {"priority_alpha": self.priorities.alpha, "priority_beta": self.priorities.beta,
                           "priority_epsilon": train_priority.EPSILON}  # fmt: skip
        # With --returns (the `returns` setting), no target network to sync and no next action to pick.
        bootstrapped = {"target_sync": TARGET_SYNC, "double": self.plan.config.double} if self.target is not None else {}
        return {"replay_capacity": REPLAY_CAPACITY, **bootstrapped, "epsilon": [EPSILON_START, EPSILON_END, EPSILON_DECAY_SHARE],
                **prioritized}  # fmt: skip


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


class Learner(Protocol):
    output: str
    losses: list[float]

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int: ...

    def learn(self, trajectory: Trajectory, episode: int) -> None: ...

    def epsilon(self) -> float | None: ...

    def greedy(self) -> Chooser: ...

    def snapshot(self) -> Values: ...

    def save(self, path: str, training: dict[str, Any]) -> None: ...

    def settings(self) -> dict[str, Any]: ...

    def finish(self) -> None: ...

    def state(self) -> tuple[dict[str, Any], train_state.Arrays]: ...

    def restore(self, meta: dict[str, Any], arrays: train_state.Arrays) -> None: ...


class NetworkLearner:
    """REINFORCE or DQN behind the Learner interface: greedy play, snapshots and saving go through its Net."""

    def __init__(self, core: Reinforce | DQN | DDPG, plan: Plan) -> None:
        self.core, self.plan = core, plan
        self.output = core.output
        self.losses = core.losses
        self.choose, self.learn, self.epsilon, self.settings = core.choose, core.learn, core.epsilon, core.settings
        self.finish, self.state, self.restore = core.finish, core.state, core.restore
        self.train_metrics: Callable[[], dict[str, Any]] = getattr(core, "train_metrics", dict)  # ddpg --validity's

    def greedy(self) -> Chooser:
        return greedy_policy(self.core.network.values)

    def snapshot(self) -> Values:
        return self.core.network.frozen()

    def save(self, path: str, training: dict[str, Any]) -> None:
        self.core.network.save(path, self.plan.game, self.output, self.plan.config.algorithm, training)


def make_learner(torch: Any, plan: Plan) -> Learner:
    algorithm = plan.config.algorithm
    if algorithm == "qlearning":
        from agents.tabular_q import TabularQ

        return TabularQ(plan)
    if algorithm == "ddpg" and plan.config.validity is not None:
        from agents.train_validity import ValidityDDPG

        return NetworkLearner(ValidityDDPG(torch, plan), plan)
    if algorithm == "ddpg":
        from agents.train_ddpg import DDPG

        return NetworkLearner(DDPG(torch, plan), plan)
    if algorithm == VALUE:
        from agents.train_value import AfterstateValue

        return AfterstateValue(torch, plan)
    return NetworkLearner(Reinforce(torch, plan) if algorithm == "reinforce" else DQN(torch, plan), plan)


@contextlib.contextmanager
def seeded_torch(config: TrainConfig) -> Iterator[Any]:
    """Torch (None for tabular Q-learning) seeded from the config's seed, on one thread, the caller's RNG untouched."""
    torch = import_torch() if config.algorithm != "qlearning" else None
    if torch is None:
        yield None
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # determinism, and the machines this runs on have few cores
    try:
        with torch.random.fork_rng(devices=[]):  # seed torch without changing the caller's global RNG
            torch.manual_seed(derive_seed(config.seed, "torch"))
            yield torch
    finally:
        torch.set_num_threads(threads)


def train(config: TrainConfig, registry: Registry | None = None, report: Callable[[str], None] | None = None,
          progress: bool = False, stop: Callable[[], bool] | None = None) -> TrainSummary:  # fmt: skip
    """Train and write the checkpoint to `config.out`, its metrics and its training state beside it; ArenaError (nothing
    written) on bad input. When `stop()` turns true, the episode under way is finished, the checkpoint and its state are
    written and TrainingInterrupted is raised: `--resume` goes on from there as if nothing had stopped."""
    registry = registry if registry is not None else get_registry()
    try:
        if config.algorithm in BOOTSTRAP:
            from agents import train_bootstrap

            return train_bootstrap.train(config, registry, report or (lambda line: None), progress, stop or (lambda: False))
        checked = plan(config, registry)
        with seeded_torch(config) as torch:
            return _train(torch, checked, registry, report or (lambda line: None), progress, stop or (lambda: False))
    except NotANumber as exc:  # a network's outputs went NaN: the run diverged
        raise arena.ArenaError(f"training diverged: {exc} (try a smaller --lr)") from None


def untrained(config: TrainConfig, registry: Registry | None = None) -> tuple[Plan, Chooser]:
    """The learner as `train` starts it with this config (same initial weights; an empty Q-table), not trained:
    the baseline a training run is measured against. Writes nothing."""
    registry = registry if registry is not None else get_registry()
    checked = plan(config, registry)
    with seeded_torch(config) as torch:
        return checked, make_learner(torch, checked).greedy()


def evaluate(plan: Plan, registry: Registry, policy: Chooser) -> tuple[float, float, float]:
    """The learner's best action against the fixed evaluation opponent on the same seeds every time: win, draw, loss rates."""
    assert plan.evaluator is not None
    episodes = Episodes(plan, registry, plan.evaluator, label="evaluation")
    tally = Tally(plan.config.eval_games)
    for number in range(plan.config.eval_games):
        tally.add(episodes.play(number, policy).outcome)
    return tally.rates()


def _train(torch: Any, plan: Plan, registry: Registry, report: Callable[[str], None], progress: bool,
           stop: Callable[[], bool]) -> TrainSummary:  # fmt: skip
    config = plan.config
    learner = make_learner(torch, plan)
    episodes = Episodes(plan, registry, plan.opponent)
    tally = Tally(config.window)
    settings = {**asdict(config), "hidden": list(config.widths), "channels": list(config.channels), "lr": plan.lr,
                "batch": plan.batch, "log_every": plan.log_every, "eval_every": plan.eval_every,
                "torch": torch.__version__ if torch is not None else None, **learner.settings()}  # fmt: skip
    for key in NOT_SETTINGS:  # where the file went, and where it came from, are not part of what it is
        del settings[key]
    for key, net in NET_SETTINGS.items():
        if config.net != net:
            del settings[key]
    for key, algorithm in ALGORITHM_SETTINGS.items():
        if config.algorithm != algorithm or (key in UNSET_SETTINGS and settings[key] is None):
            del settings[key]
    if config.returns:  # no target network, so no double-DQN choice of the next action either
        del settings["double"]
    resumed = plan.resumed
    first, earlier_seconds, previous_rows = 0, 0.0, []
    own: list[tuple[Path, Values]] = []  # this run's snapshots, read back from the pool's files
    if resumed is not None:
        first, earlier_seconds = resumed.episodes, float(resumed.meta.get("seconds", 0.0))
        learner.restore(resumed.meta["learner"], resumed.arrays)
        for outcome in resumed.meta["recent"]:
            tally.add(outcome)
        learner.losses[:] = resumed.meta["losses"]
        own = list(resumed.own)
        if config.promote_at is not None and resumed.meta.get("opponent_now"):  # the curriculum goes on where it was
            episodes.use(make_opponent_entry(registry, resumed.meta["opponent_now"], plan.game, db=config.db), registry)
        previous_rows = earlier_metrics(resumed)  # read before the writer empties the file (OUT may be the resumed file)
        if plan.pool is not None:
            episodes.pool = [*plan.pool_opponents, *(values for _, values in own[-config.self_pool:])]
    bar = ProgressBar("episodes", progress)
    last_eval = ""
    start = time.perf_counter()

    def write(done: int, state: tuple[dict[str, Any], train_state.Arrays], losses: list[float]) -> None:
        """The checkpoint as it is now, and beside it the state to go on from after `done` episodes."""
        win, draw, loss = tally.rates()
        training = {**settings, "self_refresh": config.snapshot_every,
                    "last": {"episodes": len(tally.recent), "win": win, "draw": draw, "loss": loss}}  # fmt: skip
        learner.save(config.out, training)
        end = None
        if plan.pool is not None and done == config.episodes:  # the trained file joins the pool too, for later runs
            end = save_snapshot(plan, learner, config.episodes, settings)[0]
        learner_meta, arrays = state
        meta = {"episodes": done, "game": game_description(plan.game), "shape": network_shape(config), "learner": learner_meta,
                "recent": list(tally.recent), "losses": list(losses), "seconds": round(earlier_seconds + time.perf_counter() - start, 3),
                "settings": settings, "opponent_now": episodes.entry.label if episodes.entry is not None else None,
                "pool": pool_record(plan.pool, [path for path, _ in own], end) if plan.pool is not None else None}  # fmt: skip
        train_state.write_state(config.out, meta, arrays)

    with bar, MetricsWriter(metrics_path(config.out)) as metrics:
        begin_metrics(metrics, settings, resumed, previous_rows)
        for number in range(first, config.episodes):
            if stop():
                write(number, learner.state(), learner.losses)
                raise interruption(config, number)
            if plan.pool is not None and (number % config.snapshot_every == 0 or not episodes.pool):
                own.append(save_snapshot(plan, learner, number, settings))
                episodes.pool = [*plan.pool_opponents, *(values for _, values in own[-config.self_pool:])]
            trajectory = episodes.play(number, learner.choose)
            learner.learn(trajectory, number)
            tally.add(trajectory.outcome)
            done = number + 1
            if done == config.episodes:
                # The state before the last, partial REINFORCE batch is applied: a longer run goes on from here.
                final_state, final_losses = learner.state(), list(learner.losses)
                learner.finish()
            if done % plan.log_every == 0 or done == config.episodes:
                write_train_row(metrics, done, tally, learner.losses, learner.epsilon(), earlier_seconds + time.perf_counter() - start,
                                getattr(learner, "train_metrics", dict)())  # fmt: skip
            if plan.evaluator is not None and (done % plan.eval_every == 0 or done == config.episodes):
                last_eval = write_eval_row(metrics, done, plan.evaluator.label, config.eval_games,
                                           evaluate(plan, registry, learner.greedy()))  # fmt: skip
            # After this episode's rows, which show the window that earned it (the promotion empties the window).
            promoted = promote(plan, registry, episodes, tally)
            if promoted is not None:
                metrics.write("promote", episode=done, opponent=promoted)
                report(f"episode {done}: won {config.promote_at:.0%} or more of the last {config.window}; now against {promoted}")
            if config.save_every and done % config.save_every == 0 and done < config.episodes:
                write(done, learner.state(), learner.losses)
            show_progress(bar, report, config, done, tally, last_eval, start)
    seconds = time.perf_counter() - start
    write(config.episodes, final_state, final_losses)
    win, draw, loss = tally.rates()
    # Where the file went is printed once, by the command (stdout), not in this line.
    resumed_line = f" (resumed after {first})" if resumed is not None else ""
    opening = plan.opponent.label if plan.opponent is not None else config.opponent  # (as written: minimax:depth=1)
    now = episodes.entry.label if episodes.entry is not None else opening
    against = opening if now == opening else f"{opening}, promoted up to {now}"
    report(f"trained {config.algorithm} on {plan.game.label()} against {against}: {config.episodes} episodes{resumed_line} "
           f"in {seconds:.1f}s, {tally.line()}")  # fmt: skip
    return TrainSummary(config.episodes, len(tally.recent), win, draw, loss, seconds, config.out, plan, learner.greedy())


def begin_metrics(metrics: MetricsWriter, settings: dict[str, Any], resumed: Resumed | None, previous_rows: list[dict[str, Any]]) -> None:
    """The settings line (with where a resumed run came from), then the resumed run's curve up to where it stopped."""
    resumed_from = {"resumed_from": str(resumed.source), "resumed_at": resumed.episodes} if resumed is not None else {}
    metrics.write("settings", **settings, **resumed_from)
    for row in previous_rows:
        metrics.write(row.pop("kind"), **row)


def interruption(config: TrainConfig, number: int) -> TrainingInterrupted:
    return TrainingInterrupted(f"stopped after {number} of {config.episodes} episodes: wrote {config.out} and "
                               f"{train_state.state_path(config.out).name}; "
                               f"go on with the same command and --resume {config.out}")  # fmt: skip


def write_train_row(metrics: MetricsWriter, done: int, tally: Tally, losses: list[float], epsilon: float | None, seconds: float,
                    extra: dict[str, Any] | None = None) -> None:  # fmt: skip
    """A `train` line: the rates over the window, the mean loss since the last line (then emptied), epsilon, the clock,
    and what the learner adds (`extra`: ddpg --validity's valid_rate and validity_loss)."""
    win, draw, loss = tally.rates()
    metrics.write("train", episode=done, window=len(tally.recent), win_rate=win, draw_rate=draw, loss_rate=loss,
                  loss=float(np.mean(losses)) if losses else None, epsilon=epsilon, seconds=round(seconds, 3), **(extra or {}))  # fmt: skip
    losses.clear()


def write_eval_row(metrics: MetricsWriter, done: int, opponent: str, games: int, rates: tuple[float, float, float]) -> str:
    """An `eval` line; returns what the progress output says of it."""
    win, draw, loss = rates
    metrics.write("eval", episode=done, opponent=opponent, games=games, win_rate=win, draw_rate=draw, loss_rate=loss)
    return f" | against {opponent}: win {win:.2f}"


def bar_text(tally: Tally, last_eval: str) -> str:
    win, _, loss = tally.rates()
    return f"win {win:.2f} loss {loss:.2f}{last_eval}"


def show_progress(bar: ProgressBar, report: Callable[[str], None], config: TrainConfig, done: int, tally: Tally, last_eval: str,
                  start: float) -> None:  # fmt: skip
    """The progress bar on a terminal; otherwise a line every tenth of the run (not at its end: the summary says it)."""
    bar.update(done, config.episodes, lambda speed: bar_text(tally, last_eval))  # (worked out only when it is drawn)
    if not bar.bar and done % max(1, config.episodes // 10) == 0 and done < config.episodes:
        report(f"episode {done}/{config.episodes}: {tally.line()}{last_eval} ({time.perf_counter() - start:.1f}s)")


def earlier_metrics(resumed: Resumed) -> list[dict[str, Any]]:
    """The resumed run's curve up to where it stopped (none when its metrics file is gone or damaged)."""
    try:
        rows = read_metrics(resumed.source)
    except arena.ArenaError:
        return []
    return [row for row in rows if row["kind"] != "settings" and row.get("episode", 0) <= resumed.episodes]


def save_snapshot(plan: Plan, learner: Learner, episodes: int, settings: dict[str, Any]) -> tuple[Path, Values]:
    """Write the learner as it is after `episodes` episodes into the self-play pool; read it back as an opponent."""
    assert plan.pool is not None
    path = plan.pool.snapshot_path(episodes)
    path.parent.mkdir(exist_ok=True)
    learner.save(str(path), {**settings, "snapshot_after_episodes": episodes})
    return path, file_values(path, plan.game)


def evaluate_against(plan: Plan, registry: Registry, policy: Chooser, opponent: str, games: int,
                     game: arena.Game | None = None) -> tuple[float, float, float]:  # fmt: skip
    """`policy` against `opponent` in `games` games (seats alternating, seeds from the plan's seed):
    win, draw, loss rates; on `game` instead of the trained game when given (a size-independent network)."""
    if game is not None:
        shape = observation_shape(game)
        plan = replace(plan, game=game, shape=shape, inputs=math.prod(shape))
    entry = make_opponent_entry(registry, opponent, plan.game, "--eval-opponent", plan.config.db)
    return evaluate(replace(plan, evaluator=entry, config=replace(plan.config, eval_games=games)), registry, policy)


# ---------------------------------------------------------------- `arena train`


@click.command("train")
@click.option("--game", "game_spec", required=True, help="Game spec, e.g. tic_tac_toe or connect_four:rows=5.")
@click.option("--algorithm", type=click.Choice(ALGORITHMS), default="reinforce", show_default=True)
@click.option("--opponent", default=None,
              help="An agent spec or registered name, or 'self' (past versions of the learner; treestrap/rootstrap: the "
                   "learner itself, its default). Default: random.")
@click.option("--episodes", type=int, default=2000, show_default=True)
@click.option("--net", type=click.Choice(train_nets.NETS), default="mlp", show_default=True,
              help="mlp (.npz), resmlp: residual units (the Reversi report's), conv over the board planes, fcn: fully "
                   "convolutional, any board size, or mdrnn: the Dots and Boxes report's 2D recurrent network, any board size "
                   "(.pt TorchScript).")
@click.option("--representation", type=click.Choice(train_nets.REPRESENTATIONS), default=None,
              help="--net mdrnn: the lines as (n+1)x(m+1)x2 (naive, the default), per box nxmx4 (box), or turned 45 degrees "
                   "into an (n+m)x(n+m) grid (edge).")
@click.option("--cell", type=click.Choice(train_nets.CELLS), default=None,
              help="--net mdrnn: its 2D recurrent cell, the report's simple tanh cell (the default) or a GRU whose previous state "
                   "is the mean of the cell's two predecessors.")
@click.option("--hidden", default=None,
              help="Hidden layer widths (mlp; resmlp: one width, a residual unit per width after the first; mdrnn's per-cell "
                   "head; conv uses the first). Default: 64,64, for mdrnn 64.")
@click.option("--channels", default="32,32", show_default=True, help="Convolution widths (conv, fcn); mdrnn's cell width is the first.")
@click.option("--dueling", is_flag=True, help="Dueling Q head: Q = V + A - mean(A) (dqn).")
@click.option("--double/--no-double", default=True, show_default=True, help="Double-DQN targets, or plain DQN's (dqn).")
@click.option("--prioritized", is_flag=True, help="Prioritized experience replay: sample by |TD error|, weight by importance (dqn).")
@click.option("--priority-alpha", type=float, default=None, metavar="A",
              help=f"With --prioritized: sampling probability ~ priority^A (default {train_priority.ALPHA}; 0 is uniform).")
@click.option("--priority-beta", type=float, default=None, metavar="B",
              help=f"With --prioritized: the importance-sampling exponent at the start, annealed to 1 (default {train_priority.BETA}).")
@click.option("--returns", is_flag=True,
              help="Regress Q toward each move's discounted return to the end of the episode (chiamp's DQN) instead of "
                   "bootstrapped TD targets, by squared error; no target network is used (dqn).")
@click.option("--tau", type=float, default=None, help="Target networks' soft-update share per gradient step (ddpg, 0.005).")
@click.option("--noise", type=float, default=None, help="Standard deviation of the noise on the actor's output when acting (ddpg, 0.1).")
@click.option("--validity", type=click.Choice(VALIDITY_DESIGNS), default=None,
              help="ddpg: the Onitama report's actor with a validity layer learning the legal actions' mask, by its design's "
                   "name (actions_only: its baseline, without one); records valid_rate in the metrics (mlp, resmlp, conv; .pt).")
@click.option("--targets", default=RESULT_TARGETS, show_default=True, metavar="result|SPEC",
              help="value: what each chosen position moves towards: the game's result, or the value of an mcts search from it "
                   "(e.g. mcts:simulations=30; rollout=heuristic plays out by the game's heuristic).")
@click.option("--shaping", default=None, metavar="NAME", help="Add the game's shaped reward NAME at every move (e.g. reversi: positional).")
@click.option("--lr", type=float, default=None,
              help="Learning rate (default: reinforce 0.003, dqn 0.001, qlearning 0.1, ddpg 0.001 for the critic, a tenth for the "
                   "actor, value 0.001, rootstrap 1e-5, treestrap 1e-6).")
@click.option("--depth", type=int, default=None,
              help="treestrap/rootstrap: plies searched at every move (default: 2).")
@click.option("--batch", type=int, default=None, help="Episodes per update (reinforce, 16) or minibatch size (dqn, ddpg: 64).")
@click.option("--gamma", type=float, default=0.99, show_default=True, help="Discount per move of the learner.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-turns", type=int, default=DEFAULT_MAX_TURNS, show_default=True, help="An episode this long is a draw.")
@click.option("--window", type=int, default=500, show_default=True, help="Win rates are over the last K episodes.")
@click.option("--self-pool", type=int, default=1, show_default=True, help="With --opponent self: past snapshots to draw opponents from.")
@click.option("--snapshot-every", type=int, default=SELF_REFRESH, show_default=True,
              help="With --opponent self: episodes between snapshots, written as checkpoint files into the pool directory.")
@click.option("--opponent-pool", default=None, metavar="DIR|FILES",
              help="With --opponent self: past checkpoints to draw opponents from too (a directory, or files separated by commas); "
                   "snapshots go to its directory (default: OUT's name with .pool).")
@click.option("--log-every", type=int, default=None, help="Episodes between metric lines (default: episodes/200).")
@click.option("--eval-every", type=int, default=None, help="Episodes between evaluations (default: episodes/10).")
@click.option("--eval-games", type=int, default=50, show_default=True, help="Games per evaluation (0: none).")
@click.option("--eval-opponent", default="random", show_default=True,
              help="The fixed opponent of the evaluations (a spec or registered name).")
@click.option("--out", required=True,
              help="The file to write: .npz (mlp, qlearning) or .pt (TorchScript); metrics go to OUT.metrics.jsonl, "
                   "the state to go on from to OUT.resume.")
@click.option("--resume", default=None, metavar="CHECKPOINT",
              help="Go on from a checkpoint arena train wrote (weights, optimiser, replay buffer, random generators, episode count), "
                   "to --episodes in all; same game and network options.")
@click.option("--save-every", type=int, default=None, metavar="N",
              help="Also write OUT and its state every N episodes, so that a killed run can go on with --resume OUT.")
@click.option("--promote-at", type=float, default=None, metavar="RATE",
              help="Curriculum: when the win rate over the last --window episodes reaches RATE, the opponent's depth goes up by one "
                   "(an opponent with a depth, e.g. minimax:depth=1); the window starts again.")
@click.option("--db", "db_url", metavar="URL",
              help="Where --opponent and --eval-opponent given by name are registered (default $ARENA_DB, else ./arena.db).")
@plugins_dir_option
@click.option("--quiet", is_flag=True, help="No progress bar or lines.")
@click.pass_obj
def train_command(ctx: CommandContext | None, game_spec: str, algorithm: str, opponent: str | None, episodes: int, net: str,
                  representation: str | None, cell: str | None, hidden: str | None, channels: str, dueling: bool, double: bool,
                  prioritized: bool, priority_alpha: float | None, priority_beta: float | None, returns: bool, tau: float | None,
                  noise: float | None, validity: str | None, targets: str, shaping: str | None, lr: float | None,
                  depth: int | None, batch: int | None, gamma: float, seed: int, max_turns: int, window: int, self_pool: int,
                  snapshot_every: int, opponent_pool: str | None, log_every: int | None, eval_every: int | None, eval_games: int,
                  eval_opponent: str, out: str, resume: str | None, save_every: int | None, promote_at: float | None,
                  db_url: str | None, plugins_dirs: tuple[str, ...], quiet: bool) -> None:  # fmt: skip
    """Train an agent by reinforcement learning; write its network (or linear weights) and its training curves.

    Networks need PyTorch; treestrap and rootstrap learn the weights of a linear evaluation over the
    game's features from search values, without it."""
    registry, _ = command_registry(ctx, plugins_dirs)
    if opponent is None:
        opponent = SELF if algorithm in BOOTSTRAP else "random"
    widths = parse_widths(hidden) if hidden is not None else None  # None: the network's default
    config = TrainConfig(game=game_spec, out=out, algorithm=algorithm, opponent=opponent, episodes=episodes, depth=depth,
                         hidden=widths, lr=lr, batch=batch, gamma=gamma, seed=seed, max_turns=max_turns,
                         window=window, net=net, channels=parse_widths(channels, "--channels"), representation=representation,
                         cell=cell, dueling=dueling, double=double, prioritized=prioritized, priority_alpha=priority_alpha,
                         priority_beta=priority_beta, returns=returns, tau=tau, noise=noise, validity=validity, targets=targets,
                         shaping=shaping, self_pool=self_pool,
                         snapshot_every=snapshot_every, opponent_pool=opponent_pool, log_every=log_every, eval_every=eval_every,
                         eval_games=eval_games, eval_opponent=eval_opponent, resume=resume, save_every=save_every,
                         promote_at=promote_at, db=command_db(ctx, db_url))  # fmt: skip
    # Errors (ArenaError) go up to the `arena` group, which prints them as one line and exits with 2.
    report = None if quiet else lambda line: click.echo(line, err=True)
    try:
        with stop_on_signals() as stop:
            train(config, registry, report, progress=not quiet and sys.stderr.isatty(), stop=stop)
    except TrainingInterrupted as interrupted:
        click.echo(str(interrupted), err=True)
        sys.exit(INTERRUPTED_EXIT)
    click.echo(str(Path(out)))


INTERRUPTED_EXIT = 130  # as a shell reports a command stopped by Ctrl-C


@contextlib.contextmanager
def stop_on_signals() -> Iterator[Callable[[], bool]]:
    """Ctrl-C (SIGINT) or SIGTERM asks training to stop after the episode under way, writing what it needs to go on;
    a second one stops at once, as usual."""
    asked: list[int] = []
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield lambda: False
        return
    kinds = [signal.SIGINT, signal.SIGTERM]
    previous = {kind: signal.getsignal(kind) or signal.SIG_DFL for kind in kinds}

    def handler(number: int, frame: Any) -> None:
        asked.append(number)
        for kind in kinds:
            signal.signal(kind, previous[kind])

    for kind in kinds:
        signal.signal(kind, handler)
    try:
        yield lambda: bool(asked)
    finally:
        for kind in kinds:
            signal.signal(kind, previous[kind])
