"""The one ``Agent`` protocol, and agents by name for the core's own needs.

The core never imports the ``agents`` package (it is the layer above). Where the core needs
"some agent" by name (the single-agent env's default opponents, a task's evaluation
opponents), ``make_agent`` resolves the name through the maker the agents layer registers:
``agents`` calls ``register_maker`` when it is imported, and an installed ``agents`` package
is also found through its ``thirtyone_env.agents`` entry point.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from thirtyone_env.rules import Rules


@runtime_checkable
class Agent(Protocol):
    """An agent built for one table shape ``(rules, num_players)`` (the observation layout depends on both)."""

    def act(self, obs: dict) -> int:
        """One legal action for ``{"observation": int8[obs_dim], "action_mask": int8[A]}`` (``thirtyone_v0``)."""

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row: ``obs`` int8 [B, obs_dim], ``mask`` bool [B, A] -> int64 [B]."""


Maker = Callable[..., Any]
_maker: Maker | None = None
ENTRY_POINT_GROUP = "thirtyone_env.agents"


def register_maker(maker: Maker) -> None:
    """``maker(spec, rules, num_players, seed=None)`` builds an agent from its text."""
    global _maker
    _maker = maker


def make_agent(spec: str | Any, rules: str | Rules, num_players: int, seed: int | None = None) -> Any:
    """An agent from its text (``"heuristic"``, ``"policy:PATH"``...) or an agent object as is."""
    if not isinstance(spec, str):
        if not callable(getattr(spec, "act", None)):
            raise ValueError(f"expected an agent spec string or an object with act(obs), got {spec!r}")
        return spec
    if _maker is None:
        for entry in entry_points(group=ENTRY_POINT_GROUP, name="make"):
            entry.load()  # importing the agents package registers its maker
            break
    if _maker is None:
        raise ValueError(f"cannot build agent {spec!r}: no agent maker is registered (import agents)")
    return _maker(spec, Rules.resolve(rules), num_players, seed=seed)


def parse_mix(text: str, what: str = "opponents") -> dict[str, float]:
    """``"heuristic:3,policy:/runs/a:b/last.pt:2"`` -> ``{"heuristic": 3.0, "policy:/runs/a:b/last.pt": 2.0}``.

    Comma-separated ``SPEC[:WEIGHT]``: the weight is the text after the last colon only when it
    is a number, so paths with colons (``policy:C:\\runs\\x.pt``) need none; without one the
    weight is 1. ``what`` names the setting in error messages.
    """
    out: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in str(text).split(","))):
        name, colon, weight = item.rpartition(":")
        try:
            name, value = (name, float(weight)) if colon else (item, 1.0)
        except ValueError:
            name, value = item, 1.0  # no numeric weight: the whole item is the agent spec
        name = name.strip()
        if not name:
            raise ValueError(f"{what}: item {item!r} names no agent; expected SPEC or SPEC:WEIGHT")
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{what}: item {item!r} has weight {weight!r}; allowed: a finite number >= 0")
        if name in out:
            raise ValueError(f"{what}: {name!r} is listed twice")
        out[name] = value
    if out and not sum(out.values()) > 0:
        raise ValueError(f"{what}: the weights of {text!r} sum to 0")
    return out
