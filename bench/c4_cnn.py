"""The small connect-four CNN of bench/models.py (its own module: the benchmark's script imports no PyTorch)."""

from __future__ import annotations

import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.Flatten(),
            nn.Linear(32 * 6 * 7, 64), nn.ReLU(),
        )  # fmt: skip
        self.policy = nn.Linear(64, 7)
        self.value = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(1)
