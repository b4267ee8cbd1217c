# SPDX-License-Identifier: GPL-2.0
"""The davinci offline model file (``.om``), format 1.2.

``davinci-atc`` writes it (:mod:`davinci.atc`), :class:`davinci.model.Model`
and ``acl.mdl`` load it. ``OM_FORMAT.md`` next to this file documents the
layout; in short, all little-endian:

* a 64-byte header: magic ``b"DVNCOM\\r\\n"``, format version (major,
  minor), the davinci ABI version (major, minor) the descriptors follow,
  header size, section count, file size;
* a section table: ``(kind, count, offset, size)`` per section;
* sections: META (UTF-8 JSON: inputs and outputs with names, dims, dtypes
  and formats, dynamic-batch gears, producer), WEIGHTS (raw bytes),
  TENSORS (24-byte records: where each operand lives), OPS (56-byte
  records, 52 before format 1.2: one davinci task each, with tensor ids
  in place of addresses, src2's since 1.2), PARAMS (format 1.1: the ops'
  parameter blocks, raw). Files of formats 1.0 and 1.1 still load.

:func:`parse` checks everything a hostile file could get wrong (magic,
versions, sizes, offsets, counts, tensor ids, operand extents) and raises
:class:`ModelFormatError` saying what; nothing it accepts can make a task
read or write outside the model's own buffers and the caller's.
"""

from __future__ import annotations

import ctypes
import json
import struct
from dataclasses import dataclass, field

from . import _uapi, opdesc, schema
from .errors import DavinciError

__all__ = ["MAGIC", "FORMAT_MAJOR", "FORMAT_MINOR", "ModelFormatError",
           "IoDesc", "Tensor", "Op", "OfflineModel", "parse", "serialize",
           "DTYPE_SIZES", "IO_ONLY_DTYPES", "KIND_INPUT", "KIND_OUTPUT",
           "KIND_WEIGHT", "KIND_WORK", "ANY_GEAR", "NO_TENSOR",
           "MBATCH_INPUT"]

MAGIC = b"DVNCOM\r\n"
#: the first four bytes of Huawei ATC's own .om files ("IMOD")
ASCEND_MAGIC = b"IMOD"
FORMAT_MAJOR = 1
FORMAT_MINOR = 2

_HEADER = struct.Struct("<8sHHHHIIQ32x")      # 64 bytes
_SECTION = struct.Struct("<IIQQ")             # 24 bytes
_TENSOR = struct.Struct("<BBHIQQ")            # 24 bytes
_OP = struct.Struct("<HHBBHIIIIIQIIIII")      # 56 bytes (format 1.2)
#: an op record of formats 1.0 and 1.1: no src2
_OP_1_1 = struct.Struct("<HHBBHIIIIIQIIII")   # 52 bytes

SECT_META, SECT_WEIGHTS, SECT_TENSORS, SECT_OPS, SECT_PARAMS = 1, 2, 3, 4, 5
_SECTIONS = {SECT_META: "META", SECT_WEIGHTS: "WEIGHTS",
             SECT_TENSORS: "TENSORS", SECT_OPS: "OPS", SECT_PARAMS: "PARAMS"}
#: sections a file may leave out: PARAMS (a model of ops without blocks)
_OPTIONAL_SECTIONS = (SECT_PARAMS,)
#: alignment of a parameter block in PARAMS
PARAMS_ALIGN = 8

KIND_INPUT, KIND_OUTPUT, KIND_WEIGHT, KIND_WORK = 1, 2, 3, 4
ANY_GEAR = 0xFFFF
NO_TENSOR = 0xFFFFFFFF
#: the extra input of a dynamic-batch model, as Huawei's ATC names it
MBATCH_INPUT = "ascend_mbatch_shape_data"
#: the input of a dynamic-AIPP model's parameters (pyACL's
#: ACL_DYNAMIC_AIPP_NAME)
DYNAMIC_AIPP_INPUT = "ascend_dynamic_aipp_data"

#: limits a file must stay within (far above any model davinci-atc makes)
MAX_META = 1 << 20
MAX_RECORDS = 1 << 20
MAX_WORKSPACE = 1 << 40
MAX_GEARS = 128
MAX_DIMS = 8
MAX_IO = 1024

#: types a model's inputs and outputs may have that the device has not
#: (integers and DOUBLE) (davinci-atc carries them in a wider type: atc/carry.py); their
#: tensors are bytes (dtype uint8)
IO_ONLY_DTYPES = {"int16": 2, "uint16": 2, "uint32": 4, "uint64": 8,
                  "float64": 8}
#: bytes per element of the dtypes a model's inputs and outputs may have:
#: the device's, and IO_ONLY_DTYPES
DTYPE_SIZES = {**opdesc.ITEMSIZES, **IO_ONLY_DTYPES}
FORMATS = ("ND", "NCHW", "NHWC", "NC1HWC0")
_DEV_DTYPES = {opdesc.DTYPE_CODES[name]: size
               for name, size in opdesc.ITEMSIZES.items()}
_FLAGS = {"TRANS_A": _uapi.DAVINCI_TASK_F_TRANS_A,
          "TRANS_B": _uapi.DAVINCI_TASK_F_TRANS_B,
          "STRIDED": _uapi.DAVINCI_TASK_F_STRIDED}
#: bytes of a strided task's block
STRIDED_SIZE = ctypes.sizeof(_uapi.davinci_params_strided)


@dataclass(frozen=True)
class _OpRule:
    """What one opcode uses of an op record, as the op schema
    (kmod/core/ops.toml, the core's dv_opcodes[]) says: a field it does
    not use must be zero (NO_TENSOR for a tensor id), or the device would
    fail the task at every execute. ``in_place``: dst may be a source
    exactly."""
    op: schema.OpDef
    uses: frozenset
    dtypes: frozenset
    flags: int = 0
    max_imm: int = 0
    in_place: bool = False


_IMM_MAX = {"byte": 0xFF, "float32": 0xFFFFFFFF, "int32": 0xFFFFFFFF}


def _rule(op: schema.OpDef) -> _OpRule:
    uses = {u for u in op.uses if u != "dst"}
    if "mn" in uses:
        uses = (uses - {"mn"}) | {"m", "n"}
    if op.imm is not None:
        uses.add("imm")
    if op.dst_dtypes:
        uses.add("dst_dtype")
    dtypes = frozenset(opdesc.DTYPE_CODES[d] for d in op.dtypes) \
        if op.compute else frozenset((0,))     # no dtype: the field is 0
    max_imm = 0
    if op.imm is not None:
        max_imm = _IMM_MAX.get(op.imm.type, len(op.imm.values) - 1)
    flags = 0
    for f in op.flags:
        flags |= _FLAGS.get(f, 0)
    return _OpRule(op, frozenset(uses), dtypes, flags, max_imm,
                   in_place=op.kind in ("binary", "unary"))


#: compute kinds no converter emits, whose operand extents and blocks
#: _extents() does not check as the device does (the generating ops, the
#: training ops: batch norm's channels, the optimizer steps; ARGSORT's
#: sort), so a model holding one is refused at load; AIPP's are known
_NOT_IN_MODELS = ("generate", "channels", "optimizer", "momentum", "sort")
#: what a model may run: every compute op of the schema (with its
#: parameter block or a strided one in PARAMS) but those kinds, and its
#: copies and fills (MEMCPY, MEMSET)
_RULES = {op.opcode: _rule(op) for op in schema.OPS
          if (op.compute and op.kind not in _NOT_IN_MODELS) or
          op.kind in ("copy", "fill")}
#: the fields of an op record that an opcode may leave unused
_OPTIONAL = ("src0", "src1", "src2", "count", "m", "n", "k", "imm",
             "dst_dtype")
OPCODES = frozenset(_RULES)


class ModelFormatError(DavinciError):
    """The bytes are not a davinci offline model this runtime can load."""


@dataclass
class IoDesc:
    """One model input or output as the caller sees it."""
    name: str
    dtype: str
    format: str
    dims: list[int]         # -1 at the batch dimension of a dynamic model
    #: a dynamic-image-size model's dims in each gear (its dims hold -1
    #: where they differ); None for every other model
    gear_dims: "list[list[int]] | None" = None

    def to_json(self) -> dict:
        out = {"name": self.name, "dtype": self.dtype,
               "format": self.format, "dims": list(self.dims)}
        if self.gear_dims is not None:
            out["gear_dims"] = [list(d) for d in self.gear_dims]
        return out


@dataclass
class Tensor:
    """Where one operand lives: ``kind`` KIND_*, ``index`` the input or
    output number, ``offset`` into WEIGHTS or the workspace."""
    kind: int
    dtype: int
    gear: int
    index: int
    offset: int
    size: int


@dataclass
class Op:
    """One task: a davinci_task with tensor ids for dst, src0, src1 and
    src2 (CONV2D's bias; format 1.2)."""
    gear: int
    opcode: int
    dtype: int
    dst_dtype: int
    flags: int
    dst: int
    src0: int
    src1: int = NO_TENSOR
    imm: int = 0
    count: int = 0
    m: int = 0
    n: int = 0
    k: int = 0
    #: byte offset of its parameter block in PARAMS (None: it has none)
    params: "int | None" = None
    src2: int = NO_TENSOR


@dataclass
class OfflineModel:
    inputs: list[IoDesc]
    outputs: list[IoDesc]
    batches: list[int]
    weights: bytes
    tensors: list[Tensor]
    ops: list[Op]
    info: dict = field(default_factory=dict)
    abi: tuple[int, int] = (_uapi.DAVINCI_ABI_MAJOR, _uapi.DAVINCI_ABI_MINOR)
    #: the PARAMS section: the ops' parameter blocks
    params: bytes = b""
    #: a dynamic-image-size model's (height, width) of each gear
    hw_sizes: list = field(default_factory=list)

    def block(self, o: Op) -> "bytes | None":
        """The bytes of ``o``'s parameter block (None: it has none)."""
        if o.params is None:
            return None
        return self.params[o.params:o.params + _block_size(o)]

    @property
    def gears(self) -> int:
        return max(1, len(self.batches), len(self.hw_sizes))

    def workspace_size(self, gear: int) -> int:
        return max([t.offset + t.size for t in self.tensors
                    if t.kind == KIND_WORK and t.gear == gear] or [0])

    def io_tensor(self, kind: int, index: int, gear: int) -> Tensor:
        for t in self.tensors:
            if t.kind == kind and t.index == index and t.gear == gear:
                return t
        raise KeyError((kind, index, gear))

    def dims(self, io: IoDesc, gear: int) -> list[int]:
        """``io``'s dims in ``gear`` (the batch filled in)."""
        if io.gear_dims is not None:
            return list(io.gear_dims[gear])
        if not self.batches:
            return list(io.dims)
        return [self.batches[gear] if d == -1 else d for d in io.dims]


# ---------------------------------------------------------------------------
def serialize(model: OfflineModel) -> bytes:
    """The file bytes of ``model``: format 1.2 when an op has a src2
    (CONV2D's bias), else 1.1, which readers before 1.2 load too; a model
    of ops without parameter blocks has no PARAMS section, as in format
    1.0."""
    minor = 2 if any(o.src2 != NO_TENSOR for o in model.ops) else 1
    rec = _op_struct(minor)
    meta = dict(model.info)
    meta.update({"inputs": [i.to_json() for i in model.inputs],
                 "outputs": [o.to_json() for o in model.outputs],
                 "batches": list(model.batches)})
    if model.hw_sizes:
        meta["hw_sizes"] = [list(hw) for hw in model.hw_sizes]
    blobs = [
        (SECT_META, 0, json.dumps(meta, sort_keys=True).encode()),
        (SECT_WEIGHTS, 0, bytes(model.weights)),
        (SECT_TENSORS, len(model.tensors), b"".join(
            _TENSOR.pack(t.kind, t.dtype, t.gear, t.index, t.offset, t.size)
            for t in model.tensors)),
        (SECT_OPS, len(model.ops), b"".join(
            rec.pack(o.gear, o.opcode, o.dtype, o.dst_dtype,
                     int(o.params is not None), o.flags, o.dst, o.src0,
                     o.src1, o.imm, o.count, o.m, o.n, o.k, o.params or 0,
                     *((o.src2,) if minor >= 2 else ()))
            for o in model.ops)),
    ]
    if model.params:
        blobs.append((SECT_PARAMS, 0, bytes(model.params)))
    pos = _HEADER.size + _SECTION.size * len(blobs)
    table, body = [], []
    for kind, count, blob in blobs:
        pad = -pos % 64
        body.append(b"\0" * pad)
        pos += pad
        table.append(_SECTION.pack(kind, count, pos, len(blob)))
        body.append(blob)
        pos += len(blob)
    header = _HEADER.pack(MAGIC, FORMAT_MAJOR, minor, model.abi[0],
                          model.abi[1], _HEADER.size, len(blobs), pos)
    return header + b"".join(table) + b"".join(body)


# ---------------------------------------------------------------------------
def _fail(msg: str) -> None:
    raise ModelFormatError(
        "not a loadable davinci offline model: %s; convert the source model "
        "again with davinci-atc" % msg)


def _check(cond: bool, msg: str) -> None:
    if not cond:
        _fail(msg)


def _header(data: bytes) -> tuple[int, int, int, int]:
    if data[:4] == ASCEND_MAGIC:
        raise ModelFormatError(
            "this is an offline model made by Huawei's ATC for real Ascend "
            "hardware; it cannot run on the davinci device: convert the "
            "source model (ONNX) with davinci-atc instead")
    if len(data) < _HEADER.size or data[:8] != MAGIC:
        raise ModelFormatError(
            "not a davinci offline model (no davinci .om magic at the "
            "start of its %d bytes): convert the source model (ONNX) with "
            "davinci-atc --model model.onnx --framework=5 --output name"
            % len(data))
    (_, fmaj, fmin, amaj, amin, hsize, nsect, fsize) = \
        _HEADER.unpack_from(data)
    _check(fmaj == FORMAT_MAJOR and fmin <= FORMAT_MINOR,
           "file format %d.%d, this runtime reads formats %d.0 to %d.%d"
           % (fmaj, fmin, FORMAT_MAJOR, FORMAT_MAJOR, FORMAT_MINOR))
    _check(amaj == _uapi.DAVINCI_ABI_MAJOR,
           "its tasks follow davinci ABI %d.%d, this runtime speaks %d.x"
           % (amaj, amin, _uapi.DAVINCI_ABI_MAJOR))
    _check(hsize == _HEADER.size, "header size %d, not %d"
           % (hsize, _HEADER.size))
    _check(fsize == len(data), "the header says %d bytes, the file has %d "
           "(truncated or padded)" % (fsize, len(data)))
    _check(1 <= nsect <= 16, "%d sections (1 to 16 allowed)" % nsect)
    _check(_HEADER.size + nsect * _SECTION.size <= len(data),
           "the section table runs past the end of the file")
    return amaj, amin, nsect, fmin


def _op_struct(minor: int) -> struct.Struct:
    """The op record of format 1.``minor``."""
    return _OP if minor >= 2 else _OP_1_1


def _sections(data: bytes, nsect: int, minor: int = FORMAT_MINOR
              ) -> dict[int, tuple[int, bytes]]:
    out: dict[int, tuple[int, bytes]] = {}
    table_end = _HEADER.size + nsect * _SECTION.size
    spans = []
    for i in range(nsect):
        kind, count, off, size = _SECTION.unpack_from(
            data, _HEADER.size + i * _SECTION.size)
        name = _SECTIONS.get(kind)
        _check(name is not None, "section %d has unknown kind %d" % (i, kind))
        _check(kind not in out, "two %s sections" % name)
        _check(table_end <= off <= len(data) and size <= len(data) - off,
               "%s section (offset %d, %d bytes) lies outside the %d-byte "
               "file" % (name, off, size, len(data)))
        _check(count <= MAX_RECORDS, "%s section claims %d records (at most "
               "%d)" % (name, count, MAX_RECORDS))
        spans.append((off, off + size, name))
        out[kind] = (count, data[off:off + size])
    spans.sort()
    for (a0, a1, an), (b0, _, bn) in zip(spans, spans[1:]):
        _check(a1 <= b0, "sections %s and %s overlap" % (an, bn))
    for kind, name in _SECTIONS.items():
        _check(kind in out or kind in _OPTIONAL_SECTIONS,
               "no %s section" % name)
    for kind, rec in ((SECT_TENSORS, _TENSOR), (SECT_OPS, _op_struct(minor))):
        count, blob = out[kind]
        _check(count * rec.size == len(blob),
               "%s section: %d records of %d bytes do not fill its %d bytes"
               % (_SECTIONS[kind], count, rec.size, len(blob)))
    return out


def _int(v, lo: int, hi: int, what: str) -> int:
    _check(isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi,
           "%s must be an integer in %d..%d, not %r" % (what, lo, hi, v))
    return v


def _io(v, what: str, dynamic: bool, hw_gears: int = 0) -> IoDesc:
    _check(isinstance(v, dict), "%s is not an object" % what)
    name, dtype, fmt, dims = (v.get("name"), v.get("dtype"), v.get("format"),
                              v.get("dims"))
    _check(isinstance(name, str) and 0 < len(name) <= 1024,
           "%s has no valid name" % what)
    _check(dtype in DTYPE_SIZES, "%s has unknown dtype %r" % (what, dtype))
    _check(fmt in FORMATS, "%s has unknown format %r" % (what, fmt))
    _check(isinstance(dims, list) and len(dims) <= MAX_DIMS,
           "%s: dims must be a list of at most %d" % (what, MAX_DIMS))
    dims = [_int(d, -1 if (dynamic and i == 0) or hw_gears else 0, 1 << 31,
                 "%s dim %d" % (what, i)) for i, d in enumerate(dims)]
    gear_dims = v.get("gear_dims")
    if not hw_gears or (gear_dims is None and -1 not in dims):
        _check(gear_dims is None, "%s has gear_dims, and the model no "
               "hw_sizes" % what)
        return IoDesc(name, dtype, fmt, dims)
    _check(isinstance(gear_dims, list) and len(gear_dims) == hw_gears,
           "%s: gear_dims must list its dims in each of the %d gears"
           % (what, hw_gears))
    out = []
    for g, gd in enumerate(gear_dims):
        _check(isinstance(gd, list) and len(gd) == len(dims),
               "%s: gear %d's dims are not %d long" % (what, g, len(dims)))
        gd = [_int(d, 0, 1 << 31, "%s gear %d dim %d" % (what, g, i))
              for i, d in enumerate(gd)]
        _check(all(a == b for a, b in zip(dims, gd) if a != -1),
               "%s: gear %d's dims %s are not its dims %s" % (what, g, gd,
                                                              dims))
        out.append(gd)
    return IoDesc(name, dtype, fmt, dims, out)


def _meta(blob: bytes) -> tuple[list[IoDesc], list[IoDesc], list[int], dict,
                                list[list[int]]]:
    _check(len(blob) <= MAX_META, "META section of %d bytes (at most %d)"
           % (len(blob), MAX_META))
    try:
        meta = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        _fail("META section is not UTF-8 JSON (%s)" % exc)
    _check(isinstance(meta, dict), "META section is not a JSON object")
    batches = meta.get("batches", [])
    _check(isinstance(batches, list) and len(batches) <= MAX_GEARS,
           "batches must be a list of at most %d" % MAX_GEARS)
    batches = [_int(b, 1, 1 << 20, "batch") for b in batches]
    _check(batches == sorted(set(batches)), "batches must be increasing")
    hw = meta.get("hw_sizes", [])
    _check(isinstance(hw, list) and len(hw) <= MAX_GEARS and
           all(isinstance(p, list) and len(p) == 2 for p in hw),
           "hw_sizes must be a list of at most %d [height, width] pairs"
           % MAX_GEARS)
    hw = [[_int(h, 1, 1 << 20, "height"), _int(w, 1, 1 << 20, "width")]
          for h, w in hw]
    _check(len({tuple(p) for p in hw}) == len(hw), "hw_sizes repeats a size")
    _check(not (hw and batches), "a model has batches or hw_sizes, not both")
    ins, outs = meta.get("inputs"), meta.get("outputs")
    _check(isinstance(ins, list) and isinstance(outs, list)
           and len(ins) <= MAX_IO and 0 < len(outs) <= MAX_IO,
           "inputs must be a list (empty for a model of constants) and "
           "outputs a non-empty one")
    dyn = bool(batches)
    inputs = [_io(v, "input %d" % i, dyn, len(hw)) for i, v in enumerate(ins)]
    outputs = [_io(v, "output %d" % i, dyn, len(hw))
               for i, v in enumerate(outs)]
    info = {k: v for k, v in meta.items()
            if k not in ("inputs", "outputs", "batches", "hw_sizes")
            and isinstance(v, (str, int))}
    return inputs, outputs, batches, info, hw


def _tensors(count: int, blob: bytes, gears: int, nin: int, nout: int,
             weights: int) -> list[Tensor]:
    out = []
    for i in range(count):
        t = Tensor(*_TENSOR.unpack_from(blob, i * _TENSOR.size))
        what = "tensor %d" % i
        _check(t.dtype in _DEV_DTYPES, "%s has unknown dtype %d"
               % (what, t.dtype))
        if t.kind in (KIND_WEIGHT, KIND_WORK):
            _check(t.index == 0, "%s: index %d (only inputs and outputs "
                   "have one; it must be 0)" % (what, t.index))
        if t.kind == KIND_WEIGHT:
            _check(t.gear in (ANY_GEAR,) or t.gear < gears,
                   "%s: bad gear %d" % (what, t.gear))
            _check(t.offset <= weights and t.size <= weights - t.offset,
                   "%s: weight bytes %d..%d outside the %d-byte WEIGHTS "
                   "section" % (what, t.offset, t.offset + t.size, weights))
        else:
            _check(t.kind in (KIND_INPUT, KIND_OUTPUT, KIND_WORK),
                   "%s has unknown kind %d" % (what, t.kind))
            _check(t.gear < gears, "%s: gear %d of %d" % (what, t.gear, gears))
            if t.kind == KIND_WORK:
                _check(t.offset <= MAX_WORKSPACE
                       and t.size <= MAX_WORKSPACE - t.offset,
                       "%s: workspace bytes past %d" % (what, MAX_WORKSPACE))
            else:
                lim = nin if t.kind == KIND_INPUT else nout
                _check(t.index < lim, "%s: %s index %d of %d" % (
                    what, "input" if t.kind == KIND_INPUT else "output",
                    t.index, lim))
                _check(t.size <= MAX_WORKSPACE, "%s: %d bytes" % (what, t.size))
                # the caller's buffer is the tensor: nothing to offset into
                _check(t.offset == 0, "%s: offset %d into an input or output "
                       "(it must be 0)" % (what, t.offset))
        out.append(t)
    return out


def _block_size(o: Op) -> int:
    """Bytes of ``o``'s parameter block: a strided one, or its op's."""
    if o.flags & _uapi.DAVINCI_TASK_F_STRIDED:
        return STRIDED_SIZE
    op = schema.by_opcode(o.opcode)
    return op.params.size if op is not None and op.params else 0


def block_version(o: Op) -> int:
    """The layout version of ``o``'s parameter block (its op's, or the
    strided block's)."""
    if o.flags & _uapi.DAVINCI_TASK_F_STRIDED:
        return _uapi.DAVINCI_PARAMS_STRIDED_VERSION
    return schema.by_opcode(o.opcode).params.version


def _fields(op: schema.OpDef, block: bytes) -> dict:
    return dict(zip((f.name for f in op.params.fields),
                    struct.unpack(op.params.format, block)))


def _conv_elems(op: schema.OpDef, block: bytes) -> dict:
    """Elements of x, w and y of a convolution block, checked as
    davinci.ops builds blocks (which is as the device checks them)."""
    from .ops import conv2d_shapes
    f = _fields(op, block)
    groups = f["groups"] or 1
    try:
        fields, y = conv2d_shapes(
            (f["n"], f["c"], f["h"], f["w"]),
            (f["k"], f["c"] // groups, f["r"], f["s"]),
            (f["stride_h"], f["stride_w"]), (f["pad_h"], f["pad_w"]),
            (f["dilation_h"], f["dilation_w"]), f["groups"])
    except DavinciError as exc:
        _fail("a convolution block the device refuses (%s)" % exc)
    _check(fields == f, "a convolution block the device refuses")
    return {"x": f["n"] * f["c"] * f["h"] * f["w"],
            "w": f["k"] * (f["c"] // groups) * f["r"] * f["s"],
            "dy": y[0] * y[1] * y[2] * y[3], "k": f["k"]}


def _pool_elems(op: schema.OpDef, block: bytes) -> dict:
    """Elements of x and y (and the indices, y's) of a pooling block,
    checked as the device checks it (kmod/core/ops_pool.h)."""
    from .ops import pool2d_shapes
    f = _fields(op, block)
    is_max = op.python.startswith("max")
    _check(not is_max or not (f["count_include_pad"] or f["divisor"] or
                              f["adaptive"]),
           "a max pooling block with an average's fields")
    try:
        fields, y = pool2d_shapes(
            (f["n"], f["c"], f["h"], f["w"]), (f["r"], f["s"]),
            (f["stride_h"], f["stride_w"]), (f["pad_h"], f["pad_w"]),
            (f["dilation_h"], f["dilation_w"]), ceil_mode=f["ceil_mode"],
            count_include_pad=f["count_include_pad"],
            divisor=f["divisor"] or None, adaptive=f["adaptive"],
            op=op.python)
    except DavinciError as exc:
        _fail("a pooling block the device refuses (%s)" % exc)
    _check(fields == f, "a pooling block the device refuses")
    ny = y[0] * y[1] * y[2] * y[3]
    return {"x": f["n"] * f["c"] * f["h"] * f["w"], "dy": ny, "y": ny,
            "indices": ny}


def _strided_extents(o: Op, rule: _OpRule, block: bytes, es: int,
                     dst_es: int) -> list[tuple[int, int, int, bool]]:
    """A strided op's operands: each one's span, checked as the device
    checks the block (kmod/core/ops.c dv_op_check_strided()); a source may
    share dst's memory only as dst's own view (same strides)."""
    operands = 1 + opdesc.SOURCES[rule.op.kind]
    try:
        walk = opdesc.Strided.unpack(block, operands)
    except DavinciError as exc:
        _fail("a strided block the device refuses (%s)" % exc)
    _check(walk.count == o.count, "a strided block of %d elements for a "
           "count of %d" % (walk.count, o.count))
    _check(walk.pack() == block, "a strided block not in the coalesced "
           "form davinci-atc writes")
    _check(walk.dst_distinct(), "a strided block whose dst repeats an "
           "element")
    ids = (o.dst, o.src0, o.src1)
    sizes = _operand_sizes(rule.op, es, dst_es)
    out = []
    for i in range(operands):
        size = sizes[i]
        same = i > 0 and rule.in_place and rule.op.kind != "cast" and \
            size == sizes[0] and all(n < 2 or a == b for n, a, b in zip(
                walk.sizes, walk.operands[i], walk.dst))
        out.append((ids[i], walk.span(i) * size, size, same))
    return out


#: bytes of the struct davinci_aipp_config an AIPP op reads at src1
_AIPP_CONFIG_SIZE = ctypes.sizeof(_uapi.davinci_aipp_config)


def _aipp_block(op: schema.OpDef, block: bytes) -> dict:
    """An AIPP block's fields, checked as the device checks them
    (kmod/core/aipp.c dv_op_check_aipp())."""
    p = _fields(op, block)
    _check(1 <= p["batch"] <= 1024 and p["channels"] == 3 and
           1 <= p["height"] <= 8192 and 1 <= p["width"] <= 8192 and
           1 <= p["src_size"] <= 1 << 28, "an AIPP block the device refuses")
    return p


def _operand_sizes(op: schema.OpDef, es: int, dst_es: int, imm: int = 0
                   ) -> tuple[int, int, int]:
    """Bytes of an element of dst, src0 and src1: the record's dtypes, but
    for an operand whose dtype the op fixes (SELECT's bool condition, an
    indexed op's indices)."""
    fixed = {name: opdesc.ITEMSIZES[d]
             for name, d in op.operand_dtypes.items()}
    if op.kind == "index":
        fixed["src1"] = opdesc.ITEMSIZES[op.operand_dtype("src1", "", imm)]
    return (fixed.get("dst", dst_es), fixed.get("src0", es),
            fixed.get("src1", es))


def _extents(o: Op, block: "bytes | None") -> list[tuple[int, int, int, bool]]:
    """(tensor id, bytes, alignment, whether it may be dst's memory
    exactly) each operand of ``o`` needs, dst first, by its op's kind and
    parameter block."""
    rule = _RULES[o.opcode]
    op = rule.op
    es = _DEV_DTYPES.get(o.dtype, 0)
    kind = op.kind
    if kind in ("copy", "fill"):
        ext = [(o.dst, o.count, 1, True)]
        if kind == "copy":
            ext.append((o.src0, o.count, 1, True))
        return ext
    dst_es = _DEV_DTYPES.get(o.dst_dtype, 0) if o.dst_dtype or \
        kind == "cast" else es
    if o.flags & _uapi.DAVINCI_TASK_F_STRIDED:
        return _strided_extents(o, rule, block, es, dst_es)
    if kind in ("conv", "pool", "pool_index"):
        elems = (_conv_elems if kind == "conv" else _pool_elems)(op, block)
        wrote = {"CONV2D": "dy", "CONV2D_BACKWARD_INPUT": "x",
                 "CONV2D_BACKWARD_WEIGHT": "w", "MAXPOOL2D": "y",
                 "AVGPOOL2D": "y"}.get(op.name, "x")
        ext = [(o.dst, elems[wrote] * dst_es, dst_es, False)]
        for tid, name in zip((o.src0, o.src1), op.inputs):
            size = 8 if name == "indices" else es
            ext.append((tid, elems[name] * size, size, False))
        if o.src2 != NO_TENSOR:     # CONV2D's bias: k elements
            ext.append((o.src2, elems["k"] * es, es, False))
        return ext
    if kind == "aipp":
        p = _aipp_block(op, block)
        return [(o.dst, p["batch"] * 3 * p["height"] * p["width"] * es, es,
                 False),
                (o.src0, p["batch"] * p["src_size"], 1, False),
                (o.src1, _AIPP_CONFIG_SIZE, 4, False)]
    if kind == "matmul":
        return [(o.dst, o.m * o.n * es, es, False),
                (o.src0, o.m * o.k * es, es, False),
                (o.src1, o.k * o.n * es, es, False)]
    d_es, s0_es, s1_es = _operand_sizes(op, es, dst_es, o.imm)
    if kind == "index":     # m batches of count indices into n rows of k
        gathered, table = o.m * o.count * o.k, o.m * o.n * o.k
        dst_elems, src_elems = (gathered, table) if \
            op.name == "INDEX_SELECT" else (table, gathered)
        return [(o.dst, dst_elems * d_es, d_es, False),
                (o.src0, src_elems * s0_es, s0_es, False),
                (o.src1, o.m * o.count * s1_es, s1_es, False)]
    if kind == "triangle":  # m rows of n, the matrices k rows each
        return [(o.dst, o.m * o.n * d_es, d_es, False),
                (o.src0, o.m * o.n * s0_es, s0_es, False)]
    if kind in ("rows", "reduce"):
        rows = o.m if kind == "reduce" else o.m * o.n
        return [(o.dst, rows * d_es, d_es, False),
                (o.src0, o.m * o.n * s0_es, s0_es, False)]
    ext = [(o.dst, o.count * d_es, d_es, False),
           (o.src0, o.count * s0_es, s0_es, rule.in_place and s0_es == d_es)]
    if "src1" in rule.uses:
        ext.append((o.src1, o.count * s1_es, s1_es,
                    rule.in_place and s1_es == d_es))
    return ext


def _op_name(opcode: int) -> str:
    return _uapi.OP_NAMES.get(opcode, "opcode %d" % opcode)


def _check_fields(o: Op, zero: int, params: int, what: str) -> _OpRule:
    """Every field of ``o`` against its opcode's rule; ``zero`` is the OR
    of the record's padding and reserved bytes, ``params`` the bytes of
    the PARAMS section."""
    rule = _RULES.get(o.opcode)
    _check(rule is not None, "%s: %s is not an op a model may hold (a "
           "compute op davinci-atc writes, a copy or a fill)"
           % (what, _op_name(o.opcode) if o.opcode in _uapi.OP_NAMES
              else "opcode %d" % o.opcode))
    name = _op_name(o.opcode)
    _check(not zero, "%s (%s): its padding and reserved bytes are not zero"
           % (what, name))
    _check(o.dtype in rule.dtypes, "%s: dtype %d, which %s does not take"
           % (what, o.dtype, name))
    _check(not o.flags & ~rule.flags, "%s: flags %#x, %s allows %#x"
           % (what, o.flags, name, rule.flags))
    takes = bool(o.flags & _uapi.DAVINCI_TASK_F_STRIDED) or \
        rule.op.params is not None
    _check(takes == (o.params is not None), "%s: %s %s a parameter block, "
           "and the record %s one" % (what, name, "takes" if takes else
                                      "takes no", "names none" if takes
                                      else "names"))
    if o.params is not None:
        _check(o.params % PARAMS_ALIGN == 0 and
               o.params + _block_size(o) <= params,
               "%s: its parameter block at %d (%d bytes) lies outside the "
               "%d-byte PARAMS section or is not %d-aligned"
               % (what, o.params, _block_size(o), params, PARAMS_ALIGN))
    for f in _OPTIONAL:
        v = getattr(o, f)
        if f in rule.uses:
            continue
        if f in ("src0", "src1", "src2"):
            _check(v == NO_TENSOR, "%s: %s names tensor %d, but %s reads no "
                   "%s (it must be 0xFFFFFFFF, none)" % (what, f, v, name, f))
        else:
            _check(v == 0, "%s: %s is %d, but %s does not use it (it must "
                   "be 0)" % (what, f, v, name))
    _check(o.imm <= rule.max_imm, "%s: %s's imm %d is above %d"
           % (what, name, o.imm, rule.max_imm))
    if "dst_dtype" in rule.uses:
        _check(o.dst_dtype in _DEV_DTYPES, "%s: %s to unknown dtype %d"
               % (what, name, o.dst_dtype))
        _check(rule.op.kind == "cast" or o.dst_dtype == 0 or
               opdesc.DTYPE_NAMES[o.dst_dtype] in rule.op.dst_dtypes,
               "%s: %s does not write dtype %d" % (what, name, o.dst_dtype))
    return rule


def _space(t: Tensor) -> tuple[int, int]:
    """The memory a tensor lives in: the workspace, or one caller buffer
    (whose tensors start at offset 0)."""
    return (t.kind, 0 if t.kind == KIND_WORK else t.index)


def _check_overlap(o: Op, rule: _OpRule, ext, tensors: list[Tensor],
                   what: str) -> None:
    """The device refuses a compute op whose dst overlaps a source, but for
    an elementwise op run exactly in place (kmod/core/ops.c
    dv_op_extent()); MEMCPY may overlap."""
    if rule.op.kind == "copy":
        return
    dst_id, dst_bytes, _, _ = ext[0]
    d = tensors[dst_id]
    for tid, nbytes, _, same in ext[1:]:
        t = tensors[tid]
        if t.kind == KIND_WEIGHT or _space(t) != _space(d) or \
                not nbytes or not dst_bytes or \
                t.offset + nbytes <= d.offset or \
                d.offset + dst_bytes <= t.offset:
            continue
        _check(same and t.offset == d.offset,
               "%s (%s) writes tensor %d over tensor %d, which it reads"
               % (what, _op_name(o.opcode), dst_id, tid))
    if o.src2 == NO_TENSOR:
        return
    # the device's third operand shares no bytes with the others
    b_id, b_bytes = ext[-1][0], ext[-1][1]
    b = tensors[b_id]
    for tid, nbytes, _, _ in ext[1:-1]:
        t = tensors[tid]
        _check(_space(t) != _space(b) or not nbytes or
               t.offset + nbytes <= b.offset or
               b.offset + b_bytes <= t.offset,
               "%s (%s): its src2, tensor %d, overlaps tensor %d, which it "
               "also reads" % (what, _op_name(o.opcode), b_id, tid))


def _ops(count: int, blob: bytes, gears: int, tensors: list[Tensor],
         params: bytes, minor: int = FORMAT_MINOR) -> list[Op]:
    out = []
    rec = _op_struct(minor)
    for i in range(count):
        f = rec.unpack_from(blob, i * rec.size)
        what = "op %d" % i
        _check(f[4] in (0, 1) and (f[4] or not f[14]),
               "%s: its parameter block field is %d at %d (0 or 1, and 0 "
               "at 0 for none)" % (what, f[4], f[14]))
        o = Op(gear=f[0], opcode=f[1], dtype=f[2], dst_dtype=f[3],
               flags=f[5], dst=f[6], src0=f[7], src1=f[8], imm=f[9],
               count=f[10], m=f[11], n=f[12], k=f[13],
               params=f[14] if f[4] else None,
               src2=f[15] if minor >= 2 else NO_TENSOR)
        _check(o.gear < gears, "%s: gear %d of %d" % (what, o.gear, gears))
        rule = _check_fields(o, 0, len(params), what)
        block = None if o.params is None else \
            params[o.params:o.params + _block_size(o)]
        ext = _extents(o, block)
        for j, (tid, nbytes, align, _) in enumerate(ext):
            _check(tid < len(tensors), "%s: tensor %d of %d"
                   % (what, tid, len(tensors)))
            t = tensors[tid]
            _check(t.gear in (o.gear, ANY_GEAR), "%s uses tensor %d of gear "
                   "%d" % (what, tid, t.gear))
            _check(nbytes <= t.size, "%s needs %d bytes of tensor %d, which "
                   "has %d" % (what, nbytes, tid, t.size))
            _check(align <= 1 or t.offset % align == 0,
                   "%s: tensor %d misaligned" % (what, tid))
            if j == 0:
                _check(t.kind in (KIND_OUTPUT, KIND_WORK),
                       "%s writes an input or a weight" % what)
        _check_overlap(o, rule, ext, tensors, what)
        out.append(o)
    return out


def _check_aipp_configs(ops: list[Op], tensors: list[Tensor],
                        weights: bytes, params: bytes,
                        inputs: list[IoDesc]) -> None:
    """An AIPP op's config is a weight, the one the device takes for its
    block (kmod/core/aipp.c dv_aipp_check_config()): static AIPP; or the
    input ascend_dynamic_aipp_data, which acl.mdl.set_input_aipp writes
    and the device checks as each run starts: dynamic AIPP. Nothing else
    (a computed tensor's bytes) is a config."""
    from . import aipp
    for i, o in enumerate(ops):
        if o.opcode != _uapi.DAVINCI_OP_AIPP:
            continue
        t = tensors[o.src1]
        if t.kind == KIND_INPUT:
            _check(inputs[t.index].name == DYNAMIC_AIPP_INPUT,
                   "op %d: an AIPP reads its config from input %r, not %s"
                   % (i, inputs[t.index].name, DYNAMIC_AIPP_INPUT))
            continue
        _check(t.kind == KIND_WEIGHT, "op %d: an AIPP reads its config "
               "from a weight or the %s input, not a tensor of kind %d"
               % (i, DYNAMIC_AIPP_INPUT, t.kind))
        p = _fields(_RULES[o.opcode].op,
                    params[o.params:o.params + _block_size(o)])
        try:
            aipp.config_from_bytes(weights[t.offset:t.offset +
                                           _AIPP_CONFIG_SIZE]).check(
                p["height"], p["width"], p["src_size"])
        except DavinciError as exc:
            _fail("op %d: its AIPP config (a weight) is one the device "
                  "refuses (%s)" % (i, exc))


def parse(data: bytes) -> OfflineModel:
    """Check and decode an offline model; raises :class:`ModelFormatError`."""
    data = bytes(data)
    amaj, amin, nsect, minor = _header(data)
    sect = _sections(data, nsect, minor)
    inputs, outputs, batches, info, hw = _meta(sect[SECT_META][1])
    gears = max(1, len(batches), len(hw))
    weights = sect[SECT_WEIGHTS][1]
    tensors = _tensors(*sect[SECT_TENSORS], gears, len(inputs), len(outputs),
                       len(weights))
    params = sect.get(SECT_PARAMS, (0, b""))[1]
    ops = _ops(*sect[SECT_OPS], gears, tensors, params, minor)
    model = OfflineModel(inputs, outputs, batches, weights, tensors, ops,
                         info, (amaj, amin), params, hw)
    _check_aipp_configs(ops, tensors, weights, params, inputs)
    for kind, ios in ((KIND_INPUT, inputs), (KIND_OUTPUT, outputs)):
        for i, io in enumerate(ios):
            for g in range(gears):
                hits = [t for t in tensors
                        if t.kind == kind and t.index == i and t.gear == g]
                _check(len(hits) == 1, "%s %r has %d tensors in gear %d"
                       % ("input" if kind == KIND_INPUT else "output",
                          io.name, len(hits), g))
                n = DTYPE_SIZES[io.dtype]
                for d in model.dims(io, g):
                    n *= d
                _check(hits[0].size == n, "%s %r: %d bytes for dims %s"
                       % ("input" if kind == KIND_INPUT else "output",
                          io.name, hits[0].size, model.dims(io, g)))
    return model
