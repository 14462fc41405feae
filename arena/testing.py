"""The public conformance suite: checks every game and every agent must pass.

Use it from any test suite, a plugin's own included:

    from arena.testing import check_game, check_agent, check_golden, transcript
    check_game(MyGame())
    check_agent(MyAgent, MyGame())
    check_golden("tests/golden/my_game.txt", transcript(MyGame(), seed=7, agents=("random", "greedy")))

    @given(positions(MyGame()))           # property tests, with Hypothesis
    def test_my_game(position):
        check_position(position)

Each check raises AssertionError with a message that says what is wrong.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import gc
import json
import math
import os
import random
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.api import TERMINAL, Agent, Game, State
from arena.errors import first_line
from arena.match import DEFAULT_MAX_TURNS, DEFAULT_NETWORK_ALLOWANCE, MatchResult, play_match
from arena.params import ID_RULE, is_id
from arena.seeding import derive_seed

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

#: A random play-through of a game with no declared bound stops (without failing) after this many actions.
UNBOUNDED_CAP = 2000


def _snapshot(state: State) -> tuple[Any, ...]:
    terminal = state.is_terminal()
    return (state.current_player, terminal, tuple(state.legal_actions()), state.render(),
            tuple(state.returns()) if terminal else None)  # fmt: skip


def check_metadata(game: Game) -> None:
    info = game.info
    assert is_id(info.id), f"game id {info.id!r}: {ID_RULE}"
    assert info.version, f"game '{info.id}' needs a version"
    assert 1 <= info.min_players <= info.max_players, f"game '{info.id}': bad player range"
    assert info.min_players <= game.num_players <= info.max_players, f"game '{info.id}': num_players out of range"
    assert game.num_distinct_actions > 0, f"game '{info.id}': num_distinct_actions must be positive"


def _check_state(game: Game, state: State, where: str) -> list[int]:
    n = game.num_players
    returns = state.returns()
    assert len(returns) == n, f"{where}: returns() has {len(returns)} entries for {n} players"
    assert all(math.isfinite(r) for r in returns), f"{where}: returns() not finite: {returns}"
    assert isinstance(state.render(), str), f"{where}: render() must return text"
    legal = state.legal_actions()
    if state.is_terminal():
        assert state.current_player == TERMINAL, f"{where}: terminal state must have current_player TERMINAL"
        assert legal == [], f"{where}: a terminal state has no legal actions, got {legal}"
        return legal
    assert 0 <= state.current_player < n, f"{where}: current_player {state.current_player} out of range"
    assert legal, f"{where}: a non-terminal state must have legal actions"
    assert legal == sorted(set(legal)), f"{where}: legal_actions() must be sorted and unique: {legal}"
    assert all(isinstance(a, int) and 0 <= a < game.num_distinct_actions for a in legal), (
        f"{where}: legal actions outside range({game.num_distinct_actions}): {legal}"
    )
    for action in legal:
        text = state.action_to_string(action)
        assert isinstance(text, str) and text, f"{where}: action_to_string({action}) is empty"
        back = state.string_to_action(text)
        assert back == action, f"{where}: string_to_action({text!r}) gave {back}, expected {action}"
    return legal


@contextlib.contextmanager
def _games_own_code(where: str | Callable[[], str]) -> Iterator[None]:
    """An exception of the game's own code (apply, legal_actions, render...) as an AssertionError that says where
    (`where` may be a function: then it is written out only if the game raises)."""
    try:
        yield
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001  (whatever the game raises)
        raise AssertionError(f"{where() if callable(where) else where}: the game raised {type(exc).__name__}: {exc}") from exc


def random_playthrough(game: Game, seed: int, check: bool = True) -> list[tuple[Any, ...]]:
    """Play random legal actions from the seed's initial state; returns the trajectory of snapshots."""
    rng = random.Random(seed)
    with _games_own_code(f"game '{game.info.id}' seed {seed}, its initial state"):
        state = game.new_initial_state(seed)
        bound = game.max_game_length()
        trajectory = [_snapshot(state)]
    cap = bound if bound is not None else UNBOUNDED_CAP
    steps = 0
    while not state.is_terminal() and steps < cap:
        where = f"game '{game.info.id}' seed {seed} step {steps}"
        with _games_own_code(where):
            legal = _check_state(game, state, where) if check else state.legal_actions()
            action = rng.choice(legal)
            state.apply(action)
            steps += 1
            trajectory.append(_snapshot(state))
    if check:
        where = f"game '{game.info.id}' seed {seed} end"
        with _games_own_code(where):
            _check_state(game, state, where)
        if bound is not None:
            assert state.is_terminal(), f"game '{game.info.id}' seed {seed}: not over after max_game_length()={bound}"
    return trajectory


def _positions(game: Game, seed: int, count: int = 300) -> Iterator[tuple[str, State]]:
    """The first `count` positions of a random play-through from the seed (the last one its end, if it ends sooner),
    each with where it is ("game 'g' seed s step n"); the next action is chosen and played once the caller is done."""
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    for step in range(count):
        where = f"game '{game.info.id}' seed {seed} step {step}"
        yield where, state
        if state.is_terminal():
            return
        with _games_own_code(where):
            state.apply(rng.choice(state.legal_actions()))


def check_clone_independent(game: Game, seed: int) -> None:
    check_views_hide(game, seed)
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    for step in range(UNBOUNDED_CAP // 10):  # games with no end stop here too
        if state.is_terminal():
            break
        where = f"game '{game.info.id}' seed {seed} step {step}"
        before = _snapshot(state)
        copy = state.clone()
        assert _snapshot(copy) == before, f"{where}: a clone differs from its original"
        # Play the copy to the end (or a while): the original must not change.
        for _ in range(50):
            if copy.is_terminal():
                break
            copy.apply(rng.choice(copy.legal_actions()))
        assert _snapshot(state) == before, f"{where}: playing on a clone changed the original"
        view = state.view(state.current_player)
        assert set(view.legal_actions()) == set(state.legal_actions()), (
            f"{where}: the acting seat's view must have the same legal actions"
        )
        state.apply(rng.choice(state.legal_actions()))


def check_views_hide(game: Game, seed: int = 0) -> None:
    """A game of hidden information overrides `State.view`: the default is a clone of everything, so every agent would
    see every hidden part (another seat's hand, the deck's order) and nothing else could tell."""
    if game.info.perfect_information:
        return
    state = game.new_initial_state(seed)
    assert type(state).view is not State.view, (
        f"game '{game.info.id}' is of hidden information (perfect_information=False) but {type(state).__name__} keeps "
        "State.view, a clone of everything: every agent would see what its seat may not; override view(player) to hide "
        "or re-sample the rest (README: hidden information)")


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), range, frozenset, tuple, type, types.ModuleType,
              types.FunctionType, types.BuiltinFunctionType, types.MethodType, enum.Enum)  # fmt: skip


def _mutable_parts(root: object) -> dict[int, object]:
    """Every object reachable from `root` that could be changed in place (containers of immutables are walked)."""
    found: dict[int, object] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, Game)):
            continue  # classes, modules and the configured game are not part of a position
        seen.add(id(obj))
        frozen = dataclasses.is_dataclass(obj) and obj.__dataclass_params__.frozen  # type: ignore[union-attr]
        if not isinstance(obj, _IMMUTABLE) and not frozen and obj is not root:
            found[id(obj)] = obj
        stack.extend(gc.get_referents(obj))
        for name in getattr(type(obj), "__slots__", ()):  # slot values (get_referents skips untracked ones)
            if hasattr(obj, name):
                stack.append(getattr(obj, name))
    return found


def check_no_shared_state(game: Game, seed: int) -> None:
    """A clone and every seat's view share no mutable object with the state they come from: an agent that changes
    what it was given can never change the real state (or learn its hidden parts through a shared object)."""
    for where, state in _positions(game, seed, 30):
        if state.is_terminal():
            break
        _check_unshared(game, state, where)


def _attributes(obj: object) -> list[tuple[str, object]]:
    """An object's attributes by name: its __dict__'s and its slots'."""
    found = list(getattr(obj, "__dict__", {}).items())
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name != "__dict__" and hasattr(obj, name):
                found.append((name, getattr(obj, name)))
    return found


def _check_unshared(game: Game, state: State, where: str) -> None:
    real = _mutable_parts(state)
    for label, copy in [("clone()", state.clone())] + [(f"view({p})", state.view(p)) for p in range(game.num_players)]:
        shared = [obj for key, obj in _mutable_parts(copy).items() if key in real]
        if shared:
            held = [name for name, value in _attributes(copy) if id(value) in real or _mutable_parts(value).keys() & real.keys()]
            raise AssertionError(
                f"{where}: {label} shares mutable objects with the state it was made from: "
                f"{sorted({type(obj).__name__ for obj in shared})}" + (f", in its attribute(s) {', '.join(held)}" if held else "")
                + "; give the copy its own, or hold what never changes in a tuple or frozenset")  # fmt: skip


def check_observation(game: Game, seed: int) -> None:
    try:
        first = game.new_initial_state(seed).observation(0)
    except NotImplementedError:
        return
    shape = getattr(first, "shape", None)
    planes = game.observation_planes()
    if planes is not None:  # board planes at the head of a flat observation
        assert shape is not None and len(shape) == 1 and len(planes) == 3 and math.prod(planes) <= shape[0], (
            f"game '{game.info.id}': observation_planes {planes} is not the head of its flat observation of shape {shape}")
    seen: list[tuple[State, int]] = []
    for _, state in _positions(game, seed):
        if state.is_terminal():
            break
        for player in range(game.num_players):
            obs = state.observation(player)
            assert getattr(obs, "shape", None) == shape, f"game '{game.info.id}': observation shape changes"
            seen.append((state.clone(), player))
    check_observations(game, seen)


def check_observations(game: Game, seen: Sequence[tuple[State, int]]) -> None:
    """`State.observations` (a batch at once) writes exactly the rows `observation` gives, one by one."""
    if not seen:
        return
    import numpy as np

    states, players = [state for state, _ in seen], [player for _, player in seen]
    expected = np.stack([np.asarray(state.observation(player), dtype=np.float32) for state, player in seen])
    out = np.full(expected.shape, np.nan, dtype=np.float32)
    type(states[0]).observations(states, players, out)
    assert np.array_equal(out, expected), f"game '{game.info.id}': State.observations differs from observation"


def _json_text(view: Any, where: str) -> str:
    try:
        return json.dumps(view, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise AssertionError(f"{where}: to_json gave what JSON cannot hold ({exc}); remote agents are sent it") from None


def _json_views(game: Game, state: State, where: str) -> list[str]:
    """Every seat's `to_json` view as JSON text; in a game of hidden information each equal to the one from that seat's
    `view()`."""
    views = [_json_text(state.to_json(player), f"{where} seat {player}") for player in range(game.num_players)]
    for player in range(game.num_players) if not game.info.perfect_information else ():
        seen = _json_text(state.view(player).to_json(player), f"{where} seat {player}'s view")
        assert seen == views[player], (
            f"{where} seat {player}: to_json sends what the seat may not see: it differs between the real state "
            f"and the seat's view (which re-samples the hidden parts):\nreal: {views[player]}\nview: {seen}")
    return views


def check_json_view(game: Game, seed: int) -> None:
    """Where the game offers `State.to_json`: every seat's view is JSON (remote agents are sent it); in a game of hidden
    information it is the same from the real state as from that seat's `view()` (which re-samples what the seat may not
    see: a `to_json` that sends another seat's hand or the deck's order differs there); and where it offers
    `Game.state_from_json`, the state rebuilt from the acting seat's view shows that seat the same view, the same legal
    actions and the same seat to move (`arena connect` plays from it)."""
    try:
        game.new_initial_state(seed).to_json(0)
    except NotImplementedError:
        return
    rebuilds = True
    for step, (where, state) in enumerate(_positions(game, seed)):
        with _games_own_code(where):
            views = _json_views(game, state, where)
            if state.is_terminal():
                return
            rebuilds = rebuilds and _check_rebuilt(game, state, views, step, where)


def _check_rebuilt(game: Game, state: State, views: list[str], sample: int, where: str) -> bool:
    """The state `state_from_json` rebuilds from the acting seat's view (a game of hidden information determinised
    from `random.Random(sample)`) shows that seat the same view, legal actions and seat to move; False when the game
    does not offer state_from_json."""
    seat = state.current_player
    data = json.loads(views[seat])
    try:
        if game.info.perfect_information:
            rebuilt = game.state_from_json(data, seat)
        else:
            rebuilt = game.state_from_json(data, seat, rng=random.Random(sample))  # type: ignore[call-arg]
    except NotImplementedError:
        return False
    again = _json_text(rebuilt.to_json(seat), f"{where}: the state rebuilt by state_from_json")
    assert again == views[seat], f"{where}: state_from_json rebuilt a state whose view differs:\n got: {again}\nwant: {views[seat]}"
    assert rebuilt.current_player == seat, (
        f"{where}: state_from_json rebuilt a state with seat {rebuilt.current_player} to move, not {seat}")
    assert sorted(rebuilt.legal_actions()) == sorted(state.legal_actions()), (
        f"{where}: the state rebuilt by state_from_json has other legal actions: {rebuilt.legal_actions()} "
        f"against {state.legal_actions()}")  # fmt: skip
    return True


SVG_NAMESPACE = "{http://www.w3.org/2000/svg}"


def check_svg(document: str, where: str = "render_svg") -> Any:
    """`document` is one self-contained inline SVG as `State.render_svg` must give (README, "Board pictures"): well-formed,
    an <svg> root in the SVG namespace with a viewBox from 0 0 and a <title>, and nothing outside it (no href, no url(),
    no http, no script, no foreignObject). Returns the parsed root."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise AssertionError(f"{where}: not well-formed SVG ({exc})") from None
    assert root.tag == f"{SVG_NAMESPACE}svg", f"{where}: the root is {root.tag}, not an <svg> of the SVG namespace"
    box = root.get("viewBox", "").split()
    assert len(box) == 4 and box[:2] == ["0", "0"], f"{where}: needs a viewBox from 0 0 (got {root.get('viewBox')!r})"
    title = root.find(f"{SVG_NAMESPACE}title")
    assert title is not None and title.text, f"{where}: needs a <title> (what the picture shows, for screen readers)"
    for element in root.iter():
        for name, value in element.attrib.items():
            assert "href" not in name and "url(" not in value, f"{where}: refers outside itself ({name}={value!r})"
    assert "http" not in document.replace(f'xmlns="{SVG_NAMESPACE[1:-1]}"', ""), f"{where}: names an http(s) address"
    assert "<script" not in document and "<foreignObject" not in document, f"{where}: holds a script or foreignObject"
    return root


def check_pictures(game: Game, seed: int) -> None:
    """Where the game draws its positions (`State.render_svg`), every position of a random play-through is one
    self-contained SVG (check_svg), or None."""
    for position, state in _positions(game, seed):
        if not _check_picture(state, position):
            return


def _check_picture(state: State, position: str) -> bool:
    """The state's picture, if it draws one, is one self-contained SVG; False when it draws none."""
    where = f"{position}: render_svg"
    with _games_own_code(where):
        document = state.render_svg()
    if document is None:
        return False
    assert isinstance(document, str), f"{where}: gave {type(document).__name__}, not a str or None"
    check_svg(document, where)
    return True


def check_game(game: Game, seeds: Iterable[int] = range(20)) -> None:
    """Every check for one configured game."""
    check_metadata(game)
    seeds = list(seeds)
    for seed in seeds:
        first = random_playthrough(game, seed)
        again = random_playthrough(game, seed, check=False)
        assert first == again, f"game '{game.info.id}' seed {seed}: same seed and actions gave another trajectory"
    for seed in seeds[:3]:
        check_clone_independent(game, seed)
        check_no_shared_state(game, seed)
        check_observation(game, seed)
        check_json_view(game, seed)
        check_pictures(game, seed)


# ---------------------------------------------------------------- property tests
# `positions(game)` is a Hypothesis strategy: a seed for the initial state, then legal actions drawn one by one. A
# failing example shrinks towards seed 0, fewer plies and the first legal actions, and prints as the seed and the
# actions (ids and names) that reach it. `check_position` checks the contract there; a plugin adds its own invariants:
#
#     @given(positions(Nim()))
#     def test_nim(position):
#         check_position(position)
#         assert sum(position.state.returns()) == 0


def _reached(game: Game, seed: int, actions: Sequence[int], names: Sequence[str]) -> str:
    played = f"after actions {list(actions)} ({', '.join(names)})" if actions else "its initial state"
    return f"game '{game.info.id}' seed {seed}, {played}"


@dataclasses.dataclass(frozen=True, repr=False)
class Position:
    """A position of `game`: its initial state from `seed`, then `actions` played (`names` their action_to_string)."""

    game: Game
    seed: int
    actions: tuple[int, ...]
    names: tuple[str, ...]
    state: State

    @property
    def where(self) -> str:
        return _reached(self.game, self.seed, self.actions, self.names)

    def __repr__(self) -> str:
        return f"Position({self.where})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # how Hypothesis prints a failing example
        printer.text(repr(self))

    def replay(self) -> State:
        """The position again, from the seed and the actions."""
        state = self.game.new_initial_state(self.seed)
        for action in self.actions:
            state.apply(action)
        return state


def positions(game: Game, max_plies: int | None = None) -> SearchStrategy[Position]:
    """A Hypothesis strategy of positions of `game`: the initial state of a drawn seed, then up to `max_plies` legal
    actions drawn one at a time (by default the game's max_game_length(), or Arena's turn limit for a game without
    one); a play-through that ends sooner gives its terminal state. Needs the `hypothesis` package."""
    from hypothesis import strategies as st

    bound = game.max_game_length()
    cap = max_plies if max_plies is not None else bound if bound is not None else DEFAULT_MAX_TURNS

    @st.composite
    def position(draw: Callable[[SearchStrategy[int]], int]) -> Position:
        seed = draw(st.integers(0, 2**32 - 1))
        plies = draw(st.integers(0, cap))
        actions: list[int] = []
        names: list[str] = []
        with _games_own_code(lambda: _reached(game, seed, actions, names)):  # (where it got to, written out if it fails)
            state = game.new_initial_state(seed)
            while len(actions) < plies and not state.is_terminal():
                legal = state.legal_actions()
                assert legal, "a non-terminal state must have legal actions"
                action = legal[draw(st.integers(0, len(legal) - 1))]
                name = state.action_to_string(action)
                state.apply(action)
                actions.append(action)
                names.append(name)
        return Position(game, seed, tuple(actions), tuple(names), state)

    return position()


def check_position(position: Position) -> None:
    """The contract at one position, as check_game checks it along its play-throughs: legal actions, names both ways,
    returns and the seat to move; within the game's max_game_length(); the same seed and actions reach the same
    position; a clone plays every legal action without changing the original, and neither it nor any seat's view
    shares a mutable object with it; the acting seat's view has the same legal actions; and where the game offers
    them, every seat's to_json view (with state_from_json's rebuild), the observations' shape and the picture."""
    game, state, where = position.game, position.state, position.where
    check_views_hide(game, position.seed)
    with _games_own_code(where):
        legal = _check_state(game, state, where)
        bound = game.max_game_length()
        assert bound is None or len(position.actions) < bound or state.is_terminal(), (
            f"{where}: not over after max_game_length()={bound}")
        before = _snapshot(state)
        assert _snapshot(position.replay()) == before, f"{where}: the same seed and actions reached another position"
        for action in legal:
            copy = state.clone()
            assert _snapshot(copy) == before, f"{where}: a clone differs from its original"
            copy.apply(action)
            assert _snapshot(state) == before, f"{where}: playing {action} on a clone changed the original"
        if not state.is_terminal():
            _check_unshared(game, position.replay(), where)  # as play leaves it (a cache filled by a read may be shared)
            assert set(state.view(state.current_player).legal_actions()) == set(legal), (
                f"{where}: the acting seat's view must have the same legal actions")
            _check_observation_shape(game, position)
        try:
            views = _json_views(game, state, where)
        except NotImplementedError:
            views = []
        if views and not state.is_terminal():
            _check_rebuilt(game, state, views, len(position.actions), where)
        _check_picture(state, where)


def _check_observation_shape(game: Game, position: Position) -> None:
    try:
        shape = getattr(game.new_initial_state(position.seed).observation(0), "shape", None)
    except NotImplementedError:
        return
    for player in range(game.num_players):
        seen = getattr(position.state.observation(player), "shape", None)
        assert seen == shape, f"{position.where}: seat {player}'s observation has shape {seen}, the initial state's {shape}"


def game_problem(game: Game, seed: int = 0) -> str | None:
    """What a quick look finds wrong with a game (one random play-through, clone independence, no state shared between
    states), or None. A tournament of a plugin's game runs it first: a game whose clone shares state would otherwise
    make the search agents that look ahead forfeit as if they had changed the real state."""
    try:
        random_playthrough(game, seed)
        check_clone_independent(game, seed)
        check_no_shared_state(game, seed)
    except AssertionError as exc:
        return first_line(exc) or "a check failed"
    except Exception as exc:  # noqa: BLE001  (the game's own code failed: any exception)
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    return None


def _watch(agent: Agent) -> None:
    """Make `agent.act` fail if it changes the state it is given (the runner hands over live states)."""
    inner = agent.act

    def act(state: State) -> int:
        before = _snapshot(state)
        action = inner(state)
        if _snapshot(state) != before:
            raise AssertionError(f"agent '{agent.info.id}' changed the state it was given; clone it to look ahead")
        return action

    agent.act = act  # type: ignore[method-assign]


def agent_problems(
    agent_cls: type[Agent], game: Game, params: dict[str, Any] | None = None, seeds: Iterable[int] = range(3),
    max_turns: int = 200, deterministic: bool = True, time_per_move: float | None = None,
    network_allowance: float = DEFAULT_NETWORK_ALLOWANCE, on_match: Callable[[Agent, MatchResult], None] | None = None,
) -> list[str]:  # fmt: skip
    """What is wrong with the agent, one line per failed match (empty when it passes): it must answer a legal
    action in time in every seat, never change the state it is given, and (if `deterministic`) play the same
    match from the same seed. `on_match(agent, result)` sees every match played."""
    from arena.plugins import get_registry  # the opponents are the built-in random agent where available

    params = dict(params or {})
    agent_cls.check_game(game, params)
    registry = get_registry()
    opponent_cls = registry.agents.get("random", agent_cls)
    problems = []
    for seed in seeds:
        for seat in range(game.num_players):
            results = []
            for _ in range(2 if deterministic else 1):
                agents = [
                    agent_cls(game, p, derive_seed(seed, p), **params) if p == seat else opponent_cls(game, p, derive_seed(seed, p))
                    for p in range(game.num_players)
                ]  # fmt: skip
                _watch(agents[seat])
                result = play_match(game, agents, seed, max_turns=max_turns, time_per_move=time_per_move,
                                    network_allowance=network_allowance)  # fmt: skip
                if on_match is not None:
                    on_match(agents[seat], result)
                if result.reason not in ("normal", "turn_limit"):
                    problems.append(f"agent '{agent_cls.info.id}' in seat {seat} on '{game.info.id}' seed {seed}: "
                                    f"{result.reason} ({result.detail})")  # fmt: skip
                    break
                results.append((result.moves, result.outcomes))
            if len(results) == 2 and results[0] != results[1]:
                problems.append(f"agent '{agent_cls.info.id}' on '{game.info.id}' seed {seed}: the same seed gave another match")
    return problems


def check_agent(
    agent_cls: type[Agent], game: Game, params: dict[str, Any] | None = None, seeds: Iterable[int] = range(3),
    max_turns: int = 200, time_per_move: float | None = None,
) -> None:  # fmt: skip
    """The agent answers a legal action in every seat (within `time_per_move`, if given), and the same seed gives the
    same match."""
    problems = agent_problems(agent_cls, game, params, seeds, max_turns, time_per_move=time_per_move)
    assert not problems, problems[0]


# ---------------------------------------------------------------- golden play-throughs
# A golden file pins a game's rules, encodings, action names and rendering at once: a seeded match written out move by
# move (`transcript`) and compared with a stored file (`check_golden`); any change shows up as a readable diff line.
# After a deliberate rules or rendering change (bump the game's version too), rewrite the files with
# ARENA_UPDATE_GOLDEN=1 and review the diff before committing.

#: Set to 1 to (re)write golden files instead of comparing with them.
UPDATE_ENV = "ARENA_UPDATE_GOLDEN"


def _step_lines(turn: int, seat: int, action: int, text: str, after: State) -> list[str]:
    return [f"turn {turn} seat {seat} action {action} {text}", after.render(), ""]


def random_transcript(game: Game, seed: int, max_turns: int | None = None) -> str:
    """The play-through of a uniformly random policy drawn from `random.Random(seed)`."""
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    limit = max_turns if max_turns is not None else (game.max_game_length() or DEFAULT_MAX_TURNS)
    lines = [f"game {game.label()} seed {seed} policy random", state.render(), ""]
    turn = 0
    while not state.is_terminal() and turn < limit:
        turn += 1
        seat = state.current_player
        action = rng.choice(state.legal_actions())
        text = state.action_to_string(action)
        state.apply(action)
        lines += _step_lines(turn, seat, action, text, state)
    ending = f"returns {state.returns()}" if state.is_terminal() else "stopped at the turn limit"
    lines.append(f"result {ending} turns {turn}")
    return "\n".join(lines) + "\n"


def match_transcript(game: Game, seed: int, agents: Sequence[str], max_turns: int = DEFAULT_MAX_TURNS) -> str:
    """The play-through of a match between agent specs (`"greedy:eval=heuristic"`), seated in order.

    Agents are built the way a tournament builds them (same parameter checks, same per-seat seeds).
    """
    from arena.agents import build_entry
    from arena.params import parse_spec
    from arena.plugins import get_registry

    registry = get_registry()
    seated = []
    for seat, text in enumerate(agents):
        spec = parse_spec(text)
        entry = build_entry(registry, str(spec), spec.id, dict(spec.params), game)
        seated.append(entry.make(registry, game, seat, seed))
    result = play_match(game, seated, seed, max_turns=max_turns)
    state = game.new_initial_state(seed)
    lines = [f"game {game.label()} seed {seed} agents {' vs '.join(agents)}", state.render(), ""]
    for turn, action in enumerate(result.moves, start=1):
        seat = state.current_player
        text = state.action_to_string(action)
        state.apply(action)
        lines += _step_lines(turn, seat, action, text, state)
    lines.append(f"result {result.reason} turns {result.turns} scores {result.scores}"
                 + (f" ({result.detail})" if result.detail and result.reason != "normal" else ""))  # what went wrong, if anything
    return "\n".join(lines) + "\n"


def transcript(game: Game, seed: int, agents: Sequence[str] | None = None, max_turns: int | None = None) -> str:
    """A match between agent specs, or with `agents=None` a seeded random policy, as text."""
    if agents is None:
        return random_transcript(game, seed, max_turns)
    return match_transcript(game, seed, agents, max_turns if max_turns is not None else DEFAULT_MAX_TURNS)


def check_golden(path: str | os.PathLike[str], text: str) -> None:
    """Compare `text` with the golden file at `path`, or (re)write it when ARENA_UPDATE_GOLDEN=1.

    A mismatch names the first differing line, which is usually the move where behaviour changed.
    """
    path = Path(path)
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"missing golden file {path}; create it with {UPDATE_ENV}=1"
    expected = path.read_text()
    if text == expected:
        return
    got_lines, want_lines = text.splitlines(), expected.splitlines()
    for number, (got, want) in enumerate(zip(got_lines, want_lines), start=1):
        assert got == want, f"{path.name} line {number} differs:\n got: {got}\nwant: {want}\n({UPDATE_ENV}=1 rewrites it)"
    raise AssertionError(f"{path.name}: {len(got_lines)} lines now, {len(want_lines)} stored ({UPDATE_ENV}=1 rewrites it)")
