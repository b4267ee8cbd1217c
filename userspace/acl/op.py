# SPDX-License-Identifier: GPL-2.0
"""acl.op: single-operator execution, pyACL style.

    attr = acl.op.create_attr()
    acl.op.set_attr_bool(attr, "transpose_x2", True)
    ret = acl.op.execute_v2("MatMul", [da, db], [ba, bb], [dc], [bc], attr,
                            stream)

The operators are the compute ops of the device's schema (davinci.schema,
declared in kmod/core/ops.toml), each by its CANN names (``OpDef.acl``;
tests/conformance/test_acl_op_schema.py runs every one); there are no .om
files to load. How acl's operands and attributes map onto an op follows
from the op's kind:

- elementwise (Add, Relu, ...): inputs of one shape and data type (no
  broadcasting); the op's attribute is what its CANN name fixes (Less:
  the comparison) or else CANN's attribute of that name (Axpy, y = x1 +
  alpha * x2: alpha, a required float). A comparison writes 1 or 0 in its
  inputs' data type: the device has no ACL_BOOL tensors;
- matrix product (MatMul): 2-D x1 and x2, transpose_x1 and transpose_x2;
- rows (SoftmaxV2, LogSoftmaxV2): over the last axis only (axes [-1]);
- reduce (ReduceSum): the last axis or all of them, axes as a second input
  or an attribute, keep_dims;
- cast (Cast): to its output's data type (dst_type).

Each call becomes one task on ``stream`` (0: the default stream), so
execute_v2 is asynchronous like pyACL's. Operands are device memory from
acl.rt.malloc or pinned host memory from acl.rt.malloc_host. An input whose
tensor desc was made constant with acl.set_tensor_const and whose data
buffer is empty (null pointer or size 0) or None is read from the
constant's bytes, as pyACL does (ReduceSum's axes, most often).

Errors (aclError): unknown op_type ACL_ERROR_OP_NOT_FOUND (100024); wrong
number, shape or dtype of inputs ACL_ERROR_OP_INPUT_NOT_MATCH (100021);
outputs that do not match what the op produces
ACL_ERROR_OP_OUTPUT_NOT_MATCH (100022); an attribute of the wrong type or
an unsupported value ACL_ERROR_OP_ATTR_NOT_MATCH (100023); a data type the
op does not take ACL_ERROR_UNSUPPORTED_DATA_TYPE (100026); a data buffer
smaller than its description, a bad handle or pointer, or an operand whose
address is not a multiple of its element size (4 bytes for ACL_FLOAT and
ACL_INT32, 2 for ACL_FLOAT16 and ACL_BF16) ACL_ERROR_INVALID_PARAM
(100000).
"""

from __future__ import annotations

import ctypes
import os
import struct
from typing import NamedTuple, Sequence

from davinci import opdesc, schema
from davinci.errors import (DTypeError, InvalidArgumentError,
                            MisalignedOperandError, ShapeError)
from davinci.schema import OpDef

from . import _desc as D
from . import _state as S
from . import constants as C
from ._state import AclFail, api
from .rt.memory import operand

__all__ = ["create_attr", "destroy_attr", "set_attr_bool", "set_attr_int",
           "set_attr_float", "set_attr_string", "set_attr_list_bool",
           "set_attr_list_int", "set_attr_list_float", "set_attr_list_string",
           "set_attr_list_list_int", "set_attr_data_type", "set_model_dir",
           "execute_v2", "execute", "create_handle", "execute_with_handle",
           "destroy_handle", "update_params", "cast", "load"]

_attrs: "dict[int, dict]" = {}


def create_attr():
    """attr: an empty operator attribute set."""
    h = S.new_handle()
    _attrs[h] = {}
    return h


def destroy_attr(attr):
    _attrs.pop(attr, None)


def _setter(kind, check):
    @api()
    def setter(attr, attr_name, attr_value):
        a = _attrs.get(attr)
        if a is None:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "attr %r was not made by acl.op.create_attr"
                          % (attr,))
        if not isinstance(attr_name, str) or not attr_name:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "attribute name must be a non-empty str")
        try:
            a[attr_name] = check(attr_value)
        except (TypeError, ValueError):
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s attribute %s: bad value %r"
                          % (kind, attr_name, attr_value)) from None
    setter.__name__ = "set_attr_" + kind
    return setter


def _list(conv):
    def check(v):
        return [conv(x) for x in v]
    return check


set_attr_bool = _setter("bool", lambda v: bool(int(v)))
set_attr_int = _setter("int", int)
set_attr_float = _setter("float", float)
set_attr_string = _setter("string", str)
set_attr_data_type = _setter("data_type", int)
set_attr_list_bool = _setter("list_bool", _list(lambda v: bool(int(v))))
set_attr_list_int = _setter("list_int", _list(int))
set_attr_list_float = _setter("list_float", _list(float))
set_attr_list_string = _setter("list_string", _list(str))
set_attr_list_list_int = _setter("list_list_int", _list(_list(int)))


@api()
def set_model_dir(model_dir):
    """Operators are built into the device: any existing directory is
    accepted (ACL_ERROR_INVALID_FILE when it does not exist)."""
    if not isinstance(model_dir, str) or not os.path.isdir(model_dir):
        raise AclFail(C.ACL_ERROR_INVALID_FILE,
                      "operator model directory %r does not exist"
                      % (model_dir,))


# ---------------------------------------------------------------------------
#: ACL data type -> the device's dtype of that type (davinci.ops.DTYPES)
DEVICE_DTYPES = {C.ACL_FLOAT: "float32", C.ACL_FLOAT16: "float16",
                 C.ACL_BF16: "bfloat16", C.ACL_INT32: "int32",
                 C.ACL_INT64: "int64", C.ACL_BOOL: "bool", C.ACL_INT8: "int8",
                 C.ACL_UINT8: "uint8"}
_ACL_DTYPES = {name: dt for dt, name in DEVICE_DTYPES.items()}
_DT_NAME = {getattr(C, n): n for n in (
    "ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_INT32", "ACL_INT8",
    "ACL_UINT8", "ACL_INT16", "ACL_UINT16", "ACL_UINT32", "ACL_INT64",
    "ACL_UINT64", "ACL_DOUBLE", "ACL_BOOL")}
#: every operator acl.op runs: the CANN names of the schema's compute ops
_OP_TYPES = tuple(sorted(name for op in schema.COMPUTE_OPS
                         for name in op.acl))


class _T:
    """One operand: its description, device address, and for a constant
    input read from its tensor desc (acl.set_tensor_const) those bytes."""

    def __init__(self, desc, addr, what, host: "bytes | None" = None,
                 described_only: bool = False):
        self.desc = desc
        self.addr = addr
        self.what = what
        self.host = host
        #: update_params's operand: a description, no data (address 0)
        self.described_only = described_only

    @property
    def shape(self):
        return self.desc.shape

    @property
    def dtype(self):
        return self.desc.dtype


_CONST_HINT = " (or make the input constant with acl.set_tensor_const)"


def _empty(bh) -> bool:
    """An absent (None, 0) or empty (null pointer or no bytes) data
    buffer."""
    if bh in (None, 0):
        return True
    b = D.buffers.get(bh)
    return b is not None and (not b.ptr or not b.size)


def _const_operand(d, dev: S.AclDevice, what: str) -> _T:
    """A constant input (acl.set_tensor_const) given without data: its
    bytes, copied to the device of the stream."""
    if len(d.const) < d.nbytes:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%s: the constant holds %d bytes, the %s tensor of shape "
                      "%s needs %d: give acl.set_tensor_const the whole "
                      "tensor" % (what, len(d.const),
                                  _DT_NAME.get(d.dtype, d.dtype),
                                  list(d.shape), d.nbytes))
    return _T(d, d.staged_address(dev.dev), what, d.const[:d.nbytes])


def _operands(descs, bufs, what, dev: S.AclDevice):
    if not isinstance(descs, (list, tuple)) or \
            not isinstance(bufs, (list, tuple)) or len(descs) != len(bufs):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%s descriptions and data buffers must be lists of one "
                      "length" % what)
    out = []
    for i, (dh, bh) in enumerate(zip(descs, bufs)):
        d = D.descs.get(dh)
        if d is not None and d.const is not None and what == "input" and \
                _empty(bh):
            out.append(_const_operand(d, dev, "%s %d" % (what, i)))
            continue
        b = D.buffers.get(bh)
        if d is None or b is None:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s %d: %s is not a live handle%s" % (
                              what, i, "tensor desc" if d is None
                              else "data buffer", "" if d is None or
                              what != "input" else _CONST_HINT))
        if b.size < d.nbytes:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s %d: data buffer has %d bytes, the %s tensor of "
                          "shape %s needs %d%s"
                          % (what, i, b.size, _DT_NAME.get(d.dtype, d.dtype),
                             list(d.shape), d.nbytes, _CONST_HINT
                             if what == "input" and not b.size else ""))
        addr = operand(b.ptr, max(d.nbytes, 1), "%s %d" % (what, i)) \
            if d.nbytes else b.ptr
        out.append(_T(d, addr, "%s %d" % (what, i)))
    return out


def _need(cond, code, msg):
    if not cond:
        raise AclFail(code, msg)


def _acl_name(dtype) -> str:
    return _DT_NAME.get(dtype, str(dtype))


def _dtype_in(name, t, allowed: Sequence[str]):
    """Operand ``t`` is of one of the device dtypes ``allowed``."""
    _need(DEVICE_DTYPES.get(t.dtype) in allowed,
          C.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
          "%s: %s has data type %s; %s takes %s" % (
              name, t.what, _acl_name(t.dtype), name,
              ", ".join(_acl_name(_ACL_DTYPES[a]) for a in allowed)))


def _n(name, ins, outs, nin, nout):
    _need(len(ins) in ((nin,) if isinstance(nin, int) else nin),
          C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s takes %s input(s), got %d" % (name, nin, len(ins)))
    _need(len(outs) == nout, C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
          "%s has %d output(s), got %d" % (name, nout, len(outs)))


def _out_is(name, o, shape, dtype):
    # CANN's comparisons write ACL_BOOL; this device writes 1 or 0 in the
    # inputs' data type, so say so where a program expects bools
    hint = " (the device has no ACL_BOOL tensors: it writes 1 or 0 in the " \
        "inputs' data type)" if o.dtype == C.ACL_BOOL else ""
    _need(o.dtype == dtype, C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
          "%s produces %s, the output is described as %s%s"
          % (name, _acl_name(dtype), _acl_name(o.dtype), hint))
    _need(tuple(o.shape) == tuple(shape), C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
          "%s produces shape %s, the output is described as %s"
          % (name, list(shape), list(o.shape)))


#: an attribute's Python type -> what it must be, and its setter
_ATTR_KINDS = {bool: "a bool (set_attr_bool)", int: "an int (set_attr_int)",
               float: "a float (set_attr_float)",
               str: "a string (set_attr_string)",
               list: "a list of ints (set_attr_list_int)"}
#: the attribute kind of each schema imm type
_IMM_KINDS = {"float32": float, "byte": int, "enum": str, "int32": int}


def _attr(attrs, name, default, kind):
    v = attrs.get(name, default)
    if kind is list:
        ok = isinstance(v, list) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v)
    elif kind is bool:
        ok = isinstance(v, bool)
    else:
        ok = isinstance(v, kind) and not isinstance(v, bool)
    if not ok:
        raise AclFail(C.ACL_ERROR_OP_ATTR_NOT_MATCH,
                      "attribute %s must be %s, not %r"
                      % (name, _ATTR_KINDS[kind], v))
    return v


def attribute(op: OpDef, name: str, attrs: dict):
    """The value of ``op``'s attribute (its descriptor's imm) for CANN name
    ``name``: what the name fixes (Less: predicate LT), else CANN's
    attribute of that name (Axpy's alpha), which is then required."""
    if op.imm is None:
        return None
    fixed = op.acl[name]
    if op.imm.name in fixed:
        return fixed[op.imm.name]
    kind = _IMM_KINDS[op.imm.type]
    _need(op.imm.name in attrs, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
          "%s needs attribute %s, %s" % (name, op.imm.name,
                                         _ATTR_KINDS[kind]))
    return _attr(attrs, op.imm.name, None, kind)


class Operand(NamedTuple):
    """A device address and the caller's name of it, for messages."""
    addr: int
    what: str


def describe(op: OpDef, name: str, acl_dtype: int, dst, srcs: Sequence,
             **extents):
    """The descriptor of ``op`` (CANN name ``name``) on ``acl_dtype``
    inputs: ``dst`` and ``srcs`` (in the device's source order) have an
    ``addr`` and a ``what``; ``extents`` as davinci.opdesc.describe takes
    them. Its refusals become aclErrors."""
    labels = {"dst": dst.what}
    labels.update(("src%d" % i, t.what) for i, t in enumerate(srcs))
    try:
        return opdesc.describe(op, DEVICE_DTYPES[acl_dtype], dst=dst.addr,
                               srcs=[t.addr for t in srcs], names=labels,
                               label=name, **extents)
    except MisalignedOperandError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, exc.message) from None
    except DTypeError as exc:
        raise AclFail(C.ACL_ERROR_UNSUPPORTED_DATA_TYPE, exc.message) \
            from None
    except ShapeError as exc:
        raise AclFail(C.ACL_ERROR_OP_INPUT_NOT_MATCH, exc.message) from None
    except InvalidArgumentError as exc:
        raise AclFail(C.ACL_ERROR_OP_ATTR_NOT_MATCH, exc.message) from None


def _rows(shape):
    n = shape[-1] if shape else 1
    m = 1
    for d in shape[:-1]:
        m *= d
    return m, n


def _read_axes(name, t):
    """Axes from an int32/int64 input tensor (device or pinned memory)."""
    _need(t.dtype in (C.ACL_INT32, C.ACL_INT64),
          C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s axes input must be ACL_INT32 or ACL_INT64" % name)
    fmt = "<%d%s" % (t.desc.count, "i" if t.dtype == C.ACL_INT32 else "q")
    if t.host is not None:              # a constant: its own bytes
        return list(struct.unpack(fmt, t.host))
    if t.described_only:                # update_params: known at execution
        return None
    d = None
    for dev in S.devices.values():
        hit = dev.dev.find_buffer(t.addr)
        if hit is not None:
            d = hit
            break
    _need(d is not None, C.ACL_ERROR_INVALID_PARAM,
          "%s axes input is not device or pinned memory" % name)
    buf, off = d
    raw = ctypes.string_at(buf.address + off, t.desc.nbytes)
    return list(struct.unpack(fmt, raw))


# -- one mapping of acl's operands and attributes per kind of op -------------
def _elementwise(op: OpDef, name, ins, outs, attrs):
    _n(name, ins, outs, opdesc.SOURCES[op.kind], 1)
    x = ins[0]
    _dtype_in(name, x, op.dtypes)
    for t in ins[1:]:
        _need(t.dtype == x.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "%s inputs have data types %s and %s: cast one first"
              % (name, _acl_name(x.dtype), _acl_name(t.dtype)))
        _need(tuple(t.shape) == tuple(x.shape),
              C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "%s inputs have shapes %s and %s (no broadcasting here)"
              % (name, list(x.shape), list(t.shape)))
    _out_is(name, outs[0], x.shape, x.dtype)
    return describe(op, name, x.dtype, outs[0],
                    [ins[i] for i in op.acl_order(name)],
                    count=x.desc.count, attr=attribute(op, name, attrs))


def _matmul(op: OpDef, name, ins, outs, attrs):
    _n(name, ins, outs, 2, 1)
    a, b = ins
    _dtype_in(name, a, op.dtypes)
    _need(a.dtype == b.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s inputs must have one data type" % name)
    _need(len(a.shape) == 2 and len(b.shape) == 2,
          C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s takes 2-D inputs, got %s and %s"
          % (name, list(a.shape), list(b.shape)))
    ta = _attr(attrs, "transpose_x1", False, bool)
    tb = _attr(attrs, "transpose_x2", False, bool)
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    _need(k == k2, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s inner dimensions differ: x1 gives k=%d, x2 gives k=%d"
          % (name, k, k2))
    _out_is(name, outs[0], (m, n), a.dtype)
    return describe(op, name, a.dtype, outs[0],
                    [ins[i] for i in op.acl_order(name)], mnk=(m, n, k),
                    transpose=(ta, tb))


def _over_rows(op: OpDef, name, ins, outs, attrs):
    _n(name, ins, outs, 1, 1)
    x = ins[0]
    _dtype_in(name, x, op.dtypes)
    _need(len(x.shape) >= 1, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s needs at least one dimension" % name)
    axes = _attr(attrs, "axes", [-1], list)
    nd = len(x.shape)
    _need(len(axes) == 1 and axes[0] in (-1, nd - 1),
          C.ACL_ERROR_OP_ATTR_NOT_MATCH,
          "%s runs over the last axis only (axes [-1]), not %r"
          % (name, axes))
    _out_is(name, outs[0], x.shape, x.dtype)
    return describe(op, name, x.dtype, outs[0], ins, rows=_rows(x.shape))


def _reduce(op: OpDef, name, ins, outs, attrs):
    _n(name, ins, outs, (1, 2), 1)
    x = ins[0]
    _dtype_in(name, x, op.dtypes)
    nd = len(x.shape)
    if len(ins) == 2:
        axes = _read_axes(name, ins[1])
        if axes is None:
            return None             # checked when it runs
    else:
        axes = _attr(attrs, "axes", [], list)
    keep = _attr(attrs, "keep_dims", False, bool)
    norm = sorted(set(a + nd if a < 0 else a for a in axes)) or \
        list(range(nd))
    _need(all(0 <= a < nd for a in norm), C.ACL_ERROR_OP_ATTR_NOT_MATCH,
          "%s axes %r outside a %d-D input" % (name, axes, nd))
    if norm == list(range(nd)):
        m, n = 1, x.desc.count
    elif norm == [nd - 1]:
        m, n = _rows(x.shape)
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
    _out_is(name, o, shape, x.dtype)
    return describe(op, name, x.dtype, o, ins[:1], rows=(m, n))


def _cast(op: OpDef, name, ins, outs, attrs):
    _n(name, ins, outs, 1, 1)
    x = ins[0]
    o = outs[0]
    _dtype_in(name, x, op.dtypes)
    dst = attrs.get("dst_type", o.dtype)
    _need(dst == o.dtype, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
          "%s dst_type %r differs from the output's data type %r"
          % (name, dst, o.dtype))
    _dtype_in(name, o, op.dtypes)
    _out_is(name, o, x.shape, o.dtype)
    return describe(op, name, x.dtype, o, ins, count=x.desc.count,
                    dst_dtype=DEVICE_DTYPES[o.dtype])


def _triangle(op: OpDef, name, ins, outs, attrs):
    """Tril, Triu: the last two axes of x (a 1-D x is one row), CANN's
    diagonal attribute (default 0)."""
    _n(name, ins, outs, 1, 1)
    x = ins[0]
    _dtype_in(name, x, op.dtypes)
    _need(len(x.shape) >= 1, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s needs at least one dimension" % name)
    diagonal = _attr(attrs, "diagonal", 0, int)
    _need(-(1 << 31) <= diagonal < 1 << 31, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
          "%s diagonal %d does not fit int32" % (name, diagonal))
    _out_is(name, outs[0], x.shape, x.dtype)
    m, n = _rows(x.shape)
    return describe(op, name, x.dtype, outs[0], ins, attr=diagonal,
                    mnk=(m, n, x.shape[-2] if len(x.shape) > 1 else 1))


#: how acl's operands and attributes map onto each kind of op
_KINDS = {"binary": _elementwise, "unary": _elementwise, "matmul": _matmul,
          "rows": _over_rows, "reduce": _reduce, "cast": _cast,
          "triangle": _triangle}


def op_of(op_type) -> OpDef:
    """The schema's op behind CANN name ``op_type``; ACL_ERROR_OP_NOT_FOUND
    when it has none."""
    op = schema.by_acl(op_type) if isinstance(op_type, str) else None
    if op is None or op.kind not in _KINDS:
        raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                      "operator %r is not built in: use %s"
                      % (op_type, ", ".join(_OP_TYPES)))
    return op


def _task(op_type, ins, outs, attrs):
    """The descriptor of operator ``op_type`` on these operands (None when
    update_params cannot know it before the data: ReduceSum's axes)."""
    op = op_of(op_type)
    return _KINDS[op.kind](op, op_type, ins, outs, attrs)


def _attrs_of(attr) -> dict:
    if attr in (0, None):
        return {}
    a = _attrs.get(attr)
    if a is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "attr %r was not made by acl.op.create_attr" % (attr,))
    return a


def _launch(op_type, input_desc, inputs, output_desc, outputs, attrs,
            stream) -> None:
    if not isinstance(op_type, str):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "op_type must be a str")
    s = S.get_stream(stream)
    dev = s.ctx.device
    ins = _operands(input_desc, inputs, "input", dev)
    outs = _operands(output_desc, outputs, "output", dev)
    s.stream.launch(_task(op_type, ins, outs, attrs))


@api()
def execute_v2(op_type, input_desc, inputs, output_desc, outputs, attr,
               stream):
    """Enqueue operator ``op_type`` on ``stream`` (see the module notes)."""
    _launch(op_type, input_desc, inputs, output_desc, outputs,
            _attrs_of(attr), stream)


execute = execute_v2


class _Handle:
    """create_handle's operator: its type, descriptions and attributes."""

    def __init__(self, op_type: str, input_desc, output_desc, attrs: dict):
        self.op_type = op_type
        self.input_desc = list(input_desc)
        self.output_desc = list(output_desc)
        self.attrs = dict(attrs)


_handles: "dict[int, _Handle]" = {}


@api(1, (0,))
def create_handle(op_type, input_desc, output_desc, attr):
    """(handle, ret): operator ``op_type`` with these tensor descriptions
    and attributes, for execute_with_handle."""
    op_of(op_type)
    for d in list(input_desc) + list(output_desc):
        if d not in D.descs:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%r is not a tensor desc" % (d,))
    h = S.new_handle()
    _handles[h] = _Handle(op_type, input_desc, output_desc, _attrs_of(attr))
    return h


@api()
def execute_with_handle(handle, inputs, outputs, stream):
    """ret: enqueue the operator of ``handle`` on ``stream`` with these
    data buffers."""
    h = _handles.get(handle)
    if h is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%r is not a handle from acl.op.create_handle"
                      % (handle,))
    _launch(h.op_type, h.input_desc, inputs, h.output_desc, outputs,
            h.attrs, stream)


def destroy_handle(handle):
    """Forget a handle from create_handle (nothing when it is not one)."""
    S.check_args_of("acl.op.destroy_handle", (("handle", handle),))
    _handles.pop(handle, None)


def _described(descs, what: str) -> list[_T]:
    """Operands of descriptions alone (no data yet; a constant input
    brings its bytes)."""
    out = []
    for i, dh in enumerate(descs):
        d = D.descs.get(dh)
        if d is None:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s %d: %r is not a tensor desc" % (what, i, dh))
        host = d.const[:d.nbytes] if d.const is not None and \
            len(d.const) >= d.nbytes and what == "input" else None
        out.append(_T(d, 0, "%s %d" % (what, i), host, described_only=True))
    return out


@api()
def update_params(op_type, input_desc, output_desc, attr):
    """ret: operators are built into the device, nothing to compile; the
    operator is checked against these descriptions and attributes as
    execute_v2 would check it (inputs, outputs, attribute types and values),
    so what would fail at execution fails here."""
    _task(op_type, _described(input_desc, "input"),
          _described(output_desc, "output"), _attrs_of(attr))


@api()
def cast(src_desc, src_buffer, dst_desc, dst_buffer, truncate, stream):
    """ret: enqueue a Cast of one tensor into another's data type
    (``truncate`` is accepted; float to int32 rounds as the device's CAST
    does)."""
    _launch("Cast", [src_desc], [src_buffer], [dst_desc], [dst_buffer], {},
            stream)


@api()
def load(model, model_size):
    """ret: operators are built in, so only a davinci offline model is
    taken (and has nothing to add); anything else is refused."""
    from .mdl import read_model
    from davinci import omfile
    try:
        omfile.parse(read_model(model, model_size))
    except omfile.ModelFormatError as exc:
        raise AclFail(C.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
                      "acl.op.load: %s" % exc) from None
