"""``RandomAgent``: uniform over the legal actions, reproducible from its seed."""

from __future__ import annotations

import numpy as np

from agents.base import BaseAgent
from thirtyone_env.rules import Rules


class RandomAgent(BaseAgent):
    """Picks each legal action with equal probability (numpy ``Generator`` seeded by ``seed``)."""

    def __init__(self, rules: str | Rules = "scat", num_players: int = 2, seed: int | None = None):
        super().__init__(rules, num_players, seed)
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = self._check_batch(obs, mask)
        # the argmax of uniform noise over the legal ids is a uniform legal id
        noise = self.rng.random(mask.shape)
        noise[~mask] = -1.0
        out = noise.argmax(axis=1).astype(np.int64)
        out[~mask.any(axis=1)] = -1
        return out
