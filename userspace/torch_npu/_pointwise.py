# SPDX-License-Identifier: GPL-2.0
"""Pointwise ops composed of the schema's elementwise ones on the npu
device: clamp (MAX, then MIN), hardtanh and its backward (CMP, SELECT),
rsqrt (SQRT, RECIPROCAL), mse_loss and its backward.

CPU torch's clamp is min(max(x, min), max): a NaN input stays NaN, a
NaN bound makes every element NaN (its vectorised loop and its serial
one agree on that), and where min > max every element is max. MAX and
MIN propagate NaN and keep their first operand where both are equal (a
-0 input clamped at +0 stays -0, as on the CPU), so the two tasks give
CPU torch's bits.
"""

from __future__ import annotations

import torch

from . import _device_ops as D
from . import _kernels as K
from ._reductions import cpu_out

aten = torch.ops.aten


def _bound(b):
    """A bound as _ew takes it: None, a Python number (a 0-dim CPU tensor
    read as one) or an npu tensor; False for anything else."""
    if b is None or K._is_npu(b):
        return b
    s = K._scalar(b)
    return False if s is None else s


def clamp_on_device(x, lo, hi, out=None):
    """min(max(x, lo), hi) on the device (``out``: an out= or x itself),
    bounds numbers or npu tensors broadcast to x, of x's result dtype;
    None where the device cannot (another result dtype, no bound)."""
    if not K._is_npu(x) or x.dtype == torch.bool or x.dtype not in D.DTYPES:
        return None
    lo_b, hi_b = _bound(lo), _bound(hi)
    if lo_b is False or hi_b is False or (lo_b is None and hi_b is None):
        return None
    dt = x.dtype
    for b in (lo, hi):
        if b is not None and torch.result_type(x, b) != dt:
            return None
    if out is not None and out.dtype != dt:
        return None
    if lo_b is not None and hi_b is not None:
        if x.shape != torch.broadcast_shapes(
                x.shape, *(b.shape for b in (lo_b, hi_b)
                           if isinstance(b, torch.Tensor))):
            return None         # (a result larger than x: the CPU's)
        low = K._ew("max", dt, [x, lo_b], None, dt)
        if low is None:
            return None
        return K._ew("min", dt, [low, hi_b], out, dt)
    if lo_b is not None:
        return K._ew("max", dt, [x, lo_b], out, dt)
    return K._ew("min", dt, [x, hi_b], out, dt)


def _make_clamp(name: str) -> dict[str, object]:
    """clamp, clamp_min or clamp_max: functional, in place and out=, with
    Scalar and Tensor bounds."""
    op = getattr(aten, name)
    inplace_op = getattr(aten, name + "_")

    def bounds(args):
        if name == "clamp":
            return (list(args) + [None, None])[:2]
        return (args[0], None) if name == "clamp_min" else (None, args[0])

    def reason():
        return "bounds of another dtype, no bound, or x's dtype"

    def functional(x, *args):
        lo, hi = bounds(args)
        res = clamp_on_device(x, lo, hi)
        if res is not None:
            return res
        overload = op.Tensor if any(isinstance(b, torch.Tensor)
                                    for b in (lo, hi)) else op.default
        return K.on_cpu(overload, reason(), x, *args)

    def inplace(x, *args):
        lo, hi = bounds(args)
        if clamp_on_device(x, lo, hi, x) is not None:
            return x
        overload = inplace_op.Tensor if any(
            isinstance(b, torch.Tensor) for b in (lo, hi)) else \
            inplace_op.default
        x.copy_(K.on_cpu(overload, reason(), x, *args))
        return x

    def out_fn(x, *args, out):
        lo, hi = bounds(args)
        try:
            shape = torch.broadcast_shapes(x.shape, *(
                b.shape for b in (lo, hi) if isinstance(b, torch.Tensor)))
        except RuntimeError:
            shape = None
        if shape == x.shape:
            K._resize_out(out, shape, x)
            if clamp_on_device(x, lo, hi, out) is not None:
                return out
        tensors = any(isinstance(b, torch.Tensor) for b in (lo, hi))
        return cpu_out(op.Tensor_out if tensors else op.out, reason(), out,
                       x, *args)
    return {name: functional, name + ".Tensor": functional,
            name + "_": inplace, name + "_.Tensor": inplace,
            name + ".out": out_fn, name + ".Tensor_out": out_fn}


CLAMP = _make_clamp("clamp")
CLAMP_MIN = _make_clamp("clamp_min")
CLAMP_MAX = _make_clamp("clamp_max")


# -- hardtanh -------------------------------------------------------------------
def _hardtanh(x, min_val=-1, max_val=1):
    if x.dtype in D.FLOATS:
        res = clamp_on_device(x, min_val, max_val)
        if res is not None:
            return res
    return K.on_cpu(aten.hardtanh.default, "an integer tensor or the "
                    "bounds", x, min_val, max_val)


def _hardtanh_(x, min_val=-1, max_val=1):
    if x.dtype in D.FLOATS and \
            clamp_on_device(x, min_val, max_val, x) is not None:
        return x
    x.copy_(K.on_cpu(aten.hardtanh.default, "an integer tensor or the "
                     "bounds", x, min_val, max_val))
    return x


def _hardtanh_out(x, min_val=-1, max_val=1, *, out):
    K._resize_out(out, x.shape, x)
    if x.dtype in D.FLOATS and \
            clamp_on_device(x, min_val, max_val, out) is not None:
        return out
    return cpu_out(aten.hardtanh.out, "an integer tensor, the bounds or "
                   "out's dtype", out, x, min_val, max_val)


def hardtanh_backward_on_device(grad, x, min_val, max_val):
    """CPU torch's (x <= min or x >= max) ? 0 : grad: grad copied, then +0
    SELECTed where x <= min and where x >= max. A NaN x passes its
    gradient, as CPU torch's serial loop has it (its vectorised one, over
    blocks of 32 or so elements, gives 0 there: which one a NaN meets
    depends on its position and the CPU)."""
    if not (K._is_npu(grad) and K._is_npu(x) and grad.dtype == x.dtype and
            x.dtype in D.FLOATS and grad.shape == x.shape and
            grad.is_contiguous() and grad.numel()):
        return None
    index = x.get_device()
    if not D.serves(index, "select", D.DTYPES[x.dtype]):
        return None
    masks = []
    for pred, bound in (("le", min_val), ("ge", max_val)):
        m = K._ew("compare", x.dtype, [x, bound], None, torch.bool,
                  torch.bool, attr=pred)
        if m is None:
            return None
        masks.append(m)
    zero = K._value_operand(x, 0)
    if zero is None:
        return None
    out = grad.clone()
    for m in masks:
        if not K._select_into(out, m, zero):
            return None         # (nothing launched: the first check)
    return out


def _hardtanh_backward(grad, x, min_val, max_val):
    res = hardtanh_backward_on_device(grad, x, min_val, max_val)
    if res is not None:
        return res
    return K.on_cpu(aten.hardtanh_backward.default, "shapes, layouts or "
                    "dtypes", grad, x, min_val, max_val)


def _hardtanh_backward_out(grad, x, min_val, max_val, *, grad_input):
    res = hardtanh_backward_on_device(grad, x, min_val, max_val)
    if res is not None and res.dtype == grad_input.dtype:
        K._resize_out(grad_input, res.shape, grad, x)
        grad_input.copy_(res)
        return grad_input
    res = K.on_cpu(aten.hardtanh_backward.grad_input, "shapes, layouts or "
                   "dtypes", grad, x, min_val, max_val, grad_input=grad_input)
    K._resize_out(grad_input, res.shape)
    grad_input.copy_(res)
    return grad_input


HARDTANH = {"hardtanh": _hardtanh, "hardtanh_": _hardtanh_,
            "hardtanh.out": _hardtanh_out}
HARDTANH_BACKWARD = {"hardtanh_backward": _hardtanh_backward,
                     "hardtanh_backward.grad_input": _hardtanh_backward_out}

# -- rsqrt ----------------------------------------------------------------------
def rsqrt_on_device(x, out=None):
    """1 / sqrt(x): SQRT, then RECIPROCAL, each correctly rounded, which is
    CPU torch's float32 rsqrt bit for bit (its loop divides 1 by the
    rounded square root); float16/bfloat16 in float32 and rounded once,
    an integer tensor into float32, as CPU torch."""
    if not K._is_npu(x) or x.dtype not in D.DTYPES or x.dtype == torch.bool:
        return None
    f32 = torch.float32
    result = x.dtype if x.dtype.is_floating_point else f32
    if out is not None and out.dtype != result:
        return None
    root = K._ew("sqrt", f32, [x], None, f32)
    if root is None:
        return None
    return K._ew("reciprocal", f32, [root], out, result)


def _rsqrt(x):
    res = rsqrt_on_device(x)
    if res is not None:
        return res
    return K.on_cpu(aten.rsqrt.default, "its dtype", x)


def _rsqrt_(x):
    if x.dtype.is_floating_point and rsqrt_on_device(x, x) is not None:
        return x
    x.copy_(K.on_cpu(aten.rsqrt_.default, "its dtype", x))
    return x


def _rsqrt_out(x, *, out):
    K._resize_out(out, x.shape, x)
    if rsqrt_on_device(x, out) is not None:
        return out
    return cpu_out(aten.rsqrt.out, "its dtype or out's", out, x)


RSQRT = {"rsqrt": _rsqrt, "rsqrt_": _rsqrt_, "rsqrt.out": _rsqrt_out}


# -- mse_loss -------------------------------------------------------------------
_NONE, _MEAN, _SUM = 0, 1, 2        # torch's Reduction enum


def _mse_operands_ok(*ts) -> bool:
    return all(K._is_npu(t) and t.dtype in D.FLOATS and t.numel() and
               t.dtype == ts[0].dtype and t.device == ts[0].device
               for t in ts)


def mse_loss_on_device(x, y, reduction: int):
    """CPU torch's mse_loss: d = x - y, d * d, then its mean or sum."""
    from . import _reductions as R
    if not _mse_operands_ok(x, y) or reduction not in (_NONE, _MEAN, _SUM):
        return None
    d = K._ew("sub", x.dtype, [x, y], None, x.dtype)
    if d is None:
        return None
    sq = K._ew("mul", x.dtype, [d, d], None, x.dtype)
    if reduction == _NONE:
        return sq
    if reduction == _MEAN:
        return R.mean_on_device(sq, None, False)
    return R.sum_on_device(sq, None, False)


def mse_loss_backward_on_device(grad, x, y, reduction: int):
    """CPU torch's (norm * (x - y)) * grad, norm = 2 / N for a mean (N the
    elements of x), else 2, in x's dtype."""
    if not _mse_operands_ok(grad, x, y) or \
            reduction not in (_NONE, _MEAN, _SUM):
        return None
    dt = x.dtype
    norm = 2.0 / x.numel() if reduction == _MEAN else 2.0
    if dt != torch.float32:
        norm = K._as_dtype(norm, dt)
    d = K._ew("sub", dt, [x, y], None, dt)
    if d is None:
        return None
    scaled = K._ew("axpy", dt, [d, -0.0], None, dt,
                   attr=K._as_float32(norm))
    if scaled is None:
        return None
    return K._ew("mul", dt, [scaled, grad], None, dt)


def _mse_loss(x, y, reduction=_MEAN):
    res = mse_loss_on_device(x, y, reduction)
    if res is not None:
        return res
    return K.on_cpu(aten.mse_loss.default, "dtypes, devices or an empty "
                    "tensor", x, y, reduction)


def _mse_loss_out(x, y, reduction=_MEAN, *, out):
    res = mse_loss_on_device(x, y, reduction)
    if res is not None and res.dtype == out.dtype:
        K._resize_out(out, res.shape, x, y)
        out.copy_(res)
        return out
    return cpu_out(aten.mse_loss.out, "dtypes, devices, out's dtype or an "
                   "empty tensor", out, x, y, reduction)


def _mse_loss_backward(grad, x, y, reduction):
    res = mse_loss_backward_on_device(grad, x, y, reduction)
    if res is not None:
        return res
    return K.on_cpu(aten.mse_loss_backward.default, "dtypes, devices or an "
                    "empty tensor", grad, x, y, reduction)


def _mse_loss_backward_out(grad, x, y, reduction, *, grad_input):
    res = mse_loss_backward_on_device(grad, x, y, reduction)
    if res is not None and res.dtype == grad_input.dtype:
        K._resize_out(grad_input, res.shape, grad, x, y)
        grad_input.copy_(res)
        return grad_input
    res = K.on_cpu(aten.mse_loss_backward.grad_input, "dtypes, devices or an "
                   "empty tensor", grad, x, y, reduction,
                   grad_input=grad_input)
    K._resize_out(grad_input, res.shape)
    grad_input.copy_(res)
    return grad_input


MSE_LOSS = {"mse_loss": _mse_loss, "mse_loss.out": _mse_loss_out}
MSE_LOSS_BACKWARD = {"mse_loss_backward": _mse_loss_backward,
                     "mse_loss_backward.grad_input": _mse_loss_backward_out}


__all__ = ["clamp_on_device", "hardtanh_backward_on_device",
           "rsqrt_on_device", "mse_loss_on_device",
           "mse_loss_backward_on_device", "CLAMP", "CLAMP_MIN", "CLAMP_MAX",
           "HARDTANH", "HARDTANH_BACKWARD", "RSQRT", "MSE_LOSS",
           "MSE_LOSS_BACKWARD"]
