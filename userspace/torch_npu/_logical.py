# SPDX-License-Identifier: GPL-2.0
"""The npu device's selecting and logical ATen kernels: where (and its
out=), isneginf, isposinf, isinf, isfinite, isnan, all and any.

where is an IDENTITY (or CAST) of ``other`` into the result and a SELECT
of ``self`` where the condition holds; a dtype the device does not
compute in moves as the device dtype of its element size (SELECT and
IDENTITY move bits). The infinity tests are CMPs against an infinity
(isinf's and isfinite's of ABS), isnan x != x. all and any are the
first smallest or largest element of ``x != 0`` viewed as uint8 (ARGMIN
or ARGMAX, then an INDEX_SELECT of it): exact for any number of elements,
NaN counting as true, as CPU torch.
"""

from __future__ import annotations

import math

import torch

from . import _device_ops as D
from . import _kernels as K

aten = torch.ops.aten

#: the device dtype whose bits carry an element of each size (bytes)
_CARRIERS = {1: torch.uint8, 2: torch.float16, 4: torch.int32,
             8: torch.int64}


def carries(dt: torch.dtype) -> bool:
    """A device dtype carries the bits of ``dt``'s elements."""
    return dt.itemsize in _CARRIERS or (dt.itemsize == 16 and dt.is_complex)


def carried(t: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """``t`` (of dtype ``dt``, which the device does not compute in) as
    the device dtype of its element size, one more trailing dim of 2
    for a 16-byte complex number."""
    if dt.itemsize == 16:
        # (view_as_real has no npu kernel: the int64 view set directly)
        return torch.empty(0, dtype=torch.int64, device=t.device).set_(
            t.untyped_storage(), 2 * t.storage_offset(), (*t.shape, 2),
            (*(2 * st for st in t.stride()), 1))
    return t.view(_CARRIERS[dt.itemsize])


def _carried_where(cond, x, other, out, dt: torch.dtype):
    """where of operands of dtype ``dt``, which the device does not compute
    in, through its carrier dtype; None where not (operands of another
    dtype, math bits)."""
    if not carries(dt):
        return None
    ts = []
    for t in (x, other):
        if not K._is_npu(t):
            t = t.to(dt).to(cond.device)   # a 0-dim CPU tensor
        if t.dtype != dt or t.is_conj() or t.is_neg():
            return None
        ts.append(t)
    shape = torch.broadcast_shapes(cond.shape, *(t.shape for t in ts))
    res = torch.empty(shape, dtype=dt, device=cond.device) \
        if out is None else out
    if not res.numel():
        return res
    wide = dt.itemsize == 16
    c = cond.unsqueeze(-1) if wide else cond
    a, b = (carried(t.expand(shape) if wide else t, dt) for t in ts)
    r = carried(res, dt)
    if K._broadcast_into(r, b) is not None and K._select_into(r, c, a):
        return res
    return None


def _where_into(cond, x, other, out):
    """out (None: a new tensor) := torch.where(cond, x, other) on the
    device: a bool npu condition, npu tensors or 0-dim CPU ones, broadcast
    against each other, promoted as torch does; an out= of the result's
    shape and dtype sharing no memory with them. None where the device
    cannot."""
    def npu_or_0dim(t):
        return isinstance(t, torch.Tensor) and (K._is_npu(t) or
                                                t.dim() == 0)
    if not (K._is_npu(cond) and cond.dtype == torch.bool and
            npu_or_0dim(x) and npu_or_0dim(other) and
            (K._is_npu(x) or K._is_npu(other))):
        return None
    if any(K._is_npu(t) and t.device != cond.device for t in (x, other)):
        return None
    dt = torch.result_type(x, other)
    try:
        shape = torch.broadcast_shapes(cond.shape, x.shape, other.shape)
    except RuntimeError:
        return None
    if out is not None and (out.dtype != dt or tuple(out.shape) !=
                            tuple(shape) or any(
                                K._is_npu(t) and K._overlap(out, t)
                                for t in (cond, x, other))):
        return None
    if dt not in D.DTYPES:
        return _carried_where(cond, x, other, out, dt)
    res = torch.empty(shape, dtype=dt, device=cond.device) \
        if out is None else out
    if not res.numel():
        return res
    filled = K._broadcast_into(res, other) if K._is_npu(other) else \
        K._fill_operand(res, other.to(dt).item())
    a = x
    if K._is_npu(x) and x.dtype != dt:
        a = torch.empty(x.shape, dtype=dt, device=x.device)
        a = K._ew("cast", x.dtype, [x], a, dt, natural=dt)
    value = K._value_operand(res, x.to(dt)) if not K._is_npu(x) else a
    if filled is not None and value is not None and \
            K._select_into(res, cond, value):
        return res
    return None


def where(cond, x, other):
    res = _where_into(cond, x, other, None)
    if res is not None:
        return res
    return K.on_cpu(aten.where.self, "operands or dtypes", cond, x, other)


def where_out(cond, x, other, *, out):
    dt = torch.result_type(x, other)
    if out.dtype != dt:
        raise RuntimeError("Expected out type to be %s but got %s"
                           % (dtype_name(dt), dtype_name(out.dtype)))
    shape = torch.broadcast_shapes(cond.shape, x.shape, other.shape)
    K._resize_out(out, shape, cond, x, other)
    if _where_into(cond, x, other, out) is not None:
        return out
    res = where(cond, x, other)         # a temporary: out overlaps them
    out.copy_(res)
    return out


def dtype_name(dt: torch.dtype) -> str:
    """A dtype as c10's ScalarType names it ("Float", "Double")."""
    return torch.empty((), dtype=dt).type().split(".")[-1].replace(
        "Tensor", "")


# -- isneginf, isposinf, isinf, isfinite, isnan -------------------------------
#: each test's CMP: (predicate, the number x or |x| is compared with; None:
#: x itself), whether it takes |x| (ABS first), an integer's answer
_TESTS = {"isneginf": ("eq", -math.inf, False, False),
          "isposinf": ("eq", math.inf, False, False),
          "isinf": ("eq", math.inf, True, False),
          "isfinite": ("lt", math.inf, True, True),
          "isnan": ("ne", None, False, False)}


def _inf_test_into(name: str, x, out):
    """out (None: a new bool tensor) := ``name`` of npu tensor x: one CMP
    (of ABS for isinf and isfinite; x != x for isnan); an integer or bool
    tensor holds no infinity and no NaN (FILL). None where the device
    cannot."""
    if not K._is_npu(x) or x.dtype not in D.DTYPES or x.is_conj() or \
            x.is_neg():
        return None
    predicate, value, absolute, integer = _TESTS[name]
    if not x.dtype.is_floating_point:
        res = torch.empty(x.shape, dtype=torch.bool, device=x.device) \
            if out is None else out
        if not res.numel():
            return res
        if not res.is_contiguous() or K._overlap(res, x):
            return None
        return K._fill_operand(res, integer)
    if absolute:
        if not D.serves(x.get_device(), "abs", D.DTYPES[x.dtype]):
            return None
        x = K._ew("abs", x.dtype, [x], None, x.dtype)
        if x is None:
            return None
    return K._ew("compare", x.dtype, [x, x if value is None else value],
                 out, torch.bool, torch.bool, attr=predicate)


def _make_inf_test(name: str) -> dict[str, object]:
    op = getattr(aten, name)

    def functional(x):
        res = _inf_test_into(name, x, None)
        if res is not None:
            return res
        return K.on_cpu(op.default, "dtype or layout", x)

    def out_fn(x, *, out):
        if out.dtype != torch.bool:
            raise RuntimeError("%s does not support non-boolean outputs."
                               % name)
        K._resize_out(out, x.shape, x)
        if _inf_test_into(name, x, out) is not None:
            return out
        out.copy_(K.on_cpu(op.default, "dtype or layout", x))
        return out
    if not hasattr(op, "out"):          # isfinite: no out= overload
        return {name: functional}
    return {name: functional, name + ".out": out_fn}


INF_TESTS = tuple(_TESTS)


# -- all, any -----------------------------------------------------------------
def _reduce_dims(x: torch.Tensor, dim) -> "list[int] | None":
    """The dims ``dim`` names (None: all; an int or a list), each once;
    None for one out of range (the CPU raises torch's IndexError)."""
    nd = x.dim()
    if dim is None:
        return list(range(nd))
    dims = [dim] if isinstance(dim, int) else list(dim)
    n = max(nd, 1)
    if not all(isinstance(d, int) and -n <= d < n for d in dims):
        return None
    return sorted({d % n for d in dims}) if nd else []


def _all_any(name: str, x, dim, keepdim: bool):
    """all or any of npu tensor x over ``dim`` on the device: bool, or
    uint8 for a uint8 tensor, as CPU torch; None where not."""
    if not K._is_npu(x) or x.dtype not in D.DTYPES or x.is_conj() or \
            x.is_neg():
        return None
    dims = _reduce_dims(x, dim)
    index = x.get_device()
    arg = "argmin" if name == "all" else "argmax"
    if dims is None or not all(D.serves(index, op, "uint8")
                               for op in (arg, "index_select")):
        return None
    result = torch.uint8 if x.dtype == torch.uint8 else torch.bool
    if x.dtype == torch.bool:
        b = x
    else:
        b = K._ew("compare", x.dtype, [x, 0], None, torch.bool, torch.bool,
                  attr="ne")
        if b is None:
            return None
    u = b.view(torch.uint8)             # 0 and 1
    nd = x.dim()
    keep = [d for d in range(nd) if d not in dims]
    m = K._prod(x.shape[d] for d in keep)
    n = K._prod(x.shape[d] for d in dims)
    shape = [1 if d in dims else x.shape[d] for d in range(nd)] if \
        keepdim else [x.shape[d] for d in keep]
    if isinstance(dim, (list, tuple)) and not dim and nd:
        # an empty list of dims reduces none: x != 0
        return u.clone().view(result)
    out = torch.empty(m, dtype=torch.uint8, device=x.device)
    if not m:
        return out.view(result).reshape(shape)
    if not n:                           # all of nothing holds, any not
        K._fill_operand(out, 1 if name == "all" else 0)
        return out.view(result).reshape(shape)
    rows = u.permute(keep + dims).contiguous().reshape(m, n)
    idx = torch.empty(m, dtype=torch.int64, device=x.device)
    D.rows(arg, rows, idx)
    D.index_rows("index_select", out, rows, idx, (m, n, 1, 1))
    return out.view(result).reshape(shape)


def _make_all_any(name: str) -> dict[str, object]:
    op = getattr(aten, name)

    def run(x, dim, keepdim, overload):
        res = _all_any(name, x, dim, keepdim)
        if res is not None:
            return res
        args = (x,) if overload == "default" else (x, dim, keepdim)
        return K.on_cpu(getattr(op, overload), "dtype, dims or layout",
                        *args)

    def full(x):
        return run(x, None, False, "default")

    def one_dim(x, dim, keepdim=False):
        return run(x, dim, keepdim, "dim")

    def dims(x, dim=None, keepdim=False):
        return run(x, dim, keepdim, "dims")

    def into(out, res):
        K._resize_out(out, res.shape, res)
        out.copy_(res)
        return out

    def full_out(x, *, out):
        return into(out, full(x))

    def one_dim_out(x, dim, keepdim=False, *, out):
        return into(out, one_dim(x, dim, keepdim))

    def dims_out(x, dim=None, keepdim=False, *, out):
        return into(out, dims(x, dim, keepdim))
    return {name: full, name + ".dim": one_dim, name + ".dims": dims,
            name + ".all_out": full_out, name + ".out": one_dim_out,
            name + ".dims_out": dims_out}
