"""Train with a well-known library on an Arena game, export the policy to ONNX, and rank it with Arena.

    python examples/train_maskable_ppo.py --game tic_tac_toe --opponent random --timesteps 30000 --out ttt-ppo.onnx
    arena run-tournament --game tic_tac_toe --agents neural:checkpoint=ttt-ppo.onnx,random,greedy --rounds 50

sb3-contrib's MaskablePPO learns on `arena.envs.gymnasium_env` (the learner against any Arena agent
spec, seats alternating; MaskablePPO reads the legal actions from the environment's
`action_masks()`). The trained actor is exported to ONNX with input `observation` [batch,
*observation_shape] float32 and outputs `action_values` (one logit per action id) and
`state_value` [batch, 1] (the critic): the file contract of Arena's `neural` agent, which plays it
with no plugin code (`neural:checkpoint=FILE`); the game it was trained for is in the model's
metadata (`arena` JSON property), so a policy for another game is refused in one line. The ONNX
outputs are checked against PyTorch's before the file is written.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="tic_tac_toe")
    parser.add_argument("--opponent", default="random", help="an Arena agent spec")
    parser.add_argument("--timesteps", type=int, default=30_000)
    parser.add_argument("--n-steps", type=int, default=512, help="PPO rollout length per update")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="policy.onnx")
    args = parser.parse_args(argv)

    import torch
    from sb3_contrib import MaskablePPO

    from arena.envs import gymnasium_env

    torch.set_num_threads(1)
    env = gymnasium_env(args.game, opponent=args.opponent, seat="alternate")
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=64, seed=args.seed, verbose=0, device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    print(f"trained MaskablePPO on {env.game.label()} against {args.opponent}: {args.timesteps} steps in "
          f"{time.perf_counter() - start:.1f}s", file=sys.stderr)
    export_onnx(model.policy, env, args.out)
    print(args.out)
    return 0


class ActorCritic:
    """The policy's actor logits and critic value as one torch module (built lazily: torch is imported in main)."""

    @staticmethod
    def build(policy):
        import torch

        class Exported(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.policy = policy

            def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                features = self.policy.extract_features(observation, self.policy.pi_features_extractor)
                latent_pi, latent_vf = self.policy.mlp_extractor(features)
                return self.policy.action_net(latent_pi), self.policy.value_net(latent_vf)

        return Exported().eval()


def export_onnx(policy, env, path: str) -> None:
    import onnx
    import onnxruntime
    import torch

    from agents.neural import game_description

    module = ActorCritic.build(policy)
    shape = env.observation_space.shape
    example = torch.from_numpy(np.stack([env.reset(seed=s)[0] for s in range(4)]).astype(np.float32))
    with warnings.catch_warnings():  # the TorchScript-based exporter (quiet, no onnxscript) notes that it is the legacy one
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(module, (example,), path, input_names=["observation"], output_names=["action_values", "state_value"],
                          dynamic_axes={"observation": {0: "batch"}, "action_values": {0: "batch"}, "state_value": {0: "batch"}},
                          dynamo=False)  # fmt: skip
    model = onnx.load(path)
    metadata = {"format": "onnx", **game_description(env.game), "output": "logits", "algorithm": "MaskablePPO (sb3-contrib)"}
    onnx.helper.set_model_props(model, {"arena": json.dumps(metadata, sort_keys=True), "game": env.game.info.id,
                                        "game_version": env.game.info.version})  # fmt: skip
    onnx.save(model, path)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    logits, value = session.run(None, {"observation": example.numpy()})
    with torch.no_grad():
        expected_logits, expected_value = module(example)
    np.testing.assert_allclose(logits, expected_logits.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(value, expected_value.numpy(), rtol=1e-4, atol=1e-5)
    assert logits.shape == (4, env.action_space.n) and tuple(example.shape[1:]) == tuple(shape)


if __name__ == "__main__":
    raise SystemExit(main())
