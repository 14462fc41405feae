"""Dots and Boxes with OpenSpiel's encoding (RULES.md section 4).

`rows` x `cols` boxes, so (rows+1) x (cols+1) dots. Horizontal lines come first:
h(r, c) for r = 0..rows, c = 0..cols-1 is action r*cols + c; then vertical lines:
v(r, c) for r = 0..rows-1, c = 0..cols is action (rows+1)*cols + r*(cols+1) + c.
A line that completes one or two boxes scores them for the mover, who moves again; the game
ends when every line is drawn; most boxes wins (+1/-1), equal counts draw (0/0).

Speed: each line knows its one or two boxes and each box its four lines as a bitmask, so a move
is one bit set plus at most two mask tests; the undrawn lines are kept as a sorted list that
`legal_actions()` copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

import arena
from arena import TERMINAL, svg

MAX_SIZE = 20
_ACTION_TEXT = re.compile(r"([hv])\(\s*(\d+)\s*,\s*(\d+)\s*\)")


@dataclass(frozen=True)
class Layout:
    """Everything about a board size that does not change during a game."""

    rows: int
    cols: int
    num_lines: int
    # For each line: ((box index, bitmask of that box's four lines), ...) for its one or two boxes.
    line_boxes: tuple[tuple[tuple[int, int], ...], ...]
    # For each box: its four lines (top, bottom, left, right), and the same as a bitmask.
    box_lines: tuple[tuple[int, int, int, int], ...]
    box_masks: tuple[int, ...]

    def h(self, r: int, c: int) -> int:
        return r * self.cols + c

    def v(self, r: int, c: int) -> int:
        return (self.rows + 1) * self.cols + r * (self.cols + 1) + c

    def describe(self, action: int) -> tuple[str, int, int]:
        """("h" or "v", r, c) of a line."""
        first_v = (self.rows + 1) * self.cols
        if action < first_v:
            return ("h",) + divmod(action, self.cols)
        return ("v",) + divmod(action - first_v, self.cols + 1)


@cache
def layout(rows: int, cols: int) -> Layout:
    num_lines = (rows + 1) * cols + rows * (cols + 1)
    first_v = (rows + 1) * cols
    box_lines = []
    for r in range(rows):
        for c in range(cols):
            top, bottom = r * cols + c, (r + 1) * cols + c
            left = first_v + r * (cols + 1) + c
            box_lines.append((top, bottom, left, left + 1))
    box_masks = tuple(sum(1 << line for line in lines) for lines in box_lines)
    boxes_of: list[list[tuple[int, int]]] = [[] for _ in range(num_lines)]
    for box, lines in enumerate(box_lines):
        for line in lines:
            boxes_of[line].append((box, box_masks[box]))
    return Layout(rows, cols, num_lines, tuple(tuple(b) for b in boxes_of), tuple(box_lines), box_masks)


class DotsAndBoxesState(arena.State):
    """`drawn` is the bitmask of drawn lines, `free` the sorted undrawn ones, `owner` each box's owner (-1 = none)."""

    __slots__ = ("layout", "drawn", "free", "owner", "scores", "current_player", "_line_boxes")

    def __init__(self, layout_: Layout) -> None:
        self.layout = layout_
        self._line_boxes = layout_.line_boxes  # a local copy of the hot table: one attribute look-up per move
        self.drawn = 0
        self.free = list(range(layout_.num_lines))
        self.owner = [-1] * (layout_.rows * layout_.cols)
        self.scores = [0, 0]
        self.current_player = 0

    def legal_actions(self) -> list[int]:
        return self.free[:]  # empty at the end, since every line is drawn

    def apply(self, action: int) -> None:
        self.free.remove(action)
        drawn = self.drawn | (1 << action)
        self.drawn = drawn
        completed = 0
        for box, mask in self._line_boxes[action]:
            if drawn & mask == mask:
                self.owner[box] = self.current_player
                completed += 1
        if completed:
            self.scores[self.current_player] += completed  # and the mover moves again
            if not self.free:
                self.current_player = TERMINAL
        elif self.free:
            self.current_player = 1 - self.current_player
        else:
            self.current_player = TERMINAL

    def returns(self) -> list[float]:
        if self.current_player != TERMINAL:
            return [0.0, 0.0]
        a, b = self.scores
        if a > b:
            return [1.0, -1.0]
        if b > a:
            return [-1.0, 1.0]
        return [0.0, 0.0]

    def clone(self) -> DotsAndBoxesState:
        other = DotsAndBoxesState.__new__(DotsAndBoxesState)
        other.layout = self.layout
        other._line_boxes = self._line_boxes
        other.drawn = self.drawn
        other.free = self.free[:]
        other.owner = self.owner[:]
        other.scores = self.scores[:]
        other.current_player = self.current_player
        return other

    # Reading the position.

    def sides(self, box: int) -> int:
        """How many of a box's four lines are drawn."""
        return (self.drawn & self.layout.box_masks[box]).bit_count()

    def capturable(self) -> int:
        """Boxes with exactly three sides drawn: the player to move can take each of them now."""
        drawn = self.drawn
        return sum(1 for mask in self.layout.box_masks if (drawn & mask).bit_count() == 3)

    def action_to_string(self, action: int) -> str:
        kind, r, c = self.layout.describe(action)
        return f"{kind}({r},{c})"

    def string_to_action(self, text: str) -> int:
        match = _ACTION_TEXT.fullmatch(text.strip().lower())
        if match is None:
            return super().string_to_action(text)  # an action id written as a number
        kind, r, c = match.group(1), int(match.group(2)), int(match.group(3))
        rows, cols = self.layout.rows, self.layout.cols
        if kind == "h" and 0 <= r <= rows and 0 <= c < cols:
            action = self.layout.h(r, c)
        elif kind == "v" and 0 <= r < rows and 0 <= c <= cols:
            action = self.layout.v(r, c)
        else:
            raise arena.ArenaError(f"dots_and_boxes: no line {text.strip()!r} on a {rows}x{cols} board")
        if self.drawn >> action & 1:
            raise arena.ArenaError(f"dots_and_boxes: line {text.strip()!r} is already drawn")
        return action

    def render(self) -> str:
        """Dots as '+', drawn lines as '---' and '|', a taken box shows its owner's seat (0 or 1)."""
        lay, drawn = self.layout, self.drawn
        lines = []
        for r in range(lay.rows + 1):
            dots = "+"
            for c in range(lay.cols):
                dots += ("---" if drawn >> lay.h(r, c) & 1 else "   ") + "+"
            lines.append(dots)
            if r == lay.rows:
                break
            cells = ""
            for c in range(lay.cols + 1):
                cells += "|" if drawn >> lay.v(r, c) & 1 else " "
                if c < lay.cols:
                    owner = self.owner[r * lay.cols + c]
                    cells += f" {owner} " if owner >= 0 else "   "
            lines.append(cells.rstrip())  # no trailing blanks: golden files and editors keep them apart
        a, b = self.scores
        status = "game over" if self.current_player == TERMINAL else f"player {self.current_player} to move"
        lines.append(f"boxes {a}-{b}, {status}")
        return "\n".join(lines)

    def to_json(self, player: int) -> dict:
        """`horizontal[r][c]` / `vertical[r][c]`: whether that line is drawn (the action ids' order); `boxes[r][c]`: owner or
        null; `scores`: boxes taken per seat."""
        lay, drawn = self.layout, self.drawn
        return {
            "horizontal": [[bool(drawn >> lay.h(r, c) & 1) for c in range(lay.cols)] for r in range(lay.rows + 1)],
            "vertical": [[bool(drawn >> lay.v(r, c) & 1) for c in range(lay.cols + 1)] for r in range(lay.rows)],
            "boxes": [[o if o >= 0 else None for o in self.owner[r * lay.cols:(r + 1) * lay.cols]] for r in range(lay.rows)],
            "scores": list(self.scores),
        }

    def render_svg(self) -> str:
        """Dots, drawn lines (undrawn ones faint), each taken box in its owner's colour with the seat number."""
        lay, drawn = self.layout, self.drawn
        gap = min(90.0, 360.0 / max(lay.rows, lay.cols))
        pad = 24.0
        parts = []
        for r in range(lay.rows):
            for c in range(lay.cols):
                owner = self.owner[r * lay.cols + c]
                if owner >= 0:
                    x, y = pad + c * gap, pad + r * gap
                    parts.append(svg.rect(x, y, gap, gap, fill=svg.PLAYER_COLORS[owner], fill_opacity=0.25))
                    parts.append(svg.text(x + gap / 2, y + gap / 2, owner, size=gap * 0.35, fill=svg.PLAYER_COLORS[owner]))
        for action in range(lay.num_lines):
            kind, r, c = lay.describe(action)
            x1, y1 = pad + c * gap, pad + r * gap
            x2, y2 = (x1 + gap, y1) if kind == "h" else (x1, y1 + gap)
            if drawn >> action & 1:
                parts.append(svg.line(x1, y1, x2, y2, "#222", 5, stroke_linecap="round"))
            else:
                parts.append(svg.line(x1, y1, x2, y2, "#ccc", 1.5, stroke_dasharray="4 4"))
        for r in range(lay.rows + 1):
            for c in range(lay.cols + 1):
                parts.append(svg.circle(pad + c * gap, pad + r * gap, 5, fill="#000"))
        a, b = self.scores
        status = "game over" if self.current_player == TERMINAL else f"seat {self.current_player} to move"
        width, height = lay.cols * gap + 2 * pad, lay.rows * gap + 2 * pad
        parts.append(svg.text(width / 2, height + 6, f"boxes: seat 0 {a} - seat 1 {b}, {status}", size=15))
        return svg.document(width, height + 24, parts, f"Dots and boxes: {a}-{b}, {status}")

    def observation(self, player: int) -> np.ndarray:
        """Planes on a (rows+1) x (cols+1) grid, float32: horizontal lines drawn at [r, c],
        vertical lines drawn at [r, c], boxes of `player`, boxes of the opponent (both at [r, c])."""
        lay = self.layout
        rows, cols = lay.rows, lay.cols
        bits = np.array([self.drawn >> i & 1 for i in range(lay.num_lines)], dtype=np.float32)
        planes = np.zeros((4, rows + 1, cols + 1), dtype=np.float32)
        first_v = (rows + 1) * cols
        planes[0, :, :cols] = bits[:first_v].reshape(rows + 1, cols)
        planes[1, :rows, :] = bits[first_v:].reshape(rows, cols + 1)
        owner = np.array(self.owner).reshape(rows, cols)
        planes[2, :rows, :cols] = owner == player
        planes[3, :rows, :cols] = owner == 1 - player
        return planes


# A finished game is worth this much per point of result (win +1, loss -1) in the heuristic.
TERMINAL_VALUE = 100.0


class DotsAndBoxes(arena.Game):
    info = arena.GameInfo(
        id="dots_and_boxes",
        version="1",
        name="Dots and Boxes",
        params=(
            arena.Param("rows", 3, "boxes from top to bottom", min=1, max=MAX_SIZE),
            arena.Param("cols", 3, "boxes from left to right", min=1, max=MAX_SIZE),
        ),
        description="Draw lines; completing a box scores it and moves again. Actions: h(r,c) first, then v(r,c).",
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.layout = layout(self.params["rows"], self.params["cols"])

    @property
    def num_distinct_actions(self) -> int:
        return self.layout.num_lines

    def action_planes(self) -> tuple[tuple[int, int], ...]:
        """Horizontal line h(r, c) sits at [r, c] of an (rows+1) x cols block, vertical v(r, c) at [r, c] of rows x (cols+1)."""
        return ((0, 1), (1, 0))

    def new_initial_state(self, seed: int = 0) -> DotsAndBoxesState:
        return DotsAndBoxesState(self.layout)

    def state_from_json(self, data: dict, player: int) -> DotsAndBoxesState:
        """The position of `to_json` (lines, boxes, scores) with `player` to move."""
        state = self.new_initial_state()
        lay = self.layout
        drawn = [lay.h(r, c) for r, row in enumerate(data["horizontal"]) for c, on in enumerate(row) if on]
        drawn += [lay.v(r, c) for r, row in enumerate(data["vertical"]) for c, on in enumerate(row) if on]
        state.drawn = sum(1 << line for line in drawn)
        state.free = [line for line in range(lay.num_lines) if not state.drawn >> line & 1]
        state.owner = [-1 if owner is None else owner for row in data["boxes"] for owner in row]
        state.scores = list(data["scores"])
        state.current_player = player
        return state

    def max_game_length(self) -> int:
        return self.layout.num_lines

    def box_difference(self, state: arena.State, player: int) -> float:
        """Boxes of `player` minus boxes of the opponent: the report's greedy player (capture if you can,
        else any move, since every non-capturing move ties)."""
        assert isinstance(state, DotsAndBoxesState)
        return float(state.scores[player] - state.scores[1 - player])

    def heuristic(self, state: arena.State, player: int) -> float:
        """One ply, from `player`'s view: box difference, plus the three-sided boxes when `player` moves
        next (they are there to take), minus them when the opponent does (they were handed over).

        So a capture scores best and drawing the third side of a box worst. A finished game is
        worth +-100 plus the box difference.
        """
        assert isinstance(state, DotsAndBoxesState)
        diff = state.scores[player] - state.scores[1 - player]
        if state.current_player == TERMINAL:
            return TERMINAL_VALUE * state.returns()[player] + diff
        open_boxes = state.capturable()
        return float(diff + open_boxes if state.current_player == player else diff - open_boxes)

    feature_names = ("boxes", "open_boxes", "two_sided")
    #: Weights for a linear evaluator over `features`: the heuristic before the end.
    default_weights = (1.0, 1.0, 0.0)

    def features(self, state: arena.State, player: int) -> tuple[float, float, float]:
        """Box lead; three-sided boxes (+ when `player` moves next and can take them, - when the
        opponent can); two-sided boxes (where the next line drawn hands a box over)."""
        assert isinstance(state, DotsAndBoxesState)
        diff = state.scores[player] - state.scores[1 - player]
        open_boxes = state.capturable()
        if state.current_player != player:
            open_boxes = -open_boxes
        drawn = state.drawn
        two_sided = sum(1 for mask in state.layout.box_masks if (drawn & mask).bit_count() == 2)
        return float(diff), float(open_boxes), float(two_sided)

    def evaluations(self) -> dict[str, arena.api.Evaluation]:
        return {"heuristic": self.heuristic, "greedy": self.box_difference}


@arena.hookimpl
def register_games(register):
    register(DotsAndBoxes)
