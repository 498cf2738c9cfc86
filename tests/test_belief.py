"""The learned belief: its training data is the truth, the shipped file knows more than a uniform deal,
the deal follows its weights, and bad files are named."""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief import BELIEF_DIR, BeliefNet, collect, unseen
from agents.search import SearchAgent
from thirtyone_env import encoding as E
from thirtyone_env.engine import Tables
from thirtyone_env.rules import Rules


def test_collected_hands_are_the_opponents_true_hidden_cards():
    obs, hands = collect("scat", 3, 600, seed=5, num_tables=16)
    assert obs.shape == (600, E.obs_dim(52, 3)) and hands.shape == (600, 2, 52)
    assert (hands.sum(axis=2) <= 4).all() and (hands.sum(axis=2) >= 3).mean() > 0.9  # out seats hold nothing
    pool = unseen(obs, 52, 3)
    for r in range(2):  # every card an opponent holds is unseen by the observer or known to be there
        known = obs[:, _opp_known(r)] > 0
        assert (~hands[:, r] | pool | known).all()


def _opp_known(r: int) -> slice:
    off = E.offsets(52, 3)
    return slice(off[E.OPP_KNOWN] + r * 52, off[E.OPP_KNOWN] + (r + 1) * 52)


def test_the_shipped_belief_knows_more_than_a_uniform_deal():
    belief = BeliefNet.pretrained(Rules.preset("scat"), 2)
    assert belief is not None
    obs, hands = collect("scat", 2, 4000, seed=77, num_tables=64)  # matches it was not trained on
    learned, uniform = belief.cross_entropy(obs, hands)
    assert learned < uniform - 0.2  # nats per hidden card


def test_the_deal_follows_the_weights():
    t = Tables(6, 2, "scat", seed=1)
    obs, *_ = t.reset()
    search = SearchAgent("scat", 2, seed=0, samples=4, budget_ms=None, table_matches=100, belief="uniform")
    pool = unseen(obs, 52, 2)
    favourites = np.array([np.flatnonzero(p)[[0, 5, 9]] for p in pool])  # three unseen cards per table
    weights = np.full((6, 1, 52), 1e-9)
    weights[np.arange(6)[:, None], 0, favourites] = 1.0
    search.belief_net = _Fixed(weights)
    hands, _ = search.belief(obs, 4, np.arange(6))
    dealt = np.sort(hands[:, 0, :3], axis=1)
    np.testing.assert_array_equal(dealt, np.repeat(np.sort(favourites, axis=1), 4, axis=0))


class _Fixed:
    def __init__(self, weights: np.ndarray):
        self._weights = weights

    def weights(self, obs: np.ndarray) -> np.ndarray:
        return self._weights


def test_belief_files_round_trip_and_bad_ones_are_named(tmp_path):
    belief = BeliefNet.pretrained(Rules.preset("scat"), 2)
    path = belief.save(tmp_path / "b.safetensors")
    again = BeliefNet.load(path)
    obs, _ = collect("scat", 2, 50, seed=3, num_tables=8)
    np.testing.assert_array_equal(again.weights(obs), belief.weights(obs))
    (tmp_path / "bad.safetensors").write_bytes(b"not a belief")
    with pytest.raises(ValueError, match="bad.safetensors is corrupt or not a belief file"):
        BeliefNet.load(tmp_path / "bad.safetensors")
    with pytest.raises(ValueError, match="do not fit scat with 3 players"):
        BeliefNet(Rules.preset("scat"), 3, belief.layers)
    with pytest.raises(ValueError, match="belief='oracle' is unknown; allowed: learned, uniform"):
        SearchAgent("scat", 2, belief="oracle")


def test_presets_without_a_shipped_belief_deal_uniformly():
    shipped = {p.stem for p in BELIEF_DIR.glob("*.safetensors")}
    assert "scat_2p" in shipped
    assert BeliefNet.pretrained(Rules.preset("scat").replace(lives=5), 2) is None
    assert SearchAgent("italian", 5, budget_ms=None, table_matches=50).belief_net is None or "italian_5p" in shipped
