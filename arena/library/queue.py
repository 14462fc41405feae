"""The tournament queue's claims, for arena.server (the SQL is in db.queue)."""

from db.queue import (
    cancel,
    cancel_lost_games,
    claim,
    gives_way,
    held_by,
    hold_games,
    holds,
    is_endless,
    release,
    release_all,
    renew,
    status,
)

__all__ = ["cancel", "cancel_lost_games", "claim", "gives_way", "held_by", "hold_games", "holds", "is_endless", "release",
           "release_all", "renew", "status"]  # fmt: skip
