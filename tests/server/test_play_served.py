"""The play API on a real `arena serve` process (127.0.0.1, a random free port), driven with httpx and a bearer token:
an opponent spec that would think for hours answers within the server's --play-time-per-move, so a person who
leaves while it thinks is let go within that, and runaway budgets are refused by name."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.library import tokens
from arena.library.storage import open_database
from tests.server.serving import DEADLINE, http

FINAL = ("over", "cancelled", "failed")
THINK = 2.0  # the served opponents' seconds per move


def _until(url: str, headers: dict[str, str], statuses: tuple[str, ...]) -> dict[str, Any]:
    """Long-poll the game until its status is one of `statuses` (bounded by DEADLINE)."""
    deadline = time.monotonic() + DEADLINE
    state = http.get(url, headers=headers).json()
    while state["status"] not in statuses:
        assert time.monotonic() < deadline, f"never {statuses}: {state}"
        state = http.get(url, params={"seen": state["version"], "wait": 5}, headers=headers).json()
    return state


def test_a_runaway_opponent_thinks_within_the_play_time_per_move_and_leave_lets_go(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    database = open_database(f"sqlite:///{db_path}")
    person = {"Authorization": f"Bearer {tokens.create(database, 'alice')}"}
    writer = {"Authorization": f"Bearer {tokens.create(database, 'writer')}"}
    server = serve(db_path, None, "--workers", "0", "--play-time-per-move", str(THINK))

    # Budgets beyond any use: a 400 naming the field, for the play page and for the queue alike.
    for against, fragment in (("mcts:simulations=1000000000000", "'simulations' of agent 'mcts': must be <= 1e+07"),
                              ("mcts:time=1e308", "'time' of agent 'mcts': must be <= 86400"),
                              ("minimax:time=1e9", "'time' of agent 'minimax': must be <= 86400")):  # fmt: skip
        refused = http.post(server.url + "/api/v1/play", json={"game": "tic_tac_toe", "against": against, "seat": 1},
                            headers=person)  # fmt: skip
        assert refused.status_code == 400 and refused.json()["field"] == "against" and fragment in refused.json()["error"], refused.text
        queued = http.post(server.url + "/api/v1/tournaments", json={"game": "tic_tac_toe", "agents": ["random", against]},
                           headers=writer)  # fmt: skip
        assert queued.status_code == 400 and queued.json()["field"] == "agents" and fragment in queued.json()["error"], queued.text

    # 10,000,000 simulations a move (minutes of search on this machine) moves first; the person leaves at once.
    # One game of three that goes so is the evidence (tests/_stalls.py): a stall of the machine near the end of the
    # opponent's 2 s makes it overrun (a timeout), where an opponent that ignores the time per move never stops.
    tries = []
    for _attempt in range(3):
        started = http.post(server.url + "/api/v1/play", headers=person,
                            json={"game": "connect_four", "against": "mcts:simulations=10000000", "seat": 1})  # fmt: skip
        assert started.status_code == 201, started.text
        game = server.url + started.headers["location"]
        leaving = http.post(game + "/leave", headers=person)
        assert leaving.status_code == 200 and leaving.json()["leaving"] == "left the game", leaving.text
        left = time.monotonic()
        # Another game waits until the forfeit of the one they left is stored (one page per person), and says so.
        early = http.post(server.url + "/api/v1/play", json={"game": "tic_tac_toe", "against": "random", "seat": 0},
                          headers=person)  # fmt: skip
        if early.status_code == 201:  # the first game ended meanwhile (a stall): leave this one too
            other = server.url + early.headers["location"]
            http.post(other + "/leave", headers=person)
            _until(other, person, FINAL)
        final = _until(game, person, FINAL)
        took = time.monotonic() - left
        assert early.status_code != 409 or early.json()["field"] is None, early.text  # (it named time_per_move)
        if early.status_code == 409 and "you left game" in early.json()["error"] and took < 10 * THINK and \
                final["status"] == "over" and (final["end"] or {}).get("reason") == "agent_disconnected":
            break
        tries.append((early.status_code, early.text, round(took, 1), final["status"], final["result"]))
    else:
        raise AssertionError(f"no game of three was cut short by the time per move and ended by the leave: {tries}")
    assert "alice left the game" in final["end"]["detail"]
    mcts = next(seat for seat in final["result"]["seats"] if seat["agent"] == "mcts:simulations=10000000")
    assert mcts["outcome"] == "win" and 0 < mcts["think_time"] <= THINK
    stored = http.get(server.url + f"/api/v1/tournaments/{final['id']}").json()
    assert stored["time_per_move"] == THINK

    # The person's own time per move is still the browser agent's 600 s, not the opponents' time per move.
    again = http.post(server.url + "/api/v1/play", json={"game": "tic_tac_toe", "against": "random", "seat": 0}, headers=person)
    assert again.status_code == 201, again.text
    game = server.url + again.headers["location"]
    assert _until(game, person, ("your_move",))["deadline_ms"] == 600_000
    assert http.post(game + "/leave", headers=person).status_code == 200
    assert _until(game, person, FINAL)["end"]["reason"] == "agent_disconnected"
    assert "Traceback" not in server.log.read_text()


def test_plugin_opponents_that_hang_or_crash_forfeit_and_the_server_plays_on(tmp_path: Path, serve) -> None:  # noqa: ANN001
    """The opponents play in processes of their own: one that ignores its time (sleeping or spinning) is stopped
    and forfeits by timeout, one that ends its process forfeits as crashed, and neither holds the server."""
    db_path = tmp_path / "arena.db"
    database = open_database(f"sqlite:///{db_path}")
    person = {"Authorization": f"Bearer {tokens.create(database, 'alice')}"}
    server = serve(db_path, None, "--workers", "0", "--play-time-per-move", "0.5")
    for how, reason in (("hang", "timeout"), ("spin", "timeout"), ("exit", "agent_crashed"), ("segfault", "agent_crashed")):
        started = http.post(server.url + "/api/v1/play", headers=person,
                            json={"game": "tic_tac_toe", "against": f"crasher:how={how}", "seat": 1})  # fmt: skip
        assert started.status_code == 201, started.text
        began = time.monotonic()
        final = _until(server.url + started.headers["location"], person, FINAL)
        assert time.monotonic() - began < 30, how
        assert final["status"] == "over" and final["result"]["reason"] == reason, (how, final)
        seats = {seat["agent"]: seat["outcome"] for seat in final["result"]["seats"]}
        assert seats == {"browser:name=alice": "win", f"crasher:how={how}": "loss"}, (how, final)
    assert server.process.poll() is None
    assert http.get(server.url + "/api/v1/games").status_code == 200
    assert "Traceback" not in server.log.read_text()


def test_play_goes_on_after_a_tmp_cleaner_removes_the_forkserver_folder(tmp_path: Path, serve, monkeypatch) -> None:  # noqa: ANN001
    """A long-running server whose multiprocessing folder (pymp-*, holding the forkserver's socket) is removed by a
    /tmp cleaner: the next game's opponent starts in a new forkserver instead of every game ending `cancelled`."""
    temporary = Path(tempfile.mkdtemp())  # short: the forkserver's socket path lives under it
    monkeypatch.setenv("TMPDIR", str(temporary))  # the server's own /tmp
    db_path = tmp_path / "arena.db"
    person = {"Authorization": f"Bearer {tokens.create(open_database(f'sqlite:///{db_path}'), 'alice')}"}
    server = serve(db_path, None, "--workers", "0")

    def opponent_moves_first() -> dict[str, Any]:
        started = http.post(server.url + "/api/v1/play", json={"game": "tic_tac_toe", "against": "random", "seat": 1},
                            headers=person)  # fmt: skip
        assert started.status_code == 201, started.text
        game = server.url + started.headers["location"]
        state = _until(game, person, ("your_move", *FINAL))
        http.post(game + "/leave", headers=person)
        _until(game, person, FINAL)
        return state

    first = opponent_moves_first()
    assert first["status"] == "your_move", first["error"]
    folders = list(temporary.glob("pymp-*"))
    assert folders, list(temporary.iterdir())
    for folder in folders:
        shutil.rmtree(folder)
    again = opponent_moves_first()
    assert again["status"] == "your_move", again["error"]
