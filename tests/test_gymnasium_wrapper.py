"""``SingleAgentEnv``: Gymnasium's checker, the registration, scaling, seeding, opponents and vector envs."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from conftest import same_snapshot
from gymnasium.utils.env_checker import check_env

from agents import GreedyAgent, RandomAgent
from thirtyone_env import encoding
from thirtyone_env.engine import OUT
from thirtyone_env.wrappers import ENV_ID, SingleAgentEnv


def masked_choice(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(rng.choice(legal)) if len(legal) else 0  # no legal action: a finished env ignores it


def play(env: SingleAgentEnv, seed: int, policy_seed: int = 0) -> tuple[list[int], float, int]:
    """A masked random episode: (learner actions, final reward, steps)."""
    rng = np.random.default_rng(policy_seed)
    _, info = env.reset(seed=seed)
    actions, done, reward = [], False, 0.0
    while not done:
        actions.append(masked_choice(rng, info["action_mask"]))
        _, reward, done, truncated, info = env.step(actions[-1])
        assert not truncated
    return actions, reward, len(actions)


@pytest.mark.parametrize("preset,players", [("scat", 2), ("italian", 3), ("swedish", 2)])
def test_check_env_passes(preset: str, players: int) -> None:
    # check_env steps unmasked action_space.sample() actions: those must not raise
    env = gymnasium.make(f"thirtyone_env.wrappers:{ENV_ID}", preset=preset, num_players=players,
                         illegal_action="penalize")
    check_env(env.unwrapped)


def test_registered_id_after_import() -> None:
    import thirtyone_env  # noqa: F401  (registers ThirtyOne-v0 with gymnasium, in either import order)
    import thirtyone_env.wrappers  # noqa: F401

    env = gymnasium.make(ENV_ID, preset="russian", num_players=3)
    assert env.unwrapped.rules.name == "russian"
    assert env.action_space == gymnasium.spaces.Discrete(56)
    aec_space = env.unwrapped._aec.observation_space("player_0")["observation"]
    assert env.observation_space.shape == aec_space.shape


def test_observation_is_the_aec_vector_scaled_into_unit_box() -> None:
    env = SingleAgentEnv("swedish", 3, seat=1)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=5)
    for _ in range(40):
        raw = env._aec.observe("player_1")["observation"]
        assert obs.dtype == np.float32 and env.observation_space.contains(obs)
        np.testing.assert_array_equal(np.rint(obs * env.obs_scale).astype(np.int8), raw)
        np.testing.assert_array_equal(info["action_mask"], env._aec.observe("player_1")["action_mask"] > 0)
        obs, _, done, _, info = env.step(masked_choice(rng, info["action_mask"]))
        if done:
            obs, info = env.reset()


def test_learner_is_to_act_after_reset_and_every_step() -> None:
    env = SingleAgentEnv("scat", 4, seat="random")
    rng = np.random.default_rng(1)
    seats = set()
    for seed in range(12):
        _, info = env.reset(seed=seed)
        seats.add(info["seat"])
        done = False
        while not done:
            assert env._aec.agent_selection == f"player_{env.seat}"
            np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
            assert env.action_masks().any()
            _, _, done, _, info = env.step(masked_choice(rng, info["action_mask"]))
        assert not env.action_masks().any()  # nothing is legal once the match is over
    assert seats == {0, 1, 2, 3}


@pytest.mark.parametrize("players", [2, 3])
def test_match_reward_only_at_the_end(players: int) -> None:
    env = SingleAgentEnv("scat", players, opponents=RandomAgent("scat", players), seat=0)
    rng = np.random.default_rng(2)
    finals = set()
    for seed in range(15):
        _, info = env.reset(seed=seed)
        done, reward = False, 0.0
        while not done:
            _, reward, done, _, info = env.step(masked_choice(rng, info["action_mask"]))
            if not done:
                assert reward == 0.0
        finals.add(round(reward, 6))
        # the engine's own verdict: the learner won iff it is the last seat in play
        won = env._aec.table.status[0, 0] != OUT
        assert reward == (1.0 if won else pytest.approx(-1 / (players - 1)))
    assert finals == {1.0, round(-1 / (players - 1), 6)}


def test_deal_episode_reward_is_net_chips() -> None:
    env = SingleAgentEnv("swedish", 2, seat=0, episode="deal")
    rng = np.random.default_rng(3)
    rewards = set()
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert info["chips"] == 20 - 1  # the ante is paid at the deal
        done = False
        while not done:
            _, reward, done, _, info = env.step(masked_choice(rng, info["action_mask"]))
        assert reward == info["chips"] - 20  # pot won minus ante
        rewards.add(reward)
    assert len(rewards) > 1


def test_illegal_action_raises_and_leaves_state_unchanged() -> None:
    env = SingleAgentEnv("scat", 2, seat=0)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    before = env._aec.table.snapshot()
    with pytest.raises(ValueError, match=f"illegal action {illegal}"):
        env.step(illegal)
    assert same_snapshot(env._aec.table.snapshot(), before)


def test_penalize_forfeits_the_match() -> None:
    env = SingleAgentEnv("scat", 3, seat=0, illegal_action="penalize")
    _, info = env.reset(seed=0)
    _, reward, done, _, info = env.step(int(np.flatnonzero(~info["action_mask"])[0]))
    assert done and reward == -1.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_seeded_reset_replays_table_seat_and_opponents() -> None:
    # default opponents (HeuristicAgent if agents/ is importable) and a random seat
    env_a, env_b = SingleAgentEnv("scat", 3), SingleAgentEnv("scat", 3)
    for seed in (0, 7):
        assert play(env_a, seed) == play(env_b, seed)
        obs_a, _ = env_a.reset(seed=seed)
        obs_b, _ = env_b.reset(seed=seed)
        np.testing.assert_array_equal(obs_a, obs_b)
    # random opponents are reseeded too: the same seed replays although their rng moved on
    env = SingleAgentEnv("scat", 2, opponents=RandomAgent("scat", 2, seed=0))
    first = play(env, 11)
    play(env, 12)
    assert play(env, 11) == first
    assert len({tuple(play(env, s)[0]) for s in range(6)}) > 1


class Scripted:
    """Records what it is shown; plays the first legal action."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def act(self, obs: dict) -> int:
        self.seen.append(obs)
        return int(np.flatnonzero(obs["action_mask"])[0])


def test_opponents_act_for_their_own_seats_only() -> None:
    opps = [Scripted(), Scripted()]
    env = SingleAgentEnv("scat", 3, opponents=opps, seat=1)
    play(env, 4)
    assert opps[0].seen and opps[1].seen
    for opp in opps:
        assert all(o["action_mask"].any() and o["observation"].dtype == np.int8 for o in opp.seen)


def test_constructor_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="seat"):
        SingleAgentEnv("scat", 2, seat=2)
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv("scat", 3, opponents=[RandomAgent("scat", 3)])
    with pytest.raises(ValueError, match="render_mode"):
        SingleAgentEnv("scat", 2, render_mode="rgb")  # rgb_array is supported (render_svg)
    with pytest.raises(ValueError):
        SingleAgentEnv("no-such-preset", 2)


def test_render_ansi_shows_only_the_learners_hand() -> None:
    env = SingleAgentEnv("scat", 2, seat=0, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "player_0" in text and "??" in text


@pytest.mark.parametrize("vector_cls", [gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv])
def test_vector_envs(vector_cls) -> None:
    fns = [lambda: SingleAgentEnv("scat", 2, opponents=RandomAgent("scat", 2)) for _ in range(2)]
    envs = vector_cls(fns)
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert obs.shape == (2, encoding.obs_dim(52, 2)) and obs.dtype == np.float32
        rng = np.random.default_rng(0)
        episodes = 0
        for _ in range(150):
            actions = np.array([masked_choice(rng, m) for m in infos["action_mask"]])
            obs, rewards, terms, truncs, infos = envs.step(actions)
            assert envs.single_observation_space.contains(obs[0]) and not truncs.any()
            assert set(rewards[terms].tolist()) <= {1.0, -1.0} and not rewards[~terms].any()
            episodes += int(terms.sum())
        assert episodes >= 2  # autoreset carried the envs into new matches
    finally:
        envs.close()


def test_opponents_by_name_play_like_the_agent_objects() -> None:
    named = SingleAgentEnv("scat", 2, opponents="greedy", seat=0)
    assert isinstance(named.opponents[0], GreedyAgent)
    built = SingleAgentEnv("scat", 2, opponents=GreedyAgent("scat", 2), seat=0)
    for seed in (3, 4):
        assert play(named, seed) == play(built, seed)
    mixed = SingleAgentEnv("scat", 3, opponents=["greedy", "random"], seat=2)
    assert [type(o) for o in mixed.opponents] == [GreedyAgent, RandomAgent]
    actions, reward, _ = play(mixed, 5)
    assert actions and reward != 0.0
    with pytest.raises(ValueError, match="unknown agent"):
        SingleAgentEnv("scat", 2, opponents="no-such-agent")
