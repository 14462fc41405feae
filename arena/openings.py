"""Openings: the plies every set of paired matches starts from, so deterministic agents play different games.

Two kinds, both fixed before the first match:
- `random:N`: N uniformly random legal plies, drawn from the seed of the set of matches that share
  the opening (see arena.tournament: a set is one match per seating, e.g. two with the seats
  swapped), from that seed's initial state. A draw that ends the game within N plies is re-drawn.
- `FILE`: one opening per line, plies as action ids or names (separated by commas, or by spaces
  when the line has no comma; a comma at the end makes a one-ply line of a name with spaces in it);
  blank lines and lines starting with `#` are skipped. Set k plays line k modulo the number of
  lines, in file order, so a resumed tournament repeats no opening. A name is kept as written and
  read in each set's own deal: in a game whose set-up is dealt (Onitama's cards) the same name may
  be another action id from one deal to the next.
- a list of such lines (the HTTP API's `"openings": [...]`: a server reads no file named by a request).

Every opening of the schedule (each set, in the game of each of its seatings, with its deal) is
checked when the tournament is created (check_openings), and again as each match is prepared
(opening_for): an opening that cannot be played is refused before anything is written, never played.

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
from arena.schedule import Table
from arena.seeding import derive_seed, game_seed
from db.queries import id_from_text, is_number

#: Attempts at a random opening that does not end the game before giving up (a game that short is no game).
RANDOM_ATTEMPTS = 100


#: A file opening's plies as stored: action ids, and names as written (read in each set's deal).
Plies = list[int | str]


def parse_openings(text: str | Sequence[str], game: Game, deal: int) -> dict[str, Any]:
    """--openings as stored in the tournament settings: {"kind": "random", "plies": N} or {"kind": "file", ...}; each
    opening is tried in the game dealt by `deal` (the first set's), so a mistake is told with its line."""
    if not isinstance(text, str):
        return _openings(game, list(text), deal, "openings: no openings in the list", lambda number: f"openings[{number - 1}]")
    if text.startswith("random:"):
        value = text[len("random:"):]
        plies = id_from_text(value)
        if plies is None or not 1 <= plies <= MAX_TURNS:
            raise ArenaError(f"--openings random:N needs a whole number of plies from 1 to {MAX_TURNS:,}, got '{shown(value)}'")
        return {"kind": "random", "plies": plies}
    path = Path(text)
    if path.is_dir():
        raise ArenaError(f"--openings must be random:N or a file of openings; '{text}' is a directory")
    if not path.is_file():
        raise ArenaError(f"--openings must be random:N or a file of openings; no file '{text}'")
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # (-sig: a byte-order mark some editors write is no ply)
    except (OSError, UnicodeDecodeError) as exc:
        raise ArenaError(f"--openings: cannot read '{text}': {exc}") from None
    source = f"--openings {path.name}"
    return _openings(game, lines, deal, f"{source}: no openings in the file", lambda number: f"{source} line {number}", path.name)


def _openings(game: Game, lines: list[str], deal: int, empty: str, where: Callable[[int], str],
              file: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The openings of `lines` (blank and `#` lines skipped), each tried in `deal`'s game; `where(n)` names line n."""
    openings: list[Plies] = []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        plies = _parse_line(line, where(number))
        try:
            played(game, plies, deal)
        except ArenaError as exc:
            raise ArenaError(f"{where(number)}: {exc}") from None
        openings.append(plies)
    if not openings:
        raise ArenaError(f"{empty} (one opening per line)")
    return {"kind": "file", "file": file, "lines": openings}


def _parse_line(line: str, where: str) -> Plies:
    """A line's plies: ids as numbers, anything else as the name written."""
    tokens = [t.strip() for t in (line.split(",") if "," in line else line.split())]
    if len(tokens) > 1 and not tokens[-1]:  # a comma at the end: `Cobra e5-d4,` is one ply named with a space
        tokens.pop()
    plies: Plies = []
    for token in tokens:
        if not token:
            raise ArenaError(f"{where}: an empty ply")
        if is_number(token.lstrip("-")):  # an action id; a negative or 64-bit-overflowing one is no legal action
            number = None if token.startswith("-") else id_from_text(token)
            plies.append(number if number is not None else token)
        else:
            plies.append(token)
    return plies


def played(game: Game, plies: Sequence[int | str], deal: int) -> list[int]:
    """The opening's action ids in the game dealt by `deal`; ArenaError saying why when it cannot be played there (a
    ply that is not legal, the game over before a ply, or ended by the opening)."""
    state = game.new_initial_state(deal)
    actions: list[int] = []
    for ply in plies:
        if state.is_terminal():
            raise ArenaError(f"the game is over before '{shown(str(ply))}'")
        action = ply if isinstance(ply, int) else _action(state, ply)
        if action is None or action not in state.legal_actions():
            legal = ", ".join(f"{a}={state.action_to_string(a)}" for a in state.legal_actions()[:12])
            raise ArenaError(f"'{shown(str(ply))}' is not a legal action after {len(actions)} plies (legal: {legal})")
        state.apply(action)
        actions.append(action)
    if state.is_terminal():
        raise ArenaError("the opening ends the game")
    return actions


def _action(state: State, name: str) -> int | None:
    if is_number(name.lstrip("-")):  # a number too large or negative (kept as written): no action
        return None
    try:
        return int(state.string_to_action(name))
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


def opening_for(game: Game, openings: dict[str, Any] | None, set_index: int, deal: int) -> list[int]:
    """The action ids of set `set_index`'s opening in the game dealt by `deal` (the deal its matches share), under the
    tournament's openings setting; ArenaError when it cannot be played there (check_openings tells it up front)."""
    if not openings:
        return []
    if openings["kind"] == "random":
        try:
            return random_opening(game, openings["plies"], deal)
        except ArenaError as exc:
            raise ArenaError(f"{exc} (set {set_index + 1}'s deal)") from None
    lines: Sequence[Plies] = openings["lines"]
    number = set_index % len(lines)
    try:
        return played(game, lines[number], deal)
    except ArenaError as exc:
        source = f"--openings {openings['file']}" if openings.get("file") else "openings"
        raise ArenaError(f"{source}: opening {number + 1} cannot be played in set {set_index + 1}'s game (its deal, or its "
                         f"seats' parameters, differ from the first set's): {exc}; give openings that every deal "
                         "allows") from None  # fmt: skip


def check_openings(game_for: Callable[[Table], Game], openings: dict[str, Any] | None, tables: Sequence[Table],
                   set_size: int, seed: int, secret: str | None, sets: int | None = None) -> None:  # fmt: skip
    """Every set's opening, in the game of each of its seatings (`game_for`: seat parameters), with the deal its matches
    will have (the tournament's `secret` mixed in for hidden information): ArenaError for the first that cannot be
    played. `sets` (more than `tables` holds: an adaptive tournament's budget) checks the later sets in the game of
    the first seating, their agents not being chosen yet."""
    if not openings:
        return
    count = max(sets or 0, -(-len(tables) // set_size))
    for set_index in range(count):
        start = set_index * set_size
        seatings = tables[start:start + set_size] or tables[:1]
        set_seed = derive_seed(seed, start)
        tried: set[int] = set()
        for table in seatings:
            game = game_for(table)
            if id(game) not in tried:  # (seatings of one game: one try)
                tried.add(id(game))
                opening_for(game, openings, set_index, game_seed(game, set_seed, secret))
