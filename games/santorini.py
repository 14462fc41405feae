"""Santorini, base game (no god powers): 5x5, two workers each, move then build, climb to level 3 to win.

Rules follow RULES.md section 2 (Roxley rulebook).

Seats and setup
    Seat 0 is the Start Player. Worker placement is part of the game, in Roxley order: seat 0
    places its worker W1 then W2, then seat 1 places W1 then W2; then seat 0 takes the first turn.

Squares
    sq = row*5 + col, row 0 at the top. Written `a1`..`e5`: file a..e = col 0..4, rank 1..5 =
    row 4..0 (rank 1 at the bottom, as `render()` prints it).

Action ids (num_distinct_actions = 153)
    0..127   a turn: `(worker * 8 + move_dir) * 8 + build_dir`, worker 0 = W1, 1 = W2;
    128..152 placement: `128 + sq`, "place c3".
    Directions 0..7 = N, NE, E, SE, S, SW, W, NW (N = towards row 0): the move goes one step in
    move_dir, the build one step from the new square in build_dir.
    A winning move (up onto level 3) builds nothing and has exactly one id: the one whose
    build_dir points back where the worker came from, `(move_dir + 4) % 8` (that square is always
    on the board and free). Its string is "W1 b2-c3 wins".

Win and loss
    Moving up onto level 3 wins at once. A player who cannot move and then build on their turn
    loses: the game ends as soon as such a player is due to act, with the other player winning.

Parameter `limits`
    `unlimited` (default; boardspace.net and most engines) or `roxley`: the box's 22 level-1, 18
    level-2, 14 level-3 blocks and 18 domes. RULES.md marks running out as UNVERIFIED; here a
    build whose piece is exhausted is simply illegal (cstorm125/santorini's "build silently does
    nothing" would be a free pass, which the rules do not have).

Observation: the Santorini study's CNN input, 2x5x5 from a player's side: plane 0 = building
level / 4 (dome = 1), plane 1 = +1 own worker, -1 opponent worker. `observation_onehot(player)` is
the study's 325-entry ANN input (25 squares x 13 square states).

Features: the study's eight linear features (each in 0..1), mine then the opponent's: workers on
level 0, 1, 2 (count / 2) and centrality = average Euclidean distance of the workers from the centre
square / sqrt(8). `heuristic` is their dot product with the study's manual weights
[0, 2, 4, -1, 0, -2, -4, 1]; terminal states score +-9999 as in the study. The reading of
"centrality" (Euclidean, normalised) is ours: the study names it "average worker distance from the
board centre" without a metric.

`Santorini.position(...)` builds positions by hand (the text `render()` prints); `state.key()` is a
cheap hashable key for transposition tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import arena
from arena import TERMINAL, svg
from arena.api import win_loss_returns

NUM_ACTIONS = 153
PLACE = 128
DOME = 4
BOX = (22, 18, 14, 18)  # Roxley edition: level-1, level-2, level-3 blocks, domes

DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def _step(sq: int, direction: int) -> int:
    row, col = divmod(sq, 5)
    dr, dc = DIRECTIONS[direction]
    row, col = row + dr, col + dc
    return row * 5 + col if 0 <= row < 5 and 0 <= col < 5 else -1


# _NEIGHBOURS[sq]: (direction, square) pairs in direction order; _STEP[sq * 8 + d]: square or -1.
_NEIGHBOURS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((d, t) for d in range(8) if (t := _step(sq, d)) >= 0) for sq in range(25)
)
_STEP: tuple[int, ...] = tuple(_step(sq, d) for sq in range(25) for d in range(8))
_CENTRE_DISTANCE: tuple[float, ...] = tuple(
    math.hypot(sq // 5 - 2, sq % 5 - 2) / math.sqrt(8) for sq in range(25)
)

FEATURE_NAMES = (
    "my_workers_level0", "my_workers_level1", "my_workers_level2", "my_centre_distance",
    "their_workers_level0", "their_workers_level1", "their_workers_level2", "their_centre_distance",
)  # fmt: skip
MANUAL_WEIGHTS = (0.0, 2.0, 4.0, -1.0, 0.0, -2.0, -4.0, 1.0)
WIN_VALUE = 9999.0

_WORKER_MARKS = "ABXY"  # seat 0: W1 = A, W2 = B; seat 1: W1 = X, W2 = Y
_LEVEL_MARKS = "0123D"


def square_name(sq: int) -> str:
    return "abcde"[sq % 5] + str(5 - sq // 5)


def parse_square(text: str) -> int:
    text = text.strip().lower()
    if len(text) != 2 or text[0] not in "abcde" or text[1] not in "12345":
        raise arena.ArenaError(f"bad Santorini square {text!r} (expected a1..e5)")
    return (5 - int(text[1])) * 5 + "abcde".index(text[0])


class SantoriniState(arena.State):
    """levels: 25 ints (4 = dome); occupant: worker index p*2+w or -1; workers: 4 squares (-1 = unplaced).

    pieces: what is left in the box (level-1, level-2, level-3 blocks, domes), or None when unlimited.
    placed: how many workers are on the board (placement is over at 4).
    """

    __slots__ = ("levels", "occupant", "workers", "pieces", "placed", "current_player", "winner", "win_way")

    levels: list[int]
    occupant: list[int]
    workers: list[int]
    pieces: list[int] | None
    placed: int
    winner: int
    win_way: str

    # ---- rules ----

    def legal_actions(self) -> list[int]:
        p = self.current_player
        if p == TERMINAL:
            return []
        occupant = self.occupant
        if self.placed < 4:
            return [PLACE + sq for sq in range(25) if occupant[sq] < 0]
        levels = self.levels
        pieces = self.pieces
        # Which squares could take a piece: no worker, no dome, and (with limits) a piece left.
        if pieces is None:
            buildable = [o < 0 and lv < DOME for o, lv in zip(occupant, levels)]
        else:
            buildable = [o < 0 and lv < DOME and pieces[lv] > 0 for o, lv in zip(occupant, levels)]
        actions: list[int] = []
        append = actions.append
        workers = self.workers
        for w in (0, 1):
            src = workers[2 * p + w]
            level = levels[src]
            buildable[src] = pieces is None or pieces[level] > 0  # the square being left
            climb = level + 1
            for md, dst in _NEIGHBOURS[src]:
                height = levels[dst]
                # height <= climb also rules out domes: a worker stands on level 2 at most.
                if occupant[dst] >= 0 or height > climb:
                    continue
                base = (w * 8 + md) * 8
                if height == 3:
                    append(base + ((md + 4) & 7))  # winning move: one id, no build
                else:
                    actions += [base + bd for bd, b in _NEIGHBOURS[dst] if buildable[b]]
            buildable[src] = False
        return actions

    def apply(self, action: int) -> None:
        p = self.current_player
        occupant = self.occupant
        if action >= PLACE:
            sq = action - PLACE
            index = self.placed
            occupant[sq] = index
            self.workers[index] = sq
            self.placed = index + 1
            # Seat 0 places two, then seat 1 two, then seat 0 starts.
            nxt = 0 if index == 3 else (index + 1) >> 1
        else:
            index = 2 * p + (action >> 6)
            src = self.workers[index]
            dst = _STEP[src * 8 + ((action >> 3) & 7)]
            occupant[src] = -1
            occupant[dst] = index
            self.workers[index] = dst
            levels = self.levels
            if levels[dst] == 3:
                self.winner = p
                self.win_way = "climb"
                self.current_player = TERMINAL
                return
            b = _STEP[dst * 8 + (action & 7)]
            level = levels[b]
            levels[b] = level + 1
            if self.pieces is not None:
                self.pieces[level] -= 1
            nxt = 1 - p
        self.current_player = nxt
        if not self._can_act(nxt):
            self.winner = 1 - nxt
            self.win_way = "blocked"
            self.current_player = TERMINAL

    def _can_act(self, p: int) -> bool:
        """Whether `p` has any legal action (cheaper than legal_actions: stops at the first)."""
        if self.placed < 4:
            return True
        levels, occupant, pieces = self.levels, self.occupant, self.pieces
        for w in (2 * p, 2 * p + 1):
            src = self.workers[w]
            climb = levels[src] + 1
            for _, dst in _NEIGHBOURS[src]:
                height = levels[dst]
                if occupant[dst] >= 0 or height > climb:
                    continue
                if height == 3 or pieces is None:
                    return True  # a win needs no build; unlimited: the square just left takes a block
                for _, b in _NEIGHBOURS[dst]:
                    if (b == src or occupant[b] < 0) and levels[b] < DOME and pieces[levels[b]] > 0:
                        return True
        return False

    def returns(self) -> list[float]:
        return win_loss_returns(self.winner)

    def clone(self) -> SantoriniState:
        other = SantoriniState.__new__(SantoriniState)
        other.levels = self.levels[:]
        other.occupant = self.occupant[:]
        other.workers = self.workers[:]
        other.pieces = None if self.pieces is None else self.pieces[:]
        other.placed = self.placed
        other.current_player = self.current_player
        other.winner = self.winner
        other.win_way = self.win_way
        return other

    def key(self) -> tuple[bytes, tuple[int, ...], int, int]:
        """A cheap hashable key of the position, for transposition tables (the box follows from the levels)."""
        return (bytes(self.levels), tuple(self.workers), self.current_player, self.winner)

    # ---- text ----

    def action_to_string(self, action: int) -> str:
        if action >= PLACE:
            return f"place {square_name(action - PLACE)}"
        p = self.current_player if self.current_player != TERMINAL else 0
        w = action >> 6
        src = self.workers[2 * p + w]
        dst = _STEP[src * 8 + ((action >> 3) & 7)]
        if self.levels[dst] == 3:
            return f"W{w + 1} {square_name(src)}-{square_name(dst)} wins"
        build = _STEP[dst * 8 + (action & 7)]
        return f"W{w + 1} {square_name(src)}-{square_name(dst)} build {square_name(build)}"

    def string_to_action(self, text: str) -> int:
        words = text.lower().split()
        if len(words) == 2 and words[0] == "place":
            wanted = f"place {square_name(parse_square(words[1]))}"
        elif len(words) >= 2 and words[0] in ("w1", "w2") and "-" in words[1]:
            start, _, end = words[1].partition("-")
            move = f"W{words[0][1]} {square_name(parse_square(start))}-{square_name(parse_square(end))}"
            if len(words) == 2 or (len(words) == 3 and words[2] == "wins"):
                wanted = move + " wins"
            elif len(words) == 4 and words[2] == "build":
                wanted = f"{move} build {square_name(parse_square(words[3]))}"
            else:
                raise arena.ArenaError(f"bad Santorini action {text!r} (e.g. 'W1 b2-c3 build d4', 'place c3')")
        else:
            return super().string_to_action(text)
        for action in self.legal_actions():
            if self.action_to_string(action) == wanted:
                return action
        raise arena.ArenaError(f"Santorini action {text!r} is not legal here")

    def render(self) -> str:
        """Each square: its level (0-3, D = dome) then its worker (A/B = seat 0's W1/W2, X/Y = seat 1's) or '.'."""
        lines = ["   a  b  c  d  e"]
        for row in range(5):
            cells = []
            for col in range(5):
                sq = row * 5 + col
                who = self.occupant[sq]
                cells.append(_LEVEL_MARKS[self.levels[sq]] + (_WORKER_MARKS[who] if who >= 0 else "."))
            lines.append(f"{5 - row}  " + " ".join(cells))
        return "\n".join(lines + self._summary())

    def _summary(self) -> list[str]:
        """The lines under the board: what is left in the box (with piece limits), then who won or is to move."""
        lines = []
        if self.pieces is not None:
            left = self.pieces
            lines.append(f"Box: {left[0]} level-1, {left[1]} level-2, {left[2]} level-3, {left[3]} domes")
        if self.current_player == TERMINAL:
            how = "climbed to level 3" if self.win_way == "climb" else "the opponent cannot move and build"
            lines.append(f"Winner: seat {self.winner} ({how})")
        else:
            phase = "place a worker" if self.placed < 4 else "move and build"
            lines.append(f"To move: seat {self.current_player} ({phase})")
        return lines

    def render_svg(self) -> str:
        """Levels as stacked squares (dome = blue disc), workers A/B (seat 0) and X/Y (seat 1), the box, who moves."""
        cell, pad = 68, 24
        size = 5 * cell
        parts = [svg.rect(pad, pad, size, size, fill="#a5d6a7", stroke="#555", stroke_width=2)]
        shades = ("#f5f5f5", "#bdbdbd", "#8d8d8d")
        for sq in range(25):
            row, col = divmod(sq, 5)
            x, y = pad + col * cell, pad + row * cell
            parts.append(svg.rect(x, y, cell, cell, stroke="#555", stroke_width=1))
            level = self.levels[sq]
            for step in range(min(level, 3)):
                inset = 5 + 8 * step
                parts.append(svg.rect(x + inset, y + inset, cell - 2 * inset, cell - 2 * inset, fill=shades[step], stroke="#616161"))
            if level == 4:
                parts.append(svg.circle(x + cell / 2, y + cell / 2, cell * 0.2, fill="#1e88e5", stroke="#0d47a1", stroke_width=1.5))
            who = self.occupant[sq]
            if who >= 0:
                color = svg.PLAYER_COLORS[who >> 1]
                parts.append(svg.circle(x + cell / 2, y + cell / 2, cell * 0.24, fill=color, stroke="#fff", stroke_width=2))
                parts.append(svg.text(x + cell / 2, y + cell / 2, _WORKER_MARKS[who], size=16, fill="#fff", font_weight="bold"))
            if level:
                parts.append(svg.text(x + cell - 8, y + 9, "D" if level == 4 else level, size=10, fill="#333"))
        for i in range(5):
            parts.append(svg.text(pad / 2, pad + (i + 0.5) * cell, 5 - i, size=13, fill="#555"))
            parts.append(svg.text(pad + (i + 0.5) * cell, pad / 2, "abcde"[i], size=13, fill="#555"))
        lines = self._summary()
        for i, content in enumerate(lines):
            parts.append(svg.text(pad + size / 2, pad + size + 20 + 22 * i, content, size=15))
        return svg.document(size + 2 * pad, size + pad + 14 + 22 * len(lines), parts, f"Santorini: {lines[-1]}")

    def to_json(self, player: int) -> dict:
        """`levels`: rows 5 to 1 (as rendered), 0-3 or 4 (dome); `workers`: [row, col] of seat 0's two then seat 1's, or
        null; `pieces`: what is left in the box (level-1, level-2, level-3 blocks, domes), or null when unlimited."""
        return {
            "levels": [self.levels[row * 5:row * 5 + 5] for row in range(5)],
            "workers": [list(divmod(sq, 5)) if sq >= 0 else None for sq in self.workers],
            "pieces": None if self.pieces is None else list(self.pieces),
        }

    # ---- observations ----

    def observation(self, player: int) -> np.ndarray:
        """The study's CNN input (2x5x5): levels / 4, then +1 own worker / -1 opponent worker."""
        planes = np.zeros((2, 25), dtype=np.float32)
        planes[0] = np.asarray(self.levels, dtype=np.float32) * 0.25
        for index, sq in enumerate(self.workers):
            if sq >= 0:
                planes[1, sq] = 1.0 if index >> 1 == player else -1.0
        return planes.reshape(2, 5, 5)

    def observation_onehot(self, player: int) -> np.ndarray:
        """The study's ANN input: 325 = 25 squares x 13 states, entry sq*13 + state, where state is
        the level (0-4) with no worker, 5 + level with an own worker, 9 + level with an opponent's."""
        vector = np.zeros(325, dtype=np.float32)
        occupant = self.occupant
        for sq, level in enumerate(self.levels):
            who = occupant[sq]
            state = level if who < 0 else (5 if who >> 1 == player else 9) + level
            vector[sq * 13 + state] = 1.0
        return vector


def _finish(state: SantoriniState) -> SantoriniState:
    """Settle a freshly built state: a player due to act with no action has lost."""
    p = state.current_player
    if not state._can_act(p):
        state.winner = 1 - p
        state.win_way = "blocked"
        state.current_player = TERMINAL
    return state


class Santorini(arena.Game):
    info = arena.GameInfo(
        id="santorini",
        version="1",
        name="Santorini",
        params=(
            arena.Param(
                "limits",
                "unlimited",
                "building pieces: unlimited, or roxley (22/18/14 blocks, 18 domes; an exhausted piece cannot be built)",
                type=str,
                choices=("unlimited", "roxley"),
            ),
        ),
        description=(
            "Santorini base game with worker placement (seat 0 places both, then seat 1). "
            "Action = (worker*8 + move_dir)*8 + build_dir (0..127), 128 + square = place."
        ),
    )

    feature_names = FEATURE_NAMES
    manual_weights = MANUAL_WEIGHTS

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.limited = self.params["limits"] == "roxley"

    @property
    def num_distinct_actions(self) -> int:
        return NUM_ACTIONS

    def new_initial_state(self, seed: int = 0) -> SantoriniState:
        state = SantoriniState.__new__(SantoriniState)
        state.levels = [0] * 25
        state.occupant = [-1] * 25
        state.workers = [-1] * 4
        state.pieces = list(BOX) if self.limited else None
        state.placed = 0
        state.current_player = 0
        state.winner = -1
        state.win_way = ""
        return state

    def state_from_json(self, data: dict, player: int) -> SantoriniState:
        """The position of `to_json` with `player` to move: levels, workers (placed in seat order) and the box."""
        state = self.new_initial_state()
        state.levels = [level for row in data["levels"] for level in row]
        for index, where in enumerate(data["workers"]):
            if where is not None:
                sq = where[0] * 5 + where[1]
                state.workers[index] = sq
                state.occupant[sq] = index
                state.placed += 1
        if data.get("pieces") is not None:
            state.pieces = list(data["pieces"])
        state.current_player = player
        return state

    def max_game_length(self) -> int:
        # 4 placements, then every turn but a winning one adds one piece: at most 4 per square
        # (100) or the box's 72 pieces, plus the winning move.
        return 4 + (sum(BOX) if self.limited else 100) + 1

    def position(self, board: str, to_move: int, pieces: Sequence[int] | None = None) -> SantoriniState:
        """A hand-built position after placement (for tests and analysis).

        `board` is five lines of five tokens, rank 5 first, as `render()` prints them: a level
        (0-3 or D for a dome) optionally followed by a worker (A/B = seat 0's W1/W2, X/Y = seat
        1's W1/W2; '.' or nothing = none). All four workers must be present. With `limits=roxley`
        the box holds what the levels leave, unless `pieces` gives the four counts left.
        """
        lines = [line.split() for line in board.strip().splitlines()]
        if len(lines) == 6 and lines[0] == list("abcde"):
            lines = lines[1:]
        rows = [line[1:] if len(line) == 6 else line for line in lines]
        if len(rows) != 5 or any(len(r) != 5 for r in rows):
            raise arena.ArenaError("a Santorini board is 5 lines of 5 squares")
        state = self.new_initial_state()
        for row, tokens in enumerate(rows):
            for col, token in enumerate(tokens):
                sq = row * 5 + col
                level_mark, worker_mark = token[0].upper(), token[1:].upper()
                if level_mark not in _LEVEL_MARKS or worker_mark not in ("", ".", *_WORKER_MARKS):
                    raise arena.ArenaError(f"bad Santorini square {token!r}")
                state.levels[sq] = _LEVEL_MARKS.index(level_mark)
                if worker_mark not in ("", "."):
                    index = _WORKER_MARKS.index(worker_mark)
                    if state.workers[index] >= 0 or state.levels[sq] == DOME:
                        raise arena.ArenaError(f"worker {worker_mark} placed twice or on a dome")
                    state.workers[index] = sq
                    state.occupant[sq] = index
        if min(state.workers) < 0:
            raise arena.ArenaError("a Santorini position needs all four workers (A, B, X, Y)")
        if to_move not in (0, 1):
            raise arena.ArenaError("to_move must be 0 or 1")
        state.placed = 4
        state.current_player = to_move
        if self.limited:
            if pieces is None:
                used = [sum(1 for level in state.levels if level > k) for k in range(4)]
                pieces = [box - u for box, u in zip(BOX, used)]
            if len(pieces) != 4 or min(pieces) < 0:
                raise arena.ArenaError("pieces must be four counts >= 0 (level-1, level-2, level-3, domes)")
            state.pieces = list(pieces)
        return _finish(state)

    def features(self, state: arena.State, player: int) -> list[float]:
        """The study's eight features, mine then the opponent's; unplaced workers count on no
        level and at the largest distance (1.0)."""
        levels = state.levels  # type: ignore[attr-defined]
        workers = state.workers  # type: ignore[attr-defined]
        out = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        for base, q in ((0, player), (4, 1 - player)):
            distance = 0.0
            for sq in (workers[2 * q], workers[2 * q + 1]):
                if sq < 0:
                    distance += 1.0
                    continue
                level = levels[sq]
                if level < 3:
                    out[base + level] += 0.5
                distance += _CENTRE_DISTANCE[sq]
            out[base + 3] = distance * 0.5
        return out

    def heuristic(self, state: arena.State, player: int) -> float:
        """The study's manual linear evaluation; +-9999 for a finished game."""
        if state.current_player == TERMINAL:
            return WIN_VALUE * state.returns()[player]
        f = self.features(state, player)
        return 2.0 * (f[1] - f[5]) + 4.0 * (f[2] - f[6]) - f[3] + f[7]


@arena.hookimpl
def register_games(register):
    register(Santorini)
