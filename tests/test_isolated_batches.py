"""Isolated agents answer in batches: one message per step across the process boundary (arena.isolation),
the same results as one match at a time, and the same faults (a crash or a timeout forfeits the seats the
process plays, with the reason). The network is a real ONNX file made here; agent processes are real."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from arena import tournament
from arena.isolation import AgentProcess
from arena.observations import observation_shape
from arena.plugins import get_registry
from db.session import open_database
from tests._models import network, save
from tests.conftest import TEST_PLUGINS

REGISTRY = get_registry((str(TEST_PLUGINS),))


@pytest.fixture(scope="module")
def c4_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    game = REGISTRY.games["connect_four"]()
    shape = observation_shape(game)
    return save(network(shape, 7, seed=4, value=True), shape, tmp_path_factory.mktemp("iso") / "c4.onnx", "onnx")


@pytest.fixture
def messages(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Every message the runner sends to its agent processes, by kind (and `rows`: decisions sent in batches)."""
    sent: Counter = Counter()
    call = AgentProcess._call

    def counted(self: AgentProcess, message: tuple[Any, ...], deadline: float, what: str) -> Any:
        sent[message[0]] += 1
        if message[0] == "act_batch":
            sent["rows"] += len(message[1])
        return call(self, message, deadline, what)

    start = AgentProcess._start

    def started(self: AgentProcess) -> None:
        sent["processes"] += 1  # agent processes started
        start(self)

    monkeypatch.setattr(AgentProcess, "_call", counted)
    monkeypatch.setattr(AgentProcess, "_start", started)
    return sent


def run(tmp_path: Path, game: str, agents: str, rounds: int, concurrent: int, isolate: bool = True,
        time_per_move: float | None = None) -> list[tuple]:  # fmt: skip
    """Play a tournament (one worker); its matches as (index, turns, reason, detail, scores, agents)."""
    database = open_database(f"sqlite:///{tmp_path / f'{game}-{concurrent}-{isolate}.db'}")
    request = tournament.TournamentRequest(game=game, agents=agents, rounds=rounds, seed=7, time_per_move=time_per_move)
    number = tournament.create(REGISTRY, database, request)
    tournament.play(database, REGISTRY, number, plugins_dirs=(str(TEST_PLUGINS),), isolate=isolate, concurrent=concurrent)
    with database.session() as session:
        from db import queries

        matches = queries.load_matches(session, tournament_id=number)
    return [(m.index, m.turns, m.reason, m.detail, tuple(seat.score for seat in m.seats), m.agents()) for m in matches]


def test_a_network_batch_crosses_to_its_process_in_one_message_per_step(tmp_path, c4_onnx, messages):
    agents = f"neural:checkpoint={c4_onnx},sample=true,neural:checkpoint={c4_onnx},sample=true,seed=1"
    batched = run(tmp_path, "connect_four", agents, rounds=16, concurrent=16)
    assert messages["act"] == 0 and messages["act_batch"] > 0
    assert messages["rows"] >= 3 * messages["act_batch"], messages  # each message carries many decisions
    assert messages["processes"] == 1  # the two entries differ only in their seed: one process, one batch per step
    decisions = messages["rows"]
    messages.clear()
    assert run(tmp_path, "connect_four", agents, rounds=16, concurrent=1) == batched  # one match at a time, one act each
    assert messages["act_batch"] == 0 and messages["act"] == decisions and messages["processes"] == 2  # one per seat
    assert run(tmp_path, "connect_four", agents, rounds=16, concurrent=16, isolate=False) == batched
    assert {match[2] for match in batched} == {"normal"} and len(batched) == 16


FAULTER = "batch_faulter:after=1,how={how}"  # its batch fails at its second move of every match
STEADY = "batch_faulter:after=9"  # never reaches its fault in tic-tac-toe


@pytest.mark.parametrize("how,reasons", [("raise", {"agent_error"}), ("exit", {"agent_crashed"}),
                                         ("hang", {"timeout", "agent_crashed"})])  # fmt: skip
def test_a_fault_in_an_isolated_batch_forfeits_the_seats_its_process_plays(tmp_path, how, reasons):
    """Two batch-capable agents, each in its own process. The faulty one loses each of its matches, with the
    reason; the other plays on. Its process killed (timeout) or dead (exit) takes its seats of the matches that
    were waiting for the other agent with it: `agent_crashed` at their next move; a new process serves the
    next matches."""
    time_per_move = 0.2 if how == "hang" else None
    agents = f"{FAULTER.format(how=how)},{STEADY}"
    matches = run(tmp_path, "tic_tac_toe", agents, rounds=6, concurrent=6, time_per_move=time_per_move)
    assert len(matches) == 6
    assert {reason for _index, _turns, reason, *_ in matches} == reasons
    for _index, _turns, reason, detail, scores, seated in matches:
        assert seated[scores.index(-1.0)] == FAULTER.format(how=how), (reason, detail, seated)
        if reason == "agent_error":
            assert detail == "RuntimeError: boom from batch_faulter"
        elif reason == "timeout":
            assert "agent process killed" in detail
        else:
            assert "died" in detail or "killed" in detail, detail
    if how == "raise":  # an agent's own error: the same results as in the runner's process
        assert matches == run(tmp_path, "tic_tac_toe", agents, rounds=6, concurrent=6, isolate=False)
