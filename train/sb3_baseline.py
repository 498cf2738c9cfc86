"""Stable-Baselines3 ``MaskablePPO`` (sb3-contrib) on ``thirtyone_env.sb3.ThirtyOneVecEnv``: the pipeline row.

What a user of the SB3 integration gets, with SB3's defaults except the network (two ReLU layers of
``hidden`` units, our PPO's size), the batch (``num_envs`` x ``n_steps``, minibatches of ``batch_size``)
and ``n_epochs``. The learner holds one seat of each table; the others are the task's fixed opponents
or, in a self-play task, a frozen copy of the learner (sampling its moves) refreshed every
``snapshot_every`` rollouts. Decisions are counted at the whole table: the learner's steps plus every
opponent move.

The trained actor is copied into a ``PolicyNet`` (the same layers: SB3's policy MLP is our trunk, its
action net our actor head; SB3's separate value network is not carried over, and playing needs none),
so the result plays as ``policy:PATH`` like every other entry.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.policy import PolicyAgent, PolicyNet
from thirtyone_env import encoding
from thirtyone_env.agent import make_agent, parse_mix
from thirtyone_env.rules import Rules
from train.learners import Callback, Stop, policy_payload, save_atomic


@dataclass
class Args:
    preset: str = "scat"
    """rules preset"""
    num_players: int = 2
    """players per table"""
    seed: int = 1
    """seed of the tables and the network"""
    total_decisions: int = 4_000_000
    """decisions at the training tables, every seat's"""
    minutes: float = 0.0
    """wall-clock cap (0 = none)"""
    out: str = "runs/sb3"
    """run folder: SB3's model.zip and the exported policy"""
    opponents: str = ""
    """the fixed opponent (an agent spec); empty = self-play against a frozen copy of the learner"""
    num_envs: int = 64
    """tables (SB3 environments)"""
    n_steps: int = 128
    """learner steps per table per rollout"""
    batch_size: int = 1024
    """minibatch size"""
    n_epochs: int = 4
    """epochs over each rollout"""
    learning_rate: float = 3e-4
    """Adam step size (SB3's default)"""
    hidden: int = 128
    """hidden units per layer"""
    snapshot_every: int = 4
    """self-play: rollouts between refreshes of the frozen copy"""
    checkpoint_minutes: float = 2.0
    """minutes between checkpoints"""
    threads: int = 1
    """torch threads"""
    progress: bool = True
    """show a progress bar"""


class Counted:
    """An opponent that counts the decisions it plays (SB3 counts only the learner's)."""

    def __init__(self, agent: Any):
        self.agent, self.decisions = agent, 0

    def act(self, obs: dict) -> int:
        self.decisions += 1
        return self.agent.act(obs)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.decisions += len(obs)
        return self.agent.act_batch(obs, mask)


def to_policy_net(model: Any, obs_scale: np.ndarray, hidden: int) -> PolicyNet:
    """SB3's actor (policy MLP + action net) as a ``PolicyNet`` with the same weights."""
    policy = model.policy
    net = PolicyNet(policy.observation_space.shape[0], int(policy.action_space.n), obs_scale, hidden, advice=False)
    mlp = policy.mlp_extractor.policy_net
    with torch.no_grad():
        for ours, theirs in ((net.trunk[0], mlp[0]), (net.trunk[2], mlp[2]), (net.actor, policy.action_net)):
            ours.weight.copy_(theirs.weight)
            ours.bias.copy_(theirs.bias)
    net.eval()
    return net


class FrozenCopy:
    """Self-play opponent: the learner's actor at its last ``refresh``, sampling its moves."""

    def __init__(self, rules: Rules, num_players: int, hidden: int):
        n, deck = num_players, rules.deck_size
        net = PolicyNet(encoding.obs_dim(deck, n), rules.num_actions, encoding.scale(deck, n, rules.start_chips * n),
                        hidden)
        self.agent = PolicyAgent(net, rules, num_players, greedy=False, name="frozen-copy")

    def refresh(self, model: Any) -> None:
        self.agent.net.load_state_dict(to_policy_net(model, self.agent.net.inv_scale.numpy() ** -1,
                                                     self.agent.net.hidden).state_dict())

    def act(self, obs: dict) -> int:
        return self.agent.act(obs)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.agent.act_batch(obs, mask)


def train(args: Args, resume: bool = False, callback: Callback | None = None) -> Path:
    """Train (or continue from ``args.out/model.zip``); returns ``args.out/last.pt``, a policy checkpoint."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    from thirtyone_env.sb3 import ThirtyOneVecEnv

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    zip_path, counters_path, last = out / "model.zip", out / "counters.json", out / "last.pt"
    rules = Rules.preset(args.preset)
    rules.check_num_players(args.num_players)
    torch.set_num_threads(args.threads)
    specs = parse_mix(args.opponents, "--opponents")
    if len(specs) > 1:
        raise ValueError(f"--opponents: the SB3 baseline plays one fixed opponent, got {list(specs)}")
    frozen = None if specs else FrozenCopy(rules, args.num_players, args.hidden)
    inner = make_agent(next(iter(specs)), rules, args.num_players, seed=args.seed) if specs else frozen
    opponent = Counted(inner)
    env = ThirtyOneVecEnv(args.num_envs, preset=args.preset, num_players=args.num_players, opponents=opponent,
                          seat="random")
    env.seed(args.seed)
    obs_scale = env.env.obs_scale
    kwargs: dict[str, Any] = dict(n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
                                  learning_rate=args.learning_rate, seed=args.seed, verbose=0, device="cpu")
    if resume and zip_path.is_file():
        model = MaskablePPO.load(zip_path, env=env, **kwargs)
        counters = json.loads(counters_path.read_text())
    else:
        policy_kwargs = dict(net_arch=dict(pi=[args.hidden] * 2, vf=[args.hidden] * 2), activation_fn=nn.ReLU)
        model = MaskablePPO("MlpPolicy", env, policy_kwargs=policy_kwargs, **kwargs)
        counters = {"decisions": 0, "elapsed": 0.0}
    if frozen is not None:
        frozen.refresh(model)
    stop = Stop(args.total_decisions, args.minutes * 60, start=time.perf_counter() - counters["elapsed"])
    learner_steps_before = model.num_timesteps

    def decisions() -> int:
        return counters["decisions"] + (model.num_timesteps - learner_steps_before) + opponent.decisions

    def save() -> None:
        model.save(zip_path)
        net = to_policy_net(model, obs_scale, args.hidden)
        save_atomic(policy_payload(net, rules, args.num_players, args=asdict(args), decisions=decisions(),
                                   elapsed=stop.elapsed()), last)
        counters_path.write_text(json.dumps({"decisions": decisions(), "elapsed": stop.elapsed()}))

    class Hooks(BaseCallback):
        """Counts decisions, stops at the budget, refreshes the frozen copy, checkpoints, reports."""

        def __init__(self, bar: Any):
            super().__init__()
            self.bar, self.rollouts, self.last_ckpt, self.stopping = bar, 0, stop.elapsed(), False

        def _on_step(self) -> bool:
            return not (self.stopping or stop.done(decisions()))

        def _on_rollout_end(self) -> None:
            self.rollouts += 1
            self.bar.update(decisions() - self.bar.n)
            if frozen is not None and self.rollouts % args.snapshot_every == 0:
                frozen.refresh(model)
            if stop.elapsed() - self.last_ckpt >= args.checkpoint_minutes * 60:
                save()
                self.last_ckpt = stop.elapsed()
            agent = PolicyAgent(to_policy_net(model, obs_scale, args.hidden), rules, args.num_players, name="sb3")
            if callback is not None and callback(decisions(), stop.elapsed(), agent):
                self.stopping = True

    with tqdm(total=args.total_decisions, initial=decisions(), unit="dec", disable=not args.progress,
              mininterval=2.0) as bar:
        if not stop.done(decisions()):
            model.learn(total_timesteps=10**12, callback=Hooks(bar), reset_num_timesteps=False)
        save()
    return last
