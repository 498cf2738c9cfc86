"""The one protocol every agent follows, and a seat-rotating tournament over ``VectorThirtyOne``.

An agent is built for one table shape ``(rules, num_players)`` because the
observation layout depends on both. It answers one observation of
``thirtyone_v0`` (``act``) or a batch from ``VectorThirtyOne`` (``act_batch``)
and only ever chooses legal actions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from thirtyone_env import encoding
from thirtyone_env.rules import Rules


@runtime_checkable
class Agent(Protocol):
    def act(self, obs: dict) -> int:
        """One legal action for ``{"observation": int8[obs_dim], "action_mask": int8[A]}``."""

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row: ``obs`` int8 [B, obs_dim], ``mask`` bool [B, A] -> int64 [B]."""


class BaseAgent:
    """Shared construction and input checks; subclasses implement ``act_batch``."""

    def __init__(self, rules: str | Rules = "scat", num_players: int = 2, seed: int | None = None):
        self.rules = Rules.resolve(rules)
        self.rules.check_num_players(num_players)
        self.num_players = num_players
        self.seed = seed
        self.deck_size = self.rules.deck_size
        self.num_actions = self.rules.num_actions
        self.obs_dim = encoding.obs_dim(self.deck_size, num_players)
        self.offsets = encoding.offsets(self.deck_size, num_players)
        self.params = self.rules.params()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rules={self.rules.name!r}, num_players={self.num_players})"

    def act(self, obs: dict) -> int:
        row, mask = self._check_one(obs)
        return int(self.act_batch(row[None], mask[None])[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # -- input checks -------------------------------------------------------------------
    def _check_one(self, obs: dict) -> tuple[np.ndarray, np.ndarray]:
        row = np.ascontiguousarray(obs["observation"], dtype=np.int8)
        mask = np.ascontiguousarray(obs["action_mask"]).astype(np.bool_)
        if row.shape != (self.obs_dim,) or mask.shape != (self.num_actions,):
            raise ValueError(
                f"{self!r} expects observation ({self.obs_dim},) and action_mask ({self.num_actions},), "
                f"got {row.shape} and {mask.shape}"
            )
        if not mask.any():
            raise ValueError(f"{self!r}: the action mask has no legal action (is it this seat's turn?)")
        return row, mask

    def _check_batch(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        obs = np.ascontiguousarray(obs, dtype=np.int8)
        mask = np.ascontiguousarray(mask, dtype=np.bool_)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(
                f"{self!r} expects obs [B, {self.obs_dim}] and mask [B, {self.num_actions}], "
                f"got {obs.shape} and {mask.shape}"
            )
        return obs, mask


# -- tournaments ----------------------------------------------------------------------------
@dataclass
class TournamentResult:
    """Matches won by each agent (a shared win counts its share), with a 95% interval."""

    matches: int
    wins: np.ndarray  # float, per agent

    def win_rate(self, agent: int) -> float:
        return float(self.wins[agent] / self.matches)

    def interval(self, agent: int) -> tuple[float, float]:
        """Normal-approximation 95% confidence interval of ``win_rate(agent)``."""
        p = self.win_rate(agent)
        half = 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / self.matches)
        return max(0.0, p - half), min(1.0, p + half)


def rotations(pattern: list[int]) -> np.ndarray:
    """Every rotation of a seat pattern, e.g. ``[0, 0, 1, 1]`` -> 4 seatings of agents 0 and 1."""
    return np.array([pattern[k:] + pattern[:k] for k in range(len(pattern))], np.int64)


def play_matches(agents: list, seating: np.ndarray, rules: str | Rules = "scat", seed: int = 0,
                 num_envs: int = 1024) -> np.ndarray:
    """Play one match per row of ``seating`` (agent index per seat); returns rewards (matches, seats).

    Tables take the next unplayed row whenever they finish a match, so the result depends
    only on the agents, the seating and the seed.
    """
    from thirtyone_env.vector import VectorThirtyOne

    matches, n = seating.shape
    num_envs = min(num_envs, matches)
    vec = VectorThirtyOne(num_envs, num_players=n, rules=rules, seed=seed)
    obs, mask, player = vec.reset()
    row = np.arange(num_envs)  # the seating row each table plays; >= matches: surplus, not counted
    next_row = num_envs
    rewards_out = np.zeros((matches, n), np.float32)
    finished = 0
    actions = np.zeros(num_envs, np.int64)
    while finished < matches:
        who = seating[np.minimum(row, matches - 1), player]
        for a, agent in enumerate(agents):
            rows = np.flatnonzero(who == a)
            if rows.size:
                actions[rows] = agent.act_batch(obs[rows], mask[rows])
        obs, mask, player, rewards, done = vec.step(actions)
        for i in np.flatnonzero(done):
            if row[i] < matches:
                rewards_out[row[i]] = rewards[i]
                finished += 1
            row[i] = next_row
            next_row += 1
    return rewards_out


def tournament(
    agents: list,
    pattern: list[int],
    matches: int,
    rules: str | Rules = "scat",
    seed: int = 0,
    num_envs: int = 1024,
) -> TournamentResult:
    """Play ``matches`` whole matches with seats given by rotations of ``pattern`` (agent index per seat).

    Match ``k`` uses rotation ``k % len(pattern)``, so every agent sits in every seat equally
    often. A match's winners are the seats with a positive reward; ``wins[a]`` adds each
    winning seat's reward share (+1 split among co-winners) to the agent sitting there.
    """
    n = len(pattern)
    seating = rotations(pattern)[np.arange(matches) % n]
    rewards = play_matches(agents, seating, rules, seed, num_envs)
    wins = np.zeros(len(agents), np.float64)
    for k in range(matches):
        r = rewards[k]
        if (r > 0).any():
            for seat in np.flatnonzero(r > 0):
                wins[seating[k, seat]] += r[seat] / r[r > 0].sum()
        else:  # everyone shared the win
            for seat in range(n):
                wins[seating[k, seat]] += 1.0 / n
    return TournamentResult(matches=matches, wins=wins)
