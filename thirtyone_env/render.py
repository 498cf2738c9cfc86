"""Text of a table for people: what ``render_mode="ansi"`` returns and ``"human"`` prints."""

from __future__ import annotations

import numpy as np

from thirtyone_env import engine as G
from thirtyone_env.cards import card_str, cards_str
from thirtyone_env.rules import Rules

ACTION_NAMES = {G.DRAW_STOCK: "draw stock", G.DRAW_DISCARD: "take discard", G.KNOCK: "knock", G.PASS: "pass"}


def action_name(action: int, deck: str) -> str:
    """``draw stock``, ``take discard``, ``knock``, ``pass`` or ``throw QS``."""
    action = int(action)
    if action in ACTION_NAMES:
        return ACTION_NAMES[action]
    return f"throw {card_str(action - G.DISCARD0, deck)}"


def hand_cards(state: np.ndarray, seat: int) -> list[int]:
    base = G.S_HANDS + 4 * seat
    return [int(c) for c in state[base : base + state[G.S_HAND_N + seat]]]


def hand_value(state: np.ndarray, rules: Rules, seat: int) -> float:
    return G._seat_value2(state, rules.params(), seat) / 2


def render_table(state: np.ndarray, rules: Rules, show_seat: int | None = None) -> str:
    """The table as text; ``show_seat`` hides every other hand (None shows all)."""
    n = int(state[G.S_NUM_PLAYERS])
    deck = rules.deck
    unit = "chips" if rules.economy == "pot" else "lives"
    lines = [f"Thirty-one ({rules.name}), deal {state[G.S_DEALS]}, turn {state[G.S_TURNS]}"]
    for seat in range(n):
        status = {G.OUT: "out", G.IN_PLAY: "", G.ON_HONOR: "on honor"}[int(state[G.S_STATUS + seat])]
        marks = [m for m in (
            "dealer" if state[G.S_DEALER] == seat else "",
            "knocked" if state[G.S_KNOCKER] == seat else "",
            "to act" if state[G.S_CURRENT] == seat and not state[G.S_DONE] else "",
            status,
        ) if m]
        if show_seat is None or show_seat == seat:
            cards = hand_cards(state, seat)
            hand = f"{cards_str(cards, deck):<14} ({hand_value(state, rules, seat):g})" if cards else "-"
        else:
            hand = "?? ?? ??"
        lines.append(
            f"  player_{seat}: {hand:<22} {unit}: {state[G.S_CHIPS + seat]:>3}  {', '.join(marks)}"
        )
    dn = int(state[G.S_DISCARD_N])
    top = card_str(int(state[G.S_DISCARD + dn - 1]), deck) if dn else "-"
    lines.append(f"  discard: {top}   stock: {state[G.S_STOCK_N]} cards   pot: {state[G.S_POT]}")
    if state[G.S_LAST_SEAT] >= 0:
        lines.append(
            f"  last: player_{state[G.S_LAST_SEAT]} {action_name(state[G.S_LAST_ACTION], deck)}"
        )
    if state[G.S_DONE]:
        lines.append("  match over")
    return "\n".join(lines)
