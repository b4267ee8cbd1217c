# SPDX-License-Identifier: GPL-2.0
"""The device's DVPP engine: JPEG and PNG decode (DOC: DVPP JPEGD and DOC:
DVPP PNGD in davinci.h) and VPC resize, crop, crop-and-paste and colour
conversion (DOC: DVPP VPC) as tasks.

:func:`launch_jpeg_decode` queues a DAVINCI_OP_JPEGD_DECODE on a stream:
the JPEG's bytes in device memory, an output of a given capacity and a
:class:`JpegdResult` record in device memory that the task writes (the
picture's geometry and the decoder's errno). The device reads the file
when the task starts, so an earlier task of the stream may write it.
:func:`read_header` reads a JPEG's frame header on the host, as pyACL's
``dvpp_jpeg_get_image_info`` does, and :func:`nv12_size` is the output's
size, ``dvpp_jpeg_predict_dec_size``'s answer. :func:`launch_png_decode`,
:func:`read_png_header` and :func:`png_out_size` are the same for PNG: a
DAVINCI_OP_PNGD_DECODE writing RGB888 or RGBA8888 at 128-pixel x 16-row
strides and a :class:`PngdResult`. :func:`launch_vpc` queues a
VPC_RESIZE, VPC_CROP or VPC_CONVERT_COLOR between two :class:`Picture`
layouts in device memory, after :func:`check_vpc` has applied DVPP's
rules (which the device applies too).

>>> from davinci import dvpp
>>> dvpp.nv12_size(1920, 1080)
3133440
>>> dvpp.png_out_size(1920, 1080, 4)
8355840
"""

from __future__ import annotations

import ctypes
import errno as _errno
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _uapi, schema
from .errors import InvalidArgumentError, TaskFailedError
from .stream import make_task

if TYPE_CHECKING:
    from .memory import Buffer
    from .stream import Stream

__all__ = ["JpegHeader", "JpegdResult", "JpegDecodeError", "read_header",
           "nv12_size", "launch_jpeg_decode", "read_result", "mark_pending",
           "PendingResult", "EngineResult", "RESULT_SIZE",
           "FORMATS", "SUBSAMPLING_NAMES", "MAX_DIM", "WIDTH_ALIGN",
           "HEIGHT_ALIGN", "Picture", "Rect", "VpcError", "check_vpc",
           "launch_vpc", "VPC_OPS", "VPC_FORMATS", "INTERPOLATIONS",
           "PngHeader", "PngdResult", "PngDecodeError",
           "read_png_header", "png_out_size", "launch_png_decode",
           "read_png_result", "PNG_FORMATS", "PNG_MAX_DIM",
           "PNG_RESULT_SIZE"]

OP = schema.by_name("JPEGD_DECODE")
#: output formats (the op's imm): "nv12" (U first) and "nv21" (V first)
FORMATS = {v.lower(): i for i, v in enumerate(OP.imm.values)}
#: DVPP JPEGD's largest side, and its output alignment
MAX_DIM = 8192
WIDTH_ALIGN, HEIGHT_ALIGN = 128, 16
#: bytes of struct davinci_jpegd_result
RESULT_SIZE = ctypes.sizeof(_uapi.davinci_jpegd_result)
#: DAVINCI_JPEGD_* -> name
SUBSAMPLING_NAMES = {_uapi.DAVINCI_JPEGD_GREY: "grey",
                     _uapi.DAVINCI_JPEGD_444: "4:4:4",
                     _uapi.DAVINCI_JPEGD_422: "4:2:2",
                     _uapi.DAVINCI_JPEGD_420: "4:2:0",
                     _uapi.DAVINCI_JPEGD_440: "4:4:0"}
#: the luma factors over the chroma's -> DAVINCI_JPEGD_*
_RATIOS = {(1, 1): _uapi.DAVINCI_JPEGD_444, (2, 1): _uapi.DAVINCI_JPEGD_422,
           (2, 2): _uapi.DAVINCI_JPEGD_420, (1, 2): _uapi.DAVINCI_JPEGD_440}
#: a value of the result record's error the device never writes: the
#: record of a task that has not completed yet
PENDING = 1


def _align(v: int, a: int) -> int:
    return -(-v // a) * a


def nv12_size(width: int, height: int) -> int:
    """Bytes of a width x height picture in YUV420SP at DVPP JPEGD's 128 x
    16 alignment."""
    return _align(width, WIDTH_ALIGN) * _align(height, HEIGHT_ALIGN) * 3 // 2


@dataclass(frozen=True)
class JpegHeader:
    """A JPEG's frame header: ``subsampling`` is a DAVINCI_JPEGD_* or None
    for a sampling the engine does not take; ``supported``: the engine
    decodes this kind of file (Huffman SOF0/1/2, 8 bits, 1 or 3
    components, a subsampling it takes, sides at most MAX_DIM)."""
    width: int
    height: int
    components: int
    subsampling: int | None
    progressive: bool
    sof: int                        # the SOFn marker's n
    precision: int

    @property
    def supported(self) -> bool:
        return (self.sof in (0, 1, 2) and self.precision == 8 and
                self.components in (1, 3) and self.subsampling is not None
                and 1 <= self.width <= MAX_DIM and
                1 <= self.height <= MAX_DIM)

    @property
    def out_size(self) -> int:
        return nv12_size(self.width, self.height)


def read_header(data: bytes) -> JpegHeader:
    """The frame header of the JPEG ``data`` (its markers up to the first
    SOFn); ValueError for data that is not a JPEG or ends before one."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG: it does not start with the SOI marker "
                         "FF D8")
    pos = 2
    while True:
        while pos < len(data) and data[pos] == 0xFF and \
                pos + 1 < len(data) and data[pos + 1] == 0xFF:
            pos += 1                # fill bytes
        if pos + 4 > len(data):
            raise ValueError("the JPEG ends before its frame header (SOFn)")
        if data[pos] != 0xFF:
            raise ValueError("not a JPEG: no marker at byte %d" % pos)
        marker = data[pos + 1]
        if marker in (0xD8, 0xD9, 0xDA) or 0xD0 <= marker <= 0xD7:
            raise ValueError("the JPEG has marker %02X before its frame "
                             "header" % marker)
        length = struct.unpack_from(">H", data, pos + 2)[0]
        if length < 2 or pos + 2 + length > len(data):
            raise ValueError("the JPEG's segment %02X at byte %d runs past "
                             "its end" % (marker, pos))
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return _frame(data[pos + 4:pos + 2 + length], marker - 0xC0)
        pos += 2 + length


def _frame(seg: bytes, sof: int) -> JpegHeader:
    if len(seg) < 6:
        raise ValueError("the JPEG's frame header is cut short")
    precision, height, width, n = struct.unpack_from(">BHHB", seg)
    if n == 0 or len(seg) < 6 + 3 * n:
        raise ValueError("the JPEG's frame header names %d components in "
                         "%d bytes" % (n, len(seg)))
    factors = [(seg[6 + 3 * i + 1] >> 4, seg[6 + 3 * i + 1] & 15)
               for i in range(n)]
    sub = None
    if n == 1:
        sub = _uapi.DAVINCI_JPEGD_GREY
    elif n == 3 and factors[1] == factors[2] and all(
            f[0] and f[1] for f in factors) and \
            factors[0][0] % factors[1][0] == 0 and \
            factors[0][1] % factors[1][1] == 0:
        sub = _RATIOS.get((factors[0][0] // factors[1][0],
                           factors[0][1] // factors[1][1]))
    return JpegHeader(width, height, n, sub, sof == 2, sof, precision)


class EngineResult:
    """What every DVPP engine's result record answers: ``error`` is 0 or
    the engine's negative errno, PENDING until its task completed."""
    error: int

    @property
    def done(self) -> bool:
        return self.error != PENDING

    @property
    def ok(self) -> bool:
        return self.error == 0

    @property
    def error_name(self) -> str:
        return _errno.errorcode.get(-self.error, str(self.error)) \
            if self.error < 0 else "OK" if not self.error else "PENDING"


@dataclass(frozen=True)
class JpegdResult(EngineResult):
    """What a JPEGD_DECODE task wrote (struct davinci_jpegd_result):
    ``error`` is 0 or the decoder's negative errno; ``done`` is false for
    a task that has not completed."""
    error: int
    width: int
    height: int
    components: int
    subsampling: int
    width_stride: int
    height_stride: int
    progressive: bool
    out_size: int


def read_result(buf: "Buffer", offset: int = 0) -> JpegdResult:
    """The result record at ``offset`` of ``buf``."""
    r = _uapi.davinci_jpegd_result.from_buffer_copy(
        buf.read(RESULT_SIZE, offset))
    return JpegdResult(int(r.error), int(r.width), int(r.height),
                       int(r.components), int(r.subsampling),
                       int(r.width_stride), int(r.height_stride),
                       bool(r.progressive), int(r.out_size))


def mark_pending(buf: "Buffer", offset: int = 0,
                 size: int = RESULT_SIZE) -> None:
    """Write a record (of ``size`` bytes: PNG_RESULT_SIZE for a PNG
    decode's) whose ``done`` is false, before launching into it."""
    buf.write(struct.pack("<i", PENDING) + bytes(size - 4), offset)


def _check_range(name: str, buf_of, addr: int, nbytes: int) -> None:
    hit = buf_of(addr)
    if hit is None:
        raise InvalidArgumentError("%s %#x is not device memory of this "
                                   "context" % (name, addr))
    buf, off = hit
    if off + nbytes > buf.size:
        raise InvalidArgumentError(
            "%s: %d bytes at %#x run past the end of its allocation (%d "
            "bytes from offset %d)" % (name, nbytes, addr, buf.size, off))


def check_operands(dev, spans) -> None:
    """Refuse what the device would of an engine task's operands
    ``spans``, (name, device address, bytes) each: one outside the
    context's memory, two that meet."""
    for name, addr, n in spans:
        _check_range(name, dev.find_buffer, addr, n)
    for i, (na, a, la) in enumerate(spans):
        for nb, b, lb in spans[i + 1:]:
            if a < b + lb and b < a + la:
                raise InvalidArgumentError("%s and %s share memory" % (na,
                                                                       nb))


def launch_engine_task(stream: "Stream", op, block: bytes, spans,
                       imm: int) -> int:
    """Queue a DVPP task of schema op ``op`` that writes a result record:
    its parameter block ``block``, its operands ``spans`` (name, device
    address, bytes) of src0, dst and src1 (the record), src0's bytes its
    count, checked first (check_operands); the task's sequence number."""
    dev = stream.device
    check_operands(dev, spans)
    (_, src, count), (_, dst, _), (_, result, _) = spans
    return dev.param_blocks.launch(stream, block, lambda at: make_task(
        op.opcode, dst=dst, src0=src, src1=result, count=count, imm=imm,
        params=at, params_size=op.params.size,
        params_version=op.params.version))


def launch_jpeg_decode(stream: "Stream", src: int, size: int, dst: int,
                       dst_size: int, result: int, fmt: str = "nv12",
                       max_dim: int = 0) -> int:
    """Queue the decode of the ``size``-byte JPEG at device address
    ``src`` into ``dst_size`` bytes at ``dst`` (``fmt`` "nv12" or
    "nv21"), its JpegdResult written at ``result``; the task's sequence
    number. Checks what the device would refuse before submitting:
    operands outside the context's memory, operands that meet, a size of
    0, a format or ``max_dim`` it does not take."""
    if fmt not in FORMATS:
        raise InvalidArgumentError("JPEG decode to %r: the engine writes %s"
                                   % (fmt, " or ".join(FORMATS)))
    if size <= 0 or dst_size <= 0:
        raise InvalidArgumentError("JPEG decode of %d bytes into %d: both "
                                   "must be > 0" % (size, dst_size))
    if not 0 <= max_dim <= MAX_DIM:
        raise InvalidArgumentError("max_dim %d: 0 (%d) .. %d" % (
            max_dim, MAX_DIM, MAX_DIM))
    return launch_engine_task(
        stream, OP, OP.params.pack(dst_size=dst_size, max_dim=max_dim),
        (("the JPEG", src, size), ("the output", dst, dst_size),
         ("the result record", result, RESULT_SIZE)), FORMATS[fmt])


class PendingResult:
    """The result record of a queued DVPP task, in device memory it owns:
    :meth:`result` reads it (``done`` false until the task completed) and
    frees the memory."""

    def __init__(self, record: "Buffer", reader=None):
        self._record = record
        self._read = reader or read_result
        self._result = None

    def result(self):
        """The record's EngineResult (``reader``'s: read_result's
        JpegdResult by default)."""
        if self._result is None:
            r = self._read(self._record)
            if not r.done:
                return r
            self._result = r
            self._record.free()
        return self._result


class JpegDecodeError(TaskFailedError):
    """A JPEG decode task failed: ``result`` is what it wrote (its
    ``error``, the decoder's errno, says why)."""

    def __init__(self, cause: TaskFailedError, result: JpegdResult):
        why = {-_errno.EINVAL: "the data is not a JPEG the standard allows "
               "(corrupt or truncated)",
               -_errno.EOPNOTSUPP: "a JPEG the DVPP engine does not take "
               "(arithmetic coding, 12 bits, 4:1:1, 2 or 4 components ...)",
               -_errno.E2BIG: "a side is above the engine's limit",
               -_errno.ENOSPC: "the output buffer is smaller than the "
               "picture's %d bytes: allocate dvpp.nv12_size(w, h)"
               % result.out_size,
               -_errno.ENOMEM: "the device could not allocate the "
               "decoder's scratch memory"}.get(result.error, "")
        TaskFailedError.__init__(
            self, "JPEG decode failed with %s: %s (%s)" % (
                result.error_name, why, cause.message),
            cause.status, cause.stream_id, cause.seq, cause.opcode)
        self.result = result


# ---------------------------------------------------------------------------
# VPC: resize, crop (and paste), colour conversion (DOC: DVPP VPC)
# ---------------------------------------------------------------------------

VPC_OPS = {name: schema.by_name(name) for name in (
    "VPC_RESIZE", "VPC_CROP", "VPC_CONVERT_COLOR")}
#: VPC picture formats -> DAVINCI_VPC_FMT_* (acldvppPixelFormat's numbers)
VPC_FORMATS = {"nv12": _uapi.DAVINCI_VPC_FMT_NV12,
               "nv21": _uapi.DAVINCI_VPC_FMT_NV21,
               "yuyv": _uapi.DAVINCI_VPC_FMT_YUYV,
               "rgb": _uapi.DAVINCI_VPC_FMT_RGB,
               "bgr": _uapi.DAVINCI_VPC_FMT_BGR}
#: bytes of one pixel's row share, by format (YUV420SP: the Y plane's)
_ROW_BYTES = {"nv12": 1, "nv21": 1, "yuyv": 2, "rgb": 3, "bgr": 3}
#: the interpolations a resize takes -> DAVINCI_VPC_*
INTERPOLATIONS = {"bilinear": _uapi.DAVINCI_VPC_BILINEAR,
                  "nearest": _uapi.DAVINCI_VPC_NEAREST}
VPC_MIN_WIDTH, VPC_MIN_HEIGHT = (_uapi.DAVINCI_VPC_MIN_WIDTH,
                                 _uapi.DAVINCI_VPC_MIN_HEIGHT)
VPC_MAX_DIM = _uapi.DAVINCI_VPC_MAX_DIM
#: a YUV420SP input's limits (DVPP's 8K mode): sides, height stride
VPC_MAX_DIM_8K, VPC_MAX_HSTRIDE_8K = (_uapi.DAVINCI_VPC_MAX_DIM_8K,
                                      _uapi.DAVINCI_VPC_MAX_HSTRIDE_8K)
VPC_MIN_WSTRIDE, VPC_MAX_WSTRIDE = (_uapi.DAVINCI_VPC_MIN_WSTRIDE,
                                    _uapi.DAVINCI_VPC_MAX_WSTRIDE)
#: VPC's scale range, output over input size
VPC_MIN_SCALE, VPC_MAX_SCALE = 1 / 32, 16


class VpcError(InvalidArgumentError):
    """A VPC picture, rect or pair DVPP's rules refuse (DOC: DVPP VPC)."""


def _limit_note(fmt: str, output: bool) -> str:
    """Why a picture's limit is 4096 where DVPP's 8K mode goes to 8192."""
    if output:
        return " (a VPC output is at most 4096 x 4096)"
    if fmt not in ("nv12", "nv21"):
        return (" (only an NV12 or NV21 input may be larger, up to %d x %d)"
                % (VPC_MAX_DIM_8K, VPC_MAX_DIM_8K))
    return ""


@dataclass(frozen=True)
class Picture:
    """A VPC picture's layout: ``format`` one of VPC_FORMATS, ``width``
    and ``height`` in pixels, ``width_stride`` in bytes, ``height_stride``
    in rows."""
    format: str
    width: int
    height: int
    width_stride: int
    height_stride: int

    @classmethod
    def aligned(cls, fmt: str, width: int, height: int) -> "Picture":
        """The picture at DVPP VPC's alignment: rows of ALIGN(row bytes,
        16) (32 at least), ALIGN(height, 2) of them."""
        if fmt not in VPC_FORMATS:
            raise VpcError("VPC format %r: one of %s" % (
                fmt, ", ".join(VPC_FORMATS)))
        return cls(fmt, width, height,
                   max(_align(width * _ROW_BYTES[fmt], 16), VPC_MIN_WSTRIDE),
                   _align(height, 2))

    @property
    def yuv(self) -> bool:
        return self.format in ("nv12", "nv21", "yuyv")

    @property
    def size(self) -> int:
        """Bytes of the picture: ws * hs * 3 / 2 for YUV420SP, else ws *
        hs."""
        n = self.width_stride * self.height_stride
        return n * 3 // 2 if self.format in ("nv12", "nv21") else n

    def check(self, what: str, output: bool) -> None:
        """Raise VpcError unless DVPP's VPC takes this picture (as an
        output when ``output``): up to 4096 x 4096, an NV12 or NV21 input
        up to 8192 x 8192 with a height stride up to 16384 (DVPP's 8K
        mode)."""
        if self.format not in VPC_FORMATS:
            raise VpcError("%s: format %r is none of VPC's %s" % (
                what, self.format, ", ".join(VPC_FORMATS)))
        w, h, ws, hs = (self.width, self.height, self.width_stride,
                        self.height_stride)
        big = not output and self.format in ("nv12", "nv21")
        dim = VPC_MAX_DIM_8K if big else VPC_MAX_DIM
        max_hs = VPC_MAX_HSTRIDE_8K if big else VPC_MAX_DIM
        if not (VPC_MIN_WIDTH <= w <= dim and VPC_MIN_HEIGHT <= h <= dim):
            raise VpcError("%s: %d x %d is outside VPC's %d x %d .. %d x %d"
                           "%s" % (what, w, h, VPC_MIN_WIDTH, VPC_MIN_HEIGHT,
                                   dim, dim, _limit_note(self.format,
                                                         output)))
        row = w * _ROW_BYTES[self.format]
        if ws % 16 or not VPC_MIN_WSTRIDE <= ws <= VPC_MAX_WSTRIDE or \
                ws < row:
            raise VpcError("%s: width stride %d must be a multiple of 16, "
                           "%d .. %d and at least the row's %d bytes (use %d)"
                           % (what, ws, VPC_MIN_WSTRIDE, VPC_MAX_WSTRIDE,
                              row, max(_align(row, 16), VPC_MIN_WSTRIDE)))
        if hs % 2 or hs > max_hs or hs < h:
            raise VpcError("%s: height stride %d must be even, at most %d "
                           "and at least the height %d (use %d)" % (
                               what, hs, max_hs, h, _align(h, 2)))
        if self.format == "yuyv" and w % 2:
            raise VpcError("%s: a YUYV picture's width must be even, not %d"
                           % (what, w))
        if output and self.format in ("nv12", "nv21") and (w % 2 or h % 2):
            raise VpcError("%s: a YUV420SP output's width and height must "
                           "be even, not %d x %d" % (what, w, h))

    def whole(self) -> "Rect":
        return Rect(0, 0, self.width - 1, self.height - 1)


@dataclass(frozen=True)
class Rect:
    """A rect of a picture, as DVPP's ROI configs give it: its first and
    last column and row (both included)."""
    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left + 1

    @property
    def height(self) -> int:
        return self.bottom - self.top + 1

    def inside(self, pic: Picture) -> bool:
        return 0 <= self.left <= self.right < pic.width and \
            0 <= self.top <= self.bottom < pic.height

    def aligned(self, left_align: int) -> bool:
        return self.left % left_align == 0 and self.top % 2 == 0 and \
            self.right % 2 == 1 and self.bottom % 2 == 1 and \
            self.width >= VPC_MIN_WIDTH and self.height >= VPC_MIN_HEIGHT


def check_vpc(op: str, src: Picture, dst: Picture, crop: Rect, paste: Rect,
              interpolation: str = "bilinear") -> None:
    """Raise VpcError for what the device would refuse of a VPC task
    (``op`` "VPC_RESIZE", "VPC_CROP" or "VPC_CONVERT_COLOR"): the rules of
    DOC: DVPP VPC, which the core checks too."""
    if interpolation not in INTERPOLATIONS:
        raise VpcError("interpolation %r: %s" % (
            interpolation, " or ".join(INTERPOLATIONS)))
    src.check("the input picture", False)
    dst.check("the output picture", True)
    for what, r, pic in (("the crop rect", crop, src),
                         ("the paste rect", paste, dst)):
        if not r.inside(pic):
            raise VpcError("%s %s is not inside the %d x %d picture" % (
                what, r, pic.width, pic.height))
    if op == "VPC_CONVERT_COLOR":
        if (src.width, src.height) != (dst.width, dst.height):
            raise VpcError("a colour conversion keeps the size: %d x %d in, "
                           "%d x %d out" % (src.width, src.height, dst.width,
                                            dst.height))
        return
    if op == "VPC_CROP":
        if not crop.aligned(2):
            raise VpcError("the crop rect %s: DVPP takes an even left and "
                           "top, an odd right and bottom, at least %d x %d"
                           % (crop, VPC_MIN_WIDTH, VPC_MIN_HEIGHT))
        if crop.width > VPC_MAX_DIM or crop.height > VPC_MAX_DIM:
            raise VpcError("the crop rect %s is %d x %d: DVPP crops at most "
                           "%d x %d, of an 8K input too" % (
                               crop, crop.width, crop.height, VPC_MAX_DIM,
                               VPC_MAX_DIM))
        if paste != dst.whole() and not paste.aligned(16):
            raise VpcError("the paste rect %s: DVPP takes a left that is a "
                           "multiple of 16, an even top, an odd right and "
                           "bottom, at least %d x %d"
                           % (paste, VPC_MIN_WIDTH, VPC_MIN_HEIGHT))
    if src.yuv != dst.yuv:
        raise VpcError("a %s of %s into %s: resize within YUV (nv12, nv21, "
                       "yuyv) or within RGB (rgb, bgr); convert the colour "
                       "with VPC_CONVERT_COLOR" % (op.lower(), src.format,
                                                   dst.format))
    for a, b, axis in ((crop.width, paste.width, "width"),
                       (crop.height, paste.height, "height")):
        if not (b <= 16 * a and 32 * b >= a):
            raise VpcError("a %s from %d to %d: VPC scales by 1/32 .. 16"
                           % (axis, a, b))


def launch_vpc(stream: "Stream", op: str, src: int, src_pic: Picture,
               dst: int, dst_pic: Picture, crop: Rect | None = None,
               paste: Rect | None = None,
               interpolation: str = "bilinear") -> int:
    """Queue the VPC task ``op`` ("VPC_RESIZE", "VPC_CROP",
    "VPC_CONVERT_COLOR") from the picture at device address ``src`` to the
    one at ``dst``; ``crop`` and ``paste`` default to the whole pictures.
    Checks what the device would refuse before submitting (VpcError) and
    that the pictures lie in the context's memory and do not meet; the
    task's sequence number."""
    desc = VPC_OPS.get(op)
    if desc is None:
        raise InvalidArgumentError("VPC op %r: one of %s" % (
            op, ", ".join(VPC_OPS)))
    crop = crop or src_pic.whole()
    paste = paste or dst_pic.whole()
    check_vpc(op, src_pic, dst_pic, crop, paste, interpolation)
    dev = stream.device
    check_operands(dev, (("the input picture", src, src_pic.size),
                         ("the output picture", dst, dst_pic.size)))
    block = desc.params.pack(
        src_format=VPC_FORMATS[src_pic.format], src_width=src_pic.width,
        src_height=src_pic.height, src_width_stride=src_pic.width_stride,
        src_height_stride=src_pic.height_stride,
        dst_format=VPC_FORMATS[dst_pic.format], dst_width=dst_pic.width,
        dst_height=dst_pic.height, dst_width_stride=dst_pic.width_stride,
        dst_height_stride=dst_pic.height_stride,
        crop_left=crop.left, crop_top=crop.top, crop_right=crop.right,
        crop_bottom=crop.bottom, paste_left=paste.left, paste_top=paste.top,
        paste_right=paste.right, paste_bottom=paste.bottom,
        interpolation=0 if op == "VPC_CONVERT_COLOR"
        else INTERPOLATIONS[interpolation])
    return dev.param_blocks.launch(stream, block, lambda at: make_task(
        desc.opcode, dst=dst, src0=src, params=at,
        params_size=desc.params.size, params_version=desc.params.version))


# PNG decode (PNGD)
# ---------------------------------------------------------------------------

PNG_OP = schema.by_name("PNGD_DECODE")
#: output formats (the op's imm): "rgb888", "rgba8888", "auto" (RGBA8888
#: for a file with alpha, else RGB888)
PNG_FORMATS = {v.lower(): i for i, v in enumerate(PNG_OP.imm.values)}
#: DVPP PNGD's largest side
PNG_MAX_DIM = 4096
#: bytes of struct davinci_pngd_result
PNG_RESULT_SIZE = ctypes.sizeof(_uapi.davinci_pngd_result)
_PNG_SIG = b"\x89PNG\r\n\x1a\n"
#: colour type -> the file's components (pngd.h)
_PNG_COMPONENTS = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}
_PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8),
               4: (8, 16), 6: (8, 16)}


def png_out_size(width: int, height: int, channels: int) -> int:
    """Bytes of a width x height picture of ``channels`` (3: RGB888, 4:
    RGBA8888) at DVPP PNGD's 128-pixel x 16-row alignment."""
    return _align(width, WIDTH_ALIGN) * channels * _align(height,
                                                          HEIGHT_ALIGN)


@dataclass(frozen=True)
class PngHeader:
    """A PNG's IHDR, and whether a tRNS chunk comes before its first IDAT
    (``alpha``: colour type 4 or 6, or tRNS). ``supported``: the engine
    decodes this kind of file (IHDR values PNG allows, sides at most
    PNG_MAX_DIM)."""
    width: int
    height: int
    bit_depth: int
    colour_type: int
    interlace: int
    trns: bool

    @property
    def alpha(self) -> bool:
        return self.colour_type in (4, 6) or self.trns

    @property
    def components(self) -> int:
        return _PNG_COMPONENTS[self.colour_type]

    @property
    def supported(self) -> bool:
        return 1 <= self.width <= PNG_MAX_DIM and \
            1 <= self.height <= PNG_MAX_DIM

    def channels(self, fmt: str) -> int:
        """Output channels for format ``fmt`` (PNG_FORMATS)."""
        return 4 if fmt == "rgba8888" or (fmt == "auto" and self.alpha) \
            else 3

    def out_size(self, fmt: str) -> int:
        return png_out_size(self.width, self.height, self.channels(fmt))


def read_png_header(data: bytes) -> PngHeader:
    """The IHDR of the PNG ``data``, and whether tRNS precedes its first
    IDAT (the chunks are walked, their CRCs not checked: the engine checks
    them); ValueError for data that is not a PNG or ends before IHDR."""
    if data[:8] != _PNG_SIG:
        raise ValueError("not a PNG: it does not start with the signature "
                         "89 50 4E 47 0D 0A 1A 0A")
    if len(data) < 33 or data[12:16] != b"IHDR" or \
            struct.unpack_from(">I", data, 8)[0] != 13:
        raise ValueError("the PNG's first chunk is not a whole IHDR")
    w, h, depth, ctype, comp, filt, il = struct.unpack_from(">IIBBBBB", data,
                                                             16)
    if not w or not h or depth not in _PNG_DEPTHS.get(ctype, ()) or comp \
            or filt or il > 1:
        raise ValueError("the PNG's IHDR is invalid: %dx%d, bit depth %d, "
                         "colour type %d, methods %d/%d/%d" % (
                             w, h, depth, ctype, comp, filt, il))
    trns, pos = False, 33
    while pos + 8 <= len(data):
        n = struct.unpack_from(">I", data, pos)[0]
        kind = data[pos + 4:pos + 8]
        if kind in (b"IDAT", b"IEND"):
            break
        trns |= kind == b"tRNS"
        pos += 12 + n
    return PngHeader(w, h, depth, ctype, il, trns)


@dataclass(frozen=True)
class PngdResult(EngineResult):
    """What a PNGD_DECODE task wrote (struct davinci_pngd_result):
    ``error`` is 0 or the decoder's negative errno; ``done`` is false for
    a task that has not completed."""
    error: int
    width: int
    height: int
    bit_depth: int
    colour_type: int
    interlace: int
    components: int
    channels: int
    width_stride: int
    height_stride: int
    out_size: int


def read_png_result(buf: "Buffer", offset: int = 0) -> PngdResult:
    """The PNG decode's result record at ``offset`` of ``buf``."""
    r = _uapi.davinci_pngd_result.from_buffer_copy(
        buf.read(PNG_RESULT_SIZE, offset))
    return PngdResult(*(int(getattr(r, f)) for f, _ in r._fields_))


def launch_png_decode(stream: "Stream", src: int, size: int, dst: int,
                      dst_size: int, result: int, fmt: str = "auto",
                      max_dim: int = 0) -> int:
    """Queue the decode of the ``size``-byte PNG at device address ``src``
    into ``dst_size`` bytes at ``dst`` (``fmt`` one of PNG_FORMATS), its
    PngdResult written at ``result``; the task's sequence number. Checks
    what the device would refuse before submitting, as
    launch_jpeg_decode."""
    if fmt not in PNG_FORMATS:
        raise InvalidArgumentError("PNG decode to %r: the engine writes %s"
                                   % (fmt, ", ".join(PNG_FORMATS)))
    if size <= 0 or dst_size <= 0:
        raise InvalidArgumentError("PNG decode of %d bytes into %d: both "
                                   "must be > 0" % (size, dst_size))
    if not 0 <= max_dim <= PNG_MAX_DIM:
        raise InvalidArgumentError("max_dim %d: 0 (%d) .. %d" % (
            max_dim, PNG_MAX_DIM, PNG_MAX_DIM))
    return launch_engine_task(
        stream, PNG_OP, PNG_OP.params.pack(dst_size=dst_size,
                                           max_dim=max_dim),
        (("the PNG", src, size), ("the output", dst, dst_size),
         ("the result record", result, PNG_RESULT_SIZE)), PNG_FORMATS[fmt])


class PngDecodeError(TaskFailedError):
    """A PNG decode task failed: ``result`` is what it wrote (its
    ``error``, the decoder's errno, says why)."""

    def __init__(self, cause: TaskFailedError, result: PngdResult):
        why = {-_errno.EINVAL: "the data is not a PNG the standard allows "
               "(a bad CRC or Adler-32, a corrupt or truncated zlib stream "
               "or file)",
               -_errno.EOPNOTSUPP: "the PNG has a critical chunk the DVPP "
               "engine does not know",
               -_errno.E2BIG: "a side is above the engine's limit",
               -_errno.ENOSPC: "the output buffer is smaller than the "
               "picture's %d bytes: allocate dvpp.png_out_size(w, h, "
               "channels)" % result.out_size,
               -_errno.ENOMEM: "the device could not allocate the "
               "decoder's scratch memory"}.get(result.error, "")
        TaskFailedError.__init__(
            self, "PNG decode failed with %s: %s (%s)" % (
                result.error_name, why, cause.message),
            cause.status, cause.stream_id, cause.seq, cause.opcode)
        self.result = result
