# SPDX-License-Identifier: GPL-2.0
"""torch.optim's fused Adam, AdamW and SGD on npu (aten::_fused_adam_,
_fused_adamw_, _fused_sgd_): one DAVINCI_OP_ADAM (SGD_MOMENTUM) task per
parameter with a gradient,
no CPU fallback, within float32 rounding of CPU torch's fused kernel over
several steps (weight decay, maximize, a tensor lr, float16 and bfloat16
parameters); the step counts read from the device once, not every step;
a parameter without a gradient untouched; AMSGrad stepped on the CPU with
a warning; GradScaler's grad_scale refused; without fused=True torch keeps
its foreach path (it does not default to fused on any device)."""

import os
import warnings

import pytest
import torch

from davinci import schema
from davinci.trace import TraceSession
from davinci.trace.records import KIND_NAMES

_TASK_COMPLETE = next(k for k, v in KIND_NAMES.items()
                      if v == "TASK_COMPLETE")
SHAPES = [(6, 4), (4,), (3, 2, 5), (), (11, 3)]
#: torch.testing's float tolerances of each dtype, scaled for 6 steps
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6),
       torch.float16: dict(rtol=2e-3, atol=2e-3),
       torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}


@pytest.fixture(scope="module")
def trace(npu):
    session = TraceSession(devices=[0], spans=False, poll_ms=0)
    session.start()
    yield session
    session.stop()


def _device_ops(trace):
    """{op name: tasks} this process completed since the last call."""
    torch.npu.synchronize()
    counts = {}
    for r in trace.drain().records:
        if r.type == _TASK_COMPLETE and r.pid == os.getpid():
            name = schema.by_opcode(r.opcode).name
            counts[name] = counts.get(name, 0) + 1
    return counts


def _pair(dtype, shapes=SHAPES, seed=0):
    g = torch.Generator().manual_seed(seed)
    cpu = [torch.nn.Parameter(torch.randn(s, generator=g).to(dtype))
           for s in shapes]
    npu = [torch.nn.Parameter(c.detach().clone().to("npu")) for c in cpu]
    return cpu, npu


def _grads(cpu, npu, step, skip=()):
    g = torch.Generator().manual_seed(100 + step)
    for i, (c, n) in enumerate(zip(cpu, npu)):
        grad = torch.randn(c.shape, generator=g).to(c.dtype)
        c.grad = None if i in skip else grad.clone()
        n.grad = None if i in skip else grad.to(n.dtype).to("npu")


def _run(cls, kw, dtype, steps=6, skip=(), trace=None):
    cpu, npu = _pair(dtype)
    oc, on = cls(cpu, fused=True, **kw), cls(npu, fused=True, **kw)
    if trace is not None:
        _device_ops(trace)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no CPU fallback
        for step in range(steps):
            _grads(cpu, npu, step, skip)
            oc.step()
            on.step()
    return cpu, npu, oc, on


CASES = [(torch.optim.Adam, dict(lr=0.01)),
         (torch.optim.Adam, dict(lr=0.02, betas=(0.8, 0.99),
                                 weight_decay=0.1, eps=1e-6)),
         (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.05)),
         (torch.optim.AdamW, dict(lr=torch.tensor(0.01), maximize=True)),
         (torch.optim.Adam, dict(lr=0.05, betas=(0.3, 0.5)))]


@pytest.mark.parametrize("cls,kw", CASES, ids=[
    "%s-%d" % (c.__name__, i) for i, (c, _) in enumerate(CASES)])
def test_fused_adam_matches_cpu_torch_over_steps(npu, trace, cls, kw):
    cpu, npu_params, oc, on = _run(cls, kw, torch.float32, trace=trace)
    ran = _device_ops(trace)
    # one task per parameter per step, and the step counts' increments
    assert ran.get("ADAM") == 6 * len(SHAPES), ran
    for c, n in zip(cpu, npu_params):
        torch.testing.assert_close(n.detach().cpu(), c.detach(),
                                   **TOL[torch.float32])
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(on.state[n][key].cpu(),
                                       oc.state[c][key], rtol=1e-5,
                                       atol=1e-7)
        assert on.state[n]["step"].item() == 6.0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=str)
def test_fused_adam_of_half_parameters(npu, dtype):
    cpu, npu_params, oc, on = _run(torch.optim.AdamW,
                                   dict(lr=0.01, weight_decay=0.1), dtype)
    for c, n in zip(cpu, npu_params):
        assert n.dtype == dtype
        torch.testing.assert_close(n.detach().cpu(), c.detach(),
                                   **TOL[dtype])


def test_the_step_counts_are_read_once_and_a_write_is_seen(npu):
    from torch_npu import _fused_optim
    before = _fused_optim.reads
    cpu, npu_params, oc, on = _run(torch.optim.Adam, dict(lr=0.01),
                                   torch.float32, steps=5)
    # the first step reads each count; the host follows the increments
    assert _fused_optim.reads - before == len(SHAPES)
    # a count written behind the host's back (a reset) is read again
    for o, ps in ((oc, cpu), (on, npu_params)):
        o.state[ps[0]]["step"].fill_(1.0)
    _grads(cpu, npu_params, 9)
    oc.step()
    on.step()
    assert _fused_optim.reads - before == len(SHAPES) + 1
    for c, n in zip(cpu, npu_params):
        torch.testing.assert_close(n.detach().cpu(), c.detach(),
                                   **TOL[torch.float32])


def test_a_parameter_without_a_gradient_is_skipped(npu, trace):
    skip = (1, 3)
    cpu, npu_params, oc, on = _run(torch.optim.Adam,
                                   dict(lr=0.01, weight_decay=0.1),
                                   torch.float32, steps=3, skip=skip,
                                   trace=trace)
    assert _device_ops(trace).get("ADAM") == 3 * (len(SHAPES) - len(skip))
    start = _pair(torch.float32)[0]
    for i, (c, n) in enumerate(zip(cpu, npu_params)):
        torch.testing.assert_close(n.detach().cpu(), c.detach(),
                                   **TOL[torch.float32])
        if i in skip:
            assert torch.equal(n.detach().cpu(), start[i].detach())
            assert n not in on.state


def test_amsgrad_runs_on_the_cpu_and_grad_scale_is_refused(npu,
                                                           monkeypatch):
    from torch_npu import _kernels
    fell_back = []
    monkeypatch.setattr(_kernels, "warn_cpu",
                        lambda op, reason: fell_back.append((op, reason)))
    cpu, npu_params = _pair(torch.float32, SHAPES[:2])
    oc = torch.optim.Adam(cpu, lr=0.01, amsgrad=True, fused=True)
    on = torch.optim.Adam(npu_params, lr=0.01, amsgrad=True, fused=True)
    for step in range(3):
        _grads(cpu, npu_params, step)
        oc.step()
        on.step()
    assert len(fell_back) == 3 * 2 and all(
        op == "aten::_fused_adam_" and "AMSGrad" in reason
        for op, reason in fell_back)
    for c, n in zip(cpu, npu_params):
        torch.testing.assert_close(n.detach().cpu(), c.detach(),
                                   **TOL[torch.float32])
    p = [torch.nn.Parameter(torch.ones(4, device="npu"))]
    p[0].grad = torch.ones(4, device="npu")
    state = [torch.zeros(4, device="npu") for _ in range(2)]
    with pytest.raises(RuntimeError, match="grad_scale"):
        torch._fused_adam_(p, [p[0].grad], [state[0]], [state[1]], [],
                           [torch.ones((), device="npu")], lr=0.01,
                           beta1=0.9, beta2=0.999, weight_decay=0.0,
                           eps=1e-8, amsgrad=False, maximize=False,
                           grad_scale=torch.ones((), device="npu"))


def test_without_fused_torch_keeps_the_foreach_path(npu, trace):
    """torch.optim picks fused only when asked (fused=True): on npu, as on
    CPU and CUDA, the default is its foreach path."""
    cpu, npu_params = _pair(torch.float32, SHAPES[:2])
    on = torch.optim.Adam(npu_params, lr=0.01)
    _device_ops(trace)
    _grads(cpu, npu_params, 0)
    on.step()
    assert on.param_groups[0]["fused"] is None
    assert "ADAM" not in _device_ops(trace)


SGD_CASES = [dict(lr=0.1, momentum=0.9),
             dict(lr=0.05, momentum=0.8, dampening=0.1, weight_decay=0.01),
             dict(lr=torch.tensor(0.02), momentum=0.9, nesterov=True,
                  maximize=True, weight_decay=0.1),
             dict(lr=0.1, weight_decay=0.05)]


@pytest.mark.parametrize("kw", SGD_CASES, ids=[
    "sgd-%d" % i for i in range(len(SGD_CASES))])
def test_fused_sgd_matches_cpu_torch_over_steps(npu, trace, kw):
    cpu, npu_params, oc, on = _run(torch.optim.SGD, kw, torch.float32,
                                   skip=(2,), trace=trace)
    ran = _device_ops(trace)
    stepped = len(SHAPES) - 1
    if kw.get("momentum"):
        assert ran.get("SGD_MOMENTUM") == 6 * stepped, ran
        assert set(ran) == {"SGD_MOMENTUM"}, ran     # SGD counts no steps
    else:
        assert "SGD_MOMENTUM" not in ran, ran
    start = _pair(torch.float32)[0]
    for i, (c, n) in enumerate(zip(cpu, npu_params)):
        torch.testing.assert_close(n.detach().cpu(), c.detach(),
                                   **TOL[torch.float32])
        if kw.get("momentum") and i != 2:
            torch.testing.assert_close(
                on.state[n]["momentum_buffer"].cpu(),
                oc.state[c]["momentum_buffer"], **TOL[torch.float32])
    assert torch.equal(npu_params[2].detach().cpu(), start[2].detach())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=str)
def test_fused_sgd_of_half_parameters_follows_float32(npu, dtype):
    """float16 and bfloat16 parameters against CPU torch's float32 SGD of
    the same values, within the dtype's tolerance."""
    cpu32, _ = _pair(torch.float32)
    _, npu_params = _pair(dtype)
    kw = dict(lr=0.05, momentum=0.9, weight_decay=0.01)
    oc = torch.optim.SGD(cpu32, **kw)
    on = torch.optim.SGD(npu_params, fused=True, **kw)
    for step in range(4):
        _grads(cpu32, npu_params, step)
        for c, n in zip(cpu32, npu_params):   # the same rounded gradient
            c.grad = n.grad.cpu().float()
        oc.step()
        on.step()
    for c, n in zip(cpu32, npu_params):
        torch.testing.assert_close(n.detach().cpu().float(), c.detach(),
                                   **TOL[dtype])
