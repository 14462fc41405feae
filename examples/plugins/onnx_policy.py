"""`onnx_policy`: plays an ONNX policy (input [batch, *observation_shape] float32, first output one value per
action id) through onnxruntime: the best legal action. A loose-file plugin for the worked example
(examples/train_maskable_ppo.py): load it with `--plugins-dir examples/plugins`.

The model's `arena` metadata (game id and version, observation shape, number of actions) is checked
against the game before the tournament starts, so a policy for another game is refused in one line.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np

import arena


@functools.lru_cache(maxsize=8)
def _session(path: str) -> tuple[Any, dict[str, Any]]:
    try:
        import onnxruntime
    except ImportError:
        raise arena.ArenaError("onnx_policy needs onnxruntime: pip install -e \".[models]\"") from None
    try:
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as exc:  # an unreadable or foreign file: one line, not a traceback
        raise arena.ArenaError(f"checkpoint {path}: not a readable ONNX model ({type(exc).__name__})") from None
    return session, json.loads(session.get_modelmeta().custom_metadata_map.get("arena", "{}"))


class OnnxPolicy(arena.Agent):
    info = arena.AgentInfo(id="onnx_policy", description="An ONNX policy network (best legal action).",
                           params=(arena.Param("checkpoint", "", "the .onnx file"),))  # fmt: skip

    @classmethod
    def check_game(cls, game: arena.Game, params: dict[str, Any]) -> None:
        _, meta = _session(params["checkpoint"])
        if (meta.get("game"), meta.get("game_version")) != (game.info.id, game.info.version):
            raise arena.ArenaError(f"checkpoint {params['checkpoint']} is for {meta.get('game')} version {meta.get('game_version')}, "
                                   f"not {game.info.id} version {game.info.version}")  # fmt: skip
        if meta.get("num_actions") != game.num_distinct_actions:
            raise arena.ArenaError(f"checkpoint {params['checkpoint']} has {meta.get('num_actions')} outputs, not {game.num_distinct_actions}")

    def __init__(self, game: arena.Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.session, _ = _session(self.params["checkpoint"])
        self.input = self.session.get_inputs()[0].name

    def act(self, state: arena.State) -> int:
        observation = np.asarray(state.observation(self.player), dtype=np.float32)[None]
        values = self.session.run(None, {self.input: observation})[0][0]
        legal = state.legal_actions()
        return int(legal[int(np.argmax(values[legal]))])


@arena.hookimpl
def register_agents(register: Any) -> None:
    register(OnnxPolicy)
