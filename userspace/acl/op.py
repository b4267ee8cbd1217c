# SPDX-License-Identifier: GPL-2.0
"""acl.op: single-operator execution, pyACL style.

    attr = acl.op.create_attr()
    acl.op.set_attr_bool(attr, "transpose_x2", True)
    ret = acl.op.execute_v2("MatMul", [da, db], [ba, bb], [dc], [bc], attr,
                            stream)

The operators are the compute ops of the device's schema (davinci.schema,
declared in kmod/core/ops.toml), each by its CANN names (``OpDef.acl``;
tests/conformance/test_acl_op_schema.py runs every one), built in:
set_model_dir and load read and check the single-op models ``davinci-atc
--singleop`` compiles (acl/singleop.py), which execution does not need.
How acl's operands and attributes map onto an op follows from the op's
kind:

- elementwise (Add, Relu, ...): inputs of one data type whose shapes
  broadcast as numpy's (CANN's rule), one task; the op's attribute is what
  its CANN name fixes (Less: the comparison) or else CANN's attribute of
  that name (Axpy, y = x1 + alpha * x2: alpha, a required float); an
  attribute the device computes at its default only (Log's base, scale
  and shift; Swish's scale) is refused at any other value. A
  comparison writes ACL_BOOL, or 1 and 0 in its inputs' data type;
- matrix product (MatMul): 2-D x1 and x2, transpose_x1 and transpose_x2;
- rows (SoftmaxV2, LogSoftmaxV2): over the last axis only (axes [-1]);
- reduce (ReduceSum): the last axis or all of them, axes as a second input
  or an attribute, keep_dims;
- cast (Cast): to its output's data type (dst_type);
- the convolutions (Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter and
  the D forms), the poolings (MaxPool, MaxPoolV3, AvgPool, AvgPoolV2,
  AvgPoolV2Grad) and the views (Slice, Transpose and the D forms) map their
  own operands and attributes: acl/_opconv.py, _oppool.py and _opviews.py
  say how.

Each call becomes one task on ``stream`` (0: the default stream; a Conv2D
with a bias too: its bias is the convolution's src2), so execute_v2 is asynchronous like pyACL's. Operands are
device memory from acl.rt.malloc or pinned host memory from
acl.rt.malloc_host. An input whose tensor desc was made constant with
acl.set_tensor_const and whose data buffer is empty (null pointer or size
0) or None is read from the constant's bytes, as pyACL does (ReduceSum's
axes, most often).

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

import os

from davinci import schema
from davinci.schema import OpDef

from . import _desc as D
from . import singleop
from . import _state as S
from . import constants as C
from ._opargs import DEVICE_DTYPES  # noqa: F401 (acl.op.DEVICE_DTYPES)
from ._opargs import DT_NAME, Blocked, Tensor
from ._opconv import NAMES as _CONV_NAMES
from ._opkinds import KINDS
from ._oppool import NAMES as _POOL_NAMES
from ._opviews import NAMES as _VIEW_NAMES
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


#: single-op models read by set_model_dir and load: file or "memory" ->
#: the operator each describes
_models: "dict[str, singleop.OpSpec]" = {}


def check_single_op(spec: "singleop.OpSpec") -> None:
    """Refuse a single-op model's operator as update_params would (not
    pyACL's: davinci-atc --singleop compiles with it)."""
    def operands(specs, what):
        return [Tensor(D.TensorDesc(t.dtype, t.shape, t.format), 0,
                       "%s %d" % (what, i), t.const, described_only=True)
                for i, t in enumerate(specs)]
    attrs = {}
    for name, kind, value in spec.attrs:
        attrs[name] = float(value) if kind == "float" else \
            [float(v) for v in value] if kind == "list_float" else value
    steps = _steps(spec.op, operands(spec.inputs, "input"),
                   operands(spec.outputs, "output"), attrs)
    for step in steps:
        if isinstance(step, Blocked):
            step.task_at(_CHECK_AT)


def _load_model(data: bytes, what: str) -> None:
    spec = singleop.load(data, what)
    try:
        check_single_op(spec)
    except AclFail as exc:
        raise AclFail(exc.code, "%s: %s" % (what, exc.message)) from None
    _models[what] = spec


@api()
def set_model_dir(model_dir):
    """Read the single-op models of ``model_dir`` (``davinci-atc
    --singleop`` writes them) and check each operator as update_params
    would; the operators are built into the device, so execution does not
    need them. ACL_ERROR_INVALID_FILE when the directory does not exist,
    ACL_ERROR_PARSE_MODEL for a file that is not a whole single-op model,
    the operator's own error for one the device cannot run."""
    if not isinstance(model_dir, str) or not os.path.isdir(model_dir):
        raise AclFail(C.ACL_ERROR_INVALID_FILE,
                      "operator model directory %r does not exist"
                      % (model_dir,))
    for path in singleop.model_files(model_dir):
        with open(path, "rb") as f:
            _load_model(f.read(), path)


#: every operator acl.op runs: the CANN names of the schema's compute ops
_OP_TYPES = tuple(sorted(name for op in schema.COMPUTE_OPS
                         for name in op.acl))
#: operators whose mapping is their own rather than their op kind's
BY_NAME = {**_CONV_NAMES, **_POOL_NAMES, **_VIEW_NAMES}
#: update_params' stand-in for a parameter block's address: the task is
#: checked, never submitted
_CHECK_AT = 1 << 12
_CONST_HINT = " (or make the input constant with acl.set_tensor_const)"


def _empty(bh) -> bool:
    """An absent (None, 0) or empty (null pointer or no bytes) data
    buffer."""
    if bh in (None, 0):
        return True
    b = D.buffers.get(bh)
    return b is not None and (not b.ptr or not b.size)


def _const_operand(d, dev: S.AclDevice, what: str) -> Tensor:
    """A constant input (acl.set_tensor_const) given without data: its
    bytes, copied to the device of the stream."""
    if len(d.const) < d.nbytes:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%s: the constant holds %d bytes, the %s tensor of shape "
                      "%s needs %d: give acl.set_tensor_const the whole "
                      "tensor" % (what, len(d.const),
                                  DT_NAME.get(d.dtype, d.dtype),
                                  list(d.shape), d.nbytes))
    return Tensor(d, d.staged_address(dev.dev), what, d.const[:d.nbytes])


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
                          % (what, i, b.size, DT_NAME.get(d.dtype, d.dtype),
                             list(d.shape), d.nbytes, _CONST_HINT
                             if what == "input" and not b.size else ""))
        addr = operand(b.ptr, max(d.nbytes, 1), "%s %d" % (what, i)) \
            if d.nbytes else b.ptr
        out.append(Tensor(d, addr, "%s %d" % (what, i)))
    return out


def op_of(op_type) -> OpDef:
    """The schema's op behind CANN name ``op_type``; ACL_ERROR_OP_NOT_FOUND
    when it has none."""
    op = schema.by_acl(op_type) if isinstance(op_type, str) else None
    if op is None or (op.kind not in KINDS and op_type not in BY_NAME):
        raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                      "operator %r is not built in: use %s"
                      % (op_type, ", ".join(_OP_TYPES)))
    return op


def _steps(op_type, ins, outs, attrs) -> list:
    """The tasks of operator ``op_type`` on these operands, in order: each
    a descriptor or a :class:`Blocked` (none when update_params cannot
    know them before the data: ReduceSum's axes)."""
    op = op_of(op_type)
    mapping = BY_NAME.get(op_type) or KINDS[op.kind]
    steps = mapping(op, op_type, ins, outs, attrs)
    if steps is None:
        return []
    return list(steps) if isinstance(steps, (list, tuple)) and \
        not isinstance(steps, Blocked) else [steps]


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
    for step in _steps(op_type, ins, outs, attrs):
        if isinstance(step, Blocked):
            s.stream.device.param_blocks.launch(s.stream, step.data,
                                                step.task_at)
        else:
            s.stream.launch(step)


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


def _described(descs, what: str) -> list[Tensor]:
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
        out.append(Tensor(d, 0, "%s %d" % (what, i), host, described_only=True))
    return out


@api()
def update_params(op_type, input_desc, output_desc, attr):
    """ret: operators are built into the device, nothing to compile; the
    operator is checked against these descriptions and attributes as
    execute_v2 would check it (inputs, outputs, attribute types and values),
    so what would fail at execution fails here."""
    for step in _steps(op_type, _described(input_desc, "input"),
                       _described(output_desc, "output"), _attrs_of(attr)):
        if isinstance(step, Blocked):
            step.task_at(_CHECK_AT)


@api()
def cast(src_desc, src_buffer, dst_desc, dst_buffer, truncate, stream):
    """ret: enqueue a Cast of one tensor into another's data type
    (``truncate`` is accepted; float to int32 rounds as the device's CAST
    does)."""
    _launch("Cast", [src_desc], [src_buffer], [dst_desc], [dst_buffer], {},
            stream)


@api()
def load(model, model_size):
    """ret: read a single-op model from memory (a file ``davinci-atc
    --singleop`` wrote) and check its operator as set_model_dir does; a
    davinci offline model is taken too (its operators are built in).
    Anything else is refused."""
    from .mdl import read_model
    from davinci import omfile
    data = read_model(model, model_size)
    if singleop.is_model(data):
        _load_model(data, "memory at %#x" % model)
        return
    try:
        omfile.parse(data)
    except omfile.ModelFormatError as exc:
        raise AclFail(C.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
                      "acl.op.load: %s" % exc) from None
