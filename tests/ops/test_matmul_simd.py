# SPDX-License-Identifier: GPL-2.0
"""MATMUL at every SIMD level this CPU has (DAVINCI_SIMD steps through
them): the bytes must be identical across levels and equal to the one
summation order NUMERICS.md fixes, for every dtype and transpose."""

import numpy as np
import pytest

import opslib as L
from test_ops import FLOATS, matmul_seq_ref, run_matmul

# ragged edges of every block shape, k beyond the packed panels of the
# avx2 and avx512 levels (4459 and 2451 floats of k): one short row block,
# and groups of row blocks carrying their accumulators across pieces of k
# (the last group and its last block ragged); and the benchmark's size
SHAPES = [(1, 1, 1), (7, 13, 5), (9, 33, 17), (50, 70, 64), (5, 37, 4600),
          (301, 37, 5000), (512, 512, 512)]


def levels():
    """The levels up to the CPU's best, with their names."""
    return list(enumerate(L.SIMD_NAMES[:L.simd_level() + 1]))


def operands(rng, m, n, k, dtype):
    def mat(r, c):
        x = rng.standard_normal((r, c)).astype(np.float32)
        flat = x.reshape(-1)
        if flat.size >= 8:   # NaN, inf, subnormal and signed zeros too
            pick = rng.choice(flat.size, 4, replace=False)
            flat[pick] = [np.nan, -np.inf, 1e-40, -0.0]
        return x if dtype == L.F32 else L.narrow(x, dtype)
    return mat(m, k), mat(k, n)


@pytest.mark.parametrize("dtype", FLOATS)
def test_levels_bit_identical(monkeypatch, dtype):
    rng = np.random.default_rng(20261201)
    for m, n, k in SHAPES:
        if dtype != L.F32 and m * n * k > 1 << 22:
            continue
        a, b = operands(rng, m, n, k, dtype)
        want = L.narrow(matmul_seq_ref(L.widen(a, dtype).reshape(m, k),
                                       L.widen(b, dtype).reshape(k, n)),
                        dtype)
        nan = np.isnan(L.widen(want, dtype).reshape(want.shape))
        for ta, tb in ((False, False), (True, False), (False, True),
                       (True, True)):
            first = None
            for level, name in levels():
                monkeypatch.setenv("DAVINCI_SIMD", name)
                assert L.simd_level() == level
                got = run_matmul(a, b, dtype, ta, tb)
                if first is None:
                    first = got
                    # the order of the contract (NaNs are canonical here)
                    g = L.widen(got, dtype).reshape(got.shape)
                    w = L.widen(want, dtype).reshape(want.shape)
                    assert np.array_equal(np.isnan(g), nan)
                    assert np.array_equal(g[~nan].view(np.uint32),
                                          w[~nan].view(np.uint32)), \
                        (m, n, k, ta, tb, name)
                assert got.tobytes() == first.tobytes(), \
                    "%s differs from %s at %dx%dx%d ta=%s tb=%s" % (
                        name, L.SIMD_NAMES[0], m, n, k, ta, tb)


def test_unknown_level_means_best(monkeypatch):
    monkeypatch.delenv("DAVINCI_SIMD", raising=False)
    best = L.simd_level()
    monkeypatch.setenv("DAVINCI_SIMD", "auto")
    assert L.simd_level() == best
