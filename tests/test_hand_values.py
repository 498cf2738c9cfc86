"""Hand values (RULES.md section 2): exhaustive counts over every three-card hand."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from thirtyone_env.cards import parse_cards
from thirtyone_env.engine import hand_value, is_blitz
from thirtyone_env.engine.hands import best_value2, hand_value2, is_blitz2
from thirtyone_env.rules import Rules

VECTORS = Path("/work/shared/vectors/hand_value_counts.json")
if not VECTORS.exists():  # a copy next to the tests, for checkouts without /work/shared
    VECTORS = Path(__file__).with_name("hand_value_counts.json")
CASES = json.loads(VECTORS.read_text())["cases"] if VECTORS.exists() else []


def case_rules(case: dict) -> Rules:
    """The vector case's options as overrides of a custom rule set for its deck."""
    opts = case["options"]
    toak = opts["three_of_a_kind"]
    return Rules(deck=case["deck"], max_players=10, three_aces=opts["three_aces"], three_of_a_kind=toak)


@pytest.mark.skipif(not CASES, reason="hand_value_counts.json not found")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['deck']}-{c['options']}")
def test_counts_over_every_hand(case):
    rules = case_rules(case)
    params = rules.params()
    hands = list(combinations(range(rules.deck_size), 3))
    assert len(hands) == case["hands"]
    values = Counter(hand_value2(a, b, c, params) for a, b, c in hands)
    counts = {(str(v // 2) if v % 2 == 0 else f"{v // 2}.5"): k for v, k in values.items()}
    assert counts == case["counts"]
    if "blitz_ace_king_ten_hands" in case:
        akt = rules.replace(blitz="ace_king_ten").params()
        blitzes = sum(bool(is_blitz2(a, b, c, akt)) for a, b, c in hands)
        assert blitzes == case["blitz_ace_king_ten_hands"]


def test_every_vector_case_was_run():
    # the file's cases, as read: both decks and every three-aces / three-of-a-kind variant
    assert {(c["deck"], c["options"]["three_aces"], c["options"]["three_of_a_kind"]) for c in CASES} == {
        ("french52", "none", None),
        ("french52", "31", None),
        ("french52", "30.5", 30.5),
        ("french52", "none", 30),
        ("italian40", "none", None),
    }


def value(text: str, rules: str | Rules = "russian") -> float:
    rules = Rules.resolve(rules)
    a, b, c = parse_cards(text, rules.deck)
    return hand_value2(a, b, c, rules.params()) / 2


@pytest.mark.parametrize(
    "text, expected",
    [("KH 8H 5H", 23), ("QS 9D 8D", 17), ("AC 6S 4S", 11), ("JC 7H 4S", 10), ("AD KD 8C", 21)],
)
def test_worked_examples(text, expected):
    assert value(text) == expected


def test_italian_example_and_italian_values():
    assert value("AC AS KB", "italian") == 11
    assert value("AD KD JD", "italian") == 31
    assert value("7S 6S 5S", "italian") == 18


def test_three_aces_by_option():
    assert value("AC AD AH", "swedish") == 31
    assert value("AC AD AH", "scat") == 30.5
    assert value("AC AD AH", "russian") == 11
    assert value("AB AC AD", "italian") == 11


def test_three_of_a_kind_by_option():
    assert value("7C 7D 7H", "scat") == 30.5
    assert value("2C 2D 2H", "scat") == 30.5  # equal three-of-a-kinds tie
    assert value("7C 7D 7H", "swedish") == 7
    assert value("7C 7D 7H", Rules.preset("scat", three_of_a_kind=30)) == 30


def test_blitz_kinds():
    any31, akt = Rules.preset("scat").params(), Rules.preset("russian").params()
    a, k, t = parse_cards("AH KH 10H")
    q, j = parse_cards("QH JH")
    assert is_blitz2(a, k, t, any31) and is_blitz2(a, k, t, akt)
    assert is_blitz2(a, q, j, any31) and not is_blitz2(a, q, j, akt)
    ac, ad, ah = parse_cards("AC AD AH")
    assert is_blitz2(ac, ad, ah, Rules.preset("swedish").params())
    assert not is_blitz2(ac, ad, ah, any31)  # 30.5 in scat is no blitz


def test_best_value_of_four_cards_keeps_the_best_three():
    params = Rules.preset("russian").params()
    cards = np.array(parse_cards("AH KH 2C 10H"), np.int32)
    assert best_value2(cards, 4, params) == 62
    cards = np.array(parse_cards("2C 3C 4C 9D"), np.int32)
    assert best_value2(cards, 4, params) == 18


# -- the Python API: the same rules as the kernels ------------------------------------------
@pytest.mark.parametrize("preset", Rules.preset_names())
def test_python_hand_value_and_is_blitz_match_the_kernels(preset):
    rules = Rules.preset(preset)
    params = rules.params()
    rng = np.random.default_rng(Rules.preset_names().index(preset))
    for _ in range(300):
        cards = rng.choice(rules.deck_size, 4, replace=False)
        a, b, c = (int(x) for x in cards[:3])
        assert hand_value([a, b, c], rules) == hand_value2(a, b, c, params) / 2
        assert hand_value(cards.tolist(), rules) == best_value2(cards.astype(np.int32), 4, params) / 2
        assert is_blitz([a, b, c], rules) is bool(is_blitz2(a, b, c, params))
    akq = parse_cards("AD KD QD", rules.deck)  # both decks have these
    assert hand_value(akq, preset) == 31  # a rules name works too
    assert is_blitz(akq, preset) == (rules.blitz == "any31")


def test_python_hand_value_examples():
    assert hand_value(parse_cards("AC AD AH"), "scat") == 30.5
    assert hand_value(parse_cards("AH KH 2C 10H"), "russian") == 31  # the best three of four
    assert hand_value(parse_cards("KH 2C"), "scat") == 10  # fewer than three: the best suit's sum
    assert not is_blitz(parse_cards("AH QH JH"), "russian") and is_blitz(parse_cards("AH QH JH"), "scat")


@pytest.mark.parametrize("cards", [[], [0, 1, 2, 3, 4], [0, 0, 1], [52, 1, 2], [-1, 1, 2]])
def test_python_hand_value_refuses_bad_hands(cards):
    with pytest.raises(ValueError, match="distinct card ids"):
        hand_value(cards, "scat")


def test_is_blitz_wants_three_cards():
    with pytest.raises(ValueError, match="three-card"):
        is_blitz(parse_cards("AH KH QH JH"), "scat")
    with pytest.raises(ValueError, match="distinct card ids"):
        is_blitz([40, 1, 2], "italian")  # 40 is past the italian deck
