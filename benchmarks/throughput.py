"""Decisions/s and matches/s of ``thirtyone_v0`` and ``VectorThirtyOne`` next to peer environments.

``python benchmarks/throughput.py [--seconds S] [--quick]`` prints one markdown
table (the one in docs/benchmarks.md). Every row plays random legal actions
chosen inside the timed loop; peers that are not installed are listed as such
(``pip install -e ".[bench]"`` installs them). The CPU is shared in CI and on
laptops, so compare the ratios measured in one run rather than absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numba
import numpy as np
from numba import njit, prange

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402 (the sibling module, also when run as a script)

import thirtyone_env  # noqa: E402, F401 (registers ThirtyOne-v0)
from thirtyone_env import thirtyone_v0  # noqa: E402
from thirtyone_env.vector import VectorThirtyOne  # noqa: E402

BATCHES = (1, 256, 4096, 16384)
PGX_BATCH = 4096
LEARNER_BATCH = 4096  # make_vec's target batch
SYNC_BATCH = 64  # SyncVectorEnv runs one Python loop per table: its speed hardly depends on the batch
LEARNER_OPPONENTS = "heuristic"


@dataclass
class Row:
    name: str
    api: str
    batch: int | str
    decisions: float | None = None  # per second, over the whole timed period
    best: float | None = None  # decisions per second of the fastest chunk (least disturbed by other load)
    matches: float | None = None  # per second
    note: str = ""


def timed(chunk: peers.Chunk, seconds: float) -> tuple[float, float, float]:
    """Run ``chunk`` untimed for a second (JIT and caches, including kernels that only rarer paths reach,
    such as a serial variant for a few rows), then repeatedly for ``seconds``.

    Returns decisions/s and matches/s over the whole period, and the decisions/s
    of the fastest chunk (on a shared CPU, the one least slowed by other work).
    """
    chunk()
    warm = time.perf_counter()
    while time.perf_counter() - warm < 1.0:
        chunk()
    decisions = matches = 0
    best = 0.0
    start = now = time.perf_counter()
    while now - start < seconds:
        d, m = chunk()
        before, now = now, time.perf_counter()
        decisions += d
        matches += m
        best = max(best, d / (now - before))
    elapsed = now - start
    return decisions / elapsed, matches / elapsed, best


# -- action samplers: one random legal action per table, inside the timed loop --------------
@njit(cache=True)
def _sample_row(row) -> int:
    count = 0
    for a in range(row.shape[0]):
        count += row[a]
    if count == 0:  # a finished episode waiting for its reset: any action is ignored
        return 0
    k = np.random.randint(count)
    for a in range(row.shape[0]):
        if row[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def sample_serial(mask, out):
    for b in range(mask.shape[0]):
        out[b] = _sample_row(mask[b])


@njit(parallel=True, cache=True)
def sample_parallel(mask, out):
    for b in prange(mask.shape[0]):
        out[b] = _sample_row(mask[b])


def vector_chunk(batch: int, players: int, preset: str, observe: bool) -> peers.Chunk:
    vec = VectorThirtyOne(batch, players, preset, seed=0, observe=observe)
    _, mask, _ = vec.reset()
    actions = np.zeros(batch, np.int64)
    sample = sample_parallel if vec.parallel else sample_serial
    steps = max(1, 2048 // batch)

    def chunk() -> tuple[int, int]:
        matches = 0
        for _ in range(steps):
            sample(vec.mask, actions)
            done = vec.step(actions)[4]
            matches += int(done.sum())
        return steps * batch, matches

    return chunk


# -- learner steps: one seat learns, the others are played by an agent ----------------------------
def learner_chunk(env, batch: int) -> peers.Chunk:
    """Random legal learner actions on a Gymnasium vector env (``info["action_mask"]``); counts learner
    steps and finished episodes."""
    _, info = env.reset(seed=0)
    actions = np.zeros(batch, np.int64)
    state = {"mask": info["action_mask"]}
    sample = sample_parallel if batch >= 256 else sample_serial
    steps = max(1, 8192 // batch)

    def chunk() -> tuple[int, int]:
        episodes = 0
        for _ in range(steps):
            sample(state["mask"], actions)
            _, _, terminated, truncated, info = env.step(actions)
            state["mask"] = info["action_mask"]
            episodes += int((terminated | truncated).sum())
        return steps * batch, episodes

    return chunk


def make_vec_chunk(batch: int, players: int, preset: str, opponents: str) -> peers.Chunk:
    env = gymnasium.make_vec("ThirtyOne-v0", num_envs=batch, vectorization_mode="vector_entry_point",
                             preset=preset, num_players=players, opponents=opponents)
    return learner_chunk(env, batch)


def sync_vector_chunk(batch: int, players: int, preset: str, opponents: str) -> peers.Chunk:
    """The path a Gymnasium user had before ``make_vec``: ``SyncVectorEnv`` over ``SingleAgentEnv``."""
    from thirtyone_env.wrappers import SingleAgentEnv

    env = gymnasium.vector.SyncVectorEnv(
        [lambda: SingleAgentEnv(preset, players, opponents=opponents) for _ in range(batch)])
    return learner_chunk(env, batch)


# -- the toy upper bound: draw the top card, throw a random one of four, no rules ---------
@njit(parallel=True, cache=True)
def _toy_steps(hands, stocks, tops, steps):
    for b in prange(hands.shape[0]):
        for _ in range(steps):
            if tops[b] == 0:
                np.random.shuffle(stocks[b])
                tops[b] = stocks.shape[1]
            tops[b] -= 1
            drawn = stocks[b, tops[b]]
            k = np.random.randint(4)
            if k < 3:
                hands[b, k], drawn = drawn, hands[b, k]
            stocks[b, tops[b]] = drawn


def toy_chunk(batch: int) -> peers.Chunk:
    rng = np.random.default_rng(0)
    stocks = np.stack([rng.permutation(52) for _ in range(batch)]).astype(np.int16)
    hands, stocks = stocks[:, :3].copy(), stocks[:, 3:].copy()
    tops = np.full(batch, stocks.shape[1], np.int64)
    steps = max(1, 65536 // batch)

    def chunk() -> tuple[int, int]:
        _toy_steps(hands, stocks, tops, steps)
        return steps * batch, 0  # no matches: it has no rules

    return chunk


# -- JIT compile time in fresh processes ------------------------------------------------------
FIRST_USE = """
import json, time
t0 = time.perf_counter()
from thirtyone_env import thirtyone_v0
from thirtyone_env.vector import VectorThirtyOne
t1 = time.perf_counter()
env = thirtyone_v0.env(num_players={players}, rules={preset!r})
env.reset(seed=0)
for agent in env.agent_iter():
    obs, rew, term, trunc, info = env.last()
    env.step(None if term or trunc else int(obs["action_mask"].argmax()))
vec = VectorThirtyOne(8, {players}, {preset!r}, seed=0)
obs, mask, player = vec.reset()
for _ in range(50):
    vec.step(mask.argmax(1))
vec.state()
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first_use": t2 - t1}}))
"""


def first_use_seconds(cache_dir: str | None, players: int, preset: str) -> dict:
    """Seconds to import and first use our kernels in a new process with ``cache_dir`` as numba's cache."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", FIRST_USE.format(players=players, preset=preset)],
        env=env, capture_output=True, text=True, timeout=900, check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process"] = time.perf_counter() - start
    return result


# -- the table ---------------------------------------------------------------------------------
def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def ratio(ours: Row, peer: Row) -> str:
    if ours.decisions is None or peer.decisions is None:
        return ""
    return f"{ours.decisions / peer.decisions:.1f}x"


def targets(ours_aec: Row, leduc: Row, ours_4096: Row, pgx_row: Row, learner: Row, sync: Row) -> list[str]:
    """The throughput targets (issues 3 and 14), each with its verdict in this run."""

    def verdict(value: float | None, goal: float) -> str:
        return "n/a (peer not installed)" if value is None else ("met" if value >= goal else "NOT met")

    over = lambda a, b: None if a.decisions is None or b.decisions is None else a.decisions / b.decisions
    return [
        f"VectorThirtyOne @4096 with observations >= 5e6 decisions/s: {verdict(ours_4096.decisions, 5e6)}",
        f"VectorThirtyOne @4096 >= 3x pgx leduc_holdem @4096: {verdict(over(ours_4096, pgx_row), 3)}",
        f"thirtyone_v0 AEC >= 3x PettingZoo leduc_holdem_v4: {verdict(over(ours_aec, leduc), 3)}",
        f"make_vec @{LEARNER_BATCH} vs {LEARNER_OPPONENTS} >= 1e6 learner steps/s: {verdict(learner.decisions, 1e6)}",
        f"make_vec @{LEARNER_BATCH} >= 20x SyncVectorEnv(SingleAgentEnv), same opponents: "
        f"{verdict(over(learner, sync), 20)}",
    ]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(rows: list[Row], row: Row, make, seconds: float, dist: str | None = None) -> Row:
    """Fill ``row`` with rates from ``make()``'s chunk, or mark it not installed."""
    if dist is not None and peers.installed(dist) is None:
        row.note = f"not installed (pip install {dist})"
    else:
        try:
            chunk = make()
        except ImportError as err:
            row.note = f"not installed ({err.name})"
        else:
            row.decisions, row.matches, row.best = timed(chunk, seconds)
    rows.append(row)
    print(f"  {row.name:32s} {row.api:34s} {str(row.batch):>6s} {fmt(row.decisions):>14s}/s", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.5, help="timed seconds per row")
    parser.add_argument("--quick", action="store_true", help="0.5 s rows, no 16384 batch, no cold compile")
    parser.add_argument("--players", type=int, default=2, help="seats per table (peers are 2-player)")
    parser.add_argument("--preset", default="scat")
    parser.add_argument("--threads", type=int, default=None, help="numba threads (default: all cores)")
    args = parser.parse_args()
    seconds = 0.5 if args.quick else args.seconds
    batches = BATCHES[:-1] if args.quick else BATCHES
    n, preset = args.players, args.preset
    if args.threads:
        numba.set_num_threads(args.threads)
    random.seed(0)
    np.random.seed(0)

    print("throughput (random legal actions in the timed loop):", flush=True)
    rows: list[Row] = []
    ours_aec = measure(
        rows, Row(f"thirtyone_v0 ({preset}, {n}p)", "AEC env(), agent_iter", 1),
        lambda: peers.aec_episode(thirtyone_v0.env(num_players=n, rules=preset)), seconds,
    )
    leduc_row = Row("PettingZoo leduc_holdem_v4", "AEC env(), agent_iter", 1)
    leduc = measure(rows, leduc_row, peers.leduc_aec, seconds, "rlcard")
    vec_rows = {}
    for observe in (True, False):
        for batch in batches:
            api = "VectorThirtyOne.step" + ("" if observe else " (observe=False)")
            vec_rows[batch, observe] = measure(
                rows, Row(f"VectorThirtyOne ({preset}, {n}p)", api, batch),
                lambda b=batch, o=observe: vector_chunk(b, n, preset, o), seconds,
            )
    pgx_row = measure(
        rows, Row("pgx leduc_holdem (CPU)", "jit(scan(vmap(auto_reset(step))))", PGX_BATCH),
        lambda: peers.pgx_leduc(PGX_BATCH), seconds, "pgx",
    )
    gin = [
        measure(
            rows, Row("OpenSpiel gin_rummy", "pyspiel" + (" + observation_tensor" if o else ""), 1),
            lambda o=o: peers.gin_rummy(o), seconds, "open_spiel",
        )
        for o in (True, False)
    ]
    learner = measure(
        rows, Row(f"make_vec ThirtyOneVectorEnv ({preset}, {n}p)", f"learner steps vs {LEARNER_OPPONENTS}",
                  LEARNER_BATCH),
        lambda: make_vec_chunk(LEARNER_BATCH, n, preset, LEARNER_OPPONENTS), seconds,
    )
    sync = measure(
        rows, Row("SyncVectorEnv(SingleAgentEnv)", f"learner steps vs {LEARNER_OPPONENTS}", SYNC_BATCH),
        lambda: sync_vector_chunk(SYNC_BATCH, n, preset, LEARNER_OPPONENTS), seconds,
    )
    toy_row = Row("toy numba draw/discard (no rules)", "njit prange", 4096)
    toy = measure(rows, toy_row, lambda: toy_chunk(4096), seconds)

    print("JIT: first use of our kernels in a fresh process (one env match, 50 batch steps)", flush=True)
    compile_lines = []
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
        # --quick: only a start with the project's own cache (warm unless the engine changed)
        runs = [("warm (project cache)", None)] if args.quick else [("cold", cache_dir), ("warm", cache_dir)]
        for label, directory in runs:
            r = first_use_seconds(directory, n, preset)
            line = (
                f"{label} cache: first use {r['first_use']:.1f} s, import {r['import']:.1f} s, "
                f"whole process {r['process']:.1f} s"
            )
            compile_lines.append(line)
            print("  " + line, flush=True)

    ours_4096 = vec_rows[PGX_BATCH, True]
    ours_4096.note = f"{ratio(ours_4096, pgx_row)} pgx" if pgx_row.decisions else ""
    ours_aec.note = f"{ratio(ours_aec, leduc)} leduc" if leduc.decisions else ""
    if leduc.decisions:
        leduc.note = f"thirtyone_v0 = {ratio(ours_aec, leduc)}"
    if pgx_row.decisions:
        pgx_row.note = f"VectorThirtyOne @4096 = {ratio(ours_4096, pgx_row)}"
    for g in gin:
        if g.decisions:
            g.note = f"thirtyone_v0 = {ratio(ours_aec, g)}"
    if learner.decisions and sync.decisions:
        learner.note = f"{ratio(learner, sync)} SyncVectorEnv"
        sync.note = f"make_vec = {ratio(learner, sync)}"
    if toy.decisions:
        toy.note = f"VectorThirtyOne @4096 reaches {ours_4096.decisions / toy.decisions:.0%} of it"

    versions = ", ".join(
        f"{d} {peers.installed(d) or 'not installed'}"
        for d in ("numba", "pettingzoo", "rlcard", "open_spiel", "pgx", "jax")
    )
    print()
    print(
        f"Machine: {cpu_name()}, {os.cpu_count()} cores, "
        f"numba threads {numba.get_num_threads()} ({numba.threading_layer()}); "
        f"python {platform.python_version()}; "
        f"{versions}. {seconds:g} s per row. Ours: preset `{preset}`, {n} players, match episodes."
    )
    print()
    print("Learner-step rows count the learner's decisions only (the opponents' moves are inside a step)"
          " and episodes instead of matches.")
    print()
    print("| environment | API | batch | decisions/s | best chunk | matches/s | ratio (decisions/s) |")
    print("|---|---|---:|---:|---:|---:|---|")
    toy.matches = None  # it has no rules, hence no matches
    for r in rows:
        rates = f"{fmt(r.decisions)} | {fmt(r.best)} | {fmt(r.matches)}"
        print(f"| {r.name} | {r.api} | {r.batch} | {rates} | {r.note} |")
    print()
    for line in targets(ours_aec, leduc, ours_4096, pgx_row, learner, sync):
        print(f"- target {line}")
    for line in compile_lines:
        print(f"- JIT, {line}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"- peak memory (maxrss): this process {peak:,.0f} MB, compile subprocesses {child:,.0f} MB")


if __name__ == "__main__":
    main()
