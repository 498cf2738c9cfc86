"""thirtyone-env: the card game Thirty-one as a reinforcement-learning environment.

The core (rules, engine, PettingZoo env, batched engine) needs no torch, and the batched
engine (``thirtyone_env.vector``) needs neither PettingZoo nor Gymnasium: ``ThirtyOne-v0``
is registered with Gymnasium when Gymnasium is imported, before or after this package.
"""

import sys

import wrapt

from thirtyone_env.cards import card_str, parse_cards
from thirtyone_env.rules import Rules

__all__ = ["Rules", "card_str", "parse_cards", "thirtyone_v0", "vector"]
__version__ = "0.1.0"

ENV_ID = "ThirtyOne-v0"


def _register_with_gymnasium(gymnasium) -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point="thirtyone_env.wrappers:SingleAgentEnv",
                           vector_entry_point="thirtyone_env.gym_vector:ThirtyOneVectorEnv")


if "gymnasium" in sys.modules:
    _register_with_gymnasium(sys.modules["gymnasium"])
else:
    wrapt.register_post_import_hook(_register_with_gymnasium, "gymnasium")


def __getattr__(name: str):
    # thirtyone_v0 and vector import numba kernels: load them on first use
    if name in ("thirtyone_v0", "vector", "wrappers", "encoding", "engine"):
        import importlib

        return importlib.import_module(f"thirtyone_env.{name}")
    raise AttributeError(name)
