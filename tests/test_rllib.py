"""RLlib: two PPO iterations of ``examples/rllib_selfplay.py`` on local Ray, then the policy plays legally."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install 'thirtyone-env[rllib]')")
torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import rllib_selfplay as example  # noqa: E402

from thirtyone_env import thirtyone_v0  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402


@pytest.fixture(scope="module")
def ray_local():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_env_wrapping_speaks_rllib_multi_agent() -> None:
    env = example.make_env({"preset": "italian", "num_players": 3})
    obs, _ = env.reset(seed=0)
    (agent, first), = obs.items()
    assert set(first) == {"observations", "action_mask"}
    assert env.observation_space[agent]["observations"].contains(first["observations"])
    rng = np.random.default_rng(0)
    for _ in range(2000):
        agent, o = next(iter(obs.items()))
        obs, rewards, terms, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if terms["__all__"]:
            break
    assert terms["__all__"] and set(obs) == {"player_0", "player_1", "player_2"}
    assert sum(rewards.values()) == pytest.approx(0.0) and max(rewards.values()) > 0


def test_two_iterations_then_legal_play(ray_local) -> None:
    config = example.build_config("scat", 2, num_env_runners=0, train_batch_size=256, minibatch_size=64,
                                  num_epochs=1, hidden=(32,), seed=0)
    algo = config.build_algo()
    try:
        module = algo.get_module(example.MODULE_ID)
        before = [p.detach().clone() for p in module.parameters()]
        for _ in range(2):
            result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 2 * 256
        module = algo.get_module(example.MODULE_ID)
        assert any(not torch.equal(a, b) for a, b in zip(before, module.parameters(), strict=True))

        rules = Rules.preset("scat")
        agent = example.RLlibAgent(module, rules, 2)
        env = thirtyone_v0.env(num_players=2, rules=rules)
        env.reset(seed=3)
        for _ in range(60):
            obs, _, term, _, _ = env.last()
            if term:
                break
            action = agent.act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)  # raises ValueError on an illegal action
    finally:
        algo.stop()


def test_vector_entry_point_runner_trains_on_the_batched_engine(ray_local) -> None:
    """examples/rllib_vector_ppo.py: env runners build the vector env through Gymnasium's vector entry point."""
    import rllib_vector_ppo as vector_example

    from thirtyone_env.gym_vector import ThirtyOneVectorEnv

    config = vector_example.build_config("scat", 2, "random", num_env_runners=0, num_envs_per_env_runner=8,
                                         train_batch_size=256, minibatch_size=64, num_epochs=1, hidden=(32,), seed=0)
    algo = config.build_algo()
    try:
        runner_env = algo.env_runner.env.unwrapped
        assert isinstance(runner_env, ThirtyOneVectorEnv) and runner_env.num_envs == 8
        module = algo.get_module()
        before = [p.detach().clone() for p in module.parameters()]
        for _ in range(2):
            result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 2 * 256
        module = algo.get_module()
        assert any(not torch.equal(a, b) for a, b in zip(before, module.parameters(), strict=True))
        agent = example.RLlibAgent(module, Rules.preset("scat"), 2)
        env = thirtyone_v0.env(num_players=2, rules="scat")
        env.reset(seed=5)
        for _ in range(60):
            obs, _, term, _, _ = env.last()
            if term:
                break
            action = agent.act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)
    finally:
        algo.stop()
