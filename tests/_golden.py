"""Golden play-throughs: a seeded match written out move by move, compared with a stored file.

A golden file pins a game's rules, encodings, action names and rendering at once: any change to
them shows up as a readable diff line. Use it from any game's tests:

    from tests._golden import check_golden, transcript

    def test_golden():
        text = transcript(MyGame(size=5), seed=7, agents=("random", "greedy:eval=heuristic"))
        check_golden("my_game_random_greedy", text)

`agents=None` plays a seeded uniformly random policy without any agent plugin. After a deliberate
rules or rendering change (bump the game's version too), regenerate the files with

    ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/ -k golden

and review the diff before committing.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path

from arena.agents import build_entry
from arena.api import Game, State
from arena.match import DEFAULT_MAX_TURNS, play_match
from arena.params import parse_spec
from arena.plugins import get_registry

GOLDEN_DIR = Path(__file__).parent / "golden"
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
    lines.append(f"result {result.reason} turns {result.turns} scores {result.scores}")
    return "\n".join(lines) + "\n"


def transcript(game: Game, seed: int, agents: Sequence[str] | None = None, max_turns: int | None = None) -> str:
    """A match between agent specs, or with `agents=None` a seeded random policy, as text."""
    if agents is None:
        return random_transcript(game, seed, max_turns)
    return match_transcript(game, seed, agents, max_turns if max_turns is not None else DEFAULT_MAX_TURNS)


def check_golden(name: str, text: str, directory: Path = GOLDEN_DIR) -> None:
    """Compare `text` with `directory/name.txt`, or (re)write the file when ARENA_UPDATE_GOLDEN=1.

    A mismatch names the first differing line, which is usually the move where behaviour changed.
    """
    path = directory / f"{name}.txt"
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
