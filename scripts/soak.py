"""Soak test: thousands of random matches over every preset and player count, invariants checked.

Most matches run on ``VectorThirtyOne`` (checked every step, vectorized over tables);
some run through ``thirtyone_v0`` (the PettingZoo path). Not part of the test suite:

    .venv/bin/python scripts/soak.py --matches 10000
"""

from __future__ import annotations

import argparse
import sys
import time

import numba
import numpy as np

from thirtyone_env.engine import OUT, Tables
from thirtyone_env.rules import Rules
from thirtyone_env.thirtyone_v0 import raw_env
from thirtyone_env.vector import VectorThirtyOne


def configs() -> list[tuple[str, int]]:
    return [(name, n) for name in Rules.preset_names() for n in range(2, Rules.preset(name).max_players + 1)]


def decision_bound(rules: Rules, n: int, episode: str) -> int:
    """Most decisions one episode can take (each lives deal costs someone a chip or their honor)."""
    deals = 1 if episode == "deal" else (rules.max_deals if rules.economy == "pot" else n * (rules.lives + 1))
    return deals * 2 * rules.max_turns


def check_states(tables: Tables) -> None:
    """Every card once (hands + stock + discard), chips + pot conserved, a legal action to take."""
    rules, n, d = tables.rules, tables.num_players, tables.rules.deck_size
    counts = tables.card_counts()
    bad = np.flatnonzero((counts[:, :d] != 1).any(axis=1) | (counts[:, d:] != 0).any(axis=1))
    if len(bad):
        raise AssertionError(f"cards lost or doubled at table {bad[0]}: counts {counts[bad[0], :d].tolist()}")
    total = tables.chips.sum(axis=1) + tables.pot
    if (total != rules.start_chips * n).any():
        raise AssertionError(f"chips + pot not conserved: {total.tolist()}")
    live = tables.finished == 0
    if not tables.mask[live].any(axis=1).all():
        raise AssertionError("a table has no legal action")
    current = tables.current_player.astype(np.int64)
    if (tables.status[np.arange(tables.num_tables), current][live] == OUT).any():
        raise AssertionError("a seat that is out is asked to act")


def check_rewards(rewards: np.ndarray, done: np.ndarray, episode: str) -> None:
    sums = rewards.sum(axis=1)
    if (rewards[~done] != 0).any():
        raise AssertionError("a reward before the end of an episode")
    if episode == "match" and (np.abs(sums[done]) > 1e-5).any():
        raise AssertionError(f"match rewards do not sum to 0: {sums[done].tolist()}")
    if episode == "deal" and (sums[done] > 0).any():
        raise AssertionError(f"deal rewards create chips: {sums[done].tolist()}")


def soak_vector(name: str, n: int, episode: str, target: int, num_envs: int, seed: int, rng) -> int:
    """Random legal play on ``num_envs`` tables until ``target`` episodes have ended."""
    vec = VectorThirtyOne(num_envs, num_players=n, rules=name, seed=seed, episode=episode)
    rules = vec.rules
    bound = decision_bound(rules, n, episode)
    obs, mask, _ = vec.reset()
    age = np.zeros(num_envs, np.int64)
    finished = 0
    while finished < target:
        check_states(vec)
        if obs.min() < 0:
            raise AssertionError("negative observation entry")
        scores = np.where(mask, rng.random(mask.shape), -1.0)
        obs, mask, _, rewards, done = vec.step(scores.argmax(axis=1))
        check_rewards(rewards, done, episode)
        age += 1
        if (age > bound).any():
            raise AssertionError(f"an episode ran past {bound} decisions")
        age[done] = 0
        finished += int(done.sum())
    return finished


def soak_pettingzoo(name: str, n: int, episode: str, seed: int, rng) -> None:
    """One random match through ``thirtyone_v0`` with the same checks."""
    env = raw_env(num_players=n, rules=name, episode=episode)
    env.reset(seed=seed)
    bound = decision_bound(env.rules, n, episode)
    for _ in range(bound):
        if env.table.finished[0]:
            break
        check_states(env.table)
        env.step(int(rng.choice(np.flatnonzero(env.table.mask[0]))))
    else:
        raise AssertionError(f"{name} n={n}: no end within {bound} decisions")
    final = np.array([[env.rewards[a] for a in env.possible_agents]])
    check_rewards(final, np.array([True]), episode)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000, help="vector matches in all (match episodes)")
    parser.add_argument("--deals", type=int, default=2_000, help="vector deal episodes in all")
    parser.add_argument("--pz-matches", type=int, default=200, help="matches through thirtyone_v0")
    parser.add_argument("--envs", type=int, default=64, help="tables per VectorThirtyOne")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="numba threads (small batches: 1 is fastest)")
    args = parser.parse_args(argv)
    numba.set_num_threads(args.threads)

    rng = np.random.default_rng(args.seed)
    cases = configs()
    start = time.perf_counter()
    matches = deals = 0
    match_share, deal_share = -(-args.matches // len(cases)), -(-args.deals // len(cases))
    for i, (name, n) in enumerate(cases):  # every configuration gets its share (rounded up)
        matches += soak_vector(name, n, "match", match_share, args.envs, args.seed + i, rng)
        deals += soak_vector(name, n, "deal", deal_share, args.envs, args.seed + i, rng)
    vector_time = time.perf_counter() - start
    for k in range(args.pz_matches):
        name, n = cases[k % len(cases)]
        soak_pettingzoo(name, n, "match" if k % 4 else "deal", args.seed + k, rng)
    total = time.perf_counter() - start
    print(
        f"soak ok: {matches} vector matches and {deals} vector deal episodes over {len(cases)} "
        f"preset/player-count configurations in {vector_time:.1f}s; "
        f"{args.pz_matches} episodes through thirtyone_v0; total {total:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
