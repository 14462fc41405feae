"""Gwent Lite (chiamp/dqn-boardgames), two players, best of three rounds, hidden hands.

Rules as in RULES.md section 7. Each player has a deck of at least 25 integer cards >= 1 whose
sum is at most 100, shuffles it and draws 10. A random player (from the seed) starts round 1.
On a turn a player plays a card from hand (adding its value to their round total) or passes
(and plays no more this round); playing the last card in hand also takes the player out. Turns
alternate between the players still in the round. When both are out, the higher total wins the
round and a tie counts as a win for both. Then each draws 3 cards (fewer if that would take the
hand above 10), and the round's winner starts (after a tie, the player who did not start round 1).
The first to two round wins wins; both reaching two at once (only after a tie) is a draw. At most
three rounds. Returns +1 / -1 / 0.

Decks: by default each seat gets a random legal deck of 25 cards summing to exactly 100, drawn
from the seed the way chiamp describes his generator (values from a rounded normal around
100/25 = 4 with a spread drawn from 0..7, clipped so the deck stays legal, the leftover budget
added to the last card). `deck0` / `deck1` give a seat's deck explicitly, values joined by '+'
(e.g. `deck0=1+2+...`; commas belong to the spec syntax). The deck lists (compositions) are
public, as in chiamp's observation; their order, the opponent's hand and one's own deck order
are hidden.

Hidden information: `view(player)` keeps the seat's own hand, re-shuffles its deck (from the
sorted composition) and re-deals the opponent's hand and deck from their deck list minus the
cards they have played, with a fresh RNG that the view keeps; it never touches the real state or
its RNG. See `arena.sampling.SampledViews._fresh_rng` for how views are seeded.

Actions: 0 = pass; k = 1..10 plays the hand card at index k-1 (hand in draw order). Unlike
chiamp, an index past the end of the hand is not legal (chiamp treated it as a pass).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click
import numpy as np

import arena
from arena import TERMINAL, svg
from arena.api import Evaluation
from arena.sampling import SampledViews, data_rng
from arena.seeding import derive_seed

PASS = 0
MIN_DECK, MAX_DECK_SUM = 25, 100
MAX_CARD = MAX_DECK_SUM - MIN_DECK + 1  # 76: the largest card a legal deck can hold
HAND, FIRST_DRAW, ROUND_DRAW = 10, 10, 3
WINS_NEEDED = 2


def parse_deck(text: str, name: str) -> tuple[int, ...]:
    """Read a '+'-separated deck and check the deck rules; bad input raises arena.ArenaError."""
    parts = [part.strip() for part in text.split("+")]
    try:
        cards = tuple(int(part) for part in parts)
    except ValueError:
        raise arena.ArenaError(
            f"gwent_lite: {name} must be integer card values joined by '+', e.g. 4+4+3+..., got {text!r}"
        ) from None
    if len(cards) < MIN_DECK:
        raise arena.ArenaError(f"gwent_lite: {name} has {len(cards)} cards; a deck needs at least {MIN_DECK}")
    if min(cards) < 1:
        raise arena.ArenaError(f"gwent_lite: {name} has a card of value {min(cards)}; every card must be >= 1")
    if sum(cards) > MAX_DECK_SUM:
        raise arena.ArenaError(f"gwent_lite: {name} sums to {sum(cards)}; a deck may sum to at most {MAX_DECK_SUM}")
    return cards


def random_deck(rng: random.Random) -> list[int]:
    """A legal deck of exactly 25 cards summing to exactly 100, in the manner of chiamp's generator."""
    mean = round(MAX_DECK_SUM / MIN_DECK)
    spread = rng.randrange(0, 8)
    budget = MAX_CARD  # the largest card still allowed; shrinks as cards above 1 are added
    deck: list[int] = []
    for _ in range(MIN_DECK):
        card = 1 if budget == 1 else min(budget, max(1, round(rng.gauss(mean, spread))))
        deck.append(card)
        budget -= card - 1
    deck[-1] += budget - 1  # spend what is left, so the deck sums to exactly 100
    return deck


@dataclass(frozen=True)
class Decision:
    """The public record of the last action: who, which card (0 = pass), and the position before it.

    The greedy evaluation reads it to judge that decision, even when it ended the round and new
    cards were drawn after it.
    """

    player: int
    card: int
    totals: tuple[int, int]
    active: tuple[bool, bool]
    wins: tuple[int, int]
    hand_size: int


class GwentLiteState(SampledViews, arena.State):
    """A position. `decks[p]` is seat p's deck in order (its end is the top), `hands[p]` in draw order."""

    __slots__ = (
        "decklists", "current_player", "round", "decks", "hands", "totals", "wins", "active", "played",
        "on_table", "first_starter", "round_results", "last", "viewer", "_rng", "_view_key", "_view_stream",
    )  # fmt: skip

    decklists: tuple[tuple[int, ...], tuple[int, ...]]
    round: int
    decks: list[list[int]]
    hands: list[list[int]]
    totals: list[int]
    wins: list[int]
    active: list[bool]
    played: list[list[int]]
    on_table: list[list[int]]
    first_starter: int
    round_results: list[tuple[int, int]]
    last: Decision | None
    viewer: int | None
    _rng: random.Random
    _view_key: int
    _view_stream: random.Random | None

    @classmethod
    def new(cls, decks: Sequence[Sequence[int] | None], seed: int) -> GwentLiteState:
        state = cls.__new__(cls)
        rng = random.Random(derive_seed("gwent_lite", seed))
        lists = [list(deck) if deck is not None else random_deck(rng) for deck in decks]
        state.decklists = (tuple(sorted(lists[0])), tuple(sorted(lists[1])))
        for deck in lists:
            rng.shuffle(deck)
        state.decks = lists
        state.hands = [[], []]
        for p in (0, 1):
            state._draw(p, FIRST_DRAW)
        state.round = 1
        state.totals = [0, 0]
        state.wins = [0, 0]
        state.played = [[], []]
        state.on_table = [[], []]
        state.round_results = []
        state.last = None
        state.viewer = None
        state.first_starter = rng.randrange(2)
        state.active = [bool(state.hands[0]), bool(state.hands[1])]
        state.current_player = state.first_starter
        state._rng = rng
        # Seeds the re-sampling in views; a one-way hash of the seed, independent of `_rng`'s stream.
        state._view_key = derive_seed("gwent_lite/view", seed)
        state._view_stream = None
        return state

    # --- the rules -------------------------------------------------------------------------

    def _draw(self, player: int, count: int) -> None:
        deck, hand = self.decks[player], self.hands[player]
        for _ in range(min(count, HAND - len(hand), len(deck))):
            hand.append(deck.pop())

    def _end_round(self) -> None:
        t0, t1 = self.totals
        self.round_results.append((t0, t1))
        if t0 >= t1:  # a tie counts as a round win for both
            self.wins[0] += 1
        if t1 >= t0:
            self.wins[1] += 1
        if max(self.wins) >= WINS_NEEDED:
            self.current_player = TERMINAL
            return
        starter = 0 if t0 > t1 else 1 if t1 > t0 else 1 - self.first_starter
        self.round += 1
        self.totals = [0, 0]
        self.on_table = [[], []]
        for p in (0, 1):
            self._draw(p, ROUND_DRAW)
        self.active = [bool(self.hands[0]), bool(self.hands[1])]
        if not any(self.active):  # both hands empty: impossible with 25-card decks, kept for safety
            self._end_round()
            return
        self.current_player = starter if self.active[starter] else 1 - starter

    # --- the State interface -----------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        if self.current_player == TERMINAL:
            return []
        return list(range(len(self.hands[self.current_player]) + 1))

    def apply(self, action: int) -> None:
        p = self.current_player
        hand = self.hands[p]
        card = hand.pop(action - 1) if action != PASS else 0
        self.last = Decision(p, card, (self.totals[0], self.totals[1]), (self.active[0], self.active[1]),
                             (self.wins[0], self.wins[1]), len(hand) + (1 if card else 0))  # fmt: skip
        if card:
            self.totals[p] += card
            self.played[p].append(card)
            self.on_table[p].append(card)
        if action == PASS or not hand:
            self.active[p] = False
        if self.active[1 - p]:
            self.current_player = 1 - p
        elif not self.active[p]:
            self._end_round()

    def returns(self) -> list[float]:
        if not self.is_terminal() or self.wins[0] == self.wins[1]:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.wins[0] > self.wins[1] else [-1.0, 1.0]

    def rounds_played(self) -> int:
        return self.round

    def _copy(self) -> GwentLiteState:
        other = GwentLiteState.__new__(GwentLiteState)
        other.decklists = self.decklists
        other.current_player = self.current_player
        other.round = self.round
        other.decks = [self.decks[0][:], self.decks[1][:]]
        other.hands = [self.hands[0][:], self.hands[1][:]]
        other.totals = self.totals[:]
        other.wins = self.wins[:]
        other.active = self.active[:]
        other.played = [self.played[0][:], self.played[1][:]]
        other.on_table = [self.on_table[0][:], self.on_table[1][:]]
        other.first_starter = self.first_starter
        other.round_results = self.round_results[:]
        other.last = self.last  # immutable and public
        other.viewer = self.viewer
        return other

    def unseen(self, player: int) -> list[int]:
        """Seat `player`'s cards not yet played (hand and deck together), sorted: public knowledge."""
        left = list(self.decklists[player])
        for card in self.played[player]:
            left.remove(card)
        return left

    def view(self, player: int) -> GwentLiteState:
        """A playable state holding only what `player` may know.

        `player`'s own hand is kept; its deck order is re-shuffled; the opponent's hand and deck are
        re-dealt from their deck list minus the cards they have played. The fresh RNG
        (`SampledViews._fresh_rng`) stays with the view: a view is reproducible, tells nothing about the real
        RNG, and viewing leaves the real state untouched.
        """
        opponent = 1 - player
        played = len(self.played[0]) + len(self.played[1])
        other = self._view_copy(player, self.round, played, self.current_player)
        rng = other._rng
        # Sorted first: shuffling the real order would make the view's order a function of it.
        other.decks[player].sort()
        rng.shuffle(other.decks[player])
        pool = self.unseen(opponent)  # sorted
        rng.shuffle(pool)
        size = len(self.hands[opponent])
        other.hands[opponent] = pool[:size]
        other.decks[opponent] = pool[size:]
        return other

    def action_to_string(self, action: int) -> str:
        if action == PASS:
            return "pass"
        hand = self.hands[self.current_player] if self.current_player != TERMINAL else []
        value = hand[action - 1] if action - 1 < len(hand) else "?"
        return f"play {value} (slot {action})"

    def string_to_action(self, text: str) -> int:
        """Accepts "pass", "play V (slot K)", "slot K", "play V" (the first card of value V) or the id."""
        words = text.strip().lower().replace("(", " ").replace(")", " ").split()
        legal = self.legal_actions()
        action: int | None = None
        if words == ["pass"]:
            action = PASS
        elif len(words) == 2 and words[0] == "slot" and words[1].isdecimal():
            action = int(words[1])
        elif len(words) == 4 and words[0] == "play" and words[2] == "slot" and words[3].isdecimal():
            action = int(words[3])
            if action in legal and str(self.hands[self.current_player][action - 1]) != words[1]:
                raise arena.ArenaError(f"slot {action} does not hold a {words[1]}")
        elif len(words) == 2 and words[0] == "play" and words[1].isdecimal() and legal:
            hand = self.hands[self.current_player]
            if int(words[1]) not in hand:
                raise arena.ArenaError(f"no card of value {words[1]} in hand")
            action = hand.index(int(words[1])) + 1
        if action is None:
            return super().string_to_action(text)
        if action not in legal:
            raise arena.ArenaError(f"action {text!r} is not legal here")
        return action

    def to_json(self, player: int) -> dict:
        """Per seat, index = seat: `round` (1-3), `wins` (rounds won), `totals` (this round's sum on the table), `active`
        (not passed), `on_table` (this round's cards), `played` (every card played so far), `round_results` (earlier
        rounds' [total 0, total 1]), `hand_sizes`, `deck_sizes`, `unplayed` (each seat's cards not yet played, hand
        and deck together, as a sorted multiset: public), `first_starter` (the seat that started round 1: it settles
        who starts after a tied round), `last` (the last decision: `player`, `card` (0 = pass), and the `totals`,
        `active`, `wins` and that player's `hand_size` before it; null at the start); private: `hand`, only
        `player`'s own (slot k = action k)."""
        return {
            "round": self.round, "wins": list(self.wins), "totals": list(self.totals), "active": list(self.active),
            "on_table": [list(cards) for cards in self.on_table], "played": [list(cards) for cards in self.played],
            "round_results": [list(r) for r in self.round_results],
            "hand_sizes": [len(hand) for hand in self.hands], "deck_sizes": [len(deck) for deck in self.decks],
            "unplayed": [self.unseen(p) for p in (0, 1)], "hand": list(self.hands[player]),
            "first_starter": self.first_starter, "last": None if self.last is None else _decision_json(self.last),
        }

    def render(self) -> str:
        """Round, wins, each player's table and total, hand and deck size.

        A real state shows both hands (for replays); a view shows only its own seat's hand.
        """
        head = f"round {self.round}" + ("  (game over)" if self.is_terminal() else "")
        if self.round_results:
            head += "  earlier rounds: " + ", ".join(f"{a}-{b}" for a, b in self.round_results)
        lines = [head]
        for p in (0, 1):
            mark = "*" if p == self.current_player else " "
            state = "in" if self.active[p] else "out"
            table = "+".join(map(str, self.on_table[p])) or "-"
            if self.viewer is None or self.viewer == p:
                hand = " ".join(map(str, self.hands[p])) or "-"
            else:
                hand = "? " * len(self.hands[p]) or "-"
            lines.append(
                f"{mark}P{p}: wins {self.wins[p]}  total {self.totals[p]:3d} ({table}) {state}"
                f"  hand [{hand.strip()}]  deck {len(self.decks[p])}"
            )
        return "\n".join(lines)

    def render_svg(self) -> str:
        """Public information only, for spectators: round and earlier results, each player's round wins, cards on
        the table and total, in or out, and hand and deck sizes (hands face down, even in a finished replay). A seat's
        view (`view(p)`, what a person on the play page is shown) draws that seat's own hand face up."""
        pad, card_w, card_h = 16, 30, 42
        head = f"round {self.round}" + ("  (game over)" if self.is_terminal() else "")
        if self.round_results:
            head += "   earlier rounds: " + ", ".join(f"{a}-{b}" for a, b in self.round_results)
        parts = [svg.text(pad, pad + 8, head, size=15, anchor="start", font_weight="bold")]
        y = pad + 30
        per_row = 12
        for p in (1, 0):  # seat 1 across the table, seat 0 nearest
            color = svg.PLAYER_COLORS[p]
            mark = "▶ " if p == self.current_player else ""
            status = "in" if self.active[p] else "out (passed or no cards)"
            parts.append(svg.text(pad, y + 8, f"{mark}P{p}  wins {self.wins[p]}  total {self.totals[p]}  {status}", size=14,
                                  anchor="start", fill=color, font_weight="bold"))  # fmt: skip
            y += 22
            table = self.on_table[p]
            for i, value in enumerate(table):
                x, row_y = pad + (i % per_row) * (card_w + 4), y + (i // per_row) * (card_h + 4)
                parts.append(svg.rect(x, row_y, card_w, card_h, fill="#fff", stroke=color, stroke_width=2, rx=3))
                parts.append(svg.text(x + card_w / 2, row_y + card_h / 2, value, size=13, font_weight="bold"))
            if not table:
                parts.append(svg.text(pad, y + card_h / 2, "(no card played this round)", size=12, anchor="start", fill="#888"))
            y += max(1, -(-len(table) // per_row)) * (card_h + 4) + 6
            hand = len(self.hands[p])
            if p == self.viewer:  # the seat this view was made for sees its own hand (a person on the play page)
                for i, value in enumerate(sorted(self.hands[p])):
                    x, row_y = pad + (i % per_row) * (card_w + 4), y + (i // per_row) * (card_h + 4)
                    parts.append(svg.rect(x, row_y, card_w, card_h, fill="#fffde7", stroke=color, stroke_width=1, rx=3))
                    parts.append(svg.text(x + card_w / 2, row_y + card_h / 2, value, size=13))
                y += max(1, -(-hand // per_row)) * (card_h + 4)
                parts.append(svg.text(pad, y + 8, f"your hand {hand}, deck {len(self.decks[p])}", size=12, anchor="start", fill="#444"))
                y += 24
                continue
            for i in range(hand):
                parts.append(svg.rect(pad + i * 14, y, 22, 30, fill="#5d4037", stroke="#fff", stroke_width=1, rx=3))
            parts.append(svg.text(pad + hand * 14 + 16, y + 15, f"hand {hand} (face down), deck {len(self.decks[p])}",
                                  size=12, anchor="start", fill="#444"))  # fmt: skip
            y += 46
        width = pad * 2 + per_row * (card_w + 4)
        return svg.document(width, y + pad, parts, f"Gwent Lite: {head}")

    def observation(self, player: int) -> np.ndarray:
        """102 features from `player`'s point of view, after chiamp's 100.

        Own: remaining deck composition by value 1..76 (fractions of the deck), hand values (10
        slots, 0 = empty), unplayed cards, round total, wins, remaining power, mean remaining card.
        Opponent: deck size, hand size, unplayed cards, round total, wins, remaining power, mean
        remaining card. Game: round, own and opponent's in-round flags, whether `player` is to move.
        """
        opponent = 1 - player
        hand = self.hands[player]
        deck_counts = [0.0] * MAX_CARD
        own_unseen = self.unseen(player)
        for card in hand:
            own_unseen.remove(card)
        for card in own_unseen:  # own deck composition: own deck list minus played minus hand
            deck_counts[min(card, MAX_CARD) - 1] += 1
        size = max(1, len(own_unseen))
        features = [c / size for c in deck_counts]
        features += [(hand[i] if i < len(hand) else 0) / MAX_CARD for i in range(HAND)]
        for p in (player, opponent):
            left = self.unseen(p)
            power = sum(left)
            side = [len(left) / MIN_DECK, self.totals[p] / (MAX_CARD + 9), self.wins[p] / 2, power / MAX_DECK_SUM,
                    (power / len(left) if left else 0.0) / MAX_CARD]  # fmt: skip
            if p == opponent:
                side = [len(self.decks[p]) / MIN_DECK, len(self.hands[p]) / HAND] + side
            features += side
        features += [self.round / 3, float(self.active[player]), float(self.active[opponent]),
                     float(self.current_player == player)]  # fmt: skip
        return np.asarray(features, dtype=np.float32)


def _decision_json(last: Decision) -> dict[str, Any]:
    return {"player": last.player, "card": last.card, "totals": list(last.totals), "active": list(last.active),
            "wins": list(last.wins), "hand_size": last.hand_size}  # fmt: skip


def _decision(data: dict[str, Any] | None) -> Decision | None:
    if data is None:
        return None
    return Decision(data["player"], data["card"], (data["totals"][0], data["totals"][1]),
                    (data["active"][0], data["active"][1]), (data["wins"][0], data["wins"][1]), data["hand_size"])  # fmt: skip


def state_from_json(data: dict[str, Any], player: int, rng: random.Random) -> GwentLiteState:
    """`player`'s view rebuilt from `to_json(player)`: its hand as sent, its deck order and the opponent's hand
    and deck sampled from `rng` (out of their unplayed cards), as `GwentLiteState.view` samples them."""
    state = GwentLiteState.__new__(GwentLiteState)
    unplayed = [list(cards) for cards in data["unplayed"]]
    state.played = [list(cards) for cards in data["played"]]
    state.decklists = (tuple(sorted(unplayed[0] + state.played[0])), tuple(sorted(unplayed[1] + state.played[1])))
    state.current_player = player
    state.round = data["round"]
    state.totals = list(data["totals"])
    state.wins = list(data["wins"])
    state.active = list(data["active"])
    state.on_table = [list(cards) for cards in data["on_table"]]
    state.round_results = [(a, b) for a, b in data["round_results"]]
    state.first_starter = data["first_starter"]
    state.last = _decision(data["last"])
    chance = state._determinised(player, rng)._rng
    hand = list(data["hand"])
    own = unplayed[player]
    for card in hand:
        own.remove(card)
    chance.shuffle(own)
    opponent = 1 - player
    pool = unplayed[opponent]
    chance.shuffle(pool)
    size = data["hand_sizes"][opponent]
    state.hands = [[], []]
    state.decks = [[], []]
    state.hands[player], state.decks[player] = hand, own
    state.hands[opponent], state.decks[opponent] = pool[:size], pool[size:]
    return state


# --- evaluations -------------------------------------------------------------------------------


def rule_choice(total: int, opp_total: int, opp_active: bool, hand: Sequence[int], wins: int, opp_wins: int) -> int:
    """The card value the greedy rule plays (0 = pass).

    - Round already won (ahead and the opponent is out): pass, keep the cards.
    - Ahead with the opponent still in: add the smallest card to the lead, so catching up costs
      them more than it costs us (pass instead of playing the last card, which would take us out).
    - Behind or level: play the smallest card that takes the lead; if none does but the hand
      can still take it, play the biggest card; if the hand cannot (the round is lost), pass,
      except when a tie is reachable with the whole hand, the opponent is out and a tie wins
      (we hold one win) or saves a draw (both hold one): then play on.
    """
    lead = total - opp_total
    if lead > 0 and opp_active and len(hand) > 1:
        return min(hand)
    if lead > 0 or not hand:
        return PASS
    need = 1 - lead
    takers = [c for c in hand if c >= need]
    if takers:
        return min(takers)
    if sum(hand) >= need:
        return max(hand)
    if not opp_active and sum(hand) == need - 1 and wins == 1:
        return max(hand)
    return PASS


class GwentLite(arena.Game):
    info = arena.GameInfo(
        id="gwent_lite",
        version="1",
        name="Gwent Lite",
        min_players=2,
        max_players=2,
        perfect_information=False,
        stochastic=True,
        params=(
            arena.Param("deck0", "", "seat 0's deck as values joined by '+' (>= 25 cards >= 1, sum <= 100); "
                        "empty: a random deck from the seed"),
            arena.Param("deck1", "", "seat 1's deck, the same way"),
        ),  # fmt: skip
        description="Best of three rounds of card totals with hidden hands; 0 = pass, k = play hand card k-1.",
        seat_params=("deck",),  # an agent spec's seat.deck=... becomes deck0 or deck1 for its seat
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.decks: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (
            parse_deck(self.params["deck0"], "deck0") if self.params["deck0"] else None,
            parse_deck(self.params["deck1"], "deck1") if self.params["deck1"] else None,
        )

    @property
    def num_distinct_actions(self) -> int:
        return HAND + 1

    def new_initial_state(self, seed: int = 0) -> GwentLiteState:
        return GwentLiteState.new(self.decks, seed)

    def state_from_json(self, data: dict[str, Any], player: int, rng: random.Random | None = None) -> GwentLiteState:
        """A determinisation of what `player` sees (`to_json(player)`): the hidden cards sampled from `rng`."""
        return state_from_json(data, player, data_rng(data, player) if rng is None else rng)

    def max_game_length(self) -> int:
        """Each seat plays at most 10 + 3 + 3 cards and passes at most once a round, over 3 rounds."""
        return 2 * (FIRST_DRAW + 2 * ROUND_DRAW + 3)

    def heuristic(self, state: arena.State, player: int) -> float:
        """Round wins first, then the current round's lead, then the cards still in hand.

        The opponent's hand is counted at the mean of their unplayed cards (public), never its
        actual values.
        """
        assert isinstance(state, GwentLiteState)
        if state.is_terminal():
            return 100.0 * state.returns()[player]
        opponent = 1 - player
        value = 10.0 * (state.wins[player] - state.wins[opponent])
        value += 3.0 * math.tanh((state.totals[player] - state.totals[opponent]) / 5)
        pool = state.unseen(opponent)
        opp_hand = len(state.hands[opponent]) * (sum(pool) / len(pool) if pool else 0.0)
        return value + 0.1 * (sum(state.hands[player]) - opp_hand)

    def greedy(self, state: arena.State, player: int) -> float:
        """How well `player`'s latest decision follows `rule_choice`, judged in the position it was made in.

        Read on the state right after the decision (the record survives the end of a round and the
        draws after it). A finished match scores its result instead; elsewhere `heuristic`.
        """
        assert isinstance(state, GwentLiteState)
        if state.is_terminal():
            return 100.0 * state.returns()[player]
        last = state.last
        if last is None or last.player != player:
            return self.heuristic(state, player)
        kept = state.hands[player][: last.hand_size - (1 if last.card else 0)]
        hand = kept + [last.card] if last.card else kept
        opponent = 1 - player
        wanted = rule_choice(last.totals[player], last.totals[opponent], last.active[opponent], hand,
                             last.wins[player], last.wins[opponent])  # fmt: skip
        return 1.0 if last.card == wanted else -abs(last.card - wanted) / 100

    def evaluations(self) -> dict[str, Evaluation]:
        return {"heuristic": self.heuristic, "greedy": self.greedy}


@arena.hookimpl
def register_games(register: Callable[[type[arena.Game]], None]) -> None:
    register(GwentLite)


@arena.hookimpl
def register_commands(cli: click.Group) -> None:
    # Imported here: the genetic algorithm (games.gwent_decks) is only needed by `arena evolve-decks`, never by playing.
    from games.gwent_decks_cli import evolve_decks_command

    cli.add_command(evolve_decks_command)
