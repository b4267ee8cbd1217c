# SPDX-License-Identifier: GPL-2.0
"""Every op against numpy: bit-exact where the device is exact (elementwise
arithmetic rounds once from float32; integer-valued matmul and reduce_sum),
within documented tolerances elsewhere (exp, softmax, float sums). Bad
shapes and dtypes raise before anything is submitted."""

import numpy as np
import pytest

import davinci
from davinci import ops

from . import _ref as R

FLOATS = ["float32", "float16", "bfloat16"]
ALL = FLOATS + ["int32"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]


def upload(dev, raw, dtype):
    return davinci.DeviceTensor.from_numpy(dev, raw, dtype)


def assert_bits_equal(got, want):
    got = np.ascontiguousarray(got)
    want = np.ascontiguousarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        raise AssertionError("%d of %d elements differ, first at %d: %r != %r"
                             % (bad.size, got.size, bad[0],
                                got.reshape(-1)[bad[0]],
                                want.reshape(-1)[bad[0]]))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY)
def test_binary_exact(dev, rng, name, dtype):
    shape = (37, 129)
    a = R.random(rng, shape, dtype)
    b = R.random(rng, shape, dtype)
    if name == "div":
        if dtype == "int32":
            b[b == 0] = 3
        else:
            b = R.from_f32(np.where(np.abs(R.to_f32(b, dtype)) < 0.5, 1.5,
                                    R.to_f32(b, dtype)), dtype)
    ta, tb = upload(dev, a, dtype), upload(dev, b, dtype)
    out = getattr(ops, name)(ta, tb)
    assert out.shape == shape and out.dtype == dtype
    assert_bits_equal(out.numpy(raw=True), R.binary(name, a, b, dtype))


def test_int32_wraps_and_divides_like_c(dev):
    a = np.array([2**31 - 1, -7, 7, -7, 5, -2**31], np.int32)
    b = np.array([1, 2, -2, -2, 0, -1], np.int32)
    ta, tb = dev.tensor(a), dev.tensor(b)
    assert ops.add(ta, tb).numpy()[0] == -2**31
    np.testing.assert_array_equal(ops.div(ta, tb).numpy(),
                                  [2**31 - 1, -3, -3, 3, 0, -2**31])


@pytest.mark.parametrize("dtype", ALL)
def test_relu_exact(dev, rng, dtype):
    a = R.random(rng, (1000,), dtype)
    assert_bits_equal(ops.relu(upload(dev, a, dtype)).numpy(raw=True),
                      R.relu(a, dtype))


@pytest.mark.parametrize("dtype", ALL)
def test_relu_grad_exact(dev, rng, dtype):
    g = R.random(rng, (1000,), dtype)
    x = R.random(rng, (1000,), dtype)
    x[:4] = R.from_f32(np.array([0.0, -0.0, np.inf, -np.inf]), dtype) \
        if dtype != "int32" else [0, -1, 1, 2**31 - 1]
    want = np.where(R.to_f32(x, dtype) <= 0, np.zeros_like(g), g)
    got = ops.relu_grad(upload(dev, g, dtype), upload(dev, x, dtype))
    assert_bits_equal(got.numpy(raw=True), want)


@pytest.mark.parametrize("dtype", FLOATS)
def test_axpy_exact(dev, rng, dtype):
    x = R.random(rng, (3, 500), dtype)
    y = R.random(rng, (3, 500), dtype)
    out = ops.axpy(-1.75, upload(dev, x, dtype), upload(dev, y, dtype))
    assert_bits_equal(out.numpy(raw=True), R.axpy(-1.75, x, y, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp(dev, rng, dtype):
    x = R.random(rng, (4096,), dtype, -20, 20)
    got = R.to_f32(ops.exp(upload(dev, x, dtype)).numpy(raw=True), dtype)
    with np.errstate(over="ignore"):
        want = np.exp(R.to_f32(x, dtype).astype(np.float64))
        # the result rounded to the storage type (float16 overflows to inf)
        want = R.to_f32(R.from_f32(want.astype(np.float32), dtype), dtype)
    rtol = {"float32": 4e-7, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


def test_exp_special_values(dev):
    x = np.array([0.0, -np.inf, np.inf, np.nan, 100.0, -200.0], np.float32)
    got = ops.exp(dev.tensor(x)).numpy()
    assert got[0] == 1.0 and got[1] == 0.0 and got[2] == np.inf
    assert np.isnan(got[3]) and got[4] == np.inf and got[5] == 0.0


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False),
                                   (False, True), (True, True)])
def test_matmul_exact_integer_valued(dev, rng, dtype, ta, tb):
    m, k, n = 33, 70, 17
    a = R.random(rng, (k, m) if ta else (m, k), dtype, -8, 8, True)
    b = R.random(rng, (n, k) if tb else (k, n), dtype, -8, 8, True)
    A = R.to_f32(a, dtype).astype(np.float64)
    B = R.to_f32(b, dtype).astype(np.float64)
    want = (A.T if ta else A) @ (B.T if tb else B)
    out = ops.matmul(upload(dev, a, dtype), upload(dev, b, dtype),
                     transpose_a=ta, transpose_b=tb)
    assert out.shape == (m, n)
    assert_bits_equal(out.numpy(raw=True),
                      R.from_f32(want.astype(np.float32), dtype))


def test_matmul_float32_random(dev, rng):
    a = rng.standard_normal((64, 200)).astype(np.float32)
    b = rng.standard_normal((200, 48)).astype(np.float32)
    got = ops.matmul(dev.tensor(a), dev.tensor(b)).numpy()
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax(dev, rng, dtype):
    x = R.random(rng, (17, 300), dtype, -10, 10)
    got = R.to_f32(ops.softmax(upload(dev, x, dtype)).numpy(raw=True), dtype)
    xf = R.to_f32(x, dtype).astype(np.float64)
    e = np.exp(xf - xf.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    atol = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=atol * 30)


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_softmax(dev, rng, dtype):
    x = R.random(rng, (17, 300), dtype, -10, 10)
    got = R.to_f32(ops.log_softmax(upload(dev, x, dtype)).numpy(raw=True),
                   dtype)
    xf = R.to_f32(x, dtype).astype(np.float64)
    s = xf - xf.max(axis=1, keepdims=True)
    want = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    rtol = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sqrt_exact(dev, rng, dtype):
    x = R.random(rng, (1000,), dtype, 0, 100)
    got = ops.sqrt(upload(dev, x, dtype)).numpy(raw=True)
    want = R.from_f32(np.sqrt(R.to_f32(x, dtype)), dtype)
    assert_bits_equal(got, want)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("pred", sorted(ops.CMP_PREDICATES))
def test_compare_exact(dev, rng, dtype, pred):
    a = R.random(rng, (1000,), dtype)
    b = R.random(rng, (1000,), dtype)
    b[::4] = a[::4]
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less,
          "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
    hit = fn[pred](R.to_f32(a, dtype), R.to_f32(b, dtype)) \
        if dtype != "int32" else fn[pred](a, b)
    want = hit.astype(np.int32) if dtype == "int32" else \
        R.from_f32(hit.astype(np.float32), dtype)
    got = ops.compare(pred, upload(dev, a, dtype), upload(dev, b, dtype))
    assert_bits_equal(got.numpy(raw=True), want)


def test_compare_refuses_unknown_predicate(dev):
    a = dev.tensor(np.zeros(4, np.float32))
    with pytest.raises(davinci.InvalidArgumentError, match="predicate"):
        ops.compare("approx", a, a)


def test_softmax_nd_and_large_values(dev):
    x = np.array([[[1000.0, 1000.0], [-1000.0, 0.0]]], np.float32)
    got = ops.softmax(dev.tensor(x)).numpy()
    assert got.shape == (1, 2, 2)
    np.testing.assert_allclose(got, [[[0.5, 0.5], [0.0, 1.0]]], atol=1e-7)


@pytest.mark.parametrize("dtype", FLOATS)
def test_reduce_sum_integer_valued_exact(dev, rng, dtype):
    x = R.random(rng, (20, 100), dtype, -8, 8, True)
    want = R.to_f32(x, dtype).astype(np.float64).sum(axis=1)
    out = ops.reduce_sum(upload(dev, x, dtype))
    assert out.shape == (20,)
    assert_bits_equal(out.numpy(raw=True),
                      R.from_f32(want.astype(np.float32), dtype))


def test_reduce_sum_float32_random(dev, rng):
    x = rng.standard_normal((8, 10000)).astype(np.float32)
    got = ops.reduce_sum(dev.tensor(x)).numpy()
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=1),
                               rtol=1e-5, atol=1e-3)
    assert ops.reduce_sum(dev.tensor(x[0])).shape == (1,)


CASTS = [(s, d) for s in ALL for d in ALL]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(dev, rng, src, dst):
    raw = R.random(rng, (999,), src, -3000, 3000)
    if src == "int32" and dst != "int32":
        vals = raw.astype(np.float32)          # exact: |v| < 2**24
    else:
        vals = R.to_f32(raw, src) if src != "int32" else raw
    if dst == "int32":
        want = np.trunc(np.asarray(vals, np.float64)).astype(np.int32)
    elif src == "int32" and dst == "bfloat16":
        want = R.from_f32(raw.astype(np.float64).astype(np.float32), dst)
    else:
        want = R.from_f32(np.asarray(vals, np.float32), dst)
    out = ops.cast(upload(dev, raw, src), dst)
    assert out.dtype == dst
    assert_bits_equal(out.numpy(raw=True), want)


def test_cast_float_to_int_saturates(dev):
    x = np.array([3e9, -3e9, np.inf, -np.inf, np.nan, -0.9, 2.9], np.float32)
    got = ops.cast(dev.tensor(x), "int32").numpy()
    np.testing.assert_array_equal(
        got, [2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 0, 2])


def test_bfloat16_round_trip(dev):
    x = np.array([1.0, 1.00390625, 3.14159, -2.5e-3, 65504.0], np.float32)
    t = dev.tensor(x, "bfloat16")
    assert t.numpy(raw=True).dtype == np.uint16
    np.testing.assert_array_equal(t.numpy(), R.to_f32(R.from_f32(x, "bfloat16"),
                                                      "bfloat16"))


def test_in_place_elementwise(dev):
    a = dev.tensor(np.arange(10, dtype=np.float32))
    ops.add(a, a, out=a)
    np.testing.assert_array_equal(a.numpy(), np.arange(10) * 2)


def test_async_ops_on_a_stream(dev, rng):
    s = dev.stream()
    a = dev.tensor(rng.standard_normal(1000).astype(np.float32))
    b = dev.tensor(rng.standard_normal(1000).astype(np.float32))
    c = ops.add(a, b, stream=s)
    d = ops.mul(c, b, stream=s)
    e = ops.relu(d, stream=s)
    s.synchronize()
    want = np.maximum((a.numpy() + b.numpy()) * b.numpy(), 0)
    np.testing.assert_array_equal(e.numpy(), want.astype(np.float32))


# -- bad input: raised before anything is submitted ------------------------------
def _submitted(dev):
    return dev.default_stream.query().submitted_seq


def test_shape_mismatch(dev):
    a = dev.tensor(np.zeros((4, 5), np.float32))
    b = dev.tensor(np.zeros((5, 4), np.float32))
    n = _submitted(dev)
    for fn in (ops.add, ops.sub, ops.mul, ops.div, ops.maximum, ops.minimum):
        with pytest.raises(davinci.ShapeError):
            fn(a, b)
    with pytest.raises(davinci.ShapeError) as ei:
        ops.matmul(a, a)
    assert "inner" in str(ei.value)
    with pytest.raises(davinci.ShapeError):
        ops.matmul(a, dev.tensor(np.zeros(5, np.float32)))
    with pytest.raises(davinci.ShapeError):
        ops.axpy(2.0, a, b)
    with pytest.raises(davinci.ShapeError):
        ops.add(a, a, out=b)
    assert _submitted(dev) == n


def test_dtype_errors(dev):
    f = dev.tensor(np.zeros(8, np.float32))
    h = dev.tensor(np.zeros(8, np.float16))
    i = dev.tensor(np.zeros(8, np.int32))
    n = _submitted(dev)
    with pytest.raises(davinci.DTypeError):
        ops.add(f, h)
    with pytest.raises(davinci.DTypeError):
        ops.exp(i)
    with pytest.raises(davinci.DTypeError):
        ops.softmax(i.reshape(2, 4))
    with pytest.raises(davinci.DTypeError):
        ops.matmul(i.reshape(2, 4), i.reshape(4, 2))
    with pytest.raises(davinci.DTypeError):
        ops.add(f, f, out=h)
    with pytest.raises(davinci.DTypeError):
        dev.tensor(np.zeros(4, np.float64))
    with pytest.raises(davinci.DTypeError):
        ops.cast(f, np.complex64)
    assert _submitted(dev) == n


def test_op_on_freed_tensor(dev):
    a = dev.tensor(np.zeros(8, np.float32))
    a.free()
    with pytest.raises(davinci.InvalidHandleError):
        ops.relu(a)


def test_non_tensor_operand(dev):
    with pytest.raises(davinci.InvalidArgumentError):
        ops.relu(np.zeros(3, np.float32))
