"""Ownership of writes over HTTP: a tournament is cancelled, a named agent removed, only with the user token that submitted
or registered it; one made with the CLI (on the server's machine) only there. Joining a ladder and reads stay open."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.library import tokens
from tests.server.conftest import Server
from tests.server.test_play import FINAL, Player


class People:
    """A server and the user tokens of alice and bob."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.alice = {"Authorization": f"Bearer {tokens.create(server.database, 'alice')}"}
        self.bob = {"Authorization": f"Bearer {tokens.create(server.database, 'bob')}"}

    def post(self, path: str, headers: dict[str, str], body: object = None) -> tuple[int, dict[str, object]]:
        response = self.server.client.post(path, json=body, headers=headers)
        return response.status_code, response.json()


@pytest.fixture
def people(server: Server) -> People:
    return People(server)


def test_only_the_submitter_cancels_a_tournament_over_http(people: People) -> None:
    server = people.server
    status, cup = people.post("/api/v1/tournaments", people.alice, {"game": "tic_tac_toe", "agents": ["random", "greedy"], "name": "cup"})
    assert status == 201 and cup["owner"] == "alice" and cup["status"] == "queued"
    assert server.get("/api/v1/tournaments/cup")["owner"] == "alice" == server.get("/api/v1/tournaments")[0]["owner"]
    assert server.cli.json("tournaments")[0] == {k: v for k, v in server.get("/api/v1/tournaments/cup").items() if k in cup}
    assert "alice" in server.client.get("/tournaments/cup").text  # the page's settings say who submitted it

    refused = people.post("/api/v1/tournaments/cup/cancel", people.bob)
    assert refused == (403, {"error": "tournament: 'cup' was submitted by alice: only alice can cancel it over HTTP "
                                      "(or `arena tournaments cancel cup` on the server's machine)", "field": "tournament"})
    assert server.status(cup["id"]) == "queued"  # nothing changed
    assert people.post(f"/api/v1/tournaments/{cup['id']}/cancel", people.bob)[0] == 403  # by id too
    assert people.post(f"/api/v1/tournaments/{cup['id']}/cancel", server.auth)[0] == 403  # nor any other token
    assert server.status(cup["id"]) == "queued"
    status, cancelled = people.post("/api/v1/tournaments/cup/cancel", people.alice)
    assert status == 200 and cancelled["status"] == "cancelled" and cancelled["owner"] == "alice"

    unnamed = people.post("/api/v1/tournaments", people.alice, {"game": "tic_tac_toe", "agents": ["random", "greedy"]})[1]
    refused = people.post(f"/api/v1/tournaments/{unnamed['id']}/cancel", people.bob)
    assert refused[0] == 403 and f"`arena tournaments cancel {unnamed['id']}` on the server's machine" in refused[1]["error"]
    assert server.cli.json("tournaments", "cancel", str(unnamed["id"]))["status"] == "cancelled"  # the CLI may cancel any


def test_a_ladder_stays_open_to_every_user_token(people: People) -> None:
    body = {"game": "tic_tac_toe", "agents": ["random", "greedy"], "format": "ladder", "name": "open"}
    assert people.post("/api/v1/tournaments", people.alice, body)[0] == 201
    assert people.post("/api/v1/tournaments/open/agents", people.bob, {"agent": "minimax:depth=1"})[0] == 201
    assert people.post("/api/v1/tournaments/open/cancel", people.bob)[0] == 403
    assert people.post("/api/v1/tournaments/open/cancel", people.alice)[0] == 200


def test_only_the_registrant_removes_a_named_agent_over_http(people: People) -> None:
    server = people.server
    status, created = people.post("/api/v1/agents", people.alice, {"name": "careful", "type": "greedy"})
    assert status == 201 and created["owner"] == "alice"
    assert server.get("/api/v1/agents/careful") == server.cli.json("agents", "show", "careful") == created
    assert server.get("/api/v1/agents")["named"] == [created]

    refused = server.client.delete("/api/v1/agents/careful", headers=people.bob)
    assert (refused.status_code, refused.json()) == (403, {
        "error": "agent: 'careful' was registered by alice: only alice can remove it over HTTP "
                 "(or `arena agents remove careful` on the server's machine)", "field": "agent"})  # fmt: skip
    assert server.get("/api/v1/agents/careful") == created  # still there
    assert server.client.delete("/api/v1/agents/nosuch", headers=people.bob).status_code == 404
    assert server.client.delete("/api/v1/agents/careful", headers=people.alice).status_code == 200
    assert server.client.get("/api/v1/agents/careful").status_code == 404


def test_rows_made_with_the_cli_are_refused_over_http(people: People) -> None:
    server = people.server
    server.cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "local", "--queue")
    server.cli("agents", "register", "here", "--type", "random")
    assert server.get("/api/v1/tournaments/local")["owner"] is None and server.get("/api/v1/agents/here")["owner"] is None

    refused = people.post("/api/v1/tournaments/local/cancel", people.alice)
    assert refused == (403, {"error": "tournament: 'local' was made on the server's machine: cancel it there with "
                                      "`arena tournaments cancel local`", "field": "tournament"})
    assert server.get("/api/v1/tournaments/local")["status"] == "queued"
    removed = server.client.delete("/api/v1/agents/here", headers=people.alice)
    assert (removed.status_code, removed.json()) == (403, {
        "error": "agent: 'here' was made on the server's machine: remove it there with `arena agents remove here`",
        "field": "agent"})  # fmt: skip
    assert server.get("/api/v1/agents/here")["owner"] is None

    assert server.cli.json("tournaments", "cancel", "local")["status"] == "cancelled"  # as written: they work there
    server.cli("agents", "remove", "here")
    assert server.client.get("/api/v1/agents/here").status_code == 404


def test_a_game_on_the_play_page_is_its_persons(tmp_path: Path) -> None:
    """A game started on the play page is a one-match tournament of its person's: another token cannot cancel it."""
    player = Player(tmp_path / "arena.db")
    with player.client:
        player.sign_in()
        game_id = player.start()
        player.until(game_id, ("your_move",))
        assert player.client.get(f"/api/v1/tournaments/{game_id}").json()["owner"] == "alice"
        refused = player.client.post(f"/api/v1/tournaments/{game_id}/cancel", headers={"Authorization": f"Bearer {player.other}"})
        assert refused.status_code == 403 and "was submitted by alice: only alice can cancel it" in refused.json()["error"]
        assert player.client.get(f"/api/v1/tournaments/{game_id}").json()["status"] == "running"
        assert player.post(f"/api/v1/play/{game_id}/leave").status_code == 200
        assert player.until(game_id, FINAL)["status"] == "over"
