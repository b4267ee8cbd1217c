# SPDX-License-Identifier: GPL-2.0
"""The DVPP engines' part of the op digest (test_digest.py): JPEGE,
JPEGD, PNGD and every VPC op on fixed inputs made without Pillow (the
arm64 guest has Python's stdlib and numpy only).

- Pictures: :func:`pattern`'s bytes, integer arithmetic of the row and
  column (a gradient with a texture), laid out as each format's planes.
- JPEGs: JPEGE's own files, encoded here on the device from a pattern
  NV12 picture (baseline 4:2:0, the only kind it writes), and the
  progressive, 4:2:2, 4:4:4, grey and restart-marker files
  scripts/gen_digest_jpegs.py made once with Pillow, embedded as bytes
  (digest_jpegs.py).
- PNGs: written here with zlib and struct (:func:`png`), every colour
  type and bit depth, Adam7, tRNS, every filter type and zlib strategy.

Every output is the whole buffer the engine writes into (filled with
FILL first, so the bytes a task must leave alone count too); JPEGE's is
its file, and each engine's result record is hashed beside it.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from davinci import dvpp, jpege, ops

from .digest_jpegs import FILES as JPEG_FILES

#: what an output buffer holds before its task
FILL = 0xA5

# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def pattern(rows: int, cols: int, seed: int) -> np.ndarray:
    """rows x cols bytes: a gradient, a texture of the row and column
    bits and a step every 8 columns (edges for the resamplers and the
    DCT), by integer arithmetic alone."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    v = c * 5 + r * 3 + seed * 29 + ((c * r) >> 4) + ((c ^ r) & 7) * 6 + \
        (c >> 3 & 1) * 40
    return (v & 255).astype(np.uint8)


def picture_bytes(pic: dvpp.Picture, seed: int) -> np.ndarray:
    """The bytes of a VPC picture (all of its strides) of the pattern:
    the Y or packed plane, then YUV420SP's interleaved chroma."""
    rows = pic.height_stride * 3 // 2 if pic.format in ("nv12", "nv21") \
        else pic.height_stride
    return pattern(rows, pic.width_stride, seed).reshape(-1)


def nv12_bytes(width_stride: int, height_stride: int, seed: int):
    """A YUV420SP picture of the pattern, as JPEGE reads it."""
    return pattern(height_stride * 3 // 2, width_stride, seed).reshape(-1)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


#: Adam7's passes: first column and row, column and row steps
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
#: PNG colour type -> samples per pixel
SPP = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png_sample(x: int, y: int, k: int, depth: int) -> int:
    """Sample ``k`` of pixel (x, y) at ``depth`` bits: the pattern's
    formula, its top bits at depths below 8, spread over 16."""
    v = (x * 37 + y * 23 + k * 71 + ((x * y) >> 1) + ((x ^ y) & 3) * 50) \
        & 255
    if depth == 16:
        return v << 8 | ((x * 11 + y * 5 + k * 3) & 255)
    return v >> (8 - depth)


def _pack(samples: list[int], depth: int) -> bytes:
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    per = 8 // depth
    out = bytearray()
    for i in range(0, len(samples), per):
        b = 0
        for j, s in enumerate(samples[i:i + per]):
            b |= s << (8 - depth * (j + 1))
        out.append(b)
    return bytes(out)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _filter(ftype: int, row: bytes, prev: bytes, bpp: int) -> bytes:
    out = bytearray([ftype])
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        pred = (0, a, b, (a + b) >> 1, _paeth(a, b, c))[ftype]
        out.append((x - pred) & 255)
    return bytes(out)


def png(w: int, h: int, ctype: int, depth: int, interlace: bool = False,
        trns: bytes | None = None, strategy: int = zlib.Z_DEFAULT_STRATEGY,
        level: int = 6, idat_split: int = 0) -> bytes:
    """A PNG of png_sample's pixels (palette indices for colour type 3,
    a palette of every index), row k filtered by filter type k % 5."""
    spp = SPP[ctype]
    bpp = max(1, spp * depth // 8)
    raw, k = [], 0
    for x0, y0, dx, dy in ADAM7 if interlace else ((0, 0, 1, 1),):
        xs, ys = range(x0, w, dx), range(y0, h, dy)
        if not xs or not ys:
            continue
        prev = bytes(len(_pack([0] * (len(xs) * spp), depth)))
        for y in ys:
            row = _pack([png_sample(x, y, c, depth) for x in xs
                         for c in range(spp)], depth)
            raw.append(_filter(k % 5, row, prev, bpp))
            prev, k = row, k + 1
    co = zlib.compressobj(level, zlib.DEFLATED, 15, 9, strategy)
    z = co.compress(b"".join(raw)) + co.flush()
    parts = [b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", struct.pack(
        ">IIBBBBB", w, h, depth, ctype, 0, 0, int(interlace)))]
    if ctype == 3:
        parts.append(_chunk(b"PLTE", bytes(
            (i * 67 + c * 85) & 255 for i in range(1 << depth)
            for c in range(3))))
    if trns is not None:
        parts.append(_chunk(b"tRNS", trns))
    step = idat_split or len(z)
    parts += [_chunk(b"IDAT", z[i:i + step]) for i in range(0, len(z), step)]
    parts.append(_chunk(b"IEND", b""))
    return b"".join(parts)


def png_files():
    """(name, PNG, output format) of the PNGD workload."""
    depths = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16),
              6: (8, 16)}
    strategies = (zlib.Z_DEFAULT_STRATEGY, zlib.Z_FILTERED,
                  zlib.Z_HUFFMAN_ONLY, zlib.Z_RLE, zlib.Z_FIXED)
    n = 0
    for ctype, ds in depths.items():
        for depth in ds:
            for interlace in (False, True):
                w, h = (13, 11) if not interlace else (19, 10)
                yield ("c%d-d%d-%s" % (ctype, depth, "adam7" if interlace
                                       else "plain"),
                       png(w, h, ctype, depth, interlace,
                           strategy=strategies[n % len(strategies)],
                           idat_split=(0, 17)[n % 2]), "auto")
                n += 1
    # tRNS: a grey key and an RGB key that pixels hit, palette alphas for
    # half the palette; each in every output format
    key16 = png_sample(0, 0, 0, 16)
    rgb8 = b"".join(struct.pack(">H", png_sample(0, 0, c, 8))
                    for c in range(3))
    cases = [("c0-d8-trns", 0, 8, struct.pack(">H", png_sample(0, 0, 0, 8))),
             ("c0-d16-trns", 0, 16, struct.pack(">H", key16)),
             ("c0-d2-trns", 0, 2, struct.pack(">H", png_sample(0, 0, 0, 2))),
             ("c2-d8-trns", 2, 8, rgb8),
             ("c3-d4-trns", 3, 4, bytes(i * 31 & 255 for i in range(8))),
             ("c3-d8-trns", 3, 8, bytes(range(0, 256, 3)))]
    for name, ctype, depth, trns in cases:
        for interlace in (False, True):
            data = png(13, 11, ctype, depth, interlace, trns)
            for fmt in ("auto", "rgb888", "rgba8888"):
                yield ("%s-%s-%s" % (name, "adam7" if interlace else "plain",
                                     fmt), data, fmt)
    # sizes: one pixel, a row, a column, stored blocks
    yield "c2-d8-1x1-stored", png(1, 1, 2, 8, level=0), "auto"
    yield "c6-d8-40x1", png(40, 1, 6, 8, True), "rgb888"
    yield "c0-d1-1x30", png(1, 30, 0, 1, True), "rgba8888"


# ---------------------------------------------------------------------------
# The workload
# ---------------------------------------------------------------------------


def _filled(dev, nbytes: int):
    return dev.tensor(np.full(nbytes, FILL, np.uint8))


def _record(result) -> bytes:
    return repr(result).encode()


#: JPEGE's pictures: (width, height, qualities, format)
JPEGE_CASES = [((45, 31), (1, 10, 25, 50, 75, 90, 100), "nv12"),
               ((1, 1), (75,), "nv12"), ((17, 9), (85,), "nv12"),
               ((33, 17), (60,), "nv21"), ((64, 48), (95,), "nv12"),
               ((250, 131), (80,), "nv21")]


def jpege_workload(dev, s):
    """Yield (label, bytes) of JPEGE's files of pattern pictures (odd
    sizes from 1 x 1, qualities 1 .. 100, NV12 and NV21 in), then of
    JPEGD's decodes of those files."""
    pending = []
    for (w, h), qualities, fmt in JPEGE_CASES:
        ws, hs = -(-w // 16) * 16, -(-h // 2) * 2
        src = dev.tensor(nv12_bytes(ws, hs, w + h))
        for q in qualities:
            out = _filled(dev, jpege.predict_size(w, h))
            pending.append(("%dx%d/q%d/%s" % (w, h, q, fmt), out,
                            ops.jpeg_encode(src, out, w, h, quality=q,
                                            format=fmt, stream=s)))
    s.synchronize()
    files = {}
    for label, out, p in pending:
        r = p.result()
        assert r.ok, "JPEGE %s: %s" % (label, r.error_name)
        files[label] = out.numpy()[:r.size].tobytes()
        yield "dvpp/jpege/" + label, files[label]
        yield "dvpp/jpege/%s/record" % label, _record(r)
    yield from _jpegd(dev, s, [("jpege-" + k.replace("/", "-"), v)
                               for k, v in files.items()], ("nv12",))


def _jpegd(dev, s, files, formats):
    pending = []
    for name, data in files:
        src = dev.tensor(np.frombuffer(data, np.uint8))
        size = dvpp.read_header(data).out_size
        for fmt in formats:
            out = _filled(dev, size)
            pending.append(("%s/%s" % (name, fmt), out, ops.jpeg_decode(
                src, out, format=fmt, stream=s)))
    s.synchronize()
    for label, out, p in pending:
        r = p.result()
        assert r.ok, "JPEGD %s: %s" % (label, r.error_name)
        yield "dvpp/jpegd/" + label, out.numpy().tobytes()
        yield "dvpp/jpegd/%s/record" % label, _record(r)


def jpegd_workload(dev, s):
    """The embedded files (progressive, restart markers, every
    subsampling, grey), into NV12 and NV21."""
    yield from _jpegd(dev, s, [(k, v[2]) for k, v in JPEG_FILES.items()],
                      ("nv12", "nv21"))


def pngd_workload(dev, s):
    """png_files()' PNGs, each into its output format."""
    pending = []
    for name, data, fmt in png_files():
        src = dev.tensor(np.frombuffer(data, np.uint8))
        out = _filled(dev, dvpp.read_png_header(data).out_size(fmt))
        pending.append((name, out, ops.png_decode(src, out, format=fmt,
                                                  stream=s)))
    s.synchronize()
    for label, out, p in pending:
        r = p.result()
        assert r.ok, "PNGD %s: %s" % (label, r.error_name)
        yield "dvpp/pngd/" + label, out.numpy().tobytes()
        yield "dvpp/pngd/%s/record" % label, _record(r)


def _pic(fmt: str, w: int, h: int) -> dvpp.Picture:
    return dvpp.Picture.aligned(fmt, w, h)


#: resizes: (source, output) formats and sizes, each bilinear and nearest
RESIZES = [(("nv12", 96, 64), ("nv12", 160, 90)),
           (("nv12", 96, 64), ("nv12", 40, 22)),
           (("nv12", 45, 29), ("nv12", 64, 36)),
           (("nv21", 96, 64), ("yuyv", 50, 30)),
           (("yuyv", 96, 64), ("nv12", 128, 38)),
           (("yuyv", 64, 40), ("yuyv", 30, 12)),
           (("rgb", 96, 64), ("bgr", 45, 29)),
           (("bgr", 45, 29), ("bgr", 200, 130)),
           (("rgb", 400, 200), ("rgb", 13, 7)),
           # DVPP's 8K mode: a YUV420SP input 8192 wide
           (("nv12", 8192, 16), ("nv12", 256, 16))]
#: crops: source, crop rect, output and its paste rect (None: all of it)
CROPS = [(("nv12", 96, 64), (10, 8, 57, 41), ("nv12", 64, 48), None),
         (("nv21", 8192, 16), (4096, 2, 8191, 13), ("nv21", 128, 12), None),
         (("nv12", 96, 64), (0, 0, 95, 63), ("nv12", 30, 20), None),
         (("rgb", 96, 64), (2, 4, 71, 49), ("rgb", 50, 26), None),
         (("nv12", 96, 64), (2, 2, 61, 39), ("nv12", 128, 80),
          (16, 10, 79, 57)),
         (("nv21", 96, 64), (20, 6, 89, 59), ("nv21", 100, 60),
          (32, 0, 63, 29)),
         (("bgr", 96, 64), (0, 0, 47, 31), ("bgr", 90, 70),
          (48, 20, 89, 69)),
         (("yuyv", 96, 64), (4, 2, 33, 21), ("yuyv", 64, 64),
          (0, 32, 63, 63))]
#: the batch crop: one NV12 source, a crop each into outputs of its own
BATCH = (("nv12", 160, 96), [((0, 0, 79, 47), ("nv12", 80, 48)),
                             ((80, 0, 159, 47), ("nv12", 40, 24)),
                             ((30, 40, 129, 95), ("nv12", 224, 112)),
                             ((2, 2, 13, 9), ("nv12", 16, 10))])


def vpc_workload(dev, s):
    """Every VPC op, queued on ``s`` and synchronized once: resizes,
    crops, crop-and-pastes into a picture of the pattern, a batch crop of
    one source, each conversion between two of VPC's formats."""
    jobs = []       # (label, output tensor, its bytes before the task)
    srcs = {}

    def source(spec, seed):
        if (spec, seed) not in srcs:
            pic = _pic(*spec)
            srcs[spec, seed] = (pic, dev.tensor(picture_bytes(pic, seed)))
        return srcs[spec, seed]

    def output(label, dp, seed=None):
        init = np.full(dp.size, FILL, np.uint8) if seed is None else \
            picture_bytes(dp, seed)
        out = dev.tensor(init)
        jobs.append((label.replace(" ", ""), out, init.tobytes()))
        return out

    for i, (a, b) in enumerate(RESIZES):
        sp, src = source(a, i)
        dp = _pic(*b)
        for interp in ("bilinear", "nearest"):
            out = output("resize/%s-%dx%d/%s-%dx%d/%s" % (a + b + (interp,)),
                         dp)
            ops.vpc_resize(src, sp, out, dp, interp, stream=s)
    for i, (a, crop, b, paste) in enumerate(CROPS):
        sp, src = source(a, 20 + i)
        dp = _pic(*b)
        for interp in ("bilinear", "nearest"):
            out = output("%s/%s-%dx%d/%s/%s-%dx%d/%s/%s" % (
                ("crop_paste" if paste else "crop",) + a + (crop,) + b +
                (paste, interp)), dp, 40 + i if paste else None)
            ops.vpc_crop(src, sp, out, dp, dvpp.Rect(*crop),
                         paste and dvpp.Rect(*paste), interp, stream=s)
    spec, crops = BATCH
    sp, src = source(spec, 60)
    for k, (crop, b) in enumerate(crops):
        dp = _pic(*b)
        out = output("batch_crop/%d/%s/%s-%dx%d" % ((k, crop) + b), dp)
        ops.vpc_crop(src, sp, out, dp, dvpp.Rect(*crop), stream=s)
    fmts = list(dvpp.VPC_FORMATS)
    for i, f in enumerate(fmts):
        sp, src = source((f, 50, 30), 70 + i)
        for g in fmts:
            dp = _pic(g, 50, 30)
            out = output("convert/%s/%s" % (f, g), dp)
            ops.vpc_convert_color(src, sp, out, dp, stream=s)
    s.synchronize()
    for label, out, init in jobs:
        data = out.numpy().tobytes()
        # a task that wrote nothing would hash the same everywhere too
        assert data != init, "VPC %s wrote nothing" % label
        yield "dvpp/vpc/" + label, data


def workload(dev, s):
    """Yield (label, bytes) of every DVPP engine's outputs."""
    yield from jpege_workload(dev, s)
    yield from jpegd_workload(dev, s)
    yield from pngd_workload(dev, s)
    yield from vpc_workload(dev, s)
