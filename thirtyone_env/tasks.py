"""Benchmark tasks: named, versioned training-and-evaluation protocols, as data.

A task fixes everything an entry's number depends on, so that numbers from different
algorithms (and different people) can be compared:

| field | meaning |
|---|---|
| ``preset``, ``num_players`` | the rules and the table size |
| ``train_against`` | agent specs the learner may play against while training; ``()`` = self-play only |
|  | (the learner's own current and past policies, no rule-based or shipped opponent) |
| ``decisions`` | the training budget: decisions played at the training tables, every seat's |
| ``minutes`` | the wall-clock budget on the reference 2-core machine (0: none); a run stops at whichever |
|  | of the two budgets it reaches first |
| ``reference_minutes`` | what the budget takes our PPO on the reference 2-core machine |
| ``eval_opponents`` | the evaluation: one tournament per opponent, ``matches`` matches each |
| ``score_opponent`` | the opponent whose win rate is the task's score (aggregated over seeds) |
| ``seed`` | paired seeds: match ``k`` deals from stream ``k`` of ``seed``, so every entry plays the same decks |

Seats are rotated (two players) or the entry takes one seat against the opponent in every other
seat, the seat rotating match by match (more players): ``thirtyone_env.evaluation.tournament``,
the project's one evaluation. Each win rate carries its 95% Wilson interval.

Versioning: a task's name ends in ``-vN``. Any change to a field that moves the numbers makes a
new version; old versions stay registered, so old results stay comparable with what they were
run on. ``get_task("scat-2p-vs-heuristic")`` (no version) is the latest.

The core does not import the agents layer: opponents are spec strings resolved by
``thirtyone_env.agent.make_agent``; the entry being evaluated is any object with ``act_batch``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from thirtyone_env.agent import make_agent
from thirtyone_env.evaluation import tournament
from thirtyone_env.rules import Rules

REFERENCE_MACHINE = "2 CPU cores (x86-64), torch CPU, one training process"
REFERENCE_PPO_DECISIONS_PER_S = 110_000
"""Our PPO's end-to-end speed on the reference machine (scat, 2 players; docs/results.md measures
119,000 over a 15-minute run, less its evaluations): turns a decision budget into reference minutes."""

_NAME = re.compile(r"^(?P<base>[a-z0-9-]+?)-v(?P<version>\d+)$")


@dataclass(frozen=True)
class Task:
    """One benchmark task (see the module docstring for each field's meaning)."""

    base: str
    version: int
    preset: str
    num_players: int
    train_against: tuple[str, ...]
    decisions: int
    matches: int
    description: str
    eval_opponents: tuple[str, ...] = ("random", "greedy", "heuristic")
    score_opponent: str = "heuristic"
    seed: int = 31_000
    curve_points: int = 5
    """learning-curve points: evaluations at every ``decisions / curve_points`` decisions"""
    curve_matches: int = 100
    """matches of each learning-curve point (against ``score_opponent``, seed ``seed + 1``)"""
    exploitability: bool = False
    """whether the leaderboard reports a best response's win rate against this task's entries"""
    minutes: float = 0.0
    """wall-clock budget of training on the reference machine (0: decisions only); the first to run out ends it"""

    def __post_init__(self) -> None:
        rules = Rules.preset(self.preset)
        rules.check_num_players(self.num_players)
        if self.score_opponent not in self.eval_opponents:
            raise ValueError(f"task {self.name}: score_opponent {self.score_opponent!r} is not one of "
                             f"eval_opponents {list(self.eval_opponents)}")
        for what, value in (("decisions", self.decisions), ("matches", self.matches),
                            ("curve_points", self.curve_points), ("curve_matches", self.curve_matches)):
            if value < 1:
                raise ValueError(f"task {self.name}: {what} must be >= 1, got {value}")
        if self.minutes < 0:
            raise ValueError(f"task {self.name}: minutes must be >= 0, got {self.minutes}")

    @property
    def name(self) -> str:
        """The versioned name, e.g. ``scat-2p-vs-heuristic-v0``."""
        return f"{self.base}-v{self.version}"

    @property
    def rules(self) -> Rules:
        return Rules.preset(self.preset)

    @property
    def self_play(self) -> bool:
        """True when the learner trains only against itself (present and past)."""
        return not self.train_against

    @property
    def reference_minutes(self) -> float:
        """Wall-clock of the budget for our PPO on the reference machine."""
        at_speed = self.decisions / REFERENCE_PPO_DECISIONS_PER_S / 60
        return min(at_speed, self.minutes) if self.minutes else at_speed

    def curve_at(self) -> list[int]:
        """The decision counts at which a run records a learning-curve point."""
        return [math.ceil(self.decisions * (k + 1) / self.curve_points) for k in range(self.curve_points)]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self), "reference_minutes": round(self.reference_minutes, 3)}

    def make_opponent(self, spec: str) -> Any:
        """An evaluation or training opponent from its spec (seeded by the task: the same every time)."""
        return make_agent(spec, self.rules, self.num_players, seed=self.seed)

    def evaluate(self, agent: Any, matches: int | None = None, opponents: Sequence[str] | None = None,
                 seed: int | None = None, progress: Callable[[str], None] | None = None) -> Evaluation:
        """The task's evaluation of ``agent`` (an object with ``act_batch``): one tournament per opponent.

        ``matches``/``opponents``/``seed`` override the protocol (learning-curve points use fewer
        matches); a leaderboard row uses the defaults. ``progress(opponent)`` is called before each.
        """
        if not callable(getattr(agent, "act_batch", None)):
            raise ValueError(f"task {self.name}: the agent needs act_batch(obs, mask); {agent!r} has none")
        matches = self.matches if matches is None else matches
        seed = self.seed if seed is None else seed
        rows = []
        for spec in self.eval_opponents if opponents is None else opponents:
            if progress is not None:
                progress(spec)
            result = tournament([agent, self.make_opponent(spec)], self.rules, self.num_players, matches,
                                seed=seed, names=["entry", spec])
            entry = result.results[0]
            lo, hi = entry.ci
            rows.append(OpponentResult(spec, entry.matches, entry.wins, entry.win_rate, lo, hi, entry.mean_reward))
        return Evaluation(self.name, seed, rows)


@dataclass(frozen=True)
class OpponentResult:
    """An entry's record against one evaluation opponent (win shares, 95% Wilson interval)."""

    opponent: str
    matches: int
    wins: float
    win_rate: float
    ci_low: float
    ci_high: float
    mean_reward: float


@dataclass(frozen=True)
class Evaluation:
    """A task's evaluation of one entry: a row per opponent."""

    task: str
    seed: int
    rows: list[OpponentResult] = field(default_factory=list)

    def win_rate(self, opponent: str) -> float:
        return self.row(opponent).win_rate

    def row(self, opponent: str) -> OpponentResult:
        for r in self.rows:
            if r.opponent == opponent:
                return r
        raise KeyError(f"{self.task}: no evaluation against {opponent!r}; have {[r.opponent for r in self.rows]}")

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "seed": self.seed, "rows": [asdict(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evaluation:
        return cls(data["task"], int(data["seed"]), [OpponentResult(**r) for r in data["rows"]])

    def table(self) -> str:
        lines = [f"{self.task} (seed {self.seed})", f"{'opponent':<20} {'matches':>7} {'win rate':>8} {'95% CI':>15}"]
        lines += [f"{r.opponent:<20} {r.matches:>7} {r.win_rate:>8.3f} {f'[{r.ci_low:.3f}, {r.ci_high:.3f}]':>15}"
                  for r in self.rows]
        return "\n".join(lines)


# -- the registry ------------------------------------------------------------------------------------------
_SELF_PLAY_NOTE = "no rule-based or shipped opponent while training: the learner's own present and past policies"

TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("scat-2p-vs-heuristic", 0, "scat", 2, ("heuristic",), decisions=500_000, matches=4000,
             description="the headline task: learn to beat HeuristicAgent at 2-player scat, training against it"),
        Task("scat-2p-selfplay", 0, "scat", 2, (), decisions=500_000, matches=1000, exploitability=True,
             description=f"2-player scat, {_SELF_PLAY_NOTE}; also scored by exploitability"),
        Task("scat-4p-selfplay", 0, "scat", 4, (), decisions=250_000, matches=500,
             description=f"4-player scat, {_SELF_PLAY_NOTE}; evaluated one seat against three opponents"),
        Task("swedish-3p-vs-heuristic", 0, "swedish", 3, ("heuristic",), decisions=250_000, matches=500,
             description="3-player Swedish rules (pot economy: every seat antes into a pot, three aces count "
                         "31), training against HeuristicAgent"),
        Task("swedish-chips-2p-selfplay", 0, "swedish-chips", 2, (), decisions=250_000, matches=500,
             description=f"2-player Swedish rules with a lives economy (5 lives), {_SELF_PLAY_NOTE}"),
        Task("italian-4p-selfplay", 0, "italian", 4, (), decisions=250_000, matches=500,
             description=f"4-player Trentuno (40-card Italian deck), {_SELF_PLAY_NOTE}"),
        Task("russian-2p-vs-heuristic", 0, "russian", 2, ("heuristic",), decisions=250_000, matches=500,
             description="2-player Russian rules, training against HeuristicAgent"),
        # v1: minutes-scale budgets. Training stops at 2 minutes (scat 2-player) or 1 minute (the others) of
        # wall clock unless the decision cap comes first; every other field as in v0
        Task("scat-2p-vs-heuristic", 1, "scat", 2, ("heuristic",), decisions=40_000_000, minutes=2.0,
             matches=4000, description="the headline task: learn to beat HeuristicAgent at 2-player scat, "
                                       "training against it (2 minutes)"),
        Task("scat-2p-selfplay", 1, "scat", 2, (), decisions=40_000_000, minutes=2.0, matches=2000,
             exploitability=True, description=f"2-player scat, {_SELF_PLAY_NOTE}; also scored by exploitability "
                                              "(2 minutes)"),
        Task("scat-4p-selfplay", 1, "scat", 4, (), decisions=20_000_000, minutes=1.0, matches=1000,
             description=f"4-player scat, {_SELF_PLAY_NOTE}; evaluated one seat against three opponents (1 minute)"),
        Task("swedish-3p-vs-heuristic", 1, "swedish", 3, ("heuristic",), decisions=20_000_000, minutes=1.0,
             matches=1000, description="3-player Swedish rules (pot economy: every seat antes into a pot, three "
                                       "aces count 31), training against HeuristicAgent (1 minute)"),
        Task("swedish-chips-2p-selfplay", 1, "swedish-chips", 2, (), decisions=20_000_000, minutes=1.0,
             matches=1000, description=f"2-player Swedish rules with a lives economy (5 lives), {_SELF_PLAY_NOTE} "
                                       "(1 minute)"),
        Task("italian-4p-selfplay", 1, "italian", 4, (), decisions=20_000_000, minutes=1.0, matches=1000,
             description=f"4-player Trentuno (40-card Italian deck), {_SELF_PLAY_NOTE} (1 minute)"),
        Task("russian-2p-vs-heuristic", 1, "russian", 2, ("heuristic",), decisions=20_000_000, minutes=1.0,
             matches=1000, description="2-player Russian rules, training against HeuristicAgent (1 minute)"),
    )
}


def task_names() -> list[str]:
    """Every registered task's versioned name."""
    return sorted(TASKS)


def split_name(name: str) -> tuple[str, int]:
    """A versioned task name's base and version: ``scat-2p-vs-heuristic-v1`` -> ``("scat-2p-vs-heuristic", 1)``."""
    found = _NAME.match(name)
    if found is None:
        raise ValueError(f"not a versioned task name (BASE-vN): {name!r}")
    return found.group("base"), int(found.group("version"))


def get_task(name: str) -> Task:
    """A task by its versioned name (``scat-2p-vs-heuristic-v0``); without ``-vN``, its latest version."""
    if not isinstance(name, str):
        raise ValueError(f"task name must be a string, got {name!r}")
    if name in TASKS:
        return TASKS[name]
    found = _NAME.match(name)
    base = found.group("base") if found else name
    versions = sorted(t.version for t in TASKS.values() if t.base == base)
    if not versions:
        raise ValueError(f"unknown task {name!r}; tasks: {', '.join(task_names())}")
    if found is None:
        return TASKS[f"{base}-v{versions[-1]}"]
    raise ValueError(f"task {base!r} has no version {found.group('version')}; "
                     f"versions: {', '.join(f'v{v}' for v in versions)}")
