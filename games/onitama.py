"""Onitama: 5x5 board, two hand cards each plus a side card, win by Stone or by Stream.

Rules follow RULES.md section 1 (the official rulebook), including the pass-with-exchange rule.

Seats and board
    Seat 0 is **Blue**, seat 1 is **Red**. Blue starts on the top row (row 0, rank 5) and Red on the
    bottom row (row 4, rank 1), as in the Onitama study's code. Blue's temple arch is c5, Red's c1.
    The first mover is the colour of the side card's stamp, so `current_player` may start at 1.
    Squares are numbered sq = row*5 + col in this fixed frame (row 0 top, col 0 = file a).
    Written squares are `a1`..`e5`: file a..e = col 0..4, rank 1..5 = row 4..0.

Cards
    The 16 cards of RULES.md, numbered 0..15 in its table order (Tiger=0, Dragon=1, ... Cobra=15).
    Offsets are (dx, dy) from the mover's own view (dx>0 = mover's right, dy>0 = forward).
    Parameter `cards`:
      `all`    five of the sixteen dealt at random from the match seed (default);
      `study5` Dragon, Elephant, Goose, Rooster, Monkey (the study's variant, all five in play);
      `A+B+C+D+E` an explicit list of five card names (commas belong to the spec syntax).
    The five cards in play are shuffled by the seed: the first is the side card, the next two go
    to Blue and the last two to Red (RULES.md, as in the study's `start_hardcoded_game`).

Action ids (num_distinct_actions = 202), stable and independent of the deal order
    A move is `pov_square * 8 + slot * 4 + move_index`:
      pov_square  the moving pawn's square seen from the mover (row 0 = far row, col 0 = the
                  mover's left): the fixed square for Red, 24 - square for Blue;
      slot        0 = the hand card with the lower card number, 1 = the higher one (a hand is a
                  set: the same position always gives the same ids; the study orders them so);
      move_index  which offset of that card, in the study code's order of its moves A-D (0..3;
                  see CARDS: the same offsets as RULES.md, listed in another order for Dragon,
                  Rabbit, Crab, Elephant, Rooster, Monkey, Mantis, Horse, Crane, Boar and Cobra).
    200 + slot: pass, giving the card in that slot to the side. Legal only when no pawn move
    exists with either card (then both passes are legal: the player chooses the card).
    This is the study's "piece x card x move" space (40 ids) with the pawn replaced by its square.

    `state.piece_action(id)` / `state.from_piece_action(index)` translate to and from the study's
    own 40-way index, piece * 8 + slot * 4 + move_index with pieces 0-3 = pawns 1-4 and 4 = the
    master, exactly its `check_NN_valid_move` / `turn_deeprl` index, for networks trained with
    its code. Pawns keep their number all game; pawns 1-4 start on files a, b, d, e for both
    colours (the study's b1-b4 and r1-r4). `tests/fixtures/onitama_study/` holds positions with
    what the study's own functions return for them, and the tests compare position by position.

Strings: "Monkey c1-d2" (card, from, to; the mover is implied) and "pass Goose".

Observation (the study code's `return_NN_state`, for `player` instead of the side to move)
    `observation(player)` is one flat float32 vector: the 10x5x5 board planes (250 values, C
    order) then the card vector. Planes 0-3 = the player's pawns 1-4, plane 4 = its master,
    planes 5-9 = the same for the opponent, on the fixed board (row 0 = Blue's back row, column
    0 = file a) for both players, as the study draws them. Card vector for a fixed five-card set
    (its `use_hardcoded`): the player's two cards then the opponent's, one-hot over the five in
    card-number order (for study5 exactly the study's Dragon, Elephant, Goose, Rooster, Monkey);
    the side card is implied. For `cards=all` it is 48 entries: the player's cards, the side
    card, the opponent's cards, each over all 16 cards. `board_planes(player)` and
    `card_vector(player)` give the two parts separately.

Winning ends the game at once, without the card exchange. A move that captures the master on
the temple arch counts as the Stone (`win_way`), as the study counts it.
There is no draw rule: the arena's turn limit ends long matches, so max_game_length() is None.

Evaluation: `heuristic(state, player)` = material + master threats + the masters' distances to
the enemy temples (see the method), +-1000 at the end; `features` and `default_weights` give the
same terms to linear evaluators. `Onitama.position(...)` builds positions by hand; `state.key()`
is a cheap hashable key for transposition tables.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import arena
from arena import TERMINAL, svg
from arena.api import win_loss_returns

BLUE, RED = 0, 1
COLOURS = ("Blue", "Red")

# (name, offsets (dx, dy) from the mover's view, stamp colour); the index is the card number.
# The moves of each card are listed in the order of the study's code (its moves A, B, C, D), which
# is the `move_index` of an action; as sets they are RULES.md's table.
CARDS: tuple[tuple[str, tuple[tuple[int, int], ...], int], ...] = (
    ("Tiger", ((0, 2), (0, -1)), BLUE),
    ("Dragon", ((2, 1), (-2, 1), (1, -1), (-1, -1)), RED),
    ("Frog", ((-2, 0), (-1, 1), (1, -1)), RED),
    ("Rabbit", ((1, 1), (2, 0), (-1, -1)), BLUE),
    ("Crab", ((0, 1), (2, 0), (-2, 0)), BLUE),
    ("Elephant", ((1, 1), (-1, 1), (1, 0), (-1, 0)), RED),
    ("Goose", ((-1, 1), (-1, 0), (1, 0), (1, -1)), BLUE),
    ("Rooster", ((-1, -1), (-1, 0), (1, 0), (1, 1)), RED),
    ("Monkey", ((-1, -1), (1, -1), (-1, 1), (1, 1)), BLUE),
    ("Mantis", ((0, -1), (1, 1), (-1, 1)), RED),
    ("Horse", ((0, 1), (0, -1), (-1, 0)), RED),
    ("Ox", ((0, 1), (1, 0), (0, -1)), BLUE),
    ("Crane", ((1, -1), (-1, -1), (0, 1)), BLUE),
    ("Boar", ((0, 1), (1, 0), (-1, 0)), RED),
    ("Eel", ((-1, 1), (-1, -1), (1, 0)), BLUE),
    ("Cobra", ((-1, 0), (1, 1), (1, -1)), RED),
)
CARD_NAMES: tuple[str, ...] = tuple(name for name, _, _ in CARDS)
STAMPS: tuple[int, ...] = tuple(stamp for _, _, stamp in CARDS)
_CARD_BY_NAME = {name.lower(): i for i, name in enumerate(CARD_NAMES)}

STUDY5: tuple[int, ...] = tuple(CARD_NAMES.index(n) for n in ("Dragon", "Elephant", "Goose", "Rooster", "Monkey"))

NUM_ACTIONS = 202
PASS = 200  # PASS + slot

# Pieces on the board: 0 = empty, else (player + 1) * 8 + kind, kind 0..3 = pawns 1..4, 4 = master.
# So `code >> 3` is the owner + 1 and an empty square is owned by nobody (0).
MASTER = 4
TEMPLE = (2, 22)  # each colour's own temple arch square (c5 for Blue, c1 for Red)


def _target(player: int, sq: int, dx: int, dy: int) -> int:
    """Where an offset from the mover's view lands in the fixed frame, or -1 off the board."""
    row, col = divmod(sq, 5)
    if player == RED:
        row, col = row - dy, col + dx
    else:
        row, col = row + dy, col - dx
    return row * 5 + col if 0 <= row < 5 and 0 <= col < 5 else -1


# _TARGETS[p][card][sq]: the on-board (move_index, target) pairs, in move_index order.
_TARGETS: tuple[tuple[tuple[tuple[tuple[int, int], ...], ...], ...], ...] = tuple(
    tuple(
        tuple(
            tuple((i, t) for i, (dx, dy) in enumerate(moves) if (t := _target(p, sq, dx, dy)) >= 0)
            for sq in range(25)
        )
        for _, moves, _ in CARDS
    )
    for p in (BLUE, RED)
)
# _MOVE_TO[p][card][sq * 4 + move_index]: target square or -1, for decoding an action in apply().
_MOVE_TO: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(
            _target(p, sq, *moves[i]) if i < len(moves) else -1 for sq in range(25) for i in range(4)
        )
        for _, moves, _ in CARDS
    )
    for p in (BLUE, RED)
)
# _ATTACKERS[p][card][t]: the squares from which `card` moves a piece of `p` onto t (threat tests).
_ATTACKERS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(
        tuple(tuple(sq for sq in range(25) if any(t == u for _, u in _TARGETS[p][card][sq])) for t in range(25))
        for card in range(16)
    )
    for p in (BLUE, RED)
)
# Squares in increasing pov order, so legal_actions() comes out sorted without a sort.
_SCAN: tuple[tuple[int, ...], ...] = (tuple(range(24, -1, -1)), tuple(range(25)))
_CHEBYSHEV = tuple(tuple(max(abs(a // 5 - b // 5), abs(a % 5 - b % 5)) for b in range(25)) for a in range(25))


def square_name(sq: int) -> str:
    return "abcde"[sq % 5] + str(5 - sq // 5)


def parse_square(text: str) -> int:
    text = text.strip().lower()
    if len(text) != 2 or text[0] not in "abcde" or text[1] not in "12345":
        raise arena.ArenaError(f"bad Onitama square {text!r} (expected a1..e5)")
    return (5 - int(text[1])) * 5 + "abcde".index(text[0])


def card_index(name: str) -> int:
    try:
        return _CARD_BY_NAME[name.strip().lower()]
    except KeyError:
        raise arena.ArenaError(f"unknown Onitama card {name!r} (cards: {', '.join(CARD_NAMES)})") from None


def parse_card_set(text: str) -> tuple[int, ...] | None:
    """The `cards` parameter: None for `all`, else the five card numbers in play, sorted."""
    value = str(text).strip()
    if value.lower() == "all":
        return None
    if value.lower() == "study5":
        return STUDY5
    names = [part for part in value.split("+")]
    if len(names) != 5 or not all(n.strip() for n in names):
        raise arena.ArenaError(
            f"bad value {text!r} for parameter 'cards' of game 'onitama': expected all, study5, "
            "or five card names joined by '+' (e.g. Tiger+Crab+Ox+Eel+Cobra)"
        )
    indices = [card_index(n) for n in names]
    if len(set(indices)) != 5:
        raise arena.ArenaError(f"bad value {text!r} for parameter 'cards' of game 'onitama': a card is listed twice")
    return tuple(sorted(indices))


@dataclass(frozen=True)
class _Setup:
    """What every state of one configured game shares: the card set (None = any five of 16)."""

    card_set: tuple[int, ...] | None

    @property
    def card_vector_size(self) -> int:
        return 10 if self.card_set is not None else 48


class OnitamaState(arena.State):
    """board: 25 piece codes; hands[p]: the two card numbers of seat p, sorted; side: the side card."""

    __slots__ = ("board", "hands", "side", "current_player", "winner", "win_way", "masters", "setup")

    board: list[int]
    hands: list[tuple[int, int]]
    side: int
    winner: int
    win_way: str
    masters: list[int]
    setup: _Setup

    # ---- rules ----

    def legal_actions(self) -> list[int]:
        p = self.current_player
        if p == TERMINAL:
            return []
        board = self.board
        me = p + 1
        first, second = self.hands[p]
        table = _TARGETS[p]
        by_first, by_second = table[first], table[second]
        actions: list[int] = []
        append = actions.append
        for sq in _SCAN[p]:
            if board[sq] >> 3 != me:
                continue
            base = (sq if p else 24 - sq) << 3
            for i, t in by_first[sq]:
                if board[t] >> 3 != me:
                    append(base + i)
            for i, t in by_second[sq]:
                if board[t] >> 3 != me:
                    append(base + 4 + i)
        if not actions:
            return [PASS, PASS + 1]
        return actions

    def apply(self, action: int) -> None:
        p = self.current_player
        hand = self.hands[p]
        if action >= PASS:
            card = hand[action - PASS]
        else:
            card = hand[(action >> 2) & 1]
            pov = action >> 3
            sq = pov if p else 24 - pov
            target = _MOVE_TO[p][card][(sq << 2) | (action & 3)]
            board = self.board
            code = board[sq]
            captured = board[target]
            board[target] = code
            board[sq] = 0
            if captured and captured & 7 == MASTER:
                self._win(p, "stone")  # the study counts Stone-and-Stream at once as Stone
                return
            if code & 7 == MASTER:
                self.masters[p] = target
                if target == TEMPLE[1 - p]:
                    self._win(p, "stream")
                    return
        # Exchange: the used card goes to the side, the old side card joins the hand.
        other = hand[0] if hand[1] == card else hand[1]
        side = self.side
        self.hands[p] = (other, side) if other < side else (side, other)
        self.side = card
        self.current_player = 1 - p

    def _win(self, player: int, way: str) -> None:
        self.winner = player
        self.win_way = way
        self.current_player = TERMINAL

    def returns(self) -> list[float]:
        return win_loss_returns(self.winner)  # seat 0 is Blue, seat 1 is Red

    def clone(self) -> OnitamaState:
        other = OnitamaState.__new__(OnitamaState)
        other.board = self.board[:]
        other.hands = self.hands[:]
        other.side = self.side
        other.current_player = self.current_player
        other.winner = self.winner
        other.win_way = self.win_way
        other.masters = self.masters[:]
        other.setup = self.setup
        return other

    def piece_action(self, action: int) -> int | None:
        """The study's 40-way index of a move id: piece * 8 + slot * 4 + move_index (piece 0-3 =
        pawns 1-4, 4 = master); None for a pass, which the study's action space does not have."""
        if action >= PASS:
            return None
        p = self._actor()
        pov = action >> 3
        code = self.board[pov if p else 24 - pov]
        if code >> 3 != p + 1:
            raise arena.ArenaError(f"action {action} does not move a piece of seat {p} here")
        return (code & 7) * 8 + (action & 7)

    def from_piece_action(self, index: int) -> int:
        """The move id of the study's 40-way index in this position; ArenaError if it is not legal here."""
        p = self._actor()
        if not 0 <= index < 40:
            raise arena.ArenaError(f"a study action index is 0..39, got {index}")
        code = (p + 1) * 8 + (index >> 3)
        if code in self.board:
            sq = self.board.index(code)
            action = ((sq if p else 24 - sq) << 3) | (index & 7)
            if action in self.legal_actions():
                return action
        raise arena.ArenaError(f"study action {index} is not legal here")

    def key(self) -> tuple[bytes, tuple[int, int], tuple[int, int], int, int, int]:
        """A cheap hashable key of the position, for transposition tables."""
        return (bytes(self.board), self.hands[0], self.hands[1], self.side, self.current_player, self.winner)

    def can_win_now(self, player: int) -> bool:
        """True if `player`, moving now with its hand, could capture the enemy master or reach its temple."""
        board = self.board
        me = player + 1
        enemy_master = self.masters[1 - player]
        enemy_temple = TEMPLE[1 - player]
        my_master = self.masters[player]
        temple_open = board[enemy_temple] >> 3 != me
        table = _ATTACKERS[player]
        for card in self.hands[player]:
            by_card = table[card]
            for sq in by_card[enemy_master]:
                if board[sq] >> 3 == me:
                    return True
            if temple_open and my_master in by_card[enemy_temple]:
                return True
        return False

    # ---- text ----

    def _actor(self) -> int:
        return self.current_player if self.current_player != TERMINAL else RED

    def action_to_string(self, action: int) -> str:
        p = self._actor()
        if action >= PASS:
            return f"pass {CARD_NAMES[self.hands[p][action - PASS]]}"
        card = self.hands[p][(action >> 2) & 1]
        pov = action >> 3
        sq = pov if p else 24 - pov
        target = _MOVE_TO[p][card][(sq << 2) | (action & 3)]
        return f"{CARD_NAMES[card]} {square_name(sq)}-{square_name(target)}"

    def string_to_action(self, text: str) -> int:
        words = text.split()
        if len(words) == 2 and words[0].lower() == "pass":
            card = card_index(words[1])
            wanted = f"pass {CARD_NAMES[card]}"
        elif len(words) == 2 and "-" in words[1]:
            card = card_index(words[0])
            start, _, end = words[1].partition("-")
            wanted = f"{CARD_NAMES[card]} {square_name(parse_square(start))}-{square_name(parse_square(end))}"
        else:
            return super().string_to_action(text)
        for action in self.legal_actions():
            if self.action_to_string(action) == wanted:
                return action
        raise arena.ArenaError(f"Onitama action {text!r} is not legal here")

    def render(self) -> str:
        marks = {BLUE + 1: "b", RED + 1: "r"}
        lines = [f"Blue (seat 0) hand: {', '.join(CARD_NAMES[c] for c in self.hands[BLUE])}"]
        for row in range(5):
            cells = []
            for col in range(5):
                code = self.board[row * 5 + col]
                if code:
                    mark = marks[code >> 3]
                    cells.append(mark.upper() if code & 7 == MASTER else mark)
                else:
                    cells.append(".")
            lines.append(f"{5 - row} {' '.join(cells)}")
        lines.append("  a b c d e")
        lines.append(f"Red (seat 1) hand: {', '.join(CARD_NAMES[c] for c in self.hands[RED])}")
        lines.append(f"Side card: {CARD_NAMES[self.side]} ({COLOURS[STAMPS[self.side]]} stamp)")
        if self.current_player == TERMINAL:
            way = "Way of the Stone" if self.win_way == "stone" else "Way of the Stream"
            lines.append(f"Winner: {COLOURS[self.winner]} (seat {self.winner}) by the {way}")
        else:
            lines.append(f"To move: {COLOURS[self.current_player]} (seat {self.current_player})")
        return "\n".join(lines)

    def to_json(self, player: int) -> dict:
        """`board`: rows 5 to 1 (as rendered), each cell null, {"seat", "piece": "master"} or {"seat", "piece": "student",
        "pawn": 1..4} (a pawn keeps its number all game: the observation planes and `piece_action` use it); the cards are
        open: `hands[seat]` the two card names each seat holds, `side` the side card's name."""
        board = [[None if not code else _piece_json(code) for code in self.board[row * 5:row * 5 + 5]] for row in range(5)]
        return {"board": board, "hands": [[CARD_NAMES[c] for c in hand] for hand in self.hands], "side": CARD_NAMES[self.side]}

    def render_svg(self) -> str:
        """The board (rank 5, Blue's side, on top; temple arches shaded) with numbered pawns and masters (M),
        each side's two cards beside it with their moves drawn from the holder's view, the side card, who moves."""
        cell, pad, card_w = 60, 26, 132
        size = 5 * cell
        board_x, board_y = pad, pad + 86
        parts = []
        for sq in range(25):
            row, col = divmod(sq, 5)
            fill = "#fff"
            if sq == TEMPLE[BLUE]:
                fill = "#bbdefb"
            elif sq == TEMPLE[RED]:
                fill = "#ffcdd2"
            parts.append(svg.rect(board_x + col * cell, board_y + row * cell, cell, cell, fill=fill, stroke="#555"))
            code = self.board[sq]
            if code:
                owner = (code >> 3) - 1
                cx, cy = board_x + (col + 0.5) * cell, board_y + (row + 0.5) * cell
                master = code & 7 == MASTER
                color = _SVG_COLORS[owner]
                parts.append(svg.circle(cx, cy, cell * (0.38 if master else 0.3), fill=color,
                                        stroke="#ffd54f" if master else "#fff", stroke_width=4 if master else 2))  # fmt: skip
                parts.append(svg.text(cx, cy, "M" if master else (code & 7) + 1, size=18 if master else 15, fill="#fff",
                                      font_weight="bold"))
        for i in range(5):
            parts.append(svg.text(board_x - 12, board_y + (i + 0.5) * cell, 5 - i, size=12, fill="#555"))
            parts.append(svg.text(board_x + (i + 0.5) * cell, board_y + size + 12, "abcde"[i], size=12, fill="#555"))
        for player, y in ((BLUE, pad), (RED, board_y + size + 42)):
            parts.append(svg.text(board_x, y - 12, f"{COLOURS[player]} (seat {player})", size=13, anchor="start",
                                  fill=_SVG_COLORS[player], font_weight="bold"))  # fmt: skip
            for slot, card in enumerate(self.hands[player]):
                parts.append(_card_svg(card, board_x + slot * (card_w + 12), y, card_w, _SVG_COLORS[player]))
        side_x = board_x + size + 14
        parts.append(svg.text(side_x, board_y + size / 2 - 50, "side card", size=12, anchor="start", fill="#555"))
        parts.append(_card_svg(self.side, side_x, board_y + size / 2 - 36, card_w, "#757575"))
        if self.current_player == TERMINAL:
            way = "Way of the Stone" if self.win_way == "stone" else "Way of the Stream"
            status = f"{COLOURS[self.winner]} wins by the {way}"
        else:
            status = f"{COLOURS[self.current_player]} to move"
        width = side_x + card_w + pad
        height = board_y + size + 42 + 72 + 34
        parts.append(svg.text(width / 2, height - 16, status, size=16))
        return svg.document(width, height, parts, f"Onitama: {status}")

    # ---- observation ----

    def board_planes(self, player: int) -> np.ndarray:
        """The study's 10x5x5 board planes for `player` (its `return_NN_state`).

        Planes 0-3: the player's pawns 1-4, plane 4: its master, planes 5-9: the same for the
        opponent. Cells are the fixed board's (row 0 = Blue's back row, column 0 = file a) for
        both players: the study does not turn the board for Blue.
        """
        planes = np.zeros((10, 5, 5), dtype=np.float32)
        me = player + 1
        for sq, code in enumerate(self.board):
            if code:
                plane = (code & 7) + (0 if code >> 3 == me else 5)
                planes[plane, sq // 5, sq % 5] = 1.0
        return planes

    def card_vector(self, player: int) -> np.ndarray:
        """The study's card one-hots (its `return_NN_state`).

        For a fixed five-card set (study5 or an explicit list) this is 10 entries: the player's
        cards then the opponent's, each over the five in card-number order (for study5: Dragon,
        Elephant, Goose, Rooster, Monkey, the study's order); the side card is implied. For
        `cards=all` the five in play vary, so it is 48 entries: the player's cards, the side card,
        then the opponent's cards, each a 16-way indicator over all cards in card-number order.
        """
        card_set = self.setup.card_set
        if card_set is not None:
            vector = np.zeros(10, dtype=np.float32)
            for c in self.hands[player]:
                vector[card_set.index(c)] = 1.0
            for c in self.hands[1 - player]:
                vector[5 + card_set.index(c)] = 1.0
            return vector
        vector = np.zeros(48, dtype=np.float32)
        for c in self.hands[player]:
            vector[c] = 1.0
        vector[16 + self.side] = 1.0
        for c in self.hands[1 - player]:
            vector[32 + c] = 1.0
        return vector

    def observation(self, player: int) -> np.ndarray:
        """Flat float32: the 250 board-plane values (10x5x5, C order) then the card vector (10 or 48)."""
        return np.concatenate((self.board_planes(player).ravel(), self.card_vector(player)))


_SVG_COLORS = ("#1565c0", "#c62828")  # Blue, Red


def _card_svg(card: int, x: float, y: float, width: float, color: str) -> str:
    """A card: its name and a 5x5 grid of its moves seen by its holder (forward = up), the pawn in the middle."""
    name, moves, stamp = CARDS[card]
    step = 10
    grid_x, grid_y = x + width - 5 * step - 7, y + 11
    parts = [svg.rect(x, y, width, 72, fill="#fffdf5", stroke=color, stroke_width=2, rx=6),
             svg.text(x + 7, y + 18, name, size=12, anchor="start", font_weight="bold"),
             svg.text(x + 7, y + 40, COLOURS[stamp], size=10, anchor="start", fill="#666"),
             svg.text(x + 7, y + 54, "stamp", size=10, anchor="start", fill="#666")]  # fmt: skip
    for row in range(5):
        for col in range(5):
            dx, dy = col - 2, 2 - row
            fill = "#424242" if (dx, dy) == (0, 0) else color if (dx, dy) in moves else "#fff"
            parts.append(svg.rect(grid_x + col * step, grid_y + row * step, step, step, fill=fill, stroke="#bbb", stroke_width=0.5))
    return "".join(parts)


def _piece_json(code: int) -> dict:
    if code & 7 == MASTER:
        return {"seat": (code >> 3) - 1, "piece": "master"}
    return {"seat": (code >> 3) - 1, "piece": "student", "pawn": (code & 7) + 1}


def _piece_code(cell: dict | None) -> int:
    if cell is None:
        return 0
    return (cell["seat"] + 1) * 8 + (MASTER if cell["piece"] == "master" else cell["pawn"] - 1)


def _new_state(setup: _Setup, board: list[int], hands: Sequence[Sequence[int]], side: int, to_move: int) -> OnitamaState:
    state = OnitamaState.__new__(OnitamaState)
    state.board = board
    state.hands = [tuple(sorted(h)) for h in hands]  # type: ignore[misc]
    state.side = side
    state.current_player = to_move
    state.winner = -1
    state.win_way = ""
    state.masters = [board.index((p + 1) * 8 + MASTER) for p in (BLUE, RED)]
    state.setup = setup
    return state


class Onitama(arena.Game):
    info = arena.GameInfo(
        id="onitama",
        version="2",  # 2: the study code's move order (action ids) and pawn numbering and planes (observations)
        name="Onitama",
        stochastic=True,
        params=(
            arena.Param(
                "cards",
                "all",
                "cards in play: all (5 of 16 dealt by the seed), study5, or five names joined by '+'",
                type=str,
            ),
        ),
        description=(
            "Onitama (official rules with pass-and-exchange). Seat 0 = Blue (top), seat 1 = Red (bottom); "
            "the side card's stamp moves first. Action = pov_square*8 + hand_slot*4 + move_index; 200/201 = pass."
        ),
    )

    feature_names = ("material", "my_master_attacked", "their_master_attacked", "my_master_to_temple", "their_master_to_temple")
    #: Weights for a linear evaluator over `features`: the heuristic without its side-to-move bonus.
    default_weights = (1.0, -3.0, 3.0, -0.1, 0.1)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.setup = _Setup(parse_card_set(self.params["cards"]))

    @property
    def num_distinct_actions(self) -> int:
        return NUM_ACTIONS

    def new_initial_state(self, seed: int = 0) -> OnitamaState:
        rng = random.Random(seed)
        if self.setup.card_set is None:
            deal = rng.sample(range(16), 5)
        else:
            deal = list(self.setup.card_set)
            rng.shuffle(deal)
        board = [0] * 25
        for p, row in ((BLUE, 0), (RED, 4)):
            # Pawns 1..4 stand on files a, b, d, e for both colours, as the study's b1-b4 and r1-r4.
            for kind, col in enumerate((0, 1, 3, 4)):
                board[row * 5 + col] = (p + 1) * 8 + kind
            board[row * 5 + 2] = (p + 1) * 8 + MASTER
        side = deal[0]
        return _new_state(self.setup, board, (deal[1:3], deal[3:5]), side, STAMPS[side])

    def position(
        self, board: str, blue: Sequence[str], red: Sequence[str], side: str, to_move: int
    ) -> OnitamaState:
        """A hand-built position (for tests and analysis).

        `board` is five lines of five characters, rank 5 (Blue's side) first: `.` empty, `b`/`B`
        Blue pawn/master, `r`/`R` Red pawn/master (spaces are ignored). Each side's pawns are
        numbered 1-4 from its own back row forward, file a to e within a row, so the starting rows
        give the study's b1-b4 and r1-r4 (`study_position` takes the study's board, numbers and all).
        """
        rows = [line.replace(" ", "") for line in board.strip().splitlines()]
        if len(rows) != 5 or any(len(r) != 5 for r in rows) or any(ch not in ".bBrR" for r in rows for ch in r):
            raise arena.ArenaError("an Onitama board is 5 lines of 5 characters from '.bBrR'")
        text = "".join(rows)
        if text.count("B") != 1 or text.count("R") != 1 or text.count("b") > 4 or text.count("r") > 4:
            raise arena.ArenaError("an Onitama position needs one master per side and at most 4 pawns each")
        cells = [0] * 25
        for p, pawn, master in ((BLUE, "b", "B"), (RED, "r", "R")):
            kind = 0
            for row in range(5) if p == BLUE else range(4, -1, -1):  # own back row first, file a first
                for sq in range(row * 5, row * 5 + 5):
                    if text[sq] == master:
                        cells[sq] = (p + 1) * 8 + MASTER
                    elif text[sq] == pawn:
                        cells[sq] = (p + 1) * 8 + kind
                        kind += 1
        return self._dealt(cells, blue, red, side, to_move)

    def study_position(self, board: Sequence[Sequence[str]], blue_cards: Sequence[str], red_cards: Sequence[str],
                       side_card: str, whose_turn: str) -> OnitamaState:  # fmt: skip
        """The position of a game object of the Onitama study's code (`Onitama_source.Onitama`), pawn numbers included.

        `board` is its `board` attribute: 5 rows (row 0 = Blue's back row) of 'b1'..'b4', 'B',
        'r1'..'r4', 'R' or an empty mark; the cards are its lower-case names; `whose_turn` is
        'blue' or 'red'. Then `observation` and `piece_action` give what its `return_NN_state`
        and 40-way move index give for that position.
        """
        if len(board) != 5 or any(len(row) != 5 for row in board):
            raise arena.ArenaError("a study board is 5 rows of 5 cells")
        cells = [0] * 25
        for sq, cell in enumerate(c for row in board for c in row):
            if cell in ("B", "R"):
                cells[sq] = ((BLUE if cell == "B" else RED) + 1) * 8 + MASTER
            elif len(cell) == 2 and cell[0] in "br" and cell[1] in "1234":
                cells[sq] = ((BLUE if cell[0] == "b" else RED) + 1) * 8 + int(cell[1]) - 1
            if cells[sq] and cells[sq] in cells[:sq]:
                raise arena.ArenaError(f"piece {cell!r} is on the study board twice")
        turn = {"blue": BLUE, "red": RED}.get(str(whose_turn).lower())
        if turn is None:
            raise arena.ArenaError(f"whose_turn must be 'blue' or 'red', got {whose_turn!r}")
        if (BLUE + 1) * 8 + MASTER not in cells or (RED + 1) * 8 + MASTER not in cells:
            raise arena.ArenaError("an Onitama position needs one master per side")
        return self._dealt(cells, blue_cards, red_cards, side_card, turn)

    def _dealt(self, cells: list[int], blue: Sequence[str], red: Sequence[str], side: str, to_move: int) -> OnitamaState:
        """A state from its 25 piece codes and the cards by name, checked against this game's card set."""
        deal = [card_index(n) for n in (*blue, *red, side)]
        if len(blue) != 2 or len(red) != 2 or len(set(deal)) != 5:
            raise arena.ArenaError("an Onitama position needs 2 + 2 + 1 distinct cards")
        if self.setup.card_set is not None and sorted(deal) != list(self.setup.card_set):
            raise arena.ArenaError("the position's cards are not this game's card set")
        if to_move not in (BLUE, RED):
            raise arena.ArenaError("to_move must be 0 (Blue) or 1 (Red)")
        return _new_state(self.setup, cells, (deal[0:2], deal[2:4]), deal[4], to_move)

    def state_from_json(self, data: dict, player: int) -> OnitamaState:
        """The position of `to_json` (pieces with their pawn numbers, the open cards) with `player` to move."""
        cells = [_piece_code(cell) for row in data["board"] for cell in row]
        hands = [[card_index(name) for name in hand] for hand in data["hands"]]
        return _new_state(self.setup, cells, hands, card_index(data["side"]), player)

    def max_game_length(self) -> int | None:
        return None  # no draw rule: the arena's turn limit ends long matches

    def observation_planes(self) -> tuple[int, int, int]:
        """The observation's head: 10 board planes of 5x5 (then the card vector)."""
        return (10, 5, 5)

    def features(self, state: arena.State, player: int) -> list[float]:
        """material (pawns, mine - theirs), master threats (0/1), Chebyshev distance of each master to the enemy temple."""
        assert isinstance(state, OnitamaState)
        other = 1 - player
        me = player + 1
        mine = theirs = 0
        for code in state.board:
            if code and code & 7 != MASTER:
                if code >> 3 == me:
                    mine += 1
                else:
                    theirs += 1
        masters = state.masters
        return [
            float(mine - theirs),
            float(state.can_win_now(other)),
            float(state.can_win_now(player)),
            float(_CHEBYSHEV[masters[player]][TEMPLE[other]]),
            float(_CHEBYSHEV[masters[other]][TEMPLE[player]]),
        ]

    def heuristic(self, state: arena.State, player: int) -> float:
        """Material + master safety + master's road to the enemy temple, from `player`'s side.

        A threat on a master (capture, or the enemy master reaching the temple) is worth 100 when
        the threatening side is to move (it wins next action) and 3 otherwise (the defender must
        answer it). Zero-sum: heuristic(s, p) == -heuristic(s, 1 - p). Terminal: +-1000.
        """
        assert isinstance(state, OnitamaState)
        if state.current_player == TERMINAL:
            return 1000.0 * state.returns()[player]
        material, mine_attacked, theirs_attacked, my_distance, their_distance = self.features(state, player)
        to_move = state.current_player
        value = material + 0.1 * (their_distance - my_distance)
        if theirs_attacked:
            value += 100.0 if to_move == player else 3.0
        if mine_attacked:
            value -= 100.0 if to_move != player else 3.0
        return value


@arena.hookimpl
def register_games(register):
    register(Onitama)
