"""`arena report` and `arena plot` on a real small tournament: files, self-containment, and numbers equal to the CLI's JSON."""

from __future__ import annotations

import base64
import json
import shlex
import sqlite3
import struct
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from arena import figures
from arena.cli import Context
from arena.cli_report import load
from arena.errors import ArenaError
from arena.match import encode_ints
from arena.report import DPI, PLOT_KINDS, Aggregates, draw
from db.records import MatchRecord, SeatRecord
from tests.conftest import Arena

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
AGENTS = "random,greedy,center"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (which must come first)."""
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    length, chunk = struct.unpack(">I4s", data[8:16])
    assert chunk == b"IHDR" and length == 13
    return struct.unpack(">II", data[16:24])


class Page(HTMLParser):
    """Collects every table (by id: rows of cell texts, header row first) and every URL-bearing attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.urls: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.tags: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "action", "srcset", "data", "poster", "xlink:href"):
                self.urls.append((tag, name, value or ""))
        if tag == "table":
            self._table = dict(attrs).get("id") or f"table-{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None


def shown(text: str, value: Any) -> bool:
    """A number as shown (rounded to the digits it has) equals the JSON value; an empty cell is null."""
    if value is None:
        return text == ""
    digits = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - float(value)) <= 0.5 * 10**-digits + 1e-9


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real tournament (connect four, a turn limit low enough for some draws) and its report, shared by the tests."""
    root = tmp_path_factory.mktemp("report")
    arena = Arena(root / "arena.db")
    arena("run-tournament", "--game", "connect_four", "--agents", AGENTS, "--rounds", "4", "--seed", "5",
          "--max-turns", "14", "--name", "small", "--quiet")  # fmt: skip
    out = root / "out"
    result = arena("report", "--tournament", "small", "--out", str(out))
    assert "report.html" in result.stderr
    page = Page()
    html = (out / "report.html").read_text(encoding="utf-8")
    page.feed(html)
    return {"arena": arena, "out": out, "html": html, "page": page, "root": root}


def test_every_figure_is_a_png_of_sensible_size(built: dict[str, Any]) -> None:
    for kind in PLOT_KINDS:
        data = (built["out"] / f"{kind}.png").read_bytes()
        width, height = png_size(data)
        assert 400 <= width <= 4000 and 250 <= height <= 4000, (kind, width, height)


def test_html_references_nothing_outside_itself(built: dict[str, Any]) -> None:
    page, html = built["page"], built["html"]
    assert page.urls, "the figures should be embedded as images"
    for tag, attribute, value in page.urls:
        assert value.startswith("data:"), f"<{tag} {attribute}={value[:60]!r}> points outside the file"
    assert "http://" not in html and "https://" not in html
    assert "url(" not in html and "@import" not in html
    assert "link" not in page.tags and "script" not in page.tags and "iframe" not in page.tags
    images = [value for tag, _, value in page.urls if tag == "img"]
    assert len(images) == len(PLOT_KINDS)
    for value in images:
        header, encoded = value.split(",", 1)
        assert header == "data:image/png;base64"
        png_size(base64.b64decode(encoded))


def test_settings_and_seed_at_the_top(built: dict[str, Any]) -> None:
    arena, page = built["arena"], built["page"]
    (tournament,) = [t for t in arena.json("tournaments") if t["name"] == "small"]
    settings = dict(page.tables[f"settings-{tournament['id']}"][1:])
    assert settings["seed"] == "5" and settings["rounds"] == "4" and settings["max turns"] == "14"
    assert settings["format"] == "round-robin" and settings["game"].startswith("connect_four v")
    assert settings["to play it again"] == f"arena run-tournament --game connect_four --agents {AGENTS} --rounds 4 --seed 5 --max-turns 14"
    again = Arena(built["root"] / "again.db")  # the command shown plays the same matches again
    again(*shlex.split(settings["to play it again"])[1:], "--quiet")

    def played(matches: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(m["seed"], m["turns"], m["reason"], [(s["agent"], s["outcome"]) for s in m["seats"]]) for m in matches]

    assert played(again.json("matches")) == played(arena.json("matches", "--tournament", "small"))
    agents = [row[0] for row in page.tables[f"agents-{tournament['id']}"][1:]]
    assert agents == AGENTS.split(",")
    assert built["html"].index('id="settings"') < built["html"].index('id="ratings"')


def test_leaderboard_table_equals_leaderboard_json(built: dict[str, Any]) -> None:
    board = built["arena"].json("leaderboard", "--tournament", "small")
    header, *rows = built["page"].tables["leaderboard"]
    keys = {"#": "rank", "agent": "agent", "games": "games", "wins": "wins", "draws": "draws", "losses": "losses",
            "forfeits": "forfeits", "score": "score", "win rate": "win_rate", "Elo": "elo", "BT": "bt", "BT low": "bt_low",
            "BT high": "bt_high", "TrueSkill μ": "trueskill_mu", "σ": "trueskill_sigma", "μ − 3σ": "trueskill_conservative"}  # fmt: skip
    assert [row[header.index("agent")] for row in rows] == [r["agent"] for r in board]
    assert sum(r["draws"] for r in board) > 0, "the turn limit should have made draws"
    for row, expected in zip(rows, board):
        for name, text in zip(header, row):
            if name == "agent":
                assert text == expected["agent"]
            else:
                assert shown(text, expected[keys[name]]), (name, text, expected[keys[name]])


@pytest.mark.parametrize("kind", ["net-wins", "avg-turns", "win-rate", "games"])
def test_matrix_tables_equal_matrix_json(built: dict[str, Any], kind: str) -> None:
    data = built["arena"].json("matrix", "--kind", kind, "--tournament", "small")
    header, *rows = built["page"].tables[f"matrix-{kind}"]
    assert header[1:] == data["agents"]
    assert [row[0] for row in rows] == data["agents"]
    for row, values in zip(rows, data["values"]):
        for text, value in zip(row[1:], values):
            assert shown(text, value), (kind, text, value)


def test_stats_tables_equal_stats_json(built: dict[str, Any]) -> None:
    stats = built["arena"].json("stats", "--tournament", "small")
    page = built["page"]
    header, first, *per_reason = page.tables["match-length"]
    length = stats["match_length"]
    for name, text in zip(header[1:], first[1:]):
        assert shown(text, length[name]), (name, text, length[name])
    assert {row[0].removeprefix("reason: ") for row in per_reason} == set(stats["per_reason"])
    assert dict(page.tables["match-reasons"][1:]) == {k: str(v) for k, v in stats["reasons"].items()}
    assert stats["reasons"].get("turn_limit"), "the turn limit should have been reached"
    header, legal = page.tables["legal-moves"]
    for name, text in zip(header, legal):
        key = "count" if name == "turns" else name
        assert shown(text, stats["legal_moves_per_turn"][key]), (name, text)


def test_seat_table_equals_recomputation_from_the_stored_rows(built: dict[str, Any]) -> None:
    """Score per game in each seat, recomputed straight from SQLite."""
    games: dict[tuple[str, int], int] = defaultdict(int)
    score: dict[tuple[str, int], float] = defaultdict(float)
    with sqlite3.connect(built["arena"].db_path) as c:
        for agent, seat, outcome in c.execute("select agent, seat, outcome from match_seats join matches on matches.id = match_id where status = 'done'"):
            for key in ((agent, seat), ("all agents", seat)):
                games[key] += 1
                score[key] += {"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome]
    header, *rows = built["page"].tables["seats"]
    assert {row[0] for row in rows} == {agent for agent, _ in games}
    for row in rows:
        for seat in (0, 1):
            key = (row[0], seat)
            assert row[header.index(f"seat {seat} games")] == str(games[key])
            assert shown(row[header.index(f"seat {seat} score/game")], score[key] / games[key])
    result = built["arena"]("seats", "--tournament", "small", "--json", ok=False)
    if result.exit_code != 0:
        pytest.skip("this version has no `arena seats` command to compare with")
    data = json.loads(result.stdout)
    by_name = {row[0]: row for row in rows}
    for name, entries in [("all agents", data["overall"]), *data["agents"].items()]:
        for entry in entries:
            assert by_name[name][header.index(f"seat {entry['seat']} games")] == str(entry["games"])
            assert shown(by_name[name][header.index(f"seat {entry['seat']} score/game")], entry["score_rate"])


def _aggregates(built: dict[str, Any], **selection: str | None) -> Any:
    """The report's numbers loaded exactly as `arena report` loads them (a real Context on the real file)."""
    ctx = Context()
    ctx.db_url = f"sqlite:///{built['arena'].db_path}"
    ctx.plugins_dirs = [str(d) for d in built["arena"].plugins_dirs]
    return load(ctx, selection.get("tournament"), selection.get("game"))


@pytest.mark.parametrize("kind", ["net-wins", "avg-turns"])
def test_heatmap_cells_equal_matrix_json(built: dict[str, Any], kind: str) -> None:
    data = built["arena"].json("matrix", "--kind", kind, "--tournament", "small")
    fig = draw(kind, _aggregates(built, tournament="small"))
    cells = figures.heatmap_cell_texts(fig)
    n = len(data["agents"])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == data["agents"]  # rows in `arena matrix` order
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == data["agents"]
    for i in range(n):
        for j in range(n):
            value = data["values"][i][j]
            if value is None:
                assert (i, j) not in cells
            else:
                assert shown(cells[(i, j)], value), (i, j, cells[(i, j)], value)
                if kind == "net-wins":
                    assert int(cells[(i, j)]) == value


def test_an_agent_has_one_colour_in_every_figure(built: dict[str, Any]) -> None:
    agg = _aggregates(built, tournament="small")
    elo = draw("elo-history", agg)
    labelled = [line for line in elo.axes[0].get_lines() if not str(line.get_label()).startswith("_")]
    line_colors = {str(line.get_label()).split("  (")[0]: line.get_color() for line in labelled}
    assert sorted(line_colors) == sorted(agg.agents)
    ratings = draw("ratings", agg)
    bars = [patch for patch in ratings.axes[0].patches]
    assert len(bars) == len(agg.agents)
    for agent, bar in zip(agg.agents, bars):
        assert np.allclose(bar.get_facecolor()[:3], to_rgb(line_colors[agent])), agent


def test_plot_every_kind(built: dict[str, Any]) -> None:
    arena, root = built["arena"], built["root"]
    (root / "plots").mkdir(exist_ok=True)  # a missing folder is refused, as by arena train
    for kind in PLOT_KINDS:
        out = root / "plots" / f"{kind}.png"
        arena("plot", kind, "--tournament", "small", "--out", str(out))
        width, height = png_size(out.read_bytes())
        assert width >= 400 and height >= 250
    svg = root / "plots" / "net-wins-all.svg"
    arena("plot", "net-wins", "--game", "connect_four", "--out", str(svg))
    assert svg.read_text().lstrip().startswith("<?xml")


def _fails(arena: Arena, *args: str) -> str:
    result = arena(*args, ok=False)
    assert result.exit_code == 2, (args, result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_bad_input_is_one_line_and_exit_code_2(built: dict[str, Any], tmp_path: Path) -> None:
    arena = built["arena"]
    assert "no tournament" in _fails(arena, "report", "--tournament", "nope", "--out", str(tmp_path / "r"))
    assert "no played matches" in _fails(arena, "report", "--game", "tic_tac_toe", "--out", str(tmp_path / "r"))
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert "cannot write" in _fails(arena, "report", "--tournament", "small", "--out", str(blocker / "sub"))
    assert "cannot write" in _fails(arena, "plot", "seats", "--tournament", "small", "--out", str(blocker / "x.png"))
    assert "KIND" in _fails(arena, "plot", "pie-chart", "--tournament", "small", "--out", str(tmp_path / "x.png"))
    assert ".png" in _fails(arena, "plot", "seats", "--tournament", "small", "--out", str(tmp_path / "x.gif"))
    assert not (tmp_path / "r").exists()


def test_thinning_keeps_the_extremes_and_the_ends() -> None:
    rng = np.random.default_rng(0)
    x = np.arange(100_000, dtype=float)
    y = np.cumsum(rng.normal(size=x.size))
    tx, ty = figures.thin_series(x, y, 2000)
    assert len(tx) <= 2000
    assert tx[0] == 0 and tx[-1] == x[-1] and ty[-1] == y[-1]
    assert ty.max() == y.max() and ty.min() == y.min()
    assert np.all(np.diff(tx) > 0)
    small = figures.thin_series(x[:50], y[:50], 2000)
    assert len(small[0]) == 50


def test_histogram_summary_is_numpys_mean_and_median() -> None:
    rng = np.random.default_rng(1)
    for size in (1, 2, 7, 1000, 1001):
        values = rng.integers(0, 40, size)
        count, mean, median = figures.histogram_summary(np.bincount(values))
        assert count == size and mean == pytest.approx(values.mean()) and median == np.median(values)


def test_long_names_are_wrapped_never_cut() -> None:
    name = "minimax:depth=3,eval=linear,weights=0,2,4,-1,0,-2,-4,1"
    wrapped = figures.wrap_label(name)
    assert wrapped.replace("\n", "") == name and "\n" in wrapped
    assert figures.wrap_label("val_branch_actions_multiply") == "val_branch_actions_multiply"
    colors = figures.agent_colors([f"agent_{i}" for i in range(30)])
    assert len(set(colors.values())) == 30


def _records(agents: list[str], rounds: int, legal: bool = True) -> list[MatchRecord]:
    """A round-robin with made-up results (the lower index wins, every fifth match a draw)."""
    records: list[MatchRecord] = []
    for r in range(rounds):
        for i, a in enumerate(agents):
            for b in agents[i + 1 :]:
                n = len(records)
                outcome = ("draw", "draw") if n % 5 == 0 else ("win", "loss")
                pair = (a, b) if r % 2 == 0 else (b, a)
                outcomes = outcome if r % 2 == 0 else outcome[::-1]
                seats = tuple(SeatRecord(s, agent, {"win": 1.0, "draw": 0.0, "loss": -1.0}[o], o, 1 if o != "loss" else 2, 0.0, 5)
                              for s, (agent, o) in enumerate(zip(pair, outcomes)))  # fmt: skip
                records.append(MatchRecord(n + 1, 1, n, n, "g", "1", 10 + n % 7, "normal", seats,
                                           encode_ints([3, 4, 5, 4]) if legal else None))  # fmt: skip
    return records


@pytest.mark.parametrize("count", [2, 30])
def test_every_figure_draws_at_a_sensible_size_for_2_to_30_agents(count: int) -> None:
    agents = ["minimax:depth=3,eval=linear,weights=0,2,4,-1,0,-2,-4,1"] + [f"agent_{i:02d}" for i in range(count - 1)]
    agg = Aggregates(_records(agents, 2, legal=count == 2), f"{count} agents")
    for kind in PLOT_KINDS:
        fig = draw(kind, agg)
        width, height = fig.get_size_inches() * DPI
        assert 300 <= width <= 3000 and 250 <= height <= 3000, (kind, count, width, height)
    if count == 30:  # no legal-move counts stored: the figure says so instead of failing
        assert agg.legal_histogram.size == 0
        assert "no legal-move counts" in draw("legal-moves", agg).axes[0].texts[0].get_text()


def test_no_matches_is_an_error() -> None:
    with pytest.raises(ArenaError, match="no played matches"):
        Aggregates([], "nothing")


def test_more_than_two_players_show_the_distribution_of_places_and_whoever_moved_first(tmp_path: Path) -> None:
    """Incan Gold with four players: the outcomes figure and table are finishing places, from the stored ranks."""
    arena = Arena(tmp_path / "arena.db")
    arena("run-tournament", "--game", "incan_gold", "--players", "4", "--agents", "greedy,random,random:seed=1,random:seed=2",
          "--rounds", "4", "--seed", "3", "--name", "four", "--quiet")  # fmt: skip
    out = tmp_path / "out"
    arena("report", "--tournament", "four", "--out", str(out))
    page = Page()
    page.feed((out / "report.html").read_text(encoding="utf-8"))
    header, *rows = page.tables["outcomes"]
    assert header == ["agent", "games", "1st %", "2nd %", "3rd %", "4th %"]
    ranks: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    with sqlite3.connect(arena.db_path) as c:
        for agent, rank in c.execute("select agent, rank from match_seats"):
            ranks[agent][rank - 1] += 1
    for row in rows:
        games = int(row[1])
        assert games == sum(ranks[row[0]]) == 4  # one table a round
        assert [float(v) for v in row[2:]] == pytest.approx([100 * n / games for n in ranks[row[0]]], abs=0.05)
    ctx = Context()
    ctx.db_url = f"sqlite:///{arena.db_path}"
    agg = load(ctx, "four", None)
    assert agg.players == 4 and agg.places == {agent: counts for agent, counts in sorted(ranks.items())}
    assert "Finishing places" in draw("outcomes", agg).axes[0].get_title()
    seats = json.loads(arena("seats", "--tournament", "four", "--json").stdout)["first_mover"]
    assert page.tables["first-mover"][1] == ["whoever moved first", str(seats["games"]), f"{seats['score']:.1f}",
                                             f"{seats['score_rate']:.3f}"]  # fmt: skip
    labels = [t.get_text() for t in draw("seats", agg).axes[0].get_yticklabels()]
    assert labels == ["seat 0", "seat 1", "seat 2", "seat 3", "moved first"]


def test_two_player_outcomes_stay_win_draw_loss(built: dict[str, Any]) -> None:
    header = built["page"].tables["outcomes"][0]
    assert header == ["agent", "games", "win %", "draw %", "loss %"]
    assert [row[0] for row in built["page"].tables["first-mover"]] == ["", "whoever moved first"]


@pytest.mark.parametrize("options", [
    ["--game", "connect_four", "--agents", "random,greedy", "--rounds", "3", "--openings", "random:3"],
    ["--game", "tic_tac_toe", "--agents", "random,greedy,center", "--format", "adaptive", "--budget", "8"],
    ["--game", "tic_tac_toe", "--agents", "random,greedy", "--sprt", "elo0=0,elo1=200,alpha=0.1,beta=0.1", "--rounds", "30"],
    ["--game", "incan_gold", "--players", "4", "--agents", "random,greedy,random:seed=1,random:seed=2", "--rounds", "1"],
])  # fmt: skip
def test_the_command_to_play_it_again_plays_the_same_matches(tmp_path: Path, options: list[str]) -> None:
    """The report's 'to play it again' carries what made the schedule: openings, an adaptive budget, an SPRT, the
    number of players (it left them out: a report's Reversi tournament with --openings was given back without them,
    half its matches, other results)."""
    from arena.report import TournamentSettings
    from db import queries
    from db.session import open_database

    first = Arena(tmp_path / "first.db")
    first("run-tournament", *options, "--seed", "4", "--name", "t", "--quiet")
    with open_database(f"sqlite:///{tmp_path / 'first.db'}").session() as session:
        command = TournamentSettings.from_row(queries.find_tournament(session, "t")).command()
    again = Arena(tmp_path / "again.db")
    again(*shlex.split(command)[1:], "--quiet")

    hidden = "incan_gold" in options  # a game of hidden information deals anew in each tournament: the same schedule only

    def played(arena: Arena) -> list[tuple[Any, ...]]:
        return [(m["seed"], [s["agent"] for s in m["seats"]]) + (() if hidden else (m["turns"], [s["outcome"] for s in m["seats"]]))
                for m in arena.json("matches", "--limit", "1000")]  # fmt: skip

    assert played(again) == played(first) and len(played(first)) > 0, command


def test_the_command_to_play_it_again_gives_specs_not_the_labels_stored_results_gave(tmp_path: Path) -> None:
    """An agent recorded under a new label (`careful@2`: the name registered again with other parameters) is given
    back as what it stood for, never as that label (`unknown agent 'careful@2'`); a registered name is given as its
    type and parameters, which play the same agent even after the name is registered again."""
    from arena.report import TournamentSettings
    from db import queries
    from db.session import open_database

    arena = Arena(tmp_path / "arena.db")
    base = ("--game", "connect_four", "--agents", "careful,random", "--rounds", "1", "--seed", "3", "--max-turns", "12", "--quiet")
    for depth, name in (("2", "first"), ("1", "second")):
        arena("agents", "remove", "careful", ok=False)
        arena("agents", "register", "careful", "--type", "minimax", "--param", f"depth={depth}", "--game", "connect_four")
        arena("run-tournament", *base, "--name", name)
    with open_database(arena.url).session() as session:
        commands = {name: TournamentSettings.from_row(queries.find_tournament(session, name)).command() for name in ("first", "second")}
    assert "--agents minimax:depth=2,random " in commands["first"] and "--agents minimax:depth=1,random " in commands["second"]

    def played(name: str) -> list[tuple[Any, ...]]:
        return [(m["seed"], m["turns"], [(s["agent"], s["outcome"]) for s in m["seats"]])
                for m in arena.json("matches", "--tournament", name, "--limit", "100")]  # fmt: skip

    for name, command in commands.items():
        arena(*shlex.split(command)[1:], "--name", f"{name}-again")
        assert played(f"{name}-again") == played(name) and played(name), command


def test_places_leave_out_the_matches_the_game_broke():
    """A game_error match has every rank 0: counted as a place it was added to each agent's last place so far (places
    over 100%), or, first for an agent, an IndexError that ended arena report in a traceback."""

    def record(index: int, reason: str, ranks: tuple[int, int, int]) -> MatchRecord:
        seats = tuple(SeatRecord(seat, f"a{seat}", 0.0, "none" if reason == "game_error" else "win" if rank == 1 else "loss",
                                 rank, 0.0, 3) for seat, rank in enumerate(ranks))  # fmt: skip
        return MatchRecord(index + 1, 1, index, index, "incan_gold", "1", 9, reason, seats)

    records = [record(0, "game_error", (0, 0, 0)), record(1, "normal", (1, 2, 3)), record(2, "game_error", (0, 0, 0)),
               record(3, "normal", (2, 1, 3))]  # fmt: skip
    places = Aggregates(records, "three").places
    assert places == {"a0": [1, 1, 0], "a1": [1, 1, 0], "a2": [0, 0, 2]}
