"""Card ids and card text (RULES.md section 1)."""

from __future__ import annotations

import pytest

from thirtyone_env.cards import DECKS, card_str, get_deck, parse_card, parse_cards


def test_french_ids_follow_suit_times_ranks_plus_rank():
    assert parse_cards("2C 3C AC 2D AD 2H AH 2S AS") == [0, 1, 12, 13, 25, 26, 38, 39, 51]
    assert parse_card("10S") == 3 * 13 + 8 == 47
    assert parse_card("JH") == 2 * 13 + 9
    assert DECKS["french52"].size == 52


def test_italian_ids_follow_suit_times_ranks_plus_rank():
    ids = parse_cards("2B AB 2C 7C JC QD KD AD 2S AS", deck="italian40")
    assert ids == [0, 9, 10, 15, 16, 27, 28, 29, 30, 39]
    assert parse_card("AD", "italian40") == 29
    assert DECKS["italian40"].size == 40


@pytest.mark.parametrize("deck", ["french52", "italian40"])
def test_every_card_text_round_trips(deck):
    d = get_deck(deck)
    texts = [card_str(c, deck) for c in range(d.size)]
    assert len(set(texts)) == d.size
    assert parse_cards(" ".join(texts), deck) == list(range(d.size))


def test_ten_as_10_or_t_and_case_insensitive():
    assert parse_card("10H") == parse_card("TH") == parse_card("th") == parse_card("10h") == 34
    assert card_str(34) == "10H"
    assert parse_cards("as, kd qh") == [51, 24, 36]


def test_card_values():
    french = get_deck("french52")
    values = [french.value_of(parse_card(t)) for t in "2C 9D 10H JS QC KD AH".split()]
    assert values == [2, 9, 10, 10, 10, 10, 11]
    italian = get_deck("italian40")
    values = [italian.value_of(parse_card(t, "italian40")) for t in "2B 7C JD QS KB AC".split()]
    assert values == [2, 7, 10, 10, 10, 11]


@pytest.mark.parametrize(
    "text, deck, bad",
    [
        ("AS 1S", "french52", "1S"),
        ("AS XS", "french52", "XS"),
        ("AS AX", "french52", "AX"),
        ("10B", "italian40", "10B"),  # the Italian deck has no 10
        ("8C", "italian40", "8C"),
        ("TS", "italian40", "TS"),
        ("AH", "italian40", "AH"),  # no hearts either
    ],
)
def test_unknown_card_names_the_token(text, deck, bad):
    with pytest.raises(ValueError, match=bad):
        parse_cards(text, deck)


def test_duplicate_card_names_the_token():
    with pytest.raises(ValueError, match="duplicate card 'TH'"):
        parse_cards("10H QS TH")
    with pytest.raises(ValueError, match="'as'"):
        parse_cards("AS KS as")


def test_card_str_range_and_unknown_deck():
    with pytest.raises(ValueError, match="52"):
        card_str(52)
    with pytest.raises(ValueError, match="40"):
        card_str(40, "italian40")
    with pytest.raises(ValueError, match="piquet"):
        parse_cards("AS", deck="piquet")
