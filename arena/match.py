"""Playing one match: seats, seed, turn limit, time per move, and forfeits."""

from __future__ import annotations

import math
import numbers
import secrets
import time
from array import array
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

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
GAME_ERROR = "game_error"  # the game broke (apply raised, no legal action): nobody's result, never rated
REASONS = (NORMAL, TURN_LIMIT, ILLEGAL_ACTION, TIMEOUT, AGENT_ERROR, AGENT_CRASHED, BAD_REPLY, AGENT_DISCONNECTED, GAME_ERROR)

#: Seconds a remote agent's round trip may add to the time per move (`--network-allowance`).
DEFAULT_NETWORK_ALLOWANCE = 0.05

WIN, DRAW, LOSS = "win", "draw", "loss"
NO_RESULT = "none"  # the outcome of every seat of a game_error match


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


def unmade(seat: int, exc: BaseException) -> str:
    """The forfeit's detail for an agent whose constructor raised `exc` (in the runner's process or an agent process)."""
    return f"seat {seat}: the agent could not be made: {type(exc).__name__}: {exc}"


DEFAULT_MAX_TURNS = 200
#: The longest turn limit (a match of a million actions is a runaway, not a game), and the longest opening.
MAX_TURNS = 1_000_000


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


def game_error_result(num_players: int) -> tuple[list[float], list[str], list[int]]:
    """A match the game itself broke: no seat wins or loses (outcome `none`); ratings and records skip it."""
    return [0.0] * num_players, [NO_RESULT] * num_players, [0] * num_players


def play_match(
    game: Game,
    agents: Sequence[Agent],
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
    time_per_move: float | None = None,
    opening: Sequence[int] = (),
    network_allowance: float = DEFAULT_NETWORK_ALLOWANCE,
    match_id: str | None = None,
    remake: Callable[[], Sequence[Agent]] | None = None,
    trusted: bool = False,
    game_seed: int | None = None,
) -> MatchResult:
    """Play one match to its end, the turn limit, or the first fault of an agent or of the game.

    No agent can change a result. An agent gets a copy of the state (perfect information) or its
    seat's view, never the real state, and the result is checked at the end: the moves, replayed from
    the seed, must lead to the position the match ended in. When they do not (an agent reached the
    real state some other way), the match is played again, guarded: the real state is compared before
    and after every answer, and the agent that changed it forfeits. `remake` gives fresh agents for
    that (so the guarded match is the one its seed gives); without it the same ones play on.
    A fault of the game (apply raising, no legal action in a running game, no end within its own
    max_game_length()) is also re-played guarded before it is recorded as `game_error`.

    The `opening` plies are applied first: they are no agent's turns and no agent's think time, and
    the turn limit counts from the end of the opening. `moves` and `turns` are the agents' alone.
    `game_seed` seeds the game's own chance when it is not the match seed (see arena.seeding.game_seed).

    `trusted` agents (Arena's own, which the conformance suite checks never to change what they are
    given, or agents in their own processes, which only ever see a pickled copy) get the live state
    with no copy and no check: a copy per move measured a third of the arena's own time per move.

    A remote agent's time per move is `time_per_move + network_allowance`; its measured network time
    is taken out of its think time and reported apart. Every agent is told the result (`Agent.end`).
    An `ArenaFault` (Arena failed, not an agent) propagates: the match is not scored.
    """
    steps = match_steps(game, agents, seed, max_turns, time_per_move, opening, network_allowance=network_allowance,
                        match_id=match_id, remake=remake, trusted=trusted, game_seed=game_seed)  # fmt: skip
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


def new_match_id() -> str:
    """The protocol's id of a match being played: 64 random bits in hex, new for every match played (a resumed match
    played again too). Not its seed: two tournaments of one seed, or the two games of a pair, which share one, play
    matches of one seed at once, and a remote bot keys its matches by this id."""
    return secrets.token_hex(8)


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
    remake: Callable[[], Sequence[Agent]] | None = None,
    trusted: bool = False,
    game_seed: int | None = None,
) -> Generator[Decision, Answer, MatchResult]:
    """`play_match` as a generator, so a runner can interleave many matches (arena.interleave).

    Seats whose `batched` flag is set are not asked by `act`: the generator yields their decision
    and waits for the answer (sent in), which the runner computes for many matches at once. Every
    other seat is asked inline. The result (the generator's return value) is the same either way.
    """
    deal = seed if game_seed is None else game_seed
    match_id = match_id if match_id is not None else new_match_id()
    limits = _seat(agents, time_per_move, network_allowance, match_id)
    try:
        result, state = yield from _steps(game, agents, deal, max_turns, time_per_move, limits, opening, batched, False, trusted)
        if result.reason != GAME_ERROR and (trusted or _replays_to(game, deal, list(opening) + result.moves, state)):
            return _ended(agents, result)
    except ArenaFault:
        raise
    except Exception:  # a state an agent broke can fail anywhere: the guarded match says who broke it
        pass
    if remake is not None:
        agents = remake()
        limits = _seat(agents, time_per_move, network_allowance, match_id)
    result, _ = yield from _steps(game, agents, deal, max_turns, time_per_move, limits, opening, batched, True, False)
    return _ended(agents, result)


def _seat(agents: Sequence[Agent], time_per_move: float | None, network_allowance: float, match_id: str) -> list[float | None]:
    """Tell the agents about the match; each seat's limit per move (remote agents get the network allowance too)."""
    for agent in agents:
        agent.time_per_move = time_per_move
        agent.match_id = match_id
        if agent.remote:
            agent.network_allowance = network_allowance
            agent.network_time = 0.0
    return [None if time_per_move is None else _limit(a, time_per_move, network_allowance) for a in agents]


def _limit(agent: Agent, time_per_move: float, network_allowance: float) -> float:
    """A seat's limit per move: the time per move; for a remote agent, its own deadline where it has one (Arena's
    remote agents, arena.remote.push.RemoteAgent: more for a person on the play page), else the time per move plus
    the network allowance (a plugin's agent with `remote = True`)."""
    if not agent.remote:
        return time_per_move
    deadline = getattr(agent, "deadline", None)
    return float(deadline()) if callable(deadline) else time_per_move + network_allowance


def _ended(agents: Sequence[Agent], result: MatchResult) -> MatchResult:
    """Network time apart from think time, and every agent told the result."""
    result.network_times = [agent.network_time if agent.remote else 0.0 for agent in agents]
    for seat, agent in enumerate(agents):
        if agent.remote:  # network time is not thinking time
            result.think_times[seat] = max(0.0, result.think_times[seat] - agent.network_time)
        try:
            agent.end(result)
        except Exception:  # the result stands whatever an agent does with it
            pass
    return result


def _outcome(state: State) -> tuple[Any, ...]:
    """What a match's result depends on, comparable between two states of one game."""
    terminal = state.is_terminal()
    return state.current_player, terminal, state.legal_actions(), state.returns() if terminal else None


def _position(state: State) -> tuple[Any, ...]:
    """The outcome and the whole position as text: what the guarded runner compares before and after each answer."""
    return _outcome(state), state.render()


def _replays_to(game: Game, seed: int, moves: Sequence[int], state: State) -> bool:
    """Do `moves`, played from the seed's initial state, lead to `state`? (Each move was legal when it was made.)"""
    honest = game.new_initial_state(seed)
    apply, legal_actions = honest.apply, honest.legal_actions
    try:
        for action in moves:
            if action not in legal_actions():
                return False
            apply(action)
        return _outcome(honest) == _outcome(state)
    except Exception:  # a move list that breaks the game is no honest one
        return False


def _steps(
    game: Game, agents: Sequence[Agent], seed: int, max_turns: int, time_per_move: float | None,
    limits: Sequence[float | None], opening: Sequence[int], batched: Sequence[bool], guarded: bool, trusted: bool,
) -> Generator[Decision, Answer, tuple[MatchResult, State]]:  # fmt: skip
    state: State = game.new_initial_state(seed)
    for ply in opening:
        state.apply(ply)
    first_player = None if state.is_terminal() else state.current_player
    num_players = len(agents)
    think = [0.0] * num_players
    made = [0] * num_players
    moves: list[int] = []
    legal_counts: list[int] = []
    clock = time.perf_counter
    perfect = game.info.perfect_information
    live = perfect and trusted

    def end(reason: str, detail: str | None, seat: int | None = None) -> tuple[MatchResult, State]:
        if reason == GAME_ERROR:
            scores, outcomes, ranks = game_error_result(num_players)
        elif seat is not None:
            scores, outcomes, ranks = forfeit_result(num_players, seat)
        else:
            scores, outcomes, ranks = [0.0] * num_players, [DRAW] * num_players, [1] * num_players
        return MatchResult(scores, outcomes, ranks, turns, reason, detail, think, moves, legal_counts, made,
                           state.rounds_played(), first_player, list(opening)), state  # fmt: skip

    # Bound methods: this loop is the arena's own cost per move, measured against a bare loop.
    is_terminal, legal_actions, apply, clone, view = state.is_terminal, state.legal_actions, state.apply, state.clone, state.view
    acts = [agent.act for agent in agents]
    record_move, record_legal = moves.append, legal_counts.append
    turns = 0
    bound = game.max_game_length()  # the game's own promise (MCTS play-outs stop there): a game past it is broken
    past = None if bound is None else bound - len(opening)
    before: tuple[Any, ...] = ()
    # Remote agents' `start`, sent once the game is known to need a move, before the first: no move's time (nor the
    # wait for a bot). Empty for every other match, so the loop's only cost is one test of it.
    unstarted = [(seat, agent.begin) for seat, agent in enumerate(agents) if agent.remote and hasattr(agent, "begin")]
    while True:
        try:
            if is_terminal():
                break
        except Exception as exc:
            return end(GAME_ERROR, f"the game failed to say whether it is over at turn {turns + 1}: {type(exc).__name__}: {exc}")
        if unstarted:
            for seat, begin in unstarted:
                try:
                    begin()
                except Forfeit as exc:
                    return end(exc.reason, exc.detail, seat)
                except ArenaFault:
                    raise
                except Exception as exc:
                    return end(AGENT_ERROR, f"{type(exc).__name__}: {exc}", seat)
            unstarted = []
        if turns >= max_turns:
            return end(TURN_LIMIT, None)
        if past is not None and turns >= past:
            return end(GAME_ERROR, f"the game is not over after its max_game_length() of {bound} actions")
        seat = state.current_player
        try:
            legal = legal_actions()
        except Exception as exc:
            return end(GAME_ERROR, f"the game failed to list the legal actions at turn {turns + 1}: {type(exc).__name__}: {exc}")
        if not legal or not 0 <= seat < num_players:
            return end(GAME_ERROR, f"the game offers seat {seat} no legal action in a running game (turn {turns + 1})")
        if guarded:
            before = _position(state)
        try:
            given = state if live else clone() if perfect else view(seat)  # made before the clock starts: not think time
        except Exception as exc:
            return end(GAME_ERROR, f"the game failed to give seat {seat} its {'copy' if perfect else 'view'} of the position "
                                   f"at turn {turns + 1}: {type(exc).__name__}: {exc}")  # fmt: skip
        start = clock()
        action: Any
        try:
            if batched and batched[seat]:
                action, start = yield seat, given
                if isinstance(action, Exception):
                    raise action
            else:
                action = acts[seat](given)
        except Forfeit as exc:
            think[seat] += clock() - start
            return end(exc.reason, exc.detail, seat)
        except ArenaFault:
            raise
        except Exception as exc:  # a fault of the agent, not of the arena
            think[seat] += clock() - start
            return end(AGENT_ERROR, f"{type(exc).__name__}: {exc}", seat)
        except SystemExit as exc:  # sys.exit() in an agent ends its match, not the tournament
            think[seat] += clock() - start
            return end(AGENT_ERROR, f"seat {seat} called sys.exit({exc.code!r}); run such agents with --isolate", seat)
        elapsed = clock() - start
        think[seat] += elapsed
        if guarded and _position(state) != before:
            return end(AGENT_ERROR, f"seat {seat} changed the game's own state, not a copy: it cannot play in-process "
                                    "(run it with --isolate)", seat)  # fmt: skip
        if time_per_move is not None and elapsed > limits[seat]:  # type: ignore[operator]
            return end(TIMEOUT, f"seat {seat} took {elapsed:.3f}s, limit {limits[seat]:g}s", seat)
        if type(action) is not int:  # numpy integers are fine; bools, floats and strings are not
            if isinstance(action, numbers.Integral) and not isinstance(action, bool):
                action = int(action)
            else:
                action = None if isinstance(action, bool) else action
        if action not in legal or type(action) is not int:
            return end(ILLEGAL_ACTION, f"seat {seat} answered {action!r}, not a legal action", seat)
        try:
            apply(action)
        except Exception as exc:  # the game's fault: a legal action it cannot play
            return end(GAME_ERROR, f"the game failed to apply seat {seat}'s legal action {action} at turn {turns + 1}: "
                                   f"{type(exc).__name__}: {exc}")  # fmt: skip
        record_move(action)
        record_legal(len(legal))
        made[seat] += 1
        turns += 1
    try:
        returns = [float(r) for r in state.returns()]
    except Exception as exc:
        return end(GAME_ERROR, f"the game failed to give its returns at the end (turn {turns}): {type(exc).__name__}: {exc}")
    if len(returns) != num_players or not all(map(math.isfinite, returns)):
        return end(GAME_ERROR, f"the game's returns at the end are {returns!r}, not one finite number per seat ({num_players})")
    ranks, outcomes = outcomes_from_returns(returns)
    return MatchResult(returns, outcomes, ranks, turns, NORMAL, None, think, moves, legal_counts, made,
                       state.rounds_played(), first_player, list(opening)), state  # fmt: skip


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


def decode_ints(data: bytes | None, start: int = 0) -> list[int]:
    """The values of encode_ints' bytes, from the `start`-th on (those before it are not read)."""
    if not data:
        return []
    values = array(chr(data[0]))
    values.frombytes(data[1 + start * values.itemsize:])
    return values.tolist()


def append_ints(data: bytes, values: Sequence[int]) -> bytes:
    """encode_ints(decode_ints(data) + values), without decoding `data` when its type code holds the new values too."""
    added = encode_ints(values)
    if not data:
        return added
    if added[:1] == data[:1]:
        return data + added[1:]
    return encode_ints(decode_ints(data) + list(values))


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
