# SPDX-License-Identifier: GPL-2.0
"""Pooling on npu tensors: nn.MaxPool2d (with its indices), nn.AvgPool2d,
nn.AdaptiveAvgPool2d and the functional forms, forward and backward,
against CPU torch; each runs only its device ops (MAXPOOL2D, AVGPOOL2D
and their gradients, max pooling's maxima an INDEX_SELECT; global average pooling is a mean: REDUCE_SUM) and
nothing on the CPU, read from the device's trace. Float32 is CPU torch's
bit for bit (a global pooling's mean and the half types' gradients, which
torch rounds at every partial sum, within their rounding)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from test_op_table import _ran, trace  # noqa: F401 (a fixture)

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16


def _input(dt, *shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * 3).to(dt)


def _run_both(trace, module, x, dt):
    """(npu results, cpu results): the output(s), x's gradient, and what
    ran on the device and on the CPU for the npu forward and backward."""
    g = torch.Generator().manual_seed(7)
    xc = x.clone().requires_grad_()
    yc = module(xc)
    y0 = yc[0] if isinstance(yc, tuple) else yc
    dy = torch.randn(y0.shape, generator=g).to(dt)
    y0.backward(dy)
    xn = x.npu().requires_grad_()
    box = []

    def step():
        yn = module(xn)
        box.append(yn)
        (yn[0] if isinstance(yn, tuple) else yn).backward(dy.npu())
    ran, warned = _ran(trace, step)
    return box[0], xn.grad, yc, xc.grad, ran, warned


def _same(got, want):
    got = got.detach().cpu()
    want = want.detach()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got.isnan(), want.isnan())
    ok = ~want.isnan()
    assert torch.equal(got[ok], want[ok]), (got - want).abs().max()


def _close(got, want, rtol):
    torch.testing.assert_close(got.detach().cpu().float(),
                               want.detach().float(), rtol=rtol, atol=rtol)


# the maxima are gathered at their indices (INDEX_SELECT)
_MAX_OPS = {"MAXPOOL2D", "INDEX_SELECT", "MAXPOOL2D_BACKWARD"}
_MODULES = {
    "MaxPool2d(3, 2, 1)": (nn.MaxPool2d(3, 2, 1), _MAX_OPS),
    "MaxPool2d(2) indices": (nn.MaxPool2d(2, return_indices=True),
                             _MAX_OPS),
    "MaxPool2d ceil dilation": (nn.MaxPool2d((3, 2), (2, 1), (1, 1), (2, 1),
                                             ceil_mode=True),
                                _MAX_OPS),
    "AvgPool2d(3, 2, 1)": (nn.AvgPool2d(3, 2, 1), {"AVGPOOL2D",
                                                   "AVGPOOL2D_BACKWARD"}),
    "AvgPool2d ceil no pad count": (
        nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
        {"AVGPOOL2D", "AVGPOOL2D_BACKWARD"}),
    "AvgPool2d divisor": (nn.AvgPool2d(2, 1, divisor_override=3),
                          {"AVGPOOL2D", "AVGPOOL2D_BACKWARD"}),
    "AdaptiveAvgPool2d((3, 2))": (nn.AdaptiveAvgPool2d((3, 2)),
                                  {"AVGPOOL2D", "AVGPOOL2D_BACKWARD"}),
}


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize("name", _MODULES)
def test_pooling_modules_match_the_cpu_on_the_device(npu, trace, name, dt):
    module, dev_ops = _MODULES[name]
    x = _input(dt, 2, 3, 9, 8)
    yn, gn, yc, gc, ran, warned = _run_both(trace, module, x, dt)
    assert not warned, warned
    assert ran == dev_ops, sorted(ran)
    if isinstance(yc, tuple):
        assert torch.equal(yn[1].cpu(), yc[1])      # the indices
        yn, yc = yn[0], yc[0]
    _same(yn, yc)
    if dt == F32 or "MaxPool2d(2)" in name:
        _same(gn, gc)       # (no two windows share an element there)
    else:
        _close(gn, gc, 1e-2 if dt == F16 else 5e-2)


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
def test_global_average_pooling_is_a_mean_on_the_device(npu, trace, dt):
    x = _input(dt, 2, 4, 7, 7)
    yn, gn, yc, gc, ran, warned = _run_both(
        trace, nn.AdaptiveAvgPool2d((1, 1)), x, dt)
    assert not warned, warned
    assert "REDUCE_SUM" in ran and not ran & {"AVGPOOL2D"}, sorted(ran)
    _close(yn, yc, 1e-6 if dt == F32 else 1e-2)
    _close(gn, gc, 1e-6 if dt == F32 else 1e-2)


def test_unbatched_input_and_functional_forms(npu, trace):
    x = _input(F32, 3, 10, 7)
    for fn in (lambda t: F.max_pool2d(t, 3, 2, 1),
               lambda t: F.avg_pool2d(t, (2, 3), 1, (1, 1)),
               lambda t: F.adaptive_avg_pool2d(t, (5, 7)),
               lambda t: F.max_pool1d(t, 3, 2, 1, ceil_mode=True)):
        ran, warned = _ran(trace, lambda: fn(x.npu()))
        assert not warned and ran, (warned, ran)
        _same(fn(x.npu()), fn(x))


def test_what_the_device_does_not_run_falls_back_to_the_cpu(npu, trace):
    """A channels-last input, an output size not dividing the input and a
    dilation past the input run on the CPU, with its results; a geometry
    torch refuses raises torch's error."""
    x = _input(F32, 1, 2, 6, 6)
    for fn in (lambda t: F.max_pool2d(t.to(memory_format=torch.
                                           channels_last), 2),
               lambda t: F.adaptive_avg_pool2d(t, (4, 4)),
               lambda t: F.max_pool2d(t, 2, dilation=7, padding=1)):
        ran, warned = _ran(trace, lambda: fn(x.npu()))
        assert warned, fn
        _same(fn(x.npu()), fn(x))
    with pytest.raises(RuntimeError, match="pad"):
        F.max_pool2d(x.npu(), 2, padding=2)
