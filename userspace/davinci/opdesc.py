# SPDX-License-Identifier: GPL-2.0
"""One builder of compute-task descriptors for every frontend.

:func:`describe` turns an op of the schema (:mod:`davinci.schema`), a dtype,
operand device addresses, the op's extents and its attribute into a task
descriptor, checking on the way what the device would refuse: the op's
dtypes, its operand count, its attribute, flags it does not take,
dimensions past 32 bits and operands not aligned to their element size.
With ``strided=`` (a :class:`Strided`) the operands of an elementwise op,
CAST or IDENTITY are strided tensors (DOC: strided operands in davinci.h):
a transposed, sliced or broadcast (stride 0) view read or written in place,
no copy made.
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

import ctypes
import functools
import math
import struct
from dataclasses import dataclass
from typing import Sequence

from . import _uapi, schema
from .errors import (DTypeError, InvalidArgumentError,
                     MisalignedOperandError, ShapeError)
from .schema import OpDef
from .stream import make_task

__all__ = ["describe", "pack_params", "check_alignment", "op_of", "Strided",
           "DTYPE_CODES", "DTYPE_NAMES", "ITEMSIZES", "SOURCES", "FLAG_BITS",
           "schema"]

#: dtype name -> DAVINCI_DTYPE_*
DTYPE_CODES = {d.name: d.code for d in schema.DTYPES}
DTYPE_NAMES = {code: name for name, code in DTYPE_CODES.items()}
#: dtype name -> bytes of an element
ITEMSIZES = {d.name: d.bytes for d in schema.DTYPES}
#: operands after dst each compute kind has (src0, src1, src2); batch
#: norm's "channels" ops take three, an unused one at address 0
SOURCES = {"binary": 2, "matmul": 2, "unary": 1, "rows": 1, "reduce": 1,
           "cast": 1, "view": 1, "conv": 2, "pool": 1, "pool_index": 2,
           "index": 2, "generate": 0, "triangle": 1, "aipp": 2,
           "channels": 3, "sort": 1, "optimizer": 3, "momentum": 2}
#: the schema's flag names -> DAVINCI_TASK_F_*
FLAG_BITS = {"TRANS_A": _uapi.DAVINCI_TASK_F_TRANS_A,
             "TRANS_B": _uapi.DAVINCI_TASK_F_TRANS_B,
             "WAIT_NEXT": _uapi.DAVINCI_TASK_F_WAIT_NEXT,
             "STRIDED": _uapi.DAVINCI_TASK_F_STRIDED}
_U32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1
#: dimensions a struct davinci_params_strided holds
STRIDED_MAX_DIMS = 8


@dataclass(frozen=True)
class Strided:
    """The operands of a strided task: ``sizes`` (outermost first) and the
    strides of ``dst``, ``src0`` and ``src1`` (None for an op with one
    input) along them, in elements of each operand's dtype; a stride of 0
    repeats an element (a broadcast source).

    :meth:`coalesced` is the same walk in the fewest dimensions, which
    :meth:`pack` writes as the device's struct davinci_params_strided.

    >>> t = Strided((4, 3), dst=(3, 1), src0=(1, 4))     # a transpose
    >>> t.count, len(t.pack())
    (12, 264)
    """
    sizes: tuple[int, ...]
    dst: tuple[int, ...]
    src0: tuple[int, ...]
    src1: "tuple[int, ...] | None" = None

    def __post_init__(self) -> None:
        for name in ("sizes", "dst", "src0", "src1"):
            v = getattr(self, name)
            if v is None:
                continue
            v = tuple(int(x) for x in v)
            object.__setattr__(self, name, v)
            if any(x < 0 for x in v):
                raise ShapeError("strided operands: %s %r has a negative "
                                 "entry; the device's strides are unsigned "
                                 "(flip a view with a copy)" % (name, v))
            if len(v) != len(self.sizes):
                raise ShapeError("strided operands: %s has %d entries for %d "
                                 "sizes" % (name, len(v), len(self.sizes)))

    @functools.cached_property
    def count(self) -> int:
        """Elements of the walk: the product of the sizes."""
        return math.prod(self.sizes)

    @functools.cached_property
    def operands(self) -> tuple[tuple[int, ...], ...]:
        """The strides of each operand the op uses: dst, src0 (and src1)."""
        rows = (self.dst, self.src0, self.src1)
        return tuple(r for r in rows if r is not None)

    def coalesced(self) -> "Strided":
        """The same elements in the same row-major order in the fewest
        dimensions: size-1 dimensions dropped, and a dimension merged into
        the one outside it when every operand is contiguous across the two
        (its outer stride is its inner stride times the inner size)."""
        # a walk is immutable and launched again and again (every step of
        # a training loop): merged once
        c = self.__dict__.get("_coalesced")
        if c is None:
            c = self._coalesce()
            self.__dict__["_coalesced"] = c
            c.__dict__["_coalesced"] = c
        return c

    def _coalesce(self) -> "Strided":
        rows = self.operands
        if self.count == 0:
            return self._from(((0,),) + tuple((0,) for _ in rows))
        dims = [(n, [r[d] for r in rows]) for d, n in enumerate(self.sizes)
                if n != 1]
        merged: list[tuple[int, list[int]]] = []
        for n, strides in dims:
            if merged and all(outer == inner * n for outer, inner in
                              zip(merged[-1][1], strides)):
                merged[-1] = (merged[-1][0] * n, strides)
            else:
                merged.append((n, strides))
        if not merged:
            merged = [(1, [1] * len(rows))]
        sizes = tuple(n for n, _ in merged)
        return self._from((sizes,) + tuple(
            tuple(st[o] for _, st in merged) for o in range(len(rows))))

    def _from(self, rows) -> "Strided":
        sizes, dst, src0 = rows[0], rows[1], rows[2]
        src1 = rows[3] if len(rows) > 3 else None
        return Strided(sizes, dst, src0, src1)

    def span(self, operand: int) -> int:
        """Elements operand ``operand`` (0 dst, 1 src0, 2 src1) reaches:
        its last element's offset + 1, 0 for an empty walk."""
        spans = self.__dict__.setdefault("_spans", {})
        n = spans.get(operand)
        if n is None:
            n = 0 if self.count == 0 else 1 + sum(
                (n - 1) * s for n, s in zip(self.sizes,
                                            self.operands[operand]))
            spans[operand] = n
        return n

    def dst_distinct(self) -> bool:
        """No two elements of dst at one address, by the device's test:
        ordered by stride, each stride of a dimension of size > 1 is larger
        than the last offset the dimensions inside it reach."""
        distinct = self.__dict__.get("_distinct")
        if distinct is None:
            distinct = self._dst_distinct()
            self.__dict__["_distinct"] = distinct
        return distinct

    def _dst_distinct(self) -> bool:
        reach = 0
        for s, n in sorted((s, n) for n, s in zip(self.sizes, self.dst)
                           if n > 1):
            if s <= reach:
                return False
            reach += (n - 1) * s
        return True

    def check_dims(self) -> None:
        """ShapeError unless the device's block holds these dimensions."""
        if len(self.sizes) > STRIDED_MAX_DIMS:
            raise ShapeError("strided operands: %d dimensions that do not "
                             "merge, the device takes %d: copy a view "
                             "dense first" % (len(self.sizes),
                                              STRIDED_MAX_DIMS))

    @classmethod
    def unpack(cls, data: bytes, operands: int) -> "Strided":
        """The walk a struct davinci_params_strided holds, for an op of
        ``operands`` operands (dst and src0, and src1: 3); ShapeError for a
        block the device refuses on its face (ndim outside 1..8, pad, or a
        size or stride past ndim or of an unused operand not zero)."""
        p = _uapi.davinci_params_strided.from_buffer_copy(data)
        nd = p.ndim
        if not 1 <= nd <= STRIDED_MAX_DIMS or p.pad or \
                any(p.sizes[d] for d in range(nd, STRIDED_MAX_DIMS)) or \
                any(p.strides[o][d] for o in range(3)
                    for d in range(STRIDED_MAX_DIMS)
                    if d >= nd or o >= operands):
            raise ShapeError("a strided block the device refuses: ndim %d, "
                             "pad %d, or entries past ndim" % (nd, p.pad))
        rows = [tuple(p.strides[o][:nd]) for o in range(operands)]
        return cls(tuple(p.sizes[:nd]), rows[0], rows[1],
                   rows[2] if operands > 2 else None)

    def pack(self) -> bytes:
        """The struct davinci_params_strided of the coalesced walk
        (ShapeError when it needs more than 8 dimensions)."""
        c = self.coalesced()
        packed = c.__dict__.get("_packed")
        if packed is None:
            packed = c._pack()
            c.__dict__["_packed"] = packed
        return packed

    def _pack(self) -> bytes:
        c = self
        c.check_dims()
        p = _uapi.davinci_params_strided(ndim=len(c.sizes))
        for d, n in enumerate(c.sizes):
            p.sizes[d] = n
            for o, row in enumerate(c.operands):
                p.strides[o][d] = row[d]
        return bytes(p)


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
             params_at: int = 0,
             strided: "Strided | None" = None,
             src2: int = 0) -> _uapi.davinci_task:
    """A checked descriptor of compute op ``op`` on ``dtype`` operands.

    ``dst`` and ``srcs`` are device addresses; the extents are ``count``
    elements (binary, unary, cast, generate), ``rows`` = (m, n) (rows,
    reduce) or ``mnk`` (matmul, with ``transpose`` = (a, b); an indexed
    op's batches, table rows and row elements, with ``count`` indices per
    batch; a triangle op's rows, columns and rows per matrix; a sort's
    rows, columns and the k it keeps of each row); ``attr`` is the value of
    the op's attribute (CMP's predicate, AXPY's alpha); ``dst_dtype`` the
    result dtype of a cast. ``params_at`` is the device address of the
    op's parameter block (:func:`pack_params`), for an op that takes one,
    or of ``strided``'s block (:meth:`Strided.pack`): with ``strided`` the
    operands are strided tensors and ``count``, if given, must be its
    count. ``src2`` is the device address of the third operand of an op
    that takes one (CONV2D's bias; 0: none).
    ``names`` maps dst/src0/src1/src2 to the caller's names for messages,
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
    if src2:
        if "src2" not in op.uses:
            raise InvalidArgumentError("%s takes no third operand (src2)"
                                       % name)
        fields["src2"] = int(src2)
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
    elif op.kind in ("index", "triangle", "channels", "sort"):
        if mnk is None:
            raise InvalidArgumentError("%s needs (m, n, k)" % name)
        m, n, k = mnk
        _dims(op, m=m, n=n, k=k)
        fields.update(m=m, n=n, k=k)
        if op.kind == "index":
            if count < 0:
                raise ShapeError("%s: negative index count" % name)
            fields["count"] = int(count)
    elif op.kind in ("rows", "reduce"):
        if rows is None:
            raise InvalidArgumentError("%s needs (rows, columns)" % name)
        m, n = rows
        _dims(op, m=m, n=n)
        fields.update(m=m, n=n)
    elif op.kind not in ("conv", "pool", "pool_index", "aipp"):  # the block
        if count < 0:
            raise ShapeError("%s: negative element count" % name)
        fields["count"] = int(count)
    if op.kind == "cast":
        if dst_dtype not in DTYPE_CODES:
            raise DTypeError("cast to %r: the device converts to %s"
                             % (dst_dtype, ", ".join(DTYPE_CODES)))
        fields["dst_dtype"] = DTYPE_CODES[dst_dtype]
    elif dst_dtype in op.dst_dtypes and dst_dtype != dtype:
        fields["dst_dtype"] = DTYPE_CODES[dst_dtype]   # CMP's bool result
    elif dst_dtype not in (None, dtype):
        raise DTypeError("%s writes %s, not %s" % (name, dtype, dst_dtype))
    if op.imm is not None:
        if attr is None:
            attr = op.imm.default
        if attr is None:
            raise InvalidArgumentError("%s needs its %s" % (name,
                                                           op.imm.name))
        try:
            fields["imm"] = op.imm.encode(attr)
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError("%s: %s" % (name, e)) from None
    elif attr is not None:
        raise InvalidArgumentError("%s takes no attribute" % name)
    if strided is not None:
        _strided(op, name, strided, fields, count, dst_dtype or dtype,
                 dtype, params_at)
    elif op.params is not None:
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


def _strided(op: OpDef, name: str, strided: Strided, fields: dict,
             count: int, dst_dtype: str, dtype: str, params_at: int) -> None:
    """The fields of a strided task, with the checks of the device's that
    need no address (DOC: strided operands): a dst that overlaps a source
    other than in place is left to the device, which fails the task."""
    if "STRIDED" not in op.flags:
        raise InvalidArgumentError(
            "%s takes no strided operands: make them dense (a copy) first; "
            "the ops that do: %s" % (name, ", ".join(
                o.python for o in schema.COMPUTE_OPS if "STRIDED" in o.flags)))
    if (strided.src1 is not None) != (SOURCES[op.kind] == 2):
        raise InvalidArgumentError("%s reads %d input(s): give src1 strides "
                                   "exactly for two" % (name,
                                                        SOURCES[op.kind]))
    if count not in (0, strided.count):
        raise ShapeError("%s: count %d, but the strided operands' sizes %r "
                         "make %d" % (name, count, strided.sizes,
                                      strided.count))
    if not params_at:
        raise InvalidArgumentError("%s: strided operands need their block's "
                                   "device address (params_at=, the bytes "
                                   "of Strided.pack())" % name)
    c = strided.coalesced()
    c.check_dims()
    sizes = (ITEMSIZES[dst_dtype],) + tuple(
        ITEMSIZES[op.operand_dtype("src%d" % i, dtype)]
        for i in range(SOURCES[op.kind]))
    for o, es in enumerate(sizes):
        if c.span(o) * es > _U64:
            raise ShapeError("%s: operand %d of the strided walk spans past "
                             "the 64-bit address space" % (name, o))
    if c.count and not c.dst_distinct():
        raise ShapeError("%s: the strided dst %r over sizes %r writes some "
                         "element twice (a stride of 0, or dimensions that "
                         "overlap): write a dense tensor"
                         % (name, strided.dst, strided.sizes))
    fields.update(count=c.count, flags=_uapi.DAVINCI_TASK_F_STRIDED,
                  params=int(params_at),
                  params_size=ctypes.sizeof(_uapi.davinci_params_strided),
                  params_version=_uapi.DAVINCI_PARAMS_STRIDED_VERSION)


def f64_bits(x: float) -> int:
    """The bits of float64 ``x``: how a parameter block holds a float64
    (ARANGE's start and step, RANDOM_NORMAL's mean and std)."""
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


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
    ``src1`` to that of ``dtype`` (int64 indices: 8 bytes).

    ``op`` names the op in the message (default: the opcode's name);
    ``names`` maps ``"dst"``, ``"src0"``, ``"src1"`` to the names the
    caller gave those operands. Other opcodes pass unchecked.
    """
    opdef = schema.by_opcode(int(task.opcode))
    if opdef is None or not opdef.compute:
        return
    src = DTYPE_NAMES.get(int(task.dtype))
    dst = DTYPE_NAMES.get(int(task.dst_dtype)) \
        if opdef.kind == "cast" or task.dst_dtype else src
    if src is None or dst is None or (
            opdef.kind == "index" and
            not 0 <= int(task.imm) < len(opdef.imm.values)):
        return                      # the driver refuses the dtype
    dst = opdef.operand_dtype("dst", dst)
    fields = [("dst", dst)] + [
        ("src%d" % i, opdef.operand_dtype("src%d" % i, src, int(task.imm)))
        for i in range(SOURCES[opdef.kind])]
    if opdef.kind == "pool_index":
        fields[2] = ("src1", "int64")   # MAXPOOL2D_BACKWARD's indices
    if opdef.kind == "aipp":            # a picture's bytes, u32 fields
        fields[1:] = [("src0", "uint8"), ("src1", "int32")]
    if opdef.kind == "channels":        # batch norm's float32 rows
        fields[3] = ("src2", "float32")
    elif "src2" in opdef.uses and SOURCES[opdef.kind] < 3:
        fields.append(("src2", src))    # CONV2D's bias: of its dtype
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
