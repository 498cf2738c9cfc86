"""Policy improvement from counterfactuals in the true deal: learn what each move is worth over the policy's.

    python scripts/counterfactual_q.py collect --positions 5000000 --seed 1 --out runs/cfq/s1
    python scripts/counterfactual_q.py fit runs/cfq/s1 --out runs/cfq/q1.pt
    python scripts/counterfactual_q.py gain runs/cfq/s3 --q runs/cfq/q1.pt runs/cfq/q2.pt --margin 0 0.005 0.01
    python scripts/counterfactual_q.py distill runs/cfq/s1 runs/cfq/s2 --q runs/cfq/q1.pt runs/cfq/q2.pt \
        --margin 0.01 --out runs/cfq/p.safetensors

``collect`` plays the shipped policy against a 3:1 mix of `HeuristicAgent` and `GreedyAgent` (``--greedy-share``
sets the mix) and, at every
decision of the policy with a choice, plays **every legal move out in the true deal** (the real stock and
hands) to the deal's end, the policy in its seat and the real opponent in the others, scored by the chance
to win the match (`WinTable`, as the search scores). All players are deterministic, so each move's value
in that deal is exact and every move meets the same cards (`scripts/search_gain.py` measures the same
way). The target of a move is its value minus the policy's move's value.

``fit`` regresses those targets on the observation alone (a network; mean squared error). The hidden
cards differ between positions that look the same, so a single target is the move's gain in one possible
deal; the regression averages them into the expected gain given what the player sees, under the deals
that these players reach: what a search would estimate if its belief were exact and it had unlimited
worlds. ``gain`` measures a decision rule (leave the policy's move for the best predicted one where it
gains more than ``margin``) on positions the fit never saw, in the true deal. ``distill`` teaches the
policy network that rule, so the result plays alone, without search.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from distill_search import advice_for, train_towards  # noqa: E402
from search_gain import record, true_values  # noqa: E402

from agents.make import make  # noqa: E402
from agents.policy import PolicyAgent, lineage, save_policy  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402

OPPONENTS = ("heuristic", "greedy")


def base_policy(path: str | None, preset: str, n: int) -> PolicyAgent:
    """The policy being improved: a policy file, or the shipped one (``None``)."""
    return PolicyAgent.pretrained(preset, n) if path is None else PolicyAgent.load(path, preset, n)


# -- collect --------------------------------------------------------------------------------------------
def collect(policy_path: str | None, preset: str, n: int, positions: int, seed: int, out: str,
            greedy_share: float = 0.25, chunk: int = 100_000) -> None:
    """Write chunks of ``chunk`` positions to ``out``/NNNN.npz (a stopped run keeps the finished chunks), a
    ``greedy_share`` of each against `GreedyAgent`, the rest against `HeuristicAgent`."""
    policy = base_policy(policy_path, preset, n)
    wins = SearchAgent(preset, n, policy=policy, budget_ms=None).wins
    Path(out).mkdir(parents=True, exist_ok=True)
    start, done = time.time(), 0
    for index in range(-(-positions // chunk)):
        path = Path(out) / f"{index:04d}.npz"
        size = min(chunk, positions - done)
        if path.exists():
            done += size
            continue
        parts = []
        greedy = round(size * greedy_share)  # the heuristic gets the rest, so the parts always sum to the chunk
        for k, (name, count) in enumerate(zip(OPPONENTS, (size - greedy, greedy), strict=True)):
            if count == 0:
                continue
            s = seed * 1_000_003 + index * 17 + k
            opponent = make(name, preset, n, seed=s)
            obs, mask, hands, stocks = record(policy, opponent, preset, n, count, s, share=1.0)
            values = true_values(obs, mask, hands, stocks, policy, opponent, preset, n, wins)
            base = policy.act_batch(obs, mask)
            gain = values - values[np.arange(len(obs)), base][:, None]
            parts.append((obs, mask, base, gain))
        np.savez_compressed(path.with_suffix(".tmp.npz"), obs=np.concatenate([p[0] for p in parts]),
                            mask=np.concatenate([p[1] for p in parts]),
                            base=np.concatenate([p[2] for p in parts]).astype(np.int8),
                            gain=np.concatenate([p[3] for p in parts]).astype(np.float32))
        path.with_suffix(".tmp.npz").replace(path)
        done += size
        print(f"{done:,} positions in {time.time() - start:.0f} s", flush=True)


def load(dirs: list[str]) -> dict[str, np.ndarray]:
    files = sorted(f for d in dirs for f in Path(d).glob("[0-9][0-9][0-9][0-9].npz"))
    if not files:
        raise SystemExit(f"no chunks in {', '.join(dirs)}")
    data = [np.load(f) for f in files]
    return {key: np.concatenate([d[key] for d in data]) for key in ("obs", "mask", "base", "gain")}


# -- fit ------------------------------------------------------------------------------------------------
class GainNet(nn.Module):
    """Observation and the policy's log-probabilities -> each move's expected gain over the policy's move
    (in match-win chance). The policy's view of the moves tells it where a decision is close."""

    def __init__(self, obs_scale: np.ndarray, num_actions: int, hidden: int = 256):
        super().__init__()
        self.register_buffer("inv_scale", torch.as_tensor(1.0 / np.asarray(obs_scale, np.float32)))
        self.body = nn.Sequential(nn.Linear(len(obs_scale) + num_actions, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, num_actions))

    def forward(self, obs: torch.Tensor, logp: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
        out = self.body(torch.cat([obs.float() * self.inv_scale, logp.float()], 1))
        return out - out.gather(1, base.long()[:, None])  # the policy's move gains 0 by definition


def policy_logp(agent: PolicyAgent, obs: np.ndarray, mask: np.ndarray, advice: torch.Tensor | None,
                batch: int = 65536) -> tuple[torch.Tensor, np.ndarray]:
    """The policy's log-probability of every move (illegal ones -20), float16 [N, num_actions], and its greedy
    move (from the full-precision logits); ``advice``: ``advice_for`` these rows."""
    net, out, greedy = agent.net, [], []
    with torch.no_grad():
        for i in range(0, len(obs), batch):
            rows = slice(i, i + batch)
            logits = net.masked_logits(net.features(torch.as_tensor(obs[rows])), torch.as_tensor(mask[rows]),
                                       None if advice is None else advice[rows])
            out.append(logits.log_softmax(-1).clamp(min=-20).half())
            greedy.append(logits.argmax(1).numpy())
    return torch.cat(out), np.concatenate(greedy)


def observed(agent: PolicyAgent, d: dict[str, np.ndarray]) -> tuple[torch.Tensor | None, torch.Tensor]:
    """The advisor's moves (where the policy has one) and the policy's log-probabilities at ``d``'s positions,
    which must be the policy's own: its greedy moves are the ``base`` moves the gains were measured against."""
    advice = advice_for(agent, torch.as_tensor(d["obs"]), torch.as_tensor(d["mask"]))
    logp, greedy = policy_logp(agent, d["obs"], d["mask"], advice)
    other = np.flatnonzero(greedy != d["base"])
    if other.size:
        raise SystemExit(f"{agent.name} does not play the recorded moves at {other.size:,} of {len(logp):,} positions: "
                         "they were collected with another policy (pass it as --policy)")
    return advice, logp


def fit(dirs: list[str], policy_path: str | None, preset: str, n: int, out: str, epochs: int, lr: float,
        hidden: int, seed: int, batch: int = 4096) -> None:
    torch.manual_seed(seed)
    d = load(dirs)
    agent = base_policy(policy_path, preset, n)
    obs, base = torch.as_tensor(d["obs"]), torch.as_tensor(d["base"]).long()
    _, logp = observed(agent, d)
    target = torch.as_tensor(np.nan_to_num(d["gain"], nan=0.0))  # NaN exactly where a move is illegal
    legal = torch.as_tensor(d["mask"])
    net = GainNet(1.0 / agent.net.inv_scale.numpy(), target.shape[1], hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    held = torch.rand(len(obs)) < 0.02
    train_rows = torch.nonzero(~held).squeeze(1)
    batch = min(batch, len(train_rows))
    steps = epochs * (len(train_rows) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps, pct_start=0.05)
    print(f"{len(obs):,} positions, {int(legal.sum()):,} move values", flush=True)
    start = time.time()
    for epoch in range(epochs):
        order = train_rows[torch.randperm(len(train_rows))]
        for i in range(0, len(order) - batch + 1, batch):
            rows = order[i : i + batch]
            pred = net(obs[rows], logp[rows], base[rows])
            loss = ((pred - target[rows]) ** 2 * legal[rows]).sum() / legal[rows].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        with torch.no_grad():
            rows = torch.nonzero(held).squeeze(1)
            pred = torch.cat([net(obs[r], logp[r], base[r]) for r in rows.split(65536)])
            m = legal[rows]
            mse = (((pred - target[rows]) ** 2) * m).sum() / m.sum()
            zero = ((target[rows] ** 2) * m).sum() / m.sum()
        print(f"epoch {epoch + 1}: held-out mse {mse:.6f} (predicting zero: {zero:.6f}), "
              f"{time.time() - start:.0f} s", flush=True)
    torch.save({"state": net.state_dict(), "num_actions": target.shape[1], "hidden": hidden}, out)
    print(f"wrote {out}")


def load_gain_net(path: str) -> GainNet:
    ckpt = torch.load(path, weights_only=True)  # tensors and ints only: loading runs no code
    net = GainNet(1.0 / ckpt["state"]["inv_scale"].numpy(), ckpt["num_actions"], ckpt["hidden"])
    net.load_state_dict(ckpt["state"])
    return net.eval()


def improved(nets: list[GainNet], logp: torch.Tensor, obs: np.ndarray, mask: np.ndarray, base: np.ndarray,
             margin: float, batch: int = 65536) -> np.ndarray:
    """The best predicted legal move where every net predicts it gains more than ``margin`` over ``base``
    (several nets fitted on different positions: a move one of them overrates by chance is not taken)."""
    out = []
    with torch.no_grad():
        for i in range(0, len(obs), batch):
            rows = slice(i, i + batch)
            b = torch.as_tensor(base[rows]).long()
            preds = torch.stack([net(torch.as_tensor(obs[rows]), logp[rows], b) for net in nets])
            arg = preds.mean(0).masked_fill(~torch.as_tensor(mask[rows]), -np.inf).argmax(1)
            agreed = preds.gather(2, arg[None, :, None].expand(len(nets), -1, 1)).squeeze(2).min(0).values
            out.append(torch.where(agreed > margin, arg, b).numpy())
    return np.concatenate(out)


def gain(qs: list[str], dirs: list[str], policy_path: str | None, preset: str, n: int, margins: list[float]) -> None:
    d = load(dirs)
    nets = [load_gain_net(q) for q in qs]
    rows = np.arange(len(d["obs"]))
    base = d["base"].astype(np.int64)
    _, logp = observed(base_policy(policy_path, preset, n), d)
    print(f"{len(rows):,} held-out positions; seeing the hidden cards would gain "
          f"{np.nanmax(d['gain'], 1).mean():+.5f} per decision")
    for margin in margins:
        chosen = improved(nets, logp, d["obs"], d["mask"], base, margin)
        g = d["gain"][rows, chosen]
        print(f"  margin {margin}: departs at {(chosen != base).mean():.4f}, gain per decision "
              f"{g.mean():+.5f} +- {1.96 * g.std(ddof=1) / np.sqrt(len(g)):.5f}", flush=True)


def distill(qs: list[str], dirs: list[str], policy_path: str | None, preset: str, n: int, margin: float,
            epochs: int, lr: float, out: str, seed: int) -> None:
    """Fit the shipped policy to the improved rule's moves (cross-entropy to one move per position)."""
    torch.manual_seed(seed)
    d = load(dirs)
    base = d["base"].astype(np.int64)
    agent = base_policy(policy_path, preset, n)
    advice, logp = observed(agent, d)
    chosen = improved([load_gain_net(q) for q in qs], logp, d["obs"], d["mask"], base, margin)
    print(f"{len(base):,} positions; the rule leaves the policy's move at {(chosen != base).mean():.4f}", flush=True)
    target = torch.nn.functional.one_hot(torch.as_tensor(chosen), d["mask"].shape[1]).float()
    train_towards(agent, torch.as_tensor(d["obs"]), torch.as_tensor(d["mask"]), advice, torch.as_tensor(base),
                  target, epochs, lr)
    nets = f"{len(qs)} gain net" + "s" * (len(qs) > 1)
    step = f"scripts/counterfactual_q.py: {len(base):,} positions, {nets}, margin {margin}, distilled {epochs} epochs"
    path = save_policy(agent.net, Rules.preset(preset), n, out, lineage(agent.trained, step))
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--preset", default="scat")
    common.add_argument("--players", type=int, default=2)
    common.add_argument("--seed", type=int, default=0)
    common.add_argument("--policy", default=None, help="policy file to improve (default: the shipped one)")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", parents=[common])
    c.add_argument("--positions", type=int, default=1_000_000)
    c.add_argument("--greedy-share", type=float, default=0.25,
                   help="the share of positions against GreedyAgent (the rest: HeuristicAgent)")
    c.add_argument("--out", required=True)
    f = sub.add_parser("fit", parents=[common])
    f.add_argument("dirs", nargs="+")
    f.add_argument("--epochs", type=int, default=4)
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--hidden", type=int, default=256)
    f.add_argument("--out", required=True)
    g = sub.add_parser("gain", parents=[common])
    g.add_argument("dirs", nargs="+")
    g.add_argument("--q", nargs="+", required=True, help="gain networks (a move is taken where all agree)")
    g.add_argument("--margin", type=float, nargs="+", default=[0.0, 0.005, 0.01, 0.02])
    t = sub.add_parser("distill", parents=[common])
    t.add_argument("dirs", nargs="+")
    t.add_argument("--q", nargs="+", required=True)
    t.add_argument("--margin", type=float, default=0.01)
    t.add_argument("--epochs", type=int, default=2)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.command == "collect":
        if not 0.0 <= args.greedy_share <= 1.0:
            parser.error(f"--greedy-share {args.greedy_share} is not a share: expected a number from 0 to 1")
        collect(args.policy, args.preset, args.players, args.positions, args.seed, args.out, args.greedy_share)
    elif args.command == "fit":
        fit(args.dirs, args.policy, args.preset, args.players, args.out, args.epochs, args.lr, args.hidden, args.seed)
    elif args.command == "gain":
        gain(args.q, args.dirs, args.policy, args.preset, args.players, args.margin)
    else:
        distill(args.q, args.dirs, args.policy, args.preset, args.players, args.margin, args.epochs, args.lr,
                args.out, args.seed)


if __name__ == "__main__":
    main()
