"""Merge policies of one setting into one network that plays the mean of their logits (an ensemble).

    python scripts/average_policies.py merged.safetensors agents/pretrained/scat_2p.safetensors runs/x/last.pt
    thirtyone eval --paired --agents policy:merged.safetensors pretrained:scat_2p heuristic --matches 4000
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

from agents.policy import CHECKPOINT_FORMAT, export_policy, load_checkpoint, logit_average, net_from_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the merged policy (safetensors)")
    parser.add_argument("policies", nargs="+", help="checkpoints or exported policies of the same rules and players")
    args = parser.parse_args()
    loaded = [net_from_checkpoint(load_checkpoint(path), source=path) for path in args.policies]
    settings = {(rules.to_dict().__repr__(), n) for _, rules, n in loaded}
    if len(settings) > 1:
        raise SystemExit(f"the policies are for different rules or player counts: {sorted(settings)}")
    net, rules, n = logit_average([net for net, _, _ in loaded]), loaded[0][1], loaded[0][2]
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = Path(tmp) / "merged.pt"
        torch.save({"format": CHECKPOINT_FORMAT, "rules": rules.to_dict(), "num_players": n, "hidden": net.hidden,
                    "advice": net.advice, "model": net.state_dict()}, ckpt)
        print(export_policy(ckpt, args.out), f"({net.hidden} hidden units, the mean of {len(loaded)} policies)")


if __name__ == "__main__":
    main()
