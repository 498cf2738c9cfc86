"""Observation layout, declared once as data.

An observation is one flat ``int8`` vector, the concatenation of the pieces
below for the seat that observes (``D`` = deck size, ``n`` = players).
Opponent pieces list opponents in seat order starting left of the observer.
Counts above 127 saturate. ``scale(...)`` divides each entry into about [0, 1]
for networks. The engine kernel writes the vector from ``offsets(...)``.
"""

from __future__ import annotations

import numpy as np

# piece ids (the engine reads offsets[piece])
HAND, TAKEN, DISCARD_TOP, DISCARD_PILE, DISCARD_SEEN = 0, 1, 2, 3, 4
OPP_KNOWN, OPP_CHIPS, OPP_IN_PLAY, OPP_ON_HONOR, OPP_KNOCKED, OPP_DEALER = 5, 6, 7, 8, 9, 10
OWN_CHIPS, OWN_ON_HONOR, OWN_DEALER, PHASE = 11, 12, 13, 14
FINAL_ROUND, FINAL_TURNS_LEFT, FIRST_ROUND, STOCK_SIZE, POT, HAND_VALUE, TURNS = (
    15, 16, 17, 18, 19, 20, 21,
)
THROW_VALUE, TAKE_VALUE = 22, 23
OPP_THROWN, OPP_PASSED = 24, 25
NUM_PIECES = 26
#: pieces of the layout before the opponents' moves were added (policy files of that layout still load)
NUM_PIECES_V1 = 24

#: (name, size as a function of (D, n), scale divisor as a function of (D, n, chips), meaning)
PIECES = [
    ("hand", lambda d, n: d, lambda d, n, c: 1, "own cards (4 while discarding after a draw)"),
    ("taken", lambda d, n: d, lambda d, n, c: 1, "card taken from the discard pile this turn"),
    ("discard_top", lambda d, n: d, lambda d, n, c: 1, "top card of the discard pile"),
    ("discard_pile", lambda d, n: d, lambda d, n, c: 1, "every card now in the discard pile"),
    ("discard_seen", lambda d, n: d, lambda d, n, c: 1, "every card seen in the discard pile this deal"),
    ("opp_known", lambda d, n: (n - 1) * d, lambda d, n, c: 1,
     "per opponent: cards it took from the discard pile and still holds"),
    ("opp_chips", lambda d, n: n - 1, lambda d, n, c: c, "per opponent: lives or chips"),
    ("opp_in_play", lambda d, n: n - 1, lambda d, n, c: 1, "per opponent: still in the match"),
    ("opp_on_honor", lambda d, n: n - 1, lambda d, n, c: 1, "per opponent: playing on honor"),
    ("opp_knocked", lambda d, n: n - 1, lambda d, n, c: 1, "per opponent: knocked this deal"),
    ("opp_dealer", lambda d, n: n - 1, lambda d, n, c: 1, "per opponent: is the dealer"),
    ("own_chips", lambda d, n: 1, lambda d, n, c: c, "own lives or chips"),
    ("own_on_honor", lambda d, n: 1, lambda d, n, c: 1, "own on-honor flag"),
    ("own_dealer", lambda d, n: 1, lambda d, n, c: 1, "observer is the dealer"),
    ("phase", lambda d, n: 3, lambda d, n, c: 1,
     "one-hot: choose draw/knock/pass, discard after a draw, discard before the stock draw"),
    ("final_round", lambda d, n: 1, lambda d, n, c: 1, "someone knocked: this is the final round"),
    ("final_turns_left", lambda d, n: 1, lambda d, n, c: max(n - 1, 1),
     "turns left in the final round"),
    ("first_round", lambda d, n: 1, lambda d, n, c: 1, "not every player has had a turn yet"),
    ("stock_size", lambda d, n: 1, lambda d, n, c: d, "cards in the stock"),
    ("pot", lambda d, n: 1, lambda d, n, c: c, "chips in the pot"),
    ("hand_value", lambda d, n: 1, lambda d, n, c: 62,
     "own hand value, doubled (best three cards while holding four)"),
    ("turns", lambda d, n: 1, lambda d, n, c: 127, "completed turns this deal (saturates at 127)"),
    ("throw_value", lambda d, n: d, lambda d, n, c: 62,
     "while discarding: per held card, the doubled value of the cards kept if it is thrown"),
    ("take_value", lambda d, n: 1, lambda d, n, c: 62,
     "while choosing a draw: doubled value of the best hand that keeps the discard top"),
    ("opp_thrown", lambda d, n: (n - 1) * d, lambda d, n, c: 1, "per opponent: cards it threw this deal"),
    ("opp_passed", lambda d, n: (n - 1) * d, lambda d, n, c: 1,
     "per opponent: discard tops it left there this deal (drew from the stock, knocked or passed)"),
]
assert len(PIECES) == NUM_PIECES


def offsets(deck_size: int, num_players: int) -> np.ndarray:
    """Start of each piece, plus the total length as the last entry."""
    sizes = [size(deck_size, num_players) for _, size, _, _ in PIECES]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def obs_dim(deck_size: int, num_players: int) -> int:
    return int(offsets(deck_size, num_players)[-1])


def obs_dim_v1(deck_size: int, num_players: int) -> int:
    """Length of the first layout, without the opponents' moves (``opp_thrown``, ``opp_passed``): the
    new pieces were appended, so a first-layout vector is a prefix of today's."""
    return int(offsets(deck_size, num_players)[NUM_PIECES_V1])


def scale(deck_size: int, num_players: int, total_chips: int) -> np.ndarray:
    """Per-entry divisors (float32) that bring an observation into about [0, 1]."""
    parts = []
    for _, size, divisor, _ in PIECES:
        parts.append(np.full(size(deck_size, num_players), divisor(deck_size, num_players, total_chips)))
    return np.concatenate(parts).astype(np.float32)


def views(obs: np.ndarray, deck_size: int, num_players: int) -> dict[str, np.ndarray]:
    """Named views into one observation (or a batch of them, last axis)."""
    off = offsets(deck_size, num_players)
    return {name: obs[..., off[i] : off[i + 1]] for i, (name, _, _, _) in enumerate(PIECES)}


def table(deck_size: int, num_players: int) -> str:
    """The layout as a Markdown table (the README's observation table is made by this)."""
    off = offsets(deck_size, num_players)
    rows = ["| slice | piece | meaning |", "|---|---|---|"]
    for i, (name, _, _, meaning) in enumerate(PIECES):
        rows.append(f"| {off[i]}:{off[i + 1]} | `{name}` | {meaning} |")
    return "\n".join(rows)
