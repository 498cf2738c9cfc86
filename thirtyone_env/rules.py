"""The ``Rules`` of one table: every option of RULES.md as one frozen dataclass.

Rules are data: the engine reads them as an integer parameter vector
(``Rules.to_params``), never as branches spread through the code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from thirtyone_env.cards import DECKS, Deck, get_deck

_CHOICES: dict[str, tuple] = {
    "deck": tuple(DECKS),
    "economy": ("pot", "lives"),
    "three_aces": ("31", "30.5", "none"),
    "blitz": ("any31", "ace_king_ten"),
    "stock_refill": ("flip", "shuffle"),
}
_BOOLS = (
    "on_honor",
    "knock_first_round",
    "final_round_may_pass",
    "knocker_wins_ties",
    "honor_tiebreak",
    "may_return_discard",
    "discard_before_stock_draw",
)


@dataclass(frozen=True)
class Rules:
    """Every rule option of RULES.md; build one with ``Rules.preset(name, **overrides)``."""

    name: str = "custom"
    deck: str = "french52"
    min_players: int = 2
    max_players: int = 9
    economy: str = "lives"
    lives: int = 3
    starting_chips: int = 20
    ante: int = 1
    on_honor: bool = False
    three_aces: str = "none"
    three_of_a_kind: float | None = None
    blitz: str = "any31"
    knock_first_round: bool = True
    knock_min_value: float | None = None
    final_round_may_pass: bool = False
    knocker_wins_ties: bool = False
    knocker_penalty: int = 1
    honor_tiebreak: bool = False
    stock_refill: str = "flip"
    may_return_discard: bool = False
    discard_before_stock_draw: bool = False
    max_turns: int = 200
    max_deals: int = 50
    _params: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._validate()
        object.__setattr__(self, "_params", _build_params(self))

    # -- construction -----------------------------------------------------------------
    @staticmethod
    def preset_names() -> list[str]:
        return list(PRESETS)

    @classmethod
    def preset(cls, name: str, /, **overrides: Any) -> Rules:
        """The rules of a named preset (RULES.md section 6), with any fields overridden."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; allowed: {list(PRESETS)}")
        base = PRESETS[name].to_dict()
        unknown = sorted(set(overrides) - set(base) - {"name"})
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}; allowed: {sorted(base)}")
        base.update(overrides)
        return cls(**base)

    @classmethod
    def resolve(cls, rules: str | Rules) -> Rules:
        """Accept a preset name or a ``Rules`` object (what every public entry point takes)."""
        if isinstance(rules, Rules):
            return rules
        if isinstance(rules, str):
            return cls.preset(rules)
        raise ValueError(f"rules must be a preset name {list(PRESETS)} or a Rules, got {rules!r}")

    def replace(self, **changes: Any) -> Rules:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every option as plain data (``Rules(**rules.to_dict()) == rules``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    # -- derived facts ------------------------------------------------------------------
    @property
    def deck_spec(self) -> Deck:
        return get_deck(self.deck)

    @property
    def deck_size(self) -> int:
        return self.deck_spec.size

    @property
    def num_actions(self) -> int:
        return 4 + self.deck_size

    @property
    def start_chips(self) -> int:
        """Chips each player starts a match with: ``starting_chips`` (pot) or ``lives``."""
        return self.starting_chips if self.economy == "pot" else self.lives

    def params(self) -> np.ndarray:
        """The integer parameter vector the engine kernels read (a copy)."""
        return self._params.copy()

    def check_num_players(self, num_players: int) -> None:
        """Refuse a player count outside the preset's range or beyond what the deck can deal."""
        if not isinstance(num_players, (int, np.integer)) or isinstance(num_players, bool):
            raise ValueError(f"num_players must be an int, got {num_players!r}")
        if not self.min_players <= num_players <= self.max_players:
            raise ValueError(
                f"num_players={num_players} outside the {self.name!r} range "
                f"{self.min_players}..{self.max_players}"
            )
        # three cards each, a discard, and enough stock that the pile can always be refilled
        if 3 * num_players + 2 > self.deck_size:
            raise ValueError(
                f"num_players={num_players} is too many for deck {self.deck!r} "
                f"({self.deck_size} cards)"
            )

    # -- validation ---------------------------------------------------------------------
    def _validate(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}={getattr(self, name)!r} is invalid; allowed: {list(allowed)}")
        for name in _BOOLS:
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name}={getattr(self, name)!r} is invalid; allowed: [True, False]")
        ints = {
            "min_players": 2,
            "max_players": 2,
            "lives": 1,
            "starting_chips": 1,
            "ante": 1,
            "knocker_penalty": 1,
            "max_turns": 1,
            "max_deals": 1,
        }
        for name, low in ints.items():
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name}={value!r} is invalid; allowed: an integer >= {low}")
        if self.min_players > self.max_players:
            raise ValueError(
                f"min_players={self.min_players} is invalid; allowed: <= max_players={self.max_players}"
            )
        if self.max_players > 10:
            raise ValueError(f"max_players={self.max_players} is invalid; allowed: 2..10")
        for name in ("three_of_a_kind", "knock_min_value"):
            value = getattr(self, name)
            if value is None:
                continue
            ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            if not ok or not 0 < value <= 31 or float(value) * 2 != int(float(value) * 2):
                raise ValueError(
                    f"{name}={value!r} is invalid; allowed: None or a whole or half number in (0, 31]"
                )
        if self.blitz == "ace_king_ten" and "10" not in self.deck_spec.ranks:
            raise ValueError(
                f"blitz='ace_king_ten' is invalid with deck={self.deck!r} (it has no 10); "
                "allowed: ['any31']"
            )


# parameter vector layout read by the engine (thirtyone_env.engine imports these names)
P_DECK_SIZE = 0
P_RANKS = 1
P_ECONOMY_LIVES = 2
P_START_CHIPS = 3
P_ANTE = 4
P_ON_HONOR = 5
P_THREE_ACES2 = 6  # doubled value of three aces, 0 = plain suit rule
P_TOAK2 = 7  # doubled value of three of a kind, 0 = none
P_BLITZ_AKT = 8
P_KNOCK_FIRST_ROUND = 9
P_KNOCK_MIN2 = 10
P_MAY_PASS = 11
P_KNOCKER_WINS_TIES = 12
P_KNOCKER_PENALTY = 13
P_HONOR_TIEBREAK = 14
P_REFILL_SHUFFLE = 15
P_MAY_RETURN = 16
P_DISCARD_FIRST = 17
P_MAX_TURNS = 18
P_MAX_DEALS = 19
P_TEN_RANK = 20  # rank index of the 10, -1 if the deck has none
P_KING_RANK = 21
P_ACE_RANK = 22
P_VALUES = 23  # card value by card id follows, 52 slots
P_SUIT_OF = P_VALUES + 52  # suit by card id, 52 slots (a lookup is cheaper than a division)
P_RANK_OF = P_SUIT_OF + 52  # rank by card id, 52 slots
NUM_PARAMS = P_RANK_OF + 52


def _build_params(rules: Rules) -> np.ndarray:
    deck = rules.deck_spec
    p = np.zeros(NUM_PARAMS, dtype=np.int64)
    p[P_DECK_SIZE] = deck.size
    p[P_RANKS] = deck.ranks_per_suit
    p[P_ECONOMY_LIVES] = rules.economy == "lives"
    p[P_START_CHIPS] = rules.start_chips
    p[P_ANTE] = rules.ante
    p[P_ON_HONOR] = rules.on_honor
    p[P_THREE_ACES2] = {"31": 62, "30.5": 61, "none": 0}[rules.three_aces]
    p[P_TOAK2] = 0 if rules.three_of_a_kind is None else int(round(2 * float(rules.three_of_a_kind)))
    p[P_BLITZ_AKT] = rules.blitz == "ace_king_ten"
    p[P_KNOCK_FIRST_ROUND] = rules.knock_first_round
    p[P_KNOCK_MIN2] = 0 if rules.knock_min_value is None else int(round(2 * float(rules.knock_min_value)))
    p[P_MAY_PASS] = rules.final_round_may_pass
    p[P_KNOCKER_WINS_TIES] = rules.knocker_wins_ties
    p[P_KNOCKER_PENALTY] = rules.knocker_penalty
    p[P_HONOR_TIEBREAK] = rules.honor_tiebreak
    p[P_REFILL_SHUFFLE] = rules.stock_refill == "shuffle"
    p[P_MAY_RETURN] = rules.may_return_discard
    p[P_DISCARD_FIRST] = rules.discard_before_stock_draw
    p[P_MAX_TURNS] = rules.max_turns
    p[P_MAX_DEALS] = rules.max_deals
    p[P_TEN_RANK] = deck.ranks.index("10") if "10" in deck.ranks else -1
    p[P_KING_RANK] = deck.ranks.index("K")
    p[P_ACE_RANK] = deck.ranks.index("A")
    p[P_VALUES : P_VALUES + deck.size] = deck.card_values()
    p[P_SUIT_OF : P_SUIT_OF + deck.size] = np.arange(deck.size) // deck.ranks_per_suit
    p[P_RANK_OF : P_RANK_OF + deck.size] = np.arange(deck.size) % deck.ranks_per_suit
    return p


PRESETS: dict[str, Rules] = {
    "swedish": Rules(
        name="swedish", deck="french52", min_players=2, max_players=7, economy="pot",
        starting_chips=20, ante=1, three_aces="31", blitz="any31",
    ),
    "swedish-chips": Rules(
        name="swedish-chips", deck="french52", min_players=2, max_players=7, economy="lives",
        lives=5, on_honor=False, three_aces="31", blitz="any31",
    ),
    "italian": Rules(
        name="italian", deck="italian40", min_players=2, max_players=10, economy="lives",
        lives=3, three_aces="none", blitz="any31", knock_first_round=False,
    ),
    "russian": Rules(
        name="russian", deck="french52", min_players=2, max_players=7, economy="lives",
        lives=3, on_honor=True, three_aces="none", blitz="ace_king_ten",
        final_round_may_pass=True, honor_tiebreak=True,
    ),
    "scat": Rules(
        name="scat", deck="french52", min_players=2, max_players=9, economy="lives",
        lives=3, on_honor=True, three_aces="30.5", three_of_a_kind=30.5, blitz="any31",
        knocker_wins_ties=True, knocker_penalty=2,
    ),
}
