"""``BaseAgent``: what every agent here shares (construction for one table shape, input checks).

An agent follows the one protocol, ``thirtyone_env.agent.Agent``: it is built for one
table shape ``(rules, num_players)`` because the observation layout depends on both, it
answers one observation of ``thirtyone_v0`` (``act``) or a batch from ``VectorThirtyOne``
(``act_batch``), and it only ever chooses legal actions.
"""

from __future__ import annotations

import numpy as np

from thirtyone_env import encoding
from thirtyone_env.rules import Rules


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
