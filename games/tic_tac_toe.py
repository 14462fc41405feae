"""Tic-tac-toe, with OpenSpiel's encoding: action = row*3 + col, row 0 at the top; player 0 is "x"."""

from __future__ import annotations

import numpy as np

import arena
from arena import TERMINAL, svg
from arena.api import win_loss_returns

_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_MARKS = ".xo"

# Speed (see bench/engines.py): besides the readable `board`, each player's marks are a 9-bit mask,
# so "did that move win?" is one look-up in a table of all 512 masks, and the legal actions are one
# look-up in a table from the mask of empty cells to its sorted list of cells.
_BIT = tuple(1 << cell for cell in range(9))
_LINE_MASKS = tuple(sum(_BIT[cell] for cell in line) for line in _LINES)
_WINS = tuple(any(mask & line == line for line in _LINE_MASKS) for mask in range(512))
_CELLS = tuple(tuple(cell for cell in range(9) if mask >> cell & 1) for mask in range(512))
_ALL = 511


class TicTacToeState(arena.State):
    __slots__ = ("board", "current_player", "winner", "empty", "_x", "_o", "_free")

    def __init__(self) -> None:
        self.board = [0] * 9  # 0 empty, 1 = player 0 (x), 2 = player 1 (o)
        self.current_player = 0
        self.winner = -1
        self.empty = 9
        self._x = self._o = 0  # each player's marks as a mask of cells
        self._free = _ALL  # the empty cells as a mask

    def legal_actions(self) -> list[int]:
        if self.current_player == TERMINAL:
            return []
        return list(_CELLS[self._free])

    def apply(self, action: int) -> None:
        player = self.current_player
        bit = _BIT[action]
        self.board[action] = player + 1
        self._free ^= bit
        self.empty -= 1
        if player:
            marks = self._o = self._o | bit
        else:
            marks = self._x = self._x | bit
        if _WINS[marks]:
            self.winner = player
            self.current_player = TERMINAL
        else:
            self.current_player = TERMINAL if self.empty == 0 else 1 - player

    def returns(self) -> list[float]:
        return win_loss_returns(self.winner)

    def clone(self) -> TicTacToeState:
        other = TicTacToeState.__new__(TicTacToeState)
        other.board = self.board[:]
        other.current_player = self.current_player
        other.winner = self.winner
        other.empty = self.empty
        other._x = self._x
        other._o = self._o
        other._free = self._free
        return other

    def action_to_string(self, action: int) -> str:
        player = self.current_player if self.current_player != TERMINAL else 0
        return f"{_MARKS[player + 1]}({action // 3},{action % 3})"

    def string_to_action(self, text: str) -> int:
        text = text.strip()
        if len(text) >= 5 and text[0] in "xo" and text[1] == "(":
            mark = _MARKS[self.current_player + 1] if self.current_player != TERMINAL else "x"
            if text[0] != mark:
                raise arena.ArenaError(f"{text!r} is a move of {text[0]}, and {mark} is to move")
            text = text[1:]
        if text.startswith("(") and text.endswith(")"):
            row, _, col = text[1:-1].partition(",")
            try:
                action = int(row) * 3 + int(col)
            except ValueError:
                raise arena.ArenaError(f"bad tic-tac-toe action {text!r}") from None
            if action not in self.legal_actions():
                raise arena.ArenaError(f"action {text!r} is not legal here")
            return action
        return super().string_to_action(text)

    def render(self) -> str:
        rows = ["".join(_MARKS[self.board[r * 3 + c]] for c in range(3)) for r in range(3)]
        return "\n".join(rows)

    def to_json(self, player: int) -> dict:
        """`board`: three rows of three cells (action = row*3 + col), each the seat of its mark or null."""
        return {"board": [[self.board[r * 3 + c] - 1 if self.board[r * 3 + c] else None for c in range(3)] for r in range(3)]}

    def render_svg(self) -> str:
        """The grid with X (seat 0, red) and O (seat 1, blue), and who is to move or won."""
        cell, pad = 110, 25
        size = 3 * cell
        parts = []
        for i in (1, 2):
            parts.append(svg.line(pad + i * cell, pad, pad + i * cell, pad + size, "#333", 4, stroke_linecap="round"))
            parts.append(svg.line(pad, pad + i * cell, pad + size, pad + i * cell, "#333", 4, stroke_linecap="round"))
        for index, mark in enumerate(self.board):
            x, y = pad + (index % 3 + 0.5) * cell, pad + (index // 3 + 0.5) * cell
            if mark == 1:
                d = cell * 0.3
                for sign in (1, -1):
                    parts.append(svg.line(x - d, y - sign * d, x + d, y + sign * d, svg.PLAYER_COLORS[0], 10, stroke_linecap="round"))
            elif mark == 2:
                parts.append(svg.circle(x, y, cell * 0.3, stroke=svg.PLAYER_COLORS[1], stroke_width=10))
        names = ("X (seat 0)", "O (seat 1)")
        if self.current_player != TERMINAL:
            status = f"{names[self.current_player]} to move"
        else:
            status = "draw" if self.winner < 0 else f"{names[self.winner]} wins"
        parts.append(svg.text(pad + size / 2, pad * 2 + size, status, size=18))
        return svg.document(size + 2 * pad, size + 3 * pad + 10, parts, f"Tic-tac-toe: {status}")

    def observation(self, player: int) -> np.ndarray:
        """Planes: the player's marks, the opponent's marks, empty cells (3x3x3)."""
        board = np.array(self.board).reshape(3, 3)
        own, other = player + 1, 2 - player
        return np.stack([board == own, board == other, board == 0]).astype(np.float32)


class TicTacToe(arena.Game):
    info = arena.GameInfo(
        id="tic_tac_toe",
        version="1",
        name="Tic-tac-toe",
        description="3x3, three in a row wins; action = row*3 + col (row 0 at the top).",
    )

    @property
    def num_distinct_actions(self) -> int:
        return 9

    def new_initial_state(self, seed: int = 0) -> TicTacToeState:
        return TicTacToeState()

    def state_from_json(self, data: dict, player: int) -> TicTacToeState:
        """The position of `to_json`: each mark put by its owner, then `player` to move."""
        state = self.new_initial_state()
        for row, cells in enumerate(data["board"]):
            for col, owner in enumerate(cells):
                if owner is not None:
                    state.current_player = owner
                    state.apply(row * 3 + col)
        state.current_player = player
        return state

    def action_planes(self) -> tuple[tuple[int, int], ...]:
        """Action row*3 + col is the cell [row, col] of the 3x3 planes."""
        return ((0, 0),)

    def max_game_length(self) -> int:
        return 9

    def heuristic(self, state: arena.State, player: int) -> float:
        """Open lines: +1 per own mark in a line the opponent has not blocked, minus the same for the opponent."""
        assert isinstance(state, TicTacToeState)
        if state.is_terminal():
            return 100.0 * state.returns()[player]
        own, other = player + 1, 2 - player
        score = 0.0
        board = state.board
        for line in _LINES:
            marks = [board[i] for i in line]
            if other not in marks:
                score += marks.count(own)
            if own not in marks:
                score -= marks.count(other)
        return score


@arena.hookimpl
def register_games(register):
    register(TicTacToe)
