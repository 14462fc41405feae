"""`arena train --algorithm ddpg --validity DESIGN`: the Onitama report's DDPG actors with a validity layer (its section 5).

The report's actor has, besides its action layer (softmax), a validity layer (sigmoid) trained by mean squared error
towards the 0/1 mask of the legal actions, so that the actor learns which moves are legal instead of relying on the
mask (its "hand of god", which Arena keeps: the executed action is always legal). Its eight designs
(agents/train_modules.py `ValidityActor`), on a preprocess that is `--net` (mlp, resmlp or conv) built with a feature
output of the last `--hidden` width, then ReLU:

- `actions_only`: preprocess -> action layer, no validity layer (the report's baseline);
- `val_after_actions`: preprocess -> action layer -> validity layer (reading the action layer's softmax);
- `actions_after_val`: preprocess -> validity layer -> action layer (reading the validity layer's sigmoid);
- `val_branch_actions`: both layers branch from the preprocess;
- `val_after_actions_multiply`, `actions_after_val_multiply`, `val_branch_actions_multiply`: the same, the policy
  softmax(actions) * validity, renormalised;
- `dual`: a validity network and an actions network, each its own preprocess, multiplied as above.

Training is DDPG's (agents/train_ddpg.py) with the actor's loss -Q(s, mu(s)) + MSE(validity(s), legal mask(s)) (no
validity term for `actions_only`); mu(s) is the softmax over the legal actions of the actor's output (for the multiply
designs the product restricted to the legal actions, renormalised); the critic is unchanged.

The **valid rate** is, over the learner's moves in the last `--window` episodes, the share whose best action before
the mask (the argmax of the actor's output over every action id) is legal; it goes into the metrics' `train` rows as
`valid_rate`, with `validity_loss`, the validity layer's mean squared error since the previous row (null for
`actions_only`). The saved file is always TorchScript (`.pt`, metadata `validity`: the design) with `output: logits`:
the action logits, or for the multiply designs log softmax(actions) + log sigmoid(validity), so that the masked argmax
`neural:checkpoint=FILE` plays is the policy's.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

import arena
from agents import train_nets
from agents.neural_train import MASKED, VALIDITY_DESIGNS, Net, Trajectory
from agents.train_ddpg import DDPG

if TYPE_CHECKING:
    from agents.neural_train import Plan, TrainConfig
    from agents.train_state import Arrays

DESIGNS = VALIDITY_DESIGNS


def check_validity(config: TrainConfig) -> None:
    """Refuse, in one line, a design that is not the report's, or --validity off DDPG or on a network without a feature output."""
    if config.validity not in DESIGNS:
        raise arena.ArenaError(f"unknown --validity design '{config.validity}' (choose {', '.join(DESIGNS)})")
    if config.algorithm != "ddpg":
        raise arena.ArenaError(f"--validity is a design of DDPG's actor: use it with --algorithm ddpg, not {config.algorithm}")
    if config.net not in train_nets.FEATURE_NETS:
        raise arena.ArenaError(f"--validity builds its layers on a network's features: use --net {', '.join(train_nets.FEATURE_NETS)}, "
                               f"not {config.net}")  # fmt: skip


def features(config: TrainConfig) -> int:
    """The width of the preprocess's output: the last hidden width."""
    return config.widths[-1]


def build_actor(plan: Plan) -> Any:
    """The design's actor module (agents/train_modules.ValidityActor). Imports torch."""
    from agents.train_modules import ValidityActor

    config = plan.config
    assert config.validity is not None
    width = features(config)

    def preprocess() -> Any:
        return train_nets.build(config.net, plan.game, plan.shape, config.widths, config.channels, False, outputs=width)

    first = preprocess()
    second = preprocess() if config.validity == "dual" else None
    return ValidityActor(first, width, plan.game.num_distinct_actions, config.validity, second)


class ValidityDDPG(DDPG):
    """DDPG whose actor is one of the report's validity designs: the validity layer's squared error joins the actor's
    loss, and the valid rate of its moves is counted."""

    def __init__(self, torch: Any, plan: Plan) -> None:
        super().__init__(torch, plan)
        self.design = str(plan.config.validity)
        self.moves: list[bool] = []  # the episode under way: whether each move's unmasked best action was legal
        self.recent: deque[tuple[int, int]] = deque(maxlen=plan.config.window)  # (valid moves, moves) per episode
        self.validity_losses: list[float] = []  # since the last metrics row

    def actor(self, torch: Any, plan: Plan) -> Net:
        return Net(torch, plan, build_actor(plan))

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int:
        logits = self.network.values(observation)
        self.moves.append(int(np.argmax(logits)) in legal)
        return self.act(logits, legal)

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        moves, self.moves = self.moves, []
        self.recent.append((sum(moves), len(moves)))
        super().learn(trajectory, episode)

    def valid_rate(self) -> float | None:
        """The share of the last `--window` episodes' moves whose best action before the mask was legal."""
        moves = sum(n for _, n in self.recent)
        return sum(v for v, _ in self.recent) / moves if moves else None

    def train_metrics(self) -> dict[str, Any]:
        """What the next `train` row adds: the valid rate, and the validity loss since the last row (then emptied)."""
        losses, self.validity_losses = self.validity_losses, []
        return {**super().train_metrics(), "valid_rate": self.valid_rate(),
                "validity_loss": float(np.mean(losses)) if losses else None}  # fmt: skip

    def actor_step(self, observations: Any, masks: Any) -> float:
        """One step of the actor down -Q(s, mu(s)) + MSE(validity(s), mask(s)); returns that loss before it."""
        torch = self.torch
        logits, validity = self.network.module.outputs(observations.view(-1, *self.plan.shape))
        values = self.critic(observations, torch.softmax(logits.masked_fill(~masks, MASKED), dim=1))
        loss = -values.mean()
        if self.design != "actions_only":
            error = torch.nn.functional.mse_loss(torch.sigmoid(validity), masks.float())
            loss = loss + error
            self.validity_losses.append(float(error.detach()))
        self.actor_optimizer.zero_grad()
        loss.backward()  # the critic's gradients too: zeroed before its next step
        self.actor_optimizer.step()
        return float(loss.detach())

    def state(self) -> tuple[dict[str, Any], Arrays]:
        meta, arrays = super().state()
        meta["validity"] = {"recent": [list(pair) for pair in self.recent], "losses": list(self.validity_losses)}
        return meta, arrays

    def restore(self, meta: dict[str, Any], arrays: Arrays) -> None:
        super().restore(meta, arrays)
        self.recent.clear()
        self.recent.extend((int(v), int(n)) for v, n in meta["validity"]["recent"])
        self.validity_losses = [float(x) for x in meta["validity"]["losses"]]

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "validity_features": features(self.plan.config)}
