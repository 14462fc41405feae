"""Agent type `http` against real bot processes over real sockets: the example bot, and one bot per fault."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.match import ArenaFault, play_match
from arena.plugins import get_registry
from tests._bots import FAULT_BOTS, fault_bot, push_bot, running

ARENA = str(Path(sys.executable).parent / "arena")

REGISTRY = get_registry()


def agents(url: str, game, remote_seat: int = 0, **params):
    http, random_agent = REGISTRY.agent_class("http"), REGISTRY.agent_class("random")
    seats = [random_agent(game, seat, seat) for seat in range(game.num_players)]
    seats[remote_seat] = http(game, remote_seat, 0, url=url, **params)
    return seats


def test_example_bot_plays_a_tournament_against_built_ins(arena_cli):
    with push_bot() as url:
        arena_cli("run-tournament", "--game", "connect_four", "--agents", f"http:url={url},random,greedy", "--rounds", "2",
                  "--time-per-move", "10", "--quiet")  # fmt: skip
    matches = arena_cli.json("matches")
    assert len(matches) == 6
    assert {m["reason"] for m in matches} == {"normal"}
    remote = [s for m in matches for s in m["seats"] if s["agent"].startswith("http:")]
    assert len(remote) == 4 and all(s["network_time"] > 0 for s in remote)
    board = arena_cli.json("leaderboard")
    assert {row["agent"] for row in board} == {f"http:url={url}", "random", "greedy"}


def test_hidden_information_game_plays_remotely():
    game = REGISTRY.game_class("gwent_lite")()
    with push_bot() as url:
        for seed in range(3):
            result = play_match(game, agents(url, game, seed % 2), seed)
            assert result.reason == "normal"
            assert result.network_times[seed % 2] > 0


@pytest.mark.parametrize(
    "bot, reason, detail",
    [
        ("garbage", "bad_reply", ""),
        ("not_json", "bad_reply", "not JSON"),
        ("wrong_type", "bad_reply", "must be an integer"),
        ("illegal", "illegal_action", "9999"),
        ("stall", "timeout", "/act"),
        ("slow", "timeout", ""),
        ("disconnect", "agent_disconnected", "disconnect"),
        ("cut_short", "agent_disconnected", "in the middle of its answer (5 of 100 bytes)"),
        ("http_error", "agent_disconnected", "HTTP 500"),
        ("redirect", "bad_reply", "HTTP 307, a redirect"),
        ("huge", "bad_reply", "more than 1,048,576 bytes"),
    ],
)
def test_each_fault_forfeits_with_its_reason(bot, reason, detail):
    game = REGISTRY.game_class("tic_tac_toe")()
    limit = 0.2 if reason == "timeout" else 20.0  # generous where time is not the point: the machine may be busy
    with fault_bot(bot) as url:
        result = play_match(game, agents(url, game, 1), seed=4, time_per_move=limit, network_allowance=0.05)
    assert (result.reason, result.outcomes) == (reason, ["win", "loss"])
    assert detail in result.detail


def test_a_remote_seat_keeps_its_own_deadline_beside_a_watched_plugin_agent(tmp_path):
    """A plugin agent in the match puts the in-process watchdog on its seats (its default deadline shortened here to
    1 s), but not on Arena's own remote agents: they wait their own deadline (2 s here; for a pull bot, the relay's
    grace beyond it, where a stalled server is Arena's fault and no bot's), not the watchdog's."""
    from tests.conftest import TEST_PLUGINS

    db = tmp_path / "arena.db"
    with fault_bot("stall") as url:
        run = subprocess.run([ARENA, "--db", str(db), "--plugins-dir", str(TEST_PLUGINS), "run-tournament", "--game",
                              "tic_tac_toe", "--agents", f"http:url={url},timeout=2,sleeper:seconds=0", "--quiet"],
                             env={**os.environ, "ARENA_MOVE_DEADLINE": "1"}, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(db) as c:
        (reason, detail), = c.execute("select reason, detail from matches").fetchall()
    assert reason == "timeout" and "watchdog" not in detail and "2" in detail, detail


@pytest.mark.parametrize("part", ["body", "head"])
def test_an_answer_sent_a_byte_at_a_time_is_cut_off_at_its_deadline(part):
    """Each byte comes within any per-read timeout, the whole in 10 s: the seat forfeits `timeout` at its deadline
    (0.3 s per move), not when the bot has finished (it held a run, and a server's queue worker, for as long as it liked)."""
    game = REGISTRY.game_class("tic_tac_toe")()
    with running([sys.executable, str(FAULT_BOTS / "trickle.py"), "0", part]) as url:
        start = time.monotonic()
        result = play_match(game, agents(url, game, 1), seed=4, time_per_move=0.25, network_allowance=0.05)
        took = time.monotonic() - start
    assert (result.reason, result.outcomes) == ("timeout", ["win", "loss"]), result.detail
    assert took < 9.0, f"the match took {took:.1f} s"  # the bot's whole answer takes 10 s


def test_an_http_1_0_bot_whose_answers_close_the_connection_plays_normally():
    """BaseHTTPRequestHandler's default: every answer closes the connection, its body after its headers. The body must
    still be read (a deadline wrapper once closed the socket under http.client's read: agent_disconnected)."""
    game = REGISTRY.game_class("tic_tac_toe")()
    with fault_bot("http10") as url:
        for seed in range(3):
            result = play_match(game, agents(url, game, seed % 2), seed, time_per_move=5.0)
            assert result.reason == "normal", result.detail


def test_a_fault_loses_one_match_and_the_tournament_goes_on(arena_cli):
    with fault_bot("illegal") as bad, push_bot() as good:
        arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"http:url={bad},http:url={good},random",
                  "--rounds", "1", "--quiet")  # fmt: skip
    reasons = sorted(m["reason"] for m in arena_cli.json("matches"))
    assert reasons == ["illegal_action", "illegal_action", "normal"]
    board = {row["agent"]: row for row in arena_cli.json("leaderboard")}
    assert board[f"http:url={bad}"]["forfeits"] == 2
    assert "illegal_action" in arena_cli.json("stats")["reasons"]


def test_refused_connection_is_a_disconnection():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    game = REGISTRY.game_class("connect_four")()
    result = play_match(game, agents(f"http://127.0.0.1:{port}", game), seed=1)
    assert result.reason == "agent_disconnected" and result.outcomes == ["loss", "win"]


def test_answer_in_time_on_a_slow_link_is_not_punished():
    """The slow bot answers in 0.5 s: over a 0.45 s time per move, within the allowance (a generous one: a loaded
    machine may stall for seconds, and only the contrast with no allowance is the point)."""
    game = REGISTRY.game_class("tic_tac_toe")()
    with fault_bot("slow") as url:
        result = play_match(game, agents(url, game, 0), seed=2, time_per_move=0.45, network_allowance=60.0)
    assert result.reason == "normal"


def test_a_slow_start_is_not_charged_to_the_first_move():
    """`start` is answered in 2 s and each move at once: under a 1 s time per move no move is late (the README: the
    answer to `start` is ignored, `deadline_ms` is the move's time)."""
    game = REGISTRY.game_class("tic_tac_toe")()
    for seat in (0, 1):
        with fault_bot("slow_start") as url:
            result = play_match(game, agents(url, game, seat), seed=2, time_per_move=1.0)
        assert (result.reason, result.detail) == ("normal", None), seat
        assert result.think_times[seat] + result.network_times[seat] < 2.0, (result.think_times, result.network_times)  # not the start


def test_network_allowance_is_a_tournament_setting(arena_cli):
    with fault_bot("slow") as url:
        arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"http:url={url},random", "--rounds", "1",
                  "--time-per-move", "0.45", "--network-allowance", "60000", "--quiet")  # fmt: skip
        assert {m["reason"] for m in arena_cli.json("matches")} == {"normal"}
        arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"http:url={url},random", "--rounds", "1",
                  "--time-per-move", "0.45", "--network-allowance", "0", "--quiet")  # fmt: skip
        assert {m["reason"] for m in arena_cli.json("matches")} == {"timeout"}


def test_arena_failure_is_not_scored():
    """A game whose JSON view breaks mid-match is Arena's fault: the match raises, nothing is scored."""
    game = REGISTRY.game_class("tic_tac_toe")()

    def broken(self, player):
        if self.empty < 8:
            raise RuntimeError("broken view")
        return {}

    state_cls = type(game.new_initial_state(0))
    with push_bot() as url, pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_cls, "to_json", broken)
        with pytest.raises(ArenaFault, match="broken view"):
            play_match(game, agents(url, game, 1), seed=0)


def test_bad_url_and_games_without_json_are_refused_before_play(arena_cli):
    for url, problem in (("ftp://x", "not an http(s) URL"), ("http://127.0.0.1:99999", "Port out of range"),
                         ("http://127.0.0.1:abc", "Port could not be cast"), ("http://:80", "with a host")):  # fmt: skip
        result = arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"http:url={url},random", ok=False)
        assert result.exit_code == 2 and "url=http" in result.stderr and problem in result.stderr, result.stderr
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])
    # A named agent is checked as far as it can be without a game: a URL or a bot name that could never play
    for params, fragment in ((["url=bad"], "url=http"), ([], "url=http"), (["name=a b"], "needs name=NAME"),
                             (["name=browser:bob"], "the name of a bot token")):  # (the hub's name of bob's play page)
        kind = "http" if fragment == "url=http" else "pull"
        result = arena_cli("agents", "register", "bot", "--type", kind, *[f"--param={p}" for p in params], ok=False)
        assert result.exit_code == 2 and fragment in result.stderr, result.stderr
    assert arena_cli.rows("select count(*) from agents") in ([], [(0,)])
    with pytest.raises(ArenaError, match="no JSON view"):
        from arena.remote.push import check_remote_game

        class Plain:
            info = type("I", (), {"id": "plain"})

            def new_initial_state(self, seed):
                return type("S", (), {"to_json": lambda self, p: (_ for _ in ()).throw(NotImplementedError())})()

        check_remote_game(Plain())  # type: ignore[arg-type]


def test_one_kept_alive_connection_made_again_after_the_bot_hung_up():
    """Every message of a bot goes over the same connection; one the bot closed is replaced, never reused."""
    from arena.remote.connection import BotConnection, Disconnected

    with fault_bot("disconnect") as url:
        connection = BotConnection(url + "/")
        assert connection.post("/start", b"{}", 20.0) == (200, b"{}")
        first = connection.conn.sock  # type: ignore[union-attr]
        assert connection.post("/end", b"{}", 20.0) == (200, b"{}") and connection.conn.sock is first  # type: ignore[union-attr]
        with pytest.raises(Disconnected, match="disconnected"):
            connection.post("/act", b'{"legal_actions": [0]}', 20.0)
        assert connection.conn is None
        assert connection.post("/start", b"{}", 20.0) == (200, b"{}")
        connection.close()


def test_db_verify_counts_remote_forfeits_as_forfeits(arena_cli):
    """`bad_reply` and `agent_disconnected` are forfeits like `illegal_action`: `arena db verify` finds nothing wrong
    with such matches (it reported 'unknown reason' and exited 1)."""
    with fault_bot("garbage") as garbled, fault_bot("disconnect") as gone:
        arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", f"http:url={garbled},http:url={gone},random",
                  "--rounds", "1", "--quiet")  # fmt: skip
    assert {"bad_reply", "agent_disconnected"} <= {m["reason"] for m in arena_cli.json("matches")}
    checked = arena_cli("db", "verify")
    assert checked.exit_code == 0, checked.stdout
