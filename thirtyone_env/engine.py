"""The rules engine: RULES.md sections 2-5 as numba kernels over plain arrays.

One table is one ``int32`` state vector (layout ``S_*`` below), one ``int64[4]``
RNG state (xorshift128, deterministic on every platform and thread count) and
an ``int16[Q, 52]`` queue of stacked decks. Kernels with a leading underscore
are jitted and trust their inputs; ``thirtyone_v0`` (a batch of one) and
``vector.VectorThirtyOne`` (a batch of thousands) validate before calling them.
Set ``NUMBA_DISABLE_JIT=1`` to step through the rules as plain Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from thirtyone_env import encoding as E
from thirtyone_env.rules import (
    P_ACE_RANK,
    P_ANTE,
    P_BLITZ_AKT,
    P_DECK_SIZE,
    P_DISCARD_FIRST,
    P_ECONOMY_LIVES,
    P_HONOR_TIEBREAK,
    P_KING_RANK,
    P_KNOCK_FIRST_ROUND,
    P_KNOCK_MIN2,
    P_KNOCKER_PENALTY,
    P_KNOCKER_WINS_TIES,
    P_MAX_DEALS,
    P_MAX_TURNS,
    P_MAY_PASS,
    P_MAY_RETURN,
    P_ON_HONOR,
    P_RANK_OF,
    P_RANKS,
    P_REFILL_SHUFFLE,
    P_START_CHIPS,
    P_SUIT_OF,
    P_TEN_RANK,
    P_THREE_ACES2,
    P_TOAK2,
    P_VALUES,
)

JIT = dict(cache=True, nogil=True)  # JIT options, in one place
# the per-decision path: numba does not inline one compiled function into another, and a
# call that passes arrays costs as much as a hand value (the deal and settlement stay calls:
# inlining them too made the parallel drivers take 20 GB to compile)
INLINE = dict(JIT, inline="always")

# actions (RULES.md section 7)
DRAW_STOCK, DRAW_DISCARD, KNOCK, PASS, DISCARD0 = 0, 1, 2, 3, 4

# phases: what the seat to act decides
PH_TURN, PH_DISCARD, PH_DISCARD_FIRST, PH_OVER = 0, 1, 2, 3

# how the last deal ended
END_NONE, END_BLITZ, END_SHOWDOWN = 0, 1, 2

# seat status
OUT, IN_PLAY, ON_HONOR = 0, 1, 2

MAXP = 10
MAXD = 52
S_HANDS = 0  # MAXP x 4 card ids, -1 = empty slot
S_HAND_N = S_HANDS + MAXP * 4
S_STOCK = S_HAND_N + MAXP  # stock cards, top = S_STOCK + stock_n - 1
S_STOCK_N = S_STOCK + MAXD
S_DISCARD = S_STOCK_N + 1  # discard pile, oldest first, top last
S_DISCARD_N = S_DISCARD + MAXD
S_SEEN = S_DISCARD_N + 1  # per card: has been in the discard pile this deal
S_KNOWN = S_SEEN + MAXD  # per card: 1 + seat that took it from the discard and holds it, else 0
S_CHIPS = S_KNOWN + MAXD  # per seat: lives (lives economy) or chips (pot economy)
S_STATUS = S_CHIPS + MAXP  # per seat: OUT, IN_PLAY, ON_HONOR
S_DEAL_CHIPS = S_STATUS + MAXP  # per seat: chips when the deal began (for deal rewards)
S_NUM_PLAYERS = S_DEAL_CHIPS + MAXP
S_EPISODE_DEAL = S_NUM_PLAYERS + 1  # 1 = an episode is one deal
S_DEALER = S_EPISODE_DEAL + 1
S_CURRENT = S_DEALER + 1
S_PHASE = S_CURRENT + 1
S_TAKEN = S_PHASE + 1  # card taken from the discard pile this turn, -1 = none
S_KNOCKER = S_TAKEN + 1
S_FINAL_LEFT = S_KNOCKER + 1  # turns left in the final round after a knock
S_TURNS = S_FINAL_LEFT + 1  # completed turns this deal
S_DEALS = S_TURNS + 1  # deals begun this match
S_POT = S_DEALS + 1
S_DONE = S_POT + 1
S_LAST_SEAT = S_DONE + 1
S_LAST_ACTION = S_LAST_SEAT + 1
S_LAST_END = S_LAST_ACTION + 1  # END_* of the last settled deal
S_QPOS = S_LAST_END + 1  # next stacked deck to use
S_QLEN = S_QPOS + 1
S_DECISIONS = S_QLEN + 1  # decisions taken this episode
STATE_SIZE = S_DECISIONS + 1


# -- random numbers -------------------------------------------------------------------
@njit(**INLINE)
def _rand_u32(rng):
    """xorshift128 on four 32-bit words held in int64 (no overflow, same on every platform)."""
    mask = 0xFFFFFFFF
    t = rng[3]
    s = rng[0]
    rng[3] = rng[2]
    rng[2] = rng[1]
    rng[1] = s
    t ^= (t << 11) & mask
    t ^= t >> 8
    t = t ^ s ^ (s >> 19)
    rng[0] = t & mask
    return rng[0]


@njit(**INLINE)
def _rand_below(rng, n):
    return (_rand_u32(rng) * n) >> 32


@njit(**JIT)
def _shuffle(rng, a, n):
    for i in range(n - 1, 0, -1):
        j = _rand_below(rng, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp


# -- hand value (RULES.md section 2) ----------------------------------------------------
@njit(**INLINE)
def _hand_value2(c0, c1, c2, params):
    """Doubled value of a three-card hand."""
    r0 = params[P_RANK_OF + c0]
    if r0 == params[P_RANK_OF + c1] and r0 == params[P_RANK_OF + c2]:
        if r0 == params[P_ACE_RANK] and params[P_THREE_ACES2] > 0:
            return params[P_THREE_ACES2]
        if params[P_TOAK2] > 0:
            return max(params[P_TOAK2], 2 * params[P_VALUES + c0])
    s0, s1, s2 = params[P_SUIT_OF + c0], params[P_SUIT_OF + c1], params[P_SUIT_OF + c2]
    v0, v1, v2 = params[P_VALUES + c0], params[P_VALUES + c1], params[P_VALUES + c2]
    # the best suit is the suit of one of the cards: take each card's suit total, without
    # branches (random hands make branches mispredict, which costs more than the arithmetic)
    t0 = v0 + v1 * (s1 == s0) + v2 * (s2 == s0)
    t1 = v1 + v0 * (s0 == s1) + v2 * (s2 == s1)
    t2 = v2 + v0 * (s0 == s2) + v1 * (s1 == s2)
    return 2 * max(t0, max(t1, t2))


@njit(**INLINE)
def _best_value2(cards, n, params):
    """Doubled value of the best three of ``n`` cards (n = 3 or 4); suit sum for fewer."""
    if n == 3:
        return _hand_value2(cards[0], cards[1], cards[2], params)
    if n == 4:
        a, b, c, d = cards[0], cards[1], cards[2], cards[3]
        return max(
            max(_hand_value2(b, c, d, params), _hand_value2(a, c, d, params)),
            max(_hand_value2(a, b, d, params), _hand_value2(a, b, c, params)),
        )
    ranks = params[P_RANKS]
    best = 0
    for suit in range(4):
        total = 0
        for i in range(n):
            if cards[i] // ranks == suit:
                total += params[P_VALUES + cards[i]]
        best = max(best, total)
    return 2 * best


@njit(**INLINE)
def _is_blitz(c0, c1, c2, params):
    if params[P_BLITZ_AKT] == 0:
        return _hand_value2(c0, c1, c2, params) == 62
    suit = params[P_SUIT_OF + c0]
    if suit != params[P_SUIT_OF + c1] or suit != params[P_SUIT_OF + c2]:
        return False
    want = (1 << params[P_ACE_RANK]) | (1 << params[P_KING_RANK]) | (1 << params[P_TEN_RANK])
    have = (1 << params[P_RANK_OF + c0]) | (1 << params[P_RANK_OF + c1]) | (1 << params[P_RANK_OF + c2])
    return have == want


# -- small state helpers ----------------------------------------------------------------
@njit(**INLINE)
def _hand(s, seat):
    return s[S_HANDS + 4 * seat : S_HANDS + 4 * seat + 4]


@njit(**INLINE)
def _seat_value2(s, params, seat):
    return _best_value2(_hand(s, seat), s[S_HAND_N + seat], params)


@njit(**INLINE)
def _seat_blitz(s, params, seat):
    h = _hand(s, seat)
    return s[S_HAND_N + seat] == 3 and _is_blitz(h[0], h[1], h[2], params)


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
            _shuffle(rng, s[S_STOCK : S_STOCK + rest], rest)
    s[S_STOCK_N] -= 1
    return s[S_STOCK + s[S_STOCK_N]]


# -- settling a deal (RULES.md section 4) ---------------------------------------------
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


# -- dealing (RULES.md section 3.1-3.2) ------------------------------------------------
@njit(**JIT)
def _fill_deck(s, rng, decks, params):
    """Lay the next deck into the stock slots: its stacked cards on top, the rest shuffled
    below, else all shuffled. Deck position i goes to slot d-1-i, so after the deal the
    undealt cards already lie in stock order (top last) and nothing is copied or allocated.
    """
    d = params[P_DECK_SIZE]
    stock = S_STOCK + d - 1  # slot of deck position 0
    used = S_SEEN  # per card: listed by the stacked deck (the deal clears these slots)
    s[used : used + d] = 0
    top = 0
    if s[S_QPOS] < s[S_QLEN]:
        row = decks[s[S_QPOS]]
        s[S_QPOS] += 1
        while top < d and row[top] >= 0:
            s[stock - top] = row[top]
            s[used + row[top]] = 1
            top += 1
    k = top
    for card in range(d):
        if not s[used + card]:
            s[stock - k] = card
            k += 1
    _shuffle(rng, s[S_STOCK : stock - top + 1][::-1], d - top)  # deck positions top..d-1


@njit(**JIT)
def _start_deal(s, rng, decks, params, rewards):
    """Antes, the deal and a dealt blitz. Returns True if the deal needs decisions."""
    n = s[S_NUM_PLAYERS]
    d = params[P_DECK_SIZE]
    if params[P_ECONOMY_LIVES] == 0:
        if s[S_DEALS] >= params[P_MAX_DEALS]:
            _end_pot_match(s, rewards)
            return False
        payers = 0
        for seat in range(n):
            if s[S_STATUS + seat] != OUT and s[S_CHIPS + seat] < params[P_ANTE]:
                s[S_STATUS + seat] = OUT
            if s[S_STATUS + seat] != OUT:
                payers += 1
        if payers <= 1:
            _end_pot_match(s, rewards)
            return False
        if s[S_STATUS + s[S_DEALER]] == OUT:
            s[S_DEALER] = _next_in_play(s, s[S_DEALER])
    for seat in range(n):
        s[S_DEAL_CHIPS + seat] = s[S_CHIPS + seat]
        if params[P_ECONOMY_LIVES] == 0 and s[S_STATUS + seat] != OUT:
            s[S_CHIPS + seat] -= params[P_ANTE]
            s[S_POT] += params[P_ANTE]
    s[S_DEALS] += 1
    _fill_deck(s, rng, decks, params)
    s[S_HANDS : S_HANDS + 4 * MAXP] = -1
    s[S_HAND_N : S_HAND_N + MAXP] = 0
    s[S_SEEN : S_SEEN + MAXD] = 0
    s[S_KNOWN : S_KNOWN + MAXD] = 0
    pos = 0
    for _ in range(3):
        seat = s[S_DEALER]
        for _ in range(_count_in_play(s)):
            seat = _next_in_play(s, seat)
            _add_card(s, seat, s[S_STOCK + d - 1 - pos])
            pos += 1
    s[S_DISCARD_N] = 0
    _push_discard(s, s[S_STOCK + d - 1 - pos])
    s[S_STOCK_N] = d - 1 - pos  # the undealt cards, top last (see _fill_deck)
    s[S_TAKEN] = -1
    s[S_KNOCKER] = -1
    s[S_FINAL_LEFT] = 0
    s[S_TURNS] = 0
    s[S_PHASE] = PH_TURN
    s[S_CURRENT] = _next_in_play(s, s[S_DEALER])
    for seat in range(n):
        if s[S_STATUS + seat] != OUT and _seat_blitz(s, params, seat):
            _settle(s, params, END_BLITZ, rewards)
            return False
    return True


@njit(**JIT)
def _play_until_decision(s, rng, decks, params, rewards):
    """Deal until a deal needs a decision or the match is over."""
    while s[S_DONE] == 0:
        if _start_deal(s, rng, decks, params, rewards):
            return


@njit(**JIT)
def _reset(s, rng, decks, params, num_players, episode_deal, dealer, rewards):
    """A new match (or deal episode). ``dealer < 0`` draws the dealer with the RNG.

    An episode never ends before its first decision: if a dealt blitz would end it
    at once, that deal is void and dealt again from the next deck.
    """
    rewards[:] = 0
    qpos, qlen = s[S_QPOS], s[S_QLEN]
    while True:
        s[:] = 0
        s[S_QPOS] = qpos
        s[S_QLEN] = qlen
        s[S_NUM_PLAYERS] = num_players
        s[S_EPISODE_DEAL] = episode_deal
        for seat in range(num_players):
            s[S_CHIPS + seat] = params[P_START_CHIPS]
            s[S_STATUS + seat] = IN_PLAY
        s[S_DEALER] = dealer if dealer >= 0 else _rand_below(rng, num_players)
        s[S_LAST_SEAT] = -1
        s[S_LAST_ACTION] = -1
        _play_until_decision(s, rng, decks, params, rewards)
        if s[S_DONE] == 0:
            return
        qpos = s[S_QPOS]
        rewards[:] = 0


# -- a turn (RULES.md section 3.3-3.6 and 3.1) ------------------------------------------
@njit(**INLINE)
def _legal_mask(s, params, mask):
    """Write the exact legal-action mask of the seat to act."""
    mask[:] = 0
    phase = s[S_PHASE]
    seat = s[S_CURRENT]
    if phase == PH_TURN:
        mask[DRAW_STOCK] = 1
        mask[DRAW_DISCARD] = 1
        knocker = s[S_KNOCKER]
        if knocker < 0:
            early = s[S_TURNS] < _count_in_play(s)
            if (params[P_KNOCK_FIRST_ROUND] or not early) and (
                params[P_KNOCK_MIN2] == 0 or _seat_value2(s, params, seat) >= params[P_KNOCK_MIN2]
            ):
                mask[KNOCK] = 1
        elif params[P_MAY_PASS]:
            mask[PASS] = 1
    elif phase == PH_DISCARD or phase == PH_DISCARD_FIRST:
        taken = -1 if params[P_MAY_RETURN] else s[S_TAKEN]
        h = _hand(s, seat)
        for i in range(s[S_HAND_N + seat]):
            if h[i] != taken:
                mask[DISCARD0 + h[i]] = 1


@njit(**INLINE)
def _end_turn(s, rng, decks, params, rewards):
    mover = s[S_CURRENT]
    s[S_TURNS] += 1
    s[S_PHASE] = PH_TURN
    s[S_TAKEN] = -1
    if _seat_blitz(s, params, mover):
        _settle(s, params, END_BLITZ, rewards)
    else:
        if s[S_KNOCKER] >= 0 and s[S_KNOCKER] != mover:
            s[S_FINAL_LEFT] -= 1
        if (s[S_KNOCKER] >= 0 and s[S_FINAL_LEFT] == 0) or s[S_TURNS] >= params[P_MAX_TURNS]:
            _settle(s, params, END_SHOWDOWN, rewards)
        else:
            s[S_CURRENT] = _next_in_play(s, mover)
            return
    _play_until_decision(s, rng, decks, params, rewards)


@njit(**INLINE)
def _step(s, rng, decks, params, action, rewards):
    """Apply one legal action of the seat to act; ``rewards`` receives this step's rewards."""
    rewards[:] = 0
    seat = s[S_CURRENT]
    s[S_LAST_SEAT] = seat
    s[S_LAST_ACTION] = action
    s[S_DECISIONS] += 1
    phase = s[S_PHASE]
    if phase == PH_TURN:
        if action == DRAW_STOCK:
            if params[P_DISCARD_FIRST]:
                s[S_PHASE] = PH_DISCARD_FIRST
            else:
                _add_card(s, seat, _draw_stock(s, rng, params))
                s[S_PHASE] = PH_DISCARD
        elif action == DRAW_DISCARD:
            s[S_DISCARD_N] -= 1
            card = s[S_DISCARD + s[S_DISCARD_N]]
            _add_card(s, seat, card)
            s[S_KNOWN + card] = seat + 1
            s[S_TAKEN] = card
            s[S_PHASE] = PH_DISCARD
        elif action == KNOCK:
            s[S_KNOCKER] = seat
            s[S_FINAL_LEFT] = _count_in_play(s) - 1
            _end_turn(s, rng, decks, params, rewards)
        else:  # PASS
            _end_turn(s, rng, decks, params, rewards)
    else:
        card = action - DISCARD0
        _remove_card(s, seat, card)
        _push_discard(s, card)
        if phase == PH_DISCARD_FIRST:
            _add_card(s, seat, _draw_stock(s, rng, params))
        _end_turn(s, rng, decks, params, rewards)


@njit(**JIT)
def _forfeit(s, seat, rewards):
    """Illegal-action penalty: the match ends, -1 to ``seat`` and 0 to the others."""
    rewards[:] = 0
    rewards[seat] = -1.0
    s[S_DONE] = 1
    s[S_PHASE] = PH_OVER


# -- observation (layout: thirtyone_env.encoding) ---------------------------------------
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
            kept = _hand_value2(h[j], h[m], h[q], params)
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
            max(_hand_value2(h[0], h[1], top, params), _hand_value2(h[0], h[2], top, params)),
            _hand_value2(h[1], h[2], top, params),
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
    return (num_players + 1) * deck_size + num_players + E.obs_dim(deck_size, num_players)


# -- batch drivers ----------------------------------------------------------------------
# Each driver comes twice: parallel over tables (large batches, both cores) and serial
# (small batches, where waking threads costs more than the work, badly so on a busy machine).
@njit(**JIT)
def _reset_one(s, rng, decks, params, num_players, episode_deal, off, obs, mask, rewards):
    _reset(s, rng, decks, params, num_players, episode_deal, -1, rewards)
    _legal_mask(s, params, mask)
    if off.shape[0] > 0:
        _observe(s, params, s[S_CURRENT], off, obs)
    return s[S_CURRENT]


@njit(**INLINE)
def _step_one(s, rng, decks, params, action, off, obs, mask, rewards, scratch):
    """Step one table; a finished table reports its rewards and starts its next match."""
    _step(s, rng, decks, params, action, scratch)
    for seat in range(rewards.shape[0]):
        rewards[seat] = scratch[seat]
    done = s[S_DONE] == 1
    if done:
        _reset(s, rng, decks, params, s[S_NUM_PLAYERS], s[S_EPISODE_DEAL], -1, scratch)
    _legal_mask(s, params, mask)
    if off.shape[0] > 0:
        _observe(s, params, s[S_CURRENT], off, obs)
    return done


@njit(parallel=True, **JIT)
def _reset_batch(states, rngs, decks, params, num_players, episode_deal, off, obs, masks, players):
    for b in prange(states.shape[0]):
        scratch = np.zeros(MAXP, np.float64)
        players[b] = _reset_one(states[b], rngs[b], decks[b], params, num_players, episode_deal, off,
                                obs[b], masks[b], scratch)


@njit(**JIT)
def _reset_serial(states, rngs, decks, params, num_players, episode_deal, off, obs, masks, players):
    scratch = np.zeros(MAXP, np.float64)
    for b in range(states.shape[0]):
        players[b] = _reset_one(states[b], rngs[b], decks[b], params, num_players, episode_deal, off,
                                obs[b], masks[b], scratch)


@njit(parallel=True, **JIT)
def _step_batch(states, rngs, decks, params, actions, off, obs, masks, players, rewards, dones):
    scratch = np.zeros((states.shape[0], MAXP), np.float64)  # one allocation, not one per table
    for b in prange(states.shape[0]):
        dones[b] = _step_one(states[b], rngs[b], decks[b], params, actions[b], off, obs[b], masks[b],
                             rewards[b], scratch[b])
        players[b] = states[b, S_CURRENT]


@njit(**JIT)
def _step_serial(states, rngs, decks, params, actions, off, obs, masks, players, rewards, dones):
    scratch = np.zeros(MAXP, np.float64)
    for b in range(states.shape[0]):
        dones[b] = _step_one(states[b], rngs[b], decks[b], params, actions[b], off, obs[b], masks[b],
                             rewards[b], scratch)
        players[b] = states[b, S_CURRENT]


@njit(**JIT)
def _count_illegal(actions, masks):
    """Tables whose action is out of range or not legal (the fast path of the step check)."""
    bad = 0
    for b in range(actions.shape[0]):
        a = actions[b]
        if a < 0 or a >= masks.shape[1] or not masks[b, a]:
            bad += 1
    return bad


@njit(parallel=True, **JIT)
def _observe_batch(states, params, seats, off, out):
    for b in prange(states.shape[0]):
        _observe(states[b], params, seats[b], off, out[b])


@njit(parallel=True, **JIT)
def _global_state_batch(states, params, off, out):
    for b in prange(states.shape[0]):
        _global_state(states[b], params, off, out[b])


def seed_rng(seed: int | None, stream: int = 0) -> np.ndarray:
    """A fresh int64[4] xorshift128 state from a seed (None = OS entropy) and a stream index."""
    words = np.random.SeedSequence(seed, spawn_key=(stream,)).generate_state(4, np.uint32)
    words = words.astype(np.int64)
    if not words.any():
        words[0] = 1
    return words


def new_tables(num_tables: int, max_decks: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty state, RNG and stacked-deck arrays for ``num_tables`` tables."""
    states = np.zeros((num_tables, STATE_SIZE), np.int32)
    rngs = np.zeros((num_tables, 4), np.int64)
    decks = np.full((num_tables, max_decks, MAXD), -1, np.int16)
    return states, rngs, decks
