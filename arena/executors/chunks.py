"""How many matches go to a worker at once: a chunk is sent back whole when it is played, so its size is what a
Ctrl-C, a kill or a worker's death can lose of the matches played, and how far the progress jumps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from db.queries import MatchOutcome

#: Seconds of play a chunk aims at: a chunk costs a message each way, so matches of a millisecond go by the dozen.
CHUNK_SECONDS = 0.5


def most_per_chunk(tasks: int, workers: int, cap: int) -> int:
    """The most matches a chunk may hold: about eight chunks per worker (small tournaments still share the work),
    between 1 and `cap`."""
    return max(1, min(cap, tasks // max(1, workers * 8)))


class ChunkSizer:
    """Matches per chunk sent to a worker: about CHUNK_SECONDS of play at the mean duration of the matches played so
    far (one match until a duration is known), between `least` and `most`."""

    def __init__(self, most: int, least: int = 1) -> None:
        self.most = most
        self.least = min(least, most)
        self.seconds = 0.0
        self.matches = 0

    def add(self, outcomes: Sequence[MatchOutcome]) -> None:
        self.seconds += sum(outcome.duration for outcome in outcomes)
        self.matches += len(outcomes)

    def size(self) -> int:
        if not self.matches:
            return self.least
        return max(self.least, min(self.most, int(CHUNK_SECONDS * self.matches / max(self.seconds, 1e-9))))
