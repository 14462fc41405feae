"""The real `arena` command as a subprocess: the README's flow."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"


def run(*args, cwd, ok=True):
    result = subprocess.run([ARENA, *args], cwd=cwd, capture_output=True, text=True, env=dict(os.environ, ARENA_DB=""))
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def test_default_database_is_arena_db_in_the_working_directory(tmp_path):
    out = run("run-tournament", "--game", "connect_four", "--agents", "random,greedy", "--rounds", "4", cwd=tmp_path)
    assert (tmp_path / "arena.db").exists()
    assert "greedy" in out.stdout and "Leaderboard" in out.stdout
    board = json.loads(run("leaderboard", "--json", cwd=tmp_path).stdout)
    assert {row["agent"] for row in board} == {"random", "greedy"}


def test_bad_input_as_a_subprocess(tmp_path):
    result = run("run-tournament", "--game", "nope", "--agents", "random,greedy", cwd=tmp_path, ok=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["Error: unknown game 'nope' (known: " + result.stderr.split("(known: ")[1].strip()]
    assert "Traceback" not in result.stderr


def test_env_database(tmp_path):
    env = dict(os.environ, ARENA_DB=str(tmp_path / "env.db"))
    subprocess.run([ARENA, "run-tournament", "--game", "tic_tac_toe", "--agents", "random,greedy", "--quiet"], cwd=tmp_path,
                   env=env, check=True, capture_output=True)  # fmt: skip
    assert (tmp_path / "env.db").exists() and not (tmp_path / "arena.db").exists()


def test_python_dash_m_arena_is_the_arena_command(tmp_path):
    """`python -m arena` for an environment whose scripts folder is not on PATH: the same command, the same errors."""
    base = [sys.executable, "-m", "arena"]
    env = dict(os.environ, ARENA_DB="")
    out = subprocess.run([*base, "leaderboard", "--json"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 2 and out.stderr.startswith("Error: "), out.stderr
    out = subprocess.run([*base, "--help"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.startswith("Usage: arena "), out.stdout
