# SPDX-License-Identifier: GPL-2.0
"""Submitting davinci ops for npu tensors.

Operands are contiguous npu tensors (or contiguous transposes, for matmul);
each is handed to ``davinci.ops`` as a DeviceTensor over its davinci
buffer, and the task is queued on the current stream of the tensor's
device. Constants (rows of ones and zeros) live in buffers of their own
that nothing else writes, so the host fills them once without waiting for
the device.
"""

from __future__ import annotations

import struct
import threading

import numpy as np
import torch

import davinci
from davinci import _uapi, ops

from . import _devices, memory, streams

#: torch dtypes the device computes in, by davinci dtype name
DTYPES = {torch.float32: "float32", torch.float16: "float16",
          torch.bfloat16: "bfloat16", torch.int32: "int32"}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def on_device(*ts: torch.Tensor, floats: bool = False) -> bool:
    """True when the tensors can be operands of a davinci op together:
    npu, one device, one supported dtype, contiguous, not empty."""
    allowed = FLOATS if floats else DTYPES
    t0 = ts[0]
    if not isinstance(t0, torch.Tensor) or t0.dtype not in allowed or \
            t0.device.type != "npu" or t0.numel() == 0:
        return False                # (empty tensors have no memory)
    index, dtype = t0.get_device(), t0.dtype
    for t in ts:
        # (a CPU tensor's get_device() is -1, never an npu index)
        if not isinstance(t, torch.Tensor) or t.get_device() != index or \
                t.dtype != dtype or not t.is_contiguous():
            return False
    return True


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


_CODES = {dt: ops.DTYPES[name][0] for dt, name in DTYPES.items()}
#: element size in bytes of each torch dtype the device computes in
_ITEMSIZES = {dt: ops.DTYPES[name][1].itemsize for dt, name in DTYPES.items()}
_OPCODES = {"add": _uapi.DAVINCI_OP_ADD, "sub": _uapi.DAVINCI_OP_SUB,
            "mul": _uapi.DAVINCI_OP_MUL, "div": _uapi.DAVINCI_OP_DIV,
            "maximum": _uapi.DAVINCI_OP_MAX, "minimum": _uapi.DAVINCI_OP_MIN,
            "relu": _uapi.DAVINCI_OP_RELU, "exp": _uapi.DAVINCI_OP_EXP,
            "relu_grad": _uapi.DAVINCI_OP_RELU_GRAD,
            "sqrt": _uapi.DAVINCI_OP_SQRT}


def has_feature(t: torch.Tensor, feature: int) -> bool:
    """The driver of ``t``'s device has DAVINCI_FEAT_* ``feature``."""
    return _devices.context(t.get_device()).version.has(feature)


def _launch(t: torch.Tensor, opcode: int, dst: int, src0: int,
            src1: int = 0, imm: int = 0) -> None:
    """One elementwise task over ``t``'s elements, on its device and
    current stream; see :func:`_launch_on`."""
    _launch_on(t.get_device(), t.dtype, t.numel(), opcode, dst, src0, src1,
               imm)


def _launch_on(index: int, dtype: torch.dtype, count: int, opcode: int,
               dst: int, src0: int, src1: int = 0, imm: int = 0) -> None:
    """One elementwise task on npu:``index``'s current stream, over
    ``count`` elements of ``dtype`` at device addresses ``dst``, ``src0``
    and ``src1`` (0: unused). The allocator's blocks are 512-byte aligned,
    so operands are aligned to their element size; the rule is still
    checked, by one test on the addresses here, and check_alignment names
    the operand that breaks it."""
    task = _uapi.davinci_task(opcode=opcode, dtype=_CODES[dtype],
                              count=count, dst=dst, src0=src0, src1=src1,
                              imm=imm)
    if (dst | src0 | src1) % _ITEMSIZES[dtype]:
        ops.check_alignment(task)       # raises MisalignedOperandError
    streams.current_stream(index).davinci_stream.launch(task)


def launch_blocks(opname: str, dtype: torch.dtype, index: int, count: int,
                  dst: int, src0: int, src1: int) -> None:
    """dst := src0 <opname> src1 elementwise: the C++ half's path for the
    common case of the binary ops (csrc/npu.cpp), which hands over each
    operand as the host address of its block's first byte."""
    blocks = memory.allocator(index)
    _launch_on(index, dtype, count, _OPCODES[opname],
               blocks.block(dst).buffer.dev_addr,
               blocks.block(src0).buffer.dev_addr,
               blocks.block(src1).buffer.dev_addr)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


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


def train_ops(t: torch.Tensor) -> bool:
    """The driver of ``t``'s device has LOG_SOFTMAX, SQRT and CMP."""
    return has_feature(t, _uapi.DAVINCI_FEAT_TRAIN_OPS)


def log_softmax(x: torch.Tensor, out: torch.Tensor) -> None:
    ops.log_softmax(dev(x), out=dev(out), stream=stream_of(x))


def one_hot(target: torch.Tensor, n: int) -> torch.Tensor:
    """float32 [m, n]: 1 where column j == target[i], else 0, for a 1-D
    int64 or int32 npu ``target`` of m class indices (n < 2**24, so every
    index and column is exact in float32). An int64 index is read as its
    low 32-bit word (little endian): a negative or too large index matches
    no column, like an ignore_index outside [0, n)."""
    m = target.numel()
    words = 2 if target.dtype == torch.int64 else 1
    buf, offset = memory.device_buffer(target)
    raw = davinci.DeviceTensor(buf, (m * words,), "int32", offset)
    tf = torch.empty((m, words), dtype=torch.float32, device=target.device)
    ops.cast(raw, "float32", out=dev(tf, (m * words,)),
             stream=stream_of(target))
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
    ops.compare("eq", dev(rows), dev(cols), out=dev(rows),
                stream=stream_of(target))
    return rows


def const(t: torch.Tensor, value: float, shape) -> davinci.DeviceTensor:
    """A row of ``value`` (0, -0.0 or 1) in ``t``'s dtype, viewed as
    ``shape``."""
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    row = constants.get(t.device.index, DTYPES[t.dtype], value, n)
    return davinci.DeviceTensor(row.buffer, tuple(shape), row.dtype)


def fill(out: torch.Tensor, value: float) -> None:
    """Every element of contiguous ``out`` := value (alpha * 1 + 0)."""
    n = out.numel()
    if value == 0:
        buf, offset = memory.device_buffer(out)
        stream_of(out).memset(buf, 0, out.numel() * out.element_size(),
                              offset)
        return
    ones = const(out, 1, (n,))
    zeros = const(out, 0, (n,))
    ops.axpy(value, ones, zeros, out=dev(out, (n,)), stream=stream_of(out))


def scale(x: torch.Tensor, alpha: float, out: torch.Tensor) -> None:
    """out := alpha * x, alpha rounded to float32 (alpha * x + -0: exact,
    the sign of a zero product kept)."""
    zeros = const(x, -0.0, (x.numel(),))
    _launch(x, _uapi.DAVINCI_OP_AXPY, addr(out), addr(x), zeros.dev_addr,
            _f32_bits(alpha))


def add_scalar(x: torch.Tensor, value: float, out: torch.Tensor) -> None:
    """out := x + value (value * 1 + x: exact)."""
    ones = const(x, 1, (x.numel(),))
    _launch(x, _uapi.DAVINCI_OP_AXPY, addr(out), ones.dev_addr, addr(x),
            _f32_bits(value))


def binary(opname: str, a: torch.Tensor, b: torch.Tensor,
           out: torch.Tensor) -> None:
    """out := a <op> b elementwise (one shape, one dtype)."""
    _launch(a, _OPCODES[opname], addr(out), addr(a), addr(b))


def axpy(alpha: float, x: torch.Tensor, y: torch.Tensor,
         out: torch.Tensor) -> None:
    """out := alpha * x + y."""
    _launch(x, _uapi.DAVINCI_OP_AXPY, addr(out), addr(x), addr(y),
            _f32_bits(alpha))


def unary(opname: str, x: torch.Tensor, out: torch.Tensor) -> None:
    _launch(x, _OPCODES[opname], addr(out), addr(x))


def matmul_operand(t: torch.Tensor):
    """(DeviceTensor, transposed) for a 2-D operand that is contiguous or
    the transpose of a contiguous tensor; None otherwise."""
    if t.dim() != 2 or t.device.type != "npu" or t.dtype not in FLOATS \
            or t.numel() == 0:
        return None
    if t.is_contiguous():
        return dev(t), False
    tt = t.t()
    if tt.is_contiguous():
        return dev(tt), True
    return None


def matmul(a, ta: bool, b, tb: bool, out: torch.Tensor) -> None:
    ops.matmul(a, b, transpose_a=ta, transpose_b=tb, out=dev(out),
               stream=stream_of(out))


def matmul_dt(a: davinci.DeviceTensor, b: davinci.DeviceTensor,
              out: davinci.DeviceTensor, t: torch.Tensor) -> None:
    """out := a @ b on ``t``'s device and stream."""
    ops.matmul(a, b, out=out, stream=stream_of(t))


def softmax(x: torch.Tensor, out: torch.Tensor) -> None:
    ops.softmax(dev(x), out=dev(out), stream=stream_of(x))


def row_sums(x: torch.Tensor, out: torch.Tensor) -> None:
    """out[i] := sum of row i of x viewed as [m, n] (n = last dim)."""
    n = x.shape[-1] if x.dim() else 1
    m = x.numel() // max(n, 1)
    ops.reduce_sum(dev(x, (m, n)), out=dev(out, (m,)), stream=stream_of(x))


def cast(x: torch.Tensor, out: torch.Tensor) -> None:
    n = x.numel()
    ops.cast(dev(x, (n,)), DTYPES[out.dtype], out=dev(out, (n,)),
             stream=stream_of(x))


def memcpy(src: torch.Tensor, dst: torch.Tensor) -> None:
    """dst := src bytes on the device (contiguous, one dtype)."""
    sb, so = memory.device_buffer(src)
    db, do = memory.device_buffer(dst)
    stream_of(dst).memcpy(db, sb, src.numel() * src.element_size(),
                          dst_offset=do, src_offset=so)
