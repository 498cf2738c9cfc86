"""Self-play PPO on ``thirtyone_v0`` with RLlib: one shared, action-masked policy for every seat.

    pip install "thirtyone-env[rllib]"
    python examples/rllib_selfplay.py --preset scat --players 3 --iterations 20
    python examples/rllib_selfplay.py --address auto --num-env-runners 32   # on a Ray cluster

The AEC env goes through RLlib's own ``PettingZooEnv`` wrapper. RLlib's
``ActionMaskingTorchRLModule`` (new API stack) wants each observation as
``{"observations": ..., "action_mask": ...}``: ``ScaledObservationWrapper`` gives
exactly that, float32 in [0, 1]. Every ``player_i`` maps to the module ``"shared"``.
After training, the module plays seat 0 greedily against ``RandomAgent`` and
its match win rate is printed.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from thirtyone_env.rules import Rules

ENV_NAME = "thirtyone_masked"
MODULE_ID = "shared"


def make_env(env_config: dict[str, Any]):
    """The RLlib env: ``PettingZooEnv(ScaledObservationWrapper(thirtyone_v0.env(...)))``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from thirtyone_env import thirtyone_v0
    from thirtyone_env.wrappers import ScaledObservationWrapper

    aec = thirtyone_v0.env(
        num_players=env_config.get("num_players", 2),
        rules=env_config.get("preset", "scat"),
        episode=env_config.get("episode", "match"),
    )
    return PettingZooEnv(ScaledObservationWrapper(aec, obs_key="observations"))


def build_config(
    preset: str = "scat",
    players: int = 2,
    num_env_runners: int = 0,
    train_batch_size: int = 4000,
    minibatch_size: int = 256,
    num_epochs: int = 4,
    hidden: tuple[int, ...] = (128, 128),
    seed: int | None = 0,
):
    """PPOConfig for one shared masked module; ``num_env_runners=0`` samples in the driver process."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    return (
        PPOConfig()
        # RLlib's env check steps unmasked random actions, which thirtyone_v0 rejects with ValueError
        .environment(
            ENV_NAME, env_config={"preset": preset, "num_players": players}, disable_env_checking=True
        )
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=1)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=lambda agent_id, episode, **kw: MODULE_ID)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    MODULE_ID: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": list(hidden), "vf_share_layers": False},
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=3e-4,
            gamma=0.995,
            entropy_coeff=0.01,
        )
        .debugging(seed=seed)
    )


class RLlibAgent:
    """A trained RLlib module behind the ``agents`` protocol: greedy over the legal actions."""

    def __init__(self, module, rules: Rules, num_players: int):
        from thirtyone_env import encoding

        self.module = module
        self.scale = encoding.scale(rules.deck_size, num_players, rules.start_chips * num_players)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import torch

        batch = {
            "obs": {
                "observations": torch.from_numpy(obs.astype(np.float32) / self.scale),
                "action_mask": torch.from_numpy(np.asarray(mask, np.float32)),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"]
        return logits.argmax(dim=-1).numpy().astype(np.int64)

    def act(self, obs: dict) -> int:
        return int(self.act_batch(obs["observation"][None], obs["action_mask"][None])[0])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="scat", help="rules preset")
    parser.add_argument("--players", type=int, default=2, help="seats at the table")
    parser.add_argument("--iterations", type=int, default=20, help="PPO training iterations")
    parser.add_argument("--num-env-runners", type=int, default=0,
                        help="sampling actors (0: sample in this process)")
    parser.add_argument("--train-batch-size", type=int, default=4000, help="env steps per iteration")
    parser.add_argument("--address", default=None,
                        help="Ray cluster to join: 'auto', 'ray://head:10001' (default: start one locally)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-matches", type=int, default=500, help="matches against RandomAgent (0: skip)")
    parser.add_argument("--checkpoint", default=None, help="directory to save the trained algorithm to")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    import ray

    args = parse_args(argv)
    rules = Rules.resolve(args.preset)
    rules.check_num_players(args.players)
    ray.init(address=args.address, include_dashboard=False)
    config = build_config(args.preset, args.players, args.num_env_runners, args.train_batch_size,
                          seed=args.seed)
    algo = config.build_algo()
    for i in range(args.iterations):
        start = time.perf_counter()
        result = algo.train()
        returns = result["env_runners"].get("agent_episode_returns_mean", {})
        length = result["env_runners"].get("episode_len_mean", float("nan"))
        print(f"iter {i + 1}: {time.perf_counter() - start:.1f}s, episode length {length:.1f}, "
              f"returns {returns}")
    if args.checkpoint:
        print("saved to", algo.save_to_path(args.checkpoint))
    if args.eval_matches:
        from agents import RandomAgent
        from thirtyone_env.evaluation import tournament

        learner = RLlibAgent(algo.get_module(MODULE_ID), rules, args.players)
        result = tournament([learner, RandomAgent(rules, args.players, seed=args.seed)], rules, args.players,
                            args.eval_matches, seed=args.seed + 1, seating=[0] + [1] * (args.players - 1))
        low, high = result.interval(0)
        print(f"win rate vs RandomAgent: {result.win_rate(0):.3f} (95% CI {low:.3f}-{high:.3f}, "
              f"fair share {1 / args.players:.3f})")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
