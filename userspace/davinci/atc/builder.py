# SPDX-License-Identifier: GPL-2.0
"""What the ONNX lowering writes into: tensors placed in the workspace or
the weights, and davinci ops between them, for one gear (batch size) of an
offline model. Weights are shared by every gear and stored once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .. import omfile as F
from .. import opdesc, schema
from ..errors import DavinciError, InvalidArgumentError
from ..ops import bfloat16_to_float32, float32_to_bfloat16

__all__ = ["ConversionError", "Value", "Transposed", "Weights",
           "GearBuilder", "DEVICE_DTYPES", "ITEMSIZE", "ONNX_DTYPES",
           "onnx_type_name", "type_name", "type_list", "host_values"]

#: numpy dtype name -> DAVINCI_DTYPE_*: the device dtypes davinci-atc puts
#: in a model, every one the device has
DEVICE_DTYPES = dict(opdesc.DTYPE_CODES)
ITEMSIZE = {name: opdesc.ITEMSIZES[name] for name in DEVICE_DTYPES}
_ALIGN = 64
#: a parameter block's stand-in address when a descriptor is only checked
_BLOCK_CHECK_AT = 1 << 12

#: ONNX TensorProto element type -> davinci-atc's (numpy's) name for it: the
#: device's types, and those of constants it folds at conversion time
ONNX_DTYPES = {1: "float32", 10: "float16", 16: "bfloat16", 6: "int32",
               7: "int64", 11: "float64", 9: "bool", 3: "int8", 2: "uint8",
               5: "int16", 4: "uint16", 12: "uint32", 13: "uint64"}
_ONNX_CODES = {name: code for code, name in ONNX_DTYPES.items()}


def host_values(arr, dtype: str) -> np.ndarray:
    """``arr`` as a constant of ``dtype`` is held on the host: in numpy's
    type of that name, or, for bfloat16 (which numpy lacks), as the float32
    values it holds (rounded to nearest even); Weights stores its bits."""
    if dtype == "bfloat16":
        return bfloat16_to_float32(float32_to_bfloat16(
            np.asarray(arr, np.float32))).reshape(np.shape(arr))
    return np.asarray(arr).astype(dtype, copy=False)


def onnx_type_name(code: int) -> str:
    """ONNX element type ``code`` as ONNX spells it (INT8, FLOAT8E4M3FN)."""
    import onnx     # only a conversion, which reads ONNX, gets here
    try:
        return onnx.TensorProto.DataType.Name(code)
    except ValueError:
        return "element type %d (unknown to onnx %s)" % (code,
                                                         onnx.__version__)


def type_name(dtype: str) -> str:
    """davinci-atc's ``dtype`` as ONNX spells it (float32 -> FLOAT), for
    messages: the user's model speaks ONNX."""
    code = _ONNX_CODES.get(dtype)
    return dtype if code is None else onnx_type_name(code)


def type_list(dtypes, last: str = "or") -> str:
    """"FLOAT, FLOAT16 or INT32" for ``dtypes`` (davinci-atc's names)."""
    names = [type_name(d) for d in dtypes]
    return names[0] if len(names) == 1 else \
        "%s %s %s" % (", ".join(names[:-1]), last, names[-1])


class ConversionError(Exception):
    """The ONNX model cannot be converted; the message says why and what
    to change."""


@dataclass(frozen=True)
class Transposed:
    """A 2-D transpose not done: the value is the transpose of its storage,
    ``rows`` x ``cols`` row-major. A MatMul or Gemm reads such a value
    through the MATMUL op's TRANS_A/TRANS_B flag, any other reader a dense
    copy (davinci.atc.lower.dense); ``where`` names the Transpose node."""
    rows: int
    cols: int
    where: str

    def refusal(self, use: str) -> str:
        return ("%s transposes a %d x %d tensor, and %s: davinci-atc folds "
                "such a transpose into the transpose flag of the MatMul or "
                "Gemm that reads it and copies it dense (a strided "
                "IDENTITY) for other readers, but not for this use: please "
                "report it" % (self.where, self.rows, self.cols, use))


def _squeezed(shape) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


@dataclass(frozen=True)
class Value:
    """An ONNX value during lowering: a host constant (``const`` set) or a
    device tensor (``tid``, the id of its storage), possibly a transpose of
    its storage still to be folded into a MatMul (``transposed``)."""
    shape: tuple[int, ...]
    dtype: str
    tid: int = -1
    const: "np.ndarray | None" = None
    transposed: "Transposed | None" = None
    #: the integer type the device values stand for (atc.carry: INT16,
    #: UINT16, UINT32, UINT64 in a wider type the device has), or None
    carries: "str | None" = None

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def with_shape(self, shape) -> "Value":
        """The same storage seen with another shape (a view)."""
        shape = tuple(int(d) for d in shape)
        if self.is_const:
            return Value(shape, self.dtype, const=self.const.reshape(shape))
        t = self.transposed
        if t is not None and _squeezed(shape) != _squeezed(self.shape):
            raise ConversionError(t.refusal(
                "its result of shape %s is reshaped to %s, which needs the "
                "transposed data in memory" % (list(self.shape), list(shape))))
        return Value(shape, self.dtype, self.tid, transposed=t,
                     carries=self.carries)

    def storage(self) -> "Value":
        """A transposed value's storage, as the 2-D tensor it is."""
        t = self.transposed
        if t is None:
            return self
        return Value((t.rows, t.cols), self.dtype, self.tid)


class Weights:
    """The WEIGHTS section: constant bytes, each stored once; and the
    PARAMS section: the ops' parameter blocks, each stored once."""

    def __init__(self):
        self.blob = bytearray()
        self.tensors: list[F.Tensor] = []
        self._seen: dict[tuple[str, bytes], int] = {}
        self.params = bytearray()
        self._blocks: dict[bytes, int] = {}

    def block(self, data: bytes) -> int:
        """Offset in PARAMS of a parameter block holding ``data``."""
        at = self._blocks.get(data)
        if at is None:
            self.params.extend(b"\0" * (-len(self.params) % F.PARAMS_ALIGN))
            at = len(self.params)
            self.params.extend(data)
            self._blocks[data] = at
        return at

    def add(self, arr: np.ndarray, dtype: str) -> int:
        """Index (in :attr:`tensors`) of the weight holding ``arr``
        (values as :func:`host_values` holds them)."""
        if dtype == "bfloat16":
            arr = float32_to_bfloat16(arr)
        raw = np.ascontiguousarray(arr).tobytes()
        key = (dtype, hashlib.sha256(raw).digest())
        if key in self._seen:
            return self._seen[key]
        self.blob.extend(b"\0" * (-len(self.blob) % _ALIGN))
        t = F.Tensor(F.KIND_WEIGHT, DEVICE_DTYPES[dtype], F.ANY_GEAR, 0,
                     len(self.blob), len(raw))
        self.blob.extend(raw)
        self.tensors.append(t)
        self._seen[key] = len(self.tensors) - 1
        return self._seen[key]


class GearBuilder:
    """Tensors and ops of one gear. Tensor ids are global: the weights
    come first (their ids are final once every gear is built: see
    :meth:`finish`)."""

    def __init__(self, gear: int, weights: Weights):
        self.gear = gear
        self.weights = weights
        # this gear's, ids local; None holds the place of a weight's id
        self.tensors: "list[F.Tensor | None]" = []
        self.ops: list[F.Op] = []
        self._work = 0
        self._weight_refs: dict[int, int] = {}   # weight index -> local id
        self._sliced: set[int] = set()           # work tensors with slices
        # a slice's tensor id -> (the work tensor it is part of, offset)
        self._parent: dict[int, tuple[int, int]] = {}
        #: a transposed value's storage tensor -> its dense copy
        self.dense_copies: dict[int, "Value"] = {}

    # -- storage ------------------------------------------------------------
    def _add(self, t: "F.Tensor | None") -> int:
        self.tensors.append(t)
        return len(self.tensors) - 1

    def work(self, shape, dtype: str) -> Value:
        shape = tuple(int(d) for d in shape)
        nbytes = max(1, int(np.prod(shape, dtype=np.int64))) * ITEMSIZE[dtype]
        self._work += -self._work % _ALIGN
        tid = self._add(F.Tensor(F.KIND_WORK, DEVICE_DTYPES[dtype], self.gear,
                                 0, self._work, nbytes))
        self._work += nbytes
        return Value(shape, dtype, tid)

    def io(self, kind: int, index: int, shape, dtype: str,
           nbytes: int | None = None) -> Value:
        shape = tuple(int(d) for d in shape)
        if nbytes is None:
            nbytes = int(np.prod(shape, dtype=np.int64)) * ITEMSIZE[dtype]
        tid = self._add(F.Tensor(kind, DEVICE_DTYPES.get(dtype, 0), self.gear,
                                 index, 0, nbytes))
        return Value(shape, dtype, tid)

    def weight(self, arr: np.ndarray, dtype: str) -> Value:
        if dtype not in DEVICE_DTYPES:
            raise ConversionError(
                "a %s constant cannot live on the device: davinci tensors "
                "are %s" % (type_name(dtype), type_list(DEVICE_DTYPES)))
        w = self.weights.add(arr, dtype)
        if w not in self._weight_refs:
            self._weight_refs[w] = self._add(None)   # placeholder
        return Value(tuple(arr.shape), dtype, self._weight_refs[w])

    def device(self, v: Value) -> Value:
        """``v`` as a device tensor (a constant becomes a weight)."""
        if not v.is_const:
            return v
        return self.weight(v.const, v.dtype).with_shape(v.shape)

    def is_work(self, v: Value) -> bool:
        """``v`` is this gear's own work tensor (not an input, a weight or
        a constant)."""
        if v.is_const:
            return False
        t = self.tensors[v.tid]
        return t is not None and t.kind == F.KIND_WORK

    def slice(self, v: Value, offset: int, nbytes: int) -> Value:
        """Bytes ``offset`` .. ``offset + nbytes`` of work tensor ``v`` as
        a 1-D tensor of their own (for MEMCPY); ``v`` stays in the
        workspace from now on."""
        t = self.tensors[v.tid]
        if t is None or t.kind != F.KIND_WORK or \
                offset + nbytes > t.size:
            raise ConversionError("internal: slice %d+%d of tensor %d"
                                  % (offset, nbytes, v.tid))
        self._sliced.add(v.tid)
        root, base = self._parent.get(v.tid, (v.tid, 0))
        tid = self._add(F.Tensor(F.KIND_WORK, t.dtype, self.gear, 0,
                                 t.offset + offset, nbytes))
        self._parent[tid] = (root, base + offset)
        return Value((nbytes // ITEMSIZE[v.dtype],), v.dtype, tid)

    def make_output(self, v: Value, index: int) -> None:
        """Graph output ``index`` is ``v``: write it straight into the
        caller's buffer when ``v`` is this gear's own work tensor, else
        copy it there."""
        if v.transposed is not None:
            raise ConversionError(v.transposed.refusal(
                "it is graph output %d" % index))
        t = None if v.is_const else self.tensors[v.tid]
        if t is not None and t.kind == F.KIND_WORK and \
                v.tid not in self._sliced and \
                t.size == v.size * ITEMSIZE[v.dtype]:
            t.kind, t.index, t.offset = F.KIND_OUTPUT, index, 0
            return
        src = self.device(v)
        dst = self.io(F.KIND_OUTPUT, index, v.shape, v.dtype)
        self.emit("MEMCPY", dst, src, count=v.size * ITEMSIZE[v.dtype],
                  where="graph output %d" % index)

    # -- ops ------------------------------------------------------------------
    def emit(self, op: str, dst: Value, *srcs: Value, count: int = 0,
             rows: "tuple[int, int] | None" = None,
             mnk: "tuple[int, int, int] | None" = None,
             transpose: tuple[bool, bool] = (False, False), attr=None,
             params: "dict | None" = None,
             strided: "opdesc.Strided | None" = None,
             where: str = "", src2: "Value | None" = None) -> Value:
        """Append schema op ``op`` (its name, "ADD") writing ``dst`` from
        ``srcs``: a compute op on ``srcs[0]``'s dtype (``dst``'s for a
        CAST's result) with the extents and attribute of
        :func:`davinci.opdesc.describe`, which checks them as the device
        would, and the fields of its parameter block (``params``) or the
        walk of its strided operands (``strided``, whose spans the tensors
        of ``dst`` and ``srcs`` hold), ``src2`` the third operand of an op
        that takes one (CONV2D's bias); MEMCPY (``count`` bytes) or MEMSET
        (``attr``: the byte). Raises ConversionError naming what the op
        refuses, after ``where`` (the node it lowers)."""
        for v in (dst,) + srcs + ((src2,) if src2 is not None else ()):
            if v.transposed is not None:
                raise ConversionError(v.transposed.refusal(
                    "a davinci op other than MATMUL reads it"))
        try:
            opdef = schema.by_name(op)
        except KeyError:
            raise ConversionError("internal: the schema has no op %r" % op
                                  ) from None
        block = None
        try:
            if params is not None:
                block = opdesc.pack_params(opdef, **params)
            elif strided is not None:
                block = strided.pack()
                count = strided.count
            if opdef.compute:
                # AIPP's dtype is its image's, its sources bytes
                t = opdesc.describe(
                    opdef, srcs[0].dtype if srcs and opdef.kind != "aipp"
                    else dst.dtype, dst=0,
                    srcs=(0,) * len(srcs), count=count, rows=rows, mnk=mnk,
                    attr=attr, transpose=transpose,
                    dst_dtype=dst.dtype if opdef.kind == "cast" or (
                        srcs and dst.dtype != srcs[0].dtype and
                        opdef.kind != "aipp") else None,
                    params_at=_BLOCK_CHECK_AT if block else 0,
                    strided=strided,
                    src2=_BLOCK_CHECK_AT if src2 is not None else 0)
                fields = {f: int(getattr(t, f)) for f in
                          ("dtype", "dst_dtype", "flags", "imm", "count", "m",
                           "n", "k")}
            else:
                fields = self._byte_op(opdef, srcs, count, attr)
        except DavinciError as exc:
            raise ConversionError("%s: davinci's %s refuses it: %s"
                                  % (where or "internal", opdef.name, exc)
                                  ) from None
        tids = [v.tid for v in srcs] + [F.NO_TENSOR] * (2 - len(srcs))
        self.ops.append(F.Op(gear=self.gear, opcode=opdef.opcode,
                             dst=dst.tid, src0=tids[0], src1=tids[1],
                             src2=F.NO_TENSOR if src2 is None else src2.tid,
                             params=None if block is None
                             else self.weights.block(block), **fields))
        return dst

    @staticmethod
    def _byte_op(opdef: schema.OpDef, srcs, count: int, attr) -> dict:
        """The fields of a MEMCPY or MEMSET record (no dtype: bytes)."""
        want = {"copy": 1, "fill": 0}.get(opdef.kind)
        if want is None:
            raise InvalidArgumentError(
                "%s is not an op of an offline model: a model's ops are the "
                "compute ops, MEMCPY and MEMSET" % opdef.name)
        if len(srcs) != want:
            raise InvalidArgumentError("%s takes %d source(s), got %d"
                                       % (opdef.name, want, len(srcs)))
        imm = 0
        if opdef.imm is not None:
            if attr is None:
                attr = opdef.imm.default
            if attr is None:
                raise InvalidArgumentError("%s needs its %s" % (
                    opdef.name, opdef.imm.name))
            try:
                imm = opdef.imm.encode(attr)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentError(str(exc)) from None
        elif attr is not None:
            raise InvalidArgumentError("%s takes no attribute" % opdef.name)
        return {"dtype": 0, "dst_dtype": 0, "flags": 0, "imm": imm,
                "count": int(count), "m": 0, "n": 0, "k": 0}

    # -- assembly -------------------------------------------------------------
    def _pack_workspace(self) -> None:
        """Place the work tensors so that two share bytes only when their
        lives (first to last op using them, a slice living with the tensor
        it is part of) do not meet: a first fit over the offsets freed by
        tensors no later op reads. A model's workspace is then about its
        largest set of tensors live at once, not their sum."""
        life: dict[int, list[int]] = {}
        for i, o in enumerate(self.ops):
            for tid in (o.dst, o.src0, o.src1, o.src2):
                if tid == F.NO_TENSOR:
                    continue
                t = self.tensors[tid]
                if t is None or t.kind != F.KIND_WORK:
                    continue
                root = self._parent.get(tid, (tid, 0))[0]
                span = life.setdefault(root, [i, i])
                span[0], span[1] = min(span[0], i), max(span[1], i)
        placed: list[tuple[int, int, int]] = []     # (end op, offset, size)
        for root in sorted(life, key=lambda r: life[r][0]):
            start, end = life[root]
            size = self.tensors[root].size
            placed = [p for p in placed if p[0] >= start]
            at = 0
            for _, off, n in sorted(placed, key=lambda p: p[1]):
                if at + size <= off:
                    break
                at = max(at, off + n)
                at += -at % _ALIGN
            placed.append((end, at, size))
            self.tensors[root].offset = at
        for tid, (root, rel) in self._parent.items():
            self.tensors[tid].offset = self.tensors[root].offset + rel

    def finish(self, base: int) -> tuple[list[F.Tensor], list[F.Op]]:
        """This gear's tensors with ids from ``base`` on, and its ops with
        global ids (weights are ids 0..len(weights)-1); the workspace
        packed by the tensors' lives."""
        self._pack_workspace()
        remap: dict[int, int] = {}
        for w, local in self._weight_refs.items():
            remap[local] = w
        mine: list[F.Tensor] = []
        for local, t in enumerate(self.tensors):
            if t is None:
                continue
            remap[local] = base + len(mine)
            mine.append(t)

        def g(tid: int) -> int:
            return tid if tid == F.NO_TENSOR else remap[tid]
        ops = [F.Op(o.gear, o.opcode, o.dtype, o.dst_dtype, o.flags, g(o.dst),
                    g(o.src0), g(o.src1), o.imm, o.count, o.m, o.n, o.k,
                    o.params, g(o.src2))
               for o in self.ops]
        return mine, ops
