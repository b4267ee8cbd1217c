# SPDX-License-Identifier: GPL-2.0
"""What acl.op's mappings share: its operands, their checks and the
aclErrors they raise, operator attributes, and the descriptors they build
(davinci.opdesc's, with its refusals turned into aclErrors)."""

from __future__ import annotations

import ctypes
import struct
from typing import Callable, NamedTuple, Sequence

from davinci import opdesc
from davinci.errors import (DTypeError, InvalidArgumentError,
                            MisalignedOperandError, ShapeError)
from davinci.schema import OpDef

from . import _state as S
from . import constants as C
from ._state import AclFail


#: ACL data type -> the device's dtype of that type (davinci.ops.DTYPES)
DEVICE_DTYPES = {C.ACL_FLOAT: "float32", C.ACL_FLOAT16: "float16",
                 C.ACL_BF16: "bfloat16", C.ACL_INT32: "int32",
                 C.ACL_INT64: "int64", C.ACL_BOOL: "bool", C.ACL_INT8: "int8",
                 C.ACL_UINT8: "uint8"}
ACL_DTYPES = {name: dt for dt, name in DEVICE_DTYPES.items()}
DT_NAME = {getattr(C, n): n for n in (
    "ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_INT32", "ACL_INT8",
    "ACL_UINT8", "ACL_INT16", "ACL_UINT16", "ACL_UINT32", "ACL_INT64",
    "ACL_UINT64", "ACL_DOUBLE", "ACL_BOOL")}


class Tensor:
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


def need(cond, code, msg):
    if not cond:
        raise AclFail(code, msg)


def acl_name(dtype) -> str:
    return DT_NAME.get(dtype, str(dtype))


def dtype_in(name, t, allowed: Sequence[str]):
    """Operand ``t`` is of one of the device dtypes ``allowed``."""
    need(DEVICE_DTYPES.get(t.dtype) in allowed,
         C.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
         "%s: %s has data type %s; %s takes %s" % (
              name, t.what, acl_name(t.dtype), name,
              ", ".join(acl_name(ACL_DTYPES[a]) for a in allowed)))


def arity(name, ins, outs, nin, nout):
    need(len(ins) in ((nin,) if isinstance(nin, int) else nin),
         C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s takes %s input(s), got %d" % (name, nin, len(ins)))
    need(len(outs) == nout, C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
         "%s has %d output(s), got %d" % (name, nout, len(outs)))


def out_is(name, o, shape, dtype):
    need(o.dtype == dtype, C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
         "%s produces %s, the output is described as %s"
         % (name, acl_name(dtype), acl_name(o.dtype)))
    need(tuple(o.shape) == tuple(shape), C.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
         "%s produces shape %s, the output is described as %s"
         % (name, list(shape), list(o.shape)))


#: an attribute's Python type -> what it must be, and its setter
ATTR_KINDS = {bool: "a bool (set_attr_bool)", int: "an int (set_attr_int)",
              float: "a float (set_attr_float)",
              str: "a string (set_attr_string)",
              list: "a list of ints (set_attr_list_int)"}
#: the attribute kind of each schema imm type
IMM_KINDS = {"float32": float, "byte": int, "enum": str, "int32": int}


def attr_value(attrs, name, default, kind):
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
                      % (name, ATTR_KINDS[kind], v))
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
    kind = IMM_KINDS[op.imm.type]
    need(op.imm.name in attrs, C.ACL_ERROR_OP_ATTR_NOT_MATCH,
         "%s needs attribute %s, %s" % (name, op.imm.name,
                                        ATTR_KINDS[kind]))
    return attr_value(attrs, op.imm.name, None, kind)


class Operand(NamedTuple):
    """A device address and the caller's name of it, for messages."""
    addr: int
    what: str


def describe(op: OpDef, name: str, acl_dtype: int, dst, srcs: Sequence,
             src2=None, **extents):
    """The descriptor of ``op`` (CANN name ``name``) on ``acl_dtype``
    inputs: ``dst``, ``srcs`` (in the device's source order) and the
    third operand ``src2`` of an op that takes one (Conv2D's bias; None:
    none) have an ``addr`` and a ``what``; ``extents`` as
    davinci.opdesc.describe takes them. Its refusals become aclErrors."""
    labels = {"dst": dst.what}
    labels.update(("src%d" % i, t.what) for i, t in enumerate(srcs))
    if src2 is not None:
        labels["src2"] = src2.what
        extents["src2"] = src2.addr
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


def rows_of(shape):
    n = shape[-1] if shape else 1
    m = 1
    for d in shape[:-1]:
        m *= d
    return m, n


def read_ints(name, t, what: str = "axes"):
    """The ints of an int32/int64 input tensor (a constant's bytes, or
    device or pinned memory); None for update_params' description alone,
    whose data is known only at execution."""
    need(t.dtype in (C.ACL_INT32, C.ACL_INT64),
         C.ACL_ERROR_OP_INPUT_NOT_MATCH,
         "%s %s input must be ACL_INT32 or ACL_INT64" % (name, what))
    fmt = "<%d%s" % (t.desc.count, "i" if t.dtype == C.ACL_INT32 else "q")
    if t.host is not None:              # a constant: its own bytes
        return list(struct.unpack(fmt, t.host))
    if t.described_only:
        return None
    d = None
    for dev in S.devices.values():
        hit = dev.dev.find_buffer(t.addr)
        if hit is not None:
            d = hit
            break
    need(d is not None, C.ACL_ERROR_INVALID_PARAM,
         "%s %s input is not device or pinned memory" % (name, what))
    buf, off = d
    raw = ctypes.string_at(buf.address + off, t.desc.nbytes)
    return list(struct.unpack(fmt, raw))


class Blocked(NamedTuple):
    """A task that takes a parameter block: the block's bytes, and its
    descriptor once they are in device memory at an address."""
    data: bytes
    task_at: Callable[[int], object]
