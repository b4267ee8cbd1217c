# SPDX-License-Identifier: GPL-2.0
"""Which ops, dtypes, task flags and parameter-block versions the driver
serves.

A driver of ABI 1.6 on (``DAVINCI_FEAT_CAPS``) answers
``DAVINCI_IOCTL_GET_CAP`` from its op table, which the op schema
(kmod/core/ops.toml) generates: an op the schema gains is announced there
and by no feature bit. An older driver is read from the feature bits it has:
ABI 1.0's ops (NOP .. CAST) always, ``DAVINCI_FEAT_RELU_GRAD`` and
``DAVINCI_FEAT_TRAIN_OPS`` for the ops they name, ``DAVINCI_FEAT_FP16`` and
``DAVINCI_FEAT_BF16`` for those dtypes.

>>> caps = dev.capabilities()
>>> caps.serves("cmp", "float16")
True
>>> [op.name for op in caps.missing]      # schema ops this driver lacks
[]
>>> caps.takes_strided("add"), caps.strided_versions()
(True, (1,))

A driver of ABI 1.7 on answers each op's task flags
(``DAVINCI_CAP_OP_FLAGS``) and the versions of the strided-operand block
it takes (``DAVINCI_CAP_STRIDED``); an older one takes no strided operand,
and its ops the flags the schema gave them before (TRANS_A, TRANS_B,
WAIT_NEXT). One of ABI 1.10 on answers which ops take a third operand
(``DAVINCI_CAP_OP_SRC2``: CONV2D's bias, with its epilogue); an older one
has none.

>>> caps.takes_src2("conv2d")
True
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from . import _uapi, schema
from .errors import InvalidArgumentError
from .opdesc import DTYPE_CODES, DTYPE_NAMES, FLAG_BITS, op_of
from .schema import OpDef

__all__ = ["Capabilities", "query", "from_features", "read"]

#: an opcode is a __u16: no driver knows more
_MAX_OPCODES = 1 << 16
#: ABI 1.0's opcodes, NOP .. CAST, which every driver serves, and dtypes
_FIRST_OPCODES = _uapi.DAVINCI_OP_CAST + 1
_FIRST_DTYPES = _uapi.DAVINCI_DTYPE_INT32 + 1
#: the ops added after ABI 1.0 and before the query, each with its bit;
#: an op added later is announced by the query alone
_OP_FEATURES = {
    "RELU_GRAD": _uapi.DAVINCI_FEAT_RELU_GRAD,
    "LOG_SOFTMAX": _uapi.DAVINCI_FEAT_TRAIN_OPS,
    "SQRT": _uapi.DAVINCI_FEAT_TRAIN_OPS,
    "CMP": _uapi.DAVINCI_FEAT_TRAIN_OPS,
}
#: dtypes a driver without the query serves only with their bit
_DTYPE_FEATURES = {"float16": _uapi.DAVINCI_FEAT_FP16,
                   "bfloat16": _uapi.DAVINCI_FEAT_BF16}


@dataclass(frozen=True)
class Capabilities:
    """What one driver serves. ``op`` arguments take an :class:`OpDef`, a
    davinci.ops or ``DAVINCI_OP_`` name or an opcode; ``dtype`` a dtype
    name (``"float16"``) or a ``DAVINCI_DTYPE_*`` code."""
    #: opcodes the driver knows, 0 .. opcodes - 1
    opcodes: int
    #: dtype codes the driver knows, 0 .. dtype_count - 1
    dtype_count: int
    #: opcode -> mask of 1 << DAVINCI_DTYPE_* it serves (served ones only)
    op_dtypes: Mapping[int, int]
    #: opcode -> mask of the parameter-block versions it takes (non-zero)
    op_params: Mapping[int, int]
    #: "query": DAVINCI_IOCTL_GET_CAP answered; "features": an older
    #: driver, read from its feature bits
    source: str
    #: opcode -> the DAVINCI_TASK_F_* it takes (served ones only)
    op_flag_masks: Mapping[int, int] = field(
        default_factory=lambda: MappingProxyType({}))
    #: mask of the struct davinci_params_strided versions it takes
    strided_mask: int = 0
    #: opcodes that take a third operand at src2 (ABI 1.10)
    src2_ops: frozenset = frozenset()

    def dtype_mask(self, op: "OpDef | str | int") -> int:
        """Mask of 1 << DAVINCI_DTYPE_* ``op`` is served in; 0: not served."""
        return self.op_dtypes.get(_opcode(op), 0)

    def dtypes(self, op: "OpDef | str | int") -> tuple[str, ...]:
        """The dtype names ``op`` is served in, in code order (an op
        without a dtype: ``("float32",)``, its code 0); () when not served."""
        mask = self.dtype_mask(op)
        return tuple(name for code, name in sorted(DTYPE_NAMES.items())
                     if mask >> code & 1)

    def serves(self, op: "OpDef | str | int",
               dtype: "str | int | None" = None) -> bool:
        """The driver runs ``op`` (in ``dtype``, when given)."""
        mask = self.dtype_mask(op)
        if dtype is None:
            return mask != 0
        return bool(mask >> _dtype_code(dtype) & 1)

    def param_versions(self, op: "OpDef | str | int") -> tuple[int, ...]:
        """The parameter-block versions ``op`` takes (none for an op without
        a parameter block)."""
        mask = self.op_params.get(_opcode(op), 0)
        return tuple(v for v in range(mask.bit_length()) if mask >> v & 1)

    def op_flags(self, op: "OpDef | str | int") -> int:
        """The DAVINCI_TASK_F_* bits ``op`` takes (0: not served)."""
        return self.op_flag_masks.get(_opcode(op), 0)

    def takes_strided(self, op: "OpDef | str | int") -> bool:
        """``op`` reads strided operands (DAVINCI_TASK_F_STRIDED) in a
        block version this runtime writes."""
        return bool(self.op_flags(op) & _uapi.DAVINCI_TASK_F_STRIDED) and \
            _uapi.DAVINCI_PARAMS_STRIDED_VERSION in self.strided_versions()

    def takes_src2(self, op: "OpDef | str | int") -> bool:
        """``op`` takes a third operand (CONV2D's bias, and with it its
        epilogue: ABI 1.10)."""
        return _opcode(op) in self.src2_ops

    def strided_versions(self) -> tuple[int, ...]:
        """The struct davinci_params_strided versions the driver takes
        (none before ABI 1.7)."""
        mask = self.strided_mask
        return tuple(v for v in range(mask.bit_length()) if mask >> v & 1)

    @property
    def ops(self) -> tuple[OpDef, ...]:
        """The schema's ops the driver serves, in opcode order."""
        return tuple(op for op in schema.OPS if op.opcode in self.op_dtypes)

    @property
    def missing(self) -> tuple[OpDef, ...]:
        """The schema's ops the driver does not serve (an older driver)."""
        return tuple(op for op in schema.OPS
                     if op.opcode not in self.op_dtypes)

    @property
    def unknown_opcodes(self) -> tuple[int, ...]:
        """Opcodes the driver serves that this runtime's schema lacks (a
        newer driver)."""
        return tuple(sorted(code for code in self.op_dtypes
                            if schema.by_opcode(code) is None))

    @property
    def dtype_names(self) -> tuple[str, ...]:
        """The dtypes some op is served in, in code order."""
        mask = 0
        for m in self.op_dtypes.values():
            mask |= m
        return tuple(name for code, name in sorted(DTYPE_NAMES.items())
                     if mask >> code & 1)


def _opcode(op: "OpDef | str | int") -> int:
    # an opcode the schema lacks may still be the driver's (a newer one)
    if isinstance(op, int) and not isinstance(op, bool):
        return op
    return op_of(op).opcode


def _dtype_code(dtype: "str | int") -> int:
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype
    code = DTYPE_CODES.get(str(dtype))
    if code is None:
        raise InvalidArgumentError(
            "no device dtype %r: the device knows %s"
            % (dtype, ", ".join(DTYPE_CODES)))
    return code


def _ask(transport, query: int, index: int = 0) -> int:
    cap = _uapi.davinci_cap(query=query, index=index)
    transport.ioctl(_uapi.DAVINCI_IOCTL_GET_CAP, cap)
    return int(cap.value)


def _ask_new(transport, query: int, index: int = 0) -> "int | None":
    """The answer to a query an older driver may not know: None when it
    refuses it (EINVAL)."""
    cap = _uapi.davinci_cap(query=query, index=index)
    err = transport.try_ioctl(_uapi.DAVINCI_IOCTL_GET_CAP, cap)
    if err == errno.EINVAL:
        return None
    if err:
        return _ask(transport, query, index)    # raises what it means
    return int(cap.value)


def _schema_flags(op: OpDef) -> int:
    """The task flags of ``op`` before ABI 1.7: its schema's, STRIDED
    aside."""
    mask = _uapi.DAVINCI_TASK_F_NOTIFY
    for name in op.flags:
        if name != "STRIDED":
            mask |= FLAG_BITS[name]
    return mask


def query(transport) -> Capabilities:
    """Ask the driver behind ``transport`` (DAVINCI_FEAT_CAPS): each
    opcode it knows, up to the number it announces; its flags and strided
    blocks when it answers those queries (ABI 1.7)."""
    opcodes = _ask(transport, _uapi.DAVINCI_CAP_OPCODES)
    dtype_count = _ask(transport, _uapi.DAVINCI_CAP_DTYPES)
    strided = _ask_new(transport, _uapi.DAVINCI_CAP_STRIDED)
    op_dtypes: dict[int, int] = {}
    op_params: dict[int, int] = {}
    op_flags: dict[int, int] = {}
    src2 = set()
    knows_src2 = _ask_new(transport, _uapi.DAVINCI_CAP_OP_SRC2, 0) \
        is not None
    for code in range(min(opcodes, _MAX_OPCODES)):
        mask = _ask(transport, _uapi.DAVINCI_CAP_OP_DTYPES, code)
        if not mask:
            continue
        op_dtypes[code] = mask
        params = _ask(transport, _uapi.DAVINCI_CAP_OP_PARAMS, code)
        if params:
            op_params[code] = params
        if strided is not None:
            op_flags[code] = _ask(transport, _uapi.DAVINCI_CAP_OP_FLAGS, code)
        elif schema.by_opcode(code) is not None:
            op_flags[code] = _schema_flags(schema.by_opcode(code))
        if knows_src2 and _ask(transport, _uapi.DAVINCI_CAP_OP_SRC2, code):
            src2.add(code)
    return Capabilities(opcodes, dtype_count, MappingProxyType(op_dtypes),
                        MappingProxyType(op_params), "query",
                        MappingProxyType(op_flags), strided or 0,
                        frozenset(src2))


def _schema_mask(op: OpDef) -> int:
    mask = 0
    for name in op.dtypes:
        mask |= 1 << DTYPE_CODES[name]
    return mask


def from_features(features: int) -> Capabilities:
    """What a driver without DAVINCI_FEAT_CAPS serves, by its DAVINCI_FEAT_*
    bits ``features``: ABI 1.0's ops in the schema's dtypes, the later
    ones whose bit it has, float16 and bfloat16 only with theirs."""
    dtypes = 0
    for name, code in DTYPE_CODES.items():
        bit = _DTYPE_FEATURES.get(name)
        if bit is None or features & bit:
            dtypes |= 1 << code
    op_dtypes: dict[int, int] = {}
    for op in schema.OPS:
        bit = _OP_FEATURES.get(op.name)
        if bit is None and op.opcode >= _FIRST_OPCODES:
            continue        # came with the query or after it
        if bit is not None and not features & bit:
            continue
        mask = _schema_mask(op) & dtypes
        if mask:
            op_dtypes[op.opcode] = mask
    op_flags = {code: _schema_flags(schema.by_opcode(code))
                for code in op_dtypes}
    return Capabilities(max(op_dtypes) + 1, _FIRST_DTYPES,
                        MappingProxyType(op_dtypes), MappingProxyType({}),
                        "features", MappingProxyType(op_flags))


def read(transport, features: int) -> Capabilities:
    """The capabilities of the driver behind ``transport``, whose
    DAVINCI_FEAT_* bits are ``features``: asked when it has the query,
    else from the bits."""
    if features & _uapi.DAVINCI_FEAT_CAPS:
        return query(transport)
    return from_features(features)
