"""What replays and the table drawing need from inside one table: the decks it deals, its random
state, and the hands at the end of a deal (before the next deal replaces them).

A step can settle a deal and deal the next ones (a dealt blitz settles at once), so the decks
cannot be read from the table between steps. ``DealTracker`` follows the table's random stream
instead: it replays each shuffle the engine made during a reset or a step on a scratch copy
(``_fill_deck``, the engine's own code), then checks that its copy of the random state and the
current deal's deck agree with the table's. ``deal_end`` plays a step on a scratch copy that
stops after the settlement, so the showdown hands and payments can be shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from thirtyone_env.actions import DISCARD0, DRAW_STOCK
from thirtyone_env.engine.deal import _fill_deck
from thirtyone_env.engine.hands import hand_value
from thirtyone_env.engine.layout import (
    END_BLITZ,
    MAXP,
    PH_DISCARD_FIRST,
    PH_TURN,
    S_CHIPS,
    S_DEALS,
    S_DISCARD_N,
    S_DONE,
    S_EPISODE_DEAL,
    S_HAND_N,
    S_HANDS,
    S_KNOCKER,
    S_LAST_END,
    S_PHASE,
    S_QLEN,
    S_QPOS,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
    STATE_SIZE,
)
from thirtyone_env.engine.rng import rand_below, shuffle
from thirtyone_env.engine.tables import Tables
from thirtyone_env.engine.turn import _step
from thirtyone_env.rules import P_DECK_SIZE, P_DISCARD_FIRST, P_REFILL_SHUFFLE
from thirtyone_env.view import SEAT_STATUS

MAX_VOID_DEALS = 6  # dealt blitzes that void a match's start, searched for after a reset


def rng_words(tables: Tables, i: int) -> list[int]:
    """Table ``i``'s random state (four 32-bit words): with it a match replays exactly."""
    return [int(w) for w in tables._rngs[i]]


def set_rng_words(tables: Tables, i: int, words: list[int]) -> None:
    words = [int(w) for w in words]
    if len(words) != 4 or not all(0 <= w < 2**32 for w in words) or not any(words):
        raise ValueError(f"rng state {words!r} is invalid; allowed: four 32-bit words, not all zero")
    tables._rngs[i] = words


def stacked_decks(tables: Tables, i: int) -> list[list[int]]:
    """The decks stacked on table ``i`` by ``reset(decks=...)``, top first."""
    return [[int(c) for c in row if c >= 0] for row in tables._decks[i]]


def _deck_in_slots(s: np.ndarray, d: int) -> list[int]:
    """The deck a deal was dealt from, top first (dealing reads the stock slots, never moves them)."""
    return [int(s[S_STOCK + d - 1 - k]) for k in range(d)]


class DealTracker:
    """Follows one table's deals: ``before()`` ahead of a reset or step, then ``after_*`` returns
    the decks dealt meanwhile (top first, one per deal, dealt blitzes included)."""

    def __init__(self, tables: Tables, i: int):
        self.tables, self.i = tables, i
        self._state = np.zeros(STATE_SIZE, np.int32)
        self._rng = np.zeros(4, np.int64)

    def before(self) -> None:
        self._state[:] = self.tables._states[self.i]
        self._rng[:] = self.tables._rngs[self.i]

    def after_reset(self, dealer: int) -> list[list[int]]:
        """Decks of the match's deals so far. Deals voided by a blitz before the first decision
        are searched for (how many, and in which order with the dealer draws)."""
        t, s = self.tables, self.tables._states[self.i]
        deals = int(s[S_DEALS])
        for voids in _void_patterns(dealer < 0):
            decks, rng = self._replay_reset(voids, deals, dealer)
            if self._agrees(rng, decks):
                return decks
        raise RuntimeError(f"replay: could not follow table {self.i}'s deals after reset "
                           f"(more than {MAX_VOID_DEALS} voided deals?); rules {t.rules.name}")

    def after_step(self, action: int) -> list[list[int]]:
        t = self.tables
        params, s0 = t._params, self._state
        rng = self._rng.copy()
        scratch = s0.copy()
        # a draw from an empty stock refills it first (section 3.5); a shuffled refill uses the rng
        if params[P_REFILL_SHUFFLE] and s0[S_STOCK_N] == 0 and not s0[S_DONE]:
            draws = (s0[S_PHASE] == PH_TURN and action == DRAW_STOCK and not params[P_DISCARD_FIRST]) or (
                s0[S_PHASE] == PH_DISCARD_FIRST and action >= DISCARD0)
            if draws:
                rest = int(s0[S_DISCARD_N]) - 1 + int(s0[S_PHASE] == PH_DISCARD_FIRST)
                shuffle(rng, np.zeros(max(rest, 1), np.int32), rest)
        new = int(t._states[self.i, S_DEALS]) - int(s0[S_DEALS])
        if new < 0:  # the step began a new match (autoreset): not how replays are recorded
            raise RuntimeError("replay: the table reset itself during a step; record with autoreset=False")
        decks = self._fill(scratch, rng, new)
        if not self._agrees(rng, decks):
            raise RuntimeError(f"replay: could not follow table {self.i}'s deals at this step (action {action})")
        return decks

    # -- internals ----------------------------------------------------------------------------------
    def _fill(self, scratch: np.ndarray, rng: np.ndarray, count: int) -> list[list[int]]:
        t = self.tables
        d = int(t._params[P_DECK_SIZE])
        out = []
        for _ in range(count):
            _fill_deck(scratch, rng, t._decks[self.i], t._params)
            out.append(_deck_in_slots(scratch, d))
        return out

    def _replay_reset(self, voids: tuple[int, ...], deals: int, dealer: int) -> tuple[list[list[int]], np.ndarray]:
        t = self.tables
        rng = self._rng.copy()
        scratch = np.zeros(STATE_SIZE, np.int32)
        scratch[S_QPOS], scratch[S_QLEN] = 0, t._decks.shape[1]
        decks: list[list[int]] = []
        for count in (*voids, deals):
            if dealer < 0:
                rand_below(rng, t.num_players)  # the dealer draw
            decks = self._fill(scratch, rng, count)  # voided deals are not part of the match
        return decks, rng

    def _agrees(self, rng: np.ndarray, decks: list[list[int]]) -> bool:
        t, s = self.tables, self.tables._states[self.i]
        if not np.array_equal(rng, t._rngs[self.i]):
            return False
        return not decks or decks[-1] == _deck_in_slots(s, int(t._params[P_DECK_SIZE]))


def _void_patterns(draws_dealer: bool):
    """Numbers of deals in the voided starts before the match's own: none first, then more."""
    yield ()
    for total in range(1, MAX_VOID_DEALS + 1):
        if not draws_dealer:  # without dealer draws only the total matters
            yield (total,)
            continue
        for cuts in product((0, 1), repeat=total - 1):  # compositions of total
            parts, run = [], 1
            for cut in cuts:
                if cut:
                    parts.append(run)
                    run = 1
                else:
                    run += 1
            yield (*parts, run)


@dataclass(frozen=True)
class DealEnd:
    """A settled deal as the table stood at the settlement (every hand shown)."""

    kind: str  # "blitz" or "showdown"
    hands: tuple[tuple[int, ...], ...]
    values: tuple[float | None, ...]
    chips_before: tuple[int, ...]
    chips_after: tuple[int, ...]
    status_after: tuple[str, ...]
    knocker: int


def deal_end(tables: Tables, i: int, action: int) -> DealEnd | None:
    """What settling would show if the legal ``action`` ends table ``i``'s deal, else None.

    The step runs on a scratch copy marked as a one-deal episode, so it stops after the
    settlement instead of dealing again; the table itself is not touched.
    """
    s0 = tables._states[i]
    if s0[S_DONE]:
        return None
    s = s0.copy()
    s[S_EPISODE_DEAL] = 1
    rng = tables._rngs[i].copy()
    rewards = np.zeros(MAXP, np.float64)
    _step(s, rng, tables._decks[i], tables._params, int(action), rewards)
    if not s[S_DONE] or int(s[S_DEALS]) != int(s0[S_DEALS]):
        return None
    n = tables.num_players
    hands = tuple(tuple(int(c) for c in s[S_HANDS + 4 * p : S_HANDS + 4 * p + s[S_HAND_N + p]]) for p in range(n))
    return DealEnd(
        kind="blitz" if s[S_LAST_END] == END_BLITZ else "showdown",
        hands=hands,
        values=tuple(hand_value(list(h), tables.rules) if h else None for h in hands),
        chips_before=tuple(int(c) for c in s0[S_CHIPS : S_CHIPS + n]),
        chips_after=tuple(int(c) for c in s[S_CHIPS : S_CHIPS + n]),
        status_after=tuple(SEAT_STATUS[int(x)] for x in s[S_STATUS : S_STATUS + n]),
        knocker=int(s[S_KNOCKER]),
    )
