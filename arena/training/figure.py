"""The training-curve figure: win rate (training window and evaluations) and loss against episodes.

Like the reports' training figures (Onitama 6.1-6.9, Santorini 5-8, Dots and Boxes 5-6): the top
panel shows the win, draw and loss rates over the last `window` training episodes (and, for DDPG with
a validity layer, the valid rate) and, as points, the win rate against the fixed evaluation opponent; the bottom panel the training loss
(for DDPG the critic's and the actor's) and the exploration rate epsilon on a second axis where the algorithm has
one. A curriculum's promotions (--promote-at) are dotted lines naming the new opponent. Several runs
(`comparison_figure`) are drawn on shared axes instead, as the Dots and Boxes report's figure 6
compares training with and without prioritized replay: each run's mean reward over its training
window (win rate - loss rate: rewards +1, 0, -1) and, where it has them, its evaluation win rates.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

WIN_COLOR, DRAW_COLOR, LOSS_COLOR, EVAL_COLOR, EPSILON_COLOR = "#2e7d32", "#9e9e9e", "#c62828", "#1565c0", "#ef6c00"
VALID_COLOR = "#6a1b9a"
#: Legends beside the panels, never over the curves (labels run long: "win rate against minimax:depth=2 (50 games...)").
LEGEND: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 8, "borderaxespad": 0.0}


def _series(rows: Sequence[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    points = [(row["episode"], row[key]) for row in rows if row.get(key) is not None]
    return [p[0] for p in points], [float(p[1]) for p in points]


def training_figure(rows: Sequence[dict[str, Any]], title: str | None = None) -> Figure:
    settings = next((row for row in rows if row["kind"] == "settings"), {})
    train = [row for row in rows if row["kind"] == "train"]
    evals = [row for row in rows if row["kind"] == "eval"]
    promotions = [row for row in rows if row["kind"] == "promote"]  # --promote-at: where the opponent got stronger
    fig = Figure(figsize=(11.0, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    window = train[-1]["window"] if train else settings.get("window", "?")
    for key, color, label in (("win_rate", WIN_COLOR, "win"), ("draw_rate", DRAW_COLOR, "draw"), ("loss_rate", LOSS_COLOR, "loss")):
        x, y = _series(train, key)
        top.plot(x, y, color=color, label=f"{label} rate, last {window} training episodes", linewidth=1.6)
    vx, vy = _series(train, "valid_rate")  # ddpg --validity: the Onitama report's valid rate (its figures 6.1-6.8)
    if vx:
        top.plot(vx, vy, color=VALID_COLOR, linestyle="--", linewidth=1.4,
                 label=f"valid rate: best action before the mask legal, last {window} training episodes")  # fmt: skip
    if evals:
        x, y = _series(evals, "win_rate")
        opponent, games = evals[-1]["opponent"], evals[-1]["games"]
        top.plot(x, y, "o-", color=EVAL_COLOR, label=f"win rate against {opponent} ({games} games, best action)", markersize=4)
    top.set_ylim(-0.02, 1.02)
    top.set_ylabel("rate")
    top.grid(alpha=0.3)
    ex, ey = _series(train, "epsilon")
    beside = {**LEGEND, "bbox_to_anchor": (1.09, 1.0)} if ex else LEGEND  # past the epsilon axis's labels
    top.legend(**beside)
    x, y = _series(train, "loss")
    ddpg = settings.get("algorithm") == "ddpg"
    bottom.plot(x, y, color="#424242", label="critic loss, squared TD error (mean since previous point)" if ddpg else
                "training loss (mean since previous point)")  # fmt: skip
    ax, ay = _series(train, "actor_loss")  # ddpg: the Onitama report's actor loss (its figures 6.1-6.9)
    if ax:
        actor = "-Q(s, mu(s)) + validity error" if settings.get("validity") not in (None, "actions_only") else "-Q(s, mu(s))"
        bottom.plot(ax, ay, color=VALID_COLOR, label=f"actor loss, {actor} (mean since previous point)")
    for row in promotions:
        for axis in (top, bottom):
            axis.axvline(row["episode"], color="#757575", linestyle=":", linewidth=1.2)
        top.annotate(f"now {row['opponent']}", (row["episode"], 1.0), xytext=(3, -3), textcoords="offset points",
                     rotation=90, va="top", fontsize=7, color="#424242")  # fmt: skip
    bottom.set_ylabel("loss")
    bottom.set_xlabel("training episodes")
    bottom.grid(alpha=0.3)
    handles, labels = bottom.get_legend_handles_labels()
    if ex:
        twin = bottom.twinx()
        twin.plot(ex, ey, color=EPSILON_COLOR, linestyle="--", label="epsilon (exploration)")
        twin.set_ylabel("epsilon")
        twin.set_ylim(-0.02, 1.02)
        more = twin.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    if handles:
        bottom.legend(handles, labels, **beside)
    if not train and not evals:
        top.text(0.5, 0.5, "no metrics recorded yet", ha="center", va="center", transform=top.transAxes)
    fig.suptitle("\n".join(textwrap.wrap(title or _title(settings, [str(row["opponent"]) for row in promotions]), 110)))
    return fig


ALGORITHM_NAMES = {"reinforce": "REINFORCE", "dqn": "DQN", "qlearning": "tabular Q-learning", "ddpg": "DDPG",
                   "value": "afterstate values", "treestrap": "TreeStrap(minimax)", "rootstrap": "RootStrap(alpha-beta)"}  # fmt: skip
#: Algorithms that learn the weights of a linear evaluation from search values (agents/train_bootstrap.py).
SEARCH_BOOTSTRAP = ("treestrap", "rootstrap")
NET_NAMES = {"mlp": "MLP", "resmlp": "residual MLP", "conv": "convolutional network", "fcn": "fully convolutional network",
             "mdrnn": "MDRNN"}


def _widths(values: Any) -> str:
    return "-".join(str(v) for v in values) if isinstance(values, list) and values else ""


def describe_learner(settings: dict[str, Any]) -> str:
    """What was trained, in words: `double DQN, dueling convolutional network 32-32`; tabular runs have no network."""
    algorithm = settings.get("algorithm", "?")
    name = ALGORITHM_NAMES.get(algorithm, str(algorithm))
    if algorithm == "qlearning":
        return name
    if algorithm in SEARCH_BOOTSTRAP:
        return f"{name}, linear weights, depth {settings.get('depth', '?')}"
    if algorithm == "dqn":
        if settings.get("returns"):  # chiamp's: no target network, so neither double nor plain
            name += " on Monte-Carlo returns"
        else:
            name = ("double " if settings.get("double", True) else "plain ") + name
        name += " with prioritized replay" if settings.get("prioritized") else ""
    net = settings.get("net", "mlp")
    widths = _widths(settings.get("hidden") if net in ("mlp", "resmlp") else settings.get("channels"))
    if net == "conv" and settings.get("hidden"):  # then one dense layer of the first hidden width
        widths += f" + dense {settings['hidden'][0]}"
    if net == "mdrnn":  # its cell's width (the first channel width), a per-cell dense layer per hidden width, the board representation
        # Files written before --cell was offered (no `cell` setting) used the first hidden width only.
        hidden = settings.get("hidden") if "cell" in settings else settings.get("hidden", [])[:1]
        widths = _widths(settings.get("channels", [])[:1]) + (f" + dense {_widths(hidden)}" if hidden else "")
        widths += f", {settings['representation']} representation" if settings.get("representation") else ""
        widths += f", {str(settings['cell']).upper()} cell" if settings.get("cell", "tanh") != "tanh" else ""  # the report's tanh unsaid
    network = " ".join(part for part in ("dueling" if settings.get("dueling") else "", NET_NAMES.get(net, str(net)), widths) if part)
    design = f" {settings['validity']}" if settings.get("validity") else ""  # --validity: the Onitama report's actor design
    critic = f"{design} actor, MLP {_widths(settings.get('hidden'))} critic" if algorithm == "ddpg" else ""
    targets = settings.get("targets")  # afterstate values learnt from a search's values, not the games' results
    searched = f", targets from {targets}" if algorithm == "value" and targets and targets != "result" else ""
    return f"{name}, {network}{critic}{searched}"


def _title(settings: dict[str, Any], promoted: Sequence[str] = ()) -> str:
    if not settings:
        return "Training"
    opponent = settings.get("opponent", "?")
    against = opponent + "".join(f", then {label}" for label in promoted)  # --promote-at's curriculum
    if opponent == "self" and settings.get("algorithm") in SEARCH_BOOTSTRAP:
        against = "itself"
    elif opponent == "self":
        against = "past versions of itself" + (" and given checkpoints" if settings.get("opponent_pool") else "")
    shaping = f", {settings['shaping']} reward shaping" if settings.get("shaping") else ""
    return f"Training {describe_learner(settings)} on {settings.get('game', '?')} against {against}{shaping}"


RUN_COLORS = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#424242")


def comparison_figure(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]], title: str | None = None) -> Figure:
    """Several runs on shared axes: (name, metrics rows) each. Top: the mean reward over each run's training window;
    bottom (when any run has evaluations): each run's evaluation win rates."""
    evaluated = any(row["kind"] == "eval" for _, rows in runs for row in rows)
    fig = Figure(figsize=(8.5, 6.5 if evaluated else 4.5), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2)) if evaluated else [fig.subplots(1, 1)]
    top = axes[0]
    for i, (name, rows) in enumerate(runs):
        settings = next((row for row in rows if row["kind"] == "settings"), {})
        train = [row for row in rows if row["kind"] == "train"]
        color = RUN_COLORS[i % len(RUN_COLORS)]
        label = f"{name}: {describe_learner(settings)}" if settings else name
        window = train[-1]["window"] if train else "?"
        x = [row["episode"] for row in train]
        top.plot(x, [row["win_rate"] - row["loss_rate"] for row in train], color=color, linewidth=1.6,
                 label=f"{label} (last {window} episodes)")  # fmt: skip
        evals = [row for row in rows if row["kind"] == "eval"]
        if evals:
            ex, ey = _series(evals, "win_rate")
            axes[1].plot(ex, ey, "o-", color=color, markersize=4,
                         label=f"{name}: against {evals[-1]['opponent']} ({evals[-1]['games']} games, best action)")  # fmt: skip
    top.set_ylim(-1.04, 1.04)
    top.set_ylabel("mean reward (win - loss rate)")
    top.grid(alpha=0.3)
    top.legend(loc="best", fontsize=8)
    if evaluated:
        axes[1].set_ylim(-0.02, 1.02)
        axes[1].set_ylabel("evaluation win rate")
        axes[1].grid(alpha=0.3)
        axes[1].legend(loc="best", fontsize=8)
    axes[-1].set_xlabel("training episodes")
    games = sorted({str(row.get("game", "?")) for _, rows in runs for row in rows if row["kind"] == "settings"})
    opponents = sorted({str(row.get("opponent", "?")) for _, rows in runs for row in rows if row["kind"] == "settings"})
    fig.suptitle(title or f"Training compared: {', '.join(games)} against {', '.join(opponents)}")
    return fig
