"""A smoke run of every benchmark baseline at a tiny budget, through ``train.benchmark.run``: it trains,
records its learning curve, exports a policy that ``policy:PATH`` plays, evaluates and writes a results
JSON; a second call finds the result and skips the run."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("rliable")

from agents import make  # noqa: E402
from thirtyone_env.tasks import get_task  # noqa: E402
from train import benchmark  # noqa: E402

TINY = {"ppo": 40_000, "dmc": 20_000, "nfsp": 20_000, "sb3": 20_000}


@pytest.mark.parametrize("algo", list(benchmark.ALGOS))
def test_every_baseline_runs_at_a_tiny_budget(algo, tmp_path):
    name = "scat-2p-selfplay-v0" if algo in ("nfsp", "sb3") else "scat-2p-vs-heuristic-v0"
    task = get_task(name)
    path = benchmark.run(name, algo, 3, results=tmp_path / "results", runs=tmp_path / "runs", progress=False,
                         decisions=TINY[algo], matches=12)
    data = benchmark.load_result(path)
    assert data["entry"] == algo and data["budget"]["smoke"] and data["budget"]["decisions_used"] >= TINY[algo]
    assert [row["opponent"] for row in data["evaluation"]["rows"]] == list(task.eval_opponents)
    assert all(row["matches"] == 12 for row in data["evaluation"]["rows"])
    assert len(data["curve"]) == task.curve_points and data["curve"][-1]["decisions"] >= TINY[algo]
    agent = make(data["agent"], task.rules, task.num_players)  # the entry plays as policy:PATH
    assert callable(agent.act_batch)
    mtime = path.stat().st_mtime_ns
    assert benchmark.run(name, algo, 3, results=tmp_path / "results", runs=tmp_path / "runs", progress=False,
                         decisions=TINY[algo], matches=12) == path and path.stat().st_mtime_ns == mtime
