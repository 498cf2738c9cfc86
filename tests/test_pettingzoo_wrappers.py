"""``thirtyone_v0`` under PettingZoo's own wrappers, in the plain ``agent_iter`` loop."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test
from pettingzoo.utils.wrappers import (
    AssertOutOfBoundsWrapper,
    BaseWrapper,
    OrderEnforcingWrapper,
    TerminateIllegalWrapper,
)

from thirtyone_env import thirtyone_v0


def stacked(num_players: int = 3, rules: str = "scat"):
    """The classic-env stack: terminate on illegal moves, bounds check, order enforcing, a plain wrapper."""
    env = thirtyone_v0.raw_env(num_players=num_players, rules=rules)
    env = TerminateIllegalWrapper(env, illegal_reward=-1)
    env = AssertOutOfBoundsWrapper(env)
    return BaseWrapper(OrderEnforcingWrapper(env))


def run_loop(env, seed: int, policy_seed: int = 0) -> tuple[list[np.ndarray], dict[str, float]]:
    """The loop from PettingZoo's docs with masked random actions: (observations seen, final rewards)."""
    rng = np.random.default_rng(policy_seed)
    env.reset(seed=seed)
    seen, final = [], {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            final[agent] = reward
            action = None
        else:
            seen.append(obs["observation"].copy())
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    return seen, final


@pytest.mark.parametrize("rules,players", [("scat", 3), ("italian", 2), ("russian", 4)])
def test_plain_loop_through_the_wrapper_stack(rules: str, players: int) -> None:
    env = stacked(players, rules)
    seen, final = run_loop(env, seed=1)
    assert seen and set(final) == set(env.possible_agents)
    assert sum(final.values()) == pytest.approx(0.0, abs=1e-6)  # float32 rewards: -1/3 is not exact
    assert sorted(final.values())[-1] > 0  # somebody won the match
    assert env.agents == []  # every seat took its dead step


def test_api_test_passes_on_the_stack() -> None:
    api_test(stacked(3), num_cycles=300)


def test_base_wrapper_changes_nothing() -> None:
    raw_seen, raw_final = run_loop(thirtyone_v0.env(num_players=3), seed=7)
    wrapped_seen, wrapped_final = run_loop(stacked(3), seed=7)
    assert raw_final == wrapped_final
    assert len(raw_seen) == len(wrapped_seen)
    for a, b in zip(raw_seen, wrapped_seen, strict=True):
        np.testing.assert_array_equal(a, b)


def test_terminate_illegal_wrapper_ends_the_game_on_an_illegal_move(caplog) -> None:
    env = stacked(3)
    env.reset(seed=0)
    offender = env.agent_selection
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(illegal)  # instead of the engine's ValueError
    assert "Illegal move made" in caplog.text
    final = {}
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        assert termination or truncation
        final[agent] = reward
        env.step(None)
    assert final == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}


def test_without_terminate_illegal_the_engine_raises() -> None:
    env = AssertOutOfBoundsWrapper(thirtyone_v0.env(num_players=2))
    env.reset(seed=0)
    obs, *_ = env.last()
    with pytest.raises(ValueError, match="legal action ids"):
        env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))


def test_assert_out_of_bounds_wrapper_rejects_out_of_space_actions() -> None:
    env = stacked(2)
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        env.step(56)  # one past the french52 action space


def test_order_enforcing_wrapper_wants_reset_first() -> None:
    env = stacked(2)
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)
    with pytest.raises(AssertionError, match="reset"):
        env.observe("player_0")


def test_no_parallel_env() -> None:
    # turn-based on purpose: see the thirtyone_v0 module docstring
    assert not hasattr(thirtyone_v0, "parallel_env")
    assert thirtyone_v0.raw_env.metadata["is_parallelizable"] is False
