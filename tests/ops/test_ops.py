"""Op kernels (kmod/core/ops*.c, numerics.*) against numpy.

Runs dv_op_validate / dv_op_extent / dv_op_units / dv_op_run of the core
library directly through ctypes, as its dvc_op_* test hooks
(userspace/libdavinci_core/dvc_test.h; opslib.py finds the library).
Tolerances are the ones documented in kmod/core/NUMERICS.md.
"""
import os

import numpy as np
import pytest

import opslib as L
from davinci import _uapi
from opslib import schema
from opslib import (F32, F16, BF16, I32, task, run, validate, extent, units)

if not os.path.exists(L.lib_path()):
    pytest.skip("core library not built: %s" % L.lib_path(),
                allow_module_level=True)

RNG = np.random.default_rng(20261130)
SIZES = [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 127, 128, 129, 1000, 4099,
         65537] + [int(v) for v in RNG.integers(1, 200000, 3)]
FLOATS = [F32, F16, BF16]
EXP_ULP_F32 = 1      # documented bound of dv_expf: measured exhaustively (NUMERICS.md)
LOG_ULP_F32 = 1      # documented bound of dv_logf: measured exhaustively (NUMERICS.md)

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0,
                     1e-40, -1e-40, 3.4e38, -3.4e38, 65504.0, 65520.0,
                     6e-8, 1e-45], np.float32)


def rand_f32(n, specials=True, scale=10.0):
    a = (RNG.standard_normal(n) * scale).astype(np.float32)
    if specials and n >= 4:
        idx = RNG.choice(n, size=min(n // 4, len(SPECIALS)), replace=False)
        a[idx] = SPECIALS[:len(idx)]
    return a


def rand_storage(n, dtype, specials=True, scale=10.0):
    if dtype == I32:
        a = RNG.integers(-2**31, 2**31, size=n, dtype=np.int64).astype(np.int32)
        if n >= 6:
            a[:6] = [0, -1, 1, -2**31, 2**31 - 1, 7]
        return a
    f = rand_f32(n, specials, scale)
    return L.narrow(f, dtype) if dtype != F32 else f


def as_bits(a, dtype):
    return np.ascontiguousarray(a).view(
        {F32: np.uint32, F16: np.uint16, BF16: np.uint16, I32: np.uint32}[dtype])


def assert_exact(got, exp, dtype, zero_sign=True):
    """Bit equality, except that any NaN matches any NaN (and, with
    zero_sign=False, +0 matches -0)."""
    got = np.ascontiguousarray(got)
    exp = np.ascontiguousarray(exp)
    assert got.shape == exp.shape
    if dtype == I32:
        np.testing.assert_array_equal(got, exp)
        return
    gf, ef = L.widen(got, dtype), L.widen(exp, dtype)
    gn, en = np.isnan(gf), np.isnan(ef)
    assert np.array_equal(gn, en), "NaN positions differ at %s" % (
        np.nonzero(gn != en)[0][:10])
    ok = ~gn
    if zero_sign:
        gb, eb = as_bits(got, dtype)[ok], as_bits(exp, dtype)[ok]
        bad = np.nonzero(gb != eb)[0]
    else:
        bad = np.nonzero(gf[ok] != ef[ok])[0]
    assert bad.size == 0, "%d mismatches, first at %d: got %r want %r" % (
        bad.size, bad[0], gf[ok][bad[0]], ef[ok][bad[0]])


def ref_elementwise(op, dtype, a, b, alpha):
    """numpy reference: compute in float32 (wrapping int32), round once."""
    if dtype == I32:
        b = a if b is None else b
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
        with np.errstate(all="ignore"):
            if op == L.OP_ADD:
                return (a64 + b64).astype(np.int32)
            if op == L.OP_SUB:
                return (a64 - b64).astype(np.int32)
            if op == L.OP_MUL:
                return (a.astype(np.uint64) * b.astype(np.uint64)
                        & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
            if op == L.OP_DIV:
                q = np.abs(a64) // np.where(b64 == 0, 1, np.abs(b64))
                q = q * np.sign(a64) * np.sign(b64)
                q = np.where(b64 == 0, 0, q)
                return q.astype(np.int32)   # 2^31 wraps to INT32_MIN
            if op == L.OP_MAX:
                return np.maximum(a, b)
            if op == L.OP_MIN:
                return np.minimum(a, b)
            if op == L.OP_RELU:
                return np.maximum(a, np.int32(0))
        raise ValueError(op)
    x = L.widen(a, dtype)
    y = L.widen(b, dtype) if b is not None else None
    with np.errstate(all="ignore"):
        if op == L.OP_ADD:
            r = x + y
        elif op == L.OP_SUB:
            r = x - y
        elif op == L.OP_MUL:
            r = x * y
        elif op == L.OP_DIV:
            r = x / y
        elif op == L.OP_MAX:
            r = np.maximum(x, y)
        elif op == L.OP_MIN:
            r = np.minimum(x, y)
        elif op == L.OP_RELU:
            r = np.maximum(x, np.float32(0))
        elif op == L.OP_AXPY:
            r = np.float32(alpha) * x + y
        elif op == L.OP_EXP:
            r = np.exp(x.astype(np.float64)).astype(np.float32)
        else:
            raise ValueError(op)
    return L.narrow(r, dtype)


def run_elementwise(op, dtype, a, b, alpha=0.0, chunks=None, dst=None):
    n = a.size
    if dst is None:
        dst = L.empty(n, dtype)
    imm = L.f32_bits(alpha) if op == L.OP_AXPY else 0
    t = task(op, dtype, dst=dst, src0=a,
             src1=None if op in (L.OP_RELU, L.OP_EXP) else b,
             count=n, imm=imm)
    run(t, chunks)
    return dst


def ulp_diff(got, exp, dtype):
    """|ordered-int distance| between two float arrays of a storage type."""
    if dtype == F32:
        g = got.view(np.int32).astype(np.int64)
        e = exp.view(np.int32).astype(np.int64)
        bias = 1 << 31
    else:
        g = np.ascontiguousarray(got).view(np.int16).astype(np.int64)
        e = np.ascontiguousarray(exp).view(np.int16).astype(np.int64)
        bias = 1 << 15
    g = np.where(g < 0, -bias - g, g)
    e = np.where(e < 0, -bias - e, e)
    return np.abs(g - e)


# --- elementwise ------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + [I32])
@pytest.mark.parametrize("op", [L.OP_ADD, L.OP_SUB, L.OP_MUL, L.OP_DIV,
                                L.OP_MAX, L.OP_MIN, L.OP_RELU, L.OP_AXPY])
def test_elementwise_exact(op, dtype):
    if dtype == I32 and op not in L.INT_OK:
        pytest.skip("float only")
    for n in SIZES:
        a = rand_storage(n, dtype)
        b = rand_storage(n, dtype)
        if dtype != I32 and n > 20:
            b[5] = a[5]          # ties
        alpha = float(RNG.standard_normal())
        got = run_elementwise(op, dtype, a, b, alpha)
        exp = ref_elementwise(op, dtype, a, b if op != L.OP_RELU else None,
                              alpha)
        # np.maximum/minimum may pick either zero of a +0/-0 tie
        zs = op not in (L.OP_MAX, L.OP_MIN, L.OP_RELU)
        assert_exact(got, exp, dtype, zero_sign=zs)


def test_int32_div_documented_cases():
    a = np.array([7, -7, 7, -7, 5, -2**31, -2**31, 2**31 - 1, 0, 1],
                 np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 1, -1, 0, 2**31 - 1], np.int32)
    got = run_elementwise(L.OP_DIV, I32, a, b)
    assert got.tolist() == [3, -3, -3, 3, 0, -2**31, -2**31, -(2**31 - 1),
                            0, 0]


def test_int32_wraps():
    a = np.array([2**31 - 1, -2**31, 65536], np.int32)
    b = np.array([1, -1, 65536], np.int32)
    assert run_elementwise(L.OP_ADD, I32, a, b).tolist() == [-2**31, 2**31 - 1,
                                                             131072]
    assert run_elementwise(L.OP_MUL, I32, a, b).tolist() == [2**31 - 1,
                                                             -2**31, 0]


def test_max_min_nan_like_numpy():
    a = np.array([np.nan, 1, np.nan, -np.inf, 0.0, -0.0], np.float32)
    b = np.array([1, np.nan, np.nan, np.inf, -0.0, 0.0], np.float32)
    for op, f in ((L.OP_MAX, np.maximum), (L.OP_MIN, np.minimum)):
        got = run_elementwise(op, F32, a, b)
        exp = f(a, b)
        assert np.array_equal(np.isnan(got), np.isnan(exp))
        assert np.array_equal(got[~np.isnan(got)], exp[~np.isnan(exp)])


def test_axpy_exact_numpy_float32():
    n = 100003
    x, y = rand_f32(n, False), rand_f32(n, False)
    for alpha in (0.0, 1.0, -2.5, 3.14159, 1e-30, float(np.float32(1) / 3)):
        got = run_elementwise(L.OP_AXPY, F32, x, y, alpha)
        exp = np.float32(alpha) * x + y
        assert np.array_equal(got.view(np.uint32), exp.view(np.uint32))


def test_elementwise_large_1m():
    n = 1 << 20
    a, b = rand_f32(n), rand_f32(n)
    for op in (L.OP_ADD, L.OP_MUL, L.OP_DIV, L.OP_MAX):
        assert_exact(run_elementwise(op, F32, a, b),
                     ref_elementwise(op, F32, a, b, 0), F32,
                     zero_sign=op != L.OP_MAX)


@pytest.mark.parametrize("dtype", FLOATS + [I32])
def test_elementwise_in_place(dtype):
    for op in [L.OP_ADD, L.OP_SUB, L.OP_MUL, L.OP_DIV, L.OP_RELU, L.OP_EXP,
               L.OP_AXPY]:
        if dtype == I32 and op not in L.INT_OK:
            continue
        n = 1001
        a = rand_storage(n, dtype)
        b = rand_storage(n, dtype)
        want = run_elementwise(op, dtype, a, b, 1.5)
        for where in ("src0", "src1", "both"):
            if where == "src1" and op in (L.OP_RELU, L.OP_EXP):
                continue
            x, y = a.copy(), b.copy()
            if where == "src0":
                got = run_elementwise(op, dtype, x, y, 1.5, dst=x)
                w = want
            elif where == "src1":
                got = run_elementwise(op, dtype, x, y, 1.5, dst=y)
                w = want
            else:
                got = run_elementwise(op, dtype, x, x, 1.5, dst=x)
                w = run_elementwise(op, dtype, a, a, 1.5)
            assert_exact(got, w, dtype)


# --- exp --------------------------------------------------------------------

def exp_ref32(x):
    with np.errstate(all="ignore"):
        return np.exp(x.astype(np.float64)).astype(np.float32)


def test_exp_specials():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 88.72283,
                  88.72284, 89.0, 100.0, 1e30, -87.33655, -103.2789,
                  -103.98, -104.0, -110.0, -1e30, 1e-30, -1e-30, 1.0],
                 np.float32)
    got = run_elementwise(L.OP_EXP, F32, x, None)
    exp = exp_ref32(x)
    assert np.array_equal(np.isnan(got), np.isnan(exp))
    ok = ~np.isnan(exp)
    assert ulp_diff(got[ok], exp[ok], F32).max() <= EXP_ULP_F32
    assert got[2] == np.inf and got[3] == 0.0 and got[0] == 1.0
    assert got[7] == np.inf and got[9] == np.inf and got[16] == 0.0


def test_exp_dense_sweep_ulp():
    """Every 61st float32 bit pattern in [-104, 89] (plus neighbours of
    powers of two): max ulp error vs float64 exp rounded to float32."""
    pos = np.arange(0, 0x42B20000, 61, dtype=np.uint32)
    neg = np.arange(0x80000000, 0xC2D00001, 61, dtype=np.uint32)
    x = np.concatenate([pos, neg]).view(np.float32)
    got = run_elementwise(L.OP_EXP, F32, x, None)
    err = ulp_diff(got, exp_ref32(x), F32)
    assert err.max() <= EXP_ULP_F32, "max ulp %d at x=%r" % (
        err.max(), x[np.argmax(err)])


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_exp_half(dtype):
    # every float16 / bfloat16 value
    a = np.arange(0, 65536, dtype=np.uint32).astype(np.uint16)
    if dtype == F16:
        a = a.view(np.float16)
    got = run_elementwise(L.OP_EXP, dtype, a, None)
    exp = ref_elementwise(L.OP_EXP, dtype, a, None, 0)
    gf, ef = L.widen(got, dtype), L.widen(exp, dtype)
    assert np.array_equal(np.isnan(gf), np.isnan(ef))
    ok = ~np.isnan(ef)
    # one rounding of a <= 2 ulp float32 result: at most 1 ulp of storage
    assert ulp_diff(np.ascontiguousarray(got)[ok],
                    np.ascontiguousarray(exp)[ok], dtype).max() <= 1


# --- matmul -----------------------------------------------------------------

def matmul_seq_ref(a32, b32):
    """Exactly the documented order: c = 0; c = c + a[:,p] * b[p,:]."""
    m, k = a32.shape
    n = b32.shape[1]
    c = np.zeros((m, n), np.float32)
    for p in range(k):
        c = c + np.outer(a32[:, p], b32[p, :]).astype(np.float32)
    return c


def run_matmul(a, b, dtype, ta=False, tb=False, chunks=None):
    """a, b are op(A)[m,k], op(B)[k,n] in storage type; stores them
    transposed when asked."""
    m, k = a.shape
    n = b.shape[1]
    sa = np.ascontiguousarray(a.T if ta else a)
    sb = np.ascontiguousarray(b.T if tb else b)
    c = np.zeros((m, n), L.NP_STORAGE[dtype])
    flags = (L.F_TRANS_A if ta else 0) | (L.F_TRANS_B if tb else 0)
    t = task(L.OP_MATMUL, dtype, dst=c, src0=sa, src1=sb, m=m, n=n, k=k,
             flags=flags)
    run(t, chunks)
    return c


SHAPES = [(0, 5, 3), (5, 0, 3), (5, 3, 0), (1, 1, 1), (1, 7, 1), (3, 5, 7),
          (4, 8, 16), (5, 9, 17), (13, 31, 29), (64, 64, 64), (33, 70, 130)] + \
    [tuple(int(v) for v in RNG.integers(1, 90, 3)) for _ in range(4)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False),
                                   (False, True), (True, True)])
def test_matmul(dtype, ta, tb):
    for m, n, k in SHAPES:
        a = L.narrow(rand_f32(m * k, False, 1.0).reshape(m, k), dtype) \
            if dtype != F32 else rand_f32(m * k, False, 1.0).reshape(m, k)
        b = L.narrow(rand_f32(k * n, False, 1.0).reshape(k, n), dtype) \
            if dtype != F32 else rand_f32(k * n, False, 1.0).reshape(k, n)
        got = run_matmul(a, b, dtype, ta, tb)
        a32 = L.widen(a, dtype).reshape(m, k)
        b32 = L.widen(b, dtype).reshape(k, n)
        exp32 = matmul_seq_ref(a32, b32)
        # exact: the fixed accumulation order
        assert_exact(got, L.narrow(exp32, dtype), dtype)
        # and within the float32 error bound of the exact product
        ref = a32.astype(np.float64) @ b32.astype(np.float64)
        bound = (np.abs(a32).astype(np.float64) @ np.abs(b32)) * \
            (k * 2.0 ** -24 / (1 - k * 2.0 ** -24))
        err = np.abs(exp32.astype(np.float64) - ref)
        assert np.all(err <= bound + 1e-37)


def test_matmul_512_and_transposes_identical():
    m = n = k = 512
    a = rand_f32(m * k, False, 1.0).reshape(m, k)
    b = rand_f32(k * n, False, 1.0).reshape(k, n)
    base = run_matmul(a, b, F32)
    assert_exact(base, matmul_seq_ref(a, b), F32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.allclose(base, ref, rtol=1e-4, atol=1e-4)
    for ta, tb in ((True, False), (False, True), (True, True)):
        assert_exact(run_matmul(a, b, F32, ta, tb), base, F32)


def test_matmul_chunked():
    m, n, k = 37, 45, 23
    a = rand_f32(m * k, False).reshape(m, k)
    b = rand_f32(k * n, False).reshape(k, n)
    one = run_matmul(a, b, F32)
    for ch in (1, 2, 3, 5, 36):
        assert_exact(run_matmul(a, b, F32, chunks=ch), one, F32)
        assert_exact(run_matmul(a, b, F32, True, True, chunks=ch), one, F32)


# --- softmax / reduce_sum ---------------------------------------------------

def lane_sum_ref(x32):
    """The documented order: 8 lanes (j mod 8), then the fixed tree."""
    m, n = x32.shape
    nb = (n + 7) // 8
    pad = np.zeros((m, nb * 8), np.float32)
    pad[:, :n] = x32
    lanes = np.zeros((m, 8), np.float32)
    for i in range(nb):
        lanes = lanes + pad[:, i * 8:(i + 1) * 8]
    l = lanes
    return ((l[:, 0] + l[:, 1]) + (l[:, 2] + l[:, 3])) + \
        ((l[:, 4] + l[:, 5]) + (l[:, 6] + l[:, 7]))


ROWS = [(0, 5), (3, 0), (1, 1), (1, 7), (2, 8), (3, 9), (5, 17), (7, 100),
        (4, 1000), (2, 4097)] + \
    [(int(RNG.integers(1, 40)), int(RNG.integers(1, 3000))) for _ in range(4)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_reduce_sum(dtype):
    for m, n in ROWS + [(512, 512)]:
        x = rand_storage(m * n, dtype, specials=False).reshape(m, n)
        dst = L.empty(m, dtype)
        t = task(L.OP_REDUCE_SUM, dtype, dst=dst, src0=x, m=m, n=n)
        run(t)
        x32 = L.widen(x, dtype).reshape(m, n)
        exp32 = lane_sum_ref(x32)
        assert_exact(dst, L.narrow(exp32, dtype), dtype)
        # documented tolerance vs float64: (n/8 + 3) eps * sum|x|
        ref = x32.astype(np.float64).sum(axis=1)
        bound = np.abs(x32).astype(np.float64).sum(axis=1) * \
            ((n / 8 + 3) * 2.0 ** -24)
        assert np.all(np.abs(exp32 - ref) <= bound + 1e-37)


def softmax_ref64(x32):
    x = x32.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax(dtype):
    for m, n in ROWS + [(64, 512)]:
        x = rand_storage(m * n, dtype, specials=False, scale=5.0).reshape(m, n)
        dst = np.zeros((m, n), L.NP_STORAGE[dtype])
        t = task(L.OP_SOFTMAX, dtype, dst=dst, src0=x, m=m, n=n)
        run(t)
        if m * n == 0:
            continue
        x32 = L.widen(x, dtype).reshape(m, n)
        got = L.widen(dst, dtype).reshape(m, n).astype(np.float64)
        ref = softmax_ref64(x32)
        # float32: exp <= 2 ulp, lane sum, one division
        rtol = (n / 8 + 8) * 2.0 ** -23
        if dtype == F16:
            rtol += 2.0 ** -11
        elif dtype == BF16:
            rtol += 2.0 ** -8
        tiny = 2.0 ** -126 if dtype != F16 else 2.0 ** -24
        assert np.all(np.abs(got - ref) <= rtol * ref + tiny), dtype
        if dtype == F32:
            assert np.allclose(got.sum(axis=1), 1.0, rtol=1e-5)


# rows of SOFTMAX's and LOG_SOFTMAX's special cases: all equal, huge and
# tiny, -inf elements, NaN, +inf, all -inf
SOFTMAX_SPECIAL_ROWS = np.array(
    [[0, 0, 0, 0], [1000, 0, -1000, 1000], [-np.inf, 0, -np.inf, 1],
     [np.nan, 1, 2, 3], [np.inf, 1, 2, 3], [-np.inf] * 4], np.float32)


def test_softmax_specials():
    x = SOFTMAX_SPECIAL_ROWS
    dst = np.zeros_like(x)
    run(task(L.OP_SOFTMAX, F32, dst=dst, src0=x, m=6, n=4))
    assert np.array_equal(dst[0], [0.25] * 4)
    assert np.array_equal(dst[1], [0.5, 0, 0, 0.5])
    assert dst[2][0] == 0 and dst[2][2] == 0
    assert np.isclose(dst[2][3], 1 / (1 + np.exp(-1)), rtol=1e-6)
    assert np.isnan(dst[3]).all()
    assert np.isnan(dst[4]).any()       # inf - inf
    assert np.isnan(dst[5]).all()       # documented: all -inf row -> NaN


def log_softmax_ref64(x32):
    x = x32.astype(np.float64)
    s = x - x.max(axis=1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_softmax(dtype):
    for m, n in ROWS + [(64, 512)]:
        x = rand_storage(m * n, dtype, specials=False, scale=5.0).reshape(m, n)
        dst = np.zeros((m, n), L.NP_STORAGE[dtype])
        run(task(L.OP_LOG_SOFTMAX, dtype, dst=dst, src0=x, m=m, n=n))
        if m * n == 0:
            continue
        x32 = L.widen(x, dtype).reshape(m, n).astype(np.float64)
        got = L.widen(dst, dtype).reshape(m, n).astype(np.float64)
        ref = log_softmax_ref64(x32)
        # documented bound (NUMERICS.md): the shifted input, log of the
        # lane sum, one subtraction, and one rounding to the storage type
        shift = np.abs(x32 - x32.max(axis=1, keepdims=True))
        ls = np.log(np.exp(-shift).sum(axis=1, keepdims=True))
        bound = (np.abs(ref) + shift + ls + n / 8 + 8) * 2.0 ** -23
        if dtype == F16:
            bound += np.abs(ref) * 2.0 ** -11 + 2.0 ** -24
        elif dtype == BF16:
            bound += np.abs(ref) * 2.0 ** -8
        assert np.all(np.abs(got - ref) <= bound), dtype


def test_log_softmax_specials():
    x = SOFTMAX_SPECIAL_ROWS
    dst = np.zeros_like(x)
    run(task(L.OP_LOG_SOFTMAX, F32, dst=dst, src0=x, m=6, n=4))
    assert np.array_equal(dst[0], np.full(4, -L.logf(np.float32(4))[()]))
    assert dst[1][0] == dst[1][3] == -L.logf(np.float32(2))[()]
    assert dst[2][0] == dst[2][2] == -np.inf
    assert np.isclose(dst[2][3], -np.log1p(np.exp(-1)), rtol=1e-6)
    for row in (3, 4, 5):               # NaN, inf - inf, no finite max
        assert (as_bits(dst[row], F32) == 0x7fc00000).all()


def test_log_specials_and_sample():
    x = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1.0, 2.0,
                  1e-45, 3.4e38], np.float32)
    y = L.logf(x)
    assert as_bits(y[:2], F32).tolist() == [0xff800000] * 2
    assert (as_bits(y[[2, 4, 5]], F32) == 0x7fc00000).all()
    assert y[3] == np.inf and as_bits(y[6:7], F32)[0] == 0
    # a strided sample of every positive float32 (the full sweep:
    # tests/ops/log_ulp_sweep.py); the documented bound holds
    bits = np.arange(1, 0x7f800000, 4099, dtype=np.uint32)
    xs = bits.view(np.float32)
    ref = np.log(xs.astype(np.float64)).astype(np.float32)
    assert ulp_diff(L.logf(xs), ref, F32).max() <= LOG_ULP_F32


@pytest.mark.parametrize("dtype", FLOATS)
def test_sqrt_correctly_rounded(dtype):
    x = rand_storage(4099, dtype)
    dst = np.zeros_like(x)
    run(task(L.OP_SQRT, dtype, dst=dst, src0=x, count=x.size))
    with np.errstate(invalid="ignore"):
        want = np.sqrt(L.widen(x, dtype))        # correctly rounded
    assert_exact(dst, L.narrow(want, dtype) if dtype != F32 else want,
                 dtype)
    nan = np.isnan(L.widen(dst, dtype))
    canon = {F32: 0x7fc00000, F16: 0x7e00, BF16: 0x7fc0}[dtype]
    assert (as_bits(dst, dtype)[nan] == canon).all()


CMP_NP = {L.CMP_EQ: np.equal, L.CMP_NE: np.not_equal, L.CMP_LT: np.less,
          L.CMP_LE: np.less_equal, L.CMP_GT: np.greater,
          L.CMP_GE: np.greater_equal}


@pytest.mark.parametrize("dtype", FLOATS + [I32])
@pytest.mark.parametrize("pred", sorted(CMP_NP))
def test_cmp_exact(dtype, pred):
    a = rand_storage(1000, dtype)
    b = rand_storage(1000, dtype)
    b[::3] = a[::3]                      # ties, -0 vs +0 and NaN pairs too
    dst = np.zeros_like(a)
    run(task(L.OP_CMP, dtype, dst=dst, src0=a, src1=b, count=a.size,
             imm=pred))
    if dtype == I32:
        want = CMP_NP[pred](a, b).astype(np.int32)
    else:
        with np.errstate(invalid="ignore"):
            hit = CMP_NP[pred](L.widen(a, dtype), L.widen(b, dtype))
        one = hit.astype(np.float32)
        want = L.narrow(one, dtype) if dtype != F32 else one
    assert_exact(dst, want, dtype)
    # in place over src1
    run(task(L.OP_CMP, dtype, dst=b, src0=a, src1=b, count=a.size,
             imm=pred))
    assert_exact(b, want, dtype)


def test_rows_chunked():
    m, n = 37, 45
    x = rand_f32(m * n, False).reshape(m, n)
    for op in (L.OP_SOFTMAX, L.OP_LOG_SOFTMAX, L.OP_REDUCE_SUM):
        shape = (m, n) if op != L.OP_REDUCE_SUM else (m,)
        one = np.zeros(shape, np.float32)
        run(task(op, F32, dst=one, src0=x, m=m, n=n))
        for ch in (1, 2, 7):
            d = np.zeros(shape, np.float32)
            run(task(op, F32, dst=d, src0=x, m=m, n=n), chunks=ch)
            assert_exact(d, one, F32)


# --- cast -------------------------------------------------------------------

def cast_ref(x, s, d):
    with np.errstate(all="ignore"):
        return _cast_ref(x, s, d)


def _cast_ref(x, s, d):
    if s == d:
        return x.copy()
    if s == I32:
        if d == F32:
            return x.astype(np.float32)
        if d == F16:
            return x.astype(np.float16)
        return L.f64_to_bf16_int(x.astype(np.float64))
    f = L.widen(x, s)
    if d == I32:
        f64 = f.astype(np.float64)
        with np.errstate(invalid="ignore"):
            r = np.trunc(np.clip(np.nan_to_num(f64, nan=0.0), -2.0 ** 31,
                                 2.0 ** 31 - 1))
        return r.astype(np.int64).astype(np.int32)
    return L.narrow(f, d)


@pytest.mark.parametrize("s", FLOATS + [I32])
@pytest.mark.parametrize("d", FLOATS + [I32])
def test_cast(s, d):
    for n in SIZES:
        if s == I32:
            x = rand_storage(n, I32)
            if n > 40:
                x[20:40] = RNG.integers(-70000, 70000, 20)
                x[0] = 65519
                x[1] = 65520
                x[2] = 2**24 + 1
                x[3] = 2**31 - 1
        else:
            f = np.concatenate([rand_f32(n, True, 1e3)])
            if n > 40:
                f[20:30] = [2.5, -2.5, 2.9999, 1e10, -1e10, 2147483520.0,
                            2147483648.0, -2147483648.0, 65519.99, 1e-6]
            x = L.narrow(f, s) if s != F32 else f
        dst = L.empty(n, d)
        t = task(L.OP_CAST, s, dst=dst, src0=x, count=n, dst_dtype=d)
        run(t, chunks=max(1, n // 3))
        assert_exact(dst, cast_ref(x, s, d), d)


def test_cast_exhaustive_f16_and_bf16():
    allbits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    for s in (F16, BF16):
        x = allbits.view(np.float16) if s == F16 else allbits
        for d in (F32, F16, BF16, I32):
            dst = L.empty(65536, d)
            run(task(L.OP_CAST, s, dst=dst, src0=x, count=65536, dst_dtype=d))
            assert_exact(dst, cast_ref(x, s, d), d)


def test_cast_f32_to_half_sweep():
    x = np.arange(0, 1 << 32, 4093, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    for d in (F16, BF16, I32):
        dst = L.empty(x.size, d)
        run(task(L.OP_CAST, F32, dst=dst, src0=x, count=x.size, dst_dtype=d))
        assert_exact(dst, cast_ref(x, F32, d), d)


# --- elementwise chunking ---------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + [I32])
def test_elementwise_chunked(dtype):
    n = 10007
    a, b = rand_storage(n, dtype), rand_storage(n, dtype)
    for op in L.ELEMENTWISE:
        if dtype == I32 and op not in L.INT_OK:
            continue
        one = run_elementwise(op, dtype, a, b, 0.75)
        for ch in (1, 7, 64, 1000):
            if ch == 1 and op not in (L.OP_ADD, L.OP_EXP):
                continue
            assert_exact(run_elementwise(op, dtype, a, b, 0.75, chunks=ch),
                         one, dtype)


def test_units_and_chunks():
    t = task(L.OP_ADD, count=1 << 20, dst=None)
    assert units(t) == 1 << 20
    assert 1 <= L.chunk_units(t) <= 1 << 20
    t = task(L.OP_MATMUL, m=512, n=512, k=512)
    assert units(t) == 512
    ch = L.chunk_units(t)
    assert 8 <= ch <= 512 and ch % 8 == 0 and 2 * ch * 512 * 512 <= 64 << 20
    t = task(L.OP_SOFTMAX, m=10, n=0)
    assert L.chunk_units(t) >= 1
    t = task(L.OP_MATMUL, m=3, n=0, k=0)
    assert L.chunk_units(t) >= 1


def test_run_clamps_range():
    a = np.ones(10, np.float32)
    d = np.zeros(10, np.float32)
    t = task(L.OP_ADD, F32, dst=d, src0=a, src1=a, count=10)
    L.run_raw(t, 5, 1000)
    L.run_raw(t, 7, 3)
    assert d.tolist() == [0] * 5 + [2] * 5


# --- validation and extents -------------------------------------------------

def good_tasks():
    A = 0x100000000
    yield task(L.OP_ADD, F32, count=10), "add"
    yield task(L.OP_RELU, I32, count=10), "relu"
    yield task(L.OP_AXPY, BF16, count=10, imm=L.f32_bits(2.0)), "axpy"
    yield task(L.OP_MATMUL, F16, m=2, n=3, k=4,
               flags=L.F_TRANS_A | L.F_TRANS_B | L.F_NOTIFY), "matmul"
    yield task(L.OP_SOFTMAX, F32, m=2, n=3), "softmax"
    yield task(L.OP_REDUCE_SUM, BF16, m=2, n=3), "reduce"
    yield task(L.OP_CAST, I32, count=3, dst_dtype=BF16), "cast"
    yield task(L.OP_LOG_SOFTMAX, F16, m=2, n=3), "log_softmax"
    yield task(L.OP_SQRT, BF16, count=3), "sqrt"
    yield task(L.OP_CMP, I32, count=3, imm=L.CMP_GE), "cmp"
    del A


def test_validate_accepts():
    for t, name in good_tasks():
        t.dst, t.src0 = 0x100000000, 0x100100000
        if t.opcode in (L.OP_ADD, L.OP_AXPY, L.OP_MATMUL, L.OP_CMP):
            t.src1 = 0x100200000
        t.user_data = 12345
        assert validate(t) == 0, name


def bad_tasks():
    yield "opcode nop", task(L.OP_NOP)
    yield "opcode count", task(L.OP_COUNT, count=1)
    yield "opcode huge", task(0xFFFF, count=1)
    yield "dtype", task(L.OP_ADD, _uapi.DAVINCI_DTYPE_COUNT, count=1)
    yield "bool add", task(L.OP_ADD, _uapi.DAVINCI_DTYPE_BOOL, count=1)
    yield "int64 exp", task(L.OP_EXP, _uapi.DAVINCI_DTYPE_INT64, count=1)
    yield "cmp to int8", task(L.OP_CMP, F32, count=1,
                              dst_dtype=_uapi.DAVINCI_DTYPE_INT8)
    yield "dtype 255", task(L.OP_ADD, 255, count=1)
    for op in (L.OP_EXP, L.OP_AXPY, L.OP_SOFTMAX, L.OP_MATMUL,
               L.OP_REDUCE_SUM):
        yield "int32 %d" % op, task(op, I32, count=1 if op < 15 else 0,
                                    m=1 if op >= 15 else 0,
                                    n=1 if op >= 15 else 0,
                                    k=1 if op == 15 else 0)
    yield "dst_dtype on add", task(L.OP_ADD, F32, count=1, dst_dtype=1)
    yield "cast dst_dtype", task(L.OP_CAST, F32, count=1,
                                 dst_dtype=_uapi.DAVINCI_DTYPE_COUNT)
    yield "trans on add", task(L.OP_ADD, count=1, flags=L.F_TRANS_A)
    yield "trans on softmax", task(L.OP_SOFTMAX, m=1, n=1, flags=L.F_TRANS_B)
    yield "unknown flag", task(L.OP_MATMUL, m=1, n=1, k=1, flags=8)
    yield "flag 31", task(L.OP_ADD, count=1, flags=1 << 31)
    yield "m on add", task(L.OP_ADD, count=1, m=1)
    yield "k on softmax", task(L.OP_SOFTMAX, m=1, n=1, k=1)
    yield "count on matmul", task(L.OP_MATMUL, m=1, n=1, k=1, count=1)
    yield "imm on add", task(L.OP_ADD, count=1, imm=1)
    yield "imm on matmul", task(L.OP_MATMUL, m=1, n=1, k=1, imm=1)
    yield "src1 on relu", task(L.OP_RELU, count=1)
    yield "src1 on cast", task(L.OP_CAST, count=1)
    yield "src1 on softmax", task(L.OP_SOFTMAX, m=1, n=1)
    yield "m on cast", task(L.OP_CAST, count=1, n=2)
    yield "int32 log_softmax", task(L.OP_LOG_SOFTMAX, I32, m=1, n=1)
    yield "int32 sqrt", task(L.OP_SQRT, I32, count=1)
    yield "src1 on sqrt", task(L.OP_SQRT, count=1)
    yield "cmp predicate", task(L.OP_CMP, count=1, imm=6)
    t = task(L.OP_ADD, count=1)
    t.pad0 = 1
    yield "pad0", t
    t = task(L.OP_ADD, count=1)
    t.event_id = 1
    yield "event_id", t
    for field in ("params", "params_size", "params_version"):
        t = task(L.OP_ADD, count=1)     # ADD takes no parameter block
        setattr(t, field, 8)
        yield field, t
    for op in (L.OP_ADD, L.OP_RELU):    # kinds without a third operand
        t = task(op, count=1)
        t.src2 = 0x100200000
        yield "src2 on opcode %d" % op, t
    for i in range(len(task(L.OP_ADD).reserved)):
        t = task(L.OP_ADD, count=1)
        t.reserved[i] = 1 << 63
        yield "reserved %d" % i, t


def test_validate_rejects():
    for name, t in bad_tasks():
        if name.startswith("src1 on"):
            t.src1 = 0x100200000
        assert validate(t) == -22, name


def test_is_compute():
    """The ops with a kernel in the schema, and no other opcode."""
    for op in range(0, L.OP_COUNT + 2):
        opdef = schema.by_opcode(op)
        assert L.lib().dvc_op_is_compute(op) == \
            (opdef is not None and opdef.compute), op


BASE = 0x100000000


def test_extent_sizes():
    rc, e = extent(task(L.OP_ADD, F16, count=10))
    assert rc == 0 and e == (20, 20, 20, 0)
    rc, e = extent(task(L.OP_EXP, BF16, count=10))
    assert rc == 0 and e == (20, 20, 0, 0)
    t = task(L.OP_MATMUL, F32, m=2, n=3, k=5)
    t.dst, t.src0, t.src1 = BASE, BASE + 4096, BASE + 8192
    rc, e = extent(t)
    assert rc == 0 and e == (24, 40, 60, 0)
    t = task(L.OP_REDUCE_SUM, F16, m=7, n=9)
    t.dst, t.src0 = BASE, BASE + 4096
    assert extent(t) == (0, (14, 126, 0, 0))
    t = task(L.OP_CAST, I32, count=6, dst_dtype=F16)
    t.dst, t.src0 = BASE, BASE + 4096
    assert extent(t) == (0, (12, 24, 0, 0))


def test_extent_overflow():
    assert extent(task(L.OP_ADD, F32, count=1 << 62))[0] == -22
    assert extent(task(L.OP_ADD, F16, count=(1 << 63)))[0] == -22
    assert extent(task(L.OP_ADD, F16, count=(1 << 62)))[0] == 0
    assert extent(task(L.OP_CAST, F16, count=(1 << 62), dst_dtype=F32))[0] \
        == -22
    t = task(L.OP_MATMUL, F32, m=0xFFFFFFFF, n=0xFFFFFFFF, k=1)
    t.src0, t.src1 = BASE, BASE
    assert extent(t)[0] == -22
    # a range that wraps around the address space
    t = task(L.OP_ADD, F32, count=16)
    t.dst = (1 << 64) - 32
    assert extent(t)[0] == -22


def test_extent_overlap():
    def ew(dst, s0, s1, n=16, op=L.OP_ADD):
        t = task(op, F32, count=n)
        t.dst, t.src0, t.src1 = dst, s0, s1
        return extent(t)[0]
    assert ew(BASE, BASE, BASE) == 0                 # in place, all three
    assert ew(BASE, BASE + 64, BASE) == 0            # disjoint / exact
    assert ew(BASE, BASE + 4, BASE + 1000) == -22    # partial overlap
    assert ew(BASE + 4, BASE, BASE + 1000) == -22
    assert ew(BASE, BASE + 1000, BASE + 60) == -22
    for op, kw, oplen in ((L.OP_SOFTMAX, dict(m=2, n=2), 16),
                          (L.OP_REDUCE_SUM, dict(m=2, n=2), 8),
                          (L.OP_CAST, dict(count=4, dst_dtype=I32), 16)):
        t = task(op, F32, **kw)
        t.dst, t.src0 = BASE, BASE
        assert extent(t)[0] == -22, op
        t.src0 = BASE + oplen
        assert extent(t)[0] == 0, op
        t.src0 = BASE + oplen - 4
        assert extent(t)[0] == -22, op
    t = task(L.OP_MATMUL, F32, m=2, n=2, k=2)
    t.dst, t.src0, t.src1 = BASE, BASE + 16, BASE + 32
    assert extent(t)[0] == 0
    t.src1 = BASE + 12
    assert extent(t)[0] == -22
    t.src1 = BASE + 32
    t.src0 = BASE
    assert extent(t)[0] == -22


# --- NaN results are canonical (bit-identical across builds) ----------------

CANON = {F32: 0x7FC00000, F16: 0x7E00, BF16: 0x7FC0}


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_results_canonical(dtype):
    """Which NaN payload an SSE op propagates depends on operand order, which
    compilers commute freely; the kernels return one canonical quiet NaN."""
    n = 4096
    bits = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    bits[::3] |= 0x7F800001        # many NaNs with random payloads and signs
    if dtype == F32:
        a = bits.view(np.float32)
    elif dtype == BF16:
        a = (bits >> 16).astype(np.uint16)
    else:
        h = (bits & 0xFFFF).astype(np.uint16)
        h[::3] |= 0x7C01                # float16 NaNs
        a = h.view(np.float16)
    b = np.roll(a, 1)

    def check(out):
        ob = as_bits(np.ascontiguousarray(out).reshape(-1), dtype)
        isn = np.isnan(L.widen(np.ascontiguousarray(out).reshape(-1), dtype))
        assert isn.any()
        assert np.all(ob[isn] == CANON[dtype])
    for op in (L.OP_ADD, L.OP_SUB, L.OP_MUL, L.OP_DIV, L.OP_MAX, L.OP_MIN,
               L.OP_RELU, L.OP_EXP, L.OP_AXPY):
        check(run_elementwise(op, dtype, a, b, 1.5))
    m, k = 64, 64
    c = np.zeros((m, m), L.NP_STORAGE[dtype])
    run(task(L.OP_MATMUL, dtype, dst=c, src0=a[:m * k], src1=b[:m * k],
             m=m, n=m, k=k))
    check(c)
    d = np.zeros(n, L.NP_STORAGE[dtype])
    run(task(L.OP_SOFTMAX, dtype, dst=d, src0=a, m=64, n=64))
    check(d)
    r = np.zeros(64, L.NP_STORAGE[dtype])
    run(task(L.OP_REDUCE_SUM, dtype, dst=r, src0=a, m=64, n=64))
    check(r)


def test_argsort_keeps_one_to_n_of_each_row():
    """ARGSORT's dst is m x k int64 indices of m rows of n: k of 0 or
    more than n is refused, as is an order the enum lacks."""
    def sort(k, n=10, imm=0):
        t = task(L.OP_ARGSORT, F16, m=3, n=n, k=k, imm=imm)
        t.dst, t.src0 = BASE, BASE + 4096
        return t
    assert extent(sort(4)) == (0, (3 * 4 * 8, 3 * 10 * 2, 0, 0))
    assert extent(sort(10)) == (0, (3 * 10 * 8, 3 * 10 * 2, 0, 0))
    assert extent(sort(0))[0] == -22
    assert extent(sort(11))[0] == -22
    assert extent(sort(1, n=0))[0] == -22
    assert validate(sort(4, imm=1)) == 0
    assert validate(sort(4, imm=2)) == -22
