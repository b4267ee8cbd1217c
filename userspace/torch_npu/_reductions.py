# SPDX-License-Identifier: GPL-2.0
"""Reductions over any dims on the npu device: sum, mean, var, std,
amax, amin, max, min, vector norms (linalg.vector_norm, norm), from the
schema's row ops.

A reduction over dims that are not the trailing ones moves them last
with one copy of the permuted tensor (COPY_VIEW), so that each output
element is one dense row: REDUCE_SUM sums it (eight float32 lanes, the
order of NUMERICS.md, which is not CPU torch's cascade: sums agree with
CPU torch within float32 rounding, not bit for bit), ARGMAX/ARGMIN find
its first maximum (the first NaN) and INDEX_SELECT reads the value
there. float16 and bfloat16 rows are summed in float32 and rounded once.
"""

from __future__ import annotations

import math

import torch

from . import _device_ops as D
from . import _kernels as K

aten = torch.ops.aten


def reduce_dims(x: torch.Tensor, dim) -> "list[int] | None":
    """The dims ``dim`` names (None or an empty list: all; an int or a
    list), sorted; None for one out of range or named twice, or a tensor
    of more than 64 dims (the CPU raises torch's error)."""
    nd = x.dim()
    if dim is None:
        return list(range(nd))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(nd))
    n = max(nd, 1)
    if nd > 64 or not all(isinstance(d, int) and -n <= d < n
                          for d in dims):
        return None
    wrapped = [d % n for d in dims]
    if len(set(wrapped)) != len(wrapped):
        return None             # (a dim named twice: the CPU raises)
    return sorted(wrapped) if nd else []


def kept_shape(x: torch.Tensor, dims: list[int], keepdim: bool) -> list[int]:
    """The result's shape: ``dims`` dropped, or sizes of 1 with keepdim."""
    return [1 if d in dims else s for d, s in enumerate(x.shape)] if \
        keepdim else [s for d, s in enumerate(x.shape) if d not in dims]


def rows_of(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
    """x as dense [m, n] rows: the kept dims in order, then ``dims``
    (one COPY_VIEW, none where x is already dense in that order)."""
    keep = [d for d in range(x.dim()) if d not in dims]
    moved = x.permute(keep + dims) if x.dim() else x
    moved = moved.contiguous()
    n = K._prod(x.shape[d] for d in dims)
    return moved.reshape(-1, n)


def _float_input(x, dtype) -> "torch.Tensor | None":
    """x in the float dtype the reduction computes in (``dtype`` when it
    is given: a CAST on the device), or None where the device cannot."""
    if not K._is_npu(x) or x.is_conj() or x.is_neg():
        return None
    dt = dtype or x.dtype
    if dt not in D.FLOATS or x.dtype not in D.DTYPES:
        return None
    if x.dtype != dt:
        if not D.serves(x.get_device(), "cast", D.DTYPES[x.dtype]):
            return None
        x = x.to(dt) if x.numel() else torch.empty(x.shape, dtype=dt,
                                                   device=x.device)
    return x


def _target(out, x: torch.Tensor, m: int) -> torch.Tensor:
    """The [m] result tensor: ``out`` (an out= of x's dtype, resized to
    the result, dense) viewed flat, or a new one."""
    if out is not None and out.dtype == x.dtype and out.is_contiguous() \
            and out.get_device() == x.get_device():
        return out.view(-1)
    return torch.empty(m, dtype=x.dtype, device=x.device)


def sum_on_device(x: torch.Tensor, dim, keepdim: bool, dtype=None,
                  out=None, count: bool = False, matmul: bool = True):
    """sum of npu tensor x over ``dim`` (any dims) on the device (into
    ``out``, an out= resized to the result), divided by the number of
    elements summed when ``count`` (a mean; ``matmul``: leading dims of a
    dense tensor as a MATMUL); None where the device cannot
    (integer or bool sums, empty tensors, an out= of another dtype)."""
    x = _float_input(x, dtype)
    if x is None:
        return None
    dims = reduce_dims(x, dim)
    index = x.get_device()
    name = D.DTYPES[x.dtype]
    if dims is None or not D.serves(index, "reduce_sum", name) or \
            (count and not D.serves(index, "div", name)):
        return None
    shape = kept_shape(x, dims, keepdim)
    if out is not None:
        if out.dtype != x.dtype or not K._is_npu(out):
            return None
        K._resize_out(out, torch.Size(shape), x)
    m = K._prod(shape)
    n = x.numel() // max(m, 1)
    target = _target(out, x, m)
    if x.numel() == 0:
        # a sum of nothing is 0 (MEMSET), a mean of nothing 0 / 0: NaN
        if m:
            target.fill_(math.nan if count else 0.0)
        return out if out is not None else target.view(shape)
    res = torch.empty_like(target) if count else target
    if x.is_contiguous() and dims and dims == list(range(len(dims))) and \
            len(dims) < x.dim() and matmul and \
            D.serves(index, "matmul", name):
        # leading dims of a dense tensor (a linear layer's bias gradient
        # over batch and sequence): ones[1, n] @ x[n, m], no copy
        D.matmul_dt(D.const(x, 1, (1, n)), D.dev(x, (n, m)),
                    D.dev(res, (1, m)), x)
    else:
        D.row_sums(rows_of(x, dims), res)
    if count:
        # a DIV by a 0-dim constant: n rounded to the dtype, as CPU
        # torch's sum(...).div_(n)
        res = K._ew("div", x.dtype, [res, float(n)], target, x.dtype)
    if out is not None:
        if res.data_ptr() != out.data_ptr():
            out.copy_(res.view(shape))
        return out
    return res.view(shape)


def mean_on_device(x: torch.Tensor, dim, keepdim: bool, dtype=None,
                   out=None):
    """mean: the sum, divided by the number of elements summed (CPU
    torch's sum(...).div_(n)); a float16 or bfloat16 mean is summed and
    divided in float32 and rounded once, as CPU torch's (cast_fp32, sum,
    div, cast back: a count beyond float16's range divides right)."""
    result = dtype or (x.dtype if K._is_npu(x) else None)
    if result not in (torch.float16, torch.bfloat16) or x.numel() == 0:
        return sum_on_device(x, dim, keepdim, dtype, out, count=True)
    if out is not None and out.dtype != result:
        return None
    mean = sum_on_device(x, dim, keepdim, torch.float32, None, count=True,
                         matmul=False)
    if mean is None or not D.serves(x.get_device(), "cast", "float32"):
        return None
    if out is None:
        return mean.to(result)
    K._resize_out(out, mean.shape, x)
    out.copy_(mean)             # (a CAST, out dense or a strided one)
    return out


def cpu_out(op, reason: str, out: torch.Tensor, *args, **kwargs
             ) -> torch.Tensor:
    """``op`` (an out= overload) on the CPU, into a CPU copy of ``out`` (so
    that CPU torch checks out's dtype and shape), copied back."""
    res = K.on_cpu(op, reason, *args, out=out, **kwargs)
    K._resize_out(out, res.shape)
    out.copy_(res)
    return out


# -- sum, mean --------------------------------------------------------------------
def _sum(x, *, dtype=None):
    res = sum_on_device(x, None, False, dtype)
    if res is not None:
        return res
    return K.on_cpu(aten.sum.default, "dtype or layout", x, dtype=dtype)


def _sum_dim(x, dim, keepdim=False, *, dtype=None):
    res = sum_on_device(x, dim, keepdim, dtype)
    if res is not None:
        return res
    return K.on_cpu(aten.sum.dim_IntList, "an integer or bool tensor, an "
                    "empty one, or its dtype", x, dim, keepdim, dtype=dtype)


def _sum_out(x, dim, keepdim=False, *, dtype=None, out):
    if sum_on_device(x, dim, keepdim, dtype, out) is not None:
        return out
    return cpu_out(aten.sum.IntList_out, "an integer or bool tensor, an "
                    "empty one, its dtype or out's", out, x, dim, keepdim,
                    dtype=dtype)


def _mean_dim(x, dim, keepdim=False, *, dtype=None):
    res = mean_on_device(x, dim, keepdim, dtype)
    if res is not None:
        return res
    return K.on_cpu(aten.mean.dim, "an empty tensor or its dtype", x, dim,
                    keepdim, dtype=dtype)


def _mean(x, *, dtype=None):
    return _mean_dim(x, None, False, dtype=dtype)


def _mean_out(x, dim, keepdim=False, *, dtype=None, out):
    if mean_on_device(x, dim, keepdim, dtype, out) is not None:
        return out
    return cpu_out(aten.mean.out, "an empty tensor, its dtype or out's",
                    out, x, dim, keepdim, dtype=dtype)


# -- amax, amin, max, min ------------------------------------------------------------
def extreme_on_device(name: str, x, dim, keepdim: bool, out=None):
    """amax ("max") or amin ("min") of npu tensor x over ``dim``: the
    first maximum's index in each row (ARGMAX/ARGMIN: the first NaN, the
    first of equal values), then the value there (INDEX_SELECT); into an
    out= of x's dtype. None for an empty or bool tensor (CPU torch raises
    on the empty one)."""
    arg = "argmax" if name == "max" else "argmin"
    if not K._serves(x, arg, "index_select") or x.dtype == torch.bool or \
            x.is_conj() or x.is_neg():
        return None
    dims = reduce_dims(x, dim)
    if dims is None or (out is not None and (not K._is_npu(out) or
                                             out.dtype != x.dtype)):
        return None
    shape = kept_shape(x, dims, keepdim)
    if out is not None:
        K._resize_out(out, torch.Size(shape), x)
    rows = rows_of(x, dims)
    m, n = rows.shape
    idx = torch.empty(m, dtype=torch.int64, device=x.device)
    D.rows(arg, rows, idx)
    values = _target(out, x, m)
    D.index_rows("index_select", values, rows, idx, (m, n, 1, 1))
    if out is not None:
        if values.data_ptr() != out.data_ptr():
            out.copy_(values.view(shape))
        return out
    return values.view(shape)


def _make_extreme(name: str) -> dict[str, object]:
    amax = getattr(aten, "a" + name)
    full_op = getattr(aten, name)

    def run(x, dim=(), keepdim=False):
        res = extreme_on_device(name, x, dim, keepdim)
        if res is not None:
            return res
        return K.on_cpu(amax.default, "an empty or bool tensor", x, dim,
                        keepdim)

    def out_fn(x, dim=(), keepdim=False, *, out):
        if extreme_on_device(name, x, dim, keepdim, out) is not None:
            return out
        return cpu_out(amax.out, "an empty or bool tensor, or out's dtype",
                        out, x, dim, keepdim)

    def full(x):
        res = extreme_on_device(name, x, None, False)
        if res is not None:
            return res
        return K.on_cpu(full_op.default, "an empty or bool tensor", x)

    def full_out(x, *, out):
        if extreme_on_device(name, x, None, False, out) is not None:
            return out
        return cpu_out(full_op.unary_out, "an empty or bool tensor, or "
                        "out's dtype", out, x)
    return {"a" + name: run, "a" + name + ".out": out_fn}, \
        {name: full, name + ".unary_out": full_out}


AMAX, MAX = _make_extreme("max")
AMIN, MIN = _make_extreme("min")


# -- var, std ------------------------------------------------------------------
_VAR_OPS = ("reduce_sum", "div", "sub", "mul")


def var_on_device(x, dim, correction, keepdim: bool, sqrt: bool = False):
    """(var or std, mean) of npu tensor x over ``dim``, as CPU torch
    defines them: the mean, the centred squares summed, divided by
    max(0, N - correction) (N the elements of each row; 0 gives an
    infinity or NaN, as CPU torch), std its SQRT; float16 and bfloat16
    computed in float32 and rounded once. None where the device cannot."""
    if not K._is_npu(x) or x.dtype not in D.FLOATS:
        return None
    dims = reduce_dims(x, dim)
    index = x.get_device()
    ops = _VAR_OPS + (("sqrt",) if sqrt else ()) + \
        (("cast",) if x.dtype != torch.float32 else ())
    if dims is None or not all(D.serves(index, op, D.DTYPES[x.dtype])
                               for op in ops):
        return None
    c = 1.0 if correction is None else float(correction)
    if x.numel() == 0:
        # the variance and mean of nothing: NaN (0 / 0), as CPU torch
        shape = kept_shape(x, dims, keepdim)
        both = [torch.empty(shape, dtype=x.dtype, device=x.device)
                for _ in range(2)]
        for t in both if K._prod(shape) else ():
            t.fill_(math.nan)
        return both[0], both[1]
    xf = x if x.dtype == torch.float32 else x.to(torch.float32)
    dt = torch.float32
    mean = sum_on_device(xf, dims, True, count=True, matmul=False)
    if mean is None:
        return None
    centred = K._ew("sub", dt, [xf, mean], None, dt)
    squares = K._ew("mul", dt, [centred, centred], None, dt)
    total = sum_on_device(squares, dims, keepdim, matmul=False)
    n = x.numel() // max(mean.numel(), 1)
    var = K._ew("div", dt, [total, max(0.0, n - c)], None, dt)
    if sqrt:
        var = K._ew("sqrt", dt, [var], None, dt)
    mean = mean.view(kept_shape(x, dims, keepdim))
    if x.dtype != dt:
        var, mean = var.to(x.dtype), mean.to(x.dtype)
    return var, mean


def _make_var(name: str) -> dict[str, object]:
    sqrt = name == "std"
    op = getattr(aten, name)
    both = getattr(aten, name + "_mean")

    def run(x, dim=None, *, correction=None, keepdim=False):
        res = var_on_device(x, dim, correction, keepdim, sqrt)
        if res is not None:
            return res[0]
        return K.on_cpu(op.correction, "an empty tensor or its dtype", x,
                        dim, correction=correction, keepdim=keepdim)

    def out_fn(x, dim=None, *, correction=None, keepdim=False, out):
        res = var_on_device(x, dim, correction, keepdim, sqrt)
        if res is not None and res[0].dtype == out.dtype:
            K._resize_out(out, res[0].shape, x)
            out.copy_(res[0])
            return out
        return cpu_out(op.correction_out, "an empty tensor, its dtype or "
                        "out's", out, x, dim, correction=correction,
                        keepdim=keepdim)

    def with_mean(x, dim=None, *, correction=None, keepdim=False):
        res = var_on_device(x, dim, correction, keepdim, sqrt)
        if res is not None:
            return res
        return K.on_cpu(both.correction, "an empty tensor or its dtype", x,
                        dim, correction=correction, keepdim=keepdim)
    return {name + ".correction": run, name + ".correction_out": out_fn}, \
        {name + "_mean.correction": with_mean}


VAR, VAR_MEAN = _make_var("var")
STD, STD_MEAN = _make_var("std")


# -- vector norms ---------------------------------------------------------------
def vector_norm_on_device(x, ord, dim, keepdim: bool, dtype=None):
    """linalg.vector_norm for ord 2 (SQRT of the sum of x * x), 1 (the sum
    of ABS), inf and -inf (amax and amin of ABS); None for another ord
    (or an empty tensor, an integer one)."""
    if not isinstance(ord, (int, float)) or isinstance(ord, bool) or \
            float(ord) not in (1.0, 2.0, float("inf"), float("-inf")):
        return None
    x = _float_input(x, dtype)
    if x is None:
        return None
    dt = x.dtype
    ord = float(ord)
    if ord == 2.0:
        sq = K._ew("mul", dt, [x, x], None, dt)
        total = None if sq is None else sum_on_device(sq, dim, keepdim,
                                                      matmul=False)
        return None if total is None else K._ew("sqrt", dt, [total], None,
                                                 dt)
    a = K._ew("abs", dt, [x], None, dt)
    if a is None:
        return None
    if ord == 1.0:
        return sum_on_device(a, dim, keepdim, matmul=False)
    return extreme_on_device("max" if ord > 0 else "min", a, dim, keepdim)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    res = vector_norm_on_device(x, ord, dim, keepdim, dtype)
    if res is not None:
        return res
    return K.on_cpu(aten.linalg_vector_norm.default, "ord, dtype or an "
                    "empty tensor", x, ord, dim, keepdim, dtype=dtype)


def _vector_norm_out(x, ord=2, dim=None, keepdim=False, *, dtype=None,
                     out):
    res = vector_norm_on_device(x, ord, dim, keepdim, dtype)
    if res is not None and res.dtype == out.dtype:
        K._resize_out(out, res.shape, x)
        out.copy_(res)
        return out
    return cpu_out(aten.linalg_vector_norm.out, "ord, dtype, out's dtype "
                    "or an empty tensor", out, x, ord, dim, keepdim,
                    dtype=dtype)


VECTOR_NORM = {"linalg_vector_norm": _vector_norm,
               "linalg_vector_norm.out": _vector_norm_out}


SUM = {"sum": _sum, "sum.dim_IntList": _sum_dim, "sum.IntList_out": _sum_out}
MEAN = {"mean": _mean, "mean.dim": _mean_dim, "mean.out": _mean_out}

__all__ = ["cpu_out", "reduce_dims", "kept_shape", "rows_of", "sum_on_device",
           "mean_on_device", "extreme_on_device",
           "var_on_device", "SUM", "MEAN", "AMAX", "AMIN", "MAX", "MIN",
           "VAR", "VAR_MEAN", "STD", "STD_MEAN", "vector_norm_on_device",
           "VECTOR_NORM"]
