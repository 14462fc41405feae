"""Running a tournament twice, once stopped part-way then resumed, once straight: for the resume tests."""

from pathlib import Path

from arena import tournament
from arena.plugins import get_registry
from db.session import open_database
from tests.conftest import TEST_PLUGINS


class Stop(Exception):
    """Raised from the progress callback: play stops as a killed run does (the flushed matches stay)."""


def cut_and_whole(db_path: Path, stop_after: int, check_cut=None, **request: object) -> None:
    """Tournaments "cut" (stopped after `stop_after` matches, `check_cut()` then called, then resumed) and "whole"."""
    registry = get_registry([str(TEST_PLUGINS)])
    database = open_database(f"sqlite:///{db_path}")

    def stop(done: int, total: int) -> None:
        if done >= stop_after:
            raise Stop

    for name in ("cut", "whole"):
        tournament_id = tournament.create(registry, database, tournament.TournamentRequest(name=name, **request))  # type: ignore[arg-type]
        if name == "cut":
            try:
                tournament.play(database, registry, tournament_id, progress=stop)
            except Stop:
                pass
            else:
                raise AssertionError("the cut run was not stopped part-way")
            if check_cut is not None:
                check_cut()
        tournament.play(database, registry, tournament_id)
