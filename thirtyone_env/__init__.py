"""thirtyone-env: the card game Thirty-one as a reinforcement-learning environment.

The core (rules, engine, PettingZoo env, batched engine) needs no torch.
"""

from thirtyone_env.cards import card_str, parse_cards
from thirtyone_env.rules import Rules

__all__ = ["Rules", "card_str", "parse_cards", "thirtyone_v0", "vector"]
__version__ = "0.1.0"

import gymnasium as _gym  # noqa: E402

if "ThirtyOne-v0" not in _gym.registry:
    _gym.register("ThirtyOne-v0", entry_point="thirtyone_env.wrappers:SingleAgentEnv")


def __getattr__(name: str):
    # thirtyone_v0 and vector import numba kernels: load them on first use
    if name in ("thirtyone_v0", "vector", "wrappers", "encoding", "engine"):
        import importlib

        return importlib.import_module(f"thirtyone_env.{name}")
    raise AttributeError(name)
