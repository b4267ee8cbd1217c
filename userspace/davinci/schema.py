# SPDX-License-Identifier: GPL-2.0
"""The device's ops as its schema declares them (kmod/core/ops.toml).

One :class:`OpDef` per opcode: its number and name, how its operands follow
from a descriptor (``kind``), the dtypes it takes, the attribute its ``imm``
field carries, its davinci.ops function, its CANN names (with the attribute
values and the input order each name fixes) and the frontends that do not
offer it with the reason. davinci.ops, acl.op, the offline model reader
and the trace read it here; the C core reads the same schema through its
generated table (kmod/core/opcodes.c).

>>> from davinci import schema
>>> schema.by_name("ADD").dtypes
('float32', 'float16', 'bfloat16', 'int32')
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from . import _opschema

__all__ = ["OpDef", "Attr", "Params", "ParamField", "OPS", "COMPUTE_OPS", "FRONTENDS", "by_name",
           "by_opcode", "by_python", "by_acl"]

#: the frontends that map their own op names onto device ops
FRONTENDS = ("acl", "atc", "torch")
#: kinds whose operands are typed elements (the compute ops)
COMPUTE_KINDS = frozenset(("binary", "unary", "matmul", "rows", "reduce",
                           "cast", "view", "conv", "pool", "pool_index",
                           "index", "generate", "triangle", "aipp",
                           "channels", "sort", "optimizer", "momentum"))


@dataclass(frozen=True)
class Attr:
    """The attribute a descriptor's ``imm`` carries: ``float32`` (its
    bits), ``byte`` (0..255), ``int32`` (two's complement) or ``enum``
    (an index into ``values``)."""
    name: str
    type: str
    values: tuple[str, ...] = ()
    #: the value a caller that names none gets (CONV2D's epilogue NONE),
    #: or None: the attribute is required
    default: str | None = None

    def encode(self, value) -> int:
        """The ``imm`` field for ``value`` (an enum takes its name or
        index)."""
        if self.type == "enum":
            if isinstance(value, str):
                if value.upper() not in self.values:
                    raise ValueError("%s %r is none of %s" % (
                        self.name, value, ", ".join(self.values)))
                return self.values.index(value.upper())
            if not 0 <= int(value) < len(self.values):
                raise ValueError("%s %r is out of range" % (self.name, value))
            return int(value)
        if self.type == "byte":
            if not 0 <= int(value) <= 0xFF:
                raise ValueError("%s %r is not a byte" % (self.name, value))
            return int(value)
        if self.type == "int32":
            if not -(1 << 31) <= int(value) < 1 << 31:
                raise ValueError("%s %r does not fit int32" % (self.name,
                                                              value))
            return int(value) & 0xFFFFFFFF
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]


@dataclass(frozen=True)
class ParamField:
    """One field of a parameter block: ``u32`` or ``u64``, ``count`` of
    them."""
    name: str
    type: str
    count: int = 1
    doc: str = ""


_FORMATS = {"u32": "I", "u64": "Q"}


@dataclass(frozen=True)
class Params:
    """An op's parameter block (DOC: parameter blocks in davinci.h): its
    struct (davinci_params_<struct>: the op that declares it, which others
    share through the schema's params_of), layout version and fields,
    packed little-endian in order."""
    struct: str
    version: int
    fields: tuple[ParamField, ...]

    @property
    def format(self) -> str:
        return "<" + "".join("%d%s" % (f.count, _FORMATS[f.type])
                             for f in self.fields)

    @property
    def size(self) -> int:
        return struct.calcsize(self.format)

    def pack(self, **values) -> bytes:
        """The block's bytes: each field from ``values`` (a sequence for an
        array, padded with zeros), missing fields zero; ValueError for an
        unknown field or a value that does not fit."""
        unknown = set(values) - {f.name for f in self.fields}
        if unknown:
            raise ValueError("no parameter field %s: the block has %s" % (
                ", ".join(sorted(unknown)),
                ", ".join(f.name for f in self.fields)))
        flat = []
        for f in self.fields:
            v = values.get(f.name, 0)
            items = list(v) if f.count > 1 else [v]
            if len(items) > f.count:
                raise ValueError("%s takes at most %d values, got %d"
                                 % (f.name, f.count, len(items)))
            items += [0] * (f.count - len(items))
            limit = 1 << (32 if f.type == "u32" else 64)
            for x in items:
                if not 0 <= int(x) < limit:
                    raise ValueError("%s value %r is not a %s"
                                     % (f.name, x, f.type))
            flat += [int(x) for x in items]
        return struct.pack(self.format, *flat)


@dataclass(frozen=True)
class DType:
    """One element type of the device (enum davinci_dtype)."""
    name: str
    code: int                       # DAVINCI_DTYPE_<name>
    bytes: int
    kind: str                       # float int uint bool
    doc: str


#: the device's element types, by code
DTYPES: tuple[DType, ...] = tuple(DType(**d) for d in _opschema.DTYPES)


@dataclass(frozen=True)
class OpDef:
    """One opcode of the device."""
    name: str                       # DAVINCI_OP_<name>, the trace's name
    opcode: int
    doc: str
    kind: str                       # none copy fill binary unary ...
    dtypes: tuple[str, ...]
    uses: tuple[str, ...]           # descriptor fields it reads
    dst_dtypes: tuple[str, ...] = ()    # its dst_dtype's values besides 0
    flags: tuple[str, ...] = ()     # task flags besides NOTIFY
    kernel: str | None = None
    imm: Attr | None = None
    event: bool = False
    python: str | None = None       # its davinci.ops function
    inputs: tuple[str, ...] = ()    # its inputs' names in davinci.ops
    acl: Mapping[str, Mapping[str, object]] = field(
        default_factory=lambda: MappingProxyType({}))
    #: CANN name -> the CANN input each source reads, where not in order
    acl_inputs: Mapping[str, tuple[int, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    not_in: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}))
    params: Params | None = None    # its parameter block, if it takes one
    #: operands whose dtype the op fixes, whatever its dtype ("dst",
    #: "src1" -> a dtype name: ARGMAX's int64 dst, SELECT's bool src1)
    operand_dtypes: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}))

    @property
    def compute(self) -> bool:
        """An AI-core op on typed elements (not a copy, fill or event)."""
        return self.kind in COMPUTE_KINDS

    @property
    def takes_attr(self) -> bool:
        """davinci.ops' function takes the op's attribute first: it has
        one, and not an indexed op's index dtype, which its index tensor
        names, nor an attribute with a default (CONV2D's epilogue: its
        function's ``relu=``)."""
        return self.imm is not None and self.kind != "index" and \
            self.imm.default is None

    @property
    def floats_only(self) -> bool:
        return all(d.kind == "float" for d in DTYPES if d.name in self.dtypes)

    def acl_order(self, name: str) -> tuple[int, ...]:
        """For its CANN name ``name``: the index of the CANN input that
        each source (src0, src1) reads; Axpy's (1, 0) for the device's
        ``alpha * src0 + src1``, since CANN's is ``x1 + alpha * x2``."""
        return self.acl_inputs.get(name) or \
            tuple(range(sum(u.startswith("src") for u in self.uses)))

    def operand_dtype(self, operand: str, dtype: str, imm: int = 0) -> str:
        """The dtype of ``operand`` ("dst", "src0", "src1") of a task of
        this op on ``dtype`` operands: the one the op fixes, an indexed
        op's index dtype (its ``imm``: the enum's value), else ``dtype``
        (CAST's and CMP's dst aside: their dst_dtype)."""
        if self.kind == "index" and operand == "src1":
            return self.imm.values[imm].lower()
        return self.operand_dtypes.get(operand, dtype)

    def why_not_in(self, frontend: str) -> str | None:
        """The schema's reason ``frontend`` does not offer this op."""
        return self.not_in.get(frontend)


def _opdef(row: dict) -> OpDef:
    imm = row.get("imm")
    attr = None
    if imm:
        attr = Attr(imm["name"], imm["type"],
                    tuple(v["name"] for v in imm.get("values", ())),
                    imm.get("default"))
    return OpDef(
        name=row["name"], opcode=row["opcode"], doc=row["doc"],
        kind=row["kind"], dtypes=tuple(row["dtypes"]),
        uses=tuple(row["uses"]), flags=tuple(row["flags"]),
        dst_dtypes=tuple(row.get("dst_dtypes", ())),
        kernel=row.get("kernel"), imm=attr, event=bool(row.get("event")),
        python=row.get("python"),
        inputs=tuple(row["inputs"] if "inputs" in row else
                     (("a", "b") if row["kind"] in ("binary", "matmul")
                      else ("x",) if row["kind"] in COMPUTE_KINDS else ())),
        operand_dtypes=MappingProxyType(dict(row.get("operand_dtypes",
                                                     {}))),
        acl=MappingProxyType({k: MappingProxyType(dict(v))
                              for k, v in row["acl"].items()}),
        acl_inputs=MappingProxyType({k: tuple(v) for k, v in
                                     row["acl_inputs"].items()}),
        not_in=MappingProxyType(dict(row["not_in"])),
        params=Params(row.get("params_of", row["name"]),
                      row["params"]["version"], tuple(
            ParamField(f["name"], f["type"], f.get("count", 1),
                       f.get("doc", "")) for f in row["params"]["fields"]))
        if row.get("params") else None)


#: every opcode, in opcode order
OPS: tuple[OpDef, ...] = tuple(_opdef(r) for r in _opschema.OPS)
#: the AI-core ops
COMPUTE_OPS: tuple[OpDef, ...] = tuple(op for op in OPS if op.compute)
_BY_NAME = {op.name: op for op in OPS}
_BY_OPCODE = {op.opcode: op for op in OPS}
_BY_PYTHON = {op.python: op for op in OPS if op.python}
_BY_ACL = {name: op for op in OPS for name in op.acl}


def by_name(name: str) -> OpDef:
    """The op named ``name`` (``"ADD"``); KeyError when there is none."""
    return _BY_NAME[name.upper()]


def by_opcode(opcode: int) -> OpDef | None:
    """The op of ``opcode``; None for a number no op has (past the last,
    or unassigned)."""
    return _BY_OPCODE.get(opcode)


def by_python(name: str) -> OpDef | None:
    """The op behind davinci.ops.``name``."""
    return _BY_PYTHON.get(name)


def by_acl(name: str) -> OpDef | None:
    """The op a CANN operator name (acl.op's op_type) runs."""
    return _BY_ACL.get(name)
