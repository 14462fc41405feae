"""Fixtures for the server's tests: an app per test over a real SQLite file (the queue's also over PostgreSQL), tokens, a played tournament."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from arena.library import tokens
from arena.library import tournaments as tournaments_library
from arena.library.storage import Database, open_database
from arena.plugins import Registry, get_registry
from arena.server import Settings, create_app
from arena.server.runner import drain
from tests.conftest import TEST_PLUGINS, Arena

SETTINGS = Settings(workers=0, poll_seconds=0.05, worker_id="test", lease_seconds=5, plugins_dirs=(str(TEST_PLUGINS),))


class Server:
    """An app (no queue workers: `play()` drains the queue in this process), its client and a writer's token."""

    def __init__(self, db: Path | str, settings: Settings = SETTINGS) -> None:
        self.db_path = db if isinstance(db, Path) else None
        self.database: Database = open_database(db if isinstance(db, str) else f"sqlite:///{db}")
        self.registry: Registry = get_registry((str(TEST_PLUGINS),))
        self.settings = settings
        self.client = TestClient(create_app(self.database, self.registry, settings))
        self.token = tokens.create(self.database, "writer")
        self.auth = {"Authorization": f"Bearer {self.token}"}
        self.cli = Arena(db)

    def submit(self, **body: Any) -> dict[str, Any]:
        response = self.client.post("/api/v1/tournaments", json=body, headers=self.auth)
        assert response.status_code == 201, response.text
        return response.json()

    def play(self) -> list[tuple[int, str]]:
        return drain(self.database, self.registry, self.settings)

    def get(self, path: str, **params: Any) -> Any:
        response = self.client.get(path, params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def status(self, tournament_id: int) -> str:
        return tournaments_library.one(self.database, tournament_id)["status"]

    def close(self) -> None:
        """What the app's lifespan would close (this client does not run it), then the database's connections."""
        self.client.app.state.answers.version.close()  # type: ignore[attr-defined]
        self.database.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "arena.db")
    yield server
    server.close()


@pytest.fixture
def queue_server(database_url: str) -> Iterator[Server]:
    """The same server over a SQLite file and over PostgreSQL (claims there take rows FOR UPDATE SKIP LOCKED)."""
    server = Server(database_url)
    yield server
    server.close()


@pytest.fixture
def played(server: Server) -> Server:
    """A server whose database holds one played tournament (connect four, three agents, 4 rounds)."""
    server.submit(game="connect_four", agents=["random", "greedy", "center"], rounds=4, seed=7, name="played")
    assert server.play() == [(1, "done")]
    return server
from tests.server.serving import serve  # noqa: E402,F401  (the fixture that starts a real arena serve)
