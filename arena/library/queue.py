"""The tournament queue's claims, for arena.server (the SQL is in db.queue)."""

from db.queue import cancel, claim, gives_way, held_by, holds, is_endless, release, release_all, renew, status

__all__ = ["cancel", "claim", "gives_way", "held_by", "holds", "is_endless", "release", "release_all", "renew", "status"]
