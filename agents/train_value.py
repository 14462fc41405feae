"""Afterstate values learned from final results (`arena train --algorithm value`): the Santorini report's ANN and CNN.

The Santorini report's algorithm 3 (its sections 3.2 and 3.3): at each of its moves the learner applies every legal
action to a copy of the position, values each position that results (the afterstate) with its network, and plays the
best, or with probability epsilon a random one (the DQN's linear schedule, agents/neural_train.epsilon_at). When the
game ends, every afterstate it chose is moved towards the final result R (+1 a win, 0 a draw or the turn limit, -1 a
loss), discounted by `--gamma` for each later move of the learner (1: the report's plain R), by one gradient step of
Adam (`--lr`) on the squared error per episode. The metrics' `loss` is each episode's summed squared error, what the
report's figures 5 and 6 plot.

`--targets SPEC` (an `mcts` spec of simulations and play-outs, e.g. `mcts:simulations=30`) moves each chosen
afterstate instead towards the value that search finds from it for the seat to move there (the mean return of its
simulations, agents/mcts.MCTSAgent.root_value; its RNG seeded by the episode and the position): the report's MCTS_ANN
and MCTS_CNN, whose training positions were valued by MCTS trees of about 30 random play-outs a node, and with
`rollout=heuristic` (play-outs by the game's evaluation, Santorini's the report's manual linear weights) its
"Combined". The report walked its trees by UCB1; here the positions are those the learner chooses in its games.

Values are for the seat to move, as `minimax:eval=model` and `mcts:model=FILE` read a network's value: the network
sees an afterstate's observation for the seat to move there, and its target is R when that is the learner's seat and
-R when it is the opponent's (two players, zero-sum). A finished afterstate is valued by its result, not by the
network, and is not learned from.

Networks (`--net mlp|resmlp|conv`, `--hidden`, `--channels`) end in one output through tanh (agents/train_modules.
StateValue). The file is TorchScript (`.pt`) whose metadata says `output: value`; the `neural` agent refuses it (it
has no policy), and `minimax:depth=1,eval=model,model=FILE` plays it one ply ahead as the report's agents did (deeper
depths, or MCTS with uniform priors, work too). Two-player games of perfect information only (the learner looks at
the real position after each of its moves); the opponent is any agent (the report's: random), not self-play.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import numpy as np

import arena
from agents import train_nets, train_state
from agents.neural import VALUE_OUTPUT
from agents.neural_train import (
    EPSILON_DECAY_SHARE,
    EPSILON_END,
    EPSILON_START,
    RESULT_TARGETS,
    VALUE,
    Chooser,
    TrainConfig,
    Trajectory,
    epsilon_at,
    final_reward,
    torchscript_metadata,
)
from agents.train_adam import Adam
from arena.agents import AgentEntry, one_agent, resolve
from arena.library.catalog import stored_agent_lookup
from arena.match import outcomes_from_returns
from arena.seeding import derive_seed

if TYPE_CHECKING:
    from agents.mcts import MCTSAgent
    from agents.neural_train import Plan, Values
    from arena.plugins import Registry


#: An afterstate: its observation for the seat to move there; +1 if that is the learner, else -1; the position itself
#: when a search values it (--targets SPEC), else None.
Afterstate = tuple[np.ndarray, float, arena.State | None]


def check_options(config: TrainConfig) -> None:
    """Refuse, in one line, what an afterstate value learner cannot use."""
    if config.net not in train_nets.FEATURE_NETS:
        raise arena.ArenaError(f"--algorithm value learns one value per position: --net {', '.join(train_nets.FEATURE_NETS)}, "
                               f"not {config.net}")  # fmt: skip
    if config.shaping is not None:
        raise arena.ArenaError("--algorithm value learns from the final result only: it takes no --shaping")
    if config.batch is not None:
        raise arena.ArenaError("--algorithm value updates once per episode, from that episode's positions: it takes no --batch")


def check_game(game: arena.Game, opponent: object | None) -> None:
    """Two players, perfect information, and a fixed opponent."""
    if game.num_players != 2 or not game.info.perfect_information:
        raise arena.ArenaError(f"--algorithm value learns a zero-sum value for two-player games of perfect information; "
                               f"{game.label()} is not one")  # fmt: skip
    if opponent is None:
        raise arena.ArenaError("--algorithm value trains against a fixed opponent (the Santorini report's: random), "
                               "not --opponent self")  # fmt: skip


def target_search(registry: Registry, text: str, game: arena.Game, db: str | None = None) -> AgentEntry | None:
    """`--targets`: None for `result`, else the mcts agent (UCB1 and play-outs, a number of simulations; a spec or a
    name registered in `db`) whose search from each chosen position gives that position's target: the Santorini
    report's MCTS_ANN and MCTS_CNN, and with rollout=heuristic its Combined."""
    if text == RESULT_TARGETS:
        return None
    spec, named = one_agent(registry, text, "--targets", "target search", stored_agent_lookup(db))
    entry = resolve(registry, spec, game, named)
    if entry.type_id != "mcts" or entry.params.get("model") or entry.params.get("time"):
        raise arena.ArenaError(f"--targets takes '{RESULT_TARGETS}' or an mcts spec of simulations and play-outs (e.g. "
                               f"mcts:simulations=30), not {text!r}")  # fmt: skip
    return entry


def result_for(state: arena.State, player: int) -> float:
    """A finished position's value for `player`: +1 a win, -1 a loss, 0 a draw."""
    return final_reward(outcomes_from_returns(state.returns())[1][player])


def final_targets(signs: list[float], reward: float, gamma: float, finishing: bool = False) -> list[float]:
    """Each chosen afterstate's target: the final `reward` for the seat to move there (`sign` +1 the learner, -1 the
    opponent), discounted by `gamma` for each later move of the learner: the later chosen afterstates, and the move
    that finished the game when the learner made it (`finishing`; its afterstate is the result, not learned)."""
    last = len(signs) - 1 + int(finishing)
    return [sign * reward * gamma ** (last - k) for k, sign in enumerate(signs)]


class AfterstateValue:
    """The learner: a state-value network, epsilon-greedy over afterstates, moved towards final results."""

    output = VALUE_OUTPUT

    def __init__(self, torch: Any, plan: Plan) -> None:
        from agents.train_modules import StateValue

        config = plan.config
        self.torch, self.plan = torch, plan
        body = train_nets.build(config.net, plan.game, plan.shape, config.widths, config.channels, False, outputs=1)
        self.module = StateValue(body, plan.game.num_distinct_actions)
        self.optimizer = Adam(torch, self.module.parameters(), lr=plan.lr)
        self.rng = random.Random(derive_seed(config.seed, "actions"))
        self.episode = 0
        self.losses: list[float] = []
        self.chosen: list[Afterstate] = []  # this episode's afterstates, in order
        self.finished = False  # whether the learner's own move ended the episode under way
        self.search: MCTSAgent | None = None
        if plan.targets is not None:
            from agents.mcts import MCTSAgent

            self.search = MCTSAgent(plan.game, 0, 0, **{k: v for k, v in plan.targets.params.items() if k != "seed"})

    def epsilon(self) -> float:
        return epsilon_at(self.episode, self.plan.config.episodes)

    def afterstate(self, state: arena.State, action: int) -> tuple[float | None, Afterstate | None]:
        """The position after `action`: its result for the mover when it is finished (no afterstate), else the afterstate."""
        mover = state.current_player
        child = state.clone()
        child.apply(action)
        if child.is_terminal():
            return result_for(child, mover), None
        observation = np.asarray(child.observation(child.current_player), dtype=np.float32)
        return None, (observation, 1.0 if child.current_player == mover else -1.0, child if self.search is not None else None)

    def best(self, state: arena.State, legal: list[int]) -> tuple[int, Afterstate | None]:
        """The legal action whose afterstate the network values most for the mover (the first of equals)."""
        values: list[float] = []
        afterstates: list[Afterstate | None] = []
        for action in legal:
            result, after = self.afterstate(state, action)
            values.append(result if result is not None else 0.0)
            afterstates.append(after)
        rows = [i for i, after in enumerate(afterstates) if after is not None]
        if rows:
            batch = self.torch.from_numpy(np.stack([afterstates[i][0] for i in rows]))  # type: ignore[index]
            with self.torch.no_grad():
                predicted = self.module(batch)[1].numpy()
            for row, i in enumerate(rows):
                values[i] = afterstates[i][1] * float(predicted[row])  # type: ignore[index]
        index = int(np.argmax(values))
        return legal[index], afterstates[index]

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int:
        if self.rng.random() < self.epsilon():
            action = legal[self.rng.randrange(len(legal))]
            after = self.afterstate(state, action)[1]
        else:
            action, after = self.best(state, legal)
        if after is not None:
            self.chosen.append(after)
        self.finished = after is None
        return action

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        self.episode = episode + 1
        chosen, self.chosen = self.chosen, []
        finishing, self.finished = self.finished, False
        if not chosen:
            return
        torch = self.torch
        if self.search is None:
            targets = final_targets([sign for _, sign, _ in chosen], trajectory.reward, self.plan.config.gamma, finishing)
        else:
            targets = self.search_values([state for _, _, state in chosen if state is not None], episode)
        predicted = self.module(torch.from_numpy(np.stack([observation for observation, _, _ in chosen])))[1]
        squared = (predicted - torch.tensor(targets, dtype=torch.float32)).pow(2)
        self.optimizer.zero_grad()
        squared.mean().backward()
        self.optimizer.step()
        self.losses.append(float(squared.sum().detach()))

    def search_values(self, states: list[arena.State], episode: int) -> list[float]:
        """The --targets search's value of each position for its seat to move, its RNG seeded by episode and position
        (so that a resumed run searches as an uninterrupted one)."""
        assert self.search is not None
        values = []
        for number, state in enumerate(states):
            self.search.rng.seed(derive_seed(self.plan.config.seed, "targets", episode, number))
            values.append(self.search.root_value(state))
        return values

    def greedy(self) -> Chooser:
        return lambda observation, legal, state: self.best(state, legal)[0]

    def snapshot(self) -> Values:
        raise arena.ArenaError("--algorithm value has no policy to play as a self-play opponent")

    def save(self, path: str, training: dict[str, Any]) -> None:
        metadata = torchscript_metadata(self.plan.game, VALUE_OUTPUT, VALUE, training)
        train_nets.save_torchscript(self.torch, self.module, path, metadata)
        self.module.train()

    def settings(self) -> dict[str, Any]:
        return {"epsilon": [EPSILON_START, EPSILON_END, EPSILON_DECAY_SHARE]}

    def finish(self) -> None:
        pass

    def state(self) -> tuple[dict[str, Any], train_state.Arrays]:
        arrays = {**train_state.module_arrays("net", self.module), **train_state.optimizer_arrays(self.optimizer)}
        return {"rng": train_state.random_state(self.rng), "episode": self.episode}, arrays

    def restore(self, meta: dict[str, Any], arrays: train_state.Arrays) -> None:
        train_state.load_module(self.torch, "net", self.module, arrays)
        train_state.load_optimizer(self.torch, self.optimizer, arrays)
        train_state.set_random_state(self.rng, meta["rng"])
        self.episode = int(meta["episode"])
