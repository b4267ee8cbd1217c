# SPDX-License-Identifier: GPL-2.0
"""acl.op's views: CANN's Slice(D) and Transpose(D) onto the device's
IDENTITY, one strided copy of the view into the dense output.

Slice takes ``offsets`` and ``size`` (-1: to the end of the dimension) as
int32/int64 inputs, SliceD as attributes; Transpose takes ``perm`` as an
input, TransposeD as an attribute.
"""

from __future__ import annotations

from davinci import opdesc, views
from davinci.schema import OpDef

from . import constants as C
from ._opargs import (Blocked, Operand, arity, attr_value, describe,
                      dtype_in, need, out_is, read_ints)

__all__ = ["NAMES"]


def _ints(name, ins, attrs, what: str, index: int, from_attr: bool):
    """A list of ints: an attribute of a ...D operator, else input
    ``index`` (None when update_params cannot read it before the data)."""
    if from_attr:
        need(what in attrs, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
             "%s needs attribute %s (set_attr_list_int)" % (name, what))
        return attr_value(attrs, what, None, list)
    return read_ints(name, ins[index], what)


def _copy(op: OpDef, name, x, o, src_addr: int, sizes, strides):
    """IDENTITY of the view of ``x`` at ``src_addr`` with ``sizes`` and
    ``strides`` (elements) into dense ``o``."""
    count = o.desc.count
    if not count:
        return []
    walk = opdesc.Strided(sizes, views.contiguous_strides(sizes), strides)
    src = Operand(src_addr, x.what)
    return [Blocked(walk.pack(), lambda at: describe(
        op, name, x.dtype, o, [src], count=count, strided=walk,
        params_at=at))]


def _slice(op: OpDef, name, ins, outs, attrs):
    from_attr = name == "SliceD"
    arity(name, ins, outs, 1 if from_attr else 3, 1)
    x = ins[0]
    dtype_in(name, x, op.dtypes)
    offsets = _ints(name, ins, attrs, "offsets", 1, from_attr)
    size = _ints(name, ins, attrs, "size", 2, from_attr)
    if offsets is None or size is None:
        return None
    shape = tuple(x.shape)
    need(len(offsets) == len(shape) == len(size) >= 1,
         C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: offsets %r and size %r need one value per dimension of x %s"
         % (name, offsets, size, list(shape)))
    sizes = tuple(n - b if s == -1 else s
                  for b, s, n in zip(offsets, size, shape))
    for d, (b, s, n) in enumerate(zip(offsets, sizes, shape)):
        need(0 <= b and 0 <= s and b + s <= n,
             C.ACL_ERROR_OP_INPUT_NOT_MATCH,
             "%s: dimension %d: offset %d and size %d leave x's %d"
             % (name, d, b, s, n))
    out_is(name, outs[0], sizes, x.dtype)
    strides = views.contiguous_strides(shape)
    start = sum(b * st for b, st in zip(offsets, strides))
    return _copy(op, name, x, outs[0], x.addr + start * x.desc.itemsize,
                 sizes, strides)


def _transpose(op: OpDef, name, ins, outs, attrs):
    from_attr = name == "TransposeD"
    arity(name, ins, outs, 1 if from_attr else 2, 1)
    x = ins[0]
    dtype_in(name, x, op.dtypes)
    perm = _ints(name, ins, attrs, "perm", 1, from_attr)
    if perm is None:
        return None
    shape = tuple(x.shape)
    nd = len(shape)
    norm = [p + nd if p < 0 else p for p in perm]
    need(nd >= 1 and sorted(norm) == list(range(nd)),
         C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: perm %r is not an order of x's %d dimensions"
         % (name, perm, nd))
    strides = views.contiguous_strides(shape)
    sizes = tuple(shape[p] for p in norm)
    out_is(name, outs[0], sizes, x.dtype)
    return _copy(op, name, x, outs[0], x.addr, sizes,
                 tuple(strides[p] for p in norm))


#: CANN name -> its mapping
NAMES = {"Slice": _slice, "SliceD": _slice, "Transpose": _transpose,
         "TransposeD": _transpose}
