"""Distinct games: deterministic agents repeat one game; stats and the leaderboard count and say so."""

import pytest

from arena.leaderboard import add_distinct_games
from arena.stats import distinct_games
from db.records import MatchRecord, SeatRecord


def _record(match_id, first, second):
    seats = (SeatRecord(0, first, 1.0, "win", 1, 0.0, 3), SeatRecord(1, second, -1.0, "loss", 2, 0.0, 3))
    return MatchRecord(match_id, 1, match_id, match_id, "g", "1", 6, "normal", seats)


def test_distinct_games_count_seats_and_moves():
    records = [_record(1, "a", "b"), _record(2, "a", "b"), _record(3, "b", "a"), _record(4, "a", "c")]
    moves = {1: b"B\x01\x02", 2: b"B\x01\x02", 3: b"B\x01\x02", 4: b"B\x03"}  # 3: same moves, seats swapped
    pairs = distinct_games(records, moves)
    assert pairs == [
        {"pair": "a vs b", "agents": ["a", "b"], "matches": 3, "distinct": 2, "repeated": False},
        {"pair": "a vs c", "agents": ["a", "c"], "matches": 1, "distinct": 1, "repeated": False},
    ]
    rows = [{"agent": "a"}, {"agent": "b"}, {"agent": "c"}]
    assert add_distinct_games(rows, pairs) is None
    assert [r["distinct_games"] for r in rows] == [3, 2, 1]
    records += [_record(5, "a", "c")] * 3
    moves[5] = b"B\x03"
    warning = add_distinct_games(rows, distinct_games(records, moves))
    assert "a vs c: 1 distinct of 4" in warning and "--openings" in warning
    assert [r["repeated_games"] for r in rows] == [True, False, True]


DETERMINISTIC = '''
import arena


class Lowest(arena.Agent):
    info = arena.AgentInfo(id="lowest", version="1", description="The lowest legal action id, always.")

    def act(self, state):
        return min(state.legal_actions())


class Highest(arena.Agent):
    info = arena.AgentInfo(id="highest", version="1", description="The highest legal action id, always.")

    def act(self, state):
        return max(state.legal_actions())


@arena.hookimpl
def register_agents(register):
    register(Lowest)
    register(Highest)
'''


@pytest.fixture
def deterministic_cli(db_path, tmp_path):
    """The CLI with two deterministic agents (no randomness at all: `lowest` and `highest` legal action)."""
    from tests.conftest import TEST_PLUGINS, Arena, loose_plugin

    plugins = loose_plugin(tmp_path / "deterministic", "deterministic_agents", DETERMINISTIC)
    return Arena(db_path, (TEST_PLUGINS, plugins))


def test_deterministic_agents_repeat_and_are_flagged(deterministic_cli):
    arena_cli = deterministic_cli
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "lowest,highest", "--rounds", "10", "--seed", "3",
              "--name", "det", "--quiet")
    stats = arena_cli.json("stats", "--tournament", "det")
    (pair,) = stats["distinct_games"]
    assert pair["matches"] == 10 and pair["distinct"] <= 2 and pair["repeated"]
    result = arena_cli("leaderboard", "--tournament", "det")
    assert "intervals overstate certainty" in result.stderr and "--openings" in result.stderr
    rows = arena_cli.json("leaderboard", "--tournament", "det")
    assert all(row["repeated_games"] and row["distinct_games"] == pair["distinct"] for row in rows)
    text = arena_cli("stats", "--tournament", "det").stdout
    assert "Distinct games" in text


@pytest.mark.parametrize("game", ["gwent_lite", "onitama", "incan_gold:players=3"])
def test_in_a_game_with_chance_a_game_is_its_moves_and_its_deal(deterministic_cli, game):
    """Deterministic agents in a game with chance: each match is dealt anew (Gwent Lite's random decks, Onitama's
    cards, Incan Gold's shuffles), so the same moves from another deal are another game. Counted by moves alone,
    20 Gwent Lite matches looked like 4 games and the leaderboard warned that its intervals overstate certainty."""
    agents = "lowest,highest,lowest:seed=1" if "players=3" in game else "lowest,highest"
    deterministic_cli("run-tournament", "--game", game, "--agents", agents, "--rounds", "20", "--seed", "3",
                      "--name", "dealt", "--quiet")  # fmt: skip
    (group,) = deterministic_cli.json("stats", "--tournament", "dealt")["distinct_games"]
    assert group["matches"] == group["distinct"] == 20 and not group["repeated"], group
    assert "overstate" not in deterministic_cli("leaderboard", "--tournament", "dealt").stderr
    assert deterministic_cli.json("stats", "--game", game)["distinct_games"] == [group]  # by game too


def test_a_deal_tells_games_apart_only_where_the_game_has_chance():
    from arena.stats import BY_SEED, BY_TOURNAMENT

    records = [_record(1, "a", "b"), _record(2, "a", "b")]  # one move list, seeds 1 and 2 (tournament 1)
    moves = {1: b"B\x01\x02", 2: b"B\x01\x02"}
    assert [distinct_games(records, moves)[0]["distinct"], distinct_games(records, moves, BY_SEED)[0]["distinct"]] == [1, 2]
    again = [_record(1, "a", "b"), MatchRecord(2, 2, 0, 1, "g", "1", 6, "normal", records[0].seats)]  # seed 1 twice
    assert distinct_games(again, moves, BY_SEED)[0]["distinct"] == 1  # the same deal: one game
    assert distinct_games(again, moves, BY_TOURNAMENT)[0]["distinct"] == 2  # two tournaments' secrets: two deals
