# SPDX-License-Identifier: GPL-2.0
"""The device's AI-core ops on tensors in device memory.

A :class:`DeviceTensor` is a :class:`~davinci.Buffer` with a shape and a
dtype: ``float32``, ``float16``, ``bfloat16`` (stored as raw ``uint16``
bits; numpy has no bfloat16) or ``int32``. Every op checks shapes and dtypes
before anything is submitted and raises :class:`ShapeError` or
:class:`DTypeError`.

A tensor may be a view of another's memory (``x.T``, ``x[1:, ::2]``,
``x.expand(4, 3)``): the elementwise ops (the binary and unary ones, the
comparisons, ``cast``, ``identity``) read views and write into one as they
are, with no copy, and broadcast their inputs by numpy's rules
(``add(x, bias)`` for x of shape (n, m) and bias of shape (m,)): one
strided task (DOC: strided operands in davinci.h). The other ops copy a
view dense first (``identity``) and write dense tensors.

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

import math
from typing import Callable, Sequence

import numpy as np

from . import opdesc, schema, views
from .errors import (DTypeError, InvalidArgumentError, ShapeError,
                     TaskFailedError)
from .memory import Buffer
from .opdesc import check_alignment
from .schema import OpDef
from .stream import Stream

#: one function per compute op of the schema (davinci.schema), by its name
OP_FUNCTIONS = tuple(op.python for op in schema.COMPUTE_OPS)
__all__ = ["DeviceTensor", "DTYPES", "dtype_name", "dtype_code",
           "float32_to_bfloat16", "bfloat16_to_float32", "CMP_PREDICATES",
           "check_alignment", "matmul_shape", "conv2d_shapes", "pool2d_shapes",
           "adaptive_pool2d_kernel", "batch_norm_dims", "OP_FUNCTIONS", "jpeg_decode",
           "vpc_resize", "vpc_crop", "vpc_convert_color",
           "jpeg_encode", "png_decode",
           *OP_FUNCTIONS]

#: dtype name -> (DAVINCI_DTYPE_*, numpy storage dtype), from the schema:
#: numpy's type of that name, and bfloat16's raw bits as uint16
DTYPES = {d.name: (d.code, np.dtype(np.uint16 if d.name == "bfloat16"
                                    else d.name))
          for d in schema.DTYPES}
_CODE_TO_NAME = {code: name for name, (code, _) in DTYPES.items()}


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
        "dtype %r is not supported by the device: use %s (convert with "
        "numpy's astype first)" % (dtype, ", ".join(DTYPES)))


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
    """A tensor in device memory: dense row-major, or a view of another's
    memory with its own ``strides`` (in elements; 0 repeats an element),
    as :meth:`transpose`, slicing and :meth:`expand` make. The elementwise
    ops read and write views directly and broadcast their inputs (numpy's
    rules); the others copy a view dense first.

    Attributes: buffer (:class:`Buffer`), shape, strides, dtype (name),
    offset (bytes into the buffer), device.
    """

    def __init__(self, buffer: Buffer, shape, dtype, offset: int = 0,
                 strides=None):
        self.buffer = buffer
        self.shape = _shape(shape)
        self.dtype = dtype_name(dtype)
        self.offset = offset
        self.code, self.storage = DTYPES[self.dtype]
        self.strides = views.contiguous_strides(self.shape) \
            if strides is None else tuple(int(s) for s in strides)
        if len(self.strides) != len(self.shape) or min(self.strides,
                                                       default=0) < 0:
            raise ShapeError("strides %s do not fit shape %s: one stride of "
                             "0 or more per dimension" % (self.strides,
                                                          self.shape))
        reach = views.span(self.shape, self.strides) * self.itemsize
        if offset < 0 or offset + reach > buffer.size:
            raise ShapeError(
                "a %s tensor of shape %s needs %d bytes; the buffer has %d"
                % (self.dtype, self.shape, reach, buffer.size - offset))
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
        """Zero-copy numpy view in storage dtype (uint16 for bfloat16),
        with the tensor's strides."""
        self.sync()
        if self.is_contiguous():
            return self.buffer.numpy(self.storage, self.shape, self.offset)
        base = self.buffer.numpy(self.storage, (views.span(
            self.shape, self.strides),), self.offset)
        return np.lib.stride_tricks.as_strided(
            base, self.shape, [s * self.itemsize for s in self.strides])

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
        if not self.is_contiguous():
            raise ShapeError("cannot reshape a view of strides %s: copy it "
                             "dense first (.contiguous())" % (self.strides,))
        return self._derive(shape, None, 0)

    # -- views --------------------------------------------------------------------
    def is_contiguous(self) -> bool:
        """Dense in row-major order."""
        return views.is_contiguous(self.shape, self.strides)

    def _derive(self, shape, strides, offset_elems: int) -> "DeviceTensor":
        t = DeviceTensor(self.buffer, shape, self.dtype,
                         self.offset + offset_elems * self.itemsize, strides)
        t.writer = self.writer
        return t

    def as_strided(self, shape, strides, offset: int = 0) -> "DeviceTensor":
        """The view of this tensor's memory with ``shape`` and ``strides``
        (elements), starting ``offset`` elements in (torch's as_strided)."""
        return self._derive(_shape(shape), strides, offset)

    def permute(self, *dims) -> "DeviceTensor":
        """The view with its dimensions in the order ``dims``."""
        if len(dims) == 1 and not isinstance(dims[0], int):
            dims = tuple(dims[0])
        shape, strides = views.permuted(self.shape, self.strides, dims)
        return self._derive(shape, strides, 0)

    def transpose(self, dim0: int = -2, dim1: int = -1) -> "DeviceTensor":
        """The view with dimensions ``dim0`` and ``dim1`` swapped."""
        order = list(range(self.ndim))
        a, b = order[dim0], order[dim1]
        order[a], order[b] = b, a
        return self.permute(order)

    @property
    def T(self) -> "DeviceTensor":
        """The view with its dimensions reversed."""
        return self.permute(tuple(reversed(range(self.ndim))))

    def __getitem__(self, key) -> "DeviceTensor":
        """Basic indexing (ints, slices with a positive step, ...): a view."""
        shape, strides, offset = views.sliced(self.shape, self.strides, key)
        return self._derive(shape, strides, offset)

    def expand(self, *sizes) -> "DeviceTensor":
        """torch's expand: size-1 dimensions repeated (stride 0)."""
        if len(sizes) == 1 and not isinstance(sizes[0], int):
            sizes = tuple(sizes[0])
        shape, strides = views.expanded(self.shape, self.strides, sizes)
        return self._derive(shape, strides, 0)

    def broadcast_to(self, shape) -> "DeviceTensor":
        """numpy's broadcast_to: the view read as ``shape``."""
        shape = _shape(shape)
        return self._derive(shape, views.broadcast_strides(
            self.shape, self.strides, shape), 0)

    def contiguous(self, stream: Stream | None = None) -> "DeviceTensor":
        """This tensor when dense, else a dense copy made on the device."""
        if self.is_contiguous():
            return self
        return identity(self, stream=stream)

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


def _ordered(out: DeviceTensor, stream: Stream | None,
             inputs: Sequence[DeviceTensor]) -> Stream:
    """The stream to run on, after the results it reads of other streams
    (and the last writes of ``out``) are complete."""
    dev = out.device
    for t in inputs:
        if t.writer is not None and t.writer is not stream:
            t.sync()
    if out.writer is not None and out.writer is not stream:
        out.sync()
    s = stream if stream is not None else dev.default_stream
    if s.device is not dev:
        raise InvalidArgumentError("the stream belongs to another device "
                                   "context")
    return s


def _finish(out: DeviceTensor, stream: Stream | None, s: Stream
            ) -> DeviceTensor:
    if stream is None:
        s.synchronize()
        out.writer = None
    else:
        out.writer = stream
    return out


def _run(task, out: DeviceTensor, stream: Stream | None,
         inputs: Sequence[DeviceTensor]) -> DeviceTensor:
    s = _ordered(out, stream, inputs)
    s.launch(task)
    return _finish(out, stream, s)


def _run_with_block(data: bytes, task_at, out: DeviceTensor,
                    stream: Stream | None,
                    inputs: Sequence[DeviceTensor]) -> DeviceTensor:
    """_run for a task with a parameter block: ``task_at(address)`` is its
    descriptor once ``data`` is in device memory there."""
    s = _ordered(out, stream, inputs)
    out.device.param_blocks.launch(s, data, task_at)
    return _finish(out, stream, s)


def _operands(op: OpDef, tensors, names) -> list[DeviceTensor]:
    """The inputs of ``op`` as tensors of one device and dtype."""
    ts = [_tensor(t, n) for t, n in zip(tensors, names)]
    _same_device(*ts)
    _same_dtype(op.python, *ts)
    return ts


def _check_overlap(op: OpDef, out: DeviceTensor, ins, walk: opdesc.Strided,
                   names) -> None:
    """What the device refuses, said before submitting: an out that
    shares memory with an input other than as the same view (in place)."""
    d0, dn = out.dev_addr, walk.span(0) * out.itemsize
    for o, (t, n) in enumerate(zip(ins, names), 1):
        if t.buffer is not out.buffer:
            continue
        if t.dev_addr == out.dev_addr and walk.operands[o] == walk.dst:
            continue
        a0, an = t.dev_addr, walk.span(o) * t.itemsize
        if a0 < d0 + dn and d0 < a0 + an:
            raise InvalidArgumentError(
                "%s: out overlaps %s other than as the same view (in "
                "place): write a separate tensor" % (op.python, n))


def _elementwise(op: OpDef, ins: list[DeviceTensor], names, out, stream,
                 dtype: str, attr) -> DeviceTensor:
    """An op of kind binary, unary or cast: dense operands of one shape
    as one dense task, anything else (views, broadcasting, a view as out)
    as one strided task."""
    shape = views.broadcast_shapes(*(t.shape for t in ins))
    res = _result(op, ins, out, shape, dtype)
    extents = {"dst_dtype": dtype} if op.kind == "cast" else {"attr": attr}
    if op.kind != "cast" and dtype != ins[0].dtype:
        extents["dst_dtype"] = dtype            # compare's bool result
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if res.is_contiguous() and all(t.shape == shape and t.is_contiguous()
                                   for t in ins):
        return _launch(op, ins, names, res, stream, count=count, **extents)
    if not count:
        return res
    walk = opdesc.Strided(shape, res.strides, *(
        views.broadcast_strides(t.shape, t.strides, shape) for t in ins))
    _check_overlap(op, res, ins, walk, names)
    labels = {"dst": "out"}
    labels.update(("src%d" % i, n) for i, n in enumerate(names))
    return _run_with_block(walk.pack(), lambda at: opdesc.describe(
        op, ins[0].dtype, dst=res.dev_addr, srcs=[t.dev_addr for t in ins],
        count=count, strided=walk, params_at=at, names=labels, **extents),
        res, stream, ins)


def _dense_inputs(ins: list[DeviceTensor], stream) -> list[DeviceTensor]:
    """Views copied dense for an op that reads dense operands only; each
    copy is freed once queued (the task holds its memory until it ends)."""
    return [t if t.is_contiguous() else identity(t, stream=stream)
            for t in ins]


def _result(op: OpDef, ins: Sequence[DeviceTensor], out, shape,
            dtype: str) -> DeviceTensor:
    out = _out(op.python, out, ins[0].device, shape, dtype)
    if op.kind not in ("binary", "unary") and \
            any(t.buffer is out.buffer for t in ins):
        raise InvalidArgumentError("%s cannot write over an input"
                                   % op.python)
    return out


def _launch(op: OpDef, ins: list[DeviceTensor], names, out, stream,
            **extents) -> DeviceTensor:
    labels = {"dst": "out"}
    labels.update(("src%d" % i, n) for i, n in enumerate(names))
    task = opdesc.describe(op, ins[0].dtype, dst=out.dev_addr,
                           srcs=[t.dev_addr for t in ins], names=labels,
                           **extents)
    return _run(task, out, stream, ins)


def _copy_view(op: OpDef, x: DeviceTensor, sizes, strides, out,
               stream) -> DeviceTensor:
    """The view of ``x``'s elements with ``sizes`` and ``strides`` (in
    elements, outermost first; a stride of 0 repeats an element, as an
    expanded tensor), copied into a dense tensor of shape ``sizes``."""
    sizes = tuple(int(n) for n in sizes)
    strides = tuple(int(n) for n in strides)
    if not 1 <= len(sizes) <= 8 or len(strides) != len(sizes):
        raise ShapeError("%s takes 1 to 8 sizes and as many strides, got "
                         "%s and %s" % (op.python, sizes, strides))
    if min(sizes + strides) < 0:
        raise ShapeError("%s: negative size or stride in %s, %s"
                         % (op.python, sizes, strides))
    count = int(np.prod(sizes, dtype=object))
    span = 0 if count == 0 else \
        1 + sum((n - 1) * st for n, st in zip(sizes, strides))
    if span > x.size:
        raise ShapeError("%s: a view of sizes %s and strides %s reaches "
                         "element %d of x, which has %d" % (
                             op.python, sizes, strides, span - 1, x.size))
    res = _result(op, [x], out, sizes, x.dtype)
    if not count:
        return res
    data = opdesc.pack_params(op, ndim=len(sizes), sizes=sizes,
                              strides=strides)
    return _run_with_block(
        data, lambda at: opdesc.describe(
            op, x.dtype, dst=res.dev_addr, srcs=[x.dev_addr], count=count,
            params_at=at, names={"dst": "out", "src0": "x"}),
        res, stream, [x])


#: the tensors of a convolution by the names its ops' inputs give them:
#: each op reads two and writes the third (its schema ``inputs``)
_CONV_TENSORS = ("x", "w", "dy")


def _conv_pair(op: OpDef, name: str, value, dims: int) -> tuple[int, int]:
    """(height, width) of a stride, padding or dilation: one int for both,
    or a pair (a 1-D convolution takes one int, its width's)."""
    if isinstance(value, (int, np.integer)):
        v = (1 if name != "padding" else 0, int(value)) if dims == 1 \
            else (int(value), int(value))
    else:
        v = tuple(int(n) for n in value)
        if len(v) != dims:
            raise ShapeError("%s: %s takes %d value(s) for a %d-D "
                             "convolution, got %s" % (op.python, name, dims,
                                                      dims, v))
        if dims == 1:
            v = (1 if name != "padding" else 0, v[0])
    low = 0 if name == "padding" else 1
    if min(v) < low or max(v) > 0xFFFFFFFF:
        raise ShapeError("%s: %s %s must be %d or more" % (op.python, name,
                                                           v, low))
    return v


def conv2d_shapes(x_shape, w_shape, stride=1, padding=0, dilation=1,
                  groups: int = 1, op: str = "conv2d") -> tuple[dict, tuple]:
    """The CONV2D parameter block's fields and y's shape for an x of
    ``x_shape`` ([n, c, h, w], or [n, c, l] for 1-D) and a w of
    ``w_shape`` ([k, c/groups, r, s], or [k, c/groups, l]); ShapeError
    naming the operand that does not fit."""
    opdef = schema.by_python(op) or schema.by_name("CONV2D")
    x_shape, w_shape = tuple(x_shape), tuple(w_shape)
    if len(x_shape) not in (3, 4) or len(w_shape) != len(x_shape):
        raise ShapeError("%s: x and w are both 4-D (n, c, h, w and k, "
                         "c/groups, r, s) or both 3-D (1-D convolution), got "
                         "x %s and w %s" % (op, x_shape, w_shape))
    dims = len(x_shape) - 2
    if dims == 1:
        x_shape = x_shape[:2] + (1,) + x_shape[2:]
        w_shape = w_shape[:2] + (1,) + w_shape[2:]
    n, c, h, wd = x_shape
    k, cg, r, s = w_shape
    groups = int(groups)
    if groups < 1 or c % groups or k % groups:
        raise ShapeError("%s: groups = %d must divide x's %d channels and "
                         "w's %d filters" % (op, groups, c, k))
    if cg * groups != c:
        raise ShapeError("%s: w %s has %d input channels per group; x's %d "
                         "channels in %d group(s) need %d" % (
                             op, w_shape, cg, c, groups, c // groups))
    if min(x_shape) < 1 or min(w_shape) < 1:
        raise ShapeError("%s: x %s and w %s need every size >= 1"
                         % (op, x_shape, w_shape))
    sh, sw = _conv_pair(opdef, "stride", stride, dims)
    ph, pw = _conv_pair(opdef, "padding", padding, dims)
    dh, dw = _conv_pair(opdef, "dilation", dilation, dims)
    oh = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (s - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise ShapeError("%s: the filter of w %s (dilation %s) is larger "
                         "than x %s padded by %s" % (op, w_shape, (dh, dw),
                                                     x_shape, (ph, pw)))
    fields = dict(n=n, c=c, h=h, w=wd, k=k, r=r, s=s, stride_h=sh,
                  stride_w=sw, pad_h=ph, pad_w=pw, dilation_h=dh,
                  dilation_w=dw, groups=groups)
    y = (n, k, ow) if dims == 1 else (n, k, oh, ow)
    return fields, y


def _conv(op: OpDef, a, b, shape, stride, padding, dilation, groups, out,
          stream, bias=None, relu: bool = False) -> DeviceTensor:
    """One of the convolution ops: its two inputs (named as the schema's
    ``inputs``) and the shape of the third tensor it writes (given for the
    gradients, whose x or w the inputs do not fix; else from ``out``);
    CONV2D's ``bias`` (k elements, its src2) and ``relu`` epilogue run in
    the same task."""
    names = op.inputs
    ins = _operands(op, (a, b), names)
    if bias is not None:
        bias = _tensor(bias, "bias")
        _same_device(ins[0], bias)
        _same_dtype(op.python, ins[0], bias)
        if bias.shape != (ins[1].shape[0],):
            raise ShapeError("%s: bias has shape %s; w %s needs one element "
                             "per filter, (%d,)" % (
                                 op.python, bias.shape, ins[1].shape,
                                 ins[1].shape[0]))
    _need_dtype(op.python, ins[0], op.dtypes)
    given = dict(zip(names, (t.shape for t in ins)))
    wanted = next(t for t in _CONV_TENSORS if t not in names)
    if shape is None and out is not None:
        shape = _tensor(out, "out").shape
    if wanted != "dy":
        if shape is None:
            raise ShapeError("%s needs the shape of the %s it computes "
                             "(shape=, or out=)" % (op.python, wanted))
        given[wanted] = tuple(int(d) for d in shape)
    fields, y = conv2d_shapes(given["x"], given["w"], stride, padding,
                              dilation, groups, op.python)
    if "dy" in given and given["dy"] != y:
        raise ShapeError("%s: dy has shape %s; x %s and w %s make y %s" % (
            op.python, given["dy"], given["x"], given["w"], y))
    given["dy"] = y
    res = _result(op, ins, out, given[wanted], ins[0].dtype)
    if not res.is_contiguous():
        raise ShapeError("%s writes dense tensors only: give a dense out"
                         % op.python)
    labels = {"dst": "out", "src2": "bias"}
    labels.update(("src%d" % i, n) for i, n in enumerate(names))
    if bias is not None:
        ins = ins + [bias]
    copies = _dense_inputs(ins, stream)
    attr = None
    if op.imm is not None:
        attr = "RELU" if relu else "NONE"
    elif relu:
        raise InvalidArgumentError("%s takes no relu epilogue" % op.python)
    try:
        return _run_with_block(
            opdesc.pack_params(op, **fields), lambda at: opdesc.describe(
                op, res.dtype, dst=res.dev_addr,
                srcs=[t.dev_addr for t in copies[:2]], params_at=at,
                names=labels, attr=attr,
                src2=copies[2].dev_addr if len(copies) > 2 else 0),
            res, stream, copies)
    finally:
        for c, t in zip(copies, ins):
            if c is not t:
                c.free()


def _pool_pair(op: str, name: str, value, dims: int, low: int,
               flat: int) -> tuple[int, int]:
    """(height, width) of a pooling's kernel_size, stride, padding or
    dilation: one int for both, or one per dimension (a 1-D pooling's
    height is ``flat``)."""
    if isinstance(value, (int, np.integer)):
        v = (flat, int(value)) if dims == 1 else (int(value), int(value))
    else:
        v = tuple(int(n) for n in value)
        if len(v) != dims:
            raise ShapeError("%s: %s takes %d value(s) for a %d-D pooling, "
                             "got %s" % (op, name, dims, dims, v))
        if dims == 1:
            v = (flat, v[0])
    if min(v) < low or max(v) > 0xFFFFFFFF:
        raise ShapeError("%s: %s %s must be %d or more" % (op, name, v, low))
    return v


def _pool_out(size: int, k: int, stride: int, pad: int, dil: int,
              ceil_mode: bool) -> int:
    """One output extent, as torch's pooling_output_shape."""
    span = size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil_mode
                                                   else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1            # the last window starts inside the input
    return out


def pool2d_shapes(x_shape, kernel_size, stride=None, padding=0, dilation=1,
                  ceil_mode: bool = False, count_include_pad: bool = False,
                  divisor: "int | None" = None, adaptive: bool = False,
                  op: str = "max_pool2d") -> tuple[dict, tuple]:
    """The pooling parameter block's fields and y's shape for an x of
    ``x_shape`` ([n, c, h, w], or [n, c, l] for 1-D) and a window of
    ``kernel_size`` (``stride`` defaults to it); ShapeError naming what
    does not fit. The max ops take ``dilation``, the average ops
    ``count_include_pad``, ``divisor`` (torch's divisor_override) and
    ``adaptive`` (each sum divided by the window's height, then its width,
    as torch's adaptive_avg_pool2d)."""
    is_max = op.startswith("max")
    x_shape = tuple(int(d) for d in x_shape)
    if len(x_shape) not in (3, 4) or min(x_shape) < 1:
        raise ShapeError("%s: x is [n, c, h, w] (or [n, c, l] for a 1-D "
                         "pooling) with every size >= 1, got %s"
                         % (op, x_shape))
    dims = len(x_shape) - 2
    n, c, h, w = x_shape if dims == 2 else x_shape[:2] + (1,) + x_shape[2:]
    r, s = _pool_pair(op, "kernel_size", kernel_size, dims, 1, 1)
    sh, sw = _pool_pair(op, "stride", (r, s)[2 - dims:] if stride is None
                        or (not isinstance(stride, (int, np.integer)) and
                            len(stride) == 0) else stride, dims, 1, 1)
    ph, pw = _pool_pair(op, "padding", padding, dims, 0, 0)
    dh, dw = _pool_pair(op, "dilation", dilation, dims, 1, 1)
    if ph > r // 2 or pw > s // 2:
        raise ShapeError("%s: padding %s must be at most half the window %s"
                         % (op, (ph, pw), (r, s)))
    if not is_max and (dh, dw) != (1, 1):
        raise ShapeError("%s takes no dilation, got %s" % (op, (dh, dw)))
    if is_max and ((r > 1 and dh > h) or (s > 1 and dw > w)):
        raise ShapeError("%s: dilation %s wider than x %s: a window could "
                         "miss the input" % (op, (dh, dw), (h, w)))
    if divisor is not None and not 1 <= int(divisor) <= 0xFFFFFFFF:
        raise ShapeError("%s: divisor %s must be 1 or more" % (op, divisor))
    if adaptive and (ph or pw or divisor or count_include_pad):
        raise ShapeError("%s: an adaptive pooling takes no padding, "
                         "divisor or count_include_pad" % op)
    oh = _pool_out(h, r, sh, ph, dh, ceil_mode)
    ow = _pool_out(w, s, sw, pw, dw, ceil_mode)
    if oh < 1 or ow < 1:
        raise ShapeError("%s: the window %s (dilation %s) is larger than x "
                         "%s padded by %s" % (op, (r, s), (dh, dw),
                                              x_shape, (ph, pw)))
    fields = dict(n=n, c=c, h=h, w=w, r=r, s=s, stride_h=sh, stride_w=sw,
                  pad_h=ph, pad_w=pw, dilation_h=dh, dilation_w=dw,
                  ceil_mode=int(bool(ceil_mode)),
                  count_include_pad=int(bool(count_include_pad)),
                  divisor=int(divisor or 0), adaptive=int(bool(adaptive)))
    return fields, (n, c, ow) if dims == 1 else (n, c, oh, ow)


def _pool(op: OpDef, ins: list[DeviceTensor], x_shape, geometry: dict,
          out, stream, dst_dtype: "str | None" = None) -> DeviceTensor:
    """One of the pooling ops on ``ins`` (x, or dy and for the max
    gradient its indices), x being of ``x_shape``: y's shape for the
    forward ops, x's for the gradients."""
    fields, y = pool2d_shapes(x_shape, op=op.python, **geometry)
    forward = op.name in ("MAXPOOL2D", "AVGPOOL2D")
    if not forward:
        for t, n in zip(ins, op.inputs):
            if t.shape != y:
                raise ShapeError("%s: %s has shape %s; x %s pools to %s"
                                 % (op.python, n, t.shape, tuple(x_shape),
                                    y))
    dtype = ins[0].dtype
    res = _result(op, ins, out, y if forward else tuple(x_shape),
                  dst_dtype or dtype)
    if not res.is_contiguous():
        raise ShapeError("%s writes dense tensors only: give a dense out"
                         % op.python)
    labels = {"dst": "out"}
    labels.update(("src%d" % i, n) for i, n in enumerate(op.inputs))
    copies = _dense_inputs(ins, stream)
    try:
        return _run_with_block(
            opdesc.pack_params(op, **fields), lambda at: opdesc.describe(
                op, dtype, dst=res.dev_addr, dst_dtype=dst_dtype,
                srcs=[t.dev_addr for t in copies], params_at=at,
                names=labels), res, stream, copies)
    finally:
        for c, t in zip(copies, ins):
            if c is not t:
                c.free()


def _pool_fn(op: OpDef) -> Callable[..., DeviceTensor]:
    """davinci.ops' function of a pooling op."""
    if op.name == "MAXPOOL2D":
        def fn(x, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, out=None, stream=None, dtype=None
               ) -> DeviceTensor:
            x = _tensor(x, "x")
            _need_dtype(op.python, x, op.dtypes)
            result = x.dtype if dtype is None else dtype_name(dtype)
            if result not in (x.dtype,) + op.dst_dtypes:
                raise DTypeError("%s writes x's %s (the maxima) or int64 "
                                 "(their indices), not %s"
                                 % (op.python, x.dtype, result))
            return _pool(op, [x], x.shape, dict(
                kernel_size=kernel_size, stride=stride, padding=padding,
                dilation=dilation, ceil_mode=ceil_mode), out, stream,
                None if result == x.dtype else result)
    elif op.name == "MAXPOOL2D_BACKWARD":
        def fn(dy, indices, shape, kernel_size, stride=None, padding=0,
               dilation=1, ceil_mode=False, out=None, stream=None
               ) -> DeviceTensor:
            """dx of ``shape`` (x's) from dy and max_pool2d's indices."""
            dy, idx = _tensor(dy, "dy"), _tensor(indices, "indices")
            _same_device(dy, idx)
            _need_dtype(op.python, dy, op.dtypes)
            if idx.dtype != "int64":
                raise DTypeError("%s: indices are int64 (max_pool2d(..., "
                                 "dtype=\"int64\")), not %s"
                                 % (op.python, idx.dtype))
            return _pool(op, [dy, idx], shape, dict(
                kernel_size=kernel_size, stride=stride, padding=padding,
                dilation=dilation, ceil_mode=ceil_mode), out, stream)
    elif op.name == "AVGPOOL2D":
        def fn(x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor=None, adaptive=False,
               out=None, stream=None) -> DeviceTensor:
            x = _tensor(x, "x")
            _need_dtype(op.python, x, op.dtypes)
            return _pool(op, [x], x.shape, dict(
                kernel_size=kernel_size, stride=stride, padding=padding,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                divisor=divisor, adaptive=adaptive), out, stream)
    else:
        def fn(dy, shape, kernel_size, stride=None, padding=0,
               ceil_mode=False, count_include_pad=True, divisor=None,
               adaptive=False, out=None, stream=None) -> DeviceTensor:
            """dx of ``shape`` (x's) from dy."""
            dy = _tensor(dy, "dy")
            _need_dtype(op.python, dy, op.dtypes)
            return _pool(op, [dy], shape, dict(
                kernel_size=kernel_size, stride=stride, padding=padding,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                divisor=divisor, adaptive=adaptive), out, stream)
    return fn


def adaptive_pool2d_kernel(x_shape, output_size) -> "tuple[int, int] | None":
    """The window (= stride) of an adaptive pooling of an x of
    ``x_shape`` to ``output_size`` when each output extent divides x's
    (torch's adaptive windows are then that grid), else None."""
    h, w = tuple(x_shape)[-2:]
    oh, ow = (output_size, output_size) if isinstance(
        output_size, (int, np.integer)) else tuple(output_size)
    if oh < 1 or ow < 1 or h % oh or w % ow:
        return None
    return h // oh, w // ow


def _rows(op: str, x: DeviceTensor) -> tuple[int, int]:
    if x.ndim < 1:
        raise ShapeError("%s needs at least one dimension" % op)
    n = x.shape[-1]
    m = int(np.prod(x.shape[:-1], dtype=np.int64)) if x.ndim > 1 else 1
    return m, n


def matmul_shape(a: DeviceTensor, b: DeviceTensor, ta: bool = False,
                 tb: bool = False) -> tuple[int, int, int]:
    """(m, n, k) of op(a) @ op(b) for 2-D ``a`` and ``b``, transposed as
    ``ta`` and ``tb`` ask; ShapeError when they do not multiply."""
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError("matmul needs 2-D operands, got shapes %s and %s"
                         % (a.shape, b.shape))
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        raise ShapeError(
            "matmul inner dimensions differ: op(a) is %dx%d, op(b) is %dx%d"
            % (m, k, k2, n))
    return m, n, k


def _make(op: OpDef) -> Callable[..., DeviceTensor]:
    """davinci.ops' function for ``op``, by its kind: its inputs (named as
    the schema names them), the attribute first when it has one, then
    ``out=`` and ``stream=``."""
    names = op.inputs

    def run(attr, tensors, out, stream, dtype=None, transpose=(False,
                                                                False)):
        ins = _operands(op, tensors, names)
        x = ins[0]
        _need_dtype(op.python, x, op.dtypes)
        if op.kind in ("binary", "unary"):
            result = x.dtype if dtype is None else dtype_name(dtype)
            if result != x.dtype and result not in op.dst_dtypes:
                raise DTypeError("%s writes %s%s, not %s" % (
                    op.python, x.dtype, "".join(" or " + d for d in
                                               op.dst_dtypes), result))
            return _elementwise(op, ins, names, out, stream, result, attr)
        if op.kind == "cast":
            return _elementwise(op, ins, names, out, stream,
                                dtype_name(dtype), None)
        if out is not None and not _tensor(out, "out").is_contiguous():
            raise ShapeError("%s writes dense tensors only: give a dense out"
                             % op.python)
        copies = _dense_inputs(ins, stream)
        try:
            return dense(attr, copies, out, stream, transpose)
        finally:
            for c, t in zip(copies, ins):
                if c is not t:
                    c.free()

    def dense(attr, ins, out, stream, transpose):
        x = ins[0]
        if op.kind == "matmul":
            mnk = matmul_shape(ins[0], ins[1], *transpose)
            res = _result(op, ins, out, mnk[:2], x.dtype)
            return _launch(op, ins, names, res, stream, mnk=mnk,
                           transpose=transpose)
        if op.kind in ("rows", "reduce"):
            rows = _rows(op.python, x)
            shape = x.shape if op.kind == "rows" else \
                (x.shape[:-1] if x.ndim > 1 else (1,))
            res = _result(op, ins, out, shape,
                          op.operand_dtype("dst", x.dtype))
            return _launch(op, ins, names, res, stream, rows=rows)
        if op.kind == "triangle":
            m, n = _rows(op.python, x)
            res = _result(op, ins, out, x.shape, x.dtype)
            return _launch(op, ins, names, res, stream, attr=attr,
                           mnk=(m, n, x.shape[-2] if x.ndim > 1 else 1))
        if op.kind == "sort":
            order, k = attr
            m, n = _rows(op.python, x)
            k = n if k is None else int(k)
            if not 1 <= k <= n:
                raise ShapeError("%s keeps 1 to %d of each row's %d "
                                 "elements, not %d" % (op.python, n, n, k))
            res = _result(op, ins, out, x.shape[:-1] + (k,),
                          op.operand_dtype("dst", x.dtype))
            return _launch(op, ins, names, res, stream, attr=order,
                           mnk=(m, n, k))
        raise AssertionError("op kind %s has no path" % op.kind)

    if op.kind in ("pool", "pool_index"):
        fn = _pool_fn(op)
    elif op.kind == "conv" and "dy" not in names:
        def fn(x, w, bias=None, relu: bool = False, stride=1, padding=0,
               dilation=1, groups=1, out=None, stream=None) -> DeviceTensor:
            """``bias``: k elements added to each filter's outputs, and
            ``relu``: RELU after, both in the convolution's task (the
            bytes of conv2d, add and relu)."""
            return _conv(op, x, w, None, stride, padding, dilation, groups,
                         out, stream, bias, relu)
    elif op.kind == "conv":
        def fn(a, b, shape=None, stride=1, padding=0, dilation=1, groups=1,
               out=None, stream=None) -> DeviceTensor:
            return _conv(op, a, b, shape, stride, padding, dilation, groups,
                         out, stream)
    elif op.kind == "view":
        def fn(x, sizes, strides, out=None, stream=None) -> DeviceTensor:
            x = _tensor(x, names[0])
            _need_dtype(op.python, x, op.dtypes)
            if not x.is_contiguous():
                raise ShapeError("%s reads a view of a dense x: index the "
                                 "view itself (x.as_strided)" % op.python)
            return _copy_view(op, x, sizes, strides, out, stream)
    elif op.kind == "sort":
        def fn(order, x, k: int | None = None, out=None, stream=None
               ) -> DeviceTensor:
            """``order``: "ascending" or "descending"; ``k``: how many of
            each last-axis row to keep (default: all)."""
            return run((order, k), (x,), out, stream)
    elif op.kind == "matmul":
        def fn(a, b, transpose_a: bool = False, transpose_b: bool = False,
               out=None, stream=None) -> DeviceTensor:
            return run(None, (a, b), out, stream,
                       transpose=(bool(transpose_a), bool(transpose_b)))
    elif op.kind == "cast":
        def fn(x, dtype, out=None, stream=None) -> DeviceTensor:
            return run(None, (x,), out, stream, dtype=dtype)
    elif op.imm is not None and len(names) == 2 and op.dst_dtypes:
        def fn(attr, a, b, out=None, stream=None, dtype=None
               ) -> DeviceTensor:
            """``dtype``: the result's, the operands' (default) or one of
            the op's dst_dtypes (compare: "bool")."""
            return run(attr, (a, b), out, stream, dtype=dtype)
    elif op.imm is not None and len(names) == 2:
        def fn(attr, a, b, out=None, stream=None) -> DeviceTensor:
            return run(attr, (a, b), out, stream)
    elif len(names) == 2:
        def fn(a, b, out=None, stream=None) -> DeviceTensor:
            return run(None, (a, b), out, stream)
    elif op.imm is not None:
        def fn(attr, x, out=None, stream=None) -> DeviceTensor:
            return run(attr, (x,), out, stream)
    else:
        def fn(x, out=None, stream=None) -> DeviceTensor:
            return run(None, (x,), out, stream)
    fn.__name__ = fn.__qualname__ = op.python
    fn.__doc__ = "DAVINCI_OP_%s: %s.\n\nInputs %s; dtypes %s." % (
        op.name, op.doc, ", ".join(names), ", ".join(op.dtypes))
    return fn


# -- the indexed, selecting and generating ops ---------------------------------
def _axis(op: OpDef, x: DeviceTensor, axis: int) -> int:
    if x.ndim < 1 or not -x.ndim <= axis < x.ndim:
        raise ShapeError("%s: axis %d of a %d-D tensor" % (op.python, axis,
                                                          x.ndim))
    return axis % x.ndim


def _index_operand(op: OpDef, index, batches: int, stream
                   ) -> tuple[DeviceTensor, list[DeviceTensor]]:
    """The dense int64/int32 indices of every batch: ``index`` itself, or
    its copy repeated for each of ``batches`` (one IDENTITY of a
    broadcast), and the copies made (to free once queued)."""
    index = _tensor(index, "index")
    if index.dtype not in ("int64", "int32"):
        raise DTypeError("%s: index is %s; the device indexes with int64 "
                         "or int32" % (op.python, index.dtype))
    flat = index.contiguous(stream)
    made = [flat] if flat is not index else []
    if batches > 1 and flat.size:
        rep = identity(flat.reshape(1, flat.size).expand(batches, flat.size),
                       stream=stream)
        made.append(rep)
        flat = rep
    return flat, made


def _indexed(op: OpDef, res: DeviceTensor, table: DeviceTensor,
             src: DeviceTensor, idx: DeviceTensor, geom, stream, made
             ) -> DeviceTensor:
    """One INDEX_SELECT or INDEX_ADD task: ``geom`` = (m, n, k, count)."""
    m, n, k, count = geom
    try:
        if m * count * max(k, 1) == 0 or k == 0:
            return res
        task = opdesc.describe(
            op, res.dtype, dst=res.dev_addr, srcs=[src.dev_addr, idx.dev_addr],
            count=count, mnk=(m, n, k), attr=idx.dtype,
            names={"dst": "out", "src0": "x" if src is table else "src",
                   "src1": "index"})
        return _run(task, res, stream, [table, src, idx])
    finally:
        for t in made:
            t.free()


def _make_index_select(op: OpDef):
    def index_select(x, index, axis: int = 0, out=None,
                     stream=None) -> DeviceTensor:
        """numpy's take(x, index, axis): the slices of x along ``axis`` at
        ``index`` (int64 or int32, any shape). An index outside [0,
        x.shape[axis]) fails the task (TaskFailedError, nothing written)."""
        x = _tensor(x, "x")
        _same_device(x, _tensor(index, "index"))
        _need_dtype(op.python, x, op.dtypes)
        axis = _axis(op, x, axis)
        m = int(np.prod(x.shape[:axis], dtype=np.int64))
        k = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        shape = x.shape[:axis] + index.shape + x.shape[axis + 1:]
        res = _out(op.python, out, x.device, shape, x.dtype)
        if not res.is_contiguous() or res.buffer is x.buffer:
            raise InvalidArgumentError("%s writes a dense out of its own"
                                       % op.python)
        dense = x.contiguous(stream)
        idx, made = _index_operand(op, index, m, stream)
        if dense is not x:
            made.append(dense)
        return _indexed(op, res, dense, dense, idx,
                        (m, x.shape[axis], k, index.size), stream, made)
    return index_select


def _make_index_add(op: OpDef):
    def index_add(x, src, index, axis: int = 0, out=None,
                  stream=None) -> DeviceTensor:
        """x with src's slices along ``axis`` added at ``index``, in index
        order (torch's index_add): into a copy of x, or into ``out=x`` in
        place. An index outside [0, x.shape[axis]) fails the task."""
        x, src = _operands(op, (x, src), ("x", "src"))
        _same_device(x, _tensor(index, "index"))
        _need_dtype(op.python, x, op.dtypes)
        axis = _axis(op, x, axis)
        index = _tensor(index, "index")
        want = x.shape[:axis] + (index.size,) + x.shape[axis + 1:]
        if src.shape != want:
            raise ShapeError("%s: src has shape %s; x %s and %d indices "
                             "along axis %d need %s" % (
                                 op.python, src.shape, x.shape, index.size,
                                 axis, want))
        m = int(np.prod(x.shape[:axis], dtype=np.int64))
        k = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        if out is x:
            res = x
            if not res.is_contiguous():
                raise ShapeError("%s adds into a dense x only" % op.python)
        else:
            res = _out(op.python, out, x.device, x.shape, x.dtype)
            if not res.is_contiguous():
                raise ShapeError("%s writes a dense out" % op.python)
            identity(x, out=res, stream=stream)
        dense = src.contiguous(stream)
        idx, made = _index_operand(op, index, m, stream)
        if dense is not src:
            made.append(dense)
        return _indexed(op, res, res, dense, idx,
                        (m, x.shape[axis], k, index.size), stream, made)
    return index_add


def _make_select(op: OpDef):
    def select(cond, x, y, out=None, stream=None) -> DeviceTensor:
        """numpy's where(cond, x, y), broadcast: y copied into out (unless
        ``out`` is y: in place), then x where cond (bool) in one task."""
        cond = _tensor(cond, "cond")
        x, y = _operands(op, (x, y), ("x", "y"))
        _same_device(cond, x, y)
        _need_dtype(op.python, x, op.dtypes)
        if cond.dtype != "bool":
            raise DTypeError("%s: cond is %s, not bool (compare(..., "
                             "dtype='bool') makes one)" % (op.python,
                                                           cond.dtype))
        shape = views.broadcast_shapes(cond.shape, x.shape, y.shape)
        if out is not y:
            out = identity(y.broadcast_to(shape), out=out, stream=stream)
        elif out.shape != shape:
            raise ShapeError("%s in place: y %s is not the broadcast shape "
                             "%s" % (op.python, y.shape, shape))
        return _elementwise(op, [x, cond], ("x", "cond"), out, stream,
                            x.dtype, None)
    return select


def _make_mask_scale(op: OpDef):
    def mask_scale(scale, x, mask, out=None, stream=None) -> DeviceTensor:
        """(x * mask) * scale for a bool ``mask`` broadcast to x (dropout
        and its backward)."""
        mask = _tensor(mask, "mask")
        x = _tensor(x, "x")
        _same_device(x, mask)
        _need_dtype(op.python, x, op.dtypes)
        if mask.dtype != "bool":
            raise DTypeError("%s: mask is %s, not bool" % (op.python,
                                                          mask.dtype))
        return _elementwise(op, [x, mask], ("x", "mask"), out, stream,
                            x.dtype, scale)
    return mask_scale


def _element_bits(dtype: str, value) -> int:
    """The bits of ``value`` as one element of ``dtype`` (numpy's
    conversion; bfloat16 rounded to nearest even)."""
    if dtype == "bfloat16":
        return int(float32_to_bfloat16(np.float32(value)).reshape(-1)[0])
    if dtype == "bool":
        return int(bool(value))
    storage = DTYPES[dtype][1]
    if storage.kind in "iu" and int(value) != value:
        raise InvalidArgumentError("%s holds integers, not %r"
                                   % (dtype, value))
    raw = np.array(value).astype(storage).reshape(1)
    return int.from_bytes(raw.tobytes(), "little")


def _generated(op: OpDef, out, stream, attr=None, **fields
               ) -> DeviceTensor:
    out = _tensor(out, "out")
    _need_dtype(op.python, out, op.dtypes)
    if not out.is_contiguous():
        raise ShapeError("%s writes a dense out" % op.python)
    if not out.size:
        return out
    return _run_with_block(opdesc.pack_params(op, **fields), lambda at:
                           opdesc.describe(op, out.dtype, dst=out.dev_addr,
                                           count=out.size, params_at=at,
                                           attr=attr, names={"dst": "out"}),
                           out, stream, [])


def _make_generator(op: OpDef):
    if op.name == "FILL":
        def fill(out, value, stream=None) -> DeviceTensor:
            """Every element of ``out`` := value (as numpy converts it)."""
            o = _tensor(out, "out")
            return _generated(op, o, stream,
                              value=_element_bits(o.dtype, value))
        return fill
    if op.name == "ARANGE":
        def arange(out, start=0, step=1, stream=None) -> DeviceTensor:
            """out[i] := start + i * step (NUMERICS.md's arithmetic)."""
            o = _tensor(out, "out")
            if o.dtype in ("float32", "float16", "bfloat16"):
                bits = (opdesc.f64_bits(start), opdesc.f64_bits(step))
            elif int(start) != start or int(step) != step:
                raise InvalidArgumentError("arange of %s takes integer start "
                                           "and step" % o.dtype)
            else:
                bits = (int(start) & (1 << 64) - 1, int(step) & (1 << 64) - 1)
            return _generated(op, o, stream, start=bits[0], step=bits[1])
        return arange

    if op.name == "RANDOM_NORMAL":
        def normal(out, mean=0.0, std=1.0, seed: int = 0, offset: int = 0,
                   stream=None) -> DeviceTensor:
            """out[i] := mean + std * the Box-Muller normal of
            Philox4x32-10's words of (seed, offset, i) (NUMERICS.md)."""
            if not (math.isfinite(mean) and math.isfinite(std) and
                    std >= 0 and math.copysign(1, std) > 0):
                raise InvalidArgumentError(
                    "random_normal: mean %r and std %r must be finite and "
                    "std not negative" % (mean, std))
            return _generated(op, _tensor(out, "out"), stream,
                              seed=int(seed) & _U64,
                              offset=int(offset) & _U64,
                              mean=opdesc.f64_bits(mean), std=opdesc.f64_bits(std))
        return normal

    def random(*args, seed: int = 0, offset: int = 0, stream=None
               ) -> DeviceTensor:
        p, out = (args if op.imm is not None else (None,) + args)
        return _generated(op, out, stream, attr=p, seed=int(seed) & _U64,
                          offset=int(offset) & _U64)
    random.__doc__ = ("out[i] := Philox4x32-10's value of (seed, offset, i)"
                      " (NUMERICS.md); bernoulli(p, out, ...) takes p first")
    return random


def _make_aipp(op: OpDef):
    def aipp(image, config, height: int, width: int, dtype="float16",
             batch: int = 1, out=None, stream=None) -> DeviceTensor:
        """``batch`` pictures of ``image`` (dense uint8, its bytes split
        evenly between them) through the struct davinci_aipp_config whose
        bytes ``config`` holds (dense uint8, davinci.aipp.CONFIG_SIZE of
        them: see davinci.aipp.AippConfig.pack) into ``out``, (batch, 3,
        height, width) of ``dtype``. The device checks the config as the
        task starts: a bad one fails it (TaskFailedError)."""
        from .aipp import CONFIG_SIZE
        image, config = _tensor(image, "image"), _tensor(config, "config")
        _same_device(image, config)
        for name, t in (("image", image), ("config", config)):
            if t.dtype != "uint8" or not t.is_contiguous():
                raise DTypeError("aipp: %s must be a dense uint8 tensor, "
                                 "not %s" % (name, t.dtype))
        if config.nbytes != CONFIG_SIZE:
            raise ShapeError("aipp: config holds %d bytes, a struct "
                             "davinci_aipp_config %d" % (config.nbytes,
                                                         CONFIG_SIZE))
        if batch < 1 or image.nbytes % batch:
            raise ShapeError("aipp: %d bytes of image do not split into %d "
                             "pictures" % (image.nbytes, batch))
        result = dtype_name(dtype)
        if result not in op.dtypes:
            raise DTypeError("aipp writes %s, not %s"
                             % (", ".join(op.dtypes), result))
        res = _out(op.python, out, image.device,
                   (batch, 3, int(height), int(width)), result)
        block = opdesc.pack_params(op, batch=batch, channels=3,
                                   height=int(height), width=int(width),
                                   src_size=image.nbytes // batch)
        return _run_with_block(block, lambda at: opdesc.describe(
            op, result, dst=res.dev_addr,
            srcs=(image.dev_addr, config.dev_addr), params_at=at,
            names={"dst": "out", "src0": "image", "src1": "config"}),
            res, stream, [image, config])
    return aipp


def _optimizer_step(op: OpDef, tensors, names, block: bytes,
                    stream) -> DeviceTensor:
    """One optimizer task on ``tensors`` (param first, then grad and the
    state it writes): dense, of one float dtype and shape, no two sharing
    memory."""
    ts = _operands(op, tensors, names)
    for name, t in zip(names, ts):
        if not t.is_contiguous() or t.shape != ts[0].shape:
            raise ShapeError("%s: %s must be dense and of param's shape %s, "
                             "not %s" % (op.python, name, ts[0].shape,
                                         t.shape))
    for i, (a, na) in enumerate(zip(ts, names)):
        for b, nb in zip(ts[i + 1:], names[i + 1:]):
            if a.buffer is b.buffer and a.dev_addr < b.dev_addr + \
                    b.nbytes and b.dev_addr < a.dev_addr + a.nbytes:
                raise InvalidArgumentError(
                    "%s: %s and %s share memory: the step reads them all "
                    "and writes all but grad, so each needs its own" %
                    (op.python, na, nb))
    p, srcs = ts[0], ts[1:]
    res = _run_with_block(block, lambda at: opdesc.describe(
        op, p.dtype, dst=p.dev_addr, srcs=[t.dev_addr for t in srcs],
        count=p.size, params_at=at,
        names=dict(zip(("dst", "src0", "src1", "src2"), names))),
        p, stream, srcs)
    for t in srcs[1:]:
        t.writer = p.writer
    return res


def _make_adam(op: OpDef):
    def adam(param, grad, exp_avg, exp_avg_sq, *, lr: float, step: float,
             beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
             weight_decay: float = 0.0, decoupled: bool = False,
             maximize: bool = False, stream=None) -> DeviceTensor:
        """Step ``step`` (>= 1) of Adam (AdamW with ``decoupled``) on
        ``param``, in place with its moments ``exp_avg`` and
        ``exp_avg_sq``, from ``grad``: dense tensors of one float dtype and
        shape, no two sharing memory (one task: davinci.optim's block).
        Returns ``param``."""
        from .optim import adam_fields
        block = opdesc.pack_params(op, **adam_fields(
            lr=lr, step=step, beta1=beta1, beta2=beta2, eps=eps,
            weight_decay=weight_decay, decoupled=decoupled,
            maximize=maximize))
        return _optimizer_step(op, (param, grad, exp_avg, exp_avg_sq), (
            "param", "grad", "exp_avg", "exp_avg_sq"), block, stream)
    return adam


def _make_sgd_momentum(op: OpDef):
    def sgd_momentum(param, grad, momentum_buffer, *, lr: float,
                     momentum: float, dampening: float = 0.0,
                     weight_decay: float = 0.0, nesterov: bool = False,
                     maximize: bool = False, first_step: bool = False,
                     stream=None) -> DeviceTensor:
        """One step of SGD with ``momentum`` (not 0) on ``param``, in
        place with its ``momentum_buffer`` (set to the gradient at the
        ``first_step``), from ``grad``: dense tensors of one float dtype
        and shape, no two sharing memory (one task). Returns ``param``."""
        from .optim import sgd_momentum_fields
        block = opdesc.pack_params(op, **sgd_momentum_fields(
            lr=lr, momentum=momentum, dampening=dampening,
            weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
            first_step=first_step))
        return _optimizer_step(op, (param, grad, momentum_buffer), (
            "param", "grad", "momentum_buffer"), block, stream)
    return sgd_momentum

# -- batch norm ------------------------------------------------------------------
#: float32 rows of C each the batch norm ops' per-channel operand holds
#: (the result's rows for BN_TRAINING_UPDATE_GRAD: 4)
_BN_ROWS = {"BN_TRAINING_REDUCE": 6, "BN_TRAINING_UPDATE": 2,
            "BN_TRAINING_UPDATE_GRAD": 4, "BN_TRAINING_REDUCE_GRAD": 5}


def batch_norm_dims(shape) -> tuple[int, int, int]:
    """(N, C, HW) of a batch norm input of ``shape`` ([N, C, ...]: HW the
    product of the dims after C, 1 for a 2-D input)."""
    shape = tuple(int(d) for d in shape)
    if len(shape) < 2 or 0 in shape:
        raise ShapeError("batch norm takes a non-empty [N, C, ...] tensor, "
                         "not shape %s" % (shape,))
    return shape[0], shape[1], math.prod(shape[2:])


def _bn_rows(op: str, name: str, t, rows: int, c: int,
             device) -> "DeviceTensor | None":
    """A float32 operand of ``rows`` x ``c`` dense elements (None: none)."""
    if t is None:
        return None
    t = _tensor(t, name)
    if t.device is not device:
        raise InvalidArgumentError("%s: %s lives on another device context"
                                   % (op, name))
    if t.dtype != "float32" or t.size != rows * c or not t.is_contiguous():
        raise ShapeError("%s: %s must be a dense float32 tensor of %d x %d "
                         "elements (per channel), not %s %s"
                         % (op, name, rows, c, t.dtype, t.shape))
    return t


def _make_batch_norm(op: OpDef):
    """davinci.ops' function of a BN_TRAINING_* op: x (and dy) [N, C, ...]
    of one float dtype, the per-channel operands dense float32."""
    rows = _BN_ROWS[op.name]
    stats_out = op.operand_dtypes.get("dst") == "float32"

    def launch(dense, per_channel, out, stream, block):
        x = dense[-1]
        n, c, hw = batch_norm_dims(x.shape)
        for t, name in zip(dense, op.inputs):
            if t.shape != x.shape:
                raise ShapeError("%s: %s has shape %s, x %s"
                                 % (op.python, name, t.shape, x.shape))
        fixed = [_bn_rows(op.python, name, t, r, c, x.device)
                 for t, name, r in per_channel]
        if stats_out:
            res = _out(op.python, out, x.device, (rows, c), "float32")
        else:
            res = _out(op.python, out, x.device, x.shape, x.dtype)
        in_place = op.name == "BN_TRAINING_UPDATE"
        if any(t is not None and t.buffer is res.buffer for t in fixed) or \
                (not in_place and any(t.buffer is res.buffer for t in dense)):
            raise InvalidArgumentError("%s cannot write over an input"
                                       % op.python)
        addrs = [t.dev_addr for t in dense] + \
            [0 if t is None else t.dev_addr for t in fixed]
        addrs += [0] * (3 - len(addrs))
        names = {"dst": "out"}
        names.update(("src%d" % i, nm) for i, nm in enumerate(op.inputs))
        ins = [t for t in list(dense) + fixed if t is not None]

        def task_at(at=0):
            return opdesc.describe(op, x.dtype, dst=res.dev_addr, srcs=addrs,
                                   mnk=(n, c, hw), params_at=at, names=names)
        if block:
            return _run_with_block(opdesc.pack_params(op, **block), task_at,
                                   res, stream, ins)
        return _run(task_at(), res, stream, ins)

    def run(tensors, per_channel, out, stream, **block):
        ts = _operands(op, tensors, op.inputs)
        _need_dtype(op.python, ts[0], op.dtypes)
        copies = _dense_inputs(ts, stream)
        try:
            return launch(copies, per_channel, out, stream, block)
        finally:
            for c, t in zip(copies, ts):
                if c is not t:
                    c.free()

    if op.name == "BN_TRAINING_REDUCE":
        def fn(x, weight=None, bias=None, eps: float = 1e-5,
               momentum: float = 0.1, out=None, stream=None
               ) -> DeviceTensor:
            """Returns [6, C] float32: mean, invstd, alpha, beta, momentum *
            mean and momentum * the unbiased variance of x's channels
            (weight and bias float32 [C], or None)."""
            if not (math.isfinite(eps) and math.isfinite(momentum)) or \
                    eps < 0:
                raise InvalidArgumentError(
                    "%s: eps must be finite and >= 0 and momentum finite, "
                    "not %r, %r" % (op.python, eps, momentum))
            bits = [int(np.array(v, np.float32).view(np.uint32))
                    for v in (eps, momentum)]
            return run((x,), ((weight, "weight", 1), (bias, "bias", 1)),
                       out, stream, eps=bits[0], momentum=bits[1])
    elif op.name == "BN_TRAINING_UPDATE":
        def fn(x, coeffs, out=None, stream=None) -> DeviceTensor:
            """x * alpha + beta per channel, ``coeffs`` [2, C] float32
            (alpha, beta); ``out`` may be x."""
            return run((x,), ((coeffs, "coeffs", 2),), out, stream)
    elif op.name == "BN_TRAINING_UPDATE_GRAD":
        def fn(dy, x, stats, out=None, stream=None) -> DeviceTensor:
            """Returns [4, C] float32: the weight's and the bias's
            gradients, then a copy of ``stats`` [2, C] float32 (mean,
            invstd): bn_training_reduce_grad's first four rows."""
            return run((dy, x), ((stats, "stats", 2),), out, stream)
    else:
        def fn(dy, x, packed, out=None, stream=None) -> DeviceTensor:
            """dx, ``packed`` [5, C] float32: the weight's and bias's
            gradients, mean, invstd (bn_training_update_grad's rows) and
            the weight."""
            return run((dy, x), ((packed, "packed", 5),), out, stream)
    return fn

_U64 = (1 << 64) - 1
#: davinci.ops' functions of the ops whose operands no kind describes alone
_SPECIAL = {"INDEX_SELECT": _make_index_select, "INDEX_ADD": _make_index_add,
            "SELECT": _make_select, "MASK_SCALE": _make_mask_scale,
            "FILL": _make_generator, "ARANGE": _make_generator,
            "RANDOM_UNIFORM": _make_generator, "BERNOULLI": _make_generator,
            "RANDOM_NORMAL": _make_generator, "AIPP": _make_aipp,
            "ADAM": _make_adam, "SGD_MOMENTUM": _make_sgd_momentum,
            "BN_TRAINING_REDUCE": _make_batch_norm,
            "BN_TRAINING_UPDATE": _make_batch_norm,
            "BN_TRAINING_UPDATE_GRAD": _make_batch_norm,
            "BN_TRAINING_REDUCE_GRAD": _make_batch_norm}


def _export(op: OpDef) -> None:
    make = _SPECIAL.get(op.name, _make)
    fn = make(op)
    fn.__name__ = fn.__qualname__ = op.python
    if make is not _make:
        fn.__doc__ = "DAVINCI_OP_%s: %s.\n\n%s" % (op.name, op.doc,
                                                    fn.__doc__ or "")
    globals()[op.python] = fn


for _op in schema.COMPUTE_OPS:
    _export(_op)
del _op

def jpeg_decode(jpeg: DeviceTensor, out: DeviceTensor, format: str = "nv12",
                max_dim: int = 0, stream: Stream | None = None):
    """DAVINCI_OP_JPEGD_DECODE on the DVPP engine: the JPEG whose bytes
    ``jpeg`` holds (uint8) into ``out`` (uint8, at least
    ``davinci.dvpp.nv12_size(w, h)`` bytes), NV12 or NV21 at 128 x 16
    alignment (DOC: DVPP JPEGD). Without ``stream``: runs on the default
    stream and returns its :class:`davinci.dvpp.JpegdResult`, or raises
    :class:`davinci.dvpp.JpegDecodeError` (the decoder's errno in its
    ``result``). With one: returns a :class:`davinci.dvpp.PendingResult`
    whose ``result()`` reads the record once the stream is synchronized."""
    from . import dvpp
    _dense_uint8("jpeg_decode", ("jpeg", jpeg), ("out", out))
    return _engine_task(
        jpeg, out, stream, dvpp.RESULT_SIZE, dvpp.read_result,
        dvpp.JpegDecodeError, lambda s, record: dvpp.launch_jpeg_decode(
            s, jpeg.dev_addr, jpeg.nbytes, out.dev_addr, out.nbytes, record,
            format, max_dim))


def _dense_uint8(op_name: str, *named) -> None:
    """DTypeError unless each (name, tensor) of ``named`` is a dense uint8
    tensor, the bytes a DVPP engine reads and writes."""
    for name, t in named:
        t = _tensor(t, name)
        if t.dtype != "uint8" or not t.is_contiguous():
            raise DTypeError("%s: %s must be a dense uint8 tensor, not %s"
                             % (op_name, name, t.dtype))


def _engine_task(src: DeviceTensor, out: DeviceTensor, stream, record_size,
                 reader, error, launch):
    """A DVPP task that writes a result record, from ``src`` into ``out``:
    ``launch(stream, record address)`` queues it after what ``out`` waits
    for. Without ``stream``: on the default stream, and returns the
    record's result (``reader``'s), or raises ``error`` with it; with one:
    a davinci.dvpp.PendingResult."""
    from . import dvpp
    _same_device(src, out)
    s = _ordered(out, stream, [src])
    record = out.device.malloc(record_size, "normal_only")
    try:
        dvpp.mark_pending(record, size=record_size)
        launch(s, record.dev_addr)
    except BaseException:
        record.free()
        raise
    pending = dvpp.PendingResult(record, reader)
    if stream is not None:
        out.writer = stream
        return pending
    try:
        s.synchronize()
    except TaskFailedError as exc:
        raise error(exc, pending.result()) from None
    finally:
        out.writer = None
    return pending.result()


def _vpc(op: str, src: DeviceTensor, src_pic, out: DeviceTensor, out_pic,
         crop=None, paste=None, interpolation: str = "bilinear",
         stream: Stream | None = None) -> DeviceTensor:
    from . import dvpp
    _dense_uint8(op.lower(), ("src", src), ("out", out))
    for name, t, pic in (("src", src, src_pic), ("out", out, out_pic)):
        if t.nbytes < pic.size:
            raise InvalidArgumentError(
                "%s: %s holds %d bytes, its picture %d" % (
                    op.lower(), name, t.nbytes, pic.size))
    _same_device(src, out)
    s = _ordered(out, stream, [src])
    dvpp.launch_vpc(s, op, src.dev_addr, src_pic, out.dev_addr, out_pic,
                    crop, paste, interpolation)
    if stream is not None:
        out.writer = stream
    else:
        s.synchronize()
    return out


def vpc_resize(src: DeviceTensor, src_pic, out: DeviceTensor, out_pic,
               interpolation: str = "bilinear",
               stream: Stream | None = None) -> DeviceTensor:
    """DAVINCI_OP_VPC_RESIZE on the DVPP engine: the picture ``src`` holds
    (uint8, laid out as the :class:`davinci.dvpp.Picture` ``src_pic``)
    resized into ``out`` (``out_pic``), "bilinear" (OpenCV's INTER_LINEAR)
    or "nearest" (INTER_NEAREST) (DOC: DVPP VPC); ``out``. Without
    ``stream`` it runs on the default stream and returns once done."""
    return _vpc("VPC_RESIZE", src, src_pic, out, out_pic, None, None,
                interpolation, stream)


def vpc_crop(src: DeviceTensor, src_pic, out: DeviceTensor, out_pic, crop,
             paste=None, interpolation: str = "bilinear",
             stream: Stream | None = None) -> DeviceTensor:
    """DAVINCI_OP_VPC_CROP: the :class:`davinci.dvpp.Rect` ``crop`` of
    ``src`` resized into ``paste`` of ``out`` (default: all of it), the
    rest of ``out`` untouched; ``out``."""
    return _vpc("VPC_CROP", src, src_pic, out, out_pic, crop, paste,
                interpolation, stream)


def vpc_convert_color(src: DeviceTensor, src_pic, out: DeviceTensor,
                      out_pic, stream: Stream | None = None) -> DeviceTensor:
    """DAVINCI_OP_VPC_CONVERT_COLOR: ``src`` converted to ``out_pic``'s
    format (NV12, NV21, YUYV, RGB, BGR; JFIF full-range BT.601), the same
    size; ``out``."""
    return _vpc("VPC_CONVERT_COLOR", src, src_pic, out, out_pic,
                stream=stream)
def jpeg_encode(picture: DeviceTensor, out: DeviceTensor, width: int,
                height: int, width_stride: int | None = None,
                height_stride: int | None = None, quality: int = 75,
                format: str = "nv12", stream: Stream | None = None):
    """DAVINCI_OP_JPEGE_ENCODE on the DVPP engine: the YUV420SP picture
    ``picture`` holds (uint8, NV12 or NV21, ``width_stride`` a multiple
    of 16 and ``height_stride`` of 2, by default the width and height
    rounded up to them) into a baseline JPEG in ``out`` (uint8; at least
    ``davinci.jpege.predict_size(w, h)`` bytes never fails), at
    ``quality`` 1 .. 100 (DOC: DVPP JPEGE). Without ``stream``: runs on
    the default stream and returns its :class:`davinci.jpege.JpegeResult`
    (the file is ``out``'s first ``size`` bytes), or raises
    :class:`davinci.jpege.JpegEncodeError`. With one: returns a
    :class:`davinci.dvpp.PendingResult` whose ``result()`` reads the
    record once the stream is synchronized."""
    from . import jpege
    _dense_uint8("jpeg_encode", ("picture", picture), ("out", out))
    ws = -(-width // jpege.WIDTH_ALIGN) * jpege.WIDTH_ALIGN \
        if width_stride is None else width_stride
    hs = -(-height // jpege.HEIGHT_ALIGN) * jpege.HEIGHT_ALIGN \
        if height_stride is None else height_stride
    return _engine_task(
        picture, out, stream, jpege.RESULT_SIZE, jpege.read_result,
        jpege.JpegEncodeError, lambda s, record: jpege.launch_jpeg_encode(
            s, picture.dev_addr, picture.nbytes, out.dev_addr, out.nbytes,
            record, width, height, ws, hs, quality, format))


def png_decode(png: DeviceTensor, out: DeviceTensor, format: str = "auto",
               max_dim: int = 0, stream: Stream | None = None):
    """DAVINCI_OP_PNGD_DECODE on the DVPP engine: the PNG whose bytes
    ``png`` holds (uint8) into ``out`` (uint8, at least
    ``davinci.dvpp.png_out_size(w, h, channels)`` bytes), "rgb888",
    "rgba8888" or "auto" (RGBA for a file with alpha) at 128-pixel x
    16-row strides (DOC: DVPP PNGD). Without ``stream``: runs on the
    default stream and returns its :class:`davinci.dvpp.PngdResult`, or
    raises :class:`davinci.dvpp.PngDecodeError`. With one: returns a
    :class:`davinci.dvpp.PendingResult` whose ``result()`` reads the record
    once the stream is synchronized."""
    from . import dvpp
    _dense_uint8("png_decode", ("png", png), ("out", out))
    return _engine_task(
        png, out, stream, dvpp.PNG_RESULT_SIZE, dvpp.read_png_result,
        dvpp.PngDecodeError, lambda s, record: dvpp.launch_png_decode(
            s, png.dev_addr, png.nbytes, out.dev_addr, out.nbytes, record,
            format, max_dim))


#: compare() predicate name -> DAVINCI_CMP_* (the schema's enum)
CMP_PREDICATES = {v.lower(): i for i, v in
                  enumerate(schema.by_name("CMP").imm.values)}
