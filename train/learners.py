"""What the benchmark's learners share: the task's training opponents, the stopping rule,
policy files, and the record a training run hands back.

Every baseline (``train/ppo.py``, ``train/dmc.py``, ``train/nfsp.py``, ``train/sb3_baseline.py``)
trains through a ``thirtyone_env.tasks.Task`` only: its rules, players, what it may train
against and its decision budget. Each one's final policy is a ``PolicyNet`` written as a policy
checkpoint, so ``policy:PATH`` plays it anywhere (evaluation, exploitability, ``thirtyone eval``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from agents.policy import CHECKPOINT_FORMAT, PolicyNet
from thirtyone_env.rules import Rules
from thirtyone_env.tasks import Task

Callback = Callable[[int, float, Any], "bool | None"]
"""``callback(decisions, elapsed_seconds, agent)`` after each update; True stops the run (the benchmark's
learning curve and its wall-clock cap). ``agent`` plays the current policy greedily (``act_batch``)."""


def task_opponents(task: Task) -> dict[str, Any]:
    """The opponent-pool settings (``train.ppo.Args`` names) that a task allows: its fixed opponents in
    every match when it names some, else self-play only (present policy, and past snapshots for PPO)."""
    if task.train_against:
        return {"self_play": 0.0, "rule_based": ",".join(task.train_against), "rule_based_share": 1.0}
    return {"self_play": 0.8, "rule_based": "", "rule_based_share": 0.0}


@dataclass
class Stop:
    """When a learner stops: at ``decisions``, or when ``seconds`` of wall clock (0 = no cap) have passed."""

    decisions: int
    seconds: float = 0.0
    start: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def done(self, decisions: int) -> bool:
        return decisions >= self.decisions or (self.seconds > 0 and self.elapsed() >= self.seconds)


def policy_payload(net: PolicyNet, rules: Rules, num_players: int, **extra: Any) -> dict[str, Any]:
    """A policy checkpoint dict: the keys ``agents.policy.load_checkpoint`` reads, then ``extra``."""
    return {"format": CHECKPOINT_FORMAT, "rules": rules.to_dict(), "num_players": num_players,
            "hidden": net.hidden, "advice": bool(net.advice), "model": net.state_dict(), **extra}


def save_atomic(payload: dict[str, Any], path: Path) -> None:
    """``torch.save`` to a temporary file, then a rename: a killed run never leaves half a checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def load_state(path: Path) -> dict[str, Any] | None:
    """A learner's checkpoint written by ``save_atomic``, or None when there is none (a fresh run)."""
    if not path.is_file():
        return None
    return torch.load(path, map_location="cpu", weights_only=True)


@dataclass
class Trained:
    """What a benchmark training run hands back to the runner."""

    checkpoint: Path  # a policy checkpoint (``policy:PATH`` plays it)
    decisions: int  # decisions played at the training tables, every seat's
    seconds: float  # training wall clock (learning-curve evaluations included; the runner subtracts them)
    config: dict[str, Any]  # the hyper-parameters, for the results JSON
    prior: str = ""  # domain knowledge the learner starts from ("" = none: from scratch)
