"""Paired strength table of agents (default: every shipped policy) against the rule-based agents.

Each cell is duplicate play (``thirtyone_env.evaluation.paired``): every deck stream is played
once per seat, the agent in one seat and copies of the opponent in the others. Rows are
written to ``--out`` as JSON lines as they finish, so a long run can be read while it goes.
With ``--streams DIR`` every cell's deck streams are saved too (``DIR/POLICY_OPPONENT_SEED.npz``),
so that a run on another seed can be pooled with it by ``thirtyone pool``.

    python scripts/strength_table.py --policies scat_2p --opponents heuristic greedy --matches 4000
    python scripts/strength_table.py --agent search --policies scat_2p --opponents heuristic --matches 400
    python scripts/strength_table.py --policies swedish_4p --opponents heuristic --seed 7 --streams runs/table
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from agents import make
from agents.policy import PolicyAgent, split_policy_name
from thirtyone_env.evaluation import new_streams_path, paired
from thirtyone_env.rules import Rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=PolicyAgent.available(), help="PRESET_NP names")
    parser.add_argument("--agent", default="pretrained:{name}",
                        help="agent spec per policy; {name} is the policy's PRESET_NP (e.g. search)")
    parser.add_argument("--also", default=None,
                        help="a second agent spec per policy played on the same streams (paired difference)")
    parser.add_argument("--opponents", nargs="+", default=["heuristic", "greedy", "random"])
    parser.add_argument("--matches", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", default="/tmp/strength.jsonl")
    parser.add_argument("--streams", type=Path, default=None,
                        help="folder to save every cell's deck streams in, for `thirtyone pool`")
    args = parser.parse_args()
    for flag, names in (("--policies", args.policies), ("--opponents", args.opponents)):
        twice = sorted({x for x in names if names.count(x) > 1})
        if twice:  # the second cell would repeat the first, and with --streams refuse after its matches
            parser.error(f"{flag} lists {', '.join(twice)} more than once")
    parts = {}  # a bad name refuses before the other policies' matches, not after them
    for name in args.policies:
        try:
            parts[name] = split_policy_name(name)
        except ValueError as error:
            parser.error(f"--policies: {error}")
        if parts[name][0] not in Rules.preset_names():
            parser.error(f"--policies: {name!r} is not PRESET_NP (presets: {', '.join(Rules.preset_names())})")
    torch.set_num_threads(1)
    # Every cell's agents are built before the first match, so that a spec that cannot be built (no shipped
    # scat_9p, an opponent's typo, a missing checkpoint) refuses before hours of play, not after the cells ahead of it.
    cells = {}
    for name, (preset, n) in parts.items():
        rules = Rules.preset(preset)
        specs = [args.agent.format(name=name)] + ([args.also.format(name=name)] if args.also else [])
        for opp in args.opponents:
            try:
                cells[name, opp] = (rules, n, specs, [make(s, rules, n, seed=args.seed) for s in specs],
                                    make(opp, rules, n, seed=args.seed + 1))
            except (ValueError, OSError) as error:  # a bad spec, or a policy:PATH with no checkpoint there
                parser.error(f"{name} against {opp}: {error}")
    streams = {cell: args.streams / f"{cell[0]}_{cell[1]}_{args.seed}.npz" for cell in cells} if args.streams else {}
    for path in streams.values():  # refuse before hours of play, not after
        new_streams_path(path)
    for (name, opp), (rules, n, specs, agents, opponent) in cells.items():
        start = time.perf_counter()
        result = paired(agents, opponent, rules, n, args.matches, seed=args.seed, names=specs, opponent_name=opp)
        lo, hi = result.interval()
        if streams:
            result.save(streams[name, opp])
        row = {"policy": name, "agent": specs[0], "opponent": opp, "matches": result.matches,
               "win_rate": round(result.win_rate(), 4), "ci": [round(lo, 4), round(hi, 4)],
               "fair": round(1 / n, 4), "seconds": round(time.perf_counter() - start, 1)}
        if args.also:
            mean, dlo, dhi = result.difference(0, 1)
            row.update(also=specs[1], also_win_rate=round(result.win_rate(1), 4),
                       difference=[round(mean, 4), round(dlo, 4), round(dhi, 4)])
        if hasattr(agents[0], "seconds_per_decision"):
            row["ms_per_decision"] = round(1000 * agents[0].seconds_per_decision, 1)
        print(json.dumps(row), flush=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
