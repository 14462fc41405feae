"""Tic-tac-toe, with OpenSpiel's encoding: action = row*3 + col, row 0 at the top; player 0 is "x"."""

from __future__ import annotations

import numpy as np

import arena
from arena import TERMINAL

_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
# The lines through each cell: a move can only complete one of these.
_LINES_THROUGH = tuple(tuple(line for line in _LINES if cell in line) for cell in range(9))
_MARKS = ".xo"


class TicTacToeState(arena.State):
    __slots__ = ("board", "current_player", "winner", "empty")

    def __init__(self) -> None:
        self.board = [0] * 9  # 0 empty, 1 = player 0 (x), 2 = player 1 (o)
        self.current_player = 0
        self.winner = -1
        self.empty = 9

    def legal_actions(self) -> list[int]:
        if self.current_player == TERMINAL:
            return []
        board = self.board
        return [i for i in range(9) if not board[i]]

    def apply(self, action: int) -> None:
        board = self.board
        mark = self.current_player + 1
        board[action] = mark
        self.empty -= 1
        for a, b, c in _LINES_THROUGH[action]:
            if board[a] == mark and board[b] == mark and board[c] == mark:
                self.winner = self.current_player
                self.current_player = TERMINAL
                return
        self.current_player = TERMINAL if self.empty == 0 else 1 - self.current_player

    def is_terminal(self) -> bool:
        return self.current_player == TERMINAL

    def returns(self) -> list[float]:
        if self.winner == 0:
            return [1.0, -1.0]
        if self.winner == 1:
            return [-1.0, 1.0]
        return [0.0, 0.0]

    def clone(self) -> TicTacToeState:
        other = TicTacToeState.__new__(TicTacToeState)
        other.board = self.board[:]
        other.current_player = self.current_player
        other.winner = self.winner
        other.empty = self.empty
        return other

    def action_to_string(self, action: int) -> str:
        player = self.current_player if self.current_player != TERMINAL else 0
        return f"{_MARKS[player + 1]}({action // 3},{action % 3})"

    def string_to_action(self, text: str) -> int:
        text = text.strip()
        if len(text) >= 5 and text[0] in "xo" and text[1] == "(":
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
