"""Deep Monte-Carlo (DMC, DouZero's learner) with action masking on ``VectorThirtyOne`` (CleanRL style).

Q(s, a) is regressed on the Monte-Carlo return of each decision: what its seat received from that
decision to the end of the match (the match result, plus PPO's deal shaping: the chips won at each
settled deal relative to the other seats). Moves are epsilon-greedy over the legal actions' Q. As in
DouZero there is no bootstrapping and no target network; unlike DouZero (which feeds every (state,
action) pair to an LSTM + MLP), one head gives Q for all 4 + deck-size actions at once, so the Q-network
has the policy network's shape and the result plays as ``policy:PATH`` (greedy = argmax Q).

Opponents come from the same pool as PPO (``train.ppo.Opponents``): fixed agents in every match, or
self-play, where every seat is the learner (DouZero's self-play).

Read top to bottom: ``Args``; ``epsilon_greedy``; ``MonteCarloReturns`` (decisions wait for their match
to end); ``ReplayBuffer`` (the most recent returns); ``dmc_update``; ``train``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn, optim

from agents.policy import PolicyAgent, PolicyNet
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne
from train.learners import Callback, Stop, load_state, policy_payload, save_atomic
from train.ppo import SHAPING_MATCH_LIVES, Opponents, shaping_reward


@dataclass
class Args:
    preset: str = "scat"
    """rules preset"""
    num_players: int = 2
    """players per table"""
    seed: int = 1
    """seed of the tables, the network and the exploration"""
    total_decisions: int = 4_000_000
    """decisions at the training tables, every seat's"""
    minutes: float = 0.0
    """wall-clock cap (0 = none)"""
    out: str = "runs/dmc"
    """run folder: the checkpoint"""
    num_envs: int = 256
    """tables stepped together"""
    num_steps: int = 32
    """decisions per table between updates"""
    learning_rate: float = 5e-4
    """Adam step size"""
    hidden: int = 128
    """hidden units per layer"""
    epsilon: float = 0.05
    """exploration: a uniformly random legal move with this probability (DouZero: 0.01)"""
    batch_size: int = 2048
    """decisions per gradient step"""
    updates_per_rollout: int = 4
    """gradient steps after each rollout"""
    buffer_size: int = 65_536
    """returns kept (the most recent)"""
    deal_shaping: float = 0.3
    """extra return per chip won or lost at each settled deal (PPO's deal shaping)"""
    max_grad_norm: float = 1.0
    """gradient clipping"""
    self_play: float = 1.0
    """share of matches where every seat is the learner"""
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

    # the opponent pool's fields that DMC does not use (train.ppo.Opponents reads them)
    advice: bool = False
    pool_size: int = 0


def epsilon_greedy(q: torch.Tensor, mask: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """argmax of the legal actions' Q, or (with probability ``epsilon``) a uniformly random legal action."""
    masked = torch.where(torch.from_numpy(mask), q, torch.finfo(q.dtype).min)
    actions = masked.argmax(-1).numpy()
    explore = rng.random(len(actions)) < epsilon
    if explore.any():
        noise = np.where(mask[explore], rng.random(mask[explore].shape), -1.0)
        actions[explore] = noise.argmax(-1)
    return actions


class MonteCarloReturns:
    """Decisions waiting for the end of their match; then each one's return: what its seat received
    from that decision on. Tables start numbered matches; a decision remembers its match and the
    seat's reward so far, and the return is the seat's total at the match end minus that."""

    def __init__(self, num_envs: int, num_players: int):
        self.received = np.zeros((num_envs, num_players), np.float32)  # each seat's reward since its match began
        self.match = np.arange(num_envs)  # the match each table plays (numbered globally)
        self.next_match = num_envs
        self.pending: list[dict[str, np.ndarray]] = []
        self.ended_match: list[np.ndarray] = []
        self.ended_total: list[np.ndarray] = []

    def record(self, rows: np.ndarray, seats: np.ndarray, **data: np.ndarray) -> None:
        """Decisions about to be played at ``rows`` by ``seats`` (``data``: observations, actions, ...)."""
        self.pending.append({"match": self.match[rows], "seat": seats, "before": self.received[rows, seats],
                             **data})

    def step(self, rewards: np.ndarray, done: np.ndarray) -> None:
        """After ``env.step``: add the rewards; tables whose match ended start the next numbered one."""
        self.received += rewards
        ended = np.flatnonzero(done)
        if ended.size:
            self.ended_match.append(self.match[ended].copy())
            self.ended_total.append(self.received[ended].copy())
            self.received[ended] = 0.0
            self.match[ended] = np.arange(self.next_match, self.next_match + ended.size)
            self.next_match += ended.size

    def pop_finished(self) -> dict[str, np.ndarray] | None:
        """The decisions whose match has ended, with ``returns``; the others keep waiting."""
        if not self.pending or not self.ended_match:
            return None
        pending = {key: np.concatenate([p[key] for p in self.pending]) for key in self.pending[0]}
        ended_match, ended_total = np.concatenate(self.ended_match), np.concatenate(self.ended_total)
        order = np.argsort(ended_match)
        ended_match, ended_total = ended_match[order], ended_total[order]
        where = np.clip(np.searchsorted(ended_match, pending["match"]), 0, len(ended_match) - 1)
        finished = ended_match[where] == pending["match"]
        self.pending = [{key: value[~finished] for key, value in pending.items()}]
        self.ended_match, self.ended_total = [], []  # every decision of an ended match was pending
        if not finished.any():
            return None
        out = {key: value[finished] for key, value in pending.items()}
        out["returns"] = ended_total[where[finished], out["seat"]] - out["before"]
        return out


class ReplayBuffer:
    """The ``capacity`` most recent decisions with their returns (a ring), sampled uniformly."""

    def __init__(self, capacity: int, obs_dim: int, num_actions: int):
        self.obs = np.zeros((capacity, obs_dim), np.int8)
        self.actions = np.zeros(capacity, np.int64)
        self.returns = np.zeros(capacity, np.float32)
        self.capacity, self.size, self.cursor = capacity, 0, 0

    def add(self, obs: np.ndarray, actions: np.ndarray, returns: np.ndarray) -> None:
        for start in range(0, len(actions), self.capacity):
            o, a, r = (x[start:start + self.capacity] for x in (obs, actions, returns))
            idx = (self.cursor + np.arange(len(a))) % self.capacity
            self.obs[idx], self.actions[idx], self.returns[idx] = o, a, r
            self.cursor = int((self.cursor + len(a)) % self.capacity)
            self.size = min(self.size + len(a), self.capacity)

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[torch.Tensor, ...]:
        idx = rng.integers(0, self.size, batch_size)
        return torch.from_numpy(self.obs[idx]), torch.from_numpy(self.actions[idx]), torch.from_numpy(self.returns[idx])


def q_values(net: PolicyNet, obs: torch.Tensor) -> torch.Tensor:
    """Q(s, .) for every action: the policy network's action head read as action values."""
    return net.actor(net.features(obs))


def dmc_update(net: PolicyNet, optimizer: optim.Optimizer, buffer: ReplayBuffer, args: Args,
               rng: np.random.Generator) -> float:
    """``updates_per_rollout`` regressions of Q(s, a) on the Monte-Carlo returns; the last loss."""
    net.train()
    loss = torch.zeros(())
    for _ in range(args.updates_per_rollout):
        mb_obs, mb_actions, mb_returns = buffer.sample(args.batch_size, rng)
        mb_q = q_values(net, mb_obs).gather(-1, mb_actions.unsqueeze(-1)).squeeze(-1)
        loss = ((mb_q - mb_returns) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
        optimizer.step()
    return float(loss.item())


def train(args: Args, resume: bool = False, callback: Callback | None = None) -> Path:
    """Train (or continue from ``args.out/last.pt``); returns the checkpoint, a policy checkpoint."""
    from tqdm import tqdm

    out = Path(args.out)
    last = out / "last.pt"
    state = load_state(last) if resume else None
    rules = Rules.preset(args.preset)
    rules.check_num_players(args.num_players)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    decisions, elapsed = (int(state["decisions"]), float(state["elapsed"])) if state else (0, 0.0)
    rng = np.random.default_rng([args.seed, decisions])  # a resumed run continues with other streams

    env = VectorThirtyOne(args.num_envs, args.num_players, rules, seed=args.seed * 1_000_003 + decisions)
    net = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, args.hidden, advice=False)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate)
    if state:
        net.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    opponents = Opponents(args, rules, rng)  # type: ignore[arg-type]  (the pool reads PPO's field names)
    opponents.draw(np.arange(args.num_envs))
    tracker = MonteCarloReturns(args.num_envs, args.num_players)
    buffer = ReplayBuffer(args.buffer_size, env.obs_dim, env.num_actions)
    shaping_coef = args.deal_shaping / rules.start_chips * SHAPING_MATCH_LIVES
    greedy = PolicyAgent(net, rules, args.num_players, greedy=True, name="dmc")
    stop = Stop(args.total_decisions, args.minutes * 60, start=time.perf_counter() - elapsed)
    obs, mask, player = env.reset()
    actions = np.zeros(args.num_envs, np.int64)
    last_ckpt, loss = stop.elapsed(), float("nan")

    def save() -> None:
        save_atomic(policy_payload(net, rules, args.num_players, optimizer=optimizer.state_dict(),
                                   args=asdict(args), decisions=decisions, elapsed=stop.elapsed()), last)

    with tqdm(total=args.total_decisions, initial=decisions, unit="dec", disable=not args.progress,
              mininterval=2.0) as bar:
        while not stop.done(decisions):
            # play num_steps decisions at every table
            net.eval()
            for _ in range(args.num_steps):
                learner = np.flatnonzero(opponents.learner_rows(player))
                with torch.no_grad():
                    q = q_values(net, torch.from_numpy(obs[learner]))
                actions[learner] = epsilon_greedy(q, mask[learner], args.epsilon, rng)
                tracker.record(learner, player[learner], obs=obs[learner], actions=actions[learner])
                others = np.flatnonzero(~opponents.learner_rows(player))
                if others.size:
                    opponents.act(obs, mask, others, actions)
                chips_before = env.chips.astype(np.float32)
                obs, mask, player, rewards, done = env.step(actions)
                if shaping_coef:
                    rewards = rewards + shaping_reward(chips_before, env.chips, done, shaping_coef)
                tracker.step(rewards, done)
                if done.any():
                    opponents.draw(np.flatnonzero(done))
            decisions += args.num_steps * args.num_envs
            finished = tracker.pop_finished()
            if finished is not None:
                buffer.add(finished["obs"], finished["actions"], finished["returns"])
            # regress Q on the returns
            if buffer.size >= args.batch_size:
                loss = dmc_update(net, optimizer, buffer, args, rng)
            bar.update(args.num_steps * args.num_envs)
            bar.set_postfix({"loss": f"{loss:.3f}", "buffer": buffer.size}, refresh=False)
            if stop.elapsed() - last_ckpt >= args.checkpoint_minutes * 60:
                save()
                last_ckpt = stop.elapsed()
            if callback is not None and callback(decisions, stop.elapsed(), greedy):
                break
        save()
    return last
