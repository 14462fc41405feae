"""A person plays in real headless Chromium against a real `arena serve`: signs in with a token, starts tic-tac-toe
against `random`, clicks legal moves until the match ends, and finds the result in the leaderboard (page and CLI).
Every wait is an explicit condition bounded by DEADLINE; screenshots go to the test's temporary directory."""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from arena.library import tokens
from arena.library.storage import open_database
from tests.conftest import Arena
from tests.server.serving import DEADLINE, http
from tests.server.test_browser import browser, shot  # noqa: F401  (the headless Chromium fixture)

FINAL = ("over", "cancelled", "failed")


def sign_in_and_start(browser: webdriver.Chrome, url: str, token: str) -> None:  # noqa: F811
    """Sign in on the play page (alice's token) and start tic-tac-toe against random, in seat 0."""
    wait = WebDriverWait(browser, DEADLINE, poll_frequency=0.05)
    browser.get(url + "/play")  # not signed in: sent to the sign-in page
    wait.until(lambda d: d.find_elements(By.ID, "token"))
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "signin").click()
    wait.until(lambda d: d.find_elements(By.ID, "person"))
    assert browser.find_element(By.ID, "person").text == "alice"
    for name, value in (("game", "tic_tac_toe"), ("against", "random"), ("seat", "0")):
        field = browser.find_element(By.ID, name)
        field.clear()
        field.send_keys(value)
    browser.find_element(By.ID, "start").click()
    wait.until(lambda d: d.find_elements(By.ID, "table"))


def table_status(browser: webdriver.Chrome) -> tuple[str, int]:  # noqa: F811
    found = browser.execute_script("const t = document.getElementById('table'); return [t.dataset.status, Number(t.dataset.version)]")
    return str(found[0]), int(found[1])


def test_a_person_plays_tic_tac_toe_in_the_browser(tmp_path: Path, serve, browser: webdriver.Chrome) -> None:  # noqa: F811
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "alice")
    server = serve(db_path)
    wait = WebDriverWait(browser, DEADLINE, poll_frequency=0.05)
    sign_in_and_start(browser, server.url, token)

    def status() -> tuple[str, int]:
        return table_status(browser)

    def click_a_move(version: int) -> str | None:
        """The first legal move's button once the page shows a newer position; its name (None: not yet)."""
        try:
            now, seen = status()
            if now in FINAL:
                return "(over)"
            buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
            if now != "your_move" or seen <= version or not buttons or not buttons[0].is_enabled():
                return None
            name = buttons[0].text
            buttons[0].click()
            return name
        except (StaleElementReferenceException, WebDriverException):  # the page redrew the buttons meanwhile: look again
            return None

    played: list[str] = []
    version = -1
    for _ in range(9):
        _, before = status()
        name = wait.until(lambda d, seen=version: click_a_move(seen))
        if name == "(over)":
            break
        played.append(name)
        version = before
        if len(played) == 1:
            shot(browser, tmp_path, "play-first-move")
        wait.until(lambda d, moved=before: status()[1] > moved)  # the click answered: the page moved on
    wait.until(lambda d: status()[0] in FINAL and d.find_elements(By.ID, "stored"))
    assert status()[0] == "over" and played and all(name.startswith("x(") for name in played), played
    ending = browser.find_element(By.ID, "status").text
    assert ending.startswith(("You win", "You lose", "A draw")), ending
    assert browser.find_elements(By.CSS_SELECTOR, "#board svg")  # the final position, drawn
    shot(browser, tmp_path, "play-over")

    browser.find_element(By.LINK_TEXT, "leaderboard").click()
    wait.until(lambda d: "browser:name=alice" in d.page_source)
    shot(browser, tmp_path, "play-leaderboard")
    cli = Arena(db_path)
    assert "browser:name=alice" in cli("leaderboard", "--game", "tic_tac_toe").stdout
    (match,) = cli.json("matches", "--game", "tic_tac_toe")
    assert [s["agent"] for s in match["seats"]] == ["browser:name=alice", "random"]
    assert match["turns"] == len(played) * 2 - (1 if match["turns"] % 2 else 0)

    # An opponent that crashes before the person's first move: the page still says who won, and why.
    browser.get(server.url + "/play")
    wait.until(lambda d: d.find_elements(By.ID, "start"))
    for name, value in (("game", "tic_tac_toe"), ("against", "crasher:how=exit"), ("seat", "1")):
        field = browser.find_element(By.ID, name)
        field.clear()
        field.send_keys(value)
    browser.find_element(By.ID, "start").click()
    wait.until(lambda d: d.find_elements(By.ID, "table") and status()[0] in FINAL and d.find_elements(By.ID, "stored"))
    ending = browser.find_element(By.ID, "status").text
    assert ending.startswith("You win after 0 moves (agent_crashed: "), ending
    assert server.process.poll() is None


def test_a_game_whose_server_was_killed_is_cancelled_and_its_page_says_so(tmp_path: Path, serve,
                                                                         browser: webdriver.Chrome) -> None:  # noqa: F811
    """kill -9 of the server mid-game, then a restart: the game stayed `running` for good (listed live, its events never
    ending), and its page kept offering moves and asking every 2 s without end. Now a server cancels a game whose
    server stopped renewing its claim (a lease: 3 s here), and the page, told the game is gone (404), says so and stops."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "alice")
    server = serve(db_path, None, "--workers", "0")
    wait = WebDriverWait(browser, DEADLINE, poll_frequency=0.05)
    sign_in_and_start(browser, server.url, token)
    wait.until(lambda d: table_status(d)[0] == "your_move")
    game = int(browser.execute_script("return document.getElementById('table').dataset.id"))
    children = server.children()
    server.stop(signal.SIGKILL)
    for child in children:  # its opponents' and forkserver processes, by their ids
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    again = serve(db_path, server.port, "--workers", "0")
    wait.until(lambda d: table_status(d)[0] == "gone")
    assert "no longer on the server" in browser.find_element(By.ID, "status").text
    assert all(not b.is_enabled() for b in browser.find_elements(By.CSS_SELECTOR, "#moves button, #leave"))
    stored = lambda: http.get(f"{again.url}/api/v1/tournaments/{game}").json()  # noqa: E731
    wait.until(lambda d: stored()["status"] == "cancelled")
    assert "its server stopped" in stored()["error"]


def test_a_page_of_another_site_cannot_sign_the_browser_in(tmp_path: Path, serve, browser: webdriver.Chrome) -> None:  # noqa: F811
    """Login CSRF in a real browser: a page of another origin (another port of 127.0.0.1, so the same site) posts a
    sign-in form with mallory's token as the page loads. The server refuses it (403), and the browser is not signed in
    as mallory: its next visit to /play is sent to the sign-in page. On this server's own page the token signs in."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "mallory")
    server = serve(db_path, None, "--workers", "0")
    site = tmp_path / "elsewhere"
    site.mkdir()
    (site / "index.html").write_text(f'<form id="f" method="post" action="{server.url}/signin"><input name="token" value="{token}">'
                                     '<input name="next" value="/play"></form><script>document.getElementById("f").submit()</script>')
    wait = WebDriverWait(browser, DEADLINE, poll_frequency=0.05)
    elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(site)))
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{elsewhere.server_port}/index.html")
        wait.until(lambda d: d.current_url.startswith(server.url))  # the form was posted to the server
        wait.until(lambda d: "another site" in d.page_source)
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()
    browser.get(server.url + "/play")
    wait.until(lambda d: d.find_elements(By.ID, "token"))  # not signed in: sent to the sign-in page
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "signin").click()
    wait.until(lambda d: d.find_elements(By.ID, "person"))
    assert browser.find_element(By.ID, "person").text == "mallory"


def test_a_person_queues_a_tournament_in_the_browser_and_watches_it_end(tmp_path: Path, serve,
                                                                        browser: webdriver.Chrome) -> None:  # noqa: F811
    """Sign in, fill in the New tournament form, queue it: the browser lands on the tournament's page, which the server
    plays (its queue worker) and which reloads with the leaderboard when the tournament ends. A refused form stays,
    saying why, with the field marked."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "alice")
    server = serve(db_path)
    wait = WebDriverWait(browser, DEADLINE, poll_frequency=0.05)
    browser.get(server.url + "/new")  # not signed in: sent to the sign-in page, then back
    wait.until(lambda d: d.find_elements(By.ID, "token"))
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "signin").click()
    wait.until(lambda d: d.find_elements(By.ID, "new-tournament"))

    def fill(**values: str) -> None:
        for name, value in values.items():
            field = browser.find_element(By.ID, name)
            field.clear()
            field.send_keys(value)
        browser.find_element(By.ID, "queue").click()

    fill(game="tic_tac_toe", agents="random,greedy,nosuch", rounds="2", name="browser-cup")
    wait.until(lambda d: d.find_elements(By.ID, "error"))
    assert "unknown agent 'nosuch'" in browser.find_element(By.ID, "error").text
    assert "wrong" in browser.find_element(By.ID, "agents").get_attribute("class")
    shot(browser, tmp_path, "refused")
    fill(agents="random,greedy,center")
    wait.until(lambda d: "/tournaments/" in d.current_url)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".progress .status-done") and "Net wins" in d.page_source)
    shot(browser, tmp_path, "tournament")
    tournament = http.get(f"{server.url}/api/v1/tournaments/browser-cup").json()
    assert (tournament["owner"], tournament["status"], tournament["done"]) == ("alice", "done", 6)
    assert browser.current_url == f"{server.url}/tournaments/{tournament['id']}"
