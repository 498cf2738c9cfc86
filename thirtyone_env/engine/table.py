"""Small readers and writers of one table's state: hands, seats in play, the piles."""

from numba import njit

from thirtyone_env.engine.hands import best_value2, is_blitz2
from thirtyone_env.engine.layout import (
    OUT,
    S_DISCARD,
    S_DISCARD_N,
    S_HAND_N,
    S_HANDS,
    S_KNOWN,
    S_NUM_PLAYERS,
    S_SEEN,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
)
from thirtyone_env.engine.rng import shuffle
from thirtyone_env.jit import INLINE, JIT
from thirtyone_env.rules import P_REFILL_SHUFFLE


@njit(**INLINE)
def _hand(s, seat):
    return s[S_HANDS + 4 * seat : S_HANDS + 4 * seat + 4]


@njit(**INLINE)
def _seat_value2(s, params, seat):
    return best_value2(_hand(s, seat), s[S_HAND_N + seat], params)


@njit(**INLINE)
def _seat_blitz(s, params, seat):
    h = _hand(s, seat)
    return s[S_HAND_N + seat] == 3 and is_blitz2(h[0], h[1], h[2], params)


@njit(**INLINE)
def _next_in_play(s, seat):
    n = s[S_NUM_PLAYERS]
    for k in range(1, n + 1):
        nxt = (seat + k) % n
        if s[S_STATUS + nxt] != OUT:
            return nxt
    return seat


@njit(**INLINE)
def _count_in_play(s):
    count = 0
    for seat in range(s[S_NUM_PLAYERS]):
        if s[S_STATUS + seat] != OUT:
            count += 1
    return count


@njit(**INLINE)
def _add_card(s, seat, card):
    k = s[S_HAND_N + seat]
    s[S_HANDS + 4 * seat + k] = card
    s[S_HAND_N + seat] = k + 1


@njit(**INLINE)
def _remove_card(s, seat, card):
    k = s[S_HAND_N + seat]
    base = S_HANDS + 4 * seat
    for i in range(k):
        if s[base + i] == card:
            s[base + i] = s[base + k - 1]
            s[base + k - 1] = -1
            s[S_HAND_N + seat] = k - 1
            return


@njit(**INLINE)
def _push_discard(s, card):
    s[S_DISCARD + s[S_DISCARD_N]] = card
    s[S_DISCARD_N] += 1
    s[S_SEEN + card] = 1
    s[S_KNOWN + card] = 0


@njit(**JIT)
def _draw_stock(s, rng, params):
    """Top stock card; an empty stock is first refilled from the discard pile (section 3.5)."""
    if s[S_STOCK_N] == 0:
        dn = s[S_DISCARD_N]
        rest = dn - 1
        # flip: the oldest discard becomes the top of the stock
        for k in range(rest):
            s[S_STOCK + k] = s[S_DISCARD + rest - 1 - k]
        s[S_STOCK_N] = rest
        s[S_DISCARD] = s[S_DISCARD + dn - 1]
        s[S_DISCARD_N] = 1
        if params[P_REFILL_SHUFFLE]:
            shuffle(rng, s[S_STOCK : S_STOCK + rest], rest)
    s[S_STOCK_N] -= 1
    return s[S_STOCK + s[S_STOCK_N]]
