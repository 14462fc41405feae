"""Masking and choosing for a whole batch at once: the answers `agents.neural.choose_action` gives row by row.

`choose_actions` masks the illegal actions of every row and takes each row's best legal output, or
draws from the softmax of its legal outputs with that row's seeded RNG, in a few numpy calls for the
batch instead of several per decision. It gives exactly `choose_action`'s answers (the test suite
compares them on random, tied and non-finite outputs):

- each sampling row draws `rng.random()` once, and only when it has more than one legal action, as
  `choose_action` does, so every agent's RNG stays where sequential play leaves it;
- the sums run in the same order (illegal actions weigh exactly 0.0, and adding 0.0 changes no
  float), so the draw lands on the same action;
- rows where the row-wide computation could differ from the per-row one (legal actions not listed
  in increasing order, a non-finite legal output) are answered by `choose_action` itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import chain

import numpy as np


def choose_actions(outputs: np.ndarray, legal: Sequence[Sequence[int]],
                   samplers: Sequence[random.Random | None]) -> list[int | Exception]:  # fmt: skip
    """For each row i of `outputs` [batch, num_actions]: `choose_action(outputs[i], legal[i], samplers[i])`, or the
    NotANumber it raises (a NaN output: that row's agent forfeits, the others play on as they would one by one)."""
    from agents.neural import NotANumber, choose_action

    rows, width = outputs.shape
    lengths = np.fromiter(map(len, legal), dtype=np.intp, count=rows)
    columns = np.fromiter(chain.from_iterable(legal), dtype=np.intp, count=int(lengths.sum()))
    owners = np.repeat(np.arange(rows), lengths)
    mask = np.zeros((rows, width), dtype=bool)
    mask[owners, columns] = True
    masked = np.where(mask, outputs.astype(np.float64), -np.inf)
    # A row is answered here when its legal actions are listed in increasing order (masking keeps
    # their order) and its legal outputs are finite; any other row goes to choose_action.
    first = np.zeros(len(columns), dtype=bool)
    first[(np.cumsum(lengths) - lengths)[lengths > 0]] = True  # where each row's actions begin in `columns`
    simple = (np.isfinite(masked) | ~mask).all(axis=1) & (lengths > 0)
    simple[owners[1:][(np.diff(columns) <= 0) & ~first[1:]]] = False
    answers: list[int | Exception] = np.argmax(masked, axis=1).tolist()
    draws, numbers = [], []
    for i, (plain, sampler, actions) in enumerate(zip(simple.tolist(), samplers, legal)):  # in row order: an RNG met
        if not plain:  # twice is drawn in sequential order
            try:
                answers[i] = choose_action(outputs[i], actions, sampler)
            except NotANumber as exc:
                answers[i] = exc
        elif sampler is not None and len(actions) > 1:
            draws.append(i)
            numbers.append(sampler.random())
    if draws:
        chosen = np.asarray(draws)
        rows_masked = masked[chosen]
        weights = np.where(mask[chosen], np.exp(rows_masked - rows_masked.max(axis=1, keepdims=True)), 0.0)
        cumulative = np.cumsum(weights, axis=1)
        targets = np.asarray(numbers) * cumulative[:, -1]
        below = ((cumulative <= targets[:, None]) & mask[chosen]).sum(axis=1)  # searchsorted(side="right"), per row
        for row, index in zip(draws, below.tolist()):
            answers[row] = legal[row][min(index, len(legal[row]) - 1)]
    return [action if isinstance(action, Exception) else int(action) for action in answers]
