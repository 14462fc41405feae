"""DDPG over discrete actions (`arena train --algorithm ddpg`), as the Onitama report's agent (Lillicrap et al. 2015).

- The **actor** is one of `arena train`'s networks (`--net mlp|conv|fcn`) with one output per action
  id; its action vector mu(s) is the softmax of those outputs over the legal actions (illegal ones
  exactly 0): Arena masks illegal actions, as it does for every learner (the report's "hand of god").
  `--validity DESIGN` gives it instead one of the report's eight actors with a validity layer that
  learns the mask of legal actions (agents/train_validity.py).
- The **critic** Q(s, a) is an MLP (the `--hidden` widths) over the flattened observation and an
  action vector (agents/train_modules.py `Critic`).
- **Acting**: Gaussian noise of standard deviation `--noise` (0.1) is added to mu(s) and the executed
  action is the legal action of greatest noisy output; the noisy vector (illegal entries 0) is what
  is stored, as DDPG stores the action it executed, a_t = mu(s_t) + N_t.
- **Learning**, one gradient step per move played once the buffer holds a minibatch (`--batch`, 64),
  on transitions from one learner move to its next (the opponent's replies are the environment, as
  DQN's): the critic minimises (r + gamma Q'(s', mu'(s')) - Q(s, a))^2 with the target networks, then
  the actor maximises Q(s, mu(s)) (the deterministic policy gradient through the critic), then both
  target networks move towards their networks by `--tau` (0.005). The critic learns at `--lr`
  (0.001), the actor at a tenth of it (DDPG's 1e-4 and 1e-3).

The saved file is the actor with `output: logits`, in the same checkpoint formats as the other
algorithms (`.npz` for the plain MLP, TorchScript otherwise), so `neural:checkpoint=FILE` plays it
(the argmax of the logits is the argmax of mu). The `--resume` state holds the actor, the critic,
both targets, both optimisers, the replay buffer with its masks and action vectors, and the noise
and sampling generators.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np

from agents import train_state
from agents.neural_train import MASKED, REPLAY_CAPACITY, Net, ReplayBuffer, Trajectory
from agents.train_adam import Adam
from arena.seeding import derive_seed

if TYPE_CHECKING:
    import arena
    from agents.neural_train import Plan

TAU, NOISE = 0.005, 0.1  # the defaults: soft update share; the exploration noise's standard deviation
ACTOR_LR_SHARE = 0.1  # the actor's learning rate is this share of --lr (the critic's)


class ActionReplay(ReplayBuffer):
    """The replay ring with, per transition, the legal actions where it was played and the action vector executed."""

    FIELDS = (*ReplayBuffer.FIELDS, "masks", "vectors")

    def __init__(self, capacity: int, inputs: int, actions: int, gamma: float) -> None:
        super().__init__(capacity, inputs, actions, gamma)
        self.masks = np.zeros((capacity, actions), dtype=bool)
        self.vectors = np.zeros((capacity, actions), dtype=np.float32)

    def add_with_vectors(self, trajectory: Trajectory, vectors: list[np.ndarray]) -> int:
        start = self.cursor
        steps = self.add_episode(trajectory)
        index = (start + np.arange(steps)) % self.capacity
        if steps:
            self.masks[index] = np.stack(trajectory.masks)
            self.vectors[index] = np.stack(vectors)
        return steps


def action_vector(logits: np.ndarray, legal: list[int]) -> np.ndarray:
    """mu(s): the softmax of the outputs over the legal actions, 0 elsewhere (float32)."""
    vector = np.zeros(len(logits), dtype=np.float32)
    chosen = logits[legal].astype(np.float64)
    weights = np.exp(chosen - chosen.max())
    vector[legal] = weights / weights.sum()
    return vector


class DDPG:
    """Actor-critic with a deterministic (softmax) policy over the legal actions; the saved outputs are the actor's logits."""

    output = "logits"

    def __init__(self, torch: Any, plan: Plan) -> None:
        from agents.train_modules import Critic

        config = plan.config
        self.torch, self.plan = torch, plan
        actions = plan.game.num_distinct_actions
        self.network = self.actor(torch, plan)
        self.critic = Critic(plan.inputs, actions, config.widths)
        self.target_actor, self.target_critic = copy.deepcopy(self.network.module), copy.deepcopy(self.critic)
        self.actor_optimizer = Adam(torch, self.network.module.parameters(), lr=plan.lr * ACTOR_LR_SHARE)
        self.critic_optimizer = Adam(torch, self.critic.parameters(), lr=plan.lr)
        self.buffer = ActionReplay(REPLAY_CAPACITY, plan.inputs, actions, plan.config.gamma)
        self.tau = config.tau if config.tau is not None else TAU
        self.noise = config.noise if config.noise is not None else NOISE
        self.noise_rng = np.random.default_rng(derive_seed(config.seed, "noise"))
        self.sampler = np.random.default_rng(derive_seed(config.seed, "replay"))
        self.vectors: list[np.ndarray] = []  # the action vectors executed in the episode under way
        self.steps = 0
        self.episode = 0
        self.losses: list[float] = []  # the critic's, since the last metrics row
        self.actor_losses: list[float] = []  # the actor's, since the last metrics row

    def actor(self, torch: Any, plan: Plan) -> Net:
        """The actor network: `--net`'s, one output per action id."""
        return Net(torch, plan)

    def epsilon(self) -> float | None:
        return None

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int:
        return self.act(self.network.values(observation), legal)

    def act(self, logits: np.ndarray, legal: list[int]) -> int:
        """The legal action of greatest noisy mu(s), mu(s) the softmax of the actor's outputs `logits` over `legal`."""
        vector = action_vector(logits, legal)
        noisy = vector + self.noise_rng.normal(0.0, self.noise, len(vector)).astype(np.float32)
        stored = np.zeros_like(noisy)
        stored[legal] = noisy[legal]
        self.vectors.append(stored)
        return legal[int(np.argmax(noisy[legal]))]

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        self.episode = episode + 1
        vectors, self.vectors = self.vectors, []
        added = self.buffer.add_with_vectors(trajectory, vectors)
        if self.buffer.size < self.plan.batch:
            return
        for _ in range(added):
            self.gradient_step()
        self.network.refresh()

    def policy(self, module: Any, observations: Any, masks: Any) -> Any:
        """The action vectors of a batch: the softmax of `module`'s outputs over each row's legal actions."""
        logits = module(observations.view(-1, *self.plan.shape)).masked_fill(~masks, MASKED)
        return self.torch.softmax(logits, dim=1)

    def gradient_step(self) -> None:
        torch, buffer = self.torch, self.buffer
        index = self.sampler.integers(0, buffer.size, self.plan.batch)
        batch = {name: torch.from_numpy(getattr(buffer, name)[index]) for name in ActionReplay.FIELDS}
        self.critic_step(batch)
        self.actor_losses.append(self.actor_step(batch["observations"], batch["masks"]))
        with torch.no_grad():
            for target, source in ((self.target_actor, self.network.module), (self.target_critic, self.critic)):
                for kept, moved in zip(target.parameters(), source.parameters(), strict=True):
                    kept.mul_(1.0 - self.tau).add_(moved, alpha=self.tau)
        self.steps += 1

    def critic_step(self, batch: dict[str, Any]) -> None:
        torch = self.torch
        with torch.no_grad():
            following = self.policy(self.target_actor, batch["next_observations"], batch["next_masks"])
            next_values = self.target_critic(batch["next_observations"], following)
            targets = batch["rewards"] + self.plan.config.gamma * (1.0 - batch["done"]) * next_values
        loss = torch.nn.functional.mse_loss(self.critic(batch["observations"], batch["vectors"]), targets)
        self.critic_optimizer.zero_grad()
        loss.backward()
        self.critic_optimizer.step()
        self.losses.append(float(loss.detach()))

    def actor_step(self, observations: Any, masks: Any) -> float:
        """One step of the actor up the critic's Q(s, mu(s)); returns its loss before it, -Q (the mean over the batch)."""
        values = self.critic(observations, self.policy(self.network, observations, masks))
        loss = -values.mean()
        self.actor_optimizer.zero_grad()
        loss.backward()  # the critic's gradients too: zeroed before its next step
        self.actor_optimizer.step()
        return float(loss.detach())

    def train_metrics(self) -> dict[str, Any]:
        """What the next `train` row adds: the actor's mean loss since the last row (then emptied); `loss` is the critic's."""
        losses, self.actor_losses = self.actor_losses, []
        return {"actor_loss": float(np.mean(losses)) if losses else None}

    def finish(self) -> None:
        pass

    def state(self) -> tuple[dict[str, Any], train_state.Arrays]:
        replay, replay_arrays = self.buffer.state()
        modules = {"net": self.network.module, "target": self.target_actor, "critic": self.critic, "target_critic": self.target_critic}
        arrays = {**{k: v for prefix, module in modules.items() for k, v in train_state.module_arrays(prefix, module).items()},
                  **train_state.optimizer_arrays(self.actor_optimizer),
                  **train_state.optimizer_arrays(self.critic_optimizer, "critic_adam"), **replay_arrays}  # fmt: skip
        meta = {"noise_rng": self.noise_rng.bit_generator.state, "sampler": self.sampler.bit_generator.state,
                "steps": self.steps, "episode": self.episode, "replay": replay, "actor_losses": list(self.actor_losses)}  # fmt: skip
        return meta, arrays

    def restore(self, meta: dict[str, Any], arrays: train_state.Arrays) -> None:
        torch = self.torch
        for prefix, module in (("net", self.network.module), ("target", self.target_actor), ("critic", self.critic),
                               ("target_critic", self.target_critic)):  # fmt: skip
            train_state.load_module(torch, prefix, module, arrays)
        train_state.load_optimizer(torch, self.actor_optimizer, arrays)
        train_state.load_optimizer(torch, self.critic_optimizer, arrays, "critic_adam")
        self.noise_rng.bit_generator.state = meta["noise_rng"]
        self.sampler.bit_generator.state = meta["sampler"]
        self.steps, self.episode = int(meta["steps"]), int(meta["episode"])
        self.actor_losses = [float(x) for x in meta.get("actor_losses", [])]  # (none in states written before they were kept)
        self.buffer.restore(meta["replay"], arrays)
        self.network.refresh()

    def settings(self) -> dict[str, Any]:
        return {"replay_capacity": REPLAY_CAPACITY, "tau": self.tau, "noise": self.noise,
                "actor_lr": self.plan.lr * ACTOR_LR_SHARE, "critic_hidden": list(self.plan.config.widths)}  # fmt: skip
