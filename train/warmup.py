"""Compile every numba kernel a first session uses, ahead of time (``thirtyone warmup``, run by ``make setup``).

Numba compiles a kernel on its first call and caches it on disk, so a cold first run spends its
first minute compiling. Running each path once on tiny inputs (the PettingZoo env, the batched
engine serial and threaded, the rule-based agents, the policy agent, the search agent, global
states, the Gymnasium vector env, a few PPO updates) leaves all of them in the cache. Kernels are
typed by argument types, not by rules or sizes, so one preset and one batch size per variant covers
them all.
"""

from __future__ import annotations

import itertools
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from thirtyone_env.jit import PARALLEL_FROM, compile_watch

if TYPE_CHECKING:
    from thirtyone_env.engine import Tables

SMALL, LARGE = 4, PARALLEL_FROM  # the serial and the threaded variant of every batch kernel


def dealt_tables(rows: int = SMALL) -> Tables:
    """``rows`` scat tables for 2, reset: positions for the steps that act on or look at tables."""
    from thirtyone_env.engine import Tables  # imported when used: the warmup's import stays light

    t = Tables(rows, 2, "scat", seed=0)
    t.reset()
    return t


def aec_match() -> None:
    """The PettingZoo env: reset, steps, observations, one rule-based agent per seat."""
    from agents import make
    from thirtyone_env import thirtyone_v0

    env = thirtyone_v0.env(num_players=2, rules="scat")
    env.reset(seed=0)
    specs = dict(zip(env.possible_agents, ("heuristic", "greedy"), strict=True))
    players = {agent: make(spec, "scat", 2, seed=0) for agent, spec in specs.items()}
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else players[agent].act(obs))


def batched_engine() -> None:
    """``VectorThirtyOne`` on both variants, with random, greedy and heuristic agents."""
    from agents import make
    from thirtyone_env.vector import VectorThirtyOne

    for rows in (SMALL, LARGE):
        vec = VectorThirtyOne(rows, 2, "scat", seed=0)
        obs, mask, _ = vec.reset()
        agents = [make(spec, "scat", 2, seed=0) for spec in ("random", "greedy", "heuristic")]
        for step in range(30):
            obs, mask, _, _, _ = vec.step(agents[step % 3].act_batch(obs, mask))


def heuristic_agent() -> None:
    """``HeuristicAgent.act_batch`` on both variants (ahead of the batched engine's first use of it)."""
    from agents import make

    for rows in (SMALL, LARGE):
        t = dealt_tables(rows)
        make("heuristic", "scat", 2, seed=0).act_batch(t.obs, t.mask)


def global_states() -> None:
    """Every table's full state (the centralised critic's input)."""
    dealt_tables().global_state()


def tournament_with_policy() -> None:
    """The evaluation path: the one tournament with a shipped policy against the heuristic."""
    from agents import make
    from thirtyone_env.evaluation import tournament

    agents = [make("pretrained:scat_2p", "scat", 2, seed=0), make("heuristic", "scat", 2, seed=0)]
    for matches in (SMALL, LARGE):
        tournament(agents, "scat", 2, matches, seed=0)


def gymnasium_vector_env() -> None:
    """``gymnasium.make_vec("ThirtyOne-v0", ...)``: its bookkeeping kernels, both batch variants, with the
    heuristic's compiled turns and with agents that answer one move at a time (random, greedy, a policy)."""
    import gymnasium

    import thirtyone_env  # noqa: F401 (registers ThirtyOne-v0)

    for rows, opponents in itertools.product((SMALL, LARGE), ("heuristic", "random")):
        env = gymnasium.make_vec("ThirtyOne-v0", num_envs=rows, vectorization_mode="vector_entry_point",
                                 opponents=opponents)
        _, info = env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(20):
            mask = env.unwrapped.action_masks() if hasattr(env, "unwrapped") else info["action_mask"]
            actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
            _, _, _, _, info = env.step(actions)


def search_agent() -> None:
    """``SearchAgent`` (the ``search`` opponent): its belief's deal of hidden cards, loading those worlds into
    tables, and its rollouts."""
    from agents import make

    t = dealt_tables()
    make("search:samples=8,ms=1000000", "scat", 2, seed=0).act_batch(t.obs, t.mask)


def ppo_updates() -> None:
    """A few PPO updates with a warm start and an evaluation (the training loop's own kernels)."""
    from train.ppo import Args, train

    with tempfile.TemporaryDirectory() as out:
        for num_envs, opponents in ((SMALL, "heuristic"), (LARGE, "random,greedy")):  # both driver variants
            train(Args(out=f"{out}/{num_envs}", num_envs=num_envs, num_steps=4, total_decisions=num_envs * 4 * 2,
                       bc_decisions=2_000, advice=num_envs == SMALL, rule_based=opponents, eval_matches=8,
                       threads=1, progress=False), quiet=True)


def engine_reset() -> None:
    """The deal and the reset driver, which every step below starts with, and one seat's observation, which
    both groups use."""
    dealt_tables().observe_at(0, 0)


STEPS: dict[str, Callable[[], None]] = {
    "PettingZoo env": aec_match,
    "batched engine and agents": batched_engine,
    "tournament with a policy": tournament_with_policy,
    "Gymnasium vector env": gymnasium_vector_env,
    "PPO training loop": ppo_updates,
    "search agent": search_agent,
    "heuristic agent": heuristic_agent,
    "global states": global_states,
}
# steps that share kernels (beyond the reset and observation) run in one process, in this order: the batched
# steps, the training loop and the evaluations step through the batch drivers; the Gymnasium vector env through
# its fused opponent turns, the PettingZoo env through its one-table kernel. The heuristic's batch kernel goes
# with the second group, which compiles it first: the first group needs it only after its step kernel (about
# two minutes), and then loads it from the cache. Seconds measured on 2 cores, cold cache: the groups 310 and
# 335, after about 100 for the reset and observation; 449 s in all (10.5 min in one process).
GROUPS: list[list[str]] = [
    ["batched engine and agents", "PPO training loop", "tournament with a policy", "search agent"],
    ["heuristic agent", "Gymnasium vector env", "PettingZoo env", "global states"],
]


def run_steps(names: list[str]) -> list[tuple[str, float]]:
    """Run the named steps in order; each one's seconds."""
    compile_watch.announced = True  # the first-compile notice would repeat what `thirtyone warmup` says
    times = []
    for name in names:
        t0 = time.perf_counter()
        STEPS[name]()
        times.append((name, time.perf_counter() - t0))
    return times


def warm_up(out=sys.stdout, jobs: int = 1) -> float:
    """Run every step, in ``jobs`` processes at once (1: here, one after the other), printing each one's
    time; returns the total seconds."""
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    compile_watch.announced = True
    processes = min(jobs, len(GROUPS))
    start = time.perf_counter()
    if processes == 1:
        runs = [run_steps([name for group in GROUPS for name in group])]
    else:
        engine_reset()  # compiled once, here; the processes load it from the cache
        # spawn: a fresh interpreter per process (forking one that has loaded numba's threads is unsafe)
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
            runs = list(pool.map(run_steps, GROUPS))
    for times in runs:
        for name, seconds in times:
            print(f"  {name}: {seconds:.1f} s", file=out, flush=True)
    total = time.perf_counter() - start
    where = "" if processes == 1 else f" in {processes} processes"
    print(f"numba cache warm ({total:.0f} s{where}); later runs start at once", file=out, flush=True)
    return total
