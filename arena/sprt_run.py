"""Running an SPRT inside a tournament: from B's score in each stored or played match to the test's state.

The counts, the LLR and the decision follow the matches in schedule order, stopping at the first
unit (a game, or a pair of games with seats swapped that share an opening) where the LLR leaves its
bounds. The run stores the test's state with each batch of matches, in the same transaction
(db.queries.save_results), and a killed run resumes the test from that stored state once it has
checked it against the state its stored matches give (a row that disagrees is refused); `arena sprt`
recomputes the state from the stored matches and says whether it agrees with the stored one.
Tournaments stored before the state was (migration 0010) resume from their matches.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena import sprt
from arena.errors import ArenaError
from arena.results import get_tournament
from db import queries
from db.records import MatchRecord
from db.session import Database

#: The round limit of an SPRT run when --rounds is not given: a test that long is inconclusive.
DEFAULT_SPRT_ROUNDS = 1000


def sprt_settings(text: str, labels: Sequence[str], players: int, paired: bool) -> dict[str, Any]:
    """The settings entry of a tournament run as an SPRT of the second agent (B) against the first (A)."""
    params = sprt.parse_sprt(text)
    if players != 2 or len(labels) != 2:
        raise ArenaError(f"--sprt tests two agents in a two-player game (is B stronger than A?), not {len(labels)} agents in a "
                         f"{players}-player one: give --agents A,B")  # fmt: skip
    return {"params": params.to_json(), "base": labels[0], "test": labels[1], "paired": paired}


def params_of(entry: Mapping[str, Any]) -> sprt.SprtParams:
    return sprt.SprtParams(**entry["params"])


@dataclass
class SprtState:
    """Counts in schedule order and, once decided, the unit where the test stopped."""

    params: sprt.SprtParams
    paired: bool
    scores: dict[int, float | None] = field(default_factory=dict)  # schedule index -> B's score (None: game_error)
    counts: list[int] = field(default_factory=list)
    units: int = 0  # games (or pairs) counted so far: a contiguous prefix of the schedule
    llr: float = 0.0
    decided: str | None = None

    def __post_init__(self) -> None:
        self.counts = [0] * (5 if self.paired else 3)

    def add(self, index: int, score: float | None) -> list[str]:
        """Record one match; returns a progress line per unit that completes (none once decided).

        A match the game broke (`game_error`, score None) is nobody's result: its unit is passed over uncounted."""
        self.scores[index] = score
        lines = []
        size = 2 if self.paired else 1
        while self.decided is None and all(self.units * size + k in self.scores for k in range(size)):
            unit_scores = [self.scores[self.units * size + k] for k in range(size)]
            self.units += 1
            if None in unit_scores:
                continue
            self.counts[round(sum(unit_scores) * 2)] += 1  # type: ignore[arg-type]
            self.llr = sprt.llr(self.counts, self.params)
            self.decided = sprt.decision(self.llr, self.params)
            unit = "pair" if self.paired else "game"
            lines.append(f"{unit} {self.units}: LLR {self.llr:.2f} (bounds {self.params.lower_bound:.2f}, "
                         f"{self.params.upper_bound:.2f})" + (f": {self.decided} accepted" if self.decided else ""))  # fmt: skip
        return lines


    def stored(self) -> queries.SprtStateValues:
        """What is stored: the counted prefix's figures and the scores of stored matches past it."""
        size = 2 if self.paired else 1
        pending = {index: score for index, score in self.scores.items() if index >= self.units * size}
        return queries.SprtStateValues(self.units, list(self.counts), self.llr, self.decided, pending)

    @classmethod
    def from_stored(cls, params: sprt.SprtParams, paired: bool, values: queries.SprtStateValues) -> SprtState:
        state = cls(params, paired)
        state.units, state.counts, state.llr, state.decided = values.units, list(values.counts), values.llr, values.decision
        state.scores = dict(values.pending)
        return state


def agrees(state: SprtState, stored: queries.SprtStateValues) -> bool:
    """The state recomputed from the matches is the one the run stored (its counted prefix, decision and the scores
    of the matches past that prefix)."""
    return (state.units, state.counts, state.decided) == (stored.units, list(stored.counts), stored.decision) and abs(
        state.llr - stored.llr) <= 1e-9 and state.stored().pending == dict(stored.pending)  # fmt: skip


def _describe(units: int, counts: Sequence[int], llr: float, decision: str | None, paired: bool) -> str:
    return (f"{units} {'pairs' if paired else 'games'}, counts {list(counts)}, LLR {llr:.2f}, "
            f"{f'{decision} accepted' if decision else 'undecided'}")  # fmt: skip


def checked_state(entry: Mapping[str, Any], records: Iterable[MatchRecord], saved: queries.SprtStateValues | None,
                  tournament_id: int) -> SprtState:  # fmt: skip
    """The state a run resumes from: the one it stored, once checked against the one its stored matches give
    (replay_state, what `arena sprt` recomputes); a stored state that disagrees (a hand-edited or corrupt row) is
    refused. With no stored state (nothing played yet, or a tournament stored before migration 0010): the replay."""
    state = replay_state(entry, records)
    if saved is None:
        return state
    if not agrees(state, saved):
        paired = bool(entry["paired"])
        stored = _describe(saved.units, saved.counts, saved.llr, saved.decision, paired)
        replayed = _describe(state.units, state.counts, state.llr, state.decided, paired)
        raise ArenaError(
            f"tournament {tournament_id}: its stored SPRT state ({stored}) "
            f"disagrees with the one its stored matches give ({replayed}): "
            f"the row in sprt_states was edited or is corrupt, so the test is not resumed (`arena sprt {tournament_id}` shows both)"
        )  # fmt: skip
    return SprtState.from_stored(params_of(entry), bool(entry["paired"]), saved)


def score_of(seating: Sequence[int], ranks: Sequence[int]) -> float | None:
    """B's (position 1) score against A (position 0) in one match: 1 ahead, 0.5 level, 0 behind; None for a match
    the game broke (`game_error`: every rank is 0)."""
    b, a = ranks[seating.index(1)], ranks[seating.index(0)]
    return _score(b, a)


def _score(mine: int, other: int) -> float | None:
    if mine == 0 or other == 0:
        return None
    return 1.0 if mine < other else 0.5 if mine == other else 0.0


def record_scores(records: Iterable[MatchRecord], test: str) -> dict[int, float | None]:
    """Schedule index -> B's score, from stored matches."""
    scores = {}
    for record in records:
        mine = [seat.rank for seat in record.seats if seat.agent == test]
        other = [seat.rank for seat in record.seats if seat.agent != test]
        if mine and other:
            scores[record.index] = _score(mine[0], other[0])
    return scores


def replay_state(entry: Mapping[str, Any], records: Iterable[MatchRecord]) -> SprtState:
    """The test's state after the stored matches, in schedule order."""
    state = SprtState(params_of(entry), bool(entry["paired"]))
    for index, score in sorted(record_scores(records, entry["test"]).items()):
        state.add(index, score)
    return state


class SprtMonitor:
    """Follows a tournament's matches as they are played (in schedule order) and says when to stop.

    It starts from the state the run stored (`saved`) once checked against the stored matches (checked_state), or,
    when none was stored, from the stored matches."""

    def __init__(self, entry: Mapping[str, Any], stored: Iterable[MatchRecord], log: Callable[[str], None] | None,
                 saved: queries.SprtStateValues | None = None, tournament_id: int = 0) -> None:  # fmt: skip
        self.entry = entry
        self.state = checked_state(entry, stored, saved, tournament_id)
        self.log = log

    @property
    def decided(self) -> bool:
        return self.state.decided is not None

    def update(self, schedule_index: int, seating: Sequence[int], ranks: Sequence[int]) -> bool:
        """Count one played match; True once the test has decided (play stops)."""
        for line in self.state.add(schedule_index, score_of(seating, ranks)):
            if self.log:
                self.log(line)
        return self.decided


def sprt_report(database: Database, key: str, text: str | None = None) -> dict[str, Any]:
    """`arena sprt TOURNAMENT`: the test recomputed from the stored matches (its own settings, or --sprt for any
    tournament of two agents, B being the second)."""
    tournament = get_tournament(database, key)
    settings = json.loads(tournament.settings)
    entry = settings.get("sprt")
    if text is not None or entry is None:
        if text is None:
            raise ArenaError(f"tournament {tournament.id} was not run with --sprt: give --sprt elo0=E0,elo1=E1")
        labels = [agent["label"] for agent in settings.get("agents", [])]
        entry = sprt_settings(text, labels, tournament.players, settings.get("set_size", 1) == 2)
    with database.session() as session:
        records = queries.load_matches(session, tournament_id=tournament.id)
        saved = queries.load_sprt_state(session, tournament.id) if text is None else None
    state = replay_state(entry, records)
    report = sprt.summary(state.params, state.counts, entry["test"], entry["base"],
                          finished=tournament.status == "done")  # fmt: skip
    report["tournament"] = tournament.id
    report["stored"] = None if saved is None else {"units": saved.units, "counts": list(saved.counts), "llr": saved.llr,
                                                   "decision": saved.decision, "agrees": agrees(state, saved)}  # fmt: skip
    return report


def sprt_report_if_run(database: Database, key: str) -> dict[str, Any] | None:
    """sprt_report for a tournament run with --sprt, else None."""
    if "sprt" not in json.loads(get_tournament(database, key).settings):
        return None
    return sprt_report(database, key)


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The end of an SPRT run, as printed."""

    def elo(value: float | None, unbounded: str) -> str:  # None: infinite (every game or pair won, or lost)
        return unbounded if value is None else f"{round(value, 1) + 0.0:+.1f}"  # (+ 0.0: -0.04 is +0.0, not -0.0)

    unit = "pairs" if report["statistic"] == "pentanomial" else "games"
    stored = report.get("stored")
    warning = [] if stored is None or stored["agrees"] else [
        (f"warning: the state the run stored ({stored['units']} {unit}, counts {stored['counts']}, LLR {stored['llr']:.2f}) "
         "differs from the one recomputed from the stored matches (shown): matches were changed after the run")]  # fmt: skip
    test, base, elo0, elo1 = report["test"], report["base"], report["elo0"], report["elo1"]
    def likelier(accepted: str, elo: float, other: float) -> str:
        return f"{accepted} accepted: {elo:+g} Elo for {test} against {base} is far likelier than {other:+g}"

    verdict = {"H1": likelier("H1", elo1, elo0) + (f" ({test} is stronger)" if elo0 >= 0 else ""),
               "H0": likelier("H0", elo0, elo1) + (f" ({test} is not stronger by {elo1:g} Elo)" if elo1 > 0 else ""),
               "continue": "no decision yet (the test goes on)",
               "inconclusive": "no decision: the matches ran out first (the round limit, or the run's own test ended it)",
               }[report["decision"]]  # fmt: skip
    return [
        f"SPRT {report['test']} vs {report['base']} ({report['model']} Elo, elo0={report['elo0']:g}, elo1={report['elo1']:g}, "
        f"alpha={report['alpha']:g}, beta={report['beta']:g}; {report['statistic']} over {report[unit]} {unit}: {report['counts']})",
        f"LLR {report['llr']:.2f} (bounds {report['lower_bound']:.2f}, {report['upper_bound']:.2f}): {verdict}",
        f"Elo difference {elo(report['elo'], 'unbounded')} (95% {elo(report['elo_low'], 'no lower limit')} .. "
        f"{elo(report['elo_high'], 'no upper limit')}), LOS {100 * report['los']:.1f}%",
    ] + warning  # fmt: skip
