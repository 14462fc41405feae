"""Openings: the plies every set of paired matches starts from, so deterministic agents play different games.

Two kinds, both fixed before the first match:
- `random:N`: N uniformly random legal plies, drawn from the seed of the set of matches that share
  the opening (see arena.tournament: a set is one match per seating, e.g. two with the seats
  swapped), from that seed's initial state. A draw that ends the game within N plies is re-drawn.
- `FILE`: one opening per line, plies as action ids or names (separated by commas, or by spaces
  when the line has no comma); blank lines and lines starting with `#` are skipped. Set k plays
  line k modulo the number of lines, in file order, so a resumed tournament repeats no opening.
  Every line is checked against the game when the tournament is created.
- a list of such lines (the HTTP API's `"openings": [...]`: a server reads no file named by a request).

An opening's plies are stored with the match (at the head of its move list); they are nobody's
turns and nobody's think time, and the turn limit counts from the end of the opening.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.api import Game, State
from arena.errors import ArenaError, shown
from arena.match import MAX_TURNS
from arena.seeding import derive_seed
from db.queries import id_from_text, is_number

#: Attempts at a random opening that does not end the game before giving up (a game that short is no game).
RANDOM_ATTEMPTS = 100


def parse_openings(text: str | Sequence[str], game: Game) -> dict[str, Any]:
    """--openings as stored in the tournament settings: {"kind": "random", "plies": N} or {"kind": "file", ...}."""
    if not isinstance(text, str):
        return _openings(game, list(text), "openings: no openings in the list", lambda number: f"openings[{number - 1}]")
    if text.startswith("random:"):
        value = text[len("random:"):]
        plies = id_from_text(value)
        if plies is None or not 1 <= plies <= MAX_TURNS:
            raise ArenaError(f"--openings random:N needs a whole number of plies from 1 to {MAX_TURNS:,}, got '{shown(value)}'")
        random_opening(game, plies, derive_seed("check", plies))  # a game too short for N plies fails now
        return {"kind": "random", "plies": plies}
    path = Path(text)
    if path.is_dir():
        raise ArenaError(f"--openings must be random:N or a file of openings; '{text}' is a directory")
    if not path.is_file():
        raise ArenaError(f"--openings must be random:N or a file of openings; no file '{text}'")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ArenaError(f"--openings: cannot read '{text}': {exc}") from None
    source = f"--openings {path.name}"
    return _openings(game, lines, f"{source}: no openings in the file", lambda number: f"{source} line {number}", path.name)


def _openings(game: Game, lines: list[str], empty: str, where: Callable[[int], str], file: str | None = None) -> dict[str, Any]:
    """The openings of `lines` (blank and `#` lines skipped), each checked against the game; `where(n)` names line n."""
    openings = []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        openings.append(_parse_line(game, line, where(number)))
    if not openings:
        raise ArenaError(f"{empty} (one opening per line)")
    return {"kind": "file", "file": file, "lines": openings}


def _parse_line(game: Game, line: str, where: str) -> list[int]:
    tokens = [t.strip() for t in (line.split(",") if "," in line else line.split())]
    state = game.new_initial_state(0)
    plies: list[int] = []
    for token in tokens:
        if not token:
            raise ArenaError(f"{where}: an empty ply")
        if state.is_terminal():
            raise ArenaError(f"{where}: the game is over before '{token}'")
        action = _action(state, token)
        if action is None or action not in state.legal_actions():
            legal = ", ".join(f"{a}={state.action_to_string(a)}" for a in state.legal_actions()[:12])
            raise ArenaError(f"{where}: '{shown(token)}' is not a legal action after {len(plies)} plies (legal: {legal})")
        state.apply(action)
        plies.append(action)
    if state.is_terminal():
        raise ArenaError(f"{where}: the opening ends the game")
    return plies


def _action(state: State, token: str) -> int | None:
    if is_number(token.lstrip("-")):  # an action id; a negative or 64-bit-overflowing one is no legal action
        return None if token.startswith("-") else id_from_text(token)
    try:
        return int(state.string_to_action(token))
    except Exception:  # a game's parser raises what it likes on text it does not know
        return None


def random_opening(game: Game, plies: int, seed: int) -> list[int]:
    """`plies` uniformly random legal actions from the initial state of `seed`, drawn from `seed`; never a finished game."""
    for attempt in range(RANDOM_ATTEMPTS):
        rng = random.Random(derive_seed(seed, "opening", attempt))
        state = game.new_initial_state(seed)
        moves: list[int] = []
        while len(moves) < plies and not state.is_terminal():
            action = rng.choice(state.legal_actions())
            state.apply(action)
            moves.append(action)
        if not state.is_terminal():
            return moves
    raise ArenaError(f"random openings of {plies} plies end the game {RANDOM_ATTEMPTS} times out of {RANDOM_ATTEMPTS}: use fewer plies")


def opening_for(game: Game, openings: dict[str, Any] | None, set_index: int, seed: int) -> list[int]:
    """The plies of set `set_index` (its matches' shared `seed`) under the tournament's openings setting."""
    if not openings:
        return []
    if openings["kind"] == "random":
        return random_opening(game, openings["plies"], seed)
    lines: Sequence[list[int]] = openings["lines"]
    return list(lines[set_index % len(lines)])


def check_file_openings(game: Game, openings: dict[str, Any] | None, seeds: Sequence[int]) -> None:
    """A file's openings must be legal from the initial state of every set's seed (chance may deal differently)."""
    if not openings or openings["kind"] != "file":
        return
    lines = openings["lines"]
    for set_index, seed in enumerate(seeds):
        plies = lines[set_index % len(lines)]
        state = game.new_initial_state(seed)
        for action in plies:
            if state.is_terminal() or action not in state.legal_actions():
                source = f"--openings {openings['file']}" if openings.get("file") else "openings"
                raise ArenaError(
                    f"{source}: opening {set_index % len(lines) + 1} is not legal with the deal "
                    f"of seed {seed} (a game with chance in its set-up): give openings legal for every deal"
                )
            state.apply(action)
