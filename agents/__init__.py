"""Agents that play Thirty-one through one protocol (``thirtyone_env.agent.Agent``).

``RandomAgent``, ``GreedyAgent``, ``HeuristicAgent`` and ``HumanAgent`` need no
torch. ``PolicyAgent`` (a trained network, ``agents.policy``) is imported only
when asked for, so ``import agents`` stays torch-free. ``make(spec, rules, n)``
builds any of them from its text.
"""

from agents.base import BaseAgent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.human import HumanAgent
from agents.make import KINDS, make
from agents.random_agent import RandomAgent
from thirtyone_env.agent import Agent, register_maker
from thirtyone_env.evaluation import TournamentResult, tournament

register_maker(make)  # the core finds agents by name through this

__all__ = [
    "KINDS",
    "Agent",
    "BaseAgent",
    "GreedyAgent",
    "HeuristicAgent",
    "HumanAgent",
    "PolicyAgent",
    "RandomAgent",
    "TournamentResult",
    "make",
    "tournament",
]


def __getattr__(name: str):
    # torch-backed agents load on first use: ``from agents import PolicyAgent``
    if name == "PolicyAgent":
        from agents.policy import PolicyAgent

        return PolicyAgent
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
