"""Numba options, in one place, for the engine and for agents that compile their own kernels."""

JIT = dict(cache=True, nogil=True)
# the per-decision path: numba does not inline one compiled function into another, and a
# call that passes arrays costs as much as a hand value (the deal and settlement stay calls:
# inlining them too made the parallel drivers take 20 GB to compile)
INLINE = dict(JIT, inline="always")
