# SPDX-License-Identifier: GPL-2.0
"""acl.media's JPEG decode on the device's DVPP engine (DOC: DVPP JPEGD).

Photos made here with Pillow (tests/ops/test_jpegd.py's photo() and
encode()) go through acl.media as Ascend's samples call it: the file in
dvpp_malloc'd memory, a picture desc for the output,
dvpp_jpeg_decode_async on a stream, synchronize_stream. The output must
be the core's decoder's bytes (tests/ops holds those to libjpeg-turbo) and
Pillow's decode converted as tests/ops/test_jpegd.py converts it; a file
the decoder refuses fails with DVPP's errors and leaves no device memory
behind; an output too small is refused before anything is written.
"""

from __future__ import annotations

import io
import os
import sys

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "ops"))
import jpegdlib as J  # noqa: E402
from test_jpegd import check_padding, encode, libjpeg_chroma, photo  # noqa: E402,E501

NV12, NV21 = 1, 2
SUBSAMPLING = {"4:4:4": 0, "4:2:2": 1, "4:2:0": 2}
KIND = {"4:4:4": J.S444, "4:2:2": J.S422, "4:2:0": J.S420, "grey": J.GREY}


def _hbm_used(acl) -> int:
    free, total, ret = acl.rt.get_mem_info(acl.constants.ACL_HBM_MEM)
    assert ret == 0
    return total - free


class Decoded:
    """What one acl.media decode gave: synchronize_stream's code, the
    desc's fields after it and the output buffer's bytes."""

    def __init__(self, sync_ret, fields, out):
        self.sync_ret = sync_ret
        self.fields = fields
        self.out = out


def acl_decode(acl, data: bytes, fmt: int = NV12, out_size: int | None = None,
               fill: int = 0) -> Decoded:
    """Decode ``data`` through acl.media on a stream of its own; the output
    buffer is predict_dec_size's (or ``out_size``) bytes of ``fill``."""
    m = acl.media
    ptr = acl.util.bytes_to_ptr(data)
    if out_size is None:
        out_size, ret = m.dvpp_jpeg_predict_dec_size(ptr, len(data), fmt)
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
    assert m.dvpp_jpeg_decode_async(ch, src, len(data), desc, stream) == 0
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


def check_picture(acl, data: bytes, w: int, h: int, kind: int,
                  fmt: int = NV12) -> None:
    d = acl_decode(acl, data, fmt)
    assert d.sync_ret == 0 and d.fields["ret_code"] == 0
    ws, hs = -(-w // 128) * 128, -(-h // 16) * 16
    assert (d.fields["width"], d.fields["height"]) == (w, h)
    assert (d.fields["width_stride"], d.fields["height_stride"]) == (ws, hs)
    assert d.fields["size"] == ws * hs * 3 // 2 == d.out.size
    assert d.fields["format"] == fmt
    core = J.decode(data)
    nv12 = d.out.copy()
    if fmt == NV21:     # V first: swap each pair back
        uv = nv12[ws * hs:].reshape(-1, 2)
        uv[:] = uv[:, ::-1].copy()
    # the core's decoder's bytes on every backend
    assert np.array_equal(nv12, core.nv12)
    pic = J.Picture(core.info, nv12)
    full = J.pillow_ycbcr(data)
    if kind == J.GREY:
        assert np.array_equal(pic.y[:h, :w], full)
        assert (pic.uv == 128).all()
    else:
        # Y: libjpeg-turbo's, bit for bit; chroma: jpegd.h's 4:2:0 rule on
        # the planes libjpeg-turbo decodes
        assert np.array_equal(pic.y[:h, :w], full[..., 0])
        _, planes = J.decode_planes(data)
        ch, cw = (h + 1) // 2, (w + 1) // 2
        for k in (1, 2):
            ref, ours = libjpeg_chroma(data, kind, full, k, planes[k])
            assert np.array_equal(ours, ref), "plane %d differs" % k
            assert np.array_equal(pic.uv[:ch, :cw, k - 1],
                                  J.to_420(planes[k], kind))
    check_padding(pic)


@pytest.mark.parametrize("progressive", [False, True],
                         ids=["baseline", "progressive"])
@pytest.mark.parametrize("sub", list(KIND))
@pytest.mark.parametrize("size", [(333, 250), (17, 9), (64, 48)],
                         ids=lambda s: "%dx%d" % s)
def test_decode_matches_pillow(acl_dev, size, sub, progressive):
    w, h = size
    pixels = photo(w, h, seed=w + h)
    if sub == "grey":
        data = encode(pixels[..., 1], quality=90, progressive=progressive)
    else:
        data = encode(pixels, quality=90, subsampling=SUBSAMPLING[sub],
                      progressive=progressive)
    check_picture(acl_dev, data, w, h, KIND[sub])


@pytest.mark.parametrize("fmt", [NV12, NV21], ids=["nv12", "nv21"])
@pytest.mark.parametrize("progressive", [False, True],
                         ids=["baseline", "progressive"])
def test_restart_markers(acl_dev, progressive, fmt):
    w, h = 133, 71
    data = encode(photo(w, h, seed=3), quality=85, subsampling=2,
                  progressive=progressive, restart_marker_blocks=5)
    assert b"\xff\xdd" in data and b"\xff\xd1" in data
    check_picture(acl_dev, data, w, h, J.S420, fmt)


@pytest.mark.parametrize("sub", list(KIND))
def test_image_info_and_predicted_size(acl_dev, sub):
    acl = acl_dev
    w, h = 201, 77
    pixels = photo(w, h, seed=9)
    data = encode(pixels[..., 0], quality=80) if sub == "grey" else \
        encode(pixels, quality=80, subsampling=SUBSAMPLING[sub])
    im = Image.open(io.BytesIO(data))
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.media.dvpp_jpeg_get_image_info(ptr, len(data)) == (
        im.width, im.height, len(im.getbands()), 0)
    css = {"4:4:4": acl.constants.ACL_JPEG_CSS_444,
           "4:2:2": acl.constants.ACL_JPEG_CSS_422,
           "4:2:0": acl.constants.ACL_JPEG_CSS_420,
           "grey": acl.constants.ACL_JPEG_CSS_GRAY}[sub]
    assert acl.media.dvpp_jpeg_get_image_info_v2(ptr, len(data)) == (
        w, h, len(im.getbands()), css, 0)
    # the same answers from the file in device memory
    dev, ret = acl.media.dvpp_malloc(len(data))
    assert ret == 0 and acl.rt.memcpy(dev, len(data), ptr, len(data), 1) == 0
    assert acl.media.dvpp_jpeg_get_image_info(dev, len(data))[:2] == (w, h)
    for fmt in (NV12, NV21):
        size, ret = acl.media.dvpp_jpeg_predict_dec_size(dev, len(data), fmt)
        assert ret == 0
        d = acl_decode(acl, data, fmt)
        # what the decode wrote: the desc's size, the whole predicted buffer
        assert d.sync_ret == 0 and d.fields["size"] == size
        assert size == J.parse(data).out_size
    assert acl.media.dvpp_free(dev) == 0
    assert acl.media.dvpp_jpeg_predict_dec_size(ptr, len(data), 0)[1] == \
        acl.constants.ACL_ERROR_FEATURE_UNSUPPORTED
    assert acl.media.dvpp_jpeg_get_image_info(ptr, 100)[3] == \
        acl.constants.ACL_ERROR_INVALID_PARAM


def _bad_files():
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    sos = good.index(b"\xff\xda")
    corrupt = bytearray(good)
    # a marker no scan may hold, in the middle of the entropy-coded data
    at = (sos + len(good)) // 2
    corrupt[at:at + 2] = b"\xff\xc8"
    return {"truncated": good[:(sos + len(good)) // 2],
            "corrupt": bytes(corrupt)}


@pytest.mark.parametrize("which", ["truncated", "corrupt"])
def test_bad_file_fails_with_dvpp_errors_and_leaks_nothing(acl_dev, which):
    acl = acl_dev
    data = _bad_files()[which]
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    acl_decode(acl, good)               # warm: the parameter-block slab
    before = _hbm_used(acl)
    d = acl_decode(acl, data, out_size=J.parse(good).out_size)
    assert d.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_INVALID_FILE
    assert _hbm_used(acl) == before
    # the engine decodes the next file as ever
    assert acl_decode(acl, good).sync_ret == 0


def test_too_small_output_refused_before_writing(acl_dev):
    acl = acl_dev
    data = encode(photo(300, 200, seed=6), quality=90)
    need = J.parse(data).out_size
    d = acl_decode(acl, data, out_size=need - 1, fill=0xAB)
    assert d.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_INVALID_PARAM
    assert (d.out == 0xAB).all(), "a refused decode wrote its output"
    # the desc keeps what was set
    assert (d.fields["width"], d.fields["size"]) == (0, need - 1)


def test_unsupported_jpeg_is_refused_by_get_image_info(acl_dev):
    acl = acl_dev
    data = bytearray(encode(photo(40, 40, seed=1), quality=90))
    sof = data.index(b"\xff\xc0")
    data[sof + 1] = 0xC9            # arithmetic coding: SOF9
    data = bytes(data)
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.media.dvpp_jpeg_get_image_info(ptr, len(data))[3] == \
        acl.constants.ACL_ERROR_UNSUPPORTED_JPEG
    d = acl_decode(acl, data, out_size=J.parse(
        encode(photo(40, 40, seed=1), quality=90)).out_size)
    assert d.fields["ret_code"] == acl.constants.ACL_ERROR_UNSUPPORTED_JPEG


def test_decode_is_a_jpegd_task_on_no_ai_core(dev):
    import davinci
    from davinci import dvpp, ops
    data = encode(photo(50, 30, seed=2), quality=90)
    jpeg = dev.tensor(np.frombuffer(data, np.uint8))
    out = dev.empty((dvpp.nv12_size(50, 30),), "uint8")
    s = dev.stream()
    pending = ops.jpeg_decode(jpeg, out, stream=s)
    s.synchronize()
    r = pending.result()
    assert r.ok and (r.width, r.height, r.out_size) == (50, 30, out.nbytes)
    assert np.array_equal(out.numpy(), J.decode(data).nv12)
    short = dev.empty((out.nbytes - 1,), "uint8")
    with pytest.raises(dvpp.JpegDecodeError) as e:
        ops.jpeg_decode(jpeg, short)
    assert e.value.result.error_name == "ENOSPC"
    assert e.value.opcode == davinci.schema.by_name("JPEGD_DECODE").opcode


@pytest.mark.parametrize("mode", ["stop", "continue"])
def test_a_decode_behind_a_failed_one(acl_dev, mode):
    """A corrupt file fails its task. On an ACL_STOP_ON_FAILURE stream the
    stream aborts the next decode queued behind it: that desc's ret code is
    a failure, not the 0 of a decode. On an ACL_CONTINUE_ON_FAILURE stream
    (CANN's default) the next decode runs, and synchronize_stream returns
    the failure once. Neither record nor output is left in use."""
    acl, m = acl_dev, acl_dev.media
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    acl_decode(acl, good)               # warm: the parameter-block slab
    before = _hbm_used(acl)
    size = J.parse(good).out_size
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    if mode == "stop":
        assert acl.rt.set_stream_failure_mode(
            stream, acl.ACL_STOP_ON_FAILURE) == 0
    bufs, descs = [], []
    for data in (_bad_files()["corrupt"], good):
        src, _ = m.dvpp_malloc(len(data))
        dst, _ = m.dvpp_malloc(size)
        assert acl.rt.memcpy(src, len(data), acl.util.bytes_to_ptr(data),
                             len(data), 1) == 0
        d = m.dvpp_create_pic_desc()
        for field, value in (("data", dst), ("size", size), ("format", NV12)):
            assert getattr(m, "dvpp_set_pic_desc_" + field)(d, value) == 0
        assert m.dvpp_jpeg_decode_async(ch, src, len(data), d, stream) == 0
        bufs += [src, dst]
        descs.append(d)
    assert acl.rt.synchronize_stream(stream) == \
        acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    codes = [m.dvpp_get_pic_desc_ret_code(d) for d in descs]
    assert codes[0] == acl.constants.ACL_ERROR_INVALID_FILE
    if mode == "stop":
        assert codes[1] == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION, codes
        assert acl.rt.synchronize_stream(stream) == \
            acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    else:
        assert codes[1] == 0, codes
        assert m.dvpp_get_pic_desc_width(descs[1]) == 96
        assert acl.rt.synchronize_stream(stream) == 0
    for d in descs:
        assert m.dvpp_destroy_pic_desc(d) == 0
    for b in bufs:
        assert m.dvpp_free(b) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0
    assert _hbm_used(acl) == before
