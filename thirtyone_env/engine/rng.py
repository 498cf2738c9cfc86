"""The game RNG: xorshift128 on four 32-bit words held in int64, the same on every platform and
thread count. Each table owns one ``int64[4]`` state; ``seed_rng`` derives it from a seed."""

from __future__ import annotations

import numpy as np
from numba import njit

from thirtyone_env.jit import INLINE, JIT


@njit(**INLINE)
def rand_u32(rng):
    """The next 32-bit word (no overflow: every intermediate stays below 2**63)."""
    mask = 0xFFFFFFFF
    t = rng[3]
    s = rng[0]
    rng[3] = rng[2]
    rng[2] = rng[1]
    rng[1] = s
    t ^= (t << 11) & mask
    t ^= t >> 8
    t = t ^ s ^ (s >> 19)
    rng[0] = t & mask
    return rng[0]


@njit(**INLINE)
def rand_below(rng, n):
    """A uniform integer in 0..n-1 (multiply-shift: no modulo bias worth the name for n <= 52)."""
    return (rand_u32(rng) * n) >> 32


@njit(**JIT)
def shuffle(rng, a, n):
    """Fisher-Yates over ``a[:n]``."""
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp


def seed_rng(seed: int | None, stream: int = 0) -> np.ndarray:
    """A fresh int64[4] xorshift128 state from a seed (None = OS entropy) and a stream index."""
    words = np.random.SeedSequence(seed, spawn_key=(stream,)).generate_state(4, np.uint32)
    words = words.astype(np.int64)
    if not words.any():
        words[0] = 1
    return words
