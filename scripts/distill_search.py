"""Expert iteration, one step: teach the shipped policy what `SearchAgent` finds, as soft targets.

    python scripts/distill_search.py collect --decisions 100000 --seed 1 --out runs/distill/s1.npz
    python scripts/distill_search.py fit runs/distill/s*.npz --tau 0.01 --out runs/distill/tau001.safetensors
    thirtyone eval --paired --agents policy:runs/distill/tau001.safetensors pretrained:scat_2p heuristic --matches 4000

``collect`` plays the shipped policy against a 3:1 mix of `HeuristicAgent` and `GreedyAgent` (one kind per
match) and, at each of its decisions with a choice, has the search value every legal move: the mean over 64
worlds dealt by the learned belief (common random numbers), each played out by the policy and scored by the
chance to win the match. As in the search, a knock stays the policy's call. ``fit`` trains the policy towards
``softmax(policy logits + (Q - Q of the policy's move) / tau)`` by cross-entropy (KL-regularised policy
improvement: with a small ``tau`` the target leaves the policy's move wherever the search sees a gain; the
network then averages the search's noise over similar positions, which no single search can). The result is
a policy file that plays without search.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents.make import make
from agents.policy import PolicyAgent, lineage, save_policy
from agents.search import SearchAgent, knocks_left_to, mean_values
from thirtyone_env.engine import Tables
from thirtyone_env.rules import Rules


def collect(preset: str, n: int, decisions: int, seed: int, samples: int, out_path: str,
            tables: int = 256) -> None:
    """Write the decisions to ``out_path`` (npz), rewritten every 200 batches, so that a stopped run keeps them."""
    rules = Rules.preset(preset)
    policy = PolicyAgent.pretrained(preset, n)
    search = SearchAgent(rules, n, seed=seed, policy=policy, samples=samples, budget_ms=None)
    kinds = [make("heuristic", rules, n), make("greedy", rules, n)]
    rng = np.random.default_rng(seed)
    t = Tables(tables, n, rules, seed=seed)
    obs, mask, _ = t.reset()
    kind = (rng.random(tables) < 0.25).astype(int)  # 3:1 heuristic:greedy, per match
    out: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "base": [], "q": []}
    got, start = 0, time.time()
    while got < decisions:
        actions = np.empty(tables, np.int64)
        mine = np.flatnonzero(t.player == 0)
        if mine.size:
            base = policy.act_batch(obs[mine], mask[mine])
            actions[mine] = base
            choice = mask[mine].sum(1) > 1
            rows, base = mine[choice], base[choice]
            if rows.size:
                values = search.values(obs[rows], knocks_left_to(mask[rows], base), samples,
                                       rng.integers(0, 2**31, rows.size))
                out["obs"].append(obs[rows].copy())
                out["mask"].append(mask[rows].copy())
                out["base"].append(base)
                out["q"].append(mean_values(values).astype(np.float32))  # NaN where not searched
                got += rows.size
                if len(out["obs"]) % 200 == 0 or got >= decisions:
                    save(out_path, {key: np.concatenate(parts)[:decisions] for key, parts in out.items()})
                    print(f"{got:,} decisions in {time.time() - start:.0f} s", flush=True)
        for k, agent in enumerate(kinds):
            rows = np.flatnonzero((t.player != 0) & (kind == k))
            if rows.size:
                actions[rows] = agent.act_batch(obs[rows], mask[rows])
        obs, mask, _, _, done = t.step(actions)
        kind[done] = (rng.random(done.sum()) < 0.25).astype(int)


def save(path: str, data: dict[str, np.ndarray]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(path).with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **data)
    tmp.replace(path)


def targets(logits: torch.Tensor, q: torch.Tensor, base: torch.Tensor, tau: float) -> torch.Tensor:
    """softmax(logits + advantage / tau); moves the search did not value keep their logits."""
    advantage = (q - q.gather(1, base[:, None])).nan_to_num(0.0)
    return (logits + advantage / tau).softmax(-1)


def fit(files: list[str], preset: str, n: int, tau: float, epochs: int, lr: float, out: str, seed: int) -> None:
    torch.manual_seed(seed)
    data = [np.load(f) for f in files]
    obs, mask, base, q = (torch.as_tensor(np.concatenate([d[k] for d in data])) for k in ("obs", "mask", "base", "q"))
    agent = PolicyAgent.pretrained(preset, n)
    net, advice = agent.net, advice_for(agent, obs, mask)
    with torch.no_grad():
        target = targets(net.masked_logits(net.features(obs), mask, advice), q, base.long(), tau)
    print(f"{len(obs):,} decisions; the target's best move differs from the policy's at "
          f"{(target.argmax(1) != base).float().mean().item():.4f}", flush=True)
    train_towards(agent, obs, mask, advice, base, target, epochs, lr)
    step = f"scripts/distill_search.py: {len(obs):,} searched decisions, tau {tau}, {epochs} epochs"
    path = save_policy(net, Rules.preset(preset), n, out, lineage(agent.trained, step))
    print(f"wrote {path}")


def advice_for(agent: PolicyAgent, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
    """The advisor's moves where the policy is residual over one (its network takes them as input)."""
    return torch.as_tensor(agent.advisor.act_batch(obs.numpy(), mask.numpy())) if agent.advisor else None


def train_towards(agent: PolicyAgent, obs: torch.Tensor, mask: torch.Tensor, advice: torch.Tensor | None,
                  base: torch.Tensor, target: torch.Tensor, epochs: int, lr: float, batch: int = 1024) -> None:
    """Fit ``agent``'s network (``advice``: ``advice_for`` these rows) to the move distributions ``target`` by
    cross-entropy (5% held out to report how often it agrees with the target's best move, and how often it
    leaves the old policy's move)."""
    net = agent.net
    held = torch.rand(len(obs)) < 0.05
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    for epoch in range(epochs):
        order = torch.randperm(len(obs))
        order = order[~held[order]]
        for i in range(0, len(order), batch):
            rows = order[i : i + batch]
            logp = net.masked_logits(net.features(obs[rows]), mask[rows],
                                     None if advice is None else advice[rows]).log_softmax(-1)
            loss = -(target[rows] * logp.clamp(min=-1e4)).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            logits = net.masked_logits(net.features(obs[held]), mask[held], None if advice is None else advice[held])
            agree = (logits.argmax(1) == target[held].argmax(1)).float().mean().item()
            moved = (logits.argmax(1) != base[held]).float().mean().item()
        print(f"epoch {epoch + 1}: held-out agreement with the target's best move {agree:.4f}, "
              f"leaves the old policy's move at {moved:.4f}", flush=True)
    net.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--preset", default="scat")
    c.add_argument("--players", type=int, default=2)
    c.add_argument("--decisions", type=int, default=100_000)
    c.add_argument("--samples", type=int, default=64)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("files", nargs="+")
    f.add_argument("--preset", default="scat")
    f.add_argument("--players", type=int, default=2)
    f.add_argument("--tau", type=float, default=0.01)
    f.add_argument("--epochs", type=int, default=3)
    f.add_argument("--lr", type=float, default=1e-4)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.command == "collect":
        collect(args.preset, args.players, args.decisions, args.seed, args.samples, args.out)
        print(f"wrote {args.out}")
    else:
        fit(args.files, args.preset, args.players, args.tau, args.epochs, args.lr, args.out, args.seed)


if __name__ == "__main__":
    main()
