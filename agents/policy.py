"""A trained PyTorch policy: the network PPO trains and the agent that plays it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.heuristic import HeuristicAgent
from thirtyone_env import encoding
from thirtyone_env.rules import Rules

CHECKPOINT_FORMAT = "thirtyone-ppo/1"
PRETRAINED_DIR = Path(__file__).parent / "pretrained"


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class PolicyNet(nn.Module):
    """Shared trunk, masked policy head and value head over scaled int8 observations.

    With ``advice=True`` the policy is residual over an advisor (``HeuristicAgent``):
    its chosen action adds a learned bonus to that action's logit, so the network
    starts from the advisor's play and learns where to depart from it.
    """

    def __init__(self, obs_dim: int, num_actions: int, obs_scale: np.ndarray, hidden: int = 128,
                 advice: bool = False):
        super().__init__()
        self.obs_dim, self.num_actions, self.hidden, self.advice = obs_dim, num_actions, hidden, advice
        if advice:
            self.advice_weight = nn.Parameter(torch.tensor(3.0))
        self.register_buffer("inv_scale", torch.as_tensor(1.0 / np.asarray(obs_scale, np.float32)))
        self.trunk = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.ReLU(),
            layer_init(nn.Linear(hidden, hidden)), nn.ReLU(),
        )
        self.actor = layer_init(nn.Linear(hidden, num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(hidden, 1), std=1.0)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        return self.trunk(obs.float() * self.inv_scale)

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
    """Read a checkpoint, with a clear error for a missing, corrupt or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise ValueError(f"checkpoint {path} is corrupt or not a torch file: {exc}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a thirtyone-env policy checkpoint (format {CHECKPOINT_FORMAT!r})")
    return ckpt


def export_policy(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Keep only what playing needs (rules, size, weights): a small file to ship."""
    ckpt = load_checkpoint(src)
    slim = {key: ckpt[key] for key in ("format", "rules", "num_players", "hidden", "model")}
    slim["advice"] = bool(ckpt.get("advice", False))
    slim["trained"] = {key: ckpt[key] for key in ("decisions", "elapsed") if key in ckpt}
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(dst.suffix + ".tmp")
    torch.save(slim, tmp)
    os.replace(tmp, dst)
    return dst


def net_from_checkpoint(ckpt: dict[str, Any]) -> tuple[PolicyNet, Rules, int]:
    try:
        rules = Rules(**ckpt["rules"])
        n = int(ckpt["num_players"])
        hidden = int(ckpt["hidden"])
        advice = bool(ckpt.get("advice", False))
        state = ckpt["model"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"policy checkpoint is missing or has a bad field: {exc}") from None
    scale = encoding.scale(rules.deck_size, n, rules.start_chips * n)
    net = PolicyNet(encoding.obs_dim(rules.deck_size, n), rules.num_actions, scale, hidden, advice)
    try:
        net.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(
            f"policy checkpoint does not fit {rules.name} with {n} players (obs_dim "
            f"{encoding.obs_dim(rules.deck_size, n)}, {rules.num_actions} actions): {str(exc).splitlines()[0]}"
        ) from None
    net.eval()
    return net, rules, n


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

    @classmethod
    def load(cls, path: str | os.PathLike, rules: str | Rules | None = None, num_players: int | None = None,
             greedy: bool = True) -> PolicyAgent:
        """Load a checkpoint; ``rules``/``num_players``, if given, must match what it was trained for."""
        net, trained_rules, trained_n = net_from_checkpoint(load_checkpoint(path))
        if num_players is not None and num_players != trained_n:
            raise ValueError(f"{path} was trained for {trained_n} players, not {num_players}")
        if rules is not None and Rules.resolve(rules) != trained_rules:
            raise ValueError(f"{path} was trained for rules {trained_rules.name!r}, not {Rules.resolve(rules).name!r}")
        return cls(net, trained_rules, trained_n, greedy=greedy, name=f"policy:{path}")

    @classmethod
    def pretrained(cls, preset: str = "scat", num_players: int = 2, greedy: bool = True) -> PolicyAgent:
        """A policy shipped with the package (see ``PolicyAgent.available()``)."""
        path = PRETRAINED_DIR / f"{preset}_{num_players}p.pt"
        if not path.is_file():
            raise ValueError(
                f"no pretrained policy for {preset!r} with {num_players} players; available: {cls.available()}"
            )
        agent = cls.load(path, greedy=greedy)
        agent.name = f"pretrained:{preset}_{num_players}p"
        return agent

    @staticmethod
    def available() -> list[str]:
        return sorted(p.stem for p in PRETRAINED_DIR.glob("*.pt"))

    def act(self, obs: dict) -> int:
        return int(self.act_batch(obs["observation"][None], obs["action_mask"][None])[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        advice = None if self.advisor is None else self.advisor.act_batch(obs, mask)
        return self.net.act(obs, mask, greedy=self.greedy, advice=advice).astype(np.int64)
