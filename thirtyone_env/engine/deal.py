"""A new deal and a new match (RULES.md sections 3.1-3.2 and 4): antes, the deal, a dealt blitz."""

from numba import njit

from thirtyone_env.engine.layout import (
    END_BLITZ,
    IN_PLAY,
    MAXD,
    MAXP,
    OUT,
    PH_TURN,
    S_CHIPS,
    S_CURRENT,
    S_DEAL_CHIPS,
    S_DEALER,
    S_DEALS,
    S_DISCARD_N,
    S_DONE,
    S_EPISODE_DEAL,
    S_FINAL_LEFT,
    S_HAND_N,
    S_HANDS,
    S_KNOCKER,
    S_KNOWN,
    S_LAST_ACTION,
    S_LAST_SEAT,
    S_MOVED_N,
    S_NUM_PLAYERS,
    S_PASSED,
    S_PHASE,
    S_POT,
    S_QLEN,
    S_QPOS,
    S_SEEN,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
    S_TAKEN,
    S_THROWN,
    S_TURNS,
)
from thirtyone_env.engine.rng import rand_below, shuffle
from thirtyone_env.engine.settle import _end_pot_match, _settle
from thirtyone_env.engine.table import _add_card, _count_in_play, _next_in_play, _push_discard, _seat_blitz
from thirtyone_env.jit import JIT
from thirtyone_env.rules import P_ANTE, P_DECK_SIZE, P_ECONOMY_LIVES, P_MAX_DEALS, P_START_CHIPS


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
    shuffle(rng, s[S_STOCK : stock - top + 1][::-1], d - top)  # deck positions top..d-1


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
    s[S_THROWN : S_THROWN + MAXD] = 0
    s[S_PASSED : S_PASSED + MAXD] = 0
    s[S_MOVED_N] = 0
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
        s[S_DEALER] = dealer if dealer >= 0 else rand_below(rng, num_players)
        s[S_LAST_SEAT] = -1
        s[S_LAST_ACTION] = -1
        _play_until_decision(s, rng, decks, params, rewards)
        if s[S_DONE] == 0:
            return
        qpos = s[S_QPOS]
        rewards[:] = 0
