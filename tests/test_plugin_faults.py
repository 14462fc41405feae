"""A plugin's own mistakes are its fault, told in one line: an agent whose constructor raises forfeits its matches
(in this process, in worker processes and in agent processes alike), a check_game or game constructor that raises
something other than ArenaError is one line and exit 2 on the CLI and a 400 naming the field over HTTP, and a
parameter whose own default it refuses is reported when the plugin loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.library import tokens
from arena.library.storage import open_database
from arena.plugins import get_registry, load
from arena.server import Settings, create_app
from tests.conftest import Arena, loose_plugin

SLOPPY = '''
import arena

class InitBoom(arena.Agent):
    info = arena.AgentInfo(id="initboom")

    def __init__(self, game, player, seed, **params):
        super().__init__(game, player, seed, **params)
        raise ValueError("could not load my table")

    def act(self, state):
        return state.legal_actions()[0]

class Refuser(arena.Agent):
    info = arena.AgentInfo(id="refuser")

    def __init__(self, game, player, seed, **params):
        super().__init__(game, player, seed, **params)
        raise arena.ArenaError("refuser: its table file is gone")

    def act(self, state):
        return state.legal_actions()[0]

class CheckBoom(arena.Agent):
    info = arena.AgentInfo(id="checkboom")

    @classmethod
    def check_game(cls, game, params):
        assert game.info.id == "nowhere"

    def act(self, state):
        return state.legal_actions()[0]

class BadDefault(arena.Agent):
    info = arena.AgentInfo(id="baddefault", params=(arena.Param("noise", 2.0, "a chance", min=0, max=1),))

    def act(self, state):
        return state.legal_actions()[0]

class Netty(arena.Agent):
    info = arena.AgentInfo(id="netty")
    remote = True  # its own way over a network, without Arena's RemoteAgent (no deadline())

    def act(self, state):
        return state.legal_actions()[0]

class Fussy(arena.Game):
    info = arena.GameInfo(id="fussy", version="1", name="Fussy", params=(arena.Param("size", 3, "sides"),))

    def __init__(self, **params):
        super().__init__(**params)
        if self.params["size"] > 5:
            raise ValueError("too big a board")

    @property
    def num_distinct_actions(self):
        return 1

    def new_initial_state(self, seed=None):
        raise NotImplementedError

@arena.hookimpl
def register_agents(register):
    register(InitBoom)
    register(CheckBoom)
    register(BadDefault)
    register(Netty)
    register(Refuser)

@arena.hookimpl
def register_games(register):
    register(Fussy)
'''


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    return loose_plugin(tmp_path / "plugins", "sloppy", SLOPPY)


@pytest.mark.parametrize("how", [(), ("--workers", "2"), ("--isolate",)], ids=["in-process", "workers", "isolated"])
def test_an_agent_whose_constructor_raises_forfeits_its_matches(tmp_path: Path, plugins: Path, how: tuple[str, ...]) -> None:
    arena = Arena(tmp_path / "arena.db", plugins_dirs=(plugins,))
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "initboom,random", "--rounds", "2", "--quiet", *how)
    matches = arena.json("matches")
    assert len(matches) == 2 and {m["reason"] for m in matches} == {"agent_error"}
    assert sorted(m["detail"] for m in matches) == [f"seat {seat}: the agent could not be made: ValueError: could not load my table"
                                                     for seat in (0, 1)]  # the same words in every mode  # fmt: skip
    assert all(s["outcome"] == ("loss" if s["agent"] == "initboom" else "win") for m in matches for s in m["seats"])
    assert arena.json("tournaments")[0]["status"] == "done"


@pytest.mark.parametrize("how", [(), ("--workers", "2"), ("--isolate",)], ids=["in-process", "workers", "isolated"])
def test_an_agent_that_cannot_be_made_as_configured_stops_the_run_in_one_line(tmp_path: Path, plugins: Path,
                                                                              how: tuple[str, ...]) -> None:  # fmt: skip
    """An ArenaError from the constructor (its file gone since the tournament began) is not the agent's move: the run
    stops in one line, nothing scored, and the tournament is stopped (not left running with nobody playing it), to be
    resumed once it is mended."""
    arena = Arena(tmp_path / "arena.db", plugins_dirs=(plugins,))
    result = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "refuser,random", "--rounds", "2", *how, ok=False)
    assert result.exit_code == 2 and result.stderr.strip().splitlines()[-1] == "Error: refuser: its table file is gone"
    assert "Traceback" not in result.stderr
    assert arena.json("matches") == [] and arena.json("tournaments")[0]["status"] == "stopped"


def test_plugin_code_raising_is_one_line_on_the_cli(tmp_path: Path, plugins: Path) -> None:
    arena = Arena(tmp_path / "arena.db", plugins_dirs=(plugins,))
    for args, words in (
        (("--game", "tic_tac_toe", "--agents", "checkboom,random"), "agent 'checkboom': its check_game raised AssertionError"),
        (("--game", "fussy:size=9", "--agents", "random,random"), "game 'fussy' raised ValueError: too big a board"),
    ):
        result = arena("run-tournament", *args, ok=False)
        assert result.exit_code == 2 and result.stderr.strip().splitlines()[-1] == f"Error: {words}", result.stderr
        assert "Traceback" not in result.stderr
    assert arena.json("tournaments") == []  # nothing written


def test_plugin_code_raising_is_a_400_naming_the_field(tmp_path: Path, plugins: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    auth = {"Authorization": f"Bearer {tokens.create(database, 'writer')}"}
    app = create_app(database, get_registry((str(plugins),)), Settings(workers=0, plugins_dirs=(str(plugins),)))
    with TestClient(app) as client:
        for body, field, words in (
            ({"game": "tic_tac_toe", "agents": ["checkboom", "random"]}, "agents", "its check_game raised AssertionError"),
            ({"game": "fussy:size=9", "agents": ["random", "random"]}, "game", "raised ValueError: too big a board"),
        ):
            response = client.post("/api/v1/tournaments", json=body, headers=auth)
            assert response.status_code == 400 and response.json()["field"] == field, response.text
            assert words in response.json()["error"]
        response = client.post("/api/v1/agents", json={"name": "boom", "type": "checkboom", "game": "tic_tac_toe"}, headers=auth)
        assert response.status_code == 400 and "its check_game raised AssertionError" in response.json()["error"], response.text


def test_a_parameter_refusing_its_own_default_is_said_at_load_and_must_be_given(tmp_path: Path, plugins: Path) -> None:
    """A default its own parameter refuses (a placeholder for a value every spec must give, or a mistake) is said when the
    plugin loads; a spec that gives the value plays, one that does not is refused in one line before anything is written."""
    registry = load([plugins])
    assert "baddefault" in registry.agents
    assert [e for e in registry.errors if "baddefault" in e] == [
        "plugin 'sloppy' registered agent 'baddefault': the default of its parameter 'noise' is not a value it takes (bad "
        "value 2.0 for parameter 'noise' of agent 'baddefault': must be <= 1); a spec must give it"
    ]
    assert not [e for e in load([]).errors if "default" in e]  # every built-in's defaults are values it takes
    arena = Arena(tmp_path / "arena.db", plugins_dirs=(plugins,))
    result = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "baddefault,random", ok=False)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("Error: agent 'baddefault' needs noise=VALUE: the default of its")
    assert arena.json("tournaments") == []  # nothing written
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "baddefault:noise=0.5,random", "--quiet")
    assert len(arena.json("matches")) == 1


def test_a_plugin_agent_flagged_remote_gets_the_time_per_move_and_the_allowance(tmp_path: Path, plugins: Path) -> None:
    arena = Arena(tmp_path / "arena.db", plugins_dirs=(plugins,))
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "netty,random", "--time-per-move", "1", "--quiet")
    (match,) = arena.json("matches")
    assert match["reason"] in ("normal", "turn_limit") and arena.json("tournaments")[0]["status"] == "done"


BAD_END = '''
import arena
from games.tic_tac_toe import TicTacToe, TicTacToeState

class BadEndState(TicTacToeState):
    __slots__ = ("how",)

    def returns(self):
        if self.how == "raise":
            raise ZeroDivisionError("scoring bug")
        if self.how == "short":
            return [1.0]
        if self.how == "nan":
            return [float("nan"), 0.0]
        return super().returns()

class BadEnd(TicTacToe):
    """Tic-tac-toe whose returns go wrong in the deals of odd seeds (seed 0, the quick check's, is fine)."""
    info = arena.GameInfo(id="badend", version="1", name="Bad end",
                          params=(arena.Param("how", "raise", "how returns() fails", choices=("raise", "short", "nan")),))

    def new_initial_state(self, seed=0):
        state = BadEndState()
        state.how = self.params["how"] if seed % 2 else "fine"
        return state

@arena.hookimpl
def register_games(register):
    register(BadEnd)
'''


@pytest.mark.parametrize(("how", "fragment"), [
    ("raise", "): ZeroDivisionError: scoring bug"),
    ("short", "the game's returns at the end are [1.0], not one finite number per seat (2)"),
    ("nan", "the game's returns at the end are [nan, 0.0], not one finite number per seat (2)"),
])  # fmt: skip
def test_a_game_whose_returns_fail_at_the_end_is_a_game_error_and_the_run_goes_on(tmp_path: Path, how: str, fragment: str) -> None:
    """Its matches are `game_error` with the game's fault in one line (never rated); the tournament plays on to
    done. Before, the run ended in a traceback with the tournament left `running` (or a NaN score was rated)."""
    arena = Arena(tmp_path / "arena.db", (loose_plugin(tmp_path / "plugins", "bad_end", BAD_END),))
    arena("run-tournament", "--game", f"badend:how={how}", "--agents", "random,random:seed=1", "--rounds", "8", "--quiet")
    rows = arena.rows("select reason, detail from matches")
    assert len(rows) == 8 and {reason for reason, _ in rows} == {"normal", "game_error"}, rows
    assert all(detail.startswith("the game") and fragment in detail for reason, detail in rows if reason == "game_error"), rows
    assert arena.rows("select status from tournaments") == [("done",)]


NEEDY = '''
import arena
from games.tic_tac_toe import TicTacToe

class Needy(TicTacToe):
    info = arena.GameInfo(id="needy", version="1", name="Needy",
                          params=(arena.Param("stones", 0, "every spec gives it", min=1, max=100),))

@arena.hookimpl
def register_games(register):
    register(Needy)
'''


def test_a_game_that_needs_a_parameter_is_listed_and_the_others_too(tmp_path: Path) -> None:
    """`arena games` and GET /api/v1/games list a plugin game that cannot be made at its defaults (the loader allows
    it: a spec must give the value), without its shapes; before, one such game left no game listed (an error, a 400)."""
    plugins = loose_plugin(tmp_path / "plugins", "needy", NEEDY)
    listed = {g["id"]: g for g in Arena(tmp_path / "arena.db", (plugins,)).json("games")}
    assert "tic_tac_toe" in listed and (listed["needy"]["num_actions"], listed["needy"]["state"]) == (None, None)
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    client = TestClient(create_app(database, get_registry([str(plugins)]), Settings()))
    answer = client.get("/api/v1/games")
    assert answer.status_code == 200 and "needy" in {g["id"] for g in answer.json()}, answer.text
    assert client.get("/").status_code == 200


NUL_RAISER = '''
import arena

class NulRaiser(arena.Agent):
    info = arena.AgentInfo(id="nulraiser")

    def act(self, state):
        raise ValueError("bad\\x00thing")

@arena.hookimpl
def register_agents(register):
    register(NulRaiser)
'''


def test_an_error_text_holding_a_nul_is_stored_alike_on_both_databases(tmp_path: Path, database_url: str) -> None:
    """PostgreSQL's text holds no NUL: an agent's error message with one ended the run in a traceback there (COPY
    refused it, nothing stored, every --resume the same). Both databases store it as the two characters \\0."""
    arena = Arena(database_url, (loose_plugin(tmp_path / "plugins", "nul_raiser", NUL_RAISER),))
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "nulraiser,random", "--rounds", "2", "--quiet")
    assert arena.rows("select reason, detail from matches") == [("agent_error", "ValueError: bad\\0thing")] * 2
    assert arena.rows("select status from tournaments") == [("done",)]
