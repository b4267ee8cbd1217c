# SPDX-License-Identifier: GPL-2.0
"""ctypes access to the core's JPEG decoder (kmod/core/jpegd.h), for tests.

dvc_jpegd_parse and dvc_jpegd_decode of libdavinci_core (dvc_test.c), from
$DAVINCI_CORE_LIB, else <repo>/build/libdavinci_core.so (opslib.lib_path).
There is no public Python API for it yet: acl.media's JPEGD will be one.
"""

from __future__ import annotations

import ctypes
import errno
import io
import struct
from dataclasses import dataclass

import numpy as np

from opslib import lib_path

#: enum dv_jpegd_subsampling
GREY, S444, S422, S420, S440 = range(5)
SUBSAMPLING_NAMES = {GREY: "grey", S444: "4:4:4", S422: "4:2:2",
                     S420: "4:2:0", S440: "4:4:0"}


class Info(ctypes.Structure):
    """struct dv_jpegd_info."""
    _fields_ = [(name, ctypes.c_uint32) for name in (
        "width", "height", "components", "subsampling", "progressive",
        "restart_interval", "width_stride", "height_stride")] + \
        [("out_size", ctypes.c_uint64), ("scratch_size", ctypes.c_uint64)]


assert ctypes.sizeof(Info) == 48

_lib = None


def lib() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        lb = ctypes.CDLL(lib_path())
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        lb.dvc_jpegd_parse.argtypes = [vp, sz, ctypes.c_uint32,
                                       ctypes.POINTER(Info)]
        lb.dvc_jpegd_parse.restype = ctypes.c_int
        lb.dvc_jpegd_decode.argtypes = [vp, sz, ctypes.c_uint32, vp, sz, vp,
                                        sz, ctypes.POINTER(Info)]
        lb.dvc_jpegd_decode.restype = ctypes.c_int
        lb.dvc_jpegd_decode_planes.argtypes = lb.dvc_jpegd_decode.argtypes
        lb.dvc_jpegd_decode_planes.restype = ctypes.c_int
        _lib = lb
    return _lib


class JpegdError(Exception):
    """The decoder refused the data; .errno is its (positive) errno."""

    def __init__(self, err: int, what: str):
        super().__init__("%s: %s (-%s)" % (what, errno.errorcode.get(err, err),
                                           err))
        self.errno = err


def parse(data: bytes, max_dim: int = 0) -> Info:
    info = Info()
    ret = lib().dvc_jpegd_parse(data, len(data), max_dim, ctypes.byref(info))
    if ret:
        raise JpegdError(-ret, "dv_jpegd_parse")
    return info


@dataclass
class Picture:
    """A decoded NV12 picture: the planes at their strides, and the header."""
    info: Info
    nv12: np.ndarray

    @property
    def y(self) -> np.ndarray:
        """The Y plane, height_stride x width_stride."""
        i = self.info
        return self.nv12[:i.width_stride * i.height_stride].reshape(
            i.height_stride, i.width_stride)

    @property
    def uv(self) -> np.ndarray:
        """The UV plane as (height_stride / 2, width_stride / 2, 2)."""
        i = self.info
        return self.nv12[i.width_stride * i.height_stride:].reshape(
            i.height_stride // 2, i.width_stride // 2, 2)


def decode(data: bytes, max_dim: int = 0, out_size: int | None = None,
           scratch_size: int | None = None) -> Picture:
    """Decode @data; the buffers are sized from the header unless given."""
    try:
        info = parse(data, max_dim)
        need_out, need_scratch = info.out_size, info.scratch_size
    except JpegdError:
        # the decoder must refuse it again, with buffers of any size
        need_out, need_scratch = 1, 1
    out = np.zeros(need_out if out_size is None else out_size, np.uint8)
    scratch = np.zeros(max(1, need_scratch if scratch_size is None
                           else scratch_size), np.uint8)
    info = Info()
    ret = lib().dvc_jpegd_decode(data, len(data), max_dim, out.ctypes.data,
                                 out.size, scratch.ctypes.data, scratch.size,
                                 ctypes.byref(info))
    if ret:
        raise JpegdError(-ret, "dv_jpegd_decode")
    return Picture(info, out)


def chroma_shape(info: Info) -> tuple[int, int]:
    """Rows and columns of a file's Cb and Cr planes as decoded."""
    half_w = info.subsampling in (S422, S420)
    half_h = info.subsampling in (S420, S440)
    return ((info.height + 1) // 2 if half_h else info.height,
            (info.width + 1) // 2 if half_w else info.width)


def decode_planes(data: bytes) -> tuple[Info, list[np.ndarray]]:
    """dv_jpegd_decode_planes: the components at their own sampling."""
    info = parse(data)
    out = np.zeros(info.width * info.height * info.components, np.uint8)
    scratch = np.zeros(info.scratch_size, np.uint8)
    ret = lib().dvc_jpegd_decode_planes(data, len(data), 0, out.ctypes.data,
                                        out.size, scratch.ctypes.data,
                                        scratch.size, None)
    if ret:
        raise JpegdError(-ret, "dv_jpegd_decode_planes")
    n = info.width * info.height
    planes = [out[:n].reshape(info.height, info.width)]
    if info.components == 3:
        ch, cw = chroma_shape(info)
        for k in range(2):
            planes.append(out[n + k * ch * cw:n + (k + 1) * ch * cw]
                          .reshape(ch, cw))
    return info, planes


def _pairs(a: np.ndarray, axis: int) -> np.ndarray:
    """Rounded mean of samples 2i and 2i + 1 along @axis, the last one
    repeated past the end (jpegd.h's rule)."""
    i0 = np.arange(0, a.shape[axis], 2)
    i1 = np.minimum(i0 + 1, a.shape[axis] - 1)
    return (np.take(a, i0, axis).astype(np.int32) + np.take(a, i1, axis)
            + 1) >> 1


def _quads(a: np.ndarray) -> np.ndarray:
    r0 = np.arange(0, a.shape[0], 2)
    r1 = np.minimum(r0 + 1, a.shape[0] - 1)
    c0 = np.arange(0, a.shape[1], 2)
    c1 = np.minimum(c0 + 1, a.shape[1] - 1)
    a = a.astype(np.int32)
    return (a[r0][:, c0] + a[r0][:, c1] + a[r1][:, c0] + a[r1][:, c1]
            + 2) >> 2


def to_420(plane: np.ndarray, subsampling: int) -> np.ndarray:
    """A decoded chroma plane at 4:2:0 by jpegd.h's rule."""
    if subsampling == S420:
        return plane.astype(np.int32)
    if subsampling == S422:
        return _pairs(plane, 0)
    if subsampling == S440:
        return _pairs(plane, 1)
    return _quads(plane)


def h2v1_fancy(plane: np.ndarray) -> np.ndarray:
    """libjpeg-turbo's h2v1 "fancy" upsampling (jdsample.c: 3/4 of the
    nearer sample and 1/4 of the further one, rounding biased 1 and 2 in
    turn; plain doubling for planes 2 columns wide or less), which its
    4:2:2 decode gives."""
    p = plane.astype(np.int32)
    if p.shape[1] <= 2:
        return np.repeat(p, 2, axis=1)
    left = np.concatenate([p[:, :1], p[:, :-1]], axis=1)
    right = np.concatenate([p[:, 1:], p[:, -1:]], axis=1)
    out = np.empty((p.shape[0], 2 * p.shape[1]), np.int32)
    out[:, 0::2] = (3 * p + left + 1) >> 2
    out[:, 1::2] = (3 * p + right + 2) >> 2
    out[:, 0] = p[:, 0]
    out[:, -1] = p[:, -1]
    return out


def h1v2_fancy(plane: np.ndarray) -> np.ndarray:
    """libjpeg-turbo's h1v2 "fancy" upsampling, for 4:4:0: each row
    twice, 3/4 of it and 1/4 of the row above (rounding bias 1), then of
    the row below (bias 2), the edge rows repeated."""
    p = plane.astype(np.int32)
    up = np.concatenate([p[:1], p[:-1]], axis=0)
    down = np.concatenate([p[1:], p[-1:]], axis=0)
    out = np.empty((2 * p.shape[0], p.shape[1]), np.int32)
    out[0::2] = (3 * p + up + 1) >> 2
    out[1::2] = (3 * p + down + 2) >> 2
    return out


def pillow_ycbcr(data: bytes, half: bool = False) -> np.ndarray:
    """libjpeg-turbo's decode (through Pillow) of @data as Y, Cb, Cr planes,
    without its colour conversion (draft mode "YCbCr"): h x w x 3, or h
    x w for grey. half=True decodes at half the size by DCT scaling
    (ceil(w / 2) x ceil(h / 2)), where libjpeg-turbo gives a 4:2:0 file's
    chroma planes as decoded, not upsampled; a picture 1 pixel wide or high
    has no half size (Pillow's draft), and comes at its full size."""
    from PIL import Image
    im = Image.open(io.BytesIO(data))
    if im.mode != "L":
        # Pillow's draft scales by min(w // size_w, h // size_h): 2 here
        size = (im.width // 2, im.height // 2) if half and \
            min(im.size) >= 2 else im.size
        im.draft("YCbCr", size)
    return np.asarray(im)


def segments(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, marker, length incl. marker) of the segments before EOI;
    a scan's entropy-coded data counts in its SOS segment's length."""
    out, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        m = data[pos + 1]
        if m == 0xD9:
            break
        ln = 2 + struct.unpack_from(">H", data, pos + 2)[0]
        end = pos + ln
        if m == 0xDA:
            while end + 1 < len(data) and not (
                    data[end] == 0xFF and data[end + 1] not in (0, 0xFF)
                    and not 0xD0 <= data[end + 1] <= 0xD7):
                end += 1
        out.append((pos, m, end - pos))
        pos = end
    return out
