# SPDX-License-Identifier: GPL-2.0
"""Batch norm on npu (the device's BN_TRAINING_* ops, torch_npu/_cnn.py)
against CPU torch: nn.BatchNorm1d/2d forward, backward and running
statistics within 1e-5 relative in float32 (float16/bfloat16 inputs
within their rounding), over shapes with one image, one channel and one
element per image, affine=False, track_running_stats=False, momentum
None, eval mode; nothing on the CPU, and a training BatchNorm2d is four
tasks forward (and the module's counter's ADD) and three backward."""

import collections
import copy
import os

import pytest
import torch
from torch import nn

from davinci import schema
from davinci.trace import TraceSession
from davinci.trace.records import KIND_NAMES

from devcheck import no_fallback

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
aten = torch.ops.aten
_TC = next(k for k, v in KIND_NAMES.items() if v == "TASK_COMPLETE")
_BOOKKEEPING = {"EVENT_RECORD", "EVENT_WAIT", "NOP", "NOTIFY"}
#: (rtol, atol relative to the largest magnitude) of each dtype's results
_TOL = {F32: (1e-5, 1e-5), F16: (4e-3, 4e-3), BF16: (3e-2, 3e-2)}


def _close(got, want, dt=F32):
    got = got.detach().cpu()
    want = want.detach()
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol, atol = _TOL[dt]
    scale = float(want.abs().max()) if want.numel() else 1.0
    torch.testing.assert_close(got, want, rtol=rtol,
                               atol=atol * max(scale, 1e-30))


def _step(mod, x, g):
    """Forward and backward of ``mod`` on a copy of ``x``: y, dx and the
    module (its grads and running statistics)."""
    x = x.detach().clone().requires_grad_()
    y = mod(x)
    y.backward(g)
    return y, x.grad


def _compare(mod_cpu, x, dt=F32, steps=2, train=True, pdt=None):
    """``steps`` forward/backward steps of ``mod_cpu`` and of its npu copy
    on the same inputs: y, dx, the parameters' grads, the running
    statistics."""
    mod_npu = copy.deepcopy(mod_cpu).npu()
    if pdt is not None:
        mod_cpu, mod_npu = mod_cpu.to(pdt), mod_npu.to(pdt)
    mod_cpu.train(train)
    mod_npu.train(train)
    gen = torch.Generator().manual_seed(3)
    for i in range(steps):
        xs = (x * (1 + i) + i).to(dt)
        g = torch.randn(x.shape, generator=gen).to(dt)
        y0, dx0 = _step(mod_cpu, xs, g)
        with no_fallback():
            y1, dx1 = _step(mod_npu, xs.npu(), g.npu())
        _close(y1, y0, dt)
        _close(dx1, dx0, dt)
        for p0, p1 in zip(mod_cpu.parameters(), mod_npu.parameters()):
            _close(p1.grad, p0.grad, dt if p0.dtype != F32 else F32)
            p0.grad = p1.grad = None
        for b0, b1 in zip(mod_cpu.buffers(), mod_npu.buffers()):
            if b0.dtype.is_floating_point:
                _close(b1, b0, F32 if b0.dtype == F32 else dt)
            else:
                assert torch.equal(b1.cpu(), b0)


def _x(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g) * 2 + 0.5


SHAPES_2D = [(8, 4, 5, 5), (1, 3, 4, 4), (6, 1, 3, 3), (16, 5, 1, 1),
             (64, 16, 8, 8)]


@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_batchnorm2d_training_matches_cpu(npu, shape):
    _compare(nn.BatchNorm2d(shape[1]), _x(*shape))


@pytest.mark.parametrize("shape", [(10, 6), (4, 3, 7), (2, 1, 9)], ids=str)
def test_batchnorm1d_training_matches_cpu(npu, shape):
    _compare(nn.BatchNorm1d(shape[1]), _x(*shape))


@pytest.mark.parametrize("kw", [dict(affine=False),
                                dict(track_running_stats=False),
                                dict(affine=False, track_running_stats=False),
                                dict(momentum=None), dict(momentum=0.3,
                                                          eps=1e-3)],
                         ids=lambda kw: ",".join("%s=%s" % i
                                                 for i in kw.items()))
def test_batchnorm_options_match_cpu(npu, kw):
    _compare(nn.BatchNorm2d(3, **kw), _x(4, 3, 5, 6), steps=3)


@pytest.mark.parametrize("shape", [(8, 4, 5, 5), (1, 3, 2, 2), (5, 2)],
                         ids=str)
def test_eval_mode_matches_cpu(npu, shape):
    mod = nn.BatchNorm2d(shape[1]) if len(shape) == 4 else \
        nn.BatchNorm1d(shape[1])
    with torch.no_grad():
        mod.running_mean.uniform_(-1, 1)
        mod.running_var.uniform_(0.5, 2)
        mod.weight.uniform_(0.5, 1.5)
        mod.bias.uniform_(-1, 1)
    _compare(mod, _x(*shape), train=False)


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_half_inputs_with_float32_parameters(npu, dt):
    _compare(nn.BatchNorm2d(4), _x(6, 4, 5, 5), dt)


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_half_module(npu, dt):
    _compare(nn.BatchNorm2d(3), _x(4, 3, 4, 4), dt, pdt=dt)


def test_native_batch_norm_saves_the_statistics(npu):
    x = _x(4, 3, 6, 2)
    w, b = torch.rand(3) + 0.5, torch.randn(3)
    rm, rv = torch.zeros(3), torch.ones(3)
    want = torch.native_batch_norm(x, w, b, rm.clone(), rv.clone(), True,
                                   0.1, 1e-5)
    rm1, rv1 = rm.npu(), rv.npu()
    with no_fallback():
        got = torch.native_batch_norm(x.npu(), w.npu(), b.npu(), rm1, rv1,
                                      True, 0.1, 1e-5)
    for g, w_ in zip(got, want):
        _close(g, w_)
    ref_rm, ref_rv = rm.clone(), rv.clone()
    torch.native_batch_norm(x, w, b, ref_rm, ref_rv, True, 0.1, 1e-5)
    _close(rm1, ref_rm)
    _close(rv1, ref_rv)


def _tasks(thunk):
    session = TraceSession(devices=[0], spans=False, poll_ms=0)
    session.start()
    try:
        torch.npu.synchronize()
        session.drain()
        thunk()
        torch.npu.synchronize()
        recs = session.drain().records
    finally:
        session.stop()
    return collections.Counter(
        schema.by_opcode(r.opcode).name for r in recs
        if r.type == _TC and r.pid == os.getpid() and
        schema.by_opcode(r.opcode).name not in _BOOKKEEPING)


def test_a_training_batchnorm2d_is_four_tasks_forward_three_backward(npu):
    bn = nn.BatchNorm2d(16).npu()
    x = _x(64, 16, 8, 8).npu().requires_grad_()
    g = torch.ones(64, 16, 8, 8).npu()
    out = []
    fwd = _tasks(lambda: out.append(bn(x)))
    # (and the module's num_batches_tracked += 1, an int64 ADD)
    assert fwd == {"BN_TRAINING_REDUCE": 1, "BN_TRAINING_UPDATE": 1,
                   "AXPY": 2, "ADD": 1}, fwd
    bwd = _tasks(lambda: out[0].backward(g))
    assert bwd == {"BN_TRAINING_UPDATE_GRAD": 1, "MEMCPY": 1,
                   "BN_TRAINING_REDUCE_GRAD": 1}, bwd


@pytest.mark.parametrize("call", [
    lambda x, w, b, rm, rv: aten._native_batch_norm_legit(
        x, w, b, rm, rv, True, 0.1, 1e-5),
    lambda x, w, b, rm, rv: aten._native_batch_norm_legit(
        x, w, b, rm, rv, False, 0.1, 1e-5),
    lambda x, w, b, rm, rv: aten._native_batch_norm_legit.no_stats(
        x, w, b, True, 0.1, 1e-5),
    lambda x, w, b, rm, rv: aten._native_batch_norm_legit_no_training(
        x, w, b, rm, rv, 0.1, 1e-5),
], ids=["legit-train", "legit-eval", "no_stats", "no_training"])
def test_the_legit_overloads_match_cpu(npu, call):
    x = _x(4, 3, 5)
    w, b = torch.rand(3) + 0.5, torch.randn(3)
    rm, rv = torch.randn(3), torch.rand(3) + 0.5
    stats = (rm.npu(), rv.npu())
    want = call(x, w, b, rm, rv)
    with no_fallback():
        got = call(x.npu(), w.npu(), b.npu(), *stats)
    for g, w_ in zip(got, want):
        _close(g, w_)
    _close(stats[0], rm)
    _close(stats[1], rv)
