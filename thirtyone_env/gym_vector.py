"""``ThirtyOneVectorEnv``: the batched engine as a Gymnasium vector env, one learner seat per table.

| Make | ``gymnasium.make_vec("ThirtyOne-v0", num_envs=N, vectorization_mode="vector_entry_point")`` |
|---|---|
| Actions | ``MultiDiscrete([4 + deck size] * N)``, the action ids of ``thirtyone_v0`` |
| Observation | ``Box(0, 1, (N, obs_dim), float32)`` scaled like ``SingleAgentEnv``; ``observation="dict"``: |
| | ``{"observations": ..., "action_mask": ...}`` (RLlib's action-masking module) |
| Legal actions | ``action_masks()`` -> bool ``[N, A]`` and ``info["action_mask"]`` |
| Reward | the learner seat's ``thirtyone_v0`` reward |
| Autoreset | ``metadata["autoreset_mode"]``: ``NEXT_STEP`` (default) or ``SAME_STEP`` |

One ``step`` is every table's learner action followed by the other seats' actions, played in
batch by ``act_batch`` agents, until each learner is to act again or its episode ends: the
``SingleAgentEnv`` semantics on ``N`` tables at engine speed. A one-table vector env gives the
same episodes as ``SingleAgentEnv`` with the same seed and opponents.

- ``opponents``: an agent spec (``"heuristic"``, ``"greedy"``, ``"random"``, ``"pretrained"``,
  ``"policy:PATH"``), a mix with weights (``"heuristic:3,greedy:1"``: each table draws one
  entry per match for all its other seats), an agent object, or a list of ``num_players - 1``
  specs/objects, one per other seat in seat order (skipping the learner's). Default ``heuristic``.
- ``seat``: the learner's seat, an int or ``"random"`` (drawn per match).
- ``episode``: ``"match"`` or ``"deal"``; ``illegal_action``: ``"raise"`` (``ValueError`` naming the
  table and the legal ids; nothing changes) or ``"penalize"`` (the match ends with -1 for the learner).
- ``reset(seed=s)`` seeds table ``i`` with stream ``i`` of ``s``, the seat draws and the opponents
  (``seed(int)`` method or ``rng`` attribute), so a run replays exactly; ``reset(seed=[s0, s1, ...])``
  (one per table) deals table ``i`` like a single env reset with ``seed=si`` (seats and opponents
  are seeded by ``s0``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit

from thirtyone_env.agent import make_agent, parse_mix
from thirtyone_env.engine import Tables
from thirtyone_env.jit import JIT, PARALLEL_FROM, jit_variants
from thirtyone_env.render import render_table
from thirtyone_env.rules import Rules

DEFAULT_OPPONENT = "heuristic"  # the strongest rule-based player, agents.HeuristicAgent
AUTORESET_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
OBSERVATIONS = ("flat", "dict")


def _scale_rows(lo, hi, obs, scale, out):
    """float32 observations in [0, 1]: ``obs / scale`` (a division, as ``SingleAgentEnv``: exactly 1.0 at the top)."""
    for b in range(lo, hi):
        for j in range(obs.shape[1]):
            out[b, j] = np.float32(obs[b, j]) / scale[j]


SCALE = jit_variants(_scale_rows)


@njit(**JIT)
def _waiting(rows, player, seat):
    """The rows where an opponent, not the learner, is to act."""
    out = np.empty(rows.shape[0], np.int64)
    k = 0
    for b in rows:
        if player[b] != seat[b]:
            out[k] = b
            k += 1
    return out[:k]


@njit(**JIT)
def _after_opponents(rows, seat, rewards, done, player, learner_rewards, ended):
    """After the opponents' step at ``rows``: the learner's reward, the episodes that ended (into
    ``ended``, their count returned) and the rows where an opponent acts again."""
    out = np.empty(rows.shape[0], np.int64)
    k = n_ended = 0
    for b in rows:
        learner_rewards[b] += rewards[b, seat[b]]
        if done[b]:
            ended[n_ended] = b
            n_ended += 1
        elif player[b] != seat[b]:
            out[k] = b
            k += 1
    return out[:k], n_ended


def reseed(agent: Any, seed: int) -> None:
    """Reseed an agent through ``seed(int)`` if it has one, else a ``rng`` Generator attribute."""
    if callable(getattr(agent, "seed", None)):
        agent.seed(seed)
    elif isinstance(getattr(agent, "rng", None), np.random.Generator):
        agent.rng = np.random.default_rng(seed)


def opponent_slots(opponents: Any, rules: Rules, num_players: int) -> tuple[list[list[Any]], np.ndarray]:
    """Opponent groups (each: one agent per other seat) and their draw weights.

    A spec builds one agent per seat only for ``random`` (each seat its own random stream,
    as ``SingleAgentEnv``); deterministic agents are built once and shared by the seats.
    """
    n_opp = num_players - 1

    def build(spec: Any) -> list[Any]:
        if isinstance(spec, str) and spec.partition(":")[0] == "random":
            return [make_agent(spec, rules, num_players) for _ in range(n_opp)]
        return [make_agent(spec, rules, num_players)] * n_opp

    if opponents is None:
        opponents = DEFAULT_OPPONENT
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != n_opp:
            raise ValueError(f"opponents: expected {n_opp} agents (one per other seat), got {len(opponents)}")
        return [[make_agent(o, rules, num_players) for o in opponents]], np.ones(1)
    if isinstance(opponents, dict):
        mix = {str(k): float(v) for k, v in opponents.items()}
    elif isinstance(opponents, str):
        mix = parse_mix(opponents, "opponents")
    else:
        return [build(opponents)], np.ones(1)
    if not mix or not sum(mix.values()) > 0:
        raise ValueError(f"opponents: {opponents!r} names no agent with a positive weight")
    weights = np.array(list(mix.values()), np.float64)
    return [build(spec) for spec in mix], weights / weights.sum()


class ThirtyOneVectorEnv(VectorEnv):
    """``num_envs`` tables, the learner at one seat of each, the others played by agents (module docstring)."""

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        rules: str | Rules = "scat",
        num_players: int = 2,
        opponents: Any = None,
        seat: int | str = "random",
        episode: str = "match",
        illegal_action: str = "raise",
        autoreset_mode: str | AutoresetMode = "next_step",
        observation: str = "flat",
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        preset: str | None = None,
    ):
        rules = Rules.resolve(preset if preset is not None else rules)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is invalid; allowed: an integer >= 1")
        self.tables = Tables(num_envs, num_players, rules, seed=None, episode=episode, observe=True,
                             illegal_action=illegal_action, autoreset=False)
        self.rules, self.num_envs, self.num_players = rules, int(num_envs), int(num_players)
        mode = autoreset_mode.value.lower().replace("step", "_step") if isinstance(autoreset_mode, AutoresetMode) \
            else autoreset_mode
        if mode not in AUTORESET_MODES:
            raise ValueError(f"autoreset_mode={autoreset_mode!r} is invalid; allowed: {list(AUTORESET_MODES)}")
        self.autoreset_mode = AUTORESET_MODES[mode]
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation={observation!r} is invalid; allowed: {list(OBSERVATIONS)}")
        self.observation_mode = observation
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode={render_mode!r} is invalid; allowed: {self.metadata['render_modes']}")
        self.render_mode = render_mode
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= seat < num_players):
            raise ValueError(f"seat={seat!r} is invalid; allowed: 'random' or a seat 0..{num_players - 1}")
        self._seat_choice = seat
        if max_episode_steps is not None and (not isinstance(max_episode_steps, (int, np.integer))
                                              or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps={max_episode_steps!r} is invalid; allowed: None or an int >= 1")
        self.max_episode_steps = max_episode_steps
        self._groups, self._group_weights = opponent_slots(opponents, rules, num_players)
        self.opponents = self._groups[0] if len(self._groups) == 1 else self._groups
        distinct = {id(a): a for group in self._groups for a in group}
        self._single = next(iter(distinct.values())) if len(distinct) == 1 else None
        self._turns = getattr(self._single, "play_turns", None)  # whole turns in one compiled loop (HeuristicAgent)
        self._ended = np.zeros(num_envs, np.bool_)  # play_turns' episode ends
        self._tables = np.arange(num_envs)

        obs_dim, num_actions = self.tables.obs_dim, rules.num_actions
        box = spaces.Box(0.0, 1.0, (obs_dim,), np.float32)
        if observation == "dict":
            self.single_observation_space = spaces.Dict(
                {"observations": box, "action_mask": spaces.Box(0.0, 1.0, (num_actions,), np.float32)})
        else:
            self.single_observation_space = box
        self.single_action_space = spaces.Discrete(num_actions)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.obs_scale = self.tables.obs_scale

        n = self.num_envs
        self.seat = np.zeros(n, np.int64) if seat == "random" else np.full(n, int(seat), np.int64)
        self._group = np.zeros(n, np.int64)
        self._slot = np.zeros((n, num_players), np.int64)  # seat -> opponent slot (seat order skipping the learner)
        self._steps = np.zeros(n, np.int64)
        self._autoreset = np.zeros(n, np.bool_)
        self._final = np.zeros((n, obs_dim), np.int8)
        self._rewards = np.zeros(n, np.float64)
        self._np_random = None

    # -- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """New episodes on every table (or ``options["reset_mask"]``'s). ``seed`` replays exactly."""
        table_seeds = None
        if isinstance(seed, (list, tuple, np.ndarray)):  # one seed per table, as Gymnasium's vector envs take
            if len(seed) != self.num_envs:
                raise ValueError(f"seed: expected {self.num_envs} seeds (one per table), got {len(seed)}")
            table_seeds, seed = [int(s) for s in seed], int(seed[0])
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
            distinct = {id(a): a for group in self._groups for a in group}
            for i, agent in enumerate(distinct.values()):
                reseed(agent, seed + 1 + i)
        elif self._np_random is None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random()
        rows = np.arange(self.num_envs)
        if options and "reset_mask" in options:
            rows = np.flatnonzero(np.asarray(options["reset_mask"], np.bool_))
        if table_seeds is not None:
            for i in rows:  # table i deals like a single env seeded with seed[i] (its stream 0)
                self.tables.seed_streams(np.array([i]), table_seeds[i], np.array([0]))
            seed = None
        self._start(rows, seed)
        self._autoreset[rows] = False
        return self._observation(), self._info()

    def step(self, actions: Any):
        t = self.tables
        given, actions = actions, t._check_shape(actions)  # int64 [N], or a ValueError naming the shape or dtype
        terminated = np.zeros(self.num_envs, np.bool_)
        truncated = np.zeros(self.num_envs, np.bool_)
        resetting = np.flatnonzero(self._autoreset)
        active = np.flatnonzero(~self._autoreset)
        if t.illegal_action == "raise":
            t.check_actions(given, active)  # before anything changes
        if self._turns is not None:  # one compiled pass: learner moves, new episodes, opponents' turns, observations
            if resetting.size:  # NEXT_STEP: their action is ignored, the new episode's first observation returned
                self._new_episodes(resetting)
            scaled = np.empty((self.num_envs, t.obs_dim), np.float32)
            self._turns(t, self._tables, self.seat, self._rewards, self._ended, actions=actions,
                        restart=self._autoreset, scale=self.obs_scale, out=scaled, final=self._final)
            terminated[:] = self._ended  # with their last observations in _final and scaled
            self._autoreset[resetting] = False
        else:
            scaled = None
            self._rewards[:] = 0.0
            # every table at once: a table waiting for its reset is finished, and the engine leaves it be
            t.step(actions, check=False)
            self._rewards[active] += t.rewards[active, self.seat[active]]
            finished, playing = [active[t.done[active]]], active[~t.done[active]]  # read before the resets step
            if resetting.size:  # NEXT_STEP: their action is ignored, the new episode's first observation returned
                self._start(resetting)
                self._autoreset[resetting] = False
            self._play_opponents(playing, finished)
            terminated[np.concatenate(finished)] = True
        if self.max_episode_steps is not None:
            self._steps[active] += 1
            over = active[(self._steps[active] >= self.max_episode_steps) & ~terminated[active]]
            truncated[over] = True
        ended = np.flatnonzero(terminated | truncated)
        unread = ended if scaled is None else np.flatnonzero(truncated & ~terminated)  # last observations to read
        if unread.size:
            self._final[unread] = t.observe(self.seat, rows=unread)[unread]
        rewards = self._rewards.copy()  # before a same-step reset plays the new episodes' first moves
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset[ended] = True  # their masks are empty until the next step resets them
            obs = self._observation(scaled, final=unread)  # the general path scales every row anew
            return obs, rewards, terminated, truncated, self._info()
        info = self._info()
        if ended.size:  # SAME_STEP
            final_obs = self._scaled(self._final[ended])
            final_info = self._info()
            self._start(ended)
            info = self._info()
            info["final_obs"] = np.empty(self.num_envs, dtype=object)
            info["_final_obs"] = np.zeros(self.num_envs, np.bool_)
            for k, b in enumerate(ended):
                info["final_obs"][b] = self._as_obs(final_obs[k], final_info["action_mask"][b])
            info["_final_obs"][ended] = True
            info["final_info"] = final_info
            info["_final_info"] = info["_final_obs"].copy()
        return self._observation(scaled, fresh=ended), rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of every table's learner now, bool ``[N, A]`` (all False for a finished episode)."""
        mask = self.tables.mask.copy()
        mask[self._autoreset] = False
        return mask

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(render_table(self.tables.view(i, int(self.seat[i]))) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        pass

    # -- internals ---------------------------------------------------------------------------
    def _start(self, rows: np.ndarray, seed: int | None = None) -> None:
        """New episodes at ``rows``: seats and opponents drawn, opponents play until the learner is to act."""
        t = self.tables
        rows = pending = np.asarray(rows, np.int64)
        if seed is not None:
            t.seed(seed, rows)
        self._new_episodes(rows)
        while pending.size:
            t.reset(rows=pending)
            # an episode the opponents end before the learner's first move is dealt again
            ended = [pending[:0]]
            self._play_opponents(pending, ended)
            pending = np.concatenate(ended)
        self._rewards[rows] = 0.0  # what happened before the learner's first move is not its reward

    def _new_episodes(self, rows: np.ndarray) -> None:
        """The learner's seat and the opponents of each new episode at ``rows``."""
        if self._seat_choice == "random":
            self.seat[rows] = self._np_random.integers(self.num_players, size=rows.size)
        if len(self._groups) > 1:
            self._group[rows] = self._np_random.choice(len(self._groups), rows.size, p=self._group_weights)
        if self._single is None:  # one agent in every other seat needs no slots
            # opponent slot k is the k-th seat in seat order skipping the learner's (as SingleAgentEnv)
            seats = np.arange(self.num_players)[None, :]
            self._slot[rows] = seats - (seats > self.seat[rows, None])  # the learner's own entry is never used
        self._steps[rows] = 0

    def _play_opponents(self, rows: np.ndarray, finished: list[np.ndarray]) -> None:
        """Other seats act at ``rows`` until each learner is to act or its episode ends (appended to ``finished``)."""
        t = self.tables
        pending = _waiting(rows, t.player, self.seat)
        if self._turns is not None:  # an agent that plays whole turns in one compiled loop (HeuristicAgent)
            if pending.size:
                self._turns(t, pending, self.seat, self._rewards, self._ended)
                finished.append(pending[self._ended[pending]])
            return
        actions = np.zeros(self.num_envs, np.int64)
        ended = np.empty(self.num_envs, np.int64)
        while pending.size:
            self._opponent_actions(pending, actions)
            t.step(actions, rows=pending)
            pending, count = _after_opponents(pending, self.seat, t.rewards, t.done, t.player, self._rewards, ended)
            if count:
                finished.append(ended[:count].copy())

    def _opponent_actions(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Each opponent agent answers, in one batch, every row where it is to act."""
        t = self.tables
        if self._single is not None:  # one agent in every other seat: no grouping needed
            actions[rows] = self._single.act_batch(t.obs[rows], t.mask[rows])
            return
        slot = self._slot[rows, t.player[rows]]
        group = self._group[rows]
        for g, agents in enumerate(self._groups):
            for agent in {id(a): a for a in agents}.values():
                slots = [k for k, a in enumerate(agents) if a is agent]
                sel = rows[(group == g) & np.isin(slot, slots)]
                if sel.size:
                    actions[sel] = agent.act_batch(t.obs[sel], t.mask[sel])

    def _scaled(self, obs: np.ndarray) -> np.ndarray:
        out = np.empty(obs.shape, np.float32)
        SCALE.run(len(obs), len(obs) >= PARALLEL_FROM, obs, self.obs_scale, out)
        return out

    def _observation(self, scaled: np.ndarray | None = None, fresh: np.ndarray | None = None,
                     final: np.ndarray | None = None):
        """A fresh float32 batch (scaled straight into new memory: no copy to make). ``scaled``: rows the
        fused step has already scaled, where only ``fresh`` rows (new episodes) are read again; ``final``:
        rows that show their episode's last observation."""
        if scaled is None:
            obs = self._scaled(self.tables.obs)
        else:
            obs = scaled
            if fresh is not None and fresh.size:
                obs[fresh] = self._scaled(self.tables.obs[fresh])
        if final is not None and final.size:
            obs[final] = self._scaled(self._final[final])
        if self.observation_mode == "dict":
            return {"observations": obs, "action_mask": self.action_masks().astype(np.float32)}
        return obs

    def _as_obs(self, row: np.ndarray, mask: np.ndarray):
        if self.observation_mode == "dict":
            return {"observations": row, "action_mask": mask.astype(np.float32)}
        return row

    def _info(self) -> dict[str, Any]:
        deal, turn, chips, in_play = self.tables.seat_info(self.seat)  # one pass over the state rows
        info = {"action_mask": self.action_masks(), "seat": self.seat.copy(), "deal": deal, "turn": turn,
                "chips": chips, "in_play": in_play}
        ones = np.ones(self.num_envs, np.bool_)
        info.update({f"_{key}": ones for key in list(info)})
        return info
