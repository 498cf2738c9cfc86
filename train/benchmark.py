"""The benchmark runner: ``thirtyone benchmark run | evaluate | report`` (docs/benchmark.md).

- ``run --task T --algo A --seed S [--minutes M]``: trains baseline ``A`` under task ``T``'s protocol
  (its opponents, its decision budget), records a learning curve, evaluates the final policy and
  writes one results JSON (``SCHEMA``) to ``benchmarks/results/T/A-sS.json``. Resumable: a finished
  run is skipped; a killed one continues from its last checkpoint and its recorded curve.
- ``evaluate --task T --agent SPEC [--save]``: any agent under the task's evaluation (paired seeds:
  the same agent always gets the same numbers); ``--save`` writes a reference row.
- ``report``: ``docs/leaderboard.md`` and its plots from a results folder: per-task tables with the
  interquartile mean (IQM) over seeds and its stratified-bootstrap 95% interval (rliable), the
  probability of improvement between entries, exploitability, learning curves and IQM bars.

The schema of a results JSON is documented in docs/benchmark.md; ``load_result`` checks it.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.tasks import Evaluation, Task, get_task, task_names

SCHEMA = "thirtyone-benchmark-result/1"
EXPLOIT_SCHEMA = "thirtyone-exploit/1"
RESULTS_DIR = Path("benchmarks/results")
RUNS_DIR = Path("runs/benchmark")
LEADERBOARD = Path("docs/leaderboard.md")
PLOTS_DIR = Path("docs/leaderboard")
BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 0
PACKAGES = ("thirtyone-env", "numpy", "numba", "torch", "stable-baselines3", "sb3-contrib", "rliable")


# -- the baselines ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Algo:
    """A learning baseline: how to train it under a task, and what was done to tune it (honestly)."""

    name: str
    summary: str
    tuning: str
    fit: Callable[..., Any]  # (task, seed, run_dir, minutes, progress, callback) -> train.learners.Trained


def _agent_callback(callback: Callable, rules: Any, num_players: int) -> Callable:
    """PPO hands its network to the callback; the benchmark wants an agent that plays it greedily."""
    from agents.policy import PolicyAgent

    return lambda decisions, elapsed, net: callback(decisions, elapsed,
                                                    PolicyAgent(net, rules, num_players, name="ppo"))


def _trained(last: Path, config: dict[str, Any], prior: str = "") -> Any:
    import torch

    from train.learners import Trained

    ckpt = torch.load(last, map_location="cpu", weights_only=True)
    return Trained(last, int(ckpt["decisions"]), float(ckpt["elapsed"]), config, prior)


def fit_ppo(task: Task, seed: int, run_dir: Path, minutes: float, progress: bool, callback: Callable) -> Any:
    from train import ppo
    from train.learners import task_opponents

    args = ppo.Args(preset=task.preset, num_players=task.num_players, seed=seed, total_decisions=task.decisions,
                    out=str(run_dir), threads=1, progress=progress, eval_every_minutes=1e9, eval_matches=200,
                    checkpoint_minutes=1.0, **task_opponents(task))
    args.bc_decisions = min(args.bc_decisions, task.decisions)  # a warm start no longer than the budget (smoke runs)
    last = ppo.train(args, resume=(run_dir / "last.pt").is_file(),
                     callback=_agent_callback(callback, task.rules, task.num_players))
    prior = (f"HeuristicAgent: residual policy over its moves, value warm start on {args.bc_decisions:,} "
             f"decisions of its self-play (not counted in the decisions; inside a wall-clock budget)")
    return _trained(last, asdict(args), prior)


def fit_dmc(task: Task, seed: int, run_dir: Path, minutes: float, progress: bool, callback: Callable) -> Any:
    from train import dmc
    from train.learners import task_opponents

    pool = task_opponents(task) if task.train_against else {"self_play": 1.0}
    args = dmc.Args(preset=task.preset, num_players=task.num_players, seed=seed, total_decisions=task.decisions,
                    minutes=minutes, out=str(run_dir), progress=progress, checkpoint_minutes=1.0, **pool)
    last = dmc.train(args, resume=(run_dir / "last.pt").is_file(), callback=callback)
    return _trained(last, asdict(args))


def fit_nfsp(task: Task, seed: int, run_dir: Path, minutes: float, progress: bool, callback: Callable) -> Any:
    from train import nfsp
    from train.learners import task_opponents

    pool = task_opponents(task) if task.train_against else {"self_play": 1.0}
    args = nfsp.Args(preset=task.preset, num_players=task.num_players, seed=seed, total_decisions=task.decisions,
                     minutes=minutes, out=str(run_dir), progress=progress, checkpoint_minutes=1.0, **pool)
    last = nfsp.train(args, resume=(run_dir / "last.pt").is_file(), callback=callback)
    return _trained(last, asdict(args))


def fit_sb3(task: Task, seed: int, run_dir: Path, minutes: float, progress: bool, callback: Callable) -> Any:
    from train import sb3_baseline

    args = sb3_baseline.Args(preset=task.preset, num_players=task.num_players, seed=seed,
                             total_decisions=task.decisions, minutes=minutes, out=str(run_dir),
                             opponents=",".join(task.train_against), progress=progress, checkpoint_minutes=1.0)
    last = sb3_baseline.train(args, resume=(run_dir / "model.zip").is_file(), callback=callback)
    return _trained(last, asdict(args))


ALGOS: dict[str, Algo] = {
    "ppo": Algo("ppo", "our masked PPO (train/ppo.py), residual over HeuristicAgent, opponent pool set by the task",
                "none for the benchmark: train/ppo.py's defaults, tuned earlier for 10-15 minute runs "
                "(docs/results.md); only threads=1 and no mid-run evaluation", fit_ppo),
    "dmc": Algo("dmc", "Deep Monte-Carlo as in DouZero (train/dmc.py): Q(s, a) on Monte-Carlo returns, "
                "epsilon-greedy, from scratch",
                "one smoke run per setting to check that it learns; the defaults (lr 5e-4, epsilon 0.05, "
                "batch 2048, 4 updates per 8,192 decisions) were picked once and not searched", fit_dmc),
    "nfsp": Algo("nfsp", "NFSP (train/nfsp.py): a DMC best response and an average policy imitating it, "
                 "eta 0.1, from scratch",
                 "none beyond DMC's: NFSP's published eta 0.1 and reservoir sampling, DMC's settings for "
                 "the best response", fit_nfsp),
    "sb3": Algo("sb3", "Stable-Baselines3 MaskablePPO on ThirtyOneVecEnv (train/sb3_baseline.py), from scratch",
                "SB3's defaults except our network size (2 x 128 ReLU), 64 tables x 128 steps, minibatch 1024 "
                "and 4 epochs (chosen for speed, not searched)", fit_sb3),
}


# -- provenance --------------------------------------------------------------------------------------------
def git_commit(root: Path | None = None) -> dict[str, Any]:
    """The checkout's commit and whether tracked files differ from it (None outside a git checkout).

    Results records under ``benchmarks/results`` are outputs, not code: an evaluation that writes its
    record while another runs must not mark the other's record dirty.
    """
    root = root or Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                f":(exclude){RESULTS_DIR.as_posix()}"],
                               cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    if head.returncode:
        return {"commit": None, "dirty": None}
    return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict[str, Any]:
    """What the wall-clock figures were measured on (the load average says how shared the cores were)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "load_average_1m": round(load[0], 2) if load else None}


def provenance() -> dict[str, Any]:
    return {"git": git_commit(), "packages": package_versions(), "machine": machine(),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


# -- results files ----------------------------------------------------------------------------------------
def label(spec: str) -> str:
    """A file-name-safe label of an agent spec: ``pretrained:scat_2p`` -> ``pretrained-scat_2p``."""
    return re.sub(r"[^\w.-]+", "-", spec).strip("-")


def result_path(results: Path, task: Task, algo: str, seed: int) -> Path:
    return results / task.name / f"{algo}-s{seed}.json"


def write_json(data: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)
    return path


REQUIRED = {
    SCHEMA: ("task", "entry", "kind", "evaluation", "score", "provenance"),
    EXPLOIT_SCHEMA: ("task", "target", "decisions", "win_rate", "ci_low", "ci_high", "matches", "provenance"),
}


def load_result(path: Path) -> dict[str, Any]:
    """A results or exploit JSON, checked against its schema (a ``ValueError`` names what is wrong)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON file: {exc}") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema not in REQUIRED:
        raise ValueError(f"{path}: schema {schema!r} is not one of {sorted(REQUIRED)}")
    missing = [key for key in REQUIRED[schema] if key not in data]
    if missing:
        raise ValueError(f"{path}: {schema} result lacks {missing}")
    if schema == SCHEMA:
        Evaluation.from_dict(data["evaluation"])  # raises on a malformed evaluation
    return data


# -- the learning curve ------------------------------------------------------------------------------------
class Recorder:
    """The runner's callback: a learning-curve point each time a run passes one of its task's milestones
    (``task.curve_matches`` matches against ``task.score_opponent``, seed ``task.seed + 1``), kept in
    ``curve.json`` so a resumed run continues it; asks the learner to stop past ``minutes``.

    Wall clock excludes the curve's own evaluations: ``seconds`` is training time only.
    """

    def __init__(self, task: Task, path: Path, minutes: float = 0.0):
        self.task, self.path, self.minutes = task, path, minutes
        saved = json.loads(path.read_text()) if path.is_file() else {}
        self.points: list[dict[str, Any]] = saved.get("points", [])
        self.eval_seconds: float = saved.get("eval_seconds", 0.0)
        self.milestones = task.curve_at()

    def train_seconds(self, elapsed: float) -> float:
        return max(elapsed - self.eval_seconds, 0.0)

    def reached(self, k: int, decisions: int, elapsed: float) -> bool:
        """Milestone ``k`` (of ``curve_points``): its share of the decision budget, or, with a wall-clock
        budget, its share of the minutes, whichever comes first."""
        if k >= len(self.milestones):
            return False
        return decisions >= self.milestones[k] or self._clock_passed((k + 1) / len(self.milestones), elapsed)

    def _clock_passed(self, share: float, elapsed: float) -> bool:
        """Training has had ``share`` of its wall-clock budget (never, without one)."""
        return bool(self.minutes) and self.train_seconds(elapsed) >= share * self.minutes * 60

    def __call__(self, decisions: int, elapsed: float, agent: Any) -> bool:
        if self.reached(len(self.points), decisions, elapsed):
            self.record(decisions, elapsed, agent)
        return self._clock_passed(1.0, elapsed)

    def finish(self, decisions: int, elapsed: float, agent: Any) -> None:
        """After training: the run's end is its last point, when no callback recorded it (a learner that
        stops mid-rollout or on its own clock a moment before the recorder's, or resumes finished)."""
        if len(self.points) < len(self.milestones):
            self.record(decisions, elapsed, agent)

    def record(self, decisions: int, elapsed: float, agent: Any) -> None:
        t0 = time.perf_counter()
        row = self.task.evaluate(agent, matches=self.task.curve_matches, opponents=[self.task.score_opponent],
                                 seed=self.task.seed + 1).rows[0]
        self.points.append({"decisions": decisions, "seconds": round(self.train_seconds(elapsed), 2),
                            "win_rate": row.win_rate, "ci_low": row.ci_low, "ci_high": row.ci_high,
                            "matches": row.matches})
        while self.reached(len(self.points), decisions, elapsed):
            self.points.append(dict(self.points[-1]))  # one update crossed two milestones: the same point
        self.eval_seconds += time.perf_counter() - t0
        write_json({"points": self.points, "eval_seconds": self.eval_seconds}, self.path)


# -- benchmark run -----------------------------------------------------------------------------------------
def run(task_name: str, algo: str, seed: int, minutes: float = 0.0, results: Path = RESULTS_DIR,
        runs: Path = RUNS_DIR, progress: bool = True, decisions: int | None = None,
        matches: int | None = None) -> Path:
    """Train ``algo`` under the task, evaluate, write the results JSON; returns its path.

    ``decisions`` and ``matches`` override the task's budget and evaluation size (smoke tests only:
    such a result is marked ``"smoke": true`` and the report leaves it out).
    """
    from agents.policy import PolicyAgent, export_policy

    task = get_task(task_name)
    if algo not in ALGOS:
        raise ValueError(f"unknown algo {algo!r}; allowed: {', '.join(ALGOS)}")
    if minutes < 0:
        raise ValueError(f"--minutes must be >= 0, got {minutes}")
    out = result_path(results, task, algo, seed)
    if out.is_file():
        print(f"{out} exists: {task.name} {algo} seed {seed} is done (delete it to rerun)")
        return out
    smoke = decisions is not None or matches is not None
    budget_task = _smoke_task(task, decisions, matches) if smoke else task
    run_dir = runs / task.name / f"{algo}-s{seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    minutes = minutes or budget_task.minutes  # --minutes overrides the task's wall-clock budget
    recorder = Recorder(budget_task, run_dir / "curve.json", minutes)
    print(f"{task.name}: training {algo} seed {seed} for {budget_task.decisions:,} decisions"
          + (f" or {minutes} minutes" if minutes else "") + f" in {run_dir}")
    trained = ALGOS[algo].fit(budget_task, seed, run_dir, minutes, progress, recorder)
    policy = export_policy(trained.checkpoint, run_dir / "policy.safetensors")
    agent = PolicyAgent.load(policy)
    recorder.finish(trained.decisions, trained.seconds, agent)
    evaluation = evaluate_agent(task, agent, progress, matches)
    train_seconds = recorder.train_seconds(trained.seconds)
    data = {
        "schema": SCHEMA, "task": task.to_dict(), "entry": algo, "kind": "learned", "algo": algo, "seed": seed,
        "agent": f"policy:{policy}", "prior_knowledge": trained.prior, "config": trained.config,
        "budget": {"decisions": budget_task.decisions, "decisions_used": trained.decisions,
                   "minutes_cap": minutes or None, "train_seconds": round(train_seconds, 1),
                   "stopped_by": "decisions" if trained.decisions >= budget_task.decisions else "minutes",
                   "decisions_per_s": round(trained.decisions / max(train_seconds, 1e-9)),
                   "smoke": smoke},
        "curve": recorder.points, "evaluation": evaluation.to_dict(),
        "score": evaluation.win_rate(task.score_opponent), "provenance": provenance(),
    }
    print(evaluation.table())
    return write_json(data, out)


def _smoke_task(task: Task, decisions: int | None, matches: int | None) -> Task:
    """The task with a smaller budget and evaluation (smoke tests)."""
    import dataclasses

    for what, value in (("decisions", decisions), ("matches", matches)):
        if value is not None and value < 1:
            raise ValueError(f"{what} must be >= 1, got {value}")
    matches = matches or task.matches
    return dataclasses.replace(task, decisions=decisions or task.decisions, matches=matches,
                               curve_matches=min(task.curve_matches, matches))


def evaluate_agent(task: Task, agent: Any, progress: bool = True, matches: int | None = None) -> Evaluation:
    """The task's evaluation, one tournament per opponent, with a progress bar over the opponents."""
    from tqdm import tqdm

    rows = []
    for spec in tqdm(task.eval_opponents, disable=not progress, desc=f"evaluating ({task.name})", unit="opponent"):
        rows += task.evaluate(agent, matches=matches, opponents=[spec]).rows
    return Evaluation(task.name, task.seed, rows)


# -- benchmark evaluate -------------------------------------------------------------------------------------
def evaluate(task_name: str, spec: str, results: Path | None = None, progress: bool = True,
             matches: int | None = None) -> dict[str, Any]:
    """Evaluate any agent spec under the task's protocol; with ``results``, save it as a reference row."""
    from agents import make

    task = get_task(task_name)
    agent = make(spec, task.rules, task.num_players, seed=task.seed)
    evaluation = evaluate_agent(task, agent, progress, matches)
    data = {"schema": SCHEMA, "task": task.to_dict(), "entry": spec, "kind": "reference", "agent": spec,
            "evaluation": evaluation.to_dict(), "score": evaluation.win_rate(task.score_opponent),
            "provenance": provenance()}
    if results is not None:
        write_json(data, results / task.name / f"reference-{label(spec)}.json")
    return data


# -- aggregation (rliable) ---------------------------------------------------------------------------------
def _interval_estimates(score_dict: dict[str, Any], func: Callable, reps: int, seed: int) -> tuple[dict, dict]:
    """rliable's stratified bootstrap, seeded (arch's notice about its future random-state API silenced).

    rliable's ``StratifiedBootstrap`` draws its resamples from numpy's global generator, not from the
    ``random_state`` it is given, so that generator is seeded here (and put back afterwards): the same
    results give the same intervals, in any process and after any other use of ``np.random``."""
    from rliable import library as rly

    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module="arch")
            return rly.get_interval_estimates(score_dict, func, reps=reps, random_state=np.random.RandomState(seed))
    finally:
        np.random.set_state(saved)


def iqm_intervals(scores: dict[str, np.ndarray], reps: int = BOOTSTRAP_REPS,
                  seed: int = BOOTSTRAP_SEED) -> dict[str, tuple[float, float, float]]:
    """IQM over runs and tasks with its stratified-bootstrap 95% interval, per entry.

    ``scores[entry]`` is (runs, tasks); returns ``{entry: (iqm, low, high)}``.
    """
    from rliable import metrics

    point, interval = _interval_estimates({k: np.asarray(v, np.float64) for k, v in scores.items()},
                                          lambda x: np.array([metrics.aggregate_iqm(x)]), reps, seed)
    return {k: (float(point[k][0]), float(interval[k][0, 0]), float(interval[k][1, 0])) for k in scores}


def improvement_probability(x: np.ndarray, y: np.ndarray, reps: int = BOOTSTRAP_REPS,
                            seed: int = BOOTSTRAP_SEED) -> tuple[float, float, float]:
    """P(X > Y): the probability that a run of X scores above a run of Y on a task, averaged over tasks,
    with its stratified-bootstrap 95% interval (rliable)."""
    from rliable import metrics

    point, interval = _interval_estimates({"x,y": (np.asarray(x, np.float64), np.asarray(y, np.float64))},
                                          lambda a, b: np.array([metrics.probability_of_improvement(a, b)]),
                                          reps, seed)
    return float(point["x,y"][0]), float(interval["x,y"][0, 0]), float(interval["x,y"][1, 0])


def curve_intervals(curves: np.ndarray, reps: int = BOOTSTRAP_REPS,
                    seed: int = BOOTSTRAP_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IQM over runs at each curve point, with stratified-bootstrap 95% bands: ``curves`` is (runs, points)."""
    from rliable import metrics

    data = np.asarray(curves, np.float64)[:, None, :]  # (runs, 1 task, points)
    point, interval = _interval_estimates(
        {"c": data}, lambda x: np.array([metrics.aggregate_iqm(x[..., k]) for k in range(x.shape[-1])]), reps, seed)
    return point["c"], interval["c"][0], interval["c"][1]


# -- command line -------------------------------------------------------------------------------------------
def add_parser(sub: Any) -> None:
    """``thirtyone benchmark ...`` (added to the CLI's subcommands)."""
    bench = sub.add_parser("benchmark", help="benchmark tasks: train a baseline, evaluate an agent, build the "
                                             "leaderboard (docs/benchmark.md)")
    cmds = bench.add_subparsers(dest="benchmark_command", required=True)
    tasks = ", ".join(task_names())

    rn = cmds.add_parser("run", help="train and evaluate baselines under tasks; one results JSON per run "
                                     "(finished runs are skipped, killed ones resume)")
    rn.add_argument("--task", nargs="+", required=True, help=f"task names: {tasks}")
    rn.add_argument("--algo", nargs="+", required=True, choices=list(ALGOS))
    rn.add_argument("--seed", nargs="+", type=int, default=[1], help="seeds (default 1)")
    rn.add_argument("--minutes", type=float, default=0.0,
                    help="wall-clock cap per run, training only (default 0: the task's decision budget alone)")
    rn.add_argument("--results", type=Path, default=RESULTS_DIR, help=f"results folder (default {RESULTS_DIR})")
    rn.add_argument("--runs", type=Path, default=RUNS_DIR, help=f"checkpoints and curves (default {RUNS_DIR})")
    rn.add_argument("--no-progress", action="store_true")

    ev = cmds.add_parser("evaluate", help="evaluate an agent under a task's protocol and print its row")
    ev.add_argument("--task", required=True, help=f"task name: {tasks}")
    ev.add_argument("--agent", required=True,
                    help="random, greedy, heuristic, pretrained[:PRESET_NP], policy:PATH, search[:OPTIONS][:SPEC]")
    ev.add_argument("--save", action="store_true", help="also write it to --results as a reference row")
    ev.add_argument("--results", type=Path, default=RESULTS_DIR)
    ev.add_argument("--no-progress", action="store_true")

    rp = cmds.add_parser("report", help="build the leaderboard (Markdown and PNG plots) from a results folder")
    rp.add_argument("--results", type=Path, default=RESULTS_DIR)
    rp.add_argument("--out", type=Path, default=LEADERBOARD, help=f"Markdown file (default {LEADERBOARD})")
    rp.add_argument("--plots", type=Path, default=PLOTS_DIR, help=f"PNG folder (default {PLOTS_DIR})")
    rp.add_argument("--bootstrap-reps", type=int, default=BOOTSTRAP_REPS,
                    help=f"stratified-bootstrap resamples per interval (default {BOOTSTRAP_REPS})")


def command(ns: Any) -> int:
    """Run ``thirtyone benchmark ...``."""
    if ns.benchmark_command == "run":
        for name in ns.task:
            get_task(name)  # every name checked before hours of training
        for name in ns.task:
            for algo in ns.algo:
                for seed in ns.seed:
                    run(name, algo, seed, ns.minutes, ns.results, ns.runs, progress=not ns.no_progress)
        return 0
    if ns.benchmark_command == "evaluate":
        data = evaluate(ns.task, ns.agent, ns.results if ns.save else None, progress=not ns.no_progress)
        print(f"{ns.agent} on {data['task']['name']}: score {data['score']:.3f} "
              f"(win rate against {data['task']['score_opponent']})")
        print(Evaluation.from_dict(data["evaluation"]).table())
        return 0
    path = report(ns.results, ns.out, ns.plots, ns.bootstrap_reps)
    print(f"leaderboard: {path}")
    return 0


# -- benchmark report --------------------------------------------------------------------------------------
def collect(results: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every results JSON under ``results`` (smoke runs left out) and every exploit record."""
    if not Path(results).is_dir():
        raise FileNotFoundError(f"no results folder at {results}")
    entries, exploits = [], []
    for path in sorted(Path(results).rglob("*.json")):
        data = load_result(path)
        if data["schema"] == EXPLOIT_SCHEMA:
            exploits.append(data)
        elif not data.get("budget", {}).get("smoke"):
            entries.append(data)
    return entries, exploits


def _fmt(x: float, lo: float, hi: float) -> str:
    return f"{x:.3f} [{lo:.3f}, {hi:.3f}]"


def _ordered_tasks(entries: list[dict[str, Any]]) -> list[str]:
    from thirtyone_env.tasks import TASKS, split_name

    names = {e["task"]["name"] for e in entries}
    latest = {}  # the leaderboard shows each task's latest version with results; older ones stay in the folder
    for n in names:
        base, version = split_name(n)
        latest[base] = max(latest.get(base, -1), version)
    shown = {f"{base}-v{version}" for base, version in latest.items()}
    return [n for n in TASKS if n in shown] + sorted(shown - set(TASKS))


def _budget(task: dict[str, Any]) -> str:
    if task.get("minutes"):
        return (f"{task['minutes']:g} minute{'s' if task['minutes'] != 1 else ''} of training wall clock on the "
                "reference machine, or "
                f"{task['decisions']:,} decisions if that comes first")
    return (f"{task['decisions']:,} decisions (~{task['reference_minutes'] * 60:.0f} s of our PPO on the reference "
            "machine)")


def _exploit_for(agent: str, task: str, exploits: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = [x for x in exploits if x["task"] == task and x["target"] == agent]
    return found[-1] if found else None


def task_table(task: dict[str, Any], runs: list[dict[str, Any]], refs: list[dict[str, Any]],
               exploits: list[dict[str, Any]], reps: int = BOOTSTRAP_REPS
               ) -> tuple[list[str], dict[str, tuple[float, float, float]]]:
    """One task's Markdown table (learned entries: IQM over seeds; reference rows: one deterministic run)
    and each learned entry's score with its bootstrap interval, for the IQM plot (one run: its score alone)."""
    opponents = task["eval_opponents"]
    has_exploit = any(x["task"] == task["name"] for x in exploits)
    head = (["entry", "runs", f"score: win rate vs {task['score_opponent']} (IQM, 95% CI)"]
            + [f"vs {o}" for o in opponents] + (["exploitability (seed 1)"] if has_exploit else [])
            + ["decisions", "train minutes (median)", "prior knowledge"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by_algo: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_algo.setdefault(r["entry"], []).append(r)
    scores = {algo: np.array([r["score"] for r in sorted(rs, key=lambda r: r["seed"])])
              for algo, rs in by_algo.items()}
    multi = {a: s[:, None] for a, s in scores.items() if len(s) > 1}
    iqm = iqm_intervals(multi, reps) if multi else {}
    for algo, rs in sorted(by_algo.items(), key=lambda kv: -float(np.mean(scores[kv[0]]))):
        if algo in iqm:
            score = _fmt(*iqm[algo])
        else:
            row = Evaluation.from_dict(rs[0]["evaluation"]).row(task["score_opponent"])
            score = _fmt(row.win_rate, row.ci_low, row.ci_high) + " (one run: Wilson)"
        evals = [Evaluation.from_dict(r["evaluation"]) for r in rs]
        cols = [f"{np.mean([e.win_rate(o) for e in evals]):.3f}" for o in opponents]
        if has_exploit:
            first = min(rs, key=lambda r: r["seed"])
            x = _exploit_for(first["agent"], task["name"], exploits)
            cols.append(_fmt(x["win_rate"], x["ci_low"], x["ci_high"]) if x else "")
        decisions = np.mean([r["budget"]["decisions_used"] for r in rs])
        minutes = np.median([r["budget"]["train_seconds"] for r in rs]) / 60  # the first run pays the compilation
        capped = sum(r["budget"]["stopped_by"] == "minutes" for r in rs)
        note = f" ({capped} stopped by the wall clock)" if capped else ""
        prior = rs[0].get("prior_knowledge") or "none"
        lines.append(f"| **{algo}** | {len(rs)} | {score} | " + " | ".join(cols)
                     + f" | {decisions / 1e6:.2f}M{note} | {minutes:.1f} | {prior} |")
    for ref in sorted(refs, key=lambda r: -r["score"]):
        ev = Evaluation.from_dict(ref["evaluation"])
        row = ev.row(task["score_opponent"])
        cols = [f"{ev.win_rate(o):.3f}" for o in opponents]
        if has_exploit:
            x = _exploit_for(ref["agent"], task["name"], exploits)
            cols.append(_fmt(x["win_rate"], x["ci_low"], x["ci_high"]) if x else "")
        lines.append(f"| `{ref['entry']}` (reference) | 1 | {_fmt(row.win_rate, row.ci_low, row.ci_high)} "
                     f"(Wilson) | " + " | ".join(cols) + " | | | |")
    return lines, {a: iqm.get(a, (float(s[0]),) * 3) for a, s in scores.items()}


def aggregate_section(entries: list[dict[str, Any]], tasks: list[str], reps: int = BOOTSTRAP_REPS) -> list[str]:
    """IQM over every run of the tasks with several seeds, and the probability of improvement between entries."""
    runs = [e for e in entries if e["kind"] == "learned" and e["task"]["name"] in tasks]
    algos = sorted({e["entry"] for e in runs})
    matrices = {}
    for algo in algos:
        per_task = [sorted(e["score"] for e in runs if e["entry"] == algo and e["task"]["name"] == t) for t in tasks]
        n = min(len(s) for s in per_task)
        if n >= 2:
            matrices[algo] = np.array([s[:n] for s in per_task]).T  # (runs, tasks)
    if len(matrices) < 1:
        return []
    iqm = iqm_intervals(matrices, reps)
    lines = [f"IQM over all runs of {', '.join(f'`{t}`' for t in tasks)} (runs x tasks, stratified bootstrap "
             f"over runs within each task, {reps} resamples):", "",
             "| entry | runs x tasks | IQM win rate (95% CI) |", "|---|---|---|"]
    for algo, (x, lo, hi) in sorted(iqm.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| **{algo}** | {matrices[algo].shape[0]} x {matrices[algo].shape[1]} | {_fmt(x, lo, hi)} |")
    names = [a for a, _ in sorted(iqm.items(), key=lambda kv: -kv[1][0])]
    if len(names) > 1:
        lines += ["", "Probability of improvement P(row > column): the chance that a run of the row entry "
                  "beats a run of the column entry on the same task (Mann-Whitney), averaged over the tasks, "
                  "with its 95% stratified-bootstrap interval:", "",
                  "| P(row > column) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for a in names:
            cells = [("" if a == b else _fmt(*improvement_probability(matrices[a], matrices[b], reps))) for b in names]
            lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    return lines


def plot_task(task: dict[str, Any], runs: list[dict[str, Any]], path: Path, reps: int = BOOTSTRAP_REPS) -> Path:
    """Learning curves (IQM over seeds with 95% bands) against decisions and against training wall clock."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    by_algo: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_algo.setdefault(r["entry"], []).append(r)
    for algo, rs in sorted(by_algo.items()):
        k = min(len(r["curve"]) for r in rs)
        if k == 0:
            continue
        win = np.array([[p["win_rate"] for p in r["curve"][:k]] for r in rs])
        decisions = np.mean([[p["decisions"] for p in r["curve"][:k]] for r in rs], axis=0) / 1e6
        minutes = np.median([[p["seconds"] for p in r["curve"][:k]] for r in rs], axis=0) / 60
        if len(rs) > 1:
            mid, lo, hi = curve_intervals(win, reps)
        else:
            mid = win[0]
            lo = np.array([p["ci_low"] for p in rs[0]["curve"][:k]])
            hi = np.array([p["ci_high"] for p in rs[0]["curve"][:k]])
        for ax, x in zip(axes, (decisions, minutes), strict=True):
            (line,) = ax.plot(x, mid, marker="o", ms=3, label=f"{algo} ({len(rs)} runs)")
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
    even = 1 / task["num_players"]
    for ax, xlabel in zip(axes, ("decisions (millions)", "training wall clock (minutes)"), strict=True):
        ax.axhline(even, color="grey", ls=":", lw=1)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win rate vs {task['score_opponent']}")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{task['name']}: IQM over runs, 95% bands (one run: Wilson)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_iqm(rows: list[tuple[str, str, float, float, float]], path: Path) -> Path:
    """IQM bars with 95% intervals: one panel per task, one bar per learned entry."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(t for t, *_ in rows))
    fig, axes = plt.subplots(len(tasks), 1, figsize=(7, 1.2 + 0.45 * len(rows)), squeeze=False)
    for ax, task in zip(axes[:, 0], tasks, strict=True):
        mine = [r for r in rows if r[0] == task]
        y = np.arange(len(mine))
        ax.barh(y, [r[2] for r in mine], xerr=[[r[2] - r[3] for r in mine], [r[4] - r[2] for r in mine]],
                color="tab:blue", alpha=0.7, capsize=3)
        ax.set_yticks(y, [r[1] for r in mine], fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_title(task, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("score: win rate vs the task's score opponent (IQM, 95% CI)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def report(results: Path = RESULTS_DIR, out: Path = LEADERBOARD, plots: Path = PLOTS_DIR,
           reps: int = BOOTSTRAP_REPS) -> Path:
    """Write the leaderboard Markdown and its plots from the results folder (``reps`` bootstrap resamples per
    interval); returns the Markdown path."""
    if reps < 1:
        raise ValueError(f"bootstrap resamples must be >= 1, got {reps}")
    entries, exploits = collect(results)
    if not entries:
        raise ValueError(f"no results in {results}: run `thirtyone benchmark run` or `benchmark evaluate --save`")
    tasks = _ordered_tasks(entries)
    older = sum(e["task"]["name"] not in tasks for e in entries)
    entries = [e for e in entries if e["task"]["name"] in tasks]
    exploits = [x for x in exploits if x["task"] in tasks]
    commits = sorted({(e["provenance"]["git"] or {}).get("commit") or "unknown" for e in entries})
    rel = os.path.relpath(plots, Path(out).parent)
    lines = ["# Leaderboard", "",
             f"Generated by `thirtyone benchmark report` from {len(entries)} results and {len(exploits)} "
             f"exploitability records in `{results}` (code at {', '.join(c[:10] for c in commits[:4])}"
             f"{' ...' if len(commits) > 4 else ''}). Protocol, tasks and schema: [benchmark.md](benchmark.md).",
             "Scores are match win rates against the task's score opponent over the task's evaluation matches "
             "(paired seeds, seats rotated); learned entries show the interquartile mean (IQM) over seeds with "
             "its stratified-bootstrap 95% interval (rliable; with 3 runs the IQM is their mean), reference rows "
             "their one deterministic run with a 95% Wilson interval. Exploitability: the win rate of a PPO best "
             "response trained against the frozen entry (`thirtyone exploit`); lower is less exploitable."
             + (f" Each task's latest version is shown; {older} results of earlier versions stay in the folder."
                if older else ""), ""]
    iqm_rows = []
    for name in tasks:
        mine = [e for e in entries if e["task"]["name"] == name]
        task = mine[0]["task"]
        runs = [e for e in mine if e["kind"] == "learned"]
        refs = [e for e in mine if e["kind"] == "reference"]
        table, points = task_table(task, runs, refs, exploits, reps)
        lines += [f"## `{name}`", "", f"{task['preset']}, {task['num_players']} players; trains against: "
                  f"{', '.join(task['train_against']) or 'itself only (self-play)'}; budget: {_budget(task)}; "
                  f"{task['matches']:,} evaluation matches per opponent, seed {task['seed']}.",
                  "", *table, ""]
        if runs:
            png = plot_task(task, runs, Path(plots) / f"curves_{name}.png", reps)
            lines += [f"![learning curves {name}]({rel}/{png.name})", ""]
        iqm_rows += [(name, algo, x, lo, hi) for algo, (x, lo, hi) in points.items()]
    multi_seed = [t for t in tasks if any(
        sum(e["entry"] == a and e["task"]["name"] == t for e in entries) > 1
        for a in {e["entry"] for e in entries if e["kind"] == "learned"})]
    aggregate = aggregate_section(entries, multi_seed, reps)
    if aggregate:
        lines += ["## Aggregate over the multi-seed tasks", "", *aggregate, ""]
    if iqm_rows:
        png = plot_iqm(iqm_rows, Path(plots) / "iqm.png")
        lines += [f"![IQM bars]({rel}/{png.name})", ""]
    lines += ["## Time per baseline", "", "Training wall clock per run (curve evaluations excluded), median and "
              "range over runs: a process's first run also pays numba's compilation of the engine, which the "
              "median leaves out when there are several runs.", "",
              "| entry | runs | training minutes per run: median (min-max) | decisions/s: median |",
              "|---|---|---|---|"]
    for algo in sorted({e["entry"] for e in entries if e["kind"] == "learned"}):
        rs = [e for e in entries if e["entry"] == algo and e["kind"] == "learned"]
        minutes = np.array([r["budget"]["train_seconds"] for r in rs]) / 60
        lines.append(f"| {algo} | {len(rs)} | {np.median(minutes):.1f} ({minutes.min():.1f}-{minutes.max():.1f}) | "
                     f"{np.median([r['budget']['decisions_per_s'] for r in rs]):,.0f} |")
    loads = [e["provenance"]["machine"].get("load_average_1m") for e in entries if e["kind"] == "learned"]
    loads = [x for x in loads if x is not None]
    if loads:
        lines += ["", f"Wall clock was measured on {entries[0]['provenance']['machine']['cpu_count']} shared cores "
                  f"(1-minute load average at the runs' start: median {np.median(loads):.1f}); decision counts "
                  "do not depend on that."]
    lines += ["", "## Tuning effort", "", "| entry | what it is | tuning |", "|---|---|---|"]
    lines += [f"| {a.name} | {a.summary} | {a.tuning} |" for a in ALGOS.values()]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("\n".join(lines) + "\n")
    return Path(out)
