"""Self-play PPO with action masking on ``VectorThirtyOne`` (CleanRL style, one file).

One network plays every learner seat. Each table plays a whole match against
one opponent kind: the current policy itself (self-play, every seat learns), a
past snapshot, or a fixed agent (rule-based or a frozen saved policy); only
learner seats' decisions are trained on. Each seat's decisions form their own
trajectory for GAE: the reward of a decision is what the seat received until
its next decision.

Read top to bottom: ``Args``; the opponents; ``rollout`` (buffers of shape
(num_steps, num_envs, ...)); GAE; ``ppo_update`` (``b_`` = the flattened batch,
``mb_`` = a minibatch, as in CleanRL); the warm start; ``RunState`` (what a
checkpoint holds); ``train``, which wires them together.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numba import njit
from torch import nn, optim

from agents import make as make_agent
from agents.belief import BeliefNet
from agents.heuristic import HeuristicAgent
from agents.policy import CHECKPOINT_FORMAT, PolicyAgent, PolicyNet, load_checkpoint, net_from_checkpoint
from thirtyone_env.agent import parse_mix
from thirtyone_env.evaluation import tournament
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne
from train.logger import Logger

SHAPING_MATCH_LIVES = 3  # deal shaping per life, scaled as if a match lasted 3 lives: the same weight in every preset
ADAM_EPS = 1e-5  # CleanRL's Adam epsilon
ADV_EPS = 1e-8  # keeps advantage normalisation finite when a minibatch's advantages are all equal
LR_DECAY = 0.9  # the learning rate anneals linearly from 100% to 10% of --learning-rate over the budget
BC_SEED_OFFSET = 7919  # the warm start's tables: another seed (a prime), so other deals than the training tables
BC_MINIBATCH = 4096  # warm-start minibatch, in decisions
BC_AGREEMENT_SAMPLE = 20_000  # decisions on which the warm start's agreement with its teacher is measured
EVAL_SEED_OFFSET = 10_000  # evaluation seeds (offset + updates): other deals than the training tables

Turn = tuple[np.ndarray, np.ndarray, np.ndarray]  # every table's (observation, action mask, seat to act)


@dataclass
class Args:
    preset: str = "scat"
    """rules preset"""
    num_players: int = 2
    """players per table"""
    seed: int = 1
    """seed of the tables, the network and the opponent draws"""
    minutes: float = 10.0
    """wall-clock training budget"""
    total_decisions: int = 0
    """stop after this many decisions instead (0 = use minutes)"""
    out: str = "runs/scat"
    """run folder: checkpoints, CSV and TensorBoard logs, plots"""
    num_envs: int = 512
    """tables stepped together"""
    num_steps: int = 64
    """decisions per table per rollout"""
    learning_rate: float = 5e-4
    """Adam step size (annealed linearly to 10% over the budget)"""
    gamma: float = 1.0
    """discount per own decision (matches always end)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 2
    """epochs over each rollout"""
    clip_coef: float = 0.2
    """PPO clip range"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    hidden: int = 128
    """hidden units per layer"""
    advice: bool = True
    """residual policy: HeuristicAgent's move gets a learned logit bonus, the network learns departures"""
    belief_inputs: bool = False
    """the policy also reads what each opponent likely holds: the shipped belief of these rules and players
    (agents/belief.py), frozen; with --init-from a policy without them starts with zero weights on them"""
    init_from: str = ""
    """fine-tune: start from this policy (a checkpoint or exported file of the same rules, players and
    advice; --hidden at least its size: a wider net starts as an exact copy) instead of a warm start"""
    bc_decisions: int = 1_000_000
    """warm start: imitate HeuristicAgent self-play on this many decisions first (0 = from scratch)"""
    bc_epochs: int = 3
    """epochs over the imitation data"""
    bc_learning_rate: float = 1e-3
    """Adam step size of the warm start"""
    value_warmup_updates: int = 10
    """first updates fit only the value (the warm-started policy waits for a critic that knows the task)"""
    deal_shaping: float = 0.3
    """extra reward per chip won or lost at each settled deal, relative to the other seats' average"""
    self_play: float = 0.2
    """share of matches where every seat is the current policy"""
    rule_based: str = "heuristic:3,greedy:1"
    """fixed opponents in the pool: comma-separated SPEC[:WEIGHT], SPEC any agent (random, greedy, heuristic,
    pretrained[:PRESET_NP], policy:PATH for a frozen saved policy); WEIGHT (default 1) is the text after the
    last colon when it is a number"""
    rule_based_share: float = 0.6
    """share of matches against a fixed opponent (the rest: past snapshots)"""
    snapshot_every: int = 20
    """updates between snapshots added to the pool"""
    pool_size: int = 8
    """past snapshots kept"""
    eval_every_minutes: float = 2.0
    """minutes between evaluations against the fixed opponents"""
    eval_matches: int = 600
    """matches per evaluation"""
    checkpoint_minutes: float = 2.0
    """minutes between checkpoints"""
    threads: int = 2
    """torch threads"""
    progress: bool = True
    """show a progress bar"""


def check_args(args: Args) -> None:
    """Refuse values that would crash mid-run or train nonsense, naming the flag and what it allows."""
    at_least = {"num_envs": 1, "num_steps": 1, "num_minibatches": 1, "update_epochs": 0, "hidden": 1,
                "total_decisions": 0, "bc_decisions": 0, "bc_epochs": 0, "value_warmup_updates": 0,
                "snapshot_every": 1, "pool_size": 0, "eval_matches": 1, "threads": 1}
    problems = [f"--{flag(name)} must be an integer >= {low}, got {getattr(args, name)!r}"
                for name, low in at_least.items() if getattr(args, name) < low]
    problems += [f"--{flag(name)} must be between 0 and 1, got {getattr(args, name)!r}"
                 for name in ("self_play", "rule_based_share", "gamma", "gae_lambda")
                 if not 0 <= getattr(args, name) <= 1]
    if args.self_play + args.rule_based_share > 1:
        problems.append(f"--self-play + --rule-based-share must be <= 1, got {args.self_play + args.rule_based_share}")
    if not args.total_decisions and not args.minutes > 0:
        problems.append(f"--minutes must be > 0 (or set --total-decisions), got {args.minutes!r}")
    if problems:
        raise ValueError("; ".join(problems))
    parse_opponents(args.rule_based)


def flag(name: str) -> str:
    """``num_envs`` -> ``num-envs``: the command-line spelling of an ``Args`` field."""
    return name.replace("_", "-")


# -- the opponents ---------------------------------------------------------------------------------------
def parse_opponents(spec: str) -> dict[str, float]:
    """``--rule-based``: comma-separated ``SPEC[:WEIGHT]`` (``thirtyone_env.agent.parse_mix``), each logged
    under its own name."""
    out = parse_mix(spec, "--rule-based")
    labels = [opponent_label(name) for name in out]
    if len(set(labels)) < len(labels):
        raise ValueError(f"--rule-based: {list(out)} would log under the same names {labels}")
    return out


def opponent_label(spec: str) -> str:
    """A name for logs (CSV column, TensorBoard tag): ``policy:/a/b.pt`` -> ``policy_a_b.pt``."""
    return re.sub(r"[^\w.-]+", "_", spec)


def build_agent(spec: str, rules: Rules, num_players: int):
    """Any agent from its spec; building one (a policy's network) leaves the seeded torch stream alone."""
    try:
        with torch.random.fork_rng(devices=[]):
            return make_agent(spec, rules, num_players, seed=0)
    except (ValueError, FileNotFoundError) as exc:
        raise ValueError(f"--rule-based: cannot build the opponent {spec!r}: {exc}") from None


class Opponents:
    """Who sits at the non-learner seats of each table, drawn per match."""

    def __init__(self, args: Args, rules: Rules, rng: np.random.Generator):
        self.args, self.rng = args, rng
        weights = parse_opponents(args.rule_based)
        self.fixed = [(spec, build_agent(spec, rules, args.num_players)) for spec in weights]
        self.fixed_weights = np.array(list(weights.values()), np.float64) / sum(weights.values())
        self.snapshots: list[PolicyNet] = []
        self.advisor = HeuristicAgent(rules, args.num_players) if args.advice else None
        self.mode = np.full(args.num_envs, -1, np.int64)  # -1 self-play, 0..F-1 fixed agents, F.. snapshots
        self.learner_seat = np.zeros(args.num_envs, np.int64)

    def draw(self, tables: np.ndarray) -> None:
        """New opponents (and learner seat) for the matches starting at ``tables``."""
        u = self.rng.random(len(tables))
        num_fixed, num_snap = len(self.fixed), len(self.snapshots)
        fixed_share = self.args.rule_based_share if num_fixed else 0.0
        snap_share = (1 - self.args.self_play - fixed_share) if num_snap else 0.0
        mode = np.full(len(tables), -1)
        fixed = (u >= self.args.self_play) & (u < self.args.self_play + fixed_share)
        snap = (u >= self.args.self_play + fixed_share) & (u < self.args.self_play + fixed_share + snap_share)
        mode[fixed] = self.rng.choice(num_fixed, fixed.sum(), p=self.fixed_weights) if num_fixed else -1
        mode[snap] = num_fixed + self.rng.integers(0, max(num_snap, 1), snap.sum())
        self.mode[tables] = mode
        self.learner_seat[tables] = self.rng.integers(0, self.args.num_players, len(tables))

    def learner_rows(self, player: np.ndarray) -> np.ndarray:
        """Tables where the seat to act is played by the network being trained."""
        return (self.mode < 0) | (player == self.learner_seat)

    def act(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` for the opponent ``rows``."""
        num_fixed = len(self.fixed)
        for m in np.unique(self.mode[rows]):
            sel = rows[self.mode[rows] == m]
            if m < num_fixed:
                actions[sel] = self.fixed[m][1].act_batch(obs[sel], mask[sel])
            else:
                advice = self.advisor.act_batch(obs[sel], mask[sel]) if self.advisor else None
                actions[sel] = self.snapshots[m - num_fixed].act(obs[sel], mask[sel], greedy=False, advice=advice)

    def add_snapshot(self, net: PolicyNet) -> None:
        """Freeze a copy of ``net`` into the pool, dropping the oldest beyond ``pool_size``."""
        snap = copy.deepcopy(net).eval()
        self.snapshots.append(snap)
        if len(self.snapshots) > self.args.pool_size:
            self.snapshots.pop(0)
            self.mode[self.mode >= len(self.fixed) + len(self.snapshots)] = -1


# -- rollout -------------------------------------------------------------------------------------------
@dataclass
class Rollout:
    """One rollout: every table's decision at every step, shape (num_steps, num_envs, ...)."""

    obs: np.ndarray  # int8 (T, B, obs_dim)
    action_masks: np.ndarray  # bool (T, B, num_actions)
    actions: np.ndarray  # int64 (T, B): the learner's or the opponent's move
    advice: np.ndarray  # int64 (T, B): HeuristicAgent's move (residual policy, learner rows)
    logprobs: np.ndarray  # float32 (T, B): learner rows
    values: np.ndarray  # float32 (T, B): learner rows
    seats: np.ndarray  # int64 (T, B): the seat that acted
    learner: np.ndarray  # bool (T, B): the network acted (only these decisions are trained on)
    rewards: np.ndarray  # float32 (T, B, num_players): every seat's reward after the step, shaping included
    dones: np.ndarray  # bool (T, B): the match ended at this step

    @classmethod
    def zeros(cls, num_steps: int, num_envs: int, num_players: int, obs_dim: int, num_actions: int) -> Rollout:
        T, B = num_steps, num_envs
        return cls(
            obs=np.zeros((T, B, obs_dim), np.int8), action_masks=np.zeros((T, B, num_actions), np.bool_),
            actions=np.zeros((T, B), np.int64), advice=np.zeros((T, B), np.int64),
            logprobs=np.zeros((T, B), np.float32), values=np.zeros((T, B), np.float32),
            seats=np.zeros((T, B), np.int64), learner=np.zeros((T, B), np.bool_),
            rewards=np.zeros((T, B, num_players), np.float32), dones=np.zeros((T, B), np.bool_),
        )


def shaping_reward(chips_before: np.ndarray, chips_after: np.ndarray, done: np.ndarray, coef: float) -> np.ndarray:
    """Chips won at a settled deal minus the other seats' average: zero-sum, dense, and it
    points the same way as the match result (a finished table has reset: no shaping there)."""
    delta = chips_after - chips_before
    n = delta.shape[1]
    relative = delta - (delta.sum(1, keepdims=True) - delta) / (n - 1)
    relative[done] = 0.0
    return coef * relative


def rollout(net: PolicyNet, env: VectorThirtyOne, opponents: Opponents, buf: Rollout, turn: Turn,
            shaping_coef: float) -> tuple[Turn, list[float]]:
    """Play ``len(buf.obs)`` steps at every table: the network samples the learner seats' moves, the
    opponents play the others, and whoever starts a new match gets new opponents.

    Returns the next turn and the results of the learner seats whose match ended (for the logs).
    """
    obs, mask, player = turn
    actions = np.zeros(env.num_envs, np.int64)
    match_rewards: list[float] = []
    net.eval()
    for step in range(len(buf.obs)):
        buf.obs[step], buf.action_masks[step], buf.seats[step] = obs, mask, player
        learner = opponents.learner_rows(player)
        buf.learner[step] = learner
        rows = np.flatnonzero(learner)
        advice = None
        if opponents.advisor is not None:
            buf.advice[step, rows] = opponents.advisor.act_batch(obs[rows], mask[rows])
            advice = torch.from_numpy(buf.advice[step, rows])
        with torch.no_grad():
            action, logprob, _, value = net.get_action_and_value(
                torch.from_numpy(obs[rows]), torch.from_numpy(mask[rows]), advice=advice)
        actions[rows] = action.numpy()
        buf.logprobs[step, rows], buf.values[step, rows] = logprob.numpy(), value.numpy()
        others = np.flatnonzero(~learner)
        if others.size:
            opponents.act(obs, mask, others, actions)
        buf.actions[step] = actions
        chips_before = env.chips.astype(np.float32)
        obs, mask, player, rewards, done = env.step(actions)
        buf.rewards[step], buf.dones[step] = rewards, done
        if shaping_coef:
            buf.rewards[step] += shaping_reward(chips_before, env.chips, done, shaping_coef)
        if done.any():
            finished = np.flatnonzero(done)
            seats = np.where(opponents.mode[finished] < 0, 0, opponents.learner_seat[finished])
            match_rewards.extend(rewards[finished, seats].tolist())
            opponents.draw(finished)
    return (obs, mask, player), match_rewards


# -- advantages ------------------------------------------------------------------------------------------
@njit(cache=True)
def gae_per_seat(rewards, dones, seats, values, boot, gamma, lam, advantages):
    """GAE along each seat's own decisions. rewards (T, B, n); dones, seats, values (T, B); boot (B, n)."""
    num_steps, num_envs, num_players = rewards.shape
    for b in range(num_envs):
        for p in range(num_players):
            next_value = boot[b, p]
            next_nonterminal = 1.0
            acc = 0.0
            gae = 0.0
            for t in range(num_steps - 1, -1, -1):
                if dones[t, b]:
                    acc = 0.0
                    next_value = 0.0
                    next_nonterminal = 0.0
                    gae = 0.0
                acc += rewards[t, b, p]
                if seats[t, b] == p:
                    delta = acc + gamma * next_value * next_nonterminal - values[t, b]
                    gae = delta + gamma * lam * next_nonterminal * gae
                    advantages[t, b] = gae
                    next_value = values[t, b]
                    next_nonterminal = 1.0
                    acc = 0.0


def advantages_and_returns(net: PolicyNet, env: VectorThirtyOne, buf: Rollout,
                           args: Args) -> tuple[np.ndarray, np.ndarray]:
    """GAE per seat, bootstrapped from the value of every seat's current view (a match not over yet)."""
    num_steps, num_envs = buf.values.shape
    with torch.no_grad():
        boot = np.stack([net.get_value(torch.from_numpy(env.observe(np.full(num_envs, p)))).numpy()
                         for p in range(args.num_players)], axis=1)
    advantages = np.zeros((num_steps, num_envs), np.float32)
    gae_per_seat(buf.rewards, buf.dones, buf.seats, buf.values, boot, args.gamma, args.gae_lambda, advantages)
    returns = advantages + buf.values
    return advantages, returns


# -- the PPO update --------------------------------------------------------------------------------------
def ppo_update(net: PolicyNet, optimizer: optim.Optimizer, buf: Rollout, advantages: np.ndarray,
               returns: np.ndarray, args: Args, value_only: bool = False) -> dict[str, float]:
    """Clipped PPO over the learner decisions of one rollout: ``update_epochs`` passes in minibatches.

    ``value_only`` fits the critic alone (after the warm start, the policy waits for a critic that knows the task).
    Returns the last minibatch's losses and the epochs' clip fraction.
    """
    # flatten the batch: the learner decisions only
    keep = buf.learner.reshape(-1)
    b_obs = torch.from_numpy(buf.obs.reshape(keep.size, -1)[keep])
    b_action_masks = torch.from_numpy(buf.action_masks.reshape(keep.size, -1)[keep])
    b_actions = torch.from_numpy(buf.actions.reshape(-1)[keep])
    b_advice = torch.from_numpy(buf.advice.reshape(-1)[keep])
    b_logprobs = torch.from_numpy(buf.logprobs.reshape(-1)[keep])
    b_advantages = torch.from_numpy(advantages.reshape(-1)[keep])
    b_returns = torch.from_numpy(returns.reshape(-1)[keep])

    net.train()
    clipfracs = []
    for _ in range(args.update_epochs):
        for mb_inds in torch.randperm(len(b_actions)).tensor_split(args.num_minibatches):
            _, newlogprob, entropy, newvalue = net.get_action_and_value(
                b_obs[mb_inds], b_action_masks[mb_inds], b_actions[mb_inds], b_advice[mb_inds] if net.advice else None)
            logratio = newlogprob - b_logprobs[mb_inds]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            mb_advantages = b_advantages[mb_inds]
            mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + ADV_EPS)

            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - args.ent_coef * entropy_loss + args.vf_coef * v_loss
            if value_only:
                loss = args.vf_coef * v_loss

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
    return {"pg_loss": pg_loss.item(), "v_loss": v_loss.item(), "entropy": entropy_loss.item(),
            "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs))}


# -- the start: warm start or fine-tuning ------------------------------------------------------------------
def behaviour_cloning(net: PolicyNet, rules: Rules, args: Args) -> dict[str, float]:
    """Warm start: fit the policy to HeuristicAgent's moves and the value to match results.

    A residual policy already starts from those moves (they are its advice): only its value is fitted.
    """
    teacher = HeuristicAgent(rules, args.num_players)
    env = VectorThirtyOne(args.num_envs, args.num_players, rules, seed=args.seed + BC_SEED_OFFSET)
    obs, mask, player = env.reset()
    steps, B = max(args.bc_decisions // args.num_envs, 1), args.num_envs
    d_obs = np.zeros((steps, B, env.obs_dim), np.int8)
    d_mask = np.zeros((steps, B, env.num_actions), np.bool_)
    d_actions = np.zeros((steps, B), np.int64)
    d_seat = np.zeros((steps, B), np.int64)
    d_match = np.zeros((steps, B), np.int64)
    match_id = np.arange(B)
    results = np.full((B + steps * B, args.num_players), np.nan, np.float32)
    next_id = B
    for t in range(steps):
        actions = teacher.act_batch(obs, mask)
        d_obs[t], d_mask[t], d_actions[t], d_seat[t], d_match[t] = obs, mask, actions, player, match_id
        obs, mask, player, rewards, done = env.step(actions)
        for b in np.flatnonzero(done):
            results[match_id[b]] = rewards[b]
            match_id[b] = next_id
            next_id += 1
    target = results[d_match.reshape(-1), d_seat.reshape(-1)]  # NaN: the match had not ended
    b_obs = torch.from_numpy(d_obs.reshape(steps * B, -1))
    b_mask = torch.from_numpy(d_mask.reshape(steps * B, -1))
    b_actions = torch.from_numpy(d_actions.reshape(-1))
    b_target = torch.from_numpy(np.nan_to_num(target))
    b_known = torch.from_numpy(~np.isnan(target))
    optimizer = optim.Adam(net.parameters(), lr=args.bc_learning_rate)
    net.train()
    for _ in range(args.bc_epochs):
        for mb_inds in torch.randperm(len(b_actions)).split(BC_MINIBATCH):
            advice = b_actions[mb_inds] if net.advice else None
            _, logp, _, value = net.get_action_and_value(b_obs[mb_inds], b_mask[mb_inds], b_actions[mb_inds], advice)
            known = b_known[mb_inds]
            # no ended match in this minibatch: a zero loss that still reaches every parameter
            v_loss = ((value - b_target[mb_inds])[known] ** 2).mean() if known.any() else value.sum() * 0
            loss = 0.5 * v_loss if net.advice else -logp.mean() + 0.5 * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        sample = torch.arange(min(len(b_actions), BC_AGREEMENT_SAMPLE))
        advice = b_actions[sample] if net.advice else None
        logits = net.masked_logits(net.features(b_obs[sample]), b_mask[sample], advice)
        agreement = (logits.argmax(-1) == b_actions[sample]).float().mean().item()
    return {"bc/agreement": agreement, "bc/decisions": steps * B}


def start_from(net: PolicyNet, args: Args, rules: Rules) -> None:
    """Copy a trained policy's weights into ``net``, refusing one made for another setting."""
    source, source_rules, source_players = net_from_checkpoint(load_checkpoint(args.init_from))
    theirs_rules, ours_rules = source_rules.to_dict(), rules.to_dict()
    mismatches = [f"rules option {key} is {theirs_rules[key]!r}, this run {ours_rules.get(key)!r}"
                  for key in theirs_rules if theirs_rules[key] != ours_rules.get(key)]
    mismatches += [
        f"{what} {theirs!r}, this run {ours!r}"
        for what, theirs, ours in (
            ("players", source_players, args.num_players), ("advice", source.advice, args.advice),
        )
        if theirs != ours
    ]
    if source.belief is not None and not args.belief_inputs:
        mismatches.append("it reads belief inputs, this run does not (pass --belief-inputs true)")
    if source.hidden > args.hidden:
        mismatches.append(f"hidden {source.hidden!r}, this run {args.hidden!r} (a policy can be widened, not narrowed)")
    if mismatches:
        raise ValueError(f"--init-from {args.init_from} does not fit this run: " + "; ".join(mismatches))
    widen_into(net, source)


def belief_for(args: Args, rules: Rules) -> BeliefNet | None:
    """The shipped belief ``--belief-inputs`` asks for, or None."""
    if not args.belief_inputs:
        return None
    belief = BeliefNet.pretrained(rules, args.num_players)
    if belief is None:
        raise ValueError(f"--belief-inputs: no belief is shipped for {rules.name} with {args.num_players} players "
                         f"(agents/pretrained/belief/; train one with scripts/train_belief.py)")
    return belief


@torch.no_grad()
def widen_into(net: PolicyNet, source: PolicyNet) -> None:
    """Copy ``source`` into ``net``, which may have more hidden units, so that ``net`` computes exactly what
    ``source`` does (Net2Net-style): the extra units keep their fresh random inputs, but their outputs
    enter the next layer and the heads with zero weights. Gradients still reach those zero weights (the
    extra units' activations are not zero), so the added capacity trains from the first update."""
    h = source.hidden
    theirs = source.state_dict()
    for name, param in net.state_dict().items():
        if name.startswith("belief.") and name not in theirs:
            continue  # a belief added by this run: its own frozen weights
        src = theirs[name]
        if name == "trunk.0.weight":
            param[:, src.shape[1]:] = 0.0  # belief inputs the source did not read start with zero weights
        elif name == "trunk.2.weight":
            param[:, h:] = 0.0  # the extra first-layer units feed the second layer nothing
        elif name in ("actor.weight", "critic.weight"):
            param[:, h:] = 0.0  # nor do the extra second-layer units feed the heads
        param[tuple(slice(0, n) for n in src.shape)] = src


def evaluate(net: PolicyNet, rules: Rules, args: Args, seed: int) -> dict[str, float]:
    """Greedy play's win rate against each fixed opponent (fresh ones: the same matches for the same seed)."""
    policy = PolicyAgent(net, rules, args.num_players, greedy=True)
    out = {}
    for spec in parse_opponents(args.rule_based):
        opponent = build_agent(spec, rules, args.num_players)
        t = tournament([policy, opponent], rules, args.num_players, args.eval_matches, seed=seed)
        out[f"eval/win_rate_{opponent_label(spec)}"] = t.results[0].win_rate
    return out


# -- checkpoints -------------------------------------------------------------------------------------------
def policy_payload(args: Args, model: dict[str, torch.Tensor]) -> dict[str, Any]:
    """What ``agents.policy`` reads from a checkpoint: the format, the setting and the weights."""
    return {"format": CHECKPOINT_FORMAT, "rules": Rules.preset(args.preset).to_dict(),
            "num_players": args.num_players, "hidden": args.hidden, "advice": args.advice,
            "belief": args.belief_inputs, "model": model}


@dataclass
class RunState:
    """Everything a resume needs to continue exactly; ``save`` writes it as a checkpoint (``last.pt``).

    The checkpoint loads with ``torch.load(path, weights_only=True)`` (tensors and plain data only: numpy
    arrays are stored as tensors) and is a policy checkpoint for ``agents.policy`` (format, rules, model, ...).
    """

    args: Args
    model: dict[str, torch.Tensor]
    optimizer: dict[str, Any]
    env: dict[str, np.ndarray]  # VectorThirtyOne.snapshot()
    snapshots: list[dict[str, torch.Tensor]]  # the opponent pool's frozen policies
    opponent_mode: np.ndarray
    learner_seat: np.ndarray
    numpy_rng: dict[str, Any]  # the bit generator's state
    torch_rng: torch.Tensor
    decisions: int
    updates: int
    elapsed: float

    @classmethod
    def capture(cls, args: Args, net: PolicyNet, optimizer: optim.Optimizer, env: VectorThirtyOne,
                opponents: Opponents, rng: np.random.Generator, decisions: int, updates: int,
                elapsed: float) -> RunState:
        """A copy of the live run's state (training on does not change it)."""
        return cls(
            args=args, model=copy.deepcopy(net.state_dict()), optimizer=copy.deepcopy(optimizer.state_dict()),
            env=env.snapshot(), snapshots=[copy.deepcopy(s.state_dict()) for s in opponents.snapshots],
            opponent_mode=opponents.mode.copy(), learner_seat=opponents.learner_seat.copy(),
            numpy_rng=copy.deepcopy(rng.bit_generator.state), torch_rng=torch.get_rng_state(),
            decisions=decisions, updates=updates, elapsed=elapsed,
        )

    def restore(self, net: PolicyNet, optimizer: optim.Optimizer, env: VectorThirtyOne, opponents: Opponents,
                rng: np.random.Generator) -> Turn:
        """Put the run back where it was; returns the tables' current turn."""
        if self.model["trunk.0.weight"].shape[1] != net.obs_dim:
            raise ValueError(
                f"this run was saved with {self.model['trunk.0.weight'].shape[1]} observation entries, today's "
                f"layout has {net.obs_dim} (the opponents' moves were added): it cannot be resumed; start a "
                f"new run from its weights with --init-from {self.args.out}/last.pt"
            )
        net.load_state_dict(self.model)
        optimizer.load_state_dict(self.optimizer)
        env.restore(self.env)
        for state in self.snapshots:
            opponents.add_snapshot(net)
            opponents.snapshots[-1].load_state_dict(state)
        opponents.mode, opponents.learner_seat = self.opponent_mode.copy(), self.learner_seat.copy()
        rng.bit_generator.state = self.numpy_rng
        torch.set_rng_state(self.torch_rng)
        return env.obs, env.mask, env.player

    def continued(self, given: Args, path: Path) -> Args:
        """The saved hyper-parameters, with this invocation's budget, progress bar and folder."""
        saved = self.args
        if saved.preset != given.preset or saved.num_players != given.num_players:
            raise ValueError(f"{path} is a {saved.preset} {saved.num_players}-player run, "
                             f"not {given.preset} {given.num_players}-player")
        return dataclasses.replace(saved, minutes=given.minutes, total_decisions=given.total_decisions,
                                   progress=given.progress, out=given.out)

    def payload(self) -> dict[str, Any]:
        """The checkpoint dict: the keys ``agents.policy`` reads, then the run state, numpy arrays as tensors."""
        args = self.args
        return {
            **policy_payload(args, self.model),
            "optimizer": self.optimizer, "args": dataclasses.asdict(args),
            "env": {name: torch.from_numpy(value) for name, value in self.env.items()},
            "snapshots": self.snapshots,
            "opponent_mode": torch.from_numpy(self.opponent_mode), "learner_seat": torch.from_numpy(self.learner_seat),
            "numpy_rng": self.numpy_rng, "torch_rng": self.torch_rng,
            "decisions": self.decisions, "updates": self.updates, "elapsed": self.elapsed,
        }

    def save(self, path: Path) -> None:
        """Write atomically (a temporary file, then a rename): a killed run never leaves a half-written checkpoint."""
        tmp = path.with_name(path.name + ".tmp")
        torch.save(self.payload(), tmp)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> RunState:
        """Read a checkpoint written by ``save`` (``weights_only=True``: reading it runs no code)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no checkpoint at {path}")
        try:
            ckpt = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many kinds for a damaged file
            raise ValueError(f"checkpoint {path} is corrupt, not a torch file or not weights-only "
                             f"(a checkpoint of an older version): {str(exc).splitlines()[0]}") from None
        if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{path} is not a thirtyone-env training checkpoint (format {CHECKPOINT_FORMAT!r})")
        try:
            return cls(
                args=Args(**ckpt["args"]), model=ckpt["model"], optimizer=ckpt["optimizer"],
                env={name: value.numpy() for name, value in ckpt["env"].items()},
                snapshots=list(ckpt["snapshots"]),
                opponent_mode=ckpt["opponent_mode"].numpy().astype(np.int64),
                learner_seat=ckpt["learner_seat"].numpy().astype(np.int64),
                numpy_rng=ckpt["numpy_rng"], torch_rng=ckpt["torch_rng"],
                decisions=int(ckpt["decisions"]), updates=int(ckpt["updates"]), elapsed=float(ckpt["elapsed"]),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            missing = f"bad or missing {exc}"
            raise ValueError(f"{path} holds no run state to resume (an exported policy?): {missing}") from None


# -- training --------------------------------------------------------------------------------------------
@dataclass
class Budget:
    """When to stop (decisions, or wall-clock seconds warm start included) and how far along we are."""

    total_decisions: int
    seconds: float
    start: float  # time.perf_counter() when the run's elapsed time was 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def fraction(self, decisions: int) -> float:
        if self.total_decisions:
            return decisions / self.total_decisions
        return min(self.elapsed() / self.seconds, 1.0)

    def done(self, decisions: int) -> bool:
        if self.total_decisions:
            return decisions >= self.total_decisions
        return self.elapsed() >= self.seconds


def train(args: Args, resume: bool = False,
          callback: Callable[[int, float, PolicyNet], bool | None] | None = None, quiet: bool = False) -> Path:
    """Train (or continue the run in ``args.out`` from its ``last.pt``); returns the final checkpoint path.

    The budget is wall-clock from the call (compiling and the warm start count), or decisions. A fresh
    run saves its starting policy as ``start.pt`` (for a before/after comparison) and evaluates it before
    the first update. ``callback(decisions, elapsed_seconds, net)`` runs after every update (the benchmark
    records its learning curve there); returning True ends the run early, with its final checkpoint.
    ``quiet`` prints nothing (no phases, no bar)."""
    from tqdm import tqdm

    from thirtyone_env.jit import compile_watch

    clock = time.perf_counter()
    out = Path(args.out)
    last = out / "last.pt"
    resumed = RunState.load(last) if resume else None
    if resumed is not None:
        args = resumed.continued(args, last)
    check_args(args)
    rules = Rules.preset(args.preset)
    rules.check_num_players(args.num_players)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    elapsed = resumed.elapsed if resumed is not None else 0.0
    budget = Budget(args.total_decisions, args.minutes * 60, start=clock - elapsed)
    by_decisions = bool(args.total_decisions)  # the bar counts decisions, else wall-clock seconds
    bar = tqdm(total=args.total_decisions or int(args.minutes * 60), disable=quiet or not args.progress,
               mininterval=1.0, unit="dec" if by_decisions else "s", dynamic_ncols=True,
               initial=resumed.decisions if resumed is not None and by_decisions else int(elapsed))

    def phase(text: str) -> None:
        if not quiet:
            tqdm.write(f"[{time.perf_counter() - clock:6.1f} s] {text}")  # this session's clock

    phase("compiling: the engine's and the opponents' kernels (numba; from its cache after the first run)")
    compiled = compile_watch.seconds
    env = VectorThirtyOne(args.num_envs, args.num_players, rules, seed=args.seed)
    net = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, args.hidden, args.advice, belief_for(args, rules))
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=ADAM_EPS)
    opponents = Opponents(args, rules, rng)
    warm_start = args.bc_decisions > 0 and not args.init_from  # a fine-tuned policy needs none
    if resumed is None and args.init_from:
        start_from(net, args, rules)
    decisions, updates = 0, 0
    turn = env.reset()
    opponents.draw(np.arange(args.num_envs))
    compile_opponents(opponents, env, rules, args)
    seconds = compile_watch.seconds - compiled
    phase(f"compiled in {seconds:.1f} s" if seconds else "compiling: nothing to do (all cached)")

    if resumed is None and warm_start:
        phase(f"warm start: {'fitting the value on' if args.advice else 'imitating HeuristicAgent on'} "
              f"{args.bc_decisions:,} decisions of HeuristicAgent self-play")
        bc = behaviour_cloning(net, rules, args)
        if args.advice:
            phase(f"warm start done: value fitted on {bc['bc/decisions']:,} decisions; the residual policy "
                  f"starts from HeuristicAgent's moves (agreement {bc['bc/agreement']:.3f})")
        else:
            phase(f"warm start done: imitated HeuristicAgent on {bc['bc/decisions']:,} decisions, "
                  f"agreement {bc['bc/agreement']:.3f}")
    if resumed is not None:
        turn = resumed.restore(net, optimizer, env, opponents, rng)
        decisions, updates = resumed.decisions, resumed.updates

    eval_keys = [f"eval/win_rate_{opponent_label(spec)}" for spec in parse_opponents(args.rule_based)]
    logger = Logger(out, eval_keys, resume_at=(updates, decisions) if resumed is not None else None)
    buf = Rollout.zeros(args.num_steps, args.num_envs, args.num_players, env.obs_dim, env.num_actions)
    batch_decisions = args.num_steps * args.num_envs
    shaping_coef = args.deal_shaping / rules.start_chips * SHAPING_MATCH_LIVES
    latest_eval: dict[str, float] = {}
    last_eval = budget.elapsed() - args.eval_every_minutes * 60 * 0.5  # resumed: half an interval to the next
    if resumed is None:  # the starting point of the learning curve, and of the before/after table
        torch.save(policy_payload(args, copy.deepcopy(net.state_dict())), out / "start.pt")
        phase(f"evaluating the starting policy ({args.eval_matches} matches per opponent)")
        latest_eval = evaluate(net, rules, args, seed=EVAL_SEED_OFFSET)
        last_eval = budget.elapsed()
        logger.log({"decisions": 0, "updates": 0, "minutes": round(last_eval / 60, 3), **latest_eval}, 0)
        phase("start: " + ", ".join(f"{k.removeprefix('eval/win_rate_')} {v:.3f}" for k, v in latest_eval.items()))
    last_ckpt = budget.elapsed()
    phase(f"training: PPO for {args.total_decisions:,} decisions" if by_decisions else
          f"training: PPO until {args.minutes:g} minutes of wall-clock from the start")

    with logger, bar:
        while not budget.done(decisions):
            t0 = time.perf_counter()
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - LR_DECAY * budget.fraction(decisions))
            turn, match_rewards = rollout(net, env, opponents, buf, turn, shaping_coef)
            decisions += batch_decisions
            advantages, returns = advantages_and_returns(net, env, buf, args)
            stats = ppo_update(net, optimizer, buf, advantages, returns, args,
                               value_only=updates < args.value_warmup_updates and warm_start)
            updates += 1
            if updates % args.snapshot_every == 0:
                opponents.add_snapshot(net)

            now = time.perf_counter()
            elapsed = now - budget.start
            row = {"decisions": decisions, "updates": updates, "minutes": round(elapsed / 60, 3),
                   "decisions_per_s": round(batch_decisions / (now - t0)), **stats,
                   "mean_match_reward": float(np.mean(match_rewards)) if match_rewards else 0.0}
            if elapsed - last_eval >= args.eval_every_minutes * 60 or budget.done(decisions):
                latest_eval = evaluate(net, rules, args, seed=EVAL_SEED_OFFSET + updates)
                row.update(latest_eval)
                last_eval = elapsed
            logger.log(row, decisions)
            bar.set_postfix({"dec/s": row["decisions_per_s"],
                             **{k.removeprefix("eval/win_rate_"): f"{v:.2f}" for k, v in latest_eval.items()}},
                            refresh=False)
            bar.update(batch_decisions if by_decisions else min(int(elapsed), bar.total) - bar.n)
            if elapsed - last_ckpt >= args.checkpoint_minutes * 60:
                RunState.capture(args, net, optimizer, env, opponents, rng, decisions, updates, elapsed).save(last)
                last_ckpt = elapsed
            if callback is not None and callback(decisions, elapsed, net):
                break
        RunState.capture(args, net, optimizer, env, opponents, rng, decisions, updates, elapsed).save(last)
    phase(f"training done: {decisions:,} decisions, {updates} updates, {elapsed / 60:.1f} minutes")
    return last


def compile_opponents(opponents: Opponents, env: VectorThirtyOne, rules: Rules, args: Args) -> None:
    """Compile every fixed opponent's (and the advisor's) kernels now, on the tables' first turn, so that
    the compiling phase is over before training starts. Throwaway copies act: the run's agents keep their
    random streams."""
    specs = [spec for spec, _ in opponents.fixed] + (["heuristic"] if args.advice else [])
    with torch.random.fork_rng(devices=[]):  # a sampling policy's draws must not move the run's torch stream
        for spec in dict.fromkeys(specs):
            build_agent(spec, rules, args.num_players).act_batch(env.obs.copy(), env.mask.copy())
