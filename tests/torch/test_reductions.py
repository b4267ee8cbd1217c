# SPDX-License-Identifier: GPL-2.0
"""Reductions over any dims on npu against CPU torch (torch_npu's
_reductions): sum, mean, amax, amin, max, min, logsumexp, var, std,
var_mean, std_mean, linalg.vector_norm, each with nothing run on the
CPU. REDUCE_SUM's
order (eight float32 lanes, NUMERICS.md) is not CPU torch's cascade, so
sums are compared within the dtype's rounding, NaNs and infinities
exactly."""

import math
import warnings

import pytest
import torch

from devcheck import BF16, F16, F32, FLOATS, check, close, no_fallback, \
    sample


_DIMS = [None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1), (0, 1, 2), (2, 0), []]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", _DIMS, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_sum_and_mean_over_any_dims_equal_the_cpu(npu, op, dim, keepdim, dt):
    x = sample(dt, 3, 4, 5)
    if dim is None:
        check(lambda t: getattr(t, op)(), x)
    else:
        check(lambda t: getattr(t, op)(dim, keepdim), x)
    # a strided view, NaN and an infinity
    y = sample(dt, 5, 4, 6, special=True)
    check(lambda t: getattr(t.transpose(0, 2)[1:], op)(
        dim if dim is not None else [], keepdim), y)


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((2, 3, 4, 5), (1, 3)),
                                       ((2, 3, 4, 5), (0, 2, 3)),
                                       ((64, 33), 0), ((5, 130, 3), 1),
                                       ((), None)], ids=str)
def test_sums_of_other_shapes_equal_the_cpu(npu, shape, dim):
    x = sample(F32, *shape, seed=3)
    check(lambda t: (t.sum(dim), t.mean(dim)) if dim is not None else
          (t.sum(), t.mean()), x)


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_a_sum_into_float32_casts_on_the_device(npu, dt):
    x = sample(dt, 3, 40, 5)
    check(lambda t: (t.sum(1, dtype=F32), t.mean((0, 2), dtype=F32),
                     t.sum(dtype=F32)), x, dt=F32)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_sum_and_mean_into_out(npu, dt):
    x = sample(dt, 3, 4, 5)
    for op in (torch.sum, torch.mean):
        want = op(x, (0, 2), keepdim=True)
        out = torch.empty(0, dtype=dt, device="npu")
        with no_fallback():
            res = op(x.npu(), (0, 2), keepdim=True, out=out)
        assert res is out
        close(out, want)


def test_an_integer_sum_still_runs_on_the_cpu(npu):
    """REDUCE_SUM sums floats: an int32 tensor sums into int64 on the CPU,
    as CPU torch."""
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = x.npu().sum(1)
    assert got.dtype == torch.int64 and torch.equal(got.cpu(), x.sum(1))


def exact(fn, *xs):
    """fn on npu copies of xs equals fn on xs exactly (NaN where CPU torch
    has one; a zero's sign aside: among equal zeros CPU torch's vectorised
    loop keeps another one than the first); nothing on the CPU."""
    want = fn(*xs)
    with no_fallback():
        got = fn(*(x.npu() for x in xs))
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g = g.cpu()
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dt", FLOATS + [torch.int32], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", _DIMS, ids=str)
@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_and_amin_over_any_dims_equal_the_cpu(npu, op, dim, keepdim,
                                                   dt):
    x = sample(F32, 3, 4, 5).mul(100).to(dt)
    dims = [] if dim is None else dim
    exact(lambda t: getattr(t, op)(dims, keepdim), x)
    if dt.is_floating_point:
        # NaN propagates, infinities compare
        y = sample(dt, 5, 4, 6, special=True)
        exact(lambda t: getattr(t.transpose(0, 2)[1:], op)(dims, keepdim),
              y)


@pytest.mark.parametrize("dt", FLOATS + [torch.int32], ids=str)
def test_max_and_min_of_all_elements_equal_the_cpu(npu, dt):
    x = sample(F32, 6, 7).mul(100).to(dt)
    exact(lambda t: (t.max(), t.min(), t.t().max(), t[:, 1::2].min()), x)
    out = torch.empty(3, dtype=dt, device="npu")
    with no_fallback():
        torch.max(x.npu(), out=out)
        torch.amin(x.npu(), 0, out=out)
    exact(lambda t: torch.amin(t, 0), x)
    assert torch.equal(out.cpu(), torch.amin(x, 0))
    if dt.is_floating_point:
        y = sample(dt, 6, 7, special=True)
        exact(lambda t: (t.max(), t.min(), *t.max(0), *t.min(1)), y)


def test_max_of_an_empty_tensor_raises_as_the_cpu(npu):
    with pytest.raises(RuntimeError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.empty(0, device="npu").max()


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, (0, 2)], ids=str)
def test_logsumexp_equals_the_cpu(npu, dt, dim):
    x = sample(dt, 3, 4, 5)
    check(lambda t: torch.logsumexp(t, dim), x)
    check(lambda t: torch.logsumexp(t, dim, keepdim=True), x)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("correction", [None, 0, 2, 0.5], ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, 2, (0, 2), (1, 2)], ids=str)
@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
def test_var_and_std_over_any_dims_equal_the_cpu(npu, op, dim, correction,
                                                 dt):
    fn = getattr(torch, op)
    x = sample(dt, 3, 4, 5, seed=5)
    check(lambda t: fn(t, dim, correction=correction), x)
    check(lambda t: fn(t, dim, correction=correction, keepdim=True), x)
    y = sample(dt, 5, 4, 6, special=True)
    view = lambda t: t.transpose(0, 2)[1:]      # noqa: E731
    if op.endswith("_mean"):
        # the mean of a row holding an infinity is torch.mean's (inf),
        # where CPU torch's Welford loop gives NaN unless the infinity
        # comes last: compare that mean with torch.mean
        got = fn(view(y.npu()), dim, correction=correction)
        want = fn(view(y), dim, correction=correction)
        close(got[0], want[0])
        close(got[1], view(y).mean(dim if dim is not None else []))
    else:
        check(lambda t: fn(view(t), dim, correction=correction), y)


def test_var_with_no_degrees_of_freedom_is_the_cpus(npu):
    """max(0, N - correction) is 0: an infinity, or NaN where the centred
    squares sum to 0."""
    x = sample(F32, 3, 1, seed=2)
    y = x.expand(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # CPU torch's own warning
        check(lambda t: (t.var(1), t.std(1), t.var(0, correction=5),
                         *torch.var_mean(t, 1, correction=3)), x)
        check(lambda t: t.var(1, correction=4), y)


def test_the_unbiased_and_dim_spellings_reach_the_device(npu):
    x = sample(F32, 4, 6, seed=4)
    check(lambda t: (t.var(0, unbiased=False), t.std(unbiased=True),
                     *torch.std_mean(t, [1], unbiased=False)), x)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf], ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2), -1], ids=str)
def test_vector_norms_equal_the_cpu(npu, dt, ord, dim):
    x = sample(dt, 3, 4, 5, seed=8)
    check(lambda t: torch.linalg.vector_norm(t, ord, dim), x)
    check(lambda t: torch.linalg.vector_norm(t.transpose(0, 1), ord, dim,
                                             keepdim=True), x)
    if dim is None and ord in (1, 2):
        check(lambda t: t.norm(ord), x)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_reductions_of_empty_tensors_are_the_cpus(npu, dt):
    """A sum of nothing is 0, a mean, variance or deviation NaN (CPU
    torch's own warning aside), over an empty result or not."""
    x = torch.empty(0, 5, dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(lambda t: (t.sum(), t.sum(0), t.sum(1), t.mean(), t.mean(0),
                         t.mean(1, keepdim=True), t.var(), t.var(0),
                         t.std(1), *torch.var_mean(t, 0),
                         *torch.std_mean(t), t.softmax(1),
                         t.log_softmax(0), t.flip(1), t.roll(1, 0)), x)


def test_softmax_of_a_0_dim_tensor_is_the_cpus(npu):
    x = torch.tensor(2.5)
    check(lambda t: (t.softmax(0), t.log_softmax(-1), t.roll(3),
                     t.sum(), t.mean(), t.amax(), t.max()), x)


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_a_half_mean_divides_in_float32_as_the_cpu(npu, dt):
    """CPU torch sums a float16/bfloat16 mean into float32, divides there
    and rounds once: a count beyond float16's range (70001) divides
    right, bit for bit where the sums agree."""
    x = sample(dt, 3, 70001, seed=12)
    check(lambda t: (t.mean(1), t.mean(0), t.mean()), x)
    ones = torch.ones(2, 70001, dtype=dt)
    with no_fallback():
        got = ones.npu().mean(1)
    assert torch.equal(got.cpu(), ones.mean(1))
