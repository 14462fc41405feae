"""arena.envs: every built-in game passes PettingZoo's api_test and Gymnasium's check_env, with the peers' own functions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import arena
from arena.envs import gymnasium_env, pettingzoo_env
from arena.plugins import get_registry

GAMES = sorted(get_registry().games)

# Warnings the checkers give for choices made on purpose: the observation range is not declared
# by games (so Box bounds are infinite), the AEC observation is PettingZoo's {observation,
# action_mask} dict (as its classic games), and some games start from an empty board.
ACCEPTED = ("infinity", "Observation is not a NumPy array", "Observation space for each agent probably should be",
            "all zeros", "alternative render modes")  # fmt: skip


def unexpected(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if not any(text in str(w.message) for text in ACCEPTED)]


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_test(game: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(pettingzoo_env(game), num_cycles=300)
    assert unexpected(caught) == []


@pytest.mark.parametrize("game", GAMES)
def test_gymnasium_check_env(game: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gymnasium_env(game, opponent="random"))
        check_env(gymnasium_env(game, opponent="greedy", seat=1, render_mode="ansi"))
    assert unexpected(caught) == []


@pytest.mark.parametrize("game", ["tic_tac_toe", "incan_gold", "gwent_lite"])
def test_pettingzoo_seed_test(game: str) -> None:
    seed_test(lambda: pettingzoo_env(game), num_cycles=50)


def test_more_players_and_hidden_information() -> None:
    """Incan Gold with 5 players: 5 agents; each agent's observation is what a view of its seat gives."""
    env = pettingzoo_env("incan_gold", players=5)
    assert env.possible_agents == [f"player_{k}" for k in range(5)]
    for game in ("incan_gold:players=5", "gwent_lite"):
        env = pettingzoo_env(game)
        env.reset(seed=3)
        for agent in env.agent_iter(400):
            obs, _, terminated, truncated, _ = env.last()
            state, seat = env.state, env.seat(agent)
            # The view re-samples everything the seat may not see: an observation that depended on
            # hidden information would change with it.
            for _ in range(3):
                assert np.array_equal(obs["observation"], np.asarray(state.view(seat).observation(seat), dtype=np.float32))
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(env.np_random.choice(np.flatnonzero(obs["action_mask"]))))


def test_turn_limit_truncates_and_illegal_action_loses() -> None:
    env = pettingzoo_env("connect_four", max_turns=3)
    env.reset(seed=0)
    for _ in range(3):
        obs, *_ = env.last()
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (7,)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}

    env = pettingzoo_env("tic_tac_toe")
    env.reset(seed=0)
    env.step(4)
    env.step(4)  # taken: player_1 loses at once
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 0.0, "player_1": -1.0} and env.infos["player_1"] == {"illegal_action": True}

    gym = gymnasium_env("tic_tac_toe", opponent="random", seat=0)
    gym.reset(seed=1)
    _, _, _, _, info = gym.step(4)
    occupied = [a for a in range(9) if info["action_mask"][a] == 0]
    _, reward, terminated, truncated, info = gym.step(occupied[0])
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)


def test_gymnasium_seats_masks_and_determinism() -> None:
    env = gymnasium_env("connect_four", opponent="minimax:depth=1")
    seats = []
    for episode in range(4):
        _, info = env.reset(seed=5 if episode == 0 else None)
        seats.append(info["seat"])
        assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
    assert seats == [0, 1, 0, 1]

    def episode(seed: int) -> list[tuple[int, float]]:
        env = gymnasium_env("connect_four", opponent="random", seat=1)
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        played = []
        while True:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, terminated, truncated, info = env.step(action)
            played.append((action, reward))
            if terminated or truncated:
                return played

    assert episode(11) == episode(11)
    assert episode(11) != episode(12)


def test_bad_input_is_one_arena_error() -> None:
    with pytest.raises(arena.ArenaError, match="unknown game"):
        pettingzoo_env("chess")
    with pytest.raises(arena.ArenaError, match="is for 2 players"):
        pettingzoo_env("connect_four", players=3)
    with pytest.raises(arena.ArenaError, match="unknown agent"):
        gymnasium_env("connect_four", opponent="nobody")
    with pytest.raises(arena.ArenaError, match="seat"):
        gymnasium_env("connect_four", seat=2)
    with pytest.raises(arena.ArenaError, match="reward shaping"):
        gymnasium_env("connect_four", shaping="positional")


def test_reset_that_never_reaches_the_learner_is_one_arena_error() -> None:
    """Opponents' moves that use up the turn limit before the learner's first move: reset started episode after episode
    (until RecursionError); now it tries a bounded number, then says what to change."""
    env = gymnasium_env("tic_tac_toe", seat=1, max_turns=1)
    with pytest.raises(arena.ArenaError, match=r"max_turns=1\) before the learner \(seat 1\) had a move"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    alternating = gymnasium_env("tic_tac_toe", max_turns=1)  # seat 1's episodes are skipped: seat 0 moves first
    assert [alternating.reset(seed=0 if n == 0 else None)[1]["seat"] for n in range(3)] == [0, 0, 0]


def test_reward_shaping_is_the_games() -> None:
    """Reversi's positional shaping (the Reversi report): a corner is worth more than an X square."""
    env = gymnasium_env("reversi", opponent="random", seat=0, shaping="positional")
    _, info = env.reset(seed=2)
    _, reward, *_ = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert reward == pytest.approx(0.001)  # d3 (weight 1) flipping d4 (weight 0), over 1000
    game = env.game
    shaping = game.reward_shapings()["positional"]
    state = game.new_initial_state(0)
    assert shaping(state, 64, 0) == 0.0  # a pass
    aec = pettingzoo_env("reversi", shaping="positional")
    aec.reset(seed=0)
    aec.step(19)
    assert aec.rewards["player_0"] == pytest.approx(0.001)


def test_readme_environment_example_runs() -> None:
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.DOTALL) if "arena.envs" in b]
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 (the README's own example)
