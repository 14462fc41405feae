"""Tabular Q-learning for small games (`arena train --algorithm qlearning`), as the Dots and Boxes report's 2x2 player.

The table maps a position (the bytes of the learner's observation tensor) to one Q-value per
action id. After each episode the learner's moves are updated from the last to the first:
Q(s, a) += alpha * (r + gamma * max over the next position's legal actions of Q(s', a') - Q(s, a)),
where r is the move's shaped reward plus, after the last move, the final reward (+1/0/-1), and the
opponent's replies are part of the environment (the report: "the other player is regarded as part
of the environment"). Exploration is epsilon-greedy with the DQN's linear schedule; an unseen
position is played at random. `alpha` is `--lr` (default 0.1). The file written is an `.npz` with
the table (`keys`: uint8 [positions, key bytes], `values`: float32 [positions, actions]) and a
`metadata` JSON string (format `arena-qtable`), read without pickle; the `neural` agent plays it
(agents/models/qtable.py).
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.models.qtable import FORMAT_NAME, FORMAT_VERSION
from agents.neural import choose_action, game_description
from agents.train_state import random_state, set_random_state
from arena.files import write_atomically
from arena.seeding import derive_seed

if TYPE_CHECKING:
    import arena
    from agents.neural_train import Chooser, Plan, Trajectory, Values



class TabularQ:
    output = "q_values"

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.actions = plan.game.num_distinct_actions
        self.table: dict[bytes, np.ndarray] = {}
        self.rng = random.Random(derive_seed(plan.config.seed, "actions"))
        self.alpha = plan.lr
        self.gamma = plan.config.gamma
        self.episode = 0
        self.losses: list[float] = []
        self._zeros = np.zeros(self.actions, dtype=np.float32)

    def epsilon(self) -> float:
        from agents.neural_train import epsilon_at

        return epsilon_at(self.episode, self.plan.config.episodes)

    def choose(self, observation: np.ndarray, legal: list[int], state: arena.State) -> int:
        values = self.table.get(observation.tobytes())
        if values is None or self.rng.random() < self.epsilon():
            return self.rng.choice(legal)
        return choose_action(values, legal, None)

    def learn(self, trajectory: Trajectory, episode: int) -> None:
        self.episode = episode + 1
        steps = len(trajectory.actions)
        if not steps:
            return
        rewards = trajectory.step_rewards()
        keys = [o.tobytes() for o in trajectory.observations]
        squared = 0.0
        for t in range(steps - 1, -1, -1):
            values = self.table.get(keys[t])
            if values is None:
                values = self.table[keys[t]] = np.zeros(self.actions, dtype=np.float32)
            target = rewards[t]
            if t < steps - 1:
                following = self.table.get(keys[t + 1])
                if following is not None:
                    target += self.gamma * float(following[trajectory.masks[t + 1]].max())
            error = target - float(values[trajectory.actions[t]])
            values[trajectory.actions[t]] += self.alpha * error
            squared += error * error
        self.losses.append(squared / steps)

    def values(self, observation: np.ndarray) -> np.ndarray:
        return self.table.get(observation.tobytes(), self._zeros)

    def greedy(self) -> Chooser:
        from agents.neural_train import greedy_policy

        return greedy_policy(self.values)

    def snapshot(self) -> Values:
        table = {key: values.copy() for key, values in self.table.items()}
        zeros = self._zeros
        return lambda observation: table.get(observation.tobytes(), zeros)

    def settings(self) -> dict[str, Any]:
        return {"table": "observation bytes", "alpha": self.alpha}

    def finish(self) -> None:
        pass

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The table as (keys uint8 [positions, key bytes], values float32 [positions, actions]), keys sorted."""
        keys = sorted(self.table)
        key_array = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), -1) if keys else np.zeros((0, 0), np.uint8)
        value_array = np.stack([self.table[k] for k in keys]) if keys else np.zeros((0, self.actions), np.float32)
        return key_array, value_array

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        keys, values = self.arrays()
        return {"rng": random_state(self.rng), "episode": self.episode}, {"q.keys": keys, "q.values": values}

    def restore(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        set_random_state(self.rng, meta["rng"])
        self.episode = int(meta["episode"])
        self.table = {key.tobytes(): values.copy() for key, values in zip(arrays["q.keys"], arrays["q.values"], strict=True)}

    def save(self, path: str, training: dict[str, Any]) -> None:
        import io

        key_array, value_array = self.arrays()
        metadata = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **game_description(self.plan.game), "output": self.output,
                    "algorithm": "qlearning", "positions": len(key_array), "training": training}  # fmt: skip
        buffer = io.BytesIO()
        np.savez(buffer, keys=key_array, values=value_array, metadata=np.array(json.dumps(metadata, sort_keys=True)))
        write_atomically(path, buffer.getvalue())

