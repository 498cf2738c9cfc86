"""Shared helpers: stacked decks, scripted play by action names, table readers (``Tables`` views)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thirtyone_env import actions as A
from thirtyone_env.cards import card_str, parse_card, parse_cards
from thirtyone_env.env import raw_env
from thirtyone_env.rules import Rules

ACTION_WORDS = {"draw": A.DRAW_STOCK, "take": A.DRAW_DISCARD, "knock": A.KNOCK, "pass": A.PASS}


def stack(
    hands: Sequence[str | None], discard: str, stock: str = "", dealer: int = 0, deck: str = "french52"
) -> list[int]:
    """Card ids, top first, of a deck that deals ``hands[seat]`` to every seat.

    ``hands`` is indexed by seat (``None`` = seat out, dealt nothing); the deal goes
    one card at a time starting left of ``dealer``, three rounds, then the discard,
    then the stock top first (cards not listed are shuffled below by the engine).
    """
    n = len(hands)
    cards = {seat: parse_cards(h, deck) for seat, h in enumerate(hands) if h is not None}
    order = [(dealer + 1 + k) % n for k in range(n) if hands[(dealer + 1 + k) % n] is not None]
    top = [cards[seat][r] for r in range(3) for seat in order]
    return top + parse_cards(discard, deck) + parse_cards(stock, deck)


def table(
    rules: str | Rules = "scat", n: int = 2, decks: Sequence[Sequence[int]] = (), dealer: int = 0,
    episode: str = "match", seed: int = 0, **kwargs,
) -> raw_env:
    """A raw env reset with stacked ``decks`` and a given ``dealer``."""
    env = raw_env(num_players=n, rules=rules, episode=episode, **kwargs)
    env.reset(seed=seed, options={"decks": [list(d) for d in decks], "dealer": dealer})
    return env


def action_id(name: str, deck: str = "french52") -> int:
    """``draw``, ``take``, ``knock``, ``pass`` or a card text such as ``QS`` (= throw it)."""
    if name in ACTION_WORDS:
        return ACTION_WORDS[name]
    return A.DISCARD0 + parse_card(name, deck)


def act(env: raw_env, *names: str) -> None:
    """Step ``env`` by action names, each by the seat to act."""
    for name in names:
        env.step(action_id(name, env.rules.deck))


def seat_acts(env: raw_env, seat: int, *names: str) -> None:
    """Like ``act``, but first check that ``seat`` is the one to act."""
    assert env.agent_selection == f"player_{seat}", (env.agent_selection, seat)
    act(env, *names)


def hand(env: raw_env, seat: int) -> set[str]:
    return {card_str(c, env.rules.deck) for c in env.table.hand(0, seat)}


def chips(env: raw_env) -> list[int]:
    return env.table.chips[0].tolist()


def status(env: raw_env) -> list[int]:
    return env.table.status[0].tolist()


def legal(env: raw_env) -> set[int]:
    return set(np.flatnonzero(env.table.mask[0]).tolist())


def stock_top_first(env: raw_env) -> list[str]:
    return [card_str(c, env.rules.deck) for c in env.table.stock(0)]


def discard_pile(env: raw_env) -> list[str]:
    """Discard pile, oldest first (top last)."""
    return [card_str(c, env.rules.deck) for c in env.table.discard_pile(0)]


def rewards(env: raw_env) -> list[float]:
    return [env.rewards[a] for a in env.possible_agents]


def all_cards(tables, i: int = 0) -> list[int]:
    """Every card id in hands, stock and discard pile of table ``i`` (sorted; each id once if nothing is lost)."""
    cards: list[int] = []
    for seat in range(tables.num_players):
        cards += tables.hand(i, seat)
    return sorted(cards + tables.stock(i) + tables.discard_pile(i))


def last_end(env: raw_env) -> str:
    """How the last settled deal ended: ``"none"``, ``"blitz"`` or ``"showdown"``."""
    return env.table.view(0).last_end


def same_snapshot(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Two ``Tables.snapshot()`` results hold the same tables (state, RNGs, decks, last outputs)."""
    return a.keys() == b.keys() and all(
        a[k].shape == b[k].shape and a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a
    )
