"""What an `arena serve` instance is told: who may read, how it plays its queue."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from arena.reach import ANYWHERE, Reach


@dataclass(frozen=True)
class Settings:
    #: Reads need a token too (writes always do).
    private: bool = False
    #: Tournaments played at once, each in its own process; 0 plays nothing (tests drain the queue themselves).
    workers: int = 1
    #: Worker processes per tournament for its matches (`arena run-tournament --workers`).
    match_workers: int = 1
    #: This server's name in the queue's claims; a restarted server with the same name takes its tournaments back at once.
    worker_id: str = field(default_factory=socket.gethostname)
    #: Seconds a claim lasts without renewal: a server that died loses its tournaments after this long.
    lease_seconds: float = 30.0
    #: Seconds a playing ladder keeps its queue worker while another ladder waits for one (ladders take turns;
    #: an idle ladder, or one with an ordinary tournament waiting, gives way within a second).
    ladder_turn_seconds: float = 60.0
    #: Seconds between looks at the queue when it is empty, and between progress events.
    poll_seconds: float = 0.5
    #: Loose-file plugin folders, passed on to the processes that play.
    plugins_dirs: tuple[str, ...] = ()
    #: Where a tournament's matches are played: `local` (match_workers processes) or `ray` (`arena run-tournament --executor`).
    executor: str = "local"
    #: With executor `ray`: the cluster's address (default: a local Ray per tournament).
    ray_address: str | None = None
    #: Seconds a play page may be gone (no long poll open) while its person's move is awaited before they forfeit.
    play_idle_seconds: float = 60.0
    #: Seconds an opponent on the play page may think per move: the match's time per move, so that no opponent spec
    #: (mcts:simulations=10000000) holds a table, and the server's CPU, for hours; search agents stop in time. The
    #: person still has the browser agent's own `timeout` (arena.remote.browser.PERSON_SECONDS).
    play_time_per_move: float = 10.0
    #: The hosts agents given by requests may call and the folder their files must lie in (`--bot-hosts`,
    #: `--models-dir`; arena.reach); by default any.
    reach: Reach = ANYWHERE
