"""Train the belief ``SearchAgent`` deals the opponents' hidden cards from (``agents/belief.py``).

    python scripts/train_belief.py --preset scat --players 2   # -> agents/pretrained/belief/scat_2p.safetensors

Collects decisions of the shipped policy against a mix of itself, ``HeuristicAgent`` and ``GreedyAgent``
(the observation and the opponents' true hands), fits an MLP by the cross-entropy of each opponent's
hidden cards among the cards the observer cannot place, and prints that cross-entropy on held-out
matches next to the uniform belief's.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from agents.belief import BELIEF_DIR, BeliefNet, collect, unseen
from thirtyone_env.rules import Rules


@dataclass
class Args:
    preset: str = "scat"
    players: int = 2
    samples: int = 3_000_000  # training decisions (one int8 observation each)
    val_samples: int = 100_000  # held-out decisions, from other matches (another seed)
    hidden: int = 128
    epochs: int = 4
    batch: int = 4096
    lr: float = 2e-3  # one-cycle peak
    seed: int = 1
    threads: int = 2
    out: str = ""  # default: the shipped file's place


def hidden_cross_entropy(logits: torch.Tensor, pool: torch.Tensor, hands: torch.Tensor) -> torch.Tensor:
    """Mean nats per hidden opponent card: a softmax per opponent over the cards the observer cannot place."""
    z = logits.view(hands.shape).masked_fill(~pool[:, None, :], -1e9)
    target = hands & pool[:, None, :]
    return -(torch.log_softmax(z, -1) * target).sum() / target.sum().clamp(min=1)


def main(args: Args) -> None:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rules, n = Rules.preset(args.preset), args.players
    t0 = time.time()
    obs, hands = collect(rules, n, args.samples, seed=args.seed)
    val_obs, val_hands = collect(rules, n, args.val_samples, seed=args.seed + 1000)
    print(f"collected {len(obs):,} + {len(val_obs):,} decisions in {time.time() - t0:.0f} s", flush=True)
    d = rules.deck_size
    inv_scale = torch.from_numpy(BeliefNet(rules, n, _blank(obs.shape[1], args.hidden, (n - 1) * d)).inv_scale)
    net = nn.Sequential(nn.Linear(obs.shape[1], args.hidden), nn.ReLU(), nn.Linear(args.hidden, args.hidden),
                        nn.ReLU(), nn.Linear(args.hidden, (n - 1) * d))
    pool = torch.from_numpy(unseen(obs, d, n))
    x, y = torch.from_numpy(obs), torch.from_numpy(hands)
    steps = args.epochs * (len(obs) // args.batch)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=steps)
    for epoch in range(args.epochs):
        order = torch.randperm(len(obs))
        for i in range(0, len(obs) - args.batch + 1, args.batch):
            rows = order[i : i + args.batch]
            loss = hidden_cross_entropy(net(x[rows].float() * inv_scale), pool[rows], y[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        belief = _to_belief(net, rules, n, {})
        learned, uniform = belief.cross_entropy(val_obs, val_hands)
        print(f"epoch {epoch + 1}/{args.epochs}: held-out {learned:.4f} nats per hidden card "
              f"(uniform {uniform:.4f}) after {time.time() - t0:.0f} s", flush=True)
    trained = {"samples": args.samples, "epochs": args.epochs, "seed": args.seed,
               "held_out_nats": round(learned, 4), "uniform_nats": round(uniform, 4)}
    path = _to_belief(net, rules, n, trained).save(args.out or BELIEF_DIR / f"{args.preset}_{n}p.safetensors")
    print(f"wrote {path}")


def _blank(obs_dim: int, hidden: int, out: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(np.zeros((obs_dim, hidden)), np.zeros(hidden)), (np.zeros((hidden, out)), np.zeros(out))]


@torch.no_grad()
def _to_belief(net: nn.Sequential, rules: Rules, n: int, trained: dict) -> BeliefNet:
    linear = [m for m in net if isinstance(m, nn.Linear)]
    return BeliefNet(rules, n, [(m.weight.T.numpy().copy(), m.bias.numpy().copy()) for m in linear], trained)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for field, default in Args().__dict__.items():
        parser.add_argument(f"--{field.replace('_', '-')}", type=type(default), default=default)
    main(Args(**vars(parser.parse_args())))
