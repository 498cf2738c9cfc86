"""``thirtyone_v0``: the PettingZoo AEC environment (``env``, ``raw_env``).

No ``parallel_env``: Thirty-one is strictly turn-based (one seat decides at a
time, a turn is a draw then a discard by the same seat), so a simultaneous-move
view would only ask every other seat for a dummy action each step.
"""

import pettingzoo

from thirtyone_env.env import env, raw_env

__all__ = ["env", "raw_env"]

if hasattr(pettingzoo, "register") and "thirtyone-v0" not in getattr(pettingzoo, "aec_registry", {}):
    pettingzoo.register("aec", "thirtyone-v0", entry_point="thirtyone_env.thirtyone_v0:env")
