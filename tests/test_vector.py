"""``VectorThirtyOne`` against ``thirtyone_v0``: same seeds and actions, same games; and its API.

Table ``i`` of a batch seeded ``s`` draws from RNG stream ``i`` of ``s``;
``raw_env.reset(seed=s)`` draws from stream 0. The replay gives table 0 the
public ``reset(seed=s)`` and the other tables their stream through
``Tables.seed_streams`` before an unseeded reset, then steps both with the same
random legal actions and compares everything each step.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from conftest import same_snapshot

from thirtyone_env import thirtyone_v0
from thirtyone_env.actions import PASS
from thirtyone_env.engine import layout as L
from thirtyone_env.engine.observe import global_state_dim
from thirtyone_env.jit import PARALLEL_FROM
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne

PRESETS = Rules.preset_names()
EPISODES = ("match", "deal")
CONFIGS = [
    (preset, n, episode)
    for preset in PRESETS
    for n in sorted({2, 3, Rules.preset(preset).max_players})
    for episode in EPISODES
]


@pytest.fixture(autouse=True)
def one_numba_thread():
    """Small batches run faster on one thread; results must not depend on it (tested below)."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


def _twin_envs(preset: str, n: int, episode: str, num_envs: int, seed: int, decks: list | None):
    """One ``raw_env`` per table, each on the RNG stream its table uses."""
    envs = []
    for i in range(num_envs):
        env = thirtyone_v0.raw_env(num_players=n, rules=preset, episode=episode)
        options = {"decks": decks} if decks is not None else None
        if i == 0:
            env.reset(seed=seed, options=options)  # the public path: stream 0
        else:
            env.table.seed_streams(np.array([0]), seed, np.array([i]))
            env.reset(options=options)  # unseeded: the stream set above continues
        envs.append(env)
    return envs


def _replay(
    preset: str,
    n: int,
    episode: str,
    num_envs: int,
    seed: int,
    min_episodes: int,
    max_decisions: int,
    decks: list | None = None,
    check_state: bool = False,
) -> tuple[int, int]:
    """Step a batch and its twin envs with the same random legal actions; returns (episodes, decisions)."""
    vec = VectorThirtyOne(num_envs, n, preset, seed=seed, episode=episode)
    obs, mask, player = vec.reset(decks=decks)
    envs = _twin_envs(preset, n, episode, num_envs, seed, decks)
    rng = np.random.default_rng(seed)
    actions = np.zeros(num_envs, np.int64)
    decks_used = [0] * num_envs  # stacked decks dealt before each env's current episode
    episodes = decisions = 0
    while episodes < min_episodes and decisions < max_decisions:
        states = vec.state() if check_state else None
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert env.seat_of(agent) == player[i] == vec.current_player[i], f"table {i}: seat to act"
            view = env.observe(agent)
            assert np.array_equal(view["action_mask"].astype(bool), mask[i]), f"table {i}: mask"
            assert np.array_equal(view["observation"], obs[i]), f"table {i}: observation"
            if check_state:
                assert np.array_equal(env.state(), states[i]), f"table {i}: state"
            legal = np.flatnonzero(mask[i])
            actions[i] = legal[rng.integers(len(legal))]
        obs, mask, player, rewards, done = vec.step(actions)
        decisions += num_envs
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            expected = np.array([env.rewards[a] for a in env.possible_agents], np.float32)
            assert np.array_equal(expected, rewards[i]), f"table {i}: rewards {expected} vs {rewards[i]}"
            assert bool(env.table.finished[0]) == done[i], f"table {i}: done"
            if done[i]:
                episodes += 1
                # engine internals: the stacked decks this episode used (redealt void blitzes too)
                decks_used[i] += int(env.table._states[0, L.S_QPOS])
                env.reset(options={"decks": decks[decks_used[i] :]} if decks is not None else None)
    return episodes, decisions


@pytest.mark.parametrize("preset,n,episode", CONFIGS)
def test_batch_replays_like_the_aec_env(preset: str, n: int, episode: str) -> None:
    seed = 1000 + 17 * PRESETS.index(preset) + n
    deal = episode == "deal"
    # a batch of one, then 8 tables (streams 0..7) in one batch
    single, _ = _replay(preset, n, episode, 1, seed, 40 if deal else 4, 4_000)
    batched, _ = _replay(preset, n, episode, 8, seed + 1, 300 if deal else 80, 60_000)
    assert single >= 1 and batched >= 8, (single, batched)


@pytest.mark.parametrize("preset", PRESETS)
def test_stacked_decks_and_state_replay(preset: str) -> None:
    rules = Rules.preset(preset)
    rng = np.random.default_rng(PRESETS.index(preset))
    full = rng.permutation(rules.deck_size).tolist()
    top_only = rng.permutation(rules.deck_size)[:7].tolist()
    decks = [full, top_only] * 3
    episodes, _ = _replay(preset, 3, "deal", 4, 7, 24, 20_000, decks=decks, check_state=True)
    assert episodes >= 24


def test_stacked_decks_are_dealt() -> None:
    """The first deal of every table comes from the stacked deck (dealing starts left of the dealer)."""
    rules = Rules.preset("scat")
    deck = list(range(rules.deck_size))  # 2C 4C 6C vs 3C 5C 7C: no blitz
    vec = VectorThirtyOne(3, 2, "scat", seed=5)
    vec.reset(decks=[deck])
    for i in range(3):
        first = (int(vec.dealer[i]) + 1) % 2
        assert sorted(vec.hand(i, first)) == sorted([deck[0], deck[2], deck[4]])
        assert sorted(vec.hand(i, 1 - first)) == sorted([deck[1], deck[3], deck[5]])
        assert vec.discard_pile(i) == [deck[6]]
        assert vec.stock(i) == deck[7:]


# -- API --------------------------------------------------------------------------------
def test_actions_must_be_integers_of_batch_shape() -> None:
    vec = VectorThirtyOne(4, 2, "scat", seed=0)
    _, mask, _ = vec.reset()
    good = mask.argmax(1)
    for bad in (good[:3], good.reshape(2, 2), np.zeros((4, 1), np.int64)):
        with pytest.raises(ValueError, match="shape"):
            vec.step(bad)
    for bad in (good.astype(np.float64), good.astype(bool)):
        with pytest.raises(ValueError, match="integers"):
            vec.step(bad)


def test_illegal_actions_name_tables_actions_and_legal_ids() -> None:
    vec = VectorThirtyOne(4, 2, "scat", seed=0)
    _, mask, _ = vec.reset()
    before = vec.snapshot()
    actions = mask.argmax(1)
    actions[1] = PASS  # never legal before a knock
    actions[3] = 999  # out of range
    legal1 = np.flatnonzero(mask[1]).tolist()
    with pytest.raises(ValueError) as err:
        vec.step(actions)
    text = str(err.value)
    assert "2 table(s)" in text
    assert f"table 1: action {PASS}, legal {legal1}" in text
    assert "table 3: action 999" in text
    assert "table 0" not in text and "table 2" not in text
    assert same_snapshot(vec.snapshot(), before), "a refused step must not change any table"
    with pytest.raises(ValueError, match="table 0: action -1"):
        vec.step(np.where(np.arange(4) == 0, -1, mask.argmax(1)))
    huge = mask.argmax(1).astype(np.uint64)
    huge[2] = np.iinfo(np.uint64).max  # wraps to -1 as int64: must still be refused, by its own value
    with pytest.raises(ValueError, match=f"table 2: action {np.iinfo(np.uint64).max}"):
        vec.step(huge)
    assert same_snapshot(vec.snapshot(), before)


def _trajectory_hash(num_threads: int | None = None) -> str:
    """Hash of a 256-table trajectory with seeded random legal actions."""
    if num_threads is not None:
        numba.set_num_threads(num_threads)
    vec = VectorThirtyOne(256, 4, "scat", seed=123)
    obs, mask, player = vec.reset()
    rng = np.random.default_rng(9)
    digest = hashlib.sha256()
    for _ in range(200):
        actions = (rng.random(mask.shape) * mask).argmax(1)
        obs, mask, player, rewards, done = vec.step(actions)
        for arr in (obs, mask, player, rewards, done):
            digest.update(arr.tobytes())
    return digest.hexdigest()


def test_results_do_not_depend_on_the_thread_count() -> None:
    # run by path: pgx 2.6 installs a top-level ``tests`` package that shadows ours
    tests = os.path.dirname(os.path.abspath(__file__))  # for ``from conftest import ...``
    code = (f"import runpy, sys; sys.path.insert(0, {tests!r}); "
            f"print(runpy.run_path({__file__!r})['_trajectory_hash']())")
    hashes = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        hashes.append(out.stdout.strip())
    assert hashes[0] == hashes[1]
    assert _trajectory_hash(1) == hashes[0]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_auto_reset_reports_rewards_then_the_next_match(n: int) -> None:
    vec = VectorThirtyOne(64, n, "scat", seed=n)
    _, mask, _ = vec.reset()
    rng = np.random.default_rng(0)
    finished = 0
    while finished < 50:
        actions = (rng.random(mask.shape) * mask).argmax(1)
        obs, mask, player, rewards, done = vec.step(actions)
        np.testing.assert_allclose(rewards.sum(1), 0.0, atol=1e-6)
        assert not rewards[~done].any(), "match episodes pay only at the end"
        if done.any():
            finished += int(done.sum())
            assert (rewards[done].max(1) > 0).all(), "every finished match has a winner"
            assert (vec.finished[done] == 0).all() and (vec.decisions[done] == 0).all()
            assert (vec.turn[done] == 0).all() and (vec.deal[done] >= 1).all()
            assert np.array_equal(obs[done], vec.observe(player)[done])
            assert mask[done].any(1).all()


def test_observe_false_changes_nothing_but_observations() -> None:
    full = VectorThirtyOne(32, 3, "russian", seed=4, episode="deal")
    bare = VectorThirtyOne(32, 3, "russian", seed=4, episode="deal", observe=False)
    a, b = full.reset(), bare.reset()
    assert b[0].shape == (32, 0)
    rng = np.random.default_rng(1)
    for _ in range(300):
        assert np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
        actions = (rng.random(a[1].shape) * a[1]).argmax(1)
        a, b = full.step(actions), bare.step(actions)
        for x, y in zip(a[1:], b[1:], strict=True):
            assert np.array_equal(x, y)
    a, b = full.snapshot(), bare.snapshot()
    assert a["obs"].shape == (32, full.obs_dim) and b["obs"].shape == (32, 0)
    del a["obs"], b["obs"]
    assert same_snapshot(a, b)


def test_serial_and_parallel_drivers_agree() -> None:
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    runs = []
    for parallel in (False, True):  # enough tables for the threaded drivers (PARALLEL_FROM)
        vec = VectorThirtyOne(PARALLEL_FROM + 40, 4, "swedish", seed=8, parallel=parallel)
        obs, mask, player = vec.reset()
        rng = np.random.default_rng(2)
        digest = hashlib.sha256(obs.tobytes() + mask.tobytes() + player.tobytes())
        for _ in range(200):
            for arr in vec.step((rng.random(mask.shape) * mask).argmax(1)):
                digest.update(arr.tobytes())
        runs.append((digest.hexdigest(), vec.snapshot()))
    assert runs[0][0] == runs[1][0]
    assert same_snapshot(runs[0][1], runs[1][1])


def test_reset_with_a_seed_restarts_that_seed() -> None:
    fresh = VectorThirtyOne(16, 2, "italian", seed=77)
    reused = VectorThirtyOne(16, 2, "italian", seed=1)
    reused.reset()
    reused.step(reused.mask.argmax(1))
    a = [x.copy() for x in fresh.reset()]
    b = reused.reset(seed=77)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)


def test_state_shape_and_dtype() -> None:
    vec = VectorThirtyOne(5, 4, "italian", seed=0)
    vec.reset()
    state = vec.state()
    assert state.dtype == np.int8
    assert state.shape == (5, global_state_dim(40, 4)) == (5, vec.state_dim) == (5, 5 * 40 + 4 + vec.obs_dim)


@pytest.mark.parametrize("num_envs", [0, -1, 2.0])
def test_bad_num_envs(num_envs) -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorThirtyOne(num_envs)
