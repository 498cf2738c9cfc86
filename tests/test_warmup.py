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
