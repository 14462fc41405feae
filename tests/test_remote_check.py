"""`arena check-agent` on real bot processes, and `arena play` (agent `human`) fed through standard input.

A time per move of 60 s where time is not the point: a loaded machine may stall for seconds."""

from __future__ import annotations

import json

from tests._bots import fault_bot, push_bot


def test_check_agent_passes_a_good_bot(arena_cli):
    with push_bot() as url:
        result = arena_cli("check-agent", f"http:url={url}", "--game", "connect_four", "--seeds", "2", "--time-per-move", "60")
    assert "passed" in result.stdout and "round trips" in result.stdout


def test_check_agent_reports_illegal_moves_and_bad_replies(arena_cli):
    for bot, reason in (("illegal", "illegal_action"), ("wrong_type", "bad_reply")):
        with fault_bot(bot) as url:
            result = arena_cli("check-agent", f"http:url={url}", "--game", "tic_tac_toe", "--seeds", "1",
                               "--time-per-move", "60", ok=False)  # fmt: skip
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
        report = arena_cli.json("check-agent", f"http:url={url}", "--game", "connect_four", "--seeds", "2", "--time-per-move", "60")
    assert report["ok"]
    assert any("Nagle" in w for w in report["warnings"]), report["round_trip_ms"]


def test_check_agent_takes_the_think_time_a_bot_reports_out_of_the_nagle_check(arena_cli):
    """A bot that thinks 40 ms and says so (think_ms) is not told it leaves Nagle's algorithm on."""
    with fault_bot("thinker") as url:
        report = arena_cli.json("check-agent", f"http:url={url}", "--game", "connect_four", "--seeds", "2", "--time-per-move", "60")
    assert report["ok"] and 40 <= report["round_trip_ms"]["p50"] < 100
    assert not any("Nagle" in w for w in report["warnings"]), report["warnings"]


def test_check_agent_warns_when_start_is_not_answered_2xx(arena_cli):
    """/start's answer is ignored in play, so a wrong route prefix shows first there: check-agent says so."""
    with fault_bot("start_500") as url:
        report = arena_cli.json("check-agent", f"http:url={url}", "--game", "tic_tac_toe", "--seeds", "1", "--time-per-move", "60")
    assert report["ok"] and any("/start answered HTTP 500" in w for w in report["warnings"]), report["warnings"]


def test_check_agent_on_a_named_agent(arena_cli):
    """A registered name is checked as what it stands for (README: `arena check-agent mybot`)."""
    with push_bot() as url:
        arena_cli("agents", "register", "mybot", "--type", "http", "--param", f"url={url}")
        report = arena_cli.json("check-agent", "mybot", "--game", "tic_tac_toe", "--seeds", "1", "--time-per-move", "60")
    assert report["ok"] and report["agent"] == "mybot" and report["matches"] == 2 and report["round_trip_ms"]["moves"] > 0


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
    for name in ("", "ada lovelace", 'ada"', "a,b"):  # the name becomes part of the agent's spec (human:name=...)
        bad = arena_cli("play", "--game", "tic_tac_toe", "--against", "greedy", "--name", name, ok=False)
        assert bad.exit_code == 2 and "--name: a person's name" in bad.stderr, bad.stderr


def test_a_person_plays_a_loose_file_plugin_agent_given_by_plugins_dir(tmp_path):
    """A plugin's agent would play in a worker process (crash containment), but a person reads this process's terminal:
    the match stays here, and --plugins-dir reaches whatever does run it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import TEST_PLUGINS

    arena = Path(sys.executable).parent / "arena"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_PLUGINS_DIR"}
    result = subprocess.run([str(arena), "--db", str(tmp_path / "a.db"), "play", "--plugins-dir", str(TEST_PLUGINS), "--game",
                             "tic_tac_toe", "--against", "sleeper:seconds=0", "--seed", "2"], input=every_move(9, 9), text=True,
                            capture_output=True, env=env, cwd=tmp_path, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "after 0 moves" not in result.stdout and ("You win" in result.stdout or "You lose" in result.stdout
                                                     or "A draw" in result.stdout), result.stdout  # fmt: skip


def test_a_person_at_the_terminal_is_not_timed_by_the_watchdog_of_a_plugin_opponent(tmp_path):
    """A plugin's agent in the match puts the in-process watchdog on its seat (its default deadline shortened to 1 s
    here), not on the person: they answer after 2 s and play on (before, 'the in-process watchdog stopped the agent')."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from tests.conftest import TEST_PLUGINS

    arena = Path(sys.executable).parent / "arena"
    env = {**{k: v for k, v in os.environ.items() if k != "ARENA_PLUGINS_DIR"}, "ARENA_MOVE_DEADLINE": "1"}
    run = subprocess.Popen([str(arena), "--db", str(tmp_path / "a.db"), "play", "--plugins-dir", str(TEST_PLUGINS), "--game",
                            "tic_tac_toe", "--against", "sleeper:seconds=0", "--seed", "2", "--seat", "0"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)  # fmt: skip
    try:
        time.sleep(2.0)  # the person thinks past the watchdog's 1 s
        out, err = run.communicate(every_move(9, 9), timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)
    assert run.returncode == 0 and "watchdog" not in out + err and "after 0 moves" not in out, (out, err)


def test_play_says_when_the_opponent_is_recorded_under_a_registered_name(arena_cli):
    arena_cli("agents", "register", "careful", "--type", "minimax", "--param", "depth=2", "--game", "tic_tac_toe")
    arena_cli("run-tournament", "--game", "tic_tac_toe", "--agents", "careful,random", "--rounds", "1", "--quiet")
    from arena.cli import cli

    result = arena_cli.runner.invoke(cli, ["--db", f"sqlite:///{arena_cli.db_path}", "play", "--game", "tic_tac_toe",
                                           "--against", "minimax:depth=2", "--seed", "1"], input=every_move(9, 9))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "note: 'minimax:depth=2' is the agent with results for this game as 'careful'" in result.stderr


def test_a_person_who_presses_ctrl_c_leaves_the_game_stopped(tmp_path, monkeypatch):
    """Ctrl-C at `arena play`'s prompt: the game is listed `stopped`, not `running` for good."""
    import io

    from arena.library import tournaments
    from arena.plugins import get_registry
    from arena.remote.play import play_against
    from db.session import open_database

    class CtrlC(io.StringIO):
        def readline(self, *args: object) -> str:
            raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", CtrlC())
    database = open_database(f"sqlite:///{tmp_path / 'play.db'}")
    try:
        play_against(get_registry(), database, "tic_tac_toe", "greedy", seed=1)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("Ctrl-C should have ended the game")
    row = tournaments.one(database, 1)
    assert row["status"] == "stopped" and row["done"] == 0


def test_the_terminal_says_how_many_moves_in_words_that_fit_the_number(capsys):
    from arena.match import MatchResult
    from arena.plugins import get_registry
    from arena.remote.human import HumanAgent

    agent = HumanAgent(get_registry().game_class("tic_tac_toe")(), 0, 0, name="ada")
    for turns, reason, detail, words in ((1, "agent_crashed", "seat 1 exited", "You win after 1 move (agent_crashed: seat 1 exited)."),
                                         (2, "normal", None, "You win after 2 moves."), (0, "timeout", None, "You win after 0 moves (timeout).")):
        agent.end(MatchResult(scores=[1.0, 0.0], outcomes=["win", "loss"], ranks=[1, 2], turns=turns, reason=reason, detail=detail))
        assert capsys.readouterr().out.strip() == words
