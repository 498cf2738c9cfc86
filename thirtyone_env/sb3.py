"""``ThirtyOneVecEnv``: the batched engine as a Stable-Baselines3 ``VecEnv`` (the ``sb3`` extra).

The same core as ``ThirtyOneVectorEnv`` (one learner seat per table, the other seats played
in batch by agents) with SB3's conventions: finished episodes reset inside ``step_wait``,
their last observation in ``infos[i]["terminal_observation"]``, truncation in
``infos[i]["TimeLimit.truncated"]``. sb3-contrib's ``MaskablePPO`` reads the legal actions
through ``env_method("action_masks")``; ``VecMonitor`` records episode returns and lengths.

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from thirtyone_env.sb3 import ThirtyOneVecEnv

    env = VecMonitor(ThirtyOneVecEnv(64, preset="scat", num_players=2, opponents="random"))
    env.seed(0)
    MaskablePPO("MlpPolicy", env).learn(100_000)

``seed(s)`` seeds the next ``reset``: table ``i`` draws from stream ``i`` of ``s`` (a
batch seed, not one seed per env as SB3's default ``seed + i``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from thirtyone_env.gym_vector import ThirtyOneVectorEnv


class ThirtyOneVecEnv(VecEnv):
    """``num_envs`` tables; every keyword is ``ThirtyOneVectorEnv``'s (``preset``, ``num_players``,
    ``opponents``, ``seat``, ``episode``, ``illegal_action``, ``max_episode_steps``)."""

    def __init__(self, num_envs: int, **kwargs: Any):
        for key in ("autoreset_mode", "observation", "render_mode"):
            if key in kwargs:
                raise ValueError(f"{key} is fixed by ThirtyOneVecEnv (SB3 resets in the same step, flat observations)")
        self.env = ThirtyOneVectorEnv(num_envs, autoreset_mode="same_step", **kwargs)
        self.render_mode = None
        self._actions: np.ndarray | None = None
        self._batch_seed: int | None = None
        super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)

    # -- the VecEnv contract -------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        obs, info = self.env.reset(seed=self._batch_seed)
        self._batch_seed = None
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = self._per_env(info)
        return obs

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the next ``reset`` (table ``i``: stream ``i`` of ``seed``)."""
        self._batch_seed = seed
        return [seed] * self.num_envs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        infos = self._per_env(info)
        for i in np.flatnonzero(terminated | truncated):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), terminated | truncated, infos

    def close(self) -> None:
        self.env.close()

    def action_masks(self) -> np.ndarray:
        """Legal actions of every table's learner, bool ``[N, A]``."""
        return self.env.action_masks()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of the underlying vector env, once per index (the tables share it)."""
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(f"set_attr({attr_name!r}): the tables share one env; set it for all of them")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks`` gives one row per index; other methods are called once and their
        result repeated per index."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    # -- internals ---------------------------------------------------------------------------
    def _per_env(self, info: dict[str, Any]) -> list[dict[str, Any]]:
        keys = [k for k in info if not k.startswith("_") and k not in ("final_obs", "final_info")]
        columns = {k: info[k] for k in keys}
        return [{k: column[i] for k, column in columns.items()} for i in range(self.num_envs)]

    def _get_indices(self, indices: VecEnvIndices) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]
