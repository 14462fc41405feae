"""Private helpers shared by the search agents (`minimax`, `mcts`, `linear`).

Only the public contract is used here: evaluator resolution (a game's named evaluations or a
linear evaluator over `Game.features`), time budgets that respect the runner's `time_per_move`,
terminal values, and cheap hashable keys of states for transposition tables.
"""

from __future__ import annotations

import math
import operator
import random
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

import arena
from agents.linear_weights import WeightsText, file_weights, numbers_in
from arena.api import Evaluation
from arena.params import validate_params

#: The value of a won terminal position, far above any heuristic value; multiplied by the margin
#: of the root player's return over the best other seat, so wins by more score higher.
WIN_VALUE = 1e9

#: Weights published with a game's features, by game id, used when neither the agent's `weights`
#: nor the game itself (WEIGHT_ATTRIBUTES) gives any. Santorini: the manual weights of the Santorini report
#: (section 3.1) over its 8 features (own workers on levels 0/1/2, own centrality distance, then the same
#: for the opponent).
PUBLISHED_WEIGHTS: dict[str, tuple[float, ...]] = {
    "santorini": (0.0, 2.0, 4.0, -1.0, 0.0, -2.0, -4.0, 1.0),
}

# Time budget: the runner counts the whole `act` call (the view, our set-up, the answer) against
# `time_per_move`, and the clock is checked only between nodes; keep this much in hand.
SAFETY_SECONDS = 0.03
SAFETY_FRACTION = 0.10


def time_budget(time_param: float, time_per_move: float | None) -> float | None:
    """Seconds the search may use: min(`time`, time_per_move minus the safety margin); None = no limit.

    The margin is SAFETY_SECONDS plus SAFETY_FRACTION of the runner's limit, and never leaves less
    than a quarter of the limit, so a tiny limit still gets an answer (the search always has a move
    before its first deadline check).
    """
    budgets = []
    if time_param and time_param > 0:
        budgets.append(float(time_param))
    if time_per_move is not None and time_per_move > 0:
        margin = SAFETY_SECONDS + SAFETY_FRACTION * time_per_move
        budgets.append(max(time_per_move - margin, 0.25 * time_per_move))
    return min(budgets) if budgets else None


def deadline_from(budget: float | None, start: float) -> float:
    """An absolute `time.perf_counter()` deadline, or +inf."""
    return math.inf if budget is None else start + budget


def clock() -> float:
    return time.perf_counter()


def terminal_value(returns: Sequence[float], player: int) -> float:
    """The value of a finished game for `player`: WIN_VALUE times its margin over the best other seat."""
    mine = returns[player]
    best_other = max(r for i, r in enumerate(returns) if i != player) if len(returns) > 1 else 0.0
    return WIN_VALUE * (mine - best_other)


def agent_params(info: arena.AgentInfo, params: dict[str, Any]) -> dict[str, Any]:
    """An agent's parameters checked against its declaration, defaults filled in."""
    return validate_params(info.params, params, f"agent '{info.id}'")


# --- evaluators -------------------------------------------------------------------------------


def has_features(game: arena.Game) -> bool:
    """True when the game names features and implements `features`."""
    return bool(game.feature_names) and type(game).features is not arena.Game.features


#: Attributes a game may carry its own weights in (not part of the contract yet; Santorini has
#: `manual_weights`), looked up in this order.
WEIGHT_ATTRIBUTES = ("default_weights", "manual_weights")


def default_weights(game: arena.Game) -> tuple[float, ...] | None:
    """Weights to use when the agent gets none: the game's own (WEIGHT_ATTRIBUTES), else the
    published ones for its id (PUBLISHED_WEIGHTS); only a vector with one weight per feature counts."""
    n = len(game.feature_names)
    for name in WEIGHT_ATTRIBUTES:
        own = getattr(game, name, None)
        if own is not None and len(own) == n:
            return tuple(float(w) for w in own)
    published = PUBLISHED_WEIGHTS.get(game.info.id)
    if published is not None and len(published) == n:
        return published
    return None


def resolve_weights(agent_id: str, game: arena.Game, weights: str | Sequence[float] | None) -> tuple[float, ...]:
    """The weight vector for a linear evaluator; raises ArenaError with what is expected when it cannot.

    `weights`: numbers (a sequence, or the `weights` parameter's text `w1,...,wN`), the path of a
    weights file (agents/linear_weights.py: `arena train --algorithm treestrap|rootstrap` writes
    them), or nothing (the game's default weights)."""
    gid = game.info.id
    if not has_features(game):
        raise arena.ArenaError(
            f"agent '{agent_id}': game '{gid}' offers no features (Game.feature_names/features), "
            "so there is nothing to weigh"
        )
    names = ", ".join(game.feature_names)
    n = len(game.feature_names)
    if weights and isinstance(weights, str):
        text = WeightsText(weights)
        if text.is_file:
            return file_weights(agent_id, game, text)
        weights = numbers_in(text)
    if weights:
        if len(weights) != n:
            raise arena.ArenaError(
                f"agent '{agent_id}': weights has {len(weights)} values but game '{gid}' has {n} features ({names})"
            )
        return tuple(float(w) for w in weights)
    found = default_weights(game)
    if found is None:
        raise arena.ArenaError(
            f"agent '{agent_id}': game '{gid}' has no default weights; give weights=w1,...,w{n} for its features ({names}), "
            "or weights=FILE (arena train --algorithm treestrap|rootstrap writes one)"
        )
    return found


def linear_evaluation(game: arena.Game, weights: Sequence[float]) -> Evaluation:
    """weights · game.features(state, player), as an evaluation function."""
    features = game.features
    w = tuple(float(x) for x in weights)
    mul = operator.mul

    def evaluate(state: arena.State, player: int) -> float:
        return float(sum(map(mul, w, features(state, player))))

    return evaluate


def explicit_eval(params: dict[str, Any], default: str = "heuristic") -> dict[str, Any]:
    """`params` with `eval` given (Agent.canonical_params of the agents that take one): "" means `default`."""
    return {**params, "eval": params.get("eval") or default}


def resolve_evaluation(
    agent_id: str, game: arena.Game, name: str, weights: str | Sequence[float] | None, default: str = "heuristic"
) -> Evaluation:
    """The evaluation called `name` ("" = `default`): one of game.evaluations(), or "linear" over
    game.features with `weights`. Raises ArenaError naming what exists when it cannot."""
    wanted = name or default
    if wanted == "linear":
        return linear_evaluation(game, resolve_weights(agent_id, game, weights))
    if weights:
        raise arena.ArenaError(f"agent '{agent_id}': weights only apply to eval=linear (got eval={wanted})")
    names = game.evaluations()
    if wanted in names:
        return names[wanted]
    offered = sorted(names) + (["linear"] if has_features(game) else [])
    if not offered:
        raise arena.ArenaError(
            f"agent '{agent_id}' needs an evaluation, and game '{game.info.id}' offers none (no heuristic, no features)"
        )
    raise arena.ArenaError(
        f"agent '{agent_id}': game '{game.info.id}' has no evaluation '{wanted}' (it has: {', '.join(offered)})"
    )


def require_perfect_information(agent_id: str, game: arena.Game) -> None:
    """Refuse games with hidden information: a full-width search would read what its seat may not see.

    Stochastic games with perfect information are accepted: their view is a clone, so the search
    treats the game as deterministic from it. That is exact when chance happens only in the set-up
    (Onitama's card deal); a game that draws during play would be searched along the draws its
    copied RNG will make (the contract has no chance nodes to do better).
    """
    if not game.info.perfect_information:
        raise arena.ArenaError(
            f"agent '{agent_id}' searches the full game tree and cannot play '{game.info.id}', "
            "a game of imperfect information (use mcts)"
        )


# --- state keys for transposition tables -------------------------------------------------------

StateKey = Callable[[arena.State], Hashable]

_IMMUTABLE = (int, float, str, bool, bytes, type(None), frozenset)
_RNG_TYPES = (random.Random, np.random.Generator, np.random.RandomState)


def _attribute_names(state: arena.State) -> list[str]:
    """Every instance attribute of `state`: its slots (private `__x` ones under their mangled
    names) and its `__dict__`."""
    names: list[str] = []
    for cls in type(state).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for slot in slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            if slot.startswith("__") and not slot.endswith("__"):
                slot = f"_{cls.__name__.lstrip('_')}{slot}"
            names.append(slot)
    names.extend(getattr(state, "__dict__", {}))
    unique: list[str] = []
    for name in names:
        if name not in unique and hasattr(state, name):
            unique.append(name)
    return unique


def _sample_states(sample: arena.State, plies: int = 16) -> list[arena.State]:
    """The sample, a clone, and the states of a short seeded random play-out from it."""
    states = [sample]
    copy = sample.clone()
    rng = random.Random(0)
    for _ in range(plies + 1):
        states.append(copy)
        if copy.is_terminal():
            break
        copy = copy.clone()
        copy.apply(rng.choice(copy.legal_actions()))
    return states


def _converter(name: str, values: list[Any]) -> str | None:
    """Python source turning attribute `name` of `s` into something hashable; "" = leave it out;
    None = a kind we cannot handle (the caller falls back to the render key).

    `values` are the attribute in the sample states (the sample first). A container that is the very
    same object in all of them is configuration shared by every state (a board size, a table of
    neighbours), not part of the position, and is left out. Caches that are sometimes None (a lazily
    computed list of legal actions) are kept, None-tolerant: they only cost table hits.
    """
    ref = f"s.{name}"
    sample = values[0]
    kinds = {type(v) for v in values}
    if any(isinstance(v, _RNG_TYPES) for v in values):
        return ""  # search runs on perfect-information games only: chance is not part of the position
    if all(isinstance(v, _IMMUTABLE) for v in values):
        return ref  # small ints and strings are shared objects, so identity says nothing here
    if all(v is sample for v in values):
        return ""
    present = [v for v in values if v is not None]
    kinds.discard(type(None))
    optional = len(present) < len(values)
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is tuple:
        try:
            for v in present:
                hash(v)
        except TypeError:
            return None
        return ref
    if kind is np.ndarray:
        source = f"{ref}.tobytes()"
    elif kind in (list, bytearray):
        items = [x for v in present for x in v]
        if any(isinstance(x, list) for x in items):
            if any(isinstance(y, list) for x in items if isinstance(x, list) for y in x):
                return None
            source = f"tuple(map(tuple, {ref}))"
        elif any(isinstance(x, np.ndarray) for x in items):
            source = f"tuple(x.tobytes() for x in {ref})"
        else:
            source = f"tuple({ref})"
    elif kind in (set, frozenset):
        source = f"frozenset({ref})"
    elif kind is dict:
        source = f"tuple(sorted({ref}.items()))"
    else:
        return None
    return f"(None if {ref} is None else {source})" if optional else source


def render_key(state: arena.State) -> Hashable:
    """The slow but general key: the text of the position and the seat to move."""
    return (state.render(), state.current_player)


def make_state_key(sample: arena.State, mode: str = "auto") -> StateKey | None:
    """A function giving a hashable key of a state, for states of `sample`'s class.

    `mode`: "off" (None: no table), "render" (render()+current_player), or "auto": the state's own
    `key()` method if it has one, else a tuple of its attributes (lists as tuples, arrays as bytes,
    containers that never change left out as configuration; the kinds are read from the sample and
    a short random play-out from it), falling back to the render key when an attribute is of a kind
    we cannot make hashable. Searches still catch a TypeError from the key and switch to
    render_key. The attribute key is 5-100x cheaper than render() on the built-in games.
    """
    if mode == "off":
        return None
    if mode == "render":
        return render_key
    own = getattr(type(sample), "key", None)
    if callable(own):
        return own  # type: ignore[no-any-return]
    states = _sample_states(sample)
    parts: list[str] = []
    for name in _attribute_names(sample):
        source = _converter(name, [getattr(state, name, None) for state in states])
        if source is None:
            return render_key
        if source:
            parts.append(source)
    if not parts:
        return render_key
    function = eval(f"lambda s: ({', '.join(parts)},)")  # noqa: S307 - built from attribute names only
    try:
        hash(function(sample))
    except Exception:
        return render_key
    return function  # type: ignore[no-any-return]

