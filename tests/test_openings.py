"""Openings and paired games: random and file openings, pairs with seats swapped, stored and replayed plies,
the turn limit after the opening, validation up front, and resume repeating no opening."""

from collections import Counter

import pytest

from arena.match import decode_ints
from arena.schedule import round_robin_sets
from tests._interrupt import cut_and_whole
from tests.test_distinct_games import deterministic_cli  # noqa: F401  (a fixture)


def _matches(cli, name):
    return cli.rows(
        "select m.\"index\", m.seed, m.moves, m.opening_plies, m.turns, group_concat(s.agent, ',') from matches m "
        f"join match_seats s on s.match_id = m.id join tournaments t on t.id = m.tournament_id where t.name = '{name}' "
        'group by m.id order by m."index"'
    )


def test_deterministic_agents_play_distinct_games_from_random_openings(deterministic_cli):  # noqa: F811
    cli = deterministic_cli
    cli("run-tournament", "--game", "connect_four", "--agents", "lowest,highest", "--rounds", "10", "--seed", "3",
        "--openings", "random:4", "--name", "open", "--quiet")  # fmt: skip
    rows = _matches(cli, "open")
    assert len(rows) == 20  # a round is a pair with the seats swapped
    for first, second in zip(rows[0::2], rows[1::2]):
        assert first[1] == second[1] and first[3] == second[3] == 4  # a pair shares its seed and its opening...
        assert decode_ints(first[2])[:4] == decode_ints(second[2])[:4]
        assert first[5].split(",") == second[5].split(",")[::-1]  # ...with the seats swapped
    assert len({decode_ints(r[2])[:4] and tuple(decode_ints(r[2])[:4]) for r in rows[0::2]}) >= 8  # openings differ
    (pair,) = cli.json("stats", "--tournament", "open")["distinct_games"]
    assert pair["matches"] == 20 and pair["distinct"] >= 16 and not pair["repeated"]
    assert "overstate" not in cli("leaderboard", "--tournament", "open").stderr
    # The opening is no agent's: seats' moves add up to the agents' turns, and the stored list is opening + turns.
    seats = cli.rows("select sum(moves) from match_seats group by match_id order by match_id")
    assert [s[0] for s in seats] == [r[4] for r in rows]
    assert all(len(decode_ints(r[2])) == r[3] + r[4] for r in rows)


def test_file_openings_by_name_or_id_in_order_and_shown_in_replays(arena_cli, tmp_path):
    book = tmp_path / "book.txt"
    book.write_text("# centre first\nx3 o3\n\n2,4\nx0 1 x2\n")
    arena_cli("run-tournament", "--game", "connect_four", "--agents", "greedy,center", "--rounds", "4", "--openings",
              str(book), "--name", "book", "--quiet")  # fmt: skip
    rows = _matches(arena_cli, "book")
    openings = [tuple(decode_ints(r[2])[: r[3]]) for r in rows]
    assert openings == [(3, 3), (3, 3), (2, 4), (2, 4), (0, 1, 2), (0, 1, 2), (3, 3), (3, 3)]  # line k for pair k
    match_id = arena_cli.json("matches", "--tournament", "book")[4]["id"]
    replayed = arena_cli.json("replay", str(match_id))
    assert replayed["opening_plies"] == 3
    assert [m["opening"] for m in replayed["moves"][:4]] == [True, True, True, False]
    assert [m["turn"] for m in replayed["moves"][:4]] == [None, None, None, 1]
    text = arena_cli("replay", str(match_id), "--no-boards").stdout
    assert "o1. opening (seat 0): x0" in text and "   1. " in text


@pytest.mark.parametrize("content, message", [
    ("x3 x9\n", "line 1: 'x9' is not a legal action after 1 plies"),
    ("# nothing\n\n", "no openings in the file"),
    ("3 3\n3 3 3 3 3 3 3\n", "line 2: '3' is not a legal action after 6 plies"),
    ("o3\n", "line 1: 'o3' is not a legal action after 0 plies"),  # a name is the mover's: o does not move first
    ("x3 x3\n", "line 1: 'x3' is not a legal action after 1 plies"),
])  # fmt: skip
def test_bad_opening_files_are_refused_up_front(arena_cli, tmp_path, content, message):
    book = tmp_path / "bad.txt"
    book.write_text(content)
    result = arena_cli("run-tournament", "--game", "connect_four", "--agents", "greedy,center", "--openings", str(book),
                       "--name", "bad", ok=False)  # fmt: skip
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])


def test_a_hidden_deal_is_the_one_openings_are_checked_in(monkeypatch):
    """A hidden-information game's sets are dealt with the tournament's secret: its openings are checked in those deals.
    With this secret the first set's deal ends after 98 of these plies, where the deals without it allowed 107 and
    more, so the opening was accepted and its matches stored as 0-turn draws that replay to nothing."""
    import arena.tournament
    from arena.errors import ArenaError
    from arena.plugins import get_registry

    monkeypatch.setattr(arena.tournament.secrets, "token_hex", lambda size: "0" * 2 * size)
    request = arena.tournament.TournamentRequest(game="incan_gold", agents="random,greedy,random:seed=1", players=3,
                                                 rounds=4, seed=0, openings=[" ".join(["stay"] * 100)])  # fmt: skip
    with pytest.raises(ArenaError, match="stay"):
        arena.tournament.prepare(get_registry(), None, request)
    shorter = arena.tournament.TournamentRequest(**{**request.__dict__, "openings": [" ".join(["stay"] * 60)]})
    assert arena.tournament.prepare(get_registry(), None, shorter)[3]["openings"]["lines"] == [["stay"] * 60]


@pytest.mark.parametrize("args, message", [
    (["--game", "onitama", "--format", "adaptive", "--budget", "40", "--seed", "2", "--openings", "BOOK"],
     "opening 1 cannot be played in set 4's game"),  # a later set of an adaptive run, dealt otherwise
    (["--game", "connect_four", "--rounds", "10", "--seed", "5", "--openings", "random:38"],
     "end the game 100 times out of 100: use fewer plies (set 10's deal)"),  # the 10th set's draw, not only a first one
])  # fmt: skip
def test_every_set_s_opening_is_checked_before_anything_is_written(arena_cli, tmp_path, args, message):
    book = tmp_path / "book.txt"
    book.write_text("168\n")
    result = arena_cli("run-tournament", "--agents", "random,greedy", *[str(book) if a == "BOOK" else a for a in args], ok=False)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert arena_cli.rows("select count(*) from tournaments") in ([], [(0,)])


def test_opening_names_are_read_in_each_set_s_deal(arena_cli, tmp_path):
    """Onitama's cards are dealt per set: 'Monkey a5-b4' is action 194 in this seed's first set and 198 in its second.
    Each set plays the move named (it was turned into seed 0's id once, another move). The comma at the end makes
    the line one ply whose name has a space; a byte-order mark before it is no part of it."""
    book = tmp_path / "monkey.txt"
    book.write_text("\ufeffMonkey a5-b4,\n", encoding="utf-8")
    arena_cli("run-tournament", "--game", "onitama", "--agents", "random,greedy", "--rounds", "2", "--seed", "17",
              "--openings", str(book), "--name", "monkey", "--quiet")  # fmt: skip
    firsts = [decode_ints(r[2])[0] for r in _matches(arena_cli, "monkey")]
    assert firsts == [194, 194, 198, 198]
    for match in arena_cli.json("matches", "--tournament", "monkey"):
        assert arena_cli.json("replay", str(match["id"]))["moves"][0]["text"] == "Monkey a5-b4"


@pytest.mark.parametrize("spec", ["random:0", "random:x", "random:", "nofile.txt"])
def test_bad_openings_option(arena_cli, spec):
    result = arena_cli("run-tournament", "--game", "connect_four", "--agents", "greedy,center", "--openings", spec, ok=False)
    assert result.exit_code == 2 and "--openings" in result.stderr


def test_turn_limit_counts_from_the_end_of_the_opening(arena_cli):
    arena_cli("run-tournament", "--game", "forever", "--agents", "random,center", "--rounds", "2", "--max-turns", "5",
              "--openings", "random:3", "--name", "lim", "--quiet")  # fmt: skip
    rows = _matches(arena_cli, "lim")
    assert [(r[3], r[4], len(decode_ints(r[2]))) for r in rows] == [(3, 5, 8)] * 4


def test_sets_rotate_every_seating_for_n_players():
    tables = round_robin_sets(4, 1, players=3)
    assert len(tables) == 4 * 3
    for start in range(0, len(tables), 3):
        group = tables[start:start + 3]
        assert len({frozenset(t) for t in group}) == 1  # one group of agents per set...
        assert all(sorted(t[seat] for t in group) == sorted(group[0]) for seat in range(3))  # ...every agent in every seat


def _check_part(cli):
    assert 0 < len(_matches(cli, "cut")) < 12


def test_resume_repeats_no_opening(tmp_path, arena_cli):
    """A run stopped part-way and resumed stores exactly the uninterrupted run's matches: same openings, none twice."""
    cut_and_whole(arena_cli.db_path, 5, lambda: _check_part(arena_cli), game="connect_four",
                  agents="greedy,center,random", rounds=2, seed=8, openings="random:2")  # fmt: skip
    cut, whole = _matches(arena_cli, "cut"), _matches(arena_cli, "whole")
    assert len(cut) == 12 and cut == whole
    openings = Counter(tuple(decode_ints(r[2])[: r[3]]) + (r[1],) for r in cut)
    assert set(openings.values()) == {2}  # every opening (with its seed) played by exactly one pair


def test_opening_plies_are_no_ones_think_time_and_not_turns(monkeypatch):
    """On a clock that moves 100 s with each ply the game applies and 0.25 s with each agent's answer, a match with a
    3-ply opening, a 5-turn limit and 1 s per move: each seat's think time is exactly its own answers' 0.25 s (the
    opening's 300 s are nobody's, and no seat times out), and the 5 turns are the agents' own, after the opening."""
    from types import SimpleNamespace

    import arena.match
    from tests.test_match import _setup

    now = [0.0]
    monkeypatch.setattr(arena.match, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    game, agents = _setup("forever", "random", "random")
    opening_state = game.new_initial_state(11)
    opening = []
    for _ in range(3):
        opening.append(opening_state.legal_actions()[0])
        opening_state.apply(opening[-1])
    new_initial_state = game.new_initial_state

    def slow_plies(seed):
        state = new_initial_state(seed)
        apply = state.apply

        def timed(action):
            now[0] += 100.0
            apply(action)

        state.apply = timed
        return state

    monkeypatch.setattr(game, "new_initial_state", slow_plies)
    for agent in agents:
        monkeypatch.setattr(agent, "act", lambda state, act=agent.act: (now.__setitem__(0, now[0] + 0.25), act(state))[1])
    result = arena.match.play_match(game, agents, seed=11, max_turns=5, time_per_move=1.0, opening=opening)
    assert now[0] >= 8 * 100.0 + 5 * 0.25  # the clock did run: 3 opening plies + 5 turns applied (then replayed), 5 answers
    # After 3 plies the second seat moves first: 3 answers to the first seat's 2.
    assert (result.reason, result.turns, result.move_counts, result.first_player) == ("turn_limit", 5, [2, 3], 1)
    assert result.think_times == [0.5, 0.75] and result.opening == opening and len(result.moves) == 5
