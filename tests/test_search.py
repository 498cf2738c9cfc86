"""SearchAgent: legal, deterministic under a seed, within its time budget, blind to hidden cards;
``Tables.from_observations`` (the worlds it searches) and the match-win table it scores with."""

from __future__ import annotations

import time

import numpy as np
import pytest

from agents import GreedyAgent, HeuristicAgent, make
from agents.search import SearchAgent, WinTable, choose, close_calls
from thirtyone_env import encoding as E
from thirtyone_env.actions import KNOCK
from thirtyone_env.engine import Tables, hand_value
from thirtyone_env.rules import Rules

FAST = dict(samples=6, budget_ms=None, table_matches=150)  # small: the tests check behaviour, not strength


def _positions(preset: str, n: int, tables: int = 12, seed: int = 0) -> Tables:
    """Tables in the middle of a deal, reached by heuristic play."""
    t = Tables(tables, n, preset, seed=seed)
    obs, mask, _ = t.reset()
    agent = HeuristicAgent(preset, n)
    for _ in range(5 + seed % 4):
        obs, mask, *_ = t.step(agent.act_batch(obs, mask))
    return t


def _hidden(t: Tables) -> tuple[np.ndarray, np.ndarray]:
    """The true opponents' hands (left first) and stocks of every table, as from_observations takes them."""
    n = t.num_players
    hands = np.full((t.num_tables, n - 1, 4), -1, np.int64)
    stocks = np.full((t.num_tables, 52), -1, np.int64)
    for i in range(t.num_tables):
        me = int(t.current_player[i])
        for r in range(n - 1):
            h = t.hand(i, (me + 1 + r) % n)
            hands[i, r, : len(h)] = h
        stock = t.stock(i)
        stocks[i, : len(stock)] = stock
    return hands, stocks


# -- worlds from observations ---------------------------------------------------------------------
@pytest.mark.parametrize("preset", Rules.preset_names())
@pytest.mark.parametrize("n", [2, 4])
def test_a_table_rebuilt_from_an_observation_shows_the_same_observation_and_moves(preset, n):
    t = _positions(preset, n, seed=n)
    hands, stocks = _hidden(t)
    w = Tables.from_observations(t.obs, hands, stocks, preset, n)
    np.testing.assert_array_equal(w.obs, t.obs)
    np.testing.assert_array_equal(w.mask, t.mask)
    assert (w.current_player == 0).all() and (w.card_counts()[:, : w.rules.deck_size] == 1).all()


def test_from_observations_names_bad_guesses():
    t = _positions("scat", 2)
    hands, stocks = _hidden(t)
    swapped = hands.copy()
    swapped[0, 0, 0] = stocks[0, 0]  # a stock card twice, a hand card nowhere
    with pytest.raises(ValueError, match="table 0: cards .* missing or held twice"):
        Tables.from_observations(t.obs, swapped, stocks, "scat", 2)
    with pytest.raises(ValueError, match=r"hands must have shape \(12, 1, 4\)"):
        Tables.from_observations(t.obs, hands[:, :, :3], stocks, "scat", 2)
    short = stocks.copy()
    short[1, np.flatnonzero(short[1] >= 0)[-1]] = -1
    with pytest.raises(ValueError, match="table 1: cards"):
        Tables.from_observations(t.obs, hands, short, "scat", 2)


# -- the agent ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset, n", [("scat", 2), ("italian", 3), ("swedish", 4)])
def test_search_is_legal_and_deterministic_under_a_seed(preset, n):
    t = _positions(preset, n, tables=6, seed=1)
    policy = HeuristicAgent(preset, n)
    first = SearchAgent(preset, n, seed=7, policy=policy, **FAST).act_batch(t.obs, t.mask)
    again = SearchAgent(preset, n, seed=7, policy=policy, **FAST).act_batch(t.obs, t.mask)
    np.testing.assert_array_equal(first, again)
    assert t.mask[np.arange(t.num_tables), first].all()
    assert not ((first == KNOCK) & (policy.act_batch(t.obs, t.mask) != KNOCK)).any()  # knocks stay the policy's
    one = SearchAgent(preset, n, seed=7, policy=policy, **FAST)
    obs = {"observation": t.obs[0], "action_mask": t.mask[0]}
    assert t.mask[0, one.act(obs)]


def test_search_respects_its_time_budget():
    t = _positions("scat", 2, tables=4)
    agent = SearchAgent("scat", 2, seed=0, policy=HeuristicAgent("scat", 2), samples=100_000, chunk=4,
                        budget_ms=150, table_matches=150)
    agent.act_batch(t.obs[:1], t.mask[:1])  # the win table is built outside the budget, once
    start = time.process_time()
    actions = agent.act_batch(t.obs, t.mask)
    elapsed = time.process_time() - start
    assert t.mask[np.arange(4), actions].all()
    assert 4 <= agent.worlds_played < 100_000
    assert elapsed < 2 * 0.150 * 4  # four decisions of CPU time, with room for one chunk's misestimate


def test_belief_and_decision_never_use_hidden_information():
    t = _positions("scat", 2, tables=8, seed=2)
    hands, stocks = _hidden(t)
    # another deal of the cards the acting seat cannot see: the opponents' hidden cards and the stock
    rng = np.random.default_rng(0)
    other_hands, other_stocks = hands.copy(), stocks.copy()
    for i in range(t.num_tables):
        known = set(np.flatnonzero(E.views(t.obs[i], 52, 2)["opp_known"]).tolist())
        slots = [(0, j) for j in range(3) if hands[i, 0, j] not in known]
        cards = [hands[i, 0, j] for _, j in slots] + [c for c in stocks[i] if c >= 0]
        rng.shuffle(cards)
        for (r, j), c in zip(slots, cards, strict=False):
            other_hands[i, r, j] = c
        rest = cards[len(slots):]
        other_stocks[i, : len(rest)] = rest
    changed = Tables.from_observations(t.obs, other_hands, other_stocks, "scat", 2)
    assert (changed.obs == t.obs).all() and not (other_hands == hands).all()
    agent = SearchAgent("scat", 2, seed=3, policy=HeuristicAgent("scat", 2), **FAST)
    seeds = np.arange(t.num_tables)
    np.testing.assert_array_equal(agent.belief(t.obs, 8, seeds)[0], agent.belief(changed.obs, 8, seeds)[0])
    np.testing.assert_array_equal(
        SearchAgent("scat", 2, seed=3, policy=HeuristicAgent("scat", 2), **FAST).act_batch(t.obs, t.mask),
        SearchAgent("scat", 2, seed=3, policy=HeuristicAgent("scat", 2), **FAST).act_batch(changed.obs, changed.mask))


def test_belief_deals_only_what_the_seat_cannot_see():
    t = _positions("russian", 3, tables=10, seed=3)
    agent = SearchAgent("russian", 3, seed=0, policy=HeuristicAgent("russian", 3), **FAST)
    hands, stocks = agent.belief(t.obs, 5, np.arange(10))
    worlds = Tables.from_observations(np.repeat(t.obs, 5, axis=0), hands, stocks, "russian", 3)  # every card once
    np.testing.assert_array_equal(worlds.obs, np.repeat(t.obs, 5, axis=0))
    assert len({tuple(h.ravel()) for h in hands[:5]}) > 1  # the guesses differ


def test_a_knock_is_read_as_a_strong_hand():
    t = Tables(64, 2, "scat", seed=4)
    obs, mask, _ = t.reset()
    agent = HeuristicAgent("scat", 2)
    knocked = np.zeros(64, bool)
    for _ in range(30):  # until an opponent knocked at many tables: the seat to act sees the knock
        actions = agent.act_batch(obs, mask)
        obs, mask, *_ = t.step(actions, rows=np.flatnonzero(~knocked))
        knocked |= E.views(obs, 52, 2)["opp_knocked"][:, 0] == 1
    rows = np.flatnonzero(knocked)
    assert rows.size >= 5
    search = SearchAgent("scat", 2, seed=0, policy=agent, **FAST)
    seen = obs[rows].copy()
    blind = seen.copy()  # the same observations with the knock hidden: a uniform deal
    blind[:, E.offsets(52, 2)[E.OPP_KNOCKED]] = 0
    values, uniform = (np.array([hand_value(h[0][h[0] >= 0].tolist(), "scat") for h in search.belief(o, 20, rows)[0]])
                       for o in (seen, blind))
    assert (2 * values >= search.wins.knock_floor2).mean() > 0.75  # rare hands: the best of 64 tries
    assert values.mean() > uniform.mean() + 3


def test_win_table_prefers_more_lives():
    wins = WinTable(Rules.preset("scat"), 2, matches=300)
    chips = np.array([[3, 3], [3, 1], [1, 3], [0, 0]])
    status = np.array([[1, 1], [1, 1], [1, 1], [2, 2]])
    p = wins(chips, status)
    assert p[1] > p[0] > p[2] and p[0] == pytest.approx(0.5, abs=0.05) and p[3] == pytest.approx(0.5, abs=0.1)
    np.testing.assert_allclose(wins(chips, status, seat=1), 1 - p, atol=0.05)


def test_choose_keeps_the_policy_move_unless_another_is_clearly_better():
    values = np.zeros((2, 4, 6))
    values[:, :, 2] = np.nan  # illegal
    values[0, :, 1] = [0.2, 0.3, 0.2, 0.3]  # clearly better than move 0
    values[1, :, 1] = [0.5, -0.4, 0.5, -0.4]  # better on average, but noisily
    np.testing.assert_array_equal(choose(values, np.array([0, 0]), z=1.0), [1, 0])
    np.testing.assert_array_equal(choose(values, np.array([0, 0]), z=0.0), [1, 1])


def test_close_calls_are_the_ones_between_the_two_bars():
    values = np.zeros((3, 4, 2))
    values[0, :, 1] = [0.2, 0.3, 0.2, 0.3]  # gain 0.25, se 0.029: clearly better, decided
    values[1, :, 1] = [0.5, -0.3, 0.5, -0.3]  # gain 0.1, se 0.23: close at close=0.25, not at close=0.5
    values[2, :, 1] = [-0.1, -0.2, -0.1, -0.2]  # worse: the policy's move is best
    base = np.zeros(3, np.int64)
    np.testing.assert_array_equal(close_calls(values, base, z=3.0, close=0.25), [False, True, False])
    np.testing.assert_array_equal(close_calls(values, base, z=3.0, close=0.5), [False, False, False])


def test_close_calls_get_more_worlds_and_the_rest_keep_their_choice():
    t = _positions("scat", 2, tables=12, seed=5)
    policy = HeuristicAgent("scat", 2)
    plain = SearchAgent("scat", 2, seed=4, policy=policy, samples=8, budget_ms=None, table_matches=150)
    expected = plain.act_batch(t.obs, t.mask)
    never = SearchAgent("scat", 2, seed=4, policy=policy, samples=8, max_samples=32, close=3.0, budget_ms=None,
                        table_matches=150)  # nothing is above 3 se and at most 3 se: no call is close
    np.testing.assert_array_equal(never.act_batch(t.obs, t.mask), expected)
    assert never.worlds_played == plain.worlds_played == 8
    runs = [SearchAgent("scat", 2, seed=4, policy=policy, samples=8, max_samples=32, close=0.0, budget_ms=None,
                        table_matches=150) for _ in range(2)]
    first, again = (agent.act_batch(t.obs, t.mask) for agent in runs)
    np.testing.assert_array_equal(first, again)
    assert t.mask[np.arange(t.num_tables), first].all()
    assert 8 < runs[0].worlds_played < 32  # some tables' best move gained something after 8 worlds, not all


def test_make_builds_search_from_its_spec():
    agent = make("search:samples=3,ms=40,z=1:greedy", "scat", 2, seed=1)
    assert isinstance(agent, SearchAgent) and isinstance(agent.policy, GreedyAgent)
    assert (agent.samples, agent.budget_ms, agent.z, agent.name) == (3, 40.0, 1.0, "search:greedy")
    assert make("search:heuristic", "scat", 2).samples == 64
    wide = make("search:samples=16,max=128,close=0.5", "scat", 2)
    assert (wide.samples, wide.max_samples, wide.close) == (16, 128, 0.5)
    with pytest.raises(ValueError, match="max_samples=8 is invalid; allowed: an integer >= 16"):
        make("search:samples=16,max=8", "scat", 2)
    with pytest.raises(ValueError, match="close=4.0 is invalid"):
        make("search:close=4", "scat", 2)
    assert make("search:z=0.5", "scat", 2).close == 0.5  # the default close follows a z below it
    with pytest.raises(ValueError, match="search option 'depth' is unknown"):
        make("search:depth=3", "scat", 2)
    with pytest.raises(ValueError, match="samples=0 is invalid"):
        make("search:samples=0", "scat", 2)
