"""The plain PettingZoo loop on ``thirtyone_v0``: random legal moves, bare and under PettingZoo's wrappers.

    python examples/pettingzoo_random.py --preset scat --players 3 --matches 5 --render

``TerminateIllegalWrapper`` turns an illegal move into a lost game (reward -1)
instead of the engine's ``ValueError``; ``AssertOutOfBoundsWrapper`` checks the
action space first. The second part plays one deliberately illegal move to show it.
"""

from __future__ import annotations

import argparse

import numpy as np
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper

from thirtyone_env import thirtyone_v0


def play(env, seed: int, rng: np.random.Generator, illegal_at: int | None = None) -> dict[str, float]:
    """One episode with masked random actions; ``illegal_at``: the step at which to play an illegal one."""
    env.reset(seed=seed)
    final: dict[str, float] = {}
    for step, agent in enumerate(env.agent_iter()):
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            final[agent] = reward
            action = None
        elif step == illegal_at:
            action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    return final


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="scat")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--render", action="store_true", help="print the table after every move")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    env = thirtyone_v0.env(num_players=args.players, rules=args.preset,
                           render_mode="human" if args.render else None)
    for m in range(args.matches):
        final = play(env, args.seed + m, rng)
        print(f"match {m}: " + ", ".join(f"{a} {r:+.2f}" for a, r in final.items()))

    wrapped = OrderEnforcingWrapper(
        AssertOutOfBoundsWrapper(
            TerminateIllegalWrapper(thirtyone_v0.raw_env(num_players=args.players, rules=args.preset), -1)
        )
    )
    final = play(wrapped, args.seed, rng, illegal_at=2)
    print("illegal move at step 2 under TerminateIllegalWrapper: "
          + ", ".join(f"{a} {r:+.2f}" for a, r in final.items()))


if __name__ == "__main__":
    main()
