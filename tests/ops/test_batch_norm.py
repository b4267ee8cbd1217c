"""The batch norm ops (BN_TRAINING_REDUCE, _UPDATE, _UPDATE_GRAD,
_REDUCE_GRAD) in the core, through ctypes, against numpy in float64 with
NUMERICS.md's bounds (batch norm): shapes with one image, one channel,
one element per image, float16 and bfloat16 inputs (widened exactly,
summed in float32), no weight or bias, any chunking the same bytes."""
import ctypes
import os

import numpy as np
import pytest

import opslib as L
from opslib import F32, F16, BF16, task, validate, extent

if not os.path.exists(L.lib_path()):
    pytest.skip("core library not built: %s" % L.lib_path(),
                allow_module_level=True)

U = 2.0 ** -24
SHAPES = [(4, 3, 7, 5), (1, 3, 4, 4), (5, 1, 9), (6, 4, 1), (2, 5),
          (16, 8, 64)]


@pytest.fixture
def rng():
    return np.random.default_rng(20261204)


class Block(ctypes.Structure):
    _fields_ = [("eps", ctypes.c_uint32), ("momentum", ctypes.c_uint32)]


def _store(x, dt):
    """(storage array, float64 values) of float32 ``x`` in dtype ``dt``."""
    if dt == F16:
        s = x.astype(np.float16)
        return s, s.astype(np.float64)
    if dt == BF16:
        s = L.f32_to_bf16(x)
        return s, L.bf16_to_f32(s).astype(np.float64)
    s = np.ascontiguousarray(x, np.float32)
    return s, s.astype(np.float64)


def _run(op, dt, shape, dst, s0, s1=None, s2=None, block=None, chunks=None):
    n, c = shape[0], shape[1]
    hw = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    t = task(op, dt, dst=dst, src0=s0, src1=s1, m=n, n=c, k=hw)
    t.src2 = L.addr(s2)
    params = None
    if block is not None:
        params = ctypes.addressof(block)
        t.params = params
        t.params_size = ctypes.sizeof(block)
        t.params_version = 1
    assert validate(t) == 0
    e = L.Extent()
    assert L.lib().dvc_op_extent(ctypes.byref(t), params, ctypes.byref(e)) \
        == 0
    ptrs = [a if sz else None for a, sz in
            zip((t.dst, t.src0, t.src1, t.src2), (e.dst, e.src0, e.src1,
                                                  e.src2))]
    units = L.units(t)
    assert units == c
    step = chunks or units
    for b in range(0, units, step):
        L.lib().dvc_op_run(ctypes.byref(t), params, *ptrs, b,
                           min(units, b + step))


def _chan(a):
    """[N, C, ...] -> [C, M] float64."""
    n, c = a.shape[0], a.shape[1]
    return np.moveaxis(a.reshape(n, c, -1), 1, 0).reshape(c, -1)


def _stats(x, dt, w=None, b=None, eps=1e-5, mom=0.1, chunks=None):
    xs, x64 = _store(x, dt)
    c = x.shape[1]
    dst = np.full((6, c), np.nan, np.float32)
    _run(L.OP_BN_TRAINING_REDUCE, dt, x.shape, dst, xs, w, b,
         Block(L.f32_bits(eps), L.f32_bits(mom)), chunks)
    return dst, xs, x64


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_statistics_and_output_against_float64(rng, dt, shape):
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    c = shape[1]
    w = rng.standard_normal(c).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    st, xs, x64 = _stats(x, dt, w, b, eps=1e-3, mom=0.25)
    rows = _chan(x64)
    m = rows.shape[1]
    mean = rows.mean(1)
    var = ((rows - mean[:, None]) ** 2).mean(1)
    inv = 1 / np.sqrt(var + np.float32(1e-3))
    bound = (m / 8 + 8) * U
    assert np.all(np.abs(st[0] - mean) <= bound * np.abs(rows).max(1))
    vgot = 1 / st[1].astype(np.float64) ** 2 - np.float32(1e-3)
    vtol = bound * ((rows - mean[:, None]) ** 2).max(1) + \
        8 * U * (var + 1e-3)
    assert np.all(np.abs(vgot - var) <= vtol + 1e-12)
    assert np.allclose(st[2], inv * w, rtol=1e-5)
    assert np.allclose(st[3], b - mean * inv * w, rtol=1e-5, atol=1e-5)
    assert np.allclose(st[4], 0.25 * mean, rtol=1e-5, atol=1e-6)
    if m > 1:
        assert np.allclose(st[5], 0.25 * var * m / (m - 1), rtol=1e-5)
    else:
        assert np.isnan(st[5]).all()
    # the output: x * alpha + beta, rounded once to the dtype
    coeffs = np.ascontiguousarray(st[2:4])
    y = np.empty_like(xs)
    _run(L.OP_BN_TRAINING_UPDATE, dt, shape, y, xs, coeffs)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    want = x64 * coeffs[0].reshape(bshape) + coeffs[1].reshape(bshape)
    got = _store(y.astype(np.float32), F32)[1] if dt == F32 else (
        y.astype(np.float64) if dt == F16 else
        L.bf16_to_f32(y).astype(np.float64))
    rel = {F32: 4 * U, F16: 2.0 ** -10, BF16: 2.0 ** -7}[dt]
    assert np.all(np.abs(got - want) <= rel * (np.abs(want) + np.abs(
        coeffs[1]).reshape(bshape)) + 1e-30)
    # in place: the same bytes
    z = xs.copy()
    _run(L.OP_BN_TRAINING_UPDATE, dt, shape, z, z, coeffs)
    assert z.tobytes() == y.tobytes()


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gradients_against_float64(rng, dt, shape):
    x = (rng.standard_normal(shape) * 2 - 1).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    c = shape[1]
    w = rng.standard_normal(c).astype(np.float32)
    st, xs, x64 = _stats(x, dt, w)
    dys, dy64 = _store(dy, dt)
    stats = np.ascontiguousarray(st[:2])
    g4 = np.empty((4, c), np.float32)
    _run(L.OP_BN_TRAINING_UPDATE_GRAD, dt, shape, g4, dys, xs, stats)
    assert g4[2:].tobytes() == stats.tobytes()   # copied for dx's rows
    g = g4[:2]
    rows, drows = _chan(x64), _chan(dy64)
    m = rows.shape[1]
    mean, inv = st[0].astype(np.float64), st[1].astype(np.float64)
    cen = rows - mean[:, None]
    bound = (m / 8 + 8) * U
    assert np.all(np.abs(g[1] - drows.sum(1)) <=
                  bound * np.abs(drows).sum(1) + 1e-30)
    gw = (cen * drows).sum(1) * inv
    assert np.all(np.abs(g[0] - gw) <=
                  bound * (np.abs(cen * drows).sum(1) * inv) + 1e-30)
    packed = np.ascontiguousarray(np.concatenate([g4, w[None]]), np.float32)
    dx = np.empty_like(xs)
    _run(L.OP_BN_TRAINING_REDUCE_GRAD, dt, shape, dx, dys, xs, packed)
    k = g[0].astype(np.float64) * inv / m
    gm = g[1].astype(np.float64) / m
    scale = inv * w
    want = ((drows - gm[:, None]) - cen * k[:, None]) * scale[:, None]
    got = _chan(dx.astype(np.float64) if dt == F16 else (
        L.bf16_to_f32(dx).astype(np.float64) if dt == BF16 else
        dx.astype(np.float64)))
    rel = {F32: 0, F16: 2.0 ** -11, BF16: 2.0 ** -8}[dt]
    mag = np.abs(scale)[:, None] * (np.abs(drows) + np.abs(gm)[:, None] +
                                    np.abs(cen) * np.abs(k)[:, None])
    assert np.all(np.abs(got - want) <=
                  (m / 8 + 16) * U * mag + rel * np.abs(want) + 1e-30)


def test_no_weight_or_bias_and_any_chunking(rng):
    shape = (3, 7, 11)
    x = rng.standard_normal(shape).astype(np.float32)
    w = np.ones(7, np.float32)
    b = np.zeros(7, np.float32)
    a, _, _ = _stats(x, F32)
    d, _, _ = _stats(x, F32, w, b)
    assert a.tobytes() == d.tobytes()       # 1 * invstd, 0 - mean * alpha
    for chunks in (1, 2, 3):
        assert _stats(x, F32, chunks=chunks)[0].tobytes() == a.tobytes()
    dy = rng.standard_normal(shape).astype(np.float32)
    outs = []
    for chunks in (1, 4, 7):
        g = np.empty((4, 7), np.float32)
        _run(L.OP_BN_TRAINING_UPDATE_GRAD, F32, shape, g, dy, x,
             np.ascontiguousarray(a[:2]), chunks=chunks)
        outs.append(g.tobytes())
    assert len(set(outs)) == 1


def test_one_element_a_channel_gives_nan_unbiased_variance():
    x = np.array([[1.5, -2.0]], np.float32)         # N = 1, C = 2, HW = 1
    st, _, _ = _stats(x, F32, eps=0.25)
    assert list(st[0]) == [1.5, -2.0] and list(st[1]) == [2.0, 2.0]
    assert np.isnan(st[5]).all()
    assert st[4].tolist() == np.float32([1.5, -2.0]).__mul__(
        np.float32(0.1)).tolist()


def test_descriptors_refused():
    x = np.zeros((2, 3, 4), np.float32)
    t = task(L.OP_BN_TRAINING_UPDATE_GRAD, F32, dst=x, src0=x, src1=x, m=2,
             n=3, k=0)
    t.src2 = x.ctypes.data
    assert extent(t)[0] != 0                     # no element per image
    t = task(L.OP_BN_TRAINING_UPDATE, F32, dst=x, src0=x, src1=x, m=2, n=3,
             k=4, count=1)
    assert validate(t) != 0                      # count unused
