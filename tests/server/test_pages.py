"""The pages as HTML without JavaScript (the browser tests drive them live): every page renders what it promises."""

from __future__ import annotations

import html
import re

from tests.server.conftest import Server


def test_pages_render_without_javascript(played: Server) -> None:
    client = played.client
    home = client.get("/").text
    assert "Recent tournaments" in home and 'href="/tournaments/1"' in home and "connect_four" in home
    page = client.get("/tournaments/played").text
    assert "Leaderboard" in page and "<svg" in page and "Net wins" in page and "greedy" in page
    for kind in ("elo-history", "ratings", "outcomes", "net-wins", "avg-turns", "match-length", "legal-moves", "seats"):
        assert f"/tournaments/1/figures/{kind}.png" in page
    figure = client.get("/tournaments/1/figures/net-wins.png")
    assert figure.status_code == 200 and figure.content.startswith(b"\x89PNG")
    board = client.get("/leaderboard", params={"game": "connect_four", "system": "elo"}).text
    rows = played.cli.json("leaderboard", "--system", "elo")
    assert [board.index(f">{r['agent']}</a>") for r in rows] == sorted(board.index(f">{r['agent']}</a>") for r in rows)
    assert "<th>BT #</th>" in board and "the rows are in elo order" in board  # the rank column is not the rows' order
    assert "<th>#</th>" in client.get("/leaderboard", params={"game": "connect_four"}).text
    match = client.get("/matches/1").text
    replay = played.get("/api/v1/matches/1/replay")
    assert match.count('class="position"') == len(replay["moves"]) + 1 and 'id="next"' in match
    agent = client.get("/agents/greedy", params={"tournament": "1"}).text
    assert "Against each opponent" in agent and ">random</a>" in agent and ">center</a>" in agent
    assert client.get("/agents/greedy").status_code == 200  # its latest tournament by default


def test_the_agents_page_lists_types_with_their_parameters_and_named_agents(server: Server) -> None:
    assert "None yet" in server.client.get("/agents").text
    registered = server.client.post("/api/v1/agents", json={"name": "deep", "type": "minimax", "params": {"depth": "3"}},
                                    headers=server.auth)  # fmt: skip
    assert registered.status_code == 201, registered.text
    page = server.client.get("/agents")
    assert page.status_code == 200 and 'href="/agents"' in page.text
    assert '<a href="/agents/deep">deep</a></td><td class="text">minimax</td>' in page.text and "depth=3" in page.text
    types = server.get("/api/v1/agents")["types"]
    for agent_type in types:  # every type, with every parameter as the API gives it
        assert f"<code>{agent_type['type']}</code>" in page.text
        assert all(f"<code>{html.escape(param)}</code>" in page.text for param in agent_type["params"])


def test_page_errors_are_pages(played: Server) -> None:
    for path in ("/tournaments/99", "/matches/999", "/agents/nobody", "/tournaments/1/figures/pie.png",
                 "/tournaments/1?offset=-1", "/matches/abc", "/leaderboard?system=best"):  # fmt: skip
        response = played.client.get(path)
        assert 400 <= response.status_code < 500 and response.headers["content-type"].startswith("text/html"), path
        assert "Traceback" not in response.text


def test_pages_show_the_clis_warnings_and_open_ended_intervals(server: Server) -> None:
    """A leaderboard page says what `arena leaderboard` says under its table: repeated games, and interval ends the
    games did not set."""
    repeated = server.submit(game="connect_four", agents=["illegal", "illegal:seed=1"], rounds=6, seed=1)["id"]  # one game, again and again
    forfeits = server.submit(game="tic_tac_toe", agents=["illegal", "random"], rounds=2, seed=1)["id"]
    server.play()
    for page in (f"/tournaments/{repeated}", f"/leaderboard?tournament={repeated}"):
        text = server.client.get(page).text
        assert "fewer than half the games are distinct" in text and "--openings random:N" in text, page
    text = server.client.get(f"/tournaments/{forfeits}").text
    assert "..&gt;" in text and "&lt;" in text and "the games set no upper (lower) limit" in text
    assert "distinct" not in server.client.get(f"/leaderboard?tournament={forfeits}").text


def test_an_agent_given_under_another_label_takes_its_results_label(server: Server) -> None:
    """Over HTTP as on the CLI (arena.tournament.stored_labels): `random:seed=0` after `random` is recorded as
    `random`, and the answer and the tournament's page say so."""
    server.submit(game="tic_tac_toe", agents=["random", "greedy"], rounds=1)
    second = server.submit(game="tic_tac_toe", agents=["random:seed=0", "center"], rounds=1)
    assert second["agents"] == ["random", "center"] and second["renamed"] == {"random:seed=0": "random"}
    server.play()
    page = server.client.get(f"/tournaments/{second['id']}").text
    assert "recorded under the labels their results already have: random:seed=0 as random)" in page
    board = {row["agent"]: row["games"] for row in server.get("/api/v1/leaderboard", game="tic_tac_toe")}
    assert board == {"random": 2, "greedy": 1, "center": 1}


BADLY_DRAWN = """
import arena
from games.tic_tac_toe import TicTacToe, TicTacToeState


class BadlyDrawnState(TicTacToeState):
    def render_svg(self):
        raise ValueError("cannot draw svg")

    def clone(self):
        copy = super().clone()
        copy.__class__ = BadlyDrawnState
        return copy


class BadlyDrawn(TicTacToe):
    info = arena.GameInfo(id="badly_drawn", version="1", name="tic-tac-toe that cannot draw its board")

    def new_initial_state(self, seed):
        state = super().new_initial_state(seed)
        state.__class__ = BadlyDrawnState
        return state


@arena.hookimpl
def register_games(register):
    register(BadlyDrawn)
"""


def test_a_game_whose_drawing_fails_is_shown_as_text_never_a_500(tmp_path) -> None:  # noqa: ANN001
    """A plugin game's render_svg raising: the replay page and the replay JSON show its text (they answered 500 with a
    traceback in the log), and a person playing it is shown the text too (the drawing failed inside the person's turn,
    and the person was charged an agent_error)."""
    from fastapi.testclient import TestClient

    from arena.library import tokens
    from arena.library.storage import open_database
    from arena.plugins import get_registry
    from arena.server import Settings, create_app
    from tests.conftest import Arena, loose_plugin

    folder = loose_plugin(tmp_path / "plugins", "badly_drawn", BADLY_DRAWN)
    Arena(tmp_path / "arena.db", plugins_dirs=(folder,))("run-tournament", "--game", "badly_drawn", "--agents", "random,greedy",
                                                          "--rounds", "1", "--quiet")  # fmt: skip
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    settings = Settings(workers=0, worker_id="test", plugins_dirs=(str(folder),))
    with TestClient(create_app(database, get_registry((str(folder),)), settings)) as client:
        page = client.get("/matches/1")
        assert page.status_code == 200 and '<pre class="board">' in page.text, page.text[:300]
        replay = client.get("/api/v1/matches/1/replay").json()
        assert all(p["svg"] is None and p["text"] for p in replay["positions"])
        person = {"Authorization": f"Bearer {tokens.create(database, 'alice')}"}
        started = client.post("/api/v1/play", json={"game": "badly_drawn", "against": "random", "seat": 0}, headers=person)
        assert started.status_code == 201, started.text
        game = started.headers["location"]
        state = client.get(game, params={"seen": 0, "wait": 10}, headers=person).json()
        for _ in range(20):
            if state["status"] == "your_move":
                break
            state = client.get(game, params={"seen": state["version"], "wait": 10}, headers=person).json()
        assert state["status"] == "your_move" and state["board"]["svg"] is None and "." in state["board"]["text"], state
        client.post(game + "/leave", headers=person)
    database.close()


def test_a_stopped_run_says_how_to_go_on(server: Server) -> None:
    """A CLI run left by Ctrl-C is listed `stopped`, and its page says what resumes it; the API's answer agrees."""
    from arena import tournament
    from arena.library import tournaments

    request = tournament.TournamentRequest(game="tic_tac_toe", agents="random,greedy", rounds=2)
    stopped = tournament.create(server.registry, server.database, request)
    tournaments.stop(server.database, stopped)
    page = server.client.get(f"/tournaments/{stopped}").text
    assert "status-stopped" in page and f"<code>arena run-tournament --resume {stopped}</code> plays the rest" in page
    assert server.get(f"/api/v1/tournaments/{stopped}")["status"] == "stopped"
    assert f'href="/tournaments/{stopped}"' in server.client.get("/").text  # among the recent ones, not the live


def test_a_leaderboards_agent_links_keep_a_tournament_name_with_ampersands(server: Server) -> None:
    server.submit(game="tic_tac_toe", agents=["random", "greedy"], rounds=1, name="cup&final #2+")
    server.play()
    board = server.client.get("/leaderboard", params={"tournament": "cup&final #2+"}).text
    links = re.findall(r'href="(/agents/greedy[^"]*)"', board)
    assert links == ["/agents/greedy?tournament=cup%26final%20%232%2B"], links
    page = server.client.get(html.unescape(links[0]))
    assert page.status_code == 200 and "Against each opponent" in page.text


def test_an_agent_whose_label_holds_a_slash_has_a_page(server: Server) -> None:
    """Labels of remote agents and of agents with files hold '/' (http:url=http://..., linear:weights=dir/w.json): the
    agent page's route took one path segment, so every link to such an agent was a 404."""
    bot = "http:url=http://127.0.0.1:9/bots/a"  # nobody listens: it forfeits, and is on the leaderboard all the same
    server.submit(game="tic_tac_toe", agents=[bot, "random"], rounds=1, name="slashes")
    server.play()
    board = server.client.get("/leaderboard", params={"tournament": "slashes"}).text
    links = re.findall(r'href="(/agents/http[^"]*)"', board)
    assert len(links) == 1, board
    page = server.client.get(html.unescape(links[0]))
    assert page.status_code == 200 and "Against each opponent" in page.text and "127.0.0.1:9/bots/a" in page.text


def test_the_leaderboards_form_keeps_what_it_shows(played: Server) -> None:
    """On a tournament's leaderboard the form (sort by) kept no tournament: 'show' went to the first game's
    leaderboard instead; a game given in the address but not in the list was replaced by the list's first."""
    form = re.search(r'<form method="get" action="/leaderboard".*?</form>', played.client.get(
        "/leaderboard", params={"tournament": "played"}).text, re.S).group(0)  # fmt: skip
    assert '<input type="hidden" name="tournament" value="played">' in form and 'name="game"' not in form
    form = re.search(r'<form method="get" action="/leaderboard".*?</form>', played.client.get(
        "/leaderboard", params={"game": "connect_four:rows=6"}).text, re.S).group(0)  # fmt: skip
    assert '<option value="connect_four:rows=6" selected>' in form, form
