# SPDX-License-Identifier: GPL-2.0
"""acl.op: single-operator execution, pyACL style.

    attr = acl.op.create_attr()
    acl.op.set_attr_bool(attr, "transpose_x2", True)
    ret = acl.op.execute_v2("MatMul", [da, db], [ba, bb], [dc], [bc], attr,
                            stream)

Ops are built into the device (no .om files): Add, Sub, Mul, RealDiv,
Maximum, Minimum, Relu, Exp, MatMul (transpose_x1, transpose_x2), SoftmaxV2
(axes: the last axis), ReduceSum (axes as a second input or attribute, the
last axis or all of them; keep_dims) and Cast. Each becomes one task on
``stream`` (0: the default stream), so execute_v2 is asynchronous like
pyACL's. Operands are device memory from acl.rt.malloc or pinned host
memory from acl.rt.malloc_host. An input whose tensor desc was made
constant with acl.set_tensor_const and whose data buffer is empty (null
pointer or size 0) or None is read from the constant's bytes, as pyACL does
(ReduceSum's axes, most often).

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

import davinci
# _uapi is davinci's ctypes mirror of the uapi header (Decision 8): the
# ABI's op codes, data types and task flags; davinci names it no other way.
from davinci import _uapi as U

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
_DT = {C.ACL_FLOAT: U.DAVINCI_DTYPE_FLOAT32,
       C.ACL_FLOAT16: U.DAVINCI_DTYPE_FLOAT16,
       C.ACL_BF16: U.DAVINCI_DTYPE_BFLOAT16,
       C.ACL_INT32: U.DAVINCI_DTYPE_INT32}
_FLOATS = (C.ACL_FLOAT, C.ACL_FLOAT16, C.ACL_BF16)
_ALL = tuple(_DT)
_BINARY = {"Add": U.DAVINCI_OP_ADD, "Sub": U.DAVINCI_OP_SUB,
           "Mul": U.DAVINCI_OP_MUL, "RealDiv": U.DAVINCI_OP_DIV,
           "Div": U.DAVINCI_OP_DIV, "Maximum": U.DAVINCI_OP_MAX,
           "Minimum": U.DAVINCI_OP_MIN}
_UNARY = {"Relu": (U.DAVINCI_OP_RELU, _ALL),
          "Exp": (U.DAVINCI_OP_EXP, _FLOATS)}
_DT_NAME = {C.ACL_FLOAT: "ACL_FLOAT", C.ACL_FLOAT16: "ACL_FLOAT16",
            C.ACL_BF16: "ACL_BF16", C.ACL_INT32: "ACL_INT32"}


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


def _dtype_in(op, t, allowed):
    _need(t.dtype in allowed, C.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
          "%s: %s has data type %s; %s takes %s" % (
              op, t.what, _DT_NAME.get(t.dtype, t.dtype), op,
              ", ".join(_DT_NAME[a] for a in allowed)))


def _n(op, ins, outs, nin, nout):
    _need(len(ins) in ((nin,) if isinstance(nin, int) else nin),
          C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "%s takes %s input(s), got %d" % (op, nin, len(ins)))
    _need(len(outs) == nout, C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
          "%s has %d output(s), got %d" % (op, nout, len(outs)))


def _out_is(op, o, shape, dtype):
    _need(o.dtype == dtype, C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
          "%s produces %s, the output is described as %s"
          % (op, _DT_NAME.get(dtype, dtype), _DT_NAME.get(o.dtype, o.dtype)))
    _need(tuple(o.shape) == tuple(shape), C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
          "%s produces shape %s, the output is described as %s"
          % (op, list(shape), list(o.shape)))


def _attr(attrs, name, default, kind):
    v = attrs.get(name, default)
    if kind is bool and not isinstance(v, bool):
        raise AclFail(C.ACL_ERROR_OP_ATTR_NOT_MATCH,
                      "attribute %s must be a bool (set_attr_bool)" % name)
    if kind is list and (not isinstance(v, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in v)):
        raise AclFail(C.ACL_ERROR_OP_ATTR_NOT_MATCH,
                      "attribute %s must be a list of ints (set_attr_list_int)"
                      ", not %r" % (name, v))
    return v


def _rows(shape):
    n = shape[-1] if shape else 1
    m = 1
    for d in shape[:-1]:
        m *= d
    return m, n


def _read_axes(t):
    """Axes from an int32/int64 input tensor (device or pinned memory)."""
    _need(t.dtype in (C.ACL_INT32, C.ACL_INT64),
          C.ACL_ERROR_OP_INPUT_NOT_MATCH,
          "ReduceSum axes input must be ACL_INT32 or ACL_INT64")
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
          "ReduceSum axes input is not device or pinned memory")
    buf, off = d
    raw = ctypes.string_at(buf.address + off, t.desc.nbytes)
    return list(struct.unpack(fmt, raw))


def _task(op, ins, outs, attrs):
    mk = davinci.make_task
    if op in _BINARY:
        _n(op, ins, outs, 2, 1)
        a, b = ins
        _dtype_in(op, a, _ALL)
        _need(a.dtype == b.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "%s inputs have data types %s and %s: cast one first"
              % (op, _DT_NAME.get(a.dtype), _DT_NAME.get(b.dtype)))
        _need(a.shape == b.shape, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "%s inputs have shapes %s and %s (no broadcasting here)"
              % (op, list(a.shape), list(b.shape)))
        _out_is(op, outs[0], a.shape, a.dtype)
        return mk(_BINARY[op], dtype=_DT[a.dtype], dst=outs[0].addr,
                  src0=a.addr, src1=b.addr, count=a.desc.count)
    if op in _UNARY:
        opcode, allowed = _UNARY[op]
        _n(op, ins, outs, 1, 1)
        x = ins[0]
        _dtype_in(op, x, allowed)
        _out_is(op, outs[0], x.shape, x.dtype)
        return mk(opcode, dtype=_DT[x.dtype], dst=outs[0].addr, src0=x.addr,
                  count=x.desc.count)
    if op in ("MatMul", "MatMulV2"):
        _n(op, ins, outs, 2, 1)
        a, b = ins
        _dtype_in(op, a, _FLOATS)
        _need(a.dtype == b.dtype, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "MatMul inputs must have one data type")
        _need(len(a.shape) == 2 and len(b.shape) == 2,
              C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "MatMul takes 2-D inputs, got %s and %s"
              % (list(a.shape), list(b.shape)))
        ta = _attr(attrs, "transpose_x1", False, bool)
        tb = _attr(attrs, "transpose_x2", False, bool)
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
        _need(k == k2, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "MatMul inner dimensions differ: x1 gives k=%d, x2 gives k=%d"
              % (k, k2))
        _out_is(op, outs[0], (m, n), a.dtype)
        flags = (U.DAVINCI_TASK_F_TRANS_A if ta else 0) | \
            (U.DAVINCI_TASK_F_TRANS_B if tb else 0)
        return mk(U.DAVINCI_OP_MATMUL, dtype=_DT[a.dtype], dst=outs[0].addr,
                  src0=a.addr, src1=b.addr, m=m, n=n, k=k, flags=flags)
    if op in ("SoftmaxV2", "Softmax"):
        _n(op, ins, outs, 1, 1)
        x = ins[0]
        _dtype_in(op, x, _FLOATS)
        _need(len(x.shape) >= 1, C.ACL_ERROR_OP_INPUT_NOT_MATCH,
              "SoftmaxV2 needs at least one dimension")
        axes = _attr(attrs, "axes", [-1], list)
        nd = len(x.shape)
        _need(len(axes) == 1 and axes[0] in (-1, nd - 1),
              C.ACL_ERROR_OP_ATTR_NOT_MATCH,
              "SoftmaxV2 runs over the last axis only (axes [-1]), not %r"
              % (axes,))
        _out_is(op, outs[0], x.shape, x.dtype)
        m, n = _rows(x.shape)
        return mk(U.DAVINCI_OP_SOFTMAX, dtype=_DT[x.dtype], dst=outs[0].addr,
                  src0=x.addr, m=m, n=n)
    if op in ("ReduceSum", "ReduceSumD"):
        _n(op, ins, outs, (1, 2), 1)
        x = ins[0]
        _dtype_in(op, x, _FLOATS)
        nd = len(x.shape)
        if len(ins) == 2:
            axes = _read_axes(ins[1])
            if axes is None:
                return None             # checked when it runs
        else:
            axes = _attr(attrs, "axes", [], list)
        keep = _attr(attrs, "keep_dims", False, bool)
        norm = sorted(set(a + nd if a < 0 else a for a in axes)) or \
            list(range(nd))
        _need(all(0 <= a < nd for a in norm), C.ACL_ERROR_OP_ATTR_NOT_MATCH,
              "ReduceSum axes %r outside a %d-D input" % (axes, nd))
        if norm == list(range(nd)):
            m, n = 1, x.desc.count
        elif norm == [nd - 1]:
            m, n = _rows(x.shape)
        else:
            raise AclFail(C.ACL_ERROR_OP_ATTR_NOT_MATCH,
                          "ReduceSum over axes %r is not supported: reduce "
                          "the last axis or all of them" % (axes,))
        if keep:
            shape = tuple(1 if i in norm else d
                          for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in norm)
        o = outs[0]
        if not (m == 1 and not keep and tuple(o.shape) == (1,)):
            _out_is(op, o, shape, x.dtype)
        else:
            _out_is(op, o, (1,), x.dtype)
        return mk(U.DAVINCI_OP_REDUCE_SUM, dtype=_DT[x.dtype], dst=o.addr,
                  src0=x.addr, m=m, n=n)
    if op == "Cast":
        _n(op, ins, outs, 1, 1)
        x = ins[0]
        o = outs[0]
        _dtype_in(op, x, _ALL)
        dst = attrs.get("dst_type", o.dtype)
        _need(dst == o.dtype, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
              "Cast dst_type %r differs from the output's data type %r"
              % (dst, o.dtype))
        _dtype_in(op, o, _ALL)
        _out_is(op, o, x.shape, o.dtype)
        return mk(U.DAVINCI_OP_CAST, dtype=_DT[x.dtype],
                  dst_dtype=_DT[o.dtype], dst=o.addr, src0=x.addr,
                  count=x.desc.count)
    raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                  "operator %r is not built in: use Add, Sub, Mul, RealDiv, "
                  "Maximum, Minimum, Relu, Exp, MatMul, SoftmaxV2, ReduceSum "
                  "or Cast" % (op,))


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
    task = _task(op_type, ins, outs, attrs)
    names = {"dst": outs[0].what, "src0": ins[0].what}
    if len(ins) > 1:
        names["src1"] = ins[1].what
    try:
        davinci.ops.check_alignment(task, op_type, names)
    except davinci.errors.MisalignedOperandError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, exc.message) from None
    s.stream.launch(task)


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


def _known(op_type: str) -> None:
    if op_type not in _BUILT_IN:
        raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                      "operator %r is not built in: use %s"
                      % (op_type, ", ".join(sorted(_BUILT_IN))))


_BUILT_IN = frozenset(list(_BINARY) + list(_UNARY) + [
    "MatMul", "MatMulV2", "SoftmaxV2", "Softmax", "ReduceSum", "ReduceSumD",
    "Cast"])


@api(1, (0,))
def create_handle(op_type, input_desc, output_desc, attr):
    """(handle, ret): operator ``op_type`` with these tensor descriptions
    and attributes, for execute_with_handle."""
    _known(op_type)
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
    _known(op_type)
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
