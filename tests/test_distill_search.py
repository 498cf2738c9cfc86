"""``scripts/distill_search.py``: the soft targets, and a tiny collect-then-fit that writes a playable policy."""

from __future__ import annotations

import pathlib
import runpy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.policy import PolicyAgent, load_checkpoint  # noqa: E402
from thirtyone_env.engine import Tables  # noqa: E402

SCRIPT = pathlib.Path(__file__).parents[1] / "scripts" / "distill_search.py"


def test_targets_raise_moves_the_search_values_above_the_policy_s_and_keep_unsearched_ones():
    targets = runpy.run_path(str(SCRIPT))["targets"]
    logits = torch.tensor([[2.0, 0.0, 0.0, -1e9]])
    q = torch.tensor([[0.50, 0.52, 0.40, float("nan")]])  # move 3 was not searched
    base = torch.tensor([0])
    sharp, soft = targets(logits, q, base, 0.001), targets(logits, q, base, 1.0)
    assert sharp.argmax().item() == 1, "a small tau follows the search's best move"
    assert soft.argmax().item() == 0, "a large tau stays near the policy"
    assert torch.allclose(soft, (logits + (q - 0.5).nan_to_num(0.0)).softmax(-1))
    assert sharp[0, 3].item() == 0.0 and sharp[0, 2] < soft[0, 2]


def test_collect_then_fit_writes_a_policy_that_plays(tmp_path, monkeypatch):
    data, out = tmp_path / "d.npz", tmp_path / "p.safetensors"
    for argv in (["collect", "--decisions", "40", "--samples", "2", "--seed", "3", "--out", str(data)],
                 ["fit", str(data), "--tau", "0.01", "--epochs", "1", "--out", str(out)]):
        monkeypatch.setattr("sys.argv", ["distill_search.py", *argv])
        runpy.run_path(str(SCRIPT), run_name="__main__")
    saved = np.load(data)
    assert saved["obs"].shape[0] == 40 and np.all(saved["mask"].sum(1) > 1), "decisions with a choice only"
    q_base = saved["q"][np.arange(40), saved["base"]]
    assert np.all(np.isfinite(q_base)) and np.all((q_base >= 0) & (q_base <= 1)), "the policy's move is always valued"
    policy = PolicyAgent.load(out)
    trained = load_checkpoint(out)["trained"]
    assert trained["decisions"] > 0 and "scripts/distill_search.py: 40 searched decisions" in trained["then"]
    t = Tables(16, 2, "scat", seed=1)
    obs, mask, _ = t.reset()
    actions = policy.act_batch(obs, mask)
    assert np.all(mask[np.arange(16), actions])
