"""Duplicate (paired) evaluation: every deck stream once per seat, paired intervals and differences."""

from __future__ import annotations

import numpy as np
import pytest

from agents import GreedyAgent, HeuristicAgent, RandomAgent
from thirtyone_env.evaluation import duplicate, paired, paired_interval, play_matches
from train.cli import main


@pytest.mark.parametrize("preset, n", [("scat", 2), ("russian", 3), ("swedish", 2)])
def test_an_agent_against_itself_wins_exactly_its_fair_share_on_every_stream(preset, n):
    # the n matches of a stream are one game seen from each seat: the focus shares sum to one
    me = HeuristicAgent(preset, n)
    shares = duplicate(me, me, preset, n, deals=12, seed=3, num_tables=5)
    assert shares.shape == (12, n)
    np.testing.assert_allclose(shares.mean(axis=1), 1 / n)
    result = paired([me], me, preset, n, matches=12 * n, seed=3)
    assert result.win_rate() == pytest.approx(1 / n)
    assert result.interval() == pytest.approx((1 / n, 1 / n))


def test_both_agents_hold_the_same_cards_in_the_same_seats():
    # 2 players: A in seat r of stream k plays the very match B-focused play has with B in seat 1 - r
    a, b = GreedyAgent("scat", 2), RandomAgent("scat", 2, seed=0)
    ab = duplicate(a, b, "scat", 2, deals=10, seed=5)
    ba = duplicate(b, a, "scat", 2, deals=10, seed=5)
    np.testing.assert_allclose(ab, 1 - ba[:, ::-1])


def test_a_stream_is_dealt_once_per_seat_and_tables_do_not_matter():
    a, b = HeuristicAgent("italian", 3), GreedyAgent("italian", 3)
    few = duplicate(a, b, "italian", 3, deals=6, seed=11, num_tables=2)
    many = duplicate(a, b, "italian", 3, deals=6, seed=11, num_tables=64)
    np.testing.assert_array_equal(few, many)
    # the same as playing the seat plans by hand, stream k three times
    plan = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]] * 6)
    rewards = play_matches([a, b], plan, "italian", seed=11, streams=np.repeat(np.arange(6), 3))
    focus = np.tile(np.arange(3), 6)
    winners = np.isclose(rewards, rewards.max(axis=1, keepdims=True), atol=1e-6)
    np.testing.assert_allclose(few.reshape(-1), (winners / winners.sum(axis=1, keepdims=True))[np.arange(18), focus])


def test_the_paired_difference_of_two_copies_is_exactly_zero_and_a_real_one_is_measured():
    opponent = GreedyAgent("scat", 2)
    result = paired([HeuristicAgent("scat", 2), HeuristicAgent("scat", 2), RandomAgent("scat", 2, seed=1)], opponent,
                    "scat", 2, matches=60, seed=2, names=["h1", "h2", "random"], opponent_name="greedy")
    assert result.deals == 30 and result.matches == 60
    assert result.difference(0, 1) == (0.0, 0.0, 0.0)
    mean, lo, hi = result.difference(0, 2)
    assert mean == pytest.approx(result.win_rate(0) - result.win_rate(2))
    assert lo > 0.3  # the heuristic beats random play by far, on the same decks
    text = result.table()
    assert "duplicate: 30 deck streams x 2 seats = 60 matches per agent against greedy" in text
    assert "difference h1 - random" in text


def test_paired_interval():
    mean, lo, hi = paired_interval(np.array([0.0, 1.0, 0.5, 0.5]))
    assert mean == 0.5 and lo < 0.5 < hi and hi - 0.5 == pytest.approx(1.96 * np.std([0, 1, 0.5, 0.5], ddof=1) / 2)
    with pytest.raises(ValueError, match="at least two streams"):
        paired_interval(np.array([1.0]))


def test_bad_input_is_named():
    me = GreedyAgent("scat", 2)
    with pytest.raises(ValueError, match="matches=3 is invalid"):
        paired([me], me, "scat", 2, matches=3)
    with pytest.raises(ValueError, match="needs act_batch"):
        paired([object()], me, "scat", 2, matches=8)
    with pytest.raises(ValueError, match="names: expected 1 names"):
        paired([me], me, "scat", 2, matches=8, names=["a", "b"])
    with pytest.raises(ValueError, match="deals=0 is invalid"):
        duplicate(me, me, "scat", 2, deals=0)
    with pytest.raises(ValueError, match="one stream per match"):
        play_matches([me], np.zeros((4, 2), np.int64), "scat", streams=np.arange(3))


def test_cli_eval_paired(capsys):
    argv = ["eval", "--paired", "--agents", "heuristic", "greedy", "random", "--matches", "20", "--seed", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "10 deck streams x 2 seats = 20 matches per agent against random" in out
    assert "difference heuristic - greedy" in out
    assert main(["eval", "--paired", "--agents", "heuristic"]) == 2
    assert "--paired needs at least two agents" in capsys.readouterr().err
