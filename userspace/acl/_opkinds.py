# SPDX-License-Identifier: GPL-2.0
"""acl.op's mapping of CANN's operands and attributes onto each kind of
device op (davinci.schema's kinds): :data:`KINDS` (the operators whose
mapping is their own, a convolution or a Slice, are acl.op.BY_NAME's).
Each mapping returns the task or tasks, each a descriptor or a
:class:`~acl._opargs.Blocked` one that takes a parameter block."""

from __future__ import annotations

from davinci import opdesc, views
from davinci.schema import OpDef

from . import constants as C
from davinci.errors import ShapeError

from ._opargs import (DEVICE_DTYPES, AclFail, Blocked, acl_name, arity,
                      attr_value, attribute, describe, dtype_in, need,
                      out_is, read_ints, rows_of)


def _result_dtype(op: OpDef, name, x, o) -> int:
    """An elementwise op writes its inputs' data type; a comparison may
    write ACL_BOOL instead, as CANN's do (the schema's dst_dtypes)."""
    if o.dtype != x.dtype and DEVICE_DTYPES.get(o.dtype) in op.dst_dtypes:
        return o.dtype
    return x.dtype


#: CANN attributes the device computes at their default only (CANN's Log
#: is log_base(scale x + shift), base -1 meaning e; Swish is
#: x sigmoid(scale x)): another value is refused, not ignored
_DEFAULT_ONLY = {"Log": {"base": -1.0, "scale": 1.0, "shift": 0.0},
                 "Swish": {"scale": 1.0}}


def _defaults_only(name, attrs):
    for attr, default in _DEFAULT_ONLY.get(name, {}).items():
        v = attrs.get(attr, default)
        need(isinstance(v, (int, float)) and not isinstance(v, bool) and
             float(v) == default, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
             "%s attribute %s is %r; davinci computes %s with %s %r only"
             % (name, attr, v, name, attr, default))


def _elementwise(op: OpDef, name, ins, outs, attrs):
    """Inputs of one data type whose shapes broadcast as numpy's (CANN's
    rule): one shape runs as a dense task, anything else as one strided
    task that reads each input where the broadcast puts it."""
    arity(name, ins, outs, opdesc.SOURCES[op.kind], 1)
    _defaults_only(name, attrs)
    x, o = ins[0], outs[0]
    dtype_in(name, x, op.dtypes)
    for t in ins[1:]:
        need(t.dtype == x.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
             "%s inputs have data types %s and %s: cast one first"
             % (name, acl_name(x.dtype), acl_name(t.dtype)))
    try:
        shape = views.broadcast_shapes(*(tuple(t.shape) for t in ins))
    except ShapeError as exc:
        raise AclFail(C.ACL_ERROR_OP_INPUT_NOT_MATCH,
                      "%s: %s" % (name, exc.message)) from None
    result = _result_dtype(op, name, x, o)
    out_is(name, o, shape, result)
    srcs = [ins[i] for i in op.acl_order(name)]
    extents = dict(attr=attribute(op, name, attrs))
    if result != x.dtype:
        extents["dst_dtype"] = DEVICE_DTYPES[result]
    count = o.desc.count
    if all(tuple(t.shape) == shape for t in ins) or not count:
        return describe(op, name, x.dtype, o, srcs, count=count, **extents)
    walk = opdesc.Strided(shape, views.contiguous_strides(shape), *(
        views.broadcast_strides(tuple(t.shape),
                                views.contiguous_strides(tuple(t.shape)),
                                shape) for t in srcs))
    return Blocked(walk.pack(), lambda at: describe(
        op, name, x.dtype, o, srcs, count=count, strided=walk, params_at=at,
        **extents))


def _matmul(op: OpDef, name, ins, outs, attrs):
    arity(name, ins, outs, 2, 1)
    a, b = ins
    dtype_in(name, a, op.dtypes)
    need(a.dtype == b.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s inputs must have one data type" % name)
    need(len(a.shape) == 2 and len(b.shape) == 2,
         C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s takes 2-D inputs, got %s and %s"
         % (name, list(a.shape), list(b.shape)))
    ta = attr_value(attrs, "transpose_x1", False, bool)
    tb = attr_value(attrs, "transpose_x2", False, bool)
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    need(k == k2, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s inner dimensions differ: x1 gives k=%d, x2 gives k=%d"
         % (name, k, k2))
    out_is(name, outs[0], (m, n), a.dtype)
    return describe(op, name, a.dtype, outs[0],
                    [ins[i] for i in op.acl_order(name)], mnk=(m, n, k),
                    transpose=(ta, tb))


def _over_rows(op: OpDef, name, ins, outs, attrs):
    arity(name, ins, outs, 1, 1)
    x = ins[0]
    dtype_in(name, x, op.dtypes)
    need(len(x.shape) >= 1, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s needs at least one dimension" % name)
    axes = attr_value(attrs, "axes", [-1], list)
    nd = len(x.shape)
    need(len(axes) == 1 and axes[0] in (-1, nd - 1),
         C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s runs over the last axis only (axes [-1]), not %r"
         % (name, axes))
    out_is(name, outs[0], x.shape, x.dtype)
    return describe(op, name, x.dtype, outs[0], ins, rows=rows_of(x.shape))


def _reduce(op: OpDef, name, ins, outs, attrs):
    arity(name, ins, outs, (1, 2), 1)
    x = ins[0]
    dtype_in(name, x, op.dtypes)
    nd = len(x.shape)
    if len(ins) == 2:
        axes = read_ints(name, ins[1])
        if axes is None:
            return None             # checked when it runs
    else:
        axes = attr_value(attrs, "axes", [], list)
    keep = attr_value(attrs, "keep_dims", False, bool)
    norm = sorted(set(a + nd if a < 0 else a for a in axes)) or \
        list(range(nd))
    need(all(0 <= a < nd for a in norm), C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s axes %r outside a %d-D input" % (name, axes, nd))
    if norm == list(range(nd)):
        m, n = 1, x.desc.count
    elif norm == [nd - 1]:
        m, n = rows_of(x.shape)
    else:
        raise AclFail(C.ACL_ERROR_OP_ATTR_NOT_MATCH,
                      "%s over axes %r is not supported: reduce the last "
                      "axis or all of them" % (name, axes))
    if keep:
        shape = tuple(1 if i in norm else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in norm)
    o = outs[0]
    # a sum of everything is described as [] or as [1]
    if m == 1 and not keep and tuple(o.shape) == (1,):
        shape = (1,)
    out_is(name, o, shape, x.dtype)
    return describe(op, name, x.dtype, o, ins[:1], rows=(m, n))


def _cast(op: OpDef, name, ins, outs, attrs):
    arity(name, ins, outs, 1, 1)
    x = ins[0]
    o = outs[0]
    dtype_in(name, x, op.dtypes)
    dst = attrs.get("dst_type", o.dtype)
    need(dst == o.dtype, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s dst_type %r differs from the output's data type %r"
         % (name, dst, o.dtype))
    dtype_in(name, o, op.dtypes)
    out_is(name, o, x.shape, o.dtype)
    return describe(op, name, x.dtype, o, ins, count=x.desc.count,
                    dst_dtype=DEVICE_DTYPES[o.dtype])


def _triangle(op: OpDef, name, ins, outs, attrs):
    """Tril, Triu: the last two axes of x (a 1-D x is one row), CANN's
    diagonal attribute (default 0)."""
    arity(name, ins, outs, 1, 1)
    x = ins[0]
    dtype_in(name, x, op.dtypes)
    need(len(x.shape) >= 1, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s needs at least one dimension" % name)
    diagonal = attr_value(attrs, "diagonal", 0, int)
    need(-(1 << 31) <= diagonal < 1 << 31, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s diagonal %d does not fit int32" % (name, diagonal))
    out_is(name, outs[0], x.shape, x.dtype)
    m, n = rows_of(x.shape)
    return describe(op, name, x.dtype, outs[0], ins, attr=diagonal,
                    mnk=(m, n, x.shape[-2] if len(x.shape) > 1 else 1))


#: how acl's operands and attributes map onto each kind of op
KINDS = {"binary": _elementwise, "unary": _elementwise, "matmul": _matmul,
         "rows": _over_rows, "reduce": _reduce, "cast": _cast,
         "triangle": _triangle}
