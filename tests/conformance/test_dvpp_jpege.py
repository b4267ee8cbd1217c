# SPDX-License-Identifier: GPL-2.0
"""acl.media's JPEG encode on the device's DVPP engine (DOC: DVPP JPEGE).

Photos made here (tests/ops/test_jpegd.py's photo()) are turned into
YUV420SP the way a camera or JPEGD hands one over: Pillow's RGB -> YCbCr,
each 2 x 2 of chroma averaged. They go through acl.media as Ascend's
samples call it (a jpege config and its level, dvpp_jpeg_predict_enc_size,
dvpp_malloc'd input and output, dvpp_jpeg_encode_async with the size
pointer, synchronize_stream). The file must be libjpeg-turbo's (Pillow's)
of the same 4:2:0 samples byte for byte, on every backend; Pillow decodes
it within the PSNR NUMERICS.md states and no worse than Pillow's own
encode of the RGB photo; our JPEGD decodes it to Pillow's samples; the
predicted size holds any content; an output too small fails at
synchronize with nothing written past it and no HBM left behind; a
picture DVPP JPEGE refuses is refused at the call with its code.
"""

from __future__ import annotations

import ctypes
import io
import os
import sys

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "ops"))
import jpegdlib as J  # noqa: E402
from test_jpegd import photo  # noqa: E402

NV12, NV21 = 1, 2


def _hbm_used(acl) -> int:
    free, total, ret = acl.rt.get_mem_info(acl.constants.ACL_HBM_MEM)
    assert ret == 0
    return total - free


def _align(v: int, a: int) -> int:
    return -(-v // a) * a


class Picture:
    """A YUV420SP picture of a photo: its bytes at the given strides (NV12
    or NV21), the full-size YCbCr and the half-size chroma."""

    def __init__(self, rgb: np.ndarray, ws: int | None = None,
                 hs: int | None = None, fmt: int = NV12):
        h, w = rgb.shape[:2]
        self.w, self.h = w, h
        self.ws = _align(w, 16) if ws is None else ws
        self.hs = _align(h, 2) if hs is None else hs
        self.fmt = fmt
        self.rgb = rgb
        self.ycc = np.asarray(Image.fromarray(rgb).convert("YCbCr"))
        cw, ch = (w + 1) // 2, (h + 1) // 2
        pad = np.pad(self.ycc, ((0, 2 * ch - h), (0, 2 * cw - w), (0, 0)),
                     mode="edge").astype(np.int32)
        self.chroma = ((pad[0::2, 0::2, 1:] + pad[1::2, 0::2, 1:] +
                        pad[0::2, 1::2, 1:] + pad[1::2, 1::2, 1:] + 2)
                       // 4).astype(np.uint8)
        data = np.full(self.ws * self.hs * 3 // 2, 0x5A, np.uint8)
        data[:self.ws * self.hs].reshape(self.hs, self.ws)[:h, :w] = \
            self.ycc[..., 0]
        uv = data[self.ws * self.hs:].reshape(self.hs // 2, self.ws)
        u, v = (1, 0) if fmt == NV21 else (0, 1)
        uv[:ch, u:2 * cw:2] = self.chroma[..., 0]
        uv[:ch, v:2 * cw:2] = self.chroma[..., 1]
        self.data = data.tobytes()

    def pillow_file(self, quality: int) -> bytes:
        """libjpeg-turbo's JPEG of these very 4:2:0 samples: the chroma
        repeated 2 x 2, which its 2 x 2 averaging gives back unchanged."""
        full = np.repeat(np.repeat(self.chroma, 2, 0), 2, 1)[:self.h, :self.w]
        src = np.dstack([self.ycc[..., 0], full]).astype(np.uint8)
        b = io.BytesIO()
        Image.fromarray(src, "YCbCr").save(b, "JPEG", quality=quality,
                                           subsampling=2)
        return b.getvalue()


class Encoded:
    """What one acl.media encode gave: synchronize_stream's code, the size
    written through the pointer, predict_enc_size's answer and the output
    buffer's bytes (the file is its first ``size``)."""

    def __init__(self, sync_ret, size, predicted, out):
        self.sync_ret = sync_ret
        self.size = size
        self.predicted = predicted
        self.out = out

    @property
    def file(self) -> bytes:
        return self.out[:self.size].tobytes()


def acl_encode(acl, pic: Picture, level: int = 100, cap: int | None = None,
               fill: int = 0) -> Encoded:
    """Encode ``pic`` through acl.media on a stream of its own, into an
    output of predict_enc_size's bytes of ``fill`` (``cap`` of it given as
    the size, when set)."""
    m = acl.media
    ch = m.dvpp_create_channel_desc()
    assert ch and m.dvpp_create_channel(ch) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    cfg = m.dvpp_create_jpege_config()
    assert cfg and m.dvpp_set_jpege_config_level(cfg, level) == 0
    src, ret = m.dvpp_malloc(len(pic.data))
    assert ret == 0
    ptr = acl.util.bytes_to_ptr(pic.data)
    assert acl.rt.memcpy(src, len(pic.data), ptr, len(pic.data), 1) == 0
    desc = m.dvpp_create_pic_desc()
    for field, value in (("data", src), ("size", len(pic.data)),
                         ("format", pic.fmt), ("width", pic.w),
                         ("height", pic.h), ("width_stride", pic.ws),
                         ("height_stride", pic.hs)):
        assert getattr(m, "dvpp_set_pic_desc_" + field)(desc, value) == 0
    predicted, ret = m.dvpp_jpeg_predict_enc_size(desc, cfg)
    assert ret == 0
    dst, ret = m.dvpp_malloc(predicted)
    assert ret == 0
    assert acl.rt.memset(dst, predicted, fill, predicted) == 0
    size = np.array([predicted if cap is None else cap], np.int32)
    assert m.dvpp_jpeg_encode_async(ch, desc, dst, acl.util.numpy_to_ptr(size),
                                    cfg, stream) == 0
    sync_ret = acl.rt.synchronize_stream(stream)
    out = np.empty(predicted, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), predicted, dst,
                         predicted, 2) == 0
    assert m.dvpp_destroy_pic_desc(desc) == 0
    for p in (src, dst):
        assert m.dvpp_free(p) == 0
    assert m.dvpp_destroy_jpege_config(cfg) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0
    return Encoded(sync_ret, int(size[0]), predicted, out)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


@pytest.mark.parametrize("fmt", [NV12, NV21], ids=["nv12", "nv21"])
@pytest.mark.parametrize("level", [1, 50, 75, 90, 100])
@pytest.mark.parametrize("size", [(32, 32), (64, 48), (334, 250)],
                         ids=lambda s: "%dx%d" % s)
def test_file_is_libjpeg_turbos(acl_dev, size, level, fmt):
    w, h = size
    pic = Picture(photo(w, h, seed=w + level), fmt=fmt)
    e = acl_encode(acl_dev, pic, level)
    assert e.sync_ret == 0
    assert 0 < e.size <= e.predicted
    assert e.file == pic.pillow_file(level)
    im = Image.open(io.BytesIO(e.file))
    assert (im.width, im.height, im.mode) == (w, h, "RGB")


def test_strides_and_level_0(acl_dev):
    """A JPEGD-shaped input (strides 128 x 16) encodes the picture alone;
    level 0 encodes as 100."""
    rgb = photo(200, 90, seed=7)
    wide = Picture(rgb, ws=256, hs=96)
    tight = Picture(rgb)
    e = acl_encode(acl_dev, wide, 0)
    assert e.sync_ret == 0
    assert e.file == acl_encode(acl_dev, tight, 100).file == \
        tight.pillow_file(100)


#: PSNR floors (dB) of a 640 x 480 photo by level, as measured
#: (NUMERICS.md, JPEGE) less 0.5 dB: Pillow's RGB decode of our file
#: against the photo (4:2:0 chroma of its saturated colour and stripes
#: dominates), and its Y against the picture's
PSNR_FLOOR = {50: (25.5, 31.0), 75: (26.1, 32.2), 90: (26.9, 37.2),
              95: (27.5, 42.2), 100: (27.8, 50.1)}


@pytest.mark.parametrize("level", list(PSNR_FLOOR))
def test_psnr_against_the_photo_and_pillows_encode(acl_dev, level):
    rgb = photo(640, 480, seed=level)
    pic = Picture(rgb)
    e = acl_encode(acl_dev, pic, level)
    assert e.sync_ret == 0 and e.file == pic.pillow_file(level)
    im = Image.open(io.BytesIO(e.file))
    ours = psnr(np.asarray(im.convert("RGB")), rgb)
    luma = psnr(np.asarray(im.convert("YCbCr"))[..., 0], pic.ycc[..., 0])
    b = io.BytesIO()
    Image.fromarray(rgb).save(b, "JPEG", quality=level, subsampling=2)
    pillows = psnr(np.asarray(Image.open(b).convert("RGB")), rgb)
    rgb_floor, luma_floor = PSNR_FLOOR[level]
    assert ours >= rgb_floor and luma >= luma_floor, (ours, luma, pillows)
    assert ours >= pillows - 0.5, (ours, pillows)


def test_round_trip_through_our_jpegd(acl_dev):
    pic = Picture(photo(333, 250, seed=11)[:, :332])
    e = acl_encode(acl_dev, pic, 90)
    assert e.sync_ret == 0
    dec = J.decode(e.file)
    y = J.Picture(dec.info, dec.nv12).y[:pic.h, :pic.w]
    # our decoder gives libjpeg-turbo's Y, which is within 35 dB of ours
    assert np.array_equal(y, J.pillow_ycbcr(e.file)[..., 0])
    assert psnr(y, pic.ycc[..., 0]) > 35


@pytest.mark.parametrize("size", [(32, 32), (48, 34), (130, 66)],
                         ids=lambda s: "%dx%d" % s)
def test_predicted_size_holds_noise(acl_dev, size):
    """Noise at level 100, the largest files there are, fits; the
    prediction is the bound of NUMERICS.md whatever the level."""
    from davinci import jpege
    w, h = size
    rng = np.random.default_rng(w * h)
    pic = Picture(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
    e = acl_encode(acl_dev, pic, 100)
    assert e.sync_ret == 0 and 0 < e.size <= e.predicted
    mcus = _align(w, 16) // 16 * (_align(h, 16) // 16)
    assert e.predicted == jpege.predict_size(w, h) == \
        625 + 2 * -(-(mcus * 6 * 1665 + 7) // 8)
    assert acl_encode(acl_dev, pic, 10).predicted == e.predicted


def test_too_small_output_fails_at_synchronize(acl_dev):
    acl = acl_dev
    pic = Picture(photo(96, 64, seed=5))
    need = acl_encode(acl, pic, 90).size
    before = _hbm_used(acl)
    e = acl_encode(acl, pic, 90, cap=need - 1, fill=0xAB)
    assert e.sync_ret == acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    assert e.size == need - 1, "a failed encode wrote a size"
    assert (e.out[need - 1:] == 0xAB).all(), "written past the capacity"
    assert _hbm_used(acl) == before
    # the engine encodes the next picture as ever
    assert acl_encode(acl, pic, 90).sync_ret == 0


def _desc(acl, **fields):
    m = acl.media
    desc = m.dvpp_create_pic_desc()
    for field, value in fields.items():
        assert getattr(m, "dvpp_set_pic_desc_" + field)(desc, value) == 0
    return desc


GOOD = dict(width=64, height=48, width_stride=64, height_stride=48,
            format=NV12)
BAD = {
    "width 30": dict(width=30, width_stride=32),
    "odd width": dict(width=63),
    "odd height": dict(height=47),
    "width 8194": dict(width=8194, width_stride=8208),
    "width stride 72": dict(width_stride=72),
    "width stride below the width": dict(width_stride=48, width=64),
    "odd height stride": dict(height_stride=49),
    "height stride below the height": dict(height_stride=46),
    "short buffer": dict(size=64 * 48 * 3 // 2 - 1),
    "YUV400": dict(format=0),
    "YUV422 packed": dict(format=7),
}


@pytest.mark.parametrize("what", list(BAD))
def test_pictures_dvpp_refuses_are_refused_at_the_call(acl_dev, what):
    acl = acl_dev
    m = acl.media
    fields = dict(GOOD, **BAD[what])
    size = fields.pop("size", fields["width_stride"] * fields["height_stride"]
                      * 3 // 2)
    src, ret = m.dvpp_malloc(max(size, 1))
    assert ret == 0
    desc = _desc(acl, data=src, size=size, **fields)
    code = acl.constants.ACL_ERROR_FEATURE_UNSUPPORTED \
        if what == "YUV422 packed" else acl.constants.ACL_ERROR_INVALID_PARAM
    cfg = m.dvpp_create_jpege_config()
    if what != "short buffer":      # predict looks at the geometry only
        assert m.dvpp_jpeg_predict_enc_size(desc, cfg)[1] == code
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    stream, ret = acl.rt.create_stream()
    dst, ret = m.dvpp_malloc(1 << 16)
    n = np.array([1 << 16], np.int32)
    before = _hbm_used(acl)
    assert m.dvpp_jpeg_encode_async(ch, desc, dst, acl.util.numpy_to_ptr(n),
                                    cfg, stream) == code
    assert acl.rt.synchronize_stream(stream) == 0
    assert _hbm_used(acl) == before and n[0] == 1 << 16
    for p in (src, dst):
        assert m.dvpp_free(p) == 0
    assert m.dvpp_destroy_pic_desc(desc) == 0
    assert m.dvpp_destroy_jpege_config(cfg) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0


def test_jpege_config(acl_dev):
    m = acl_dev.media
    bad = acl_dev.constants.ACL_ERROR_INVALID_PARAM
    cfg = m.dvpp_create_jpege_config()
    assert cfg and m.dvpp_get_jpege_config_level(cfg) == 100
    for level in (0, 1, 55, 100):
        assert m.dvpp_set_jpege_config_level(cfg, level) == 0
        assert m.dvpp_get_jpege_config_level(cfg) == level
    for level in (-1, 101, True):
        assert m.dvpp_set_jpege_config_level(cfg, level) == bad
    with pytest.raises(TypeError):      # as pyACL's argument check
        m.dvpp_set_jpege_config_level(cfg, 50.0)
    assert m.dvpp_get_jpege_config_level(cfg) == 100
    assert m.dvpp_destroy_jpege_config(cfg) == 0
    assert m.dvpp_get_jpege_config_level(cfg) == 0
    assert m.dvpp_destroy_jpege_config(cfg) == bad
    assert m.dvpp_set_jpege_config_level(cfg, 50) == bad


@pytest.mark.parametrize("size", [(1, 1), (17, 9), (33, 17), (250, 131)],
                         ids=lambda s: "%dx%d" % s)
def test_odd_sizes_through_davinci_ops(dev, size):
    """Sizes DVPP's acl.media refuses (odd, under 32) the engine takes:
    partial MCUs as libjpeg codes them."""
    from davinci import jpege, ops
    w, h = size
    pic = Picture(photo(w, h, seed=w))
    out = dev.empty((jpege.predict_size(w, h),), "uint8")
    r = ops.jpeg_encode(dev.tensor(np.frombuffer(pic.data, np.uint8)), out,
                        w, h, quality=85)
    assert r.ok and out.numpy()[:r.size].tobytes() == pic.pillow_file(85)


def test_davinci_ops_jpeg_encode(dev):
    import davinci
    from davinci import jpege, ops
    pic = Picture(photo(50, 30, seed=2))
    src = dev.tensor(np.frombuffer(pic.data, np.uint8))
    out = dev.empty((jpege.predict_size(50, 30),), "uint8")
    s = dev.stream()
    pending = ops.jpeg_encode(src, out, 50, 30, quality=80, stream=s)
    s.synchronize()
    r = pending.result()
    assert r.ok and out.numpy()[:r.size].tobytes() == pic.pillow_file(80)
    short = dev.empty((r.size - 1,), "uint8")
    with pytest.raises(jpege.JpegEncodeError) as e:
        ops.jpeg_encode(src, short, 50, 30, quality=80)
    assert e.value.result.error_name == "ENOSPC"
    assert e.value.opcode == davinci.schema.by_name("JPEGE_ENCODE").opcode
    with pytest.raises(davinci.InvalidArgumentError):
        ops.jpeg_encode(src, out, 50, 30, width_stride=56)
    with pytest.raises(davinci.InvalidArgumentError):
        ops.jpeg_encode(src, out, 50, 30, quality=0)
    # the result record lives in the caller's memory: ctypes sees 16 bytes
    assert jpege.RESULT_SIZE == ctypes.sizeof(ctypes.c_int32) * 2 + 8


@pytest.mark.parametrize("bad", [None, dict(width_stride=24),
                                 dict(height_stride=3), dict(quality=0),
                                 dict(quality=101), dict(width=0),
                                 dict(width=17), dict(pad=1), "count"],
                         ids=lambda b: "good" if b is None else str(b))
def test_raw_task_blocks_the_engine_refuses(dev, bad):
    """A JPEGE_ENCODE descriptor built by hand: its block checked by the
    device as the task is taken in, whatever the runtime checks."""
    import davinci
    from davinci import jpege
    op = jpege.OP
    fields = dict(dst_size=4096, width=16, height=2, width_stride=16,
                  height_stride=2, quality=75)
    if isinstance(bad, dict):
        fields.update(bad)
    s = dev.stream()
    with dev.malloc(4096) as pic, dev.malloc(4096) as out, \
            dev.malloc(64) as rec, dev.malloc(4096) as block:
        block.write(op.params.pack(**fields))
        jpege.mark_pending(rec)
        t = davinci.make_task(
            op.opcode, dst=out.dev_addr, src0=pic.dev_addr, src1=rec.dev_addr,
            count=47 if bad == "count" else 48, params=block.dev_addr,
            params_size=op.params.size, params_version=op.params.version)
        s.submit([t])
        if bad is None:
            s.synchronize()
            r = jpege.read_result(rec)
            assert r.ok and 600 < r.size <= jpege.predict_size(16, 2)
            return
        with pytest.raises(davinci.TaskFailedError) as e:
            s.synchronize()
        assert e.value.status_name == "INVALID_TASK"
        assert not jpege.read_result(rec).done, "a refused task ran"


def test_encode_runs_on_no_ai_core(dev):
    """The trace's records of a JPEGE_ENCODE task name no AI core: it runs
    on the DVPP engine."""
    from davinci import jpege, ops, schema
    from davinci.trace import TraceSession
    from davinci.trace.records import NO_CORE
    pic = Picture(photo(64, 32, seed=4))
    src = dev.tensor(np.frombuffer(pic.data, np.uint8))
    out = dev.empty((jpege.predict_size(64, 32),), "uint8")
    session = TraceSession(devices=[0], spans=False, poll_ms=0)
    session.start()
    try:
        session.drain()
        assert ops.jpeg_encode(src, out, 64, 32).ok
        ops.add(dev.tensor(np.ones(4, np.float32)),
                dev.tensor(np.ones(4, np.float32)))
        records = [r for r in session.drain().records
                   if r.pid == os.getpid()]
    finally:
        session.stop()
    mine = [r for r in records if r.opcode == jpege.OP.opcode]
    added = [r for r in records
             if r.opcode == schema.by_name("ADD").opcode]
    assert mine and added
    assert all(r.aicore == NO_CORE for r in mine)
    assert any(r.aicore != NO_CORE for r in added)   # the trace names cores


@pytest.mark.parametrize("mode", ["stop", "continue"])
def test_an_encode_behind_a_failed_one_frees_its_record(acl_dev, mode):
    """An encode into too small an output fails its task. On an
    ACL_STOP_ON_FAILURE stream the stream aborts the encode queued behind
    it: neither writes a size. On an ACL_CONTINUE_ON_FAILURE stream (the
    default) the second encode runs and writes its size. Once everything
    is freed no HBM is left in use (an aborted encode's result record
    too)."""
    acl, m = acl_dev, acl_dev.media
    pic = Picture(photo(96, 64, seed=5))
    need = acl_encode(acl, pic, 90).size       # warm: the parameter blocks
    before = _hbm_used(acl)
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    if mode == "stop":
        assert acl.rt.set_stream_failure_mode(
            stream, acl.ACL_STOP_ON_FAILURE) == 0
    cfg = m.dvpp_create_jpege_config()
    assert m.dvpp_set_jpege_config_level(cfg, 90) == 0
    src, _ = m.dvpp_malloc(len(pic.data))
    assert acl.rt.memcpy(src, len(pic.data), acl.util.bytes_to_ptr(pic.data),
                         len(pic.data), 1) == 0
    desc = _desc(acl, data=src, size=len(pic.data), format=pic.fmt,
                 width=pic.w, height=pic.h, width_stride=pic.ws,
                 height_stride=pic.hs)
    predicted, _ = m.dvpp_jpeg_predict_enc_size(desc, cfg)
    dst, _ = m.dvpp_malloc(predicted)
    sizes = np.array([need - 1, predicted], np.int32)
    for i in range(2):
        assert m.dvpp_jpeg_encode_async(
            ch, desc, dst, acl.util.numpy_to_ptr(sizes) + 4 * i, cfg,
            stream) == 0
    assert acl.rt.synchronize_stream(stream) == \
        acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
    if mode == "stop":
        assert sizes.tolist() == [need - 1, predicted], "a size was written"
    else:
        assert sizes.tolist() == [need - 1, need]
        assert acl.rt.synchronize_stream(stream) == 0
    assert m.dvpp_destroy_pic_desc(desc) == 0
    for p in (src, dst):
        assert m.dvpp_free(p) == 0
    assert m.dvpp_destroy_jpege_config(cfg) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert m.dvpp_destroy_channel(ch) == 0
    assert m.dvpp_destroy_channel_desc(ch) == 0
    assert _hbm_used(acl) == before
