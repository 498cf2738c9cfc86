"""The one tournament: one win definition, paired seeds, seatings, Wilson intervals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import action_id, stack

import agents
from agents import GreedyAgent, HeuristicAgent, RandomAgent
from thirtyone_env.engine import Tables
from thirtyone_env.evaluation import play_matches, score, seating_plan, tournament, wilson, win_shares
from thirtyone_env.rules import Rules


class Recording:
    """Wraps an agent; keeps every batch of observations it is shown."""

    def __init__(self, inner):
        self.inner = inner
        self.name = f"rec-{type(inner).__name__}"
        self.calls: list[np.ndarray] = []

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.calls.append(obs.copy())
        return self.inner.act_batch(obs, mask)


# -- the win definition ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "final, shares",
    [
        ([1.0, -0.5, -0.5], [1, 0, 0]),  # a sole winner
        ([-1 / 3, 1.0, -1 / 3, -1 / 3], [0, 1, 0, 0]),
        ([0.5, 0.5, -1.0], [0.5, 0.5, 0]),  # two co-winners share one win
        ([0.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]),  # a drawn match: every seat shares
        ([0.0, 0.0], [0.5, 0.5]),
        ([-1.0, 0.0, 0.0], [0, 0.5, 0.5]),  # seat 0 forfeited (illegal action): the others share
        ([-1.0, 2.0, -1.0], [0, 1, 0]),  # deal episodes: net chips
        ([3.0, 3.0 + 1e-7, -6.0], [0.5, 0.5, 0]),  # float32 noise is a tie
        ([3.0, 3.0 + 1e-3, -6.0], [0, 1, 0]),
    ],
)
def test_win_shares_by_hand(final, shares):
    got = win_shares(np.array(final, np.float32))
    assert got.shape == (len(final),)
    np.testing.assert_allclose(got, shares)
    assert got.sum() == pytest.approx(1.0)


def test_win_shares_of_many_matches_at_once():
    finals = np.array([[1, -1], [0, 0], [-1, 0], [-1, 1]], np.float32)
    np.testing.assert_allclose(win_shares(finals), [[1, 0], [0.5, 0.5], [0, 1], [0, 1]])


def _play(rules: Rules, n: int, decks: list, script: str) -> np.ndarray:
    """One match on stacked decks (dealer 0) by action names; returns its final rewards."""
    t = Tables(1, n, rules, seed=0, autoreset=False)
    t.reset(decks=decks, dealer=0)
    names = script.split()
    for k, name in enumerate(names):
        _, _, _, rewards, done = t.step(np.array([action_id(name, rules.deck)]))
        assert bool(done[0]) == (k == len(names) - 1), (k, name)
    return rewards[0].copy()


def test_a_real_drawn_match_and_a_real_shared_win_score_through_the_one_definition():
    # russian, one life each: seat 0 goes on honor, then the honor tiebreak finds identical ranks: a draw
    drawn = _play(Rules.preset("russian", lives=1), 2,
                  [stack(["2C 3D 5H", "KS QS JS"], "9D"), stack(["KH 9H 2C", "KD 9D 2S"], "4C", dealer=1)],
                  "knock pass knock pass")
    assert drawn.tolist() == [0.0, 0.0]
    # swedish after two deals: seats 0 and 1 hold the most chips and share the win
    swedish = Rules.preset("swedish", max_deals=2)
    shared = _play(swedish, 3,
                   [stack(["2D 3H 6C", "KS QS JS", "9H 8H 4C"], "9C", "4S 8D"),
                    stack(["KH QH JH", "9D 8D 4H", "2C 3D 5H"], "9C", "4S 8S 7S", dealer=1)],
                   "knock draw 4S draw 8D draw 4S knock draw 8S draw 7S")
    np.testing.assert_allclose(shared, [0.5, 0.5, -1])
    # everyone out at once: the remaining players share the win
    out = _play(Rules.preset("swedish-chips", lives=1), 2, [stack(["KD QD 3S", "KH QH 2C"], "9S", "4C")],
                "knock draw 4C")
    assert out.tolist() == [0.0, 0.0]

    np.testing.assert_allclose(win_shares(drawn), [0.5, 0.5])
    np.testing.assert_allclose(win_shares(shared), [0.5, 0.5, 0])
    np.testing.assert_allclose(win_shares(out), [0.5, 0.5])
    # scored: an agent in both winning seats adds its shares up to one win
    names = ["A", "B", "C"]
    three = score([None] * 3, swedish, 3, 0, shared[None], np.array([[0, 1, 2]]), names)
    assert [r.wins for r in three.results] == [0.5, 0.5, 0.0]
    two_seats = score([None] * 2, swedish, 3, 0, shared[None], np.array([[0, 0, 1]]), names[:2])
    assert [r.wins for r in two_seats.results] == [1.0, 0.0] and two_seats.results[0].seats == 2
    assert two_seats.results[0].mean_reward == pytest.approx(0.5) and two_seats.results[1].mean_reward == -1
    pair = score([None] * 2, "russian", 2, 0, np.stack([drawn, out]), np.array([[0, 1], [1, 0]]), names[:2])
    assert [r.wins for r in pair.results] == [1.0, 1.0] and pair.win_rate(0) == pair.win_rate(1) == 0.5
    np.testing.assert_allclose(pair.match_wins(0), [0.5, 0.5])


# -- tournaments -------------------------------------------------------------------------------
@pytest.mark.parametrize("n, makers, seating", [
    (3, [HeuristicAgent, GreedyAgent], "auto"),  # one-vs-rest: both agents in every match
    (3, [HeuristicAgent, GreedyAgent, RandomAgent], "rotate"),
    (4, [GreedyAgent, RandomAgent], [0, 1, 1, 0]),
])
def test_shares_sum_to_one_per_match_and_win_rates_to_one(n, makers, seating):
    field = [make("scat", n) for make in makers]
    res = tournament(field, "scat", n, 60, seed=3, seating=seating)
    assert res.matches == 60 and res.match_rewards.shape == (60, n) and res.plan.shape == (60, n)
    np.testing.assert_allclose(win_shares(res.match_rewards).sum(1), 1.0)
    np.testing.assert_allclose(sum(res.match_wins(i) for i in range(len(field))), 1.0)
    assert all(r.matches == 60 for r in res.results)  # every agent sits in every match here
    assert sum(res.win_rate(i) for i in range(len(field))) == pytest.approx(1.0)
    assert sum(r.wins for r in res.results) == pytest.approx(60)
    for i, r in enumerate(res.results):
        assert r.wins == pytest.approx(res.match_wins(i).sum())
        assert r.seats == int((res.plan == i).sum())
        assert res.interval(i) == r.ci == wilson(r.wins, r.matches)
        assert r.ci[0] <= r.win_rate <= r.ci[1] or r.win_rate in (0.0, 1.0)  # 0 and 1: see the Wilson tests
    text = res.table()
    assert "scat, " + str(n) + " players, 60 matches (seed 3)" in text
    assert all(r.name in text for r in res.results)


def test_agents_not_in_every_match_have_their_own_match_counts():
    field = [GreedyAgent("scat", 2), HeuristicAgent("scat", 2), RandomAgent("scat", 2, seed=0)]
    res = tournament(field, "scat", 2, 30, seed=4)  # rotate: each agent sits in two matches of three
    assert [r.matches for r in res.results] == [20, 20, 20]
    assert sum(r.wins for r in res.results) == pytest.approx(30)


def test_the_same_tournament_twice_is_identical():
    def run(seed: int):
        field = [RandomAgent("scat", 3, seed=5), RandomAgent("scat", 3, seed=6)]
        return tournament(field, "scat", 3, 40, seed=seed, num_tables=7)

    a, b = run(6), run(6)
    assert np.array_equal(a.match_rewards, b.match_rewards) and np.array_equal(a.plan, b.plan)
    assert [r.wins for r in a.results] == [r.wins for r in b.results]
    assert 0 < a.win_rate(0) < 1
    c = run(7)
    assert not np.array_equal(a.match_rewards, c.match_rewards)  # another seed, other matches


def _observations(field: list, rules: str, n: int, seed: int, plan: np.ndarray, num_tables: int):
    """What each agent is shown in a tournament: (its first batch, every row it saw as bytes)."""
    recorders = [Recording(a) for a in field]
    play_matches(recorders, plan, rules, seed, num_tables=num_tables)
    return [(r.calls[0], {row.tobytes() for call in r.calls for row in call}) for r in recorders]


def test_paired_seeds_deal_match_k_from_stream_k_whoever_plays():
    rules, n, matches, seed = "scat", 2, 12, 8
    plan = seating_plan(2, n, matches, "rotate")
    # match k's first deal is table k's deal of a batch seeded with the tournament's seed
    ref = Tables(matches, n, rules, seed=seed)
    ref.reset()
    first_actor = plan[np.arange(matches), ref.player]  # the agent that sees match k's first observation
    expected = [ref.obs[first_actor == a] for a in range(2)]
    assert all(len(e) for e in expected)  # both agents act first somewhere
    pairs = ([GreedyAgent(rules, n), RandomAgent(rules, n, seed=1)], [RandomAgent(rules, n, seed=2),
                                                                     HeuristicAgent(rules, n)])
    for field in pairs:
        # one table per match: every match starts at once, so each agent's first batch is known exactly
        seen = _observations(field, rules, n, seed, plan, num_tables=matches)
        for a in range(2):
            assert np.array_equal(seen[a][0], expected[a])
        # three tables play the twelve matches one after another: match k still deals from stream k
        seen = _observations(field, rules, n, seed, plan, num_tables=3)
        for k in range(matches):
            assert ref.obs[k].tobytes() in seen[first_actor[k]][1], k
    # the control: another seed deals other first hands
    other = _observations(pairs[0], rules, n, seed + 1, plan, num_tables=3)
    assert not any(ref.obs[k].tobytes() in other[first_actor[k]][1] for k in range(matches))


def test_a_match_depends_only_on_its_own_stream_and_seats():
    field = [GreedyAgent("russian", 3), HeuristicAgent("russian", 3)]  # deterministic agents
    plan = seating_plan(2, 3, 15, "one-vs-rest")
    base = play_matches(field, plan, "russian", seed=9, num_tables=4)
    changed = plan.copy()
    changed[5] = 1 - changed[5]  # other seats in match 5 only
    other = play_matches(field, changed, "russian", seed=9, num_tables=4)
    keep = np.arange(15) != 5
    assert np.array_equal(base[keep], other[keep])


@pytest.mark.parametrize("rules, n", [("scat", 2), ("italian", 4)])
def test_num_tables_does_not_change_results(rules, n):
    field = [GreedyAgent(rules, n), HeuristicAgent(rules, n)]
    runs = [tournament(field, rules, n, 24, seed=10, num_tables=k) for k in (1, 5, 24, 256)]
    for r in runs[1:]:
        assert np.array_equal(r.match_rewards, runs[0].match_rewards)
        assert [x.wins for x in r.results] == [x.wins for x in runs[0].results]


def test_agents_package_reexports_the_tournament_with_pattern_seating():
    field = [agents.make("heuristic", "scat", 4), agents.make("greedy", "scat", 4)]
    res = agents.tournament(field, "scat", 4, 8, seed=1, seating=[0, 0, 1, 1], names=["h", "g"])
    assert [r.name for r in res.results] == ["h", "g"]
    assert res.plan.tolist() == [[0, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 1]] * 2


# -- seating plans ------------------------------------------------------------------------------
def test_seating_plans():
    np.testing.assert_array_equal(seating_plan(3, 2, 4, "rotate"), [[0, 1], [1, 2], [2, 0], [0, 1]])
    one = seating_plan(3, 4, 8, "one-vs-rest")
    assert ((one == 0).sum(1) == 1).all()  # agent 0 once per match, in seat k mod 4
    assert [int(np.flatnonzero(row == 0)[0]) for row in one] == [k % 4 for k in range(8)]
    assert set(one[one != 0].tolist()) == {1, 2}
    np.testing.assert_array_equal(seating_plan(2, 3, 3, "auto"), seating_plan(2, 3, 3, "one-vs-rest"))
    np.testing.assert_array_equal(seating_plan(2, 2, 3, "auto"), seating_plan(2, 2, 3, "rotate"))
    np.testing.assert_array_equal(seating_plan(2, 3, 4, [0, 1, 1]), [[0, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]])
    for bad in ("random", [0, 1], [0, 1, 2]):
        with pytest.raises(ValueError):
            seating_plan(2, 3, 3, bad)
    with pytest.raises(ValueError, match="two agents"):
        seating_plan(1, 3, 3, "one-vs-rest")


def test_tournament_refuses_bad_arguments():
    field = [GreedyAgent("scat", 2), GreedyAgent("scat", 2)]
    for matches in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="matches"):
            tournament(field, "scat", 2, matches)
    with pytest.raises(ValueError, match="names"):
        tournament(field, "scat", 2, 4, names=["only one"])
    with pytest.raises(ValueError, match="act_batch"):
        tournament([field[0], object()], "scat", 2, 4)
    with pytest.raises(ValueError):
        tournament(field, "scat", 11, 4)


# -- Wilson intervals ------------------------------------------------------------------------------
def test_wilson_brackets_the_rate():
    for n in (1, 7, 50, 1000):
        for wins in np.linspace(0, n, 9):
            lo, hi = wilson(wins, n)
            assert 0 <= lo <= wins / n <= hi <= 1
            lo2, hi2 = wilson(n - wins, n)
            assert lo == pytest.approx(1 - hi2) and hi == pytest.approx(1 - lo2)  # symmetric
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert np.diff(wilson(500, 1000)) < np.diff(wilson(50, 100))  # more matches, a narrower interval
    assert wilson(2.5, 5) == pytest.approx(wilson(5, 10), abs=0.2)  # shared wins count as fractions


def test_wilson_contains_a_rate_of_zero_and_one():
    for n in range(1, 301):
        assert wilson(n, n)[1] == 1.0, n
        assert wilson(0, n)[0] == 0.0, n
        # the other bound is the Wilson formula's, continuous with near-certain records
        assert wilson(n, n)[0] == pytest.approx(n / (n + 1.96**2))
        assert wilson(0, n)[1] == pytest.approx(1 - wilson(n, n)[0])
    # as seen in a tournament: Greedy wins every match against random players
    res = tournament([GreedyAgent("scat", 4), RandomAgent("scat", 4, seed=0)], "scat", 4, 60, seed=3,
                     seating=[0, 1, 1, 0])
    assert res.win_rate(0) == 1.0 and res.interval(0)[0] <= 1.0 <= res.interval(0)[1]
