"""`arena serve --models-dir`: agents given by requests may read only files inside that folder (links followed). A
network or weights file elsewhere on the server's machine is refused with a 400 naming the field, before it is opened,
wherever a request gives an agent: a tournament's agents and challenger, a ladder's newcomer, a play page's opponents,
a named agent registered over HTTP (its parameters or its checkpoint), and a named agent of the command line's that
such requests name. Real ONNX and weights files; a real `arena serve` plays a network from the folder."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.linear_weights import write_weights
from arena.library import tokens
from arena.library.storage import open_database
from arena.reach import Reach
from arena.server import Settings
from tests._models import C4_SHAPE, REGISTRY, network, save
from tests.conftest import TEST_PLUGINS
from tests.server.conftest import Server
from tests.server.serving import http, wait_for
from tests.server.test_play import Player

REVERSI = REGISTRY.games["reversi"]()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A models folder with a network and a weights file; the same files outside it, and links from inside to them."""
    models, elsewhere = tmp_path / "models", tmp_path / "elsewhere"
    models.mkdir()
    elsewhere.mkdir()
    made: dict[str, Path] = {}
    for folder, where in ((models, "in"), (elsewhere, "out")):
        made[f"net_{where}"] = save(network(C4_SHAPE, 7, value=True), C4_SHAPE, folder / "c4.onnx", "onnx")
        made[f"weights_{where}"] = folder / "reversi.json"
        write_weights(made[f"weights_{where}"], REVERSI, [1.0] * len(REVERSI.feature_names), {})
    made["link"] = models / "link.onnx"
    made["link"].symlink_to(made["net_out"])
    made["dotdot"] = models / ".." / "elsewhere" / "c4.onnx"
    made["models"] = models
    return made


def settings(models: Path) -> Settings:
    return Settings(workers=0, poll_seconds=0.05, worker_id="test", plugins_dirs=(str(TEST_PLUGINS),), reach=Reach.of(models=models))


@pytest.fixture
def server(tmp_path: Path, files: dict[str, Path]) -> Iterator[Server]:
    server = Server(tmp_path / "arena.db", settings(files["models"]))
    yield server
    server.close()


def refused(response, field: str, path: Path | str) -> None:  # noqa: ANN001
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field, response.text
    assert f"reads {path}, which is not inside this server's --models-dir" in response.json()["error"], response.text


def test_every_request_that_gives_an_agent_is_checked(server: Server, files: dict[str, Path]) -> None:
    post, out = server.client.post, files["net_out"]
    c4 = {"game": "connect_four"}
    for path in (out, files["link"], files["dotdot"], "/no/such/folder/c4.onnx"):  # the same answer for a missing file
        refused(post("/api/v1/tournaments", json={**c4, "agents": ["random", f"neural:checkpoint={path}"]},
                     headers=server.auth), "agents", path)  # fmt: skip
    for agent in (f"mcts:simulations=2,model={out}", f"minimax:depth=1,eval=model,model={out}"):
        refused(post("/api/v1/tournaments", json={**c4, "agents": ["random", agent]}, headers=server.auth), "agents", out)
    refused(post("/api/v1/tournaments", json={"game": "reversi", "agents": ["random", f"linear:weights={files['weights_out']}"]},
                 headers=server.auth), "agents", files["weights_out"])  # fmt: skip
    gauntlet = {**c4, "agents": ["random", "greedy"], "format": "gauntlet", "challenger": f"neural:checkpoint={out}"}
    refused(post("/api/v1/tournaments", json=gauntlet, headers=server.auth), "challenger", out)
    refused(post("/api/v1/agents", json={"name": "mine", "type": "neural", "params": {"checkpoint": str(out)}},
                 headers=server.auth), "params", out)  # fmt: skip
    refused(post("/api/v1/agents", json={"name": "mine", "type": "neural", "checkpoint": str(out)}, headers=server.auth),
            "checkpoint", out)  # fmt: skip
    server.cli("agents", "register", "theirs", "--type", "neural", "--checkpoint", str(out), "--game", "connect_four")  # the command line: any file
    refused(post("/api/v1/tournaments", json={**c4, "agents": ["random", "theirs"]}, headers=server.auth), "agents", out)
    ladder = server.submit(**c4, agents=["random", "greedy"], format="ladder", budget=10)
    refused(post(f"/api/v1/tournaments/{ladder['id']}/agents", json={"agent": f"neural:checkpoint={out}"}, headers=server.auth),
            "agent", out)  # fmt: skip
    refused(post(f"/api/v1/tournaments/{ladder['id']}/agents", json={"agent": "theirs"}, headers=server.auth), "agent", out)
    # Nothing was written by the refusals; files in the folder pass everywhere, and weights given as numbers read none.
    assert [t["id"] for t in server.get("/api/v1/tournaments")] == [ladder["id"]]
    assert [a["name"] for a in server.get("/api/v1/agents")["named"]] == ["theirs"]
    inside = f"neural:checkpoint={files['net_in']}"
    assert post("/api/v1/tournaments", json={**c4, "agents": ["random", inside]}, headers=server.auth).status_code == 201
    assert post("/api/v1/tournaments", json={**gauntlet, "challenger": inside}, headers=server.auth).status_code == 201
    numbers = f"linear:weights={','.join(['1'] * len(REVERSI.feature_names))}"
    for agents in ([f"linear:weights={files['weights_in']}", numbers], [f"minimax:depth=1,eval=linear,weights={files['weights_in']}", "random"]):
        assert post("/api/v1/tournaments", json={"game": "reversi", "agents": agents}, headers=server.auth).status_code == 201
    mine = {"name": "mine", "type": "neural", "checkpoint": str(files["net_in"]), "game": "connect_four"}
    assert post("/api/v1/agents", json=mine, headers=server.auth).status_code == 201
    assert post(f"/api/v1/tournaments/{ladder['id']}/agents", json={"agent": "mine"}, headers=server.auth).status_code == 201


def test_the_play_page_checks_its_opponents(tmp_path: Path, files: dict[str, Path]) -> None:
    player = Player(tmp_path / "arena.db", settings(files["models"]))
    with player.client:
        player.sign_in()
        refused(player.post("/api/v1/play", {"game": "connect_four", "against": f"neural:checkpoint={files['link']}"}),
                "against", files["link"])  # fmt: skip
        assert player.client.get("/api/v1/tournaments").json() == []


def test_a_server_without_the_option_reads_any_file(tmp_path: Path, files: dict[str, Path]) -> None:
    server = Server(tmp_path / "arena.db")
    created = server.client.post("/api/v1/tournaments", headers=server.auth,
                                 json={"game": "connect_four", "agents": ["random", f"neural:checkpoint={files['net_out']}"]})  # fmt: skip
    server.close()
    assert created.status_code == 201, created.text


def test_a_real_server_plays_a_network_from_its_folder_and_refuses_one_elsewhere(tmp_path: Path, files: dict[str, Path],
                                                                                serve) -> None:  # noqa: ANN001  # fmt: skip
    db_path = tmp_path / "arena.db"
    token = tokens.create(open_database(f"sqlite:///{db_path}"), "writer")
    auth = {"Authorization": f"Bearer {token}"}
    server = serve(db_path, None, "--models-dir", str(files["models"]))
    assert f"agents given by requests may call any host and read {files['models'].resolve()}" in server.log.read_text()
    outside = http.post(server.url + "/api/v1/tournaments", headers=auth,
                        json={"game": "connect_four", "agents": ["random", f"neural:checkpoint={files['net_out']}"]})  # fmt: skip
    refused(outside, "agents", files["net_out"])
    created = http.post(server.url + "/api/v1/tournaments", headers=auth, json={
        "game": "connect_four", "agents": ["random", f"neural:checkpoint={files['net_in']}"], "rounds": 2})  # fmt: skip
    assert created.status_code == 201, created.text
    played = f"{server.url}/api/v1/tournaments/{created.json()['id']}"
    wait_for(lambda: http.get(played).json()["status"] == "done", "the tournament to finish")
    with sqlite3.connect(db_path) as c:
        reasons = [row[0] for row in c.execute("select reason from matches")]
    assert len(reasons) == 2 and set(reasons) <= {"normal", "max_turns"}, reasons
