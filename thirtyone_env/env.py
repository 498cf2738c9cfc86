"""Thirty-one as a PettingZoo AEC environment: a thin adapter over one engine table.

| Import | `from thirtyone_env import thirtyone_v0` |
|---|---|
| Actions | Discrete, `4 + deck size` (56 french52, 44 italian40) |
| Agents | `player_0 .. player_{n-1}` (seats, clockwise) |
| Observation | `Dict(observation=Box(0, 127, (obs_dim,), int8), action_mask=Box(0, 1, (actions,), int8))` |
| Rewards | match: winner +1, others -1/(n-1) (co-winners share); deal: net chips |

Observation space: the layout of ``thirtyone_env.encoding`` (a table in docs/observations.md).
Legal actions mask: exact; all zeros for a seat that is not to act.
A seat that goes out stays in ``agents`` and is never selected; every seat
terminates on the same final step, whose ``rewards`` hold every seat's reward.

Render modes: ``"ansi"`` / ``"human"`` (text) and ``"rgb_array"`` (the picture of
``thirtyone_env.render_svg``; needs the ``render`` extra), of every hand, the public view
(``render_seat="public"``) or one seat's view (``render_seat=SEAT``).
Replays: ``record=True`` records each match; ``env.unwrapped.replay.save(path)`` writes it
(``thirtyone_env.replay``, docs/replay.md).

Version history: v0, the first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from thirtyone_env.engine import Tables
from thirtyone_env.render import render_table
from thirtyone_env.replay import Recorder, Replay
from thirtyone_env.rules import Rules


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` with PettingZoo's order enforcing (illegal actions are handled inside)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # noqa: N801 (PettingZoo naming)
    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
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
        record: bool = False,
        render_seat: int | str | None = None,
    ):
        super().__init__()
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode={render_mode!r} is invalid; allowed: {self.metadata['render_modes']}")
        # one table, never reset behind our back; unseeded until the first reset
        self.table = Tables(1, num_players, rules, seed=None, episode=episode, observe=False, parallel=False,
                            illegal_action=illegal_action, autoreset=False)
        self.rules = self.table.rules
        self.num_players = num_players
        self.render_mode = render_mode
        if not (render_seat in (None, "public") or isinstance(render_seat, int) and 0 <= render_seat < num_players):
            raise ValueError(f"render_seat={render_seat!r} is invalid; allowed: None (every hand), 'public' "
                             f"or a seat 0..{num_players - 1}")
        self.render_seat = render_seat
        # record=True: ``self.replay`` is the current match as a replay file (thirtyone_env.replay)
        self.recorder = Recorder(self.table) if record else None
        self.episode = episode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}

        num_actions = self.rules.num_actions
        obs_dim = self.table.obs_dim
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
        self.state_space = spaces.Box(0, 127, (self.table.state_dim,), np.int8)
        self._no_mask = np.zeros(num_actions, np.int8)
        self._mask, self._finished = self.table.mask[0], self.table.finished  # views that follow every step

    # -- spaces ---------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def seat_of(self, agent: str) -> int:
        return self._seat[agent]

    # -- episode --------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = options or {}  # other keys are ignored, as Gymnasium and PettingZoo expect
        # without a seed the table's random stream continues (fresh entropy before any seed)
        reset = self.recorder.reset if self.recorder else self.table.reset
        reset(seed=seed, decks=options.get("decks", []), dealer=options.get("dealer", -1))
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def _refresh(self) -> None:
        """Infos and ``agent_selection`` from the table."""
        t = self.table
        self.agent_selection = self.possible_agents[int(t.current_player[0])]
        deals, turns, chips, status = int(t.deal[0]), int(t.turn[0]), t.chips[0], t.status[0]
        self.infos = {
            agent: {"deal": deals, "turn": turns, "chips": int(chips[seat]), "in_play": int(status[seat] != 0)}
            for seat, agent in enumerate(self.possible_agents)
        }

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.table.observe_at(0, self._seat[agent])
        acting = agent == self.agent_selection and not self._finished[0] and not self.terminations[agent]
        mask = self._mask.view(np.int8).copy() if acting else self._no_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        return self.table.global_state()[0]

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # an illegal action raises ValueError naming the legal ids, or forfeits with "penalize"
        if self.recorder is None:
            step_rewards = self.table.step_at(0, action, agent)
        else:
            step_rewards = self.recorder.step_at(action, agent)
        self._cumulative_rewards[agent] = 0.0
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = float(step_rewards[i])
        if self._finished[0]:
            self.terminations = {a: True for a in self.agents}
        self._accumulate_rewards()
        self._refresh()
        if self.render_mode == "human":
            self.render()

    @property
    def replay(self) -> Replay | None:
        """The match so far as a replay (``record=True``); ``replay.save(path)`` writes it."""
        return self.recorder.replay if self.recorder else None

    # -- people ---------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        seat = -1 if self.render_seat == "public" else self.render_seat
        if self.render_mode == "rgb_array":
            from thirtyone_env.render_svg import view_rgb_array

            return view_rgb_array(self.table.view(0, seat))
        text = render_table(self.table.view(0, seat))
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
