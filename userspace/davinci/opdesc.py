# SPDX-License-Identifier: GPL-2.0
"""One builder of compute-task descriptors for every frontend.

:func:`describe` turns an op of the schema (:mod:`davinci.schema`), a dtype,
operand device addresses, the op's extents and its attribute into a task
descriptor, checking on the way what the device would refuse: the op's
dtypes, its operand count, its attribute, flags it does not take,
dimensions past 32 bits and operands not aligned to their element size.
davinci.ops builds its tasks here from DeviceTensors; acl.op and torch_npu
from their own operands (device pointers, tensors' blocks); none of them
spells a descriptor field or an opcode itself.

>>> from davinci import opdesc
>>> t = opdesc.describe("add", "float32", dst=0x1000, srcs=(0x2000, 0x3000),
...                     count=256)
>>> t.opcode == opdesc.schema.by_name("ADD").opcode
True
"""

from __future__ import annotations

from typing import Sequence

from . import _uapi, schema
from .errors import (DTypeError, InvalidArgumentError,
                     MisalignedOperandError, ShapeError)
from .schema import OpDef
from .stream import make_task

__all__ = ["describe", "pack_params", "check_alignment", "op_of", "DTYPE_CODES",
           "DTYPE_NAMES", "ITEMSIZES", "SOURCES", "schema"]

#: dtype name -> DAVINCI_DTYPE_*
DTYPE_CODES = {"float32": _uapi.DAVINCI_DTYPE_FLOAT32,
               "float16": _uapi.DAVINCI_DTYPE_FLOAT16,
               "bfloat16": _uapi.DAVINCI_DTYPE_BFLOAT16,
               "int32": _uapi.DAVINCI_DTYPE_INT32}
DTYPE_NAMES = {code: name for name, code in DTYPE_CODES.items()}
ITEMSIZES = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4}
#: inputs each compute kind reads (src0, src1)
SOURCES = {"binary": 2, "matmul": 2, "unary": 1, "rows": 1, "reduce": 1,
           "cast": 1, "view": 1, "conv": 2}
_U32 = 0xFFFFFFFF


def op_of(op: "OpDef | str | int") -> OpDef:
    """The schema's op for an OpDef, a davinci.ops or DAVINCI_OP_ name, or
    an opcode; InvalidArgumentError when there is none."""
    if isinstance(op, OpDef):
        return op
    found = None
    if isinstance(op, int) and not isinstance(op, bool):
        found = schema.by_opcode(op)
    elif isinstance(op, str):
        found = schema.by_python(op)
        if found is None:
            try:
                found = schema.by_name(op)
            except KeyError:
                found = None
    if found is None:
        raise InvalidArgumentError(
            "no device op %r: the device runs %s" % (op, ", ".join(
                o.python for o in schema.COMPUTE_OPS)))
    return found


def _dims(op: OpDef, **dims: int) -> None:
    for name, v in dims.items():
        if not 0 <= v <= _U32:
            raise ShapeError("%s: %s = %d does not fit the device's 32-bit "
                             "dimension" % (op.python, name, v))


def describe(op: "OpDef | str | int", dtype: str, *, dst: int,
             srcs: Sequence[int] = (), count: int = 0,
             rows: "tuple[int, int] | None" = None,
             mnk: "tuple[int, int, int] | None" = None,
             attr=None, dst_dtype: str | None = None,
             transpose: tuple[bool, bool] = (False, False),
             names: "dict[str, str] | None" = None,
             label: str | None = None,
             params_at: int = 0) -> _uapi.davinci_task:
    """A checked descriptor of compute op ``op`` on ``dtype`` operands.

    ``dst`` and ``srcs`` are device addresses; the extents are ``count``
    elements (binary, unary, cast), ``rows`` = (m, n) (rows, reduce) or
    ``mnk`` (matmul, with ``transpose`` = (a, b)); ``attr`` is the value of
    the op's attribute (CMP's predicate, AXPY's alpha); ``dst_dtype`` the
    result dtype of a cast. ``params_at`` is the device address of the
    op's parameter block (:func:`pack_params`), for an op that takes one.
    ``names`` maps dst/src0/src1 to the caller's names for messages,
    ``label`` the caller's name of the op in them (default: its davinci.ops
    name). Raises DTypeError, ShapeError, InvalidArgumentError or
    MisalignedOperandError; nothing is submitted.
    """
    op = op_of(op)
    name = label or op.python or op.name
    if not op.compute:
        raise InvalidArgumentError("%s is not a compute op" % op.name)
    if dtype not in op.dtypes:
        raise DTypeError("%s does not support dtype %s: use one of %s"
                         % (name, dtype, ", ".join(op.dtypes)))
    want = SOURCES[op.kind]
    if len(srcs) != want:
        raise InvalidArgumentError("%s takes %d input(s), got %d"
                                   % (name, want, len(srcs)))
    fields: dict = {"dtype": DTYPE_CODES[dtype], "dst": int(dst)}
    for i, src in enumerate(srcs):
        fields["src%d" % i] = int(src)
    if op.kind == "matmul":
        if mnk is None:
            raise InvalidArgumentError("%s needs (m, n, k)" % name)
        m, n, k = mnk
        _dims(op, m=m, n=n, k=k)
        fields.update(m=m, n=n, k=k)
        flags = 0
        if transpose[0]:
            flags |= _uapi.DAVINCI_TASK_F_TRANS_A
        if transpose[1]:
            flags |= _uapi.DAVINCI_TASK_F_TRANS_B
        fields["flags"] = flags
    elif any(transpose):
        raise InvalidArgumentError("%s takes no transposed operand" % name)
    elif op.kind in ("rows", "reduce"):
        if rows is None:
            raise InvalidArgumentError("%s needs (rows, columns)" % name)
        m, n = rows
        _dims(op, m=m, n=n)
        fields.update(m=m, n=n)
    elif op.kind != "conv":         # a convolution's sizes: its block
        if count < 0:
            raise ShapeError("%s: negative element count" % name)
        fields["count"] = int(count)
    if op.kind == "cast":
        if dst_dtype not in DTYPE_CODES:
            raise DTypeError("cast to %r: the device converts to %s"
                             % (dst_dtype, ", ".join(DTYPE_CODES)))
        fields["dst_dtype"] = DTYPE_CODES[dst_dtype]
    elif dst_dtype not in (None, dtype):
        raise DTypeError("%s writes %s, not %s" % (name, dtype, dst_dtype))
    if op.imm is not None:
        if attr is None:
            raise InvalidArgumentError("%s needs its %s" % (name,
                                                           op.imm.name))
        try:
            fields["imm"] = op.imm.encode(attr)
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError("%s: %s" % (name, e)) from None
    elif attr is not None:
        raise InvalidArgumentError("%s takes no attribute" % name)
    if op.params is not None:
        if not params_at:
            raise InvalidArgumentError("%s needs its parameter block's "
                                       "device address" % name)
        fields.update(params=int(params_at), params_size=op.params.size,
                      params_version=op.params.version)
    elif params_at:
        raise InvalidArgumentError("%s takes no parameter block" % name)
    task = make_task(op.opcode, **fields)
    check_alignment(task, name, names)
    return task


def pack_params(op: "OpDef | str | int", **values) -> bytes:
    """The bytes of ``op``'s parameter block with ``values`` for its fields
    (InvalidArgumentError for an op without one or a value that does not
    fit)."""
    op = op_of(op)
    if op.params is None:
        raise InvalidArgumentError("%s takes no parameter block"
                                   % (op.python or op.name))
    try:
        return op.params.pack(**values)
    except ValueError as e:
        raise InvalidArgumentError("%s: %s" % (op.python or op.name, e)) \
            from None


def check_alignment(task, op: str | None = None,
                    names: "dict[str, str] | None" = None) -> None:
    """Raise :class:`MisalignedOperandError` unless every operand of the
    compute task descriptor ``task`` is aligned to its element size, the
    rule the device enforces with ``DAVINCI_STATUS_MISALIGNED``: ``dst`` to
    that of ``dst_dtype`` for CAST and of ``dtype`` otherwise, ``src0`` and
    ``src1`` to that of ``dtype``.

    ``op`` names the op in the message (default: the opcode's name);
    ``names`` maps ``"dst"``, ``"src0"``, ``"src1"`` to the names the
    caller gave those operands. Other opcodes pass unchecked.
    """
    opdef = schema.by_opcode(int(task.opcode))
    if opdef is None or not opdef.compute:
        return
    src = DTYPE_NAMES.get(int(task.dtype))
    dst = DTYPE_NAMES.get(int(task.dst_dtype)) \
        if opdef.kind == "cast" else src
    if src is None or dst is None:
        return                      # the driver refuses the dtype
    fields = [("dst", dst)] + [("src%d" % i, src)
                               for i in range(SOURCES[opdef.kind])]
    for field, dtype in fields:
        addr = int(getattr(task, field))
        align = ITEMSIZES[dtype]
        if addr % align == 0:
            continue
        name = (names or {}).get(field)
        what = "%s (%s)" % (name, field) if name and name != field \
            else field
        raise MisalignedOperandError(
            "%s: operand %s at device address %#x is not aligned to its "
            "element size: %s needs an address that is a multiple of %d "
            "bytes; use an offset that is a multiple of %d bytes (nothing "
            "was submitted)" % (op or opdef.name, what, addr, dtype, align,
                                align),
            what, addr, dtype, align)
