# SPDX-License-Identifier: GPL-2.0
"""torch.optim's fused path on npu: aten::_fused_adam_ and _fused_adamw_
(what ``torch.optim.Adam(..., fused=True)`` and ``AdamW(..., fused=True)``
call), one DAVINCI_OP_ADAM task per parameter, and aten::_fused_sgd_
(``SGD(..., fused=True)``), one DAVINCI_OP_SGD_MOMENTUM task per parameter
(without momentum, SGD keeps no buffer: ``param -= lr * grad`` as AXPY).

The task's block holds the step's bias corrections, which the host computes
in float64 from the step count (davinci.optim, as CPU torch's fused kernel
does). torch keeps that count in a float32 tensor on the parameter's
device, incremented by ``_foreach_add_(state_steps, 1)`` just before the
fused call; reading it back each step would wait for the device. So the
host keeps a copy of each step tensor's value beside the tensor's version:
:func:`note_increment` (the ``_foreach_add_.Scalar`` kernel calls it) moves
it along with the device's add, and a version it did not see (any other
write, a tensor loaded from a checkpoint) makes :func:`step_value` read the
device once.

Refused with a RuntimeError: ``grad_scale``/``found_inf`` (GradScaler's
unscaling inside the fused step). A parameter the task cannot take
(AMSGrad, a dtype or layout the device lacks, operands sharing memory) is
stepped by CPU torch's fused kernel on host copies, with a warning.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch
from torch.utils.weak import WeakIdKeyDictionary

from davinci.optim import adam_fields, sgd_momentum_fields

from . import _device_ops as D

aten = torch.ops.aten

#: step tensor -> (its version when the value was right, the value)
_steps: "WeakIdKeyDictionary" = WeakIdKeyDictionary()
#: step counts read back from the device so far (tests tell a copy the
#: host kept from a read, which waits for the device)
reads = 0


def _is_step(t) -> bool:
    return isinstance(t, torch.Tensor) and t.device.type == "npu" and \
        t.dim() == 0 and t.dtype == torch.float32 and not t.requires_grad


def known_steps(ts: Sequence) -> list:
    """The values of those of ``ts`` whose copy is current (None for the
    others): what :func:`note_increment` moves on, read before the add."""
    out = []
    for t in ts:
        held = _steps.get(t) if _is_step(t) else None
        out.append(held[1] if held is not None and held[0] == t._version
                   else None)
    return out


def note_increment(ts: Sequence, before: Sequence, other) -> None:
    """After ``_foreach_add_(ts, other)`` ran on the device: each step
    tensor whose value ``before`` knew now holds float32(before + other),
    as the device's float32 add computes it, at the version the add left
    (the per-tensor add_ counted it; were the version to move again, the
    next step would read the device: slower, never wrong)."""
    if not isinstance(other, (int, float)) or isinstance(other, bool):
        return
    for t, v in zip(ts, before):
        if v is not None:
            new = float(np.float32(v) + np.float32(other))
            _steps[t] = (t._version, new)


def step_value(t: torch.Tensor) -> float:
    """The step count ``t`` holds: the host's copy, or read from the
    device (a wait) when the copy is not current."""
    if not isinstance(t, torch.Tensor):
        return float(t)
    if _is_step(t):
        held = _steps.get(t)
        if held is not None and held[0] == t._version:
            return held[1]
    global reads
    v = float(t.item())
    if _is_step(t):
        reads += 1
        _steps[t] = (t._version, v)
    return v


def _disjoint(ts: Sequence[torch.Tensor]) -> bool:
    spans = sorted((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size())
                   for t in ts)
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def _on_device(p, g, m, v) -> bool:
    return D.on_device(p, g, m, v, ops=("adam",), floats=True) and \
        g.shape == p.shape == m.shape == v.shape and _disjoint((p, g, m, v))


def _on_cpu(fn, tensors, max_sq, step, reason: str, **kw) -> None:
    """Parameter ``i`` stepped by CPU torch's fused kernel on host copies,
    its results written back."""
    from ._kernels import warn_cpu
    warn_cpu("aten::" + fn.__name__, reason)
    p, g, m, v = (t.cpu() for t in tensors)
    mx = [max_sq.cpu()] if max_sq is not None else []
    fn([p], [g], [m], [v], mx, [torch.tensor(step, dtype=torch.float32)],
       **kw)
    for dst, src in zip(tensors, (p, g, m, v)):
        dst.copy_(src)
    if max_sq is not None:
        max_sq.copy_(mx[0])


@functools.lru_cache(maxsize=256)
def _block(step: float, lr: float, beta1: float, beta2: float,
           weight_decay: float, eps: float, maximize: bool,
           decoupled: bool) -> bytes:
    """ADAM's block for a step of these hyperparameters: the same for every
    parameter of a group at one step, so made once."""
    return D.adam_block(adam_fields(
        step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps,
        weight_decay=weight_decay, decoupled=decoupled, maximize=maximize))


def _refuse_scaling(grad_scale, found_inf) -> None:
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError(
            "torch_npu's fused optimizers do not unscale gradients "
            "(grad_scale/found_inf, GradScaler with fused=True): use the "
            "default foreach optimizer (fused=False) with GradScaler, or "
            "unscale before step()")


def _fused(decoupled: bool):
    cpu_fn = torch._fused_adamw_ if decoupled else torch._fused_adam_

    def kernel(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
               state_steps, *, lr, beta1: float, beta2: float,
               weight_decay: float, eps: float, amsgrad: bool,
               maximize: bool, grad_scale=None, found_inf=None) -> None:
        _refuse_scaling(grad_scale, found_inf)
        lr = float(lr.item()) if isinstance(lr, torch.Tensor) else float(lr)
        for i, (p, g, m, v) in enumerate(zip(params, grads, exp_avgs,
                                             exp_avg_sqs)):
            if not p.numel():
                continue
            step = step_value(state_steps[i])
            kw = dict(lr=lr, beta1=beta1, beta2=beta2,
                      weight_decay=weight_decay, eps=eps, maximize=maximize)
            if amsgrad or not _on_device(p, g, m, v):
                _on_cpu(cpu_fn, (p, g, m, v),
                        max_exp_avg_sqs[i] if amsgrad else None, step,
                        "AMSGrad (a fifth operand)" if amsgrad else
                        "operands the ADAM task does not take (a dtype, "
                        "layout or shapes, or shared memory)",
                        amsgrad=amsgrad, **kw)
                continue
            D.adam(p, g, m, v, _block(step, lr, beta1, beta2, weight_decay,
                                      eps, maximize, decoupled))
    kernel.__name__ = "_fused_adamw_" if decoupled else "_fused_adam_"
    return kernel


FUSED_ADAM = {"_fused_adam_": _fused(False),
              "_fused_adam_.tensor_lr": _fused(False)}
FUSED_ADAMW = {"_fused_adamw_": _fused(True),
               "_fused_adamw_.tensor_lr": _fused(True)}


@functools.lru_cache(maxsize=256)
def _sgd_block(lr: float, momentum: float, dampening: float,
               weight_decay: float, nesterov: bool, maximize: bool,
               first_step: bool) -> bytes:
    return D.sgd_momentum_block(sgd_momentum_fields(
        lr=lr, momentum=momentum, dampening=dampening,
        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
        first_step=first_step))


def _fused_sgd_(params, grads, momentum_buffer_list, *, weight_decay: float,
                momentum: float, lr, dampening: float, nesterov: bool,
                maximize: bool, is_first_step: bool, grad_scale=None,
                found_inf=None) -> None:
    _refuse_scaling(grad_scale, found_inf)
    lr = float(lr.item()) if isinstance(lr, torch.Tensor) else float(lr)
    for i, (p, g) in enumerate(zip(params, grads)):
        if not p.numel():
            continue
        if not momentum:
            # torch's formula without a buffer: g (+ param * weight
            # decay), param -= lr * g
            if weight_decay:
                g = torch.add(g, p, alpha=weight_decay)
            p.add_(g, alpha=lr if maximize else -lr)
            continue
        b = momentum_buffer_list[i]
        if D.on_device(p, g, b, ops=("sgd_momentum",), floats=True) and \
                g.shape == p.shape == b.shape and _disjoint((p, g, b)):
            D.sgd_momentum(p, g, b, _sgd_block(
                lr, momentum, dampening, weight_decay, nesterov, maximize,
                is_first_step))
            continue
        from ._kernels import warn_cpu
        warn_cpu("aten::_fused_sgd_", "operands the SGD_MOMENTUM task does "
                 "not take (a dtype, layout or shapes, or shared memory)")
        pc, gc, bc = p.cpu(), g.cpu(), b.cpu()
        torch._fused_sgd_([pc], [gc], [bc], weight_decay=weight_decay,
                          momentum=momentum, lr=lr, dampening=dampening,
                          nesterov=nesterov, maximize=maximize,
                          is_first_step=is_first_step)
        p.copy_(pc)
        b.copy_(bc)


FUSED_SGD = {"_fused_sgd_": _fused_sgd_, "_fused_sgd_.tensor_lr": _fused_sgd_}
