# SPDX-License-Identifier: GPL-2.0
"""acl.op's convolutions: CANN's Conv2D, Conv2DBackpropInput(D) and
Conv2DBackpropFilter(D) onto the device's CONV2D and its gradients.

Their attributes are CANN's: ``strides`` and ``dilations`` (four values in
``data_format``'s order, N and C 1), ``pads`` (top, bottom, left, right),
``groups`` and ``data_format``, whose default is CANN's "NHWC"; the device
convolves NCHW tensors, so a call says "NCHW". The device pads each side of
a dimension alike, so pads must be symmetric. Conv2D's optional bias is
CONV2D's src2, added in the convolution's own task.
"""

from __future__ import annotations

from davinci import opdesc, ops
from davinci.errors import ShapeError
from davinci.schema import OpDef

from . import constants as C
from ._opargs import (AclFail, Blocked, acl_name, arity,
                      attr_value, describe, dtype_in, need, out_is,
                      read_ints)

__all__ = ["NAMES"]


def _geometry(name, attrs) -> dict:
    """conv2d_shapes' stride, padding, dilation and groups from CANN's
    attributes."""
    fmt = attr_value(attrs, "data_format", "NHWC", str)
    need(fmt == "NCHW", C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: data_format %r: the device convolves NCHW tensors (CANN's "
         "default is NHWC): set data_format to 'NCHW'" % (name, fmt))
    need("strides" in attrs and "pads" in attrs,
         C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s needs attributes strides (4 ints, NCHW order) and pads (top, "
         "bottom, left, right)" % name)
    strides = attr_value(attrs, "strides", None, list)
    pads = attr_value(attrs, "pads", None, list)
    dilations = attr_value(attrs, "dilations", [1, 1, 1, 1], list)
    groups = attr_value(attrs, "groups", 1, int)
    for what, v in (("strides", strides), ("dilations", dilations)):
        need(len(v) == 4 and v[0] == v[1] == 1,
             C.ACL_ERROR_OP_ATTR_NOT_MATCH,
             "%s: %s %r: four values in NCHW order, N and C 1"
             % (name, what, v))
    need(len(pads) == 4, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: pads %r: four values, top, bottom, left, right" % (name, pads))
    need(pads[0] == pads[1] and pads[2] == pads[3],
         C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s: pads %r: the device pads both sides of a dimension alike "
         "(top = bottom, left = right)" % (name, pads))
    return dict(stride=tuple(strides[2:]), padding=(pads[0], pads[2]),
                dilation=tuple(dilations[2:]), groups=groups)


def _shapes(name, x_shape, w_shape, geom) -> tuple[dict, tuple]:
    """The parameter block's fields and y's shape, the refusals as
    aclErrors."""
    try:
        return ops.conv2d_shapes(x_shape, w_shape, op="conv2d", **geom)
    except ShapeError as exc:
        raise AclFail(C.ACL_ERROR_OP_INPUT_NOT_MATCH,
                      "%s: %s" % (name, exc.message)) from None


def _size(name, what, t, attrs, from_attr: bool):
    """A gradient's shape (CANN's input_size, filter_size): an attribute
    of a ...D operator, else a 4-int input; None when update_params cannot
    read it before the data."""
    if from_attr:
        v = attr_value(attrs, what, None, list)
    else:
        v = read_ints(name, t, what)
        if v is None:
            return None
    need(len(v) == 4, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: %s %r: four sizes, NCHW" % (name, what, v))
    return tuple(v)


def _task(op: OpDef, name, dst, srcs, fields, bias=None):
    """The convolution op's task on its dense operands, with its block
    (and CONV2D's bias, its src2)."""
    return Blocked(opdesc.pack_params(op, **fields), lambda at: describe(
        op, name, srcs[0].dtype, dst, srcs, params_at=at, src2=bias))


def _conv2d(op: OpDef, name, ins, outs, attrs):
    arity(name, ins, outs, (2, 3), 1)
    x, w = ins[0], ins[1]
    dtype_in(name, x, op.dtypes)
    for t in ins[1:]:
        need(t.dtype == x.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
             "%s: %s is %s, x is %s: cast one first"
             % (name, t.what, acl_name(t.dtype), acl_name(x.dtype)))
    need(len(x.shape) == 4, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s takes a 4-D NCHW x, got %s" % (name, list(x.shape)))
    fields, y_shape = _shapes(name, x.shape, w.shape, _geometry(name, attrs))
    out_is(name, outs[0], y_shape, x.dtype)
    bias = None
    if len(ins) == 3:
        bias = ins[2]
        need(tuple(bias.shape) == (y_shape[1],),
             C.ACL_ERROR_OP_INPUT_NOT_MATCH,
             "%s: bias has shape %s, the filter makes %d channels"
             % (name, list(bias.shape), y_shape[1]))
    return [_task(op, name, outs[0], [x, w], fields, bias)]


def _backprop(op: OpDef, name, ins, outs, attrs):
    """Conv2DBackpropInput (input_size, filter, out_backprop) and
    Conv2DBackpropFilter (x, filter_size, out_backprop); their D forms
    take the size as an attribute and the other two inputs alone."""
    from_attr = name.endswith("D")
    wants_x = op.name == "CONV2D_BACKWARD_INPUT"
    size_name = "input_size" if wants_x else "filter_size"
    arity(name, ins, outs, 2 if from_attr else 3, 1)
    if from_attr:
        size_t, (known, dy) = None, ins
    elif wants_x:
        size_t, known, dy = ins
    else:
        known, size_t, dy = ins
    dtype_in(name, dy, op.dtypes)
    need(known.dtype == dy.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: %s is %s, out_backprop is %s: cast one first"
         % (name, known.what, acl_name(known.dtype), acl_name(dy.dtype)))
    size = _size(name, size_name, size_t, attrs, from_attr)
    if size is None:
        return None
    x_shape, w_shape = (size, known.shape) if wants_x else \
        (known.shape, size)
    fields, y_shape = _shapes(name, x_shape, w_shape,
                              _geometry(name, attrs))
    need(tuple(dy.shape) == y_shape, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s: out_backprop has shape %s; x %s and filter %s make %s"
         % (name, list(dy.shape), list(x_shape), list(w_shape),
            list(y_shape)))
    out_is(name, outs[0], size, dy.dtype)
    srcs = [dy, known] if wants_x else [known, dy]
    return [_task(op, name, outs[0], srcs, fields)]


#: CANN name -> its mapping
NAMES = {"Conv2D": _conv2d,
         "Conv2DBackpropInput": _backprop, "Conv2DBackpropInputD": _backprop,
         "Conv2DBackpropFilter": _backprop,
         "Conv2DBackpropFilterD": _backprop}
