"""Digests of everything the public API produces for fixed seeds: the behaviour a refactor must keep.

``python tests/fingerprint.py`` prints them as JSON; ``tests/data/fingerprint.json`` holds the
digests recorded before the engine-layer refactor, and ``test_fingerprint.py`` compares.
Only public outputs are hashed (observations, masks, rewards, infos, actions), never the
engine's state layout, so the layout may change while the behaviour may not.

The observation has since gained pieces, appended after the recorded ones (``opp_thrown``,
``opp_passed``). The recorded digests hash each observation's first-layout prefix (``first``), so
they still hold every entry they held; ``history/...`` digests hash whole observations.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

PRESETS = ("scat", "swedish", "swedish-chips", "italian", "russian")


def _update(digest, *values) -> None:
    for value in values:
        digest.update(np.ascontiguousarray(value).tobytes() if isinstance(value, np.ndarray) else repr(value).encode())


def first_layout(preset: str, n: int, whole: bool = False):
    """Observations (and global states, which end with seat 0's observation) cut to the first layout's
    entries; the identity with ``whole``."""
    from thirtyone_env import encoding
    from thirtyone_env.rules import Rules

    if whole:
        return lambda x: x
    d = Rules.preset(preset).deck_size
    added = encoding.obs_dim(d, n) - encoding.obs_dim_v1(d, n)  # > 0: every layout gained pieces
    return lambda x: np.asarray(x)[..., :-added]


def aec_digest(preset: str, n: int, episode: str, seed: int, matches: int = 2, whole: bool = False,
               **options) -> str:
    """A seeded random policy through ``thirtyone_v0``: every observation, mask, reward and info."""
    from thirtyone_env.env import raw_env

    first = first_layout(preset, n, whole)
    env = raw_env(num_players=n, rules=preset, episode=episode, **options)
    policy = np.random.default_rng(seed + 1)
    digest = hashlib.sha256()
    for m in range(matches):
        env.reset(seed=seed if m == 0 else None)
        while True:
            agent = env.agent_selection
            obs = env.observe(agent)
            _update(digest, agent, first(obs["observation"]), obs["action_mask"],
                    sorted(env.rewards.items()), sorted((a, sorted(i.items())) for a, i in env.infos.items()))
            if all(env.terminations.values()):
                break
            legal = np.flatnonzero(obs["action_mask"])
            if options.get("illegal_action") == "penalize" and policy.random() < 0.002:
                env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
            else:
                env.step(int(policy.choice(legal)))
        finals = [first(env.observe(a)["observation"]) for a in env.possible_agents]
        _update(digest, sorted(env.rewards.items()), finals)
        _update(digest, first(env.state()))
    return digest.hexdigest()


def stacked_digest() -> str:
    """Stacked decks and a given dealer, then the seeded stream."""
    from thirtyone_env.env import raw_env

    first = first_layout("scat", 3)
    env = raw_env(num_players=3, rules="scat")
    decks = [list(range(51, -1, -1)), list(range(0, 52, 2)) + list(range(1, 52, 2)), [5, 17, 33, 2]]
    env.reset(seed=3, options={"decks": decks, "dealer": 1})
    policy = np.random.default_rng(9)
    digest = hashlib.sha256()
    while not all(env.terminations.values()):
        obs = env.observe(env.agent_selection)
        _update(digest, first(obs["observation"]), sorted(env.rewards.items()))
        env.step(int(policy.choice(np.flatnonzero(obs["action_mask"]))))
    _update(digest, sorted(env.rewards.items()))
    return digest.hexdigest()


def vector_digest(preset: str, n: int, episode: str, num_envs: int, parallel: bool, steps: int = 300,
                  whole: bool = False) -> str:
    from thirtyone_env.vector import VectorThirtyOne

    first = first_layout(preset, n, whole)
    vec = VectorThirtyOne(num_envs, num_players=n, rules=preset, seed=5, episode=episode, parallel=parallel)
    obs, mask, player = vec.reset()
    policy = np.random.default_rng(2)
    digest = hashlib.sha256()
    _update(digest, first(obs), mask, player)
    for t in range(steps):
        noise = policy.random(mask.shape)
        noise[~mask] = -1
        obs, mask, player, rewards, done = vec.step(noise.argmax(1))
        _update(digest, first(obs), mask, player, rewards, done)
        if t % 50 == 0:
            _update(digest, first(vec.observe(np.full(num_envs, t % n))), first(vec.state()))
    return digest.hexdigest()


def agents_digest(preset: str, n: int) -> str:
    """Moves of the rule-based agents (and a seeded RandomAgent) over observations of a rollout."""
    from agents import GreedyAgent, HeuristicAgent, RandomAgent
    from thirtyone_env.vector import VectorThirtyOne

    vec = VectorThirtyOne(256, num_players=n, rules=preset, seed=11)
    obs, mask, _ = vec.reset()
    players = [GreedyAgent(preset, n), HeuristicAgent(preset, n), RandomAgent(preset, n, seed=4)]
    digest = hashlib.sha256()
    for t in range(120):
        moves = [p.act_batch(obs, mask) for p in players]
        _update(digest, *moves)
        obs, mask, _, _, _ = vec.step(moves[t % 2])
    return digest.hexdigest()


def policy_digests() -> dict[str, str]:
    """Greedy moves and values of every shipped policy over observations of a heuristic rollout."""
    from agents import HeuristicAgent
    from agents.policy import PolicyAgent
    from thirtyone_env.vector import VectorThirtyOne

    out = {}
    for name in PolicyAgent.available():
        preset, players = name.rsplit("_", 1)
        n = int(players.rstrip("p"))
        agent = PolicyAgent.pretrained(preset, n)
        vec = VectorThirtyOne(128, num_players=n, rules=preset, seed=13)
        obs, mask, _ = vec.reset()
        teacher = HeuristicAgent(preset, n)
        digest = hashlib.sha256()
        for _ in range(60):
            _update(digest, agent.act_batch(obs, mask))
            obs, mask, _, _, _ = vec.step(teacher.act_batch(obs, mask))
        out[name] = digest.hexdigest()
    return out


def single_agent_digest(preset: str, n: int) -> str:
    from thirtyone_env.wrappers import SingleAgentEnv

    first = first_layout(preset, n)
    env = SingleAgentEnv(preset, n)
    digest = hashlib.sha256()
    for episode in range(3):
        obs, info = env.reset(seed=100 + episode)
        policy = np.random.default_rng(episode)
        done = False
        while not done:
            shown = sorted((k, v.tolist() if isinstance(v, np.ndarray) else v) for k, v in info.items())
            _update(digest, first(obs), shown)
            action = int(policy.choice(np.flatnonzero(env.action_masks())))
            obs, reward, done, _, info = env.step(action)
            _update(digest, reward)
    return digest.hexdigest()


def fingerprint(policies: bool = True) -> dict[str, str]:
    out: dict[str, str] = {}
    for preset in PRESETS:
        for n in (2, 3, 4):
            for episode in ("match", "deal"):
                out[f"aec/{preset}/{n}p/{episode}"] = aec_digest(preset, n, episode, seed=7 * n)
        out[f"vector/{preset}/2p/match/serial"] = vector_digest(preset, 2, "match", 3, False)
        out[f"vector/{preset}/4p/deal/parallel"] = vector_digest(preset, 4, "deal", 300, True, steps=150)
        out[f"agents/{preset}/3p"] = agents_digest(preset, 3)
        out[f"single/{preset}/2p"] = single_agent_digest(preset, 2)
    out["aec/scat/6p/match"] = aec_digest("scat", 6, "match", seed=1)
    out["aec/italian/10p/match"] = aec_digest("italian", 10, "match", seed=1)
    out["aec/scat/3p/penalize"] = aec_digest("scat", 3, "match", seed=2, matches=4, illegal_action="penalize")
    out["aec/stacked"] = stacked_digest()
    out["vector/scat/2p/parallel"] = vector_digest("scat", 2, "match", 512, True, steps=200)
    out["agents/scat/2p"] = agents_digest("scat", 2)
    for n in (2, 4):
        out[f"history/aec/scat/{n}p/match"] = aec_digest("scat", n, "match", seed=7 * n, whole=True)
    out["history/vector/italian/3p/deal"] = vector_digest("italian", 3, "deal", 64, True, steps=150, whole=True)
    if policies:
        out.update({f"policy/{k}": v for k, v in policy_digests().items()})
    return out


if __name__ == "__main__":
    print(json.dumps(fingerprint(), indent=1, sort_keys=True))
