"""A trained PyTorch policy: the network PPO trains and the agent that plays it."""

from __future__ import annotations

import json
import os
import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn

from agents.belief import BeliefNet
from agents.heuristic import HeuristicAgent
from thirtyone_env import encoding
from thirtyone_env.rules import Rules

CHECKPOINT_FORMAT = "thirtyone-ppo/1"  # a training checkpoint (torch file, read with weights_only=True)
POLICY_FORMAT = "thirtyone-policy/2"  # an exported policy: safetensors, its metadata one JSON string
METADATA_KEY = "thirtyone"  # the safetensors metadata entry that holds that JSON
_MAX_HEADER = 100_000_000  # safetensors refuses bigger headers too
PRETRAINED_DIR = Path(__file__).parent / "pretrained"


def split_policy_name(name: str) -> tuple[str, int]:
    """A shipped policy's name and its parts: ``scat_2p`` -> ``("scat", 2)``; a ValueError if not PRESET_NP."""
    preset, _, players = name.rpartition("_")
    if not preset or not players.endswith("p") or not players[:-1].isdigit():
        raise ValueError(f"{name!r} is not PRESET_NP (e.g. scat_2p)")
    return preset, int(players[:-1])


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


HAND_CARDS = 3  # an opponent's hand whenever the observer decides (RULES.md: every preset deals three)


class BeliefInputs(nn.Module):
    """A frozen ``BeliefNet`` as extra policy inputs: per opponent, the expected number of each card in its
    hand (1 for a card it is known to hold; its unknown cards spread over the cards the observer cannot
    place with the belief's chances; 0 for an opponent out of the match). The belief was fitted to real
    hands by supervised learning, so the policy gets that reading without having to learn it from rewards.
    Its weights are buffers: saved with the policy, never trained by it."""

    def __init__(self, belief: BeliefNet):
        super().__init__()
        d, n = belief.deck_size, belief.num_players
        self.deck_size, self.opponents, self.num_layers = d, n - 1, len(belief.layers)
        for i, (w, b) in enumerate(belief.layers):
            self.register_buffer(f"w{i}", torch.as_tensor(w))
            self.register_buffer(f"b{i}", torch.as_tensor(b))
        self.register_buffer("inv_scale", torch.as_tensor(belief.inv_scale))
        off = encoding.offsets(d, n)
        self.hand, self.pile = slice(off[encoding.HAND], off[encoding.HAND] + d), \
            slice(off[encoding.DISCARD_PILE], off[encoding.DISCARD_PILE] + d)
        self.known = slice(off[encoding.OPP_KNOWN], off[encoding.OPP_KNOWN] + (n - 1) * d)
        self.in_play = slice(off[encoding.OPP_IN_PLAY], off[encoding.OPP_IN_PLAY] + n - 1)

    @property
    def size(self) -> int:
        return self.opponents * self.deck_size

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs.float() * self.inv_scale
        for i in range(self.num_layers):
            x = x @ getattr(self, f"w{i}") + getattr(self, f"b{i}")
            if i < self.num_layers - 1:
                x = x.relu()
        logits = x.view(len(obs), self.opponents, self.deck_size)
        known = (obs[:, self.known] > 0).view(len(obs), self.opponents, self.deck_size)
        placed = (obs[:, self.hand] > 0) | (obs[:, self.pile] > 0) | known.any(1)
        chances = logits.masked_fill(placed[:, None, :], -torch.inf).softmax(-1).nan_to_num(0.0)
        hidden = (HAND_CARDS - known.sum(-1, keepdim=True)).clamp(min=0) * (obs[:, self.in_play, None] > 0)
        return (known.float() + hidden * chances).flatten(1)


class PolicyNet(nn.Module):
    """Shared trunk, masked policy head and value head over scaled int8 observations.

    With ``advice=True`` the policy is residual over an advisor (``HeuristicAgent``):
    its chosen action adds a learned bonus to that action's logit, so the network
    starts from the advisor's play and learns where to depart from it. With a ``belief``
    the trunk also reads ``BeliefInputs`` (what each opponent likely holds).
    """

    def __init__(self, obs_dim: int, num_actions: int, obs_scale: np.ndarray, hidden: int = 128,
                 advice: bool = False, belief: BeliefNet | None = None):
        super().__init__()
        self.obs_dim, self.num_actions, self.hidden, self.advice = obs_dim, num_actions, hidden, advice
        if advice:
            self.advice_weight = nn.Parameter(torch.tensor(3.0))
        self.register_buffer("inv_scale", torch.as_tensor(1.0 / np.asarray(obs_scale, np.float32)))
        self.belief = BeliefInputs(belief) if belief is not None else None
        inputs = obs_dim + (self.belief.size if self.belief is not None else 0)
        self.trunk = nn.Sequential(
            layer_init(nn.Linear(inputs, hidden)), nn.ReLU(),
            layer_init(nn.Linear(hidden, hidden)), nn.ReLU(),
        )
        self.actor = layer_init(nn.Linear(hidden, num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(hidden, 1), std=1.0)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs.float() * self.inv_scale
        if self.belief is not None:
            x = torch.cat([x, self.belief(obs)], 1)
        return self.trunk(x)

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.features(obs)).squeeze(-1)

    def masked_logits(self, hidden: torch.Tensor, mask: torch.Tensor,
                      advice: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.actor(hidden)
        if self.advice:
            if advice is None:
                raise ValueError("this policy is residual over HeuristicAgent: pass its actions as advice")
            bonus = torch.nn.functional.one_hot(advice.long(), self.num_actions).to(logits.dtype)
            logits = logits + self.advice_weight * bonus
        return torch.where(mask.bool(), logits, torch.finfo(logits.dtype).min)

    def get_action_and_value(
        self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None,
        advice: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sampled (or given) action, its log-probability, the policy entropy and the value."""
        hidden = self.features(obs)
        logp_all = self.masked_logits(hidden, mask, advice).log_softmax(-1)
        if action is None:
            action = sample_masked(logp_all)
        probs = logp_all.exp()
        entropy = -(probs * torch.where(probs > 0, logp_all, 0.0)).sum(-1)
        logp = logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        return action, logp, entropy, self.critic(hidden).squeeze(-1)

    @torch.no_grad()
    def act(self, obs: np.ndarray, mask: np.ndarray, greedy: bool = True,
            advice: np.ndarray | None = None) -> np.ndarray:
        advice_t = None if advice is None else torch.as_tensor(advice)
        logits = self.masked_logits(self.features(torch.as_tensor(obs)), torch.as_tensor(mask), advice_t)
        if greedy:
            return logits.argmax(-1).numpy()
        return sample_masked(logits.log_softmax(-1)).numpy()


def sample_masked(logp: torch.Tensor) -> torch.Tensor:
    """Gumbel-max sampling: exact for a categorical, and masked ids (log p = min float) never win."""
    gumbel = -torch.log(-torch.log(torch.rand_like(logp).clamp_(1e-12, 1.0)))
    return (logp + gumbel).argmax(-1)


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Read a training checkpoint or an exported policy without ever unpickling code.

    The file's first bytes decide how: safetensors (an exported policy, ``POLICY_FORMAT``) or a
    torch checkpoint (``CHECKPOINT_FORMAT``, read with ``weights_only=True``). Either way the dict
    holds ``rules``, ``num_players``, ``hidden``, ``advice`` and ``model`` (a state_dict).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return _read_safetensors(path) if _sniff(path) == "safetensors" else _read_torch(path)


def _sniff(path: Path) -> str:
    """Tell safetensors from a torch checkpoint by content: a renamed file must not pick the reader."""
    with open(path, "rb") as f:
        head = f.read(9)
    if len(head) == 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") <= _MAX_HEADER:
        return "safetensors"  # an 8-byte little-endian header length, then the JSON header
    if head.startswith(b"PK\x03\x04") or head[:1] == b"\x80":
        return "torch"  # torch.save's zip archive, or a legacy (protocol 2+) pickle
    raise ValueError(
        f"{path} is corrupt or not a policy file: neither safetensors nor a torch checkpoint (starts {head[:8]!r})"
    )


def _read_torch(path: Path) -> dict[str, Any]:
    """A training checkpoint: torch's weights_only unpickler builds tensors and plain data, nothing else."""
    try:
        # an open file, not the path: torch.load picks safetensors by a ".safetensors" name, not by content
        with open(path, "rb") as f, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Detected pickle protocol")  # the error below says more
            ckpt = torch.load(f, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if not str(exc).startswith("Weights only load failed"):
            raise ValueError(f"checkpoint {path} is corrupt: {_first_line(exc)}") from None
        raise ValueError(
            f"refusing to load {path}: it contains Python objects that could run code "
            f"(weights_only=True rejected: {_weights_only_reason(exc)})"
        ) from None
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise ValueError(f"checkpoint {path} is corrupt or not a torch file: {_first_line(exc)}") from None
    if not isinstance(ckpt, dict) or not str(ckpt.get("format", "")).startswith("thirtyone-"):
        raise ValueError(f"{path} is not a thirtyone-env policy checkpoint (format {CHECKPOINT_FORMAT!r})")
    if ckpt["format"] != CHECKPOINT_FORMAT:
        raise ValueError(
            f"{path} has format {ckpt['format']!r}; a torch checkpoint must be {CHECKPOINT_FORMAT!r} "
            f"(exported policies are safetensors files, {POLICY_FORMAT!r})"
        )
    return ckpt


def _weights_only_reason(exc: Exception) -> str:
    """The line of torch's long weights_only error that names what it refused."""
    text = str(exc)
    if found := re.search(r"GLOBAL ([\w.]+)", text):
        return f"unsupported global {found.group(1)}"
    if found := re.search(r"WeightsUnpickler error:\s*([^\n]+)", text):
        return found.group(1).strip()
    return _first_line(exc)


def _first_line(exc: Exception) -> str:
    """An exception's message for one line of an error of ours (EOFError's is empty)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_METADATA_FIELDS: dict[str, type] = {
    "rules": dict, "num_players": int, "hidden": int, "advice": bool, "obs_dim": int, "num_actions": int,
}


def _read_safetensors(path: Path) -> dict[str, Any]:
    """An exported policy: tensors plus one JSON metadata string, so reading it runs no code."""
    try:
        with safe_open(path, framework="pt", device="cpu") as f:
            metadata = f.metadata() or {}
            model = {key: f.get_tensor(key) for key in f.keys()}
    except Exception as exc:  # SafetensorError for a bad header, a truncated file, ...
        raise ValueError(f"policy file {path} is corrupt: {_first_line(exc)}") from None
    if METADATA_KEY not in metadata:
        raise ValueError(f"{path} is a safetensors file but not a thirtyone-env policy (no {METADATA_KEY!r} metadata)")
    try:
        meta = json.loads(metadata[METADATA_KEY])
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} has {METADATA_KEY!r} metadata that is not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path} has {METADATA_KEY!r} metadata that is not a JSON object")
    if meta.get("format") != POLICY_FORMAT:
        raise ValueError(f"{path} has policy format {meta.get('format')!r}; this version reads {POLICY_FORMAT!r}")
    meta.setdefault("trained", {})
    meta.setdefault("belief", False)  # files written before belief inputs existed
    bad = [
        f"{key} is missing" if key not in meta else f"{key}={meta[key]!r} is not {kind.__name__}"
        for key, kind in {**_METADATA_FIELDS, "trained": dict, "belief": bool}.items()
        if key not in meta or not isinstance(meta[key], kind) or (kind is int and isinstance(meta[key], bool))
    ]
    if bad:
        raise ValueError(f"{path} has bad policy metadata: {'; '.join(bad)}")
    n = meta["num_players"]
    try:
        rules = Rules(**meta["rules"])
        rules.check_num_players(n)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path} has metadata this package cannot play: {exc}") from None
    need = encoding.obs_dim(rules.deck_size, n), rules.num_actions
    first_layout = encoding.obs_dim_v1(rules.deck_size, n), rules.num_actions
    if (meta["obs_dim"], meta["num_actions"]) not in (need, first_layout):
        raise ValueError(
            f"{path} metadata says obs_dim={meta['obs_dim']}, actions={meta['num_actions']}; "
            f"{rules.name} with {n} players needs {need[0]}, {need[1]}"
        )
    return {**meta, "model": model}


def export_policy(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Keep only what playing needs (rules, size, weights) as safetensors: a small file to ship that loads safely.

    ``dst`` gets safetensors content whatever its name; ``.safetensors`` is the convention.
    """
    src = Path(src)
    ckpt = load_checkpoint(src)
    net, rules, n = net_from_checkpoint(ckpt, source=src)
    return save_policy(net, rules, n, dst, training_record(ckpt))


def training_record(ckpt: dict[str, Any]) -> dict[str, Any]:
    """What trained a loaded file: a policy file's ``trained`` metadata, or a training checkpoint's counts."""
    return dict(ckpt.get("trained") or {key: ckpt[key] for key in ("decisions", "elapsed") if key in ckpt})


def save_policy(net: PolicyNet, rules: Rules, num_players: int, dst: str | os.PathLike,
                trained: dict[str, Any] | None = None) -> Path:
    """Write ``net`` as a policy file (safetensors, written to a temporary name and then moved into place)."""
    dst = Path(dst)
    trained = trained or {}
    meta = {
        "format": POLICY_FORMAT, "rules": rules.to_dict(), "num_players": num_players, "hidden": net.hidden,
        "advice": bool(net.advice), "belief": net.belief is not None, "obs_dim": net.obs_dim,
        "num_actions": net.num_actions,
        "trained": {key: value.item() if isinstance(value, torch.Tensor) else value for key, value in trained.items()},
    }
    tensors = {key: value.detach().cpu().contiguous() for key, value in net.state_dict().items()}
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    try:
        save_file(tensors, tmp, metadata={METADATA_KEY: json.dumps(meta)})
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)
    return dst


def lineage(trained: dict[str, Any], step: str) -> dict[str, Any]:
    """A training record (``PolicyAgent.trained``) with ``step`` added: a policy improved from a shipped
    one keeps the decisions that trained it and says what was done to it since."""
    trained = dict(trained)
    trained["then"] = f"{trained['then']}; {step}" if trained.get("then") else step
    return trained


@torch.no_grad()
def logit_average(nets: list[PolicyNet]) -> PolicyNet:
    """One network that computes the mean of ``nets``' logits and values exactly: their trunks side by
    side (block-diagonal), their heads and advice weights averaged. An ensemble that loads, plays and
    exports like any single policy."""
    first = nets[0]
    for net in nets[1:]:
        if (net.obs_dim, net.num_actions, net.advice) != (first.obs_dim, first.num_actions, first.advice) or \
                not torch.equal(net.inv_scale, first.inv_scale):
            raise ValueError("logit_average needs policies of one setting (observation, actions, advice)")
    if any(net.belief is not None for net in nets):
        raise ValueError("logit_average does not merge policies with belief inputs")
    out = PolicyNet(first.obs_dim, first.num_actions, 1.0 / first.inv_scale.numpy(), sum(n.hidden for n in nets),
                    first.advice)
    for param in out.parameters():
        param.zero_()
    k, lo = len(nets), 0
    for net in nets:
        hi = lo + net.hidden
        out.trunk[0].weight[lo:hi], out.trunk[0].bias[lo:hi] = net.trunk[0].weight, net.trunk[0].bias
        out.trunk[2].weight[lo:hi, lo:hi], out.trunk[2].bias[lo:hi] = net.trunk[2].weight, net.trunk[2].bias
        for head, theirs in ((out.actor, net.actor), (out.critic, net.critic)):
            head.weight[:, lo:hi] = theirs.weight / k
            head.bias += theirs.bias / k
        if net.advice:
            out.advice_weight += net.advice_weight / k
        lo = hi
    return out.eval()


def net_from_checkpoint(ckpt: dict[str, Any], source: str | os.PathLike | None = None) -> tuple[PolicyNet, Rules, int]:
    """The network a ``load_checkpoint`` dict describes; errors name ``source`` (the file) when given."""
    where = str(source) if source is not None else "policy checkpoint"
    try:
        rules = Rules(**ckpt["rules"])
        n = int(ckpt["num_players"])
        hidden = int(ckpt["hidden"])
        advice = bool(ckpt.get("advice", False))
        state = ckpt["model"]
        belief = _belief_from_state(state, rules, n) if ckpt.get("belief", False) else None
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} is missing or has a bad field: {exc}") from None
    scale = encoding.scale(rules.deck_size, n, rules.start_chips * n)
    net = PolicyNet(encoding.obs_dim(rules.deck_size, n), rules.num_actions, scale, hidden, advice, belief)
    try:
        net.load_state_dict(read_first_layout(state, net, encoding.obs_dim_v1(rules.deck_size, n)))
    except (RuntimeError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(
            f"{where} does not fit {rules.name} with {n} players (obs_dim "
            f"{encoding.obs_dim(rules.deck_size, n)}, {rules.num_actions} actions): {str(exc).splitlines()[0]}"
        ) from None
    net.eval()
    return net, rules, n


def _belief_from_state(state: dict[str, Any], rules: Rules, num_players: int) -> BeliefNet:
    """The frozen belief a policy with belief inputs carries in its weights (``belief.w0``, ``belief.b0``, ...)."""
    layers, i = [], 0
    while f"belief.w{i}" in state:
        layers.append((state[f"belief.w{i}"].numpy(), state[f"belief.b{i}"].numpy()))
        i += 1
    if not layers:
        raise ValueError("it says it reads a belief but holds no belief weights (belief.w0)")
    return BeliefNet(rules, num_players, layers)


def read_first_layout(state: dict[str, Any], net: PolicyNet, first_dim: int) -> dict[str, Any]:
    """Weights trained on the first observation layout, made to read today's: the pieces added since
    (the opponents' moves) were appended, so the old inputs keep their columns and the new ones get zero
    weights. The policy plays exactly as it did, and training from it (``--init-from``) learns the rest.
    Other weights pass through unchanged."""
    weight = state.get("trunk.0.weight") if isinstance(state, dict) else None
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2 or weight.shape[1] != first_dim \
            or first_dim == net.obs_dim:
        return state
    added = net.obs_dim - first_dim
    state = {**state, "trunk.0.weight": torch.cat([weight, weight.new_zeros(weight.shape[0], added)], 1)}
    inv_scale = state.get("inv_scale")
    if isinstance(inv_scale, torch.Tensor) and inv_scale.shape == (first_dim,):
        state["inv_scale"] = torch.cat([inv_scale, net.inv_scale[first_dim:]])
    return state


class PolicyAgent:
    """Plays a trained policy: greedy (argmax) by default, or sampled.

    A residual policy (``net.advice``) consults a ``HeuristicAgent`` for every decision.
    """

    def __init__(self, net: PolicyNet, rules: str | Rules, num_players: int, greedy: bool = True,
                 name: str = "policy"):
        self.net, self.rules, self.num_players = net, Rules.resolve(rules), num_players
        self.greedy, self.name = greedy, name
        expected = encoding.obs_dim(self.rules.deck_size, num_players)
        if net.obs_dim != expected or net.num_actions != self.rules.num_actions:
            raise ValueError(
                f"policy expects obs_dim={net.obs_dim}, actions={net.num_actions}; "
                f"{self.rules.name} with {num_players} players needs {expected}, {self.rules.num_actions}"
            )
        self.advisor = HeuristicAgent(self.rules, num_players) if net.advice else None
        self.trained: dict[str, Any] = {}  # the loaded file's training record (``lineage`` extends it)

    @classmethod
    def load(cls, path: str | os.PathLike, rules: str | Rules | None = None, num_players: int | None = None,
             greedy: bool = True) -> PolicyAgent:
        """Load a checkpoint; ``rules``/``num_players``, if given, must match what it was trained for."""
        ckpt = load_checkpoint(path)
        net, trained_rules, trained_n = net_from_checkpoint(ckpt, source=path)
        if num_players is not None and num_players != trained_n:
            raise ValueError(f"{path} was trained for {trained_n} players, not {num_players}")
        if rules is not None and Rules.resolve(rules) != trained_rules:
            raise ValueError(f"{path} was trained for rules {trained_rules.name!r}, not {Rules.resolve(rules).name!r}")
        agent = cls(net, trained_rules, trained_n, greedy=greedy, name=f"policy:{path}")
        agent.trained = training_record(ckpt)
        return agent

    @classmethod
    def pretrained(cls, preset: str = "scat", num_players: int = 2, greedy: bool = True) -> PolicyAgent:
        """A policy shipped with the package (see ``PolicyAgent.available()``)."""
        path = PRETRAINED_DIR / f"{preset}_{num_players}p.safetensors"
        if not path.is_file():
            raise ValueError(
                f"no pretrained policy for {preset!r} with {num_players} players; available: {cls.available()}"
            )
        agent = cls.load(path, greedy=greedy)
        agent.name = f"pretrained:{preset}_{num_players}p"
        return agent

    @staticmethod
    def available() -> list[str]:
        """Names (``scat_2p``) of the shipped policies, for ``pretrained(preset, n)``."""
        return sorted(p.stem for p in PRETRAINED_DIR.glob("*.safetensors"))

    def act(self, obs: dict) -> int:
        return int(self.act_batch(obs["observation"][None], obs["action_mask"][None])[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        advice = None if self.advisor is None else self.advisor.act_batch(obs, mask)
        return self.net.act(obs, mask, greedy=self.greedy, advice=advice).astype(np.int64)
