"""Reversi (Othello) 8x8 with OpenSpiel's encoding (RULES.md section 3).

Action = row*8 + col from the top-left (a1 = 0, h8 = 63), 64 = pass (legal only when the
player has no placing move, and then the only legal action). Player 0 is Black ("x") and moves
first; the start position has White on d4, e5 and Black on e4, d5. The game ends when neither
player can move; returns are +1/-1 by disc count, 0/0 for equal counts.

Speed: each colour is a bitboard (a Python int, bit = action id; see `twin` for the trick that
halves the shifts), so move generation is a few shifts per direction instead of a walk over 64
squares. After every move the state computes the next player's legal moves once, since it needs
them anyway to detect a forced pass or the end of the game; `legal_actions()` then only turns
that bitboard into a list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

import arena
from arena import TERMINAL, svg

SIZE = 8
PASS = 64
NUM_ACTIONS = 65
FULL = (1 << 64) - 1

_COLUMNS = "abcdefgh"
_MARKS = {0: "x", 1: "o"}  # OpenSpiel's letters: Black x, White o
_NAMES = ("Black", "White")

# Each colour is kept as a "twin" bitboard: the board in bits 0..63 and the same board turned by
# 180 degrees in bits 80..143. Turning the board maps every direction to its opposite, so one left
# shift moves the lower copy east (or south, ...) and the upper copy west (north, ...): move
# generation needs 4 shift families instead of 8. The 16 empty bits between the copies catch
# whatever a shift carries out of the lower copy. Measured: 2.2 us instead of 3.4 us per position.
_TWIN = 80
_TWIN_FULL = FULL | FULL << _TWIN
# Columns b..g in both copies (turning the board keeps that set): a run of discs that moves east or
# west, or diagonally, must not wrap from column h onto column a of the next row.
_INNER = 0x7E7E7E7E7E7E7E7E | 0x7E7E7E7E7E7E7E7E << _TWIN
_REVERSED_BYTES = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def turned(board: int) -> int:
    """A 64-bit board turned by 180 degrees (square i goes to 63 - i): reverse its bit order."""
    return int.from_bytes(board.to_bytes(8, "little").translate(_REVERSED_BYTES), "big")


def twin(board: int) -> int:
    """The twin bitboard of a plain 64-bit board."""
    return board | turned(board) << _TWIN


_TWIN_BIT = tuple(twin(1 << square) for square in range(64))

# The start position (RULES.md): White d4 e5, Black e4 d5. d4 = row 3 col 3 = bit 27.
_START_BLACK = twin((1 << 28) | (1 << 35))  # e4, d5
_START_WHITE = twin((1 << 27) | (1 << 36))  # d4, e5


def legal_moves(own: int, opp: int) -> int:
    """The plain 64-bit board of empty squares where `own` traps at least one line of `opp` discs.

    `own` and `opp` are twin bitboards. For each shift family: grow runs of opponent discs that
    start next to an own disc (at most 6 long), then step once more onto an empty square. The
    upper copy's moves are turned back and joined with the lower copy's.
    """
    empty = ~(own | opp) & _TWIN_FULL
    inner = opp & _INNER
    # East (+1) in the lower copy, west in the upper one.
    x = (own << 1) & inner
    x |= (x << 1) & inner
    x |= (x << 1) & inner
    x |= (x << 1) & inner
    x |= (x << 1) & inner
    x |= (x << 1) & inner
    moves = (x << 1) & empty
    # South (+8) / north: no wrap-around possible.
    x = (own << 8) & opp
    x |= (x << 8) & opp
    x |= (x << 8) & opp
    x |= (x << 8) & opp
    x |= (x << 8) & opp
    x |= (x << 8) & opp
    moves |= (x << 8) & empty
    # South-east (+9) / north-west.
    x = (own << 9) & inner
    x |= (x << 9) & inner
    x |= (x << 9) & inner
    x |= (x << 9) & inner
    x |= (x << 9) & inner
    x |= (x << 9) & inner
    moves |= (x << 9) & empty
    # South-west (+7) / north-east.
    x = (own << 7) & inner
    x |= (x << 7) & inner
    x |= (x << 7) & inner
    x |= (x << 7) & inner
    x |= (x << 7) & inner
    x |= (x << 7) & inner
    moves |= (x << 7) & empty
    return (moves & FULL) | turned(moves >> _TWIN)


def _rays() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each square, the rays (as tuples of twin single-square bits) in the 8 directions that could flip.

    A ray needs at least two squares: one opponent disc to flip and one own disc behind it.
    """
    result = []
    for square in range(64):
        row, col = divmod(square, SIZE)
        rays = []
        for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)):
            ray = []
            r, c = row + dr, col + dc
            while 0 <= r < SIZE and 0 <= c < SIZE:
                ray.append(_TWIN_BIT[r * SIZE + c])
                r += dr
                c += dc
            if len(ray) >= 2:
                rays.append(tuple(ray))
        result.append(tuple(rays))
    return tuple(result)


_RAYS = _rays()


def flips(square: int, own: int, opp: int) -> int:
    """Twin bitboard of the opponent discs that a disc of `own` placed on `square` turns over."""
    flipped = 0
    for ray in _RAYS[square]:
        run = 0
        for bit in ray:
            if bit & opp:
                run |= bit
            else:
                if run and bit & own:
                    flipped |= run
                break
    return flipped


def _bit_lists() -> tuple[tuple[list[int], ...], ...]:
    """For each byte position (row) and byte value, the squares of the set bits in increasing order."""
    return tuple(
        tuple([row * 8 + b for b in range(8) if value >> b & 1] for value in range(256)) for row in range(8)
    )


_ROW_BITS = _bit_lists()


def squares(board: int) -> list[int]:
    """The set bits of a bitboard as a sorted list of squares (one table look-up per non-empty row)."""
    out: list[int] = []
    row = 0
    while board:
        byte = board & 0xFF
        if byte:
            out += _ROW_BITS[row][byte]
        board >>= 8
        row += 1
    return out


class ReversiState(arena.State):
    """A position: twin bitboards of Black and White, the player to move and that player's legal moves.

    `_moves` is the plain bitboard of placing moves of `current_player` (0 means the player must
    pass); `_legal` caches the list form until the next move.
    """

    __slots__ = ("_black", "_white", "current_player", "_moves", "_legal", "_to_move")

    def __init__(self) -> None:
        self._black = _START_BLACK
        self._white = _START_WHITE
        self.current_player = 0
        self._to_move = 0  # whose turn it is, kept after the end (current_player is then TERMINAL)
        self._moves = legal_moves(_START_BLACK, _START_WHITE)
        self._legal: list[int] | None = None

    @classmethod
    def from_board(cls, board: Sequence[str], to_move: int) -> ReversiState:
        """A position from 8 rows (row 1 first) of 8 characters: 'x' Black, 'o' White, '.' or '-' empty.

        If `to_move` has no placing move it must pass; if neither player can move the game is over.
        """
        rows = [row.replace(" ", "") for row in board]
        if len(rows) != SIZE or any(len(row) != SIZE or set(row) - set("xo.-") for row in rows):
            raise arena.ArenaError("reversi: a board is 8 rows of 8 characters from 'x', 'o', '.', '-'")
        if to_move not in (0, 1):
            raise arena.ArenaError(f"reversi: player to move must be 0 or 1, not {to_move!r}")
        state = cls.__new__(cls)
        state._black = state._white = 0
        for row, text in enumerate(rows):
            for col, char in enumerate(text):
                if char == "x":
                    state._black |= _TWIN_BIT[row * SIZE + col]
                elif char == "o":
                    state._white |= _TWIN_BIT[row * SIZE + col]
        state._to_move = to_move
        state._legal = None
        own, opp = state._own_opp(to_move)
        state._moves = legal_moves(own, opp)
        state.current_player = to_move if state._moves or legal_moves(opp, own) else TERMINAL
        return state

    @property
    def black(self) -> int:
        """Black's discs as a plain bitboard (bit = action id)."""
        return self._black & FULL

    @property
    def white(self) -> int:
        """White's discs as a plain bitboard (bit = action id)."""
        return self._white & FULL

    # The rules.

    def legal_actions(self) -> list[int]:
        legal = self._legal
        if legal is None:
            if self.current_player == TERMINAL:
                legal = []
            elif self._moves:
                legal = squares(self._moves)
            else:
                legal = [PASS]
            self._legal = legal
        return legal[:]  # a copy: the caller may change it, the cache must not

    def apply(self, action: int) -> None:
        player = self.current_player
        self._legal = None
        if action == PASS:
            # A pass is only legal when the mover has no placing move but the opponent has one.
            self.current_player = self._to_move = 1 - player
            self._moves = legal_moves(*self._own_opp(1 - player))
            return
        if player == 0:
            own, opp = self._black, self._white
        else:
            own, opp = self._white, self._black
        flipped = flips(action, own, opp)
        own |= flipped | _TWIN_BIT[action]
        opp ^= flipped
        if player == 0:
            self._black, self._white = own, opp
        else:
            self._white, self._black = own, opp
        # The opponent moves next if it can; else it must pass if we can move; else the game is over.
        replies = legal_moves(opp, own)
        if replies:
            self.current_player = self._to_move = 1 - player
            self._moves = replies
        elif legal_moves(own, opp):
            self.current_player = self._to_move = 1 - player
            self._moves = 0  # forced pass
        else:
            self.current_player = TERMINAL
            self._to_move = 1 - player
            self._moves = 0

    def _own_opp(self, player: int) -> tuple[int, int]:
        """Twin bitboards (player's, opponent's)."""
        return (self._black, self._white) if player == 0 else (self._white, self._black)

    def returns(self) -> list[float]:
        if self.current_player != TERMINAL:
            return [0.0, 0.0]
        black, white = self.disc_counts()
        if black > white:
            return [1.0, -1.0]
        if white > black:
            return [-1.0, 1.0]
        return [0.0, 0.0]

    def clone(self) -> ReversiState:
        other = ReversiState.__new__(ReversiState)
        other._black = self._black
        other._white = self._white
        other.current_player = self.current_player
        other._to_move = self._to_move
        other._moves = self._moves
        other._legal = self._legal  # shared safely: legal_actions() hands out copies, apply() replaces it
        return other

    # Reading the position.

    def disc_counts(self) -> tuple[int, int]:
        """(Black discs, White discs)."""
        return (self._black & FULL).bit_count(), (self._white & FULL).bit_count()

    def moves_of(self, player: int) -> int:
        """Plain bitboard of `player`'s placing moves in this position, whoever is to move."""
        if player == self.current_player:
            return self._moves
        return legal_moves(*self._own_opp(player))

    def action_to_string(self, action: int) -> str:
        if action == PASS:
            return "pass"
        row, col = divmod(action, SIZE)
        return f"{_COLUMNS[col]}{row + 1}"

    def string_to_action(self, text: str) -> int:
        name = text.strip().lower()
        if name == "pass":
            action = PASS
        else:
            match = re.fullmatch(r"([a-h])([1-8])", name)
            if match is None:
                return super().string_to_action(text)  # an action id written as a number
            action = (int(match.group(2)) - 1) * SIZE + _COLUMNS.index(match.group(1))
        if action not in self.legal_actions():
            raise arena.ArenaError(f"reversi: {text.strip()!r} is not a legal move here")
        return action

    def render(self) -> str:
        """The board with row 1 at the top (OpenSpiel's layout), then the disc count and who moves."""
        lines = ["  a b c d e f g h"]
        black, white = self.black, self.white
        for row in range(SIZE):
            cells = []
            for col in range(SIZE):
                bit = 1 << (row * SIZE + col)
                cells.append("x" if black & bit else "o" if white & bit else ".")
            lines.append(f"{row + 1} " + " ".join(cells))
        b, w = self.disc_counts()
        if self.current_player == TERMINAL:
            status = "game over"
        else:
            status = f"{_NAMES[self.current_player]} ({_MARKS[self.current_player]}) to move"
        lines.append(f"x {b} - o {w}, {status}")
        return "\n".join(lines)

    def to_json(self, player: int) -> dict:
        """`board`: rows 1 to 8 (action = row*8 + col), each cell 0 (black, x), 1 (white, o) or null; `discs`: the counts."""
        black, white = self.black, self.white
        board = [[0 if black >> (r * SIZE + c) & 1 else 1 if white >> (r * SIZE + c) & 1 else None for c in range(SIZE)]
                 for r in range(SIZE)]  # fmt: skip
        return {"board": board, "discs": list(self.disc_counts())}

    def render_svg(self) -> str:
        """The board (row 1 at the top, as OpenSpiel prints it) with black and white discs and the count."""
        cell, pad = 44, 24
        size = SIZE * cell
        parts = [svg.rect(pad, pad, size, size, fill="#2e7d32", stroke="#1b5e20", stroke_width=2)]
        for i in range(1, SIZE):
            parts.append(svg.line(pad + i * cell, pad, pad + i * cell, pad + size, "#1b5e20", 1.5))
            parts.append(svg.line(pad, pad + i * cell, pad + size, pad + i * cell, "#1b5e20", 1.5))
        black, white = self.black, self.white
        for row in range(SIZE):
            parts.append(svg.text(pad / 2, pad + (row + 0.5) * cell, row + 1, size=13, fill="#555"))
            parts.append(svg.text(pad + (row + 0.5) * cell, pad / 2, _COLUMNS[row], size=13, fill="#555"))
            for col in range(SIZE):
                bit = 1 << (row * SIZE + col)
                if (black | white) & bit:
                    fill = "#111" if black & bit else "#fafafa"
                    parts.append(svg.circle(pad + (col + 0.5) * cell, pad + (row + 0.5) * cell, cell * 0.4, fill=fill,
                                            stroke="#000", stroke_width=1))
        b, w = self.disc_counts()
        if self.current_player == TERMINAL:
            status = "draw" if b == w else ("black" if b > w else "white") + " wins"
        else:
            status = ("black" if self.current_player == 0 else "white") + " to move"
        parts.append(svg.text(pad + size / 2, pad + size + 22, f"black {b} - white {w}, {status}", size=16))
        return svg.document(size + 2 * pad, size + pad + 40, parts, f"Reversi: black {b}, white {w}, {status}")

    def observation(self, player: int) -> np.ndarray:
        """Planes (player's discs, opponent's discs, empty squares), 3x8x8 float32, row 1 first."""
        own, opp = (board & FULL for board in self._own_opp(player))
        planes = np.unpackbits(
            np.frombuffer(b"".join(b.to_bytes(8, "little") for b in (own, opp, ~(own | opp) & FULL)), dtype=np.uint8),
            bitorder="little",
        )
        return planes.reshape(3, SIZE, SIZE).astype(np.float32)


def _masks(squares_: Sequence[str]) -> int:
    """A bitboard from square names like "a1"."""
    board = 0
    for name in squares_:
        board |= 1 << ((int(name[1]) - 1) * SIZE + _COLUMNS.index(name[0]))
    return board


# Positional weights: corners are worth most; the X squares (diagonally next to a corner) and the
# C squares (beside a corner on the edge) hand the corner to the opponent, so they are worth least.
_WEIGHT_TABLE = (
    (100, -20, 10, 5, 5, 10, -20, 100),
    (-20, -50, -2, -2, -2, -2, -50, -20),
    (10, -2, 1, 1, 1, 1, -2, 10),
    (5, -2, 1, 0, 0, 1, -2, 5),
    (5, -2, 1, 0, 0, 1, -2, 5),
    (10, -2, 1, 1, 1, 1, -2, 10),
    (-20, -50, -2, -2, -2, -2, -50, -20),
    (100, -20, 10, 5, 5, 10, -20, 100),
)


def _weight_classes() -> tuple[tuple[int, int], ...]:
    """(weight, bitboard of the squares with that weight), so a score is a few popcounts."""
    by_weight: dict[int, int] = {}
    for row in range(SIZE):
        for col in range(SIZE):
            weight = _WEIGHT_TABLE[row][col]
            if weight:
                by_weight[weight] = by_weight.get(weight, 0) | 1 << (row * SIZE + col)
    return tuple(sorted(by_weight.items()))


_WEIGHTS = _weight_classes()
CORNERS = _masks(("a1", "h1", "a8", "h8"))
X_SQUARES = _masks(("b2", "g2", "b7", "g7"))
C_SQUARES = _masks(("b1", "a2", "g1", "h2", "a7", "b8", "h7", "g8"))
EDGES = _masks([f"{c}{r}" for c in "abcdefgh" for r in "18"] + [f"{c}{r}" for c in "ah" for r in "234567"])
MOBILITY_WEIGHT = 5.0
TERMINAL_VALUE = 10000.0


def positional(own: int, opp: int) -> int:
    """Sum of the positional weights of own discs minus those of the opponent's."""
    score = 0
    for weight, mask in _WEIGHTS:
        score += weight * ((own & mask).bit_count() - (opp & mask).bit_count())
    return score


#: Positional rewards are the weights divided by this, so a game's shaped rewards stay near the final +-1.
POSITIONAL_SCALE = 1000.0


def positional_reward(state: arena.State, action: int, player: int) -> float:
    """The report's shaped reward of `action` by `player` in `state` (before it is played); 0 for a pass."""
    assert isinstance(state, ReversiState)
    if action == PASS:
        return 0.0
    own, opp = state._own_opp(player)
    return positional((flips(action, own, opp) | 1 << action) & FULL, 0) / POSITIONAL_SCALE


class Reversi(arena.Game):
    info = arena.GameInfo(
        id="reversi",
        version="1",
        name="Reversi (Othello)",
        description="Othello 8x8, Black (x) first; action = row*8 + col from a1 (0) to h8 (63), 64 = pass.",
    )

    @property
    def num_distinct_actions(self) -> int:
        return NUM_ACTIONS

    def new_initial_state(self, seed: int = 0) -> ReversiState:
        return ReversiState()

    def state_from_json(self, data: dict, player: int) -> ReversiState:
        """The position of `to_json` with `player` to move."""
        rows = ["".join(".xo"[0 if cell is None else cell + 1] for cell in row) for row in data["board"]]
        return ReversiState.from_board(rows, player)

    def max_game_length(self) -> int:
        # 60 placing moves at most; a pass always sits between two placing moves, so at most 59 passes.
        return 120

    def heuristic(self, state: arena.State, player: int) -> float:
        """Positional weights (strong corners, weak X and C squares) plus 5 per move of mobility lead.

        A finished game is worth +-10000 (plus the disc lead, so bigger wins rank higher).
        """
        assert isinstance(state, ReversiState)
        own, opp = (board & FULL for board in state._own_opp(player))
        if state.current_player == TERMINAL:
            result = state.returns()[player]
            return TERMINAL_VALUE * result + own.bit_count() - opp.bit_count()
        mobility = state.moves_of(player).bit_count() - state.moves_of(1 - player).bit_count()
        return float(positional(own, opp)) + MOBILITY_WEIGHT * mobility

    def reward_shapings(self) -> dict[str, arena.Shaping]:
        """`positional`: the Reversi report's reward for a move, R(p) = V(p) + the values V of the discs it
        flips, with V the positional weights above, divided by POSITIONAL_SCALE (a corner: +0.1)."""
        return {"positional": positional_reward}

    feature_names = ("discs", "mobility", "corners", "x_squares", "c_squares", "edges", "positional")
    #: Weights for a linear evaluator over `features`: the heuristic (positional + 5 x mobility) before the end.
    default_weights = (0.0, MOBILITY_WEIGHT, 0.0, 0.0, 0.0, 0.0, 1.0)

    def features(self, state: arena.State, player: int) -> Sequence[float]:
        """Differences (player minus opponent) of disc count, mobility, corners, X/C squares, edges, positional score."""
        assert isinstance(state, ReversiState)
        own, opp = (board & FULL for board in state._own_opp(player))

        def diff(mask: int) -> float:
            return float((own & mask).bit_count() - (opp & mask).bit_count())

        mobility = state.moves_of(player).bit_count() - state.moves_of(1 - player).bit_count()
        return (
            diff(FULL), float(mobility), diff(CORNERS), diff(X_SQUARES), diff(C_SQUARES), diff(EDGES),
            float(positional(own, opp)),
        )  # fmt: skip


@arena.hookimpl
def register_games(register):
    register(Reversi)
