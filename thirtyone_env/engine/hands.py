"""Hand values and blitzes (RULES.md section 2): the only copy of these rules.

Values are doubled so that half points (30.5) compare exactly as integers. The jitted
functions take the rules' parameter vector (``Rules.params()``) and are public: agents call
them from their own kernels instead of re-implementing a rule. ``hand_value`` and
``is_blitz`` are the same rules for plain Python callers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from thirtyone_env.jit import INLINE
from thirtyone_env.rules import (
    P_ACE_RANK,
    P_BLITZ_AKT,
    P_KING_RANK,
    P_RANK_OF,
    P_RANKS,
    P_SUIT_OF,
    P_TEN_RANK,
    P_THREE_ACES2,
    P_TOAK2,
    P_VALUES,
    Rules,
)


@njit(**INLINE)
def triple_value2(card, params):
    """Doubled value of three cards of ``card``'s rank when that is a special hand, else 0:
    three aces (``three_aces``) or any three of a kind (``three_of_a_kind``, worth at least
    the suit rule's value of one card)."""
    if params[P_RANK_OF + card] == params[P_ACE_RANK] and params[P_THREE_ACES2] > 0:
        return params[P_THREE_ACES2]
    if params[P_TOAK2] > 0:
        return max(params[P_TOAK2], 2 * params[P_VALUES + card])
    return 0


@njit(**INLINE)
def hand_value2(c0, c1, c2, params):
    """Doubled value of a three-card hand."""
    r0 = params[P_RANK_OF + c0]
    if r0 == params[P_RANK_OF + c1] and r0 == params[P_RANK_OF + c2]:
        special = triple_value2(c0, params)
        if special > 0:
            return special
    s0, s1, s2 = params[P_SUIT_OF + c0], params[P_SUIT_OF + c1], params[P_SUIT_OF + c2]
    v0, v1, v2 = params[P_VALUES + c0], params[P_VALUES + c1], params[P_VALUES + c2]
    # the best suit is the suit of one of the cards: take each card's suit total, without
    # branches (random hands make branches mispredict, which costs more than the arithmetic)
    t0 = v0 + v1 * (s1 == s0) + v2 * (s2 == s0)
    t1 = v1 + v0 * (s0 == s1) + v2 * (s2 == s1)
    t2 = v2 + v0 * (s0 == s2) + v1 * (s1 == s2)
    return 2 * max(t0, max(t1, t2))


@njit(**INLINE)
def best_value2(cards, n, params):
    """Doubled value of the best three of ``n`` cards (n = 3 or 4); suit sum for fewer."""
    if n == 3:
        return hand_value2(cards[0], cards[1], cards[2], params)
    if n == 4:
        a, b, c, d = cards[0], cards[1], cards[2], cards[3]
        return max(
            max(hand_value2(b, c, d, params), hand_value2(a, c, d, params)),
            max(hand_value2(a, b, d, params), hand_value2(a, b, c, params)),
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
def is_blitz2(c0, c1, c2, params):
    """A blitz under the rules' ``blitz`` option: any 31, or only A-K-10 of one suit."""
    if params[P_BLITZ_AKT] == 0:
        return hand_value2(c0, c1, c2, params) == 62
    suit = params[P_SUIT_OF + c0]
    if suit != params[P_SUIT_OF + c1] or suit != params[P_SUIT_OF + c2]:
        return False
    want = (1 << params[P_ACE_RANK]) | (1 << params[P_KING_RANK]) | (1 << params[P_TEN_RANK])
    have = (1 << params[P_RANK_OF + c0]) | (1 << params[P_RANK_OF + c1]) | (1 << params[P_RANK_OF + c2])
    return have == want


def _cards(cards: Sequence[int], rules: Rules) -> np.ndarray:
    out = np.asarray([int(c) for c in cards], np.int64)
    if not 1 <= len(out) <= 4 or ((out < 0) | (out >= rules.deck_size)).any() or len(set(out)) != len(out):
        raise ValueError(f"a hand is 1-4 distinct card ids in 0..{rules.deck_size - 1}, got {list(cards)}")
    return out


def hand_value(cards: Sequence[int], rules: str | Rules = "scat") -> float:
    """Value of a hand (the best three of four while holding four), e.g. 30.5 for three aces in scat."""
    rules = Rules.resolve(rules)
    c = _cards(cards, rules)
    return best_value2(c, len(c), rules.params()) / 2


def is_blitz(cards: Sequence[int], rules: str | Rules = "scat") -> bool:
    """Whether three cards are a blitz (an immediate win) under ``rules``."""
    rules = Rules.resolve(rules)
    c = _cards(cards, rules)
    if len(c) != 3:
        raise ValueError(f"a blitz is a three-card hand, got {len(c)} cards")
    return bool(is_blitz2(c[0], c[1], c[2], rules.params()))
