"""Train sb3-contrib ``MaskablePPO`` on one seat of Thirty-one, then measure its match win rate.

    pip install "thirtyone-env[sb3]"
    python examples/sb3_maskable_ppo.py --preset scat --players 2 --timesteps 100000 --opponent random

The learner plays ``ThirtyOneVecEnv`` (``thirtyone_env.sb3``): ``--num-envs`` tables of the
batched engine as one Stable-Baselines3 ``VecEnv``, a random seat each match, the other seats
played in batch by ``--opponent``; ``MaskablePPO`` reads the masks through
``env_method("action_masks")``, and ``VecMonitor`` records the episodes.
The evaluation seats the trained policy against ``RandomAgent`` and
``HeuristicAgent`` in every seat rotation on the batched engine
(``thirtyone_env.evaluation.tournament``) and prints the learner's match win rate with a 95% interval.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import time
from dataclasses import dataclass

import numpy as np

from agents import make as make_agent
from thirtyone_env import encoding
from thirtyone_env.evaluation import tournament
from thirtyone_env.rules import Rules

OPPONENTS = {"random": "RandomAgent", "greedy": "GreedyAgent", "heuristic": "HeuristicAgent"}


@dataclass
class Args:
    preset: str = "scat"
    """rules preset (``Rules.preset_names()``)"""
    players: int = 2
    """seats at the table"""
    timesteps: int = 100_000
    """learner decisions to train on"""
    opponent: str = "random"
    """who plays the other seats while training: random, greedy or heuristic"""
    episode: str = "match"
    """train on whole matches (reward +1/-1 at the end) or single deals (reward: net chips)"""
    seed: int = 0
    """seeds the envs, the opponents and the network"""
    num_envs: int = 16
    """tables stepped together (``ThirtyOneVecEnv``)"""
    eval_matches: int = 1000
    """matches per evaluation opponent"""
    out: str = "runs/sb3_maskable_ppo"
    """where the trained model is saved (``.zip`` is added)"""


def field_docs(cls: type) -> dict[str, str]:
    """The string under each field of a dataclass (what ``tyro`` would show as help)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {
        a.target.id: b.value.value
        for a, b in zip(body, body[1:], strict=False)
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
    }


def parse_args(argv: list[str] | None = None) -> Args:
    """The CLI is generated from ``Args``: one ``--flag`` per field, its docstring as help."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    docs = field_docs(Args)
    for field in dataclasses.fields(Args):
        flag = f"--{field.name.replace('_', '-')}"
        parser.add_argument(flag, type=type(field.default), default=field.default, help=docs.get(field.name))
    ns = parser.parse_args(argv)
    args = Args(**vars(ns))
    if args.opponent not in OPPONENTS:
        parser.error(f"--opponent {args.opponent!r}: allowed {sorted(OPPONENTS)}")
    return args


class SB3Agent:
    """A trained ``MaskablePPO`` behind the ``agents`` protocol (int8 observations in, legal ids out)."""

    def __init__(self, model, rules: Rules, num_players: int, deterministic: bool = True):
        self.model = model
        self.deterministic = deterministic
        self.scale = encoding.scale(rules.deck_size, num_players, rules.start_chips * num_players)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(
            obs.astype(np.float32) / self.scale, deterministic=self.deterministic, action_masks=mask
        )
        return np.asarray(actions, np.int64)

    def act(self, obs: dict) -> int:
        return int(self.act_batch(obs["observation"][None], obs["action_mask"][None].astype(bool))[0])


def train(args: Args):
    """Returns the trained model."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    from thirtyone_env.sb3 import ThirtyOneVecEnv

    envs = VecMonitor(ThirtyOneVecEnv(args.num_envs, preset=args.preset, num_players=args.players,
                                      opponents=args.opponent, episode=args.episode))
    envs.seed(args.seed)
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        n_steps=max(2048 // args.num_envs, 16),  # 2048 decisions per rollout, whatever the number of tables
        batch_size=256,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=0.995,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [128, 128]},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=args.timesteps)
    return model


def win_rate(model, opponent: str, rules: Rules, num_players: int, matches: int, seed: int) -> tuple:
    """(win rate, 95% interval) of the model in one seat against ``opponent`` in the others."""
    learner = SB3Agent(model, rules, num_players)
    others = make_agent(opponent, rules, num_players, seed=seed)
    result = tournament([learner, others], rules, num_players, matches, seed=seed,
                        seating=[0] + [1] * (num_players - 1))
    return result.win_rate(0), result.interval(0)


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    rules = Rules.resolve(args.preset)
    start = time.perf_counter()
    model = train(args)
    print(f"trained {args.timesteps} steps vs {args.opponent} in {time.perf_counter() - start:.0f}s")
    model.save(args.out)
    rates = {}
    for opponent in ("random", "heuristic"):
        rate, (low, high) = win_rate(model, opponent, rules, args.players, args.eval_matches, args.seed + 1)
        rates[opponent] = rate
        print(f"win rate vs {opponent}: {rate:.3f} (95% CI {low:.3f}-{high:.3f}, "
              f"{args.eval_matches} matches, fair share {1 / args.players:.3f})")
    return rates


if __name__ == "__main__":
    main()
