"""Agents that play Thirty-one through one protocol (``agents.base.Agent``).

``RandomAgent``, ``GreedyAgent``, ``HeuristicAgent`` and ``HumanAgent`` need no
torch. ``PolicyAgent`` (a trained network, ``agents.policy``) is imported only
when asked for, so ``import agents`` stays torch-free.
"""

from agents.base import Agent, BaseAgent, TournamentResult, tournament
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.human import HumanAgent
from agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "BaseAgent",
    "GreedyAgent",
    "HeuristicAgent",
    "HumanAgent",
    "PolicyAgent",
    "RandomAgent",
    "TournamentResult",
    "tournament",
]


def __getattr__(name: str):
    # torch-backed agents load on first use: ``from agents import PolicyAgent``
    if name == "PolicyAgent":
        from agents.policy import PolicyAgent

        return PolicyAgent
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
