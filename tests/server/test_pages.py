"""The pages as HTML without JavaScript (the browser tests drive them live): every page renders what it promises."""

from __future__ import annotations

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
