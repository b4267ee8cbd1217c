# SPDX-License-Identifier: GPL-2.0
"""The core's JPEG decoder (kmod/core/jpegd.h) against libjpeg-turbo.

Pictures made here (gradients, noise, hard edges), encoded by Pillow's
libjpeg-turbo at every subsampling, quality 50/90/100, baseline and
progressive, with restart markers, at sizes that are not multiples of 16;
each decoded by the core and by libjpeg-turbo (Pillow, without its colour
conversion). NUMERICS.md ("JPEGD") states the bound these tests hold: the
decoded planes are libjpeg-turbo's bit for bit, and the NV12 chroma is
jpegd.h's fixed 4:2:0 rule applied to them.
"""

from __future__ import annotations

import errno
import io

import numpy as np
import pytest
from PIL import Image, ImageFile

import jpegdlib as J
import jpegenc

SUBSAMPLING = {"4:4:4": 0, "4:2:2": 1, "4:2:0": 2}
KIND = {"4:4:4": J.S444, "4:2:2": J.S422, "4:2:0": J.S420}
SIZES = [(1, 1), (17, 9), (9, 17), (333, 250), (64, 48)]


def photo(w: int, h: int, seed: int = 0) -> np.ndarray:
    """An RGB picture with what photos have: smooth gradients, sensor-like
    noise, saturated colour, hard edges and fine stripes."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.stack([255 * x / max(1, w - 1), 255 * y / max(1, h - 1),
                    128 + 100 * np.sin((x + 2 * y) / 7)], axis=-1)
    img += rng.normal(0, 14, img.shape)
    img[h // 3:h // 2 + 1, w // 4:w // 2 + 1] = (250, 20, 30)
    img[:, (w * 3) // 4:] = np.where((x[:, (w * 3) // 4:] // 2 % 2)[..., None],
                                     (10, 10, 10), (240, 240, 220))
    return np.clip(img, 0, 255).astype(np.uint8)


def encode(pixels: np.ndarray, **kw) -> bytes:
    """Pillow's JPEG of @pixels; progressive files at quality 100 need a
    larger buffer than Pillow guesses."""
    b = io.BytesIO()
    old = ImageFile.MAXBLOCK
    ImageFile.MAXBLOCK = max(old, 8 * pixels.size + (1 << 16))
    try:
        Image.fromarray(pixels).save(b, "JPEG", **kw)
    finally:
        ImageFile.MAXBLOCK = old
    return b.getvalue()


def libjpeg_chroma(data: bytes, kind: int, full: np.ndarray, k: int,
                   mine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """libjpeg-turbo's chroma plane @k (1: Cb, 2: Cr) of @data, and what the
    core's plane @mine must equal for it: libjpeg-turbo upsamples 4:2:2 and
    4:4:0 chroma ("fancy"), which the test then applies to the core's
    plane."""
    if kind == J.S444:
        return full[..., k], mine
    if kind == J.S420:
        return J.pillow_ycbcr(data, half=True)[..., k], mine
    if kind == J.S440:
        return full[..., k], J.h1v2_fancy(mine)[:full.shape[0]]
    return full[..., k], J.h2v1_fancy(mine)[:, :full.shape[1]]


def check_padding(pic: J.Picture) -> None:
    """Rows filled out to the stride by their last pixel, rows below the
    picture by its last row, in both planes (jpegd.h)."""
    i = pic.info
    y, uv = pic.y, pic.uv
    cw, ch = (i.width + 1) // 2, (i.height + 1) // 2
    assert (y[:i.height, i.width:] == y[:i.height, i.width - 1:i.width]).all()
    assert (y[i.height:] == y[i.height - 1]).all()
    assert (uv[:ch, cw:] == uv[:ch, cw - 1:cw]).all()
    assert (uv[ch:] == uv[ch - 1]).all()


def check_against_libjpeg(data: bytes, w: int, h: int, kind: int) -> None:
    pic = J.decode(data)
    info, planes = J.decode_planes(data)
    assert (info.width, info.height, info.components) == (w, h, 3)
    assert info.subsampling == kind
    assert (info.width_stride, info.height_stride) == (
        -(-w // 128) * 128, -(-h // 16) * 16)
    assert info.out_size == info.width_stride * info.height_stride * 3 // 2
    full = J.pillow_ycbcr(data)
    # Y: libjpeg-turbo's islow IDCT, bit for bit
    assert np.array_equal(planes[0], full[..., 0])
    assert np.array_equal(pic.y[:h, :w], full[..., 0])
    ch, cw = (h + 1) // 2, (w + 1) // 2
    for k in (1, 2):
        ref, ours = libjpeg_chroma(data, kind, full, k, planes[k])
        assert np.array_equal(ours, ref), "plane %d differs" % k
        # NV12's chroma: the rule of jpegd.h on those planes
        assert np.array_equal(pic.uv[:ch, :cw, k - 1],
                              J.to_420(planes[k], kind))
    check_padding(pic)


@pytest.mark.parametrize("progressive", [False, True],
                         ids=["baseline", "progressive"])
@pytest.mark.parametrize("quality", [50, 90, 100])
@pytest.mark.parametrize("sub", list(SUBSAMPLING))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "%dx%d" % s)
def test_matches_libjpeg_turbo(size, sub, quality, progressive):
    w, h = size
    data = encode(photo(w, h, seed=w * h + quality), quality=quality,
                  subsampling=SUBSAMPLING[sub], progressive=progressive)
    assert J.parse(data).progressive == progressive
    check_against_libjpeg(data, w, h, KIND[sub])


@pytest.mark.parametrize("restart", [dict(restart_marker_blocks=1),
                                     dict(restart_marker_blocks=5),
                                     dict(restart_marker_rows=1)],
                         ids=["every-mcu", "every-5-mcus", "every-row"])
@pytest.mark.parametrize("progressive", [False, True],
                         ids=["baseline", "progressive"])
@pytest.mark.parametrize("sub", list(SUBSAMPLING))
def test_restart_markers(sub, progressive, restart):
    w, h = 133, 71
    data = encode(photo(w, h, seed=3), quality=85,
                  subsampling=SUBSAMPLING[sub], progressive=progressive,
                  **restart)
    assert b"\xff\xdd" in data and b"\xff\xd1" in data
    assert J.parse(data).restart_interval > 0
    check_against_libjpeg(data, w, h, KIND[sub])


@pytest.mark.parametrize("progressive", [False, True],
                         ids=["baseline", "progressive"])
@pytest.mark.parametrize("size", [(1, 1), (17, 9), (333, 250)],
                         ids=lambda s: "%dx%d" % s)
def test_grey(size, progressive):
    w, h = size
    grey = photo(w, h, seed=5)[..., 1]
    data = encode(grey, quality=90, progressive=progressive)
    pic = J.decode(data)
    info = pic.info
    assert (info.components, info.subsampling) == (1, J.GREY)
    assert np.array_equal(pic.y[:h, :w], J.pillow_ycbcr(data))
    assert (pic.uv == 128).all()
    check_padding(pic)


def component_planes(w: int, h: int, factors: list[tuple[int, int]],
                     seed: int = 0) -> list[np.ndarray]:
    """photo()'s Y, Cb, Cr, each box-filtered to its sampling factors."""
    ycc = np.asarray(Image.fromarray(photo(w, h, seed)).convert("YCbCr"),
                     np.float64)
    hmax = max(f[0] for f in factors)
    vmax = max(f[1] for f in factors)
    out = []
    for i, (fh, fv) in enumerate(factors):
        ry, rx = vmax // fv, hmax // fh
        ch, cw = -(-h // ry), -(-w // rx)
        p = np.pad(ycc[..., i], ((0, ch * ry - h), (0, cw * rx - w)),
                   mode="edge")
        out.append(p.reshape(ch, ry, cw, rx).mean(axis=(1, 3)))
    return out


LAYOUTS = {
    # sampling factors, scans (component indices), restart interval
    "4:4:0": ([(1, 2), (1, 1), (1, 1)], None, 0, J.S440),
    "4:4:0-scan-per-component-rst": ([(1, 2), (1, 1), (1, 1)],
                                     [[1], [0], [2]], 2, J.S440),
    "4:2:0-scan-per-component": ([(2, 2), (1, 1), (1, 1)],
                                 [[0], [1], [2]], 0, J.S420),
    "4:2:0-luma-then-chroma-rst": ([(2, 2), (1, 1), (1, 1)],
                                   [[0], [1, 2]], 3, J.S420),
    "4:4:4-2x1-mcus": ([(2, 1), (2, 1), (2, 1)], None, 0, J.S444),
    "4:2:2-scans-reversed": ([(2, 1), (1, 1), (1, 1)], [[2], [0], [1]], 0,
                             J.S422),
}


@pytest.mark.parametrize("size", [(1, 1), (2, 5), (17, 9), (33, 50)],
                         ids=lambda s: "%dx%d" % s)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_layouts_pillow_does_not_write(layout, size):
    """Sequential files libjpeg-turbo decodes but Pillow does not write
    (jpegenc.py): 4:4:0, a scan per component in any order (the decoder
    keeps every coefficient until EOI then), restart intervals in
    one-component scans, luma MCUs of 2 x 1 blocks at 4:4:4."""
    factors, scans, ri, kind = LAYOUTS[layout]
    w, h = size
    data = jpegenc.encode(component_planes(w, h, factors), factors, scans,
                          ri)
    check_against_libjpeg(data, w, h, kind)


def test_grey_with_2x2_factors():
    """A lone component's sampling factors shape nothing (T.81 A.2.2)."""
    w, h = 29, 21
    data = jpegenc.encode(component_planes(w, h, [(2, 2)])[:1], [(2, 2)])
    pic = J.decode(data)
    assert pic.info.subsampling == J.GREY
    assert np.array_equal(pic.y[:h, :w], J.pillow_ycbcr(data))
    check_padding(pic)


def test_interleaved_scan_of_more_than_10_blocks():
    """T.81 B.2.3: an MCU of an interleaved scan holds at most 10 blocks."""
    factors = [(2, 2), (2, 2), (2, 2)]
    data = jpegenc.encode(component_planes(16, 16, factors), factors)
    with pytest.raises(J.JpegdError) as e:
        J.parse(data)
    assert e.value.errno == errno.EINVAL


def test_full_hd():
    w, h = 1920, 1080
    data = encode(photo(w, h, seed=7), quality=90, subsampling=2)
    check_against_libjpeg(data, w, h, J.S420)


def test_refusals():
    data = encode(photo(40, 30), quality=90)
    info = J.parse(data)
    with pytest.raises(J.JpegdError) as e:
        J.parse(data, max_dim=39)
    assert e.value.errno == errno.E2BIG
    assert J.parse(data, max_dim=40).width == 40
    for out, scratch in ((info.out_size - 1, None),
                         (None, info.scratch_size - 1)):
        with pytest.raises(J.JpegdError) as e:
            J.decode(data, out_size=out, scratch_size=scratch)
        assert e.value.errno == errno.ENOSPC
    # a file cut anywhere never decodes
    for n in (0, 1, 2, 100, len(data) // 2, len(data) - 2, len(data) - 1):
        with pytest.raises(J.JpegdError) as e:
            J.decode(data[:n])
        assert e.value.errno == errno.EINVAL
    # 12-bit precision, arithmetic coding: valid JPEG, not taken
    sof = data.index(b"\xff\xc0")
    twelve = bytearray(data)
    twelve[sof + 4] = 12
    arith = bytearray(data)
    arith[sof + 1] = 0xc9
    for bad in (twelve, arith):
        with pytest.raises(J.JpegdError) as e:
            J.decode(bytes(bad))
        assert e.value.errno == errno.EOPNOTSUPP


def _scans(data: bytes) -> list[tuple[int, int, tuple[int, int, int, int]]]:
    """(start, end, (Ss, Se, Ah, Al)) of each scan with the table
    segments just before it (Pillow writes a scan's DHT before its SOS)."""
    out, start = [], None
    for pos, m, ln in J.segments(data):
        if m == 0xC4 and start is None:
            start = pos
        elif m == 0xDA:
            ns = data[pos + 4]
            p = pos + 5 + 2 * ns
            out.append((pos if start is None else start, pos + ln,
                        (data[p], data[p + 1], data[p + 2] >> 4,
                         data[p + 2] & 15)))
            start = None
        else:
            start = None
    return out


def _reorder(data: bytes, order: list[int]) -> bytes:
    """@data with its scans in @order (indices; repeats and drops allowed)."""
    scans = _scans(data)
    head, tail = data[:scans[0][0]], data[scans[-1][1]:]
    return head + b"".join(data[scans[i][0]:scans[i][1]] for i in order) \
        + tail


def test_progression_order():
    """Scans out of the order T.81 G.1.1.1.1 allows are refused; a file
    that stops after any complete scan is a (coarser) picture."""
    data = encode(photo(45, 29, seed=11), quality=90, subsampling=2,
                  progressive=True)
    scans = _scans(data)
    params = [p for _, _, p in scans]
    n = len(scans)
    assert _reorder(data, list(range(n))) == data
    J.decode(data)
    first_ac = next(i for i, p in enumerate(params) if p[0] > 0)
    refine = next(i for i, p in enumerate(params) if p[0] > 0 and p[2] > 0)
    bad = {
        "an AC scan before the DC scans": [first_ac] + [
            i for i in range(n) if i != first_ac],
        "a first scan sent twice": list(range(first_ac + 1)) + [first_ac]
        + list(range(first_ac + 1, n)),
        "a refinement before its first scan": [refine] + [
            i for i in range(n) if i != refine],
        "a refinement sent twice": list(range(refine + 1)) + [refine]
        + list(range(refine + 1, n)),
    }
    for what, order in bad.items():
        with pytest.raises(J.JpegdError) as e:
            J.decode(_reorder(data, order))
        assert e.value.errno == errno.EINVAL, what
    # any prefix of whole scans that has every component's DC decodes
    dc_done = max(i for i, p in enumerate(params) if p[0] == 0 and p[2] == 0)
    for k in range(dc_done + 1, n + 1):
        J.decode(_reorder(data, list(range(k))))
    with pytest.raises(J.JpegdError):
        J.decode(_reorder(data, list(range(dc_done))))


def test_sequential_component_twice():
    data = encode(photo(30, 20), quality=90)
    (scan,) = _scans(data)
    with pytest.raises(J.JpegdError) as e:
        J.decode(_reorder(data, [0, 0]))
    assert e.value.errno == errno.EINVAL
    assert scan[2] == (0, 63, 0, 0)
