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
