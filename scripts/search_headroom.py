"""How much is there to gain over ``HeuristicAgent``? Search agents that answer it.

One seat plays PIMC (perfect-information Monte Carlo): at each of its decisions it
deals the cards it cannot see ``--samples`` times, plays every legal move out to the
end of the deal with ``HeuristicAgent`` in every seat (common random numbers across
moves), and leaves the base move (``HeuristicAgent``'s, or ``--base`` agent's, e.g.
a trained policy) only when another move's mean gain is ``--z`` standard errors
above zero. The other seats are ``HeuristicAgent``. The deals
come from one of three beliefs about the opponents' hidden cards:

- ``uniform``: every unseen card is equally likely (a fair player that ignores what
  opponents' moves say);
- ``belief``: a particle filter per opponent that models it as ``HeuristicAgent``
  and keeps only hands under which the heuristic would have made each observed
  pick, pass-over, knock or throw (a fair player that reads the opponents exactly);
- ``oracle``: the opponents' real hands (cheating; only the stock stays unknown).

    python scripts/search_headroom.py --mode oracle --matches 300

Reads the private arrays of ``VectorThirtyOne`` (``_states``, ``_decks``...) and calls
engine kernels directly: cloning and re-dealing tables is not part of the public API.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit, prange

from agents.heuristic import HeuristicAgent, _heuristic_row
from thirtyone_env import engine as G
from thirtyone_env.engine import (
    DISCARD0,
    DRAW_DISCARD,
    DRAW_STOCK,
    MAXP,
    OUT,
    PH_DISCARD,
    PH_DISCARD_FIRST,
    PH_TURN,
    S_CHIPS,
    S_CURRENT,
    S_DEALS,
    S_DISCARD,
    S_DISCARD_N,
    S_DONE,
    S_HAND_N,
    S_HANDS,
    S_KNOWN,
    S_NUM_PLAYERS,
    S_PHASE,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
)
from thirtyone_env.rules import P_DECK_SIZE, Rules
from thirtyone_env.vector import VectorThirtyOne
from train.evaluate import make_agent, wilson

MODES = {"uniform": 0, "belief": 1, "oracle": 2}
JIT = dict(cache=True)


@njit(**JIT)
def _seeded(a, b, c):
    """A xorshift128 state from three integers (splitmix-style hashing)."""
    rng = np.empty(4, np.int64)
    for i in range(4):
        x = (a * 4 + i) * 0x9E3779B1 + b * 0x85EBCA77 + c * 0xC2B2AE3D
        x &= 0xFFFFFFFF
        x = (((x >> 16) ^ x) * 0x45D9F3B) & 0xFFFFFFFF
        x = (((x >> 16) ^ x) * 0x45D9F3B) & 0xFFFFFFFF
        rng[i] = ((x >> 16) ^ x) | 1
    return rng


@njit(**JIT)
def _hidden_from(s, viewer, o, d, out):
    """out[c]: card c cannot be among seat o's hidden cards, as far as ``viewer`` knows."""
    out[:] = False
    for i in range(s[S_HAND_N + viewer]):
        out[s[S_HANDS + 4 * viewer + i]] = True
    for i in range(s[S_DISCARD_N]):
        out[s[S_DISCARD + i]] = True
    for c in range(d):
        if s[S_KNOWN + c] != 0 and s[S_KNOWN + c] != o + 1:
            out[c] = True


@njit(**JIT)
def _unseen(s, excluded, hand, count, skip, pool):
    """Cards that may still come from the stock: not excluded, held by no one known, not in
    ``hand[:count]`` and not ``skip``. Fills ``pool`` in card order and returns how many."""
    size = 0
    for c in range(excluded.shape[0]):
        free = not excluded[c] and s[S_KNOWN + c] == 0 and c != skip
        for i in range(count):
            free = free and hand[i] != c
        if free:
            pool[size] = c
            size += 1
    return size


@njit(**JIT)
def _init_particles(s, viewer, o, parts, pn, w, rng, d):
    """Uniform hands for seat o: its known cards plus random cards the viewer cannot see."""
    excluded = np.zeros(d, np.bool_)
    _hidden_from(s, viewer, o, d, excluded)
    pool = np.empty(d, np.int64)
    for k in range(parts.shape[0]):
        m = 0
        for c in range(d):
            if s[S_KNOWN + c] == o + 1:
                parts[k, m] = c
                m += 1
        size = _unseen(s, excluded, parts[k], 0, -1, pool)
        G._shuffle(rng, pool, size)
        for j in range(s[S_HAND_N + o] - m):
            parts[k, m + j] = pool[j]
        pn[k] = s[S_HAND_N + o]
        w[k] = 1.0


@njit(**JIT)
def _prune(excluded, parts, pn, w):
    """Drop the hands that hold a card the viewer knows is elsewhere."""
    for k in range(parts.shape[0]):
        for i in range(pn[k]):
            if w[k] > 0.0 and excluded[parts[k, i]]:
                w[k] = 0.0


@njit(**JIT)
def _set_hand(s, o, cards, count):
    for i in range(4):
        s[S_HANDS + 4 * o + i] = cards[i] if i < count else -1
    s[S_HAND_N + o] = count


@njit(**JIT)
def _model_move(s, o, params, off, table, cfg, n, obs, mask):
    """What HeuristicAgent in seat o plays in state s."""
    G._legal_mask(s, params, mask)
    G._observe(s, params, o, off, obs)
    return _heuristic_row(obs, mask, off, params, n, table, cfg)


@njit(**JIT)
def _resample(parts, pn, w, rng):
    """Systematic resampling once the effective sample size falls under half."""
    total = w.sum()
    size = w.shape[0]
    if total <= 0.0 or total * total / (w * w).sum() >= size / 2:
        return
    old_parts, old_n, old_w = parts.copy(), pn.copy(), w.copy()
    start = G._rand_u32(rng) / 4294967296.0
    acc = old_w[0]
    j = 0
    for i in range(size):
        target = (start + i) / size * total
        while acc < target and j < size - 1:
            j += 1
            acc += old_w[j]
        parts[i] = old_parts[j]
        pn[i] = old_n[j]
        w[i] = 1.0


@njit(**JIT)
def _observe_move(s, viewer, action, parts, pn, w, pending, rng, params, off, table, cfg):
    """Seat o = s[S_CURRENT] plays ``action`` in state s: keep the hands under which the model agrees."""
    o, d, n = s[S_CURRENT], params[P_DECK_SIZE], s[S_NUM_PLAYERS]
    excluded = np.zeros(d, np.bool_)
    _hidden_from(s, viewer, o, d, excluded)
    _prune(excluded, parts[o], pn[o], w[o])
    if w[o].sum() <= 0.0:  # the real history is not among the particles: start again from its known cards
        _init_particles(s, viewer, o, parts[o], pn[o], w[o], rng, d)
        pending[o] = False
    what_if = s.copy()
    obs = np.zeros(off[-1], np.int8)
    mask = np.zeros(4 + d, np.bool_)
    pool = np.empty(d, np.int64)
    thrown = action - DISCARD0
    for k in range(parts.shape[1]):
        if w[o, k] == 0.0:
            continue
        hand = parts[o, k]
        if s[S_PHASE] != PH_TURN:
            holds = False
            for i in range(pn[o, k]):
                holds = holds or hand[i] == thrown
            if s[S_PHASE] == PH_DISCARD and pending[o]:
                size = _unseen(s, excluded, hand, pn[o, k], -1, pool)  # the stock card it drew: the thrown one, or any
                if holds:
                    hand[pn[o, k]] = pool[G._rand_below(rng, size)]
                else:
                    hand[pn[o, k]] = thrown
                    w[o, k] /= size
                pn[o, k] += 1
            elif not holds:
                w[o, k] = 0.0
                continue
        _set_hand(what_if, o, hand, pn[o, k])
        if _model_move(what_if, o, params, off, table, cfg, n, obs, mask) != action:
            w[o, k] = 0.0
        elif s[S_PHASE] != PH_TURN:
            for i in range(pn[o, k]):
                if hand[i] == thrown:
                    hand[i] = hand[pn[o, k] - 1]
                    pn[o, k] -= 1
                    break
            if s[S_PHASE] == PH_DISCARD_FIRST:  # then it draws an unseen stock card
                size = _unseen(s, excluded, hand, pn[o, k], thrown, pool)
                hand[pn[o, k]] = pool[G._rand_below(rng, size)]
                pn[o, k] += 1
        elif action == DRAW_DISCARD:
            hand[pn[o, k]] = s[S_DISCARD + s[S_DISCARD_N] - 1]
            pn[o, k] += 1
    pending[o] = s[S_PHASE] == PH_TURN and action == DRAW_STOCK
    _resample(parts[o], pn[o], w[o], rng)


@njit(**JIT)
def _redeal(s, viewer, mode, parts, pn, w, rng, d):
    """Give every opponent a hand (from the belief) and shuffle the rest into the stock; False on a clash."""
    n = s[S_NUM_PLAYERS]
    used = np.zeros(d, np.bool_)
    for i in range(s[S_HAND_N + viewer]):
        used[s[S_HANDS + 4 * viewer + i]] = True
    for i in range(s[S_DISCARD_N]):
        used[s[S_DISCARD + i]] = True
    for o in range(n):
        if o == viewer or s[S_STATUS + o] == OUT:
            continue
        if mode == 2:
            for i in range(s[S_HAND_N + o]):
                used[s[S_HANDS + 4 * o + i]] = True
            continue
        k = 0
        if mode == 1:
            target = G._rand_u32(rng) / 4294967296.0 * w[o].sum()
            acc = w[o, 0]
            while acc < target and k < w.shape[1] - 1:
                k += 1
                acc += w[o, k]
        if pn[o, k] != s[S_HAND_N + o]:
            return False
        for i in range(pn[o, k]):
            if used[parts[o, k, i]]:
                return False
            used[parts[o, k, i]] = True
        _set_hand(s, o, parts[o, k], pn[o, k])
    pool = np.flatnonzero(~used)
    if pool.size != s[S_STOCK_N]:
        return False
    G._shuffle(rng, pool, pool.size)
    s[S_STOCK : S_STOCK + pool.size] = pool
    return True


@njit(**JIT)
def _lives(s, seat):
    return s[S_CHIPS + seat] + (1 if s[S_STATUS + seat] != OUT else 0)


@njit(**JIT)
def _playout(s, viewer, action, rng, decks, params, off, table, cfg, obs, mask, rewards):
    """Viewer's relative result of ``action`` with HeuristicAgent everywhere until the deal ends."""
    n = s[S_NUM_PLAYERS]
    gain = np.zeros(MAXP)
    for p in range(n):
        gain[p] = -_lives(s, p)
    deal = s[S_DEALS]
    G._step(s, rng, decks, params, action, rewards)
    while s[S_DONE] == 0 and s[S_DEALS] == deal:
        seat = s[S_CURRENT]
        G._step(s, rng, decks, params, _model_move(s, seat, params, off, table, cfg, n, obs, mask), rewards)
    if s[S_DONE]:
        return 4.0 * rewards[viewer]
    for p in range(n):
        gain[p] += _lives(s, p)
    return gain[viewer] - (gain.sum() - gain[viewer]) / (n - 1)


@njit(parallel=True, **JIT)
def _search(states, rows, decks, params, off, table, cfg, mode, samples, z, seed, parts, pn, w, out, overlap, chance):
    d = params[P_DECK_SIZE]
    for r in prange(rows.shape[0]):
        b = rows[r]
        s = states[b]
        viewer, n = s[S_CURRENT], s[S_NUM_PLAYERS]
        overlap[b] = 0.0  # diagnostic only (never used to decide): belief mass on the real hidden cards
        chance[b] = 0.0  # the same for a uniform guess
        excluded = np.zeros(d, np.bool_)
        pool = np.empty(d, np.int64)
        for o in range(n):
            if mode == 1 and o != viewer and s[S_STATUS + o] != OUT:
                _hidden_from(s, viewer, o, d, excluded)
                _prune(excluded, parts[b, o], pn[b, o], w[b, o])
                if w[b, o].sum() <= 0.0:
                    _init_particles(s, viewer, o, parts[b, o], pn[b, o], w[b, o], _seeded(seed, b, o), d)
                hidden = 0
                for j in range(s[S_HAND_N + o]):
                    if s[S_KNOWN + s[S_HANDS + 4 * o + j]] == 0:
                        hidden += 1
                unseen = _unseen(s, excluded, parts[b, o, 0], 0, -1, pool)
                chance[b] += hidden * hidden / unseen / (n - 1)
                total = w[b, o].sum()
                for k in range(w.shape[2]):
                    for i in range(pn[b, o, k]):
                        c = parts[b, o, k, i]
                        if s[S_KNOWN + c] == 0:
                            for j in range(s[S_HAND_N + o]):
                                if s[S_HANDS + 4 * o + j] == c:
                                    overlap[b] += w[b, o, k] / total / (n - 1)
        obs = np.zeros(off[-1], np.int8)
        mask = np.zeros(4 + d, np.bool_)
        rewards = np.zeros(MAXP)
        G._legal_mask(s, params, mask)
        base = out[b]  # the move to beat: the heuristic's, or the base agent's
        legal = np.flatnonzero(mask)
        value = np.zeros(4 + d)
        gain, gain2 = np.zeros(4 + d), np.zeros(4 + d)
        dealt = 0
        for k in range(samples):
            rng = _seeded(seed, b, 1000 + k)
            world = s.copy()
            if mode == 0:  # a fresh uniform hand per sample
                for o in range(n):
                    if o != viewer and s[S_STATUS + o] != OUT:
                        _init_particles(s, viewer, o, parts[b, o, :1], pn[b, o, :1], w[b, o, :1], rng, d)
            if not _redeal(world, viewer, mode, parts[b], pn[b], w[b], rng, d):
                continue
            dealt += 1
            for a in legal:
                value[a] = _playout(world.copy(), viewer, a, rng.copy(), decks[b], params, off, table, cfg, obs,
                                    mask, rewards)
            for a in legal:
                gain[a] += value[a] - value[base]
                gain2[a] += (value[a] - value[base]) ** 2
        best = 0.0
        out[b] = base
        for a in legal:
            mean = gain[a] / max(dealt, 1)
            sd = np.sqrt(max(gain2[a] / max(dealt, 1) - mean * mean, 1e-12) / max(dealt, 1))
            if dealt > 1 and mean > z * sd and mean > best:
                best = mean
                out[b] = a


@njit(**JIT)
def _observe_batch(states, rows, viewers, actions, parts, pn, w, pending, seed, params, off, table, cfg):
    for b in rows:
        _observe_move(states[b], viewers[b], actions[b], parts[b], pn[b], w[b], pending[b], _seeded(seed, b, 7),
                      params, off, table, cfg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=list(MODES), default="belief")
    parser.add_argument("--preset", default="scat", choices=Rules.preset_names())
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--samples", type=int, default=64, help="deals per decision")
    parser.add_argument("--particles", type=int, default=512, help="hands kept per opponent (belief)")
    parser.add_argument("--z", type=float, default=2.0, help="standard errors a move must gain over the heuristic's")
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--seed", type=int, default=321)
    parser.add_argument("--base", default="heuristic",
                        help="agent whose move the search must beat (heuristic, policy:PATH, pretrained)")
    args = parser.parse_args()

    rules = Rules.preset(args.preset)
    n, d, B, mode = args.players, rules.deck_size, args.tables, MODES[args.mode]
    heuristic = HeuristicAgent(rules, n)
    base = heuristic if args.base == "heuristic" else make_agent(args.base, rules, n)
    env = VectorThirtyOne(B, n, rules, seed=args.seed)
    obs, mask, player = env.reset()
    searcher = np.arange(B) % n  # the searching seat, rotated after every match
    parts = np.zeros((B, MAXP, args.particles, 4), np.int64)
    pn = np.zeros((B, MAXP, args.particles), np.int64)
    w = np.zeros((B, MAXP, args.particles))
    pending = np.zeros((B, MAXP), np.bool_)
    deal = np.full(B, -1)
    wins = played = step = 0
    overlap, chance, overlaps, chances = np.zeros(B), np.zeros(B), [], []
    t0 = time.time()
    while played < args.matches:
        states = env._states
        for b in np.flatnonzero(states[:, S_DEALS] != deal):
            deal[b] = states[b, S_DEALS]
            pending[b] = False
            for o in range(n):
                if o != searcher[b] and mode == 1:
                    _init_particles(states[b], searcher[b], o, parts[b, o], pn[b, o], w[b, o],
                                    _seeded(step, b, o), d)
        actions = heuristic.act_batch(obs, mask)
        mine = player == searcher
        if mine.any():
            if base is not heuristic:
                actions[mine] = base.act_batch(obs[mine], mask[mine])
            _search(states, np.flatnonzero(mine), env._decks, env._params, env._offsets, heuristic.table,
                    heuristic.cfg, mode, args.samples, args.z, step, parts, pn, w, actions, overlap, chance)
            overlaps.extend(overlap[mine].tolist())
            chances.extend(chance[mine].tolist())
        if mode == 1 and (~mine).any():
            _observe_batch(states, np.flatnonzero(~mine), searcher, actions, parts, pn, w, pending, step,
                           env._params, env._offsets, heuristic.table, heuristic.cfg)
        obs, mask, player, rewards, done = env.step(actions)
        for b in np.flatnonzero(done):
            wins += rewards[b, searcher[b]] > 0
            played += 1
            searcher[b] = (searcher[b] + 1) % n
            deal[b] = -1
        step += 1
    low, high = wilson(wins, played)
    print(f"{args.mode} PIMC over {args.base} vs HeuristicAgent, {args.preset} {n}p: "
          f"{wins / played:.3f} [{low:.3f}, {high:.3f}] over {played} matches ({time.time() - t0:.0f} s)")
    if args.mode == "belief":
        print(f"hidden cards of an opponent the belief gets right: {np.mean(overlaps):.2f} on average "
              f"(a uniform guess: {np.mean(chances):.2f})")


if __name__ == "__main__":
    main()
