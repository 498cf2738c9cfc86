"""``ThirtyOneVectorEnv`` (``gymnasium.make_vec("ThirtyOne-v0", vectorization_mode="vector_entry_point")``).

The reference is ``SingleAgentEnv``: a one-table vector env must play the same episodes with
the same seed, opponents and learner actions. The rest checks the vector API's contract
(spaces, autoreset modes, seeding, illegal actions, opponents, Gymnasium's own tools).
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

import agents
import thirtyone_env  # noqa: F401 (registers ThirtyOne-v0)
from thirtyone_env import encoding
from thirtyone_env.actions import PASS
from thirtyone_env.gym_vector import ThirtyOneVectorEnv
from thirtyone_env.rules import Rules
from thirtyone_env.wrappers import SingleAgentEnv


def make(num_envs: int = 4, **kwargs) -> gym.vector.VectorEnv:
    return gym.make_vec("ThirtyOne-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


def flat(obs):
    return obs["observations"] if isinstance(obs, dict) else obs


def pick(env, obs, mask: np.ndarray, salt: int = 0) -> np.ndarray:
    """A legal action per row that depends only on that row's observation and ``salt`` (0 where none is legal).

    Integer arithmetic on the unscaled observation, so a table's choice does not depend on the
    other rows of the batch.
    """
    ints = np.rint(flat(obs).astype(np.float64) * env.unwrapped.obs_scale).astype(np.int64)
    key = ints @ (np.arange(ints.shape[1], dtype=np.int64) % 13 + 1) + 7919 * salt
    count = mask.sum(axis=1)
    k = key % np.maximum(count, 1)
    actions = np.argmax(np.cumsum(mask, axis=1) > k[:, None], axis=1).astype(np.int64)
    actions[count == 0] = 0
    return actions


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    noise = rng.random(mask.shape)
    noise[~mask] = -1.0
    return np.where(mask.any(axis=1), noise.argmax(axis=1), 0).astype(np.int64)


def first_illegal(mask_row: np.ndarray) -> int:
    return int(np.flatnonzero(~mask_row)[0])


# -- 1. construction, metadata, spaces ------------------------------------------------------------
@pytest.mark.parametrize("preset,players", [("scat", 2), ("italian", 3), ("swedish", 4)])
def test_make_vec_spaces_and_metadata(preset: str, players: int) -> None:
    env = make(5, preset=preset, num_players=players)
    u = env.unwrapped
    assert isinstance(u, ThirtyOneVectorEnv)
    assert env.num_envs == 5
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    rules = Rules.resolve(preset)
    obs_dim = encoding.obs_dim(rules.deck_size, players)
    num_actions = 4 + rules.deck_size
    assert num_actions == (44 if preset == "italian" else 56)
    assert env.single_observation_space == spaces.Box(0.0, 1.0, (obs_dim,), np.float32)
    assert env.observation_space == spaces.Box(0.0, 1.0, (5, obs_dim), np.float32)
    assert env.single_action_space == spaces.Discrete(num_actions)
    assert isinstance(env.action_space, spaces.MultiDiscrete)
    assert env.action_space.nvec.tolist() == [num_actions] * 5

    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for step in range(60):
        assert obs.dtype == np.float32 and obs.shape == (5, obs_dim)
        assert obs.min() >= 0.0 and obs.max() <= 1.0
        assert obs in env.observation_space
        masks = u.action_masks()
        assert masks.dtype == np.bool_ and masks.shape == (5, num_actions)
        np.testing.assert_array_equal(masks, info["action_mask"])
        assert info["action_mask"].dtype == np.bool_
        if step == 0:
            assert masks.all(axis=1).sum() == 0 and masks.any(axis=1).all()  # the learner is to act everywhere
        obs, reward, terminated, truncated, info = env.step(random_legal(rng, masks))
        assert reward.shape == terminated.shape == truncated.shape == (5,)
        assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_
    env.close()


def test_same_step_metadata_and_enum_argument() -> None:
    env = make(2, autoreset_mode="same_step")
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert type(env).metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # the class default is left alone
    env2 = make(2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert env2.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert make(2, autoreset_mode=AutoresetMode.NEXT_STEP).metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP


# -- 2. equivalence with SingleAgentEnv -----------------------------------------------------------
def _compare_info(vinfo: dict, sinfo: dict, where: str) -> None:
    for key in ("seat", "deal", "turn", "chips", "in_play"):
        assert vinfo[key][0] == sinfo[key], (where, key, vinfo[key][0], sinfo[key])
    np.testing.assert_array_equal(vinfo["action_mask"][0], sinfo["action_mask"], err_msg=where)


def play_against_single(preset, players, opponents, seat, episode, steps, seed, autoreset="next_step") -> dict:
    """Drive a one-table vector env and ``SingleAgentEnv`` with the same random legal actions."""
    vec = make(1, preset=preset, num_players=players, opponents=opponents(), seat=seat, episode=episode,
               autoreset_mode=autoreset)
    single = SingleAgentEnv(preset=preset, num_players=players, opponents=opponents(), seat=seat, episode=episode)
    num_actions = Rules.resolve(preset).num_actions
    rng = np.random.default_rng(seed)
    vobs, vinfo = vec.reset(seed=seed)
    sobs, sinfo = single.reset(seed=seed)
    np.testing.assert_array_equal(vobs[0], sobs)
    _compare_info(vinfo, sinfo, "reset")
    stats = {"episodes": 0, "seats": set(), "nonzero_rewards": 0, "passes": 0}
    for k in range(steps):
        where = f"step {k}, episode {stats['episodes']}, seat {sinfo['seat']}"
        mask = sinfo["action_mask"]
        np.testing.assert_array_equal(vec.unwrapped.action_masks()[0], mask, err_msg=where)
        action = int(rng.choice(np.flatnonzero(mask)))
        stats["passes"] += action == PASS
        vobs, vrew, vterm, vtrunc, vinfo = vec.step(np.array([action]))
        sobs, srew, sterm, strunc, sinfo = single.step(action)
        assert bool(vterm[0]) == sterm and not vtrunc[0] and not strunc, where
        assert np.isclose(vrew[0], srew, rtol=1e-6, atol=1e-6), (where, vrew[0], srew)
        stats["nonzero_rewards"] += srew != 0
        if sterm:
            stats["episodes"] += 1
            stats["seats"].add(sinfo["seat"])
            if autoreset == "next_step":
                np.testing.assert_array_equal(vobs[0], sobs, err_msg=where)  # the terminal observation
                _compare_info(vinfo, sinfo, where)
                assert not vinfo["action_mask"][0].any()
                # one more step: its action (any id, legal or not) is ignored, the new episode begins
                vobs, vrew, vterm, vtrunc, vinfo = vec.step(np.array([rng.integers(num_actions)]))
                assert vrew[0] == 0 and not vterm[0] and not vtrunc[0], where
            else:
                assert vinfo["_final_obs"][0], where
                np.testing.assert_array_equal(vinfo["final_obs"][0], sobs, err_msg=where)
                assert vinfo["_final_info"][0]
                for key in ("seat", "deal", "chips"):
                    assert vinfo["final_info"][key][0] == sinfo[key], (where, key)
            sobs, sinfo = single.reset()  # no seed: every stream continues
        elif autoreset == "same_step":
            assert not vinfo.get("_final_obs", np.zeros(1, bool))[0]
        np.testing.assert_array_equal(vobs[0], sobs, err_msg=where)
        _compare_info(vinfo, sinfo, where)
    vec.close()
    return stats


def spec(name):
    return lambda: name


def objects(*classes, preset="scat", players=3):
    return lambda: [cls(preset, players) for cls in classes]


EQUIVALENCE = [
    # preset, players, opponents, seat, episode, steps
    ("scat", 2, spec("heuristic"), "random", "match", 2000),
    ("scat", 3, spec("heuristic"), "random", "match", 1500),
    ("scat", 2, spec("random"), "random", "match", 2000),
    ("scat", 3, spec("random"), 0, "match", 1200),
    ("scat", 3, spec("random"), 2, "match", 1200),
    ("scat", 2, spec("greedy"), 1, "deal", 1500),
    ("russian", 3, spec("heuristic"), 1, "match", 1500),
    ("russian", 2, spec("random"), "random", "match", 1500),
    ("italian", 2, spec("greedy"), 1, "deal", 1500),
    ("italian", 3, spec("random"), 0, "match", 1200),
    ("swedish", 2, spec("heuristic"), "random", "match", 1500),
    ("swedish", 3, spec("heuristic"), 0, "deal", 1500),
    ("swedish", 3, spec("random"), 2, "deal", 1200),
    ("scat", 3, objects(agents.GreedyAgent, agents.HeuristicAgent), 0, "match", 1200),
    ("scat", 3, objects(agents.GreedyAgent, agents.HeuristicAgent), 2, "match", 1200),
]


@pytest.mark.parametrize("preset,players,opponents,seat,episode,steps", EQUIVALENCE,
                         ids=[f"{p}-{n}p-{o()}-seat{s}-{e}".replace(" ", "") if isinstance(o(), str)
                              else f"{p}-{n}p-list-seat{s}-{e}" for p, n, o, s, e, _ in EQUIVALENCE])
def test_one_table_plays_like_single_agent_env(preset, players, opponents, seat, episode, steps) -> None:
    stats = play_against_single(preset, players, opponents, seat, episode, steps, seed=7)
    assert stats["episodes"] >= 10
    assert stats["nonzero_rewards"] >= stats["episodes"] * (1 if episode == "match" else 0.3)
    if seat == "random":
        assert stats["seats"] == set(range(players))
    if preset == "russian":
        assert stats["passes"] > 0  # the final round's pass was exercised


@pytest.mark.parametrize("preset,players,opponents,seat,episode", [
    ("scat", 2, spec("random"), "random", "match"),
    ("swedish", 3, spec("heuristic"), "random", "deal"),
    ("italian", 3, spec("greedy"), 2, "match"),
])
def test_one_table_same_step_plays_like_single_agent_env(preset, players, opponents, seat, episode) -> None:
    stats = play_against_single(preset, players, opponents, seat, episode, 1200, seed=3, autoreset="same_step")
    assert stats["episodes"] >= 10


MIDDLE_SEAT = [
    ("scat", 3, spec("random"), 1, "match", 1200),
    ("scat", 3, spec("random"), "random", "match", 1200),
    ("scat", 3, objects(agents.GreedyAgent, agents.HeuristicAgent), 1, "match", 1200),
    ("swedish", 4, objects(agents.GreedyAgent, agents.HeuristicAgent, agents.RandomAgent, preset="swedish",
                           players=4), 2, "deal", 1200),
]


@pytest.mark.parametrize("preset,players,opponents,seat,episode,steps", MIDDLE_SEAT,
                         ids=["random-seat1", "random-seatrandom", "list-seat1", "list4p-seat2"])
def test_one_table_plays_like_single_agent_env_learner_in_a_middle_seat(
        preset, players, opponents, seat, episode, steps) -> None:
    play_against_single(preset, players, opponents, seat, episode, steps, seed=7)


# -- 3. determinism ------------------------------------------------------------------------------
def run(env, seed: int | None, steps: int, salt: int = 0) -> list:
    obs, info = env.reset(seed=seed)
    out = [(obs, info)]
    for k in range(steps):
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], salt + k))
        out.append((obs, reward, terminated, truncated, info))
    return out


def assert_same_runs(a: list, b: list) -> None:
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            if isinstance(u, dict):
                assert u.keys() == v.keys()
                for key in u:
                    np.testing.assert_array_equal(u[key], v[key], err_msg=f"step {k} info {key}")
            else:
                np.testing.assert_array_equal(u, v, err_msg=f"step {k} item {i}")


@pytest.mark.parametrize("opponents", ["heuristic", "random", "heuristic:1,random:1"])
def test_same_seed_same_actions_replay_exactly(opponents: str) -> None:
    a = run(make(64, opponents=opponents, num_players=3), seed=11, steps=300)
    b = run(make(64, opponents=opponents, num_players=3), seed=11, steps=300)
    assert_same_runs(a, b)
    assert sum(int(step[2].sum()) for step in a[1:]) >= 64  # many episodes ended along the way
    c = run(make(64, opponents=opponents, num_players=3), seed=12, steps=300)
    assert not np.array_equal(a[0][0], c[0][0])
    assert not all(np.array_equal(x[0], y[0]) for x, y in zip(a, c, strict=True))


def test_reset_with_the_same_seed_replays_on_the_same_env() -> None:
    env = make(16, opponents="random", seat="random", num_players=3)
    first = run(env, seed=5, steps=120)
    run(env, seed=None, steps=37)  # streams move on
    again = run(env, seed=5, steps=120)
    assert_same_runs(first, again)
    unseeded = run(env, seed=None, steps=5)
    assert not np.array_equal(unseeded[0][0], first[0][0])


@pytest.mark.parametrize("players,seat,opponents", [(2, 1, "heuristic"), (3, 0, "greedy"), (3, 2, "heuristic")])
def test_a_table_does_not_depend_on_the_batch_size(players: int, seat: int, opponents: str) -> None:
    """Table i draws from stream i of the seed; 300 tables take the engine's and agents' threaded paths."""
    small = make(4, num_players=players, seat=seat, opponents=opponents)
    big = make(300, num_players=players, seat=seat, opponents=opponents)
    so, si = small.reset(seed=21)
    bo, bi = big.reset(seed=21)
    ended = 0
    for k in range(150):
        np.testing.assert_array_equal(so, bo[:4], err_msg=f"step {k}")
        np.testing.assert_array_equal(si["action_mask"], bi["action_mask"][:4])
        so, sr, st, _, si = small.step(pick(small, so, si["action_mask"], k))
        bo, br, bt, _, bi = big.step(pick(big, bo, bi["action_mask"], k))
        np.testing.assert_array_equal(sr, br[:4], err_msg=f"step {k}")
        np.testing.assert_array_equal(st, bt[:4], err_msg=f"step {k}")
        ended += int(st.sum())
    assert ended >= 8


# -- 4. SAME_STEP autoreset ---------------------------------------------------------------------
@pytest.mark.parametrize("opponents", ["random", "heuristic"])
def test_same_step_autoreset(opponents: str) -> None:
    env = make(32, autoreset_mode="same_step", opponents=opponents)
    u = env.unwrapped
    start_chips = u.rules.start_chips
    obs, info = env.reset(seed=2)
    ended_total = fresh = 0
    for k in range(250):
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], k))
        assert not truncated.any()
        ended = np.flatnonzero(terminated)
        assert (reward[~terminated] == 0).all()  # a match pays only at its end
        if not ended.size:
            assert "_final_obs" not in info or not info["_final_obs"].any()
            continue
        ended_total += ended.size
        np.testing.assert_array_equal(info["_final_obs"], terminated)
        np.testing.assert_array_equal(info["_final_info"], terminated)
        assert (np.abs(reward[ended]) == 1).all()  # 2 players: +1 or -1
        masks = u.action_masks()
        np.testing.assert_array_equal(masks, info["action_mask"])
        assert masks[ended].any(axis=1).all()  # the new episode's learner is to act
        for i in ended:
            final = info["final_obs"][i]
            assert final in env.single_observation_space
            assert not np.array_equal(final, obs[i])
            # a fresh match (its first deal may have ended before the learner's first move)
            assert info["deal"][i] <= 2
            fresh += info["deal"][i] == 1 and info["chips"][i] == start_chips
            assert not info["final_info"]["action_mask"][i].any()
        # the final info is the finished match's: a winner still plays, a loser has no lives left
        final_info = info["final_info"]
        np.testing.assert_array_equal(final_info["in_play"][ended] == 1, reward[ended] > 0)
        assert (final_info["chips"][ended][reward[ended] < 0] == 0).all()
    assert ended_total >= 20 and fresh >= 0.9 * ended_total


def test_same_step_and_next_step_agree_up_to_the_reset() -> None:
    """Both modes play the same episodes; NEXT_STEP only needs the extra step to start the next one."""
    nxt = make(1, opponents="heuristic", seat=0)
    same = make(1, opponents="heuristic", seat=0, autoreset_mode="same_step")
    no, ni = nxt.reset(seed=9)
    so, si = same.reset(seed=9)
    episodes = 0
    for k in range(600):
        np.testing.assert_array_equal(no, so)
        action = pick(nxt, no, ni["action_mask"], k)
        no, nr, nt, _, ni = nxt.step(action)
        so, sr, st, _, si = same.step(action)
        assert nr[0] == sr[0] and nt[0] == st[0]
        if nt[0]:
            episodes += 1
            np.testing.assert_array_equal(no[0], si["final_obs"][0])
            no, nr, nt, _, ni = nxt.step(np.array([0]))
            assert nr[0] == 0 and not nt[0]
    assert episodes >= 10


# -- 5. illegal actions -------------------------------------------------------------------------
def test_illegal_action_raise_names_the_table_and_changes_nothing() -> None:
    a, b = make(4, opponents="random"), make(4, opponents="random")
    oa, ia = a.reset(seed=3)
    ob, ib = b.reset(seed=3)
    for k in range(5):
        act = pick(a, oa, ia["action_mask"], k)
        oa, *_, ia = a.step(act)
        ob, *_, ib = b.step(act)
    good = pick(a, oa, ia["action_mask"], 99)
    legal = np.flatnonzero(ia["action_mask"][2]).tolist()
    for wrong in (first_illegal(ia["action_mask"][2]), a.single_action_space.n, -1):
        bad = good.copy()
        bad[2] = wrong
        with pytest.raises(ValueError) as err:
            a.step(bad)
        assert "table 2" in str(err.value) and str(legal) in str(err.value)
        assert "table 0" not in str(err.value)
        np.testing.assert_array_equal(a.unwrapped.action_masks(), ia["action_mask"])
    for k in range(60):  # the twin that never got the bad calls plays on identically
        act = pick(a, oa, ia["action_mask"], 100 + k)
        oa, ra, ta, _, ia = a.step(act)
        ob, rb, tb, _, ib = b.step(act)
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)


@pytest.mark.parametrize("mode", ["raise", "penalize"])
def test_action_of_a_table_waiting_for_its_reset_is_ignored(mode: str) -> None:
    a, b = make(4, seat=0, illegal_action=mode), make(4, seat=0, illegal_action=mode)
    oa, ia = a.reset(seed=1)
    ob, ib = b.reset(seed=1)
    waits = 0
    for k in range(200):
        act = pick(a, oa, ia["action_mask"], k)
        waiting = ~ia["action_mask"].any(axis=1)
        waits += int(waiting.sum())
        junk = act.copy()
        junk[waiting] = [-1, 999, 0, 3][k % 4]
        oa, ra, ta, tra, ia = a.step(junk)
        ob, rb, tb, trb, ib = b.step(act)
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)
        assert (ra[waiting] == 0).all() and not ta[waiting].any()
    assert waits >= 5


@pytest.mark.parametrize("players", [2, 3])
def test_illegal_action_penalize_ends_only_that_tables_match(players: int) -> None:
    a = make(4, num_players=players, illegal_action="penalize", opponents="greedy")
    b = make(4, num_players=players, illegal_action="penalize", opponents="greedy")
    oa, ia = a.reset(seed=4)
    ob, ib = b.reset(seed=4)
    for k in range(3):
        act = pick(a, oa, ia["action_mask"], k)
        oa, ra, ta, _, ia = a.step(act)
        ob, *_, ib = b.step(act)
    assert ia["action_mask"][1].any(), "table 1 must be playing for this test"
    act = pick(a, oa, ia["action_mask"], 50)
    bad = act.copy()
    bad[1] = first_illegal(ia["action_mask"][1])
    oa, ra, ta, tra, ia = a.step(bad)
    ob, rb, tb, trb, ib = b.step(act)
    assert ta[1] and not tra[1] and ra[1] == -1.0
    assert not ia["action_mask"][1].any()
    others = [0, 2, 3]
    np.testing.assert_array_equal(oa[others], ob[others])
    np.testing.assert_array_equal(ra[others], rb[others])
    np.testing.assert_array_equal(ta[others], tb[others])
    oa, ra, ta, tra, ia = a.step(pick(a, oa, ia["action_mask"], 51))  # table 1 starts its next match
    assert ra[1] == 0 and not ta[1] and ia["action_mask"][1].any() and ia["deal"][1] <= 2


@pytest.mark.parametrize("actions", [np.zeros(3, np.int64), np.zeros(5, np.int64), np.zeros((4, 1), np.int64),
                                     np.int64(0), np.zeros(4, np.float64)])
def test_wrong_actions_raise(actions) -> None:
    env = make(4)
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        env.step(actions)
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"])
    obs2, *_ = env.step(pick(env, obs, info["action_mask"]))  # still usable
    assert obs2.shape == obs.shape


# -- 6. opponents ------------------------------------------------------------------------------
@pytest.mark.parametrize("name,cls", [("greedy", agents.GreedyAgent), ("heuristic", agents.HeuristicAgent),
                                      ("random", agents.RandomAgent)])
def test_opponent_specs_build_their_agents(name: str, cls: type) -> None:
    env = make(8, num_players=3, opponents=name)
    opponents = env.unwrapped.opponents
    assert len(opponents) == 2 and all(type(o) is cls for o in opponents)
    if name == "random":
        assert opponents[0] is not opponents[1]  # each seat its own random stream
    run(env, seed=0, steps=40)


def test_default_opponent_is_heuristic() -> None:
    env = make(2, num_players=3)
    assert all(type(o) is agents.HeuristicAgent for o in env.unwrapped.opponents)


@pytest.mark.parametrize("cls,name", [(agents.GreedyAgent, "greedy"), (agents.HeuristicAgent, "heuristic"),
                                      (agents.RandomAgent, "random")])
def test_agent_object_plays_like_its_spec(cls: type, name: str) -> None:
    by_object = make(16, num_players=2, opponents=cls("scat", 2))
    assert by_object.unwrapped.opponents[0].__class__ is cls
    by_name = make(16, num_players=2, opponents=name)
    assert_same_runs(run(by_object, seed=8, steps=150), run(by_name, seed=8, steps=150))


class TurnByTurn:
    """A HeuristicAgent without ``play_turns``: the env then asks it turn by turn through ``act_batch``."""

    def __init__(self, preset: str, players: int):
        self.inner = agents.HeuristicAgent(preset, players)

    def act(self, obs):
        return self.inner.act(obs)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.inner.act_batch(obs, mask)


@pytest.mark.parametrize("preset,players,num_envs,autoreset", [
    ("scat", 2, 300, "next_step"), ("scat", 4, 70, "same_step"), ("swedish", 3, 5, "next_step"),
    ("russian", 2, 64, "same_step"), ("italian", 5, 128, "next_step"),
])
def test_heuristic_whole_turns_in_one_kernel_play_like_turn_by_turn(preset, players, num_envs, autoreset) -> None:
    """``HeuristicAgent.play_turns`` (whole opponent turns in one compiled loop, threads from 64 rows) gives
    exactly the episodes of the turn-by-turn path: observations, rewards, ends, masks, seats."""
    fused = make(num_envs, preset=preset, num_players=players, opponents="heuristic", autoreset_mode=autoreset)
    assert callable(getattr(fused.unwrapped.opponents[0], "play_turns", None))
    plain = make(num_envs, preset=preset, num_players=players, opponents=TurnByTurn(preset, players),
                 autoreset_mode=autoreset)
    a, b = run(fused, seed=21, steps=120), run(plain, seed=21, steps=120)
    assert sum(int(x[2].sum()) for x in a[1:]) > 0  # episodes did end on the way
    for x, y in zip(a[1:], b[1:], strict=True):  # same-step resets: the final observations, row by row
        for u, v in zip(x[-1].pop("final_obs", []), y[-1].pop("final_obs", []), strict=True):
            assert (u is None and v is None) or np.array_equal(u, v)
        fx, fy = x[-1].pop("final_info", {}), y[-1].pop("final_info", {})
        assert fx.keys() == fy.keys() and all(np.array_equal(fx[k], fy[k]) for k in fx)
    assert_same_runs(a, b)


@pytest.mark.parametrize("autoreset", ["next_step", "same_step"])
def test_fused_step_matches_turn_by_turn_with_illegal_moves_truncation_and_deal_episodes(autoreset) -> None:
    """The fused step (learner move and opponents' turns in one kernel) and the turn-by-turn path agree on
    the rarer paths too: illegal moves penalized, episodes cut by ``max_episode_steps``, deal episodes,
    dict observations."""
    options = dict(num_players=3, illegal_action="penalize", max_episode_steps=9, episode="deal",
                   observation="dict", autoreset_mode=autoreset)
    fused = make(300, opponents="heuristic", **options)
    plain = make(300, opponents=TurnByTurn("scat", 3), **options)
    runs, penalized = [], 0
    for env in (fused, plain):
        obs, info = env.reset(seed=5)
        steps = [(obs, info)]
        for k in range(60):
            actions = pick(env, obs, info["action_mask"], k)
            # one table in 23 moves illegally (where it has a move to make)
            wrong = (np.arange(env.num_envs) % 23 == k % 23) & info["action_mask"].any(axis=1)
            actions[wrong] = np.argmin(info["action_mask"][wrong], axis=1)
            obs, reward, terminated, truncated, info = env.step(actions)
            assert terminated[wrong].all() and (reward[wrong] < 0).all()  # the episode ends, the learner pays
            penalized += int(wrong.sum())
            steps.append((obs, reward, terminated, truncated, {k: v for k, v in info.items() if "final" not in k}))
        runs.append(steps)
    assert penalized > 0 and sum(int(x[3].sum()) for x in runs[0][1:]) > 0  # some episodes were cut
    assert_same_runs(*runs)


def test_play_turns_refuses_tables_of_other_rules() -> None:
    from thirtyone_env.engine import Tables

    tables = Tables(4, 3, "swedish")
    with pytest.raises(ValueError, match="cannot play tables of swedish, 3 players"):
        agents.HeuristicAgent("scat", 2).play_turns(tables, np.arange(4), np.zeros(4, np.int64),
                                                    np.zeros(4), np.zeros(4, np.bool_))


class RecordingAgent:
    """Plays greedily and checks, at every call, that it is asked exactly for the rows where its seat acts.

    Its seat at a table is the ``slot``-th seat in seat order, skipping the learner's. A received
    row is found among the tables by its observation (the acting seat's view, hands included)
    among the tables where an opponent is to act; the seat it then plays is that table's
    ``current_player``.
    """

    def __init__(self, slot: int, preset: str, players: int):
        self.slot, self.players = slot, players
        self.inner = agents.GreedyAgent(preset, players)
        self.env = None
        self.calls = self.rows = 0
        self.seats_played: set[tuple[int, int]] = set()  # (learner seat, seat played)
        self.wrong: list[tuple[int, int, int]] = []  # (table, learner seat, seat played)

    def act(self, obs):  # SingleAgentEnv's path (not used here)
        return self.inner.act(obs)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        u = self.env.unwrapped
        t = u.tables
        learner = u.seat
        others = np.array([[s for s in range(self.players) if s != learner[b]] for b in range(u.num_envs)])
        mine = others[:, self.slot]
        live = (t.finished == 0) & (t.current_player != learner)
        self.calls += 1
        self.rows += len(obs)
        for row in obs:
            match = np.flatnonzero(live & (t.obs == row).all(axis=1))
            assert match.size, "a row that is no live table's acting seat"
            b = int(match[0])
            played = int(t.current_player[b])
            self.seats_played.add((int(learner[b]), played))
            if played != mine[b]:
                self.wrong.append((b, int(learner[b]), played))
        return self.inner.act_batch(obs, mask)


def play_with_recorders(players: int, seat, steps: int = 150) -> list[RecordingAgent]:
    recorders = [RecordingAgent(k, "scat", players) for k in range(players - 1)]
    env = make(8, num_players=players, seat=seat, opponents=recorders)
    for r in recorders:
        r.env = env
    assert env.unwrapped.opponents == recorders
    run(env, seed=13, steps=steps)
    for r in recorders:
        assert r.calls > 10 and r.rows > 10
    return recorders


@pytest.mark.parametrize("players,seat", [(3, 0), (3, 2), (4, 0), (4, 3)])
def test_opponent_list_plays_the_seats_in_order(players: int, seat: int) -> None:
    recorders = play_with_recorders(players, seat)
    for k, r in enumerate(recorders):
        others = [s for s in range(players) if s != seat]
        assert r.seats_played == {(seat, others[k])}
        assert not r.wrong


@pytest.mark.parametrize("players,seat", [(3, 1), (3, "random"), (4, 2)])
def test_opponent_list_plays_the_seats_in_order_learner_in_a_middle_seat(players: int, seat) -> None:
    recorders = play_with_recorders(players, seat)
    for r in recorders:
        assert not r.wrong, r.wrong[:5]


def test_opponent_list_of_specs() -> None:
    env = make(8, num_players=3, opponents=["greedy", "random"])
    opp = env.unwrapped.opponents
    assert [type(o) for o in opp] == [agents.GreedyAgent, agents.RandomAgent]
    run(env, seed=1, steps=60)


def _recording_groups(env) -> tuple[dict[str, list[int]], list]:
    """Wrap every opponent group's agent so that each call records its kind."""
    calls: dict[str, list[int]] = {"HeuristicAgent": [], "GreedyAgent": []}
    log: list[str] = []
    groups = env.unwrapped.opponents
    assert len(groups) == 2
    for group in groups:
        agent = group[0]
        assert all(a is agent for a in group)
        inner, name = agent.act_batch, type(agent).__name__

        def act_batch(obs, mask, inner=inner, kind=name):
            calls[kind].append(len(obs))
            log.append(kind)
            return inner(obs, mask)

        agent.act_batch = act_batch
    return calls, log


def test_weighted_mix_draws_one_group_per_episode_about_3_to_1() -> None:
    env = make(1, opponents="heuristic:3,greedy:1", episode="deal")
    assert sorted(type(g[0]).__name__ for g in env.unwrapped.opponents) == ["GreedyAgent", "HeuristicAgent"]
    calls, log = _recording_groups(env)
    obs, info = env.reset(seed=17)
    kinds: list[set[str]] = []
    start = 0
    k = 0
    while len(kinds) < 400:
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], k))
        k += 1
        if terminated[0]:
            kinds.append(set(log[start:]))
            start = len(log)  # the next episode's calls begin with the step that starts it
            obs, reward, terminated, truncated, info = env.step(np.array([0]))
    played = [s for s in kinds if s]
    assert len(played) >= 350
    assert all(len(s) == 1 for s in played), "one opponent kind per episode"
    share = sum("HeuristicAgent" in s for s in played) / len(played)
    assert 0.62 < share < 0.88, share


def test_weighted_mix_draws_per_table() -> None:
    env = make(64, opponents={"heuristic": 3, "greedy": 1})
    calls, _ = _recording_groups(env)
    run(env, seed=2, steps=3)
    assert sum(calls["HeuristicAgent"]) > sum(calls["GreedyAgent"]) > 0


@pytest.mark.parametrize("opponents,players,message", [
    ("nonsense", 2, "unknown agent"),
    ("heuristic:-1", 2, "weight"),
    ("heuristic:0", 2, "sum to 0"),
    ("heuristic:0,greedy:0", 2, "sum to 0"),
    ("", 2, "names no agent"),
    ("heuristic:1,nonsense:2", 2, "unknown agent"),
    ("heuristic,heuristic", 2, "twice"),
    (123, 2, "agent"),
    ([object()], 2, "agent"),
    (["greedy"], 3, "expected 2"),
    (["greedy", "greedy", "greedy"], 3, "expected 2"),
    ([], 2, "expected 1"),
])
def test_bad_opponents_raise(opponents, players: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make(2, num_players=players, opponents=opponents)


# -- 7. dict observations, time limits -----------------------------------------------------------
@pytest.mark.parametrize("autoreset", ["next_step", "same_step"])
def test_dict_observation_matches_flat(autoreset: str) -> None:
    f = make(8, observation="flat", autoreset_mode=autoreset, opponents="random")
    d = make(8, observation="dict", autoreset_mode=autoreset, opponents="random")
    assert isinstance(d.single_observation_space, spaces.Dict)
    assert d.single_observation_space["observations"] == f.single_observation_space
    num_actions = f.single_action_space.n
    assert d.single_observation_space["action_mask"] == spaces.Box(0.0, 1.0, (num_actions,), np.float32)
    fo, fi = f.reset(seed=6)
    do, di = d.reset(seed=6)
    finals = 0
    for k in range(150):
        assert set(do) == {"observations", "action_mask"}
        assert do["observations"].dtype == np.float32 and do["action_mask"].dtype == np.float32
        assert do["observations"].shape == (8, f.single_observation_space.shape[0])
        assert do["action_mask"].shape == (8, num_actions)
        np.testing.assert_array_equal(do["observations"], fo)
        np.testing.assert_array_equal(do["action_mask"], di["action_mask"].astype(np.float32))
        np.testing.assert_array_equal(di["action_mask"], fi["action_mask"])
        assert do in d.observation_space
        act = pick(f, fo, fi["action_mask"], k)
        fo, fr, ft, _, fi = f.step(act)
        do, dr, dt, _, di = d.step(act)
        np.testing.assert_array_equal(fr, dr)
        np.testing.assert_array_equal(ft, dt)
        if autoreset == "same_step" and ft.any():
            for i in np.flatnonzero(ft):
                finals += 1
                final = di["final_obs"][i]
                assert set(final) == {"observations", "action_mask"}
                np.testing.assert_array_equal(final["observations"], fi["final_obs"][i])
                assert final in d.single_observation_space
    if autoreset == "same_step":
        assert finals > 0


@pytest.mark.parametrize("autoreset", ["next_step", "same_step"])
def test_max_episode_steps_truncates_then_resets(autoreset: str) -> None:
    env = make(8, max_episode_steps=5, autoreset_mode=autoreset, opponents="heuristic", seat=0)
    obs, info = env.reset(seed=0)
    done_early = np.zeros(8, bool)
    for k in range(5):
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], k))
        if k < 4:
            assert not truncated.any()
            done_early |= terminated  # these tables are restarting: their step counts begin again
        else:
            assert not (terminated & truncated).any()
            cut = truncated
    assert cut.sum() >= 4
    np.testing.assert_array_equal(cut, ~done_early & ~terminated)
    assert (reward[cut] == 0).all()
    if autoreset == "same_step":
        np.testing.assert_array_equal(info["_final_obs"], cut | terminated)
        assert info["action_mask"][cut].any(axis=1).all() and (info["deal"][cut] <= 2).all()
        assert (info["turn"][cut] <= 1).all()
    else:
        assert not env.unwrapped.action_masks()[cut].any()  # waiting for the reset: the next action is ignored
        u = env.unwrapped
        last = u.tables.observe(u.seat).astype(np.float32) / u.obs_scale
        np.testing.assert_array_equal(obs[cut], last[cut])  # the truncated episode's last observation
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, env.unwrapped.action_masks(), 9))
        assert not truncated[cut].any() and not terminated[cut].any() and (reward[cut] == 0).all()
        assert info["action_mask"][cut].any(axis=1).all() and (info["deal"][cut] <= 2).all()
    for k in range(3):  # the new episodes run their own 5 steps
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], 20 + k))
        assert not truncated[cut].any()


@pytest.mark.parametrize("observation", ["flat", "dict"])
def test_truncation_info_mask_agrees_with_action_masks(observation: str) -> None:
    env = make(4, max_episode_steps=2, seat=0, observation=observation)
    obs, info = env.reset(seed=0)
    for k in range(2):
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], k))
    assert truncated.any()
    np.testing.assert_array_equal(info["action_mask"], env.unwrapped.action_masks())
    if observation == "dict":
        np.testing.assert_array_equal(info["action_mask"].astype(np.float32), obs["action_mask"])


# -- 8. Gymnasium's tools -----------------------------------------------------------------------
@pytest.mark.parametrize("observation", ["flat", "dict"])
def test_gymnasium_checkers(observation: str) -> None:
    from gymnasium.utils.env_checker import check_space_limit
    from gymnasium.utils.passive_env_checker import check_obs

    env = make(6, observation=observation, autoreset_mode="same_step", opponents="random")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_space_limit(env.single_observation_space, "observation")
        check_space_limit(env.single_action_space, "action")
        obs, info = env.reset(seed=0)
        check_obs(obs, env.observation_space, "reset")
        for k in range(80):
            obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], k))
            check_obs(obs, env.observation_space, "step")
            for i in np.flatnonzero(terminated):
                check_obs(info["final_obs"][i], env.single_observation_space, "step")


def test_data_equivalence_of_seeded_runs() -> None:
    from gymnasium.utils.env_checker import data_equivalence

    a = run(make(16, opponents="random", autoreset_mode="same_step"), seed=4, steps=100)
    b = run(make(16, opponents="random", autoreset_mode="same_step"), seed=4, steps=100)
    c = run(make(16, opponents="random", autoreset_mode="same_step"), seed=5, steps=100)
    assert data_equivalence(a, b, exact=True)
    assert not data_equivalence(a, c)


def test_record_episode_statistics() -> None:
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    env = RecordEpisodeStatistics(make(16, opponents="random", episode="deal"))
    obs, info = env.reset(seed=3)
    returns, lengths = np.zeros(16), np.zeros(16, np.int64)
    restarting = np.zeros(16, bool)
    episodes = 0
    for k in range(200):
        obs, reward, terminated, truncated, info = env.step(pick(env, obs, info["action_mask"], k))
        returns[restarting], lengths[restarting] = 0, 0
        returns[~restarting] += reward[~restarting]
        lengths[~restarting] += 1
        done = terminated | truncated
        if done.any():
            np.testing.assert_array_equal(info["_episode"], done)
            np.testing.assert_allclose(info["episode"]["r"][done], returns[done])
            np.testing.assert_array_equal(info["episode"]["l"][done], lengths[done])
            episodes += int(done.sum())
        else:
            assert "episode" not in info
        restarting = done
    assert episodes >= 50 and len(env.return_queue) > 0
    env.close()


@pytest.mark.parametrize("autoreset", ["next_step", "same_step"])
def test_dict_info_to_list(autoreset: str) -> None:
    from gymnasium.wrappers.vector import DictInfoToList

    env = DictInfoToList(make(4, opponents="random", autoreset_mode=autoreset))
    obs, infos = env.reset(seed=0)
    assert isinstance(infos, list) and len(infos) == 4
    seen_final = False
    for k in range(100):
        masks = env.unwrapped.action_masks()
        for i, info in enumerate(infos):
            np.testing.assert_array_equal(info["action_mask"], masks[i])
            assert {"seat", "deal", "turn", "chips", "in_play"} <= set(info)
        obs, reward, terminated, truncated, infos = env.step(pick(env, obs, masks, k))
        for i in np.flatnonzero(terminated):
            if autoreset == "same_step":
                assert "final_obs" in infos[i]
                seen_final = True
        for i in np.flatnonzero(~terminated):
            assert "final_obs" not in infos[i]
    assert seen_final == (autoreset == "same_step")
    env.close()


def test_close_and_render() -> None:
    env = make(3, render_mode="ansi")
    env.reset(seed=0)
    frames = env.render()
    assert isinstance(frames, tuple) and len(frames) == 3 and all(isinstance(f, str) and f for f in frames)
    assert make(2).render() is None
    env.close()
    assert env.closed
    env.close()  # twice is fine


def test_reset_mask_resets_only_those_tables() -> None:
    env = make(6, opponents="greedy", seat=0)
    obs, info = env.reset(seed=0)
    for k in range(4):
        obs, *_, info = env.step(pick(env, obs, info["action_mask"], k))
    mask = np.array([True, False, True, False, False, False])
    obs2, info2 = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(obs2[~mask], obs[~mask])
    assert (info2["deal"][mask] <= 2).all() and info2["action_mask"][mask].any(axis=1).all()
    assert not np.array_equal(obs2[mask], obs[mask])


# -- 9. imports and bad arguments -----------------------------------------------------------------
def test_import_and_direct_construction() -> None:
    import importlib

    module = importlib.import_module("thirtyone_env.gym_vector")
    assert module.ThirtyOneVectorEnv is ThirtyOneVectorEnv
    env = ThirtyOneVectorEnv(3, preset="russian", num_players=3)
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, env.single_observation_space.shape[0])
    assert gym.spec("ThirtyOne-v0").vector_entry_point == "thirtyone_env.gym_vector:ThirtyOneVectorEnv"


@pytest.mark.parametrize("kwargs,name", [
    (dict(num_envs=0), "num_"),
    (dict(num_envs=-2), "num_"),
    (dict(preset="nope"), "preset"),
    (dict(autoreset_mode="later"), "autoreset_mode"),
    (dict(autoreset_mode=AutoresetMode.DISABLED), "autoreset_mode"),
    (dict(observation="image"), "observation"),
    (dict(seat=2), "seat"),
    (dict(seat=-1), "seat"),
    (dict(seat="any"), "seat"),
    (dict(episode="game"), "episode"),
    (dict(illegal_action="ignore"), "illegal_action"),
    (dict(max_episode_steps=0), "max_episode_steps"),
    (dict(num_players=1), "num_players"),
    (dict(render_mode="human"), "render_mode"),
])
def test_bad_arguments_raise_naming_them(kwargs: dict, name: str) -> None:
    base = dict(num_envs=2)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):
        make(**base)


def test_num_envs_error_names_num_envs() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        make(num_envs=0)


def test_per_table_seed_list_deals_each_table_like_a_single_env() -> None:
    seeds = [11, 22, 33]
    env = make(3, seat=0, opponents="greedy")
    obs, _ = env.reset(seed=seeds)
    for i, s in enumerate(seeds):
        one = make(1, seat=0, opponents="greedy")
        single, _ = one.reset(seed=s)
        np.testing.assert_array_equal(obs[i], single[0])
    assert not np.array_equal(obs[0], obs[1])
    with pytest.raises(ValueError, match="one per table"):
        env.reset(seed=[1, 2])
