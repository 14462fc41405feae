"""A registered agent name works where a command takes one agent outside a tournament: `arena train --opponent` and
`--eval-opponent`, `arena evolve-decks --agent` (DESIGN: a named agent is usable by name anywhere an agent is expected)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from arena.cli import cli
from arena.evolution import read_evolution
from arena.training.metrics import read_metrics

TRAIN = ("train", "--game", "tic_tac_toe", "--algorithm", "qlearning", "--episodes", "8", "--eval-games", "2",
         "--eval-every", "4", "--quiet")  # fmt: skip
TINY_EVOLUTION = ("--population", "3", "--generations", "1", "--survivors", "1", "--offspring", "1", "--benchmark", "0")


def arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files if name != "metadata"}


def one_line(result, fragment: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.stderr
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_training_against_a_name_plays_as_its_spec_does(arena_cli, tmp_path: Path) -> None:
    arena_cli("agents", "register", "deep", "--type", "minimax", "--param", "depth=1", "--game", "tic_tac_toe")
    by_name, by_spec = tmp_path / "name.npz", tmp_path / "spec.npz"
    arena_cli(*TRAIN, "--opponent", "deep", "--eval-opponent", "deep", "--out", str(by_name))
    arena_cli(*TRAIN, "--opponent", "minimax:depth=1", "--eval-opponent", "minimax:depth=1", "--out", str(by_spec))
    named, inline = arrays(by_name), arrays(by_spec)
    assert named.keys() == inline.keys() and all(np.array_equal(named[key], inline[key]) for key in named)
    rows, spec_rows = read_metrics(by_name), read_metrics(by_spec)
    assert rows[0]["opponent"] == rows[0]["eval_opponent"] == "deep" and "db" not in rows[0]
    evaluations = [(row["opponent"], row["win_rate"], row["loss_rate"]) for row in rows if row["kind"] == "eval"]
    assert len(evaluations) == 2 and {opponent for opponent, _, _ in evaluations} == {"deep"}
    assert [rates for _, *rates in evaluations] == [[row["win_rate"], row["loss_rate"]] for row in spec_rows if row["kind"] == "eval"]


def test_the_commands_own_db_option_finds_the_name_and_a_missing_name_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "names.db"
    runner = CliRunner()
    registered = runner.invoke(cli, ["agents", "register", "rnd", "--type", "random", "--param", "seed=3", "--db", str(db)])
    assert registered.exit_code == 0, registered.stderr
    out = tmp_path / "q.npz"
    trained = runner.invoke(cli, [*TRAIN, "--opponent", "rnd", "--db", str(db), "--out", str(out)])
    assert trained.exit_code == 0, trained.stderr
    assert read_metrics(out)[0]["opponent"] == "rnd"
    missing = tmp_path / "none.db"
    refused = runner.invoke(cli, [*TRAIN, "--opponent", "nobody", "--db", str(missing), "--out", str(tmp_path / "x.npz")])
    one_line(refused, "--opponent: unknown opponent 'nobody': not an agent type nor an agent registered in the database")
    assert not missing.exists() and not (tmp_path / "x.npz").exists()  # looking a name up makes no database
    with_params = runner.invoke(cli, [*TRAIN, "--eval-opponent", "rnd:seed=4", "--db", str(db), "--out", str(tmp_path / "x.npz")])
    one_line(with_params, "'rnd' is a registered agent name; give its parameters at registration")


def test_a_name_registered_for_another_game_is_refused(arena_cli, tmp_path: Path) -> None:
    arena_cli("agents", "register", "c4", "--type", "greedy", "--game", "connect_four")
    refused = arena_cli(*TRAIN, "--opponent", "c4", "--out", str(tmp_path / "q.npz"), ok=False)
    one_line(refused, "agent 'c4' is registered for game 'connect_four', not 'tic_tac_toe'")
    evolution = arena_cli("evolve-decks", "--agent", "c4", *TINY_EVOLUTION, "--out", str(tmp_path / "d.jsonl"), ok=False)
    one_line(evolution, "--agent: 'c4' is registered for game 'connect_four', not 'gwent_lite'")
    assert not (tmp_path / "q.npz").exists() and not (tmp_path / "d.jsonl").exists()


def test_decks_evolve_for_a_named_agent_and_the_best_deck_names_its_spec(arena_cli, tmp_path: Path) -> None:
    arena_cli("agents", "register", "steady", "--type", "greedy", "--param", "seed=3", "--game", "gwent_lite")
    out = tmp_path / "decks.jsonl"
    result = arena_cli("evolve-decks", "--agent", "steady", *TINY_EVOLUTION, "--out", str(out))
    rows = read_evolution(out)
    assert rows[0]["agent"] == "greedy:seed=3"
    spec = result.stdout.strip().splitlines()[-1].removeprefix("best deck: ")
    assert spec == rows[-1]["best"]["spec"] == f"greedy:seed=3,seat.deck={rows[-1]['best']['deck']}"
    inline = tmp_path / "inline.jsonl"
    arena_cli("evolve-decks", "--agent", "greedy:seed=3", *TINY_EVOLUTION, "--out", str(inline))
    assert [row for row in read_evolution(inline) if row["kind"] == "generation"] == [
        row for row in rows if row["kind"] == "generation"]  # fmt: skip
