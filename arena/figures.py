"""The report's figures: one function per figure, aggregated numbers in, a matplotlib Figure out.

Every function takes numbers that are already aggregated (ratings, matrices, histograms), never
match records, so drawing costs the same for 90 matches as for 90,000. Figures are built with
`matplotlib.figure.Figure` directly rather than pyplot: no global state, nothing to close, no
display needed (saving a Figure renders with Agg).

Readability rules applied everywhere: the title says what is shown and for which tournament;
axes carry units; long agent names are wrapped, never cut (save with bbox_inches="tight"); the
figure grows with the number of agents; an agent has the same colour in every figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import Normalize, to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator, StrMethodFormatter
from numpy.typing import ArrayLike

ELO_START = 1000.0
TRUESKILL_START = 25.0
MAX_LINE_POINTS = 2000  # per Elo line: a ~1000-pixel-wide axis cannot show more

WIN_COLOR, DRAW_COLOR, LOSS_COLOR = "#2e7d32", "#9e9e9e", "#c62828"
LINE_STYLES = ("-", "--", ":")


# ---------------------------------------------------------------- shared helpers


def agent_colors(agents: Sequence[str]) -> dict[str, str]:
    """One colour per agent, assigned in name order so that it does not depend on who won.

    Up to 10 agents get tab10; beyond that the dark then the light halves of tab20, then the
    darkest shades of tab20b/tab20c: the most distinct colours first.
    """
    names = sorted(set(agents))
    if len(names) <= 10:
        palette = _listed("tab10")
    else:
        tab20 = _listed("tab20")
        palette = tab20[0::2] + tab20[1::2] + _listed("tab20b")[0::4] + _listed("tab20c")[0::4]
    return {name: to_hex(palette[i % len(palette)]) for i, name in enumerate(names)}


def _listed(name: str) -> list[tuple[float, float, float, float]]:
    """The colours of a qualitative colour map, in order."""
    cmap = colormaps[name]
    return [cmap(i) for i in range(cmap.N)]


def agent_line_style(agent: str, colors: Mapping[str, str]) -> str:
    """Solid for the first ten colours, then dashed, dotted: a second cue when colours run short."""
    names = sorted(colors)
    return LINE_STYLES[(names.index(agent) // 10) % len(LINE_STYLES)] if agent in colors else "-"


def wrap_label(name: str, width: int = 30) -> str:
    """Long agent specs (minimax:depth=3,eval=linear,weights=...) wrapped after commas, never cut.

    Only commas break a line: a name without commas stays whole however long it is (the figure is
    saved with a tight bounding box, so it still fits).
    """
    if len(name) <= width:
        return name
    lines: list[str] = []
    current = ""
    for part in name.split(","):
        piece = part if not current else "," + part
        if current and len(current) + len(piece) > width:
            lines.append(current + ",")
            current = part
        else:
            current += piece
    lines.append(current)
    return "\n".join(lines)


def _per_agent_height(n: int, each: float = 0.32, extra: float = 1.6) -> float:
    return max(3.0, each * n + extra)


def _label_fontsize(n: int) -> float:
    return 10.0 if n <= 10 else 9.0 if n <= 20 else 8.0


def histogram_summary(histogram: np.ndarray) -> tuple[int, float | None, float | None]:
    """Count, mean and median of the integers whose bincount is `histogram` (numpy's median: mid of two middles)."""
    counts = np.asarray(histogram, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return 0, None, None
    values = np.arange(counts.size)
    mean = float((values * counts).sum() / total)
    cumulative = np.cumsum(counts)
    lower = int(np.searchsorted(cumulative, (total - 1) // 2, side="right"))
    upper = int(np.searchsorted(cumulative, total // 2, side="right"))
    return total, mean, (lower + upper) / 2.0


def thin_series(x: np.ndarray, y: np.ndarray, max_points: int = MAX_LINE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ~max_points of a line, keeping each bucket's lowest and highest point and the first and last.

    Plain striding would drop the peaks and troughs that make the band of an Elo line; the
    min/max of each of max_points/2 buckets draws the same band with far fewer points.
    """
    n = len(x)
    if n <= max_points:
        return x, y
    buckets = max(1, max_points // 2 - 1)
    bucket = np.arange(n) * buckets // n  # non-decreasing: buckets are contiguous runs
    order = np.lexsort((y, bucket))  # by bucket, then by value within it
    bounds = np.flatnonzero(np.diff(bucket)) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [n]))
    keep = np.unique(np.concatenate((order[starts], order[ends - 1], [0, n - 1])))
    return x[keep], y[keep]


def _text_color(rgb: Sequence[float]) -> str:
    """Black on light cells, white on dark ones."""
    r, g, b = rgb[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _no_data(fig: Figure, message: str) -> Figure:
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, transform=ax.transAxes)
    return fig


# ---------------------------------------------------------------- Elo over time


def moving_average(y: np.ndarray, window: int) -> np.ndarray:
    """Mean of each value and the window-1 values before it (fewer at the start)."""
    cumulative = np.concatenate(([0.0], np.cumsum(y, dtype=float)))
    index = np.arange(1, len(y) + 1)
    start = np.maximum(index - window, 0)
    return (cumulative[index] - cumulative[start]) / (index - start)


SMOOTH_FROM = 400  # matches per agent from which the raw lines become a band and a moving average is drawn on top


def elo_history_figure(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]], order: Sequence[str], colors: Mapping[str, str], title: str,
    *, matches: int, per_round: float | None = None, max_points: int = MAX_LINE_POINTS,
) -> Figure:  # fmt: skip
    """One line per agent: its Elo after each of its matches, x = matches played in schedule order.

    series[agent] = (match numbers, Elo after that match); `order` (best first) orders the legend
    so it reads like the right-hand end of the lines. Lines start at 1000 before match 1.
    In long tournaments the raw lines overlap into bands (Elo keeps moving by up to K = 32 a
    match), so they are drawn faint and each agent's moving average is drawn bold on top: the
    bands and the trend both stay visible.
    """
    n_agents = len(order)
    # Up to 16 agents the legend stands beside the lines; more would squeeze them, so it goes below, in columns.
    below = n_agents > 16
    ncol = (2 if max(len(a) for a in order) > 40 else 3) if below else 1
    height = 6.5 + 0.2 * math.ceil(n_agents / ncol) if below else (5.8 if n_agents <= 12 else 7.5)
    fig = Figure(figsize=(11, height), layout="constrained")
    ax = fig.add_subplot()
    shortest = min((len(series[a][0]) for a in order), default=0)
    smooth = shortest >= SMOOTH_FROM
    window = max(10, shortest // 40)
    right = matches + max(1.0, 0.003 * matches)  # a little room after the last match, so its step shows
    handles = []
    for agent in order:
        x, y = series[agent]
        # from 1000 before the first match to the final rating held up to the right edge
        x = np.concatenate(([0], np.asarray(x, dtype=float), [right]))
        y = np.asarray(y, dtype=float)
        y = np.concatenate(([ELO_START], y, y[-1:]))
        color, linestyle = colors[agent], agent_line_style(agent, colors)
        label = f"{wrap_label(agent)}  ({y[-1]:.0f})"
        tx, ty = thin_series(x, y, max_points)
        # steps: a rating holds still between the agent's matches
        if smooth:
            ax.plot(tx, ty, drawstyle="steps-post", linewidth=0.5, alpha=0.3, color=color)
            mx, my = thin_series(x, moving_average(y, window), max_points)
            (line,) = ax.plot(mx, my, linewidth=1.8, label=label, color=color, linestyle=linestyle)
        else:
            (line,) = ax.plot(tx, ty, drawstyle="steps-post", linewidth=1.4, label=label, color=color, linestyle=linestyle)
        handles.append(line)
    ax.axhline(ELO_START, color="black", linewidth=0.8, linestyle=(0, (2, 3)), alpha=0.6)
    ax.set_xlim(0, right)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_xlabel("matches played (schedule order)")
    ax.set_ylabel("Elo rating (points; start 1000, K = 32)")
    what = f" (faint: after each match; bold: mean of each agent's last {window} matches)" if smooth else " after each match"
    ax.set_title(f"Elo of every agent{what}\n{title}")
    ax.grid(True, alpha=0.3)
    if per_round:
        matches_per_round = per_round

        def to_rounds(m: ArrayLike) -> ArrayLike:
            return np.asarray(m) / matches_per_round

        def to_matches(r: ArrayLike) -> ArrayLike:
            return np.asarray(r) * matches_per_round

        top = ax.secondary_xaxis("top", functions=(to_rounds, to_matches))
        top.set_xlabel("rounds completed")
        top.xaxis.set_major_locator(MaxNLocator(integer=True))
    legend = {"handles": handles, "title": "agent (final Elo)", "fontsize": _label_fontsize(n_agents), "ncol": ncol, "frameon": False}
    if below:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), **legend)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), **legend)
    return fig


# ---------------------------------------------------------------- final ratings


def _rating_panel(
    ax: Axes, values: np.ndarray, base: float, colors: list[str], *, low: np.ndarray | None = None,
    high: np.ndarray | None = None, fmt: str = "{:.0f}",
) -> None:  # fmt: skip
    """Horizontal bars from `base` (the starting rating) to each value, optional interval bars, values written past the bar."""
    y = np.arange(len(values))
    xerr = None
    if low is not None and high is not None:
        xerr = np.vstack((np.maximum(values - low, 0), np.maximum(high - values, 0)))
    ax.barh(y, values - base, left=base, color=colors, height=0.7, xerr=xerr,
            error_kw={"ecolor": "#333333", "capsize": 2.5, "elinewidth": 1.0})  # fmt: skip
    ax.axvline(base, color="black", linewidth=0.8)
    lo = np.minimum(values, low if low is not None else values)
    hi = np.maximum(values, high if high is not None else values)
    span = max(float(hi.max()) - float(lo.min()), float(np.abs(hi - base).max()), 1e-9)
    pad = 0.02 * span
    for i, value in enumerate(values):
        if value >= base:
            ax.text(hi[i] + pad, i, fmt.format(value), va="center", ha="left", fontsize=8)
        else:
            ax.text(lo[i] - pad, i, fmt.format(value), va="center", ha="right", fontsize=8)
    left = min(base, float(lo.min())) - 0.22 * span
    right = max(base, float(hi.max())) + 0.22 * span
    ax.set_xlim(left, right)
    ax.grid(True, axis="x", alpha=0.3)


def ratings_figure(
    agents: Sequence[str], elo: Sequence[float], trueskill: Sequence[tuple[float, float]],
    bradley_terry: Sequence[tuple[float, float, float]] | None, colors: Mapping[str, str], title: str,
) -> Figure:  # fmt: skip
    """Final Elo, Bradley-Terry (with 95% intervals, when available) and TrueSkill mu +/- 3 sigma, agents best first."""
    n = len(agents)
    panels = 3 if bradley_terry is not None else 2
    fig = Figure(figsize=(4.3 * panels + 1.5, _per_agent_height(n)), layout="constrained")
    axes = fig.subplots(1, panels, sharey=True)
    bar_colors = [colors[a] for a in agents]
    ax = axes[0]
    _rating_panel(ax, np.asarray(elo, dtype=float), ELO_START, bar_colors)
    ax.set_title("Elo (start 1000, K = 32)", fontsize=10)
    ax.set_xlabel("Elo rating (points)")
    next_axis = 1
    if bradley_terry is not None:
        bt = np.asarray(bradley_terry, dtype=float).reshape(-1, 3)
        ax = axes[next_axis]
        _rating_panel(ax, bt[:, 0], ELO_START, bar_colors, low=bt[:, 1], high=bt[:, 2])
        ax.set_title("Bradley-Terry (bars: 95% interval)", fontsize=10)
        ax.set_xlabel("rating (Elo points, mean 1000)")
        next_axis += 1
    ts = np.asarray(trueskill, dtype=float).reshape(-1, 2)
    ax = axes[next_axis]
    _rating_panel(ax, ts[:, 0], TRUESKILL_START, bar_colors, low=ts[:, 0] - 3 * ts[:, 1], high=ts[:, 0] + 3 * ts[:, 1], fmt="{:.1f}")
    ax.set_title("TrueSkill μ (bars: ±3σ)", fontsize=10)
    ax.set_xlabel("μ (TrueSkill points, start 25)")
    first = axes[0]
    first.set_yticks(np.arange(n), [wrap_label(a) for a in agents], fontsize=_label_fontsize(n))
    first.set_ylim(n - 0.4, -0.6)  # best on top
    first.set_ylabel("agent (leaderboard order)")
    fig.suptitle(f"Final ratings\n{title}", fontsize=12)
    return fig


# ---------------------------------------------------------------- win / draw / loss


def outcomes_figure(agents: Sequence[str], wins: Sequence[int], draws: Sequence[int], losses: Sequence[int], title: str) -> Figure:
    """Stacked horizontal bars of each agent's win, draw and loss shares, with the percentages written in."""
    counts = np.column_stack([np.asarray(v, dtype=float) for v in (wins, draws, losses)]).reshape(len(agents), 3)
    return _share_bars(agents, counts, [WIN_COLOR, DRAW_COLOR, LOSS_COLOR], ["win", "draw", "loss"],
                       f"Win / draw / loss rates per agent\n{title}", "share of the agent's matches (%)")  # fmt: skip


def ordinal(place: int) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def places_figure(agents: Sequence[str], places: Mapping[str, Sequence[int]], title: str) -> Figure:
    """Games of more than two players: stacked bars of each agent's share of 1st, 2nd, ... last places.

    places[agent][k] = matches the agent finished in place k + 1 (ties share the better place).
    Colours run from green (1st) to red (last), with the percentages written in.
    """
    k = max((len(v) for v in places.values()), default=1)
    counts = np.array([list(places.get(a, ())) + [0] * (k - len(places.get(a, ()))) for a in agents], dtype=float).reshape(len(agents), k)
    palette = colormaps["RdYlGn_r"]
    colors = [to_hex(palette(0.1 + 0.8 * place / max(1, k - 1))) for place in range(k)]
    return _share_bars(agents, counts, colors, [ordinal(place + 1) for place in range(k)],
                       f"Finishing places per agent ({k} players per match)\n{title}",
                       "share of the agent's matches (%); tied players share the better place")  # fmt: skip


def _share_bars(agents: Sequence[str], counts: np.ndarray, colors: Sequence[str], labels: Sequence[str], title: str,
                xlabel: str) -> Figure:  # fmt: skip
    """One stacked bar per agent of the shares of its matches in each column of `counts` (agents x kinds), games at the end."""
    n = len(agents)
    games = counts.sum(axis=1)
    shares = 100 * counts / np.where(games > 0, games, 1)[:, None]
    fig = Figure(figsize=(10, _per_agent_height(n)), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(n)
    left = np.zeros(n)
    for column, (color, label) in enumerate(zip(colors, labels)):
        share = shares[:, column]
        ax.barh(y, share, left=left, color=color, height=0.72, label=label)
        text_color = _text_color(to_rgb(color))
        for i in range(n):
            if share[i] >= 7:
                ax.text(left[i] + share[i] / 2, i, f"{share[i]:.0f}%", ha="center", va="center", color=text_color, fontsize=8)
        left = left + share
    for i in range(n):
        ax.text(101, i, f"{int(games[i]):,} games", va="center", ha="left", fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_yticks(y, [wrap_label(a) for a in agents], fontsize=_label_fontsize(n))
    ax.set_ylim(n - 0.4, -0.6)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("agent (leaderboard order)")
    ax.set_title(title, pad=28)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(labels), 8), frameon=False, fontsize=9)
    return fig


# ---------------------------------------------------------------- pairwise heatmaps

HEATMAP_KINDS: dict[str, tuple[str, str]] = {
    # kind: (title, colour-bar label)
    "net-wins": ("Net wins: row agent's wins minus losses against column agent", "net wins of row vs column (matches)"),
    "avg-turns": ("Average match length, row agent against column agent", "mean match length (turns)"),
    "win-rate": ("Win rate of row agent against column agent", "row's wins / matches"),
    "draw-rate": ("Draw rate of row agent against column agent", "draws / matches"),
    "games": ("Matches played, row agent against column agent", "matches"),
}


def format_cell(value: float | None, kind: str) -> str:
    """The text written in a heatmap cell (and in the report's matrix tables): '' where undefined."""
    if value is None:
        return ""
    if kind == "net-wins":
        return f"{int(value):+d}" if value else "0"
    if kind == "games":
        return f"{int(value):d}"
    if kind in ("win-rate", "draw-rate"):
        return f"{value:.2f}"
    return f"{value:.1f}"


def cell_texts(values: Sequence[Sequence[float | int | None]], kind: str) -> list[list[str]]:
    return [[format_cell(v, kind) for v in row] for row in values]


def heatmap_figure(agents: Sequence[str], values: Sequence[Sequence[float | int | None]], kind: str, title: str) -> Figure:
    """A pairwise matrix as `arena matrix` prints it (rows = agents in leaderboard order, row vs column), values in the cells.

    net-wins uses a diverging map centred on zero (blue = row won more); the others a sequential one.
    """
    if kind not in HEATMAP_KINDS:
        raise ValueError(f"unknown matrix kind {kind!r}")
    n = len(agents)
    data = np.array([[np.nan if v is None else float(v) for v in row] for row in values], dtype=float).reshape(n, n)
    finite = data[np.isfinite(data)]
    if kind == "net-wins":
        extent = float(np.abs(finite).max()) if finite.size else 1.0
        norm = Normalize(-max(extent, 1.0), max(extent, 1.0))
        cmap = colormaps["RdBu"].with_extremes(bad="#eeeeee")
    else:
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        norm = Normalize(low, high if high > low else low + 1.0)
        cmap = colormaps["viridis"].with_extremes(bad="#eeeeee")
    cell = 0.62 if n <= 8 else 0.5 if n <= 16 else 0.42
    side = max(4.5, cell * n + 2.8)
    fig = Figure(figsize=(side + 1.2, side), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, norm=norm, aspect="equal", interpolation="nearest")
    texts = cell_texts(values, kind)
    size = 10 if n <= 8 else 8 if n <= 14 else 7 if n <= 22 else 6.5 if n <= 30 else 5.5
    rgba = cmap(norm(np.nan_to_num(data)))  # every cell's colour at once, to pick black or white text
    for i in range(n):
        for j in range(n):
            if texts[i][j]:
                color = _text_color(rgba[i, j])
                # in_layout=False: cells sit inside the axes, and measuring 900 texts for the layout costs seconds
                ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=size, color=color, in_layout=False)
    fontsize = _label_fontsize(n)
    # whole names, slanted: wrapped names would collide with their neighbours when slanted
    ax.set_xticks(np.arange(n), list(agents), rotation=45, ha="right", rotation_mode="anchor", fontsize=fontsize)
    ax.set_yticks(np.arange(n), [wrap_label(a) for a in agents], fontsize=fontsize)
    ax.set_xlabel("column agent (opponent)")
    ax.set_ylabel("row agent (leaderboard order)")
    ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.0)
    ax.tick_params(which="minor", length=0)
    heading, bar_label = HEATMAP_KINDS[kind]
    ax.set_title(f"{heading}\n{title}", fontsize=11)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
    bar.set_label(bar_label)
    return fig


def heatmap_cell_texts(fig: Figure) -> dict[tuple[int, int], str]:
    """What a heatmap figure wrote in its cells, by (row, column): for checking the drawing against the numbers."""
    ax = fig.axes[0]
    return {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}


# ---------------------------------------------------------------- distributions


def _integer_histogram(ax: Axes, histogram: np.ndarray, color: str, max_bars: int = 160) -> None:
    """Integer-valued histogram as steps; merged into ~max_bars wider bins when the range is wide."""
    counts = np.asarray(histogram, dtype=float)
    nonzero = np.flatnonzero(counts)
    first, last = int(nonzero[0]), int(nonzero[-1])
    span = last - first + 1
    width = max(1, math.ceil(span / max_bars))
    bins = math.ceil(span / width)
    padded = np.zeros(bins * width)
    padded[:span] = counts[first : last + 1]
    merged = padded.reshape(bins, width).sum(axis=1)
    edges = first - 0.5 + width * np.arange(bins + 1)
    ax.stairs(merged, edges, fill=True, color=color, alpha=0.85)
    ax.stairs(merged, edges, color="#1f3b5a", linewidth=0.8)
    ax.set_xlim(edges[0] - 0.5 * width, edges[-1] + 0.5 * width)
    ax.set_ylim(0, merged.max() * 1.12)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    if span <= 30:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _mark_mean_median(ax: Axes, mean: float, median: float, unit: str) -> list[Line2D]:
    mean_line = ax.axvline(mean, color="#d62728", linewidth=1.8, label=f"mean {mean:.2f} {unit}")
    median_line = ax.axvline(median, color="black", linewidth=1.8, linestyle="--", label=f"median {median:g} {unit}")
    return [mean_line, median_line]


def match_length_figure(histogram: np.ndarray, title: str, *, turn_limit: int | None = None, limit_draws: int = 0) -> Figure:
    """How long matches lasted: histogram of turns per match with mean and median; the turn limit marked when reached."""
    fig = Figure(figsize=(10, 5), layout="constrained")
    matches, mean, median = histogram_summary(histogram)
    if not matches or mean is None or median is None:
        return _no_data(fig, f"no matches\n{title}")
    ax = fig.add_subplot()
    _integer_histogram(ax, histogram, "#6baed6")
    handles = _mark_mean_median(ax, mean, median, "turns")
    if turn_limit is not None and limit_draws:
        handles.append(ax.axvline(turn_limit, color="#ff7f0e", linewidth=1.5, linestyle=":",
                                  label=f"turn limit {turn_limit}: {limit_draws} draws"))  # fmt: skip
    ax.legend(handles=handles, loc="best", fontsize=9, framealpha=0.9)
    ax.set_xlabel("match length (turns; one turn = one action by one player)")
    ax.set_ylabel("matches")
    ax.set_title(f"Match length, {matches:,} matches\n{title}")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def legal_moves_figure(histogram: np.ndarray, title: str) -> Figure:
    """How many legal moves the player to move had, over every turn of every match, with mean and median."""
    fig = Figure(figsize=(10, 5), layout="constrained")
    turns, mean, median = histogram_summary(histogram)
    if not turns or mean is None or median is None:
        return _no_data(fig, f"no legal-move counts stored for these matches\n{title}")
    ax = fig.add_subplot()
    _integer_histogram(ax, histogram, "#74c476")
    handles = _mark_mean_median(ax, mean, median, "moves")
    ax.legend(handles=handles, loc="best", fontsize=9, framealpha=0.9)
    ax.set_xlabel("legal moves available to the player to move (count)")
    ax.set_ylabel("turns")
    ax.set_title(f"Legal moves per turn, {turns:,} turns\n{title}")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


# ---------------------------------------------------------------- seats


def seat_colors(seats: Sequence[int]) -> dict[int, str]:
    palette = colormaps["cividis"]
    k = len(seats)
    return {seat: to_hex(palette(0.15 + 0.7 * i / max(1, k - 1))) for i, seat in enumerate(seats)}


FIRST_MOVER_COLOR = "#e07b39"


def seats_figure(agents: Sequence[str], by_seat: Mapping[str, Mapping[int, tuple[int, float]]], title: str,
                 first_mover: tuple[int, float] | None = None) -> Figure:  # fmt: skip
    """Score per game (win 1, draw 1/2) by seat: all agents together (with a 95% interval) on top, then per agent.

    by_seat[agent][seat] = (games, score). The top panel answers "does a seat have an advantage";
    the one below shows whether that holds for every agent. Both share the x axis. `first_mover`
    = (games, score) of whoever moved first, a last bar in the top panel: in games where the rules,
    not the seat, decide who starts (Onitama's side card), that is the first-move advantage.
    """
    seats = sorted({seat for table in by_seat.values() for seat in table})
    colors = seat_colors(seats)
    n, k = len(agents), len(seats)
    bar = 0.8 / max(1, k)
    rows = k + (1 if first_mover is not None and first_mover[0] else 0)
    overall_height = 0.6 + 0.3 * rows
    agents_height = max(1.5, n * max(0.32, 0.17 * k))
    fig = Figure(figsize=(10.5, overall_height + agents_height + 1.4), layout="constrained")
    overall_ax, agent_ax = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [overall_height, agents_height]})
    total_games = {s: sum(table.get(s, (0, 0.0))[0] for table in by_seat.values()) for s in seats}
    total_score = {s: sum(table.get(s, (0, 0.0))[1] for table in by_seat.values()) for s in seats}
    all_games = sum(total_games.values())
    mean_score = sum(total_score.values()) / all_games if all_games else 0.0
    show_values = n * k <= 90
    bars = [(f"seat {s}", total_games[s], total_score[s], colors[s]) for s in seats]
    if rows > k:
        bars.append(("moved first", first_mover[0], first_mover[1], FIRST_MOVER_COLOR))  # type: ignore[index]
    for i, (label, games, score, color) in enumerate(bars):
        rate = score / games if games else 0.0
        half = 1.96 * math.sqrt(max(rate * (1 - rate), 0.0) / games) if games else 0.0
        overall_ax.barh(i, rate, xerr=half, height=0.7, color=color, capsize=4, label=label)
        overall_ax.text(rate + half + 0.015, i, f"{rate:.3f}  (±{half:.3f}, {games:,} games)", va="center", ha="left", fontsize=8)
    overall_ax.set_yticks(np.arange(rows), [label for label, *_ in bars])
    overall_ax.set_ylim(rows - 0.5, -0.5)
    overall_ax.set_title("all agents together (bars: 95% interval; dashed: mean score per game)", fontsize=10)
    y = np.arange(n)
    for j, s in enumerate(seats):
        for i, agent in enumerate(agents):
            games, score = by_seat.get(agent, {}).get(s, (0, 0.0))
            if not games:
                continue
            offset = i - 0.4 + bar * (j + 0.5)
            agent_ax.barh(offset, score / games, height=bar, color=colors[s])
            if show_values:
                agent_ax.text(score / games + 0.01, offset, f"{score / games:.2f}", va="center", ha="left", fontsize=7)
    agent_ax.set_yticks(y, [wrap_label(a) for a in agents], fontsize=_label_fontsize(n))
    agent_ax.set_ylim(n - 0.5, -0.5)
    agent_ax.set_title("per agent (leaderboard order)", fontsize=10)
    agent_ax.set_xlabel("score per game (win 1, draw ½, loss 0)")
    for ax in (overall_ax, agent_ax):
        ax.axvline(mean_score, color="black", linestyle="--", linewidth=0.9)
        ax.grid(True, axis="x", alpha=0.3)
    agent_ax.set_xlim(0, 1.12)
    overall_ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    first = "; 'moved first' = whoever made the first move" if rows > k else ""
    fig.suptitle(f"Score by seat (seat = player number; seat 0 moves first unless the game's rules say otherwise{first})\n{title}",
                 fontsize=11)  # fmt: skip
    return fig
