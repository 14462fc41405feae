"""PyTorch modules of the network shapes (see agents/train_nets.py); imported only when training."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import nn


class Dense(nn.Linear):
    """nn.Linear whose TorchScript file is the same bytes in every process. TorchScript writes a module's constants
    (`__constants__`) in the order of a Python set of their names, which string hashing changes from process to
    process (PYTHONHASHSEED), so the same weights made other files; without constants the sizes are plain attributes."""

    __constants__: list[str] = []


class Convolution(nn.Conv2d):
    """nn.Conv2d whose TorchScript file is the same bytes in every process (see Dense)."""

    __constants__: list[str] = []


class Head(nn.Module):
    """A linear output layer, or a dueling pair: Q = V + A - mean(A)."""

    def __init__(self, width: int, outputs: int, dueling: bool) -> None:
        super().__init__()
        self.dueling = dueling
        self.value = Dense(width, 1 if dueling else outputs)
        self.advantage = Dense(width, outputs) if dueling else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dueling:
            advantage = self.advantage(x)
            return self.value(x) + advantage - advantage.mean(dim=1, keepdim=True)
        return self.value(x)


class MLP(nn.Module):
    def __init__(self, inputs: int, hidden: Sequence[int], outputs: int, dueling: bool) -> None:
        super().__init__()
        sizes = [inputs, *hidden]
        layers: list[nn.Module] = []
        for fan_in, fan_out in itertools.pairwise(sizes):
            layers += [Dense(fan_in, fan_out), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = Head(sizes[-1], outputs, dueling)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x.flatten(1)))


class StateValue(nn.Module):
    """A state-value network: the body's single output through tanh, in [-1, 1], for the seat to move. It answers as a
    policy-value network does, (per-action values, state value), with per-action values of zero: it has no policy, and
    its file says so (metadata `output`: `value`), so that the `neural` agent refuses it and search reads the value."""

    def __init__(self, body: nn.Module, actions: int) -> None:
        super().__init__()
        self.body = body
        self.actions = actions

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        value = torch.tanh(self.body(x)).view(-1)
        return torch.zeros([x.shape[0], self.actions], dtype=x.dtype), value


class ResidualUnit(nn.Module):
    """relu(x + W2 relu(W1 x)): two fully connected layers of x's width and an identity shortcut (He et al.)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.inner = nn.Sequential(Dense(width, width), nn.ReLU(), Dense(width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.inner(x))


class ResidualMLP(nn.Module):
    """The Reversi report's fully connected network with residual units: one layer to the first width, then a residual
    unit per further width (all one width: the shortcut adds x as it is)."""

    def __init__(self, inputs: int, hidden: Sequence[int], outputs: int, dueling: bool) -> None:
        super().__init__()
        self.body = nn.Sequential(Dense(inputs, hidden[0]), nn.ReLU(), *(ResidualUnit(width) for width in hidden[1:]))
        self.head = Head(hidden[0], outputs, dueling)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x.flatten(1)))


class Critic(nn.Module):
    """DDPG's Q(s, a): an MLP over the flattened observation and an action vector (one entry per action id), one output."""

    def __init__(self, inputs: int, actions: int, hidden: Sequence[int]) -> None:
        super().__init__()
        self.mlp = MLP(inputs + actions, hidden, 1, False)

    def forward(self, observations: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return self.mlp(torch.cat([observations.flatten(1), actions], dim=1)).squeeze(1)


def trunk(inputs: int, channels: Sequence[int]) -> nn.Sequential:
    """3x3 convolutions with same padding and ReLU."""
    layers: list[nn.Module] = []
    for width in channels:
        layers += [Convolution(inputs, width, 3, padding=1), nn.ReLU()]
        inputs = width
    return nn.Sequential(*layers)


class Conv(nn.Module):
    """Convolutions over [C, H, W] planes; with `extra` > 0 the input is flat, C*H*W plane values then `extra` more
    (Onitama's cards), which pass through a ReLU layer of their own and join the convolved planes."""

    def __init__(self, planes: int, height: int, width: int, channels: Sequence[int], hidden: int, outputs: int,
                 dueling: bool, extra: int = 0) -> None:  # fmt: skip
        super().__init__()
        self.shape = [planes, height, width]
        self.cells = planes * height * width
        self.extra = extra
        self.trunk = trunk(planes, channels)
        self.side = nn.Sequential(Dense(extra, extra), nn.ReLU()) if extra else nn.Identity()
        self.dense = nn.Sequential(Dense(channels[-1] * height * width + extra, hidden), nn.ReLU())
        self.head = Head(hidden, outputs, dueling)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.extra == 0:
            return self.head(self.dense(self.trunk(x).flatten(1)))
        planes = x[:, : self.cells].reshape([x.shape[0], self.shape[0], self.shape[1], self.shape[2]])
        joined = torch.cat([self.trunk(planes).flatten(1), self.side(x[:, self.cells :])], dim=1)
        return self.head(self.dense(joined))


class FCN(nn.Module):
    """Fully convolutional: any board size; output planes read off as action ids (Game.action_planes)."""

    def __init__(self, planes: int, channels: Sequence[int], action_planes: Sequence[tuple[int, int]], dueling: bool) -> None:
        super().__init__()
        self.row_trims = [int(r) for r, _ in action_planes]
        self.col_trims = [int(c) for _, c in action_planes]
        self.trunk = trunk(planes + 1, channels)  # + a constant plane: zero padding then marks the board's edge
        self.out = Convolution(channels[-1], len(action_planes), 1)
        self.dueling = dueling
        self.value = Dense(channels[-1], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.trunk(torch.cat([x, torch.ones_like(x[:, :1])], dim=1))
        planes = self.out(features)
        height, width = x.shape[2], x.shape[3]
        parts: list[torch.Tensor] = []
        for k in range(len(self.row_trims)):
            parts.append(planes[:, k, : height - self.row_trims[k], : width - self.col_trims[k]].flatten(1))
        values = torch.cat(parts, dim=1)
        if self.dueling:
            return self.value(features.mean(dim=(2, 3))) + values - values.mean(dim=1, keepdim=True)
        return values


class ValidityActor(nn.Module):
    """The Onitama report's DDPG actors with a validity layer (its section 5, agents/train_validity.py): a preprocess (one
    of the networks with a feature output) then ReLU, an action layer (softmax) and a validity layer (sigmoid, learning
    the 0/1 mask of legal actions), both linear to one output per action id, arranged by `design`:
    `val_after_actions` (the validity layer reads the action layer's softmax), `actions_after_val` (the action layer
    reads the validity layer's sigmoid), `val_branch_actions` (both read the preprocess), `dual` (each its own
    preprocess: `second`), or `actions_only` (no validity layer). With `_multiply` (and `dual`) the policy is
    softmax(actions) * validity, renormalised: `forward` gives log softmax(actions) + log sigmoid(validity), whose
    softmax over the legal actions is that product renormalised; otherwise the action logits. `outputs` gives those and
    the validity logits (zeros for `actions_only`)."""

    def __init__(self, preprocess: nn.Module, features: int, actions: int, design: str, second: nn.Module | None = None) -> None:
        super().__init__()
        self.order = design.removesuffix("_multiply")
        self.multiply = design.endswith("_multiply") or design == "dual"
        self.preprocess = preprocess
        self.validity_preprocess = second if second is not None else nn.Identity()
        self.actions = Dense(actions if self.order == "actions_after_val" else features, actions)
        width = actions if self.order == "val_after_actions" else features
        self.validity = nn.Identity() if self.order == "actions_only" else Dense(width, actions)

    def outputs(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = torch.relu(self.preprocess(x))
        if self.order == "val_after_actions":
            actions = self.actions(features)
            validity = self.validity(torch.softmax(actions, dim=1))
        elif self.order == "actions_after_val":
            validity = self.validity(features)
            actions = self.actions(torch.sigmoid(validity))
        elif self.order == "dual":
            actions = self.actions(features)
            validity = self.validity(torch.relu(self.validity_preprocess(x)))
        elif self.order == "val_branch_actions":
            actions = self.actions(features)
            validity = self.validity(features)
        else:  # actions_only
            actions = self.actions(features)
            validity = torch.zeros_like(actions)
        if self.multiply:
            return torch.log_softmax(actions, dim=1) + nn.functional.logsigmoid(validity), validity
        return actions, validity

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.outputs(x)[0]
