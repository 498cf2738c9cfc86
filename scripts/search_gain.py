"""What do `SearchAgent`'s departures from its policy gain, measured in the true deal against the real opponent?

    python scripts/search_gain.py --positions 3000 --samples 64 256 --beliefs learned uniform

Match play measures a search by thousands of matches, each decided by dozens of decisions and the
cards. This measures the decisions themselves: positions are recorded from the policy's play
against the opponent, together with the hidden cards. Every legal move of a position is then played
out in the **true** deal (the real stock and hands) to the deal's end, the policy in the searcher's
seat and the opponent in the others, and scored like the search scores (the chance to win the match
from every seat's lives, `WinTable`). Both players are deterministic, so that is the move's exact
value in that deal. A search variant's gain per decision is the true value of the move it chose
minus that of the policy's move (zero where it keeps the policy's move), averaged over positions,
with a 95% interval; also shown: what always choosing the truly best move would gain (the value of
seeing the hidden cards) and what flipping the policy's knock decisions would.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.make import make
from agents.search import SearchAgent, choose, choose_by_worlds, close_calls, knocks_left_to
from thirtyone_env.actions import KNOCK
from thirtyone_env.engine import Tables
from thirtyone_env.evaluation import win_shares


def record(policy, opponent, preset: str, n: int, positions: int, seed: int, share: float = 0.3):
    """Positions of the policy (seat 0) against ``opponent`` with more than one legal move: observations,
    masks, and the true opponents' hands and stocks (as ``Tables.from_observations`` takes them)."""
    t = Tables(256, n, preset, seed=seed)
    obs, mask, _ = t.reset()
    rng = np.random.default_rng(seed)
    rows_obs, rows_mask, rows_hands, rows_stocks, got = [], [], [], [], 0
    while got < positions:
        actions = np.empty(t.num_tables, np.int64)
        mine = np.flatnonzero(t.player == 0)
        if mine.size:
            actions[mine] = policy.act_batch(obs[mine], mask[mine])
            pick = mine[(rng.random(mine.size) < share) & (mask[mine].sum(axis=1) > 1)]
            for i in pick:
                hands = np.full((n - 1, 4), -1, np.int64)
                for r in range(n - 1):
                    h = t.hand(i, 1 + r)
                    hands[r, : len(h)] = h
                stock = np.full(52, -1, np.int64)
                stock[: int(t.stock_size[i])] = t.stock(i)
                rows_hands.append(hands)
                rows_stocks.append(stock)
            rows_obs.append(obs[pick].copy())
            rows_mask.append(mask[pick].copy())
            got += pick.size
        others = np.flatnonzero(t.player != 0)
        if others.size:
            actions[others] = opponent.act_batch(obs[others], mask[others])
        obs, mask, *_ = t.step(actions)
    return (np.concatenate(rows_obs)[:positions], np.concatenate(rows_mask)[:positions],
            np.stack(rows_hands)[:positions], np.stack(rows_stocks)[:positions])


def true_values(obs, mask, hands, stocks, policy, opponent, preset: str, n: int, wins) -> np.ndarray:
    """Every legal move's value in the true deal (NaN: illegal), the policy in seat 0 and ``opponent`` elsewhere."""
    values = np.full(mask.shape, np.nan)
    for move in np.flatnonzero(mask.any(axis=0)):
        rows = np.flatnonzero(mask[:, move])
        t = Tables.from_observations(obs[rows], hands[rows], stocks[rows], preset, n, seed=0, autoreset=False,
                                     parallel=False)
        score = np.full(len(rows), np.nan)
        actions = np.full(len(rows), move, np.int64)
        active = np.arange(len(rows))
        while active.size:
            _, _, _, rewards, done = t.step(actions, rows=active)
            over = active[done[active]]
            score[over] = win_shares(rewards[over])[:, 0]
            ended = active[(t.deal[active] != 1) & ~done[active]]
            if ended.size:
                score[ended] = wins(t.chips[ended], t.status[ended], seat=0)
            active = active[(t.deal[active] == 1) & ~done[active]]
            for agent, rows_now in ((policy, active[t.player[active] == 0]), (opponent, active[t.player[active] != 0])):
                if rows_now.size:
                    actions[rows_now] = agent.act_batch(t.obs[rows_now], t.mask[rows_now])
        values[rows, move] = score
    return values


def adaptive(values: np.ndarray, base: np.ndarray, z: float, first: int, cont: float, step: int = 16):
    """What a search that plays more worlds only where the call is close would choose, from ``values`` of its
    first K worlds per position: ``first`` worlds everywhere, then ``step`` more at a time while the best move's
    paired gain over ``base`` is above ``cont`` but not above ``z`` standard errors, up to K. Returns the moves
    and the worlds each position used."""
    B, K, _ = values.shape
    used = np.full(B, min(first, K))
    open_ = np.ones(B, bool)
    while True:
        for n in np.unique(used[open_]):
            at = np.flatnonzero(open_ & (used == n))
            open_[at] = (n < K) & close_calls(values[at, :n], base[at], z, cont)
        if not open_.any():
            break
        used[open_] = np.minimum(used[open_] + step, K)
    return choose_by_worlds(values, used, base, z), used


def interval(x: np.ndarray) -> str:
    return f"{x.mean():+.5f} +- {1.96 * x.std(ddof=1) / np.sqrt(len(x)):.5f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="scat")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--policy", default="pretrained", help="agent spec the search is over")
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--samples", type=int, nargs="+", default=[64])
    parser.add_argument("--z", type=float, nargs="+", default=[0.0, 0.5, 1.0, 2.0])
    parser.add_argument("--beliefs", nargs="+", default=["learned", "uniform"])
    parser.add_argument("--knocks", action="store_true", help="let the search knock where the policy does not")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--adaptive", type=float, nargs="*", default=[],
                        help="also the search that starts with --first worlds and plays more (up to the largest "
                             "--samples) while the best move gains more than each of these standard errors")
    parser.add_argument("--first", type=int, nargs="+", default=[64])
    args = parser.parse_args()
    torch.set_num_threads(1)
    n = args.players
    policy, opponent = make(args.policy, args.preset, n), make(args.opponent, args.preset, n, seed=args.seed)
    obs, mask, hands, stocks = record(policy, opponent, args.preset, n, args.positions, args.seed)
    wins = SearchAgent(args.preset, n, policy=policy, budget_ms=None).wins
    truth = true_values(obs, mask, hands, stocks, policy, opponent, args.preset, n, wins)
    rows = np.arange(len(obs))
    base = policy.act_batch(obs, mask)
    print(f"{args.preset}, {n} players: {len(obs):,} positions of {args.policy} against {args.opponent} "
          f"(seed {args.seed}), values in match-win chance")
    best = np.nanmax(truth, 1) - truth[rows, base]
    print(f"  seeing the hidden cards (always the truly best move): {interval(best)}")
    knock = mask[:, KNOCK]
    other = np.where(base == KNOCK, np.nanmax(np.where(np.arange(mask.shape[1]) == KNOCK, np.nan, truth), 1),
                     truth[:, KNOCK])
    print(f"  flipping the policy's knock decision ({knock.mean():.2f} of positions may knock): "
          f"{interval((other - truth[rows, base])[knock])} there")
    for belief in args.beliefs:
        for samples in args.samples:
            search = SearchAgent(args.preset, n, seed=1, policy=policy, samples=samples, budget_ms=None,
                                 belief=belief, knocks=args.knocks)
            allowed = mask if args.knocks else knocks_left_to(mask, base)
            start = time.process_time()
            values = np.concatenate([search.values(obs[i : i + 256], allowed[i : i + 256], samples,
                                                   np.arange(i, min(i + 256, len(obs))) + 7919 * samples)
                                     for i in range(0, len(obs), 256)])
            ms = (time.process_time() - start) / len(obs) * 1000
            for z in args.z:
                chosen = choose(values, base, z)
                gain = truth[rows, chosen] - truth[rows, base]
                print(f"  search belief={belief} samples={samples} z={z}: departs at {(chosen != base).mean():.3f}, "
                      f"gain per decision {interval(gain)} ({ms:.0f} ms per decision)", flush=True)
            if samples != max(args.samples):
                continue
            for first in args.first:
                for cont in args.adaptive:
                    for z in args.z:
                        chosen, used = adaptive(values, base, z, first, cont)
                        gain = truth[rows, chosen] - truth[rows, base]
                        print(f"  adaptive belief={belief} first={first} up to {samples} while gain > {cont} se, "
                              f"z={z}: {used.mean():.0f} worlds on average ({(used > first).mean():.3f} went on), "
                              f"departs at {(chosen != base).mean():.3f}, gain per decision {interval(gain)}",
                              flush=True)


if __name__ == "__main__":
    main()
