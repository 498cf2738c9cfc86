"""Merge policies of one setting into one network that plays the mean of their logits (an ensemble).

    python scripts/average_policies.py merged.safetensors agents/pretrained/scat_2p.safetensors runs/x/last.pt
    thirtyone eval --paired --agents policy:merged.safetensors pretrained:scat_2p heuristic --matches 4000
"""

from __future__ import annotations

import argparse

from agents.policy import load_checkpoint, logit_average, net_from_checkpoint, save_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the merged policy (safetensors)")
    parser.add_argument("policies", nargs="+", help="checkpoints or exported policies of the same rules and players")
    args = parser.parse_args()
    loaded = [net_from_checkpoint(load_checkpoint(path), source=path) for path in args.policies]
    (_, rules, n), nets = loaded[0], [net for net, _, _ in loaded]
    if any((theirs, k) != (rules, n) for _, theirs, k in loaded):
        found = (f"{path}: {theirs.name}, {k}" for path, (_, theirs, k) in zip(args.policies, loaded, strict=True))
        raise SystemExit(f"the policies are not all for {rules.name} with {n} players: " + "; ".join(found))
    merged = logit_average(nets)
    print(save_policy(merged, rules, n, args.out), f"({merged.hidden} hidden units, the mean of {len(nets)} policies)")


if __name__ == "__main__":
    main()
