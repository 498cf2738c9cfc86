"""``VectorThirtyOne``: thousands of tables stepped together by the same engine kernels.

Observations have ``thirtyone_v0``'s layout for the seat to act. Finished tables
start their next match inside ``step``; the returned observation is then the new
match's first. Table ``i`` draws its random numbers from stream ``i`` of the
seed, so results do not depend on the thread count, and table ``i`` replays
exactly like ``thirtyone_v0`` reset with the same seed when ``num_envs == 1``.
Needs neither PettingZoo nor Gymnasium.
"""

from __future__ import annotations

import numpy as np

from thirtyone_env.engine.tables import Tables
from thirtyone_env.rules import Rules


class VectorThirtyOne(Tables):
    """``num_envs`` independent tables of ``num_players`` under one set of ``rules``, reset as they finish.

    ``observe=False`` skips writing observations (engine-only speed). ``parallel``
    spreads tables over numba's threads; by default only from ``PARALLEL_FROM`` tables.
    ``illegal_action="raise"`` refuses a step with an illegal action (nothing changes);
    ``"penalize"`` ends that table's match with -1 for the offender and 0 for the others,
    as ``thirtyone_v0`` does. Everything else: ``thirtyone_env.engine.Tables``.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        rules: str | Rules = "scat",
        seed: int | None = 0,
        episode: str = "match",
        observe: bool = True,
        parallel: bool | None = None,
        illegal_action: str = "raise",
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is invalid; allowed: an integer >= 1")
        super().__init__(int(num_envs), num_players, rules, seed, episode, observe, parallel, illegal_action,
                         autoreset=True)

    @property
    def num_envs(self) -> int:
        return self.num_tables

    def reset(self, seed: int | None = None, decks: list | None = None):
        """New matches on every table. ``decks`` stacks the same decks on every table."""
        return super().reset(seed=seed, decks=decks)

    def state(self):
        """The full state of every table (all hands, the stock, whose turn, seat 0's view), int8."""
        return self.global_state()
