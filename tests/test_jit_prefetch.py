"""``jit.prefetch``: a cache hint compiled to the CPU's prefetch instruction, with no effect on results."""

import numpy as np
from numba import njit

from thirtyone_env.jit import prefetch, prefetch_row


@njit
def _sum_prefetching(a):
    total = 0
    for i in range(a.shape[0]):
        if i + 16 < a.shape[0]:
            prefetch(a, i + 16)
        total += a[i]
    return total


@njit
def _prefetch_rows(a):
    for b in range(a.shape[0]):
        prefetch_row(a[b])


def test_prefetch_compiles_to_a_prefetch_instruction_and_changes_nothing() -> None:
    a = np.arange(1000, dtype=np.int32)
    assert _sum_prefetching(a) == a.sum()
    asm = _sum_prefetching.inspect_asm(_sum_prefetching.signatures[0]).lower()
    assert "prefetch" in asm


def test_prefetch_row_compiles_for_each_row_dtype_and_empty_rows() -> None:
    for dtype in (np.int8, np.bool_, np.int32, np.float32):
        a = (np.arange(3 * 487) % 7).astype(dtype).reshape(3, 487)
        before = a.copy()
        _prefetch_rows(a)
        _prefetch_rows(a[:, :0])  # empty rows: nothing to fetch
        assert np.array_equal(a, before)
