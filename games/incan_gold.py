"""Incan Gold (Diamant) for 3 to 8 players, with the stay-or-leave choices hidden until revealed.

Rules as in RULES.md section 6. Five rounds; each round one new artifact is shuffled into the
quest deck, the first card is revealed with everyone inside, then every player still inside
chooses to stay or leave. The choices are simultaneous in the real game; here they are taken in
turn (ascending seat order among the players inside, one action each), and a choice stays hidden
from the other seats until the last one is in: `view(player)` re-samples the others' choices of
the current turn, `render()` and `observation()` never show them. Then the choices are revealed
and resolved: leavers split the gems lying on the path (the remainder stays there), bank their
round's gems and, when exactly one player leaves, take every artifact on the path. If anyone is
still inside the next card is revealed: a treasure is split among the players inside (the
remainder stays on the path), the second hazard of a kind ends the round (everyone inside loses
the round's gems, that hazard card leaves the game), an artifact just lies on the path.

Actions: 0 = "leave", 1 = "stay".

Hidden information: the deck order and the other players' pending choices. `view(player)` copies
the public position and re-samples those (the deck from its sorted composition, each pending
choice by a coin flip) with a fresh RNG that the view keeps for its own chance; it never touches
the real state or its RNG. See `arena.sampling.SampledViews._fresh_rng` for how views are seeded.

Cards are small ints: a treasure is its gem value (1..17), a hazard is 100 + type (fire, mummy,
rocks, snakes, spiders), an artifact is 200 + its index 0..4 (added in that order, one a round).

Choices made where RULES.md marks a point UNVERIFIED or CONFLICT:
- `treasures=official` (default): the 15 treasure cards 1,2,3,4,5,5,7,7,9,11,11,13,14,15,17 of
  the 2006 rulebook count and diamant.janbln.de's list; `treasures=bga`: BGA's and chiamp's 14
  cards (no 17).
- `artifacts=2006` (default): the first three artifacts taken are worth 5 points, later ones 10
  (Sunriver 2006 rulebook, BGA, chiamp); `artifacts=2020`: the artifacts are worth their printed
  numbers 5, 7, 8, 10 and 12 and come in that order.
- `unclaimed=removed` (default, as chiamp): an artifact revealed but not taken by the end of its
  round leaves the game; `unclaimed=returned`: it goes back into the deck like the other path cards.
- `tiebreak=none` (default): equal scores share a rank (the arena ranks from the returns);
  `tiebreak=artifacts`: more artifacts breaks a tie, by adding artifacts/10 to the returns
  (less than a gem, so it never changes the order of unequal scores).
- Leavers are resolved before the next card is revealed (RULES.md's order), so they never share
  that card's remainder.
- Gems on the path when everyone has left are returned to the supply ("abandoned"), and gems on
  the path when a hazard ends the round are lost with the players' round gems.

Returns: each player's score (gems + artifact points), so the arena's ranks follow (ties allowed).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import arena
from arena import TERMINAL, svg
from arena.api import Evaluation
from arena.sampling import SampledViews, data_rng
from arena.seeding import derive_seed

LEAVE, STAY = 0, 1
ROUNDS = 5
HAZARD, ARTIFACT = 100, 200
HAZARD_NAMES = ("fire", "mummy", "rocks", "snakes", "spiders")
HAZARD_COPIES = 3

TREASURES = {
    "official": (1, 2, 3, 4, 5, 5, 7, 7, 9, 11, 11, 13, 14, 15, 17),
    "bga": (1, 2, 3, 4, 5, 5, 7, 7, 9, 11, 11, 13, 14, 15),
}
ARTIFACTS_2020 = (5, 7, 8, 10, 12)
MAX_TREASURE = 17


def is_treasure(card: int) -> bool:
    return card < HAZARD


def is_hazard(card: int) -> bool:
    return HAZARD <= card < ARTIFACT


def is_artifact(card: int) -> bool:
    return card >= ARTIFACT


def card_name(card: int) -> str:
    if is_treasure(card):
        return str(card)
    if is_hazard(card):
        return HAZARD_NAMES[card - HAZARD]
    return f"artifact{card - ARTIFACT + 1}"


@dataclass(frozen=True)
class Config:
    """The parameters of one game, shared (immutable) by all its states."""

    players: int
    treasures: tuple[int, ...]
    edition: str  # "2006" or "2020"
    unclaimed: str  # "removed" or "returned"
    tiebreak: str  # "none" or "artifacts"

    def artifact_value(self, card: int, taken_before: int) -> int:
        """Points of artifact `card` when it is the (taken_before+1)-th artifact to leave the temple."""
        if self.edition == "2020":
            return ARTIFACTS_2020[card - ARTIFACT]
        return 5 if taken_before < 3 else 10


@dataclass(frozen=True)
class TurnRecord:
    """The public record of the last resolved turn: the revealed choices and the position they were
    made in (the deck only as a sorted multiset). The greedy evaluation reads it, so the card that
    chance reveals after a decision does not sway the value of that decision.
    """

    round: int
    choices: tuple[int | None, ...]  # None: was not inside
    path: tuple[int, ...]
    path_gems: int
    round_gems: tuple[int, ...]
    scores: tuple[int, ...]
    deck: tuple[int, ...]  # sorted: the composition only
    artifacts_taken: int


class IncanGoldState(SampledViews, arena.State):
    """A position. `deck` is the quest deck in order (its end is the top), `path` the cards
    revealed this round (taken artifacts leave it), `choices` this turn's hidden choices.
    """

    __slots__ = (
        "config", "current_player", "round", "deck", "path", "path_gems", "inside", "round_gems", "gems",
        "artifact_points", "artifacts_held", "choices", "artifacts_taken", "removed", "last_turn",
        "gems_revealed", "gems_lost", "gems_abandoned", "viewer", "_rng", "_view_key", "_view_stream",
    )  # fmt: skip

    config: Config
    round: int
    deck: list[int]
    path: list[int]
    path_gems: int
    inside: list[bool]
    round_gems: list[int]
    gems: list[int]
    artifact_points: list[int]
    artifacts_held: list[list[int]]
    choices: list[int | None]
    artifacts_taken: int
    removed: list[int]
    last_turn: TurnRecord | None
    gems_revealed: int
    gems_lost: int
    gems_abandoned: int
    viewer: int | None
    _rng: random.Random
    _view_key: int
    _view_stream: random.Random | None

    @classmethod
    def new(cls, config: Config, seed: int) -> IncanGoldState:
        state = cls.__new__(cls)
        n = config.players
        state.config = config
        state.current_player = 0
        state.round = 0
        hazards = [HAZARD + h for h in range(len(HAZARD_NAMES)) for _ in range(HAZARD_COPIES)]
        state.deck = list(config.treasures) + hazards
        state.path = []
        state.path_gems = 0
        state.inside = [False] * n
        state.round_gems = [0] * n
        state.gems = [0] * n
        state.artifact_points = [0] * n
        state.artifacts_held = [[] for _ in range(n)]
        state.choices = [None] * n
        state.artifacts_taken = 0
        state.removed = []
        state.last_turn = None
        state.gems_revealed = state.gems_lost = state.gems_abandoned = 0
        state.viewer = None
        state._rng = random.Random(derive_seed("incan_gold", seed))
        # Seeds the re-sampling in views; a one-way hash of the seed, independent of `_rng`'s stream.
        state._view_key = derive_seed("incan_gold/view", seed)
        state._view_stream = None
        state._start_round()
        return state

    # --- the rules -------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self.config.players

    def _start_round(self) -> None:
        self.round += 1
        self.deck.append(ARTIFACT + self.round - 1)
        self._rng.shuffle(self.deck)
        self.path = []
        self.path_gems = 0
        self.inside = [True] * self.num_players
        self.round_gems = [0] * self.num_players
        self._reveal()

    def _reveal(self) -> None:
        """Turn the top card; then either start a decision turn or end the round."""
        if not self.deck:  # cannot happen with the real deck (a hazard repeats first); kept for safety
            self._end_round()
            return
        card = self.deck.pop()
        if is_treasure(card):
            inside = [p for p in range(self.num_players) if self.inside[p]]
            share, rest = divmod(card, len(inside))
            for p in inside:
                self.round_gems[p] += share
            self.path_gems += rest
            self.gems_revealed += card
        elif is_hazard(card) and card in self.path:
            # The second hazard of a kind: everyone inside loses the round's gems; this card leaves the game.
            for p in range(self.num_players):
                if self.inside[p]:
                    self.gems_lost += self.round_gems[p]
                    self.round_gems[p] = 0
                    self.inside[p] = False
            self.gems_lost += self.path_gems
            self.path_gems = 0
            self.removed.append(card)
            self._end_round()
            return
        self.path.append(card)
        self.choices = [None] * self.num_players
        self.current_player = self.inside.index(True)

    def _resolve(self) -> None:
        """Reveal the turn's choices: leavers split the path, bank, and a lone leaver takes the artifacts."""
        n = self.num_players
        self.last_turn = TurnRecord(
            self.round, tuple(self.choices), tuple(self.path), self.path_gems, tuple(self.round_gems),
            tuple(self.scores()), tuple(sorted(self.deck)), self.artifacts_taken,
        )  # fmt: skip
        leavers = [p for p in range(n) if self.choices[p] == LEAVE]
        if leavers:
            share, self.path_gems = divmod(self.path_gems, len(leavers))
            for p in leavers:
                self.gems[p] += self.round_gems[p] + share
                self.round_gems[p] = 0
                self.inside[p] = False
            if len(leavers) == 1:
                self._take_artifacts(leavers[0])
        self.choices = [None] * n
        if any(self.inside):
            self._reveal()
        else:
            self.gems_abandoned += self.path_gems
            self.path_gems = 0
            self._end_round()

    def _take_artifacts(self, player: int) -> None:
        for card in [c for c in self.path if is_artifact(c)]:
            self.artifact_points[player] += self.config.artifact_value(card, self.artifacts_taken)
            self.artifacts_taken += 1
            self.artifacts_held[player].append(card)
            self.path.remove(card)

    def _end_round(self) -> None:
        """Path cards go back into the deck, except unclaimed artifacts under `unclaimed=removed`."""
        for card in self.path:
            if is_artifact(card) and self.config.unclaimed == "removed":
                self.removed.append(card)
            else:
                self.deck.append(card)
        self.path = []
        self.inside = [False] * self.num_players
        self.choices = [None] * self.num_players
        if self.round >= ROUNDS:
            self.current_player = TERMINAL
        else:
            self._start_round()

    # --- the State interface -----------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        return [] if self.current_player == TERMINAL else [LEAVE, STAY]

    def apply(self, action: int) -> None:
        player = self.current_player
        self.choices[player] = action
        for p in range(player + 1, self.num_players):
            if self.inside[p]:
                self.current_player = p
                return
        self._resolve()

    def scores(self) -> list[int]:
        """Gems banked plus artifact points, per player (round gems at risk are not counted)."""
        return [g + a for g, a in zip(self.gems, self.artifact_points)]

    def returns(self) -> list[float]:
        scores = [float(s) for s in self.scores()]
        if self.config.tiebreak == "artifacts":
            return [s + len(held) / 10 for s, held in zip(scores, self.artifacts_held)]
        return scores

    def rounds_played(self) -> int:
        return self.round

    def _copy(self) -> IncanGoldState:
        other = IncanGoldState.__new__(IncanGoldState)
        other.config = self.config
        other.current_player = self.current_player
        other.round = self.round
        other.deck = self.deck[:]
        other.path = self.path[:]
        other.path_gems = self.path_gems
        other.inside = self.inside[:]
        other.round_gems = self.round_gems[:]
        other.gems = self.gems[:]
        other.artifact_points = self.artifact_points[:]
        other.artifacts_held = [held[:] for held in self.artifacts_held]
        other.choices = self.choices[:]
        other.artifacts_taken = self.artifacts_taken
        other.removed = self.removed[:]
        other.last_turn = self.last_turn  # immutable and public
        other.gems_revealed = self.gems_revealed
        other.gems_lost = self.gems_lost
        other.gems_abandoned = self.gems_abandoned
        other.viewer = self.viewer
        return other

    def view(self, player: int) -> IncanGoldState:
        """A playable state holding only what `player` may know.

        The deck order and the other players' pending choices of this turn are re-sampled (a coin
        flip each: nothing of them is known) with a fresh RNG (`SampledViews._fresh_rng`), which the view keeps
        for its own chance: a view is reproducible, tells nothing about the real RNG, and viewing
        leaves the real state untouched.
        """
        chosen = sum(c is not None for c in self.choices)
        other = self._view_copy(player, self.round, len(self.path), len(self.deck), chosen)
        rng = other._rng
        # Sorted first: shuffling the real order would make the view's order a function of it.
        other.deck.sort()
        rng.shuffle(other.deck)
        for p, choice in enumerate(other.choices):
            if choice is not None and p != player:
                other.choices[p] = rng.choice((LEAVE, STAY))
        return other

    def action_to_string(self, action: int) -> str:
        return "leave" if action == LEAVE else "stay"

    def string_to_action(self, text: str) -> int:
        word = text.strip().lower()
        if word in ("leave", "stay"):
            action = LEAVE if word == "leave" else STAY
            if action not in self.legal_actions():
                raise arena.ArenaError(f"action {text!r} is not legal here")
            return action
        return super().string_to_action(text)

    def render(self) -> str:
        """Round, path, hazards, deck size, and each player's score, round gems and whether inside.

        Never this turn's choices: they are hidden until revealed (the last revealed turn is shown).
        """
        lines = [f"round {min(self.round, ROUNDS)}/{ROUNDS}" + ("  (game over)" if self.is_terminal() else "")]
        if self.viewer is not None:
            lines[0] += f"  (view of P{self.viewer}: deck order and others' pending choices re-sampled)"
        lines.append("path: " + (" ".join(card_name(c) for c in self.path) or "-") + f"   gems on path: {self.path_gems}")
        hazards = sorted({HAZARD_NAMES[c - HAZARD] for c in self.path if is_hazard(c)})
        lines.append("hazards: " + (", ".join(hazards) or "-") + f"   deck: {len(self.deck)} cards")
        if self.last_turn is not None:
            shown = " ".join(
                f"P{p}:{'stay' if c == STAY else 'leave'}" for p, c in enumerate(self.last_turn.choices) if c is not None
            )
            lines.append(f"last revealed choices (round {self.last_turn.round}): {shown}")
        for p in range(self.num_players):
            mark = "*" if p == self.current_player else " "
            where = "inside" if self.inside[p] else "out"
            arts = ",".join(card_name(c) for c in self.artifacts_held[p]) or "-"
            lines.append(
                f"{mark}P{p}: score {self.scores()[p]:3d} (gems {self.gems[p]}, artifacts {arts})"
                f"  round gems {self.round_gems[p]:2d}  {where}"
            )
        return "\n".join(lines)

    def to_json(self, player: int) -> dict:
        """Public: `round` (1-5), `path` (the cards revealed this round, by name), `path_gems` (gems left lying on the
        path), per seat `inside` (still exploring), `round_gems` (carried this round), `scores` and their parts `gems`
        (banked) and `artifact_points`, `artifacts_held` (by name), `deck_size` and `deck` (its sorted composition),
        `removed` (cards out of the game: second hazards, unclaimed artifacts), `chosen` (who has chosen this turn),
        `last_choices` (the last turn's revealed choices) and `last_turn` (its whole public record: round, choices,
        path, gems on it, round gems, scores, sorted deck, artifacts taken before); private: `my_choice`, only
        `player`'s own choice of this turn (null until made; others' only as `chosen`)."""
        last = self.last_turn
        return {
            "round": min(self.round, ROUNDS), "path": [card_name(c) for c in self.path], "path_gems": self.path_gems,
            "inside": list(self.inside), "round_gems": list(self.round_gems), "scores": self.scores(),
            "artifacts_held": [[card_name(c) for c in held] for held in self.artifacts_held],
            "deck_size": len(self.deck), "deck": sorted(card_name(c) for c in self.deck),
            "removed": sorted(card_name(c) for c in self.removed),
            "chosen": [c is not None for c in self.choices],
            "my_choice": None if (mine := self.choices[player]) is None else self.action_to_string(mine),
            "last_choices": None if last is None else [None if c is None else self.action_to_string(c) for c in last.choices],
            "gems": list(self.gems), "artifact_points": list(self.artifact_points),
            "last_turn": None if last is None else _record_json(last),
        }

    def render_svg(self) -> str:
        """Public information only: round, the path (treasures, hazards, artifacts), gems on it, the hazards seen,
        and per player whether inside, this round's gems, score and artifacts. Never this turn's hidden choices
        nor the deck order; scores are shown as the observation does (the arena treats them as public)."""
        tile_w, tile_h, per_row, pad = 44, 54, 8, 16
        path_rows = max(1, -(-len(self.path) // per_row))
        head = f"round {min(self.round, ROUNDS)}/{ROUNDS}" + ("  (game over)" if self.is_terminal() else "")
        parts = [svg.text(pad, pad + 8, head, size=16, anchor="start", font_weight="bold"),
                 svg.text(pad, pad + 30, f"gems on the path: {self.path_gems}   deck: {len(self.deck)} cards", size=13,
                          anchor="start", fill="#444")]  # fmt: skip
        top = pad + 48
        if not self.path:
            parts.append(svg.text(pad, top + tile_h / 2, "(no card on the path)", size=13, anchor="start", fill="#888"))
        for i, card in enumerate(self.path):
            x, y = pad + (i % per_row) * (tile_w + 6), top + (i // per_row) * (tile_h + 6)
            if is_treasure(card):
                fill, label, sub = "#fff3c4", str(card), "gems"
            elif is_hazard(card):
                fill, label, sub = "#ffcdd2", HAZARD_NAMES[card - HAZARD][:6], "hazard"
            else:
                fill, label, sub = "#d1c4e9", f"A{card - ARTIFACT + 1}", "artifact"
            parts.append(svg.rect(x, y, tile_w, tile_h, fill=fill, stroke="#8d6e63", rx=4))
            parts.append(svg.text(x + tile_w / 2, y + tile_h / 2 - 6, label, size=13 if len(label) < 5 else 10, font_weight="bold"))
            parts.append(svg.text(x + tile_w / 2, y + tile_h - 10, sub, size=8, fill="#555"))
        y = top + path_rows * (tile_h + 6) + 14
        for x, label, anchor in ((pad, "player", "start"), (pad + 74, "inside", "start"), (pad + 190, "this round", "end"),
                                 (pad + 240, "score", "end"), (pad + 260, "artifacts", "start")):  # the columns below
            parts.append(svg.text(x, y, label, size=11, anchor=anchor, fill="#666"))
        scores = self.scores()
        for p in range(self.num_players):
            y += 24
            color = svg.PLAYER_COLORS[p % len(svg.PLAYER_COLORS)]
            marker = "▶ " if p == self.current_player else ""
            parts.append(svg.circle(pad + 6, y, 6, fill=color))
            parts.append(svg.text(pad + 18, y, f"{marker}P{p}", size=13, anchor="start"))
            parts.append(svg.text(pad + 74, y, "inside" if self.inside[p] else "out", size=13, anchor="start",
                                  fill="#2e7d32" if self.inside[p] else "#888"))  # fmt: skip
            parts.append(svg.text(pad + 190, y, self.round_gems[p], size=13, anchor="end"))
            parts.append(svg.text(pad + 240, y, scores[p], size=13, anchor="end", font_weight="bold"))
            parts.append(svg.text(pad + 260, y, ", ".join(card_name(c) for c in self.artifacts_held[p]) or "-", size=12, anchor="start"))
        width = pad * 2 + per_row * (tile_w + 6)
        return svg.document(width, y + pad + 10, parts, f"Incan Gold: {head}")

    def observation(self, player: int) -> np.ndarray:
        """Public features plus `player`'s own choice, from `player`'s point of view.

        Per player, `player` first then the others in seat order: round gems, score, inside,
        artifacts held. Then whether `player` has chosen this turn and what, the round, the path
        (gems, artifacts, the hazard kinds seen, players inside), the deck composition (treasure
        cards by value 1..17, hazards by kind, artifacts, size) and the artifacts taken so far.
        Length 4 * players + 36.
        """
        n = self.num_players
        scores = self.scores()
        features: list[float] = []
        for k in range(n):
            p = (player + k) % n
            features += [self.round_gems[p] / 20, scores[p] / 50, float(self.inside[p]), len(self.artifacts_held[p]) / 5]
        own = self.choices[player]
        features += [float(own is not None), float(own == STAY), min(self.round, ROUNDS) / ROUNDS]
        features += [self.path_gems / 20, sum(is_artifact(c) for c in self.path) / 5]
        features += [float(HAZARD + h in self.path) for h in range(len(HAZARD_NAMES))]
        features.append(sum(self.inside) / n)
        treasure_counts = [0.0] * MAX_TREASURE
        hazard_counts = [0.0] * len(HAZARD_NAMES)
        artifacts = 0.0
        for card in self.deck:
            if is_treasure(card):
                treasure_counts[card - 1] += 1
            elif is_hazard(card):
                hazard_counts[card - HAZARD] += 1
            else:
                artifacts += 1
        features += treasure_counts + [c / HAZARD_COPIES for c in hazard_counts]
        features += [artifacts, len(self.deck) / 35, self.artifacts_taken / 5]
        return np.asarray(features, dtype=np.float32)


def card_from_name(name: str) -> int:
    """The card of `card_name`: a gem value, a hazard name or artifactN."""
    if name.isdecimal():
        return int(name)
    if name in HAZARD_NAMES:
        return HAZARD + HAZARD_NAMES.index(name)
    if name.startswith("artifact") and name[8:].isdecimal():
        return ARTIFACT + int(name[8:]) - 1
    raise arena.ArenaError(f"incan_gold: unknown card {name!r}")


def _cards(names: Sequence[str]) -> list[int]:
    return [card_from_name(name) for name in names]


def _choice_json(choice: int | None) -> str | None:
    return None if choice is None else "leave" if choice == LEAVE else "stay"


def _choice(name: str | None) -> int | None:
    return None if name is None else LEAVE if name == "leave" else STAY


def _record_json(record: TurnRecord) -> dict[str, Any]:
    return {"round": record.round, "choices": [_choice_json(c) for c in record.choices],
            "path": [card_name(c) for c in record.path], "path_gems": record.path_gems,
            "round_gems": list(record.round_gems), "scores": list(record.scores),
            "deck": [card_name(c) for c in record.deck], "artifacts_taken": record.artifacts_taken}  # fmt: skip


def _record(data: dict[str, Any] | None) -> TurnRecord | None:
    if data is None:
        return None
    return TurnRecord(data["round"], tuple(_choice(c) for c in data["choices"]), tuple(_cards(data["path"])),
                      data["path_gems"], tuple(data["round_gems"]), tuple(data["scores"]),
                      tuple(sorted(_cards(data["deck"]))), data["artifacts_taken"])  # fmt: skip


def state_from_json(config: Config, data: dict[str, Any], player: int, rng: random.Random) -> IncanGoldState:
    """`player`'s view rebuilt from `to_json(player)`: the deck order and the others' pending choices sampled
    from `rng`, as `IncanGoldState.view` samples them. The gem statistics (revealed, lost, abandoned) start at 0."""
    state = IncanGoldState.__new__(IncanGoldState)
    state.config = config
    state.current_player = player
    state.round = data["round"]
    state.path = _cards(data["path"])
    state.path_gems = data["path_gems"]
    state.inside = list(data["inside"])
    state.round_gems = list(data["round_gems"])
    state.gems = list(data["gems"])
    state.artifact_points = list(data["artifact_points"])
    state.artifacts_held = [_cards(held) for held in data["artifacts_held"]]
    state.artifacts_taken = sum(len(held) for held in state.artifacts_held)
    state.removed = _cards(data["removed"])
    state.last_turn = _record(data["last_turn"])
    state.gems_revealed = state.gems_lost = state.gems_abandoned = 0
    chance = state._determinised(player, rng)._rng
    state.deck = sorted(_cards(data["deck"]))
    chance.shuffle(state.deck)
    state.choices = [None] * config.players
    for p, chosen in enumerate(data["chosen"]):
        if chosen:
            state.choices[p] = _choice(data["my_choice"]) if p == player else chance.choice((LEAVE, STAY))
    return state


# --- evaluations -------------------------------------------------------------------------------


def bust_chance(path: Sequence[int], deck: Sequence[int]) -> float:
    """The chance that the next card is a second hazard of a kind already on the path."""
    if not deck:
        return 0.0
    on_path = {c for c in path if is_hazard(c)}
    return sum(1 for c in deck if c in on_path) / len(deck)


def decision_value(config: Config, record: TurnRecord, player: int, choice: int) -> float:
    """Expected score of `player` one card ahead, after `choice` in the position of `record`.

    Leaving banks the round's gems plus the path (gems and artifacts, as if leaving alone).
    Staying keeps them unless the next card is a second hazard (expected loss: the bust chance
    times what is at stake) and adds the expected share of the next card (expected gain: each
    treasure in the deck split among the players inside, an artifact as a share of its value).
    So the greedy player leaves exactly when the expected loss exceeds the expected gain.
    """
    taken = record.artifacts_taken
    pot = record.path_gems
    for card in record.path:
        if is_artifact(card):
            pot += config.artifact_value(card, taken)
            taken += 1
    at_stake = record.round_gems[player] + pot
    base = record.scores[player] + at_stake
    if choice == LEAVE:
        return float(base)
    deck = record.deck
    if not deck:
        return float(base)
    inside = sum(c is not None for c in record.choices)
    gain = 0.0
    for card in deck:
        if is_treasure(card):
            gain += card // inside
        elif is_artifact(card):
            gain += config.artifact_value(card, taken) / inside
    gain /= len(deck)
    return base + gain - bust_chance(record.path, deck) * at_stake


def current_record(state: IncanGoldState) -> TurnRecord:
    """The public position of the current decision turn, as a record."""
    return TurnRecord(
        state.round, tuple(STAY if inside else None for inside in state.inside), tuple(state.path), state.path_gems,
        tuple(state.round_gems), tuple(state.scores()), tuple(sorted(state.deck)), state.artifacts_taken,
    )  # fmt: skip


class IncanGold(arena.Game):
    info = arena.GameInfo(
        id="incan_gold",
        version="1",
        name="Incan Gold",
        min_players=3,
        max_players=8,
        perfect_information=False,
        stochastic=True,
        params=(
            arena.Param("players", 3, "number of players", min=3, max=8),
            arena.Param("treasures", "official", "treasure cards: official (15, with a 17) or bga (14)",
                        choices=tuple(TREASURES)),
            arena.Param("artifacts", "2006", "artifact scoring: 2006 (first three 5, then 10) or 2020 (5,7,8,10,12)",
                        choices=("2006", "2020")),
            arena.Param("unclaimed", "removed", "an artifact left on the path at the round's end is removed or returned",
                        choices=("removed", "returned")),
            arena.Param("tiebreak", "none", "none (ties share a rank) or artifacts (more artifacts breaks a tie)",
                        choices=("none", "artifacts")),
        ),  # fmt: skip
        description="Press your luck: stay in the temple for gems and artifacts or leave with them; "
        "actions 0 = leave, 1 = stay, chosen in turn but hidden until all have chosen.",
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.config = Config(
            players=self.params["players"],
            treasures=TREASURES[self.params["treasures"]],
            edition=self.params["artifacts"],
            unclaimed=self.params["unclaimed"],
            tiebreak=self.params["tiebreak"],
        )

    @property
    def num_distinct_actions(self) -> int:
        return 2

    def new_initial_state(self, seed: int = 0) -> IncanGoldState:
        return IncanGoldState.new(self.config, seed)

    def state_from_json(self, data: dict[str, Any], player: int, rng: random.Random | None = None) -> IncanGoldState:
        """A determinisation of what `player` sees (`to_json(player)`): the hidden parts sampled from `rng`."""
        return state_from_json(self.config, data, player, data_rng(data, player) if rng is None else rng)

    def max_game_length(self) -> int:
        """Each decision turn follows a card that did not end the round; in round r at most every
        treasure, the r artifacts and one hazard of each kind can be such cards, and each turn takes
        one action per player inside."""
        treasures = len(self.config.treasures)
        turns = sum(treasures + r + len(HAZARD_NAMES) for r in range(1, ROUNDS + 1))
        return turns * self.config.players

    def heuristic(self, state: arena.State, player: int) -> float:
        """Score plus the round's gems weighted by the chance of keeping them past the next card."""
        assert isinstance(state, IncanGoldState)
        score = state.scores()[player]
        if state.is_terminal() or not state.inside[player]:
            return float(score)
        if state.choices[player] == LEAVE:
            return float(score + state.round_gems[player] + state.path_gems)
        return score + state.round_gems[player] * (1.0 - bust_chance(state.path, state.deck))

    def greedy(self, state: arena.State, player: int) -> float:
        """The value of `player`'s latest stay-or-leave decision (see `decision_value`).

        Read on the state right after the decision: either the choice is still pending (other
        players choose after it) or it was the last one and the turn record holds the position it
        was made in. Elsewhere (the player has no decision there) it falls back to `heuristic`.
        """
        assert isinstance(state, IncanGoldState)
        choice = None if state.is_terminal() else state.choices[player]
        if choice is not None:
            return decision_value(self.config, current_record(state), player, choice)
        record = state.last_turn
        if record is not None and (made := record.choices[player]) is not None:
            return decision_value(self.config, record, player, made)
        return self.heuristic(state, player)

    def evaluations(self) -> dict[str, Evaluation]:
        return {"heuristic": self.heuristic, "greedy": self.greedy}


@arena.hookimpl
def register_games(register: Callable[[type[arena.Game]], None]) -> None:
    register(IncanGold)
