"""Transport 2, pull: a real `arena serve` subprocess, bots as real subprocesses connected over its WebSocket.

Every wait is bounded (tests.server.serving.DEADLINE); processes are killed by their own pid.
No test depends on a bot answering fast: timeouts are only ever expected from the bot that stalls.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.library import tokens
from arena.library import tournaments as tournaments_library
from arena.library.storage import open_database
from arena.remote.check import REPORT_KEYS
from tests._bots import FAULT_BOTS, _limit_memory
from tests.conftest import TEST_PLUGINS
from tests.server.serving import DEADLINE, ServeProcess, free_port, http, wait_for

PULL_BOT = FAULT_BOTS / "pull_faults.py"
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "remote" / "pull_bot.py"
NODE_BOT = EXAMPLE.parent / "bot.js"
ARENA = str(Path(sys.executable).parent / "arena")


class Stage:
    """A served database with a writer token and bot tokens; starts bots; submits and waits for tournaments."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.db_path = tmp_path / "arena.db"
        self.database = open_database(f"sqlite:///{self.db_path}")
        self.writer = {"Authorization": f"Bearer {tokens.create(self.database, 'writer')}"}
        self.bot_tokens: dict[str, str] = {}
        self.server: ServeProcess | None = None
        self.bots: list[subprocess.Popen[bytes]] = []

    def serve(self, *extra: str, port: int | None = None) -> ServeProcess:
        self.server = ServeProcess(self.db_path, port or free_port(), self.tmp_path / "serve.log", *extra)
        return self.server

    def token(self, name: str) -> str:
        if name not in self.bot_tokens:
            self.bot_tokens[name] = tokens.create(self.database, name, "bot")
        return self.bot_tokens[name]

    def bot(self, name: str, mode: str = "random", log: Path | None = None, script: Path = PULL_BOT) -> subprocess.Popen[bytes]:
        """Start a bot and wait until the server has welcomed it."""
        assert self.server is not None
        argv = [sys.executable, str(script), self.server.url, self.token(name)]
        if script == PULL_BOT:
            argv += [mode] + ([str(log)] if log else [])
        return self.start(argv)

    def start(self, argv: list[str], limit_memory: bool = True, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start a bot process (killed at the end of the test) and wait for its "connected" line."""
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                   preexec_fn=_limit_memory if limit_memory else None)  # fmt: skip
        self.bots.append(process)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], DEADLINE)
        line = process.stdout.readline().decode() if ready else ""
        assert "connected" in line, f"{argv[:2]} did not connect: {line!r}"
        return process

    def submit(self, **body: Any) -> int:
        response = http.post(self.server.url + "/api/v1/tournaments", json=body, headers=self.writer)  # type: ignore[union-attr]
        assert response.status_code == 201, response.text
        return int(response.json()["id"])

    def get(self, path: str) -> Any:
        response = http.get(self.server.url + path)  # type: ignore[union-attr]
        assert response.status_code == 200, response.text
        return response.json()

    def finished(self, tournament_id: int) -> dict[str, Any]:
        wait_for(lambda: self.get(f"/api/v1/tournaments/{tournament_id}")["status"] in ("done", "failed"), "the tournament")
        tournament = self.get(f"/api/v1/tournaments/{tournament_id}")
        assert tournament["status"] == "done", tournament.get("error")
        return tournament

    def matches(self, tournament_id: int) -> list[dict[str, Any]]:
        return list(self.get(f"/api/v1/matches?tournament={tournament_id}"))

    def close(self) -> None:
        for process in self.bots:
            if process.poll() is None:
                process.kill()
            process.wait(30)
        if self.server is not None and self.server.process.poll() is None:
            self.server.process.kill()
            self.server.process.wait(30)


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    stage = Stage(tmp_path)
    try:
        yield stage
    finally:
        stage.close()


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_pull_bots_play_a_round_robin_and_share_the_load(stage: Stage, tmp_path: Path) -> None:
    """Two connections under one name share the matches; the example bot plays under another name."""
    stage.serve()
    log = tmp_path / "messages.jsonl"
    first, second = stage.bot("pybot", log=log), stage.bot("pybot", log=log)
    stage.bot("example", script=EXAMPLE)
    bots = stage.get("/api/v1/bots")["bots"]
    assert {b["name"]: b["connections"] for b in bots} == {"example": 1, "pybot": 2}
    tid = stage.submit(game="connect_four", agents=["pull:name=pybot", "pull:name=example", "random"], rounds=2, seed=3)
    stage.finished(tid)
    matches = stage.matches(tid)
    assert len(matches) == 6 and {m["reason"] for m in matches} == {"normal"}
    messages = read_log(log)
    acts = [m for m in messages if m["type"] == "act"]
    by_pid = {pid: {m["match_id"] for m in acts if m["pid"] == pid} for pid in (first.pid, second.pid)}
    assert all(by_pid.values()), f"one connection played nothing: {by_pid}"
    assert not by_pid[first.pid] & by_pid[second.pid], "a match moved between live connections"
    assert len(by_pid[first.pid] | by_pid[second.pid]) == 4  # every match of pybot
    act = acts[0]
    assert act["protocol"] == 1 and act["game"]["id"] == "connect_four" and act["num_players"] == 2
    assert set(act) >= {"match_id", "seq", "seat", "state", "legal_actions", "legal_names", "deadline_ms", "last_rtt_ms"}
    assert {m["type"] for m in messages} == {"start", "act", "end"}
    ends = [m for m in messages if m["type"] == "end"]
    assert len(ends) == 4 and all(m["reason"] == "normal" and len(m["returns"]) == 2 for m in ends)
    seats = [s for m in matches for s in m["seats"] if s["agent"] == "pull:name=pybot"]
    assert all(s["network_time"] > 0 for s in seats)


def test_two_tournaments_of_one_seed_at_once_give_their_matches_distinct_ids(stage: Stage, tmp_path: Path) -> None:
    """A bot keys its matches by match_id: two tournaments of one seed played at once (two workers), and the two games
    of each pair, which share a seed, are told apart; every match is played to its end."""
    stage.serve("--workers", "2", "--lease", "60")  # no takeover by the other worker after a stall of the machine
    log = tmp_path / "messages.jsonl"
    stage.bot("pybot", log=log)
    body = {"game": "connect_four", "agents": ["pull:name=pybot", "random"], "rounds": 2, "seed": 7, "openings": "random:2"}
    first, second = stage.submit(**body, name="a"), stage.submit(**body, name="b")
    played = 0
    for tid in (first, second):
        stage.finished(tid)
        matches = stage.matches(tid)
        assert {m["reason"] for m in matches} == {"normal"}
        played += len(matches)
    starts = [m["match_id"] for m in read_log(log) if m["type"] == "start"]
    assert len(starts) == played == len(set(starts)) == 8, starts


def test_a_bot_killed_mid_match_and_restarted_gets_the_pending_act_again(stage: Stage, tmp_path: Path) -> None:
    stage.serve()
    log = tmp_path / "messages.jsonl"
    crashing = stage.bot("phoenix", "crash:3", log)
    tid = stage.submit(game="connect_four", agents=["pull:name=phoenix,timeout=300", "random"], rounds=1, seed=5)
    assert crashing.wait(DEADLINE) == 3  # it died without answering its third act
    pending = [m for m in read_log(log) if m["type"] == "act"][-1]
    stage.bot("phoenix", "random", log)  # comes back within the move's 300 s
    stage.finished(tid)
    again = [m for m in read_log(log) if m["pid"] != crashing.pid and m["match_id"] == pending["match_id"]]
    assert again[0]["type"] == "start" and again[1]["type"] == "act"
    assert (again[1]["seq"], again[1]["state"]) == (pending["seq"], pending["state"])
    assert {m["reason"] for m in stage.matches(tid)} == {"normal"}


@pytest.mark.parametrize(("mode", "reason"), [
    ("garbage", "bad_reply"), ("wrong_type", "bad_reply"), ("huge", "bad_reply"), ("illegal", "illegal_action"), ("stall", "timeout"),
    ("crash:2", "agent_disconnected"), ("nested", "bad_reply"), ("error", "agent_error"), ("wrong_match", "timeout"),
])  # fmt: skip
def test_faults_are_forfeits_with_their_reason_and_the_tournament_goes_on(stage: Stage, mode: str, reason: str) -> None:
    stage.serve()
    stage.bot("faulty", mode)
    stage.bot("good")
    # The faulty seat's own limit is 1 s; the good bot keeps the default 30 s (a stall of the machine is no fault).
    tid = stage.submit(game="tic_tac_toe", agents=["pull:name=faulty,wait=1,timeout=1", "pull:name=good"], rounds=2, seed=2)
    stage.finished(tid)
    matches = stage.matches(tid)
    assert len(matches) == 2
    for match in matches:
        assert match["reason"] == reason, match
        faulty = next(s for s in match["seats"] if s["agent"].startswith("pull:name=faulty"))
        assert faulty["outcome"] == "loss" and match["detail"]
        if mode == "wrong_match":  # a timeout that says why: the answer named another match
            assert "an answer naming match_id 'not-this-match', which awaits no move of this connection, was dropped" in match["detail"]


def test_a_bot_that_never_connects_forfeits_as_disconnected(stage: Stage) -> None:
    stage.serve()
    stage.token("absent")
    tid = stage.submit(game="tic_tac_toe", agents=["pull:name=absent,wait=0.5", "random"], rounds=1, seed=2)
    stage.finished(tid)
    assert {m["reason"] for m in stage.matches(tid)} == {"agent_disconnected"}


def test_a_bot_that_connects_while_the_match_waits_for_it_plays_normally(stage: Stage) -> None:
    """The match waits `wait` seconds at its start for the bot: a bot that comes 2 s late under a 1 s time per move
    loses no move to that wait (it is not the first move's time)."""
    stage.serve()
    stage.token("late")
    tid = stage.submit(game="tic_tac_toe", agents=["pull:name=late,wait=60", "random"], rounds=2, seed=2, time_per_move=1.0)
    wait_for(lambda: stage.get(f"/api/v1/tournaments/{tid}")["status"] == "running", "the tournament to start")
    time.sleep(3.0)  # its first match waits for the bot
    stage.bot("late")
    stage.finished(tid)
    assert [m["reason"] for m in stage.matches(tid)] == ["normal", "normal"], stage.matches(tid)


def test_hello_is_checked(stage: Stage) -> None:
    from websockets.sync.client import connect

    stage.serve()
    user = stage.writer["Authorization"][7:]
    url = "ws" + stage.server.url[4:] + "/api/v1/bots/connect"  # type: ignore[union-attr]
    cases = [
        ("not json", "JSON"),
        (json.dumps({"type": "hello", "token": user}), "not a bot token"),
        (json.dumps({"type": "hello", "token": "arena_nope_nope_nope"}), "unknown"),
        (json.dumps({"type": "hello", "token": stage.token("alice"), "agent": "bob"}), "plays as 'alice'"),
        (json.dumps({"type": "hello", "protocol": 9, "token": stage.token("alice")}), "protocol"),
        # a good hello padded to 4 MiB is not parsed (16 MiB hellos held every request of the server for seconds)
        (json.dumps({"type": "hello", "token": stage.token("alice"), "pad": "x" * (4 << 20)}), "at most 64 KiB"),
    ]
    # A binary frame is read as UTF-8 text, the hello's as every later message's: refused with the same errors.
    cases += [(hello.encode(), error) for hello, error in cases] + [(b"\xff\xfe", "JSON")]
    for hello, error in cases:
        with connect(url, open_timeout=DEADLINE) as socket:
            socket.send(hello)
            answer = json.loads(socket.recv(DEADLINE))
            assert answer["type"] == "error" and error in answer["error"], (hello, answer)
    for frame in (str, str.encode):  # a good hello is welcomed as a text frame and as a binary one
        with connect(url, open_timeout=DEADLINE) as socket:
            socket.send(frame(json.dumps({"type": "hello", "token": stage.token("alice")})))
            assert json.loads(socket.recv(DEADLINE)) == {"type": "welcome", "protocol": 1, "agent": "alice"}
    assert "Traceback" not in (stage.tmp_path / "serve.log").read_text()


def test_a_server_that_stops_mid_match_scores_nothing_against_the_bot(stage: Stage, tmp_path: Path) -> None:
    """The server stops while a bot thinks: the match is not stored, the tournament goes back to the queue, and
    a restarted server plays it to its end."""
    server = stage.serve()
    log = tmp_path / "messages.jsonl"
    staller = stage.bot("slowpoke", "stall", log)
    tid = stage.submit(game="tic_tac_toe", agents=["pull:name=slowpoke", "random"], rounds=1, seed=4)
    wait_for(lambda: any(m["type"] == "act" for m in read_log(log)), "the first act")
    assert server.stop(signal.SIGTERM) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after a clean stop
    staller.kill()
    status, stored, _ = tournaments_library.progress(stage.database, tid)
    assert status != "failed" and stored == 0  # released for a server to resume; nothing scored
    claims = (tmp_path / "serve.log").read_text().count(f"tournament {tid}: claimed by")
    assert claims == 1, f"claimed {claims} times: a stopping worker must not claim the tournament the hub stopped again"
    stage.serve()
    stage.bot("slowpoke", "random")
    stage.finished(tid)
    assert {m["reason"] for m in stage.matches(tid)} == {"normal"}


def test_pull_needs_a_server() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_HUB"}
    result = subprocess.run([ARENA, "--db", "sqlite://", "run-tournament", "--game",
                             "tic_tac_toe", "--agents", "pull:name=x,random"], check=False, capture_output=True, text=True, env=env,
                            timeout=DEADLINE)  # fmt: skip
    assert result.returncode == 2 and "arena serve" in result.stderr and "Traceback" not in result.stderr


def check_agent(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    """`arena check-agent ARGS` as a user runs it (its token, if any, from $ARENA_BOT_TOKEN)."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_BOT_HUB", "ARENA_BOT_TOKEN")}
    if token is not None:
        env["ARENA_BOT_TOKEN"] = token
    return subprocess.run([ARENA, "--db", "sqlite://", "check-agent", *args], check=False, capture_output=True, text=True,
                          env=env, timeout=DEADLINE)  # fmt: skip


def test_check_agent_checks_a_pull_bot_through_the_server_it_is_connected_to(stage: Stage) -> None:
    """`arena check-agent pull:name=NAME --server URL` has the server play the bot through the checks (with the bot's
    own token, or a user's) and prints the report a push bot gets; the HTTP route answers the same report. Nothing is
    stored; a bad request is one line and exit code 2 (a 4xx naming the field over HTTP)."""
    server = stage.serve()
    stage.bot("goodbot")
    stage.bot("badbot", "illegal")
    stage.bot("team/bot")  # a bot token's name may hold "/": its check's path holds it as %2F
    where = ("--server", server.url)
    slashed = check_agent("pull:name=team/bot", "--game", "tic_tac_toe", "--seeds", "1", "--time-per-move", "60",
                          "--server", server.url, token=stage.token("team/bot"))  # fmt: skip
    assert slashed.returncode == 0 and "pull:name=team/bot on tic_tac_toe: 2 matches, passed" in slashed.stdout, slashed.stderr
    good = check_agent("pull:name=goodbot", "--game", "tic_tac_toe", "--seeds", "2", "--time-per-move", "60", *where,
                       token=stage.token("goodbot"))  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert good.stdout.startswith("pull:name=goodbot on tic_tac_toe: 4 matches, passed") and "round trips:" in good.stdout
    bad = check_agent("pull:name=badbot", "--game", "tic_tac_toe", "--seeds", "1", "--time-per-move", "60", "--json", *where,
                      token=stage.writer["Authorization"][7:])  # fmt: skip
    report = json.loads(bad.stdout)
    assert bad.returncode == 1 and not report["ok"] and report["matches"] == 2
    assert [("illegal_action" in line, f"seat {seat}" in line) for seat, line in enumerate(report["problems"])] == [(True, True)] * 2

    route = server.url + "/api/v1/bots/{}/check"
    body = {"game": "connect_four", "seeds": 1, "time_per_move": 60}
    answer = http.post(route.format("goodbot"), json=body, headers=stage.writer)
    assert answer.status_code == 200, answer.text
    assert answer.json().keys() == report.keys() == REPORT_KEYS and answer.json()["ok"] and answer.json()["matches"] == 2
    assert stage.get("/api/v1/tournaments") == []  # a check stores nothing: no tournament, so no match

    bot_token = {"Authorization": f"Bearer {stage.token('goodbot')}"}
    refusals = [
        (route.format("badbot"), body, bot_token, 403, "name", "checks only its own bot"),
        (route.format("goodbot"), body, {}, 401, None, "a token is needed"),
        (route.format("nobody"), body, stage.writer, 409, "name", "no bot named 'nobody' is connected to this server"),
        (route.format("good%20bot"), body, stage.writer, 400, "name", "no spaces"),
        (route.format("goodbot"), {**body, "game": "nosuch"}, stage.writer, 400, "game", "unknown game 'nosuch'"),
        (route.format("goodbot"), {**body, "seeds": 11}, stage.writer, 422, "seeds", "less than or equal to 10"),
        (route.format("goodbot"), {**body, "time_per_move": 61}, stage.writer, 422, "time_per_move", "less than or equal to 60"),
    ]
    for url, sent, headers, status, field, words in refusals:
        answer = http.post(url, json=sent, headers=headers)
        assert (answer.status_code, answer.json()["field"]) == (status, field) and words in answer.json()["error"], answer.text

    for args, token, words in [  # (refusals before any request: tests/test_bad_inputs.py)
        (["pull:name=goodbot", "--game", "tic_tac_toe", *where], "arena_wrong", "refused the check (HTTP 401): bad token"),
        (["pull:name=nobody", "--game", "tic_tac_toe", *where], stage.token("goodbot"), "(HTTP 403): name: a bot token"),
        (["pull:name=goodbot", "--game", "tic_tac_toe", "--server", server.url + "/api/v1"], "x", "(HTTP 404): Not Found"),
    ]:
        result = check_agent(*args, token=token)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and words in lines[0], (args, result.stderr)

    # The browser's skin: the /bots page offers a person signed in a Check form per bot, answered with the report.
    assert 'class="inline check-form"' not in http.get(server.url + "/bots").text  # not signed in
    with httpx.Client(base_url=server.url, timeout=DEADLINE) as browser:
        assert browser.post("/signin", data={"token": stage.writer["Authorization"][7:]}).status_code == 303
        page = browser.get("/bots").text
        assert page.count('class="inline check-form"') == 3 and 'action="/bots/goodbot/check"' in page
        assert 'action="/bots/team%2Fbot/check"' in page
        form = re.search(r'name="form_token" value="([0-9a-f]+)"', page).group(1)  # type: ignore[union-attr]
        passed = browser.post("/bots/goodbot/check", data={"game": "tic_tac_toe", "seeds": "1", "form_token": form})
        assert passed.status_code == 200 and "2 matches: passed" in passed.text and 'id="round-trips"' in passed.text
        slashed_page = browser.post("/bots/team%2Fbot/check", data={"game": "tic_tac_toe", "seeds": "1", "form_token": form})
        assert "<code>pull:name=team/bot</code>" in slashed_page.text and "2 matches: passed" in slashed_page.text
        failed = browser.post("/bots/badbot/check", data={"game": "tic_tac_toe", "seeds": "1", "form_token": form})
        assert "2 matches: FAILED (2 problems)" in failed.text and failed.text.count("illegal_action") == 2
        for data, status, words in [({"game": "tic_tac_toe", "seeds": "11"}, 400, "seeds: a whole number from 1 to 10"),
                                    ({"game": "nosuch", "seeds": "1"}, 400, "unknown game"),
                                    ({"game": "tic_tac_toe", "seeds": "1", "form_token": "0" * 64}, 403, "form token")]:  # fmt: skip
            refused = browser.post("/bots/goodbot/check", data={"form_token": form, **data})
            assert refused.status_code == status and words in refused.text and "text/html" in refused.headers["content-type"]
        assert browser.post("/bots/nobody/check", data={"game": "tic_tac_toe", "form_token": form}).status_code == 409


def test_a_pull_bot_is_checked_once_at_a_time_and_its_timeouts_are_reported(stage: Stage) -> None:
    """A second check of a bot while one runs is a 409 (a check holds a thread of the server and the bot); a bot that
    never answers fails every seat with `timeout`."""
    import threading

    server = stage.serve()
    stage.bot("slowpoke", "stall")
    route = server.url + "/api/v1/bots/slowpoke/check"
    body = {"game": "tic_tac_toe", "seeds": 1, "time_per_move": 2}
    answers: list[httpx.Response] = []
    first = threading.Thread(target=lambda: answers.append(http.post(route, json=body, headers=stage.writer)))
    first.start()
    wait_for(lambda: stage.get("/api/v1/bots")["bots"][0]["playing"] == 1, "the check's first match")
    again = http.post(route, json=body, headers=stage.writer)
    assert again.status_code == 409 and "being checked already" in again.json()["error"], again.text
    first.join(DEADLINE)
    [answer] = answers
    report = answer.json()
    assert answer.status_code == 200 and not report["ok"], answer.text
    assert len(report["problems"]) == 2 and all("timeout" in line for line in report["problems"])


def test_a_person_plays_a_connected_bot_on_the_play_page(stage: Stage) -> None:
    """The play page offers the connected bots as opponents (`pull:name=NAME`), and a person plays one through the
    play API (a bearer token, as the page's script does with its cookie) to the end; the match is stored and rated.
    The New tournament form offers them too, and queues a tournament the bot plays."""
    from arena.library.tokens import create

    server = stage.serve()
    stage.bot("robot")
    alice = {"Authorization": f"Bearer {create(stage.database, 'alice')}"}
    page = http.get(server.url + "/play", headers=alice)
    assert page.status_code == 200 and '<option value="pull:name=robot">' in page.text
    started = http.post(server.url + "/api/v1/play", json={"game": "tic_tac_toe", "against": "pull:name=robot", "seat": 0},
                        headers=alice)  # fmt: skip
    assert started.status_code == 201, started.text
    game = server.url + started.headers["location"]
    deadline = time.monotonic() + DEADLINE
    state = http.get(game, headers=alice).json()
    while state["status"] not in ("over", "cancelled", "failed"):
        assert time.monotonic() < deadline, state
        if state["status"] == "your_move":
            moved = http.post(game + "/move", json={"action": state["legal"][0]["id"]}, headers=alice)
            assert moved.status_code == 200, moved.text
        state = http.get(game, params={"seen": state["version"], "wait": 5}, headers=alice).json()
    assert state["status"] == "over" and state["end"]["reason"] == "normal", state
    assert [s["agent"] for s in state["result"]["seats"]] == ["browser:name=alice", "pull:name=robot"]

    # The New tournament form offers it too, and queues a tournament it plays in (a bearer needs no form token).
    assert '<option value="pull:name=robot">' in http.get(server.url + "/new", headers=alice).text
    queued = http.post(server.url + "/new", data={"game": "tic_tac_toe", "agents": "pull:name=robot,random", "rounds": "2"},
                       headers=alice)  # fmt: skip
    assert queued.status_code == 303, queued.text
    tid = int(queued.headers["location"].rsplit("/", 1)[1])
    assert stage.finished(tid)["owner"] == "alice" and {m["reason"] for m in stage.matches(tid)} == {"normal"}


def test_arena_connect_serves_minimax_to_the_server(stage: Stage) -> None:
    """`arena connect` plays minimax:depth=3 from 'another machine' (a subprocess); it beats random. Its token comes
    from $ARENA_BOT_TOKEN, out of sight of `ps`."""
    stage.serve()
    argv = [ARENA, "connect", "--server", stage.server.url, "minimax:depth=3"]  # type: ignore[union-attr]
    stage.start(argv, env={**os.environ, "ARENA_BOT_TOKEN": stage.token("mini")})
    tid = stage.submit(game="connect_four", agents=["pull:name=mini", "random"], rounds=4, seed=11)
    stage.finished(tid)
    matches = stage.matches(tid)
    assert len(matches) == 4 and {m["reason"] for m in matches} == {"normal"}
    wins = sum(s["outcome"] == "win" for m in matches for s in m["seats"] if s["agent"] == "pull:name=mini")
    assert wins >= 3
    seats = [s for m in matches for s in m["seats"] if s["agent"] == "pull:name=mini"]
    assert all(s["think_time"] > 0 and s["network_time"] > 0 for s in seats)


@pytest.mark.parametrize(("spec", "fragment"), [
    ("random:seed=x", "bad value 'x' for parameter 'seed' of agent 'random'"),
    ("mcts:simulations=0", "parameter 'simulations' of agent 'mcts': must be >= 1"),
    ("mcts:simulations=10000001", "parameter 'simulations' of agent 'mcts': must be <= 1e+07"),
    ("minimax:deep=3", "unknown parameter 'deep' for agent 'minimax'"),
    ("neural", "needs a checkpoint"),
])  # fmt: skip
def test_arena_connect_checks_the_agent_before_it_connects(stage: Stage, spec: str, fragment: str) -> None:
    """A spec that could never play is one line and exit code 2 before any connection: never "connected", never a
    seat the server waits 30 s for."""
    stage.serve()
    result = subprocess.run([ARENA, "connect", "--server", stage.server.url, "--token", stage.token("early"), spec],  # type: ignore[union-attr]
                            check=False, capture_output=True, text=True, timeout=DEADLINE)  # fmt: skip
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and fragment in lines[0], result.stderr
    assert "connected" not in result.stdout and stage.get("/api/v1/bots")["bots"] == []


def test_arena_connect_forfeits_a_seat_its_agent_cannot_play_and_plays_on(stage: Stage) -> None:
    """An agent that raises at its third move loses that match (`agent_error`, with its message) and the bot, still
    connected, plays the next: it is not taken out of every match by one seat's failure."""
    stage.serve()
    argv = [ARENA, "--plugins-dir", str(TEST_PLUGINS), "connect", "--server", stage.server.url,  # type: ignore[union-attr]
            "--token", stage.token("boom"), "raiser:after=2"]  # fmt: skip
    bot = stage.start(argv)
    tid = stage.submit(game="connect_four", agents=["pull:name=boom", "random"], rounds=2, seed=3)
    stage.finished(tid)
    matches = stage.matches(tid)
    assert [m["reason"] for m in matches] == ["agent_error", "agent_error"], matches
    assert all("boom from raiser" in m["detail"] for m in matches)
    assert bot.poll() is None and [b["connections"] for b in stage.get("/api/v1/bots")["bots"]] == [1]


def test_arena_connect_to_an_address_that_is_no_arena_server_is_one_line(stage: Stage) -> None:
    stage.serve()
    result = subprocess.run([ARENA, "connect", "--server", stage.server.url + "/api/v1", "--token", stage.token("lost"),  # type: ignore[union-attr]
                             "random"], check=False, capture_output=True, text=True, timeout=DEADLINE)  # fmt: skip
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "HTTP 403" in lines[0] and "no path" in lines[0], result.stderr


def test_arena_connect_refused_is_one_line(stage: Stage) -> None:
    stage.serve()
    result = subprocess.run([ARENA, "connect", "--server", stage.server.url, "--token", "arena_wrong_token_000",  # type: ignore[union-attr]
                             "random"], check=False, capture_output=True, text=True, timeout=DEADLINE)  # fmt: skip
    assert result.returncode == 2 and "refused" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the JavaScript example bot is not run")
def test_the_node_example_bot_plays_a_round_robin_with_the_python_one_and_built_ins(stage: Stage) -> None:
    stage.serve()
    argv = ["node", str(NODE_BOT), stage.server.url, stage.token("jsbot")]  # type: ignore[union-attr]
    stage.start(argv, limit_memory=False)  # V8 reserves more address space than the bots' limit; the test bounds its time
    stage.bot("pybot", script=EXAMPLE)
    tid = stage.submit(game="tic_tac_toe", agents=["pull:name=jsbot", "pull:name=pybot", "greedy", "random"], rounds=2, seed=1)
    stage.finished(tid)
    matches = stage.matches(tid)
    assert len(matches) == 12 and {m["reason"] for m in matches} == {"normal"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the JavaScript example bot is not run")
def test_the_node_example_bot_keeps_trying_until_the_server_is_up(stage: Stage) -> None:
    """Started before the server (a refused connection: Node 20 fires only `error`), it retries and connects."""
    port = free_port()
    argv = ["node", str(NODE_BOT), f"http://127.0.0.1:{port}", stage.token("early")]
    bot = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    stage.bots.append(bot)
    time.sleep(2.5)  # two refused attempts
    assert bot.poll() is None, bot.stdout.read() if bot.stdout else b""  # type: ignore[union-attr]
    stage.serve(port=port)
    assert bot.stdout is not None
    ready, _, _ = select.select([bot.stdout], [], [], DEADLINE)
    assert ready and "connected" in bot.stdout.readline().decode()


@pytest.mark.parametrize(("game", "spec", "opponent"), [("santorini", "minimax:depth=1", "random"),
                                                        ("gwent_lite", "mcts:simulations=60", "greedy")])  # fmt: skip
def test_arena_connect_plays_santorini_and_a_hidden_information_game_and_is_sent_no_leak(
    stage: Stage, tmp_path: Path, game: str, spec: str, opponent: str
) -> None:  # fmt: skip
    """`arena connect` rebuilds these games' positions (a determinisation for Gwent Lite, searched by MCTS) and
    plays whole server matches. Every `state` it was sent is exactly the real position's `to_json(seat)`, replayed
    from the stored match: public parts and the seat's own hand only (to_json is a function of the seat's view:
    tests/test_remote_protocol.py), and for Gwent Lite never the other hand."""
    from arena.library.matches import load_replay
    from arena.plugins import get_registry

    stage.serve()
    log = tmp_path / "connect.jsonl"
    argv = [ARENA, "connect", "--server", stage.server.url, "--token", stage.token("remote"), spec, "--log", str(log)]  # type: ignore[union-attr]
    stage.start(argv)
    tid = stage.submit(game=game, agents=["pull:name=remote", opponent], rounds=4, seed=5)
    stage.finished(tid)
    matches = stage.matches(tid)
    assert len(matches) == 4 and {m["reason"] for m in matches} == {"normal"}
    registry = get_registry()
    real: dict[tuple[int, int], list[dict[str, Any]]] = {}  # (seat, ply) positions of the bot's seat, by match
    sent_counts = []
    for match in matches:
        seat = next(s["seat"] for s in match["seats"] if s["agent"] == "pull:name=remote")
        replay = load_replay(stage.database, registry, match["id"])
        states = [replay.initial] + [state for _, _, _, state in replay.steps]
        views = [s.to_json(seat) for s in states[:-1] if s.current_player == seat]
        real[(match["id"], seat)] = views
        sent_counts.append(len(views))
    acts = [m for m in read_log(log) if m["type"] == "act"]
    by_match: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for act in acts:
        by_match.setdefault((act["match_id"], act["seat"]), []).append(act)
    assert sorted(len(v) for v in by_match.values()) == sorted(sent_counts)
    for sent in by_match.values():
        states = [act["state"] for act in sorted(sent, key=lambda act: act["seq"])]
        assert states in list(real.values()), "a state sent is not the real position's view of that seat"
        if game == "gwent_lite":
            assert all("hands" not in state and "decks" not in state for state in states)
    if game == "santorini":
        wins = sum(s["outcome"] == "win" for m in matches for s in m["seats"] if s["agent"] == "pull:name=remote")
        assert wins >= 3  # minimax (one ply, climbing when it can) against random


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the JavaScript example bot is not run")
def test_the_node_example_bot_leaves_no_process_behind_when_killed() -> None:
    """On Node 20 the bot runs again as its child (to get WebSocket); killing the bot by its pid ends that child too."""
    bot = subprocess.Popen(["node", str(NODE_BOT), f"http://127.0.0.1:{free_port()}", "arena_no_server_here"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 5.0  # the child starts within a second; Node 22+ starts none
        while not (children := _children(bot.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        bot.kill()
        bot.wait(DEADLINE)
    if not children:  # Node 22+: WebSocket is built in, the bot is one process
        return
    deadline = time.monotonic() + 5.0
    while (alive := [pid for pid in children if Path(f"/proc/{pid}").exists()]) and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = not alive
    if not gone:
        for pid in children:  # end what this test started before failing
            os.kill(pid, signal.SIGKILL)
    assert gone, f"the bot's child processes {children} outlived it"


def test_a_revoked_token_ends_the_connections_it_opened(stage: Stage) -> None:
    """`arena tokens revoke` refuses new requests at once and ends what the token holds open within the server's
    recheck interval (TOKEN_RECHECK_SECONDS, 5 s): a bot's WebSocket is told and closed, an event stream on a private
    server ends, and a play long-poll that waits answers 401 instead of the game. (The three are opened first and
    their tokens revoked together, so the test waits out one recheck interval, not three.)"""
    import threading

    from websockets.sync.client import connect

    from arena.server.deps import TOKEN_RECHECK_SECONDS

    stage.serve("--private", "--workers", "0")  # the tournament stays queued: its event stream stays open
    assert stage.server is not None
    url = stage.server.url
    reader = {"Authorization": f"Bearer {tokens.create(stage.database, 'reader')}"}
    queued = http.post(url + "/api/v1/tournaments", headers=stage.writer,
                       json={"game": "tic_tac_toe", "agents": ["random", "greedy"]}).json()  # fmt: skip
    ended: list[float] = []

    def follow() -> None:
        with http.stream("GET", f"{url}/api/v1/tournaments/{queued['id']}/events", headers=reader) as response:
            assert response.status_code == 200
            for _ in response.iter_lines():
                pass
        ended.append(time.monotonic())

    person = {"Authorization": f"Bearer {tokens.create(stage.database, 'pat')}"}
    game = http.post(url + "/api/v1/play", headers=person, json={"game": "tic_tac_toe", "against": "random", "seat": 0})
    assert game.status_code == 201, game.text
    where = url + game.headers["location"]
    state = http.get(where, headers=person).json()
    while state["status"] != "your_move":  # then nothing changes until the person moves: the poll waits up to its 20 s
        state = http.get(where, headers=person, params={"seen": state["version"], "wait": 5}).json()
    answers: list[int] = []
    answered: list[float] = []

    def long_poll() -> None:
        answers.append(http.get(where, headers=person, params={"seen": state["version"], "wait": 20}).status_code)
        answered.append(time.monotonic())

    with connect("ws" + url[4:] + "/api/v1/bots/connect", open_timeout=DEADLINE) as socket:
        socket.send(json.dumps({"type": "hello", "token": stage.token("alice")}))
        assert json.loads(socket.recv(DEADLINE))["type"] == "welcome"
        stream = threading.Thread(target=follow, daemon=True)
        stream.start()
        poll = threading.Thread(target=long_poll, daemon=True)
        poll.start()
        time.sleep(1.0)
        assert not ended and not answers  # open while the tokens are good
        for name in ("alice", "reader", "pat"):
            tokens.revoke(stage.database, name)
        revoked = time.monotonic()
        told = json.loads(socket.recv(DEADLINE))
        assert told == {"type": "error", "error": "token: revoked while connected"}
        assert time.monotonic() - revoked < TOKEN_RECHECK_SECONDS + 30  # rechecked (never closed without it)
    stream.join(DEADLINE)
    assert ended and ended[0] - revoked < TOKEN_RECHECK_SECONDS + 30
    poll.join(DEADLINE)
    assert answers == [401] and answered[0] - revoked < TOKEN_RECHECK_SECONDS + 10  # (the poll would wait 20 s)
    assert "Traceback" not in (stage.tmp_path / "serve.log").read_text()


def test_a_seat_whose_token_is_revoked_mid_match_forfeits_at_once(stage: Stage) -> None:
    """A bot thinking under a 600 s time per move whose token is revoked is closed within the recheck interval, and its
    seat forfeits then (agent_disconnected, saying why), not after waiting out the move for a return it cannot make."""
    from arena.server.deps import TOKEN_RECHECK_SECONDS

    stage.serve()
    stage.bot("thinker", "stall")
    tid = stage.submit(game="tic_tac_toe", agents=["pull:name=thinker", "random"], rounds=1, seed=1, time_per_move=600.0)
    wait_for(lambda: stage.get("/api/v1/bots")["bots"][0]["playing"] == 1, "the bot's seat")
    tokens.revoke(stage.database, "thinker")
    revoked = time.monotonic()
    stage.finished(tid)
    (match,) = stage.matches(tid)
    assert match["reason"] == "agent_disconnected" and "revoked" in match["detail"], match
    assert time.monotonic() - revoked < TOKEN_RECHECK_SECONDS + 60  # not the move's 600 s


def test_arena_connect_replays_a_seeded_match_the_same_way(stage: Stage) -> None:
    """The match id is new every time a match is played; the `seed` of its `start` is not: an agent served by
    `arena connect` (a sampling MCTS) plays the same moves in two tournaments of one seed."""
    stage.serve()
    stage.start([ARENA, "connect", "--server", stage.server.url, "--token", stage.token("remote"), "mcts:simulations=25"])  # type: ignore[union-attr]
    moves = []
    for name in ("first", "again"):
        tid = stage.submit(game="connect_four", agents=["pull:name=remote", "random"], rounds=2, seed=11, name=name)
        stage.finished(tid)
        moves.append([(m["index"], stage.get(f"/api/v1/matches/{m['id']}")["moves"]) for m in stage.matches(tid)])
    assert moves[0] == moves[1] and len(moves[0]) == 2


def test_the_relay_reads_no_long_line_before_its_secret(caplog: pytest.LogCaptureFixture) -> None:
    """The hub's relay (127.0.0.1, the playing processes' side) reads a hello of at most RELAY_HELLO_LIMIT bytes: a line
    without end was read up to 64 MiB per connection before the secret was checked (8 such connections: +480 MB), and
    a secret of non-ASCII characters raised a TypeError the log showed as a traceback."""
    import asyncio
    import logging

    from arena.remote.hub import RELAY_HELLO_LIMIT, Hub

    async def scenario() -> list[bytes]:
        hub = Hub()
        host_port, _, secret = (await hub.start()).partition(" ")
        host, port = host_port.rsplit(":", 1)
        answers = []
        for first in (b"x" * (8 << 20), json.dumps({"secret": "\u00e9\u00e9"}).encode() + b"\n",
                      b"[" * 100_000 + b"\n", json.dumps({"secret": secret}).encode() + b"\n" + b'{"op": "nothing"}\n'):
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(first)
            try:
                await writer.drain()
                answers.append(await asyncio.wait_for(reader.read(), DEADLINE))  # closed by the hub: b"" (EOF)
            except ConnectionError:
                answers.append(b"")  # closed while the line was still being sent
            writer.close()
        await hub.close()
        return answers

    assert RELAY_HELLO_LIMIT <= 64 * 1024
    with caplog.at_level(logging.WARNING):
        answers = asyncio.run(scenario())
    assert answers == [b"", b"", b"", b""], answers
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    # the right secret is let in, and a request the relay cannot read closes the connection with one warning line
    assert [r.getMessage() for r in caplog.records] == ["relay: a malformed request (KeyError: 'message'): connection closed"]
