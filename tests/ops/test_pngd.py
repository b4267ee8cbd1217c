# SPDX-License-Identifier: GPL-2.0
"""The core's PNG decoder (kmod/core/pngd.h) against Pillow's decode.

PNGs of every colour type and bit depth, Adam7 and not, every filter type,
odd sizes down to 1 x 1, zlib's stored, fixed, dynamic, RLE and
Huffman-only blocks at levels 0/1/9, split and empty IDATs, tRNS; made
by Pillow where it can write them, else by pngdlib.write. The decode must
be Pillow's (converted to RGBA by PNG's rules) bit for bit, and the
samples the file was made of (pngdlib.truth_rgba); the strides DVPP's
(128 pixels x channels, 16 rows) and the padding zeros. Broken files are
refused with pngd.h's errnos (tests/core cuts and corrupts them byte by
byte under ASan).
"""

from __future__ import annotations

import errno
import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

import pngdlib as P

DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16),
          6: (8, 16)}
CASES = [(ct, d) for ct, ds in DEPTHS.items() for d in ds]
SIZES = [(1, 1), (3, 5), (37, 19), (130, 33)]


def samples(w: int, h: int, ctype: int, depth: int, seed: int = 0):
    """Samples with noise, flat runs (long matches) and a gradient; a
    palette for colour type 3."""
    rng = np.random.default_rng(seed + 7 * ctype + depth)
    mx = (1 << depth) - 1
    s = rng.integers(0, mx + 1, (h, w, P.SPP[ctype]))
    s[h // 3:h // 2 + 1] = mx // 3          # a flat band
    s[:, : w // 4, 0] = (np.arange(h)[:, None] * mx // max(1, h - 1))
    s = s.astype(np.uint16 if depth == 16 else np.uint8)
    pal = None
    if ctype == 3:
        pal = bytes(rng.integers(0, 256, 3 * (1 << depth), dtype=np.uint8))
    return s, pal


def check(data: bytes, truth: np.ndarray | None = None) -> None:
    """Every output format against Pillow (and @truth, RGBA)."""
    ref = P.pillow_rgba(data)
    if truth is not None:
        assert np.array_equal(ref, truth), "Pillow disagrees with the file"
    for fmt in (P.RGB, P.RGBA, P.AUTO):
        pic = P.decode(data, fmt)
        i = pic.info
        h, w = ref.shape[:2]
        ch = 4 if fmt == P.RGBA or (fmt == P.AUTO and i.alpha) else 3
        assert (i.width, i.height, i.channels) == (w, h, ch)
        assert i.width_stride == -(-w // 128) * 128 * ch
        assert i.height_stride == -(-h // 16) * 16
        assert i.out_size == i.width_stride * i.height_stride == \
            pic.out.size
        assert np.array_equal(pic.pixels, ref[..., :ch])
        rows = pic.rows
        assert not rows[:, w * ch:].any() and not rows[h:].any(), \
            "padding not zero"


@pytest.mark.parametrize("interlace", [False, True], ids=["flat", "adam7"])
@pytest.mark.parametrize("ctype,depth", CASES,
                         ids=["ct%d-%d" % c for c in CASES])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "%dx%d" % s)
def test_every_colour_type_and_depth(size, ctype, depth, interlace):
    w, h = size
    s, pal = samples(w, h, ctype, depth)
    data = P.write(s, ctype, depth, interlace, palette=pal)
    check(data, P.truth_rgba(s, ctype, depth, pal))


@pytest.mark.parametrize("ftype", range(5),
                         ids=["none", "sub", "up", "average", "paeth"])
@pytest.mark.parametrize("ctype,depth", [(0, 1), (2, 8), (6, 16), (4, 8)],
                         ids=["ct0-1", "ct2-8", "ct6-16", "ct4-8"])
def test_each_filter_alone(ctype, depth, ftype):
    s, pal = samples(45, 23, ctype, depth, seed=ftype)
    data = P.write(s, ctype, depth, filters=(ftype,), palette=pal)
    check(data, P.truth_rgba(s, ctype, depth, pal))


@pytest.mark.parametrize("how", [
    dict(level=0), dict(level=1), dict(level=9),
    dict(level=6, strategy=zlib.Z_FIXED), dict(level=6, strategy=zlib.Z_RLE),
    dict(level=6, strategy=zlib.Z_HUFFMAN_ONLY),
    dict(level=9, idat_split=1), dict(level=9, idat_split=100)],
    ids=["stored", "level1", "level9", "fixed", "rle", "huffman_only",
         "idat_of_1", "idat_of_100"])
def test_zlib_blocks_and_idat_splits(how):
    s, _ = samples(201, 67, 2, 8)
    data = P.write(s, 2, 8, **how)
    check(data, P.truth_rgba(s, 2, 8))


def test_empty_idat_chunks_and_ancillary_chunks_are_skipped():
    s, _ = samples(40, 40, 6, 8)
    data = P.write(s, 6, 8, extra=P.chunk(b"gAMA", struct.pack(">I", 45455))
                   + P.chunk(b"tEXt", b"Comment\0hello"))
    i = data.index(b"IDAT") - 4
    data = data[:i] + P.chunk(b"IDAT", b"") + data[i:]
    check(data, P.truth_rgba(s, 6, 8))


def pillow_png(img: Image.Image, **kw) -> bytes:
    b = io.BytesIO()
    img.save(b, "PNG", **kw)
    return b.getvalue()


def _pillow_images():
    rng = np.random.default_rng(5)
    rgb = rng.integers(0, 256, (61, 83, 3), dtype=np.uint8)
    rgb[20:40] = (10, 200, 30)
    rgba = np.concatenate([rgb, rng.integers(0, 256, (61, 83, 1),
                                             dtype=np.uint8)], axis=-1)
    im = Image.fromarray(rgb)
    p = im.quantize(200)
    p16 = im.quantize(16)
    p4 = im.quantize(4)
    return {
        "L": (Image.fromarray(rgb[..., 0]), {}),
        "1": (Image.fromarray(rgb[..., 0]).convert("1"), {}),
        "RGB": (im, {}),
        "RGBA": (Image.fromarray(rgba), {}),
        "LA": (Image.fromarray(rgba[..., ::3]).convert("LA"), {}),
        "P": (p, {}),
        "P-trns": (p, {"transparency": bytes(range(0, 250, 2))}),
        "P-4bit": (p16, {"bits": 4}),
        "P-2bit": (p4, {"bits": 2}),
        "L-trns": (Image.fromarray(rgb[..., 1]), {"transparency": 77}),
        "RGB-trns": (im, {"transparency": (10, 200, 30)}),
        "I16": (Image.fromarray(rgb[..., 0].astype(np.uint16) * 257 + 3),
                {}),
    }


PILLOW = _pillow_images()


@pytest.mark.parametrize("level", [0, 1, 9])
@pytest.mark.parametrize("name", list(PILLOW))
def test_pillow_made(name, level):
    img, kw = PILLOW[name]
    data = pillow_png(img, compress_level=level, **kw)
    check(data)


def test_trns_keys_at_the_files_depth():
    s = np.random.default_rng(1).integers(0, 3, (20, 30, 3)).astype(
        np.uint16) * 0x100
    s[5, 5] = (0x100, 0x200, 0x001)     # high bytes as the key, not equal
    key = struct.pack(">3H", 0x100, 0x200, 0)
    data = P.write(s, 2, 16, trns=key)
    pic = P.decode(data, P.RGBA)
    truth = P.truth_rgba(s, 2, 16, trns=key)
    assert np.array_equal(pic.pixels, truth)
    assert pic.pixels[5, 5, 3] == 255 and (truth[..., 3] == 0).any()
    g = np.random.default_rng(2).integers(0, 4, (9, 11, 1)).astype(np.uint8)
    data = P.write(g, 0, 2, trns=struct.pack(">H", 2))
    assert P.parse(data).alpha == 1 and P.parse(data).components == 1
    check(data, P.truth_rgba(g, 0, 2, trns=struct.pack(">H", 2)))


def test_info_fields():
    s, pal = samples(300, 20, 3, 4)
    i = P.parse(P.write(s, 3, 4, True, palette=pal), P.AUTO)
    assert (i.width, i.height, i.bit_depth, i.colour_type, i.interlace,
            i.components, i.alpha, i.channels) == (300, 20, 4, 3, 1, 3, 0,
                                                   3)
    assert (i.width_stride, i.height_stride) == (384 * 3, 32)


# ---------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------

def _good() -> bytes:
    s, _ = samples(33, 17, 2, 8)
    return P.write(s, 2, 8, level=9)


def refused(data: bytes, fmt: int = P.AUTO, **kw) -> int:
    with pytest.raises(P.PngdError) as e:
        P.decode(data, fmt, **kw)
    return e.value.errno


def _rebuild(parts) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(P.chunk(t, d) for t, d in parts)


def _chunks(data: bytes):
    pos, out = 8, []
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        out.append((data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]))
        pos += n + 12
    return out


def _with_idat(z: bytes, w=4, h=2, ct=0, depth=8) -> bytes:
    return _rebuild([(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ct, 0, 0,
                                           0)), (b"IDAT", z), (b"IEND", b"")])


def test_refusals():
    good = _good()
    E = errno
    assert refused(good[:-1]) == E.EINVAL            # IEND cut
    assert refused(good[:40]) == E.EINVAL
    bad = bytearray(good)
    bad[len(good) // 2] ^= 1                          # an IDAT byte: CRC
    assert refused(bytes(bad)) == E.EINVAL
    assert refused(b"\x89PNG\r\n\x1a\x0b" + good[8:]) == E.EINVAL
    parts = _chunks(good)
    z = zlib.decompress(parts[1][1])
    # adler-32 wrong, CRC right
    zz = parts[1][1][:-1] + bytes([parts[1][1][-1] ^ 1])
    assert refused(_rebuild([parts[0], (b"IDAT", zz), parts[2]])) == E.EINVAL
    # a row short, a row too many
    assert refused(_rebuild([parts[0], (b"IDAT", zlib.compress(z[:-100])),
                             parts[2]])) == E.EINVAL
    assert refused(_rebuild([parts[0], (b"IDAT", zlib.compress(
        z + z[:100])), parts[2]])) == E.EINVAL
    # filter type 5
    assert refused(_with_idat(zlib.compress(b"\x05" + bytes(4) +
                                            b"\x00" + bytes(4)))) == E.EINVAL
    # a distance before the stream's start, a bad block type
    assert refused(_with_idat(b"\x78\x01" + bytes([0x63, 0x00, 0x02]))) \
        == E.EINVAL
    assert refused(_with_idat(b"\x78\x01\x07" + bytes(8))) == E.EINVAL
    # a preset dictionary, a bad header check
    assert refused(_with_idat(b"\x78\x20" + zlib.compress(bytes(10))[2:])) \
        == E.EINVAL
    assert refused(_with_idat(b"\x78\x02" + zlib.compress(bytes(10))[2:])) \
        == E.EINVAL
    # palette index past PLTE
    pal_img = _rebuild([
        (b"IHDR", struct.pack(">IIBBBBB", 2, 1, 8, 3, 0, 0, 0)),
        (b"PLTE", bytes(6)), (b"IDAT", zlib.compress(b"\x00\x01\x02")),
        (b"IEND", b"")])
    assert refused(pal_img) == E.EINVAL
    # no PLTE for a palette picture; IHDR values
    assert refused(_with_idat(zlib.compress(bytes(3)), 2, 1, 3)) == E.EINVAL
    assert refused(_with_idat(zlib.compress(bytes(10)), 4, 2, 2, 4)) == \
        E.EINVAL
    assert refused(_with_idat(zlib.compress(bytes(10)), 0, 2)) == E.EINVAL
    # an unknown critical chunk; IDATs not consecutive
    assert refused(_rebuild([parts[0], (b"ZZZZ", b""), *parts[1:]])) == \
        E.EOPNOTSUPP
    zi = parts[1][1]
    assert refused(_rebuild([parts[0], (b"IDAT", zi[:10]),
                             (b"tEXt", b"a\0b"), (b"IDAT", zi[10:]),
                             parts[2]])) == E.EINVAL
    # a side above the limit: refused from IHDR
    huge = _with_idat(b"", 100000, 1)
    assert refused(huge) == E.E2BIG
    assert refused(good, max_dim=32) == E.E2BIG
    assert P.parse(good, max_dim=33).width == 33
    # buffers too small
    info = P.parse(good)
    assert refused(good, out_size=info.out_size - 1) == E.ENOSPC
    assert refused(good, scratch_size=info.scratch_size - 1) == E.ENOSPC


def test_trailing_bytes_after_the_stream_and_iend_are_ignored():
    s, _ = samples(20, 10, 0, 8)
    data = P.write(s, 0, 8)
    parts = _chunks(data)
    check(_rebuild([parts[0], (b"IDAT", parts[1][1] + b"junk"), parts[2]]) +
          b"after", P.truth_rgba(s, 0, 8))
