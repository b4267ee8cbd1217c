# SPDX-License-Identifier: GPL-2.0
"""acl.media's VPC on the device's DVPP engine (DOC: DVPP VPC).

Pictures made here go through acl.media as Ascend's samples call it
(picture descs on dvpp_malloc'd memory, resize and ROI configs, batch
picture descs, the *_async calls, synchronize_stream) and through
davinci.ops. Every output channel is held to a numpy float64 reference of
the formula NUMERICS.md (VPC) states: bilinear within 0.5 + 255/2048 of
it (and bit for bit its 11-bit fixed-point rule), nearest exactly;
colour conversion to Pillow's YCbCr <-> RGB within 1 (and the exact
rearrangements bit for bit); bytes outside what a call may write stay as
they were; pictures that break DVPP's rules are refused
with ACL_ERROR_INVALID_PARAM before anything is queued, by the device too
for a raw parameter block (the task fails, nothing written), and no device
memory is left behind.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from PIL import Image

import davinci
from davinci import dvpp, ops, schema

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "ops"))
import jpegdlib as J  # noqa: E402
from test_jpegd import encode, photo  # noqa: E402

NV12, NV21, YUYV, RGB, BGR = 1, 2, 7, 12, 13
FMT = {NV12: "nv12", NV21: "nv21", YUYV: "yuyv", RGB: "rgb", BGR: "bgr"}
#: the bilinear bound NUMERICS.md states: rounding plus 11-bit weights
BILINEAR_BOUND = 0.5 + 255 / 2048
PAD = 0xA5              # what the bytes a call must not write hold


# -- pictures as numpy planes -------------------------------------------------
def chroma_dims(fmt: str, w: int, h: int) -> tuple[int, int]:
    if fmt in ("nv12", "nv21"):
        return (h + 1) // 2, (w + 1) // 2
    if fmt == "yuyv":
        return h, w // 2
    return h, w


def planes_of(pic: dvpp.Picture, seed: int) -> list[np.ndarray]:
    """Three channels (Y, U, V or R, G, B) of a photo-like picture."""
    rgb = photo(pic.width, pic.height, seed)
    if pic.yuv:
        ch, cw = chroma_dims(pic.format, pic.width, pic.height)
        small = photo(cw, ch, seed + 1)
        return [rgb[..., 0], small[..., 1], small[..., 2]]
    return [rgb[..., k] for k in range(3)]


def _views(pic: dvpp.Picture, buf: np.ndarray) -> list[np.ndarray]:
    """Writable views of ``buf``'s three channels, each its samples only."""
    w, h, ws, hs = pic.width, pic.height, pic.width_stride, \
        pic.height_stride
    rows = buf[:ws * hs].reshape(hs, ws)
    if pic.format in ("nv12", "nv21"):
        ch, cw = chroma_dims(pic.format, w, h)
        uv = buf[ws * hs:].reshape(hs // 2, ws)
        u, v = uv[:ch, 0:2 * cw:2], uv[:ch, 1:2 * cw:2]
        return [rows[:h, :w], *((v, u) if pic.format == "nv21" else (u, v))]
    if pic.format == "yuyv":
        return [rows[:h, 0:2 * w:2], rows[:h, 1:2 * w:4],
                rows[:h, 3:2 * w:4]]
    px = rows[:h, :3 * w].reshape(h, w, 3)
    order = (2, 1, 0) if pic.format == "bgr" else (0, 1, 2)
    return [px[..., k] for k in order]


def pack(pic: dvpp.Picture, planes, fill: int = PAD) -> np.ndarray:
    buf = np.full(pic.size, fill, np.uint8)
    for view, p in zip(_views(pic, buf), planes):
        view[...] = p
    return buf


def unpack(pic: dvpp.Picture, buf: np.ndarray) -> list[np.ndarray]:
    return [v.copy() for v in _views(pic, buf)]


def written_mask(pic: dvpp.Picture, rect: dvpp.Rect | None = None):
    """True at each byte of ``pic`` a VPC call pasting into ``rect`` (the
    whole picture by default) writes."""
    rect = rect or pic.whole()
    mask = np.zeros(pic.size, bool)
    for view, (ys, xs) in zip(_views(pic, np.arange(pic.size)), _subs(pic)):
        mask[view[rect.top // ys:rect.bottom // ys + 1,
                  rect.left // xs:rect.right // xs + 1].ravel()] = True
    return mask


def _subs(pic: dvpp.Picture):
    if pic.format in ("nv12", "nv21"):
        return [(1, 1), (2, 2), (2, 2)]
    if pic.format == "yuyv":
        return [(1, 1), (1, 2), (1, 2)]
    return [(1, 1)] * 3


def sub_rect(pic: dvpp.Picture, k: int, r: dvpp.Rect):
    ys, xs = _subs(pic)[k]
    return (slice(r.top // ys, r.bottom // ys + 1),
            slice(r.left // xs, r.right // xs + 1))


# -- the references -----------------------------------------------------------
def _axis(n_in: int, n_out: int):
    """OpenCV INTER_LINEAR's taps along one axis, in float64."""
    pos = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    pos = np.maximum(pos, 0)
    i0 = np.minimum(np.floor(pos).astype(np.int64), n_in - 1)
    frac = np.where(i0 >= n_in - 1, 0.0, pos - i0)
    return i0, np.minimum(i0 + 1, n_in - 1), frac


def ref_bilinear(p: np.ndarray, h: int, w: int) -> np.ndarray:
    p = p.astype(np.float64)
    y0, y1, fy = _axis(p.shape[0], h)
    x0, x1, fx = _axis(p.shape[1], w)
    top = p[y0][:, x0] * (1 - fx) + p[y0][:, x1] * fx
    bot = p[y1][:, x0] * (1 - fx) + p[y1][:, x1] * fx
    return top * (1 - fy)[:, None] + bot * fy[:, None]


def _axis_fixed(n_in: int, n_out: int):
    """The same taps as NUMERICS.md states them in fixed point: the
    position's fraction rounded to 11 bits, from exact integers."""
    d = np.arange(n_out, dtype=np.int64)
    num = (2 * d + 1) * n_in - n_out          # 2 * n_out * position
    den = 2 * n_out
    i0 = np.where(num <= 0, 0, np.maximum(num, 0) // den)
    w = np.where(num <= 0, 0, (np.maximum(num, 0) % den * 2048 + n_out)
                 // den)
    w = np.where(i0 >= n_in - 1, 0, w)
    i0 = np.minimum(i0, n_in - 1)
    return i0, np.minimum(i0 + 1, n_in - 1), w


def ref_bilinear_fixed(p: np.ndarray, h: int, w: int) -> np.ndarray:
    p = p.astype(np.int64)
    y0, y1, wy = _axis_fixed(p.shape[0], h)
    x0, x1, wx = _axis_fixed(p.shape[1], w)
    top = p[y0][:, x0] * (2048 - wx) + p[y0][:, x1] * wx
    bot = p[y1][:, x0] * (2048 - wx) + p[y1][:, x1] * wx
    return ((top * (2048 - wy)[:, None] + bot * wy[:, None] + (1 << 21))
            >> 22).astype(np.uint8)


def ref_nearest(p: np.ndarray, h: int, w: int) -> np.ndarray:
    ys = np.arange(h) * p.shape[0] // h
    xs = np.arange(w) * p.shape[1] // w
    return p[ys][:, xs]


def check_resampled(got: np.ndarray, src: np.ndarray, interp: str) -> None:
    h, w = got.shape
    if interp == "nearest":
        assert np.array_equal(got, ref_nearest(src, h, w))
        return
    ref = ref_bilinear(src, h, w)
    err = np.abs(got.astype(np.float64) - ref)
    assert err.max() <= BILINEAR_BOUND, "max error %.4f" % err.max()
    # and bit for bit the fixed-point rule that bound is derived from
    assert np.array_equal(got, ref_bilinear_fixed(src, h, w))


# -- acl.media ----------------------------------------------------------------
def _hbm_used(acl) -> int:
    free, total, ret = acl.rt.get_mem_info(acl.constants.ACL_HBM_MEM)
    assert ret == 0
    return total - free


class Media:
    """A channel, a stream and the descs and buffers a test makes, freed by
    close()."""

    def __init__(self, acl):
        self.acl, self.m = acl, acl.media
        self.ch = self.m.dvpp_create_channel_desc()
        assert self.ch and self.m.dvpp_create_channel(self.ch) == 0
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0
        self.bufs, self.descs, self.configs, self.batches = [], [], [], []

    def roi(self, r: dvpp.Rect):
        h = self.m.dvpp_create_roi_config(r.left, r.right, r.top, r.bottom)
        assert h
        self.configs.append(("roi", h))
        return h

    def resize_config(self, interp=None):
        h = self.m.dvpp_create_resize_config()
        assert h
        if interp is not None:
            assert self.m.dvpp_set_resize_config_interpolation(h, interp) == 0
        self.configs.append(("resize", h))
        return h

    def upload(self, data: np.ndarray) -> int:
        p, ret = self.m.dvpp_malloc(data.size)
        assert ret == 0
        self.bufs.append(p)
        assert self.acl.rt.memcpy(p, data.size, self.acl.util.numpy_to_ptr(
            data), data.size, 1) == 0
        return p

    def desc(self, pic: dvpp.Picture, data: np.ndarray, fmt: int | None = None,
             desc=None):
        """A picture desc of ``pic`` (``fmt`` overriding its format) on a
        copy of ``data``; (desc, device pointer)."""
        ptr = self.upload(data)
        if desc is None:
            desc = self.m.dvpp_create_pic_desc()
            self.descs.append(desc)
        fmt = fmt if fmt is not None else {v: k for k, v in FMT.items()}[
            pic.format]
        for field, value in (("data", ptr), ("size", data.size),
                             ("format", fmt), ("width", pic.width),
                             ("height", pic.height),
                             ("width_stride", pic.width_stride),
                             ("height_stride", pic.height_stride)):
            assert getattr(self.m, "dvpp_set_pic_desc_" + field)(
                desc, value) == 0
        return desc, ptr

    def batch(self, n: int):
        b = self.m.dvpp_create_batch_pic_desc(n)
        assert b
        self.batches.append(b)
        return b

    def read(self, ptr: int, n: int) -> np.ndarray:
        out = np.empty(n, np.uint8)
        assert self.acl.rt.memcpy(self.acl.util.numpy_to_ptr(out), n, ptr, n,
                                  2) == 0
        return out

    def sync(self) -> int:
        return self.acl.rt.synchronize_stream(self.stream)

    def close(self):
        m = self.m
        for kind, h in self.configs:
            assert (m.dvpp_destroy_roi_config(h) if kind == "roi" else
                    m.dvpp_destroy_resize_config(h)) == 0
        for d in self.descs:
            assert m.dvpp_destroy_pic_desc(d) == 0
        for b in self.batches:
            assert m.dvpp_destroy_batch_pic_desc(b) == 0
        for p in self.bufs:
            assert m.dvpp_free(p) == 0
        assert self.acl.rt.destroy_stream(self.stream) == 0
        assert m.dvpp_destroy_channel(self.ch) == 0
        assert m.dvpp_destroy_channel_desc(self.ch) == 0


@pytest.fixture
def media(acl_dev):
    md = Media(acl_dev)
    yield md
    md.close()


def run_resize(media, sp, dp, interp_code, seed=1):
    planes = planes_of(sp, seed)
    i, _ = media.desc(sp, pack(sp, planes))
    o, optr = media.desc(dp, np.full(dp.size, PAD, np.uint8))
    cfg = media.resize_config(interp_code)
    assert media.m.dvpp_vpc_resize_async(media.ch, i, o, cfg,
                                         media.stream) == 0
    assert media.sync() == 0
    assert media.m.dvpp_get_pic_desc_ret_code(o) == 0
    return planes, media.read(optr, dp.size)


INTERP = {"bilinear": 1, "nearest": 2}


@pytest.mark.parametrize("interp", list(INTERP))
@pytest.mark.parametrize("fmt", ["nv12", "nv21"])
@pytest.mark.parametrize("sizes", [((64, 48), (224, 224)),
                                   ((333, 250), (224, 224)),
                                   ((200, 100), (96, 60))],
                         ids=["up", "down-odd", "down"])
def test_resize_matches_the_reference(media, sizes, fmt, interp):
    (w, h), (ow, oh) = sizes
    sp, dp = dvpp.Picture.aligned(fmt, w, h), dvpp.Picture.aligned(fmt, ow,
                                                                    oh)
    planes, out = run_resize(media, sp, dp, INTERP[interp])
    for k, got in enumerate(unpack(dp, out)):
        check_resampled(got, planes[k], interp)
    # the strides' padding is not written
    assert (out[~written_mask(dp)] == PAD).all()


def test_default_interpolation_is_nearest(media):
    sp, dp = dvpp.Picture.aligned("nv12", 64, 48), \
        dvpp.Picture.aligned("nv12", 100, 80)
    planes, out = run_resize(media, sp, dp, None)
    for k, got in enumerate(unpack(dp, out)):
        check_resampled(got, planes[k], "nearest")
    cfg = media.resize_config()
    assert media.m.dvpp_get_resize_config_interpolation(cfg) == 0
    assert media.m.dvpp_set_resize_config_interpolation(cfg, 7) == \
        media.acl.constants.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("fmts,interp", [(("rgb", "bgr"), "bilinear"),
                                         (("bgr", "bgr"), "nearest"),
                                         (("yuyv", "nv12"), "bilinear"),
                                         (("nv21", "yuyv"), "nearest")])
def test_resize_other_formats_through_davinci_ops(dev, fmts, interp):
    sp = dvpp.Picture.aligned(fmts[0], 90, 60)
    dp = dvpp.Picture.aligned(fmts[1], 128, 38)
    planes = planes_of(sp, 5)
    src = dev.tensor(pack(sp, planes))
    out = dev.tensor(np.full(dp.size, PAD, np.uint8))
    ops.vpc_resize(src, sp, out, dp, interp)
    got = out.numpy()
    for k, g in enumerate(unpack(dp, got)):
        check_resampled(g, planes[k], interp)
    assert (got[~written_mask(dp)] == PAD).all()


def test_crop_resizes_its_rect_into_the_output(media):
    sp = dvpp.Picture.aligned("nv12", 300, 200)
    dp = dvpp.Picture.aligned("nv12", 224, 224)
    planes = planes_of(sp, 7)
    crop = dvpp.Rect(40, 30, 40 + 149, 30 + 99)
    i, _ = media.desc(sp, pack(sp, planes))
    o, optr = media.desc(dp, np.full(dp.size, PAD, np.uint8))
    assert media.m.dvpp_vpc_crop_async(media.ch, i, o, media.roi(crop),
                                       media.stream) == 0
    assert media.sync() == 0
    out = media.read(optr, dp.size)
    for k, got in enumerate(unpack(dp, out)):
        check_resampled(got, planes[k][sub_rect(sp, k, crop)], "bilinear")
    assert (out[~written_mask(dp)] == PAD).all()


def test_crop_and_paste_leaves_the_rest_of_the_output_untouched(media):
    sp = dvpp.Picture.aligned("nv12", 256, 160)
    dp = dvpp.Picture.aligned("nv12", 320, 240)
    planes = planes_of(sp, 8)
    canvas = pack(dp, planes_of(dp, 9))      # an existing picture
    crop = dvpp.Rect(16, 8, 16 + 127, 8 + 99)
    paste = dvpp.Rect(32, 64, 32 + 183, 64 + 151)
    i, _ = media.desc(sp, pack(sp, planes))
    o, optr = media.desc(dp, canvas)
    assert media.m.dvpp_vpc_crop_and_paste_async(
        media.ch, i, o, media.roi(crop), media.roi(paste),
        media.stream) == 0
    assert media.sync() == 0
    out = media.read(optr, dp.size)
    inside = written_mask(dp, paste)
    assert np.array_equal(out[~inside], canvas[~inside])
    assert not np.array_equal(out[inside], canvas[inside])
    for k, got in enumerate(unpack(dp, out)):
        check_resampled(got[sub_rect(dp, k, paste)],
                        planes[k][sub_rect(sp, k, crop)], "bilinear")


@pytest.mark.parametrize("paste", [False, True], ids=["crop", "and-paste"])
def test_batch_crop(media, paste):
    """Two inputs, roi_nums [2, 1]: three outputs, each its own crop."""
    m = media.m
    sps = [dvpp.Picture.aligned("nv12", 200, 120),
           dvpp.Picture.aligned("nv21", 160, 96)]
    planes = [planes_of(p, 20 + n) for n, p in enumerate(sps)]
    dp = dvpp.Picture.aligned("nv12", 64, 48)
    crops = [dvpp.Rect(0, 0, 99, 59), dvpp.Rect(100, 60, 199, 119),
             dvpp.Rect(10, 20, 10 + 63, 20 + 47)]
    pastes = [dvpp.Rect(16, 2, 47, 33), dvpp.Rect(0, 0, 63, 47),
              dvpp.Rect(32, 10, 32 + 31, 10 + 19)]
    src_b, dst_b = media.batch(2), media.batch(3)
    for n, p in enumerate(sps):
        media.desc(p, pack(p, planes[n]), desc=m.dvpp_get_pic_desc(src_b, n))
    outs = [media.desc(dp, np.full(dp.size, PAD, np.uint8),
                       desc=m.dvpp_get_pic_desc(dst_b, n))[1]
            for n in range(3)]
    crop_h = [media.roi(r) for r in crops]
    if paste:
        got_b, ret = m.dvpp_vpc_batch_crop_and_paste_async(
            media.ch, src_b, [2, 1], dst_b, crop_h,
            [media.roi(r) for r in pastes], media.stream)
    else:
        got_b, ret = m.dvpp_vpc_batch_crop_async(
            media.ch, src_b, [2, 1], dst_b, crop_h, media.stream)
    assert ret == 0 and got_b == dst_b
    assert media.sync() == 0
    for n, (ptr, crop) in enumerate(zip(outs, crops)):
        src_n = 0 if n < 2 else 1
        into = pastes[n] if paste else dp.whole()
        out = media.read(ptr, dp.size)
        assert m.dvpp_get_pic_desc_ret_code(m.dvpp_get_pic_desc(dst_b, n)) \
            == 0
        for k, got in enumerate(unpack(dp, out)):
            check_resampled(got[sub_rect(dp, k, into)],
                            planes[src_n][k][sub_rect(sps[src_n], k, crop)],
                            "bilinear")
        assert (out[~written_mask(dp, into)] == PAD).all()
    # the crops must match roi_nums and the outputs
    _, ret = m.dvpp_vpc_batch_crop_async(media.ch, src_b, [2, 2], dst_b,
                                         crop_h, media.stream)
    assert ret == media.acl.constants.ACL_ERROR_INVALID_PARAM


# -- colour conversion --------------------------------------------------------
def _pillow_ycc(rgb: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(rgb, "RGB").convert("YCbCr"))


def _pillow_rgb(ycc: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(ycc, "YCbCr").convert("RGB"))


def _mean_blocks(p: np.ndarray, ys: int, xs: int) -> np.ndarray:
    h, w = p.shape
    s = p.astype(np.int64).reshape(h // ys, ys, w // xs, xs).sum((1, 3))
    n = ys * xs
    return ((s + n // 2) // n).astype(np.uint8)


def _full_ycc(pic: dvpp.Picture, planes) -> np.ndarray:
    """The Y, Cb, Cr of each pixel: chroma repeated over what it covers."""
    (_, _), (ys, xs), _ = _subs(pic)
    h, w = pic.height, pic.width
    up = [np.repeat(np.repeat(p, ys, 0), xs, 1)[:h, :w] for p in planes[1:]]
    return np.stack([planes[0], *up], -1)


def reference_convert(sp: dvpp.Picture, planes, dp: dvpp.Picture):
    """The output channels by Pillow's conversions, and whether the answer
    is exact (no YCbCr <-> RGB arithmetic in between)."""
    if sp.yuv and not dp.yuv:
        rgb = _pillow_rgb(_full_ycc(sp, planes))
        return [rgb[..., k] for k in range(3)], False
    if not sp.yuv and not dp.yuv:
        return list(planes), True
    if sp.yuv:
        ycc, exact = _full_ycc(sp, planes), True
    else:
        ycc, exact = _pillow_ycc(np.stack(planes, -1)), False
    _, (ys, xs), _ = _subs(dp)
    return [ycc[..., 0]] + [_mean_blocks(ycc[..., k], ys, xs)
                            for k in (1, 2)], exact


@pytest.mark.parametrize("pair", [("rgb", "nv12"), ("bgr", "nv21"),
                                  ("nv12", "rgb"), ("nv21", "bgr"),
                                  ("yuyv", "rgb"), ("rgb", "yuyv"),
                                  ("nv12", "nv21"), ("nv12", "yuyv"),
                                  ("yuyv", "nv12"), ("rgb", "bgr")])
def test_convert_color_matches_pillow(media, pair):
    sfmt, dfmt = pair
    sp = dvpp.Picture.aligned(sfmt, 96, 64)
    dp = dvpp.Picture.aligned(dfmt, 96, 64)
    planes = planes_of(sp, 30)
    i, _ = media.desc(sp, pack(sp, planes))
    o, optr = media.desc(dp, np.full(dp.size, PAD, np.uint8))
    assert media.m.dvpp_vpc_convert_color_async(media.ch, i, o,
                                                media.stream) == 0
    assert media.sync() == 0
    out = media.read(optr, dp.size)
    ref, exact = reference_convert(sp, planes, dp)
    for k, got in enumerate(unpack(dp, out)):
        diff = np.abs(got.astype(np.int64) - ref[k])
        assert diff.max() <= (0 if exact else 1), (k, diff.max())
    assert (out[~written_mask(dp)] == PAD).all()


def test_convert_color_takes_the_size_from_the_input(media):
    """An output desc of width, height and strides 0, as CANN's reference
    has it: the input's size at DVPP's alignment, set in the desc."""
    m = media.m
    sp = dvpp.Picture.aligned("nv12", 50, 30)
    planes = planes_of(sp, 31)
    i, _ = media.desc(sp, pack(sp, planes))
    dp = dvpp.Picture.aligned("rgb", 50, 30)
    ptr = media.upload(np.zeros(dp.size, np.uint8))
    o = m.dvpp_create_pic_desc()
    media.descs.append(o)
    for f, v in (("data", ptr), ("size", dp.size), ("format", RGB)):
        assert getattr(m, "dvpp_set_pic_desc_" + f)(o, v) == 0
    assert m.dvpp_vpc_convert_color_async(media.ch, i, o, media.stream) == 0
    assert media.sync() == 0
    assert (m.dvpp_get_pic_desc_width(o), m.dvpp_get_pic_desc_height(o),
            m.dvpp_get_pic_desc_width_stride(o),
            m.dvpp_get_pic_desc_height_stride(o)) == (50, 30, 160, 30)
    ref, _ = reference_convert(sp, planes, dp)
    got = unpack(dp, media.read(ptr, dp.size))
    assert max(np.abs(g.astype(int) - r).max() for g, r in zip(got, ref)) <= 1


# -- DVPP's rules -------------------------------------------------------------
def _bad_cases():
    ok_in = dvpp.Picture.aligned("nv12", 64, 48)
    ok_out = dvpp.Picture.aligned("nv12", 32, 24)
    crop = dvpp.Rect(0, 0, 31, 23)
    rep = lambda p, **kw: dvpp.Picture(**{**p.__dict__, **kw})  # noqa: E731
    return {
        "width stride not a multiple of 16":
            ("resize", rep(ok_in, width_stride=72), ok_out, None, None),
        "height stride odd":
            ("resize", rep(ok_in, height_stride=49), ok_out, None, None),
        "stride below the width":
            ("resize", ok_in, rep(ok_out, width=40, width_stride=32), None,
             None),
        "too small":
            ("resize", ok_in, dvpp.Picture.aligned("nv12", 8, 6), None,
             None),
        "too large":
            ("resize", ok_in, rep(ok_out, width=4098, width_stride=4112),
             None, None),
        "odd output width":
            ("resize", ok_in, rep(ok_out, width=31), None, None),
        "upscaled beyond 16":
            ("resize", dvpp.Picture.aligned("nv12", 10, 6),
             dvpp.Picture.aligned("nv12", 176, 6), None, None),
        "odd crop left":
            ("crop", ok_in, ok_out, dvpp.Rect(1, 0, 31, 23), None),
        "even crop right":
            ("crop", ok_in, ok_out, dvpp.Rect(0, 0, 30, 23), None),
        "crop outside the input":
            ("crop", ok_in, ok_out, dvpp.Rect(0, 0, 63, 49), None),
        "paste left not a multiple of 16":
            ("paste", ok_in, ok_out, crop, dvpp.Rect(8, 0, 31, 23)),
        "paste outside the output":
            ("paste", ok_in, ok_out, crop, dvpp.Rect(16, 0, 33, 23)),
        "resize between YUV and RGB":
            ("resize", ok_in, dvpp.Picture.aligned("rgb", 32, 24), None,
             None),
        "a format VPC does not take":
            ("resize", ok_in, ok_out, None, None, {"out_format": 3}),
        "the output desc's size short of its picture":
            ("resize", ok_in, ok_out, None, None, {"out_size": -1}),
    }


@pytest.mark.parametrize("case", list(_bad_cases()))
def test_alignment_violations_are_refused_before_anything_is_written(
        media, case):
    acl = media.acl
    what, sp, dp, crop, paste, *extra = _bad_cases()[case]
    extra = extra[0] if extra else {}
    m = media.m
    cfg, crop_h = media.resize_config(1), media.roi(crop or sp.whole())
    paste_h = media.roi(paste) if paste else None
    i, _ = media.desc(sp, np.random.default_rng(2).integers(
        0, 256, sp.size, dtype=np.uint8))
    # the output buffer: what its (bad) picture needs, at least a page
    n = max(dp.size + 64, 4096)
    o, optr = media.desc(dp, np.full(n, PAD, np.uint8), extra.get(
        "out_format"))
    if "out_size" in extra:
        assert m.dvpp_set_pic_desc_size(o, dp.size - 1) == 0
    media.sync()
    before = _hbm_used(acl)
    if what == "resize":
        ret = m.dvpp_vpc_resize_async(media.ch, i, o, cfg, media.stream)
    elif what == "crop":
        ret = m.dvpp_vpc_crop_async(media.ch, i, o, crop_h, media.stream)
    else:
        ret = m.dvpp_vpc_crop_and_paste_async(media.ch, i, o, crop_h,
                                              paste_h, media.stream)
    assert ret == acl.constants.ACL_ERROR_INVALID_PARAM
    assert acl.get_recent_err_msg()
    assert media.sync() == 0
    assert (media.read(optr, n) == PAD).all()
    assert _hbm_used(acl) == before


def _raw_block(**kw) -> bytes:
    fields = dict(
        src_format=NV12, src_width=64, src_height=48, src_width_stride=64,
        src_height_stride=48, dst_format=NV12, dst_width=32, dst_height=24,
        dst_width_stride=32, dst_height_stride=24, crop_right=63,
        crop_bottom=47, paste_right=31, paste_bottom=23)
    fields.update(kw)
    return schema.by_name("VPC_CROP").params.pack(**fields)


@pytest.mark.parametrize("op,bad", [
    ("VPC_RESIZE", {}),                                 # the good one
    ("VPC_RESIZE", {"dst_width_stride": 40}),
    ("VPC_RESIZE", {"src_height_stride": 47}),
    ("VPC_RESIZE", {"crop_right": 61}),                 # not the whole input
    ("VPC_CROP", {"crop_left": 1}),
    ("VPC_CROP", {"paste_left": 8}),
    ("VPC_CROP", {"dst_format": 3}),
    ("VPC_RESIZE", {"interpolation": 2}),
    ("VPC_RESIZE", {"pad": 1}),
    ("VPC_CONVERT_COLOR", {}),                          # sizes differ
    ("VPC_RESIZE", {"dst_width": 4098, "dst_width_stride": 4112}),
], ids=lambda v: v if isinstance(v, str) else "-".join(v) or "good")
def test_the_device_refuses_a_raw_block_breaking_the_rules(dev, op, bad):
    """The core checks its copy of the block as it takes the task in,
    whatever the library checked: the task fails with INVALID_TASK and
    nothing is written."""
    desc = schema.by_name(op)
    src = dev.tensor(np.full(64 * 48 * 3 // 2, 7, np.uint8))
    out = dev.tensor(np.full(8192, PAD, np.uint8))
    s = dev.stream()
    with dev.malloc(4096) as block:
        block.write(_raw_block(**bad))
        t = davinci.make_task(desc.opcode, dst=out.dev_addr,
                              src0=src.dev_addr, params=block.dev_addr,
                              params_size=desc.params.size,
                              params_version=desc.params.version)
        if not bad and op == "VPC_RESIZE":
            s.submit([t])
            s.synchronize()
            assert (out.numpy()[:32 * 24] == 7).all()
            return
        s.submit([t])
        with pytest.raises(davinci.TaskFailedError) as e:
            s.synchronize()
    assert e.value.status_name == "INVALID_TASK"
    assert e.value.opcode == desc.opcode
    assert (out.numpy() == PAD).all()



# -- DVPP's resolution limits -------------------------------------------------
# acldvppVpcResizeAsync's restrictions (CANN, Atlas 200/300/500 inference
# and training products): inputs of 10 x 6 .. 4096 x 4096 in every format;
# a side in (4096, 8192] for YUV420SP inputs only (the "8K" mode: NV12 and
# NV21 on the Ascend 310 and 910), the height stride up to 16384 (CANN 6.2's
# VPC restrictions); outputs, and crop rects, of 10 x 6 .. 4096 x 4096.
def _resize_through_ops(dev, sp, dp, interp="bilinear", seed=3):
    planes = planes_of(sp, seed)
    src = dev.tensor(pack(sp, planes))
    out = dev.tensor(np.full(dp.size, PAD, np.uint8))
    ops.vpc_resize(src, sp, out, dp, interp)
    got = out.numpy()
    for k, g in enumerate(unpack(dp, got)):
        check_resampled(g, planes[k], interp)
    assert (got[~written_mask(dp)] == PAD).all()


@pytest.mark.parametrize("fmt,src,dst", [
    ("nv12", (4096, 6), (128, 6)), ("nv21", (10, 4096), (10, 128)),
    ("rgb", (4096, 6), (128, 12)), ("yuyv", (4096, 8), (4096, 8)),
    ("bgr", (10, 6), (160, 96)), ("nv12", (320, 192), (10, 6))],
    ids=lambda v: v if isinstance(v, str) else "%dx%d" % v)
def test_resize_at_the_documented_limits(dev, fmt, src, dst):
    """Each side at DVPP's smallest (10 x 6) and largest (4096) picture,
    in and out, and the scales at their 1/32 and 16, resize like any
    other picture."""
    _resize_through_ops(dev, dvpp.Picture.aligned(fmt, *src),
                        dvpp.Picture.aligned(fmt, *dst))


@pytest.mark.parametrize("fmt,src,dst", [
    ("rgb", (4097, 6), (256, 6)), ("bgr", (10, 4097), (10, 256)),
    ("nv12", (9, 6), (16, 6)), ("nv12", (10, 5), (10, 6)),
    ("nv12", (4096, 6), (4098, 6)), ("rgb", (64, 48), (10, 4097)),
    ("nv12", (64, 48), (8, 6)), ("yuyv", (64, 48), (16, 4))],
    ids=lambda v: v if isinstance(v, str) else "%dx%d" % v)
def test_resize_beyond_the_documented_limits_is_refused(dev, fmt, src, dst):
    """A picture outside DVPP's sizes is refused by davinci.dvpp before
    anything is queued (VpcError), and by the device for a raw block
    (INVALID_TASK, nothing written)."""
    def pic(w, h):
        ws = max(-(-w * dvpp._ROW_BYTES[fmt] // 16) * 16, 32)
        return dvpp.Picture(fmt, w, h, ws, -(-h // 2) * 2)
    sp, dp = pic(*src), pic(*dst)
    src_t = dev.tensor(np.full(sp.size, 7, np.uint8))
    out = dev.tensor(np.full(dp.size, PAD, np.uint8))
    with pytest.raises(dvpp.VpcError):
        ops.vpc_resize(src_t, sp, out, dp)
    desc = schema.by_name("VPC_RESIZE")
    code = dvpp.VPC_FORMATS[fmt]
    s = dev.stream()
    with dev.malloc(4096) as block:
        block.write(_raw_block(
            src_format=code, src_width=sp.width, src_height=sp.height,
            src_width_stride=sp.width_stride,
            src_height_stride=sp.height_stride, dst_format=code,
            dst_width=dp.width, dst_height=dp.height,
            dst_width_stride=dp.width_stride,
            dst_height_stride=dp.height_stride, crop_right=sp.width - 1,
            crop_bottom=sp.height - 1, paste_right=dp.width - 1,
            paste_bottom=dp.height - 1))
        s.submit([davinci.make_task(
            desc.opcode, dst=out.dev_addr, src0=src_t.dev_addr,
            params=block.dev_addr, params_size=desc.params.size,
            params_version=desc.params.version)])
        with pytest.raises(davinci.TaskFailedError) as e:
            s.synchronize()
    assert e.value.status_name == "INVALID_TASK"
    assert (out.numpy() == PAD).all()


@pytest.mark.parametrize("fmt,src", [
    ("nv12", (8192, 16)), ("nv21", (16, 8192)), ("nv12", (4098, 64))],
    ids=lambda v: v if isinstance(v, str) else "%dx%d" % v)
def test_8k_yuv420sp_input_is_resized_as_dvpp_does(dev, fmt, src):
    """DVPP's 8K mode: an NV12 or NV21 input with a side in (4096, 8192]
    resizes (to at most 4096, at 1/32 at least) like any other."""
    dst = [max(-(-v // 64) * 2, 16) for v in src]     # 1/32, rounded up even
    _resize_through_ops(dev, dvpp.Picture.aligned(fmt, *src),
                        dvpp.Picture.aligned(fmt, *dst))


def test_a_16384_row_height_stride_is_taken_for_an_8k_input(dev):
    """DVPP's VPC takes height strides up to 16384: the chroma plane then
    starts 16384 rows in, and the resize reads it there."""
    _resize_through_ops(dev, dvpp.Picture("nv12", 64, 8192, 64, 16384),
                        dvpp.Picture.aligned("nv12", 64, 256))


def test_8192x8192_nv12_resizes_to_256x256_through_acl_media(media):
    """The largest input DVPP takes, through acl.media as the samples call
    it: each channel the numpy rule's, the stride's bytes untouched. 256 x
    256 is the smallest output at VPC's 1/32 scale; 224 x 224, the
    samples' size, is refused for it (resize twice, or crop first)."""
    m = media.m
    sp = dvpp.Picture.aligned("nv12", 8192, 8192)
    rng = np.random.default_rng(8)
    # random samples: every tap's weight shows in the result
    planes = [rng.integers(0, 256, (8192, 8192), np.uint8),
              rng.integers(0, 256, (4096, 4096), np.uint8),
              rng.integers(0, 256, (4096, 4096), np.uint8)]
    i, _ = media.desc(sp, pack(sp, planes))
    dp = dvpp.Picture.aligned("nv12", 256, 256)
    o, optr = media.desc(dp, np.full(dp.size, PAD, np.uint8))
    assert m.dvpp_vpc_resize_async(media.ch, i, o, media.resize_config(1),
                                   media.stream) == 0
    assert media.sync() == 0
    got = media.read(optr, dp.size)
    for k, g in enumerate(unpack(dp, got)):
        check_resampled(g, planes[k], "bilinear")
    assert (got[~written_mask(dp)] == PAD).all()
    small = dvpp.Picture.aligned("nv12", 224, 224)
    with pytest.raises(dvpp.VpcError, match="1/32"):
        dvpp.check_vpc("VPC_RESIZE", sp, small, sp.whole(), small.whole())


@pytest.mark.parametrize("op,src,dst,crop,match", [
    # only YUV420SP takes the 8K mode
    ("VPC_RESIZE", ("yuyv", 4098, 8), ("yuyv", 256, 8), None, "NV12 or NV21"),
    ("VPC_RESIZE", ("rgb", 10, 4098), ("rgb", 10, 256), None, "NV12 or NV21"),
    # nor do outputs
    ("VPC_RESIZE", ("nv12", 4096, 64), ("nv12", 4098, 64), None, "output"),
    # sides and strides beyond it
    ("VPC_RESIZE", ("nv12", 8194, 64), ("nv12", 512, 64), None, "8192"),
    ("VPC_RESIZE", ("nv12", 64, 64, 64, 16386), ("nv12", 64, 64), None,
     "height stride"),
    # a crop of an 8K input stays within 4096 x 4096
    ("VPC_CROP", ("nv12", 8192, 64), ("nv12", 256, 64),
     dvpp.Rect(0, 0, 4097, 63), "4096 x 4096"),
], ids=["yuyv-8k", "rgb-8k", "8k-out", "8194", "hstride-16386",
        "crop-4098"])
def test_what_the_8k_mode_does_not_take_is_refused(dev, op, src, dst, crop,
                                                   match):
    """By davinci.dvpp before anything is queued (VpcError) and by the
    device for a raw block (INVALID_TASK, nothing written)."""
    def pic(fmt, w, h, ws=None, hs=None):
        ws = ws or max(-(-w * dvpp._ROW_BYTES[fmt] // 16) * 16, 32)
        return dvpp.Picture(fmt, w, h, ws, hs or -(-h // 2) * 2)
    sp, dp = pic(*src), pic(*dst)
    crop = crop or sp.whole()
    with pytest.raises(dvpp.VpcError, match=match):
        dvpp.check_vpc(op, sp, dp, crop, dp.whole())
    desc = schema.by_name(op)
    code = dvpp.VPC_FORMATS
    src_t = dev.tensor(np.full(sp.size, 7, np.uint8))
    out = dev.tensor(np.full(dp.size, PAD, np.uint8))
    s = dev.stream()
    with dev.malloc(4096) as block:
        block.write(_raw_block(
            src_format=code[sp.format], src_width=sp.width,
            src_height=sp.height, src_width_stride=sp.width_stride,
            src_height_stride=sp.height_stride, dst_format=code[dp.format],
            dst_width=dp.width, dst_height=dp.height,
            dst_width_stride=dp.width_stride,
            dst_height_stride=dp.height_stride, crop_left=crop.left,
            crop_top=crop.top, crop_right=crop.right,
            crop_bottom=crop.bottom, paste_right=dp.width - 1,
            paste_bottom=dp.height - 1))
        s.submit([davinci.make_task(
            desc.opcode, dst=out.dev_addr, src0=src_t.dev_addr,
            params=block.dev_addr, params_size=desc.params.size,
            params_version=desc.params.version)])
        with pytest.raises(davinci.TaskFailedError) as e:
            s.synchronize()
    assert e.value.status_name == "INVALID_TASK"
    assert (out.numpy() == PAD).all()


def test_no_device_memory_is_left_behind(acl_dev):
    acl = acl_dev
    warm = Media(acl)
    run_resize(warm, dvpp.Picture.aligned("nv12", 64, 48),
               dvpp.Picture.aligned("nv12", 32, 24), 1)
    warm.close()
    before = _hbm_used(acl)
    md = Media(acl)
    sp = dvpp.Picture.aligned("nv12", 64, 48)
    run_resize(md, sp, dvpp.Picture.aligned("nv12", 32, 24), 1)
    o, _ = md.desc(sp, np.zeros(sp.size, np.uint8))
    i, _ = md.desc(sp, pack(sp, planes_of(sp, 3)))
    assert md.m.dvpp_vpc_crop_and_paste_async(
        md.ch, i, o, md.roi(dvpp.Rect(0, 0, 31, 23)),
        md.roi(dvpp.Rect(16, 2, 47, 25)), md.stream) == 0
    assert md.m.dvpp_vpc_convert_color_async(md.ch, i, o, md.stream) == 0
    assert md.sync() == 0
    md.close()
    assert _hbm_used(acl) == before


# -- the samples' pipeline ----------------------------------------------------
def test_jpeg_decode_then_resize_to_224_on_one_stream(media):
    """vpc_jpeg_resnet50_imagenet_classification's preprocessing: JPEGD
    into 128 x 16 aligned NV12, VPC resize of its width x height to 224 x
    224, one synchronize."""
    m, acl = media.m, media.acl
    w, h = 333, 250
    data = encode(photo(w, h, seed=11), quality=90, subsampling=2)
    ptr = acl.util.bytes_to_ptr(data)
    size, ret = m.dvpp_jpeg_predict_dec_size(ptr, len(data), NV12)
    assert ret == 0
    jpeg = media.upload(np.frombuffer(data, np.uint8).copy())
    dec = media.upload(np.zeros(size, np.uint8))
    d = m.dvpp_create_pic_desc()
    media.descs.append(d)
    ws, hs = -(-w // 128) * 128, -(-h // 16) * 16
    for f, v in (("data", dec), ("size", size), ("format", NV12),
                 ("width", w), ("height", h), ("width_stride", ws),
                 ("height_stride", hs)):
        assert getattr(m, "dvpp_set_pic_desc_" + f)(d, v) == 0
    assert m.dvpp_jpeg_decode_async(media.ch, jpeg, len(data), d,
                                    media.stream) == 0
    dp = dvpp.Picture.aligned("nv12", 224, 224)
    o, optr = media.desc(dp, np.full(dp.size, PAD, np.uint8))
    assert m.dvpp_vpc_resize_async(media.ch, d, o, media.resize_config(1),
                                   media.stream) == 0
    assert media.sync() == 0
    sp = dvpp.Picture("nv12", w, h, ws, hs)
    decoded = unpack(sp, J.decode(data).nv12)
    for k, got in enumerate(unpack(dp, media.read(optr, dp.size))):
        check_resampled(got, decoded[k], "bilinear")


def test_the_trace_names_vpc_tasks_on_no_ai_core(dev):
    from davinci.trace import DeviceTraceReader
    reader = DeviceTraceReader(dev)
    reader.set_enabled(True)
    sp = dvpp.Picture.aligned("nv12", 64, 48)
    dp = dvpp.Picture.aligned("rgb", 64, 48)
    src = dev.tensor(pack(sp, planes_of(sp, 40)))
    out = dev.tensor(np.zeros(dp.size, np.uint8))
    small = dev.tensor(np.zeros(dvpp.Picture.aligned("nv12", 32, 24).size,
                                np.uint8))
    ops.vpc_resize(src, sp, small, dvpp.Picture.aligned("nv12", 32, 24))
    ops.vpc_crop(src, sp, small, dvpp.Picture.aligned("nv12", 32, 24),
                 dvpp.Rect(0, 0, 31, 23))
    ops.vpc_convert_color(src, sp, out, dp)
    done = [r for r in reader.read().records if r.pid == os.getpid() and
            r.kind == "TASK_COMPLETE" and r.op_name.startswith("VPC_")]
    assert [r.op_name for r in done] == ["VPC_RESIZE", "VPC_CROP",
                                         "VPC_CONVERT_COLOR"]
    assert all(r.status == 0 and r.aicore == davinci._uapi.
               DAVINCI_TRACE_NO_CORE for r in done)
    reader.set_enabled(False)
