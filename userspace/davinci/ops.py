# SPDX-License-Identifier: GPL-2.0
"""The device's AI-core ops on tensors in device memory.

A :class:`DeviceTensor` is a :class:`~davinci.Buffer` with a shape and a
dtype: ``float32``, ``float16``, ``bfloat16`` (stored as raw ``uint16``
bits; numpy has no bfloat16) or ``int32``. Every op checks shapes and dtypes
before anything is submitted and raises :class:`ShapeError` or
:class:`DTypeError`.

Ops take ``out=`` (a tensor to write, else one is allocated) and ``stream=``:
with a stream the op is enqueued and returns at once; without one it runs on
the device's default stream and returns when done.

Every operand's device address must be a multiple of its element size (4
bytes for float32 and int32, 2 for float16 and bfloat16): a tensor made at
a misaligned ``offset`` raises :class:`MisalignedOperandError` (an
:class:`InvalidArgumentError`) before anything is submitted; the device
itself fails such a task with ``DAVINCI_STATUS_MISALIGNED``.
"""

from __future__ import annotations

import struct
from typing import Callable, Sequence

import numpy as np

from . import _uapi
from .errors import (DTypeError, InvalidArgumentError,
                     MisalignedOperandError, ShapeError)
from .memory import Buffer
from .stream import Stream, make_task

__all__ = ["DeviceTensor", "DTYPES", "dtype_name", "dtype_code",
           "float32_to_bfloat16", "bfloat16_to_float32",
           "add", "sub", "mul", "div", "maximum", "minimum", "relu", "exp",
           "axpy", "matmul", "softmax", "reduce_sum", "cast", "relu_grad",
           "log_softmax", "sqrt", "compare", "CMP_PREDICATES",
           "check_alignment"]

#: dtype name -> (DAVINCI_DTYPE_*, numpy storage dtype)
DTYPES = {
    "float32": (_uapi.DAVINCI_DTYPE_FLOAT32, np.dtype(np.float32)),
    "float16": (_uapi.DAVINCI_DTYPE_FLOAT16, np.dtype(np.float16)),
    "bfloat16": (_uapi.DAVINCI_DTYPE_BFLOAT16, np.dtype(np.uint16)),
    "int32": (_uapi.DAVINCI_DTYPE_INT32, np.dtype(np.int32)),
}
_CODE_TO_NAME = {code: name for name, (code, _) in DTYPES.items()}
_FLOATS = ("float32", "float16", "bfloat16")


def dtype_name(dtype) -> str:
    """Normalise a dtype (name, numpy dtype, DAVINCI_DTYPE_* code) to its
    name; raises :class:`DTypeError` for types the device lacks."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    if isinstance(dtype, int) and not isinstance(dtype, bool) \
            and dtype in _CODE_TO_NAME:
        return _CODE_TO_NAME[dtype]
    try:
        nd = np.dtype(dtype)
    except TypeError:
        nd = None
    if nd is not None:
        if nd.name == "bfloat16":       # ml_dtypes, if installed
            return "bfloat16"
        for name, (_, storage) in DTYPES.items():
            if name != "bfloat16" and nd == storage:
                return name
    raise DTypeError(
        "dtype %r is not supported by the device: use float32, float16, "
        "bfloat16 or int32 (convert with numpy's astype first)" % (dtype,))


def dtype_code(dtype) -> int:
    """DAVINCI_DTYPE_* of a dtype."""
    return DTYPES[dtype_name(dtype)][0]


def float32_to_bfloat16(a) -> np.ndarray:
    """float32 -> bfloat16 bits (uint16), round to nearest even, NaN kept."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        rounded = np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)
    return rounded.astype(np.uint16)


def bfloat16_to_float32(b) -> np.ndarray:
    """bfloat16 bits (uint16) -> float32 (exact)."""
    b = np.ascontiguousarray(b, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ShapeError("negative dimension in shape %s" % (shape,))
    return shape


class DeviceTensor:
    """A dense row-major tensor in device memory.

    Attributes: buffer (:class:`Buffer`), shape, dtype (name), device.
    """

    def __init__(self, buffer: Buffer, shape, dtype, offset: int = 0):
        self.buffer = buffer
        self.shape = _shape(shape)
        self.dtype = dtype_name(dtype)
        self.offset = offset
        self.code, self.storage = DTYPES[self.dtype]
        if offset + self.nbytes > buffer.size:
            raise ShapeError(
                "a %s tensor of shape %s needs %d bytes; the buffer has %d"
                % (self.dtype, self.shape, self.nbytes, buffer.size - offset))
        #: the stream that last wrote it, until someone synchronized
        self.writer: Stream | None = None

    # -- construction ---------------------------------------------------------------
    @classmethod
    def empty(cls, device, shape, dtype="float32") -> "DeviceTensor":
        name = dtype_name(dtype)
        shape = _shape(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * DTYPES[name][1].itemsize
        return cls(device.malloc(max(nbytes, 1)), shape, name)

    @classmethod
    def from_numpy(cls, device, array, dtype=None) -> "DeviceTensor":
        """Upload ``array``; ``dtype="bfloat16"`` converts floats (RNE) or
        takes uint16 arrays as raw bfloat16 bits."""
        arr = np.asarray(array)
        name = dtype_name(arr.dtype if dtype is None else dtype)
        if name == "bfloat16":
            if arr.dtype == np.uint16 or arr.dtype.name == "bfloat16":
                raw = np.ascontiguousarray(arr).view(np.uint16)
            else:
                raw = float32_to_bfloat16(arr.astype(np.float32))
        else:
            raw = np.ascontiguousarray(arr, dtype=DTYPES[name][1])
        t = cls.empty(device, arr.shape, name)
        t.buffer.write(raw.reshape(-1))
        return t

    # -- properties ---------------------------------------------------------------
    @property
    def device(self):
        return self.buffer.device

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.storage.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def dev_addr(self) -> int:
        return self.buffer.dev_addr + self.offset

    # -- host access --------------------------------------------------------------
    def sync(self) -> None:
        """Wait for the stream that last wrote the tensor."""
        s, self.writer = self.writer, None
        if s is not None and not s.destroyed:
            s.synchronize()

    def view(self) -> np.ndarray:
        """Zero-copy numpy view in storage dtype (uint16 for bfloat16)."""
        self.sync()
        return self.buffer.numpy(self.storage, self.shape, self.offset)

    def numpy(self, raw: bool = False) -> np.ndarray:
        """Copy to a host array. bfloat16 comes back as float32 (exact)
        unless ``raw=True`` (uint16 bits)."""
        v = self.view().copy()
        if self.dtype == "bfloat16" and not raw:
            return bfloat16_to_float32(v).reshape(self.shape)
        return v

    def reshape(self, *shape) -> "DeviceTensor":
        """Same memory, new shape."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        shape = _shape(shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ShapeError("cannot reshape %s (%d elements) to %s"
                             % (self.shape, self.size, shape))
        t = DeviceTensor(self.buffer, shape, self.dtype, self.offset)
        t.writer = self.writer
        return t

    def free(self) -> None:
        self.buffer.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.buffer.freed:
            self.free()

    def __repr__(self) -> str:
        return "<davinci.DeviceTensor %s %s at %#x>" % (
            self.dtype, self.shape, self.dev_addr)


# ---------------------------------------------------------------------------
# op plumbing
# ---------------------------------------------------------------------------
def _tensor(x, what: str) -> DeviceTensor:
    if not isinstance(x, DeviceTensor):
        raise InvalidArgumentError(
            "%s must be a davinci DeviceTensor (upload numpy arrays with "
            "device.tensor(array)), not %s" % (what, type(x).__name__))
    x.buffer.check()
    return x


def _same_device(*ts: DeviceTensor) -> None:
    dev = ts[0].device
    for t in ts[1:]:
        if t.device is not dev:
            raise InvalidArgumentError(
                "operands live on different device contexts (davinci%d and "
                "davinci%d): copy them to one device first"
                % (dev.index, t.device.index))


def _need_dtype(op: str, t: DeviceTensor, allowed: Sequence[str]) -> None:
    if t.dtype not in allowed:
        raise DTypeError("%s does not support dtype %s: use one of %s"
                         % (op, t.dtype, ", ".join(allowed)))


def _same_dtype(op: str, *ts: DeviceTensor) -> None:
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            raise DTypeError("%s needs operands of one dtype, got %s and %s: "
                             "cast one first (davinci.ops.cast)"
                             % (op, ts[0].dtype, t.dtype))


def _out(op: str, out, device, shape, dtype) -> DeviceTensor:
    if out is None:
        return DeviceTensor.empty(device, shape, dtype)
    out = _tensor(out, "out")
    if out.device is not device:
        raise InvalidArgumentError("%s: out lives on another device context"
                                   % op)
    if out.dtype != dtype:
        raise DTypeError("%s writes %s but out is %s" % (op, dtype, out.dtype))
    if out.shape != tuple(shape):
        raise ShapeError("%s produces shape %s but out has shape %s"
                         % (op, tuple(shape), out.shape))
    return out


#: compute opcodes that read src1
_USES_SRC1 = frozenset((
    _uapi.DAVINCI_OP_ADD, _uapi.DAVINCI_OP_SUB, _uapi.DAVINCI_OP_MUL,
    _uapi.DAVINCI_OP_DIV, _uapi.DAVINCI_OP_MAX, _uapi.DAVINCI_OP_MIN,
    _uapi.DAVINCI_OP_AXPY, _uapi.DAVINCI_OP_MATMUL,
    _uapi.DAVINCI_OP_RELU_GRAD, _uapi.DAVINCI_OP_CMP))


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
    opcode = int(task.opcode)
    if not _uapi.DAVINCI_OP_ADD <= opcode < _uapi.DAVINCI_OP_COUNT:
        return
    src = _CODE_TO_NAME.get(int(task.dtype))
    dst = _CODE_TO_NAME.get(int(task.dst_dtype)) \
        if opcode == _uapi.DAVINCI_OP_CAST else src
    if src is None or dst is None:
        return                      # the driver refuses the dtype
    fields = [("dst", dst), ("src0", src)]
    if opcode in _USES_SRC1:
        fields.append(("src1", src))
    for field, dtype in fields:
        addr = int(getattr(task, field))
        align = DTYPES[dtype][1].itemsize
        if addr % align == 0:
            continue
        name = (names or {}).get(field)
        what = "%s (%s)" % (name, field) if name and name != field \
            else field
        raise MisalignedOperandError(
            "%s: operand %s at device address %#x is not aligned to its "
            "element size: %s needs an address that is a multiple of %d "
            "bytes; use an offset that is a multiple of %d bytes (nothing "
            "was submitted)"
            % (op or _uapi.OP_NAMES.get(opcode, "opcode %d" % opcode),
               what, addr, dtype, align, align),
            what, addr, dtype, align)


def _run(task, out: DeviceTensor, stream: Stream | None,
         inputs: Sequence[DeviceTensor], op: str,
         names: "dict[str, str]") -> DeviceTensor:
    check_alignment(task, op, names)
    dev = out.device
    for t in inputs:
        # results of other streams must be complete before this one reads
        if t.writer is not None and t.writer is not stream:
            t.sync()
    if out.writer is not None and out.writer is not stream:
        out.sync()
    s = stream if stream is not None else dev.default_stream
    if s.device is not dev:
        raise InvalidArgumentError("the stream belongs to another device "
                                   "context")
    s.launch(task)
    if stream is None:
        s.synchronize()
        out.writer = None
    else:
        out.writer = stream
    return out


_ALL = ("float32", "float16", "bfloat16", "int32")


def _same_operands(name: str, a, b, dtypes: Sequence[str],
                   names: tuple[str, str] = ("a", "b")
                   ) -> tuple[DeviceTensor, DeviceTensor]:
    """The two operands of an elementwise op as tensors of one device,
    dtype (one of ``dtypes``) and shape."""
    a = _tensor(a, names[0])
    b = _tensor(b, names[1])
    _same_device(a, b)
    _same_dtype(name, a, b)
    _need_dtype(name, a, dtypes)
    if a.shape != b.shape:
        raise ShapeError("%s needs %s and %s of one shape (no broadcasting), "
                         "got %s and %s" % (name, names[0], names[1],
                                            a.shape, b.shape))
    return a, b


def _binary(opcode: int, name: str, a, b, out, stream) -> DeviceTensor:
    a, b = _same_operands(name, a, b, _ALL)
    out = _out(name, out, a.device, a.shape, a.dtype)
    t = make_task(opcode, dtype=a.code, dst=out.dev_addr, src0=a.dev_addr,
                  src1=b.dev_addr, count=a.size)
    return _run(t, out, stream, (a, b), name,
                {"dst": "out", "src0": "a", "src1": "b"})


def _elementwise(opcode: int, name: str,
                 doc: str) -> Callable[..., DeviceTensor]:
    """The public op ``name(a, b, out=None, stream=None)``, one task of
    ``opcode`` over two operands of one shape and dtype."""
    def op(a, b, out=None, stream=None) -> DeviceTensor:
        return _binary(opcode, name, a, b, out, stream)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


add = _elementwise(_uapi.DAVINCI_OP_ADD, "add", "a + b, elementwise.")
sub = _elementwise(_uapi.DAVINCI_OP_SUB, "sub", "a - b, elementwise.")
mul = _elementwise(_uapi.DAVINCI_OP_MUL, "mul", "a * b, elementwise.")
div = _elementwise(_uapi.DAVINCI_OP_DIV, "div", "a / b, elementwise "
                   "(int32: the core's integer division).")
maximum = _elementwise(_uapi.DAVINCI_OP_MAX, "maximum",
                       "max(a, b), elementwise.")
minimum = _elementwise(_uapi.DAVINCI_OP_MIN, "minimum",
                       "min(a, b), elementwise.")


def relu_grad(grad, x, out=None, stream=None) -> DeviceTensor:
    """``grad`` where ``x > 0``, else 0: the gradient of relu (a NaN in
    ``x`` lets ``grad`` through, as PyTorch's threshold_backward does).
    Needs a driver with ``DAVINCI_FEAT_RELU_GRAD``."""
    return _binary(_uapi.DAVINCI_OP_RELU_GRAD, "relu_grad", grad, x, out,
                   stream)


def _unary(opcode: int, name: str, x, out, stream, allowed) -> DeviceTensor:
    x = _tensor(x, "x")
    _need_dtype(name, x, allowed)
    out = _out(name, out, x.device, x.shape, x.dtype)
    t = make_task(opcode, dtype=x.code, dst=out.dev_addr, src0=x.dev_addr,
                  count=x.size)
    return _run(t, out, stream, (x,), name, {"dst": "out", "src0": "x"})


def relu(x, out=None, stream=None) -> DeviceTensor:
    """max(x, 0)."""
    return _unary(_uapi.DAVINCI_OP_RELU, "relu", x, out, stream, _ALL)


def exp(x, out=None, stream=None) -> DeviceTensor:
    """e ** x (float dtypes)."""
    return _unary(_uapi.DAVINCI_OP_EXP, "exp", x, out, stream, _FLOATS)


def sqrt(x, out=None, stream=None) -> DeviceTensor:
    """The correctly rounded square root (float dtypes; NaN for x < 0).
    Needs a driver with ``DAVINCI_FEAT_TRAIN_OPS``."""
    return _unary(_uapi.DAVINCI_OP_SQRT, "sqrt", x, out, stream, _FLOATS)


#: compare() predicate name -> DAVINCI_CMP_*
CMP_PREDICATES = {"eq": _uapi.DAVINCI_CMP_EQ, "ne": _uapi.DAVINCI_CMP_NE,
                  "lt": _uapi.DAVINCI_CMP_LT, "le": _uapi.DAVINCI_CMP_LE,
                  "gt": _uapi.DAVINCI_CMP_GT, "ge": _uapi.DAVINCI_CMP_GE}


def compare(predicate: str, a, b, out=None, stream=None) -> DeviceTensor:
    """1 where ``a <predicate> b`` else 0, in the operands' dtype (1.0 for
    the float dtypes); ``predicate`` is one of ``CMP_PREDICATES`` (eq ne
    lt le gt ge). A NaN compares false, except for ne. Needs a driver with
    ``DAVINCI_FEAT_TRAIN_OPS``."""
    if predicate not in CMP_PREDICATES:
        raise InvalidArgumentError(
            "compare: unknown predicate %r: use one of %s"
            % (predicate, ", ".join(CMP_PREDICATES)))
    a, b = _same_operands("compare", a, b, _ALL)
    out = _out("compare", out, a.device, a.shape, a.dtype)
    t = make_task(_uapi.DAVINCI_OP_CMP, dtype=a.code, dst=out.dev_addr,
                  src0=a.dev_addr, src1=b.dev_addr, count=a.size,
                  imm=CMP_PREDICATES[predicate])
    return _run(t, out, stream, (a, b), "compare",
                {"dst": "out", "src0": "a", "src1": "b"})


def axpy(alpha: float, x, y, out=None, stream=None) -> DeviceTensor:
    """alpha * x + y (float dtypes; alpha is taken as float32)."""
    x, y = _same_operands("axpy", x, y, _FLOATS, ("x", "y"))
    out = _out("axpy", out, x.device, x.shape, x.dtype)
    imm = struct.unpack("<I", struct.pack("<f", float(alpha)))[0]
    t = make_task(_uapi.DAVINCI_OP_AXPY, dtype=x.code, dst=out.dev_addr,
                  src0=x.dev_addr, src1=y.dev_addr, count=x.size, imm=imm)
    return _run(t, out, stream, (x, y), "axpy",
                {"dst": "out", "src0": "x", "src1": "y"})


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False,
           out=None, stream=None) -> DeviceTensor:
    """op(a) @ op(b) for 2-D float tensors; op transposes when asked.

    ``a`` is [m, k] ([k, m] with ``transpose_a``), ``b`` is [k, n] ([n, k]
    with ``transpose_b``); the result is [m, n].
    """
    a = _tensor(a, "a")
    b = _tensor(b, "b")
    _same_device(a, b)
    _same_dtype("matmul", a, b)
    _need_dtype("matmul", a, _FLOATS)
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError("matmul needs 2-D operands, got shapes %s and %s"
                         % (a.shape, b.shape))
    m, k = (a.shape[1], a.shape[0]) if transpose_a else a.shape
    k2, n = (b.shape[1], b.shape[0]) if transpose_b else b.shape
    if k != k2:
        raise ShapeError(
            "matmul inner dimensions differ: op(a) is %dx%d, op(b) is %dx%d"
            % (m, k, k2, n))
    if max(m, n, k) > 0xFFFFFFFF:
        raise ShapeError("matmul dimension too large for the device")
    out = _out("matmul", out, a.device, (m, n), a.dtype)
    for src in (a, b):
        if src.buffer is out.buffer:
            raise InvalidArgumentError("matmul cannot write over an input")
    flags = (_uapi.DAVINCI_TASK_F_TRANS_A if transpose_a else 0) | \
        (_uapi.DAVINCI_TASK_F_TRANS_B if transpose_b else 0)
    t = make_task(_uapi.DAVINCI_OP_MATMUL, dtype=a.code, dst=out.dev_addr,
                  src0=a.dev_addr, src1=b.dev_addr, m=m, n=n, k=k, flags=flags)
    return _run(t, out, stream, (a, b), "matmul",
                {"dst": "out", "src0": "a", "src1": "b"})


def _rows(op: str, x: DeviceTensor) -> tuple[int, int]:
    if x.ndim < 1:
        raise ShapeError("%s needs at least one dimension" % op)
    n = x.shape[-1]
    m = int(np.prod(x.shape[:-1], dtype=np.int64)) if x.ndim > 1 else 1
    if m > 0xFFFFFFFF or n > 0xFFFFFFFF:
        raise ShapeError("%s: shape %s too large for the device"
                         % (op, x.shape))
    return m, n


def _over_rows(opcode: int, name: str, x, out, stream) -> DeviceTensor:
    """One task of ``opcode`` over the last axis of ``x`` (float dtypes)
    into a new tensor of its shape."""
    x = _tensor(x, "x")
    _need_dtype(name, x, _FLOATS)
    m, n = _rows(name, x)
    out = _out(name, out, x.device, x.shape, x.dtype)
    if out.buffer is x.buffer:
        raise InvalidArgumentError("%s cannot write over its input" % name)
    t = make_task(opcode, dtype=x.code, dst=out.dev_addr, src0=x.dev_addr,
                  m=m, n=n)
    return _run(t, out, stream, (x,), name, {"dst": "out", "src0": "x"})


def softmax(x, out=None, stream=None) -> DeviceTensor:
    """Softmax over the last axis (float dtypes)."""
    return _over_rows(_uapi.DAVINCI_OP_SOFTMAX, "softmax", x, out, stream)


def log_softmax(x, out=None, stream=None) -> DeviceTensor:
    """log(softmax(x)) over the last axis (float dtypes), computed as
    ``(x - max) - log(sum(exp(x - max)))``. Needs a driver with
    ``DAVINCI_FEAT_TRAIN_OPS``."""
    return _over_rows(_uapi.DAVINCI_OP_LOG_SOFTMAX, "log_softmax", x, out,
                      stream)


def reduce_sum(x, out=None, stream=None) -> DeviceTensor:
    """Sum over the last axis (float dtypes): shape[:-1] (1-D -> (1,))."""
    x = _tensor(x, "x")
    _need_dtype("reduce_sum", x, _FLOATS)
    m, n = _rows("reduce_sum", x)
    shape = x.shape[:-1] if x.ndim > 1 else (1,)
    out = _out("reduce_sum", out, x.device, shape, x.dtype)
    if out.buffer is x.buffer:
        raise InvalidArgumentError("reduce_sum cannot write over its input")
    t = make_task(_uapi.DAVINCI_OP_REDUCE_SUM, dtype=x.code, dst=out.dev_addr,
                  src0=x.dev_addr, m=m, n=n)
    return _run(t, out, stream, (x,), "reduce_sum",
                {"dst": "out", "src0": "x"})


def cast(x, dtype, out=None, stream=None) -> DeviceTensor:
    """Convert to ``dtype`` (float32, float16, bfloat16, int32)."""
    x = _tensor(x, "x")
    name = dtype_name(dtype)
    out = _out("cast", out, x.device, x.shape, name)
    if out.buffer is x.buffer:
        raise InvalidArgumentError("cast cannot write over its input")
    t = make_task(_uapi.DAVINCI_OP_CAST, dtype=x.code,
                  dst_dtype=DTYPES[name][0], dst=out.dev_addr,
                  src0=x.dev_addr, count=x.size)
    return _run(t, out, stream, (x,), "cast", {"dst": "out", "src0": "x"})
