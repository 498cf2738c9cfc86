"""A table rebuilt from one seat's observation and a guess of the cards it cannot see.

Search agents (``agents.search``) deal the hidden cards many ways and play each guess out;
this writes such a guess as an engine state, so they never read or write the layout themselves.
The observer becomes seat 0, its opponents seats 1.. in the observation's order (left first).
"""

import numpy as np
from numba import njit

from thirtyone_env import encoding as E
from thirtyone_env.engine.layout import (
    IN_PLAY,
    MAXD,
    ON_HONOR,
    OUT,
    S_CHIPS,
    S_CURRENT,
    S_DEAL_CHIPS,
    S_DEALER,
    S_DEALS,
    S_DISCARD,
    S_DISCARD_N,
    S_FINAL_LEFT,
    S_HAND_N,
    S_HANDS,
    S_KNOCKER,
    S_KNOWN,
    S_LAST_ACTION,
    S_LAST_SEAT,
    S_NUM_PLAYERS,
    S_PASSED,
    S_PHASE,
    S_POT,
    S_SEEN,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
    S_TAKEN,
    S_THROWN,
    S_TURNS,
)
from thirtyone_env.engine.observe import _observe
from thirtyone_env.engine.turn import _legal_mask, _record_move
from thirtyone_env.jit import JIT
from thirtyone_env.rules import P_DECK_SIZE


@njit(**JIT)
def _load_world(s, params, n, off, obs, hands, stock):
    """Write the table that ``obs`` (of the seat to act) describes, with ``hands[r]`` (padded
    with -1) for the opponent ``r`` seats to its left and ``stock`` (top first, padded with -1)."""
    d = params[P_DECK_SIZE]
    s[:] = 0
    s[S_NUM_PLAYERS] = n
    s[S_HANDS : S_HANDS + 4 * n] = -1
    k = 0
    for c in range(d):
        if obs[off[E.HAND] + c]:
            s[S_HANDS + k] = c
            k += 1
    s[S_HAND_N] = k
    s[S_TAKEN] = -1
    for c in range(d):
        if obs[off[E.TAKEN] + c]:
            s[S_TAKEN] = c
            s[S_KNOWN + c] = 1
    top = -1
    for c in range(d):
        if obs[off[E.DISCARD_TOP] + c]:
            top = c
    k = 0
    for c in range(d):  # the pile's order below its top is not observed: card order
        if obs[off[E.DISCARD_PILE] + c] and c != top:
            s[S_DISCARD + k] = c
            k += 1
    if top >= 0:
        s[S_DISCARD + k] = top
        k += 1
    s[S_DISCARD_N] = k
    for c in range(d):
        s[S_SEEN + c] = obs[off[E.DISCARD_SEEN] + c]
    s[S_KNOCKER] = 0 if obs[off[E.FINAL_ROUND]] else -1
    for r in range(n - 1):
        seat = r + 1
        k = 0
        for i in range(4):
            if hands[r, i] >= 0:
                s[S_HANDS + 4 * seat + k] = hands[r, i]
                k += 1
        s[S_HAND_N + seat] = k
        for c in range(d):
            if obs[off[E.OPP_KNOWN] + r * d + c]:
                s[S_KNOWN + c] = seat + 1
            if obs[off[E.OPP_THROWN] + r * d + c]:
                _record_move(s, S_THROWN, c, seat)
            if obs[off[E.OPP_PASSED] + r * d + c]:
                _record_move(s, S_PASSED, c, seat)
        s[S_CHIPS + seat] = obs[off[E.OPP_CHIPS] + r]
        if not obs[off[E.OPP_IN_PLAY] + r]:
            s[S_STATUS + seat] = OUT
        elif obs[off[E.OPP_ON_HONOR] + r]:
            s[S_STATUS + seat] = ON_HONOR
        else:
            s[S_STATUS + seat] = IN_PLAY
        if obs[off[E.OPP_KNOCKED] + r]:
            s[S_KNOCKER] = seat
        if obs[off[E.OPP_DEALER] + r]:
            s[S_DEALER] = seat
    s[S_CHIPS] = obs[off[E.OWN_CHIPS]]
    s[S_STATUS] = ON_HONOR if obs[off[E.OWN_ON_HONOR]] else IN_PLAY
    if obs[off[E.OWN_DEALER]]:
        s[S_DEALER] = 0
    for p in range(n):
        s[S_DEAL_CHIPS + p] = s[S_CHIPS + p]
    for ph in range(3):
        if obs[off[E.PHASE] + ph]:
            s[S_PHASE] = ph
    s[S_FINAL_LEFT] = obs[off[E.FINAL_TURNS_LEFT]]
    s[S_TURNS] = obs[off[E.TURNS]]
    s[S_POT] = obs[off[E.POT]]
    s[S_DEALS] = 1  # not observed; only a pot match's deal limit reads it
    s[S_CURRENT] = 0
    s[S_LAST_SEAT] = -1
    s[S_LAST_ACTION] = -1
    k = 0
    for i in range(MAXD):
        if stock[i] >= 0:
            k += 1
    for i in range(k):
        s[S_STOCK + k - 1 - i] = stock[i]  # top last
    s[S_STOCK_N] = k


@njit(**JIT)
def _load_worlds(states, params, n, off, obs, hands, stocks, obs_out, masks, stock_sizes):
    for i in range(states.shape[0]):
        _load_world(states[i], params, n, off, obs[i], hands[i], stocks[i])
        _legal_mask(states[i], params, masks[i])
        if obs_out.shape[1]:
            _observe(states[i], params, 0, off, obs_out[i])
        stock_sizes[i] = obs[i, off[E.STOCK_SIZE]]


def load_worlds(states: np.ndarray, params: np.ndarray, n: int, off: np.ndarray, obs: np.ndarray,
                hands: np.ndarray, stocks: np.ndarray, obs_out: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Fill ``states`` (and the acting seat 0's mask and observation); returns the observed stock sizes."""
    stock_sizes = np.zeros(states.shape[0], np.int64)
    _load_worlds(states, params, n, off, obs, hands, stocks, obs_out, masks, stock_sizes)
    return stock_sizes
