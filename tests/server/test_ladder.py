"""The continuous ladder in-process: creation over the API, joins (good and bad), newcomers first, idling, the CLI verbs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from arena import ladder, tournament
from arena.adaptive import all_pairs
from arena.adaptive_run import stored_probabilities
from arena.library import tournaments as tournaments_library
from arena.schedule import decode_schedule
from tests.conftest import Arena
from tests.server.conftest import Server

FIELD = ["random", "greedy", "minimax:depth=1"]


def schedule_of(server: Server | Arena, key: str | int) -> tuple[list[list[str]], dict]:
    """Every scheduled match's agents by seat, and the settings, read from the database."""
    cli = server.cli if isinstance(server, Server) else server
    (packed, players, settings), = cli.rows(f"select schedule, players, settings from tournaments where id = {int(key)}")
    settings = json.loads(settings)
    labels = [agent["label"] for agent in settings["agents"]]
    return [[labels[p] for p in table] for table in decode_schedule(packed, players)], settings


def joins_count(server: Server) -> int:
    return server.cli.rows("select count(*) from ladder_joins")[0][0]


def join(server: Server, key: str | int, agent: str, auth: bool = True):  # noqa: ANN201
    return server.client.post(f"/api/v1/tournaments/{key}/agents", json={"agent": agent}, headers=server.auth if auth else {})


def test_a_newcomer_plays_the_field_first_then_batches_go_where_the_ranking_is_unsure(queue_server: Server) -> None:
    server = queue_server  # over a SQLite file and over PostgreSQL
    created = server.submit(game="tic_tac_toe", agents=FIELD, format="ladder", budget=30, seed=4, name="lad")
    assert created["format"] == "ladder" and created["status"] == "queued" and created["matches"] == 3
    answer = join(server, "lad", "mcts:simulations=20")
    assert answer.status_code == 201, answer.text
    assert answer.json()["joining"] == ["mcts:simulations=20"] and answer.json()["agents"] == FIELD
    assert server.play() == [(1, "done")]
    tables, settings = schedule_of(server, 1)
    assert len(tables) == 30 and server.status(1) == "done"
    assert all("mcts:simulations=20" not in t for t in tables[:3])  # the first round, before the join
    entry = tables[3:6]  # admitted at the first batch boundary: the newcomer against every agent before it
    assert all("mcts:simulations=20" in t for t in entry) and {a for t in entry for a in t} == {*FIELD, "mcts:simulations=20"}
    assert settings["agents"][-1]["label"] == "mcts:simulations=20" and settings["ladder"] == {"joins": [{"agent": "mcts:simulations=20", "at": 3}]}
    probabilities = stored_probabilities(settings["adaptive"]).tolist()
    assert len(probabilities) == 30 and probabilities[:3] == [1 / 3] * 3 and probabilities[3:6] == [1 / 6] * 3
    assert all(1 / 6 * 0.1 <= p <= 1 for p in probabilities[6:])  # the batches' selection probabilities, stored per match
    board = {row["agent"]: row for row in server.get("/api/v1/leaderboard", tournament="lad")}
    assert set(board) == {*FIELD, "mcts:simulations=20"} and board["mcts:simulations=20"]["games"] >= 3
    assert server.get("/api/v1/leaderboard", tournament="lad") == server.cli.json("leaderboard", "--tournament", "lad")
    matrix = server.get("/api/v1/matrix", tournament="lad", kind="games")
    assert "mcts:simulations=20" in json.dumps(matrix)
    # A finished ladder takes nobody; the listing shows it with every agent.
    refused = join(server, "lad", "random:seed=5")
    assert refused.status_code == 400 and refused.json()["field"] == "tournament" and "done" in refused.json()["error"]
    assert server.get("/api/v1/tournaments/lad")["agents"] == [*FIELD, "mcts:simulations=20"]


def test_bad_joins_are_refused_up_front_and_write_nothing(server: Server) -> None:
    server.submit(game="tic_tac_toe", agents=FIELD, format="ladder", budget=10, name="lad")
    server.submit(game="tic_tac_toe", agents=FIELD, rounds=1, name="rr")
    server.submit(game="gwent_lite", agents=["random", "greedy"], format="ladder", budget=10, name="hidden")
    server.cli("agents", "register", "deep1", "--type", "minimax", "--param", "depth=1")
    cases = [
        ("lad", "deep1", 409, "agent"),  # a named agent that is minimax:depth=1, in the field already
        ("lad", "human", 400, "agent"),  # a person: nobody would be there to move
        ("lad", "nosuch", 400, "agent"),  # unknown agent
        ("lad", "random:depth=3", 400, "agent"),  # unknown parameter
        ("hidden", "minimax:depth=1", 400, "agent"),  # cannot play a game of hidden information
        ("lad", "random,mcts", 400, "agent"),  # one agent at a time
        ("lad", "greedy", 409, "agent"),  # in the field already
        ("rr", "mcts", 400, "tournament"),  # not a ladder
        ("nosuch", "mcts", 404, "tournament"),
    ]
    for key, agent, status, field in cases:
        answer = join(server, key, agent)
        assert (answer.status_code, answer.json()["field"]) == (status, field), (key, agent, answer.text)
        assert "Traceback" not in answer.text
    assert join(server, "lad", "mcts", auth=False).status_code == 401
    assert server.client.post("/api/v1/tournaments/lad/agents", json={"agent": "mcts", "seat": 1}, headers=server.auth).status_code == 422
    assert server.client.post("/api/v1/tournaments/lad/agents", json={}, headers=server.auth).json()["field"] == "agent"
    assert joins_count(server) == 0  # nothing half-written
    assert join(server, "lad", "mcts").status_code == 201
    again = join(server, "lad", "mcts")
    assert again.status_code == 409 and "already" in again.json()["error"]  # waiting already
    assert joins_count(server) == 1
    # Creating one: a ladder is for two players, adaptive needs its budget, a budget must cover the first round.
    for body, field in [({"game": "incan_gold", "agents": ["random", "greedy", "random:seed=1"], "format": "ladder"}, "format"),
                        ({"game": "tic_tac_toe", "agents": FIELD, "format": "adaptive"}, "budget"),
                        ({"game": "tic_tac_toe", "agents": FIELD, "format": "ladder", "budget": 2}, "budget")]:
        answer = server.client.post("/api/v1/tournaments", json=body, headers=server.auth)
        assert (answer.status_code, answer.json()["field"]) == (400, field), answer.text
    assert len(server.get("/api/v1/tournaments")) == 3


def test_a_settled_ladder_idles_until_an_agent_joins(queue_server: Server) -> None:
    server = queue_server  # over a SQLite file and over PostgreSQL
    class Idle(Exception):
        pass

    slept: list[float] = []

    def idle(seconds: float) -> None:
        slept.append(seconds)
        raise Idle()  # stands for the worker's wait; the ladder goes on when play is called again

    created = server.submit(game="connect_four", agents=["random", "minimax:depth=2"], format="ladder", seed=1, name="settling")
    for attempt in range(2):
        try:
            tournament.play(server.database, server.registry, created["id"], idle=idle)
        except Idle:
            pass
        tables, settings = schedule_of(server, created["id"])
        assert slept == [ladder.IDLE_SECONDS] * (attempt + 1)  # asleep between looks, never spinning
        assert tournaments_library.one(server.database, created["id"])["done"] == len(tables)
    assert 2 < len(tables) < 200 and server.status(created["id"]) == "running"
    settled_at = len(tables)
    assert join(server, "settling", "greedy").status_code == 201

    def entry_played(done: int, total: int) -> None:
        if done >= settled_at + 2:
            raise Idle()  # the newcomer's entry round is played: enough (it would go on until settled again)

    try:
        tournament.play(server.database, server.registry, created["id"], progress=entry_played, idle=idle)
    except Idle:
        pass
    tables, settings = schedule_of(server, created["id"])
    assert [sorted(t) for t in tables[settled_at:settled_at + 2]] == [["greedy", "random"], ["greedy", "minimax:depth=2"]]
    assert settings["ladder"]["joins"] == [{"agent": "greedy", "at": settled_at}]
    assert server.client.post("/api/v1/tournaments/settling/cancel", headers=server.auth).json()["status"] == "cancelled"
    assert tournament.play(server.database, server.registry, created["id"], idle=idle) == 0  # cancelled: stops, no wait
    assert server.status(created["id"]) == "cancelled"


def test_the_queue_claims_ladders_last_and_a_ladder_gives_way_to_a_waiting_tournament(queue_server: Server) -> None:
    from arena.library import queue

    server = queue_server  # over a SQLite file and over PostgreSQL
    endless = server.submit(game="tic_tac_toe", agents=FIELD, format="ladder", seed=1)["id"]
    assert not queue.gives_way(server.database, endless)  # nothing waits behind it
    behind = server.submit(game="tic_tac_toe", agents=["random", "greedy"], rounds=1)["id"]
    assert queue.gives_way(server.database, endless) and not queue.gives_way(server.database, behind)
    assert queue.claim(server.database, "w", 30) == behind  # the older ladder waits: it never ends by itself
    assert not queue.gives_way(server.database, endless)  # what waited is taken
    assert queue.claim(server.database, "w", 30) == endless
    # Ladders take turns: one whose turn is over gives way to another that waits, which is claimed first.
    other = server.submit(game="tic_tac_toe", agents=FIELD, format="ladder", seed=2)["id"]
    assert not queue.gives_way(server.database, endless) and queue.gives_way(server.database, endless, to_endless=True)
    queue.release(server.database, endless, "w")
    assert queue.claim(server.database, "w", 30) == other  # never claimed: before the ladder just released
    queue.release(server.database, other, "w")
    assert queue.claim(server.database, "w", 30) == endless  # released before the other one


def test_settled_needs_every_adjacent_pair_apart() -> None:
    assert not ladder.settled(3, {(0, 1, 1.0): 1.0, (0, 2, 1.0): 1.0, (1, 2, 1.0): 1.0})  # one game each: anything goes
    apart = {(0, 1, 1.0): 40.0, (1, 2, 1.0): 40.0, (0, 2, 1.0): 40.0}
    assert ladder.settled(3, apart)
    assert not ladder.settled(3, {**apart, (1, 2, 0.0): 40.0})  # 1 and 2 even: unsettled
    assert ladder.entry_round(3, 5, 1) == [(3, 0), (1, 3), (3, 2), (4, 0), (1, 4), (4, 2), (3, 4)]
    assert ladder.entry_round(2, 3, 2) == [(0, 2), (2, 0), (1, 2), (2, 1)]
    assert np.isclose(sum(ladder.entry_probabilities(4, 3)), 3 / len(all_pairs(4)))


def test_cli_verbs_queue_join_cancel_and_resume(tmp_path: Path) -> None:
    cli = Arena(tmp_path / "arena.db")
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", ",".join(FIELD), "--format", "ladder", "--budget", "12",
        "--seed", "2", "--name", "lad", "--queue")  # fmt: skip
    assert cli.json("tournaments")[0]["status"] == "queued"
    joined = cli.json("tournaments", "join", "lad", "mcts:simulations=20")
    assert joined["joining"] == ["mcts:simulations=20"] and joined["format"] == "ladder"
    for agent, message in [("mcts:simulations=20", "already"), ("nosuch", "unknown agent"),
                           ("mcts:simulations=20,seed=0", "'mcts:simulations=20', in ladder 1 already, are the same agent"),
                           ("greedy:seed=0", "and 'greedy', in ladder 1 already, are the same agent")]:  # fmt: skip
        refused = cli("tournaments", "join", "lad", agent, ok=False)
        assert refused.exit_code == 2 and message in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    cli("run-tournament", "--resume", "lad", "--quiet")
    tables, _ = schedule_of(cli, 1)
    assert len(tables) == 12 and all("mcts:simulations=20" in t for t in tables[3:6])
    assert {row["agent"] for row in cli.json("leaderboard", "--tournament", "lad")} == {*FIELD, "mcts:simulations=20"}
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--format", "ladder", "--name", "open", "--queue")
    assert cli.json("tournaments", "cancel", "open")["status"] == "cancelled"
    assert cli("tournaments", "join", "open", "mcts", ok=False).exit_code == 2
    assert cli("tournaments", "cancel", "nosuch", ok=False).exit_code == 2
    assert cli("run-tournament", "--resume", "lad", "--queue", ok=False).exit_code == 2
    assert [row["status"] for row in cli.json("tournaments")] == ["done", "cancelled"]
    refused = cli("tournaments", "cancel", "lad", ok=False)
    assert refused.exit_code == 2 and "is done: only a queued, running or stopped one can be cancelled" in refused.stderr


def test_fields_beyond_the_scheduler_limit_are_refused_and_write_nothing(server: Server) -> None:
    """Adaptive and ladder fields above MAX_AGENTS are refused with a 4xx naming agents (over HTTP a list holds 200
    agents at most, fewer than MAX_AGENTS: 422); a ladder at the limit, its agents and those waiting to join counted,
    takes no one more (400 naming the tournament); nothing is written. 200 agents, the request that once took 8.6 GB,
    is queued."""
    from arena.adaptive import MAX_AGENTS

    field = [f"random:seed={i}" for i in range(MAX_AGENTS + 1)]
    for body in ({"format": "adaptive", "budget": 40_000}, {"format": "ladder"}):
        answer = server.client.post("/api/v1/tournaments", json={"game": "tic_tac_toe", "agents": field, **body},
                                    headers=server.auth)  # fmt: skip
        assert 400 <= answer.status_code < 500 and answer.json()["field"] == "agents", answer.text
    assert server.get("/api/v1/tournaments") == []
    server.submit(game="tic_tac_toe", agents=field[:200], format="adaptive", budget=20_000, name="wide")
    server.submit(game="tic_tac_toe", agents=field[:200], format="ladder", name="full")
    for agent in field[200:MAX_AGENTS]:  # the last places, taken by joins
        assert join(server, "full", agent).status_code == 201
    for agent in (field[MAX_AGENTS], "greedy"):
        refused = join(server, "full", agent)
        assert (refused.status_code, refused.json()["field"]) == (400, "tournament"), refused.text
        assert f"has {MAX_AGENTS} agents" in refused.json()["error"] and "\n" not in refused.json()["error"]
    assert join(server, "full", field[0]).status_code == 409  # one in already is told so
    assert joins_count(server) == MAX_AGENTS - 200


def _joins_at_once(database_url: str, specs: list[str], refusal: tuple[str, str]) -> list[str]:
    """`ladders.join` of each spec to ladder 'lad' from its own thread, all released at once; each thread's answer:
    "joined", "in" (AlreadyIn), refusal[1] when the refusal's words (refusal[0]) are in the error, else the error."""
    import threading

    from arena.library import ladders
    from arena.plugins import get_registry
    from db.session import open_database

    registry = get_registry()
    answers: list[str] = []
    start = threading.Barrier(len(specs))

    def one_join(spec: str) -> None:
        start.wait(timeout=30)
        try:
            ladders.join(registry, database, "lad", spec)
            answers.append("joined")
        except ladders.AlreadyIn:
            answers.append("in")
        except Exception as exc:  # noqa: BLE001
            answers.append(refusal[1] if refusal[0] in str(exc) else repr(exc))

    with open_database(database_url) as database:
        threads = [threading.Thread(target=one_join, args=(spec,)) for spec in specs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    return answers


def test_joins_at_once_never_take_a_ladder_past_its_limit(database_url: str, monkeypatch) -> None:  # noqa: ANN001
    """Eight joins at once to a ladder with one place left (the limit lowered to 4): one is queued and seven are told the
    ladder is full, on SQLite and PostgreSQL (the count and the write are one serialised transaction; checked and
    written in two steps, several got in); eight joins at once of one agent under two labels: it gets in once."""
    from arena.library import ladders

    monkeypatch.setattr(ladders, "MAX_AGENTS", 4)
    cli = Arena(database_url)
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", ",".join(FIELD), "--format", "ladder", "--name", "lad", "--queue")
    answers = _joins_at_once(database_url, [f"mcts:simulations=5,seed={seed}" for seed in range(8)], ("has 4 agents", "full"))
    assert sorted(answers) == ["full"] * 7 + ["joined"], answers
    refused = cli("tournaments", "join", "lad", "greedy:seed=9", ok=False)
    assert refused.exit_code == 2 and "has 4 agents" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    monkeypatch.setattr(ladders, "MAX_AGENTS", 256)  # one agent under two labels (its seed given or left at 0)
    specs = ["mcts:simulations=7" + (",seed=0" if number % 2 else "") for number in range(8)]
    answers = _joins_at_once(database_url, specs, ("are the same agent", "twin"))
    assert answers.count("joined") == 1 and set(answers) <= {"joined", "in", "twin"}, answers
    assert cli.rows("select count(*) from ladder_joins") == [(2,)]


def test_an_agent_waiting_to_join_holds_its_label(tmp_path: Path) -> None:
    """'bob' waits to join a ladder as minimax; bob is then registered as another agent and plays a round-robin: that
    one is recorded as 'bob@2', and the leaderboard keeps the two apart (they were one row of 47 mixed games)."""
    cli = Arena(tmp_path / "arena.db")
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--format", "ladder", "--budget", "40",
        "--name", "lad", "--queue")  # fmt: skip
    cli("agents", "register", "bob", "--type", "minimax", "--param", "depth=1")
    cli("tournaments", "join", "lad", "bob")
    cli("agents", "remove", "bob")
    cli("agents", "register", "bob", "--type", "random", "--param", "seed=7")
    played = cli("run-tournament", "--game", "tic_tac_toe", "--agents", "bob,greedy", "--rounds", "4", "--name", "rr")
    assert "records it as 'bob@2'" in played.stderr, played.stderr
    cli("run-tournament", "--resume", "lad", "--quiet")
    board = {row["agent"]: row["games"] for row in cli.json("leaderboard", "--game", "tic_tac_toe")}
    assert board["bob@2"] == 4 and board["bob"] == sum(1 for t in schedule_of(cli, 1)[0] if "bob" in t) > 0


def test_a_ladder_s_budget_counts_its_newcomers_and_a_spent_one_takes_nobody(tmp_path: Path) -> None:
    cli = Arena(tmp_path / "arena.db")
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--format", "ladder", "--budget", "4",
        "--name", "lad", "--queue")  # fmt: skip
    for seed in range(1, 4):
        cli("tournaments", "join", "lad", f"random:seed={seed}")
    cli("run-tournament", "--resume", "lad", "--quiet")
    (row,) = cli.json("tournaments")
    assert row["status"] == "done" and row["matches"] == row["done"] == 4  # 1 + 3 of the entry rounds' 1 + 2 + 3 + ...
    # Stopped once its last batch was scheduled (as Ctrl-C may leave it): its budget is spent, so a join would wait forever.
    cli.execute("update tournaments set status = 'stopped'")
    refused = cli("tournaments", "join", "lad", "random:seed=9", ok=False)
    assert refused.exit_code == 2 and "has scheduled its budget of 4 matches: it takes no more agents" in refused.stderr


def test_resume_leaves_a_tournament_a_server_plays_and_a_cancelled_one(tmp_path: Path) -> None:
    """`--resume` of a ladder a server held under a live lease ended it as done mid-play (the server then dropped it);
    of a cancelled one, it played on. Both are refused now; one a server left (its lease ran out) is played here, and
    no server claims it meanwhile."""
    from db import queue
    from db.session import open_database

    cli = Arena(tmp_path / "arena.db")
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "3", "--name", "held", "--queue")
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    assert queue.claim(database, "server-1", lease_seconds=60) == 1  # as a server's queue worker claims it
    refused = cli("run-tournament", "--resume", "held", ok=False)
    assert refused.exit_code == 2 and "is being played by `arena serve`" in refused.stderr
    assert cli.json("tournaments")[0]["status"] == "running" and cli.json("matches") == []
    queue.release(database, 1, "server-1")  # its lease ends (the server stopped, or died and the lease ran out)
    cli("run-tournament", "--resume", "held", "--quiet")
    assert cli.json("tournaments")[0]["status"] == "done" and len(cli.json("matches")) == 3
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--rounds", "3", "--name", "gone", "--queue")
    cli("tournaments", "cancel", "gone")
    refused = cli("run-tournament", "--resume", "gone", ok=False)
    assert refused.exit_code == 2 and "was cancelled: nothing more is played" in refused.stderr
    assert cli.json("tournaments")[1]["status"] == "cancelled" and cli.json("matches", "--tournament", "gone") == []
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "mine", "--queue")
    cli("run-tournament", "--resume", "mine", "--quiet")  # a queued one played here: taken off the queue first
    assert queue.claim(database, "server-1", lease_seconds=60) is None and cli.json("tournaments")[2]["status"] == "done"


def test_an_idle_ladder_keeps_its_worker_from_another_ladder_until_its_turn_is_over(tmp_path: Path) -> None:
    """Two settled ladders on one worker handed it back and forth every second, each doing nothing. An idle ladder
    gives way to another ladder only when its turn is over (to an ordinary tournament, at once: as before)."""
    import threading

    import pytest

    from arena.server.runner import Claimed, GivesWay
    from db import queue
    from db.session import open_database

    cli = Arena(tmp_path / "arena.db")
    for name in ("one", "two"):
        cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--format", "ladder", "--name", name, "--queue")
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    held = queue.claim(database, "w", lease_seconds=60)
    claimed = Claimed(database, held, "w", 60, threading.Event(), turn_seconds=60, endless=True)
    claimed.next_look = 0.0
    claimed.idle(0)  # the other ladder waits, but this one's turn is not over: it keeps the worker
    claimed.next_look, claimed.turn_ends = 0.0, 0.0
    with pytest.raises(GivesWay):
        claimed.idle(0)
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--name", "plain", "--queue")
    claimed.next_look, claimed.turn_ends = 0.0, float("inf")
    with pytest.raises(GivesWay):  # an ordinary tournament never waits behind a ladder
        claimed.idle(0)


def test_a_join_to_a_ladder_whose_game_is_gone_is_about_the_tournament(tmp_path: Path) -> None:
    """The ladder's game, not the agent, is what is wrong: the HTTP answer names the field `tournament`."""
    import pytest

    from arena.errors import ArenaError
    from arena.library import ladders
    from arena.plugins import get_registry
    from db.session import open_database

    cli = Arena(tmp_path / "arena.db")  # with the test plugins, whose `forever` game the ladder plays
    cli("run-tournament", "--game", "forever", "--agents", "random,random:seed=1", "--format", "ladder", "--name", "lad", "--queue")
    with pytest.raises(ArenaError, match="unknown game 'forever'") as refused:
        ladders.join(get_registry(()), open_database(f"sqlite:///{tmp_path / 'arena.db'}"), "lad", "random:seed=3")
    assert refused.value.field == "tournament"


def test_a_schedule_extended_meanwhile_by_another_process_is_kept(tmp_path: Path) -> None:
    """Two processes growing one ladder (a server that took it over from one that stalled past its lease): the second
    extension read a schedule that is no longer the stored one, and is not written over the first's."""
    from db import queries
    from db.session import open_database

    cli = Arena(tmp_path / "arena.db")
    cli("run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy,minimax:depth=1", "--format", "ladder",
        "--name", "lad", "--queue")  # fmt: skip
    database = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    (packed, settings), = cli.rows("select schedule, settings from tournaments")
    queries.extend_schedule(database, 1, packed + packed[:4], 5, json.loads(settings), previous=3)  # the first: 3 -> 5
    queries.extend_schedule(database, 1, packed + packed, 6, json.loads(settings), previous=3)  # read before it: kept out
    assert cli.rows("select scheduled from tournaments") == [(5,)]


def test_the_weighted_leaderboard_over_http_is_the_cli_s(queue_server: Server) -> None:
    """`arena leaderboard --weighted` had no HTTP equivalent: GET /api/v1/leaderboard?weighted=true is the same rows,
    and a tournament that is not adaptive is a 400 naming `weighted`."""
    server = queue_server
    server.submit(game="tic_tac_toe", agents=FIELD, format="adaptive", budget=40, seed=2, name="ad")
    server.submit(game="tic_tac_toe", agents=["random", "greedy"], rounds=2, name="rr")
    assert server.play() == [(1, "done"), (2, "done")]
    weighted = server.get("/api/v1/leaderboard", tournament="ad", weighted="true")
    assert weighted == server.cli.json("leaderboard", "--tournament", "ad", "--weighted")
    assert weighted != server.get("/api/v1/leaderboard", tournament="ad")  # (the weighted fit: other numbers)
    refused = server.client.get("/api/v1/leaderboard", params={"tournament": "rr", "weighted": "true"})
    assert refused.status_code == 400 and refused.json()["field"] == "weighted", refused.text
