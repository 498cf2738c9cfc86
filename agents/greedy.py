"""``GreedyAgent``: the plain rule of thumb, one card ahead and nothing more.

- Turn: knock when the hand is worth at least ``knock_at`` (and knocking is legal);
  otherwise take the discard if the best three of the four cards beat the hand,
  else draw from the stock. In the final round with ``final_round_may_pass``
  (Russian) it passes when the discard does not help and its hand already
  reaches ``knock_at``.
- Discard: throw the legal card that leaves the best hand (ties: the lowest card).
- Discard before the stock draw (Italian option): keep the two cards with the
  best one-suit sum (ties: throw the lowest card).

The decision is a numba kernel over one observation row; ``act_batch`` runs it
over a batch in parallel. The small row readers here are shared by ``heuristic``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from agents.base import BaseAgent
from thirtyone_env import encoding as E
from thirtyone_env.engine import DISCARD0, DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS, _hand_value2
from thirtyone_env.rules import P_DECK_SIZE, P_RANKS, P_VALUES, Rules

JIT = dict(cache=True, nogil=True)


# -- row readers (shared with heuristic) ------------------------------------------------
@njit(**JIT)
def _read_hand(obs, off, params, hand):
    """Own card ids into ``hand`` (ascending); returns how many (3, or 4 while discarding)."""
    d = params[P_DECK_SIZE]
    k = 0
    base = off[E.HAND]
    for c in range(d):
        if obs[base + c] != 0 and k < 4:
            hand[k] = c
            k += 1
    return k


@njit(**JIT)
def _find_one(obs, start, d):
    """The card id set in a one-hot piece, or -1."""
    for c in range(d):
        if obs[start + c] != 0:
            return c
    return -1


@njit(**JIT)
def _phase(obs, off):
    """0 = turn (draw/knock/pass), 1 = discard after a draw, 2 = discard before the stock draw, -1 = none."""
    for p in range(3):
        if obs[off[E.PHASE] + p] != 0:
            return p
    return -1


@njit(**JIT)
def _keep_index(skip):
    """Indices of the three cards kept when ``skip`` (0..3) is thrown from four."""
    return (1 if skip == 0 else 0), (2 if skip <= 1 else 1), (3 if skip <= 2 else 2)


@njit(**JIT)
def _best_keep(hand, nh, skip, params):
    """Doubled value of the hand without ``hand[skip]`` (nh = 4), or of all three (skip = -1)."""
    if skip < 0 or nh == 3:
        return _hand_value2(hand[0], hand[1], hand[2], params)
    i0, i1, i2 = _keep_index(skip)
    return _hand_value2(hand[i0], hand[i1], hand[i2], params)


@njit(**JIT)
def _pair_value(x, y, params):
    """Doubled one-suit sum of two cards (the Italian 'throw first' keep)."""
    ranks = params[P_RANKS]
    vx, vy = params[P_VALUES + x], params[P_VALUES + y]
    if x // ranks == y // ranks:
        return 2 * (vx + vy)
    return 2 * max(vx, vy)


@njit(**JIT)
def _first_legal(mask):
    for a in range(mask.shape[0]):
        if mask[a]:
            return a
    return -1


@njit(**JIT)
def _throw_best(hand, nh, mask, params):
    """Throw the legal card that leaves the best three (ties: the lowest card value)."""
    best, best_val, best_card = -1, -1, 1 << 20
    for i in range(nh):
        c = hand[i]
        if not mask[DISCARD0 + c]:
            continue
        v = _best_keep(hand, nh, i, params)
        cv = params[P_VALUES + c]
        if v > best_val or (v == best_val and cv < best_card):
            best, best_val, best_card = c, v, cv
    return DISCARD0 + best if best >= 0 else -1


@njit(**JIT)
def _throw_first_best(hand, nh, mask, params):
    """Throw-before-draw: keep the two cards with the best one-suit sum."""
    best, best_val, best_card = -1, -1, 1 << 20
    for i in range(nh):
        c = hand[i]
        if not mask[DISCARD0 + c]:
            continue
        keep = np.empty(2, np.int64)
        k = 0
        for j in range(nh):
            if j != i and k < 2:
                keep[k] = hand[j]
                k += 1
        v = _pair_value(keep[0], keep[1], params)
        cv = params[P_VALUES + c]
        if v > best_val or (v == best_val and cv < best_card):
            best, best_val, best_card = c, v, cv
    return DISCARD0 + best if best >= 0 else -1


# -- the greedy decision ----------------------------------------------------------------
@njit(**JIT)
def _greedy_row(obs, mask, off, params, knock2):
    hand = np.empty(4, np.int64)
    nh = _read_hand(obs, off, params, hand)
    phase = _phase(obs, off)
    action = -1
    if phase == 0:
        v = _hand_value2(hand[0], hand[1], hand[2], params)
        top = _find_one(obs, off[E.DISCARD_TOP], params[P_DECK_SIZE])
        gain = False
        if top >= 0 and mask[DRAW_DISCARD]:
            # the taken card must stay: best of the three keeps that throw an old card
            a, b, c = hand[0], hand[1], hand[2]
            gain = max(_hand_value2(top, b, c, params), _hand_value2(a, top, c, params),
                       _hand_value2(a, b, top, params)) > v
        if mask[KNOCK] and v >= knock2:
            action = KNOCK
        elif mask[PASS] and not gain and v >= knock2:
            action = PASS
        elif gain:
            action = DRAW_DISCARD
        elif mask[DRAW_STOCK]:
            action = DRAW_STOCK
    elif phase == 1:
        action = _throw_best(hand, nh, mask, params)
    elif phase == 2:
        action = _throw_first_best(hand, nh, mask, params)
    if action < 0 or not mask[action]:
        action = _first_legal(mask)
    return action


@njit(parallel=True, **JIT)
def _greedy_batch(obs, mask, off, params, knock2, out):
    for b in prange(obs.shape[0]):
        out[b] = _greedy_row(obs[b], mask[b], off, params, knock2)


class GreedyAgent(BaseAgent):
    """One card ahead: take the discard when it raises the hand, knock at ``knock_at`` points."""

    def __init__(
        self,
        rules: str | Rules = "scat",
        num_players: int = 2,
        seed: int | None = None,
        knock_at: float = 27,
    ):
        super().__init__(rules, num_players, seed)
        if not 0 < knock_at <= 31 or float(knock_at) * 2 != int(float(knock_at) * 2):
            raise ValueError(f"knock_at={knock_at!r} is invalid; allowed: a whole or half number in (0, 31]")
        self.knock_at = knock_at
        self._knock2 = int(round(2 * float(knock_at)))

    def act(self, obs: dict) -> int:
        row, mask = self._check_one(obs)
        return int(_greedy_row(row, mask, self.offsets, self.params, self._knock2))

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = self._check_batch(obs, mask)
        out = np.empty(obs.shape[0], np.int64)
        _greedy_batch(obs, mask, self.offsets, self.params, self._knock2, out)
        return out
