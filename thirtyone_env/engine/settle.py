"""Settling a deal (RULES.md section 4): payments, going out or on honor, and the end of a match."""

import numpy as np
from numba import njit

from thirtyone_env.engine.layout import (
    END_BLITZ,
    MAXP,
    ON_HONOR,
    OUT,
    PH_OVER,
    S_CHIPS,
    S_DEAL_CHIPS,
    S_DEALER,
    S_DONE,
    S_EPISODE_DEAL,
    S_KNOCKER,
    S_LAST_END,
    S_NUM_PLAYERS,
    S_PHASE,
    S_POT,
    S_STATUS,
)
from thirtyone_env.engine.table import _count_in_play, _hand, _next_in_play, _seat_blitz, _seat_value2
from thirtyone_env.jit import JIT
from thirtyone_env.rules import (
    P_ECONOMY_LIVES,
    P_HONOR_TIEBREAK,
    P_KNOCKER_PENALTY,
    P_KNOCKER_WINS_TIES,
    P_ON_HONOR,
    P_RANKS,
)


@njit(**JIT)
def _pay(s, params, seat, amount):
    """``seat`` pays ``amount`` lives into the pot; it goes on honor or out as the rules say."""
    chips = s[S_CHIPS + seat]
    if s[S_STATUS + seat] == ON_HONOR:
        s[S_STATUS + seat] = OUT
        return
    paid = min(amount, chips)
    s[S_CHIPS + seat] = chips - paid
    s[S_POT] += paid
    if chips - amount > 0:
        return
    if params[P_ON_HONOR] and chips - amount == 0:
        s[S_STATUS + seat] = ON_HONOR
    else:
        s[S_STATUS + seat] = OUT


@njit(**JIT)
def _win_pot(s, seat):
    s[S_CHIPS + seat] += s[S_POT]
    s[S_POT] = 0


@njit(**JIT)
def _ranks_desc(s, params, seat):
    """The three ranks of a hand, high to low, packed into one comparable number."""
    h = _hand(s, seat)
    ranks = params[P_RANKS]
    a, b, c = h[0] % ranks, h[1] % ranks, h[2] % ranks
    if a < b:
        a, b = b, a
    if b < c:
        b, c = c, b
    if a < b:
        a, b = b, a
    return (a * 16 + b) * 16 + c


@njit(**JIT)
def _end_match(s, winners, rewards):
    """Match over: winners share +1, the others share -1 (all share: everyone 0)."""
    n = s[S_NUM_PLAYERS]
    w = 0
    for seat in range(n):
        w += winners[seat]
    s[S_DONE] = 1
    s[S_PHASE] = PH_OVER
    if s[S_EPISODE_DEAL]:
        return
    if w == 0 or w == n:
        return
    for seat in range(n):
        if winners[seat]:
            rewards[seat] += 1.0 / w
        else:
            rewards[seat] -= 1.0 / (n - w)


@njit(**JIT)
def _settle(s, params, kind, rewards):
    """Pay out the deal that just ended (a blitz by the seats holding one, or a showdown)."""
    n = s[S_NUM_PLAYERS]
    lives = params[P_ECONOMY_LIVES] == 1
    knocker = s[S_KNOCKER]
    s[S_LAST_END] = kind
    before = np.zeros(MAXP, np.int64)
    for seat in range(n):
        before[seat] = s[S_STATUS + seat] != OUT
    values = np.full(MAXP, -1, np.int64)
    holders = np.zeros(MAXP, np.int64)
    num_holders = 0
    for seat in range(n):
        if before[seat]:
            values[seat] = _seat_value2(s, params, seat)
            if kind == END_BLITZ and _seat_blitz(s, params, seat):
                holders[seat] = 1
                num_holders += 1
    drawn = False
    if kind == END_BLITZ:
        if lives:
            for seat in range(n):
                if before[seat] and not holders[seat]:
                    _pay(s, params, seat, 1)
        elif num_holders == 1:
            for seat in range(n):
                if holders[seat]:
                    _win_pot(s, seat)
    elif not lives:
        top = values.max()
        count = 0
        winner = -1
        for seat in range(n):
            if values[seat] == top:
                count += 1
                winner = seat
        if count == 1:
            _win_pot(s, winner)
        elif params[P_KNOCKER_WINS_TIES] and knocker >= 0 and values[knocker] == top:
            _win_pot(s, knocker)
    else:
        low = 1 << 20
        for seat in range(n):
            if before[seat] and values[seat] < low:
                low = values[seat]
        losers = np.zeros(MAXP, np.int64)
        count = 0
        any_honor = False
        for seat in range(n):
            if before[seat] and values[seat] == low:
                losers[seat] = 1
                count += 1
                any_honor = any_honor or s[S_STATUS + seat] == ON_HONOR
        if (
            params[P_HONOR_TIEBREAK]
            and _count_in_play(s) == 2
            and count == 2
            and knocker >= 0
            and any_honor
        ):
            other = _next_in_play(s, knocker)
            rk, ro = _ranks_desc(s, params, knocker), _ranks_desc(s, params, other)
            if rk == ro:
                drawn = True
            else:
                losers[knocker if rk < ro else other] = 1
                losers[other if rk < ro else knocker] = 0
                count = 1
        if not drawn:
            if params[P_KNOCKER_WINS_TIES] and knocker >= 0 and losers[knocker] and count > 1:
                losers[knocker] = 0
            for seat in range(n):
                if losers[seat]:
                    _pay(s, params, seat, params[P_KNOCKER_PENALTY] if seat == knocker else 1)

    # deal rewards: net chips
    if s[S_EPISODE_DEAL]:
        for seat in range(n):
            rewards[seat] += s[S_CHIPS + seat] - s[S_DEAL_CHIPS + seat]

    # does the match (or the deal episode) end?
    winners = np.zeros(MAXP, np.int64)
    if lives:
        left = _count_in_play(s)
        if drawn:
            for seat in range(n):
                winners[seat] = before[seat]
            _end_match(s, winners, rewards)
            return
        if left <= 1:
            for seat in range(n):
                winners[seat] = before[seat] if left == 0 else s[S_STATUS + seat] != OUT
            _end_match(s, winners, rewards)
            return
    if s[S_EPISODE_DEAL]:
        _end_match(s, winners, rewards)
        return
    s[S_DEALER] = _next_in_play(s, s[S_DEALER])


@njit(**JIT)
def _end_pot_match(s, rewards):
    """Pot economy: the player(s) holding the most chips win."""
    n = s[S_NUM_PLAYERS]
    most = -1
    for seat in range(n):
        most = max(most, s[S_CHIPS + seat])
    winners = np.zeros(MAXP, np.int64)
    for seat in range(n):
        winners[seat] = s[S_CHIPS + seat] == most
    _end_match(s, winners, rewards)
