"""RootStrap and TreeStrap: linear evaluation weights learned from search values (`arena train --algorithm rootstrap|treestrap`).

Veness, Silver, Uther and Blair, "Bootstrapping from Game Tree Search" (NIPS 2009), as the Santorini
report (section 3.1) uses them: the value of a position s for a seat p is V(s) = w . game.features(s, p);
at every move the learner searches `depth` plies (one ply = one action) with V at the leaves and
takes the move of best minimax value (ties broken by the seeded RNG), and moves w by stochastic
gradient descent on the squared error between V and the search's value:

- `rootstrap` (RootStrap(alpha-beta)): the root only, w += lr * (v(root) - V(root)) * phi(root),
  v(root) from an alpha-beta search (children ordered by V where two or more plies are left);
- `treestrap` (TreeStrap(minimax)): every interior node s of a full-width minimax tree (the root
  included), w += lr * sum over s of (v(s) - V(s)) * phi(s), all errors taken with the weights
  the search used, then applied at once.

Values are the searching seat's, as `minimax` plays them (max where that seat moves, min elsewhere;
features taken for that seat at every node); a finished game is worth WIN_TARGET times the seat's
margin over the best other seat, halved (a two-player win: +9999, a loss: -9999, as the report).
Initial weights are uniform in [-1, 1] from the seed, as the report's. Default learning rates are
the report's (1e-5 RootStrap, 1e-6 TreeStrap); default depth DEFAULT_DEPTH (see README: seconds
per training game on Santorini at depths 2 and 3).

Opponents: with `--opponent self` (the default for these algorithms: the report's self-play) the
learner plays every seat and learns from every move; with an agent spec it plays seat
episode % players, the spec the others, and learns from its own moves only (its moves come from
its search either way, so any opponent only changes which positions it learns from).

The file written is a weights file (agents/linear_weights.py, format `arena-linear-weights`) that
`linear:weights=FILE` and `minimax:eval=linear,weights=FILE` play; beside it the metrics
(`OUT.metrics.jsonl`: `loss` is the mean squared error of the updates) and the state to go on from
(`OUT.resume`: the weights, episodes, recent outcomes, losses since the last metrics line).
Every episode's game seed, opponents and tie-breaking derive from the seed and the episode number,
so a run stopped and resumed ends with the same file as one that never stopped; same seed, same
bytes on one machine.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import arena
from agents import train_state
from agents._search import has_features, linear_evaluation
from agents.linear_weights import weights_metadata, write_weights
from agents.minimax import MinimaxAgent
from agents.neural_train import (
    DEFAULT_LR,
    NOT_SETTINGS,
    RESULT_TARGETS,
    SELF,
    SELF_REFRESH,
    Resumed,
    Tally,
    TrainConfig,
    TrainSummary,
    _opponent_move,
    begin_metrics,
    check_numbers,
    earlier_metrics,
    interruption,
    make_opponent_entry,
    opponent_seated,
    read_resumed,
    show_progress,
    write_eval_row,
    write_train_row,
)
from arena.agents import AgentEntry
from arena.files import check_writable
from arena.match import DRAW, outcomes_from_returns, play_match
from arena.params import Spec
from arena.plugins import Registry
from arena.progress import ProgressBar
from arena.seeding import derive_seed
from arena.tournament import make_game
from arena.training.metrics import MetricsWriter, metrics_path

DEFAULT_DEPTH = 2
MAX_DEPTH = 8
#: The report's value of a won position (9999); a finished game is worth this times the margin, halved.
WIN_TARGET = 9999.0
INITIAL_RANGE = 1.0  # initial weights uniform in [-INITIAL_RANGE, INITIAL_RANGE]

#: Options of network training that mean nothing here, with the default they must keep.
NETWORK_OPTIONS = (("net", "--net", "mlp"), ("hidden", "--hidden", None), ("channels", "--channels", (32, 32)),
                   ("dueling", "--dueling", False), ("double", "--no-double", True), ("shaping", "--shaping", None),
                   ("batch", "--batch", None), ("gamma", "--gamma", 0.99), ("self_pool", "--self-pool", 1),
                   ("snapshot_every", "--snapshot-every", SELF_REFRESH), ("opponent_pool", "--opponent-pool", None),
                   ("promote_at", "--promote-at", None), ("cell", "--cell", None), ("targets", "--targets", RESULT_TARGETS),
                   ("returns", "--returns", False), ("validity", "--validity", None))  # fmt: skip

Node = tuple[Sequence[float], float]  # an interior node's features and its search value


def check_options(config: TrainConfig) -> None:
    """Refuse, in one line, the network options these algorithms have no use for."""
    for name, option, default in NETWORK_OPTIONS:
        if getattr(config, name) != default:
            raise arena.ArenaError(f"--algorithm {config.algorithm} learns the weights of a linear evaluation: it takes no {option}")
    if config.depth is not None and not 1 <= config.depth <= MAX_DEPTH:
        raise arena.ArenaError(f"--depth must be between 1 and {MAX_DEPTH}, got {config.depth}")


def win_target(returns: Sequence[float], player: int) -> float:
    """A finished game's value for `player`: WIN_TARGET times its margin over the best other seat, halved."""
    mine = returns[player]
    best_other = max(r for i, r in enumerate(returns) if i != player) if len(returns) > 1 else 0.0
    return WIN_TARGET * (mine - best_other) / 2


class Search:
    """A depth-limited search of one position for `root`'s seat, V(s) = weights . game.features(s, root) at the leaves."""

    def __init__(self, game: arena.Game, weights: Sequence[float], root: int) -> None:
        self.features = game.features
        self.evaluate = linear_evaluation(game, weights)
        self.root = root
        #: (features, value) of every interior node `minimax` searched, children before parents.
        self.interior: list[Node] = []
        self.nodes = 0

    def leaf(self, state: arena.State) -> float:
        self.nodes += 1
        if state.current_player < 0:
            return win_target(state.returns(), self.root)
        return self.evaluate(state, self.root)

    @staticmethod
    def children(state: arena.State) -> list[tuple[int, arena.State]]:
        out = []
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            out.append((action, child))
        return out

    def minimax(self, state: arena.State, depth: int) -> float:
        """The full-width minimax value of `state`; every interior node is recorded in `interior`."""
        if depth <= 0 or state.current_player < 0:
            return self.leaf(state)
        self.nodes += 1
        values = [self.minimax(child, depth - 1) for _, child in self.children(state)]
        value = max(values) if state.current_player == self.root else min(values)
        self.interior.append((self.features(state, self.root), value))
        return value

    def alphabeta(self, state: arena.State, depth: int, alpha: float, beta: float) -> float:
        """Fail-soft alpha-beta: the exact value when it lies in (alpha, beta), else a bound beyond it."""
        if depth <= 0 or state.current_player < 0:
            return self.leaf(state)
        self.nodes += 1
        maximise = state.current_player == self.root
        children = [child for _, child in self.children(state)]
        if depth >= 2:
            scored = sorted(((self.leaf(child), i) for i, child in enumerate(children)), reverse=maximise)
            children = [children[i] for _, i in scored]
        value = -math.inf if maximise else math.inf
        for child in children:
            found = self.alphabeta(child, depth - 1, alpha, beta)
            if maximise:
                value = max(value, found)
                alpha = max(alpha, value)
            else:
                value = min(value, found)
                beta = min(beta, value)
            if alpha >= beta:
                break
        return value

    def root_values(self, state: arena.State, depth: int, full: bool) -> tuple[float, list[int]]:
        """The root's value and its best moves (all of equal value). `full`: minimax, recording the root
        too; else alpha-beta, each move searched with alpha just below the best so far (a move equal to it is seen)."""
        best, moves = -math.inf, []
        for action, child in self.children(state):
            if full:
                value = self.minimax(child, depth - 1)
            else:
                value = self.alphabeta(child, depth - 1, math.nextafter(best, -math.inf), math.inf)
            if value > best:
                best, moves = value, [action]
            elif value == best:
                moves.append(action)
        if full:
            self.interior.append((self.features(state, self.root), best))
        return best, moves


def gradient_step(weights: np.ndarray, nodes: Sequence[Node], lr: float) -> float:
    """weights += lr * sum of (value - weights . features) * features over `nodes`; returns the mean squared error."""
    features = np.asarray([f for f, _ in nodes], dtype=np.float64)
    targets = np.asarray([v for _, v in nodes], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is stopped by its caller, in one line
        errors = targets - features @ weights
        weights += lr * (errors @ features)
        return float(np.mean(errors * errors))


@dataclass(frozen=True)
class BootstrapPlan:
    """A validated request: the game, the opponents, the search depth and learning rate."""

    config: TrainConfig
    game: arena.Game
    opponent: AgentEntry | None  # None: self-play
    evaluator: AgentEntry | None
    depth: int
    lr: float
    log_every: int
    eval_every: int
    resumed: Resumed | None


def shape(config: TrainConfig) -> dict[str, Any]:
    """What a resumed state must match: the algorithm (weights of a linear evaluation)."""
    return {"algorithm": config.algorithm}


def plan(config: TrainConfig, registry: Registry) -> BootstrapPlan:
    """Check everything the user gave before any training; ArenaError (one line) otherwise."""
    check_numbers(config)
    game = make_game(registry, config.game)
    if not has_features(game):
        raise arena.ArenaError(f"--algorithm {config.algorithm} learns weights for the game's features, and game "
                               f"'{game.info.id}' offers none (Game.feature_names/features)")  # fmt: skip
    if not game.info.perfect_information:
        raise arena.ArenaError(f"--algorithm {config.algorithm} searches the full game tree and cannot train on "
                               f"'{game.info.id}', a game of imperfect information")  # fmt: skip
    opponent = make_opponent_entry(registry, config.opponent, game, db=config.db)
    evaluator = make_opponent_entry(registry, config.eval_opponent, game, "--eval-opponent", config.db) if config.eval_games else None
    check_writable(config.out)
    check_writable(metrics_path(config.out))
    check_writable(train_state.state_path(config.out))
    resumed = read_resumed(config, game, weights_metadata(game), shape(config))
    return BootstrapPlan(config, game, opponent, evaluator, config.depth or DEFAULT_DEPTH,
                         config.lr if config.lr is not None else DEFAULT_LR[config.algorithm],
                         config.log_every or max(1, config.episodes // 200), config.eval_every or max(1, config.episodes // 10),
                         resumed)  # fmt: skip


def initial_weights(config: TrainConfig, size: int) -> np.ndarray:
    rng = np.random.default_rng(derive_seed(config.seed, "initial weights"))
    return rng.uniform(-INITIAL_RANGE, INITIAL_RANGE, size)


def agent_spec(depth: int, path: str) -> str:
    """The agent that plays the written weights as the learner searched: minimax at the training depth."""
    return str(Spec("minimax", {"depth": str(depth), "eval": "linear", "weights": path}))


class Bootstrap:
    """Plays the training episodes and moves the weights; `weights` is the current vector."""

    def __init__(self, plan: BootstrapPlan, registry: Registry, weights: np.ndarray) -> None:
        self.plan = plan
        self.game = plan.game
        self.weights = weights
        self.full = plan.config.algorithm == "treestrap"
        self.losses: list[float] = []
        self.makers = {entry.label: entry.maker(registry) for entry in (plan.opponent, plan.evaluator) if entry is not None}

    def learner_move(self, state: arena.State, rng: random.Random) -> int:
        """Search, update the weights from the search, and answer the best move (ties by `rng`)."""
        search = Search(self.game, self.weights.tolist(), state.current_player)
        value, moves = search.root_values(state, self.plan.depth, self.full)
        nodes = search.interior if self.full else [(self.game.features(state, state.current_player), value)]
        self.losses.append(gradient_step(self.weights, nodes, self.plan.lr))
        if not np.isfinite(self.weights).all():
            raise arena.ArenaError(f"the weights diverged (not finite) with --lr {self.plan.lr:g}: give a smaller --lr")
        return moves[0] if len(moves) == 1 else rng.choice(moves)

    def play(self, number: int) -> str:
        """Training episode `number`; the outcome for seat number % players."""
        config, players = self.plan.config, self.game.num_players
        seat = number % players
        seed = derive_seed(config.seed, "episode", number)
        rng = random.Random(derive_seed(seed, "ties"))
        entry = self.plan.opponent
        game = opponent_seated(self.game, entry, seat)
        others: dict[int, Any] = {}
        if entry is not None:
            others = {other: self.makers[entry.label](game, other, seed) for other in range(players) if other != seat}
        state = game.new_initial_state(seed)
        for _ in range(config.max_turns):
            if state.is_terminal():
                break
            player = state.current_player
            if player in others:
                action = _opponent_move(others[player], state, state.legal_actions(), entry.label if entry else SELF)
            else:
                action = self.learner_move(state, rng)
            state.apply(action)
        return outcomes_from_returns(state.returns())[1][seat] if state.is_terminal() else DRAW

    def evaluate(self) -> tuple[float, float, float]:
        """`minimax` with the current weights at the training depth against the evaluation opponent, on fixed seeds."""
        entry, config = self.plan.evaluator, self.plan.config
        assert entry is not None
        tally = Tally(config.eval_games)
        players = self.game.num_players
        for number in range(config.eval_games):
            seat = number % players
            seed = derive_seed(config.seed, "evaluation", number)
            game = opponent_seated(self.game, entry, seat)
            agents: list[arena.Agent] = [
                MinimaxAgent(game, other, seed, depth=self.plan.depth, eval="linear", weights=tuple(self.weights.tolist()))
                if other == seat else self.makers[entry.label](game, other, seed)
                for other in range(players)
            ]  # fmt: skip
            tally.add(play_match(game, agents, seed, config.max_turns, trusted=True).outcomes[seat])
        return tally.rates()


def train(config: TrainConfig, registry: Registry, report: Callable[[str], None], progress: bool,
          stop: Callable[[], bool]) -> TrainSummary:  # fmt: skip
    """Train and write the weights file, its metrics and its state; see the module docstring."""
    checked = plan(config, registry)
    game, resumed = checked.game, checked.resumed
    settings = {**asdict(config), "depth": checked.depth, "lr": checked.lr, "log_every": checked.log_every,
                "eval_every": checked.eval_every, "win_target": WIN_TARGET}  # fmt: skip
    for key in (*NOT_SETTINGS, *(name for name, _, _ in NETWORK_OPTIONS)):
        del settings[key]
    weights = initial_weights(config, len(game.feature_names))
    tally = Tally(config.window)
    first, earlier_seconds, previous_rows = 0, 0.0, []
    learner = Bootstrap(checked, registry, weights)
    if resumed is not None:
        first, earlier_seconds = resumed.episodes, float(resumed.meta.get("seconds", 0.0))
        weights[:] = resumed.meta["weights"]
        for outcome in resumed.meta["recent"]:
            tally.add(outcome)
        learner.losses[:] = resumed.meta["losses"]
        previous_rows = earlier_metrics(resumed)
    bar = ProgressBar("episodes", progress)
    last_eval = ""
    start = time.perf_counter()

    def write(done: int) -> None:
        details = {"algorithm": config.algorithm, "seed": config.seed, "episodes": done, "settings": settings}
        write_weights(config.out, game, weights.tolist(), details)
        meta = {"episodes": done, "game": weights_metadata(game), "shape": shape(config), "weights": weights.tolist(),
                "recent": list(tally.recent), "losses": list(learner.losses), "settings": settings,
                "seconds": round(earlier_seconds + time.perf_counter() - start, 3)}  # fmt: skip
        train_state.write_state(config.out, meta, {})

    with bar, MetricsWriter(metrics_path(config.out)) as metrics:
        begin_metrics(metrics, settings, resumed, previous_rows)
        for number in range(first, config.episodes):
            if stop():
                write(number)
                raise interruption(config, number)
            tally.add(learner.play(number))
            done = number + 1
            if done % checked.log_every == 0 or done == config.episodes:
                write_train_row(metrics, done, tally, learner.losses, None, earlier_seconds + time.perf_counter() - start)
            if checked.evaluator is not None and (done % checked.eval_every == 0 or done == config.episodes):
                last_eval = write_eval_row(metrics, done, checked.evaluator.label, config.eval_games, learner.evaluate())
            if config.save_every and done % config.save_every == 0 and done < config.episodes:
                write(done)
            show_progress(bar, report, config, done, tally, last_eval, start)
    seconds = time.perf_counter() - start
    write(config.episodes)
    win, draw, loss = tally.rates()
    resumed_line = f" (resumed after {first})" if resumed is not None else ""
    shown = ", ".join(f"{name} {w:.4g}" for name, w in zip(game.feature_names, weights.tolist()))
    report(f"trained {config.algorithm} (depth {checked.depth}, lr {checked.lr:g}) on {game.label()} against {config.opponent}: "
           f"{config.episodes} episodes{resumed_line} in {seconds:.1f}s, {tally.line()}; weights: {shown}")  # fmt: skip
    report(f"play it: --agents {agent_spec(checked.depth, config.out)}")
    return TrainSummary(config.episodes, len(tally.recent), win, draw, loss, seconds, config.out)
