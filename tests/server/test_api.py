"""The JSON API with FastAPI's test client: the same shapes and numbers as the CLI's --json, on the same database."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from arena.library import queue
from arena.server import Settings
from tests.server.conftest import SETTINGS, Server


def test_games_with_shapes_and_agent_types(server: Server) -> None:
    games = {g["id"]: g for g in server.get("/api/v1/games")}
    assert games["connect_four"]["num_actions"] == 7 and games["connect_four"]["players"] == [2, 2]
    assert games["connect_four"]["observation_shape"]  # the game offers a tensor
    assert {p["name"] for p in games["connect_four"]["params"]} == {"rows", "columns", "x_in_row"}
    assert server.get("/api/v1/games/connect_four:rows=5,columns=6")["num_actions"] == 6
    cli_games = server.cli.json("games")
    assert [{k: g[k] for k in cli_games[0]} for g in server.get("/api/v1/games")] == cli_games
    types = {t["type"] for t in server.get("/api/v1/agent-types")}
    assert {"random", "greedy", "minimax", "mcts", "center"} <= types


def test_results_equal_the_cli_on_the_same_database(played: Server) -> None:
    cli = played.cli
    for system in ("bt", "elo", "trueskill"):
        assert played.get("/api/v1/leaderboard", tournament="played", system=system) == cli.json("leaderboard", "--system", system)
    assert played.get("/api/v1/leaderboard", game="connect_four") == cli.json("leaderboard", "--game", "connect_four")
    for kind in ("net-wins", "win-rate", "draw-rate", "games", "avg-turns"):
        assert played.get("/api/v1/matrix", kind=kind) == cli.json("matrix", "--kind", kind)
    assert played.get("/api/v1/stats") == cli.json("stats")
    assert played.get("/api/v1/seats", tournament="1") == cli.json("seats")
    assert played.get("/api/v1/elo-history") == cli.json("elo-history")
    assert played.get("/api/v1/matches", limit=1000) == cli.json("matches")
    assert played.get("/api/v1/tournaments")[0] | {} == played.get("/api/v1/tournaments/played")
    listed = cli.json("tournaments")[0]
    assert {k: v for k, v in played.get("/api/v1/tournaments/1").items() if k in listed} == listed
    cli_replay, api_replay = cli.json("replay", "3"), played.get("/api/v1/matches/3/replay")
    assert cli_replay["moves"] == [{k: m[k] for k in cli_replay["moves"][0]} for m in api_replay["moves"]]
    assert {k: v for k, v in api_replay.items() if k in cli_replay and k != "moves"} == {k: v for k, v in cli_replay.items() if k != "moves"}


def test_matches_filter_and_page(played: Server) -> None:
    everything = played.get("/api/v1/matches", limit=1000)
    assert len(everything) == 12
    response = played.client.get("/api/v1/matches", params={"limit": 5, "offset": 5, "agent": "greedy"})
    greedy = [m for m in everything if "greedy" in [s["agent"] for s in m["seats"]]]
    assert response.json() == greedy[5:10] and response.headers["x-total-count"] == str(len(greedy))
    one = played.get("/api/v1/matches/4")
    assert one["id"] == 4 and len(one["moves"]) == one["turns"] == len(one["legal_counts"])
    listed = next(m for m in everything if m["id"] == 4)  # the match's seats hold every field the listing's do
    assert [{k: seat[k] for k in listed["seats"][0]} for seat in one["seats"]] == listed["seats"]


def test_replay_renders_every_position(played: Server) -> None:
    replay = played.get("/api/v1/matches/2/replay")
    assert len(replay["positions"]) == len(replay["moves"]) + 1
    assert all(p["text"] for p in replay["positions"]) and replay["positions"][-1]["to_move"] is None
    assert all(m["legal_moves"] >= 1 and m["agent"] and m["think_time"] is not None for m in replay["moves"])


def test_a_hidden_information_replay_shows_spectators_only_public_information(server: Server) -> None:
    """Gwent Lite's render() shows both hands: the replay's positions carry only its SVG (hands face down), on the API
    and on the page; a perfect-information game keeps its text (above)."""
    server.cli("run-tournament", "--game", "gwent_lite", "--agents", "random,greedy", "--rounds", "1", "--seed", "3", "--quiet")
    replay = server.get("/api/v1/matches/1/replay")
    assert all(p["text"] is None and "face down" in p["svg"] for p in replay["positions"][:-1])
    page = server.client.get("/matches/1").text
    assert "face down" in page and "hand [" not in page


def test_named_agents_register_show_remove(server: Server) -> None:
    body = {"name": "careful", "type": "greedy", "params": {"eval": "heuristic"}, "game": "connect_four"}
    created = server.client.post("/api/v1/agents", json=body, headers=server.auth)
    assert created.status_code == 201 and created.json()["params"] == {"eval": "heuristic"}
    assert server.get("/api/v1/agents/careful") == server.cli.json("agents", "show", "careful")
    assert server.get("/api/v1/agents") == server.cli.json("agents", "list")
    again = server.client.post("/api/v1/agents", json=body, headers=server.auth)
    assert again.status_code == 400 and "exists already" in again.json()["error"]
    assert server.client.delete("/api/v1/agents/careful", headers=server.auth).status_code == 200
    assert server.client.get("/api/v1/agents/careful").status_code == 404
    assert server.client.delete("/api/v1/agents/careful", headers=server.auth).status_code == 404


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"},
                                     {"Authorization": "Bearer arena_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"}])
def test_writes_need_a_valid_token(server: Server, headers: dict[str, str]) -> None:
    for method, path, body in (("post", "/api/v1/tournaments", {"game": "tic_tac_toe", "agents": ["random", "greedy"]}),
                               ("post", "/api/v1/agents", {"name": "x", "type": "random"}),
                               ("delete", "/api/v1/agents/x", None), ("post", "/api/v1/tournaments/1/cancel", None)):
        response = server.client.request(method, path, json=body, headers=headers)
        assert response.status_code == 401, (path, response.text)
        assert "token" in response.json()["error"] and response.headers["www-authenticate"] == "Bearer"
    assert server.cli.rows("select count(*) from tournaments") == [(0,)]


def test_tokens_from_the_cli_bot_tokens_and_revoking(server: Server) -> None:
    token = server.cli("tokens", "create", "carol").stdout.strip()
    bot = server.cli("tokens", "create", "--bot", "robot").stdout.strip()
    listed = {t["name"]: t for t in server.cli.json("tokens", "list")}
    assert listed["robot"]["kind"] == "bot" and listed["carol"]["kind"] == "user"
    assert token not in json.dumps(listed) and server.cli.rows("select count(*) from tokens where digest = ?".replace("?", f"'{token}'")) == [(0,)]
    body = {"name": "mine", "type": "random"}
    assert server.client.post("/api/v1/agents", json=body, headers={"Authorization": f"Bearer {bot}"}).status_code == 401
    assert listed["carol"]["last_used_at"] is None
    assert server.client.post("/api/v1/agents", json=body, headers={"Authorization": f"Bearer {token}"}).status_code == 201
    used = {t["name"]: t["last_used_at"] for t in server.cli.json("tokens", "list")}
    assert used["carol"] is not None and used["robot"] is None  # a bot token refused by a user endpoint is not "used"
    server.cli("tokens", "revoke", "carol")
    for name in ("erin", "dave"):  # dave's row takes the id of erin's, revoked: still recorded when used within the minute
        made = server.cli("tokens", "create", name).stdout.strip()
        assert server.client.post("/api/v1/agents", json={"name": f"{name}-agent", "type": "random"},
                                  headers={"Authorization": f"Bearer {made}"}).status_code == 201  # fmt: skip
        assert {t["name"]: t["last_used_at"] for t in server.cli.json("tokens", "list")}[name] is not None
        if name == "erin":
            server.cli("tokens", "revoke", "erin")
    assert server.client.delete("/api/v1/agents/mine", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert server.cli("tokens", "create", "robot", ok=False).exit_code == 2
    for bad in ("eve,depth=3", "a:b", "x=y", 'q"'):  # a token's name is an agent's (browser:name=..., pull:name=...)
        assert server.cli("tokens", "create", bad, ok=False).exit_code == 2, bad


#: More digits than Python's int() reads (4,300).
HUGE = "9" * 5000

BAD_BODIES = [
    ({"agents": ["random", "greedy"]}, 422, "game"),
    ({"game": "connect_four"}, 422, "agents"),
    ({"game": "connect_four", "agents": "random,greedy"}, 422, "agents"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "rounds": 0}, 422, "rounds"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "rounds": "many"}, 422, "rounds"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "seed": 2**70}, 422, "seed"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "max_turns": -1}, 422, "max_turns"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "time_per_move": 0}, 422, "time_per_move"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "format": "swiss"}, 422, "format"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "colour": "red"}, 422, "colour"),
    ({"game": "chess", "agents": ["random", "greedy"]}, 400, "game"),
    ({"game": "connect_four:rows=99", "agents": ["random", "greedy"]}, 400, "game"),
    ({"game": "connect_four:depth=2", "agents": ["random", "greedy"]}, 400, "game"),
    ({"game": "connect_four", "agents": ["random", "nobody"]}, 400, "agents"),
    ({"game": "connect_four", "agents": ["random", "minimax:depth=banana"]}, 400, "agents"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "format": "gauntlet"}, 400, "challenger"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "challenger": "random"}, 400, "challenger"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "players": 3}, 400, "players"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "name": "42"}, 400, "name"),
    ({"game": " ", "agents": ["random", "greedy"]}, 400, "game"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "name": "a/b"}, 400, "name"),  # unreachable as /tournaments/a/b
    ({"game": "connect_four", "agents": ["human", "greedy"]}, 400, "agents"),  # a person: nobody at the server to move
    ({"game": "connect_four", "agents": ["random", "greedy"], "openings": "random:²"}, 400, "openings"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "openings": ["3", "9"]}, 400, "openings"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "openings": []}, 422, "openings"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "max_turns": 10**7}, 422, "max_turns"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "rounds": True}, 422, "rounds"),
    ({"game": "connect_four", "agents": ["random,greedy"]}, 400, "agents"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "name": "a\u0000b"}, 422, "name"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "time_per_move": 10**6}, 422, "time_per_move"),
    # library messages that do not say which field: the field heads them
    ({"game": "gwent_lite", "agents": ["random", "greedy:seat.deck=1+2"]}, 400, "agents"),
    ({"game": "connect_four", "agents": ["random", ":::"]}, 400, "agents"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "format": "gauntlet", "challenger": "nope"}, 400, "challenger"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "format": "gauntlet", "challenger": "human"}, 400, "challenger"),
    # not one agent linear:weights=1,2,...,7 (reversi has seven features)
    ({"game": "reversi", "agents": ["random", "linear:weights=1", "2", "3", "4", "5", "6", "7"]}, 400, "agents"),
    ({"game": "incan_gold:players=99", "agents": ["random", "greedy"]}, 400, "game"),
    # more digits than int() reads (4,300): no action id, no number of plies
    ({"game": "connect_four", "agents": ["random", "greedy"], "openings": [HUGE]}, 400, "openings"),
    ({"game": "connect_four", "agents": ["random", "greedy"], "openings": "random:" + HUGE}, 400, "openings"),
]


@pytest.mark.parametrize(("body", "status", "field"), BAD_BODIES)
def test_bad_fields_are_named_never_a_500_and_nothing_is_written(server: Server, body: dict, status: int, field: str) -> None:
    response = server.client.post("/api/v1/tournaments", json=body, headers=server.auth)
    assert response.status_code == status, response.text
    error = response.json()
    assert error["field"] == field and field.rstrip("s").split("_")[0] in error["error"], error
    assert "Traceback" not in response.text and f"--{field.replace('_', '-')}" not in error["error"]  # the field, not the CLI flag
    assert server.cli.rows("select count(*) from tournaments") == [(0,)]


@pytest.mark.parametrize(("path", "status"), [
    ("/api/v1/leaderboard?system=best", 422), ("/api/v1/matrix?kind=colour", 422), ("/api/v1/matches?limit=0", 422),
    ("/api/v1/matches?offset=-1", 422), ("/api/v1/matches/0", 422), ("/api/v1/matches/99999999999999999999999", 422),
    ("/api/v1/matches/999", 404), ("/api/v1/matches/999/replay", 404), ("/api/v1/tournaments/nope", 404),
    ("/api/v1/leaderboard?tournament=nope", 404), ("/api/v1/leaderboard?game=chess", 400),
    ("/api/v1/leaderboard?game=connect_four&tournament=1", 400), ("/api/v1/games/chess", 400),
    ("/api/v1/tournaments/nope/events", 404), ("/api/v1/agents/nobody", 404),
    # numbers no row can have (beyond a 64-bit id) name nothing: a 404, not a database overflow
    ("/api/v1/tournaments/99999999999999999999", 404), ("/api/v1/tournaments/99999999999999999999/events", 404),
    ("/api/v1/leaderboard?tournament=99999999999999999999", 404), ("/api/v1/matrix?tournament=9223372036854775808", 404),
    ("/api/v1/matches?tournament=99999999999999999999", 404), ("/api/v1/tournaments/%C2%B2", 404),
    ("/api/v1/leaderboard?game=", 400), ("/api/v1/games/%20", 400),
    # ids are ASCII digits: an Arabic-Indic or a fullwidth 1 names no tournament
    ("/api/v1/tournaments/%D9%A1", 404), ("/api/v1/tournaments/%EF%BC%91", 404), ("/api/v1/leaderboard?tournament=%D9%A1", 404),
])  # fmt: skip
def test_bad_queries_are_4xx_json(played: Server, path: str, status: int) -> None:
    response = played.client.get(path)
    assert response.status_code == status, response.text
    assert response.json()["error"]


@pytest.mark.parametrize(("path", "field"), [
    ("/api/v1/leaderboard?game=:", "game"), ("/api/v1/matches?game=:", "game"), ("/api/v1/seats?game=:::", "game"),
    ("/api/v1/stats?game=a:b:c", "game"), ("/api/v1/elo-history?game=a:b:c", "game"), ("/api/v1/matrix?game=:", "game"),
    ("/api/v1/tournaments/%D9%A1", "tournament"),
])  # fmt: skip
def test_query_errors_name_their_field(played: Server, path: str, field: str) -> None:
    error = played.client.get(path).json()
    assert error["field"] == field and field in error["error"].replace(":", " ").split()[:2], error


def test_numbers_longer_than_int_reads_name_no_page_and_no_event(played: Server) -> None:
    for page in (f"/tournaments/{HUGE}", f"/tournaments/{HUGE}/figures/net-wins.png"):
        response = played.client.get(page)
        assert response.status_code == 404 and "no tournament" in response.text, page
    for last in (HUGE, "twelve", "-3"):  # not a count of matches: the events start afresh and end as ever
        with played.client.stream("GET", "/api/v1/tournaments/played/events", headers={"Last-Event-ID": last}) as response:
            text = "".join(response.iter_text())
        assert response.status_code == 200 and "event: end" in text and "id: 12" in text, (last, text)


def test_offsets_past_every_row_give_an_empty_page(played: Server) -> None:
    huge = 10**25
    assert played.get("/api/v1/matches", offset=huge) == []
    for page in (f"/tournaments/1?offset={huge}", f"/agents/random?offset={huge}"):
        assert played.client.get(page).status_code == 200, page
    assert played.client.get(f"/tournaments/{huge}").status_code == 404
    largest = 2**63 - 1  # an id up to a 64-bit integer names nothing here (404); past it, not an id (422)
    for path in (f"/api/v1/matches/{largest}", f"/matches/{largest}", f"/api/v1/tournaments/{largest}"):
        assert played.client.get(path).status_code == 404, path
    assert played.client.get(f"/api/v1/matches/{largest + 1}").status_code == 422
    for path in ("/api", "/api/", "/api/v1", "/api/v2/games"):  # the API's addresses answer in JSON, even where none is
        missing = played.client.get(path)
        assert missing.status_code == 404 and missing.headers["content-type"] == "application/json", path
    assert played.cli("leaderboard", "--tournament", str(huge), ok=False).exit_code == 2
    assert played.cli("replay", str(huge), ok=False).exit_code == 2


def test_a_sign_in_cookie_alone_writes_nothing(server: Server) -> None:
    """The cookie is for reads and the play pages, whose posts need the form token too; the JSON writes need the
    Authorization header."""
    server.client.cookies.set("arena_token", server.token)
    for method, path, body in (("post", "/api/v1/tournaments", {"game": "tic_tac_toe", "agents": ["random", "greedy"]}),
                               ("post", "/api/v1/agents", {"name": "x", "type": "random"}),
                               ("delete", "/api/v1/agents/x", None), ("post", "/api/v1/tournaments/1/cancel", None)):
        assert server.client.request(method, path, json=body).status_code == 401, path
    assert server.cli.rows("select count(*) from tournaments") == [(0,)]


def test_openings_over_http_are_given_not_read_from_a_file(server: Server, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET=hunter2\n")
    body = {"game": "tic_tac_toe", "agents": ["random", "greedy"], "rounds": 2}
    refused = server.client.post("/api/v1/tournaments", json={**body, "openings": str(secret)}, headers=server.auth)
    assert refused.status_code == 400 and refused.json()["field"] == "openings" and "hunter2" not in refused.text
    created = server.submit(**body, openings=["4", "0, 8", "# a comment", "4 0"])
    assert server.play() == [(created["id"], "done")]
    played = [m["moves"][: m["opening_plies"]] for m in (server.get(f"/api/v1/matches/{m['id']}") for m in server.get("/api/v1/matches"))]
    assert played == [[4], [4], [0, 8], [0, 8]]  # each opening a pair, seats swapped


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "x", "type": "nosuch"}, "type"), ({"name": "a:b", "type": "random"}, "name"),
    ({"name": "random", "type": "random"}, "name"), ({"name": "m", "type": "minimax", "params": {"depth": "x"}}, "params"),
    ({"name": "m", "type": "minimax", "params": {"nosuch": 1}}, "params"),
    ({"name": "k", "type": "random", "checkpoint": "/nonexistent"}, "checkpoint"),
    ({"name": "k", "type": "random", "game": "chess"}, "game"),
    ({"name": "m", "type": "minimax", "game": "gwent_lite"}, "type"),
    ({"name": "l", "type": "linear", "params": {"weights": "/nonexistent/w.json"}, "game": "santorini"}, "params"),
    ({"name": "n1", "type": "linear", "params": {"weights": "nan"}}, "params"),
    ({"name": "n1", "type": "linear", "params": {"weights": "nan"}, "game": "santorini"}, "params"),
    ({"name": 'a"b', "type": "random"}, "name"), ({"name": "a/b", "type": "random"}, "name"), ({"name": "12", "type": "random"}, "name"),
    ({"name": "k", "type": "neural", "checkpoint": "/dev/zero"}, "checkpoint"),
    ({"name": "k", "type": "neural", "checkpoint": "/"}, "checkpoint"),
])  # fmt: skip
def test_named_agent_errors_name_the_body_field(server: Server, body: dict, field: str) -> None:
    response = server.client.post("/api/v1/agents", json=body, headers=server.auth)
    assert response.status_code == 400 and response.json()["field"] == field, response.text
    assert server.get("/api/v1/agents")["named"] == []


def test_an_empty_checkpoint_is_refused_as_the_cli_refuses_it(server: Server) -> None:
    response = server.client.post("/api/v1/agents", json={"name": "k", "type": "minimax", "checkpoint": ""}, headers=server.auth)
    assert response.status_code == 422 and response.json()["field"] == "checkpoint", response.text
    assert server.cli("agents", "register", "k", "--type", "minimax", "--checkpoint", "", ok=False).exit_code == 2
    assert server.get("/api/v1/agents")["named"] == []


def test_agent_names_follow_one_rule_that_the_message_says(server: Server) -> None:
    refused = server.client.post("/api/v1/agents", json={"name": 'a"b', "type": "random"}, headers=server.auth).json()
    cli = server.cli("agents", "register", 'a"b', "--type", "random", ok=False).stderr.strip()
    assert cli == f"Error: {refused['error']}" and 'any of , : = " /' in cli  # the same words from the CLI and over HTTP
    for name in ("x(y)", "🙂", "bob@3"):  # what the rule allows registers
        assert server.client.post("/api/v1/agents", json={"name": name, "type": "random"}, headers=server.auth).status_code == 201


@pytest.mark.parametrize(("content", "field", "fragment"), [
    (b'{"game": "tic_tac_toe", "agents": ["random", "greedy"], "rounds": ' + HUGE.encode() + b"}", "rounds", "4,300 digits"),
    (b'{"game": "tic_tac_toe", "agents": ["random", "greedy"], "openings": [' + HUGE.encode() + b"]}", "openings", "4,300 digits"),
    (b"null", "body", "missing"), (b"", "body", "missing"), (None, "body", "missing"), (b"[1, 2]", "body", "a JSON object"),
    (b'\xff{"game": 1}', "body", "not UTF-8"), (b"[" * 5000 + b"]" * 5000, "body", "nested too deeply"),
])  # fmt: skip
def test_bodies_that_cannot_be_read_say_why_and_where(server: Server, content: bytes | None, field: str, fragment: str) -> None:
    headers = server.auth if content is None else {**server.auth, "content-type": "application/json"}
    response = server.client.post("/api/v1/tournaments", content=content, headers=headers)
    assert response.status_code == 422 and response.json()["field"] == field and fragment in response.json()["error"], response.text
    assert len(response.text) < 1000  # the number is not repeated


def test_bodies_of_another_content_type_or_nested_without_end_are_a_422(server: Server) -> None:
    """Not JSON (a form, plain text): FastAPI hands the raw bytes on, which must not reach json.dumps as they are; a huge
    number followed by thousands of nested lists must not exhaust the recursion of the check that names its field."""
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        for path in ("/api/v1/tournaments", "/api/v1/agents"):
            response = server.client.post(path, content=b"rounds=1", headers={**server.auth, "content-type": content_type})
            assert response.status_code == 422 and response.json()["field"] == "body", response.text
            assert f"sent as {content_type}: send a JSON object with Content-Type: application/json" in response.json()["error"]
    deep = b'{"rounds": ' + HUGE.encode() + b', "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    response = server.client.post("/api/v1/tournaments", content=deep, headers={**server.auth, "content-type": "application/json"})
    assert 400 <= response.status_code < 500, response.text


def test_a_time_per_move_that_is_no_number_says_so(server: Server) -> None:
    body = b'{"game": "tic_tac_toe", "agents": ["random", "greedy"], "time_per_move": NaN}'
    response = server.client.post("/api/v1/tournaments", content=body, headers={**server.auth, "content-type": "application/json"})
    assert response.status_code == 422 and response.json()["field"] == "time_per_move" and "finite" in response.json()["error"]


def test_errors_name_the_field_also_for_unknown_things_and_bodies_that_are_not_json(played: Server) -> None:
    assert played.client.get("/api/v1/leaderboard?tournament=nope").json()["field"] == "tournament"
    assert played.client.get("/api/v1/games/:::").json() == {"error": "game: missing name before ':' in ':::'", "field": "game"}
    again = played.client.post("/api/v1/tournaments", json={"game": "tic_tac_toe", "agents": ["random", "greedy"], "name": "played"},
                                headers=played.auth)  # fmt: skip
    assert again.status_code == 400 and again.json()["field"] == "name", again.text
    response = played.client.post("/api/v1/tournaments", content=b"not json", headers={**played.auth, "content-type": "application/json"})
    assert response.status_code == 422 and response.json()["field"] == "body", response.text


def test_empty_database_answers_cleanly(server: Server) -> None:
    response = server.client.get("/api/v1/leaderboard")
    assert response.status_code == 404 and "no tournaments yet" in response.json()["error"]
    assert server.get("/api/v1/tournaments") == []


def test_private_server_needs_a_token_to_read(tmp_path) -> None:
    private = Server(tmp_path / "p.db", Settings(**{**SETTINGS.__dict__, "private": True}))
    assert private.client.get("/api/v1/games").status_code == 401
    home = private.client.get("/")
    assert home.status_code == 401 and 'href="/signin?next=/"' in home.text  # the page says where to sign in
    assert private.client.get("/signin").status_code == 200
    assert private.client.get("/api/v1/games", headers=private.auth).status_code == 200
    private.close()


def test_queue_cancel_and_failure(queue_server: Server) -> None:
    server = queue_server
    queued = server.submit(game="tic_tac_toe", agents=["random", "greedy"], rounds=2)
    assert queued["status"] == "queued" and queued["done"] == 0 and queued["matches"] == 2
    cancelled = server.client.post(f"/api/v1/tournaments/{queued['id']}/cancel", headers=server.auth).json()
    assert cancelled["status"] == "cancelled"
    assert server.play() == []  # nothing left to play
    assert server.cli.rows("select count(*) from matches") == [(0,)]
    # An agent that cannot play a game is refused at submission; a game changed since is refused at play: failed.
    second = server.submit(game="tic_tac_toe", agents=["random", "greedy"], rounds=1)
    server.cli.execute(f"update tournaments set game_version = '0' where id = {int(second['id'])}")
    assert server.play() == [(second["id"], "failed")]
    failed = server.get(f"/api/v1/tournaments/{second['id']}")
    assert failed["status"] == "failed" and "version" in failed["error"]
    # Cancelling again is no change; a finished tournament has nothing to cancel, and says so (it answered 200).
    again = server.client.post(f"/api/v1/tournaments/{queued['id']}/cancel", headers=server.auth)
    assert again.status_code == 200 and again.json()["status"] == "cancelled"
    refused = server.client.post(f"/api/v1/tournaments/{second['id']}/cancel", headers=server.auth)
    assert refused.status_code == 400 and "is failed: only a queued, running or stopped one" in refused.json()["error"], refused.text
    assert server.get(f"/api/v1/tournaments/{second['id']}")["status"] == "failed"


def test_claims_are_exclusive_and_leases_run_out(queue_server: Server) -> None:
    server = queue_server
    ids = [server.submit(game="tic_tac_toe", agents=["random", "greedy"])["id"] for _ in range(3)]
    won: list[int | None] = []
    barrier = threading.Barrier(6)

    def claim(n: int) -> None:
        barrier.wait()
        won.append(queue.claim(server.database, f"w{n}", 60))

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(w for w in won if w is not None) == ids and won.count(None) == 3
    assert queue.claim(server.database, "late", 60) is None
    assert queue.renew(server.database, ids[0], "w-nobody", 60) is False
    queue.release_all(server.database, "w")  # every lease of workers w... ends now: anyone may take them over
    assert sorted(queue.claim(server.database, "next", 60) for _ in ids) == ids

    # A play page's game is its server's alone: the queue never claims one, even once its lease ran out (its server
    # was killed: the game lived in its memory); a server cancels it then instead.
    game = server.submit(game="tic_tac_toe", agents=["random", "greedy"])["id"]
    with server.database.engine.begin() as connection:  # (a game is made running, as arena.remote.play makes it)
        connection.exec_driver_sql(f"update tournaments set status = 'running' where id = {game}")
    queue.hold_games(server.database, [game], "w-dead", -1)  # (a lease that ran out a second ago)
    assert queue.claim(server.database, "next", 60) is None
    assert queue.cancel_lost_games(server.database) == 1 and server.status(game) == "cancelled"


def test_stopped_play_resumes_to_the_uninterrupted_results(queue_server: Server) -> None:
    server = queue_server
    body = {"game": "connect_four", "agents": ["random", "greedy", "random:seed=3"], "rounds": 6, "seed": 11}
    first = server.submit(**body)["id"]
    stop = threading.Event()
    from arena.server import runner

    calls = []

    def progress_then_stop(self, done: int, total: int) -> None:  # noqa: ANN001
        calls.append(done)
        if len(calls) > 5:
            stop.set()
        original(self, done, total)

    original = runner.Claimed.progress
    runner.Claimed.progress = progress_then_stop  # type: ignore[method-assign]
    try:
        assert runner.drain(server.database, server.registry, SETTINGS, "w/0", stop) == [(first, "stopped")]
    finally:
        runner.Claimed.progress = original  # type: ignore[method-assign]
    assert server.status(first) == "running" and 0 < server.get(f"/api/v1/tournaments/{first}")["done"] < 18
    assert server.play() == [(first, "done")]  # the lease ended when play stopped: taken over at once
    server.cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy,random:seed=3", "--rounds", "6",
               "--seed", "11", "--name", "whole", "--quiet")  # fmt: skip
    query = ('select m."index", m.seed, m.moves, s.seat, s.agent, s.outcome from matches m join match_seats s on '
             's.match_id = m.id where m.tournament_id = {} order by m."index", s.seat')  # fmt: skip
    assert server.cli.rows(query.format(first)) == server.cli.rows(query.format(2)) and len(server.cli.rows(query.format(first))) == 36


def test_events_end_with_the_matches_stored(played: Server) -> None:
    with played.client.stream("GET", "/api/v1/tournaments/1/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    assert "event: end" in text and "id: 12" in text and '"done": 12' in text.replace('"done":12', '"done": 12')


def test_openapi_documents_every_route(server: Server) -> None:
    paths = server.get("/openapi.json")["paths"]
    for path in ("/api/v1/games", "/api/v1/tournaments", "/api/v1/tournaments/{key}", "/api/v1/tournaments/{key}/cancel",
                 "/api/v1/tournaments/{key}/events", "/api/v1/leaderboard", "/api/v1/matrix", "/api/v1/stats",
                 "/api/v1/seats", "/api/v1/elo-history", "/api/v1/matches", "/api/v1/matches/{match_id}",
                 "/api/v1/matches/{match_id}/replay", "/api/v1/agents", "/api/v1/agents/{name}", "/api/v1/agent-types"):
        assert path in paths, path
    assert server.client.get("/docs").status_code == 200


def test_a_nul_character_anywhere_is_refused_alike_on_both_databases(queue_server: Server) -> None:
    """PostgreSQL's text cannot hold U+0000: an address or body holding one got 503s there (404s and a played
    tournament on SQLite), and an agent spec holding one was accepted, then failed in the queue. Now a 4xx naming
    where, on both, and nothing written."""
    client, auth = queue_server.client, queue_server.auth
    for path, field in (("/api/v1/tournaments/%00", "path"), ("/api/v1/agents/a%00", "path"),
                        ("/api/v1/leaderboard?tournament=%00", "tournament"), ("/api/v1/matches?agent=x%00y", "agent")):  # fmt: skip
        answer = client.get(path)
        assert answer.status_code == 400 and answer.json()["field"] == field and "NUL" in answer.json()["error"], path
    page = client.get("/tournaments/%00")
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html") and "NUL character" in page.text
    bodies = [("/api/v1/tournaments", {"game": "tic_tac_toe", "agents": ["random", "http:url=http://127.0.0.1:1/\u0000"]}, "agents"),
              ("/api/v1/tournaments", {"game": "tic_tac_toe", "agents": ["random", "greedy"], "name": "a\u0000b"}, "name"),
              ("/api/v1/agents", {"name": "x", "type": "random", "params": {"seed\u0000": 1}}, "params"),
              ("/api/v1/agents", {"name": "a\u0000b", "type": "random"}, "name")]  # fmt: skip
    for path, body, field in bodies:
        answer = client.post(path, json=body, headers=auth)
        assert answer.status_code == 422 and answer.json()["field"] == field, answer.text
        assert answer.json()["error"] == f"{field}: holds a NUL character (U+0000), which no id, name, spec or value may contain"
    assert queue_server.get("/api/v1/tournaments") == [] and queue_server.get("/api/v1/agents")["named"] == []
