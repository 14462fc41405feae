"""Adam for `arena train`: the numbers `torch.optim.Adam(params, lr)` computes on CPU, without importing torch.optim's
machinery.

Every `torch.optim` optimiser imports `torch._dynamo` (the compiler) on its first use, through the decorators that keep
the compiler out of `add_param_group` and `step`: 3.4 s of an 8.4 s `arena train` start on this machine, paid by every
training run. This is the same update, in the same order of tensor operations as torch's single-tensor CPU path
(default betas and eps, no weight decay, no amsgrad), so a run gives bit-for-bit the weights it gave with
`torch.optim.Adam` (tests/test_train_adam.py compares the two), and its `state_dict()` has torch's shape, so checkpoints
written by either load in the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

BETAS = (0.9, 0.999)
EPS = 1e-8


class Adam:
    """Adam (Kingma and Ba 2015) over `params` at learning rate `lr`, with torch's defaults for the rest."""

    def __init__(self, torch: Any, params: Iterable[Any], lr: float) -> None:
        self.torch = torch
        self.params = list(params)
        self.lr = lr
        self.state: dict[int, dict[str, Any]] = {}  # by parameter index, created at the parameter's first step

    def zero_grad(self) -> None:
        for param in self.params:
            param.grad = None

    def step(self) -> None:
        torch = self.torch
        beta1, beta2 = BETAS
        with torch.no_grad():
            for index, param in enumerate(self.params):
                grad = param.grad
                if grad is None:
                    continue
                state = self.state.get(index)
                if state is None:
                    state = self.state[index] = {"step": torch.tensor(0.0, dtype=torch.float32),
                                                 "exp_avg": torch.zeros_like(param, memory_format=torch.preserve_format),
                                                 "exp_avg_sq": torch.zeros_like(param, memory_format=torch.preserve_format)}  # fmt: skip
                state["step"] += 1
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = state["step"].item()
                step_size = self.lr / (1 - beta1**step)
                denom = (exp_avg_sq.sqrt() / (1 - beta2**step) ** 0.5).add_(EPS)
                param.addcdiv_(exp_avg, denom, value=-step_size)

    def state_dict(self) -> dict[str, Any]:
        """torch.optim's layout: per-parameter state by index, and one parameter group."""
        group = {"lr": self.lr, "betas": BETAS, "eps": EPS, "weight_decay": 0, "amsgrad": False,
                 "params": list(range(len(self.params)))}  # fmt: skip
        return {"state": self.state, "param_groups": [group]}

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Moments are cast to their parameter's dtype, as torch.optim does; the step count stays a float32 scalar."""
        state: dict[int, dict[str, Any]] = {}
        for index, values in saved["state"].items():
            param = self.params[int(index)]
            state[int(index)] = {key: value if key == "step" else value.to(dtype=param.dtype) for key, value in values.items()}
        self.state = state
