"""A tournament's report: the figures of arena.figures as PNG files plus one self-contained report.html.

The numbers are computed once per report from the match records with the same pure functions the
CLI's query commands use (leaderboard, elo, matrix, turn_stats, agent_counts), so the report shows
exactly what `arena leaderboard/matrix/stats --json` print. Each aggregate is computed lazily, so
`arena plot elo-history` does not pay for TrueSkill or the matrices.

The HTML embeds every figure as a base64 data URI and carries its own CSS: it opens from disk with
no server and no network, and can be mailed as one file.
"""

from __future__ import annotations

import base64
import html
import io
import json
import shlex
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from arena import ratings
from arena.errors import ArenaError
from arena.files import check_writable
from arena.leaderboard import leaderboard
from arena.params import Spec, parse_spec
from arena.stats import (
    AgentCounts,
    agent_counts,
    legal_move_counts,
    matrix,
    place_counts,
    seat_results,
    turn_stats,
)
from db.records import MatchRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_KINDS = ("elo-history", "ratings", "outcomes", "net-wins", "avg-turns", "match-length", "legal-moves", "seats")
DPI = 110


def _fig() -> ModuleType:
    """arena.figures, imported on first use: importing matplotlib takes about half a second, and the
    `arena` CLI imports this module (for PLOT_KINDS) on every command, not only `report` and `plot`."""
    from arena import figures

    return figures


# ---------------------------------------------------------------- tournament settings


@dataclass(frozen=True)
class TournamentSettings:
    """What a tournament was asked to do, as stored in its row: enough to run it again."""

    id: int
    name: str | None
    game: str  # the game label, e.g. connect_four:rows=5
    game_id: str
    game_version: str
    game_params: str
    format: str
    challenger: str | None
    rounds: int
    seed: int
    max_turns: int
    time_per_move: float | None
    players: int
    status: str
    created_at: str
    finished_at: str | None
    agents: tuple[dict[str, Any], ...]
    secret_deal: bool = False  # a game of hidden information: the deal mixes in the tournament's secret (never shown)
    openings: dict[str, Any] | None = None  # arena.openings.parse_openings's: random plies, or a file's lines
    budget: int | None = None  # an adaptive tournament's or a ladder's
    sprt: dict[str, Any] | None = None  # a tournament run as an SPRT: its parameters (arena.sprt.SprtParams)

    @classmethod
    def from_row(cls, row: Any) -> TournamentSettings:
        """From a db.models.Tournament row (its `settings` column is JSON: game label, agents, format)."""
        try:
            settings = json.loads(row.settings or "{}")
        except ValueError:
            settings = {}
        return cls(
            id=row.id, name=row.name, game=settings.get("game", row.game_id), game_id=row.game_id,
            game_version=row.game_version, game_params=row.game_params, format=row.format,
            challenger=settings.get("challenger"), rounds=row.rounds, seed=row.seed, max_turns=row.max_turns,
            time_per_move=row.time_per_move, players=row.players, status=row.status,
            created_at=_when(row.created_at), finished_at=_when(row.finished_at) if row.finished_at else None,
            agents=tuple(settings.get("agents", ())), secret_deal=getattr(row, "secret", None) is not None,
            openings=settings.get("openings"), budget=(settings.get("adaptive") or {}).get("budget"),
            sprt=(settings.get("sprt") or {}).get("params"),
        )  # fmt: skip

    def openings_text(self) -> str | None:
        """--openings as given: random:N, or the file's name (its openings are stored with the tournament)."""
        if not self.openings:
            return None
        if self.openings.get("kind") == "random":
            return f"random:{self.openings['plies']}"
        return str(self.openings.get("file") or "OPENINGS-FILE")

    def sprt_text(self) -> str | None:
        """--sprt as given: elo0=E0,elo1=E1,alpha=A,beta=B,model=M."""
        if not self.sprt:
            return None
        return ",".join(f"{key}={value}" for key, value in self.sprt.items())  # (as stored: every digit)

    def named_agents(self) -> bool:
        """Whether some agent was given as a registered name (replay_spec gives it as the agent it stood for)."""
        return any(_given(a) != replay_spec(a) for a in self.agents)

    def command(self) -> str:
        """The `arena run-tournament` command that plays the same schedule with the same seeds (given the same agent
        versions): each agent as its spec (replay_spec), not its label, which may be one stored results gave it."""
        specs = [replay_spec(a) for a in self.agents]
        args = ["arena", "run-tournament", "--game", self.game]
        if self.format == "gauntlet" and self.challenger:
            challenger = next((spec for a, spec in zip(self.agents, specs) if a.get("label") == self.challenger), self.challenger)
            args += ["--format", "gauntlet", "--challenger", challenger]
            specs = [spec for spec in specs if spec != challenger]
        elif self.format != "round-robin":
            args += ["--format", self.format]
        if self.budget is not None:
            args += ["--budget", str(self.budget)]
        args += ["--agents", ",".join(specs), "--rounds", str(self.rounds), "--seed", str(self.seed), "--max-turns", str(self.max_turns)]
        if self.players != 2:
            args += ["--players", str(self.players)]
        for option, value in (("--openings", self.openings_text()), ("--sprt", self.sprt_text())):
            if value is not None:
                args += [option, value]
        if self.time_per_move:
            args += ["--time-per-move", f"{self.time_per_move:g}"]
        return " ".join(shlex.quote(arg) for arg in args)


def _given(agent: dict[str, Any]) -> str:
    """What a stored agent (AgentEntry.to_json) was given as: its `given`, where stored results relabelled it."""
    return str(agent.get("given") or agent.get("label", ""))


def replay_spec(agent: dict[str, Any]) -> str:
    """The --agents item that plays a stored agent (AgentEntry.to_json) again: the spec it was given; for a registered
    name, the type and parameters (its checkpoint included) the name stood for, since it may now stand for another."""
    given = _given(agent)
    try:
        spec = parse_spec(given)
    except ArenaError:
        return given
    if spec.id == agent.get("type"):
        return given
    params = {str(k): str(v) for k, v in (agent.get("params") or {}).items()}
    checkpoint = {"checkpoint": str(agent["checkpoint"])} if agent.get("checkpoint") else {}
    return str(Spec(str(agent.get("type", "")), {**params, **checkpoint}))


def _when(value: datetime | None) -> str:
    return value.isoformat(sep=" ", timespec="seconds") + " UTC" if value else "-"


# ---------------------------------------------------------------- aggregates


class Aggregates:
    """Everything the figures and tables show, computed from the records on first use and kept."""

    def __init__(self, records: Sequence[MatchRecord], title: str, tournaments: Sequence[TournamentSettings] = ()) -> None:
        if not records:
            raise ArenaError(f"no played matches in {title}: nothing to draw")
        self.records = records
        self.title = title
        self.tournaments = tuple(tournaments)
        self._matrices: dict[str, list[list[float | None]]] = {}

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """The leaderboard rows, exactly as `arena leaderboard --json` prints them."""
        return leaderboard(self.records)

    @cached_property
    def agents(self) -> list[str]:
        """Leaderboard order: the order of `arena matrix` rows and of every per-agent figure."""
        return [row["agent"] for row in self.rows]

    @cached_property
    def colors(self) -> dict[str, str]:
        return _fig().agent_colors(ratings.agents_in(self.records))

    @cached_property
    def elo_series(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per agent: the match numbers it played and its Elo after each (from arena.ratings.elo's history)."""
        _, history = ratings.elo(self.records)
        xs: dict[str, list[int]] = {}
        ys: dict[str, list[float]] = {}
        for point in history:
            for agent, value in point.ratings.items():
                xs.setdefault(agent, []).append(point.n)
                ys.setdefault(agent, []).append(value)
        return {agent: (np.asarray(xs[agent], dtype=np.int64), np.asarray(ys[agent], dtype=float)) for agent in xs}

    @cached_property
    def elo_order(self) -> list[str]:
        """Best final Elo first, ties by name: the leaderboard's Elo order, without computing TrueSkill."""
        return sorted(self.elo_series, key=lambda a: (-float(self.elo_series[a][1][-1]), a))

    def matrix(self, kind: str) -> list[list[float | None]]:
        """Exactly `arena matrix --kind KIND --json`'s values: rows and columns in leaderboard order."""
        if kind not in self._matrices:
            self._matrices[kind] = matrix(self.records, kind, self.agents)
        return self._matrices[kind]

    @cached_property
    def stats(self) -> dict[str, Any]:
        """Exactly `arena stats --json` (it needs the records loaded with their legal-move counts)."""
        return turn_stats(self.records)

    @cached_property
    def counts(self) -> dict[str, AgentCounts]:
        return agent_counts(self.records)

    @cached_property
    def length_histogram(self) -> np.ndarray:
        return np.bincount(np.fromiter((r.turns for r in self.records), dtype=np.int64, count=len(self.records)))

    @cached_property
    def legal_histogram(self) -> np.ndarray:
        values = legal_move_counts(self.records)
        return np.bincount(values) if values.size else np.zeros(0, dtype=np.int64)

    @cached_property
    def reasons(self) -> Counter[str]:
        return Counter(r.reason for r in self.records)

    @cached_property
    def bradley_terry(self) -> dict[str, tuple[float, float, float]] | None:
        """(rating, low, high) per agent: from the leaderboard rows when they carry it, else from
        arena.ratings.bradley_terry when this version has it, else None (the figure leaves it out)."""
        if self.rows and "bt" in self.rows[0]:
            return {r["agent"]: (float(r["bt"]), float(r["bt_low"]), float(r["bt_high"])) for r in self.rows}
        fit = getattr(ratings, "bradley_terry", None)
        if fit is None:
            return None
        return {agent: (bt.rating, bt.low, bt.high) for agent, bt in fit(self.records).items()}

    @property
    def max_turns(self) -> int | None:
        limits = {t.max_turns for t in self.tournaments}
        return limits.pop() if len(limits) == 1 else None

    @property
    def per_round(self) -> float | None:
        """Matches per round when this is one finished tournament, for a 'rounds' axis on the Elo plot."""
        if len(self.tournaments) != 1:
            return None
        t = self.tournaments[0]
        if t.status != "done" or t.rounds < 1 or len(self.records) % t.rounds:
            return None
        return len(self.records) / t.rounds

    @cached_property
    def seat_data(self) -> dict[str, Any]:
        """Exactly `arena seats --json`."""
        return seat_results(self.records)

    @cached_property
    def seats(self) -> dict[str, dict[int, tuple[int, float]]]:
        """agent -> seat -> (games, score) where score is wins + draws/2, from `arena seats --json`."""
        return {agent: {e["seat"]: (int(e["games"]), float(e["score"])) for e in entries}
                for agent, entries in self.seat_data["agents"].items()}

    @cached_property
    def first_mover(self) -> tuple[int, float]:
        """(games, score) of whoever moved first: `arena seats --json`'s first_mover."""
        first = self.seat_data["first_mover"]
        return int(first["games"]), float(first["score"])

    @cached_property
    def players(self) -> int:
        """The largest number of players in a match of the selection."""
        return max(len(r.seats) for r in self.records)

    @cached_property
    def places(self) -> dict[str, list[int]]:
        """agent -> matches finished in each place (1st first), for games of more than two players."""
        return place_counts(ratings.rated(self.records))  # a match the game broke has no places (every rank 0)


# ---------------------------------------------------------------- figures


def draw(kind: str, agg: Aggregates) -> Figure:
    """One figure of the report by its KIND name."""
    if kind not in _DRAWERS:
        raise ArenaError(f"unknown figure '{kind}' (choose: {', '.join(PLOT_KINDS)})")
    return _DRAWERS[kind](agg)


def _draw_elo(agg: Aggregates) -> Figure:
    return _fig().elo_history_figure(agg.elo_series, agg.elo_order, agg.colors, agg.title, matches=len(agg.records),
                                     per_round=agg.per_round)


def _draw_ratings(agg: Aggregates) -> Figure:
    bt = agg.bradley_terry
    return _fig().ratings_figure(
        agg.agents, [r["elo"] for r in agg.rows], [(r["trueskill_mu"], r["trueskill_sigma"]) for r in agg.rows],
        [bt[a] for a in agg.agents] if bt is not None else None, agg.colors, agg.title,
    )  # fmt: skip


def _draw_outcomes(agg: Aggregates) -> Figure:
    """Win / draw / loss shares; for more than two players the distribution of finishing places."""
    if agg.players > 2:
        return _fig().places_figure(agg.agents, agg.places, agg.title)
    rows = agg.rows
    return _fig().outcomes_figure(agg.agents, [r["wins"] for r in rows], [r["draws"] for r in rows], [r["losses"] for r in rows], agg.title)


def _draw_match_length(agg: Aggregates) -> Figure:
    return _fig().match_length_figure(agg.length_histogram, agg.title, turn_limit=agg.max_turns,
                                      limit_draws=agg.reasons.get("turn_limit", 0))


_DRAWERS: dict[str, Callable[[Aggregates], Figure]] = {
    "elo-history": _draw_elo,
    "ratings": _draw_ratings,
    "outcomes": _draw_outcomes,
    "net-wins": lambda agg: _fig().heatmap_figure(agg.agents, agg.matrix("net-wins"), "net-wins", agg.title),
    "avg-turns": lambda agg: _fig().heatmap_figure(agg.agents, agg.matrix("avg-turns"), "avg-turns", agg.title),
    "match-length": _draw_match_length,
    "legal-moves": lambda agg: _fig().legal_moves_figure(agg.legal_histogram, agg.title),
    "seats": lambda agg: _fig().seats_figure(agg.agents, agg.seats, agg.title, agg.first_mover),
}


def render(fig: Figure, fmt: str = "png") -> bytes:
    """The figure as file bytes; tight bounding box so no label is cut off."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=DPI, bbox_inches="tight", pad_inches=0.15, facecolor="white")
    return buffer.getvalue()


def plot(kind: str, agg: Aggregates, out: Path) -> Path:
    """Write one figure to `out` (format from the suffix: .png, .svg or .pdf)."""
    return write_figure(lambda: draw(kind, agg), out)


def write_figure(make: Callable[[], Figure], out: Path) -> Path:
    """Check `out` (.png, .svg or .pdf, writable), then draw `make()` into it."""
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise ArenaError(f"--out must end in .png, .svg or .pdf, got '{out.name}'")
    if out.is_dir():
        raise ArenaError(f"cannot write {out}: it is a directory")
    check_writable(out)
    data = render(make(), fmt)
    _write(out, data)
    return out


def _write(path: Path, data: bytes | str) -> None:
    try:
        path.parent.mkdir(exist_ok=True)  # the report's folder, in one that exists (check_writable)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    except OSError as exc:
        raise ArenaError(f"cannot write {path}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------- the report


@dataclass
class Report:
    html: Path
    figures: dict[str, Path]
    seconds: dict[str, float] = field(default_factory=dict)  # per figure (draw + PNG) and for the HTML


def build_report(agg: Aggregates, out_dir: Path) -> Report:
    """Every figure as out_dir/KIND.png and out_dir/report.html with them embedded."""
    check_writable(out_dir, new_folder=True)
    images: dict[str, bytes] = {}
    report = Report(out_dir / "report.html", {})
    for kind in PLOT_KINDS:
        start = time.perf_counter()
        images[kind] = render(draw(kind, agg))
        path = out_dir / f"{kind}.png"
        _write(path, images[kind])
        report.figures[kind] = path
        report.seconds[kind] = time.perf_counter() - start
    start = time.perf_counter()
    _write(report.html, render_html(agg, images))
    report.seconds["html"] = time.perf_counter() - start
    return report


# ---------------------------------------------------------------- HTML

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5em auto;
       max-width: 1500px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin: 0.8em 0 0.3em; }
.meta { color: #555; margin-top: 0; }
.row { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.row img { max-width: 100%; height: auto; border: 1px solid #ddd; }
/* A table sits beside its figure when both fit, else below it; it scrolls on its own only if wider than the page. */
.tables { flex: 0 1 auto; max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin-bottom: 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { white-space: normal; min-width: 2.5em; } /* long headers wrap between words; cells never do */
th { background: #f2f2f2; } td.name, th.name { text-align: left; }
td.empty { background: #eee; }
th.vertical { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; padding: 6px 2px; }
td.command { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, Menlo, Consolas, monospace;
             text-align: left; max-width: 70em; }
p.note { color: #555; font-size: 0.9em; max-width: 60em; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: Any, digits: int | None = None) -> str:
    if value is None:
        return ""
    if isinstance(value, (bool, int)) or digits is None:
        return str(value)
    return f"{value:.{digits}f}"


def _table(table_id: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], text: Sequence[int] = (0,),
           vertical: bool = False, classes: dict[tuple[int, int], str] | None = None) -> str:  # fmt: skip
    """A plain table; the columns numbered in `text` are left-aligned text, the rest right-aligned numbers.

    `vertical`: the headers after the first are written bottom to top (narrow columns of numbers
    under long names, as in a matrix). `classes`: a CSS class for the cell at (row, column).
    """
    head = "".join(
        f'<th class="name">{_e(h)}</th>' if i in text else f'<th class="vertical">{_e(h)}</th>' if vertical and i else f"<th>{_e(h)}</th>"
        for i, h in enumerate(headers)
    )  # fmt: skip
    body = []
    for r, row in enumerate(rows):
        cells = []
        for i, cell in enumerate(row):
            css = (classes or {}).get((r, i)) or ("name" if i in text else "empty" if cell == "" else "")
            cells.append(f'<td class="{css}">{_e(cell)}</td>' if css else f"<td>{_e(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table id="{_e(table_id)}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _image(kind: str, data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img id="figure-{_e(kind)}" alt="{_e(alt)}" src="data:image/png;base64,{encoded}">'


def _section(title: str, kind: str, images: dict[str, bytes], tables: str, note: str = "") -> str:
    parts = [f'<section id="{_e(kind)}"><h2>{_e(title)}</h2>']
    if note:
        parts.append(f'<p class="note">{note}</p>')
    parts.append('<div class="row">')
    if kind in images:
        parts.append(_image(kind, images[kind], title))
    parts.append(f'<div class="tables">{tables}</div></div></section>')
    return "".join(parts)


def _settings_html(agg: Aggregates) -> str:
    if not agg.tournaments:
        return "<p>No tournament settings stored for these matches.</p>"
    parts = []
    for t in agg.tournaments:
        rows: list[list[Any]] = [
            ["tournament", f"{t.id}" + (f" '{t.name}'" if t.name else "")],
            ["game", f"{t.game_id} v{t.game_version}"],
            ["game parameters", t.game_params.replace(";", ", ") or "(defaults)"],
            ["format", t.format + (f" (challenger: {t.challenger})" if t.challenger else "")
             + (f", budget {t.budget} matches" if t.budget is not None else "")],
            ["rounds", t.rounds],
            ["openings", t.openings_text() or "none (every match from the initial position)"],
            *([["SPRT", t.sprt_text()]] if t.sprt else []),
            ["seed", t.seed],
            ["players per match", t.players],
            ["max turns", t.max_turns],
            ["time per move", f"{t.time_per_move:g} s" if t.time_per_move else "no limit"],
            ["status", t.status],
            ["created", t.created_at],
            ["finished", t.finished_at or "-"],
            ["to play it again" + (" (the same schedule and agent seeds; the deal is new: each tournament of a game of "
                                   "hidden information deals from a secret of its own)" if t.secret_deal else "")
             + (" (registered agents given as the type and parameters they stood for: a name may since stand for "
                "another agent)" if t.named_agents() else ""),
             t.command()],
        ]
        agents: list[list[Any]] = [[a.get("label", ""), a.get("type", ""),
                                    ",".join(f"{k}={v}" for k, v in (a.get("params") or {}).items()) or "(defaults)",
                                    a.get("version", ""), a.get("checkpoint") or "-"] for a in t.agents]  # fmt: skip
        parts.append('<div class="row"><div class="tables">')
        parts.append(_table(f"settings-{t.id}", ["setting", "value"], rows, text=(0, 1), classes={(len(rows) - 1, 1): "command"}))
        parts.append('</div><div class="tables">')
        parts.append(_table(f"agents-{t.id}", ["agent", "type", "parameters", "version", "checkpoint"], agents, text=(0, 1, 2, 3, 4)))
        parts.append("</div></div>")
    return "".join(parts)


def _matrix_table(agg: Aggregates, kind: str) -> str:
    values = agg.matrix(kind)
    texts = _fig().cell_texts(values, kind)
    rows = [[agent] + row for agent, row in zip(agg.agents, texts)]
    return _table(f"matrix-{kind}", ["row vs column"] + list(agg.agents), rows, vertical=True)


def _elo_band_table(agg: Aggregates) -> str:
    """Final, lowest and highest Elo, and mean and spread over the second half of the matches: the band each agent settled in."""
    half = len(agg.records) / 2
    rows = []
    for agent in agg.elo_order:
        x, y = agg.elo_series[agent]
        late = y[x > half]
        rows.append([agent, f"{y[-1]:.1f}", f"{y.min():.1f}", f"{y.max():.1f}",
                     f"{late.mean():.1f}" if late.size else "", f"{late.std():.1f}" if late.size else ""])  # fmt: skip
    return _table("elo-band", ["agent", "final", "lowest", "highest", "mean, 2nd half", "sd, 2nd half"], rows)


def _leaderboard_table(agg: Aggregates) -> str:
    """`arena leaderboard --json`'s rows, in its order, with Bradley-Terry columns when the rows have them."""
    bt = agg.bradley_terry
    headers = ["#", "agent", "games", "wins", "draws", "losses", "forfeits", "score", "win rate", "Elo"]
    if bt is not None:
        headers += ["BT", "BT low", "BT high"]
    headers += ["TrueSkill μ", "σ", "μ − 3σ"]
    board = []
    for r in agg.rows:
        cells = [r["rank"], r["agent"], r["games"], r["wins"], r["draws"], r["losses"], r["forfeits"], _fmt(r["score"], 1),
                 _fmt(r["win_rate"], 3), _fmt(r["elo"], 1)]  # fmt: skip
        if bt is not None:
            cells += [_fmt(v, 1) for v in bt[r["agent"]]]
        cells += [_fmt(r["trueskill_mu"], 2), _fmt(r["trueskill_sigma"], 2), _fmt(r["trueskill_conservative"], 2)]
        board.append(cells)
    return _table("leaderboard", headers, board, text=(1,))


def _outcomes_table(agg: Aggregates) -> str:
    if agg.players > 2:
        ordinal = _fig().ordinal
        places = [[r["agent"], r["games"], *(_fmt(100 * c / r["games"], 1) for c in agg.places[r["agent"]])] for r in agg.rows]
        return _table("outcomes", ["agent", "games", *(f"{ordinal(k + 1)} %" for k in range(agg.players))], places)
    rows = [[r["agent"], r["games"], *(_fmt(100 * r[k] / r["games"], 1) for k in ("wins", "draws", "losses"))] for r in agg.rows]
    return _table("outcomes", ["agent", "games", "win %", "draw %", "loss %"], rows)


def _length_tables(stats: dict[str, Any]) -> str:
    """`arena stats --json`'s match lengths: overall, per end reason, per pair; and the end reasons."""

    def line(name: str, d: dict[str, Any]) -> list[Any]:
        return [name, d["count"], _fmt(d["mean"], 2), _fmt(d["median"], 1), _fmt(d["p90"], 1), _fmt(d["max"], 0)]

    columns = ["count", "mean", "median", "p90", "max"]
    overall = [line("all matches", stats["match_length"])] + [line(f"reason: {k}", d) for k, d in stats["per_reason"].items()]
    pairs = [line(pair, d) for pair, d in stats["per_pair"].items()]
    return (
        _table("match-length", ["matches", *columns], overall)
        + _table("match-reasons", ["end reason", "matches"], [[k, v] for k, v in stats["reasons"].items()])
        + _table("match-length-per-pair", ["pair", *columns], pairs)
    )


def _legal_table(stats: dict[str, Any]) -> str:
    legal = stats["legal_moves_per_turn"]
    row = [legal["count"], _fmt(legal["mean"], 2), _fmt(legal["median"], 1), _fmt(legal["max"], 0)]
    return _table("legal-moves", ["turns", "mean", "median", "max"], [row], text=())


def _seats_table(agg: Aggregates) -> str:
    """Games and score per game in each seat: all agents together, then each agent."""
    seats = sorted({s for table in agg.seats.values() for s in table})

    def line(name: str, tables: list[dict[int, tuple[int, float]]]) -> list[Any]:
        cells: list[Any] = [name]
        for s in seats:
            games = sum(table.get(s, (0, 0.0))[0] for table in tables)
            score = sum(table.get(s, (0, 0.0))[1] for table in tables)
            cells += [games, _fmt(score / games, 3) if games else ""]
        return cells

    rows = [line("all agents", list(agg.seats.values()))] + [line(agent, [agg.seats[agent]]) for agent in agg.agents]
    headers = ["agent"] + [h for s in seats for h in (f"seat {s} games", f"seat {s} score/game")]
    games, score = agg.first_mover
    first = [["whoever moved first", games, _fmt(score, 1), _fmt(score / games, 3) if games else ""]]
    return _table("seats", headers, rows) + _table("first-mover", ["", "games", "score", "score/game"], first)


def render_html(agg: Aggregates, images: dict[str, bytes]) -> str:
    """The whole report as one HTML document; nothing in it points outside itself."""
    stats = agg.stats
    bt_note = ("" if agg.bradley_terry is not None
               else " Bradley-Terry ratings are not available in this version of Arena, so they are left out.")
    try:
        arena_version = version("arena")
    except PackageNotFoundError:
        arena_version = "unknown"
    generated = datetime.now(UTC).isoformat(sep=" ", timespec="seconds")
    think = [[agent, f"{seconds:.6f}"] for agent, seconds in stats["think_time_per_move"].items()]
    body = [
        f"<h1>Arena report: {_e(agg.title)}</h1>",
        (f'<p class="meta">{len(agg.records)} matches, {len(agg.agents)} agents. Generated {generated} by arena {_e(arena_version)}.'
         " The numbers are those of <code>arena leaderboard / matrix / stats --json</code> for the same selection.</p>"),
        '<section id="settings"><h2>Settings</h2>', _settings_html(agg), "</section>",
        _section("Final ratings", "ratings", images, _leaderboard_table(agg),
                 "Elo replays the matches in schedule order (start 1000, K = 32); Bradley-Terry bars are 95% profile-likelihood"
                 " intervals; TrueSkill bars are ±3σ. The table's # is <code>arena leaderboard</code>'s rank."
                 " Agents are in leaderboard order (that of <code>arena leaderboard</code> and <code>arena matrix</code>)." + bt_note),
        _section("Elo over the tournament", "elo-history", images, _elo_band_table(agg),
                 "The Elo of every agent after each of its matches; x is the number of matches played in schedule order."
                 " Long runs are thinned for drawing (lowest and highest point of each stretch kept); the table uses every point."),
        _section("Finishing places" if agg.players > 2 else "Win / draw / loss rates", "outcomes", images, _outcomes_table(agg),
                 "Share of each agent's matches finished in each place; tied players share the better place." if agg.players > 2 else ""),
        _section("Pairwise net wins", "net-wins", images, _matrix_table(agg, "net-wins"),
                 "Row agent's wins minus its losses against the column agent, as <code>arena matrix --kind net-wins</code>."),
        _section("Pairwise average match length", "avg-turns", images, _matrix_table(agg, "avg-turns"),
                 "Mean match length in turns (one turn = one action) of the row agent against the column agent."),
        _section("Match length", "match-length", images, _length_tables(stats)),
        _section("Legal moves per turn", "legal-moves", images, _legal_table(stats)),
        _section("Score by seat", "seats", images, _seats_table(agg),
                 "Score per game (win 1, draw ½, loss 0) in each seat. Seat 0 is player 0, the first to move unless the game's"
                 " rules decide otherwise (in Onitama the side card does): the last table, as <code>arena seats</code>, scores"
                 " whoever made the first move, whatever their seat."),
        '<section id="more-matrices"><h2>More pairwise matrices</h2><h3>Win rate (row vs column)</h3>',
        _matrix_table(agg, "win-rate"), "<h3>Matches played (row vs column)</h3>", _matrix_table(agg, "games"), "</section>",
        '<section id="think-time"><h2>Think time per move</h2>', _table("think-time", ["agent", "seconds per move"], think), "</section>",
    ]  # fmt: skip
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Arena report: {_e(agg.title)}</title><style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
