"""The hidden-information probes of issue 11, as tests: a spy agent looking for the real state (frames,
gc.get_referrers, gc.get_objects) and a predictor brute-forcing the deal from public seeds, on both
hidden-information games. Each probe is shown to work where it should (trusted agents, a tournament without
a secret), so the tests fail if the defence goes."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from arena import tournament
from arena.plugins import get_registry
from db.session import open_database
from tests.conftest import TEST_PLUGINS, Arena

OTHERS = {"gwent_lite": "random", "incan_gold": "random,random:seed=1"}


def _records(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize("game", ["gwent_lite", "incan_gold"])
def test_a_spy_reaches_no_real_state_by_default(tmp_path, game):
    log = tmp_path / "spy.log"
    arena_cli = Arena(tmp_path / "spy.db", plugins_dirs=(TEST_PLUGINS,))
    agents = f'spy:log="{log}",{OTHERS[game]}'
    arena_cli("run-tournament", "--game", game, "--agents", agents, "--rounds", "1", "--name", "isolated", "--quiet")
    isolated = _records(log)
    assert isolated, "the spy never played"
    assert all(record["pid"] != os.getpid() for record in isolated)  # never in the runner's process
    assert all(record["found"] == {"frames": 0, "referrers": 0, "objects": 0} for record in isolated), isolated[:3]
    log.unlink()
    # The same spy, trusted in-process: the probe works (so the assertion above can fail).
    arena_cli("run-tournament", "--game", game, "--agents", agents, "--rounds", "1", "--name", "trusted", "--quiet",
              "--trust-agents")  # fmt: skip
    trusted = _records(log)
    assert trusted and all(record["found"]["frames"] > 0 and record["found"]["objects"] > 0 for record in trusted)


def _predictions(tmp_path, game: str, secret: bool) -> list[dict]:
    log = tmp_path / f"predict-{secret}.log"
    db = tmp_path / f"predict-{secret}.db"
    request = tournament.TournamentRequest(game=game, agents=f'predictor:tseed=7,log="{log}",{OTHERS[game]}', rounds=6,
                                           seed=7, name="p")  # fmt: skip
    registry = get_registry([str(TEST_PLUGINS)])
    tournament_id = tournament.create(registry, open_database(f"sqlite:///{db}"), request)
    if not secret:  # as a tournament from before the secret: its deal derives from public seeds only
        with sqlite3.connect(db) as c:
            c.execute("update tournaments set secret = null where id = ?", (tournament_id,))
    Arena(db)("run-tournament", "--resume", "p", "--quiet")
    assert Arena(db)("db", "verify").exit_code == 0  # reproducible from what is stored, secret or not
    return _records(log)


@pytest.mark.parametrize("game", ["gwent_lite", "incan_gold"])
def test_the_deal_cannot_be_brute_forced_from_public_seeds(tmp_path, game):
    open_deal = _predictions(tmp_path, game, secret=False)
    assert open_deal and all(r["found_seed"] and r["predicted"] for r in open_deal)  # the probe works without a secret
    secret = _predictions(tmp_path, game, secret=True)
    assert len(secret) == len(open_deal) and all(r["found_seed"] for r in secret)  # it still finds the match seed...
    assert sum(r["predicted"] for r in secret) <= len(secret) // 3, secret  # ...but the deal is not that seed's
