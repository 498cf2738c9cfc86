"""A policy that also reads the learned belief (``--belief-inputs``): what the inputs hold, that a plain
policy grows them without changing its play, and that files round-trip. (The inputs are a function of the
observation alone, so they cannot read hidden cards.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.belief import BeliefNet, unseen  # noqa: E402
from agents.policy import PolicyAgent, PolicyNet, load_checkpoint, net_from_checkpoint, save_policy  # noqa: E402
from thirtyone_env import encoding as E  # noqa: E402
from thirtyone_env.engine import Tables  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402
from train import ppo  # noqa: E402


def positions(n: int, steps: int = 12, tables: int = 256, seed: int = 5) -> tuple[Tables, np.ndarray, np.ndarray]:
    """Tables after ``steps`` moves of the shipped policy, so that hands, piles and known cards vary."""
    rules = Rules.preset("scat")
    t = Tables(tables, n, rules, seed=seed)
    obs, mask, _ = t.reset()
    me = PolicyAgent.pretrained("scat", n)
    for _ in range(steps):
        obs, mask, _, _, _ = t.step(me.act_batch(obs, mask))
    return t, obs, mask


def with_belief(n: int) -> tuple[PolicyAgent, PolicyNet]:
    """The shipped policy grown by belief inputs (zero weights on them), and the shipped net."""
    rules = Rules.preset("scat")
    source = PolicyAgent.pretrained("scat", n).net
    net = PolicyNet(source.obs_dim, source.num_actions, 1.0 / source.inv_scale.numpy(), source.hidden,
                    source.advice, BeliefNet.pretrained(rules, n))
    ppo.widen_into(net, source)
    return PolicyAgent(net, rules, n), source


@pytest.mark.parametrize("n", [2, 4])
def test_belief_inputs_are_each_opponents_expected_cards(n):
    t, obs, _ = positions(n)
    agent, _ = with_belief(n)
    with torch.no_grad():
        inputs = agent.net.belief(torch.as_tensor(obs)).numpy().reshape(len(obs), n - 1, 52)
    views = E.views(obs, 52, n)
    known = views["opp_known"].reshape(len(obs), n - 1, 52) > 0
    in_play = views["opp_in_play"] > 0
    assert np.allclose(inputs.sum(2), 3 * in_play, atol=1e-4), "three cards per opponent still in the match"
    assert np.all(inputs[known] == 1), "a card an opponent is known to hold counts once"
    pool = unseen(obs, 52, n)
    outside = ~pool[:, None, :] & ~known
    assert np.all(inputs[outside] == 0), "no chance on a card the observer can place elsewhere"
    spread = inputs[~outside & ~known]
    assert spread.min() >= 0 and spread.max() <= 1 + 1e-5 and spread.std() > 0.01, "the belief's chances, not uniform"


@pytest.mark.parametrize("n", [2, 4])
def test_a_policy_grown_by_belief_inputs_plays_as_before_and_trains_them(n):
    t, obs, mask = positions(n)
    agent, source = with_belief(n)
    assert np.array_equal(agent.act_batch(obs, mask), PolicyAgent(source, "scat", n).act_batch(obs, mask))
    x = torch.as_tensor(obs)
    with torch.no_grad():
        assert torch.allclose(agent.net.get_value(x), source.get_value(x), atol=1e-5)
    agent.net.get_value(x).sum().backward()
    assert agent.net.trunk[0].weight.grad[:, source.obs_dim:].abs().sum() > 0, "the belief inputs get gradients"
    assert all(not p.requires_grad for p in agent.net.belief.buffers()) and \
        not any(name.startswith("belief.") for name, _ in agent.net.named_parameters()), "the belief stays frozen"


def test_a_policy_with_belief_inputs_round_trips_through_its_file(tmp_path):
    t, obs, mask = positions(4)
    agent, _ = with_belief(4)
    with torch.no_grad():
        agent.net.trunk[0].weight[:, agent.net.obs_dim:].normal_(0, 0.5)
    path = save_policy(agent.net, agent.rules, 4, tmp_path / "b.safetensors")
    loaded = PolicyAgent.load(path)
    assert loaded.net.belief is not None
    assert np.array_equal(loaded.act_batch(obs, mask), agent.act_batch(obs, mask))
    assert load_checkpoint(path)["belief"] is True


def test_a_file_that_claims_belief_inputs_without_their_weights_is_refused(tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file

    src = save_policy(PolicyAgent.pretrained("scat", 2).net, Rules.preset("scat"), 2, tmp_path / "p.safetensors")
    with safe_open(src, framework="pt") as f:
        meta = json.loads(f.metadata()["thirtyone"])
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    assert meta["belief"] is False
    save_file(tensors, tmp_path / "bad.safetensors", metadata={"thirtyone": json.dumps({**meta, "belief": True})})
    with pytest.raises(ValueError, match="belief.w0"):
        net_from_checkpoint(load_checkpoint(tmp_path / "bad.safetensors"), source="bad.safetensors")


def test_init_from_a_belief_policy_needs_the_flag(tmp_path):
    agent, _ = with_belief(2)
    path = save_policy(agent.net, agent.rules, 2, tmp_path / "b.safetensors")
    net = PolicyNet(agent.net.obs_dim, agent.net.num_actions, 1.0 / agent.net.inv_scale.numpy(), 128, True)
    with pytest.raises(ValueError, match="--belief-inputs true"):
        ppo.start_from(net, ppo.Args(init_from=str(path)), Rules.preset("scat"))


def test_belief_inputs_for_rules_without_a_shipped_belief_are_refused():
    rules = Rules.preset("scat", lives=5)  # not the preset: no belief was trained for it
    with pytest.raises(ValueError, match="no belief is shipped"):
        ppo.belief_for(ppo.Args(belief_inputs=True), rules)
