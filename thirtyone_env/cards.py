"""Decks, card ids and card text (RULES.md section 1).

Card id = ``suit_index * ranks_per_suit + rank_index``; ranks run low to high.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Deck:
    """One deck: its ranks (low to high), suit letters and the value of each rank."""

    name: str
    ranks: tuple[str, ...]
    suits: tuple[str, ...]
    rank_values: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.ranks) * len(self.suits)

    @property
    def ranks_per_suit(self) -> int:
        return len(self.ranks)

    def card_id(self, rank: int, suit: int) -> int:
        return suit * len(self.ranks) + rank

    def rank_of(self, card: int) -> int:
        return card % len(self.ranks)

    def suit_of(self, card: int) -> int:
        return card // len(self.ranks)

    def value_of(self, card: int) -> int:
        return self.rank_values[self.rank_of(card)]

    def card_values(self) -> np.ndarray:
        """Card value by card id, for the engine's lookup tables."""
        return np.array([self.value_of(c) for c in range(self.size)], dtype=np.int64)


DECKS: dict[str, Deck] = {
    "french52": Deck(
        name="french52",
        ranks=("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"),
        suits=("C", "D", "H", "S"),
        rank_values=(2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11),
    ),
    "italian40": Deck(
        name="italian40",
        ranks=("2", "3", "4", "5", "6", "7", "J", "Q", "K", "A"),
        suits=("B", "C", "D", "S"),
        rank_values=(2, 3, 4, 5, 6, 7, 10, 10, 10, 11),
    ),
}


def get_deck(deck: str | Deck) -> Deck:
    if isinstance(deck, Deck):
        return deck
    try:
        return DECKS[deck]
    except KeyError:
        raise ValueError(f"unknown deck {deck!r}; allowed: {sorted(DECKS)}") from None


def card_str(card: int, deck: str | Deck = "french52") -> str:
    """Text of a card id, e.g. ``card_str(51) == "AS"``."""
    d = get_deck(deck)
    if not 0 <= int(card) < d.size:
        raise ValueError(f"card id {card} out of range 0..{d.size - 1} for deck {d.name!r}")
    return d.ranks[d.rank_of(int(card))] + d.suits[d.suit_of(int(card))]


def cards_str(cards, deck: str | Deck = "french52") -> str:
    return " ".join(card_str(c, deck) for c in cards)


def parse_card(token: str, deck: str | Deck = "french52") -> int:
    """Card id of one token such as ``"AS"``, ``"10h"`` or ``"TH"`` (case-insensitive)."""
    d = get_deck(deck)
    text = token.strip().upper()
    rank_text, suit_text = text[:-1], text[-1:]
    if rank_text == "T" and "10" in d.ranks:
        rank_text = "10"
    if rank_text not in d.ranks or suit_text not in d.suits:
        raise ValueError(
            f"unknown card {token!r} for deck {d.name!r} "
            f"(ranks {' '.join(d.ranks)}; suits {' '.join(d.suits)})"
        )
    return d.card_id(d.ranks.index(rank_text), d.suits.index(suit_text))


def parse_cards(text: str, deck: str | Deck = "french52") -> list[int]:
    """Card ids of space- or comma-separated card text, e.g. ``parse_cards("AS KS 10S")``."""
    cards: list[int] = []
    for token in text.replace(",", " ").split():
        card = parse_card(token, deck)
        if card in cards:
            raise ValueError(f"duplicate card {token!r} in {text!r}")
        cards.append(card)
    return cards
