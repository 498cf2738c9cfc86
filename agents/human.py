"""``HumanAgent``: a person plays in the terminal (or any ``input_fn`` / ``print_fn`` pair).

Each decision prints what the seat may know (hand and its value, discard top,
lives or chips of everyone, who knocked) and the legal moves, numbered. The
answer may be the number or the move's name, case-insensitive: ``draw stock``
(``d``, ``draw``, ``stock``), ``take 9C`` (``t``, ``take``), ``knock`` (``k``),
``pass`` (``p``), ``throw QS`` (or just ``qs``). Anything else is refused with a
message and asked again.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.base import BaseAgent
from thirtyone_env import encoding
from thirtyone_env.actions import DISCARD0, DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS
from thirtyone_env.cards import card_str, parse_card
from thirtyone_env.rules import Rules

ALIASES = {
    DRAW_STOCK: ("draw stock", "draw", "stock", "d", "s"),
    DRAW_DISCARD: ("take", "take discard", "t"),
    KNOCK: ("knock", "k"),
    PASS: ("pass", "p"),
}


class HumanAgent(BaseAgent):
    """Asks a person for every move; ``input_fn`` and ``print_fn`` make it scriptable."""

    def __init__(
        self,
        rules: str | Rules = "scat",
        num_players: int = 2,
        seed: int | None = None,
        input_fn: Callable[[str], str] = input,
        print_fn: Callable[[str], None] = print,
    ):
        super().__init__(rules, num_players, seed)
        self.input_fn = input_fn
        self.print_fn = print_fn
        self.deck = self.rules.deck

    # -- what the person sees -------------------------------------------------------------
    def move_name(self, action: int, obs: np.ndarray) -> str:
        if action == DRAW_DISCARD:
            top = np.flatnonzero(self._views(obs)["discard_top"])
            return f"take {card_str(int(top[0]), self.deck)}" if top.size else "take discard"
        if action >= DISCARD0:
            return f"throw {card_str(action - DISCARD0, self.deck)}"
        return {DRAW_STOCK: "draw stock", KNOCK: "knock", PASS: "pass"}[action]

    def _views(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return encoding.views(obs, self.deck_size, self.num_players)

    def describe(self, obs: np.ndarray) -> str:
        """The seat's view as text."""
        v = self._views(obs)
        unit = "chips" if self.rules.economy == "pot" else "lives"
        cards = " ".join(card_str(int(c), self.deck) for c in np.flatnonzero(v["hand"]))
        top = np.flatnonzero(v["discard_top"])
        lines = [
            f"Your hand: {cards}  (value {int(v['hand_value'][0]) / 2:g})",
            f"Discard: {card_str(int(top[0]), self.deck) if top.size else '-'}   "
            f"stock: {int(v['stock_size'][0])} cards",
        ]
        taken = np.flatnonzero(v["taken"])
        if taken.size:
            lines.append(f"You took {card_str(int(taken[0]), self.deck)} (it must stay this turn)")
        marks = [m for m, on in (("on honor", v["own_on_honor"][0]), ("dealer", v["own_dealer"][0])) if on]
        lines.append(f"You: {int(v['own_chips'][0])} {unit}" + (f" ({', '.join(marks)})" if marks else ""))
        for rel in range(self.num_players - 1):
            where = "your left" if rel == 0 else f"{rel + 1} seats to your left"
            if not v["opp_in_play"][rel]:
                lines.append(f"Opponent {rel + 1} ({where}): out")
                continue
            flags = [m for m, key in (("on honor", "opp_on_honor"), ("dealer", "opp_dealer"),
                                      ("KNOCKED", "opp_knocked")) if v[key][rel]]
            known = np.flatnonzero(v["opp_known"][rel * self.deck_size : (rel + 1) * self.deck_size])
            holds = f", holds {' '.join(card_str(int(c), self.deck) for c in known)}" if known.size else ""
            lines.append(
                f"Opponent {rel + 1} ({where}): {int(v['opp_chips'][rel])} {unit}"
                + (f" ({', '.join(flags)})" if flags else "") + holds
            )
        if v["final_round"][0]:
            lines.append(f"Final round: {int(v['final_turns_left'][0])} turn(s) left")
        if self.rules.economy == "pot":
            lines.append(f"Pot: {int(v['pot'][0])}")
        return "\n".join(lines)

    # -- asking ---------------------------------------------------------------------------
    def parse(self, answer: str, legal: list[int], obs: np.ndarray) -> int | None:
        """The legal action an answer names, or None."""
        text = " ".join(answer.strip().lower().split())
        if not text:
            return None
        if text.isdigit():
            k = int(text)
            return legal[k - 1] if 1 <= k <= len(legal) else None
        for action in legal:
            if text == self.move_name(action, obs).lower() or text in ALIASES.get(action, ()):
                return action
        card_text = text.removeprefix("throw ").removeprefix("take ").strip()
        try:
            card = parse_card(card_text, self.deck)
        except ValueError:
            return None
        if DISCARD0 + card in legal and not text.startswith("take "):
            return DISCARD0 + card
        return None

    def act(self, obs: dict) -> int:
        row, mask = self._check_one(obs)
        legal = [int(a) for a in np.flatnonzero(mask)]
        names = [self.move_name(a, row) for a in legal]
        self.print_fn(self.describe(row))
        self.print_fn("Moves: " + "  ".join(f"{i + 1}) {name}" for i, name in enumerate(names)))
        while True:
            answer = self.input_fn("Your move: ")
            action = self.parse(answer, legal, row)
            if action is not None:
                return action
            self.print_fn(
                f"{answer.strip()!r} is not a legal move here; type a number 1-{len(legal)} "
                f"or one of: {', '.join(names)}"
            )

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = self._check_batch(obs, mask)
        return np.array(
            [self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask, strict=True)], np.int64
        )
