"""Playing in the browser, through the HTTP API (TestClient over a real SQLite file, the app's lifespan and bot hub running):
signing in and out, starting a game, moving, illegal moves refused, the finished match stored and rated, leaving,
bad input naming its field, and a hidden-information game showing only the person's own view."""

from __future__ import annotations

import html
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from arena.library import tokens
from arena.library.storage import open_database
from arena.plugins import get_registry
from arena.server import Settings, create_app, people
from tests.conftest import TEST_PLUGINS, Arena
from tests.server.serving import DEADLINE

SETTINGS = Settings(workers=0, poll_seconds=0.05, worker_id="test", plugins_dirs=(str(TEST_PLUGINS),))
FINAL = ("over", "cancelled", "failed")
WAIT = 10.0  # seconds one long poll may wait (the loop below bounds the whole game)


class Player:
    """An app with its lifespan running (the hub, the tables), a person's token, and a browser-like client."""

    def __init__(self, db_path: Path, settings: Settings = SETTINGS) -> None:
        self.db_path = db_path
        self.database = open_database(f"sqlite:///{db_path}")
        self.token = tokens.create(self.database, "alice")
        self.other = tokens.create(self.database, "bob")
        self.app = create_app(self.database, get_registry((str(TEST_PLUGINS),)), settings)
        self.client = TestClient(self.app)
        self.form = ""

    def sign_in(self) -> None:
        response = self.client.post("/signin", data={"token": self.token, "next": "/play"}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/play"
        page = self.client.get("/play")
        assert page.status_code == 200 and "alice" in page.text
        self.form = re.search(r'name="form_token" value="([0-9a-f]+)"', page.text).group(1)  # type: ignore[union-attr]

    def start(self, game: str = "tic_tac_toe", against: str = "random", seat: str = "0") -> int:
        response = self.client.post("/play", data={"game": game, "against": against, "seat": seat, "form_token": self.form},
                                    follow_redirects=False)  # fmt: skip
        assert response.status_code == 303, response.text
        return int(response.headers["location"].rsplit("/", 1)[1])

    def state(self, game_id: int, seen: int = -1) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/play/{game_id}", params={"seen": seen, "wait": WAIT if seen >= 0 else 0})
        assert response.status_code == 200, response.text
        return response.json()

    def post(self, path: str, body: dict[str, Any] | None = None, form: str | None = None) -> Any:
        return self.client.post(path, json=body or {}, headers={"X-Arena-Form": self.form if form is None else form})

    def until(self, game_id: int, statuses: tuple[str, ...]) -> dict[str, Any]:
        """Long-poll until the game is in one of `statuses` (at most 200 changes)."""
        state = self.state(game_id)
        for _ in range(200):
            if state["status"] in statuses:
                return state
            state = self.state(game_id, state["version"])
        raise AssertionError(f"game {game_id} never reached {statuses}: {state}")

    def play_out(self, game_id: int) -> dict[str, Any]:
        """Play the first legal move each time until the game is over; returns the final state."""
        for _ in range(200):
            state = self.until(game_id, ("your_move", *FINAL))
            if state["status"] in FINAL:
                return state
            response = self.post(f"/api/v1/play/{game_id}/move", {"action": state["legal"][0]["id"]})
            assert response.status_code == 200, response.text
        raise AssertionError("the game did not end")


@pytest.fixture
def player(tmp_path: Path) -> Iterator[Player]:
    player = Player(tmp_path / "arena.db")
    with player.client:
        yield player


def test_sign_in_and_out(player: Player) -> None:
    client = player.client
    assert client.get("/play", follow_redirects=False).headers["location"] == "/signin?next=/play"
    wrong = client.post("/signin", data={"token": "arena_not-a-token-at-all"})
    assert wrong.status_code == 401 and "token: unknown" in wrong.text and "arena_token" not in client.cookies
    bot = tokens.create(player.database, "robot", "bot")
    assert client.post("/signin", data={"token": bot}).status_code == 401  # a bot token signs no person in

    response = client.post("/signin", data={"token": player.token, "next": "//evil.example/x"}, follow_redirects=False)
    assert response.headers["location"] == "/play"  # never a redirect off the site
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    player.sign_in()
    assert client.post("/signout", data={}).status_code == 403  # no form token: refused
    assert client.post("/signout", data={"form_token": "0" * 64}).status_code == 403
    out = client.post("/signout", data={"form_token": player.form}, follow_redirects=False)
    assert out.status_code == 303 and 'arena_token=""' in out.headers["set-cookie"]
    client.cookies.clear()
    assert client.get("/play", follow_redirects=False).status_code == 303


def test_a_game_played_to_the_end_is_stored_and_rated(player: Player) -> None:
    player.sign_in()
    game_id = player.start("tic_tac_toe", "random", "0")
    first = player.until(game_id, ("your_move",))
    assert first["seat"] == 0 and first["person"] == "alice"
    assert [m["name"] for m in first["legal"]][:2] == ["x(0,0)", "x(0,1)"] and "<svg" in first["board"]["svg"]

    illegal = player.post(f"/api/v1/play/{game_id}/move", {"action": 99})
    assert illegal.status_code == 400 and illegal.json()["field"] == "action" and "not a legal move" in illegal.json()["error"]
    assert player.post(f"/api/v1/play/{game_id}/move", {"action": "x"}).status_code == 422
    assert player.post(f"/api/v1/play/{game_id}/move", {"action": 0}, form="0" * 64).status_code == 403
    page = player.client.get(f"/play/{game_id}")
    assert page.status_code == 200 and 'id="board"' in page.text and "x(0,0)" in page.text

    moved = player.post(f"/api/v1/play/{game_id}/move", {"action": 4}).json()
    assert moved["played"] == "x(1,1)" and moved["legal"] == [] and moved["status"] in ("waiting", "your_move", "finishing")
    final = player.play_out(game_id)
    assert final["status"] == "over" and final["legal"] == [] and final["end"]["reason"] == "normal"
    stored = final["result"]
    assert [s["agent"] for s in stored["seats"]] == ["browser:name=alice", "random"]
    assert stored["seats"][0]["outcome"] == final["end"]["outcome"]
    late = player.post(f"/api/v1/play/{game_id}/move", {"action": 0})
    assert late.status_code == 400 and late.json()["field"] == "action"

    board = player.client.get("/api/v1/leaderboard", params={"game": "tic_tac_toe"}).json()
    assert {row["agent"] for row in board} == {"browser:name=alice", "random"}
    cli = Arena(player.db_path)
    assert "browser:name=alice" in cli("leaderboard", "--game", "tic_tac_toe").stdout
    assert cli.json("matches", "--tournament", str(game_id))[0]["id"] == stored["id"]


def test_the_bots_page_and_api_list_the_bots_connected_not_the_people_playing(player: Player) -> None:
    """A pull bot connected to the hub is listed (`GET /api/v1/bots`, the /bots page); a person at a play page, whose
    seat passes through the same hub, is not a bot and is not listed."""
    assert player.client.get("/api/v1/bots").json() == {"bots": []}
    assert "No bot is connected to this server now." in player.client.get("/bots").text
    player.sign_in()
    game_id = player.start("tic_tac_toe", "random", "0")
    player.until(game_id, ("your_move",))
    bot = tokens.create(player.database, "robot", "bot")
    with player.client.websocket_connect("/api/v1/bots/connect") as socket:
        socket.send_json({"type": "hello", "protocol": 1, "token": bot})
        assert socket.receive_json()["type"] == "welcome"
        assert player.client.get("/api/v1/bots").json() == {"bots": [{"name": "robot", "connections": 1, "playing": 0}]}
        page = player.client.get("/bots")
        assert page.status_code == 200 and "<code>pull:name=robot</code></td><td>1</td><td>0</td>" in page.text
        assert "alice" not in page.text
        assert "ws://testserver/api/v1/bots/connect" in page.text and "--server http://testserver --token" in page.text
    assert 'href="/bots"' in player.client.get("/").text


def test_a_person_queues_a_tournament_from_the_new_tournament_form(player: Player) -> None:
    """/new: the settings of POST /api/v1/tournaments as a form for a signed-in person, checked by the same library
    function; the tournament is queued under the person's name. A refusal shows the form again with the message, the
    field marked and the values kept, and writes nothing."""
    client = player.client
    assert client.get("/new", follow_redirects=False).headers["location"] == "/signin?next=/new"
    player.sign_in()
    page = client.get("/new")
    assert page.status_code == 200 and 'id="new-tournament"' in page.text and player.form in page.text
    fields = {"game": "tic_tac_toe", "agents": "random,greedy,minimax:depth=2", "rounds": "2", "seed": "5", "name": "cup",
              "format": "round-robin", "players": "", "challenger": "", "budget": "", "time_per_move": "",
              "openings": "random:2"}
    queued = client.post("/new", data={**fields, "form_token": player.form}, follow_redirects=False)
    assert queued.status_code == 303, queued.text
    tournament = client.get("/api/v1/tournaments/cup").json()
    assert queued.headers["location"] == f"/tournaments/{tournament['id']}"
    assert (tournament["owner"], tournament["status"], tournament["rounds"], tournament["seed"]) == ("alice", "queued", 2, 5)
    assert tournament["agents"] == ["random", "greedy", "minimax:depth=2"] and tournament["matches"] == 12
    assert client.get(queued.headers["location"]).status_code == 200

    for change, field, words in [
        ({"agents": "random,nosuch"}, "agents", "unknown agent 'nosuch'"),
        ({"game": "nosuch"}, "game", "unknown game 'nosuch'"),
        ({"rounds": "two"}, "rounds", "rounds: a whole number, got 'two'"),
        ({"rounds": "0"}, "rounds", "rounds must be at least 1"),
        ({"time_per_move": "fast"}, "time_per_move", "time_per_move: a number, got 'fast'"),
        ({"openings": "book.txt"}, "openings", "the server opens no file"),
        ({"format": "gauntlet"}, "challenger", "challenger"),
        ({"format": "adaptive"}, "budget", "budget"),
        ({"players": "3"}, "players", "game 'tic_tac_toe' is for 2 players, not 3"),
        ({"players": "x"}, "players", "players: a whole number, got 'x'"),
        ({"name": "cup"}, "name", "cup"),  # taken
    ]:
        sent = {**fields, "name": "", **change, "form_token": player.form}
        refused = client.post("/new", data=sent)
        assert refused.status_code == 400, (change, refused.text)
        shown = re.search(r'<p class="error" id="error" data-field="([a-z_]*)">([^<]*)</p>', refused.text)
        assert shown is not None and shown.group(1) == field and words in html.unescape(shown.group(2)), (change, shown)
        assert f'name="{field}" id="{field}"' in refused.text and 'class="wrong"' in refused.text
        key, value = next(iter(change.items()))
        if key != "format":
            assert f'value="{html.escape(value)}"' in refused.text  # the values given are kept
    tables = {**fields, "game": "incan_gold", "agents": "random,greedy,random:seed=1,greedy:seed=1", "players": "3",
              "format": "tables", "name": "tables", "openings": "", "form_token": player.form}
    assert client.post("/new", data=tables, follow_redirects=False).status_code == 303
    assert client.get("/api/v1/tournaments/tables").json()["players"] == 3
    assert client.post("/new", data=fields).status_code == 403  # no form token
    assert [t["name"] for t in client.get("/api/v1/tournaments").json()] == ["cup", "tables"]  # nothing else was written


def test_a_person_cancels_their_own_tournament_from_its_page(player: Player) -> None:
    """The tournament's page offers its owner, signed in, a Cancel button (a form with the form token); another person
    sees none, and a post of theirs is refused (403 naming the owner), as over the API."""
    player.sign_in()
    fields = {"game": "tic_tac_toe", "agents": "random,greedy", "rounds": "1", "name": "cup", "form_token": player.form}
    path = player.client.post("/new", data=fields, follow_redirects=False).headers["location"]
    assert 'id="cancel"' in player.client.get(path).text

    bob = TestClient(player.app)  # another browser: bob signed in
    assert bob.post("/signin", data={"token": player.other}, follow_redirects=False).status_code == 303
    bob_form = re.search(r'name="form_token" value="([0-9a-f]+)"', bob.get("/play").text).group(1)  # type: ignore[union-attr]
    assert 'id="cancel"' not in bob.get(path).text and 'id="cancel"' not in TestClient(player.app).get(path).text
    refused = bob.post(f"{path}/cancel", data={"form_token": bob_form})
    assert refused.status_code == 403 and "submitted by alice" in html.unescape(refused.text)
    assert player.client.post(f"{path}/cancel", data={}).status_code == 403  # no form token
    assert player.client.get("/api/v1/tournaments/cup").json()["status"] == "queued"

    done = player.client.post(f"{path}/cancel", data={"form_token": player.form}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == path
    assert player.client.get("/api/v1/tournaments/cup").json()["status"] == "cancelled"
    page = player.client.get(path).text
    assert 'id="cancel"' not in page and "status-cancelled" in page


def test_a_person_joins_a_ladder_from_its_page(player: Player) -> None:
    """A live ladder's page offers anyone signed in a Join form (the API's join, by the same library function): the
    page then says the agent joins at the next batch boundary; a refusal shows the page again with the message and
    the agent given (409 in the ladder already, 400 unknown). A tournament that is no ladder, or a visitor not signed
    in, gets no form."""
    client = player.client
    bearer = {"Authorization": f"Bearer {player.token}"}
    body = {"game": "tic_tac_toe", "agents": ["random", "center"], "format": "ladder", "budget": 30, "name": "lad"}
    ladder_id = client.post("/api/v1/tournaments", json=body, headers=bearer).json()["id"]
    other = client.post("/api/v1/tournaments", json={**body, "format": "round-robin", "budget": None, "name": "rr"},
                        headers=bearer).json()["id"]  # fmt: skip
    assert 'id="join-form"' not in client.get(f"/tournaments/{ladder_id}").text  # not signed in
    player.sign_in()
    assert 'id="join-form"' in client.get(f"/tournaments/{ladder_id}").text
    assert 'id="join-form"' not in client.get(f"/tournaments/{other}").text

    joined = client.post(f"/tournaments/{ladder_id}/agents", data={"agent": "greedy", "form_token": player.form},
                         follow_redirects=False)  # fmt: skip
    assert joined.status_code == 303 and joined.headers["location"] == f"/tournaments/{ladder_id}?joined=greedy"
    assert "<code>greedy</code> joins this ladder at its next batch boundary" in client.get(joined.headers["location"]).text
    assert "joins this ladder" not in client.get(f"/tournaments/{ladder_id}", params={"joined": "mallory's-bot"}).text
    for agent, status, words in [("greedy", 409, "is in ladder"), ("nosuch", 400, "unknown agent 'nosuch'")]:
        refused = client.post(f"/tournaments/{ladder_id}/agents", data={"agent": agent, "form_token": player.form})
        shown = re.search(r'<p class="error" id="error" data-field="agent">([^<]*)</p>', refused.text)
        assert refused.status_code == status and shown is not None and words in html.unescape(shown.group(1)), refused.text
        assert f'name="agent" id="agent" value="{agent}"' in refused.text
    assert client.post(f"/tournaments/{ladder_id}/agents", data={"agent": "minimax"}).status_code == 403  # no form token
    assert client.post(f"/tournaments/{other}/agents", data={"agent": "greedy", "form_token": player.form}).status_code == 400
    assert client.get(f"/api/v1/tournaments/{ladder_id}").status_code == 200
    assert client.post("/tournaments/999/agents", data={"agent": "greedy", "form_token": player.form}).status_code == 404


def test_a_game_is_held_by_its_server_from_its_first_write(tmp_path: Path) -> None:
    """A game lives in its server's memory: the row is written held by that server (claimed, under a lease), so that
    a server killed at any moment leaves no game running and held by nobody, which no server would cancel."""
    player = Player(tmp_path / "arena.db")
    with sqlite3.connect(tmp_path / "arena.db") as connection:  # any write of a running game held by nobody fails
        for event in ("INSERT", "UPDATE"):
            connection.execute(f"CREATE TRIGGER held_{event} AFTER {event} ON tournaments WHEN NEW.status = 'running' AND "
                               "NEW.claimed_by IS NULL BEGIN SELECT RAISE(ABORT, 'a running game held by nobody'); END")  # fmt: skip
    with player.client:
        player.sign_in()
        game_id = player.start("tic_tac_toe", "random", "0")
        with sqlite3.connect(tmp_path / "arena.db") as connection:
            held, until = connection.execute("select claimed_by, lease_until from tournaments where id = ?", (game_id,)).fetchone()
        assert held == "play:test" and until is not None
        assert player.play_out(game_id)["status"] == "over"


def test_bad_input_names_the_field(player: Player) -> None:
    client = player.client
    assert client.post("/play", data={"game": "tic_tac_toe", "against": "random"}).status_code == 401  # not signed in
    for body in ({}, {"game": "tic_tac_toe", "against": "random"}):  # the API: no token is a 401, whatever the body
        assert client.post("/api/v1/play", json=body).status_code == 401
    player.sign_in()
    cases = [({"game": "no_such_game"}, "game"), ({"against": "no_such_agent"}, "against"),
             ({"against": "minimax:depth=oops"}, "against"), ({"seat": "5"}, "seat"), ({"seat": "x"}, "seat"),
             ({"game": "tic_tac_toe:size=9"}, "game"), ({"against": ""}, "against"), ({"seat": "²"}, "seat"),
             ({"against": "human"}, "against"), ({"against": "browser:name=bob"}, "against"),
             ({"against": "pull:name=browser:bob"}, "against")]  # fmt: skip  (bob's page's hub name: a seat taking it over)
    for change, field in cases:
        data = {"game": "tic_tac_toe", "against": "random", "seat": "0", "form_token": player.form, **change}
        response = client.post("/play", data=data)
        assert response.status_code == 400, (change, response.text)
        assert f'data-field="{field}"' in response.text, (change, re.search(r'class="error".*', response.text))
    assert client.post("/play", data={"game": "tic_tac_toe", "against": "random", "seat": "0"}).status_code == 403
    # A tournament the server plays alone seats no person: their seats could only forfeit (and be rated).
    alice = {"Authorization": f"Bearer {player.token}"}
    for person in ("human", "browser:name=bob"):
        queued = client.post("/api/v1/tournaments", json={"game": "tic_tac_toe", "agents": [person, "random"]}, headers=alice)
        assert queued.status_code == 400 and queued.json()["field"] == "agents" and "is a person" in queued.json()["error"]
    assert client.get("/api/v1/tournaments").json() == []
    api = client.post("/api/v1/play", json={"game": "tic_tac_toe", "against": "nobody"}, headers={"X-Arena-Form": player.form})
    assert api.status_code == 400 and api.json()["field"] == "against"
    for body, field in (({"against": ":::"}, "against"), ({"seat": 5}, "seat")):
        api = client.post("/api/v1/play", json={"game": "tic_tac_toe", "against": "random", **body}, headers={"X-Arena-Form": player.form})
        assert api.status_code == 400 and api.json()["field"] == field and "--" not in api.json()["error"], api.text
    assert client.post("/api/v1/play", json={"game": "tic_tac_toe"}, headers={"X-Arena-Form": player.form}).status_code == 422
    as_text = client.post("/api/v1/play", json={"game": "tic_tac_toe", "against": "random", "seat": "1"}, headers={"X-Arena-Form": player.form})
    assert as_text.status_code == 422 and as_text.json()["field"] == "seat", as_text.text  # a number is a JSON number
    assert client.get("/api/v1/play/12345").status_code == 404
    assert client.get("/play/12345").status_code == 404

    # One game at a time per person; another person cannot see or move in it; bearer tokens play too.
    game_id = player.start()
    busy = client.post("/play", data={"game": "tic_tac_toe", "against": "random", "seat": "0", "form_token": player.form})
    assert busy.status_code == 409 and f"game {game_id}" in busy.text
    busy = client.post("/api/v1/play", json={"game": "tic_tac_toe", "against": "random", "seat": 0}, headers={"X-Arena-Form": player.form})
    assert busy.status_code == 409 and busy.json()["field"] is None and f"game {game_id}" in busy.json()["error"], busy.text
    bob = {"Authorization": f"Bearer {player.other}"}
    assert client.get(f"/api/v1/play/{game_id}", headers=bob).status_code == 404
    assert client.post(f"/api/v1/play/{game_id}/move", json={"action": 0}, headers=bob).status_code == 404
    player.play_out(game_id)
    started = client.post("/api/v1/play", json={"game": "connect_four", "against": "random", "seat": 1}, headers=bob)
    assert started.status_code == 201 and started.json()["person"] == "bob"


def test_a_person_who_leaves_forfeits(player: Player) -> None:
    player.sign_in()
    game_id = player.start("connect_four", "random", "1")
    player.until(game_id, ("your_move",))
    left = player.post(f"/api/v1/play/{game_id}/leave")
    assert left.status_code == 200
    final = player.until(game_id, FINAL)
    assert final["end"]["outcome"] == "loss" and final["end"]["reason"] == "agent_disconnected"
    assert "alice left the game" in final["end"]["detail"]
    assert final["result"]["reason"] == "agent_disconnected" and final["result"]["seats"][1]["outcome"] == "loss"


def test_a_closed_page_forfeits(tmp_path: Path) -> None:
    """No long poll open for `play_idle_seconds` while a move is awaited: the person left."""
    quick = Player(tmp_path / "arena.db", Settings(workers=0, worker_id="test", play_idle_seconds=0.3))
    with quick.client:
        quick.sign_in()
        game_id = quick.start("tic_tac_toe", "random", "0")
        deadline = time.monotonic() + DEADLINE
        while (final := quick.state(game_id))["status"] not in FINAL:  # plain reads: they do not show the page is open
            assert time.monotonic() < deadline, final
            time.sleep(0.05)
        assert final["end"]["reason"] == "agent_disconnected" and "left the page" in final["end"]["detail"]


def test_hidden_information_shows_only_the_persons_view(player: Player) -> None:
    player.sign_in()
    game_id = player.start("gwent_lite", "random", "0")
    state = player.until(game_id, ("your_move",))
    text = state["board"]["text"]
    mine, theirs = (line for line in text.splitlines() if re.match(r"[ *]P[01]:", line))
    assert "hand [?" not in mine and re.search(r"hand \[\? ", theirs), text
    hand = re.search(r"hand \[([\d ]+)\]", mine)
    assert hand and re.search(rf"your hand {len(hand.group(1).split())}, deck", state["board"]["svg"]), state["board"]["svg"]  # the picture too
    assert "state" not in state  # the act's JSON view is not passed on either: the board is the seat's own view
    player.play_out(game_id)


def test_a_stopping_server_cancels_a_live_game(tmp_path: Path) -> None:
    """The server stops while the person thinks: the match is not scored (Arena's fault, not theirs); its tournament is cancelled."""
    player = Player(tmp_path / "arena.db")
    with player.client:
        player.sign_in()
        game_id = player.start("connect_four", "random", "0")
        player.until(game_id, ("your_move",))
    cli = Arena(player.db_path)
    (row,) = [t for t in cli.json("tournaments") if t["id"] == game_id]
    assert row["status"] == "cancelled" and row["done"] == 0
    assert cli.json("matches", "--tournament", str(game_id)) == []


def test_a_form_of_another_site_cannot_sign_a_browser_in(tmp_path: Path) -> None:
    """Login CSRF: a page elsewhere posting a sign-in form (with its own token) would sign the browser in as someone
    else. A sign-in a browser says comes from another origin (Sec-Fetch-Site; else Origin against Host) is refused and
    sets no cookie; this server's own page (also behind a proxy that rewrites Host), and a client that sends neither
    header (curl), sign in."""
    player = Player(tmp_path / "arena.db")
    cross = [{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
             {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver:8001"},  # (another port of the same host)
             {"Origin": "http://evil.example"}, {"Origin": "http://testserver:8001"}, {"Origin": "null"}]
    same = [{"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"},
            {"Sec-Fetch-Site": "same-origin", "Origin": "https://arena.example"},  # (a proxy in front: Host rewritten)
            {"Origin": "http://testserver"}, {}]
    with player.client:
        for headers in cross:
            refused = player.client.post("/signin", data={"token": player.other, "next": "/play"}, headers=headers,
                                         follow_redirects=False)  # fmt: skip
            assert refused.status_code == 403 and "another site" in refused.text, (headers, refused.status_code, refused.text)
            assert "set-cookie" not in refused.headers and people.COOKIE not in player.client.cookies
        for headers in same:
            signed = player.client.post("/signin", data={"token": player.token, "next": "/play"}, headers=headers,
                                        follow_redirects=False)  # fmt: skip
            assert signed.status_code == 303 and people.COOKIE in signed.headers["set-cookie"], (headers, signed.text)
            player.client.cookies.clear()


def test_a_private_server_lets_people_sign_in(tmp_path: Path) -> None:
    """On a --private server every read needs a token, but the sign-in page cannot: it takes the token."""
    private = Player(tmp_path / "arena.db", Settings(workers=0, worker_id="test", private=True))
    with private.client:
        assert private.client.get("/leaderboard").status_code == 401
        assert private.client.get("/signin").status_code == 200
        private.sign_in()  # the cookie then reads the pages too
        assert private.client.get("/leaderboard").status_code == 200


@pytest.mark.parametrize("name", ["", "a b", "a,b", "a:b", "a=b", 'a"b', "x" * 201])
def test_a_persons_name_that_would_break_a_spec_is_refused(name: str) -> None:
    from arena.errors import ArenaError
    from arena.remote.browser import check_person

    with pytest.raises(ArenaError, match="a person's name"):
        check_person(name)
    assert check_person("ada-lovelace_1") == "ada-lovelace_1"
