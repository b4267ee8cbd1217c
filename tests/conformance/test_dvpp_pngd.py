# SPDX-License-Identifier: GPL-2.0
"""acl.media's PNG decode on the device's DVPP engine (DOC: DVPP PNGD).

PNGs made here (by Pillow, and by tests/ops/pngdlib.write for what Pillow
cannot write: Adam7, 16-bit RGB, 2- and 4-bit grey) go through acl.media
as Ascend's samples call it: the file in dvpp_malloc'd memory, a picture
desc for the output, dvpp_png_decode_async on a stream,
synchronize_stream. The output must be the core's decoder's bytes (the
same on every backend) and Pillow's decode; get_image_info and
predict_dec_size answer as acldvppPngGetImageInfo and
acldvppPngPredictDecSize do; a file the decoder refuses fails with DVPP's
errors and leaves no device memory behind; an output too small is refused
before anything is written.
"""

from __future__ import annotations

import functools
import io
import os
import struct
import sys

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "ops"))
import pngdlib as P  # noqa: E402

RGB888, RGBA8888, UNKNOWN = 12, 16, 10000


def _hbm_used(acl) -> int:
    free, total, ret = acl.rt.get_mem_info(acl.constants.ACL_HBM_MEM)
    assert ret == 0
    return total - free


class Decoded:
    def __init__(self, sync_ret, fields, out):
        self.sync_ret = sync_ret
        self.fields = fields
        self.out = out


def acl_decode(acl, data: bytes, fmt: int = UNKNOWN,
               out_size: int | None = None, fill: int = 0) -> Decoded:
    """Decode ``data`` through acl.media on a stream of its own; the output
    buffer is predict_dec_size's (or ``out_size``) bytes of ``fill``."""
    m = acl.media
    ptr = acl.util.bytes_to_ptr(data)
    if out_size is None:
        out_size, ret = m.dvpp_png_predict_dec_size(ptr, len(data), fmt)
        assert ret == 0
    ch = m.dvpp_create_channel_desc()
    assert ch and m.dvpp_create_channel(ch) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    src, ret = m.dvpp_malloc(len(data))
    assert ret == 0
    assert acl.rt.memcpy(src, len(data), ptr, len(data), 1) == 0
    dst, ret = m.dvpp_malloc(out_size)
    assert ret == 0
    assert acl.rt.memset(dst, out_size, fill, out_size) == 0
    desc = m.dvpp_create_pic_desc()
    for field, value in (("data", dst), ("size", out_size), ("format", fmt)):
        assert getattr(m, "dvpp_set_pic_desc_" + field)(desc, value) == 0
    assert m.dvpp_png_decode_async(ch, src, len(data), desc, stream) == 0
    sync_ret = acl.rt.synchronize_stream(stream)
    fields = {f: getattr(m, "dvpp_get_pic_desc_" + f)(desc) for f in (
        "width", "height", "width_stride", "height_stride", "size",
        "format", "ret_code", "data")}
    out = np.empty(out_size, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), out_size, dst,
                         out_size, 2) == 0
    assert m.dvpp_destroy_pic_desc(desc) == 0
    for p in (src, dst):
        assert m.dvpp_free(p) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0
    return Decoded(sync_ret, fields, out)


def check_picture(acl, data: bytes, fmt: int) -> None:
    d = acl_decode(acl, data, fmt)
    assert d.sync_ret == 0 and d.fields["ret_code"] == 0
    core = P.decode(data, P.AUTO if fmt == UNKNOWN else P.RGB)
    i = core.info
    ch = i.channels
    assert ch == (4 if fmt == UNKNOWN and i.alpha else 3)
    w, h = i.width, i.height
    assert (d.fields["width"], d.fields["height"]) == (w, h)
    assert (d.fields["width_stride"], d.fields["height_stride"]) == (
        -(-w // 128) * 128 * ch, -(-h // 16) * 16)
    assert d.fields["size"] == i.out_size <= d.out.size
    assert d.fields["format"] == fmt
    # the core's decoder's bytes on every backend, and Pillow's pixels
    assert np.array_equal(d.out[:i.out_size], core.out)
    rows = d.out[:i.out_size].reshape(i.height_stride, i.width_stride)
    assert np.array_equal(rows[:h, :w * ch].reshape(h, w, ch),
                          P.pillow_rgba(data)[..., :ch])
    assert not rows[:, w * ch:].any() and not rows[h:].any()


def _img(w, h, seed=0):
    rng = np.random.default_rng(seed)
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    rgb[h // 3:h // 2] = (240, 30, 20)
    a = rng.integers(0, 256, (h, w, 1), dtype=np.uint8)
    return rgb, np.concatenate([rgb, a], axis=-1)


def _pillow(img: Image.Image, **kw) -> bytes:
    b = io.BytesIO()
    img.save(b, "PNG", **kw)
    return b.getvalue()


@functools.lru_cache(maxsize=None)
def _files(w: int, h: int) -> dict:
    rgb, rgba = _img(w, h, seed=w)
    im = Image.fromarray(rgb)
    rng = np.random.default_rng(h)
    s16 = rng.integers(0, 65536, (h, w, 3)).astype(np.uint16)
    g4 = rng.integers(0, 16, (h, w, 1)).astype(np.uint8)
    pal = bytes(rng.integers(0, 256, 48, dtype=np.uint8))
    return {
        "L": _pillow(Image.fromarray(rgb[..., 0]), compress_level=9),
        "RGB": _pillow(im, compress_level=1),
        "RGBA": _pillow(Image.fromarray(rgba), compress_level=0),
        "LA": _pillow(Image.fromarray(rgba[..., ::3]).convert("LA")),
        "P-trns": _pillow(im.quantize(64), transparency=bytes(range(64))),
        "1": _pillow(Image.fromarray(rgb[..., 1]).convert("1")),
        "RGB16-adam7": P.write(s16, 2, 16, interlace=True),
        "grey4-adam7": P.write(g4, 0, 4, interlace=True),
        "P4-adam7": P.write(g4, 3, 4, interlace=True, palette=pal),
    }


@pytest.mark.parametrize("fmt", [RGB888, UNKNOWN], ids=["rgb888", "unknown"])
@pytest.mark.parametrize("kind", list(_files(33, 33)))
@pytest.mark.parametrize("size", [(33, 47), (300, 200)],
                         ids=lambda s: "%dx%d" % s)
def test_decode_matches_pillow(acl_dev, size, kind, fmt):
    check_picture(acl_dev, _files(*size)[kind], fmt)


@pytest.mark.parametrize("kind,components", [
    ("L", 1), ("LA", 2), ("RGB", 3), ("RGBA", 4), ("P-trns", 3),
    ("RGB16-adam7", 3)])
def test_image_info_and_predicted_size(acl_dev, kind, components):
    acl = acl_dev
    C = acl.constants
    w, h = 201, 77
    data = _files(w, h)[kind]
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.media.dvpp_png_get_image_info(ptr, len(data)) == (
        w, h, components, 0)
    depth = data[24]
    dev, ret = acl.media.dvpp_malloc(len(data))
    assert ret == 0 and acl.rt.memcpy(dev, len(data), ptr, len(data), 1) == 0
    assert acl.media.dvpp_png_get_image_info(dev, len(data))[:3] == (
        w, h, components)
    for fmt, ch in ((RGB888, 3), (RGBA8888, 4), (UNKNOWN, 4)):
        size, ret = acl.media.dvpp_png_predict_dec_size(dev, len(data), fmt)
        # acldvppPngPredictDecSize's formula
        assert ret == 0 and size == (256 * max(8, depth) * ch // 8) * 80
        if fmt != RGBA8888:
            d = acl_decode(acl, data, fmt)
            assert d.sync_ret == 0 and d.fields["size"] <= size
    assert acl.media.dvpp_free(dev) == 0
    assert acl.media.dvpp_png_predict_dec_size(ptr, len(data), 1)[1] == \
        C.ACL_ERROR_FORMAT_NOT_MATCH
    assert acl.media.dvpp_png_get_image_info(ptr, 29)[3] == \
        C.ACL_ERROR_INVALID_PARAM
    bad = b"\x89PNG\r\n\x1a\x0b" + data[8:]
    assert acl.media.dvpp_png_get_image_info(acl.util.bytes_to_ptr(bad),
                                             len(bad))[3] == \
        C.ACL_ERROR_INVALID_PARAM


def test_predicted_size_refuses_sides_outside_32_to_4096(acl_dev):
    acl = acl_dev
    for w, h in ((31, 40), (40, 31), (4097, 40)):
        data = P.write(np.zeros((h, w, 1), np.uint8), 0, 8)
        ptr = acl.util.bytes_to_ptr(data)
        assert acl.media.dvpp_png_predict_dec_size(ptr, len(data), RGB888) \
            == (0, acl.constants.ACL_ERROR_INVALID_PARAM)
    # the engine itself decodes any side up to 4096
    data = P.write(np.full((3, 5, 1), 200, np.uint8), 0, 8)
    d = acl_decode(acl, data, RGB888, out_size=128 * 3 * 16)
    assert d.sync_ret == 0 and (d.fields["width"], d.fields["height"]) == \
        (5, 3)
    assert (d.out[:15] == 200).all()


def _bad_files():
    good = _files(64, 40)["RGB"]
    crc = bytearray(good)
    crc[len(good) // 2] ^= 0x10
    # a right CRC over a corrupt zlib stream
    idat = good.index(b"IDAT")
    n = struct.unpack(">I", good[idat - 4:idat])[0]
    z = bytearray(good[idat + 4:idat + 4 + n])
    z[len(z) // 2] ^= 0xFF
    zbad = good[:idat - 4] + P.chunk(b"IDAT", bytes(z)) + \
        good[idat + 8 + n:]
    return {"truncated": good[:len(good) // 2], "bad_crc": bytes(crc),
            "bad_zlib": zbad}


@pytest.mark.parametrize("which", ["truncated", "bad_crc", "bad_zlib"])
def test_bad_file_fails_with_dvpp_errors_and_leaks_nothing(acl_dev, which):
    acl = acl_dev
    data = _bad_files()[which]
    good = _files(64, 40)["RGB"]
    acl_decode(acl, good, RGB888)       # warm: the parameter-block slab
    before = _hbm_used(acl)
    d = acl_decode(acl, data, RGB888, out_size=P.parse(good, P.RGB).out_size)
    assert d.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_INVALID_FILE
    assert _hbm_used(acl) == before
    assert acl_decode(acl, good, RGB888).sync_ret == 0


def test_unknown_critical_chunk_is_format_not_match(acl_dev):
    acl = acl_dev
    good = _files(40, 40)["L"]
    data = good[:33] + P.chunk(b"ZZZZ", b"x") + good[33:]
    d = acl_decode(acl, data, RGB888)
    assert d.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_FORMAT_NOT_MATCH


def test_too_small_output_refused_before_writing(acl_dev):
    acl = acl_dev
    data = _files(300, 200)["RGBA"]
    need = P.parse(data, P.AUTO).out_size
    d = acl_decode(acl, data, UNKNOWN, out_size=need - 1, fill=0xAB)
    assert d.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_INVALID_PARAM
    assert (d.out == 0xAB).all(), "a refused decode wrote its output"
    assert (d.fields["width"], d.fields["size"]) == (0, need - 1)


def test_decode_async_takes_rgb888_and_unknown_only(acl_dev):
    acl = acl_dev
    m = acl.media
    data = _files(40, 40)["RGB"]
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    stream, _ = acl.rt.create_stream()
    src, _ = m.dvpp_malloc(len(data))
    dst, _ = m.dvpp_malloc(1 << 16)
    desc = m.dvpp_create_pic_desc()
    m.dvpp_set_pic_desc_data(desc, dst)
    m.dvpp_set_pic_desc_size(desc, 1 << 16)
    for fmt in (RGBA8888, 1):
        m.dvpp_set_pic_desc_format(desc, fmt)
        assert m.dvpp_png_decode_async(ch, src, len(data), desc, stream) == \
            acl.constants.ACL_ERROR_FORMAT_NOT_MATCH
    assert m.dvpp_destroy_pic_desc(desc) == 0
    for p in (src, dst):
        assert m.dvpp_free(p) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0


def test_a_desc_reused_for_jpeg_then_png(acl_dev):
    """One output desc, a JPEG decode then a PNG decode: each fills it
    from its own result record."""
    acl = acl_dev
    m = acl.media
    b = io.BytesIO()
    Image.fromarray(_img(48, 32)[0]).save(b, "JPEG", quality=90)
    jpeg, png = b.getvalue(), _files(40, 36)["RGB"]
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    stream, _ = acl.rt.create_stream()
    dst, _ = m.dvpp_malloc(1 << 16)
    desc = m.dvpp_create_pic_desc()
    m.dvpp_set_pic_desc_data(desc, dst)
    for data, fmt, call, want in (
            (jpeg, 1, m.dvpp_jpeg_decode_async, (48, 32, 128, 32)),
            (png, RGB888, m.dvpp_png_decode_async, (40, 36, 384, 48))):
        src, _ = m.dvpp_malloc(len(data))
        assert acl.rt.memcpy(src, len(data), acl.util.bytes_to_ptr(data),
                             len(data), 1) == 0
        m.dvpp_set_pic_desc_format(desc, fmt)
        # a decode sets the desc's size to what it wrote: the capacity again
        m.dvpp_set_pic_desc_size(desc, 1 << 16)
        assert call(ch, src, len(data), desc, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert (m.dvpp_get_pic_desc_width(desc),
                m.dvpp_get_pic_desc_height(desc),
                m.dvpp_get_pic_desc_width_stride(desc),
                m.dvpp_get_pic_desc_height_stride(desc)) == want
        assert m.dvpp_get_pic_desc_ret_code(desc) == 0
        assert m.dvpp_free(src) == 0
    assert m.dvpp_destroy_pic_desc(desc) == 0
    assert m.dvpp_free(dst) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0


@pytest.mark.parametrize("fmt", ["rgb888", "rgba8888", "auto"])
def test_decode_is_a_pngd_task_on_no_ai_core(dev, fmt):
    import davinci
    from davinci import dvpp, ops
    data = _files(50, 30)["LA"]
    png = dev.tensor(np.frombuffer(data, np.uint8))
    ch = 3 if fmt == "rgb888" else 4
    out = dev.empty((dvpp.png_out_size(50, 30, ch),), "uint8")
    s = dev.stream()
    pending = ops.png_decode(png, out, format=fmt, stream=s)
    s.synchronize()
    r = pending.result()
    assert r.ok and (r.width, r.height, r.channels, r.out_size) == (
        50, 30, ch, out.nbytes)
    assert (r.bit_depth, r.colour_type, r.components) == (8, 4, 2)
    assert np.array_equal(out.numpy(), P.decode(data, P.FORMATS[fmt]).out)
    assert dvpp.read_png_header(data).out_size(fmt) == out.nbytes
    short = dev.empty((out.nbytes - 1,), "uint8")
    with pytest.raises(dvpp.PngDecodeError) as e:
        ops.png_decode(png, short, format=fmt)
    assert e.value.result.error_name == "ENOSPC"
    assert e.value.opcode == davinci.schema.by_name("PNGD_DECODE").opcode


def test_sides_above_the_limit_refused_from_ihdr(acl_dev):
    """A side above 4096 (or the task's max_dim) is refused from IHDR:
    ACL_ERROR_INVALID_PARAM, the output untouched."""
    import davinci
    from davinci import dvpp, ops
    acl = acl_dev
    wide = P.write(np.zeros((1, 4097, 1), np.uint8), 0, 8)
    d = acl_decode(acl, wide, RGB888, out_size=1 << 16, fill=0x5A)
    assert d.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_INVALID_PARAM
    assert (d.out == 0x5A).all()
    with davinci.Device(0) as dev:
        data = _files(40, 36)["RGB"]
        png = dev.tensor(np.frombuffer(data, np.uint8))
        out = dev.empty((dvpp.png_out_size(40, 36, 3),), "uint8")
        with pytest.raises(dvpp.PngDecodeError) as e:
            ops.png_decode(png, out, format="rgb888", max_dim=39)
        assert e.value.result.error_name == "E2BIG"
        s = dev.stream()        # the default one is in its error state
        pending = ops.png_decode(png, out, format="rgb888", max_dim=40,
                                 stream=s)
        s.synchronize()
        assert pending.result().ok
