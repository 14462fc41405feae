"""Hidden-information deals depend on a per-tournament secret: stored, never shown, reproducible (issue 11)."""

from __future__ import annotations

import sqlite3

from arena.plugins import get_registry
from arena.seeding import game_seed


def test_the_deal_mixes_a_secret_that_is_stored_and_never_shown(arena_cli):
    arena_cli("run-tournament", "--game", "gwent_lite", "--agents", "greedy,random", "--rounds", "2", "--name", "g", "--quiet")
    (secret,) = arena_cli.rows("select secret from tournaments where name = 'g'")[0]
    assert secret and len(secret) == 32
    shown = "".join(arena_cli(*command).stdout for command in (
        ["tournaments", "--json"], ["matches", "--json"], ["replay", "1", "--json"], ["leaderboard", "--json"],
        ["stats", "--json"], ["tournaments"], ["replay", "1"]))  # fmt: skip
    assert secret not in shown
    game = get_registry().game_class("gwent_lite")()
    seeds = [row[0] for row in arena_cli.rows("select seed from matches")]
    # What an agent can compute (the match seed) is not the deal's seed.
    assert all(game_seed(game, seed, secret) != seed for seed in seeds)
    assert all(game.new_initial_state(game_seed(game, s, secret)).render() != game.new_initial_state(s).render() for s in seeds)
    assert arena_cli("db", "verify").exit_code == 0  # replays use the stored secret
    # Perfect information: no secret, the deal is the match seed as before.
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "greedy,random", "--name", "t", "--quiet")
    assert arena_cli.rows("select secret from tournaments where name = 't'") == [(None,)]


def test_a_tournament_from_before_the_secret_resumes_as_before(arena_cli):
    from arena import tournament
    from db.session import open_database

    database = open_database(f"sqlite:///{arena_cli.db_path}")
    request = tournament.TournamentRequest(game="incan_gold", agents="greedy,random,random:seed=1", rounds=2, seed=5, name="old")
    tid = tournament.create(get_registry(), database, request)
    with sqlite3.connect(arena_cli.db_path) as c:
        c.execute("update tournaments set secret = null where id = ?", (tid,))
    arena_cli("run-tournament", "--resume", "old", "--quiet")
    assert arena_cli("db", "verify", "--tournament", "old").exit_code == 0
    game = get_registry().game_class("incan_gold")()
    assert game_seed(game, 123, None) == 123
