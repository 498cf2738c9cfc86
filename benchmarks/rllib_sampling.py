"""Env-runner sampling speed in RLlib: the batched engine through Gymnasium's vector entry point
(``examples/rllib_vector_ppo.py``) next to the ``PettingZooEnv`` path (``examples/rllib_selfplay.py``).

    python benchmarks/rllib_sampling.py [--steps 16384] [--runners 0 2]

Each row times ``EnvRunner.sample`` (exploration, the module's forward pass included) in the
driver (``--runners 0``) or through ``EnvRunnerGroup`` with remote runners, after one untimed
warm-up. Steps are env steps: every decision on the ``PettingZooEnv`` path (all seats learn), a
learner decision on the vector path (the opponents' moves are inside a step).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")
sys.path.insert(0, EXAMPLES)


def sample_rate(config, steps: int) -> float:
    """Env steps per second sampled by the config's env runners."""
    algo = config.build_algo()
    try:
        group = algo.env_runner_group
        runners = group.num_remote_env_runners()

        def sample() -> int:
            if runners == 0:
                episodes = group.local_env_runner.sample(num_timesteps=steps)
            else:
                per = steps // runners
                episodes = [e for part in group.foreach_env_runner(lambda r: r.sample(num_timesteps=per),
                                                                   local_env_runner=False) for e in part]
            return sum(len(e) for e in episodes)

        sample()
        start = time.perf_counter()
        done = sample()
        return done / (time.perf_counter() - start)
    finally:
        algo.stop()


def main(argv: list[str] | None = None) -> None:
    import ray
    import rllib_selfplay
    import rllib_vector_ppo

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16384)
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--envs-per-runner", type=int, default=256)
    parser.add_argument("--opponents", default="heuristic")
    args = parser.parse_args(argv)
    # remote runners of the PettingZoo path build their env with a function of rllib_selfplay.py; one
    # numba thread per runner: runners already fill the cores, and numba's threads collapse when shared
    env_vars = {"PYTHONPATH": EXAMPLES, "NUMBA_NUM_THREADS": "1"}
    ray.init(include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env_vars})
    print("| path | env runners | envs per runner | env steps/s |")
    print("|---|---:|---:|---:|")
    for runners in args.runners:
        pz = rllib_selfplay.build_config("scat", 2, num_env_runners=runners, seed=0)
        vec = rllib_vector_ppo.build_config("scat", 2, args.opponents, num_env_runners=runners,
                                            num_envs_per_env_runner=args.envs_per_runner, seed=0)
        rate_pz = sample_rate(pz, args.steps)
        rate_vec = sample_rate(vec, args.steps)
        print(f"| PettingZooEnv(thirtyone_v0), self-play | {runners} | 1 | {rate_pz:,.0f} |")
        print(f"| make_vec vector_entry_point, vs {args.opponents} | {runners} | {args.envs_per_runner} | "
              f"{rate_vec:,.0f} ({rate_vec / rate_pz:.1f}x) |", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
