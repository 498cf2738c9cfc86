"""``ThirtyOneVecEnv``: the batched engine as a Stable-Baselines3 ``VecEnv`` (SB3's contract,
``VecMonitor``, sb3-contrib's ``MaskablePPO``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (pip install 'thirtyone-env[sb3]')")
torch = pytest.importorskip("torch")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from thirtyone_env.gym_vector import ThirtyOneVectorEnv  # noqa: E402
from thirtyone_env.sb3 import ThirtyOneVecEnv  # noqa: E402

N = 8


def legal_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    noise = rng.random(masks.shape)
    noise[~masks] = -1.0
    return noise.argmax(axis=1).astype(np.int64)


def play(env: ThirtyOneVecEnv, steps: int, seed: int = 0) -> list:
    """``steps`` of random legal actions through step_async/step_wait; what came back, per step."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        masks = env.action_masks()
        env.step_async(legal_actions(rng, masks))
        obs, rewards, dones, infos = env.step_wait()
        out.append((obs, rewards, dones, infos))
    return out


def test_is_an_sb3_vecenv_with_the_right_spaces() -> None:
    env = ThirtyOneVecEnv(N, preset="italian", num_players=3)
    assert isinstance(env, VecEnv) and env.num_envs == N
    assert env.observation_space == env.env.single_observation_space
    assert env.action_space.n == 44
    assert isinstance(env.env, ThirtyOneVectorEnv)
    assert env.env.metadata["autoreset_mode"].name == "SAME_STEP"


def test_reset_and_step_contract() -> None:
    env = ThirtyOneVecEnv(N, opponents="random")
    dim = env.observation_space.shape[0]
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (N, dim) and obs.dtype == np.float32
    assert len(env.reset_infos) == N and all("action_mask" in i for i in env.reset_infos)
    np.testing.assert_array_equal(np.stack([i["action_mask"] for i in env.reset_infos]), env.action_masks())
    done_count = 0
    for obs, rewards, dones, infos in play(env, 150):
        assert obs.shape == (N, dim) and obs.dtype == np.float32
        assert rewards.shape == (N,) and rewards.dtype == np.float32
        assert dones.shape == (N,) and dones.dtype == np.bool_
        assert isinstance(infos, list) and len(infos) == N and all(isinstance(i, dict) for i in infos)
        for i in range(N):
            if dones[i]:
                done_count += 1
                terminal = infos[i]["terminal_observation"]
                assert terminal.shape == (dim,) and terminal.dtype == np.float32
                assert terminal in env.observation_space
                assert not np.array_equal(terminal, obs[i])  # obs is already the next episode's
                assert type(infos[i]["TimeLimit.truncated"]) is bool and not infos[i]["TimeLimit.truncated"]
                assert rewards[i] != 0
                assert infos[i]["action_mask"].any()  # the new episode's learner is to act
            else:
                assert "terminal_observation" not in infos[i] and "TimeLimit.truncated" not in infos[i]
    assert done_count >= 20
    env.close()


def test_terminal_observation_is_the_vector_envs_final_obs() -> None:
    """Against the Gymnasium vector env in SAME_STEP mode with the same seed and actions."""
    sb3 = ThirtyOneVecEnv(N, opponents="heuristic", num_players=3)
    gym_env = ThirtyOneVectorEnv(N, opponents="heuristic", num_players=3, autoreset_mode="same_step")
    sb3.seed(9)
    obs = sb3.reset()
    gobs, ginfo = gym_env.reset(seed=9)
    np.testing.assert_array_equal(obs, gobs)
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(150):
        actions = legal_actions(rng, sb3.action_masks())
        obs, rewards, dones, infos = sb3.step(actions)
        gobs, grew, gterm, gtrunc, ginfo = gym_env.step(actions)
        np.testing.assert_array_equal(obs, gobs)
        np.testing.assert_allclose(rewards, grew, rtol=1e-6)
        np.testing.assert_array_equal(dones, gterm | gtrunc)
        for i in np.flatnonzero(dones):
            ends += 1
            np.testing.assert_array_equal(infos[i]["terminal_observation"], ginfo["final_obs"][i])
        for key in ("seat", "deal", "chips"):
            assert [info[key] for info in infos] == ginfo[key].tolist()
    assert ends >= 10


def test_time_limit_truncation() -> None:
    env = ThirtyOneVecEnv(N, max_episode_steps=4, seat=0)
    env.seed(0)
    env.reset()
    truncated = 0
    for k, (_obs, rewards, dones, infos) in enumerate(play(env, 12)):
        for i in np.flatnonzero(dones):
            assert type(infos[i]["TimeLimit.truncated"]) is bool
            truncated += infos[i]["TimeLimit.truncated"]
            if infos[i]["TimeLimit.truncated"]:
                assert rewards[i] == 0 and "terminal_observation" in infos[i]
        if k < 3:
            assert not any(i.get("TimeLimit.truncated", False) for i in infos)
    assert truncated >= N


def test_action_masks_through_env_method() -> None:
    env = ThirtyOneVecEnv(N, opponents="greedy")
    env.seed(1)
    env.reset()
    for _ in range(20):
        masks = env.action_masks()
        assert masks.dtype == np.bool_ and masks.shape == (N, env.action_space.n)
        rows = env.env_method("action_masks")
        assert len(rows) == N
        np.testing.assert_array_equal(np.stack(rows), masks)
        some = env.env_method("action_masks", indices=[1, 3])
        assert len(some) == 2
        np.testing.assert_array_equal(some[0], masks[1])
        np.testing.assert_array_equal(some[1], masks[3])
        np.testing.assert_array_equal(env.env_method("action_masks", indices=5)[0], masks[5])
        np.testing.assert_array_equal(get_action_masks(env), masks)
        env.step(legal_actions(np.random.default_rng(0), masks))
    assert is_masking_supported(env)
    assert env.env_method("render") == [None] * N  # another method: called once, repeated per index


def test_get_set_has_attr_and_wrappers() -> None:
    env = ThirtyOneVecEnv(N, num_players=3)
    assert env.get_attr("num_players") == [3] * N
    assert env.get_attr("num_players", indices=[0, 2]) == [3, 3]
    assert env.has_attr("action_masks") and env.has_attr("num_players")
    assert not env.has_attr("no_such_attribute")
    with pytest.raises(AttributeError):
        env.get_attr("no_such_attribute")
    env.set_attr("max_episode_steps", 2)
    assert env.get_attr("max_episode_steps") == [2] * N
    env.seed(0)
    env.reset()
    steps = play(env, 2)
    assert steps[1][2].all()  # every table's episode ends by its second step
    assert sum(info["TimeLimit.truncated"] for info in steps[1][3]) >= N // 2
    env.set_attr("max_episode_steps", None, indices=list(range(N)))
    assert env.env.max_episode_steps is None
    with pytest.raises(ValueError, match="set_attr"):
        env.set_attr("max_episode_steps", 3, indices=[0])
    with pytest.raises(ValueError):
        env.set_attr("max_episode_steps", 3, indices=[0, 1, 2])
    assert env.env.max_episode_steps is None  # nothing changed
    assert env.env_is_wrapped(Monitor) == [False] * N
    assert env.env_is_wrapped(Monitor, indices=[2]) == [False]


def test_seed_replays_and_unseeded_resets_differ() -> None:
    def seeded_run(env, seed):
        assert env.seed(seed) == [seed] * N
        first = env.reset()
        return first, play(env, 80, seed=2)

    env = ThirtyOneVecEnv(N, opponents="random", num_players=3)
    a0, a = seeded_run(env, 5)
    b0, b = seeded_run(env, 5)
    other = ThirtyOneVecEnv(N, opponents="random", num_players=3)
    c0, c = seeded_run(other, 5)
    for first, run in ((b0, b), (c0, c)):
        np.testing.assert_array_equal(first, a0)
        for (o1, r1, d1, _), (o2, r2, d2, _) in zip(a, run, strict=True):
            np.testing.assert_array_equal(o1, o2)
            np.testing.assert_array_equal(r1, r2)
            np.testing.assert_array_equal(d1, d2)
    unseeded = env.reset()  # the seed is used once: this reset draws afresh
    assert not np.array_equal(unseeded, a0)
    d0, _ = seeded_run(env, 6)
    assert not np.array_equal(d0, a0)


def test_misuse_raises() -> None:
    env = ThirtyOneVecEnv(N)
    env.reset()
    with pytest.raises(RuntimeError):
        env.step_wait()
    env.step(legal_actions(np.random.default_rng(0), env.action_masks()))
    with pytest.raises(RuntimeError):  # the actions are used once
        env.step_wait()
    for key, value in (("autoreset_mode", "next_step"), ("autoreset_mode", "same_step"), ("observation", "dict"),
                       ("render_mode", "ansi")):
        with pytest.raises(ValueError, match=key):
            ThirtyOneVecEnv(N, **{key: value})
    with pytest.raises(ValueError, match="table 0"):
        masks = env.action_masks()
        bad = legal_actions(np.random.default_rng(0), masks)
        bad[0] = int(np.flatnonzero(~masks[0])[0])
        env.step(bad)


def test_vec_monitor_records_episodes() -> None:
    env = VecMonitor(ThirtyOneVecEnv(16, opponents="random"))
    env.seed(4)
    env.reset()
    rng = np.random.default_rng(0)
    lengths = np.zeros(16, np.int64)
    episodes = 0
    for _ in range(200):
        actions = legal_actions(rng, np.stack(env.env_method("action_masks")))
        obs, rewards, dones, infos = env.step(actions)
        lengths += 1
        for i in range(16):
            if dones[i]:
                episodes += 1
                ep = infos[i]["episode"]
                assert ep["r"] == pytest.approx(float(rewards[i]), abs=1e-6)  # a match pays only at its end
                assert ep["r"] in (1.0, -1.0)
                assert ep["l"] == lengths[i]
                lengths[i] = 0
            else:
                assert "episode" not in infos[i]
                assert rewards[i] == 0
    assert episodes >= 50


def test_maskable_ppo_learns_with_legal_actions_only() -> None:
    torch.set_num_threads(1)
    base = ThirtyOneVecEnv(16, opponents="random", illegal_action="raise")
    env = VecMonitor(base)
    # the guard is live: an unmasked action is refused
    env.seed(0)
    env.reset()
    masks = base.action_masks()
    illegal = np.array([int(np.flatnonzero(~m)[0]) for m in masks])
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    np.testing.assert_array_equal(get_action_masks(env), base.action_masks())
    assert is_masking_supported(env)

    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=256, n_epochs=2, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [64, 64]})
    model.learn(4096)  # any illegal action on the way raises ValueError from the env
    assert model.num_timesteps >= 4096
    assert len(model.ep_info_buffer) > 50
    assert all(ep["r"] in (1.0, -1.0) for ep in model.ep_info_buffer)

    obs = env.reset()
    for _ in range(50):
        masks = get_action_masks(env)
        np.testing.assert_array_equal(masks, base.action_masks())
        actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
        assert masks[np.arange(16), actions].all()
        obs, *_ = env.step(actions)
    env.close()
