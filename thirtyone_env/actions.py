"""Action ids (RULES.md section 7), the same for every deck: ``4 + card id`` discards that card."""

from __future__ import annotations

from enum import IntEnum

from thirtyone_env.cards import Deck, card_str


class Action(IntEnum):
    DRAW_STOCK = 0
    DRAW_DISCARD = 1
    KNOCK = 2
    PASS = 3
    DISCARD0 = 4  # DISCARD0 + card id throws that card


# plain ints for numba kernels
DRAW_STOCK, DRAW_DISCARD, KNOCK, PASS, DISCARD0 = (int(a) for a in Action)

ACTION_NAMES = {DRAW_STOCK: "draw stock", DRAW_DISCARD: "take discard", KNOCK: "knock", PASS: "pass"}


def num_actions(deck_size: int) -> int:
    return DISCARD0 + deck_size


def discard(card: int) -> int:
    """The action id that throws ``card``."""
    return DISCARD0 + int(card)


def action_name(action: int, deck: str | Deck = "french52") -> str:
    """``draw stock``, ``take discard``, ``knock``, ``pass`` or ``throw QS``."""
    action = int(action)
    if action in ACTION_NAMES:
        return ACTION_NAMES[action]
    return f"throw {card_str(action - DISCARD0, deck)}"
