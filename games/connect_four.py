"""Connect four with OpenSpiel's encoding: action = column (0 = left); player 0 is "x" and moves first.

Cells are stored at row*columns + col with row 0 at the bottom; `render()` prints the top row first.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

import arena
from arena import TERMINAL, svg
from arena.api import win_loss_returns

_MARKS = ".xo"
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


@cache
def _windows(rows: int, cols: int, k: int) -> tuple[tuple[int, ...], ...]:
    """Every run of k cells in a line: the places a win can happen."""
    result = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in _DIRECTIONS:
                end_r, end_c = r + dr * (k - 1), c + dc * (k - 1)
                if 0 <= end_r < rows and 0 <= end_c < cols:
                    result.append(tuple((r + dr * i) * cols + c + dc * i for i in range(k)))
    return tuple(result)


def _run_shifts(k: int, step: int) -> tuple[int, ...]:
    """Shifts that reduce a bitboard to the cells starting a run of k discs `step` apart.

    A run of L discs at x and a run of L at x + s*step (s <= L) make a run of L + s at x, so
    doubling reaches k in about log2(k) and-shift steps (1, 2, 4 for k = 4).
    """
    shifts = []
    length = 1
    while length < k:
        grow = min(length, k - length)
        shifts.append(grow * step)
        length += grow
    return tuple(shifts)


@cache
def _observation_tables(rows: int, cols: int, player: int) -> tuple[np.ndarray, np.ndarray]:
    """What `observation` reads a board through (two look-ups instead of a comparison per plane): which
    planes (own, opponent, empty) a cell value (0 empty, 1 seat 0, 2 seat 1) sets, one column per value,
    and the cells in observation order (top row first)."""
    own, other = player + 1, 2 - player
    planes = np.array([[value == own for value in range(3)], [value == other for value in range(3)],
                       [value == 0 for value in range(3)]], dtype=np.float32)  # fmt: skip
    top_first = np.arange(rows * cols).reshape(rows, cols)[::-1].reshape(-1).copy()
    for table in (planes, top_first):
        table.flags.writeable = False  # shared by every state
    return planes, top_first


@cache
def _win_checks(rows: int, k: int) -> tuple[tuple[int, ...], ...]:
    """For the four line directions (vertical, horizontal, both diagonals), the shifts of `_run_shifts`."""
    height = rows + 1
    return tuple(_run_shifts(k, step) for step in (1, height, height + 1, height - 1))


class ConnectFourState(arena.State):
    """`board`/`heights` are the readable position; `_discs` holds each player's discs as a bitboard
    with column-major bits (rows + 1 per column, the top one always empty so runs never wrap), which
    makes the win test a few shifts, and `_open` the columns that are not full, in order.
    """

    __slots__ = (
        "rows", "cols", "k", "board", "heights", "current_player", "winner", "filled", "_discs", "_open", "_checks",
        "_first_win",
    )  # fmt: skip

    def __init__(self, rows: int, cols: int, k: int) -> None:
        self.rows, self.cols, self.k = rows, cols, k
        self.board = [0] * (rows * cols)  # 0 empty, 1 = player 0 (x), 2 = player 1 (o)
        self.heights = [0] * cols
        self.current_player = 0
        self.winner = -1
        self.filled = 0
        self._discs = [0, 0]
        self._open = list(range(cols))
        self._checks = _win_checks(rows, k)
        self._first_win = 2 * k - 1

    def legal_actions(self) -> list[int]:
        if self.current_player == TERMINAL:
            return []
        return self._open[:]

    def apply(self, action: int) -> None:
        player = self.current_player
        heights = self.heights
        row = heights[action]
        heights[action] = row + 1
        if row + 1 == self.rows:
            self._open.remove(action)
        self.board[row * self.cols + action] = player + 1
        self.filled += 1
        discs = self._discs[player] | 1 << (action * (self.rows + 1) + row)
        self._discs[player] = discs
        # No line of k is possible before the mover has k discs (move 2k - 1).
        if self.filled >= self._first_win and self._wins(discs):
            self.winner = player
            self.current_player = TERMINAL
        elif self._open:
            self.current_player = 1 - player
        else:
            self.current_player = TERMINAL

    def _wins(self, discs: int) -> bool:
        """Does `discs` hold a line of k in any direction? (Whole-board test: a few shifts per direction.)"""
        checks = self._checks
        if len(checks[0]) == 2:  # x_in_row 3 or 4 (the default): two and-shifts per direction, unrolled
            (a, b), (c, d), (e, f), (g, h) = checks
            run = discs & discs >> a
            if run & run >> b:
                return True
            run = discs & discs >> c
            if run & run >> d:
                return True
            run = discs & discs >> e
            if run & run >> f:
                return True
            run = discs & discs >> g
            return bool(run & run >> h)
        for shifts in checks:
            run = discs
            for shift in shifts:
                run &= run >> shift
            if run:
                return True
        return False

    def returns(self) -> list[float]:
        return win_loss_returns(self.winner)

    def clone(self) -> ConnectFourState:
        other = ConnectFourState.__new__(ConnectFourState)
        other.rows, other.cols, other.k = self.rows, self.cols, self.k
        other.board = self.board[:]
        other.heights = self.heights[:]
        other.current_player = self.current_player
        other.winner = self.winner
        other.filled = self.filled
        other._discs = self._discs[:]
        other._open = self._open[:]
        other._checks = self._checks
        other._first_win = self._first_win
        return other

    def action_to_string(self, action: int) -> str:
        player = self.current_player if self.current_player != TERMINAL else 0
        return f"{_MARKS[player + 1]}{action}"

    def string_to_action(self, text: str) -> int:
        text = text.strip()
        if text[:1] in ("x", "o"):
            mark = _MARKS[self.current_player + 1] if self.current_player != TERMINAL else "x"
            if text[0] != mark:
                raise arena.ArenaError(f"{text!r} is a move of {text[0]}, and {mark} is to move")
            text = text[1:]
        return super().string_to_action(text)

    def render(self) -> str:
        lines = [
            "".join(_MARKS[self.board[r * self.cols + c]] for c in range(self.cols)) for r in reversed(range(self.rows))
        ]
        return "\n".join(lines)

    def to_json(self, player: int) -> dict:
        """`board`: rows from the bottom up, each cell the seat of its disc or null; `heights`: discs per column."""
        cells = [cell - 1 if cell else None for cell in self.board]
        return {"board": [cells[r * self.cols:(r + 1) * self.cols] for r in range(self.rows)], "heights": list(self.heights)}

    def render_svg(self) -> str:
        """The upright board (top row first) with red (seat 0) and yellow (seat 1) discs."""
        cell = min(56.0, 392.0 / max(self.cols, self.rows))
        pad = 12.0
        width, height = self.cols * cell + 2 * pad, self.rows * cell + 2 * pad
        colors = ("#fff", svg.PLAYER_COLORS[0], "#f9c80e")
        parts = [svg.rect(pad, pad, self.cols * cell, self.rows * cell, fill="#1565c0", rx=8)]
        for row in range(self.rows):  # row 0 is the bottom
            y = pad + (self.rows - 1 - row + 0.5) * cell
            for col in range(self.cols):
                disc = self.board[row * self.cols + col]
                parts.append(svg.circle(pad + (col + 0.5) * cell, y, cell * 0.4, fill=colors[disc], stroke="#0d47a1", stroke_width=1.5))
        names = ("red (seat 0)", "yellow (seat 1)")
        if self.current_player != TERMINAL:
            status = f"{names[self.current_player]} to move"
        else:
            status = "draw" if self.winner < 0 else f"{names[self.winner]} wins"
        for col in range(self.cols):
            parts.append(svg.text(pad + (col + 0.5) * cell, height + 10, col, size=12, fill="#555"))
        parts.append(svg.text(width / 2, height + 34, status, size=16))
        return svg.document(width, height + 48, parts, f"Connect four: {status}")

    def observation(self, player: int) -> np.ndarray:
        """Planes (own discs, opponent discs, empty), rows x columns with the top row first."""
        planes, top_first = _observation_tables(self.rows, self.cols, player)
        cells = np.array(self.board, dtype=np.intp)[top_first]
        return planes.take(cells, axis=1).reshape(3, self.rows, self.cols)

    @classmethod
    def observations(cls, states: Sequence[arena.State], players: Sequence[int], out: np.ndarray) -> None:
        """`observation` for a batch of positions in a few array operations (a network's many decisions at once)."""
        first = states[0]
        if not all(type(state) is cls for state in states) or not out.flags.c_contiguous:
            return super().observations(states, players, out)
        rows, cols = first.rows, first.cols  # type: ignore[attr-defined]
        boards = b"".join([bytes(state.board) for state in states])  # type: ignore[attr-defined]
        if len(boards) != len(states) * rows * cols or out.shape[1:] != (3, rows, cols):
            return super().observations(states, players, out)  # boards of other sizes in one batch: one by one
        _planes, top_first = _observation_tables(rows, cols, 0)
        cells = np.frombuffer(boards, dtype=np.uint8).reshape(len(states), rows * cols)[:, top_first]
        own = np.asarray(players, dtype=np.uint8).reshape(-1, 1) + 1  # a cell's value for the seat's own discs
        planes = out.reshape(len(states), 3, rows * cols)  # a view of `out` (contiguous)
        np.equal(cells, own, out=planes[:, 0])
        np.equal(cells, 3 - own, out=planes[:, 1])
        np.equal(cells, 0, out=planes[:, 2])


class ConnectFour(arena.Game):
    info = arena.GameInfo(
        id="connect_four",
        version="1",
        name="Connect Four",
        params=(
            arena.Param("rows", 6, "board height", min=1, max=20),
            arena.Param("columns", 7, "board width", min=1, max=20),
            arena.Param("x_in_row", 4, "discs in a line needed to win", min=2, max=20),
        ),
        description="Drop discs into columns; x_in_row in a line wins. Action = column (0 = left).",
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        k, rows, cols = self.params["x_in_row"], self.params["rows"], self.params["columns"]
        if k > max(rows, cols):
            raise arena.ArenaError(f"game 'connect_four': x_in_row={k} cannot fit on a {rows}x{cols} board")

    @property
    def num_distinct_actions(self) -> int:
        return self.params["columns"]

    def new_initial_state(self, seed: int = 0) -> ConnectFourState:
        return ConnectFourState(self.params["rows"], self.params["columns"], self.params["x_in_row"])

    def state_from_json(self, data: dict, player: int) -> ConnectFourState:
        """The position of `to_json`: each column's discs dropped bottom-up by their owners, then `player` to move."""
        state = self.new_initial_state()
        for col in range(state.cols):
            for row in range(data["heights"][col]):
                state.current_player = data["board"][row][col]
                state.apply(col)
        state.current_player = player
        return state

    def max_game_length(self) -> int:
        return self.params["rows"] * self.params["columns"]

    def heuristic(self, state: arena.State, player: int) -> float:
        """Open windows: 1, 4 and 16 points for 1, 2, 3 own discs in a window free of the opponent; minus the same for the opponent."""
        assert isinstance(state, ConnectFourState)
        if state.is_terminal():
            return 1000.0 * state.returns()[player]
        own, other = player + 1, 2 - player
        board = state.board
        score = 0.0
        for window in _windows(state.rows, state.cols, state.k):
            mine = theirs = 0
            for cell in window:
                value = board[cell]
                if value == own:
                    mine += 1
                elif value == other:
                    theirs += 1
            if mine and not theirs:
                score += 4.0 ** (mine - 1)
            elif theirs and not mine:
                score -= 4.0 ** (theirs - 1)
        return score


@arena.hookimpl
def register_games(register):
    register(ConnectFour)
