"""Derive ``HeuristicAgent``'s knock thresholds by simulation and write them into ``agents/heuristic.py``.

For each rule preset and number of players in play ``k``, tables of ``k`` players
(``VectorThirtyOne``, deal episodes) are played by ``HeuristicAgent`` with the
current table. Every decision where knocking is legal with a hand of at least
``--vmin`` points becomes a sample: the engine state is cloned into two branches,
one knocks, the other plays the agent's best non-knock move, and both finish the
deal with the agent in every seat (common random numbers: same stock, same RNG).
The sample's knock advantage is the difference of the knocker's relative result
(its net chips minus the mean of the others'). Per (k, completed turns) the mean
advantage by hand value is made non-decreasing (pool adjacent violators) and the
threshold is the lowest value where it is not negative. ``--rounds 2`` repeats
with the new table as the rollout policy.

    python scripts/derive_knock_thresholds.py --samples 60000 --rounds 2

Positions are cloned with ``Tables.take`` (state, RNG and decks), so both branches of a
sample see the same stock.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from agents import heuristic as H
from agents.heuristic import HeuristicAgent, knock_table
from thirtyone_env import encoding as E
from thirtyone_env.actions import KNOCK
from thirtyone_env.engine import Tables
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne

HEURISTIC_PY = Path(__file__).resolve().parents[1] / "agents" / "heuristic.py"


def collect(rules: Rules, k: int, agent: HeuristicAgent, samples: int, vmin2: int, seed: int, envs: int):
    """Positions (copies of tables) where the seat to act may knock with >= vmin, with their observations."""
    vec = VectorThirtyOne(envs, num_players=k, rules=rules, seed=seed, episode="deal")
    off = encoding_offsets(rules, k)
    obs, mask, player = vec.reset()
    positions, rows, masks, seats = [], [], [], []
    got = 0
    rng = np.random.default_rng(seed)
    while got < samples:
        pick = mask[:, KNOCK] & (obs[:, off[E.HAND_VALUE]] >= vmin2) & (rng.random(envs) < 0.5)
        idx = np.flatnonzero(pick)
        if idx.size:
            positions.append(vec.take(idx))
            rows.append(obs[idx].copy())
            masks.append(mask[idx].copy())
            seats.append(player[idx].copy())
            got += idx.size
        obs, mask, player, _, _ = vec.step(agent.act_batch(obs, mask))
    return Tables.stack(positions), *(np.concatenate(x) for x in (rows, masks, seats))


def encoding_offsets(rules: Rules, k: int) -> np.ndarray:
    return E.offsets(rules.deck_size, k)


def rollout(agent: HeuristicAgent, positions: Tables, first: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """Play a copy of each position from ``first`` action to the end of the deal; the seat's relative result."""
    vec = positions.take(np.arange(positions.num_tables))
    k = vec.num_players
    result = np.zeros(vec.num_tables, np.float64)
    open_ = np.ones(vec.num_tables, bool)
    obs, mask, _, rewards, done = vec.step(first.astype(np.int64))
    while True:
        finished = np.flatnonzero(done & open_)
        if finished.size:
            r = rewards[finished].astype(np.float64)
            mine = r[np.arange(finished.size), seats[finished]]
            others = (r.sum(axis=1) - mine) / (k - 1)
            result[finished] = mine - others
            open_[finished] = False
        if not open_.any():
            return result
        obs, mask, _, rewards, done = vec.step(agent.act_batch(obs, mask))


def pav(means: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted non-decreasing fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, weight, length]
    for x, w in zip(means, weights, strict=True):
        blocks.append([x, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            x2, w2, n2 = blocks.pop()
            x1, w1, n1 = blocks.pop()
            wt = w1 + w2
            blocks.append([(x1 * w1 + x2 * w2) / wt if wt else (x1 + x2) / 2, wt, n1 + n2])
    return np.concatenate([[b[0]] * b[2] for b in blocks])


def thresholds(turns: np.ndarray, values: np.ndarray, adv: np.ndarray, vmin2: int, min_count: int = 400):
    """Per turn column: the lowest value whose fitted knock advantage is >= 0 (62 = never).

    A column with fewer than ``min_count`` samples borrows the samples of earlier turns;
    the row is then made non-decreasing in turns (the others have had more draws).
    """
    turns = np.minimum(turns, H.TMAX - 1)
    grid = np.arange(vmin2, 63)
    row, weight = [], []
    for t in range(H.TMAX):
        lo = t
        while lo > 0 and (turns[(turns >= lo) & (turns <= t)]).size < min_count:
            lo -= 1
        sel = (turns >= lo) & (turns <= t)
        sums = np.array([adv[sel & (values == v)].sum() for v in grid])
        counts = np.array([(sel & (values == v)).sum() for v in grid], np.float64)
        have = counts > 0
        if not have.any():
            row.append(row[-1] if row else H.DEFAULT_KNOCK2)
            weight.append(1.0)
            continue
        fit = pav(sums[have] / counts[have], counts[have])
        ok = np.flatnonzero(fit >= 0)
        row.append(int(grid[have][ok[0]]) if ok.size else 62)
        weight.append(float((turns == t).sum()) + 1.0)
    smooth = pav(np.array(row, np.float64), np.array(weight))
    return [int(np.ceil(x)) for x in smooth]


def derive(name: str, k: int, samples: int, base: np.ndarray, vmin2: int, seed: int, envs: int) -> list[int]:
    rules = Rules.preset(name)
    agent = HeuristicAgent(rules, k, table=base)
    positions, rows, masks, seats = collect(rules, k, agent, samples, vmin2, seed, envs)
    off = encoding_offsets(rules, k)
    no_knock = masks.copy()
    no_knock[:, KNOCK] = False
    other = agent.act_batch(rows, no_knock)
    knock = np.full(len(rows), KNOCK, np.int64)
    adv = np.zeros(len(rows))
    for lo in range(0, len(rows), envs):
        sl = np.arange(lo, min(lo + envs, len(rows)))
        chunk = positions.take(sl)
        adv[sl] = rollout(agent, chunk, knock[sl], seats[sl]) - rollout(agent, chunk, other[sl], seats[sl])
    return thresholds(rows[:, off[E.TURNS]].astype(np.int64), rows[:, off[E.HAND_VALUE]].astype(np.int64),
                      adv, vmin2)


def write_table(tables: dict[str, dict[int, list[int]]]) -> None:
    text = HEURISTIC_PY.read_text()
    lines = ["KNOCK_TABLE: dict[str, dict[int, list[int]]] = {"]
    for name, rows in tables.items():
        lines.append(f'    "{name}": {{')
        lines += [f"        {k}: {row}," for k, row in sorted(rows.items())]
        lines.append("    },")
    body = "\n".join([*lines, "}"])
    new = re.sub(
        r"(# BEGIN KNOCK TABLE[^\n]*\n[^\n]*\n).*?(\n# END KNOCK TABLE)",
        lambda m: m.group(1) + body + m.group(2), text, flags=re.S,
    )
    HEURISTIC_PY.write_text(new)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="+", default=Rules.preset_names())
    p.add_argument("--players", nargs="+", type=int, default=[2, 3, 4, 5])
    p.add_argument("--samples", type=int, default=40000, help="knock decisions sampled per (preset, players)")
    p.add_argument("--rounds", type=int, default=1, help="times to re-derive with the new table as policy")
    p.add_argument("--vmin", type=float, default=20, help="lowest hand value considered for knocking")
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dry-run", action="store_true", help="print the table, do not write it")
    args = p.parse_args()
    tables: dict[str, dict[int, list[int]]] = {k: dict(v) for k, v in H.KNOCK_TABLE.items()}
    vmin2 = int(round(2 * args.vmin))
    start = time.time()
    for rnd in range(args.rounds):
        for name in args.presets:
            rules = Rules.preset(name)
            out = dict(tables.get(name, {}))
            for k in args.players:
                if k > rules.max_players:
                    continue
                base = knock_table(rules, tables.get(name))
                out[k] = derive(name, k, args.samples, base, vmin2, args.seed + 1000 * rnd + k, args.envs)
                print(f"round {rnd} {name} k={k}: {[v / 2 for v in out[k]]} ({time.time() - start:.0f}s)",
                      flush=True)
                tables[name] = out
                if not args.dry_run:  # after every row, so an interrupted run keeps its work
                    write_table(tables)
    print(f"done in {time.time() - start:.0f}s")


if __name__ == "__main__":
    main()
