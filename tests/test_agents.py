"""The rule-based agents: always legal, Greedy's rules on stacked decks, Heuristic beats Greedy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import agents
from agents import GreedyAgent, HeuristicAgent, HumanAgent, RandomAgent, tournament
from thirtyone_env import encoding as E
from thirtyone_env import evaluation, thirtyone_v0
from thirtyone_env.actions import DISCARD0, DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS
from thirtyone_env.agent import Agent, make_agent
from thirtyone_env.cards import parse_cards
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne

RULES = [Rules.preset(name) for name in Rules.preset_names()] + [
    Rules.preset("italian", discard_before_stock_draw=True).replace(name="italian-throw-first"),
    Rules.preset("scat", may_return_discard=True, knock_min_value=26).replace(name="scat-custom"),
]
MAKERS = [RandomAgent, GreedyAgent, HeuristicAgent]


def _ids(rules):
    return rules.name


@pytest.mark.parametrize("rules", RULES, ids=_ids)
@pytest.mark.parametrize("num_players", [2, 4])
def test_agents_choose_legal_actions_in_vector_tables(rules, num_players):
    agents = [make(rules, num_players, seed=1) for make in MAKERS]
    vec = VectorThirtyOne(64, num_players=num_players, rules=rules, seed=3)
    off = E.offsets(rules.deck_size, num_players)
    obs, mask, player = vec.reset()
    phases = np.zeros(3, np.int64)
    final_round = 0
    for step in range(300):
        # a different agent per table and step, so every agent meets every situation
        choice = (np.arange(vec.num_envs) + step) % len(agents)
        actions = np.zeros(vec.num_envs, np.int64)
        for a, agent in enumerate(agents):
            rows = np.flatnonzero(choice == a)
            actions[rows] = agent.act_batch(obs[rows], mask[rows])
        assert mask[np.arange(vec.num_envs), actions].all()
        phases += obs[:, off[E.PHASE] : off[E.PHASE] + 3].sum(axis=0)
        final_round += int(obs[:, off[E.FINAL_ROUND]].sum())
        obs, mask, player, _, _ = vec.step(actions)
    assert phases[0] > 0 and phases[1] > 0 and final_round > 0
    assert (phases[2] > 0) == rules.discard_before_stock_draw


@pytest.mark.parametrize("rules", RULES, ids=_ids)
def test_agents_play_whole_matches_in_the_aec_env(rules):
    n = 3
    env = thirtyone_v0.env(num_players=n, rules=rules)
    seats = [HeuristicAgent(rules, n), GreedyAgent(rules, n), RandomAgent(rules, n, seed=0)]
    for seed in range(3):
        env.reset(seed=seed)
        for agent_name in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            action = seats[int(agent_name.split("_")[1])].act(observation)
            assert observation["action_mask"][action] == 1
            env.step(action)


# -- Greedy on stacked decks ------------------------------------------------------------
def _deal(seat0: str, seat1: str, discard: str, stock: str = "", rules="scat", **kwargs):
    """A 2-player env with dealer 1: seat 0 acts first holding ``seat0``."""
    a, b = parse_cards(seat0), parse_cards(seat1)
    deck = [a[0], b[0], a[1], b[1], a[2], b[2], *parse_cards(discard), *parse_cards(stock)]
    env = thirtyone_v0.env(num_players=2, rules=rules, **kwargs)
    env.reset(seed=0, options={"decks": [deck], "dealer": 1})
    return env


def test_greedy_takes_a_discard_that_raises_its_hand_and_throws_the_worst_card():
    env = _deal("KH 8H 2C", "3D 4S 5C", "QH")
    greedy = GreedyAgent("scat", 2, knock_at=31)
    assert greedy.act(env.observe("player_0")) == DRAW_DISCARD
    env.step(DRAW_DISCARD)
    assert greedy.act(env.observe("player_0")) == DISCARD0 + parse_cards("2C")[0]


def test_greedy_draws_from_the_stock_when_the_discard_does_not_help_and_throws_the_drawn_card_back():
    env = _deal("KH 8H 5H", "3D 4S 5C", "2D", stock="3C")
    greedy = GreedyAgent("scat", 2, knock_at=31)
    assert greedy.act(env.observe("player_0")) == DRAW_STOCK
    env.step(DRAW_STOCK)
    assert greedy.act(env.observe("player_0")) == DISCARD0 + parse_cards("3C")[0]


def test_greedy_knocks_at_its_threshold():
    obs = _deal("KH QH 7H", "3D 4S 5C", "2D").observe("player_0")  # 27 points
    assert GreedyAgent("scat", 2, knock_at=27).act(obs) == KNOCK
    assert GreedyAgent("scat", 2, knock_at=27.5).act(obs) == DRAW_STOCK


def test_greedy_never_throws_the_card_it_may_not_throw():
    env = _deal("KH QH 2C", "3D 4S 5C", "2H")
    greedy = GreedyAgent("scat", 2, knock_at=31)
    assert greedy.act(env.observe("player_0")) == DRAW_DISCARD
    env.step(DRAW_DISCARD)
    obs = env.observe("player_0")
    two_h, two_c = DISCARD0 + parse_cards("2H")[0], DISCARD0 + parse_cards("2C")[0]
    assert obs["action_mask"][two_h] == 0
    assert greedy.act(obs) == two_c
    obs["action_mask"][two_c] = 0  # a narrower mask is still respected
    assert greedy.act(obs) not in (two_c, two_h) and obs["action_mask"][greedy.act(obs)] == 1


def test_greedy_passes_in_the_russian_final_round_only_with_a_good_hand():
    env = _deal("KH QH 7H", "2C 3D 4S", "2H", rules="russian")
    env.step(KNOCK)  # player_0 knocks; player_1 holds a bad hand and draws
    assert GreedyAgent("russian", 2, knock_at=27).act(env.observe("player_1")) == DRAW_STOCK
    env = _deal("KH QH 7H", "AS KS QS", "5D", rules="russian")
    env.step(KNOCK)  # player_1 holds 31 (no blitz under ace_king_ten): it stands
    assert GreedyAgent("russian", 2, knock_at=27).act(env.observe("player_1")) == PASS


# -- Heuristic --------------------------------------------------------------------------
def test_heuristic_beats_greedy_heads_up_and_at_a_four_player_table():
    rules = "scat"
    two = tournament([HeuristicAgent(rules, 2), GreedyAgent(rules, 2)], rules, 2, 400, seed=11, seating=[0, 1])
    assert two.win_rate(0) > 0.56, two.win_rate(0)
    four = tournament(
        [HeuristicAgent(rules, 4), GreedyAgent(rules, 4)], rules, 4, 300, seed=12, seating=[0, 0, 1, 1]
    )
    assert four.win_rate(0) > 0.53, four.win_rate(0)
    assert sum(r.wins for r in two.results) == pytest.approx(400)
    assert sum(r.wins for r in four.results) == pytest.approx(300)


def test_heuristic_keeps_the_suit_whose_high_cards_are_live():
    # 9C 8C 9D 8D: every throw leaves 17; the clubs' high cards are gone, so a club goes
    env = _deal("9C 8C 9D", "3S 4S 2S", "10C", stock="8D")
    env.step(DRAW_STOCK)
    obs = env.observe("player_0")
    views = E.views(obs["observation"], 52, 2)
    for card in parse_cards("JC QC KC AC"):  # as if all of them were in the discard pile
        views["discard_pile"][card] = 1
        views["discard_seen"][card] = 1
    assert HeuristicAgent("scat", 2).act(obs) - DISCARD0 in parse_cards("9C 8C")
    for card in parse_cards("JC QC KC AC"):
        views["discard_pile"][card] = 0
    for card in parse_cards("JD QD KD AD"):  # now the diamonds are dead instead
        views["discard_pile"][card] = 1
    assert HeuristicAgent("scat", 2).act(obs) - DISCARD0 in parse_cards("9D 8D")


def test_act_and_act_batch_agree():
    vec = VectorThirtyOne(128, num_players=3, rules="swedish", seed=5)
    rows, masks = [], []
    greedy = GreedyAgent("swedish", 3)
    obs, mask, _ = vec.reset()
    for _ in range(20):
        rows.append(obs.copy())
        masks.append(mask.copy())
        obs, mask, _, _, _ = vec.step(greedy.act_batch(obs, mask))
    rows, masks = np.concatenate(rows), np.concatenate(masks)
    for agent in (GreedyAgent("swedish", 3), HeuristicAgent("swedish", 3)):
        batch = agent.act_batch(rows, masks)
        one = [
            agent.act({"observation": r, "action_mask": m.astype(np.int8)})
            for r, m in zip(rows, masks, strict=True)
        ]
        np.testing.assert_array_equal(batch, one)


@pytest.mark.parametrize(
    "rules", ["scat", "italian", "russian", Rules.preset("swedish").replace(three_of_a_kind=30, three_aces="31")]
)
def test_heuristic_draw_average_from_rank_sets_equals_the_sum_over_live_cards(rules):
    """``_draw_total`` (rank-set lookup tables) is exactly the loop over live cards it replaced,
    pairs of one rank (special hands) included."""
    from numba import njit

    from agents import heuristic as H
    from thirtyone_env.engine.hands import hand_value2

    @njit
    def both(obs, off, params, lut, p, q, scratch):
        hand, seen = np.empty(4, np.int64), np.empty(H.MAXD, np.int8)
        H._scan(obs, off, params, 2, lut, hand, scratch, seen)
        loop = 0
        for x in range(params[H.P_DECK_SIZE]):
            if H._is_live(x, scratch, params):
                loop += hand_value2(p, q, x, params)
        return loop, H._draw_total(p, q, scratch, params, lut)

    agent = HeuristicAgent(rules, 2)
    d, rank_of = agent.rules.deck_size, agent.params[H.P_RANK_OF : H.P_RANK_OF + agent.rules.deck_size]
    rng = np.random.default_rng(3)
    scratch = np.zeros(H.SCRATCH, np.int64)
    pile = slice(agent.offsets[E.DISCARD_PILE], agent.offsets[E.DISCARD_PILE] + d)
    for trial in range(600):
        obs = np.zeros(agent.obs_dim, np.int8)
        obs[pile] = rng.random(d) < rng.random()  # some cards are seen, so not live
        p = int(rng.integers(d))
        same = np.flatnonzero((rank_of == rank_of[p]) & (np.arange(d) != p))
        q = int(rng.choice(same)) if trial % 2 else int(rng.choice(np.delete(np.arange(d), p)))
        loop, fast = both(obs, agent.offsets, agent.params, agent.lut, p, q, scratch)
        assert loop == fast, (trial, p, q)


def test_random_agent_is_seeded_and_uniform_over_legal_actions():
    vec = VectorThirtyOne(256, num_players=2, rules="scat", seed=0)
    obs, mask, _ = vec.reset()
    a = RandomAgent("scat", 2, seed=7).act_batch(obs, mask)
    b = RandomAgent("scat", 2, seed=7).act_batch(obs, mask)
    c = RandomAgent("scat", 2, seed=8).act_batch(obs, mask)
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()
    # one row, many draws: every legal action comes up about equally often
    row = np.repeat(obs[:1], 6000, axis=0)
    m = np.repeat(mask[:1], 6000, axis=0)
    counts = np.bincount(RandomAgent("scat", 2, seed=1).act_batch(row, m), minlength=mask.shape[1])
    legal = np.flatnonzero(mask[0])
    assert set(np.flatnonzero(counts)) == set(legal)
    assert counts[legal].min() > 0.8 * 6000 / len(legal)


def test_bad_input_shapes_are_refused():
    agent = GreedyAgent("scat", 2)
    with pytest.raises(ValueError, match="expects obs"):
        agent.act_batch(np.zeros((2, 5), np.int8), np.zeros((2, 56), bool))
    with pytest.raises(ValueError, match="no legal action"):
        agent.act({"observation": np.zeros(agent.obs_dim, np.int8), "action_mask": np.zeros(56, np.int8)})


def test_agents_import_without_torch():
    code = "import sys, agents; agents.HeuristicAgent; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- Human ------------------------------------------------------------------------------
def _scripted(answers):
    printed: list[str] = []
    it = iter(answers)
    return printed, dict(input_fn=lambda prompt: next(it), print_fn=printed.append)


def test_human_sees_the_table_and_is_asked_again_after_bad_input():
    env = _deal("KH 8H 2C", "3D 4S 5C", "9C")
    printed, io = _scripted(["hello", "0", "take qs", "Take 9c"])
    human = HumanAgent("scat", 2, **io)
    assert human.act(env.observe("player_0")) == DRAW_DISCARD
    text = "\n".join(printed)
    assert "Your hand: 2C 8H KH  (value 18)" in text
    assert "Discard: 9C" in text and "You: 3 lives" in text and "Opponent 1 (your left): 3 lives" in text
    assert "1) draw stock  2) take 9C  3) knock" in text
    assert sum("is not a legal move here" in line for line in printed) == 3


def test_human_throws_by_name_number_or_card_and_sees_the_knock():
    env = _deal("KH 8H 2C", "3D 4S 5C", "9C", stock="7D")
    env.step(KNOCK)
    printed, io = _scripted(["d", "throw 2c"])
    human = HumanAgent("scat", 2, **io)
    assert human.act(env.observe("player_1")) == DRAW_STOCK
    assert "(KNOCKED)" in printed[0] and "Final round" in printed[0]
    env.step(DRAW_STOCK)
    printed, io = _scripted(["throw 2c", "QS", "7d"])  # 2C is not player_1's card
    assert HumanAgent("scat", 2, **io).act(env.observe("player_1")) == DISCARD0 + parse_cards("7D")[0]
    assert sum("is not a legal move here" in line for line in printed) == 2
    printed, io = _scripted(["2"])
    legal = np.flatnonzero(env.observe("player_1")["action_mask"])
    assert HumanAgent("scat", 2, **io).act(env.observe("player_1")) == legal[1]


# -- one protocol, one maker -------------------------------------------------------------
def test_agents_follow_the_one_protocol_and_the_package_reexports_the_one_tournament():
    for agent in (RandomAgent("scat", 2), GreedyAgent("scat", 2), HeuristicAgent("scat", 2), HumanAgent("scat", 2)):
        assert isinstance(agent, Agent)
    assert agents.tournament is evaluation.tournament
    assert agents.TournamentResult is evaluation.TournamentResult
    from agents import base

    for gone in ("tournament", "play_matches", "rotations", "TournamentResult"):
        assert not hasattr(base, gone), gone


@pytest.mark.parametrize("spec, cls", [("random", RandomAgent), ("greedy", GreedyAgent), ("heuristic", HeuristicAgent),
                                       (" heuristic ", HeuristicAgent)])
def test_make_builds_agents_from_text(spec, cls):
    rules = Rules.preset("russian")
    agent = agents.make(spec, rules, 3, seed=4)
    assert type(agent) is cls and agent.rules == rules and agent.num_players == 3
    assert type(make_agent(spec, "russian", 3)) is cls  # the core's maker resolves the same names
    if cls is RandomAgent:  # the seed is passed on: same seed, same moves
        vec = VectorThirtyOne(64, 3, rules, seed=0)
        obs, mask, _ = vec.reset()
        again = agents.make(spec, rules, 3, seed=4)
        np.testing.assert_array_equal(agent.act_batch(obs, mask), again.act_batch(obs, mask))


@pytest.mark.parametrize("spec", ["", "  ", "nobody", "random:3", "policy:", "pretrained:scat", "pretrained:_2p"])
def test_make_refuses_bad_specs(spec):
    with pytest.raises(ValueError):
        agents.make(spec, "scat", 2)


def test_make_agent_passes_objects_through_and_refuses_non_agents():
    greedy = GreedyAgent("scat", 2)
    assert make_agent(greedy, "scat", 2) is greedy
    with pytest.raises(ValueError, match="act"):
        make_agent(42, "scat", 2)
