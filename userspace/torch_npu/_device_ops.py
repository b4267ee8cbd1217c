# SPDX-License-Identifier: GPL-2.0
"""Submitting davinci ops for npu tensors.

Every descriptor is built by :func:`davinci.opdesc.describe` from the op
schema (davinci.schema): an elementwise op's once per (op, dtype), as a
template each launch copies and fills with its addresses, count and
attribute (:func:`launch_blocks`, which the C++ half calls for every small
add, costs a struct copy), the others' per call. Operands are npu tensors
by their device addresses (contiguous, or a strided view for COPY_VIEW),
or DeviceTensors over constant buffers; each task is queued on the current
stream of the tensor's device. Whether the driver serves an op in a dtype
is asked of the device (``Device.capabilities()``). Constants (rows of ones
and zeros) live in buffers of their own that nothing else writes, so the
host fills them once without waiting for the device.
"""

from __future__ import annotations

import collections
import functools
import math
import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

import davinci
from davinci import opdesc, ops, schema, views

from . import _devices, memory, streams

#: torch dtypes the device computes in, by davinci dtype name (whether the
#: driver serves an op in one is asked of it: :func:`serves`)
DTYPES = {torch.float32: "float32", torch.float16: "float16",
          torch.bfloat16: "bfloat16", torch.int32: "int32",
          torch.int64: "int64", torch.bool: "bool", torch.int8: "int8",
          torch.uint8: "uint8"}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
#: element size in bytes of each torch dtype the device computes in
_ITEMSIZES = {dt: opdesc.ITEMSIZES[name] for dt, name in DTYPES.items()}
_FLOAT32_MAX = float(np.finfo(np.float32).max)

# -- what the driver serves ---------------------------------------------------
_served: dict[tuple[int, str, str], bool] = {}


def serves(index: int, op: str, dtype: str) -> bool:
    """The driver of npu:``index`` runs schema op ``op`` in davinci dtype
    ``dtype`` (asked once per device, op and dtype)."""
    key = (index, op, dtype)
    ok = _served.get(key)
    if ok is None:
        ok = _devices.context(index).capabilities().serves(op, dtype)
        _served[key] = ok
    return ok


def on_device(*ts: torch.Tensor, ops: tuple[str, ...] = (),
              floats: bool = False) -> bool:
    """True when the tensors can be operands of the schema ops ``ops``
    together: npu, one device, contiguous, not empty, of one dtype that
    every op of ``ops`` takes and the driver serves (a float one when
    ``floats``)."""
    t0 = ts[0]
    if not isinstance(t0, torch.Tensor) or t0.device.type != "npu" or \
            t0.numel() == 0:
        return False                # (empty tensors have no memory)
    name = DTYPES.get(t0.dtype)
    if name is None or (floats and t0.dtype not in FLOATS):
        return False
    index, dtype = t0.get_device(), t0.dtype
    for t in ts:
        # (a CPU tensor's get_device() is -1, never an npu index)
        if not isinstance(t, torch.Tensor) or t.get_device() != index or \
                t.dtype != dtype or not t.is_contiguous():
            return False
    return all(serves(index, op, name) for op in ops)


def dev(t: torch.Tensor, shape=None) -> davinci.DeviceTensor:
    """``t`` (contiguous npu tensor) as a davinci DeviceTensor."""
    buf, offset = memory.device_buffer(t)
    return davinci.DeviceTensor(buf, tuple(t.shape) if shape is None
                                else shape, DTYPES[t.dtype], offset)


def stream_of(t: torch.Tensor) -> davinci.Stream:
    return streams.current_stream(t.get_device()).davinci_stream


def addr(t: torch.Tensor) -> int:
    """Device address of ``t``'s first element."""
    buf, offset = memory.device_buffer(t)
    return buf.dev_addr + offset


# -- descriptors --------------------------------------------------------------
def _submit(index: int, task) -> int:
    return streams.current_stream(index).davinci_stream.launch(task)


def _run(t: torch.Tensor, op: str, dtype: str, **fields) -> int:
    """One task of ``op`` on ``t``'s device and current stream, described
    by opdesc (which checks dtypes, extents, attribute and alignment)."""
    return _submit(t.get_device(), opdesc.describe(op, dtype, **fields))


_templates: dict[tuple, object] = {}
_ATTRS = {op.python: op.imm for op in schema.COMPUTE_OPS}


def _template(op: str, dtype: torch.dtype, dst_dtype=None):
    """The descriptor of elementwise ``op`` on ``dtype`` with no operands
    yet (built and checked once by opdesc); ``dst_dtype``: a result of
    another dtype (CMP's bool)."""
    key = (op, dtype) if dst_dtype is None else (op, dtype, dst_dtype)
    task = _templates.get(key)
    if task is None:
        d = opdesc.op_of(op)
        task = opdesc.describe(
            d, DTYPES[dtype], dst=0, srcs=(0,) * opdesc.SOURCES[d.kind],
            count=0, attr=0 if d.imm is not None else None,
            dst_dtype=None if dst_dtype is None else DTYPES[dst_dtype])
        _templates[key] = task
    return task


_copy_task = type(_template("add", torch.float32)).from_buffer_copy


def _as_float32(x: float) -> float:
    """``x`` rounded to float32 as a tensor cast does it: beyond its range,
    an infinity."""
    x = float(x)
    if math.isfinite(x) and abs(x) > _FLOAT32_MAX:
        with np.errstate(over="ignore"):
            return float(np.float32(x))
    return x


def _elementwise(index: int, dtype: torch.dtype, count: int, op: str,
                 dst: int, src0: int, src1: int = 0, attr=None,
                 dst_dtype=None) -> None:
    """One elementwise task on npu:``index``'s current stream over
    ``count`` elements of ``dtype`` at device addresses ``dst``, ``src0``
    and ``src1`` (0: unused), from the (op, dtype) template. The
    allocator's blocks are 512-byte aligned, so operands are aligned to
    their element size; the rule is still checked, by one test on the
    addresses here, and check_alignment names the operand that breaks it."""
    task = _copy_task(_templates.get(
        (op, dtype) if dst_dtype is None else (op, dtype, dst_dtype)) or
        _template(op, dtype, dst_dtype))
    task.count = count
    task.dst = dst
    task.src0 = src0
    task.src1 = src1
    if attr is not None:
        task.imm = _ATTRS[op].encode(attr)
    if (src0 | src1) % _ITEMSIZES[dtype] or \
            dst % _ITEMSIZES[dst_dtype or dtype]:
        opdesc.check_alignment(task)    # raises MisalignedOperandError
    streams.current_stream(index).davinci_stream.launch(task)


def _launch(t: torch.Tensor, op: str, dst: int, src0: int, src1: int = 0,
            attr=None) -> None:
    """One elementwise task over ``t``'s elements, on its device and
    current stream."""
    _elementwise(t.get_device(), t.dtype, t.numel(), op, dst, src0, src1,
                 attr)


def launch_blocks(opname: str, dtype: torch.dtype, index: int, count: int,
                  dst: int, src0: int, src1: int) -> None:
    """dst := src0 <opname> src1 elementwise: the C++ half's path for the
    common case of the binary ops (csrc/npu.cpp), which hands over each
    operand as the host address of its block's first byte."""
    blocks = memory.allocator(index)
    _elementwise(index, dtype, count, opname,
                 blocks.block(dst).buffer.dev_addr,
                 blocks.block(src0).buffer.dev_addr,
                 blocks.block(src1).buffer.dev_addr)


# -- constants ----------------------------------------------------------------
class _Constants:
    """Rows of ones and zeros per (device, dtype), grown by doubling."""

    def __init__(self):
        self._lock = threading.Lock()
        self._rows: dict[tuple[int, str, float, str],
                         davinci.DeviceTensor] = {}

    def get(self, index: int, dtype: str, value: float, n: int
            ) -> davinci.DeviceTensor:
        # -0.0 == 0: the sign is part of the key
        key = (index, dtype, float(value), str(float(value)))
        with self._lock:
            row = self._rows.get(key)
            if row is None or row.size < n:
                size = max(n, 2 * row.size if row is not None else 1024)
                arr = np.full(size, value, dtype=np.float32)
                row = davinci.DeviceTensor.from_numpy(
                    _devices.context(index), arr, dtype)
                self._rows[key] = row
        return davinci.DeviceTensor(row.buffer, (n,), dtype)


constants = _Constants()


class _Patterns:
    """Constant arrays other than rows of one value (the row [0, 1, ...,
    n-1], the pair of rows [ones; zeros]), per (device, dtype, name)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._arrays: dict[tuple[int, str, str], davinci.DeviceTensor] = {}

    def get(self, index: int, dtype: str, name: str, n: int
            ) -> davinci.DeviceTensor:
        key = (index, dtype, "%s/%d" % (name, n))
        with self._lock:
            arr = self._arrays.get(key)
            if arr is None:
                arr = davinci.DeviceTensor.from_numpy(
                    _devices.context(index), _PATTERNS[name](n), dtype)
                self._arrays[key] = arr
        return arr


_PATTERNS = {
    "arange": lambda n: np.arange(n, dtype=np.float32).reshape(1, n),
    "low_word": lambda n: np.concatenate(
        [np.ones((1, n), np.float32), np.zeros((1, n), np.float32)]),
}
patterns = _Patterns()


def const(t: torch.Tensor, value: float, shape) -> davinci.DeviceTensor:
    """A row of ``value`` (0, -0.0 or 1) in ``t``'s dtype, viewed as
    ``shape``."""
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    row = constants.get(t.device.index, DTYPES[t.dtype], value, n)
    return davinci.DeviceTensor(row.buffer, tuple(shape), row.dtype)


# -- elementwise --------------------------------------------------------------
def fill(out: torch.Tensor, value: float) -> None:
    """Every element of contiguous ``out`` := value (alpha * 1 + 0)."""
    n = out.numel()
    if value == 0:
        buf, offset = memory.device_buffer(out)
        stream_of(out).memset(buf, 0, out.numel() * out.element_size(),
                              offset)
        return
    axpy_dt(value, const(out, 1, (n,)), const(out, 0, (n,)), out)


def scale(x: torch.Tensor, alpha: float, out: torch.Tensor) -> None:
    """out := alpha * x, alpha rounded to float32 (alpha * x + -0: exact,
    the sign of a zero product kept)."""
    zeros = const(x, -0.0, (x.numel(),))
    _launch(x, "axpy", addr(out), addr(x), zeros.dev_addr, _as_float32(alpha))


def add_scalar(x: torch.Tensor, value: float, out: torch.Tensor) -> None:
    """out := x + value (value * 1 + x: exact)."""
    ones = const(x, 1, (x.numel(),))
    _launch(x, "axpy", addr(out), ones.dev_addr, addr(x), _as_float32(value))


def binary(opname: str, a: torch.Tensor, b: torch.Tensor,
           out: torch.Tensor) -> None:
    """out := a <op> b elementwise (one shape, one dtype)."""
    _launch(a, opname, addr(out), addr(a), addr(b))


def axpy(alpha: float, x: torch.Tensor, y: torch.Tensor,
         out: torch.Tensor) -> None:
    """out := alpha * x + y."""
    _launch(x, "axpy", addr(out), addr(x), addr(y), _as_float32(alpha))


def axpy_dt(alpha: float, x: davinci.DeviceTensor, y: davinci.DeviceTensor,
            out: torch.Tensor) -> None:
    """out := alpha * x + y for constant rows ``x`` and ``y``."""
    _launch(out, "axpy", addr(out), x.dev_addr, y.dev_addr,
            _as_float32(alpha))


def unary(opname: str, x: torch.Tensor, out: torch.Tensor,
          attr=None) -> None:
    """out := <op>(x); ``attr``: the op's attribute (LEAKY_RELU's slope)."""
    _launch(x, opname, addr(out), addr(x), attr=attr)


def compare(predicate: str, a: torch.Tensor, b: torch.Tensor,
            out: torch.Tensor) -> None:
    """out := 1 where a <predicate> b else 0, in the operands' dtype."""
    _launch(a, "compare", addr(out), addr(a), addr(b), predicate)


# -- strided operands: views and broadcasting ---------------------------------
@dataclass(frozen=True)
class Operand:
    """An operand of an elementwise task: the device address of its first
    element, its dtype, shape and strides (elements) and the buffer it
    lies in (None for a constant, which nothing writes)."""
    addr: int
    dtype: torch.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    buffer: object = None

    def dense(self, sizes) -> bool:
        return self.shape == tuple(sizes) and \
            views.is_contiguous(self.shape, self.strides)

    def reach(self) -> tuple[int, int]:
        """The bytes [first, end) it touches."""
        n = views.span(self.shape, self.strides)
        return self.addr, self.addr + n * _ITEMSIZES[self.dtype]


def operand(t: torch.Tensor) -> Operand:
    """npu tensor ``t`` (any layout) as an operand."""
    buf, offset = memory.device_buffer(t)
    return Operand(buf.dev_addr + offset, t.dtype, tuple(t.shape),
                   tuple(t.stride()), buf)


class _Scalars:
    """0-dim device constants of one value in a dtype, per device: the
    operand a Python number becomes (broadcast with stride 0). The newest
    few hundred are kept; a task still reading a dropped one holds its
    memory until it ends."""
    _KEEP = 512

    def __init__(self):
        self._lock = threading.Lock()
        self._held: collections.OrderedDict = collections.OrderedDict()

    def get(self, index: int, dtype: torch.dtype, value) -> Operand:
        # the number as CPU torch converts it to the dtype (fill's rule)
        raw = torch.full((), value, dtype=dtype).view(
            1).view(torch.uint8).numpy().tobytes()
        key = (index, dtype, raw)
        with self._lock:
            t = self._held.get(key)
            if t is None:
                t = davinci.DeviceTensor.empty(_devices.context(index), (1,),
                                               DTYPES[dtype])
                t.buffer.write(np.frombuffer(raw, np.uint8))
                self._held[key] = t
                while len(self._held) > self._KEEP:
                    self._held.popitem(last=False)
            else:
                self._held.move_to_end(key)
        return Operand(t.dev_addr, dtype, (), ())


scalars = _Scalars()
_strided_ops: dict[tuple[int, str], bool] = {}
_src2_ops: dict[tuple[int, str], bool] = {}


def takes_strided(index: int, op: str) -> bool:
    """The driver of npu:``index`` reads strided operands for ``op``."""
    key = (index, op)
    ok = _strided_ops.get(key)
    if ok is None:
        ok = _devices.context(index).capabilities().takes_strided(op)
        _strided_ops[key] = ok
    return ok


def takes_src2(index: int, op: str) -> bool:
    """The driver of npu:``index`` takes a third operand for ``op``
    (CONV2D's bias, ABI 1.10)."""
    key = (index, op)
    ok = _src2_ops.get(key)
    if ok is None:
        ok = _devices.context(index).capabilities().takes_src2(op)
        _src2_ops[key] = ok
    return ok


def bool_results(index: int) -> bool:
    """The driver has the bool dtype, and with it CMP's bool result (ABI
    1.7 brought both)."""
    return serves(index, "cast", "bool")


def walk(sizes, dst: Operand, srcs: Sequence[Operand]
         ) -> "opdesc.Strided | None":
    """The strided walk writing ``dst`` (of shape ``sizes``) from ``srcs``
    broadcast to it; None where the device cannot take it: more than 8
    dimensions that do not merge, or a dst that holds an element twice."""
    return _walk_of(tuple(sizes), tuple(dst.strides), tuple(
        (tuple(s.shape), tuple(s.strides)) for s in srcs))


@functools.lru_cache(maxsize=4096)
def _walk_of(sizes, dst_strides, srcs) -> "opdesc.Strided | None":
    # a training loop walks the same few geometries every step: each is
    # merged and packed once (the walk keeps its coalesced form and bytes)
    w = opdesc.Strided(sizes, dst_strides, *(
        views.broadcast_strides(shape, strides, sizes)
        for shape, strides in srcs))
    c = w.coalesced()
    if len(c.sizes) > opdesc.STRIDED_MAX_DIMS or not c.dst_distinct():
        return None
    return w


def clashes(dst: Operand, src: Operand, in_place: bool = True) -> bool:
    """``dst`` shares memory with ``src`` other than as the same view (the
    device runs an op in place, never a partial overlap; a CAST
    overlapping at all: ``in_place`` False)."""
    if dst.buffer is None or src.buffer is not dst.buffer:
        return False
    if in_place and dst.addr == src.addr and dst.dtype == src.dtype and \
            views.broadcast_strides(src.shape, src.strides, dst.shape) == \
            tuple(dst.strides):
        return False
    d0, d1 = dst.reach()
    s0, s1 = src.reach()
    return d0 < s1 and s0 < d1


def elementwise(index: int, op: str, dtype: torch.dtype, dst: Operand,
                srcs: Sequence[Operand], attr=None,
                strided: "opdesc.Strided | None" = None) -> None:
    """dst := op(srcs) computed in ``dtype``, the sources broadcast to dst's
    shape (a CAST's or CMP's dst in its own dtype): one dense task from
    the template when every operand is dense in dst's shape, else one
    strided task (``strided``: its walk, from :func:`walk`)."""
    sizes = dst.shape
    count = int(np.prod(sizes, dtype=np.int64)) if sizes else 1
    d = opdesc.op_of(op)
    dst_dtype = dst.dtype if dst.dtype != dtype or d.kind == "cast" \
        else None
    if all(o.dense(sizes) for o in (dst, *srcs)):
        addrs = [s.addr for s in srcs] + [0]
        _elementwise(index, dtype, count, op, dst.addr, addrs[0], addrs[1],
                     attr, dst_dtype)
        return
    w = strided or walk(sizes, dst, srcs)
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream, w.pack(),
        lambda at: opdesc.describe(
            d, DTYPES[dtype], dst=dst.addr, srcs=[s.addr for s in srcs],
            count=count, strided=w, params_at=at, attr=attr,
            dst_dtype=None if dst_dtype is None else DTYPES[dst_dtype]))


# -- matmul, rows, reductions, casts ------------------------------------------
def matmul_operand(t: torch.Tensor):
    """(DeviceTensor, transposed) for a 2-D operand that is contiguous or
    the transpose of a contiguous tensor; None otherwise."""
    if t.dim() != 2 or t.device.type != "npu" or t.dtype not in FLOATS \
            or t.numel() == 0 or \
            not serves(t.get_device(), "matmul", DTYPES[t.dtype]):
        return None
    if t.is_contiguous():
        return dev(t), False
    tt = t.t()
    if tt.is_contiguous():
        return dev(tt), True
    return None


def matmul(a, ta: bool, b, tb: bool, out: torch.Tensor) -> None:
    """out := op(a) @ op(b) for 2-D DeviceTensors (transposed: ``ta``,
    ``tb``)."""
    _run(out, "matmul", a.dtype, dst=addr(out),
         srcs=(a.dev_addr, b.dev_addr), mnk=ops.matmul_shape(a, b, ta, tb),
         transpose=(ta, tb))


def matmul_dt(a: davinci.DeviceTensor, b: davinci.DeviceTensor,
              out: davinci.DeviceTensor, t: torch.Tensor) -> None:
    """out := a @ b on ``t``'s device and stream."""
    _run(t, "matmul", a.dtype, dst=out.dev_addr,
         srcs=(a.dev_addr, b.dev_addr), mnk=ops.matmul_shape(a, b))


def _rows_of(x: torch.Tensor) -> tuple[int, int]:
    """x viewed as [m, n], n its last dimension (1 for a scalar)."""
    n = x.shape[-1] if x.dim() else 1
    return x.numel() // max(n, 1), n


def softmax(x: torch.Tensor, out: torch.Tensor) -> None:
    _run(x, "softmax", DTYPES[x.dtype], dst=addr(out), srcs=(addr(x),),
         rows=_rows_of(x))


def log_softmax(x: torch.Tensor, out: torch.Tensor) -> None:
    _run(x, "log_softmax", DTYPES[x.dtype], dst=addr(out), srcs=(addr(x),),
         rows=_rows_of(x))


def row_sums(x: torch.Tensor, out: torch.Tensor) -> None:
    """out[i] := sum of row i of x viewed as [m, n] (n = last dim)."""
    _run(x, "reduce_sum", DTYPES[x.dtype], dst=addr(out), srcs=(addr(x),),
         rows=_rows_of(x))


def cast(x: torch.Tensor, out: torch.Tensor) -> None:
    _run(x, "cast", DTYPES[x.dtype], dst=addr(out), srcs=(addr(x),),
         count=x.numel(), dst_dtype=DTYPES[out.dtype])


def memcpy(src: torch.Tensor, dst: torch.Tensor) -> None:
    """dst := src bytes on the device (contiguous, one dtype)."""
    sb, so = memory.device_buffer(src)
    db, do = memory.device_buffer(dst)
    stream_of(dst).memcpy(db, sb, src.numel() * src.element_size(),
                          dst_offset=do, src_offset=so)


def one_hot(target: torch.Tensor, n: int) -> torch.Tensor:
    """float32 [m, n]: 1 where column j == target[i], else 0, for a 1-D
    int64 or int32 npu ``target`` of m class indices (n < 2**24, so every
    index and column is exact in float32). An int64 index is read as its
    low 32-bit word (little endian): a negative or too large index matches
    no column, like an ignore_index outside [0, n)."""
    m = target.numel()
    words = 2 if target.dtype == torch.int64 else 1
    tf = torch.empty((m, words), dtype=torch.float32, device=target.device)
    _run(target, "cast", "int32", dst=addr(tf), srcs=(addr(target),),
         count=m * words, dst_dtype="float32")
    index = target.device.index
    # the class index in every column: tf[m, w] @ [ones; zeros][w, n]
    rows = torch.empty((m, n), dtype=torch.float32, device=target.device)
    pick = patterns.get(index, "float32", "low_word", n) if words == 2 \
        else constants.get(index, "float32", 1, n)
    matmul_dt(dev(tf), davinci.DeviceTensor(pick.buffer, (words, n),
                                            "float32"), dev(rows), target)
    # the column number in every row: ones[m, 1] @ arange[1, n]
    cols = torch.empty((m, n), dtype=torch.float32, device=target.device)
    matmul_dt(const(cols, 1, (m, 1)),
              patterns.get(index, "float32", "arange", n), dev(cols), target)
    compare("eq", rows, cols, rows)
    return rows


# -- strided views (COPY_VIEW) ------------------------------------------------
_VIEW = schema.by_name("COPY_VIEW")
_MAX_DIMS = dict((f.name, f.count) for f in _VIEW.params.fields)["sizes"]
#: the davinci dtype whose elements COPY_VIEW moves for an element of a
#: dtype the device does not compute in, by its size, and how many of them
#: make one (it moves bits, never converts)
_WORDS = {2: ("float16", 1), 4: ("int32", 1), 8: ("int32", 2),
          16: ("int32", 4)}


def _coalesced(sizes, strides) -> tuple[list[int], list[int]]:
    """The same row-major walk in the fewest dimensions: size-1 ones
    dropped, a dimension merged into its outer neighbour where that one's
    stride steps over it exactly."""
    out_sizes: list[int] = []
    out_strides: list[int] = []
    for n, st in zip(sizes, strides):
        if n == 1:
            continue
        if out_sizes and out_strides[-1] == st * n:
            out_sizes[-1] *= n
            out_strides[-1] = st
            continue
        out_sizes.append(n)
        out_strides.append(st)
    return out_sizes, out_strides


def view_plan(view: torch.Tensor):
    """(davinci dtype, sizes, strides) COPY_VIEW reads npu tensor ``view``
    with, in row-major order into a dense tensor of its shape; None when
    its walk needs more dimensions than the parameter block holds or its
    element size is none the device moves."""
    name = DTYPES.get(view.dtype)
    per = 1
    if name is None:
        word = _WORDS.get(view.element_size())
        if word is None:
            return None
        name, per = word
    sizes, strides = _coalesced(view.shape, view.stride())
    if per > 1:
        sizes.append(per)
        strides = [st * per for st in strides] + [1]
    if not sizes:
        sizes, strides = [1], [1]           # one element
    if len(sizes) > _MAX_DIMS:
        return None
    return name, sizes, strides


def copy_view(src: torch.Tensor, plan, dst: torch.Tensor) -> None:
    """dst (contiguous, of src's shape and element size) := the elements
    of npu view ``src`` in row-major order, read with ``plan``
    (:func:`view_plan`): one COPY_VIEW."""
    name, sizes, strides = plan
    index = dst.get_device()
    data = opdesc.pack_params(_VIEW, ndim=len(sizes), sizes=sizes,
                              strides=strides)
    count = int(np.prod(sizes, dtype=np.int64))
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream, data,
        lambda at: opdesc.describe(
            _VIEW, params_at=at, dtype=name, dst=addr(dst), srcs=(addr(src),),
            count=count, names={"dst": "the copy", "src0": "the view"}))


def view_served(index: int, plan) -> bool:
    return plan is not None and serves(index, "copy_view", plan[0])


# -- pooling ------------------------------------------------------------------
def pool(op: str, fields: dict, dst: torch.Tensor,
         srcs: Sequence[torch.Tensor], dtype: torch.dtype,
         dst_dtype: "str | None" = None) -> None:
    """One pooling task of schema op ``op`` with the parameter block
    ``fields`` (davinci.ops.pool2d_shapes') on contiguous tensors, on dst's
    device and current stream; ``dst_dtype`` "int64": MAXPOOL2D's
    indices."""
    d = opdesc.op_of(op)
    index = dst.get_device()
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream,
        opdesc.pack_params(d, **fields), lambda at: opdesc.describe(
            d, DTYPES[dtype], dst=addr(dst), srcs=[addr(s) for s in srcs],
            params_at=at, dst_dtype=dst_dtype))


# -- optimizer steps ------------------------------------------------------------
def sgd_momentum(p: torch.Tensor, g: torch.Tensor, b: torch.Tensor,
                 block: bytes) -> None:
    """One SGD_MOMENTUM task: param ``p`` and its momentum buffer ``b``
    stepped in place from ``g`` (as :func:`adam`'s operands), ``block``
    davinci.optim.sgd_momentum_fields' packed."""
    d = opdesc.op_of("sgd_momentum")
    index = p.get_device()
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream,
        block, lambda at: opdesc.describe(
            d, DTYPES[p.dtype], dst=addr(p), srcs=(addr(g), addr(b)),
            count=p.numel(), params_at=at,
            names={"dst": "param", "src0": "grad",
                   "src1": "momentum_buffer"}))


def adam_block(fields: dict) -> bytes:
    """ADAM's parameter block of davinci.optim.adam_fields' ``fields``."""
    return opdesc.pack_params("adam", **fields)


def sgd_momentum_block(fields: dict) -> bytes:
    """SGD_MOMENTUM's block of davinci.optim.sgd_momentum_fields'."""
    return opdesc.pack_params("sgd_momentum", **fields)


def adam(p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor,
         block: bytes) -> None:
    """One ADAM task: param ``p`` and its moments ``m``, ``v`` stepped in
    place from ``g`` (dense npu tensors of one shape and float dtype, no
    two sharing memory), ``block`` its parameter block (adam_block)."""
    d = opdesc.op_of("adam")
    index = p.get_device()
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream,
        block, lambda at: opdesc.describe(
            d, DTYPES[p.dtype], dst=addr(p),
            srcs=(addr(g), addr(m), addr(v)), count=p.numel(),
            params_at=at, names={"dst": "param", "src0": "grad",
                                 "src1": "exp_avg", "src2": "exp_avg_sq"}))
# -- batch norm ---------------------------------------------------------------
_bn_blocks: dict[tuple[float, float], bytes] = {}


def batch_norm(op: str, x: torch.Tensor, dst: int, srcs: Sequence[int],
               eps: "float | None" = None, momentum: float = 0.0) -> None:
    """One BN_TRAINING_* task of schema op ``op`` over contiguous npu ``x``
    ([N, C, ...]: its dtype and dims) at device addresses ``dst`` and
    ``srcs`` (three, 0 for none); ``eps`` (and ``momentum``):
    bn_training_reduce's parameter block."""
    n, c, hw = ops.batch_norm_dims(x.shape)
    index = x.get_device()
    if eps is None:
        _submit(index, opdesc.describe(op, DTYPES[x.dtype], dst=dst,
                                       srcs=srcs, mnk=(n, c, hw)))
        return
    key = (eps, momentum)
    block = _bn_blocks.get(key)
    if block is None:
        if len(_bn_blocks) >= 64:       # (momentum None: 1 / batches)
            _bn_blocks.clear()
        block = opdesc.pack_params(op, **{
            k: int(np.array(v, np.float32).view(np.uint32))
            for k, v in (("eps", eps), ("momentum", momentum))})
        _bn_blocks[key] = block
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream, block,
        lambda at: opdesc.describe(op, DTYPES[x.dtype], dst=dst, srcs=srcs,
                                   mnk=(n, c, hw), params_at=at))


# -- indexed ops, generated tensors, the random generator ---------------------
INDEX_DTYPES = (torch.int64, torch.int32)


def index_rows(op: str, dst: torch.Tensor, src: torch.Tensor,
               index: torch.Tensor, geom: tuple[int, int, int, int]) -> None:
    """INDEX_SELECT (dst := rows of the table src) or INDEX_ADD (rows of
    src added into the table dst, in index order) over ``geom`` = (m
    batches, n table rows, k elements a row, count indices a batch):
    dense npu tensors, ``index`` int64 or int32."""
    m, n, k, count = geom
    if not m * k * count:
        return
    _run(dst, op, DTYPES[dst.dtype], dst=addr(dst),
         srcs=(addr(src), addr(index)), count=count, mnk=(m, n, k),
         attr=DTYPES[index.dtype])


def generate(op: str, out: torch.Tensor, attr=None, **fields) -> None:
    """Dense ``out`` := FILL, ARANGE, RANDOM_UNIFORM, RANDOM_NORMAL or
    BERNOULLI of its
    parameter block ``fields``."""
    if not out.numel():
        return
    d = opdesc.op_of(op)
    index = out.get_device()
    _devices.context(index).param_blocks.launch(
        streams.current_stream(index).davinci_stream,
        opdesc.pack_params(d, **fields),
        lambda at: opdesc.describe(d, DTYPES[out.dtype], dst=addr(out),
                                   count=out.numel(), params_at=at,
                                   attr=attr))


#: draws from the device's generator so far (tests tell a random result,
#: which no CPU generator reproduces, from a deterministic one)
draws = 0


def philox_key() -> int:
    """A Philox key for one draw, taken from torch's CPU generator (63
    bits): torch.manual_seed and torch.npu.manual_seed seed it, and its
    saved state (torch.npu.get_rng_state) replays the device's draws."""
    global draws
    draws += 1
    return int(torch.empty((), dtype=torch.int64).random_())


def rows(op: str, x: torch.Tensor, out: torch.Tensor, attr=None,
         k: int = 0) -> None:
    """A row op over dense ``x`` viewed as [m, n] (n its last dim):
    ARGMAX/ARGMIN (out int64 [m]), CUMSUM, TRIL/TRIU (``k`` rows a
    matrix, ``attr`` the diagonal)."""
    m, n = _rows_of(x)
    if k:
        _run(x, op, DTYPES[x.dtype], dst=addr(out), srcs=(addr(x),),
             mnk=(m, n, k), attr=attr)
    else:
        _run(x, op, DTYPES[x.dtype], dst=addr(out), srcs=(addr(x),),
             rows=(m, n))
