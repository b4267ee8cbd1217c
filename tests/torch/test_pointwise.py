# SPDX-License-Identifier: GPL-2.0
"""Pointwise ops composed on the device against CPU torch (torch_npu's
_pointwise), nothing run on the CPU: clamp (Scalar and Tensor bounds,
clamp_min, clamp_max, in place, out=) and hardtanh bit for bit, NaN
inputs and NaN bounds as CPU torch, hardtanh's backward; softmax and
log_softmax over any dim and their backwards; rsqrt (float32 bit for
bit), mse_loss and its backward; the moves flip, roll, repeat (through
unfold, a view) bit for bit."""

import math
import warnings

import pytest
import torch
import torch.nn.functional as F

from devcheck import BF16, F16, F32, FLOATS, check, close, no_fallback, \
    sample

I32 = torch.int32


def same_bits(got, want):
    """Equal bit for bit (a zero's sign too), NaN where CPU torch has one."""
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.is_floating_point:
        assert torch.equal(got.isnan(), want.isnan()), (got, want)
        got, want = got[~want.isnan()], want[~want.isnan()]
    assert torch.equal(got.contiguous().view(torch.uint8),
                       want.contiguous().view(torch.uint8)), (got, want)


def special(dt):
    x = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, math.nan,
                      math.inf, -math.inf, 1e-3] + torch.randn(
                          20, generator=torch.Generator().manual_seed(1))
                     .tolist())
    return x.to(dt) if dt.is_floating_point else (x.nan_to_num(0, 9, -9) *
                                                  10).to(dt)


_BOUNDS = [(-1, 1), (0, None), (None, 0), (0.0, -0.0), (-0.0, 0.0),
           (2, -2), (-0.25, 0.75)]
_NAN_BOUNDS = [(math.nan, 1.0), (-1.0, math.nan), (None, math.nan)]


@pytest.mark.parametrize("dt", FLOATS + [I32], ids=str)
@pytest.mark.parametrize("lo,hi", _BOUNDS + _NAN_BOUNDS, ids=str)
def test_clamp_with_numbers_equals_the_cpu_bit_for_bit(npu, dt, lo, hi):
    if not dt.is_floating_point and (isinstance(lo, float) or
                                     isinstance(hi, float)):
        pytest.skip("a float bound makes an int32 clamp a float one")
    x = special(dt)
    want = x.clamp(lo, hi)
    with no_fallback():
        got = x.npu().clamp(lo, hi)
        y = x.npu()
        y.clamp_(lo, hi)
        out = torch.empty(0, dtype=dt, device="npu")
        torch.clamp(x.npu(), lo, hi, out=out)
        view = x.npu().reshape(4, 8).t()
        v = view.clamp(lo, hi)
    for g in (got, y, out):
        same_bits(g, want)
    same_bits(v, x.reshape(4, 8).t().clamp(lo, hi))
    if lo is not None and hi is None:
        with no_fallback():
            same_bits(x.npu().clamp_min(lo), x.clamp_min(lo))
    if hi is not None and lo is None:
        with no_fallback():
            same_bits(x.npu().clamp_max(hi), x.clamp_max(hi))


@pytest.mark.parametrize("dt", FLOATS + [I32], ids=str)
def test_clamp_with_tensor_bounds_equals_the_cpu_bit_for_bit(npu, dt):
    x = special(dt).reshape(4, 8)
    lo = special(dt).reshape(4, 8)[:, :1].flip(0) - 1
    hi = special(dt).reshape(4, 8)[1] + 1
    lo_nan = lo.clone()
    if dt.is_floating_point:
        lo_nan[1, 0] = math.nan
    for a, b in ((lo, hi), (lo_nan, hi), (lo, None), (None, hi),
                 (lo[0, 0], hi[3])):
        want = x.clamp(a, b)
        with no_fallback():
            got = x.npu().clamp(*(t.npu() if t is not None else None
                                  for t in (a, b)))
        same_bits(got, want)
    with no_fallback():
        got = x.npu().clamp_min(lo.npu())
        out = torch.empty(0, dtype=dt, device="npu")
        torch.clamp(x.npu(), lo.npu(), hi.npu(), out=out)
    same_bits(got, x.clamp_min(lo))
    same_bits(out, x.clamp(lo, hi))


def test_clamp_into_another_dtype_is_the_cpus(npu):
    """An int32 tensor clamped at a float bound is float32, as on the CPU
    (which computes it)."""
    x = special(I32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = x.npu().clamp(-0.5, 10.5)
    same_bits(got, x.clamp(-0.5, 10.5))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("lo,hi", [(-1.0, 1.0), (0.0, 6.0), (-0.5, 0.25)])
def test_hardtanh_and_its_backward_equal_the_cpu(npu, dt, lo, hi):
    x = special(dt)
    with no_fallback():
        got = F.hardtanh(x.npu(), lo, hi)
        y = x.npu()
        F.hardtanh(y, lo, hi, inplace=True)
    same_bits(got, F.hardtanh(x, lo, hi))
    same_bits(y, F.hardtanh(x, lo, hi))
    g = sample(dt, x.numel(), seed=3)
    hb = torch.ops.aten.hardtanh_backward
    # CPU torch's vectorised loop gives a NaN x a 0 gradient, its serial
    # one the gradient: NaN alone, where the serial loop runs
    x = x.nan_to_num(0.125)
    x[-1] = math.nan
    want = hb(g, x, lo, hi)
    want[-1] = g[-1]
    with no_fallback():
        got = hb(g.npu(), x.npu(), lo, hi)
        one = hb(g[-1:].npu(), x[-1:].npu(), lo, hi)
    same_bits(got, want)
    same_bits(one, hb(g[-1:], x[-1:], lo, hi))
    assert one.item() == g[-1].item()


@pytest.mark.parametrize("out", [1, 3])
def test_a_relu6_training_step_runs_on_the_device(npu, out):
    """A sum loss's gradient is an expanded tensor: mm copies it dense."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU6(),
                                torch.nn.Linear(8, out))
    x = sample(F32, 5, 6, seed=4)
    model(x).sum().backward()
    want = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model.npu()
    with no_fallback():
        model(x.npu()).sum().backward()
    for p, w in zip(model.parameters(), want):
        torch.testing.assert_close(p.grad.cpu(), w, rtol=1e-5, atol=1e-6)


__all__ = ["BF16", "F16"]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -2, 2])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_over_any_dim_and_its_backward_equal_the_cpu(npu, op, dim,
                                                             dt):
    fn = getattr(torch, op)
    x = sample(dt, 3, 4, 5, seed=6)
    check(lambda t: (fn(t, dim), fn(t.transpose(0, 2), dim)), x)
    g = sample(dt, 3, 4, 5, seed=7)
    leaf = x.clone().requires_grad_()
    fn(leaf, dim).backward(g)
    want = leaf.grad
    leaf_npu = x.npu().requires_grad_()
    with no_fallback():
        fn(leaf_npu, dim).backward(g.npu())
    close(leaf_npu.grad, want)


def test_rsqrt_of_float32_equals_the_cpu_bit_for_bit(npu):
    """CPU torch's float32 rsqrt divides 1 by the rounded square root:
    SQRT then RECIPROCAL, each correctly rounded, give its bits."""
    g = torch.Generator().manual_seed(9)
    x = torch.cat([special(F32).abs(), torch.tensor([-0.0, -1.0, 1e-40,
                                                     3e38, 1e-30]),
                   torch.rand(4000, generator=g) * 100,
                   torch.rand(4000, generator=g) * 1e-20])
    with no_fallback():
        got = x.npu().rsqrt()
        y = x.npu()
        y.rsqrt_()
        out = torch.empty(0, device="npu")
        torch.rsqrt(x.npu(), out=out)
    for g in (got, y, out):
        same_bits(g, torch.rsqrt(x))


@pytest.mark.parametrize("dt", [F16, BF16, I32], ids=str)
def test_rsqrt_of_other_dtypes_equals_the_cpu(npu, dt):
    x = (torch.rand(500, generator=torch.Generator().manual_seed(2)) * 50
         + 0.01).to(dt)
    check(torch.rsqrt, x, dt=dt if dt.is_floating_point else F32)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_and_its_backward_equal_the_cpu(npu, dt, reduction):
    x, y = sample(dt, 4, 6, seed=1), sample(dt, 4, 6, seed=2)
    check(lambda a, b: F.mse_loss(a, b, reduction=reduction), x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's: a broadcast target
        check(lambda a, b: F.mse_loss(a, b[0], reduction=reduction), x, y)
    g = sample(dt, 4, 6, seed=3) if reduction == "none" else \
        sample(dt, 1, seed=3)[0]
    want = torch.ops.aten.mse_loss_backward(
        g, x, y, {"none": 0, "mean": 1, "sum": 2}[reduction])
    with no_fallback():
        got = torch.ops.aten.mse_loss_backward(
            g.npu(), x.npu(), y.npu(), {"none": 0, "mean": 1,
                                        "sum": 2}[reduction])
    close(got, want)
    if dt == F32:
        # CPU torch's order: (norm * (x - y)) * grad, bit for bit
        same_bits(got, want)


def test_an_mse_training_step_runs_on_the_device(npu):
    torch.manual_seed(1)
    model = torch.nn.Linear(6, 3)
    x, t = sample(F32, 5, 6, seed=4), sample(F32, 5, 3, seed=5)
    F.mse_loss(model(x), t).backward()
    want = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model.npu()
    with no_fallback():
        F.mse_loss(model(x.npu()), t.npu()).backward()
    for p, w in zip(model.parameters(), want):
        torch.testing.assert_close(p.grad.cpu(), w, rtol=1e-5, atol=1e-6)


# -- moves: flip, roll, repeat ----------------------------------------------
_MOVE_DTYPES = FLOATS + [I32, torch.int64, torch.bool, torch.uint8]


def moved(dt, *shape):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(11))
    return x > 0 if dt == torch.bool else (x * 50).to(dt)


@pytest.mark.parametrize("dt", _MOVE_DTYPES, ids=str)
@pytest.mark.parametrize("dims", [(0,), (1,), (-1,), (0, 2), (2, 0, 1)],
                         ids=str)
def test_flip_equals_the_cpu(npu, dt, dims):
    x = moved(dt, 3, 4, 5)
    with no_fallback():
        got = x.npu().flip(dims)
        view = x.npu().transpose(0, 2)[1:].flip(dims)
    same_bits(got, x.flip(dims))
    same_bits(view, x.transpose(0, 2)[1:].flip(dims))


@pytest.mark.parametrize("dt", _MOVE_DTYPES, ids=str)
@pytest.mark.parametrize("shifts,dims", [(1, 0), (-1, 1), (7, 2), (0, 1),
                                         ((1, 2), (0, 2)), (3, None),
                                         (-13, None), ((2, -3), (1, 1))],
                         ids=str)
def test_roll_equals_the_cpu(npu, dt, shifts, dims):
    x = moved(dt, 3, 4, 5)
    with no_fallback():
        got = x.npu().roll(shifts, dims)
        view = x.npu().transpose(0, 1).roll(shifts, dims)
    same_bits(got, x.roll(shifts, dims))
    same_bits(view, x.transpose(0, 1).roll(shifts, dims))


@pytest.mark.parametrize("dt", FLOATS + [I32, torch.bool], ids=str)
@pytest.mark.parametrize("reps", [(2, 1, 1), (1, 3, 2), (2, 2, 1, 3), (1,)],
                         ids=str)
def test_repeat_and_unfold_equal_the_cpu(npu, dt, reps):
    x = moved(dt, 3, 1, 4)
    if len(reps) < x.dim():
        reps = (1,) * (x.dim() - len(reps)) + reps
    with no_fallback():
        got = x.npu().repeat(*reps)
        u = x.npu().unfold(2, 2, 1)
        u2 = x.npu().unfold(0, 2, 2)
    same_bits(got, x.repeat(*reps))
    same_bits(u, x.unfold(2, 2, 1))
    same_bits(u2, x.unfold(0, 2, 2))
    base = x.npu()
    view = base.unfold(2, 2, 1)
    assert view.data_ptr() == base.data_ptr()     # a view, no copy
