"""Many matches at once in one process, so batch-capable agents (networks) answer many decisions per call.

Each match is a generator (`arena.match.match_steps`) with its own seed, game state and agents.
Seats whose agent has a `batch_key` are answered by the runner: once every running match waits for
such a decision, the decisions are grouped by key and each group is answered by one
`act_batch` call (one forward pass of the network), then every match goes on to its next
batched decision or its end, and finished matches make room for new ones. Other seats (random,
search agents) answer inline, as in a sequential run.

A match depends only on its seed and its agents' answers, and `act_batch` answers as `act`
would, so the results equal sequential play with the same seeds. Think time: a batch's time is
shared equally by its decisions; a time per move is judged on that share.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator, Sequence
from typing import (
    Any,
    TypeVar,
)

from arena.api import Agent, State
from arena.match import Answer, Decision, MatchResult

T = TypeVar("T")
Steps = Generator[Decision, Answer, MatchResult]
#: Starts one match: its generator (made with `batched` flags per seat) and its agents.
Starter = Callable[[T], tuple[Steps, Sequence[Agent]]]


class _Running:
    __slots__ = ("agents", "seat", "steps", "tag", "view")

    def __init__(self, tag: Any, steps: Steps, agents: Sequence[Agent]) -> None:
        self.tag, self.steps, self.agents = tag, steps, agents
        self.seat = -1
        self.view: State | None = None


def concurrent_chunks(tasks: Sequence[T], workers: int, concurrent: int) -> list[list[T]]:
    """Tasks cut into chunks for worker processes: each holds at least `concurrent` matches (a full
    batch), up to four times that while the tasks spread over every worker, so batches stay full
    while a chunk's last matches finish."""
    size = max(concurrent, min(4 * concurrent, -(-len(tasks) // workers)))
    return [list(tasks[i : i + size]) for i in range(0, len(tasks), size)]


def batch_flags(agents: Sequence[Agent]) -> list[bool]:
    """Which seats the runner answers in batches: those whose agent has a batch key."""
    return [agent.batch_key() is not None for agent in agents]


def play_interleaved(tasks: Iterable[T], start: Starter[T], concurrent: int) -> Iterator[tuple[T, MatchResult]]:
    """Play every task's match, at most `concurrent` at a time; yields (task, result) as matches end."""
    pending = iter(tasks)
    waiting: deque[_Running] = deque()
    try:
        while True:
            while len(waiting) < concurrent:
                task = next(pending, None)
                if task is None:
                    break
                steps, agents = start(task)
                running = _Running(task, steps, agents)
                finished = _advance(running, None)
                if finished is not None:
                    yield task, finished
                else:
                    waiting.append(running)
            if not waiting:
                return
            batch = list(waiting)
            waiting.clear()
            for running, answer in zip(batch, _answers(batch)):
                finished = _advance(running, answer)
                if finished is not None:
                    yield running.tag, finished
                else:
                    waiting.append(running)
    finally:
        for running in waiting:
            running.steps.close()


def _advance(running: _Running, answer: tuple[Any, float] | None) -> MatchResult | None:
    """Run the match to its next batched decision (kept in `running`), or to its end (the result).

    `answer` is (action or exception, seconds of the batch that count as this decision's think time).
    """
    try:
        if answer is None:
            running.seat, running.view = next(running.steps)
        else:
            action, share = answer
            running.seat, running.view = running.steps.send((action, time.perf_counter() - share))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    return None


def grouped_act(agents: Sequence[Agent], views: Sequence[State],
                fatal: tuple[type[BaseException], ...] = ()) -> Iterator[tuple[list[int], Sequence[Any], float]]:
    """The decisions grouped by batch key, one `act_batch` per group: yields (positions, answers, seconds taken).

    A group whose `act_batch` raises (anything but `fatal`), or gives the wrong number of answers, answers
    the exception in each of its rows: a fault of the agents, not of the arena."""
    groups: dict[Hashable, list[int]] = {}
    for index, agent in enumerate(agents):
        groups.setdefault(agent.batch_key(), []).append(index)
    clock = time.perf_counter
    for members in groups.values():
        group = [agents[i] for i in members]
        began = clock()
        actions: Sequence[Any]
        try:
            actions = type(group[0]).act_batch(group, [views[i] for i in members])
            if len(actions) != len(group):
                raise RuntimeError(f"act_batch gave {len(actions)} answers for {len(group)} decisions")
        except fatal:
            raise
        except Exception as exc:
            actions = [exc] * len(group)
        yield members, actions, clock() - began


def _answers(batch: list[_Running]) -> list[tuple[Any, float]]:
    """One answer per waiting match, with the share of its group's time that counts as its think time."""
    answers: list[tuple[Any, float]] = [(None, 0.0)] * len(batch)
    agents = [running.agents[running.seat] for running in batch]
    views = [running.view for running in batch]
    for members, actions, seconds in grouped_act(agents, views):  # type: ignore[arg-type]
        share = seconds / len(members)
        for i, action in zip(members, actions):
            answers[i] = (action, share)
    return answers
