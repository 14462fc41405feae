"""The continuous ladder (--format ladder): an adaptive tournament of one game that agents join while it runs.

A ladder starts as an adaptive tournament does (a first round of every pair; arena.adaptive_run),
and goes on batch after batch with arena.adaptive's choices, with no end but an optional budget or
a cancel. Agents join by a row in `ladder_joins` (arena.library.ladders.join); at the next batch
boundary the waiting joins are admitted, in join order, into the tournament's settings (the field
grows at its end, so earlier positions keep their meaning) together with their entry round: each
newcomer plays every agent before it once (a pair of games with --openings), so a newcomer plays
the whole field before any other pair is refined; the batches after it go where the ranking is
uncertain. Entry-round matches store the selection probability of the first round, 1 / pairs.

Everything here is pure: the same admitted agents, seed and results give the same schedule.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from arena.adaptive import Cells, all_pairs, fit, order_wrong
from arena.schedule import Table

FORMAT = "ladder"
#: Seconds a settled ladder waits between looks for joins (and for a cancel): an idle ladder never spins a core.
IDLE_SECONDS = 1.0
#: A ladder without a budget idles when every adjacent pair of its fitted order is wrong with less than this probability.
SETTLED = 0.01


def entry_round(before: int, after: int, set_size: int) -> list[Table]:
    """The tables of newcomers at positions before..after-1: each against every agent before it, once (as a set).

    Without openings the newcomer takes the first seat against every other opponent, starting with the first."""
    tables: list[Table] = []
    for newcomer in range(before, after):
        for k, other in enumerate(range(newcomer)):
            if set_size == 2:
                tables += [(other, newcomer), (newcomer, other)]  # a pair: one opening, the seats swapped
            else:
                tables.append((newcomer, other) if k % 2 == 0 else (other, newcomer))
    return tables


def entry_probabilities(after: int, tables: int) -> list[float]:
    """Each entry-round match's selection probability: the first round's, 1 / the number of pairs."""
    return [1.0 / len(all_pairs(after))] * tables


def settled(num_agents: int, cells: Cells) -> bool:
    """True when the order of every adjacent pair of the fitted strengths is wrong with probability below SETTLED
    (from the Bradley-Terry MAP fit and its Laplace covariance): more games would hardly change the ranking."""
    if num_agents < 2 or not cells:
        return False
    theta, covariance = fit(num_agents, cells)
    order = np.argsort(-theta, kind="stable")
    for i, j in pairwise(order):
        variance = covariance[i, i] + covariance[j, j] - 2.0 * covariance[i, j]
        if order_wrong(theta[i] - theta[j], variance) >= SETTLED:
            return False
    return True

