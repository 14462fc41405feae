"""Golden play-throughs of the built-in games: arena.testing's transcript and check_golden, with files in tests/golden.

    from tests._golden import check_golden, transcript

    def test_golden():
        text = transcript(MyGame(size=5), seed=7, agents=("random", "greedy:eval=heuristic"))
        check_golden("my_game_random_greedy", text)

`agents=None` plays a seeded uniformly random policy without any agent plugin. After a deliberate
rules or rendering change (bump the game's version too), regenerate the files with

    ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/ -k golden

and review the diff before committing.
"""

from __future__ import annotations

from pathlib import Path

from arena import testing
from arena.testing import transcript

__all__ = ["GOLDEN_DIR", "check_golden", "transcript"]

GOLDEN_DIR = Path(__file__).parent / "golden"


def check_golden(name: str, text: str, directory: Path = GOLDEN_DIR) -> None:
    """Compare `text` with `directory/name.txt` (arena.testing.check_golden)."""
    testing.check_golden(directory / f"{name}.txt", text)
