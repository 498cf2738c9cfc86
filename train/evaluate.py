"""Ratings and plots over the one tournament (``thirtyone_env.evaluation.tournament``).

The tournament itself (seats rotated, paired seeds, one win definition, Wilson intervals)
lives in the core so that the CLI, training, the benchmark and the examples share it; this
module adds what only people need: OpenSkill ratings and PNG plots.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from thirtyone_env.evaluation import TournamentResult


def add_ratings(result: TournamentResult) -> TournamentResult:
    """OpenSkill (Plackett-Luce) ratings from the tournament's matches, as ``mu - 3 sigma``.

    Matches are rated in order; seats of the same agent are separate teams of one, and the
    agent's rating after a match is the mean over its seats.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=r.name) for r in result.results]
    for k in range(result.matches):
        plan = result.plan[k]
        present = np.unique(plan)
        if len(present) < 2:
            continue
        order = -result.match_rewards[k]
        ranks = [float(np.sum(order < order[s])) + 1 for s in range(result.num_players)]
        teams = model.rate([[ratings[i]] for i in plan], ranks=ranks)
        for i in present:
            seat_ids = np.flatnonzero(plan == i)
            ratings[i].mu = float(np.mean([teams[s][0].mu for s in seat_ids]))
            ratings[i].sigma = float(np.mean([teams[s][0].sigma for s in seat_ids]))
    for res, rating in zip(result.results, ratings, strict=True):
        res.rating = rating.mu - 3 * rating.sigma
    return result


def plot_ratings(tournament: TournamentResult, path: str | Path) -> Path:
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
    ax2.bar(names, [r.rating or 0.0 for r in res], color="tab:orange")
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
