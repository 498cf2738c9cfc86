"""Response times of the web app's API under concurrent games (docs/web.md quotes the figures).

Starts ``thirtyone serve`` in its own process, then plays ``--games`` whole matches at once from
one asyncio client (each game: create, then action after action until the match is over, a state
read after every action), and prints percentiles of the response times per route.

    python benchmarks/web_api.py --games 50 --preset scat --players 2 --opponents heuristic
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import time

import httpx
import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def one_game(client: httpx.AsyncClient, args: argparse.Namespace, k: int, times: dict[str, list[float]]) -> int:
    rng = random.Random(k)

    async def call(route: str, method: str, url: str, **kwargs) -> dict:
        start = time.perf_counter()
        r = await client.request(method, url, **kwargs)
        times[route].append(time.perf_counter() - start)
        r.raise_for_status()
        return r.json()

    data = await call("POST /api/games", "POST", "/api/games", json={
        "preset": args.preset, "players": args.players, "opponents": args.opponents, "seed": k})
    moves = 0
    while not data["over"]:
        ids = [a["id"] for a in data["legal"]]
        action = 2 if 2 in ids and moves > 8 and rng.random() < 0.3 else rng.choice(ids)
        data = await call("POST /api/games/{id}/action", "POST", f"/api/games/{data['id']}/action",
                          json={"action": action})
        await call("GET /api/games/{id}", "GET", f"/api/games/{data['id']}?since={data['log_size']}")
        moves += 1
    await call("GET /api/games/{id}/replay", "GET", f"/api/games/{data['id']}/replay")
    return moves


async def run(args: argparse.Namespace, base: str) -> None:
    times: dict[str, list[float]] = {r: [] for r in ("POST /api/games", "POST /api/games/{id}/action",
                                                    "GET /api/games/{id}", "GET /api/games/{id}/replay")}
    limits = httpx.Limits(max_connections=args.games)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        start = time.perf_counter()
        moves = await asyncio.gather(*(one_game(client, args, k, times) for k in range(args.games)))
        wall = time.perf_counter() - start
    total = sum(len(v) for v in times.values())
    print(f"{args.games} concurrent games ({args.preset}, {args.players} players vs {args.opponents}), "
          f"{sum(moves)} human moves, {total} requests in {wall:.1f} s ({total / wall:.0f} requests/s), "
          f"{os.cpu_count()} CPUs")
    print(f"{'route':<30} {'n':>6} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for route, values in times.items():
        ms = np.array(values) * 1000
        print(f"{route:<30} {len(ms):>6} {np.percentile(ms, 50):>8.1f} {np.percentile(ms, 90):>8.1f} "
              f"{np.percentile(ms, 99):>8.1f} {ms.max():>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--preset", default="scat")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--opponents", default="heuristic")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", f"from thirtyone_web import serve; serve(port={port}, "
                                                     f"max_games={args.games * 2})"])
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # the first start compiles the engine's kernels
            try:
                httpx.get(base + "/api/meta", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        # warm up: one game compiles the bots' kernels before the clock starts
        asyncio.run(run(argparse.Namespace(**{**vars(args), "games": 1}), base))
        print("--- measured ---")
        asyncio.run(run(args, base))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
