"""``scripts/counterfactual_q.py``: exact move values in the true deal, the gain network, and a tiny
collect-fit-gain-distill run that writes a playable policy."""

from __future__ import annotations

import pathlib
import runpy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.make import make  # noqa: E402
from agents.policy import PRETRAINED_DIR, PolicyAgent, load_checkpoint  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from thirtyone_env.engine import Tables  # noqa: E402
from thirtyone_env.evaluation import win_shares  # noqa: E402

SCRIPT = pathlib.Path(__file__).parents[1] / "scripts" / "counterfactual_q.py"


@pytest.fixture(scope="module")
def script():
    return runpy.run_path(str(SCRIPT))


def test_gain_net_gives_the_policy_s_move_zero_and_the_rule_keeps_it_below_the_margin(script):
    torch.manual_seed(0)
    nets = [script["GainNet"](np.ones(6), 4, hidden=8).eval() for _ in range(2)]
    obs = np.random.default_rng(0).integers(-1, 2, (50, 6)).astype(np.int8)
    logp = torch.randn(50, 4)
    base = np.random.default_rng(1).integers(0, 3, 50)
    with torch.no_grad():
        preds = torch.stack([net(torch.as_tensor(obs), logp, torch.as_tensor(base)) for net in nets])
    assert torch.all(preds[:, torch.arange(50), torch.as_tensor(base)] == 0)
    mask = np.ones((50, 4), bool)
    mask[:, 3] = False  # never chosen, however it is predicted
    improved = script["improved"]
    assert np.array_equal(improved(nets, logp, obs, mask, base, margin=1e9), base)
    free = improved(nets, logp, obs, mask, base, margin=-1e9)
    best = np.where(mask, preds.mean(0).numpy(), -np.inf).argmax(1)
    assert np.array_equal(free, best) and not np.any(free == 3)
    at_zero = improved(nets, logp, obs, mask, base, margin=0.0)
    both = preds.numpy()[:, np.arange(50), best].min(0) > 0
    assert np.array_equal(at_zero, np.where(both, best, base)), "a move is taken only where every net sees a gain"
    assert 0 < both.sum() < 50


def test_collect_fit_gain_distill(tmp_path, monkeypatch, capsys):
    data, q, out = tmp_path / "d", tmp_path / "q.pt", tmp_path / "p.safetensors"
    for argv in (["collect", "--positions", "200", "--seed", "3", "--out", str(data)],
                 ["fit", str(data), "--epochs", "1", "--hidden", "16", "--out", str(q)],
                 ["gain", str(data), "--q", str(q), str(q), "--margin", "0", "1e9"],
                 ["distill", str(data), "--q", str(q), "--margin", "0", "--epochs", "1", "--out", str(out)]):
        monkeypatch.setattr("sys.argv", ["counterfactual_q.py", *argv])
        runpy.run_path(str(SCRIPT), run_name="__main__")
    saved = np.load(data / "0000.npz")
    rows = np.arange(len(saved["base"]))
    assert len(rows) == 200 and np.all(saved["mask"].sum(1) > 1), "positions with a choice only"
    assert np.all(saved["gain"][rows, saved["base"]] == 0), "a move's gain is over the policy's move"
    assert np.array_equal(np.isfinite(saved["gain"]), saved["mask"]), "every legal move valued, no other"
    assert np.all(np.abs(saved["gain"][saved["mask"]]) <= 1)
    assert (saved["gain"][saved["mask"]] != 0).any(), "some moves change the deal's outcome"
    assert "margin 1000000000.0: departs at 0.0000, gain per decision +0.00000" in capsys.readouterr().out
    policy = PolicyAgent.load(out)
    trained = load_checkpoint(out)["trained"]
    shipped = load_checkpoint(PRETRAINED_DIR / "scat_2p.safetensors")["trained"]
    assert trained["decisions"] == shipped["decisions"], "an improved policy keeps the decisions that trained it"
    step = "scripts/counterfactual_q.py: 200 positions, 1 gain net, margin 0.0, distilled 1 epochs"
    assert trained["then"] == f"{shipped['then']}; {step}", "and says what was done to it since"
    t = Tables(16, 2, "scat", seed=1)
    obs, mask, _ = t.reset()
    assert np.all(mask[np.arange(16), policy.act_batch(obs, mask)])

    other = tmp_path / "other"  # the same positions, as if another policy had chosen some base moves
    other.mkdir()
    chunk = dict(saved)
    chunk["base"] = np.where(rows < 3, np.argmax(saved["mask"] & (np.arange(56) != saved["base"][:, None]), 1),
                             saved["base"]).astype(np.int8)
    np.savez(other / "0000.npz", **chunk)
    monkeypatch.setattr("sys.argv", ["counterfactual_q.py", "fit", str(other), "--out", str(tmp_path / "x.pt")])
    with pytest.raises(SystemExit, match="does not play the recorded moves at 3 of 200 positions"):
        runpy.run_path(str(SCRIPT), run_name="__main__")


def test_collect_greedy_share_sets_the_opponents_mix(tmp_path, monkeypatch):
    """The default chunk is 3/4 positions against the heuristic, then 1/4 against greedy, each from its own
    seed; a share of 0 or 1 collects exactly one of those parts (same seeds, same positions)."""
    runs = {"mix": ("200", "0.25"), "heuristic": ("150", "0"), "greedy": ("50", "1")}
    for name, (positions, share) in runs.items():
        argv = ["collect", "--positions", positions, "--seed", "4", "--greedy-share", share, "--out"]
        monkeypatch.setattr("sys.argv", ["counterfactual_q.py", *argv, str(tmp_path / name)])
        runpy.run_path(str(SCRIPT), run_name="__main__")
    mix, heuristic, greedy = (np.load(tmp_path / name / "0000.npz") for name in runs)
    for key in ("obs", "mask", "base", "gain"):
        assert np.array_equal(heuristic[key], mix[key][:150], equal_nan=key == "gain")
        assert np.array_equal(greedy[key], mix[key][150:], equal_nan=key == "gain")


def test_a_move_s_gain_is_its_value_in_the_true_deal(script):
    """Replaying one recorded position by hand, with the stock and the opponent's hand it had, gives the
    same value difference the collector stored."""
    policy, opponent = PolicyAgent.pretrained("scat", 2), make("heuristic", "scat", 2, seed=5)
    obs, mask, hands, stocks = script["record"](policy, opponent, "scat", 2, 30, 5, share=1.0)
    wins = SearchAgent("scat", 2, policy=policy, budget_ms=None).wins
    values = script["true_values"](obs, mask, hands, stocks, policy, opponent, "scat", 2, wins)
    i = int(np.argmax(np.nanmax(values, 1) - np.nanmin(values, 1)))  # a position where moves differ
    for move in np.flatnonzero(mask[i]):
        t = Tables.from_observations(obs[i : i + 1], hands[i : i + 1], stocks[i : i + 1], "scat", 2, seed=0,
                                     autoreset=False, parallel=False)
        action = int(move)
        while True:
            _, _, _, rewards, done = t.step(np.array([action]))
            if done[0] or t.deal[0] != 1:
                break
            agent = policy if t.player[0] == 0 else opponent
            action = int(agent.act_batch(t.obs[:1], t.mask[:1])[0])
        expected = win_shares(rewards)[0, 0] if done[0] else wins(t.chips, t.status, seat=0)[0]
        assert values[i, move] == pytest.approx(expected)
