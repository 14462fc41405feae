"""Randomness for states with hidden information: the game's chance, and a separate source for views.

A state that mixes in `SampledViews` keeps its chance (shuffles, draws) in `_rng`, and seeds the
re-sampling of hidden parts in views from `_view_key` (a real state) or `_view_stream` (a view).
The game's own chance is never used for, nor recoverable from, what a view shows.
"""

from __future__ import annotations

import json
import random
from typing import Self

from arena.seeding import derive_seed


def copy_rng(rng: random.Random) -> random.Random:
    other = random.Random()
    other.setstate(rng.getstate())
    return other


def data_rng(data: object, player: int) -> random.Random:
    """A default RNG for rebuilding a position from its JSON view: a pure function of the view and the seat."""
    return random.Random(derive_seed("state_from_json", player, json.dumps(data, sort_keys=True)))


class SampledViews:
    """Mixin for imperfect-information states; list `_rng`, `_view_key`, `_view_stream` and `viewer` in
    `__slots__` if you use slots. The state supplies `_copy()`: a copy of everything but the randomness."""

    _rng: random.Random
    _view_key: int
    _view_stream: random.Random | None
    viewer: int | None  # the seat a view was made for; None in a real state

    def _copy(self) -> Self:
        """Everything but the two sources of randomness, which the caller sets."""
        raise NotImplementedError

    def clone(self) -> Self:
        other = self._copy()
        self._copy_randomness_to(other)
        return other

    def _copy_randomness_to(self, other: SampledViews) -> None:
        """Give a clone the same chance and the same view sampling as this state."""
        other._rng = copy_rng(self._rng)
        other._view_key = self._view_key
        other._view_stream = None if self._view_stream is None else copy_rng(self._view_stream)

    def _view_copy(self, player: int, *public: int) -> Self:
        """A copy to turn into `player`'s view: its chance is a fresh RNG (`_fresh_rng(player, *public)`), used
        also to re-sample what `player` may not see, and it re-samples its own views from a stream of its own."""
        rng = self._fresh_rng(player, *public)
        other = self._copy()
        other._rng = rng
        other._view_key = 0  # unused: a view re-samples from its stream
        other._view_stream = random.Random(rng.getrandbits(63))
        other.viewer = player
        return other

    def _determinised(self, player: int, rng: random.Random) -> Self:
        """This freshly rebuilt state (`Game.state_from_json`) made `player`'s view, its chance seeded from `rng`:
        the caller then samples what `player` may not see from `self._rng`, as `view` does."""
        self._rng = random.Random(rng.getrandbits(63))
        self._view_key = 0
        self._view_stream = random.Random(self._rng.getrandbits(63))
        self.viewer = player
        return self

    def _fresh_rng(self, player: int, *public: int) -> random.Random:
        """The RNG of a new view of this state.

        A real state answers a pure function of its view key, the seat and the public position
        (`public`): viewing never changes it, the same position gives the same view, and the
        one-way hash tells nothing about `_rng`. A view (what an agent holds) draws the seed from
        its own sampling stream instead, so each `view()` of a view is a fresh re-sample, as
        determinising searches need; that advances only the stream, never the view's own chance.
        """
        if self._view_stream is None:
            return random.Random(derive_seed(self._view_key, player, *public))
        return random.Random(self._view_stream.getrandbits(63))
