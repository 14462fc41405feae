"""Playing one match: seats, seed, turn limit, time per move, and forfeits."""

from __future__ import annotations

import numbers
import time
from array import array
from dataclasses import dataclass, field
from typing import Any, Generator, Sequence

from arena.api import Agent, Game, State
from arena.errors import ArenaError

# Why a match ended.
NORMAL = "normal"
TURN_LIMIT = "turn_limit"
ILLEGAL_ACTION = "illegal_action"
TIMEOUT = "timeout"
AGENT_ERROR = "agent_error"
AGENT_CRASHED = "agent_crashed"
BAD_REPLY = "bad_reply"  # a remote agent's answer was not {"action": <integer>}
AGENT_DISCONNECTED = "agent_disconnected"  # a remote agent refused the connection, failed over HTTP or dropped it
REASONS = (NORMAL, TURN_LIMIT, ILLEGAL_ACTION, TIMEOUT, AGENT_ERROR, AGENT_CRASHED, BAD_REPLY, AGENT_DISCONNECTED)

#: Seconds a remote agent's round trip may add to the time per move (`--network-allowance`).
DEFAULT_NETWORK_ALLOWANCE = 0.05

WIN, DRAW, LOSS = "win", "draw", "loss"


class Forfeit(Exception):
    """Raised by an agent proxy (see arena.isolation) to end the match with a given reason."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class ArenaFault(ArenaError):
    """Raised by an agent proxy when Arena itself failed (not the agent): the match is not scored, and is played again."""


class ServerStopping(ArenaFault):
    """The server is stopping (a pull bot's hub is going): the match is not scored; the tournament goes back to the queue."""


DEFAULT_MAX_TURNS = 200


@dataclass
class MatchResult:
    """What happened in one match; scores, outcomes and ranks are per seat."""

    scores: list[float]
    outcomes: list[str]
    ranks: list[int]
    turns: int
    reason: str
    detail: str | None = None
    think_times: list[float] = field(default_factory=list)
    moves: list[int] = field(default_factory=list)
    legal_counts: list[int] = field(default_factory=list)
    move_counts: list[int] = field(default_factory=list)  # actions made by each seat
    rounds: int | None = None  # for games played in rounds (State.rounds_played)
    first_player: int | None = None  # the seat that moved first (Onitama: decided by the cards)
    opening: list[int] = field(default_factory=list)  # plies played before the agents' first turn (see arena.openings)
    network_times: list[float] = field(default_factory=list)  # remote agents' round trips, not in think_times


def outcomes_from_returns(returns: Sequence[float]) -> tuple[list[int], list[str]]:
    """Ranks (1 = best, ties share) and win/draw/loss from final returns.

    A seat wins when it is alone at rank 1, draws when it shares rank 1, and loses otherwise.
    """
    ordered = sorted(returns, reverse=True)
    ranks = [1 + ordered.index(mine) for mine in returns]  # the first place of an equal return: 1 + how many beat it
    firsts = ranks.count(1)
    outcomes = [(WIN if firsts == 1 else DRAW) if rank == 1 else LOSS for rank in ranks]
    return ranks, outcomes


def forfeit_result(num_players: int, seat: int) -> tuple[list[float], list[str], list[int]]:
    """The seat at fault loses (score -1, last rank); every other seat wins (score 1, rank 1)."""
    scores = [1.0] * num_players
    outcomes = [WIN] * num_players
    ranks = [1] * num_players
    scores[seat], outcomes[seat], ranks[seat] = -1.0, LOSS, num_players
    return scores, outcomes, ranks


def play_match(
    game: Game,
    agents: Sequence[Agent],
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
    time_per_move: float | None = None,
    opening: Sequence[int] = (),
    network_allowance: float = DEFAULT_NETWORK_ALLOWANCE,
    match_id: str | None = None,
) -> MatchResult:
    """Play one match to its end, the turn limit, or the first fault of an agent.

    The `opening` plies are applied first: they are no agent's turns and no agent's think time, and
    the turn limit counts from the end of the opening. `moves` and `turns` are the agents' alone.
    A remote agent's time per move is `time_per_move + network_allowance`; its measured network time
    is taken out of its think time and reported apart. Every agent is told the result (`Agent.end`).
    An `ArenaFault` (Arena failed, not an agent) propagates: the match is not scored.
    """
    steps = match_steps(game, agents, seed, max_turns, time_per_move, opening, network_allowance=network_allowance,
                        match_id=match_id)  # fmt: skip
    try:
        next(steps)  # with no batched seat the match runs to its end here
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    raise AssertionError("a match without batched seats asked for an answer")


#: What a match waiting for a batched seat yields: the seat and the state (or view) it decides on.
Decision = tuple[int, State]
#: What the runner sends back: the action (or the exception the agent raised), and a start time such
#: that `time.perf_counter() - start` is this decision's share of the batch's time.
Answer = tuple[Any, float]


def match_steps(
    game: Game,
    agents: Sequence[Agent],
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
    time_per_move: float | None = None,
    opening: Sequence[int] = (),
    batched: Sequence[bool] = (),
    network_allowance: float = DEFAULT_NETWORK_ALLOWANCE,
    match_id: str | None = None,
) -> Generator[Decision, Answer, MatchResult]:
    """`play_match` as a generator, so a runner can interleave many matches (arena.interleave).

    Seats whose `batched` flag is set are not asked by `act`: the generator yields their decision
    and waits for the answer (sent in), which the runner computes for many matches at once. Every
    other seat is asked inline. The result (the generator's return value) is the same either way.
    """
    match_id = match_id if match_id is not None else f"{seed & 0xFFFFFFFFFFFFFFFF:016x}"
    for agent in agents:
        agent.time_per_move = time_per_move
        agent.match_id = match_id
        if agent.remote:
            agent.network_allowance = network_allowance
            agent.network_time = 0.0
    limits = [None if time_per_move is None else time_per_move + (network_allowance if a.remote else 0.0) for a in agents]
    result = yield from _steps(game, agents, seed, max_turns, time_per_move, limits, opening, batched)
    result.network_times = [agent.network_time if agent.remote else 0.0 for agent in agents]
    for seat, agent in enumerate(agents):
        if agent.remote:  # network time is not thinking time
            result.think_times[seat] = max(0.0, result.think_times[seat] - agent.network_time)
        try:
            agent.end(result)
        except Exception:  # the result stands whatever an agent does with it
            pass
    return result


def _steps(
    game: Game, agents: Sequence[Agent], seed: int, max_turns: int, time_per_move: float | None,
    limits: Sequence[float | None], opening: Sequence[int], batched: Sequence[bool],
) -> Generator[Decision, Answer, MatchResult]:  # fmt: skip
    state: State = game.new_initial_state(seed)
    for action in opening:
        state.apply(action)
    first_player = None if state.is_terminal() else state.current_player
    num_players = len(agents)
    think = [0.0] * num_players
    made = [0] * num_players
    moves: list[int] = []
    legal_counts: list[int] = []
    clock = time.perf_counter
    # Perfect information: the agent gets the live state (no clone per move: measured a third of
    # the arena's own time per move); the conformance suite checks that agents never change it, and
    # the runner checks the player to move after every answer. Hidden information: the seat's view.
    live = game.info.perfect_information

    def forfeit(seat: int, reason: str, detail: str) -> MatchResult:
        scores, outcomes, ranks = forfeit_result(num_players, seat)
        return MatchResult(scores, outcomes, ranks, turns, reason, detail, think, moves, legal_counts, made,
                           state.rounds_played(), first_player, list(opening))  # fmt: skip

    # Bound methods: this loop is the arena's own cost per move, measured against a bare loop.
    is_terminal, legal_actions, apply = state.is_terminal, state.legal_actions, state.apply
    acts = [agent.act for agent in agents]
    record_move, record_legal = moves.append, legal_counts.append
    turns = 0
    while not is_terminal():
        if turns >= max_turns:
            return MatchResult(
                [0.0] * num_players, [DRAW] * num_players, [1] * num_players, turns, TURN_LIMIT, None,
                think, moves, legal_counts, made, state.rounds_played(), first_player, list(opening),
            )  # fmt: skip
        seat = state.current_player
        legal = legal_actions()
        start = clock()
        action: Any
        try:
            if batched and batched[seat]:
                action, start = yield seat, (state if live else state.view(seat))
                if isinstance(action, Exception):
                    raise action
            else:
                action = acts[seat](state if live else state.view(seat))
        except Forfeit as exc:
            think[seat] += clock() - start
            return forfeit(seat, exc.reason, exc.detail)
        except ArenaFault:
            raise
        except Exception as exc:  # a fault of the agent, not of the arena
            think[seat] += clock() - start
            detail = f"{type(exc).__name__}: {exc}"
            return forfeit(seat, AGENT_ERROR, detail)
        elapsed = clock() - start
        think[seat] += elapsed
        if time_per_move is not None and elapsed > limits[seat]:  # type: ignore[operator]
            detail = f"seat {seat} took {elapsed:.3f}s, limit {limits[seat]:g}s"
            return forfeit(seat, TIMEOUT, detail)
        if type(action) is not int:  # numpy integers are fine; bools, floats and strings are not
            if isinstance(action, numbers.Integral) and not isinstance(action, bool):
                action = int(action)
            else:
                action = None if isinstance(action, bool) else action
        if action not in legal or type(action) is not int:
            detail = f"seat {seat} answered {action!r}, not a legal action"
            return forfeit(seat, ILLEGAL_ACTION, detail)
        if live and state.current_player != seat:
            detail = f"seat {seat} changed the state it was given (agents must clone before looking ahead)"
            return forfeit(seat, AGENT_ERROR, detail)
        apply(action)
        record_move(action)
        record_legal(len(legal))
        made[seat] += 1
        turns += 1
    returns = state.returns()
    ranks, outcomes = outcomes_from_returns(returns)
    return MatchResult([float(r) for r in returns], outcomes, ranks, turns, NORMAL, None, think, moves, legal_counts, made,
                       state.rounds_played(), first_player, list(opening))  # fmt: skip


def encode_ints(values: Sequence[int]) -> bytes:
    """Compact bytes for a move list: a type code ('B' 8-bit, 'H' 16-bit or 'I' 32-bit) then the values."""
    try:
        return b"B" + bytes(values)  # most games: every action id below 256
    except ValueError:
        pass
    try:
        return b"H" + array("H", values).tobytes()
    except OverflowError:  # an action id of 65536 or more
        return b"I" + array("I", values).tobytes()


def decode_ints(data: bytes | None) -> list[int]:
    if not data:
        return []
    code = chr(data[0])
    values = array(code)
    values.frombytes(data[1:])
    return values.tolist()


def replay(game: Game, seed: int, moves: Sequence[int]) -> list[tuple[int, int, str, State]]:
    """Re-play stored moves: (turn, seat, action text, state after) for each move; raises on a bad move list."""
    state = game.new_initial_state(seed)
    steps = []
    for turn, action in enumerate(moves, start=1):
        seat = state.current_player
        if action not in state.legal_actions():
            raise ValueError(f"stored move {action} at turn {turn} is not legal")
        text = state.action_to_string(action)
        state.apply(action)
        steps.append((turn, seat, text, state.clone()))
    return steps
