# SPDX-License-Identifier: GPL-2.0
"""torch.cat on the npu device: each input copied into its slice of the
result by the device's copies (_kernels._copy_from: a MEMCPY where the
slice and the input are laid out alike, a COPY_VIEW of a strided input,
one strided IDENTITY into a slice along a later dim, a CAST to the
promoted dtype; a dtype the device does not compute in moved as the
device dtype of its element size), as CPU torch's cat: legacy empty 1-D
inputs skipped, the inputs promoted by torch.result_type, an out= resized."""

from __future__ import annotations

import torch

from . import _device_ops as D
from . import _kernels as K
from . import _logical as L
from ._logical import dtype_name

aten = torch.ops.aten


def _skipped(t: torch.Tensor) -> bool:
    # CPU torch's cat skips 1-D empty tensors whatever the others' shapes
    return t.dim() == 1 and t.numel() == 0


def _plan(tensors, dim: int):
    """(result shape, result dtype, wrapped dim, inputs kept) of cat on
    the device; None where the CPU should run it (a CPU tensor, inputs on
    two devices, math bits, shapes it refuses: it raises torch's error)."""
    ts = list(tensors)
    if not ts or not all(K._is_npu(t) for t in ts):
        return None
    if any(t.device != ts[0].device or t.is_conj() or t.is_neg()
           for t in ts):
        return None
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = torch.promote_types(dt, t.dtype)
    kept = [t for t in ts if not _skipped(t)]
    if not kept:
        return (0,), dt, 0, []
    nd = kept[0].dim()
    if nd == 0 or not -nd <= dim < nd:
        return None
    d = dim % nd
    first = kept[0].shape
    for t in kept:
        if t.dim() != nd or any(t.shape[i] != first[i]
                                for i in range(nd) if i != d):
            return None
    shape = list(first)
    shape[d] = sum(t.shape[d] for t in kept)
    return tuple(shape), dt, d, kept


def _copy_slices(out: torch.Tensor, d: int, kept) -> None:
    if out.dtype not in D.DTYPES and L.carries(out.dtype) and \
            all(t.dtype == out.dtype for t in kept):
        # a dtype the device does not compute in: its bits as the device
        # dtype of its element size (the copies move bits)
        out = L.carried(out, out.dtype)
        kept = [L.carried(t, t.dtype) for t in kept]
    offset = 0
    for t in kept:
        n = t.shape[d]
        if n:
            out.narrow(d, offset, n).copy_(t)
        offset += n


def cat(tensors, dim=0):
    plan = _plan(tensors, dim)
    if plan is None:
        return K.on_cpu(aten.cat.default, "inputs off the device or of "
                        "shapes cat refuses", list(tensors), dim)
    shape, dt, d, kept = plan
    out = torch.empty(shape, dtype=dt, device=tensors[0].device)
    _copy_slices(out, d, kept)
    return out


def cat_out(tensors, dim=0, *, out):
    plan = _plan(tensors, dim)
    if plan is None or not K._is_npu(out) or out.device != \
            tensors[0].device:
        out.copy_(K.on_cpu(aten.cat.default, "inputs off the device or of "
                           "shapes cat refuses", list(tensors), dim))
        return out
    shape, dt, d, kept = plan
    if not torch.can_cast(dt, out.dtype):
        raise RuntimeError("result type %s can't be cast to the desired "
                           "output type %s"
                           % (dtype_name(dt), dtype_name(out.dtype)))
    if out.numel() and any(K._overlap(out, t) for t in tensors
                           if t.numel()):
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and "
            "the written-to tensor refer to a single memory location. "
            "Please clone() the tensor before performing the operation.")
    K._resize_out(out, torch.Size(shape))
    _copy_slices(out, d, kept)
    return out

