"""The pages in real headless Chromium against a real `arena serve`: the home page, a live tournament page whose
progress moves, the leaderboard sorted by each system, and the replay viewer stepping with the arrow keys.
Screenshots are saved in the test's temporary directory (the path is printed)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from arena.library import tokens
from arena.library.storage import open_database
from tests.conftest import Arena
from tests.server.serving import DEADLINE, http, wait_for

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1000",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}"):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the pages' console, read by the tests
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(DEADLINE)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: webdriver.Chrome, directory: Path, name: str) -> Path:
    path = directory / f"{name}.png"
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def test_pages_in_a_real_browser(tmp_path: Path, serve, browser: webdriver.Chrome) -> None:  # noqa: ANN001
    db_path = tmp_path / "arena.db"
    cli = Arena(db_path)
    cli("run-tournament", "--game", "connect_four", "--agents", "random,greedy,center,minimax:depth=2", "--rounds", "2",
        "--seed", "3", "--name", "first", "--quiet")  # fmt: skip
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "browser")
    server = serve(db_path)

    browser.get(server.url + "/")
    assert "Recent tournaments" in browser.page_source and browser.find_element(By.LINK_TEXT, "1")
    shot(browser, tmp_path, "home")

    # A live tournament: its page's progress bar moves with the events, then the page shows the results.
    body = {"game": "connect_four", "agents": ["mcts:simulations=60", "greedy", "random"], "rounds": 12, "seed": 4, "name": "live"}
    live = http.post(server.url + "/api/v1/tournaments", json=body, headers={"Authorization": f"Bearer {token}"}).json()
    browser.get(f"{server.url}/tournaments/{live['id']}")

    def bar() -> float | None:
        """The progress bar's value, read in one script (the page reloads itself at the end: no stale element)."""
        try:
            value = browser.execute_script("const p = document.querySelector('.progress progress'); return p ? p.value : null")
        except WebDriverException:
            return None
        return None if value is None else float(value)

    first = bar()
    assert first is not None
    moved: list[float] = []

    def moving() -> bool:
        value = bar()
        if value is not None and first < value < live["matches"]:
            moved.append(value)
        try:
            return bool(moved) or "Net wins" in browser.page_source
        except WebDriverException:  # read while the page was being replaced
            return False

    wait_for(moving, "the progress bar to move")
    if moved:
        shot(browser, tmp_path, "tournament-live")
    wait_for(lambda: "Net wins" in browser.page_source, "the finished tournament's results (the page reloads at the end)")
    assert browser.find_element(By.CSS_SELECTOR, ".progress .status").text == "done"
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.board tbody tr")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "td.interval svg circle")) == 3
    shot(browser, tmp_path, "tournament-done")

    # The leaderboard per game, sorted by each system.
    browser.get(server.url + "/leaderboard?game=connect_four")
    for system in ("elo", "trueskill"):
        browser.find_element(By.ID, f"sort-{system}").click()
        wait_for(lambda system=system: f"system={system}" in browser.current_url, "the sorted page")
        shown = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.board tbody td.text a")]
        assert shown == [r["agent"] for r in cli.json("leaderboard", "--game", "connect_four", "--system", system)]
    shot(browser, tmp_path, "leaderboard")

    # The replay viewer: arrow keys and buttons step through the positions.
    browser.get(server.url + "/matches/1")
    viewer = browser.find_element(By.ID, "viewer")
    assert viewer.get_attribute("data-current") == "0" and browser.find_element(By.ID, "position-0").is_displayed()
    body_element = browser.find_element(By.TAG_NAME, "body")
    for _ in range(3):
        body_element.send_keys(Keys.ARROW_RIGHT)
    assert viewer.get_attribute("data-current") == "3"
    assert browser.find_element(By.ID, "position-3").is_displayed() and not browser.find_element(By.ID, "position-0").is_displayed()
    assert "current" in browser.find_element(By.ID, "move-3").get_attribute("class")
    body_element.send_keys(Keys.ARROW_LEFT)
    assert viewer.get_attribute("data-current") == "2"
    browser.find_element(By.ID, "last").click()
    last = int(viewer.get_attribute("data-positions")) - 1
    assert viewer.get_attribute("data-current") == str(last)
    browser.find_element(By.ID, "first").click()
    browser.find_element(By.ID, "next").click()
    browser.find_element(By.ID, "next").click()
    assert viewer.get_attribute("data-current") == "2"
    shot(browser, tmp_path, "replay")
    # Nothing went wrong in the pages' console on the way (the favicon's 404 was the one error on every page).
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_a_home_page_of_many_live_tournaments_leaves_the_site_reachable(tmp_path: Path, serve, browser: webdriver.Chrome) -> None:  # noqa: ANN001
    """Eight queued tournaments on the home page: it held an event stream per progress bar, the browser's six
    connections to the server all stayed open, and no other page of the site loaded (nor the home page's own fetches).
    It polls the listing now; a tournament cancelled meanwhile shows so on its bar."""
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "home")
    server = serve(db_path, None, "--workers", "0")  # nothing is played: the tournaments stay queued, live
    auth = {"Authorization": f"Bearer {token}"}
    ids = [http.post(server.url + "/api/v1/tournaments", headers=auth,
                     json={"game": "tic_tac_toe", "agents": ["random", "greedy"], "name": f"q{i}"}).json()["id"] for i in range(8)]  # fmt: skip
    browser.get(server.url + "/")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".progress")) == 8
    home = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.set_page_load_timeout(15)
    browser.get(server.url + "/leaderboard")  # timed out before: every connection held by the home page's streams
    assert "Leaderboard" in browser.title
    browser.set_page_load_timeout(DEADLINE)
    browser.switch_to.window(home)
    assert http.post(f"{server.url}/api/v1/tournaments/{ids[3]}/cancel", headers=auth).json()["status"] == "cancelled"

    def shown() -> str:
        return browser.execute_script(f"return document.querySelector('[data-id=\"{ids[3]}\"] .status').textContent")

    wait_for(lambda: shown() == "cancelled", "the cancelled tournament's bar to say so")
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
