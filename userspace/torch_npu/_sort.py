# SPDX-License-Identifier: GPL-2.0
"""sort, argsort and topk on the device: ARGSORT's indices of each row in
torch.sort(stable=True)'s order (a NaN largest, -0 equal to +0, equal
values in their order), then INDEX_SELECT's values at them; a dim that is
not the last is moved there by one COPY_VIEW and the results are views
moved back. torch's unstable sort gets the stable order, which is one of
the orders it allows (and the one CPU torch gives)."""

from __future__ import annotations

import torch

from . import _device_ops as D
from . import _kernels as K

aten = torch.ops.aten


def sorted_on_device(x: torch.Tensor, dim: int, descending: bool,
                     k: int | None = None
                     ) -> "tuple[torch.Tensor, torch.Tensor] | None":
    """(values, int64 indices) of the first ``k`` (default: all) of x
    along ``dim`` in stable sorted order; None where the device cannot
    (a dtype ARGSORT or INDEX_SELECT lacks, a dim out of range, a k
    CPU torch refuses)."""
    if not K._is_npu(x) or x.dtype not in D.DTYPES or x.is_complex() or \
            x.is_conj() or x.is_neg():
        return None
    nd = max(x.dim(), 1)
    if not isinstance(dim, int) or not -nd <= dim < nd:
        return None
    d = dim % nd
    n = x.shape[d] if x.dim() else 1
    k = n if k is None else k
    if not 0 <= k <= n:
        return None
    shape = (x.shape[:d] + (k,) + x.shape[d + 1:]) if x.dim() else ()
    if x.numel() == 0 or k == 0:
        return (torch.empty(shape, dtype=x.dtype, device=x.device),
                torch.empty(shape, dtype=torch.int64, device=x.device))
    if not K._serves(x, "argsort", "index_select"):
        return None
    moved = x.movedim(d, -1) if x.dim() > 1 and d != x.dim() - 1 else x
    rows = moved.contiguous().reshape(-1, n)
    m = rows.shape[0]
    idx = torch.empty(m, k, dtype=torch.int64, device=x.device)
    D.rows("argsort", rows, idx, attr="descending" if descending
           else "ascending", k=k)
    values = torch.empty(m, k, dtype=x.dtype, device=x.device)
    D.index_rows("index_select", values, rows, idx, (m, n, 1, k))
    if not x.dim():
        return values.reshape(()), idx.reshape(())
    kept = moved.shape[:-1] + (k,)
    values, idx = values.reshape(kept), idx.reshape(kept)
    if moved is not x:
        values, idx = values.movedim(-1, d), idx.movedim(-1, d)
    return values, idx


def _into(res, values: torch.Tensor, indices: torch.Tensor, x):
    K._resize_out(values, res[0].shape, x)
    K._resize_out(indices, res[1].shape, x)
    values.copy_(res[0])
    indices.copy_(res[1])
    return values, indices


def _sort(x, dim=-1, descending=False):
    res = sorted_on_device(x, dim, descending)
    if res is not None:
        return res
    return K.on_cpu(aten.sort.default, "its dtype", x, dim, descending)


def _sort_stable(x, *, stable, dim=-1, descending=False):
    res = sorted_on_device(x, dim, descending)
    if res is not None:
        return res
    return K.on_cpu(aten.sort.stable, "its dtype", x, stable=stable,
                    dim=dim, descending=descending)


def _sort_values(x, dim=-1, descending=False, *, values, indices):
    res = sorted_on_device(x, dim, descending)
    if res is not None and values.dtype == x.dtype and \
            indices.dtype == torch.int64:
        return _into(res, values, indices, x)
    got = K.on_cpu(aten.sort.default, "its dtype or the outs'", x, dim,
                   descending)
    return _into(got, values, indices, x)


def _sort_values_stable(x, *, stable, dim=-1, descending=False, values,
                        indices):
    return _sort_values(x, dim, descending, values=values, indices=indices)


def _topk(x, k, dim=-1, largest=True, sorted=True):
    res = sorted_on_device(x, dim, largest, int(k))
    if res is not None:
        return res
    return K.on_cpu(aten.topk.default, "its dtype, or k out of range", x, k,
                    dim, largest, sorted)


def _topk_values(x, k, dim=-1, largest=True, sorted=True, *, values,
                 indices):
    res = sorted_on_device(x, dim, largest, int(k))
    if res is not None and values.dtype == x.dtype and \
            indices.dtype == torch.int64:
        return _into(res, values, indices, x)
    got = K.on_cpu(aten.topk.default, "its dtype, the outs', or k out of "
                   "range", x, k, dim, largest, sorted)
    return _into(got, values, indices, x)


SORT = {"sort": _sort, "sort.stable": _sort_stable,
        "sort.values": _sort_values,
        "sort.values_stable": _sort_values_stable}
TOPK = {"topk": _topk, "topk.values": _topk_values}

__all__ = ["sorted_on_device", "SORT", "TOPK"]
