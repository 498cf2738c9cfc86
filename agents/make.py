"""``make(spec, rules, num_players)``: every agent kind from its text, for the CLI, training,
the single-agent and vector envs, and the benchmark.

| spec | agent |
|---|---|
| ``random`` | ``RandomAgent`` (seeded by ``seed``) |
| ``greedy`` | ``GreedyAgent`` |
| ``heuristic`` | ``HeuristicAgent`` |
| ``pretrained[:PRESET_NP]`` | a shipped policy (``pretrained:scat_2p``; bare: these rules and players) |
| ``policy:PATH`` | a saved policy (``.safetensors`` or a training checkpoint); PATH may hold colons |
| ``search[:OPTIONS][:SPEC]`` | ``SearchAgent`` over the agent ``SPEC`` (default: the shipped policy, else heuristic); |
| | OPTIONS ``samples=64,max=64,close=1,ms=100,z=3,belief=learned`` (worlds per decision, up to ``max`` |
| | for close calls, what counts as close, time per decision, keep margin, ``learned`` or ``uniform`` |
| | belief about the opponents' hidden cards) |
"""

from __future__ import annotations

from typing import Any

from thirtyone_env.rules import Rules

KINDS = ("random", "greedy", "heuristic", "pretrained[:PRESET_NP]", "policy:PATH", "search[:OPTIONS][:SPEC]")
SEARCH_OPTIONS = {"samples": int, "max": int, "close": float, "ms": float, "z": float, "belief": str}


def make(spec: str, rules: str | Rules = "scat", num_players: int = 2, seed: int | None = None) -> Any:
    """An agent from its text (see the table above); a ``ValueError`` names a bad spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; allowed: {', '.join(KINDS)}")
    rules = Rules.resolve(rules)
    kind, sep, arg = spec.strip().partition(":")
    if kind in ("random", "greedy", "heuristic") and not sep:
        from agents.greedy import GreedyAgent
        from agents.heuristic import HeuristicAgent
        from agents.random_agent import RandomAgent

        cls = {"random": RandomAgent, "greedy": GreedyAgent, "heuristic": HeuristicAgent}[kind]
        return cls(rules, num_players, seed=seed)
    if kind == "policy" and arg:
        from agents.policy import PolicyAgent

        return PolicyAgent.load(arg, rules=rules, num_players=num_players)
    if kind == "pretrained":
        from agents.policy import PolicyAgent, split_policy_name

        preset, n = rules.name, num_players
        if arg:
            try:
                preset, n = split_policy_name(arg)
            except ValueError:
                raise ValueError(
                    f"pretrained:{arg} is invalid; expected pretrained:PRESET_NP, e.g. pretrained:scat_2p"
                ) from None
        agent = PolicyAgent.pretrained(preset, n)
        if agent.rules != rules or agent.num_players != num_players:
            raise ValueError(f"pretrained policy {preset}_{n}p does not fit {rules.name} with {num_players} players")
        return agent
    if kind == "search":
        return _search(arg, rules, num_players, seed)
    raise ValueError(f"unknown agent {spec!r}; allowed: {', '.join(KINDS)}")


def _search(arg: str, rules: Rules, num_players: int, seed: int | None) -> Any:
    """``search[:samples=64,ms=100,z=3,belief=learned][:SPEC]``: the options, then the rollout policy's spec."""
    from agents.search import SearchAgent

    head, _, rest = arg.partition(":")
    options: dict[str, Any] = {}
    if "=" in head:
        for item in head.split(","):
            key, _, value = item.partition("=")
            if key not in SEARCH_OPTIONS:
                raise ValueError(f"search option {key!r} is unknown; allowed: {', '.join(SEARCH_OPTIONS)}")
            try:
                options[key] = SEARCH_OPTIONS[key](value)
            except ValueError:
                raise ValueError(f"search option {key}={value!r} is not a number") from None
        arg = rest
    policy = make(arg, rules, num_players, seed) if arg else None
    for key, name in (("ms", "budget_ms"), ("max", "max_samples")):
        if key in options:
            options[name] = options.pop(key)
    agent = SearchAgent(rules, num_players, seed=seed, policy=policy, **options)
    agent.name = "search" + (f":{arg}" if arg else "")
    return agent
