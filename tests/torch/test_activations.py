# SPDX-License-Identifier: GPL-2.0
"""torch_npu's activations and transcendentals (tanh, sigmoid, erf, log,
gelu in both forms, silu, reciprocal, pow, neg) and the backwards autograd
calls (tanh_backward, sigmoid_backward, gelu_backward, silu_backward), each
one device op with no CPU fallback (read from the device's trace), against
CPU torch:

- bit for bit where both compute the same IEEE operations: neg,
  reciprocal, sigmoid_backward (float32, bfloat16), tanh_backward (1 - y^2
  rounded once, as CPU torch's fused multiply-add), pow by 1, 2, 3, -1
  and -2;
- otherwise against float64 within the ulp bound kmod/core/NUMERICS.md
  documents, and against CPU torch within a tolerance: CPU torch is not
  correctly rounded itself (its tanh, erf and sqrt are SLEEF's or its own
  approximations; its float32 gelu loses digits in the left tail, about
  |x| 2^-24 absolute; its sigmoid and silu flush results below 1e-38 to
  0; its float16 sigmoid_backward rounds each of its three operations to
  float16), so the tolerance is CPU torch's error, and the float64
  comparison the device's;
- the IEEE special values as CPU torch gives them (gelu and silu of
  -inf: NaN), except CPU torch's NaN for gelu(+inf), where the device
  gives +inf.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from test_op_table import _ran, trace  # noqa: F401 (a fixture)

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
FLOATS = (F32, F16, BF16)
aten = torch.ops.aten


def _x(dt, n=4096, lo=-8.0, hi=8.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g) * (hi - lo) + lo).to(dt)


def _on_npu(trace, fn, *args, ops):
    """fn on npu copies of ``args``, running exactly the device ops
    ``ops`` and nothing on the CPU; the result on the CPU."""
    npu_args = [a.npu() if isinstance(a, torch.Tensor) else a for a in args]
    box = []
    ran, warned = _ran(trace, lambda: box.append(fn(*npu_args)))
    assert not warned, warned
    assert ran == set(ops), sorted(ran)
    return box[0].cpu()


def _bits_equal(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    ok = ~torch.isnan(want)
    assert torch.equal(got[ok], want[ok])
    assert torch.equal(torch.signbit(got[ok]), torch.signbit(want[ok]))


def _ulps(got, want64, dt):
    """Distance of got from float64 want rounded to dt, in dt's ulps."""
    want = want64.to(dt)
    bits = {F32: torch.int32, F16: torch.int16, BF16: torch.int16}[dt]
    g = got.view(bits).to(torch.int64)
    w = want.view(bits).to(torch.int64)
    sign = 1 << (8 * got.element_size() - 1)
    g = torch.where(g < 0, -(g & (sign - 1)), g)
    w = torch.where(w < 0, -(w & (sign - 1)), w)
    ok = ~torch.isnan(want)
    assert torch.equal(torch.isnan(got), ~ok)
    return (g - w).abs()[ok]


def _sigmoid64(x):
    return torch.sigmoid(x.double())


def _gelu64(x, approximate):
    x = x.double()
    if approximate == "tanh":
        return x * torch.sigmoid(2 * math.sqrt(2 / math.pi) *
                                 (x + 0.044715 * x ** 3))
    return 0.5 * x * torch.special.erfc(-x / math.sqrt(2))


#: name -> (the call, its float64 reference, the device op, its float32
#: ulp bound from NUMERICS.md)
UNARY = {
    "tanh": (torch.tanh, lambda x: torch.tanh(x.double()), "TANH", 2),
    "sigmoid": (torch.sigmoid, _sigmoid64, "SIGMOID", 2),
    "erf": (torch.erf, lambda x: torch.erf(x.double()), "ERF", 2),
    "log": (torch.log, lambda x: torch.log(x.double()), "LOG", 1),
    "gelu": (F.gelu, lambda x: _gelu64(x, "none"), "GELU", 3),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: _gelu64(x, "tanh"), "GELU", 3),
    "silu": (F.silu, lambda x: x.double() * _sigmoid64(x), "SILU", 3),
}


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_within_its_bound_of_float64_and_near_cpu_torch(
        trace, name, dt):
    fn, ref, op, bound = UNARY[name]
    x = _x(dt, lo=0.001 if name == "log" else -12.0, hi=12.0)
    got = _on_npu(trace, fn, x, ops=[op])
    # the device's bound against float64 (float16/bfloat16: 1 ulp)
    assert _ulps(got, ref(x), dt).max() <= (bound if dt == F32 else 1)
    # CPU torch, within its own error (its float32 gelu: |x| 2^-24)
    torch.testing.assert_close(got, fn(x), rtol={F32: 2e-6, F16: 1e-3,
                                                 BF16: 8e-3}[dt],
                               atol={F32: 1e-6, F16: 1e-5, BF16: 1e-4}[dt])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_values_are_cpu_torchs(trace, name):
    """+-0, +-inf, NaN and the smallest subnormals as CPU torch; the far
    tails (where CPU torch's sigmoid and silu flush to 0) as float64."""
    fn, ref, op, bound = UNARY[name]
    x = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45,
                      -1e-45])
    far = torch.tensor([1.0, -1.0, 100.0, -100.0, 3e38, -3e38])
    if name == "log":
        x, far = x.abs(), far.abs()
    want = fn(x)
    if name == "gelu":
        # CPU torch's float32 gelu(+inf) is NaN (its vectorised erf); the
        # device gives the limit, +inf, as ONNX's reference and CPU
        # torch's tanh form do
        assert torch.isnan(want[2])
        want[2] = math.inf
    _bits_equal(_on_npu(trace, fn, x, ops=[op]), want)
    assert _ulps(_on_npu(trace, fn, far, ops=[op]), ref(far),
                 F32).max() <= bound


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_bit_identical_ones(trace, dt):
    x = _x(dt, seed=1)
    x[:4] = torch.tensor([0.0, -0.0, math.inf, -math.inf])
    for fn, op in ((torch.neg, "NEG"), (torch.reciprocal, "RECIPROCAL")):
        _bits_equal(_on_npu(trace, fn, x, ops=[op]), fn(x))


@pytest.mark.parametrize("dt", (torch.int64, torch.int32, torch.int8),
                         ids=str)
def test_neg_of_integers_wraps_as_cpu_torch(trace, dt):
    info = torch.iinfo(dt)
    x = torch.tensor([0, 1, -7, info.max, info.min], dtype=dt)
    got = _on_npu(trace, torch.neg, x, ops=["NEG"])
    assert torch.equal(got, torch.neg(x))


def test_an_integer_tensor_gives_a_float_result(trace):
    x = torch.arange(1, 40, dtype=torch.int64)
    got = _on_npu(trace, torch.log, x, ops=["CAST", "LOG"])
    assert got.dtype == F32
    assert _ulps(got, torch.log(x.double()), F32).max() <= 1


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_backward_of_tanh_and_sigmoid_bit_for_bit(trace, dt):
    """tanh_backward: CPU torch rounds 1 - y^2 once (a fused
    multiply-add), as the device; sigmoid_backward: dy (1 - y) y."""
    dy = _x(dt, seed=2)
    y = _x(dt, lo=-1, hi=1, seed=3)
    _bits_equal(_on_npu(trace, aten.tanh_backward, dy, y,
                        ops=["TANH_GRAD"]), aten.tanh_backward(dy, y))
    got = _on_npu(trace, aten.sigmoid_backward, dy, y, ops=["SIGMOID_GRAD"])
    want = (dy.float() * (1 - y.float()) * y.float()).to(dt)
    _bits_equal(got, want)
    if dt == F16:   # CPU torch rounds each operation to float16
        torch.testing.assert_close(got, aten.sigmoid_backward(dy, y),
                                   rtol=2e-3, atol=2e-3)
    else:
        _bits_equal(got, aten.sigmoid_backward(dy, y))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_gelu_and_silu_backward_near_cpu_torch(trace, dt, approximate):
    """Within NUMERICS.md's absolute bound of float64 (4 x 2^-24 in the
    gradient, plus the product's rounding) and near CPU torch, whose own
    gradients err by about 1e-6 |dy| in the left tail (float32)."""
    dy = _x(dt, seed=4)
    x = _x(dt, lo=-10, hi=10, seed=5)
    tol = dict(rtol={F32: 2e-6, F16: 1e-3, BF16: 8e-3}[dt],
               atol={F32: 2e-5, F16: 1e-4, BF16: 1e-3}[dt])
    x64 = x.double()
    if approximate == "tanh":
        v = 2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)
        dv = 2 * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x64 ** 2)
        g = torch.sigmoid(v) * (1 + x64 * torch.sigmoid(-v) * dv)
    else:
        g = 0.5 * torch.special.erfc(-x64 / math.sqrt(2)) + \
            x64 * torch.exp(-0.5 * x64 ** 2) / math.sqrt(2 * math.pi)
    got = _on_npu(trace, lambda d, v: aten.gelu_backward(
        d, v, approximate=approximate), dy, x, ops=["GELU_GRAD"])
    torch.testing.assert_close(got, aten.gelu_backward(
        dy, x, approximate=approximate), **tol)
    if dt == F32:
        err = (got.double() - dy.double() * g).abs()
        assert (err <= dy.double().abs() * (4 * 2.0 ** -24 + 1.2 *
                                            g.abs() * 2.0 ** -24)).all()
    if approximate == "none":
        got = _on_npu(trace, aten.silu_backward, dy, x, ops=["SILU_GRAD"])
        torch.testing.assert_close(got, aten.silu_backward(dy, x), **tol)
        if dt == F32:
            g = torch.sigmoid(x64) * (1 + x64 * torch.sigmoid(-x64))
            err = (got.double() - dy.double() * g).abs()
            assert (err <= dy.double().abs() * (4 * 2.0 ** -24 + 1.2 *
                                                g.abs() * 2.0 ** -24)).all()


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_autograd_through_the_activations_has_no_fallback(trace,
                                                          approximate):
    """A backward pass through gelu, silu, tanh and sigmoid runs their
    gradient ops on the device."""
    x = _x(F32, n=64, seed=6).requires_grad_()
    xn = x.detach().npu().requires_grad_()

    def loss(v):
        return (F.gelu(v, approximate=approximate) + F.silu(v) +
                torch.tanh(v) + torch.sigmoid(v)).sum()
    loss(x).backward()
    ran, warned = _ran(trace, lambda: loss(xn).backward())
    assert not warned, warned
    assert {"GELU_GRAD", "SILU_GRAD", "TANH_GRAD", "SIGMOID_GRAD"} <= ran
    torch.testing.assert_close(xn.grad.cpu(), x.grad, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("e,ops", [(1.0, ["POW"]), (2.0, ["POW"]),
                                   (3.0, ["MUL"]), (-1.0, ["POW"]),
                                   (-2.0, ["MUL", "RECIPROCAL"])])
def test_pow_by_the_exponents_cpu_torch_computes_exactly(trace, e, ops):
    x = _x(F32, seed=7)
    x[:5] = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan])
    _bits_equal(_on_npu(trace, lambda v: torch.pow(v, e), x, ops=ops),
                torch.pow(x, e))


def test_pow_by_a_half_is_sqrt(trace):
    """CPU torch's pow(x, 0.5) is its sqrt (pow(-0, 0.5) = -0,
    pow(-inf, 0.5) = NaN); the device's SQRT is correctly rounded, where
    CPU torch's (SLEEF's) is not always."""
    x = _x(F32, seed=7)
    x[:5] = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan])
    got = _on_npu(trace, lambda v: torch.pow(v, 0.5), x, ops=["SQRT"])
    _bits_equal(got, torch.sqrt(x.double()).float())
    _bits_equal(got[:5], torch.pow(x[:5], 0.5))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_pow_within_one_ulp_of_float64(trace, dt):
    base = _x(dt, lo=0.01, hi=6, seed=8)
    exponent = _x(dt, lo=-6, hi=6, seed=9)
    got = _on_npu(trace, torch.pow, base, exponent, ops=["POW"])
    assert _ulps(got, torch.pow(base.double(), exponent.double()),
                 dt).max() <= 1
    # a number exponent (a 0-dim constant) and a number base
    got = _on_npu(trace, lambda b: torch.pow(b, 1.7), base, ops=["POW"])
    assert _ulps(got, torch.pow(base.double(), float(torch.tensor(
        1.7, dtype=dt))), dt).max() <= 1
    got = _on_npu(trace, lambda e: torch.pow(2.5, e), exponent, ops=["POW"])
    assert _ulps(got, torch.pow(2.5, exponent.double()), dt).max() <= 1


def test_pow_special_values_are_cpu_torchs(trace):
    inf, nan = math.inf, math.nan
    vals = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, inf, -inf,
                         nan])
    x, y = torch.meshgrid(vals, torch.tensor([0.0, -0.0, 1.0, -1.0, 3.0,
                                              -3.0, 0.5, 2.5, inf, -inf,
                                              nan]), indexing="ij")
    x, y = x.reshape(-1), y.reshape(-1)
    _bits_equal(_on_npu(trace, torch.pow, x, y, ops=["POW"]),
                torch.pow(x, y))


def test_pow_broadcasts_views_and_writes_in_place(trace):
    a = _x(F32, n=24, lo=0.1, hi=3, seed=10).reshape(4, 6)
    b = _x(F32, n=6, lo=-2, hi=2, seed=11)
    want = torch.pow(a.t(), b[:4])
    got = _on_npu(trace, lambda u, v: torch.pow(u.t(), v[:4]), a, b,
                  ops=["POW"])
    assert _ulps(got, torch.pow(a.t().double(), b[:4].double()),
                 F32).max() <= 1
    torch.testing.assert_close(got, want, rtol=2e-7, atol=0)
    an = a.npu()
    ran, warned = _ran(trace, lambda: an.pow_(b.npu()))
    assert not warned and ran == {"POW"}
    torch.testing.assert_close(an.cpu(), a.pow(b), rtol=2e-7, atol=0)
