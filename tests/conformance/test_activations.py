# SPDX-License-Identifier: GPL-2.0
"""The activations and transcendentals (TANH SIGMOID ERF LOG GELU SILU
RECIPROCAL POW NEG and the gradients) through davinci.ops on every
backend: within the ulp bounds NUMERICS.md documents against a float64
reference, on a sample of every float32 bit pattern and on all 65536
float16 and bfloat16 patterns; their special values (+-0, +-inf, NaN,
subnormals) exactly; C99's special cases of pow."""

import math

import numpy as np
import pytest

import davinci
from davinci import ops

from . import _ref as R
from .op_samples import _ulps_apart

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
C_TANH = 2 * np.sqrt(2 / np.pi)


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _gelu_tanh(x):
    return x * _sigmoid(C_TANH * (x + 0.044715 * x ** 3))


def _gelu_grad(x):
    return 0.5 * _erfc(-x / np.sqrt(2)) + x * np.exp(-0.5 * x * x) / \
        np.sqrt(2 * np.pi)


def _gelu_tanh_grad(x):
    v = C_TANH * (x + 0.044715 * x ** 3)
    dv = C_TANH * (1 + 3 * 0.044715 * x * x)
    return _sigmoid(v) * (1 + x * _sigmoid(-v) * dv)


#: name -> (davinci.ops call on x, float64 reference, float32 ulp bound:
#: NUMERICS.md's measured maximum)
UNARY = {
    "tanh": (ops.tanh, np.tanh, 2),
    "sigmoid": (ops.sigmoid, _sigmoid, 2),
    "erf": (ops.erf, _erf, 2),
    "log": (ops.log, np.log, 1),
    "gelu": (lambda x: ops.gelu("none", x),
             lambda x: 0.5 * x * _erfc(-x / np.sqrt(2)), 3),
    "gelu_tanh": (lambda x: ops.gelu("tanh", x), _gelu_tanh, 3),
    "silu": (ops.silu, lambda x: x * _sigmoid(x), 3),
    "reciprocal": (ops.reciprocal, lambda x: 1 / x, 0),
    "neg": (ops.neg, lambda x: -x, 0),
}

#: the gradient ops at dy = 1 (their factor of dy), the ulp bound at
#: least ROOT_GAP from the gradient's root, and the absolute bound (in
#: 2^-24) everywhere
GRADS = {
    "gelu_grad": (lambda dy, x: ops.gelu_grad("none", dy, x), _gelu_grad,
                  8, 4),
    "gelu_tanh_grad": (lambda dy, x: ops.gelu_grad("tanh", dy, x),
                       _gelu_tanh_grad, 8, 4),
    "silu_grad": (ops.silu_grad,
                  lambda x: _sigmoid(x) * (1 + x * _sigmoid(-x)), 8, 4),
}
ROOT_GAP = 0.25
#: where each gradient crosses zero (its ulp error is unbounded there)
ROOTS = {"gelu_grad": -0.7518, "gelu_tanh_grad": -0.7522,
         "silu_grad": -1.2785}

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
                     1.1754942e-38, -1.1754942e-38, 3.4028235e38,
                     -3.4028235e38, 1.0, -1.0, 0.5, -0.5, 88.8, -88.8,
                     104.5, -104.5, 9.5, -9.5, 15.0, -15.0], np.float32)


def _every_float32(step=65521):
    """About 65K float32 values spread over every bit pattern, NaN out."""
    bits = np.arange(0, 1 << 32, step, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[~np.isnan(x)]


def _run(dev, fn, x, dtype="float32"):
    t = davinci.DeviceTensor.from_numpy(dev, x, dtype)
    return fn(t).numpy(raw=True)


def _f32_ulps(got, want64):
    with np.errstate(all="ignore"):
        want = want64.astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(nan, np.isnan(got))
    return _ulps_apart(got[~nan], want[~nan], "float32")


def _args(x):
    return x.astype(np.float64)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float32_is_within_its_ulp_bound_everywhere(dev, name):
    fn, ref, bound = UNARY[name]
    x = np.concatenate([_every_float32(), SPECIALS])
    if name == "log":
        x = x[~(x < 0)]     # NaN: checked by test_special_values
    got = _run(dev, fn, x)
    with np.errstate(all="ignore"):
        u = _f32_ulps(got, ref(_args(x)))
    assert u.max() <= bound, (name, x[~np.isnan(ref(_args(x)))][u.argmax()])


@pytest.mark.parametrize("name", sorted(GRADS))
def test_a_gradient_is_within_its_bounds_away_from_its_root(dev, name):
    fn, ref, bound, abs_bound = GRADS[name]
    x = np.concatenate([_every_float32(), SPECIALS[np.isfinite(SPECIALS)]])
    dy = np.ones_like(x)
    got = _run2(dev, fn, dy, x)
    with np.errstate(all="ignore"):
        want = ref(_args(x))
    u = _f32_ulps(got, want)
    far = np.abs(x[~np.isnan(want)] - ROOTS[name]) > ROOT_GAP
    assert u[far].max() <= bound
    err = np.abs(got.astype(np.float64) - want)
    assert np.nanmax(err) <= abs_bound * 2.0 ** -24


def _run2(dev, fn, a, b, dtype="float32"):
    ta = davinci.DeviceTensor.from_numpy(dev, a, dtype)
    tb = davinci.DeviceTensor.from_numpy(dev, b, dtype)
    return fn(ta, tb).numpy(raw=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_half_types_are_within_one_ulp_on_every_pattern(dev, name, dtype):
    """float16 and bfloat16: computed in float32 and rounded once, so
    within 1 ulp of the float64 reference rounded to the type, on every
    one of their 65536 bit patterns."""
    fn, ref, bound = UNARY[name]
    raw = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    if dtype == "float16":
        raw = raw.view(np.float16)
    x = R.to_f32(raw, dtype)
    got = _run(dev, fn, raw, dtype)
    with np.errstate(all="ignore"):
        want = R.from_f32(ref(_args(x)).astype(np.float32), dtype)
    wantf, gotf = R.to_f32(want, dtype), R.to_f32(got, dtype)
    nan = np.isnan(wantf)
    assert np.array_equal(nan, np.isnan(gotf))
    assert _ulps_apart(got[~nan], want[~nan], dtype).max() <= min(bound, 1)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_values(dev, name):
    """+-0, +-inf, NaN and subnormals give the reference's value, zeros
    with its sign; an infinite x where the formula is inf * 0 (gelu and
    silu at -inf) gives NaN, as torch's and ONNX's references."""
    fn, ref, _ = UNARY[name]
    got = _run(dev, fn, SPECIALS)
    with np.errstate(all="ignore"):
        want = ref(_args(SPECIALS)).astype(np.float32)
    if name in ("gelu", "gelu_tanh", "silu"):
        want[SPECIALS == -np.inf] = np.nan
    both = ~np.isnan(want)
    assert np.array_equal(np.isnan(got), ~both)
    assert np.array_equal(np.signbit(got[both & (want == 0)]),
                          np.signbit(want[both & (want == 0)]))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    tiny = both & (np.abs(SPECIALS) < 1e-37)
    assert _ulps_apart(got[tiny], want[tiny], "float32").max() <= 1


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_at_infinities_are_nan_as_torch(dev, name):
    """torch's formulas give inf * 0 there."""
    got = _run2(dev, GRADS[name][0], np.ones(3, np.float32),
                np.array([np.inf, -np.inf, np.nan], np.float32))
    assert np.isnan(got).all()


def test_pow_follows_c99s_special_cases(dev):
    inf, nan = np.inf, np.nan
    cases = [  # (x, y, want)
        (nan, 0.0, 1.0), (nan, -0.0, 1.0), (1.0, nan, 1.0), (1.0, inf, 1.0),
        (-1.0, inf, 1.0), (-1.0, -inf, 1.0), (-1.0, 3.0, -1.0),
        (-2.0, 0.5, nan), (-2.0, 3.0, -8.0), (-2.0, -2.0, 0.25),
        (0.0, -1.0, inf), (-0.0, -1.0, -inf), (-0.0, -2.0, inf),
        (-0.0, 3.0, -0.0), (-0.0, 0.5, 0.0), (0.0, -inf, inf),
        (0.5, inf, 0.0), (0.5, -inf, inf), (2.0, inf, inf), (2.0, -inf, 0.0),
        (-inf, 3.0, -inf), (-inf, -3.0, -0.0), (-inf, 2.0, inf),
        (-inf, 0.5, inf), (-inf, -0.5, 0.0), (inf, -1.0, 0.0),
        (nan, 1.0, nan), (2.0, nan, nan), (10.0, 39.0, inf),
        (10.0, -46.0, 0.0), (2.0, -149.0, 1e-45), (-8.0, 1 / 3, nan),
        (3.0, 2.0, 9.0), (16777217.0, 1.0, 16777216.0),
    ]
    x, y, want = (np.array(c, np.float32) for c in zip(*cases))
    got = _run2(dev, ops.pow, x, y)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok], want[ok])
    assert np.array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


def test_pow_by_1_2_and_minus_1_is_one_ieee_operation(dev):
    """x, x * x and 1 / x bit for bit (torch's pow for these)."""
    x = np.concatenate([_every_float32(), SPECIALS])
    for y, want in ((1.0, x), (2.0, x * x), (-1.0, np.float32(1) / x)):
        with np.errstate(all="ignore"):
            got = _run2(dev, ops.pow, x, np.full_like(x, y))
            want = np.asarray(want, np.float32)
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.uint32),
                              want[~nan].view(np.uint32))


def test_pow_is_within_one_ulp(dev, rng):
    x = np.concatenate([_every_float32(), SPECIALS])
    x = np.abs(x[np.isfinite(x)])
    for y in (2.0, -1.0, 0.5, 1.5, -3.7, 11.3, 1 / 3, 27.0):
        yy = np.full_like(x, y)
        got = _run2(dev, ops.pow, x, yy)
        with np.errstate(all="ignore"):
            u = _f32_ulps(got, np.power(_args(x), np.float64(np.float32(y))))
        assert u.max() <= 1, y
    # negative bases with integer exponents: the sign of an odd one
    xs = rng.uniform(-4, 4, 4096).astype(np.float32)
    ys = np.round(rng.uniform(-20, 20, 4096)).astype(np.float32)
    got = _run2(dev, ops.pow, xs, ys)
    assert _f32_ulps(got, np.power(_args(xs), _args(ys))).max() <= 1


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8"])
def test_neg_wraps_integers(dev, dtype):
    info = np.iinfo(R.STORAGE[dtype])
    x = np.array([0, 1, info.max, info.min, 7], R.STORAGE[dtype])
    with np.errstate(over="ignore"):
        want = np.negative(x)
    assert np.array_equal(_run(dev, ops.neg, x, dtype), want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_tanh_and_sigmoid_gradients_are_torchs_formulas(dev, rng, dtype):
    """dy (1 - y^2), 1 - y^2 rounded once (torch's fused multiply-add),
    and dy (1 - y) y in float32, then rounded once to the dtype."""
    dy = R.random(rng, (999,), dtype)
    y = np.concatenate([R.random(rng, (994,), dtype, -1, 1),
                        R.from_f32(np.float32([0, -1, 1, 0.001, -0.3]),
                                   dtype)])
    d32, y32 = R.to_f32(dy, dtype), R.to_f32(y, dtype)
    one = np.float32(1)
    y64 = y32.astype(np.float64)
    for fn, want in ((ops.tanh_grad,
                      d32 * (1 - y64 * y64).astype(np.float32)),
                     (ops.sigmoid_grad, d32 * (one - y32) * y32)):
        got = _run2(dev, fn, dy, y, dtype)
        assert np.array_equal(got, R.from_f32(want, dtype))
