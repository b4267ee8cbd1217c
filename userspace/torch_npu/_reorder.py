# SPDX-License-Identifier: GPL-2.0
"""Ops that move elements without computing on them, composed of the
device's copies and gathers: flip (a reversed ARANGE index, then
INDEX_SELECT along each flipped dim), roll (the two slices of each
rolled dim concatenated the other way round: cat's copies) and unfold
(a view: repeat's result is written through it).

COPY_VIEW walks non-negative strides only, so a flip cannot be one
strided copy: the gather reads each flipped dim once.
"""

from __future__ import annotations

import torch

from . import _device_ops as D
from . import _kernels as K
from ._reductions import cpu_out

aten = torch.ops.aten


def flip_on_device(x, dims):
    """x with ``dims`` reversed, a new dense tensor; None where the device
    cannot (a dtype INDEX_SELECT does not move, an empty tensor)."""
    nd = max(x.dim(), 1)
    if not all(isinstance(d, int) and -nd <= d < nd for d in dims):
        return None
    if K._is_npu(x) and x.numel() == 0 and x.dtype in D.DTYPES:
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if not K._serves(x, "index_select") or \
            not D.serves(x.get_device(), "arange", "int64"):
        return None
    dims = sorted({d % nd for d in dims}) if x.dim() else []
    out = x
    for d in dims:
        n = x.shape[d]
        if n == 1:
            continue
        index = torch.arange(n - 1, -1, -1, device=x.device)
        out = K._index_select(out, d, index)
    return out.clone() if out is x else out


def _flip(x, dims):
    res = flip_on_device(x, dims)
    if res is not None:
        return res
    return K.on_cpu(aten.flip.default, "its dtype or an empty tensor", x,
                    dims)


def _flip_out(x, dims, *, out):
    res = flip_on_device(x, dims)
    if res is not None and res.dtype == out.dtype:
        K._resize_out(out, res.shape, x)
        out.copy_(res)
        return out
    return cpu_out(aten.flip.out, "its dtype, out's or an empty tensor", out,
                   x, dims)


def roll_on_device(x, shifts, dims):
    """x rolled by ``shifts`` along ``dims`` (none: the flattened tensor,
    as torch): the last ``shift`` elements of each dim, then the others,
    by one cat; None where the device cannot."""
    if not K._is_npu(x) or x.dtype not in D.DTYPES:
        return None
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if dims and x.dim() == 0:
        return None             # (the CPU raises torch's IndexError)
    if x.numel() == 0:
        if len(shifts) != max(len(dims), 1):
            return None
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if not dims:
        if len(shifts) != 1:
            return None         # (the CPU raises torch's error)
        flat = roll_on_device(x.reshape(-1), shifts, [0])
        return None if flat is None else flat.view(x.shape)
    nd = max(x.dim(), 1)
    if len(shifts) != len(dims) or \
            not all(isinstance(d, int) and -nd <= d < nd for d in dims):
        return None
    out = x
    for shift, d in zip(shifts, dims):
        d %= nd
        n = x.shape[d] if x.dim() else 1
        s = shift % n
        if s == 0:
            continue
        out = torch.cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)],
                        d)
    return out.clone() if out is x else out


def _roll(x, shifts, dims=()):
    res = roll_on_device(x, shifts, dims)
    if res is not None:
        return res
    return K.on_cpu(aten.roll.default, "its dtype, an empty tensor or the "
                    "shifts", x, shifts, dims)


def _roll_out(x, shifts, dims=(), *, out):
    res = roll_on_device(x, shifts, dims)
    if res is not None and res.dtype == out.dtype:
        K._resize_out(out, res.shape, x)
        out.copy_(res)
        return out
    return cpu_out(aten.roll.out, "its dtype, out's, an empty tensor or the "
                   "shifts", out, x, shifts, dims)


def _unfold(x, dimension, size, step):
    """Tensor.unfold: a view (CPU torch's sizes and strides), no copy."""
    nd = x.dim()
    if nd == 0:
        return x.as_strided((size,), (1,)) if size <= 1 else \
            K.on_cpu(aten.unfold.default, "a 0-dim tensor", x, dimension,
                     size, step)
    d = dimension % nd
    n = x.shape[d]
    if size > n or step <= 0 or size < 0:
        return K.on_cpu(aten.unfold.default, "a size or step torch "
                        "refuses", x, dimension, size, step)
    sizes = list(x.shape)
    strides = list(x.stride())
    sizes[d] = (n - size) // step + 1
    strides[d] = strides[d] * step
    return x.as_strided(sizes + [size], strides + [x.stride(d)],
                        x.storage_offset())


FLIP = {"flip": _flip, "flip.out": _flip_out}
ROLL = {"roll": _roll, "roll.out": _roll_out}
UNFOLD = {"unfold": _unfold}

__all__ = ["flip_on_device", "roll_on_device", "FLIP", "ROLL", "UNFOLD"]
