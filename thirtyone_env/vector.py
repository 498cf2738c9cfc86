"""``VectorThirtyOne``: thousands of tables stepped together by the same engine kernels.

Observations have ``thirtyone_v0``'s layout for the seat to act. Finished tables
start their next match inside ``step``; the returned observation is then the new
match's first. Table ``i`` draws its random numbers from stream ``i`` of the
seed, so results do not depend on the thread count, and table ``i`` replays
exactly like ``thirtyone_v0`` reset with the same seed when ``num_envs == 1``.
"""

from __future__ import annotations

import numpy as np

from thirtyone_env import encoding
from thirtyone_env import engine as G
from thirtyone_env.env import check_decks, check_episode
from thirtyone_env.render import action_name
from thirtyone_env.rules import Rules


class VectorThirtyOne:
    """``num_envs`` independent tables of ``num_players`` under one set of ``rules``.

    ``observe=False`` skips writing observations (engine-only speed). ``parallel``
    spreads tables over numba's threads; by default only from ``PARALLEL_FROM`` tables.
    """

    PARALLEL_FROM = 256

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        rules: str | Rules = "scat",
        seed: int | None = 0,
        episode: str = "match",
        observe: bool = True,
        parallel: bool | None = None,
    ):
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is invalid; allowed: an integer >= 1")
        self.rules = Rules.resolve(rules)
        self.rules.check_num_players(num_players)
        self.num_envs = int(num_envs)
        self.num_players = num_players
        self.episode = episode
        self._episode_deal = check_episode(episode)
        self.num_actions = self.rules.num_actions
        self.obs_dim = encoding.obs_dim(self.rules.deck_size, num_players)
        self.obs_scale = encoding.scale(self.rules.deck_size, num_players, self.total_chips)
        self._params = self.rules.params()
        self._offsets = encoding.offsets(self.rules.deck_size, num_players)
        self._observe = observe
        self.parallel = self.num_envs >= self.PARALLEL_FROM if parallel is None else bool(parallel)
        self._reset_kernel = G._reset_batch if self.parallel else G._reset_serial
        self._step_kernel = G._step_batch if self.parallel else G._step_serial
        self.seed = seed
        self._states, self._rngs, self._decks = G.new_tables(self.num_envs)
        self._seed_rngs(seed)
        self.obs = np.zeros((self.num_envs, self.obs_dim if observe else 0), np.int8)
        self.mask = np.zeros((self.num_envs, self.num_actions), np.bool_)
        self.player = np.zeros(self.num_envs, np.int64)
        self.rewards = np.zeros((self.num_envs, num_players), np.float32)
        self.done = np.zeros(self.num_envs, np.bool_)

    @property
    def total_chips(self) -> int:
        return self.rules.start_chips * self.num_players

    def _seed_rngs(self, seed: int | None) -> None:
        entropy = np.random.SeedSequence(seed).entropy
        for i in range(self.num_envs):
            self._rngs[i] = G.seed_rng(entropy, i)

    def reset(
        self, seed: int | None = None, decks: list | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New matches on every table. ``decks`` stacks the same decks on every table."""
        if seed is not None:
            self._seed_rngs(seed)
        if decks is not None:
            stacked = check_decks(decks, self.rules)
            self._decks = np.broadcast_to(stacked, (self.num_envs, *stacked.shape)).copy()
        self._states[:, G.S_QPOS] = 0
        self._states[:, G.S_QLEN] = self._decks.shape[1]
        self._reset_kernel(
            self._states, self._rngs, self._decks, self._params, self.num_players,
            self._episode_deal, self._obs_offsets, self.obs, self.mask, self.player,
        )
        self.rewards[:] = 0
        self.done[:] = False
        return self.obs, self.mask, self.player

    @property
    def _obs_offsets(self) -> np.ndarray:
        return self._offsets if self._observe else self._offsets[:0]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per table; returns ``(obs, mask, player, rewards, done)``.

        The returned arrays are reused by the next call: copy what you keep.
        """
        actions = self._check_actions(actions)
        self._step_kernel(
            self._states, self._rngs, self._decks, self._params, actions, self._obs_offsets,
            self.obs, self.mask, self.player, self.rewards, self.done,
        )
        return self.obs, self.mask, self.player, self.rewards, self.done

    def _check_actions(self, actions: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
        checked = actions.astype(np.int64, copy=False)  # a huge uint64 wraps negative: still illegal
        if not G._count_illegal(checked, self.mask):
            return checked
        in_range = (actions >= 0) & (actions < self.num_actions)
        legal = in_range & self.mask[np.arange(self.num_envs), np.where(in_range, actions, 0)]
        bad = np.flatnonzero(~legal)
        details = "; ".join(
            f"table {i}: action {int(actions[i])}, legal {np.flatnonzero(self.mask[i]).tolist()} "
            f"({', '.join(action_name(a, self.rules.deck) for a in np.flatnonzero(self.mask[i]))})"
            for i in bad[:5]
        )
        more = f" (and {len(bad) - 5} more tables)" if len(bad) > 5 else ""
        raise ValueError(f"illegal actions at {len(bad)} table(s): {details}{more}")

    def state(self) -> np.ndarray:
        """The full state of every table (all hands, the stock, whose turn, seat 0's view), int8."""
        out = np.empty((self.num_envs, G.global_state_dim(self.rules.deck_size, self.num_players)), np.int8)
        G._global_state_batch(self._states, self._params, self._offsets, out)
        return out

    def snapshot(self) -> dict[str, np.ndarray]:
        """Everything needed to continue exactly (tables, RNGs, stacked decks, last outputs)."""
        names = ("_states", "_rngs", "_decks", "obs", "mask", "player", "rewards", "done")
        return {name: getattr(self, name).copy() for name in names}

    def restore(self, snapshot: dict[str, np.ndarray]) -> None:
        for name, value in snapshot.items():
            current = getattr(self, name)
            if name != "_decks" and (value.shape != current.shape or value.dtype != current.dtype):
                raise ValueError(f"snapshot field {name} has shape {value.shape}, expected {current.shape}")
            setattr(self, name, value.copy())

    @property
    def chips(self) -> np.ndarray:
        """Lives (lives economy) or chips (pot economy) of every seat, int [num_envs, num_players], read-only."""
        view = self._states[:, G.S_CHIPS : G.S_CHIPS + self.num_players]
        view.flags.writeable = False
        return view

    def raw_state(self) -> np.ndarray:
        """The engine's int32 state vectors (layout ``engine.S_*``), read-only view."""
        view = self._states.view()
        view.flags.writeable = False
        return view

    def observe(self, seats: np.ndarray) -> np.ndarray:
        """Observation of any seat per table (e.g. every seat's view at the end of a match)."""
        seats = np.asarray(seats, np.int64)
        if seats.shape != (self.num_envs,) or ((seats < 0) | (seats >= self.num_players)).any():
            raise ValueError(f"seats must be {self.num_envs} seat numbers in 0..{self.num_players - 1}")
        out = np.empty((self.num_envs, self.obs_dim), np.int8)
        G._observe_batch(self._states, self._params, seats, self._offsets, out)
        return out
