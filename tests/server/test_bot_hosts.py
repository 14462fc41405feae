"""`arena serve --bot-hosts`: agents given by requests may call only the listed hosts (an http agent makes the server
send requests to its URL, and its forfeit reasons say what came back). Every way a request gives the server an agent is
refused with a 400 naming its field, nothing written: a tournament's agents and challenger, a ladder's newcomer, a play
page's opponents, a named agent registered over HTTP, and a named agent of the command line's that such requests name.
A real `arena serve` with the option plays a real push bot on a listed host and refuses the same bot by another name."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.library import tokens
from arena.library.storage import open_database
from arena.reach import Reach
from arena.remote.hosts import BotHosts
from arena.server import Settings
from tests._bots import push_bot
from tests.conftest import TEST_PLUGINS
from tests.server.conftest import Server
from tests.server.serving import http, wait_for
from tests.server.test_play import Player

LISTED = BotHosts.parse("bots.example.org, 10.0.0.0/8,::1")
SETTINGS = Settings(workers=0, poll_seconds=0.05, worker_id="test", plugins_dirs=(str(TEST_PLUGINS),), reach=Reach(LISTED))
INSIDE = "http:url=http://10.1.2.3:9/"  # listed (never called: nothing here plays it)
OUTSIDE = "http:url=http://127.0.0.1:1/"


@pytest.mark.parametrize("url", ["http://bots.example.org/", "http://BOTS.Example.org:8080/x", "https://10.255.0.1",
                                 "http://[::1]:9/", "http://10.0.0.1"])  # fmt: skip
def test_listed_hosts_are_allowed(url: str) -> None:
    assert LISTED.allows(url)


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:1/", "http://localhost/", "http://bots.example.org.evil.net/", "http://evil.net/bots.example.org",
    "http://bots.example.org@127.0.0.1/", "http://2130706433/", "http://167772161/", "http://10.1/",  # 127.0.0.1, 10.0.0.1 (inet_aton)
    "http://[::ffff:10.0.0.1]/", "http://[::2]/", "http://11.0.0.1/", "http://[::1/", "not a url", "",
])  # fmt: skip
def test_other_hosts_and_other_spellings_are_refused(url: str) -> None:
    assert not LISTED.allows(url)


@pytest.mark.parametrize("text", ["", " ", ",", "bots.example.org,", "127.1", "10.0.0.0/33", "a b", "-x", "x_", "*.example.org"])
def test_a_bad_list_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        BotHosts.parse(text)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "arena.db", SETTINGS)
    yield server
    server.close()


def refused(response, field: str) -> None:  # noqa: ANN001
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field, response.text
    assert "host 127.0.0.1, which this server's --bot-hosts does not list" in response.json()["error"], response.text


def test_every_request_that_gives_an_agent_is_checked(server: Server) -> None:
    post = server.client.post
    tournament = {"game": "tic_tac_toe", "agents": ["random", OUTSIDE]}
    refused(post("/api/v1/tournaments", json=tournament, headers=server.auth), "agents")
    gauntlet = {"game": "tic_tac_toe", "agents": ["random", "greedy"], "format": "gauntlet", "challenger": OUTSIDE}
    refused(post("/api/v1/tournaments", json=gauntlet, headers=server.auth), "challenger")
    refused(post("/api/v1/agents", json={"name": "mine", "type": "http", "params": {"url": "http://127.0.0.1:1"}},
                 headers=server.auth), "params")  # fmt: skip
    server.cli("agents", "register", "internal", "--type", "http", "--param", "url=http://127.0.0.1:1")  # the CLI: any host
    refused(post("/api/v1/tournaments", json={"game": "tic_tac_toe", "agents": ["random", "internal"]}, headers=server.auth), "agents")
    ladder = server.submit(game="tic_tac_toe", agents=["random", "greedy"], format="ladder", budget=10)
    refused(post(f"/api/v1/tournaments/{ladder['id']}/agents", json={"agent": OUTSIDE}, headers=server.auth), "agent")
    refused(post(f"/api/v1/tournaments/{ladder['id']}/agents", json={"agent": "internal"}, headers=server.auth), "agent")
    # Nothing was written by the refusals; listed hosts pass everywhere.
    assert [t["id"] for t in server.get("/api/v1/tournaments")] == [ladder["id"]]
    assert [a["name"] for a in server.get("/api/v1/agents")["named"]] == ["internal"]
    assert post("/api/v1/tournaments", json={**tournament, "agents": ["random", INSIDE]}, headers=server.auth).status_code == 201
    assert post("/api/v1/tournaments", json={**gauntlet, "challenger": INSIDE}, headers=server.auth).status_code == 201
    assert post("/api/v1/agents", json={"name": "listed", "type": "http", "params": {"url": "http://bots.example.org"}},
                headers=server.auth).status_code == 201  # fmt: skip
    assert post(f"/api/v1/tournaments/{ladder['id']}/agents", json={"agent": "listed"}, headers=server.auth).status_code == 201


def test_the_play_page_checks_its_opponents(tmp_path: Path) -> None:
    player = Player(tmp_path / "arena.db", SETTINGS)
    with player.client:
        player.sign_in()
        refused(player.post("/api/v1/play", {"game": "tic_tac_toe", "against": OUTSIDE}), "against")
        page = player.client.post("/play", data={"game": "tic_tac_toe", "against": OUTSIDE, "seat": "1", "form_token": player.form})
        assert page.status_code == 400 and 'data-field="against"' in page.text and "--bot-hosts" in page.text
        assert player.client.get("/api/v1/tournaments").json() == []


def test_a_server_without_the_option_calls_any_host(tmp_path: Path) -> None:
    server = Server(tmp_path / "arena.db")
    created = server.client.post("/api/v1/tournaments", json={"game": "tic_tac_toe", "agents": ["random", OUTSIDE]},
                                 headers=server.auth)  # fmt: skip
    server.close()
    assert created.status_code == 201, created.text


def test_a_real_server_plays_a_bot_on_a_listed_host_and_refuses_it_by_another_name(tmp_path: Path, serve) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "writer")
    auth = {"Authorization": f"Bearer {token}"}
    server = serve(db_path, None, "--bot-hosts", "127.0.0.1")
    assert "agents given by requests may call 127.0.0.1/32 and read any file" in server.log.read_text()
    with push_bot() as url:
        port = url.rsplit(":", 1)[1]
        by_name = http.post(server.url + "/api/v1/tournaments", headers=auth,
                            json={"game": "tic_tac_toe", "agents": ["random", f"http:url=http://localhost:{port}"]})  # fmt: skip
        assert by_name.status_code == 400 and by_name.json()["field"] == "agents", by_name.text
        assert "host localhost, which this server's --bot-hosts does not list (it lists 127.0.0.1/32)" in by_name.json()["error"]
        created = http.post(server.url + "/api/v1/tournaments", headers=auth,
                            json={"game": "tic_tac_toe", "agents": ["random", f"http:url={url}"], "rounds": 2})  # fmt: skip
        assert created.status_code == 201, created.text
        played = f"{server.url}/api/v1/tournaments/{created.json()['id']}"
        wait_for(lambda: http.get(played).json()["status"] == "done", "the tournament to finish")
    with sqlite3.connect(db_path) as c:
        reasons = {row[0] for row in c.execute("select reason from matches")}
    assert len(reasons) and not reasons & {"agent_disconnected", "bad_reply", "timeout", "agent_error"}, reasons
