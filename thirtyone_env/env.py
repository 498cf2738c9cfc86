"""Thirty-one as a PettingZoo AEC environment: a thin adapter over one engine table.

| Import | `from thirtyone_env import thirtyone_v0` |
|---|---|
| Actions | Discrete, `4 + deck size` (56 french52, 44 italian40) |
| Agents | `player_0 .. player_{n-1}` (seats, clockwise) |
| Observation | `Dict(observation=Box(0, 127, (obs_dim,), int8), action_mask=Box(0, 1, (actions,), int8))` |
| Rewards | match: winner +1, others -1/(n-1) (co-winners share); deal: net chips |

Observation space: the layout of ``thirtyone_env.encoding`` (a table in the README).
Legal actions mask: exact; all zeros for a seat that is not to act.
A seat that goes out stays in ``agents`` and is never selected; every seat
terminates on the same final step, whose ``rewards`` hold every seat's reward.

Version history: v0, the first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from thirtyone_env import encoding
from thirtyone_env import engine as G
from thirtyone_env.cards import card_str
from thirtyone_env.render import action_name, render_table
from thirtyone_env.rules import Rules

EPISODES = ("match", "deal")
ILLEGAL_ACTIONS = ("raise", "penalize")


def check_episode(episode: str) -> int:
    if episode not in EPISODES:
        raise ValueError(f"episode={episode!r} is invalid; allowed: {list(EPISODES)}")
    return int(episode == "deal")


def check_decks(decks: Any, rules: Rules) -> np.ndarray:
    """Stacked decks from ``options["decks"]`` as an int16 [Q, 52] array padded with -1.

    Each deck lists card ids top first; it may list only its top cards, the rest
    are then shuffled below them by the seeded RNG.
    """
    size = rules.deck_size
    out = np.full((len(decks), G.MAXD), -1, np.int16)
    for q, deck in enumerate(decks):
        cards = [int(c) for c in deck]
        for c in cards:
            if not 0 <= c < size:
                raise ValueError(f"options['decks'][{q}]: card id {c} out of range 0..{size - 1}")
        if len(set(cards)) != len(cards):
            dup = next(c for c in cards if cards.count(c) > 1)
            raise ValueError(f"options['decks'][{q}]: duplicate card {card_str(dup, rules.deck)} ({dup})")
        out[q, : len(cards)] = cards
    return out


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` with PettingZoo's order enforcing (illegal actions are handled inside)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # noqa: N801 (PettingZoo naming)
    metadata = {
        "render_modes": ["human", "ansi"],
        "name": "thirtyone_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 4,
        rules: str | Rules = "scat",
        render_mode: str | None = None,
        episode: str = "match",
        illegal_action: str = "raise",
    ):
        super().__init__()
        self.rules = Rules.resolve(rules)
        self.rules.check_num_players(num_players)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode={render_mode!r} is invalid; allowed: {self.metadata['render_modes']}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action={illegal_action!r} is invalid; allowed: {list(ILLEGAL_ACTIONS)}")
        self.num_players = num_players
        self.render_mode = render_mode
        self.episode = episode
        self._episode_deal = check_episode(episode)
        self._illegal_action = illegal_action
        self._params = self.rules.params()
        self._offsets = encoding.offsets(self.rules.deck_size, num_players)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}

        num_actions = self.rules.num_actions
        obs_dim = int(self._offsets[-1])
        self._action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0, 127, (obs_dim,), np.int8),
                    "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.state_space = spaces.Box(0, 127, (G.global_state_dim(self.rules.deck_size, num_players),), np.int8)

        states, rngs, decks = G.new_tables(1)
        self._state, self._rng = states[0], rngs[0]
        self._decks = decks[0]
        self._seeded = False
        self._mask = np.zeros(num_actions, np.int8)
        self._no_mask = np.zeros(num_actions, np.int8)
        self._step_rewards = np.zeros(G.MAXP, np.float64)

    # -- spaces ---------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    # -- episode --------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or not self._seeded:
            self._rng[:] = G.seed_rng(seed)
            self._seeded = True
        options = options or {}  # other keys are ignored, as Gymnasium and PettingZoo expect
        self._decks = check_decks(options.get("decks", []), self.rules)
        dealer = options.get("dealer", -1)
        if dealer != -1 and (not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < self.num_players):
            raise ValueError(f"options['dealer']={dealer!r} is invalid; allowed: a seat 0..{self.num_players - 1}")
        self._state[G.S_QPOS] = 0
        self._state[G.S_QLEN] = len(self._decks)
        G._reset(
            self._state, self._rng, self._decks, self._params, self.num_players,
            self._episode_deal, int(dealer), self._step_rewards,
        )
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def _refresh(self) -> None:
        """Mask, infos and ``agent_selection`` from the engine state."""
        s = self._state
        G._legal_mask(s, self._params, self._mask)
        self.agent_selection = self.possible_agents[int(s[G.S_CURRENT])]
        deals, turns = int(s[G.S_DEALS]), int(s[G.S_TURNS])
        self.infos = {
            agent: {
                "deal": deals,
                "turn": turns,
                "chips": int(s[G.S_CHIPS + seat]),
                "in_play": int(s[G.S_STATUS + seat] != G.OUT),
            }
            for seat, agent in enumerate(self.possible_agents)
        }

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        obs = np.empty(int(self._offsets[-1]), np.int8)
        G._observe(self._state, self._params, seat, self._offsets, obs)
        acting = agent == self.agent_selection and not self._state[G.S_DONE] and not self.terminations[agent]
        mask = self._mask.copy() if acting else self._no_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        out = np.empty(self.state_space.shape, np.int8)
        G._global_state(self._state, self._params, self._offsets, out)
        return out

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seat[agent]
        if not self._is_legal(action):
            if self._illegal_action == "raise":
                raise ValueError(self._illegal_message(action, agent))
            G._forfeit(self._state, seat, self._step_rewards)
        else:
            G._step(self._state, self._rng, self._decks, self._params, int(action), self._step_rewards)
        self._cumulative_rewards[agent] = 0.0
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = float(self._step_rewards[i])
        if self._state[G.S_DONE]:
            self.terminations = {a: True for a in self.agents}
        self._accumulate_rewards()
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def _is_legal(self, action: Any) -> bool:
        try:
            a = int(action)
        except (TypeError, ValueError):
            return False
        return a == action and 0 <= a < len(self._mask) and bool(self._mask[a])

    def _illegal_message(self, action: Any, agent: str) -> str:
        legal = np.flatnonzero(self._mask).tolist()
        names = ", ".join(f"{a} ({action_name(a, self.rules.deck)})" for a in legal)
        return f"illegal action {action!r} for {agent}; legal action ids: {legal} = {names}"

    # -- people ---------------------------------------------------------------------
    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = render_table(self._state, self.rules)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
