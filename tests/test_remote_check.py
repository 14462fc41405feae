"""`arena check-agent` on real bot processes, and `arena play` (agent `human`) fed through standard input."""

from __future__ import annotations

import json

from tests._bots import fault_bot, push_bot


def test_check_agent_passes_a_good_bot(arena_cli):
    with push_bot() as url:
        result = arena_cli("check-agent", f"http:url={url}", "--game", "connect_four", "--seeds", "2", "--time-per-move", "10")
    assert "passed" in result.stdout and "round trips" in result.stdout


def test_check_agent_reports_illegal_moves_and_bad_replies(arena_cli):
    for bot, reason in (("illegal", "illegal_action"), ("wrong_type", "bad_reply")):
        with fault_bot(bot) as url:
            result = arena_cli("check-agent", f"http:url={url}", "--game", "tic_tac_toe", "--seeds", "1",
                               "--time-per-move", "10", ok=False)  # fmt: skip
        assert result.exit_code == 1
        assert "FAILED" in result.stdout and reason in result.stdout


def test_check_agent_reports_slow_answers_as_json(arena_cli):
    with fault_bot("slow") as url:
        result = arena_cli("check-agent", f"http:url={url}", "--game", "tic_tac_toe", "--seeds", "1",
                           "--time-per-move", "0.2", "--json", ok=False)  # fmt: skip
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and not report["ok"]
    assert all("timeout" in line for line in report["problems"])


def test_check_agent_warns_of_round_trips_near_40_ms(arena_cli):
    with fault_bot("nagle") as url:
        report = arena_cli.json("check-agent", f"http:url={url}", "--game", "connect_four", "--seeds", "2", "--time-per-move", "10")
    assert report["ok"]
    assert any("Nagle" in w for w in report["warnings"]), report["round_trip_ms"]


def test_check_agent_on_a_built_in_agent_and_bad_input(arena_cli):
    assert "passed" in arena_cli("check-agent", "greedy", "--game", "tic_tac_toe").stdout
    result = arena_cli("check-agent", "nosuch", "--game", "tic_tac_toe", ok=False)
    assert result.exit_code == 2 and "unknown agent" in result.stderr


def every_move(moves: int, rounds: int) -> str:
    """Input that tries every action id in turn, again and again: the occupied ones are refused."""
    return "\n".join(str(a) for _ in range(rounds) for a in range(moves)) + "\n"


def play(arena_cli, *args: str, typed: str):
    """`arena play ...` with `typed` as the person's input; returns the output and the one stored match."""
    from arena.cli import cli

    result = arena_cli.runner.invoke(cli, ["--db", f"sqlite:///{arena_cli.db_path}", "play", *args], input=typed)
    assert result.exit_code == 0, result.output
    [match] = arena_cli.json("matches")
    return result.stdout, match


def test_a_person_plays_at_the_terminal_and_the_match_is_rated(arena_cli):
    shown, match = play(arena_cli, "--game", "tic_tac_toe", "--against", "random", "--seed", "3", "--name", "alice",
                        typed="nonsense\n" + every_move(9, 9))  # fmt: skip
    assert "your move: x(0,0)" in shown
    assert "not a legal move" in shown  # "nonsense", then cells already taken
    assert "You win" in shown or "You lose" in shown or "A draw" in shown
    assert match["reason"] == "normal" and match["seats"][0]["agent"] == "human:name=alice"
    assert "human:name=alice" in {row["agent"] for row in arena_cli.json("leaderboard", "--game", "tic_tac_toe")}


def test_connect_four_against_minimax_in_the_second_seat(arena_cli):
    _shown, match = play(arena_cli, "--game", "connect_four", "--against", "minimax:depth=2", "--seat", "1", "--seed", "1",
                         typed=every_move(7, 30))  # fmt: skip
    assert match["reason"] == "normal" and match["seats"][1]["agent"] == "human"


def test_a_person_who_leaves_forfeits(arena_cli):
    _shown, match = play(arena_cli, "--game", "tic_tac_toe", "--against", "greedy", typed="4\n")
    assert match["reason"] == "agent_disconnected" and match["seats"][0]["outcome"] == "loss"
    bad = arena_cli("play", "--game", "tic_tac_toe", "--against", "greedy", "--seat", "5", ok=False)
    assert bad.exit_code == 2 and "--seat" in bad.stderr
