"""The demo's pieces at a tiny budget: phases, a learning curve from before the first update, the
before/after table on paired matches, the next commands; and the first-compile notice."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from train import cli

pytest.importorskip("torch")


def test_train_prints_phases_a_curve_and_a_before_after_table(tmp_path, capsys):
    out = tmp_path / "demo"
    code = cli.main(["train", "--preset", "scat", "--players", "2", "--total-decisions", str(3 * 32 * 16),
                     "--num-envs", "32", "--num-steps", "16", "--advice", "false", "--bc-decisions", "0",
                     "--rule-based", "greedy", "--eval-every-minutes", "0", "--eval-matches", "16",
                     "--final-matches", "8", "--threads", "1", "--no-progress", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    phases = ["setting: a plain network from scratch", "compil", "evaluating the starting policy", "training: PPO",
              "training done", "[final evaluation]"]
    positions = [printed.find(p) for p in phases]
    assert -1 not in positions and positions == sorted(positions), printed

    with open(out / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    curve = [(int(r["decisions"]), float(r["eval/win_rate_greedy"])) for r in rows if r["eval/win_rate_greedy"]]
    assert len(curve) >= 3 and curve[0][0] == 0  # the starting point, then one per update
    assert [d for d, _ in curve] == sorted(d for d, _ in curve)
    assert (out / "start.pt").is_file() and (out / "learning_curve.png").stat().st_size > 0

    table = printed[printed.index("[final evaluation]"):]
    assert "start" in table and "trained" in table and "gain (paired 95% CI)" in table
    body = [line for line in table.splitlines() if line.split()[:1] in (["random"], ["greedy"], ["heuristic"])]
    assert len(body) == 3
    for line in body:  # matches rounded up to whole deck streams of 2 seats; rates and gains are numbers
        fields = line.split()
        assert int(fields[1]) == 8 and 0 <= float(fields[2]) <= 1 and 0 <= float(fields[5]) <= 1
        assert float(fields[8]) == pytest.approx(float(fields[5]) - float(fields[2]), abs=0.002)
    assert f"--opponents policy:{out / 'last.pt'}" in printed and "thirtyone serve" in printed


def test_start_policy_is_the_policy_before_any_update(tmp_path):
    """With a zero learning rate the trained policy is the starting one: the before/after gain is exactly 0."""
    from agents.policy import load_checkpoint
    from train import ppo

    args = ppo.Args(out=str(tmp_path / "run"), num_envs=16, num_steps=8, total_decisions=2 * 16 * 8,
                    advice=False, bc_decisions=0, rule_based="greedy", learning_rate=0.0, eval_matches=4,
                    threads=1, progress=False)
    last = ppo.train(args, quiet=True)
    start, end = load_checkpoint(tmp_path / "run" / "start.pt")["model"], load_checkpoint(last)["model"]
    assert start.keys() == end.keys() and all((start[k] == end[k]).all() for k in start)


FIRST_USE = """
from thirtyone_env.engine.hands import hand_value, is_blitz
print(hand_value([0, 1, 2]), is_blitz([0, 1, 2]))  # two small kernels: compiled, or loaded from the cache
"""


def test_first_compile_notice_is_printed_once_and_not_when_cached(tmp_path):
    """A cold cache compiles (one notice, however many kernels); the next process loads from the cache."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PATH": ""}
    runs = [subprocess.run([sys.executable, "-c", FIRST_USE], capture_output=True, text=True, env=env, timeout=600)
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    assert runs[0].stderr.count("thirtyone-env: compiling") == 1, runs[0].stderr
    assert "thirtyone-env: compiling" not in runs[1].stderr, runs[1].stderr
