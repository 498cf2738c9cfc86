"""Tournaments between any agents: seats rotated, fixed seeds, confidence intervals, ratings.

Many matches run at once on ``VectorThirtyOne``; each table plays the lineups it
is handed in order, so a tournament is the same for the same seed and agents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agents.base import play_matches
from thirtyone_env.rules import Rules

AGENT_KINDS = ("random", "greedy", "heuristic", "policy:PATH", "pretrained[:PRESET_NP]")


def make_agent(spec: str, rules: Rules, num_players: int, seed: int = 0):
    """An agent from its command-line name (see ``AGENT_KINDS``)."""
    kind, _, arg = spec.partition(":")
    if kind == "random":
        from agents.random_agent import RandomAgent

        return RandomAgent(rules, num_players, seed=seed)
    if kind == "greedy":
        from agents.greedy import GreedyAgent

        return GreedyAgent(rules, num_players)
    if kind == "heuristic":
        from agents.heuristic import HeuristicAgent

        return HeuristicAgent(rules, num_players)
    from agents.policy import PolicyAgent

    if kind == "policy" and arg:
        return PolicyAgent.load(arg, rules=rules, num_players=num_players)
    if kind == "pretrained":
        preset, n = rules.name, num_players
        if arg:
            name, _, players = arg.rpartition("_")
            if not name or not players.rstrip("p").isdigit():
                raise ValueError(f"pretrained:{arg} is invalid; expected pretrained:PRESET_NP, e.g. pretrained:scat_2p")
            preset, n = name, int(players.rstrip("p"))
        agent = PolicyAgent.pretrained(preset, n)
        if agent.rules != rules or agent.num_players != num_players:
            raise ValueError(f"pretrained policy {preset}_{n}p does not fit {rules.name} with {num_players} players")
        return agent
    raise ValueError(f"unknown agent {spec!r}; allowed: {', '.join(AGENT_KINDS)}")


def agent_label(agent, spec: str | None = None) -> str:
    return spec or getattr(agent, "name", type(agent).__name__)


def lineups(num_agents: int, num_players: int, num_matches: int, mode: str) -> np.ndarray:
    """Agent index per (match, seat).

    ``rotate``: seat s of match k gets agent (k + s) mod m, so every agent visits every seat.
    ``one-vs-rest``: agent 0 sits at seat k mod n; the other seats cycle through the others.
    """
    k = np.arange(num_matches)[:, None]
    s = np.arange(num_players)[None, :]
    if mode == "rotate":
        return (k + s) % num_agents
    if mode == "one-vs-rest":
        if num_agents < 2:
            raise ValueError("one-vs-rest needs at least two agents")
        focus = k % num_players
        rel = (s - focus) % num_players  # 0 = the focus seat
        others = 1 + ((k + rel - 1) % (num_agents - 1))
        return np.where(rel == 0, 0, others)
    raise ValueError(f"mode={mode!r} is invalid; allowed: ['rotate', 'one-vs-rest']")


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class AgentResult:
    name: str
    matches: int = 0
    wins: int = 0
    seats: int = 0
    reward: float = 0.0
    rating_mu: float = 25.0
    rating_sigma: float = 25.0 / 3

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.matches)

    @property
    def mean_reward(self) -> float:
        return self.reward / self.seats if self.seats else 0.0

    @property
    def rating(self) -> float:
        """Conservative rating (mu - 3 sigma), as OpenSkill leaderboards show."""
        return self.rating_mu - 3 * self.rating_sigma


@dataclass
class Tournament:
    rules: Rules
    num_players: int
    results: list[AgentResult]
    match_rewards: np.ndarray = field(repr=False)  # (matches, seats)
    match_lineups: np.ndarray = field(repr=False)  # (matches, seats) agent index

    def table(self) -> str:
        head = (f"{self.rules.name}, {self.num_players} players, {len(self.match_rewards)} matches\n"
                f"{'agent':<34} {'matches':>7} {'win rate':>8} {'95% CI':>15} {'reward/seat':>11} {'rating':>7}")
        rows = [head, "-" * len(head.splitlines()[1])]
        for r in self.results:
            lo, hi = r.ci
            rows.append(f"{r.name[:34]:<34} {r.matches:>7} {r.win_rate:>8.3f} {f'[{lo:.3f}, {hi:.3f}]':>15} "
                        f"{r.mean_reward:>+11.3f} {r.rating:>7.2f}")
        return "\n".join(rows)


def play_tournament(
    agent_list: list, rules: str | Rules, num_players: int, num_matches: int, seed: int = 0,
    mode: str | None = None, names: list[str] | None = None, num_tables: int = 256,
) -> Tournament:
    """Play ``num_matches`` matches between ``agent_list`` with seats rotated (see ``lineups``)."""
    rules = Rules.resolve(rules)
    if num_matches < 1:
        raise ValueError(f"num_matches={num_matches} is invalid; allowed: >= 1")
    m = len(agent_list)
    if mode is None:
        mode = "one-vs-rest" if m == 2 and num_players > 2 else "rotate"
    plan = lineups(m, num_players, num_matches, mode)
    rewards_out = play_matches(agent_list, plan, rules, seed, num_tables)
    return _score(agent_list, names, rules, num_players, rewards_out, plan)


def _score(agent_list, names, rules, num_players, rewards, plan) -> Tournament:
    from openskill.models import PlackettLuce

    labels = names or [agent_label(a) for a in agent_list]
    results = [AgentResult(label) for label in labels]
    model = PlackettLuce()
    ratings = [model.rating(name=label) for label in labels]
    for k in range(len(rewards)):
        present = np.unique(plan[k])
        for i in present:
            seats = plan[k] == i
            res = results[i]
            res.matches += 1
            res.seats += int(seats.sum())
            res.reward += float(rewards[k, seats].sum())
            res.wins += bool((rewards[k, seats] > 0).any())
        if len(present) > 1:
            order = -rewards[k]
            ranks = [float(np.sum(order < order[s])) + 1 for s in range(num_players)]
            teams = model.rate([[ratings[i]] for i in plan[k]], ranks=ranks)
            for i in present:
                seat_ids = np.flatnonzero(plan[k] == i)
                ratings[i].mu = float(np.mean([teams[s][0].mu for s in seat_ids]))
                ratings[i].sigma = float(np.mean([teams[s][0].sigma for s in seat_ids]))
    for res, rating in zip(results, ratings, strict=True):
        res.rating_mu, res.rating_sigma = rating.mu, rating.sigma
    return Tournament(Rules.resolve(rules), num_players, results, rewards, plan)


def plot_ratings(tournament: Tournament, path: str | Path) -> Path:
    """Bar chart of win rates (with 95% CI) and ratings, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = tournament.results
    names = [r.name for r in res]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
    rates = np.array([r.win_rate for r in res])
    ci = np.array([r.ci for r in res]).T
    errors = np.clip([rates - ci[0], ci[1] - rates], 0, None)  # rounding can put a bound a hair inside
    ax1.bar(names, rates, yerr=errors, capsize=4, color="tab:blue")
    ax1.axhline(1 / tournament.num_players, color="grey", ls="--", lw=1, label="fair share")
    ax1.set_ylabel("match win rate")
    ax1.legend()
    ax2.bar(names, [r.rating for r in res], color="tab:orange")
    ax2.set_ylabel("OpenSkill rating (mu - 3 sigma)")
    for ax in (ax1, ax2):
        ax.tick_params(axis="x", rotation=20, labelsize=8)
    fig.suptitle(f"{tournament.rules.name}, {tournament.num_players} players, {len(tournament.match_rewards)} matches")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_learning_curve(csv_path: str | Path, path: str | Path) -> Path:
    """Win rate against each evaluation opponent over training decisions, from the run's CSV."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path, newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    keys = [k for k in (rows[0] if rows else {}) if k.startswith("eval/win_rate_")]
    for key in keys:
        pts = [(float(r["decisions"]), float(r[key])) for r in rows if r.get(key) not in (None, "")]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", label=key.removeprefix("eval/win_rate_"))
    ax.set_xlabel("training decisions")
    ax.set_ylabel("match win rate")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
