"""Single-agent PPO with RLlib, sampling the batched engine through Gymnasium's vector entry point.

    pip install "thirtyone-env[rllib]"
    python examples/rllib_vector_ppo.py --preset scat --players 2 --opponents heuristic --iterations 20
    python examples/rllib_vector_ppo.py --address auto --num-env-runners 32   # on a Ray cluster

Each env runner builds ``gymnasium.make_vec("thirtyone_env:ThirtyOne-v0", num_envs=N,
vectorization_mode="vector_entry_point", ...)`` (RLlib's ``gym_env_vectorize_mode``): N tables
stepped by the numba engine, the learner in one seat, ``--opponents`` in the others, so a
runner samples at engine speed instead of one Python loop per table. The ``thirtyone_env:``
prefix makes Gymnasium import the package (which registers the env) in every runner process.
Observations come as ``{"observations", "action_mask"}`` for RLlib's ``ActionMaskingTorchRLModule``.
After training, the module plays one seat greedily against ``--opponents`` and its match win
rate is printed (``thirtyone_env.evaluation.tournament``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from thirtyone_env.rules import Rules

ENV_ID = "thirtyone_env:ThirtyOne-v0"


def build_config(
    preset: str = "scat",
    players: int = 2,
    opponents: str = "heuristic",
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 256,
    train_batch_size: int = 16384,
    minibatch_size: int = 2048,
    num_epochs: int = 4,
    hidden: tuple[int, ...] = (128, 128),
    seed: int | None = 0,
):
    """PPOConfig for one masked module; ``num_env_runners=0`` samples in the driver process."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return (
        PPOConfig()
        # RLlib's env check steps unmasked random actions, which the env refuses with ValueError
        .environment(
            ENV_ID,
            env_config={"preset": preset, "num_players": players, "opponents": opponents, "observation": "dict"},
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                model_config={"fcnet_hiddens": list(hidden), "vf_share_layers": False},
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="scat", help="rules preset")
    parser.add_argument("--players", type=int, default=2, help="seats at the table")
    parser.add_argument("--opponents", default="heuristic", help="who plays the other seats (an agent spec or mix)")
    parser.add_argument("--iterations", type=int, default=20, help="PPO training iterations")
    parser.add_argument("--num-env-runners", type=int, default=0, help="sampling actors (0: sample in this process)")
    parser.add_argument("--num-envs-per-env-runner", type=int, default=256, help="tables per runner")
    parser.add_argument("--train-batch-size", type=int, default=16384, help="env steps per iteration")
    parser.add_argument("--address", default=None,
                        help="Ray cluster to join: 'auto', 'ray://head:10001' (default: start one locally)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-matches", type=int, default=1000, help="matches against --opponents (0: skip)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, float]:
    import ray

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from rllib_selfplay import RLlibAgent  # the trained module behind the agents' act_batch protocol

    args = parse_args(argv)
    rules = Rules.resolve(args.preset)
    rules.check_num_players(args.players)
    ray.init(address=args.address, include_dashboard=False)
    config = build_config(args.preset, args.players, args.opponents, args.num_env_runners,
                          args.num_envs_per_env_runner, args.train_batch_size, seed=args.seed)
    algo = config.build_algo()
    out: dict[str, float] = {}
    for i in range(args.iterations):
        start = time.perf_counter()
        result = algo.train()
        runners = result["env_runners"]
        sampled = runners.get("num_env_steps_sampled", float("nan"))
        sample_s = result.get("timers", {}).get("env_runner_sampling_timer", float("nan"))
        print(f"iter {i + 1}: {time.perf_counter() - start:.1f}s (sampling {sample_s:.2f}s for {sampled} steps), "
              f"episode return {runners.get('episode_return_mean', float('nan')):+.3f}, "
              f"length {runners.get('episode_len_mean', float('nan')):.1f}")
        out["sample_steps_per_s"] = sampled / sample_s if sample_s == sample_s and sample_s > 0 else float("nan")
    if args.eval_matches:
        from agents import make
        from thirtyone_env.evaluation import tournament

        learner = RLlibAgent(algo.get_module(), rules, args.players)
        opponent = make(args.opponents, rules, args.players, seed=args.seed)
        result = tournament([learner, opponent], rules, args.players, args.eval_matches, seed=args.seed + 1,
                            seating=[0] + [1] * (args.players - 1))
        low, high = result.interval(0)
        out.update(win_rate=result.win_rate(0), low=low, high=high)
        print(f"win rate vs {args.opponents}: {result.win_rate(0):.3f} (95% CI {low:.3f}-{high:.3f}, "
              f"fair share {1 / args.players:.3f})")
    algo.stop()
    ray.shutdown()
    return out


if __name__ == "__main__":
    main()
