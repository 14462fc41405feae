"""Networks inside search: minimax with eval=model, mcts with model=FILE (PUCT priors and values, batched leaves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.mcts import MCTSAgent
from agents.minimax import MinimaxAgent
from agents.models.evaluator import NetworkEvaluator
from arena.testing import check_agent
from tests._models import C4, network, save_all, torch
from tests._models import C4_SHAPE as SHAPE
from tests.test_neural import one_error_line


@pytest.fixture(scope="module")
def nets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    favourite = network(SHAPE, 7, seed=3, value=True)
    with torch.no_grad():  # priors that put nearly everything on column 5, whatever the position
        favourite.policy.weight.zero_()
        favourite.policy.bias.copy_(torch.tensor([0.0, 0, 0, 0, 0, 8, 0]))
    return save_all(tmp_path_factory.mktemp("search"), SHAPE, {
        "value": (network(SHAPE, 7, seed=1, value=True), "value.onnx", "onnx"),
        "q": (network(SHAPE, 7, seed=2), "q.pt", "torchscript"),
        "favourite": (favourite, "favourite.onnx", "onnx"),
    })  # fmt: skip


def test_minimax_with_a_network_plays_its_best_leaf(nets):
    """Depth 1: the move whose position the network values best for the mover (value output, or best Q)."""
    for kind in ("value", "q"):
        agent = MinimaxAgent(C4, 0, 1, depth="1", eval="model", model=str(nets[kind]))
        evaluator = NetworkEvaluator(C4, str(nets[kind]))
        state = C4.new_initial_state(0)
        for action in (3, 3, 2):
            state.apply(action)
        values = {}
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            values[action] = evaluator.value(child, 1)
        best = max(values.values())
        assert agent.act(state) in [a for a, v in values.items() if v == best]
        check_agent(MinimaxAgent, C4, {"depth": "2", "eval": "model", "model": str(nets[kind])}, seeds=range(1))


def test_mcts_with_a_network_follows_its_priors_and_batches_leaves(nets):
    agent = MCTSAgent(C4, 0, 1, model=str(nets["favourite"]), simulations="24", leaf_batch="8")
    assert agent.act(C4.new_initial_state(0)) == 5
    assert agent.stats["simulations"] == 24 and agent.puct.network.evaluations <= 25
    for batch in ("1", "5"):
        check_agent(MCTSAgent, C4, {"model": str(nets["value"]), "simulations": "20", "leaf_batch": batch}, seeds=range(1))
    check_agent(MCTSAgent, C4, {"model": str(nets["q"]), "simulations": "10"}, seeds=range(1))


def test_search_with_networks_in_a_tournament(arena_cli, nets):
    agents = (f"minimax:depth=2,eval=model,model={nets['value']},mcts:simulations=16,model={nets['q']},"
              f"mcts:simulations=16,model={nets['value']},leaf_batch=4,seed=1")  # fmt: skip
    for options in ([], ["--workers", "2"]):
        arena_cli("run-tournament", "--game", "connect_four", "--agents", agents, "--rounds", "2", "--seed", "2", "--quiet", *options)
    first, second = ([(m["turns"], [s["score"] for s in m["seats"]]) for m in arena_cli.json("matches", "--tournament", t)] for t in "12")
    assert first == second and len(first) == 6
    versions = {row[0] for row in arena_cli.rows("select agent_version from match_seats")}
    assert all("+" in version for version in versions), versions  # the network's digest is in every version


def test_search_with_networks_refuses_what_it_cannot_do(arena_cli, nets):
    cases = [
        ("connect_four", "minimax:eval=model", "needs model=FILE"),
        ("connect_four", f"minimax:model={nets['value']}", "model=FILE is for eval=model"),
        ("gwent_lite", f"mcts:model={nets['value']}", "perfect-information games only"),
        ("tic_tac_toe", f"mcts:model={nets['value']}", "tic_tac_toe gives observations of shape [batch, 3, 3, 3]"),
    ]
    for game_id, agent, message in cases:
        one_error_line(arena_cli("run-tournament", "--game", game_id, "--agents", f"{agent},random", ok=False), message)
