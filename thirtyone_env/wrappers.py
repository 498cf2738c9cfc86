"""``SingleAgentEnv``: one seat of ``thirtyone_v0`` as a Gymnasium env, the other seats played by agents.

For single-agent libraries (Stable-Baselines3, sb3-contrib ``MaskablePPO``, CleanRL):

| Import | ``gymnasium.make("ThirtyOne-v0", preset="scat", num_players=2)`` after ``import thirtyone_env`` |
|---|---|
| Actions | ``Discrete(4 + deck size)``, the action ids of ``thirtyone_v0`` |
| Observation | ``Box(0, 1, (obs_dim,), float32)``: ``encoding``'s int8 vector / ``encoding.scale`` |
| Legal actions | ``action_masks()`` (sb3-contrib) and ``info["action_mask"]`` (bool) |
| Reward | the learner seat's ``thirtyone_v0`` reward (match: +1 win, -1/(n-1) loss) |

Observations are float32 in [0, 1] so that networks need no preprocessing; the
divisors are ``encoding.scale(deck size, n, lives or chips x n)``, the same as
``VectorThirtyOne.obs_scale``, so ``obs * scale`` recovers the int8 vector exactly.
One ``step`` is the learner's action followed by the opponents' actions until the
learner is to act again or the episode ends. Illegal actions raise ``ValueError``
(``illegal_action="raise"``, the default) or end the episode with reward -1
(``"penalize"``: what ``gymnasium.utils.env_checker.check_env`` needs, since it steps
unmasked ``action_space.sample()`` actions).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from thirtyone_env import ENV_ID, encoding  # noqa: F401 (ENV_ID: re-exported)
from thirtyone_env.agent import Agent, make_agent
from thirtyone_env.env import raw_env
from thirtyone_env.render import render_table
from thirtyone_env.rules import Rules

DEFAULT_OPPONENT = "heuristic"  # the strongest rule-based player, agents.HeuristicAgent


def _reseed(agent: Any, seed: int) -> None:
    """Reseed an opponent through ``seed(int)`` if it has one, else a ``rng`` Generator attribute."""
    if callable(getattr(agent, "seed", None)):
        agent.seed(seed)
    elif isinstance(getattr(agent, "rng", None), np.random.Generator):
        agent.rng = np.random.default_rng(seed)


class SingleAgentEnv(gymnasium.Env):
    """The learner sits at ``seat`` (an int, or ``"random"``: drawn at every reset).

    ``opponents``: one agent for every other seat (in seat order, skipping the
    learner's), one agent for all of them, or ``None`` for ``DEFAULT_OPPONENT``; an agent
    may be given by its name (``"greedy"``, ``"policy:PATH"``, see ``agents.make``).
    ``preset`` is an alias of ``rules`` so that ``gymnasium.make(..., preset="italian")`` reads well.
    ``reset(seed=s)`` seeds the table, the seat draw and the opponents (through
    their ``seed(int)`` method or ``rng`` attribute), so an episode replays exactly.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        rules: str | Rules = "scat",
        num_players: int = 2,
        opponents: Agent | str | list[Agent | str] | None = None,
        seat: int | str = "random",
        episode: str = "match",
        render_mode: str | None = None,
        illegal_action: str = "raise",
        preset: str | None = None,
    ):
        self.rules = Rules.resolve(preset if preset is not None else rules)
        # the AEC env renders every hand: this env renders the learner's view itself
        self._aec = raw_env(num_players, self.rules, None, episode, illegal_action)
        self.num_players = num_players
        modes = self.metadata["render_modes"]
        if render_mode not in (None, *modes):
            raise ValueError(f"render_mode={render_mode!r} is invalid; allowed: {modes}")
        self.render_mode = render_mode
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= seat < num_players):
            raise ValueError(f"seat={seat!r} is invalid; allowed: 'random' or a seat 0..{num_players - 1}")
        self._seat_choice = seat
        self.opponents = self._check_opponents(opponents)

        deck_size = self.rules.deck_size
        self.obs_scale = encoding.scale(deck_size, num_players, self.rules.start_chips * num_players)
        self.observation_space = spaces.Box(0.0, 1.0, (encoding.obs_dim(deck_size, num_players),), np.float32)
        self.action_space = spaces.Discrete(self.rules.num_actions)
        self.seat = 0 if seat == "random" else int(seat)
        self._agent = self._aec.possible_agents[self.seat]
        self._mask = np.zeros(self.rules.num_actions, np.bool_)

    def _check_opponents(self, opponents: Agent | str | list[Agent | str] | None) -> list[Agent]:
        n_opp = self.num_players - 1
        if opponents is None:
            opponents = DEFAULT_OPPONENT
        if not isinstance(opponents, (list, tuple)):
            opponents = [opponents] * n_opp
        if len(opponents) != n_opp:
            raise ValueError(f"opponents: expected {n_opp} agents with act(obs) -> int, got {opponents!r}")
        out = []
        for o in opponents:
            if isinstance(o, str):  # one object per seat, each seeded on its own
                o = make_agent(o, self.rules, self.num_players)
            if not callable(getattr(o, "act", None)):
                raise ValueError(f"opponents: expected {n_opp} agents with act(obs) -> int, got {opponents!r}")
            out.append(o)
        return out

    # -- gymnasium API --------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            for i, opp in enumerate(self.opponents):
                _reseed(opp, seed + 1 + i)
        if self._seat_choice == "random":
            self.seat = int(self.np_random.integers(self.num_players))
            self._agent = self._aec.possible_agents[self.seat]
        table_seed = seed
        while True:
            self._aec.reset(seed=table_seed, options=options)
            self._play_opponents()
            if not self._aec.terminations[self._agent]:
                break
            # a "deal" episode the opponents ended before the learner's first move: deal again
            table_seed = None
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action: int):
        aec = self._aec
        if getattr(aec, "terminations", {}).get(self._agent, True):
            raise RuntimeError("step() called on a finished episode; call reset()")
        if aec.agent_selection != self._agent:  # cannot happen unless the AEC env is driven from outside
            raise RuntimeError(f"{aec.agent_selection} is to act, not the learner {self._agent}")
        aec.step(action)  # illegal: ValueError naming the legal ids, or a forfeit with "penalize"
        reward = aec.rewards[self._agent] + self._play_opponents()
        terminated = aec.terminations[self._agent]
        obs, info = self._observe(), self._info()
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), bool(terminated), False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions for the learner now (all False once the episode is over)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":  # the learner's view as a picture (the ``render`` extra)
            from thirtyone_env.render_svg import view_rgb_array

            return view_rgb_array(self._aec.table.view(0, self.seat))
        text = render_table(self._aec.table.view(0, self.seat))
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        self._aec.close()

    # -- internals ------------------------------------------------------------------
    def _play_opponents(self) -> float:
        """Opponents act until the learner is to act or the episode ends; the learner's reward meanwhile."""
        aec, reward = self._aec, 0.0
        while not aec.terminations[self._agent] and aec.agent_selection != self._agent:
            agent = aec.agent_selection
            seat = aec.seat_of(agent)
            opp = self.opponents[seat if seat < self.seat else seat - 1]
            aec.step(int(opp.act(aec.observe(agent))))
            reward += aec.rewards[self._agent]
        return reward

    def _observe(self) -> np.ndarray:
        raw = self._aec.observe(self._agent)
        self._mask[:] = raw["action_mask"].astype(np.bool_)
        return raw["observation"].astype(np.float32) / self.obs_scale  # division: exact 1.0 at the top

    def _info(self) -> dict[str, Any]:
        info = dict(self._aec.infos[self._agent])
        info["seat"] = self.seat
        info["action_mask"] = self._mask.copy()
        return info


class ScaledObservationWrapper(BaseWrapper):
    """``thirtyone_v0`` with float32 observations in [0, 1] under ``obs_key`` and a float32 mask.

    RLlib's action-masking RLModule wants ``{"observations": ..., "action_mask": ...}``:
    ``ScaledObservationWrapper(thirtyone_v0.env(), obs_key="observations")``.
    The scaling is ``SingleAgentEnv``'s (``encoding.scale``).
    """

    def __init__(self, env: AECEnv, obs_key: str = "observation"):
        super().__init__(env)
        base = env.unwrapped
        rules, n = base.rules, base.num_players
        self.obs_key = obs_key
        self.obs_scale = encoding.scale(rules.deck_size, n, rules.start_chips * n)
        self._spaces = {
            agent: spaces.Dict(
                {
                    obs_key: spaces.Box(0.0, 1.0, self.obs_scale.shape, np.float32),
                    "action_mask": spaces.Box(0.0, 1.0, (rules.num_actions,), np.float32),
                }
            )
            for agent in base.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        raw = super().observe(agent)
        return {
            self.obs_key: raw["observation"].astype(np.float32) / self.obs_scale,
            "action_mask": raw["action_mask"].astype(np.float32),
        }

