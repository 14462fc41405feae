"""The report page in a real headless Chromium at 1400 and 1000 px: no page-wide horizontal scrollbar, no clipped matrix table.

Screenshots go to a temporary directory (printed with -s) so a person can look at them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# The README's Onitama study agents: long labels, nine of them (tic-tac-toe's greedy variants keep it quick).
AGENTS = "random,random:seed=1,greedy,greedy:seed=1,minimax:depth=1,minimax:depth=2,minimax:depth=1,seed=1,mcts:simulations=20,minimax:depth=2,order=eval"

pytestmark = pytest.mark.skipif(not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)),
                                reason="needs Debian's chromium and chromedriver (make installs them as root)")  # fmt: skip


def chromium(width: int, height: int = 1000):  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-')}",
                     f"--window-size={width},{height}"):  # fmt: skip
        options.add_argument(argument)
    options.binary_location = CHROMIUM
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    db = str(root / "arena.db")
    subprocess.run([ARENA, "--db", db, "run-tournament", "--game", "tic_tac_toe", "--agents", AGENTS, "--rounds", "1",
                    "--name", "onitama-study-shape", "--quiet"], check=True, capture_output=True)  # fmt: skip
    subprocess.run([ARENA, "--db", db, "report", "--out", str(root / "report")], check=True, capture_output=True)
    return root / "report" / "report.html"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("shots")
    yield directory
    print(f"\nreport screenshots in {directory}")


@pytest.mark.parametrize("width", [1400, 1000])
def test_report_has_no_page_wide_scrollbar_and_unclipped_matrices(report: Path, shots: Path, width: int) -> None:
    driver = chromium(width)
    try:
        driver.get(report.as_uri())
        scroll, client = driver.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client, f"the page scrolls sideways at {width} px: {scroll} > {client}"
        command = driver.execute_script("return document.querySelector('td.command').getBoundingClientRect().right")
        assert command <= client, "the replay command runs off the page"
        matrices = driver.execute_script(
            "return Array.from(document.querySelectorAll('table[id^=matrix-]')).map(t => [t.id, t.scrollWidth,"
            " t.parentElement.clientWidth, t.parentElement.scrollWidth, t.getBoundingClientRect().right])"
        )
        assert len(matrices) == 4
        for table_id, table_width, box_width, box_scroll, right in matrices:
            assert box_scroll <= box_width and table_width <= box_width, f"{table_id} is clipped at {width} px"
            assert right <= client, f"{table_id} runs off the page at {width} px"
            header = driver.execute_script(f"return document.getElementById('{table_id}').rows[0].cells.length")
            assert header == 10  # every agent's column is there
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, min(height, 16000))
        driver.save_screenshot(str(shots / f"report-{width}.png"))
    finally:
        driver.quit()
    assert (shots / f"report-{width}.png").stat().st_size > 10_000
