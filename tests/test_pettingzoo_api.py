"""PettingZoo's own checks plus the env's contract: illegal actions, spaces, infos, state, render."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import same_snapshot, stack, table
from pettingzoo.test import api_test, render_test, seed_test

from thirtyone_env import actions as A
from thirtyone_env import thirtyone_v0
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne

CASES = [
    (name, n)
    for name in Rules.preset_names()
    for n in sorted({2, 4, Rules.preset(name).max_players})
]


@pytest.mark.parametrize("name, n", CASES)
def test_pettingzoo_api_seed_and_render(name, n):
    api_test(thirtyone_v0.env(num_players=n, rules=name), num_cycles=300)
    seed_test(functools.partial(thirtyone_v0.env, num_players=n, rules=name), num_cycles=200)
    render_test(functools.partial(thirtyone_v0.env, num_players=n, rules=name))


@pytest.mark.parametrize("episode", ["match", "deal"])
def test_api_for_deal_episodes_and_penalize(episode):
    api_test(thirtyone_v0.env(num_players=3, episode=episode, illegal_action="penalize"), num_cycles=300)


def test_illegal_action_raises_with_the_legal_ids_and_changes_nothing():
    env = thirtyone_v0.env(num_players=3)
    env.reset(seed=5)
    raw = env.unwrapped
    before = raw.table.snapshot(), env.agent_selection, dict(raw._cumulative_rewards)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()
    assert legal[:2] == [A.DRAW_STOCK, A.DRAW_DISCARD]
    for bad in (A.PASS, A.DISCARD0, 999, -1, 1.5):
        with pytest.raises(ValueError) as info:
            env.step(bad)
        text = str(info.value)
        assert repr(bad) in text and env.agent_selection in text and str(legal) in text
        assert "draw stock" in text
    assert same_snapshot(raw.table.snapshot(), before[0])  # state, RNG, mask: nothing moved
    assert env.agent_selection == before[1] and raw._cumulative_rewards == before[2]
    env.step(A.DRAW_STOCK)  # still playable


def test_penalize_gives_minus_one_to_the_offender_and_ends():
    env = thirtyone_v0.env(num_players=3, illegal_action="penalize")
    env.reset(seed=5)
    offender = env.agent_selection
    env.step(A.PASS)
    assert all(env.terminations.values())
    assert env.rewards == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term and not obs["action_mask"].any()
        assert reward == (-1.0 if agent == offender else 0.0)
        env.step(None)
    assert env.agents == []


def test_spaces_are_built_once():
    env = thirtyone_v0.env(num_players=4, rules="italian")
    assert env.observation_space("player_1") is env.observation_space("player_1")
    assert env.action_space("player_1") is env.action_space("player_1")
    assert env.action_space("player_0").n == 44
    env.reset(seed=0)
    obs = env.observe("player_0")
    assert obs["observation"].dtype == np.int8 and obs["action_mask"].dtype == np.int8
    assert env.observation_space("player_0").contains(obs)


def test_infos_have_the_same_keys_every_step():
    env = thirtyone_v0.env(num_players=3)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    keys = {"deal", "turn", "chips", "in_play"}
    for _agent in env.agent_iter(max_iter=400):
        obs, _, term, trunc, info = env.last()
        assert set(env.infos) == set(env.agents)
        assert all(set(i) == keys for i in env.infos.values())
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_state_shape_and_contents():
    decks = [stack(["2C 3D 4S", "AH KH 5C", "6H 7S 8C"], "6D", "QH")]
    env = table("scat", 3, decks)
    state = env.state()
    d = 52
    assert state.shape == env.state_space.shape == ((3 + 1) * d + 3 + env.table.obs_dim,)
    assert state.dtype == np.int8
    hands = state[: 3 * d].reshape(3, d)
    dealt = [set(env.table.hand(0, seat)) for seat in range(3)]
    assert [len(h) for h in dealt] == [3, 3, 3]
    assert [set(np.flatnonzero(h)) for h in hands] == dealt
    assert state[3 * d : 4 * d].sum() == 52 - 9 - 1  # the stock
    assert state[4 * d : 4 * d + 3].tolist() == [0, 1, 0]  # seat 1 to act
    assert np.array_equal(state[4 * d + 3 :], env.observe("player_0")["observation"])


def test_render_ansi_and_human(capsys):
    env = thirtyone_v0.env(num_players=2, render_mode="ansi")
    env.reset(options={"decks": [stack(["2C 3D 4S", "AH KH 5C"], "6D", "QH")], "dealer": 0}, seed=0)
    text = env.render()
    assert isinstance(text, str)
    assert "player_1: AH KH 5C" in text and "(21)" in text and "discard: 6D" in text
    env.step(A.DRAW_STOCK)
    assert "last: player_1 draw stock" in env.render()
    human = thirtyone_v0.env(num_players=2, render_mode="human")
    human.reset(seed=0)
    assert human.render() is None
    assert "Thirty-one (scat)" in capsys.readouterr().out
    quiet = thirtyone_v0.env(num_players=2)
    quiet.reset(seed=0)
    assert quiet.render() is None


@pytest.mark.parametrize(
    "options, words",
    [
        ({"decks": [[51, 52]]}, ["card id 52", "0..51"]),
        ({"decks": [[51, 50, 51]]}, ["duplicate card AS"]),
        ({"dealer": 3}, ["dealer", "0..2"]),
    ],
)
def test_bad_reset_options_are_refused(options, words):
    env = thirtyone_v0.env(num_players=3)
    with pytest.raises(ValueError) as info:
        env.reset(seed=0, options=options)
    for word in words:
        assert word in str(info.value)


def test_vector_illegal_actions_raise_with_the_legal_ids():
    vec = VectorThirtyOne(3, num_players=2, seed=1)
    _, mask, _ = vec.reset()
    before = vec.snapshot()
    actions = np.array([A.DRAW_STOCK, A.PASS, A.DRAW_DISCARD])
    with pytest.raises(ValueError, match=r"table 1: action 3, legal \[0, 1"):
        vec.step(actions)
    assert same_snapshot(vec.snapshot(), before)
    with pytest.raises(ValueError, match="shape"):
        vec.step(np.zeros(2, np.int64))
