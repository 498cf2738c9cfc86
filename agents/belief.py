"""A learned belief: how likely each unseen card is to lie in each opponent's hand, from one observation.

A small network (numpy at play time, trained by ``scripts/train_belief.py``) reads the whole
observation, the opponents' moves included (what each threw, took and passed over), and gives per
opponent one weight per card; ``SearchAgent`` deals the opponents' unseen cards one by one with chances
proportional to those weights among the cards still unplaced. It is trained on deals where the shipped
policy plays against a mix of itself, ``HeuristicAgent`` and ``GreedyAgent``, by the cross-entropy of
the opponents' true hidden cards: it learns what players who keep their best cards tend to hold, not
one opponent's program.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from thirtyone_env import encoding as E
from thirtyone_env.engine import Tables
from thirtyone_env.rules import Rules

BELIEF_FORMAT = "thirtyone-belief/1"
BELIEF_DIR = Path(__file__).parent / "pretrained" / "belief"


def unseen(obs: np.ndarray, deck_size: int, num_players: int) -> np.ndarray:
    """Cards the observer cannot place, bool [B, deck]: not in its hand, the discard pile or an opponent's
    known cards."""
    d, off = deck_size, E.offsets(deck_size, num_players)
    seen = (obs[:, off[E.HAND] : off[E.HAND] + d] > 0) | (obs[:, off[E.DISCARD_PILE] : off[E.DISCARD_PILE] + d] > 0)
    for r in range(num_players - 1):
        seen |= obs[:, off[E.OPP_KNOWN] + r * d : off[E.OPP_KNOWN] + (r + 1) * d] > 0
    return ~seen


class BeliefNet:
    """An MLP over the scaled observation: ``layers`` of (weight [in, out], bias [out]), ReLU between them;
    the output is one logit per (opponent, card)."""

    def __init__(self, rules: Rules, num_players: int, layers: list[tuple[np.ndarray, np.ndarray]],
                 trained: dict | None = None):
        self.rules, self.num_players = Rules.resolve(rules), num_players
        self.deck_size = self.rules.deck_size
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.trained = trained or {}
        obs_dim = E.obs_dim(self.deck_size, num_players)
        outputs = (num_players - 1) * self.deck_size
        if self.layers[0][0].shape[0] != obs_dim or self.layers[-1][0].shape[1] != outputs:
            raise ValueError(f"belief layers {[w.shape for w, _ in self.layers]} do not fit {self.rules.name} with "
                             f"{num_players} players (observation {obs_dim}, output {outputs})")
        self.inv_scale = (1.0 / E.scale(self.deck_size, num_players, self.rules.start_chips * num_players)).astype(
            np.float32)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """float32 [B, num_players - 1, deck]."""
        x = np.asarray(obs, np.float32) * self.inv_scale
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                np.maximum(x, 0, out=x)
        return x.reshape(len(x), self.num_players - 1, self.deck_size)

    def weights(self, obs: np.ndarray) -> np.ndarray:
        """Relative chance of each card per opponent, float64 [B, num_players - 1, deck] (the largest 1 per
        opponent; only the cards the observer cannot place are ever dealt)."""
        z = self.logits(obs).astype(np.float64)
        z -= z.max(axis=2, keepdims=True)
        return np.exp(z)

    def cross_entropy(self, obs: np.ndarray, hands: np.ndarray) -> tuple[float, float]:
        """Mean nats per hidden opponent card of this belief and of the uniform one (``hands``: bool
        [B, n - 1, deck], the opponents' true cards); the gap is what the belief knows."""
        pool = unseen(obs, self.deck_size, self.num_players)[:, None, :]
        target = hands & pool
        z = np.where(pool, self.logits(obs), -1e30)  # finite: a deal may leave no card unplaced
        z = z - z.max(axis=2, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=2, keepdims=True))
        cards = target.sum()
        learned = -np.where(target, logp, 0).sum() / cards
        hidden = target.sum(axis=2)  # an opponent with nothing hidden (out, or every card known) adds nothing
        uniform = (hidden * np.log(np.maximum(pool.sum(axis=2), 1))).sum() / cards
        return float(learned), float(uniform)

    # -- files ----------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        from safetensors.numpy import save_file

        path = Path(path)
        meta = {"format": BELIEF_FORMAT, "rules": self.rules.to_dict(), "num_players": self.num_players,
                "layers": len(self.layers), "trained": self.trained}
        tensors = {}
        for i, (w, b) in enumerate(self.layers):
            tensors[f"w{i}"], tensors[f"b{i}"] = np.ascontiguousarray(w), np.ascontiguousarray(b)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        try:
            save_file(tensors, tmp, metadata={"thirtyone": json.dumps(meta)})
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> BeliefNet:
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(str(path), framework="numpy") as f:
                meta = json.loads((f.metadata() or {}).get("thirtyone", "{}"))
                if meta.get("format") != BELIEF_FORMAT:
                    raise ValueError(f"{path} is not a belief file (format {meta.get('format')!r}, "
                                     f"expected {BELIEF_FORMAT!r})")
                layers = [(f.get_tensor(f"w{i}"), f.get_tensor(f"b{i}")) for i in range(meta["layers"])]
        except (SafetensorError, OSError, json.JSONDecodeError, KeyError) as err:
            raise ValueError(f"{path} is corrupt or not a belief file: {err}") from err
        return cls(Rules(**meta["rules"]), meta["num_players"], layers, meta.get("trained"))

    @classmethod
    def pretrained(cls, rules: Rules, num_players: int) -> BeliefNet | None:
        """The shipped belief for a preset and table size, or None."""
        path = BELIEF_DIR / f"{rules.name}_{num_players}p.safetensors"
        if rules.name not in Rules.preset_names() or rules != Rules.preset(rules.name) or not path.is_file():
            return None
        return cls.load(path)


def collect(rules: str | Rules, num_players: int, samples: int, seed: int = 0,
            opponents: tuple[str, ...] = ("pretrained", "heuristic", "greedy"),
            num_tables: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``samples`` decisions of the shipped policy (one seat per table, drawn per match) against copies of
    one opponent kind per match: the observation (int8 [S, obs]) and the opponents' true hands in its
    order (bool [S, n - 1, deck])."""
    from agents.make import make

    rules, n = Rules.resolve(rules), num_players
    t = Tables(num_tables, n, rules, seed=seed)
    obs, mask, _ = t.reset()
    me = make("pretrained", rules, n)
    kinds = [make(spec, rules, n, seed=seed) for spec in opponents]
    rng = np.random.default_rng(seed)
    kind, mine = rng.integers(0, len(kinds), num_tables), rng.integers(0, n, num_tables)
    xs, ys, got = [], [], 0
    while got < samples:
        actions = np.empty(num_tables, np.int64)
        mine_now = np.flatnonzero(t.player == mine)
        if mine_now.size:
            actions[mine_now] = me.act_batch(obs[mine_now], mask[mine_now])
            xs.append(obs[mine_now].copy())
            ys.append(_hands(t, mine_now))
            got += mine_now.size
        for k, agent in enumerate(kinds):
            rows = np.flatnonzero((t.player != mine) & (kind == k))
            if rows.size:
                actions[rows] = agent.act_batch(obs[rows], mask[rows])
        obs, mask, _, _, done = t.step(actions)
        kind[done], mine[done] = rng.integers(0, len(kinds), done.sum()), rng.integers(0, n, done.sum())
    return np.concatenate(xs)[:samples], np.concatenate(ys)[:samples]


def _hands(t: Tables, rows: np.ndarray) -> np.ndarray:
    """The hands of the opponents of each row's player, in the observation's order (bool [R, n - 1, deck])."""
    n, d = t.num_players, t.rules.deck_size
    hands = t.hands(rows)
    out = np.zeros((len(rows), n - 1, d), bool)
    at = np.arange(len(rows))
    for r in range(n - 1):
        seat = (t.player[rows] + 1 + r) % n
        for k in range(4):
            card = hands[at, seat, k]
            held = card >= 0
            out[at[held], r, card[held]] = True
    return out
