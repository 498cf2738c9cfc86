"""Observations (layout: ``thirtyone_env.encoding``) and the full state for centralized critics."""

from numba import njit

from thirtyone_env import encoding as E
from thirtyone_env.encoding import obs_dim
from thirtyone_env.engine.hands import hand_value2
from thirtyone_env.engine.layout import (
    ON_HONOR,
    OUT,
    PH_DISCARD,
    PH_DISCARD_FIRST,
    PH_OVER,
    S_CHIPS,
    S_CURRENT,
    S_DEALER,
    S_DISCARD,
    S_DISCARD_N,
    S_FINAL_LEFT,
    S_HAND_N,
    S_KNOCKER,
    S_KNOWN,
    S_MOVED,
    S_MOVED_N,
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
from thirtyone_env.engine.table import _count_in_play, _hand, _seat_value2
from thirtyone_env.jit import INLINE, JIT
from thirtyone_env.rules import P_DECK_SIZE, P_SUIT_OF, P_VALUES


@njit(**INLINE)
def _clip(x):
    return min(x, 127)


@njit(**INLINE)
def _observe(s, params, seat, off, out):
    """Write ``seat``'s observation into ``out`` (int8); nothing hidden from ``seat`` is read."""
    out[:] = 0
    n = s[S_NUM_PLAYERS]
    d = params[P_DECK_SIZE]
    h = _hand(s, seat)
    for i in range(s[S_HAND_N + seat]):
        out[off[E.HAND] + h[i]] = 1
    if s[S_TAKEN] >= 0 and s[S_CURRENT] == seat:
        out[off[E.TAKEN] + s[S_TAKEN]] = 1
    dn = s[S_DISCARD_N]
    if dn > 0:
        out[off[E.DISCARD_TOP] + s[S_DISCARD + dn - 1]] = 1
    for i in range(dn):
        out[off[E.DISCARD_PILE] + s[S_DISCARD + i]] = 1
    out[off[E.DISCARD_SEEN] : off[E.DISCARD_SEEN] + d] = s[S_SEEN : S_SEEN + d]
    for rel in range(n - 1):
        other = (seat + 1 + rel) % n
        oh = _hand(s, other)
        for i in range(s[S_HAND_N + other]):
            if s[S_KNOWN + oh[i]] == other + 1:  # it took this card from the discard pile
                out[off[E.OPP_KNOWN] + rel * d + oh[i]] = 1
        out[off[E.OPP_CHIPS] + rel] = _clip(s[S_CHIPS + other])
        out[off[E.OPP_IN_PLAY] + rel] = s[S_STATUS + other] != OUT
        out[off[E.OPP_ON_HONOR] + rel] = s[S_STATUS + other] == ON_HONOR
        out[off[E.OPP_KNOCKED] + rel] = s[S_KNOCKER] == other
        out[off[E.OPP_DEALER] + rel] = s[S_DEALER] == other
    for rel in range(n - 1):  # the opponents' moves this deal (one modulo per opponent, not one per card)
        other = (seat + 1 + rel) % n
        thrown, passed = off[E.OPP_THROWN] + rel * d, off[E.OPP_PASSED] + rel * d
        for i in range(s[S_MOVED_N]):
            c = s[S_MOVED + i]
            out[thrown + c] = (s[S_THROWN + c] >> other) & 1
            out[passed + c] = (s[S_PASSED + c] >> other) & 1
    out[off[E.OWN_CHIPS]] = _clip(s[S_CHIPS + seat])
    out[off[E.OWN_ON_HONOR]] = s[S_STATUS + seat] == ON_HONOR
    out[off[E.OWN_DEALER]] = s[S_DEALER] == seat
    if s[S_PHASE] < PH_OVER:
        out[off[E.PHASE] + s[S_PHASE]] = 1
    out[off[E.FINAL_ROUND]] = s[S_KNOCKER] >= 0
    out[off[E.FINAL_TURNS_LEFT]] = s[S_FINAL_LEFT]
    out[off[E.FIRST_ROUND]] = s[S_TURNS] < _count_in_play(s)
    out[off[E.STOCK_SIZE]] = s[S_STOCK_N]
    out[off[E.POT]] = _clip(s[S_POT])
    out[off[E.TURNS]] = _clip(s[S_TURNS])
    value = -1
    if s[S_CURRENT] == seat and s[S_PHASE] != PH_OVER:
        value = _observe_choices(s, params, seat, off, out)
    out[off[E.HAND_VALUE]] = value if value >= 0 else _seat_value2(s, params, seat)


@njit(**INLINE)
def _observe_choices(s, params, seat, off, out):
    """Hand values one decision ahead: what each throw keeps, what taking the discard gives.

    Returns the best three-card value while holding four (the hand value), else -1.
    """
    h = _hand(s, seat)
    k = s[S_HAND_N + seat]
    if s[S_PHASE] == PH_DISCARD:
        best = 0
        for i in range(k):
            j, m, q = (i + 1) % 4, (i + 2) % 4, (i + 3) % 4
            kept = hand_value2(h[j], h[m], h[q], params)
            out[off[E.THROW_VALUE] + h[i]] = kept
            best = max(best, kept)
        return best
    elif s[S_PHASE] == PH_DISCARD_FIRST:
        for i in range(k):
            a, b = h[(i + 1) % 3], h[(i + 2) % 3]
            va, vb = params[P_VALUES + a], params[P_VALUES + b]
            same = params[P_SUIT_OF + a] == params[P_SUIT_OF + b]
            out[off[E.THROW_VALUE] + h[i]] = 2 * (va + vb if same else max(va, vb))
        return -1
    elif s[S_DISCARD_N] > 0:
        top = s[S_DISCARD + s[S_DISCARD_N] - 1]
        out[off[E.TAKE_VALUE]] = max(
            max(hand_value2(h[0], h[1], top, params), hand_value2(h[0], h[2], top, params)),
            hand_value2(h[1], h[2], top, params),
        )
    return -1


@njit(**JIT)
def _global_state(s, params, off, out):
    """Everything, for centralized critics: every hand, the stock, whose turn, seat 0's view."""
    n = s[S_NUM_PLAYERS]
    d = params[P_DECK_SIZE]
    out[:] = 0
    for seat in range(n):
        h = _hand(s, seat)
        for i in range(s[S_HAND_N + seat]):
            out[seat * d + h[i]] = 1
    for i in range(s[S_STOCK_N]):
        out[n * d + s[S_STOCK + i]] = 1
    if s[S_PHASE] < PH_OVER:
        out[(n + 1) * d + s[S_CURRENT]] = 1
    _observe(s, params, 0, off, out[(n + 1) * d + n :])


def global_state_dim(deck_size: int, num_players: int) -> int:
    return (num_players + 1) * deck_size + num_players + obs_dim(deck_size, num_players)
