"""``GreedyAgent``: the plain rule of thumb, one card ahead and nothing more.

- Turn: knock when the hand is worth at least ``knock_at`` (and knocking is legal);
  otherwise take the discard if the best three of the four cards beat the hand,
  else draw from the stock. In the final round with ``final_round_may_pass``
  (Russian) it passes when the discard does not help and its hand already
  reaches ``knock_at``.
- Discard: throw the legal card that leaves the best hand (ties: the lowest card);
  before the stock draw (Italian option) that keeps the best one-suit pair. The
  values come from the observation (``throw_value``, ``take_value``).

The decision is a numba kernel over one observation row; ``act_batch`` runs it
over a batch in parallel. The small row readers here are shared by ``heuristic``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.base import BaseAgent
from thirtyone_env import encoding as E
from thirtyone_env.actions import DISCARD0, DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS
from thirtyone_env.jit import INLINE, PARALLEL_FROM, jit_variants
from thirtyone_env.rules import P_DECK_SIZE, P_VALUES, Rules


# -- row readers (shared with heuristic) ------------------------------------------------
@njit(**INLINE)
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


@njit(**INLINE)
def _find_one(obs, start, d):
    """The card id set in a one-hot piece, or -1."""
    for c in range(d):
        if obs[start + c] != 0:
            return c
    return -1


@njit(**INLINE)
def _phase(obs, off):
    """0 = turn (draw/knock/pass), 1 = discard after a draw, 2 = discard before the stock draw, -1 = none."""
    for p in range(3):
        if obs[off[E.PHASE] + p] != 0:
            return p
    return -1


@njit(**INLINE)
def _keep_index(skip):
    """Indices of the three cards kept when ``skip`` (0..3) is thrown from four."""
    return (1 if skip == 0 else 0), (2 if skip <= 1 else 1), (3 if skip <= 2 else 2)


@njit(**INLINE)
def _first_legal(mask):
    for a in range(mask.shape[0]):
        if mask[a]:
            return a
    return -1


@njit(**INLINE)
def _throw_best(obs, off, hand, nh, mask, params):
    """Throw the legal card that keeps the most (the observation's ``throw_value``; ties: the lowest card).

    The same rule serves both discards: after a draw (best three of four kept) and the Italian
    throw-before-draw (best one-suit pair kept).
    """
    best, best_val, best_card = -1, -1, 1 << 20
    for i in range(nh):
        c = hand[i]
        if not mask[DISCARD0 + c]:
            continue
        v = obs[off[E.THROW_VALUE] + c]
        cv = params[P_VALUES + c]
        if v > best_val or (v == best_val and cv < best_card):
            best, best_val, best_card = c, v, cv
    return DISCARD0 + best if best >= 0 else -1


# -- the greedy decision ----------------------------------------------------------------
@njit(**INLINE)
def _greedy_row(obs, mask, off, params, knock2):
    hand = np.empty(4, np.int64)
    nh = _read_hand(obs, off, params, hand)
    phase = _phase(obs, off)
    action = -1
    if phase == 0:
        v = obs[off[E.HAND_VALUE]]
        # the taken card must stay: the best hand that keeps it, from the observation
        gain = bool(mask[DRAW_DISCARD]) and obs[off[E.TAKE_VALUE]] > v
        if mask[KNOCK] and v >= knock2:
            action = KNOCK
        elif mask[PASS] and not gain and v >= knock2:
            action = PASS
        elif gain:
            action = DRAW_DISCARD
        elif mask[DRAW_STOCK]:
            action = DRAW_STOCK
    elif phase == 1 or phase == 2:
        action = _throw_best(obs, off, hand, nh, mask, params)
    if action < 0 or not mask[action]:
        action = _first_legal(mask)
    return action


def _greedy_rows(lo, hi, obs, mask, off, params, knock2, out):
    for b in range(lo, hi):
        out[b] = _greedy_row(obs[b], mask[b], off, params, knock2)


_greedy_batch = jit_variants(_greedy_rows)


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
        _greedy_batch.run(len(obs), len(obs) >= PARALLEL_FROM, obs, mask, self.offsets, self.params, self._knock2, out)
        return out
