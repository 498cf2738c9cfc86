"""Scripted deals with stacked decks and exact results (RULES.md sections 2-5).

Decks list cards top first; ``stack`` deals them one at a time from the dealer's
left, three rounds, then the discard, then the stock. Most tests use
``episode="deal"`` so the final step's rewards are the deal's net chips.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    act,
    chips,
    discard_pile,
    hand,
    last_end,
    legal,
    rewards,
    same_snapshot,
    seat_acts,
    stack,
    status,
    stock_top_first,
    table,
)

from thirtyone_env import actions as A
from thirtyone_env import encoding
from thirtyone_env.cards import card_str, parse_card
from thirtyone_env.engine import IN_PLAY, ON_HONOR, OUT
from thirtyone_env.rules import Rules

DRAW, TAKE, KNOCK, PASS = A.DRAW_STOCK, A.DRAW_DISCARD, A.KNOCK, A.PASS
IN, HONOR = IN_PLAY, ON_HONOR


def throws(*cards: str, deck: str = "french52") -> set[int]:
    return {A.DISCARD0 + parse_card(c, deck) for c in cards}


def view(env, seat: int) -> dict[str, np.ndarray]:
    obs = env.observe(f"player_{seat}")["observation"]
    return encoding.views(obs, env.rules.deck_size, env.num_players)


def done(env) -> bool:
    return bool(env.table.finished[0]) and all(env.terminations.values())


# -- blitzes ------------------------------------------------------------------------------
def test_blitz_after_a_draw_ends_the_deal():
    env = table("scat", 2, [stack(["2C 3D 4S", "AH KH 5C"], "6D", "QH")], episode="deal")
    seat_acts(env, 1, "draw", "5C")
    assert done(env) and last_end(env) == "blitz"
    assert rewards(env) == [-1, 0]
    assert hand(env, 1) == {"AH", "KH", "QH"}


def test_blitz_with_the_taken_discard():
    env = table("scat", 2, [stack(["2C 3D 4S", "AH KH 5C"], "10H", "QH")], episode="deal")
    seat_acts(env, 1, "take", "5C")
    assert rewards(env) == [-1, 0] and done(env)


def test_dealt_blitz_in_a_later_deal_is_settled_at_the_deal():
    decks = [
        stack(["2C 3D 4S", "AH KH 5C"], "6D", "QH"),  # deal 1: seat 1 makes 31
        stack(["AS KS QS", "2D 3H 4C"], "5S", dealer=1),  # deal 2: seat 0 is dealt 31
        stack(["2H 3S 5D", "2S 4D 6C"], "7C", dealer=0),  # deal 3: quiet
    ]
    env = table("scat", 2, decks)
    seat_acts(env, 1, "draw", "5C")
    assert chips(env) == [2, 2]  # seat 0 paid for deal 1, seat 1 for deal 2
    assert env.table.deal[0] == 3 and env.table.dealer[0] == 0
    assert env.agent_selection == "player_1"
    assert hand(env, 0) == {"2H", "3S", "5D"} and hand(env, 1) == {"2S", "4D", "6C"}
    assert rewards(env) == [0, 0] and not done(env)


def test_dealt_blitz_first_deal_of_a_match_is_settled():
    decks = [stack(["AS KS QS", "2D 3H 4C"], "5S"), stack(["2H 3S 5D", "2S 4D 6C"], "7C", dealer=1)]
    env = table("scat", 2, decks)
    assert env.table.deal[0] == 2 and chips(env) == [3, 2]
    assert hand(env, 0) == {"2H", "3S", "5D"} and env.agent_selection == "player_0"


def test_dealt_blitz_that_would_end_the_episode_is_void_and_redealt():
    decks = [stack(["AS KS QS", "2D 3H 4C"], "5S"), stack(["2H 3S 5D", "2S 4D 6C"], "7C")]
    env = table("scat", 2, decks, episode="deal")
    assert env.table.deal[0] == 1 and chips(env) == [3, 3] and not done(env)
    assert hand(env, 0) == {"2H", "3S", "5D"} and env.agent_selection == "player_1"
    lone = table(Rules.preset("scat", lives=1, on_honor=False), 2, decks)  # a blitz would end the match
    assert lone.table.deal[0] == 1 and chips(lone) == [1, 1]


def test_several_dealt_blitzes_lives_every_other_player_pays_one():
    decks = [
        stack(["2C 3D 4S", "AH KH 5C", "6H 7S 8C"], "6D", "QH"),  # seat 1 makes 31
        stack(["AS KS QS", "2D 3H 4C", "AD KD JD"], "5S", dealer=1),  # seats 0 and 2 dealt 31
        stack(["2H 3S 5D", "2S 4D 6C", "8H 9S 10C"], "7C", dealer=2),
    ]
    env = table("scat", 3, decks)
    seat_acts(env, 1, "draw", "5C")
    assert chips(env) == [2, 2, 2]
    assert env.table.deal[0] == 3 and env.agent_selection == "player_0"


def test_several_dealt_blitzes_pot_stays():
    decks = [
        stack(["2C 3D 4S", "AH KH 5C", "6H 7S 8C"], "6D", "QH"),
        stack(["AS KS QS", "2D 3H 4C", "AD KD JD"], "5S", dealer=1),
        stack(["2H 3S 5D", "2S 4D 6C", "8H 9S 10C"], "7C", dealer=2),
    ]
    env = table("swedish", 3, decks)
    assert chips(env) == [19, 19, 19] and env.table.pot[0] == 3
    seat_acts(env, 1, "draw", "5C")
    # deal 1: seat 1 wins 3; deal 2: antes, two blitzes, pot stays; deal 3: antes again
    assert chips(env) == [17, 20, 17] and env.table.pot[0] == 6


def test_blitz_in_the_final_round_beats_the_knock():
    env = table("scat", 2, [stack(["AH KH 2C", "KS QS JS"], "3D", "QH")], episode="deal")
    seat_acts(env, 1, "knock")
    seat_acts(env, 0, "draw", "2C")
    assert last_end(env) == "blitz"
    assert rewards(env) == [0, -1]  # the knocker pays one, not the knocker penalty


# -- hand values in play --------------------------------------------------------------------
def test_three_aces_are_a_31_blitz_in_swedish():
    env = table("swedish", 2, [stack(["2C 3D 4S", "AC AD 5H"], "6D", "AH")], episode="deal")
    seat_acts(env, 1, "draw", "5H")
    assert done(env) and last_end(env) == "blitz"
    assert rewards(env) == [-1, 1]  # pot of 2 antes, minus own ante


def test_three_aces_are_30_5_in_scat():
    env = table("scat", 2, [stack(["KS QS 2D", "AC AD 5H"], "6D", "AH JS 3C")], episode="deal")
    seat_acts(env, 1, "draw", "5H")
    assert not done(env) and view(env, 1)["hand_value"][0] == 61
    seat_acts(env, 0, "draw", "2D")
    assert view(env, 0)["hand_value"][0] == 60
    seat_acts(env, 1, "knock")
    seat_acts(env, 0, "draw", "3C")
    assert last_end(env) == "showdown"
    assert rewards(env) == [-1, 0]  # 30 < 30.5


def test_three_aces_are_11_in_italian_and_no_knock_in_the_first_round():
    deck = "italian40"
    decks = [stack(["2S 3S 4S", "AB AC 5D"], "6B", "AD 6S 7B", deck=deck)]
    env = table("italian", 2, decks, episode="deal")
    assert legal(env) == {DRAW, TAKE}  # first round: no knock
    seat_acts(env, 1, "draw", "5D")
    assert hand(env, 1) == {"AB", "AC", "AD"} and view(env, 1)["hand_value"][0] == 22
    assert legal(env) == {DRAW, TAKE}  # seat 0 has not had a turn yet
    seat_acts(env, 0, "draw", "2S")  # 3S 4S 6S = 13
    assert legal(env) == {DRAW, TAKE, KNOCK}
    seat_acts(env, 1, "knock")
    seat_acts(env, 0, "draw", "7B")
    assert rewards(env) == [0, -1]  # 11 < 13: the knocker pays


def test_three_of_a_kind_is_30_5_in_scat():
    env = table("scat", 2, [stack(["KS QS 2D", "7C 7D 7H"], "6D", "JS")], episode="deal")
    assert view(env, 1)["hand_value"][0] == 61
    seat_acts(env, 1, "knock")
    seat_acts(env, 0, "draw", "2D")  # KS QS JS = 30
    assert rewards(env) == [-1, 0]


def test_equal_three_of_a_kinds_tie():
    decks = [stack(["2C 2D 2H", "7C 7D 7H"], "6D", "3S")]
    env = table("scat", 2, decks, episode="deal")
    act(env, "knock", "draw", "3S")
    assert rewards(env) == [-1, 0]  # tied: the scat knocker wins the tie
    env = table(Rules.preset("scat", knocker_wins_ties=False), 2, decks, episode="deal")
    act(env, "knock", "draw", "3S")
    assert rewards(env) == [-1, -2]  # tied: both are lowest


def test_russian_ace_king_ten_is_a_blitz():
    env = table("russian", 2, [stack(["2D 3S 5H", "AH KH 2C"], "6D", "10H")], episode="deal")
    seat_acts(env, 1, "draw", "2C")
    assert done(env) and last_end(env) == "blitz"
    assert rewards(env) == [-1, 0]


def test_russian_other_31_is_only_a_strong_hand():
    env = table("russian", 2, [stack(["2D 3S 5H", "AH QH 2C"], "6D", "JH")], episode="deal")
    seat_acts(env, 1, "draw", "2C")
    assert not done(env) and hand(env, 1) == {"AH", "QH", "JH"}
    assert view(env, 1)["hand_value"][0] == 62
    seat_acts(env, 0, "knock")
    seat_acts(env, 1, "pass")
    assert last_end(env) == "showdown"
    assert rewards(env) == [-1, 0]


# -- knocking and settling -------------------------------------------------------------------
def three_seat_deal(seat0: str, seat1: str, seat2: str):
    """Scat deal episode, dealer 0: seat 1 starts; the stock is 4S then 8D."""
    return table("scat", 3, [stack([seat0, seat1, seat2], "9C", "4S 8D")], episode="deal")


def test_knock_then_exactly_one_more_turn_each_then_showdown():
    env = three_seat_deal("2D 3H 6C", "KS QS JS", "2C 3D 5H")
    seat_acts(env, 1, "knock")
    assert env.table.knocker[0] == 1 and env.table.view(0).final_turns_left == 2
    assert legal(env) == {DRAW, TAKE}  # nobody knocks twice, scat has no pass
    assert view(env, 2)["final_round"][0] == 1 and view(env, 2)["opp_knocked"].tolist() == [0, 1]
    seat_acts(env, 2, "draw", "4S")
    assert not done(env)
    seat_acts(env, 0, "draw", "8D")
    assert done(env) and last_end(env) == "showdown"
    assert rewards(env) == [0, 0, -1]  # 5 is the single lowest


def test_ties_for_lowest_all_pay():
    env = three_seat_deal("2D 3H 5C", "KS QS JS", "2C 3D 5H")
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert rewards(env) == [-1, 0, -1]


def test_scat_knocker_pays_two():
    env = three_seat_deal("2D 3H 6C", "2C 3D 5H", "KS QS JS")
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert rewards(env) == [0, -2, 0]


def test_scat_knocker_wins_ties():
    env = three_seat_deal("KD QD 3S", "KH QH 2C", "AS KS 5D")
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert rewards(env) == [-1, 0, 0]  # 20 = 20 < 21: the tied knocker pays nothing


def test_knocker_tied_without_knocker_wins_ties_pays_too():
    rules = Rules.preset("scat", knocker_wins_ties=False)
    env = table(rules, 2, [stack(["KD QD 3S", "KH QH 2C"], "9S", "4C")], episode="deal")
    act(env, "knock", "draw", "4C")
    assert rewards(env) == [-1, -2]


def test_knock_min_value():
    rules = Rules.preset("scat", knock_min_value=26)
    low = table(rules, 2, [stack(["2D 3S 5H", "KH 10H 5C"], "9S")])
    assert legal(low) == {DRAW, TAKE}  # 20 < 26
    high = table(rules, 2, [stack(["2D 3S 5H", "KH 10H 6H"], "9S")])
    assert legal(high) == {DRAW, TAKE, KNOCK}  # 26


def test_final_round_may_pass_only_after_a_knock():
    env = table("russian", 2, [stack(["2D 3S 5H", "KH 10H 6H"], "9S")])
    assert legal(env) == {DRAW, TAKE, KNOCK}
    act(env, "knock")
    assert legal(env) == {DRAW, TAKE, PASS}
    scat = table("scat", 2, [stack(["2D 3S 5H", "KH 10H 6H"], "9S")])
    act(scat, "knock")
    assert legal(scat) == {DRAW, TAKE}


# -- drawing and discarding ------------------------------------------------------------------
def test_taken_discard_cannot_go_straight_back():
    env = table("scat", 2, [stack(["2D 3S 5H", "KH 10H 5C"], "9S")])
    act(env, "take")
    assert legal(env) == throws("KH", "10H", "5C")
    before = env.table.snapshot()
    with pytest.raises(ValueError, match="legal action ids"):
        act(env, "9S")
    assert same_snapshot(env.table.snapshot(), before)
    assert view(env, 1)["taken"].nonzero()[0].tolist() == [parse_card("9S")]
    act(env, "5C")
    assert discard_pile(env) == ["5C"] and hand(env, 1) == {"KH", "10H", "9S"}


def test_taken_discard_may_go_back_with_may_return_discard():
    rules = Rules.preset("scat", may_return_discard=True)
    env = table(rules, 2, [stack(["2D 3S 5H", "KH 10H 5C"], "9S")])
    act(env, "take")
    assert legal(env) == throws("KH", "10H", "5C", "9S")
    act(env, "9S")
    assert discard_pile(env) == ["9S"] and env.agent_selection == "player_0"


def test_drawn_stock_card_may_be_thrown_straight_back():
    env = table("scat", 2, [stack(["2D 3S 5H", "KH 10H 5C"], "9S", "4D")])
    act(env, "draw")
    assert legal(env) == throws("KH", "10H", "5C", "4D")
    assert view(env, 1)["taken"].sum() == 0


def test_discard_before_stock_draw():
    rules = Rules.preset("scat", discard_before_stock_draw=True)
    env = table(rules, 2, [stack(["2D 3S 4H", "KS QS 2H"], "9D", "JS 5C")])
    act(env, "draw")
    assert env.table.view(0).phase == "discard first"
    assert hand(env, 1) == {"KS", "QS", "2H"}  # the stock card has not arrived yet
    assert legal(env) == throws("KS", "QS", "2H")
    assert view(env, 1)["phase"].tolist() == [0, 0, 1]
    assert stock_top_first(env)[0] == "JS"
    act(env, "2H")
    assert hand(env, 1) == {"KS", "QS", "JS"} and discard_pile(env) == ["9D", "2H"]
    assert stock_top_first(env)[0] == "5C" and env.agent_selection == "player_0"


RANKS40 = "2 3 4 5 6 7 J Q K A".split()


def refill_table(refill: str):
    """Italian, 10 players: seat i holds rank i in B C D; spades are the discard and the stock."""
    rules = Rules.preset("italian", stock_refill=refill)
    hands = [f"{r}B {r}C {r}D" for r in RANKS40]
    spades = [f"{r}S" for r in RANKS40]
    deck = stack(hands, spades[0], " ".join(spades[1:]), deck="italian40")
    env = table(rules, 10, [deck], episode="deal")
    # seats 1..9 each draw the top stock card and throw it straight back
    for seat in range(1, 10):
        top = stock_top_first(env)[0]
        seat_acts(env, seat, "draw", top)
    assert env.table.stock_size[0] == 0 and discard_pile(env) == spades
    seat_acts(env, 0, "draw")
    return env, spades


def test_stock_refill_flip_oldest_discard_on_top():
    env, spades = refill_table("flip")
    assert hand(env, 0) == {"2B", "2C", "2D", "2S"}  # the first discard came back first
    assert stock_top_first(env) == spades[1:-1]
    assert discard_pile(env) == ["AS"]  # the top discard stays


def test_stock_refill_shuffle_keeps_the_cards():
    env, spades = refill_table("shuffle")
    drawn = hand(env, 0) - {"2B", "2C", "2D"}
    assert len(drawn) == 1
    assert sorted(stock_top_first(env) + list(drawn)) == sorted(spades[:-1])
    assert discard_pile(env) == ["AS"]
    assert list(drawn) + stock_top_first(env) != spades[:-1]  # shuffled (fixed seed)


# -- turn cap ------------------------------------------------------------------------------
def test_turn_cap_ends_in_a_showdown():
    rules = Rules.preset("scat", max_turns=3)
    env = table(rules, 2, [stack(["2C 3D 5H", "KS QS 2H"], "9D", "4C 6D 7H")], episode="deal")
    act(env, "draw", "4C", "draw", "6D")
    assert not done(env)
    act(env, "draw", "7H")
    assert done(env) and last_end(env) == "showdown"
    assert env.table.turn[0] == 3 and rewards(env) == [-1, 0]


def test_turn_cap_keeps_the_knocker_role():
    rules = Rules.preset("scat", max_turns=2)
    env = table(rules, 3, [stack(["KD QD 3S", "KH QH 2C", "2D 3H 5C"], "9S", "4C")], episode="deal")
    act(env, "draw", "4C")
    seat_acts(env, 2, "knock")  # the second and last turn: seat 0 never plays
    assert done(env) and rewards(env) == [0, 0, -2]


def test_blitz_on_the_capped_turn_is_a_blitz():
    rules = Rules.preset("scat", max_turns=1)
    env = table(rules, 2, [stack(["2C 3D 4S", "AH KH 5C"], "6D", "QH")], episode="deal")
    act(env, "draw", "5C")
    assert last_end(env) == "blitz" and rewards(env) == [-1, 0]


# -- lives: on honor, elimination, dealer rotation ------------------------------------------
def test_on_honor_then_out_at_the_next_payment():
    rules = Rules.preset("scat", lives=1)
    decks = [
        stack(["2C 3D 5H", "KS QS JS"], "9D", "4S"),
        stack(["2D 3H 6C", "KH QH JH"], "9C", "4D", dealer=1),
    ]
    env = table(rules, 2, decks)
    seat_acts(env, 1, "knock")
    seat_acts(env, 0, "draw", "4S")
    assert status(env) == [HONOR, IN] and chips(env) == [0, 1] and not done(env)
    assert view(env, 0)["own_on_honor"][0] == 1 and view(env, 1)["opp_on_honor"].tolist() == [1]
    seat_acts(env, 0, "knock")  # deal 2: dealer 1, seat 0 starts
    seat_acts(env, 1, "draw", "4D")
    assert done(env) and status(env) == [OUT, IN]
    assert rewards(env) == [-1, 1]


def test_russian_on_honor_with_pass():
    rules = Rules.preset("russian", lives=1)
    env = table(rules, 2, [stack(["2C 3D 5H", "KS QS JS"], "9D")])
    seat_acts(env, 1, "knock")
    seat_acts(env, 0, "pass")
    assert status(env) == [HONOR, IN] and chips(env) == [0, 1]


def test_paying_more_than_the_last_chip_is_out():
    rules = Rules.preset("scat", lives=1)
    env = table(rules, 3, [stack(["2D 3H 6C", "2C 3D 5H", "KS QS JS"], "9C", "4S 8D")])
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert status(env) == [IN, OUT, IN] and chips(env) == [1, 0, 1] and not done(env)


def honor_tiebreak_table(seat0: str, seat1: str, **overrides):
    """Russian, one life each: deal 1 puts seat 0 on honor, deal 2 is a tie after seat 0 knocks."""
    rules = Rules.preset("russian", lives=1, **overrides)
    decks = [stack(["2C 3D 5H", "KS QS JS"], "9D"), stack([seat0, seat1], "4C", dealer=1)]
    env = table(rules, 2, decks)
    act(env, "knock", "pass")
    assert status(env) == [HONOR, IN]
    seat_acts(env, 0, "knock")
    seat_acts(env, 1, "pass")
    return env


def test_honor_tiebreak_knocker_with_lower_cards_pays():
    env = honor_tiebreak_table("QH 9H 2C", "KD 9D 2S")
    assert done(env) and status(env) == [OUT, IN] and rewards(env) == [-1, 1]


def test_honor_tiebreak_other_with_lower_cards_pays():
    env = honor_tiebreak_table("KH 9H 2C", "QD 9D 2S")
    assert not done(env) and status(env) == [HONOR, HONOR] and chips(env) == [0, 0]


def test_honor_tiebreak_identical_ranks_draw_the_match():
    env = honor_tiebreak_table("KH 9H 2C", "KD 9D 2S")
    assert done(env) and rewards(env) == [0, 0]


def test_without_honor_tiebreak_both_tied_pay():
    env = honor_tiebreak_table("KH 9H 2C", "QD 9D 2S", honor_tiebreak=False)
    assert done(env) and status(env) == [OUT, HONOR] and rewards(env) == [-1, 1]


def test_elimination_dealer_rotation_and_starting_seat():
    rules = Rules.preset("scat", lives=1, on_honor=False)
    decks = [
        stack(["9H 8H 4C", "KS QS JS", "2C 3D 5H", "9D 8D 4H"], "7C", "2S 3S 4S"),
        stack(["2C 3D 5H", "9H 8H 4C", None, "KS QS JS"], "7C", "2S 3S", dealer=1),
        stack([None, "2H 3H 4H", None, "5C 6C 7C"], "8S", dealer=3),
    ]
    env = table(rules, 4, decks)
    assert env.table.dealer[0] == 0 and env.agent_selection == "player_1"
    act(env, "knock", "draw", "2S", "draw", "3S", "draw", "4S")
    assert status(env) == [IN, IN, OUT, IN]  # seat 2 had the lowest hand
    assert env.table.dealer[0] == 1 and env.agent_selection == "player_3"  # seat 2 is skipped
    assert hand(env, 3) == {"KS", "QS", "JS"} and hand(env, 2) == set()
    act(env, "knock", "draw", "2S", "draw", "3S")
    assert status(env) == [OUT, IN, OUT, IN]
    assert env.table.dealer[0] == 3 and env.agent_selection == "player_1"
    assert hand(env, 1) == {"2H", "3H", "4H"} and hand(env, 3) == {"5C", "6C", "7C"}
    assert env.infos["player_2"]["in_play"] == 0 and env.infos["player_3"]["in_play"] == 1


def test_everyone_out_at_once_share_the_win():
    rules = Rules.preset("swedish-chips", lives=1)
    env = table(rules, 2, [stack(["KD QD 3S", "KH QH 2C"], "9S", "4C")])
    act(env, "knock", "draw", "4C")
    assert done(env) and status(env) == [OUT, OUT] and rewards(env) == [0, 0]


def test_last_player_in_play_wins_the_match():
    rules = Rules.preset("swedish-chips", lives=1)
    env = table(rules, 3, [stack(["2D 3H 5C", "KS QS JS", "2C 3D 5H"], "9C", "4S 8D")])
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert done(env) and rewards(env) == [-0.5, 1, -0.5]


# -- pot economy --------------------------------------------------------------------------------
def test_pot_carried_on_a_tie_then_won():
    decks = [
        stack(["KD QD 3S", "KH QH 2C"], "9S", "4C"),
        stack(["KS QS JS", "2C 3D 5H"], "9D", "4H", dealer=1),
    ]
    env = table("swedish", 2, decks)
    assert chips(env) == [19, 19] and env.table.pot[0] == 2
    act(env, "knock", "draw", "4C")  # 20 = 20: the pot stays
    assert chips(env) == [18, 18] and env.table.pot[0] == 4
    seat_acts(env, 0, "knock")
    seat_acts(env, 1, "draw", "4H")
    assert chips(env) == [21, 17] and env.table.pot[0] == 2  # won 4, then the next ante


def test_pot_knocker_wins_ties_by_override():
    rules = Rules.preset("swedish", knocker_wins_ties=True)
    env = table(rules, 2, [stack(["KD QD 3S", "KH QH 2C"], "9S", "4C")], episode="deal")
    act(env, "knock", "draw", "4C")
    assert rewards(env) == [-1, 1]
    plain = table("swedish", 2, [stack(["KD QD 3S", "KH QH 2C"], "9S", "4C")], episode="deal")
    act(plain, "knock", "draw", "4C")
    assert rewards(plain) == [-1, -1] and plain.table.pot[0] == 2  # sum = - pot left


def test_ante_players_who_cannot_pay_are_out():
    rules = Rules.preset("swedish", starting_chips=2)
    decks = [
        stack(["2D 3H 6C", "KS QS JS", "9H 8H 4C"], "9C", "4S 8D"),
        stack(["2C 3D 5H", "9D 8D 4H", "KH QH JH"], "9C", "4S 8S", dealer=1),
    ]
    env = table(rules, 3, decks)
    assert chips(env) == [1, 1, 1] and env.table.pot[0] == 3
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert chips(env) == [0, 3, 0] and env.table.pot[0] == 3  # seat 1 won 3, all paid the ante
    assert env.table.dealer[0] == 1 and env.agent_selection == "player_2"
    act(env, "knock", "draw", "4S", "draw", "8S")
    # seat 2 won 3; seat 0 has no chip for the next ante and is out
    assert status(env) == [OUT, IN, IN] and chips(env) == [0, 2, 2] and env.table.pot[0] == 2
    assert env.table.dealer[0] == 2 and env.agent_selection == "player_1"


def test_pot_match_ends_when_at_most_one_can_pay():
    rules = Rules.preset("swedish", starting_chips=1)
    env = table(rules, 3, [stack(["2D 3H 6C", "KS QS JS", "9H 8H 4C"], "9C", "4S 8D")])
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert done(env) and chips(env) == [0, 3, 0]
    assert rewards(env) == [-0.5, 1, -0.5]


def test_max_deals_most_chips_win_and_share():
    rules = Rules.preset("swedish", max_deals=2)
    decks = [
        stack(["2D 3H 6C", "KS QS JS", "9H 8H 4C"], "9C", "4S 8D"),
        stack(["KH QH JH", "9D 8D 4H", "2C 3D 5H"], "9C", "4S 8S 7S", dealer=1),
    ]
    env = table(rules, 3, decks)
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert chips(env) == [18, 21, 18]
    seat_acts(env, 2, "draw", "4S")
    seat_acts(env, 0, "knock")
    seat_acts(env, 1, "draw", "8S")
    seat_acts(env, 2, "draw", "7S")
    assert done(env) and chips(env) == [21, 21, 18]
    assert rewards(env) == [0.5, 0.5, -1]
    assert env._cumulative_rewards == {"player_0": 0.5, "player_1": 0.5, "player_2": -1}


def test_deal_episode_pot_rewards_are_net_chips():
    env = table("swedish", 3, [stack(["2D 3H 6C", "KS QS JS", "9H 8H 4C"], "9C", "4S 8D")], episode="deal")
    act(env, "knock", "draw", "4S", "draw", "8D")
    assert rewards(env) == [-1, 2, -1]


def test_discard_before_stock_draw_refill_keeps_the_card_just_thrown_on_the_pile():
    rules = Rules.preset("italian", discard_before_stock_draw=True)
    hands = [f"{r}B {r}C {r}D" for r in RANKS40]
    spades = [f"{r}S" for r in RANKS40]
    env = table(rules, 10, [stack(hands, "2S", " ".join(spades[1:]), deck="italian40")], episode="deal")
    for seat in range(1, 10):  # each throws its B card, then receives the next spade
        seat_acts(env, seat, "draw", f"{RANKS40[seat]}B")
        assert hand(env, seat) == {f"{RANKS40[seat]}C", f"{RANKS40[seat]}D", spades[seat]}
    assert env.table.stock_size[0] == 0
    seat_acts(env, 0, "draw", "2B")
    assert hand(env, 0) == {"2C", "2D", "2S"}  # the oldest discard came back first
    assert stock_top_first(env) == [f"{r}B" for r in RANKS40[1:]]
    assert discard_pile(env) == ["2B"]


# -- the opponents' moves in the observation -------------------------------------------------------------
def cards_of(piece: np.ndarray, rel: int, d: int = 52) -> set[str]:
    return {card_str(int(c), "french52") for c in np.flatnonzero(piece[rel * d : (rel + 1) * d])}


def test_each_opponent_s_throws_and_left_discards_are_observed_until_the_deal_ends():
    deck = stack(["2C 3D 4S", "AH KH 5C", "7S 8S 9D"], "6D", "JC 10C 3H 4H")
    env = table("scat", 3, [deck])
    seat_acts(env, 1, "draw", "5C")  # leaves 6D on the pile, throws 5C
    seat_acts(env, 2, "take", "9D")  # takes 5C, throws 9D
    seat_acts(env, 0, "draw", "10C")  # leaves 9D, throws the card it drew
    me = view(env, 1)  # opponents left first: seat 2, then seat 0
    assert [cards_of(me["opp_thrown"], r) for r in (0, 1)] == [{"9D"}, {"10C"}]
    assert [cards_of(me["opp_passed"], r) for r in (0, 1)] == [set(), {"9D"}]
    assert cards_of(me["opp_known"], 0) == {"5C"}
    other = view(env, 0)  # seat 1, then seat 2; its own moves are in neither
    assert [cards_of(other["opp_thrown"], r) for r in (0, 1)] == [{"5C"}, {"9D"}]
    assert [cards_of(other["opp_passed"], r) for r in (0, 1)] == [{"6D"}, set()]
    seat_acts(env, 1, "knock")  # knocking leaves the top (10C) too
    assert cards_of(view(env, 0)["opp_passed"], 0) == {"6D", "10C"}
    seat_acts(env, 2, "draw", "3H")
    seat_acts(env, 0, "draw", "4H")  # the showdown; the next deal starts with no moves seen
    assert not done(env) and view(env, 0)["turns"][0] == 0
    for seat in range(3):
        v = view(env, seat)
        assert not v["opp_thrown"].any() and not v["opp_passed"].any()
