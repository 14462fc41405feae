"""Prioritized experience replay (Schaul et al. 2015, proportional variant) for `arena train --algorithm dqn --prioritized`.

Each slot of the replay buffer has a priority p = |TD error| + EPSILON, from the last time it was
sampled; a transition that was never sampled gets the greatest priority seen so far (1 at the
start), so that it is sampled at least about as often as any other. A minibatch draws slot i with
probability P(i) = p_i^alpha / sum_j p_j^alpha (with replacement, as the uniform buffer does), and
each draw's loss is weighted by the importance-sampling weight w_i = (N * P(i))^-beta / max_j w_j,
N the number of filled slots, the maximum over the whole buffer (the least likely slot, Schaul's
normalisation), so that every weight is at most 1 and a batch's weights are comparable with the
next one's. beta goes linearly from `beta` (0.4) at the start of the run to 1 at its end (the
episode count over `--episodes`): early, the bias of sampling surprising transitions more often
is tolerated; by the end it is fully corrected.

Sampling is a cumulative sum over the filled slots and a binary search per draw, in numpy: with
Arena's buffer of 20,000 transitions it costs tens of microseconds, less than the gradient step
it feeds (a sum tree pays off only for much larger buffers). The raw priorities and their powers
are both kept, so that a resumed run with the same alpha continues bit for bit, and one given
another alpha recomputes the powers from what the TD errors said.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ALPHA, BETA = 0.6, 0.4  # the defaults: how strongly priorities skew sampling; the IS correction at the start
EPSILON = 1e-6  # added to |TD error|, so no transition's priority is ever 0

Arrays = dict[str, np.ndarray]


class Priorities:
    """The priorities of a replay buffer's slots, its proportional sampling and importance-sampling weights."""

    def __init__(self, capacity: int, alpha: float = ALPHA, beta: float = BETA) -> None:
        self.alpha, self.beta = alpha, beta
        self.raw = np.zeros(capacity, dtype=np.float64)  # |TD error| + EPSILON, or the maximum for new transitions
        self.powered = np.zeros(capacity, dtype=np.float64)  # raw ** alpha: what sampling is proportional to
        self.max_raw = 1.0

    def added(self, start: int, count: int) -> None:
        """`count` transitions were written from slot `start` on (wrapping around): each gets the greatest priority."""
        index = (start + np.arange(count)) % len(self.raw)
        self.raw[index] = self.max_raw
        self.powered[index] = self.max_raw**self.alpha

    def probabilities(self, size: int) -> np.ndarray:
        """P(i) of each of the `size` filled slots."""
        powered = self.powered[:size]
        return powered / powered.sum()

    def beta_at(self, progress: float) -> float:
        """beta after `progress` (0 to 1) of the run: linear from the starting beta to 1."""
        return self.beta + (1.0 - self.beta) * min(1.0, max(0.0, progress))

    def sample(self, rng: np.random.Generator, size: int, batch: int, progress: float) -> tuple[np.ndarray, np.ndarray]:
        """`batch` slots drawn with probability P(i) among the `size` filled ones, and their IS weights (float32)."""
        cumulative = np.cumsum(self.powered[:size])
        total = cumulative[-1]
        index = np.minimum(np.searchsorted(cumulative, rng.random(batch) * total, side="right"), size - 1)
        beta = self.beta_at(progress)
        probability = self.powered[index] / total
        least = self.powered[:size].min() / total
        weights = (probability / least) ** -beta  # (N P(i))^-beta / (N P_min)^-beta
        return index, weights.astype(np.float32)

    def update(self, index: np.ndarray, td_errors: np.ndarray) -> None:
        """The sampled slots' new priorities from their TD errors (a slot drawn twice keeps its last)."""
        raw = np.abs(td_errors.astype(np.float64)) + EPSILON
        self.raw[index] = raw
        self.powered[index] = raw**self.alpha
        self.max_raw = max(self.max_raw, float(raw.max()))

    def state(self, size: int) -> tuple[dict[str, Any], Arrays]:
        meta = {"alpha": self.alpha, "max": self.max_raw}
        return meta, {"replay.priorities": self.raw[:size].copy(), "replay.powered": self.powered[:size].copy()}

    def restore(self, meta: dict[str, Any] | None, arrays: Arrays, size: int) -> None:
        """Go on from a stored state; from a uniform run's (no priorities), every stored transition counts as new."""
        if meta is None or "replay.priorities" not in arrays:
            self.max_raw = 1.0
            self.raw[:size] = self.powered[:size] = 1.0
            return
        self.max_raw = float(meta["max"])
        self.raw[:size] = arrays["replay.priorities"]
        self.powered[:size] = arrays["replay.powered"] if meta["alpha"] == self.alpha else self.raw[:size] ** self.alpha
