"""The benchmark: task registry and versions, paired seeds, the aggregate statistics on data with a
known answer, the results schema, the report, and a smoke run of every baseline at a tiny budget."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("rliable")

from agents import make  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402
from thirtyone_env.tasks import (  # noqa: E402
    TASKS,
    Evaluation,
    OpponentResult,
    Task,
    get_task,
    split_name,
    task_names,
)
from train import benchmark  # noqa: E402


# -- tasks -----------------------------------------------------------------------------------------------
def test_registry_names_versions_and_coverage():
    assert "scat-2p-vs-heuristic-v0" in task_names()
    headline = get_task("scat-2p-vs-heuristic-v0")
    assert headline.matches >= 4000 and headline.train_against == ("heuristic",)
    assert get_task("scat-2p-vs-heuristic") is get_task("scat-2p-vs-heuristic-v1")  # no version: the latest
    assert get_task("scat-2p-selfplay-v0").self_play and get_task("scat-4p-selfplay-v0").num_players == 4
    assert {t.preset for t in TASKS.values()} == set(Rules.preset_names())  # every preset has a task
    assert all(t.name == name and t.decisions > 0 for name, t in TASKS.items())
    assert headline.to_dict()["name"] == "scat-2p-vs-heuristic-v0"
    assert headline.curve_at()[-1] == headline.decisions and len(headline.curve_at()) == headline.curve_points


def test_v1_tasks_have_minutes_scale_wall_clock_budgets_and_keep_v0_registered():
    for v0 in (t for t in TASKS.values() if t.version == 0):
        v1 = get_task(f"{v0.base}-v1")
        assert v0.minutes == 0 and v1.minutes >= 1 and v1.decisions > 10 * v0.decisions
        assert (v1.preset, v1.num_players, v1.train_against, v1.score_opponent, v1.seed) == (
            v0.preset, v0.num_players, v0.train_against, v0.score_opponent, v0.seed)
        assert v1.reference_minutes == v1.minutes  # the wall clock is the budget that binds our PPO
    assert get_task("scat-2p-vs-heuristic-v1").minutes == 2 and get_task("scat-2p-vs-heuristic-v1").matches >= 4000
    with pytest.raises(ValueError, match="minutes must be >= 0"):
        Task("x", 0, "scat", 2, (), 10, 10, "d", minutes=-1)


def test_registry_errors_name_what_was_wrong():
    with pytest.raises(ValueError, match="unknown task 'chess-v0'; tasks: .*scat-2p-selfplay-v0"):
        get_task("chess-v0")
    with pytest.raises(ValueError, match="task 'scat-2p-selfplay' has no version 7; versions: v0, v1"):
        get_task("scat-2p-selfplay-v7")
    with pytest.raises(ValueError, match="score_opponent 'random' is not one of eval_opponents"):
        Task("x", 0, "scat", 2, (), 10, 10, "d", eval_opponents=("heuristic",), score_opponent="random")
    with pytest.raises(ValueError, match="players"):
        Task("x", 0, "scat", 11, (), 10, 10, "d")


def test_split_name_reads_base_and_version_of_every_task():
    assert split_name("scat-2p-vs-heuristic-v12") == ("scat-2p-vs-heuristic", 12)
    for name, task in TASKS.items():
        assert split_name(name) == (task.base, task.version)
    with pytest.raises(ValueError, match="not a versioned task name"):
        split_name("scat-2p-vs-heuristic")


def small(task: Task, matches: int = 40) -> Task:
    return dataclasses.replace(task, matches=matches, curve_matches=matches)


@pytest.mark.parametrize("name", ["scat-2p-vs-heuristic-v0", "italian-4p-selfplay-v0"])
def test_paired_seeds_same_agent_same_numbers(name):
    task = small(get_task(name))
    first = task.evaluate(make("greedy", task.rules, task.num_players))
    again = task.evaluate(make("greedy", task.rules, task.num_players))
    assert first.to_dict() == again.to_dict()
    other_seed = task.evaluate(make("greedy", task.rules, task.num_players), seed=task.seed + 5)
    assert [r.opponent for r in first.rows] == list(task.eval_opponents)
    assert first.to_dict() != other_seed.to_dict()  # the seed, not luck, fixes the decks
    for row in first.rows:
        assert row.ci_low <= row.win_rate <= row.ci_high and row.matches == 40


def test_evaluate_refuses_an_object_without_act_batch():
    with pytest.raises(ValueError, match="needs act_batch"):
        small(get_task("scat-2p-selfplay-v0")).evaluate(object())


# -- aggregate statistics (rliable) on data with a known answer ---------------------------------------------
def test_iqm_and_its_interval_on_known_data():
    scores = {"a": np.arange(1.0, 9.0)[:, None], "flat": np.full((4, 2), 0.25)}
    out = benchmark.iqm_intervals(scores, reps=500)
    x, lo, hi = out["a"]
    assert x == pytest.approx(4.5)  # the mean of the middle half of 1..8: (3 + 4 + 5 + 6) / 4
    assert 1.0 <= lo < 4.5 < hi <= 8.0
    assert out["flat"] == pytest.approx((0.25, 0.25, 0.25))  # no spread, no interval


def test_bootstrap_intervals_are_reproducible_and_leave_numpy_global_generator_alone():
    rng = np.random.default_rng(0)
    scores = {"a": rng.random((3, 2)), "b": rng.random((3, 2))}
    first = benchmark.iqm_intervals(scores, reps=300)
    np.random.seed(123)
    expected_draw = np.random.random()
    np.random.seed(123)
    again = benchmark.iqm_intervals(scores, reps=300)  # after other draws from the global generator
    assert again == first
    assert np.random.random() == expected_draw  # the caller's global stream is where it was
    assert benchmark.iqm_intervals(scores, reps=300, seed=1) != first  # the seed, not luck, fixes them


def test_probability_of_improvement_on_known_data():
    better, worse = np.array([[0.7], [0.8], [0.9]]), np.array([[0.1], [0.2], [0.3]])
    assert benchmark.improvement_probability(better, worse, reps=300) == pytest.approx((1.0, 1.0, 1.0))
    assert benchmark.improvement_probability(worse, better, reps=300) == pytest.approx((0.0, 0.0, 0.0))
    assert benchmark.improvement_probability(better, better, reps=300)[0] == pytest.approx(0.5)
    mixed = benchmark.improvement_probability(np.array([[1.0], [3.0]]), np.array([[2.0], [4.0]]), reps=300)
    assert mixed[0] == pytest.approx(0.25)  # 1 of the 4 pairs has x > y


def test_curve_bands_follow_the_runs():
    curves = np.array([[0.1, 0.5, 0.9], [0.1, 0.5, 0.9], [0.1, 0.5, 0.9]])
    mid, lo, hi = benchmark.curve_intervals(curves, reps=200)
    assert mid == pytest.approx([0.1, 0.5, 0.9]) and lo == pytest.approx(mid) and hi == pytest.approx(mid)


# -- results files and the report -----------------------------------------------------------------------------
def fake_result(task: Task, algo: str, seed: int, score: float) -> dict:
    ev = Evaluation(task.name, task.seed, [
        OpponentResult(o, 100, score * 100, score, max(score - 0.1, 0), min(score + 0.1, 1), 0.0)
        for o in task.eval_opponents])
    return {"schema": benchmark.SCHEMA, "task": task.to_dict(), "entry": algo, "kind": "learned", "algo": algo,
            "seed": seed, "agent": f"policy:runs/{algo}-s{seed}/policy.safetensors", "prior_knowledge": "",
            "config": {}, "budget": {"decisions": task.decisions, "decisions_used": task.decisions,
                                     "minutes_cap": None, "train_seconds": 60.0, "stopped_by": "decisions",
                                     "decisions_per_s": 1000, "smoke": False},
            "curve": [{"decisions": d, "seconds": 10.0 * k, "win_rate": score * (k + 1) / 8, "ci_low": 0.0,
                       "ci_high": 1.0, "matches": 100} for k, d in enumerate(task.curve_at())],
            "evaluation": ev.to_dict(), "score": score, "provenance": benchmark.provenance()}


def test_results_schema_round_trip_and_errors(tmp_path):
    task = get_task("scat-2p-selfplay-v0")
    data = fake_result(task, "dmc", 1, 0.4)
    path = benchmark.write_json(data, tmp_path / "r.json")
    assert benchmark.load_result(path) == json.loads(json.dumps(data))
    assert Evaluation.from_dict(benchmark.load_result(path)["evaluation"]).win_rate("heuristic") == 0.4
    del data["score"]
    benchmark.write_json(data, tmp_path / "bad.json")
    with pytest.raises(ValueError, match=r"lacks \['score'\]"):
        benchmark.load_result(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"schema": "something/9"}')
    with pytest.raises(ValueError, match="schema 'something/9' is not one of"):
        benchmark.load_result(tmp_path / "other.json")


def test_provenance_counts_code_changes_as_dirty_but_not_results_records(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    record = tmp_path / "benchmarks" / "results" / "task" / "a.json"
    record.parent.mkdir(parents=True)
    record.write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "start")
    assert benchmark.git_commit(tmp_path)["dirty"] is False
    record.write_text('{"written": "by an evaluation running beside this one"}')
    assert benchmark.git_commit(tmp_path)["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    state = benchmark.git_commit(tmp_path)
    assert state["dirty"] is True and len(state["commit"]) == 40


def test_report_builds_tables_intervals_and_plots(tmp_path):
    results = tmp_path / "results"
    for name in ("scat-2p-vs-heuristic-v0", "scat-2p-selfplay-v0"):
        task = get_task(name)
        for algo, base in (("alpha", 0.6), ("beta", 0.3)):
            for seed in (1, 2, 3):
                benchmark.write_json(fake_result(task, algo, seed, base + 0.01 * seed),
                                     results / name / f"{algo}-s{seed}.json")
    benchmark.write_json({"schema": benchmark.EXPLOIT_SCHEMA, "task": "scat-2p-selfplay-v0",
                          "target": "policy:runs/alpha-s1/policy.safetensors", "decisions": 10, "win_rate": 0.7,
                          "ci_low": 0.65, "ci_high": 0.75, "matches": 100, "provenance": {}},
                         results / "exploit" / "x.json")
    out = benchmark.report(results, tmp_path / "leaderboard.md", tmp_path / "plots", reps=200)
    text = out.read_text()
    assert "## `scat-2p-vs-heuristic-v0`" in text and "Probability of improvement" in text
    assert "| **alpha** | 3 | 0.620 [" in text  # the IQM of 0.61, 0.62, 0.63 (three runs: their mean)
    assert "0.700 [0.650, 0.750]" in text  # the exploitability column
    assert "200 resamples" in text  # the bootstrap size asked for, stated beside the intervals
    with pytest.raises(ValueError, match="bootstrap resamples must be >= 1, got 0"):
        benchmark.report(results, tmp_path / "other.md", tmp_path / "plots", reps=0)
    assert (tmp_path / "plots" / "iqm.png").is_file()
    assert (tmp_path / "plots" / "curves_scat-2p-selfplay-v0.png").is_file()


def test_curve_milestones_follow_the_wall_clock_budget_when_it_binds(tmp_path):
    task = get_task("scat-2p-vs-heuristic-v1")  # 2 minutes, 5 curve points: one every 24 s of training
    rec = benchmark.Recorder(task, tmp_path / "curve.json", minutes=task.minutes)
    assert not rec.reached(0, 1000, 23.9) and rec.reached(0, 1000, 24.0)
    assert rec.reached(4, 1000, 120.0) and not rec.reached(5, 10**9, 1e9)  # no sixth point
    assert rec.reached(0, task.curve_at()[0], 0.0)  # or the decision share, whichever first
    rec.eval_seconds = 10.0  # the curve's own evaluations are not training time
    assert not rec.reached(0, 1000, 30.0) and rec.reached(0, 1000, 34.0)
    assert not benchmark.Recorder(task, tmp_path / "c2.json").reached(0, 1000, 1e6)  # decisions only


def test_report_shows_each_tasks_latest_version_only(tmp_path):
    results = tmp_path / "results"
    for name, score in (("scat-2p-selfplay-v0", 0.2), ("scat-2p-selfplay-v1", 0.45)):
        for seed in (1, 2):
            benchmark.write_json(fake_result(get_task(name), "alpha", seed, score), results / name / f"a-s{seed}.json")
    text = benchmark.report(results, tmp_path / "leaderboard.md", tmp_path / "plots", reps=200).read_text()
    assert "## `scat-2p-selfplay-v1`" in text and "`scat-2p-selfplay-v0`" not in text
    assert "2 results of earlier versions stay in the folder" in text
    assert "2 minutes of training wall clock" in text
