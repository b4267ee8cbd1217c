# SPDX-License-Identifier: GPL-2.0
"""acl.op's poolings: CANN's MaxPool, MaxPoolV3, AvgPool, AvgPoolV2 and
AvgPoolV2Grad onto the device's MAXPOOL2D, AVGPOOL2D and its gradient.

Their attributes are CANN's: ``ksize`` and ``strides`` (four values in
``data_format``'s order, N and C 1), and the padding: MaxPool's and
AvgPool's ``padding`` "VALID" or "SAME", the V2/V3 forms' ``padding_mode``
("CALCULATED": ``pads``, top, bottom, left, right; "SAME"; "VALID"),
``global_pooling`` and ``ceil_mode``, and AvgPoolV2's ``exclusive`` (a
window's mean over its elements inside the input) and
``divisor_override``. MaxPool and AvgPool default to CANN's "NHWC", the V2
and V3 forms to "NCHW"; the device pools NCHW tensors. The device pads both
sides of a dimension alike and by at most half the window (torch's rule),
so a SAME padding that is odd, or pads that differ, are refused.
"""

from __future__ import annotations

from davinci import opdesc, ops
from davinci.errors import ShapeError
from davinci.schema import OpDef

from . import constants as C
from ._opargs import (AclFail, Blocked, arity, attr_value, describe,
                      dtype_in, need, out_is, read_ints)

__all__ = ["NAMES"]


def _nchw(name, attrs, what: str, default) -> tuple[int, int]:
    v = attr_value(attrs, what, default, list)
    need(len(v) == 4 and v[0] == v[1] == 1, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: %s %r: four values in NCHW order, N and C 1" % (name, what, v))
    return v[2], v[3]


def _same(name, size: int, k: int, stride: int) -> int:
    """SAME's padding of one dimension (TensorFlow's: the output is
    ceil(size / stride)), which the device must split evenly."""
    total = max((-(-size // stride) - 1) * stride + k - size, 0)
    need(total % 2 == 0, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: SAME padding of %d needs %d rows or columns, which the device "
         "cannot split evenly (it pads both sides alike): pad the input or "
         "use CALCULATED pads" % (name, size, total))
    return total // 2


def _geometry(name, x_shape, attrs, versioned: bool) -> dict:
    """pool2d_shapes' arguments from CANN's attributes of ``name``."""
    fmt = attr_value(attrs, "data_format", "NCHW" if versioned else "NHWC",
                     str)
    need(fmt == "NCHW", C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: data_format %r: the device pools NCHW tensors: set "
         "data_format to 'NCHW'" % (name, fmt))
    h, w = x_shape[2], x_shape[3]
    if versioned and attr_value(attrs, "global_pooling", False, bool):
        return dict(kernel_size=(h, w), stride=(1, 1), padding=(0, 0))
    need("ksize" in attrs and "strides" in attrs,
         C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s needs attributes ksize and strides (4 ints, NCHW order)" % name)
    k = _nchw(name, attrs, "ksize", None)
    stride = _nchw(name, attrs, "strides", None)
    if versioned:
        mode = attr_value(attrs, "padding_mode", "CALCULATED", str)
    else:
        need("padding" in attrs, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
             "%s needs attribute padding, 'SAME' or 'VALID'" % name)
        mode = attr_value(attrs, "padding", None, str)
    need(mode in ("CALCULATED", "SAME", "VALID") and
         (versioned or mode != "CALCULATED"), C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: padding %r is none of %s" % (
             name, mode, "CALCULATED, SAME, VALID" if versioned else
             "SAME, VALID"))
    ceil_mode = versioned and attr_value(attrs, "ceil_mode", False, bool)
    if mode == "SAME":
        pad = (_same(name, h, k[0], stride[0]),
               _same(name, w, k[1], stride[1]))
        need(not ceil_mode, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
             "%s: ceil_mode with SAME padding" % name)
    elif mode == "VALID":
        pad = (0, 0)
    else:
        pads = attr_value(attrs, "pads", [0, 0, 0, 0], list)
        need(len(pads) == 4 and pads[0] == pads[1] and pads[2] == pads[3],
             C.ACL_ERROR_OP_ATTR_NOT_MATCH,
             "%s: pads %r: top, bottom, left, right, each side of a "
             "dimension alike (the device pads both sides alike)"
             % (name, pads))
        pad = (pads[0], pads[2])
    return dict(kernel_size=k, stride=stride, padding=pad,
                ceil_mode=ceil_mode)


def _averaging(name, attrs, versioned: bool) -> dict:
    if not versioned:           # TensorFlow's AvgPool: the taps inside
        return dict(count_include_pad=False)
    divisor = attr_value(attrs, "divisor_override", 0, int)
    need(divisor >= 0, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: divisor_override %d" % (name, divisor))
    return dict(count_include_pad=not attr_value(attrs, "exclusive", True,
                                                 bool),
                divisor=divisor or None)


def _shapes(name, op: OpDef, x_shape, geometry) -> tuple[dict, tuple]:
    try:
        return ops.pool2d_shapes(x_shape, op=op.python, **geometry)
    except ShapeError as exc:
        raise AclFail(C.ACL_ERROR_OP_INPUT_NOT_MATCH,
                      "%s: %s" % (name, exc.message)) from None


def _task(op: OpDef, name, dst, srcs, fields, dtype):
    return Blocked(opdesc.pack_params(op, **fields), lambda at: describe(
        op, name, dtype, dst, srcs, params_at=at))


def _pool(op: OpDef, name, ins, outs, attrs):
    arity(name, ins, outs, 1, 1)
    x = ins[0]
    dtype_in(name, x, op.dtypes)
    need(len(x.shape) == 4, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s takes a 4-D NCHW x, got %s" % (name, list(x.shape)))
    versioned = name[-2:] in ("V2", "V3")
    geometry = _geometry(name, x.shape, attrs, versioned)
    if op.name == "AVGPOOL2D":
        geometry.update(_averaging(name, attrs, versioned))
    fields, y = _shapes(name, op, x.shape, geometry)
    out_is(name, outs[0], y, x.dtype)
    return [_task(op, name, outs[0], [x], fields, x.dtype)]


def _avg_grad(op: OpDef, name, ins, outs, attrs):
    """AvgPoolV2Grad: orig_input_shape (4 ints), input_grad (dy)."""
    arity(name, ins, outs, 2, 1)
    size_t, dy = ins
    dtype_in(name, dy, op.dtypes)
    shape = read_ints(name, size_t, "orig_input_shape")
    if shape is None:
        return None
    need(len(shape) == 4, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: orig_input_shape %r: four sizes, NCHW" % (name, shape))
    geometry = _geometry(name, shape, attrs, True)
    geometry.update(_averaging(name, attrs, True))
    fields, y = _shapes(name, op, shape, geometry)
    need(tuple(dy.shape) == y, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: input_grad has shape %s; orig_input_shape %s pools to %s"
         % (name, list(dy.shape), shape, list(y)))
    out_is(name, outs[0], tuple(shape), dy.dtype)
    return [_task(op, name, outs[0], [dy], fields, dy.dtype)]


#: CANN name -> its mapping
NAMES = {"MaxPool": _pool, "MaxPoolV3": _pool, "AvgPool": _pool,
         "AvgPoolV2": _pool, "AvgPoolV2Grad": _avg_grad}
