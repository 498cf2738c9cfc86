"""Rules presets, overrides and validation (RULES.md section 6)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from thirtyone_env import thirtyone_v0
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne

# RULES.md section 6, column by column ("-" entries are left out: no effect under that economy)
PRESET_TABLE = {
    "swedish": dict(
        deck="french52", min_players=2, max_players=7, economy="pot", starting_chips=20, ante=1,
        three_aces="31", three_of_a_kind=None, blitz="any31", knock_first_round=True,
        knock_min_value=None, final_round_may_pass=False, knocker_wins_ties=False,
        stock_refill="flip", may_return_discard=False, discard_before_stock_draw=False,
    ),
    "swedish-chips": dict(
        deck="french52", min_players=2, max_players=7, economy="lives", lives=5, on_honor=False,
        three_aces="31", three_of_a_kind=None, blitz="any31", knock_first_round=True,
        knock_min_value=None, final_round_may_pass=False, knocker_wins_ties=False, knocker_penalty=1,
        stock_refill="flip", may_return_discard=False, discard_before_stock_draw=False,
    ),
    "italian": dict(
        deck="italian40", min_players=2, max_players=10, economy="lives", lives=3, on_honor=False,
        three_aces="none", three_of_a_kind=None, blitz="any31", knock_first_round=False,
        knock_min_value=None, final_round_may_pass=False, knocker_wins_ties=False, knocker_penalty=1,
        stock_refill="flip", may_return_discard=False, discard_before_stock_draw=False,
    ),
    "russian": dict(
        deck="french52", min_players=2, max_players=7, economy="lives", lives=3, on_honor=True,
        three_aces="none", three_of_a_kind=None, blitz="ace_king_ten", knock_first_round=True,
        knock_min_value=None, final_round_may_pass=True, knocker_wins_ties=False, knocker_penalty=1,
        honor_tiebreak=True, stock_refill="flip", may_return_discard=False, discard_before_stock_draw=False,
    ),
    "scat": dict(
        deck="french52", min_players=2, max_players=9, economy="lives", lives=3, on_honor=True,
        three_aces="30.5", three_of_a_kind=30.5, blitz="any31", knock_first_round=True,
        knock_min_value=None, final_round_may_pass=False, knocker_wins_ties=True, knocker_penalty=2,
        honor_tiebreak=False, stock_refill="flip", may_return_discard=False, discard_before_stock_draw=False,
    ),
}


def test_preset_names():
    assert Rules.preset_names() == ["swedish", "swedish-chips", "italian", "russian", "scat"]


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_preset_matches_the_table(name):
    rules = Rules.preset(name)
    assert rules.name == name
    got = {field: getattr(rules, field) for field in PRESET_TABLE[name]}
    assert got == PRESET_TABLE[name]
    assert (rules.max_turns, rules.max_deals) == (200, 50)
    assert rules.num_actions == (56 if rules.deck == "french52" else 44)


def test_start_chips_follow_the_economy():
    assert [Rules.preset(n).start_chips for n in PRESET_TABLE] == [20, 5, 3, 3, 3]


def test_override_changes_only_that_field():
    base = Rules.preset("italian")
    rules = Rules.preset("italian", knock_min_value=26, lives=4)
    assert (rules.knock_min_value, rules.lives) == (26, 4)
    assert rules.replace(knock_min_value=None, lives=3) == base
    assert Rules.resolve("scat") == Rules.preset("scat")
    assert Rules.resolve(rules) is rules


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: Rules.preset("poker"), ["poker", "swedish", "scat"]),
        (lambda: Rules.preset("scat", jokers=True), ["jokers", "knocker_penalty"]),
        (lambda: Rules.preset("scat", economy="coins"), ["economy", "pot", "lives"]),
        (lambda: Rules.preset("italian", blitz="ace_king_ten"), ["ace_king_ten", "italian40", "any31"]),
        (lambda: Rules.preset("scat", three_aces="30"), ["three_aces", "'31'", "'30.5'", "'none'"]),
        (lambda: Rules.preset("scat", three_aces=31), ["three_aces", "'31'"]),
        (lambda: Rules.preset("scat", three_of_a_kind=32), ["three_of_a_kind", "None"]),
        (lambda: Rules.preset("scat", three_of_a_kind=30.25), ["three_of_a_kind", "half"]),
        (lambda: Rules.preset("scat", knock_min_value=0), ["knock_min_value", "None"]),
        (lambda: Rules.preset("scat", blitz="31"), ["blitz", "any31", "ace_king_ten"]),
        (lambda: Rules.preset("scat", stock_refill="burn"), ["stock_refill", "flip", "shuffle"]),
        (lambda: Rules.preset("scat", deck="tarot"), ["deck", "french52", "italian40"]),
        (lambda: Rules.preset("scat", on_honor="yes"), ["on_honor", "True, False"]),
        (lambda: Rules.preset("scat", lives=0), ["lives", ">= 1"]),
        (lambda: Rules.preset("scat", knocker_penalty=1.5), ["knocker_penalty", "integer"]),
        (lambda: Rules.preset("scat", max_players=11), ["max_players", "2..10"]),
        (lambda: Rules.resolve(3), ["rules", "scat"]),
    ],
)
def test_bad_values_name_the_field_and_the_allowed_values(make, words):
    with pytest.raises(ValueError) as info:
        make()
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_player_count_outside_the_range_is_refused(name):
    rules = Rules.preset(name)
    for bad in (1, rules.max_players + 1):
        with pytest.raises(ValueError, match=f"num_players={bad} outside"):
            thirtyone_v0.env(num_players=bad, rules=name)
        with pytest.raises(ValueError, match=f"num_players={bad} outside"):
            VectorThirtyOne(2, num_players=bad, rules=name)
    for good in (rules.min_players, rules.max_players):
        assert thirtyone_v0.env(num_players=good, rules=name).unwrapped.num_players == good


def test_too_many_players_for_the_deck_is_refused():
    # unreachable through Rules (max_players <= 10 always fits), so check the rule itself:
    # 3 cards each + the discard + one stock card; 13 players need 41 > 40 cards
    wide = SimpleNamespace(name="wide", min_players=2, max_players=13, deck="italian40", deck_size=40)
    Rules.check_num_players(wide, 12)
    with pytest.raises(ValueError, match="num_players=13 is too many for deck 'italian40'"):
        Rules.check_num_players(wide, 13)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(num_players=2.0), ["num_players", "int"]),
        (dict(episode="game"), ["episode", "match", "deal"]),
        (dict(illegal_action="ignore"), ["illegal_action", "raise", "penalize"]),
        (dict(render_mode="svg"), ["render_mode", "ansi", "human", "rgb_array"]),
        (dict(rules="blackjack"), ["blackjack", "scat"]),
    ],
)
def test_env_arguments_are_validated(kwargs, words):
    with pytest.raises(ValueError) as info:
        thirtyone_v0.env(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_vector_arguments_are_validated():
    with pytest.raises(ValueError, match="num_envs"):
        VectorThirtyOne(0)
    with pytest.raises(ValueError, match="episode"):
        VectorThirtyOne(1, episode="hand")
