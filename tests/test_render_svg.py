"""`State.render_svg()`: every built-in game draws its positions as well-formed, self-contained SVG, showing spectators
only public information; a page of them is rendered in headless Chromium and screenshotted for a person to look at."""

from __future__ import annotations

import os
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from arena.api import State
from arena.plugins import get_registry
from arena.testing import SVG_NAMESPACE, check_svg

BUILT_IN = ("tic_tac_toe", "connect_four", "reversi", "dots_and_boxes", "onitama", "santorini", "incan_gold", "gwent_lite")
SVG = SVG_NAMESPACE
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def positions(game_id: str, seed: int = 3) -> list[tuple[str, State]]:
    """The initial position, one a few moves in, one mid-game and the end of a seeded random play-through."""
    game = get_registry().game_class(game_id)()
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    found = [("initial", state.clone())]
    turn = 0
    while not state.is_terminal() and turn < 400:
        state.apply(rng.choice(state.legal_actions()))
        turn += 1
        if turn in (3, 12):
            found.append((f"turn {turn}", state.clone()))
    found.append(("end" if state.is_terminal() else f"turn {turn}", state))
    return found


def well_formed(document: str) -> ET.Element:
    """arena.testing.check_svg (what plugin games are held to), and the built-ins' own size: readable at about 400 px."""
    root = check_svg(document)
    _x, _y, width, height = (float(v) for v in root.get("viewBox", "").split())
    assert 150 <= width <= 800 and 150 <= height <= 900, (width, height)
    return root  # type: ignore[no-any-return]


@pytest.mark.parametrize("game_id", BUILT_IN)
def test_every_position_is_well_formed_self_contained_svg(game_id: str) -> None:
    for label, state in positions(game_id):
        document = state.render_svg()
        assert isinstance(document, str), (game_id, label)
        root = well_formed(document)
        assert len(list(root.iter())) > 5, (game_id, label)


@pytest.mark.parametrize("game_id", BUILT_IN)
def test_spectators_see_only_public_information(game_id: str) -> None:
    """A seat's view re-samples what that seat may not see (hands, deck order, pending choices): the picture is the same."""
    for label, state in positions(game_id, seed=5):
        players = len(state.returns())
        for player in range(players):
            view = state.view(player)
            if getattr(view, "viewer", None) is not None:
                view.viewer = None  # drawn for nobody in particular (a view drawn for its seat shows that seat's hand)
            assert view.render_svg() == state.render_svg(), (game_id, label, player)


def test_a_gwent_seat_sees_its_own_hand_face_up_and_nothing_of_the_other() -> None:
    """The play page draws the person's view: their own hand face up, the other hand face down, whatever it was
    re-dealt as (the view's guess at the other hand and deck never shows)."""
    for label, state in positions("gwent_lite", seed=5)[:-1]:
        for player in (0, 1):
            view = state.view(player)
            picture = view.render_svg()
            other = view.clone()
            other.hands[1 - player] = [card + 1 for card in other.hands[1 - player]]  # another guess at the hidden hand
            other.decks[1 - player].reverse()
            assert other.render_svg() == picture, (label, player)
            texts = [t.text for t in well_formed(picture).iter(f"{SVG}text")]
            assert f"your hand {len(state.hands[player])}, deck {len(state.decks[player])}" in texts, (label, player)
            assert sorted(int(t) for t in texts if t and t.isdecimal()) == sorted(state.hands[player] + state.on_table[0] + state.on_table[1])
            assert "your hand" not in state.render_svg()  # spectators: both hands face down


def test_a_game_without_a_picture_falls_back_to_none() -> None:
    class Plain(State):
        current_player = 0

        def legal_actions(self) -> list[int]:
            return []

        def apply(self, action: int) -> None: ...

        def returns(self) -> list[float]:
            return [0.0]

        def clone(self) -> State:
            return self

        def action_to_string(self, action: int) -> str:
            return str(action)

        def render(self) -> str:
            return "plain"

    assert Plain().render_svg() is None


@pytest.mark.skipif(not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)), reason="needs chromium and chromedriver")
def test_the_pictures_in_headless_chromium(tmp_path: Path) -> None:
    """Every game's mid-game picture at about 400 px wide on one page: each is drawn, none overflows its box."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    figures = []
    for game_id in BUILT_IN:
        label, state = positions(game_id)[2]
        figures.append(f'<figure id="{game_id}"><figcaption>{game_id} ({label})</figcaption>{state.render_svg()}</figure>')
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:sans-serif;display:flex;flex-wrap:wrap;gap:16px}"
            "figure{margin:0;width:400px} figure svg{width:400px;height:auto;display:block;border:1px solid #ccc}</style></head><body>"
            + "".join(figures) + "</body></html>")  # fmt: skip
    directory = tmp_path
    (directory / "boards.html").write_text(page, encoding="utf-8")
    options = webdriver.ChromeOptions()
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", f"--user-data-dir={directory / 'profile'}", "--window-size=1700,1200"):  # fmt: skip
        options.add_argument(argument)
    options.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get((directory / "boards.html").as_uri())
        boxes = driver.execute_script(
            "return Array.from(document.querySelectorAll('figure')).map(f => { const s = f.querySelector('svg').getBoundingClientRect();"
            " return [f.id, s.width, s.height, f.querySelectorAll('svg *').length]; })"
        )
        assert [box[0] for box in boxes] == list(BUILT_IN)
        for game_id, width, height, elements in boxes:
            assert width == pytest.approx(400, abs=2) and 150 < height < 1000 and elements > 5, (game_id, width, height)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1700, min(height + 40, 4000))
        driver.save_screenshot(str(directory / "boards.png"))
    finally:
        driver.quit()
    assert (directory / "boards.png").stat().st_size > 20_000
    print(f"\nboard pictures: {directory / 'boards.png'}")
