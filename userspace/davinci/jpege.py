# SPDX-License-Identifier: GPL-2.0
"""The device's DVPP engine: JPEG encode as a task (DOC: DVPP JPEGE in
davinci.h).

:func:`launch_jpeg_encode` queues a DAVINCI_OP_JPEGE_ENCODE on a stream:
a YUV420SP picture (NV12 or NV21, width stride a multiple of 16, height
stride of 2) in device memory, an output buffer of a given capacity and
a :class:`JpegeResult` record in device memory that the task writes (the
file's size, or the encoder's errno). :func:`predict_size` is the largest
file a picture of that size can encode to, what pyACL's
``dvpp_jpeg_predict_enc_size`` answers: an output of that size never
fails.

>>> from davinci import jpege
>>> jpege.predict_size(1920, 1080)
20380227
>>> jpege.picture_size(1920, 1080)
3110400
"""

from __future__ import annotations

import ctypes
import errno as _errno
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _uapi, schema
from . import dvpp
from .dvpp import EngineResult
from .errors import InvalidArgumentError, TaskFailedError

if TYPE_CHECKING:
    from .memory import Buffer
    from .stream import Stream

__all__ = ["JpegeResult", "JpegEncodeError", "predict_size", "picture_size",
           "launch_jpeg_encode", "read_result", "mark_pending", "check_picture", "RESULT_SIZE",
           "FORMATS", "MAX_DIM", "WIDTH_ALIGN", "HEIGHT_ALIGN"]

OP = schema.by_name("JPEGE_ENCODE")
#: input formats (the op's imm): "nv12" (U first) and "nv21" (V first)
FORMATS = {v.lower(): i for i, v in enumerate(OP.imm.values)}
#: the engine's largest side, and the strides' alignment it takes
MAX_DIM = 8192
WIDTH_ALIGN, HEIGHT_ALIGN = 16, 2
#: bytes of struct davinci_jpege_result
RESULT_SIZE = ctypes.sizeof(_uapi.davinci_jpege_result)
#: a value of the record's error the device never writes: not completed
#: the bound's terms (kmod/core/jpege.c, NUMERICS.md): the markers'
#: bytes and the most bits an 8 x 8 block takes
_MARKER_BYTES = 625
_BLOCK_BITS = 16 + 11 + 63 * (16 + 10)


def predict_size(width: int, height: int) -> int:
    """The largest JPEG a ``width`` x ``height`` picture encodes to, at any
    quality and content (the core's dv_jpege_predict_size)."""
    mcus = -(-width // 16) * -(-height // 16)
    return _MARKER_BYTES + 2 * -(-(mcus * 6 * _BLOCK_BITS + 7) // 8)


def picture_size(width_stride: int, height_stride: int) -> int:
    """Bytes of a YUV420SP picture with these strides."""
    return width_stride * height_stride * 3 // 2


def check_picture(width: int, height: int, width_stride: int,
                  height_stride: int) -> None:
    """InvalidArgumentError, saying what to change, for a geometry the
    engine refuses."""
    if not (1 <= width <= MAX_DIM and 1 <= height <= MAX_DIM):
        raise InvalidArgumentError("JPEG encode of %d x %d: sides are 1 .. "
                                   "%d" % (width, height, MAX_DIM))
    if width_stride % WIDTH_ALIGN or width_stride < width:
        raise InvalidArgumentError(
            "JPEG encode: width stride %d must be a multiple of %d and at "
            "least the width %d (%d)" % (width_stride, WIDTH_ALIGN, width,
                                         -(-width // 16) * 16))
    if height_stride % HEIGHT_ALIGN or height_stride < height:
        raise InvalidArgumentError(
            "JPEG encode: height stride %d must be a multiple of %d and at "
            "least the height %d (%d)" % (height_stride, HEIGHT_ALIGN,
                                          height, -(-height // 2) * 2))
    if width_stride > MAX_DIM + WIDTH_ALIGN or \
            height_stride > MAX_DIM + HEIGHT_ALIGN:
        raise InvalidArgumentError("JPEG encode: strides %d x %d above the "
                                   "engine's" % (width_stride, height_stride))


@dataclass(frozen=True)
class JpegeResult(EngineResult):
    """What a JPEGE_ENCODE task wrote (struct davinci_jpege_result):
    ``error`` 0 and the file's ``size``, or the encoder's negative errno;
    ``done`` is false for a task that has not completed."""
    error: int
    size: int


def read_result(buf: "Buffer", offset: int = 0) -> JpegeResult:
    """The result record at ``offset`` of ``buf``."""
    r = _uapi.davinci_jpege_result.from_buffer_copy(
        buf.read(RESULT_SIZE, offset))
    return JpegeResult(int(r.error), int(r.size))


def mark_pending(buf: "Buffer", offset: int = 0) -> None:
    """Write a record whose ``done`` is false, before launching into it."""
    dvpp.mark_pending(buf, offset, size=RESULT_SIZE)


def launch_jpeg_encode(stream: "Stream", src: int, src_size: int, dst: int,
                       dst_size: int, result: int, width: int, height: int,
                       width_stride: int, height_stride: int,
                       quality: int = 75, fmt: str = "nv12") -> int:
    """Queue the encode of the picture of ``src_size`` bytes at device
    address ``src`` into ``dst_size`` bytes at ``dst``, its JpegeResult
    written at ``result``; the task's sequence number. Checks what the
    device would refuse before submitting: a geometry or quality it does
    not take, a picture shorter than its strides, operands outside the
    context's memory or that meet."""
    if fmt not in FORMATS:
        raise InvalidArgumentError("JPEG encode of %r: the engine reads %s"
                                   % (fmt, " or ".join(FORMATS)))
    check_picture(width, height, width_stride, height_stride)
    if isinstance(quality, bool) or not isinstance(quality, int) or \
            not 1 <= quality <= 100:
        raise InvalidArgumentError("JPEG encode quality %r: 1 .. 100"
                                   % (quality,))
    need = picture_size(width_stride, height_stride)
    if src_size < need:
        raise InvalidArgumentError(
            "JPEG encode: a %d x %d picture at strides %d x %d is %d bytes, "
            "not %d" % (width, height, width_stride, height_stride, need,
                        src_size))
    if dst_size <= 0:
        raise InvalidArgumentError("JPEG encode into %d bytes: allocate "
                                   "jpege.predict_size(w, h)" % dst_size)
    block = OP.params.pack(dst_size=dst_size, width=width, height=height,
                           width_stride=width_stride,
                           height_stride=height_stride, quality=quality)
    return dvpp.launch_engine_task(
        stream, OP, block,
        (("the picture", src, src_size), ("the output", dst, dst_size),
         ("the result record", result, RESULT_SIZE)), FORMATS[fmt])


class JpegEncodeError(TaskFailedError):
    """A JPEG encode task failed: ``result`` is what it wrote (its
    ``error``, the encoder's errno, says why)."""

    def __init__(self, cause: TaskFailedError, result: JpegeResult):
        why = {-_errno.ENOSPC: "the output buffer is smaller than the file: "
               "allocate jpege.predict_size(w, h) bytes",
               -_errno.ENOMEM: "the device could not allocate the encoder's "
               "scratch memory"}.get(result.error, "")
        TaskFailedError.__init__(
            self, "JPEG encode failed with %s: %s (%s)" % (
                result.error_name, why, cause.message),
            cause.status, cause.stream_id, cause.seq, cause.opcode)
        self.result = result
