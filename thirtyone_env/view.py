"""``TableView``: one table as plain data, for people (text, pictures, the web page, replays).

Built by ``Tables.view(i)``; ``for_seat(seat)`` hides what that seat may not see.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

SEAT_STATUS = ("out", "in play", "on honor")
PHASES = ("turn", "discard", "discard first", "over")
DEAL_ENDS = ("none", "blitz", "showdown")


@dataclass(frozen=True)
class TableView:
    """Everything on one table. ``hands[seat]`` is None where hidden; ``stock`` is None where hidden."""

    rules_name: str
    deck: str
    economy: str  # "pot" or "lives"
    num_players: int
    deal: int  # deals begun this match (1 = the first)
    turn: int  # completed turns this deal
    dealer: int
    current: int  # the seat to act, -1 once the match is over
    phase: str  # one of PHASES
    knocker: int  # -1 = nobody knocked this deal
    final_turns_left: int
    chips: tuple[int, ...]  # lives or chips per seat
    status: tuple[str, ...]  # one of SEAT_STATUS per seat
    hands: tuple[tuple[int, ...] | None, ...]
    hand_values: tuple[float | None, ...]
    known: tuple[tuple[int, ...], ...]  # per seat: held cards it took from the discard pile (public)
    taken: int  # card taken from the discard pile this turn, -1 = none
    discard: tuple[int, ...]  # discard pile, oldest first, top last
    stock_size: int
    stock: tuple[int, ...] | None  # top first
    pot: int
    last_seat: int  # who made the last decision, -1 = nobody yet
    last_action: int
    last_end: str  # how the last settled deal ended: one of DEAL_ENDS
    done: bool
    viewer: int | None = None  # None = everything visible

    @property
    def discard_top(self) -> int:
        return self.discard[-1] if self.discard else -1

    def for_seat(self, seat: int | None) -> TableView:
        """What ``seat`` sees: its own hand, the public cards, no stock order (None: everything)."""
        if seat is None:
            return self
        hands = tuple(h if s == seat else None for s, h in enumerate(self.hands))
        values = tuple(v if s == seat else None for s, v in enumerate(self.hand_values))
        return replace(self, hands=hands, hand_values=values, stock=None, viewer=seat)
