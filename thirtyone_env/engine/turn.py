"""A turn (RULES.md sections 3.3-3.6 and 3.1): the legal moves, a move, the end of a turn."""

from numba import njit

from thirtyone_env.actions import DISCARD0, DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS
from thirtyone_env.engine.deal import _play_until_decision
from thirtyone_env.engine.layout import (
    END_BLITZ,
    END_SHOWDOWN,
    PH_DISCARD,
    PH_DISCARD_FIRST,
    PH_OVER,
    PH_TURN,
    S_CURRENT,
    S_DECISIONS,
    S_DISCARD,
    S_DISCARD_N,
    S_DONE,
    S_FINAL_LEFT,
    S_HAND_N,
    S_KNOCKER,
    S_KNOWN,
    S_LAST_ACTION,
    S_LAST_SEAT,
    S_MOVED,
    S_MOVED_N,
    S_PASSED,
    S_PHASE,
    S_TAKEN,
    S_THROWN,
    S_TURNS,
)
from thirtyone_env.engine.settle import _settle
from thirtyone_env.engine.table import (
    _add_card,
    _count_in_play,
    _draw_stock,
    _hand,
    _next_in_play,
    _push_discard,
    _remove_card,
    _seat_blitz,
    _seat_value2,
)
from thirtyone_env.jit import INLINE, JIT
from thirtyone_env.rules import (
    P_DISCARD_FIRST,
    P_KNOCK_FIRST_ROUND,
    P_KNOCK_MIN2,
    P_MAX_TURNS,
    P_MAY_PASS,
    P_MAY_RETURN,
)


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
def _record_move(s, record, card, seat):
    """Set ``seat``'s bit for ``card`` in ``record`` (``S_THROWN`` or ``S_PASSED``); a card's first move
    this deal also lists it in ``S_MOVED``, so that observations visit only the cards moved."""
    if s[S_THROWN + card] == 0 and s[S_PASSED + card] == 0:
        s[S_MOVED + s[S_MOVED_N]] = card
        s[S_MOVED_N] += 1
    s[record + card] |= 1 << seat


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
        if action != DRAW_DISCARD and s[S_DISCARD_N] > 0:  # the seat leaves the discard top
            _record_move(s, S_PASSED, s[S_DISCARD + s[S_DISCARD_N] - 1], seat)
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
        _record_move(s, S_THROWN, card, seat)
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
