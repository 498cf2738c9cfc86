"""Peer environments timed by the same harness as ours; each loader raises ImportError if absent.

Every peer plays random legal actions, chosen inside the timed loop, like ours:
- PettingZoo ``leduc_holdem_v4``: ``env()`` with its wrappers, the docs' ``agent_iter`` loop.
- OpenSpiel ``gin_rummy``: ``pyspiel`` states, chance outcomes sampled uniformly
  (the deal is uniform), optionally the acting seat's observation tensor each decision.
- pgx ``leduc_holdem`` on CPU: ``jax.vmap`` of ``auto_reset(env.step, env.init)``
  under ``jax.jit``, ``jax.lax.scan`` over steps, actions drawn with ``jax.random``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version

import numpy as np

Chunk = Callable[[], tuple[int, int]]  # one timed unit of work -> (decisions, matches)


def installed(dist: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def pick_legal(mask: np.ndarray) -> int:
    """A uniformly random legal action id (the same picker for every AEC env)."""
    legal = np.flatnonzero(mask)
    return int(legal[random.randrange(len(legal))])


def aec_episode(env) -> Chunk:
    """One episode through the AEC API per call, as in the PettingZoo docs."""

    def chunk() -> tuple[int, int]:
        env.reset()
        decisions = 0
        for _agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                action = pick_legal(obs["action_mask"])
                decisions += 1
            env.step(action)
        return decisions, 1

    env.reset(seed=0)
    return chunk


def leduc_aec() -> Chunk:
    from pettingzoo.classic import leduc_holdem_v4  # needs rlcard: pip install "pettingzoo[classic]"

    return aec_episode(leduc_holdem_v4.env())


def gin_rummy(observe: bool) -> Chunk:
    import pyspiel

    game = pyspiel.load_game("gin_rummy")

    def chunk() -> tuple[int, int]:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[random.randrange(len(outcomes))][0]
            else:
                if observe:
                    state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                action = legal[random.randrange(len(legal))]
                decisions += 1
            state.apply_action(action)
        return decisions, 1

    return chunk


def pgx_leduc(batch: int, steps: int = 64) -> Chunk:
    """``steps`` vmapped steps of ``batch`` tables per call, one jitted scan; blocks until done."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("leduc_holdem")
    step = jax.vmap(auto_reset(env.step, env.init))

    def body(carry, _):
        state, key = carry
        key, key_action, key_step = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(key_action, logits, axis=-1)
        state = step(state, action, jax.random.split(key_step, batch))
        return (state, key), state.terminated.sum()

    @jax.jit
    def rollout(state, key):
        (state, key), ends = jax.lax.scan(body, (state, key), None, length=steps)
        return state, key, ends.sum()

    key = jax.random.PRNGKey(0)
    carry = [jax.jit(jax.vmap(env.init))(jax.random.split(key, batch)), key]

    def chunk() -> tuple[int, int]:
        state, key, ends = rollout(*carry)
        jax.block_until_ready((state, ends))
        carry[:] = [state, key]
        return batch * steps, int(ends)

    return chunk
