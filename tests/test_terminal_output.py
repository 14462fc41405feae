"""Tables fit the terminal: the real `arena` command in a 100-column pseudo-terminal, and through a pipe."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from arena.output import Drop, Shorten, fit_columns, split_title, table_width
from tests._terminal import read_until_exit

ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
AGENTS = "random,random:seed=1,greedy,greedy:seed=1,minimax:depth=1,minimax:depth=2,minimax:depth=1,seed=1,mcts:simulations=20,minimax:depth=2,order=eval"


def in_terminal(args: list[str], columns: int, cwd: Path) -> str:
    """What `arena ARGS` shows in a terminal `columns` wide (escape codes removed)."""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["ARENA_DB"] = str(cwd / "arena.db")
    run = subprocess.Popen([ARENA, *args], cwd=cwd, stdin=secondary, stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    output = read_until_exit(primary, run, 60)
    assert run.returncode == 0, output
    return ANSI.sub("", output.decode()).replace("\r\n", "\n")


def piped(args: list[str], cwd: Path) -> str:
    env = dict(os.environ, ARENA_DB=str(cwd / "arena.db"), COLUMNS="100")  # a narrow COLUMNS does not cut piped output
    return subprocess.run([ARENA, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nine agents with long names, as the README's Onitama study command, one quick round of tic-tac-toe."""
    cwd = tmp_path_factory.mktemp("terminal")
    subprocess.run([ARENA, "--db", str(cwd / "arena.db"), "run-tournament", "--game", "tic_tac_toe", "--agents", AGENTS,
                    "--rounds", "1", "--name", "a-rather-long-tournament-name", "--quiet"], check=True, capture_output=True)  # fmt: skip
    return cwd


def tables(text: str) -> list[list[str]]:
    """The boxed tables in the output, each as its lines (top border to bottom border)."""
    found, current = [], None
    for line in text.splitlines():
        if line.startswith("┏"):
            current = [line]
        elif current is not None:
            current.append(line)
            if line.startswith("└"):
                found.append(current)
                current = None
    return found


COMMANDS = [["games"], ["agents", "list"], ["tournaments"], ["leaderboard"], ["leaderboard", "--system", "elo"],
            ["matrix"], ["stats"], ["seats"], ["matches", "--limit", "5"], ["elo-history"], ["plugins"]]  # fmt: skip


def test_every_table_fits_a_100_column_terminal_without_wrapped_rows(study):
    for args in COMMANDS:
        text = in_terminal(args, 100, study)
        assert max(len(line) for line in text.splitlines()) <= 100, (args, text)
        found = tables(text)
        assert found, (args, text)
        for table in found:
            # A wrapped row would be a line of another width, or a row line without its borders.
            assert {len(line) for line in table} == {len(table[0])}, (args, "\n".join(table))
            assert all(line[0] in "┏┃┡│└" for line in table), (args, "\n".join(table))
    stats = in_terminal(["stats"], 100, study)
    assert "Think time per move (s)\n" in stats  # titles are never broken inside a phrase


def test_tournaments_tell_apart_in_a_terminal(study):
    text = in_terminal(["tournaments"], 100, study)
    assert "a-rather-long-tournament-name" in text or "a-rather-lo" in text
    assert "tic_tac_toe" in text and "random,random:seed=1" in text and "36/36" in text
    header = tables(text)[0][1]
    for column in ("game", "agents", "status", "progress", "started"):
        assert column in header, header


def test_leaderboard_drops_the_least_important_columns_first(study):
    text = in_terminal(["leaderboard"], 100, study)
    header = tables(text)[0][1]
    assert "BT 95%" in header and "win rate" in header and "sigma" not in header
    assert "left out to fit 100 columns" in text and "sigma" in text
    by_elo = tables(in_terminal(["leaderboard", "--system", "elo"], 100, study))[0][1]
    assert "Elo" in by_elo  # the sorting system's own column stays


def test_matrix_numbers_its_columns_when_names_do_not_fit(study):
    text = in_terminal(["matrix"], 100, study)
    header = tables(text)[0][1]
    assert re.search(r"┃\s+1\s+┃\s+2\s+┃", header), header
    assert "│ 1 " in text and "Columns are numbered as the rows." in text


@pytest.mark.parametrize("columns", [40, 50])
def test_a_narrow_terminal_leaves_columns_out_and_never_squeezes_one_to_nothing(study, columns):
    """When the caller's steps are not enough, columns go from the right; the id and rank columns keep their values."""
    for command, first in ((["tournaments"], "id"), (["leaderboard"], "#")):
        shown = tables(in_terminal(command, columns, study))[0]
        assert all(len(line) <= columns for line in shown), shown
        header = [cell.strip() for cell in shown[1].split("┃")[1:-1]]
        first_cells = [line.split("│")[1].strip() for line in shown[3:-1]]
        assert header[0] == first and all(cell and "…" not in cell for cell in first_cells), shown


def test_fit_steps_when_they_are_not_enough():
    columns = ["id", "name", "notes"]
    cells = [["12", "n" * 20, "x" * 30]]
    kept, cut = fit_columns(columns, cells, 30, [Drop("notes")])
    assert kept == [0, 1] and cut == {}
    kept, cut = fit_columns(columns, cells, 25, [Drop("notes")])
    assert kept == [0] and cut == {}  # from the right, whole: the first column keeps its values
    kept, cut = fit_columns(["name"], [["n" * 40]], 25, [])
    assert kept == [0] and table_width([cut[0]]) == 25


def test_piped_output_keeps_every_column_at_full_width(study):
    board = piped(["leaderboard"], study)
    assert "TrueSkill mu" in board and "sigma" in board and "…" not in board and "left out" not in board
    assert board.splitlines()[0].startswith("Leaderboard - tournament 1 'a-rather-long-tournament-name' (tic_tac_toe) - sorted by bt")
    matrix = piped(["matrix"], study)
    assert "minimax:depth=1,seed=1 ┃" in matrix and "Columns are numbered" not in matrix
    listing = piped(["tournaments"], study)
    assert AGENTS in listing and "round-robin" in listing
    games = piped(["games"], study)
    assert "treasures=official (official|bga) artifacts=2006 (2006|2020)" in games  # no cell cut, no wrap
    assert max(len(line) for line in games.splitlines()) > 100


def test_tournaments_json_is_the_library_rows(study):
    from arena import results
    from db.session import open_database

    rows = json.loads(piped(["tournaments", "--json"], study))
    assert rows == results.tournament_rows(open_database(str(study / "arena.db")))
    (row,) = rows
    assert row["game_spec"] == "tic_tac_toe" and row["agents"][-1] == "minimax:depth=2,order=eval" and len(row["agents"]) == 9
    assert row["done"] == row["matches"] == 36 and row["progress"] == 1.0 and row["status"] == "done"
    assert set(row) >= {"id", "name", "game", "game_version", "format", "rounds", "seed", "created_at", "finished_at"}


def test_fit_steps_in_order():
    columns = ["agent", "games", "notes"]
    cells = [["a" * 30, "10", "x" * 40]]
    assert fit_columns(columns, cells, None, [Drop("notes")]) == ([0, 1, 2], {})
    kept, cut = fit_columns(columns, cells, 60, [Shorten("notes", 10), Drop("games")])
    assert kept == [0, 1, 2] and cut == {2: 40 - (table_width([30, 5, 40]) - 60)}
    kept, cut = fit_columns(columns, cells, 50, [Shorten("notes", 10), Drop("games")])
    assert kept == [0, 2] and table_width([30, cut.get(2, 40)]) <= 50  # the room the drop made is given back
    assert split_title("Leaderboard - tournament 12 'onitama-study' (onitama) - sorted by bt", 40) == [
        "Leaderboard", "tournament 12 'onitama-study' (onitama)", "sorted by bt"]  # fmt: skip


def test_a_note_about_a_column_goes_with_the_column(monkeypatch, capsys):
    """A (column, line) note is printed only while its column is shown (a BT 95% legend under a table without it)."""
    from arena import output

    notes = ["about the table", ("wide", "wide: about that column")]
    rows = [["a", 1, "x" * 30]]
    for width, shown in ((100, True), (30, False)):
        monkeypatch.setattr(output, "terminal_width", lambda width=width: width)
        output.print_table("t", ["name", "n", "wide"], rows, fit=[output.Drop("wide")], note=notes)
        text = capsys.readouterr().out
        assert "about the table" in text and ("wide: about that column" in text) == shown, text


def test_cut_labels_stay_apart_and_figures_outlast_a_long_label(monkeypatch, capsys):
    """Labels that differ only at their end are cut in the middle (a seed-report pass saw eight rows read
    `neural:checkpoint=onit…`); a table without its own fit steps shortens a long first column before it leaves out
    a figure (`arena stats` kept only `count`); a whole number reads as one at any size (87 beside 200.0)."""
    from arena import output

    labels = [f"neural:checkpoint=onitama-design-{k}.npz" for k in range(4)]
    assert output.cut_cells(labels, 20) == [f"neural:…design-{k}.npz" for k in range(4)]
    assert output.cut_cells(["alpha-long-name-one", "beta-long-name-two"], 8) == ["alpha-l…", "beta-lo…"]  # the end if it tells apart
    monkeypatch.setattr(output, "terminal_width", lambda: 70)
    rows = [[label, 10, 41.5, 40.0, 55.5, 200.0] for label in labels]
    output.print_table("Match length", ["agent", "count", "mean", "median", "p90", "max"], rows)
    text = capsys.readouterr().out
    assert all(column in text for column in ("count", "mean", "median", "p90", "max")), text
    assert len({line.split("│")[1].strip() for line in text.splitlines() if "npz" in line}) == 4, text
    assert " 200 " in text and "200.0" not in text
