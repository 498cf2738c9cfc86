"""``thirtyone warmup``: its groups of steps (one process each) cover every step once, and bad ``--jobs`` is refused."""

from __future__ import annotations

import pytest

from train import cli, warmup


def test_groups_run_every_step_exactly_once():
    grouped = [name for group in warmup.GROUPS for name in group]
    assert sorted(grouped) == sorted(warmup.STEPS) and len(grouped) == len(set(grouped))


def test_fewer_than_one_job_is_refused(capsys):
    with pytest.raises(ValueError, match="jobs must be >= 1, got 0"):
        warmup.warm_up(jobs=0)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["warmup", "--jobs", "0"])
    assert exit_.value.code == 2
    assert "argument --jobs: expected an integer >= 1, got '0'" in capsys.readouterr().err


def test_the_vector_env_with_one_move_opponents_is_warmed_up():
    """``make_vec`` with random, greedy or policy opponents steps through kernels the heuristic's compiled turns
    skip; a CI run once compiled one of them inside a timed training run."""
    import gymnasium

    from thirtyone_env.jit import compile_watch

    warmup.gymnasium_vector_env()
    before = compile_watch.seconds
    env = gymnasium.make_vec("ThirtyOne-v0", num_envs=64, vectorization_mode="vector_entry_point",
                             opponents="greedy", autoreset_mode="same_step")
    _, info = env.reset(seed=1)
    for _ in range(40):
        _, _, _, _, info = env.step(info["action_mask"].argmax(1))
    assert compile_watch.seconds == before
