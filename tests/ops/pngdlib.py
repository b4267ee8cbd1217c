# SPDX-License-Identifier: GPL-2.0
"""The core's PNG decoder (kmod/core/pngd.h) through ctypes, a PNG writer
for tests, and Pillow's decode of a PNG as the RGBA the engine must write.

dvc_pngd_parse and dvc_pngd_decode of libdavinci_core (dvc_test.c), from
$DAVINCI_CORE_LIB, else <repo>/build/libdavinci_core.so. :func:`write`
makes the PNGs Pillow cannot (Adam7, 16-bit RGB, 2- and 4-bit grey, every
filter type, tRNS keys, split IDATs, zlib's fixed/RLE/Huffman-only
strategies) with Python's zlib; :func:`pillow_rgba` is Pillow's decode
converted to 8-bit RGBA by PNG's rules (pngd.h).
"""

from __future__ import annotations

import ctypes
import errno
import io
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from PIL import Image

from opslib import lib_path

#: enum dv_pngd_format
RGB, RGBA, AUTO = range(3)
#: the engine's format names (davinci.dvpp.PNG_FORMATS) -> enum dv_pngd_format
FORMATS = {"rgb888": RGB, "rgba8888": RGBA, "auto": AUTO}
#: colour type -> samples per pixel
SPP = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


class Info(ctypes.Structure):
    """struct dv_pngd_info."""
    _fields_ = [(name, ctypes.c_uint32) for name in (
        "width", "height", "bit_depth", "colour_type", "interlace",
        "components", "alpha", "channels", "width_stride",
        "height_stride")] + \
        [("out_size", ctypes.c_uint64), ("scratch_size", ctypes.c_uint64)]


assert ctypes.sizeof(Info) == 56

_lib = None


def lib() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        lb = ctypes.CDLL(lib_path())
        vp, sz, u32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32
        lb.dvc_pngd_parse.argtypes = [vp, sz, u32, u32, ctypes.POINTER(Info)]
        lb.dvc_pngd_parse.restype = ctypes.c_int
        lb.dvc_pngd_decode.argtypes = [vp, sz, u32, u32, vp, sz, vp, sz,
                                       ctypes.POINTER(Info)]
        lb.dvc_pngd_decode.restype = ctypes.c_int
        _lib = lb
    return _lib


class PngdError(Exception):
    """The decoder refused the data; .errno is its (positive) errno."""

    def __init__(self, err: int, what: str):
        super().__init__("%s: %s (-%s)" % (what, errno.errorcode.get(err, err),
                                           err))
        self.errno = err


def parse(data: bytes, fmt: int = AUTO, max_dim: int = 0) -> Info:
    info = Info()
    ret = lib().dvc_pngd_parse(data, len(data), max_dim, fmt,
                               ctypes.byref(info))
    if ret:
        raise PngdError(-ret, "dv_pngd_parse")
    return info


@dataclass
class Picture:
    """A decoded picture: the output at its strides, and the header."""
    info: Info
    out: np.ndarray

    @property
    def rows(self) -> np.ndarray:
        """height_stride x width_stride bytes."""
        i = self.info
        return self.out[:i.width_stride * i.height_stride].reshape(
            i.height_stride, i.width_stride)

    @property
    def pixels(self) -> np.ndarray:
        """height x width x channels: the picture without its padding."""
        i = self.info
        return self.rows[:i.height, :i.width * i.channels].reshape(
            i.height, i.width, i.channels)


def decode(data: bytes, fmt: int = AUTO, max_dim: int = 0,
           out_size: int | None = None,
           scratch_size: int | None = None, fill: int = 0xA5) -> Picture:
    """Decode @data; the buffers (of @fill) are sized from the header
    unless given."""
    try:
        info = parse(data, fmt, max_dim)
        need_out, need_scratch = info.out_size, info.scratch_size
    except PngdError:
        need_out, need_scratch = 1, 1
    out = np.full(max(1, need_out if out_size is None else out_size), fill,
                  np.uint8)
    scratch = np.full(max(1, need_scratch if scratch_size is None
                          else scratch_size), fill, np.uint8)
    info = Info()
    ret = lib().dvc_pngd_decode(data, len(data), max_dim, fmt,
                                out.ctypes.data, out.size,
                                scratch.ctypes.data, scratch.size,
                                ctypes.byref(info))
    if ret:
        raise PngdError(-ret, "dv_pngd_decode")
    return Picture(info, out)


# ---------------------------------------------------------------------------
# a PNG writer
# ---------------------------------------------------------------------------

def chunk(ctype: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(
        ">I", zlib.crc32(ctype + data) & 0xFFFFFFFF)


def _pack_row(samples: np.ndarray, depth: int) -> bytes:
    """One row of samples (flattened) at @depth bits."""
    if depth == 16:
        return samples.astype(">u2").tobytes()
    if depth == 8:
        return samples.astype(np.uint8).tobytes()
    per = 8 // depth
    s = samples.astype(np.uint8)
    pad = (-len(s)) % per
    s = np.concatenate([s, np.zeros(pad, np.uint8)]).reshape(-1, per)
    out = np.zeros(len(s), np.uint8)
    for k in range(per):
        out |= s[:, k] << (8 - depth * (k + 1))
    return out.tobytes()


def _filter(ftype: int, row: bytes, prev: bytes, bpp: int) -> bytes:
    """Filter @row (raw bytes) against @prev (the previous raw row): the
    predictors are of raw bytes, so a whole row at once."""
    x = np.frombuffer(row, np.uint8).astype(np.int32)
    b = np.frombuffer(prev, np.uint8).astype(np.int32)
    a = np.concatenate([np.zeros(min(bpp, len(x)), np.int32), x[:-bpp]])
    c = np.concatenate([np.zeros(min(bpp, len(b)), np.int32), b[:-bpp]])
    a, c = a[:len(x)], c[:len(x)]
    if ftype == 4:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
    else:
        pred = (0 * x, a, b, (a + b) >> 1)[ftype]
    return bytes([ftype]) + ((x - pred) & 0xFF).astype(np.uint8).tobytes()


def raw_stream(samples: np.ndarray, ctype: int, depth: int,
               interlace: bool = False, filters=(0, 1, 2, 3, 4)) -> bytes:
    """The filtered rows (every pass's) of @samples (height x width x
    samples per pixel, palette indices for colour type 3); row k of the
    stream uses filters[k % len(filters)]."""
    h, w = samples.shape[:2]
    spp = SPP[ctype]
    bpp = max(1, spp * depth // 8)
    passes = ADAM7 if interlace else ((0, 0, 1, 1),)
    out, k = [], 0
    for x0, y0, dx, dy in passes:
        sub = samples[y0::dy, x0::dx]
        if not sub.size:
            continue
        prev = bytes(len(_pack_row(sub[0].reshape(-1), depth)))
        for row in sub:
            r = _pack_row(row.reshape(-1), depth)
            out.append(_filter(filters[k % len(filters)], r, prev, bpp))
            prev, k = r, k + 1
    return b"".join(out)


def write(samples: np.ndarray, ctype: int, depth: int = 8,
          interlace: bool = False, level: int = 6,
          strategy: int = zlib.Z_DEFAULT_STRATEGY, filters=(0, 1, 2, 3, 4),
          palette: bytes | None = None, trns: bytes | None = None,
          idat_split: int = 0, extra: bytes = b"") -> bytes:
    """A PNG of @samples (see raw_stream); @idat_split > 0 cuts the zlib
    stream into IDATs of that many bytes; @extra: chunks put before the
    first IDAT."""
    h, w = samples.shape[:2]
    raw = raw_stream(samples.reshape(h, w, -1), ctype, depth, interlace,
                     filters)
    co = zlib.compressobj(level, zlib.DEFLATED, 15, 9, strategy)
    z = co.compress(raw) + co.flush()
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, int(interlace))
    parts = [b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", ihdr)]
    if palette is not None:
        parts.append(chunk(b"PLTE", palette))
    if trns is not None:
        parts.append(chunk(b"tRNS", trns))
    parts.append(extra)
    step = idat_split or len(z)
    for i in range(0, len(z), step):
        parts.append(chunk(b"IDAT", z[i:i + step]))
    parts.append(chunk(b"IEND", b""))
    return b"".join(parts)


# ---------------------------------------------------------------------------
# Pillow's decode, as the RGBA the engine writes
# ---------------------------------------------------------------------------

def pillow_rgba(data: bytes) -> np.ndarray:
    """Pillow's decode of @data as height x width x 4 uint8, by pngd.h's
    rules: 16-bit samples' high bytes, grey to R = G = B, alpha from the
    file or tRNS (a grey key compared at the file's depth: Pillow keeps
    16-bit grey as 16-bit)."""
    im = Image.open(io.BytesIO(data))
    im.load()
    mode = im.mode
    trns = im.info.get("transparency")
    if mode == "P" or mode == "PA":
        return np.asarray(im.convert("RGBA"))
    if mode in ("RGBA", "LA"):
        return np.asarray(im.convert("RGBA"))
    if mode.startswith("I"):
        v = np.asarray(im).astype(np.int64)
        g = (v >> 8).astype(np.uint8)
        a = np.full(g.shape, 255, np.uint8)
        if trns is not None:
            a[v == trns] = 0
        return np.stack([g, g, g, a], axis=-1)
    if mode in ("1", "L"):
        v = np.asarray(im.convert("L"))
        a = np.full(v.shape, 255, np.uint8)
        if trns is not None:
            # Pillow gives the key at the file's depth, the samples scaled
            depth = data[24]
            a[v == trns * (255 // ((1 << depth) - 1))] = 0
        return np.stack([v, v, v, a], axis=-1)
    if mode == "RGB":
        v = np.asarray(im)
        a = np.full(v.shape[:2], 255, np.uint8)
        if trns is not None:
            a[(v == np.array(trns)).all(axis=-1)] = 0
        return np.concatenate([v, a[..., None]], axis=-1)
    raise ValueError("Pillow mode %r" % mode)


def truth_rgba(samples: np.ndarray, ctype: int, depth: int,
               palette: bytes | None = None,
               trns: bytes | None = None) -> np.ndarray:
    """What pngd.h says the decode of write(@samples ...) is, as RGBA."""
    s = samples.reshape(samples.shape[0], samples.shape[1], -1).astype(
        np.int64)
    hi = (s >> 8) if depth == 16 else s
    alpha = np.full(s.shape[:2], 255, np.int64)
    if ctype == 3:
        pal = np.frombuffer(palette, np.uint8).reshape(-1, 3)
        rgb = pal[s[..., 0]].astype(np.int64)
        if trns:
            t = np.full(256, 255, np.int64)
            t[:len(trns)] = np.frombuffer(trns, np.uint8)
            alpha = t[s[..., 0]]
    elif ctype in (0, 4):
        g = hi[..., 0] if depth >= 8 else s[..., 0] * (255 // (
            (1 << depth) - 1))
        rgb = np.stack([g, g, g], axis=-1)
        if ctype == 4:
            alpha = hi[..., 1]
        elif trns:
            alpha[s[..., 0] == struct.unpack(">H", trns)[0]] = 0
    else:
        rgb = hi[..., :3]
        if ctype == 6:
            alpha = hi[..., 3]
        elif trns:
            key = np.array(struct.unpack(">3H", trns))
            alpha[(s[..., :3] == key).all(axis=-1)] = 0
    return np.concatenate([rgb, alpha[..., None]], axis=-1).astype(np.uint8)
