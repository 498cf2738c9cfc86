"""Text of a table for people: what ``render_mode="ansi"`` returns and ``"human"`` prints."""

from __future__ import annotations

from thirtyone_env.actions import action_name
from thirtyone_env.cards import cards_str
from thirtyone_env.view import TableView

__all__ = ["action_name", "render_table"]


def render_table(view: TableView) -> str:
    """The table as text; hands the view hides show as ``?? ?? ??`` (``TableView.for_seat``)."""
    deck = view.deck
    unit = "chips" if view.economy == "pot" else "lives"
    lines = [f"Thirty-one ({view.rules_name}), deal {view.deal}, turn {view.turn}"]
    for seat in range(view.num_players):
        status = {"out": "out", "in play": "", "on honor": "on honor"}[view.status[seat]]
        marks = [m for m in (
            "dealer" if view.dealer == seat else "",
            "knocked" if view.knocker == seat else "",
            "to act" if view.current == seat else "",
            status,
        ) if m]
        cards = view.hands[seat]
        if cards is None:
            hand = "?? ?? ??"
        elif cards:
            hand = f"{cards_str(cards, deck):<14} ({view.hand_values[seat]:g})"
        else:
            hand = "-"
        lines.append(f"  player_{seat}: {hand:<22} {unit}: {view.chips[seat]:>3}  {', '.join(marks)}")
    top = cards_str([view.discard_top], deck) if view.discard else "-"
    lines.append(f"  discard: {top}   stock: {view.stock_size} cards   pot: {view.pot}")
    if view.last_seat >= 0:
        lines.append(f"  last: player_{view.last_seat} {action_name(view.last_action, deck)}")
    if view.done:
        lines.append("  match over")
    return "\n".join(lines)
