"""Self-play PPO with action masking on ``VectorThirtyOne`` (CleanRL style, one file).

One network plays every learner seat. Each table plays a whole match against
one opponent kind: the current policy itself (self-play, every seat learns), a
past snapshot, or a rule-based agent; only learner seats' decisions are trained
on. Each seat's decisions form their own trajectory for GAE: the reward of a
decision is what the seat received until its next decision.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from numba import njit
from torch import nn, optim

from agents.heuristic import HeuristicAgent
from agents.policy import CHECKPOINT_FORMAT, PolicyAgent, PolicyNet, load_checkpoint, net_from_checkpoint
from thirtyone_env.engine import S_CHIPS
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne
from train.evaluate import make_agent, play_tournament


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
    init_from: str = ""
    """fine-tune: start from this policy (a checkpoint or exported file of the same rules, players,
    size and advice) instead of a warm start"""
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
    """rule-based opponents in the pool, with relative weights"""
    rule_based_share: float = 0.6
    """share of matches against a rule-based opponent (the rest: past snapshots)"""
    snapshot_every: int = 20
    """updates between snapshots added to the pool"""
    pool_size: int = 8
    """past snapshots kept"""
    eval_every_minutes: float = 2.0
    """minutes between evaluations against the rule-based agents"""
    eval_matches: int = 600
    """matches per evaluation"""
    checkpoint_minutes: float = 2.0
    """minutes between checkpoints"""
    threads: int = 2
    """torch threads"""
    progress: bool = True
    """show a progress bar"""


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


def shaping_reward(chips_before: np.ndarray, chips_after: np.ndarray, done: np.ndarray, coef: float) -> np.ndarray:
    """Chips won at a settled deal minus the other seats' average: zero-sum, dense, and it
    points the same way as the match result (a finished table has reset: no shaping there)."""
    delta = chips_after - chips_before
    n = delta.shape[1]
    relative = delta - (delta.sum(1, keepdims=True) - delta) / (n - 1)
    relative[done] = 0.0
    return coef * relative


def parse_weighted(spec: str) -> dict[str, float]:
    """``"heuristic:3,greedy:1"`` -> {"heuristic": 3.0, "greedy": 1.0} (weight 1 when omitted)."""
    out: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, weight = item.partition(":")
        try:
            out[name.strip()] = float(weight) if weight else 1.0
        except ValueError:
            raise ValueError(f"rule_based: bad weight in {item!r}; expected NAME or NAME:WEIGHT") from None
    return out


class Opponents:
    """Who sits at the non-learner seats of each table, drawn per match."""

    def __init__(self, args: Args, rules: Rules, rng: np.random.Generator):
        self.args, self.rng = args, rng
        weights = parse_weighted(args.rule_based)
        self.rule_based = [(name, make_agent(name, rules, args.num_players)) for name in weights]
        self.rb_weights = np.array(list(weights.values()), np.float64) / sum(weights.values())
        self.snapshots: list[PolicyNet] = []
        self.advisor = HeuristicAgent(rules, args.num_players) if args.advice else None
        self.mode = np.full(args.num_envs, -1)  # -1 self-play, 0..R-1 rule-based, R.. snapshots
        self.learner_seat = np.zeros(args.num_envs, np.int64)

    def draw(self, tables: np.ndarray) -> None:
        u = self.rng.random(len(tables))
        num_rb, num_snap = len(self.rule_based), len(self.snapshots)
        rb_share = self.args.rule_based_share if num_rb else 0.0
        snap_share = (1 - self.args.self_play - rb_share) if num_snap else 0.0
        mode = np.full(len(tables), -1)
        rb = (u >= self.args.self_play) & (u < self.args.self_play + rb_share)
        snap = (u >= self.args.self_play + rb_share) & (u < self.args.self_play + rb_share + snap_share)
        mode[rb] = self.rng.choice(num_rb, rb.sum(), p=self.rb_weights) if num_rb else -1
        mode[snap] = num_rb + self.rng.integers(0, max(num_snap, 1), snap.sum())
        self.mode[tables] = mode
        self.learner_seat[tables] = self.rng.integers(0, self.args.num_players, len(tables))

    def learner_rows(self, player: np.ndarray) -> np.ndarray:
        return (self.mode < 0) | (player == self.learner_seat)

    def act(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` for the opponent ``rows``."""
        num_rb = len(self.rule_based)
        for m in np.unique(self.mode[rows]):
            sel = rows[self.mode[rows] == m]
            if m < num_rb:
                actions[sel] = self.rule_based[m][1].act_batch(obs[sel], mask[sel])
            else:
                advice = self.advisor.act_batch(obs[sel], mask[sel]) if self.advisor else None
                actions[sel] = self.snapshots[m - num_rb].act(obs[sel], mask[sel], greedy=False, advice=advice)

    def add_snapshot(self, net: PolicyNet) -> None:
        snap = PolicyNet(net.obs_dim, net.num_actions, 1.0 / net.inv_scale.numpy(), net.hidden, net.advice)
        snap.load_state_dict(net.state_dict())
        snap.eval()
        self.snapshots.append(snap)
        if len(self.snapshots) > self.args.pool_size:
            self.snapshots.pop(0)
            self.mode[self.mode >= len(self.rule_based) + len(self.snapshots)] = -1


def behaviour_cloning(net: PolicyNet, rules: Rules, args: Args) -> dict[str, float]:
    """Warm start: fit the policy to HeuristicAgent's moves and the value to match results.

    A residual policy already starts from those moves (they are its advice): only its value is fitted.
    """
    teacher = make_agent("heuristic", rules, args.num_players)
    env = VectorThirtyOne(args.num_envs, args.num_players, rules, seed=args.seed + 7919)
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
    target = results[d_match.reshape(-1), d_seat.reshape(-1)]
    f_obs = torch.from_numpy(d_obs.reshape(steps * B, -1))
    f_mask = torch.from_numpy(d_mask.reshape(steps * B, -1))
    f_actions = torch.from_numpy(d_actions.reshape(-1))
    f_target = torch.from_numpy(np.nan_to_num(target))
    f_known = torch.from_numpy(~np.isnan(target))
    optimizer = optim.Adam(net.parameters(), lr=args.bc_learning_rate)
    net.train()
    for _ in range(args.bc_epochs):
        for mb in torch.randperm(len(f_actions)).split(4096):
            advice = f_actions[mb] if net.advice else None
            _, logp, _, value = net.get_action_and_value(f_obs[mb], f_mask[mb], f_actions[mb], advice)
            known = f_known[mb]
            v_loss = ((value - f_target[mb])[known] ** 2).mean() if known.any() else value.sum() * 0
            loss = 0.5 * v_loss if net.advice else -logp.mean() + 0.5 * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        sample = torch.arange(min(len(f_actions), 20000))
        advice = f_actions[sample] if net.advice else None
        logits = net.masked_logits(net.features(f_obs[sample]), f_mask[sample], advice)
        agreement = (logits.argmax(-1) == f_actions[sample]).float().mean().item()
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
            ("players", source_players, args.num_players), ("hidden", source.hidden, args.hidden),
            ("advice", source.advice, args.advice),
        )
        if theirs != ours
    ]
    if mismatches:
        raise ValueError(f"--init-from {args.init_from} does not fit this run: " + "; ".join(mismatches))
    net.load_state_dict(source.state_dict())


def save_checkpoint(path: Path, payload: dict) -> None:
    """Write atomically: a killed run never leaves a half-written checkpoint."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def evaluate(net: PolicyNet, rules: Rules, args: Args, seed: int) -> dict[str, float]:
    policy = PolicyAgent(net, rules, args.num_players, greedy=True)
    out = {}
    for name in parse_weighted(args.rule_based):
        opponent = make_agent(name, rules, args.num_players)
        t = play_tournament([policy, opponent], rules, args.num_players, args.eval_matches, seed=seed)
        out[f"eval/win_rate_{name}"] = t.results[0].win_rate
    return out


def train(args: Args, resume: bool = False) -> Path:
    """Train (or continue a run from ``out/last.pt``); returns the final checkpoint path."""
    out = Path(args.out)
    last = out / "last.pt"
    ckpt = None
    if resume:
        ckpt = load_checkpoint(last)
        saved = ckpt["args"]
        if saved["preset"] != args.preset or saved["num_players"] != args.num_players:
            raise ValueError(
                f"{last} is a {saved['preset']} {saved['num_players']}-player run, "
                f"not {args.preset} {args.num_players}-player"
            )
        args = Args(**{**saved, "minutes": args.minutes, "total_decisions": args.total_decisions,
                       "progress": args.progress, "out": args.out})
    rules = Rules.preset(args.preset)
    rules.check_num_players(args.num_players)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    env = VectorThirtyOne(args.num_envs, args.num_players, rules, seed=args.seed)
    net = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, args.hidden, args.advice)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    opponents = Opponents(args, rules, rng)
    warm_start = args.bc_decisions > 0 and not args.init_from  # a fine-tuned policy needs none
    if ckpt is None and args.init_from:
        start_from(net, args, rules)
    decisions, updates, elapsed = 0, 0, 0.0
    obs, mask, player = env.reset()
    opponents.draw(np.arange(args.num_envs))

    clock = time.perf_counter()  # the budget includes the warm start
    if ckpt is None and warm_start:
        bc = behaviour_cloning(net, rules, args)
        elapsed = time.perf_counter() - clock
        if args.advice:
            print(f"warm start: value fitted on {bc['bc/decisions']:,} decisions of HeuristicAgent self-play; "
                  f"the residual policy starts from its moves (agreement {bc['bc/agreement']:.3f})")
        else:
            print(f"warm start: imitated HeuristicAgent on {bc['bc/decisions']:,} decisions, "
                  f"agreement {bc['bc/agreement']:.3f}")
    if ckpt is not None:
        net.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        env.restore(ckpt["env"])
        obs, mask, player = env.obs, env.mask, env.player
        for state in ckpt["snapshots"]:
            opponents.add_snapshot(net)
            opponents.snapshots[-1].load_state_dict(state)
        opponents.mode, opponents.learner_seat = ckpt["opponent_mode"], ckpt["learner_seat"]
        rng.bit_generator.state = ckpt["numpy_rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        decisions, updates, elapsed = ckpt["decisions"], ckpt["updates"], ckpt["elapsed"]

    def checkpoint() -> None:
        save_checkpoint(last, {
            "format": CHECKPOINT_FORMAT, "rules": rules.to_dict(), "num_players": args.num_players,
            "hidden": args.hidden, "advice": args.advice, "model": net.state_dict(),
            "optimizer": optimizer.state_dict(),
            "args": dataclasses.asdict(args), "env": env.snapshot(),
            "snapshots": [s.state_dict() for s in opponents.snapshots],
            "opponent_mode": opponents.mode.copy(), "learner_seat": opponents.learner_seat.copy(),
            "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
            "decisions": decisions, "updates": updates, "elapsed": elapsed,
        })

    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    writer = SummaryWriter(str(out / "tb"))
    csv_path = out / "progress.csv"
    fields = ["decisions", "updates", "minutes", "decisions_per_s", "pg_loss", "v_loss", "entropy", "approx_kl",
              "clipfrac", "mean_match_reward"] + [f"eval/win_rate_{n}" for n in parse_weighted(args.rule_based)]
    new_csv = not (resume and csv_path.exists())
    if not new_csv:  # drop rows logged after the checkpoint we continue from
        with open(csv_path, newline="") as f:
            kept = [row for row in csv.DictReader(f) if int(row["updates"]) <= updates]
        with open(csv_path, "w", newline="") as f:
            rewrite = csv.DictWriter(f, fieldnames=fields)
            rewrite.writeheader()
            rewrite.writerows(kept)
    csv_file = open(csv_path, "a" if not new_csv else "w", newline="")
    log = csv.DictWriter(csv_file, fieldnames=fields)
    if new_csv:
        log.writeheader()

    T, B, n = args.num_steps, args.num_envs, args.num_players
    b_obs = np.zeros((T, B, env.obs_dim), np.int8)
    b_mask = np.zeros((T, B, env.num_actions), np.bool_)
    b_actions = np.zeros((T, B), np.int64)
    b_advice = np.zeros((T, B), np.int64)
    b_logp = np.zeros((T, B), np.float32)
    b_values = np.zeros((T, B), np.float32)
    b_seats = np.zeros((T, B), np.int64)
    b_learner = np.zeros((T, B), np.bool_)
    b_rewards = np.zeros((T, B, n), np.float32)
    b_dones = np.zeros((T, B), np.bool_)
    actions = np.zeros(B, np.int64)

    budget_s = args.minutes * 60
    last_eval = elapsed - args.eval_every_minutes * 60 * 0.5
    last_ckpt = elapsed
    latest_eval: dict[str, float] = {}
    match_rewards: list[float] = []
    bar = tqdm(total=args.total_decisions or int(budget_s), disable=not args.progress, mininterval=2.0,
               unit="dec" if args.total_decisions else "s", initial=decisions if args.total_decisions else int(elapsed))
    start = time.perf_counter() - elapsed

    def done_training() -> bool:
        if args.total_decisions:
            return decisions >= args.total_decisions
        return time.perf_counter() - start >= budget_s

    while not done_training():
        t0 = time.perf_counter()
        if args.total_decisions:
            frac = decisions / args.total_decisions
        else:
            frac = min((time.perf_counter() - start) / budget_s, 1.0)
        optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - 0.9 * frac)

        # rollout
        net.eval()
        for t in range(T):
            b_obs[t], b_mask[t], b_seats[t] = obs, mask, player
            learner = opponents.learner_rows(player)
            b_learner[t] = learner
            rows = np.flatnonzero(learner)
            advice = None
            if opponents.advisor is not None:
                b_advice[t, rows] = opponents.advisor.act_batch(obs[rows], mask[rows])
                advice = torch.from_numpy(b_advice[t, rows])
            with torch.no_grad():
                a, logp, _, value = net.get_action_and_value(torch.from_numpy(obs[rows]), torch.from_numpy(mask[rows]),
                                                             advice=advice)
            actions[rows] = a.numpy()
            b_logp[t, rows], b_values[t, rows] = logp.numpy(), value.numpy()
            others = np.flatnonzero(~learner)
            if others.size:
                opponents.act(obs, mask, others, actions)
            b_actions[t] = actions
            chips_before = env.raw_state()[:, S_CHIPS : S_CHIPS + n].astype(np.float32)
            obs, mask, player, rewards, done = env.step(actions)
            b_rewards[t], b_dones[t] = rewards, done
            if args.deal_shaping:
                b_rewards[t] += shaping_reward(chips_before, env.raw_state()[:, S_CHIPS : S_CHIPS + n],
                                               done, args.deal_shaping / rules.start_chips * 3)
            if done.any():
                finished = np.flatnonzero(done)
                seats = np.where(opponents.mode[finished] < 0, 0, opponents.learner_seat[finished])
                match_rewards.extend(rewards[finished, seats].tolist())
                opponents.draw(finished)
        decisions += T * B

        # bootstrap value of every seat's current view if not done
        with torch.no_grad():
            boot = np.stack([net.get_value(torch.from_numpy(env.observe(np.full(B, p)))).numpy()
                             for p in range(n)], axis=1)
        advantages = np.zeros((T, B), np.float32)
        gae_per_seat(b_rewards, b_dones, b_seats, b_values, boot, args.gamma, args.gae_lambda, advantages)
        returns = advantages + b_values

        # flatten the learner decisions
        keep = b_learner.reshape(-1)
        f_obs = torch.from_numpy(b_obs.reshape(T * B, -1)[keep])
        f_mask = torch.from_numpy(b_mask.reshape(T * B, -1)[keep])
        f_actions = torch.from_numpy(b_actions.reshape(-1)[keep])
        f_advice = torch.from_numpy(b_advice.reshape(-1)[keep])
        f_logp = torch.from_numpy(b_logp.reshape(-1)[keep])
        f_adv = torch.from_numpy(advantages.reshape(-1)[keep])
        f_returns = torch.from_numpy(returns.reshape(-1)[keep])

        # optimize policy and value
        net.train()
        clipfracs = []
        for _ in range(args.update_epochs):
            for mb in torch.randperm(len(f_actions)).tensor_split(args.num_minibatches):
                _, new_logp, entropy, new_value = net.get_action_and_value(
                    f_obs[mb], f_mask[mb], f_actions[mb], f_advice[mb] if net.advice else None)
                logratio = new_logp - f_logp[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = f_adv[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio,
                                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((new_value - f_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + args.vf_coef * v_loss
                if updates < args.value_warmup_updates and warm_start:
                    loss = args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
        updates += 1
        if updates % args.snapshot_every == 0:
            opponents.add_snapshot(net)

        # log
        now = time.perf_counter()
        elapsed = now - start
        row = {
            "decisions": decisions, "updates": updates, "minutes": round(elapsed / 60, 3),
            "decisions_per_s": round(T * B / (now - t0)), "pg_loss": pg_loss.item(), "v_loss": v_loss.item(),
            "entropy": entropy_loss.item(), "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs)),
            "mean_match_reward": float(np.mean(match_rewards)) if match_rewards else 0.0,
        }
        match_rewards.clear()
        if elapsed - last_eval >= args.eval_every_minutes * 60 or done_training():
            latest_eval = evaluate(net, rules, args, seed=10_000 + updates)
            row.update(latest_eval)
            last_eval = elapsed
        for key, value in row.items():
            writer.add_scalar(key if "/" in key else f"train/{key}", value, decisions)
        log.writerow(row)
        csv_file.flush()
        bar.set_postfix({"dec/s": row["decisions_per_s"],
                         **{k.removeprefix("eval/win_rate_"): f"{v:.2f}" for k, v in latest_eval.items()}},
                        refresh=False)
        bar.update(T * B if args.total_decisions else int(elapsed) - bar.n)
        if elapsed - last_ckpt >= args.checkpoint_minutes * 60:
            checkpoint()
            last_ckpt = elapsed

    checkpoint()
    bar.close()
    writer.close()
    csv_file.close()
    return last
