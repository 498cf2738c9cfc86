"""Neural Fictitious Self-Play (NFSP, Heinrich and Silver 2016; RLCard's baseline) on ``VectorThirtyOne``.

Two networks per learner: a best response, Q(s, a), learned by reinforcement learning, and an
average policy, learned by imitating the best response's own moves from a reservoir buffer (so it
tracks the average of the best responses played so far). In each match each learner seat plays its
best response with probability ``eta`` (the anticipatory parameter), else the average policy. The
result is the average policy (greedy, as every benchmark entry).

The best response is Deep Monte-Carlo's (``train.dmc``: Q regressed on Monte-Carlo returns,
epsilon-greedy) instead of NFSP's DQN: the same Q-learning target family that works best for card
games of this kind, and the shared pieces are imported, not copied. The replay buffer holds every
learner decision; the reservoir only the best-response ones.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn, optim

from agents.policy import PolicyAgent, PolicyNet, sample_masked
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne
from train.dmc import MonteCarloReturns, ReplayBuffer, dmc_update, epsilon_greedy, q_values
from train.learners import Callback, Stop, load_state, policy_payload, save_atomic
from train.ppo import SHAPING_MATCH_LIVES, Opponents, shaping_reward


@dataclass
class Args:
    preset: str = "scat"
    """rules preset"""
    num_players: int = 2
    """players per table"""
    seed: int = 1
    """seed of the tables, the networks and the exploration"""
    total_decisions: int = 4_000_000
    """decisions at the training tables, every seat's"""
    minutes: float = 0.0
    """wall-clock cap (0 = none)"""
    out: str = "runs/nfsp"
    """run folder: the checkpoint"""
    num_envs: int = 256
    """tables stepped together"""
    num_steps: int = 32
    """decisions per table between updates"""
    eta: float = 0.1
    """anticipatory parameter: share of matches a seat plays its best response"""
    learning_rate: float = 5e-4
    """Adam step size of the best response"""
    sl_learning_rate: float = 5e-4
    """Adam step size of the average policy"""
    hidden: int = 128
    """hidden units per layer"""
    epsilon: float = 0.05
    """the best response's exploration"""
    batch_size: int = 2048
    """decisions per gradient step (both networks)"""
    updates_per_rollout: int = 4
    """gradient steps of each network after each rollout"""
    buffer_size: int = 65_536
    """best-response returns kept (the most recent)"""
    reservoir_size: int = 500_000
    """best-response moves kept for the average policy (reservoir sampling)"""
    deal_shaping: float = 0.3
    """extra return per chip won or lost at each settled deal (PPO's deal shaping)"""
    max_grad_norm: float = 1.0
    """gradient clipping"""
    self_play: float = 1.0
    """share of matches where every seat is a learner"""
    rule_based: str = ""
    """fixed opponents: comma-separated SPEC[:WEIGHT] (as PPO's --rule-based)"""
    rule_based_share: float = 0.0
    """share of matches against a fixed opponent"""
    checkpoint_minutes: float = 2.0
    """minutes between checkpoints"""
    threads: int = 1
    """torch threads"""
    progress: bool = True
    """show a progress bar"""

    # the opponent pool's fields that NFSP does not use (train.ppo.Opponents reads them)
    advice: bool = False
    pool_size: int = 0


class Reservoir:
    """A uniform sample of every (observation, mask, action) ever added (reservoir sampling)."""

    def __init__(self, capacity: int, obs_dim: int, num_actions: int):
        self.obs = np.zeros((capacity, obs_dim), np.int8)
        self.masks = np.zeros((capacity, num_actions), np.bool_)
        self.actions = np.zeros(capacity, np.int64)
        self.capacity, self.size, self.seen = capacity, 0, 0

    def add(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> None:
        k = len(actions)
        # item i (the seen + i-th ever) takes a uniform slot among seen + i + 1, kept only if that slot exists
        slots = np.floor(rng.random(k) * (self.seen + np.arange(k) + 1)).astype(np.int64)
        fill = np.arange(k) < self.capacity - self.size
        slots[fill] = self.size + np.arange(fill.sum())
        keep = slots < self.capacity
        slots = slots[keep]
        self.obs[slots], self.masks[slots], self.actions[slots] = obs[keep], masks[keep], actions[keep]
        self.size = min(self.size + int(fill.sum()), self.capacity)
        self.seen += k

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[torch.Tensor, ...]:
        idx = rng.integers(0, self.size, batch_size)
        return torch.from_numpy(self.obs[idx]), torch.from_numpy(self.masks[idx]), torch.from_numpy(self.actions[idx])


def average_policy_update(avg: PolicyNet, optimizer: optim.Optimizer, reservoir: Reservoir, args: Args,
                          rng: np.random.Generator) -> float:
    """Cross-entropy of the average policy on the best response's moves; the last loss."""
    avg.train()
    loss = torch.zeros(())
    for _ in range(args.updates_per_rollout):
        mb_obs, mb_masks, mb_actions = reservoir.sample(args.batch_size, rng)
        logp = avg.masked_logits(avg.features(mb_obs), mb_masks).log_softmax(-1)
        loss = -logp.gather(-1, mb_actions.unsqueeze(-1)).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(avg.parameters(), args.max_grad_norm)
        optimizer.step()
    return float(loss.item())


def train(args: Args, resume: bool = False, callback: Callback | None = None) -> Path:
    """Train (or continue from ``args.out/last.pt``); returns the checkpoint (the average policy)."""
    from tqdm import tqdm

    out = Path(args.out)
    last = out / "last.pt"
    state = load_state(last) if resume else None
    rules = Rules.preset(args.preset)
    rules.check_num_players(args.num_players)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    decisions, elapsed = (int(state["decisions"]), float(state["elapsed"])) if state else (0, 0.0)
    rng = np.random.default_rng([args.seed, decisions])

    env = VectorThirtyOne(args.num_envs, args.num_players, rules, seed=args.seed * 1_000_003 + decisions)
    br = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, args.hidden, advice=False)
    avg = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, args.hidden, advice=False)
    br_optimizer = optim.Adam(br.parameters(), lr=args.learning_rate)
    avg_optimizer = optim.Adam(avg.parameters(), lr=args.sl_learning_rate)
    if state:
        avg.load_state_dict(state["model"])
        br.load_state_dict(state["best_response"])
        avg_optimizer.load_state_dict(state["optimizer"])
        br_optimizer.load_state_dict(state["best_response_optimizer"])
    opponents = Opponents(args, rules, rng)  # type: ignore[arg-type]  (the pool reads PPO's field names)
    opponents.draw(np.arange(args.num_envs))
    best_response_mode = rng.random((args.num_envs, args.num_players)) < args.eta  # per table and seat, per match
    tracker = MonteCarloReturns(args.num_envs, args.num_players)
    buffer = ReplayBuffer(args.buffer_size, env.obs_dim, env.num_actions)
    reservoir = Reservoir(args.reservoir_size, env.obs_dim, env.num_actions)
    shaping_coef = args.deal_shaping / rules.start_chips * SHAPING_MATCH_LIVES
    greedy = PolicyAgent(avg, rules, args.num_players, greedy=True, name="nfsp")
    stop = Stop(args.total_decisions, args.minutes * 60, start=time.perf_counter() - elapsed)
    obs, mask, player = env.reset()
    actions = np.zeros(args.num_envs, np.int64)
    last_ckpt, rl_loss, sl_loss = stop.elapsed(), float("nan"), float("nan")

    def save() -> None:
        save_atomic(policy_payload(avg, rules, args.num_players, optimizer=avg_optimizer.state_dict(),
                                   best_response=br.state_dict(), best_response_optimizer=br_optimizer.state_dict(),
                                   args=asdict(args), decisions=decisions, elapsed=stop.elapsed()), last)

    with tqdm(total=args.total_decisions, initial=decisions, unit="dec", disable=not args.progress,
              mininterval=2.0) as bar:
        while not stop.done(decisions):
            # play num_steps decisions at every table: each learner seat its best response or its average policy
            br.eval()
            avg.eval()
            for _ in range(args.num_steps):
                learner = np.flatnonzero(opponents.learner_rows(player))
                in_br = best_response_mode[learner, player[learner]]
                rows_br, rows_avg = learner[in_br], learner[~in_br]
                with torch.no_grad():
                    if rows_br.size:
                        q = q_values(br, torch.from_numpy(obs[rows_br]))
                        actions[rows_br] = epsilon_greedy(q, mask[rows_br], args.epsilon, rng)
                    if rows_avg.size:
                        logits = avg.masked_logits(avg.features(torch.from_numpy(obs[rows_avg])),
                                                   torch.from_numpy(mask[rows_avg]))
                        actions[rows_avg] = sample_masked(logits.log_softmax(-1)).numpy()
                tracker.record(learner, player[learner], obs=obs[learner], actions=actions[learner])
                if rows_br.size:
                    reservoir.add(obs[rows_br], mask[rows_br], actions[rows_br], rng)
                others = np.flatnonzero(~opponents.learner_rows(player))
                if others.size:
                    opponents.act(obs, mask, others, actions)
                chips_before = env.chips.astype(np.float32)
                obs, mask, player, rewards, done = env.step(actions)
                if shaping_coef:
                    rewards = rewards + shaping_reward(chips_before, env.chips, done, shaping_coef)
                tracker.step(rewards, done)
                if done.any():
                    ended = np.flatnonzero(done)
                    opponents.draw(ended)
                    best_response_mode[ended] = rng.random((ended.size, args.num_players)) < args.eta
            decisions += args.num_steps * args.num_envs
            finished = tracker.pop_finished()
            if finished is not None:
                buffer.add(finished["obs"], finished["actions"], finished["returns"])
            # the best response regresses Q on the returns; the average policy imitates the best response
            if buffer.size >= args.batch_size:
                rl_loss = dmc_update(br, br_optimizer, buffer, args, rng)  # type: ignore[arg-type]
            if reservoir.size >= args.batch_size:
                sl_loss = average_policy_update(avg, avg_optimizer, reservoir, args, rng)
            bar.update(args.num_steps * args.num_envs)
            bar.set_postfix({"rl": f"{rl_loss:.3f}", "sl": f"{sl_loss:.3f}"}, refresh=False)
            if stop.elapsed() - last_ckpt >= args.checkpoint_minutes * 60:
                save()
                last_ckpt = stop.elapsed()
            if callback is not None and callback(decisions, stop.elapsed(), greedy):
                break
        save()
    return last
