# SPDX-License-Identifier: GPL-2.0
"""Ascend's vpc_jpeg_resnet50_imagenet_classification sample on every
backend: photos made here are decoded by JPEGD into 128 x 16 aligned
NV12, resized by VPC to 224 x 224, and classified by a ResNet-50 that
davinci-atc converted with an AIPP config in the samples' form (YUV420SP
in, CSC to RGB, mean and variance), through acl.mdl, top-5 printed; the
same photos preprocessed on the host (Pillow's libjpeg-turbo decode,
NUMERICS.md's VPC bilinear rule and AIPP formulas in numpy) and run by
onnxruntime on the ONNX model give the same pictures and the same top-5.

The model is the light ResNet-50 of the onnx package
(onnx/backend/test/data/light) with its ConstantOfShape weights replaced
by seeded random ones: the light file's are one constant each, so every
class scores 0.001 and a top-5 could not tell a wrong pipeline from a
right one. Named light_model: the QEMU guest leaves it out (4 GFLOP an
image under TCG)."""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import acl  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from davinci import aipp, atc  # noqa: E402

from .conftest import wait_quiescent  # noqa: E402
from .test_dvpp_vpc import J, encode, photo, ref_bilinear_fixed  # noqa: E402

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                     "data", "light", "light_resnet50.onnx")
SIZE = 224
NV12 = 1        # PIXEL_FORMAT_YUV_SEMIPLANAR_420
#: the aipp.cfg of the sample's README: NV12 in, BT.601 to RGB, ImageNet's
#: mean and 1 / std
AIPP_CFG = """\
aipp_op {
    aipp_mode : static
    related_input_rank : 0
    input_format : YUV420SP_U8
    src_image_size_w : 224
    src_image_size_h : 224
    csc_switch : true
    rbuv_swap_switch : false
    matrix_r0c0 : 256
    matrix_r0c1 : 0
    matrix_r0c2 : 359
    matrix_r1c0 : 256
    matrix_r1c1 : -88
    matrix_r1c2 : -183
    matrix_r2c0 : 256
    matrix_r2c1 : 454
    matrix_r2c2 : 0
    input_bias_0 : 0
    input_bias_1 : 128
    input_bias_2 : 128
    mean_chn_0 : 124
    mean_chn_1 : 117
    mean_chn_2 : 104
    var_reci_chn_0 : 0.0171247538316637
    var_reci_chn_1 : 0.0175070028011204
    var_reci_chn_2 : 0.0174291938997821
}
"""
#: two photos of sizes no multiple of 16
PHOTOS = ((500, 375, 3), (333, 250, 8))


def _resnet50(seed: int = 0):
    """The light ResNet-50 with seeded weights: He-normal convolutions and
    classifier, batch norms of scale 0.8 (1 + 0.1 noise), no shift, mean 0,
    variance 1 to 1.5 (deep enough a net with these keeps its logits apart
    and dependent on the picture)."""
    m = onnx.load(LIGHT)
    rng = np.random.default_rng(seed)
    shapes = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    nodes, weights = [], []
    for n in m.graph.node:
        if n.op_type != "ConstantOfShape":
            nodes.append(n)
            continue
        shape = tuple(int(d) for d in shapes[n.input[0]])
        kind = n.output[0].rsplit("_", 2)[-2]
        if kind == "w":
            a = rng.standard_normal(shape) * np.sqrt(2 / np.prod(shape[1:]))
        elif kind == "s":
            a = 0.8 * (1 + 0.1 * rng.standard_normal(shape))
        elif kind == "riv":
            a = 1 + 0.5 * np.abs(rng.standard_normal(shape))
        else:                                   # b, rm
            a = np.zeros(shape)
        weights.append(numpy_helper.from_array(a.astype(np.float32),
                                               n.output[0]))
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    keep = [i for i in m.graph.initializer if i.name in used] + weights
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    given = {i.name for i in keep}
    inputs = [i for i in m.graph.input if i.name in used and
              i.name not in given]
    del m.graph.input[:]
    m.graph.input.extend(inputs)
    return m


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(the ONNX model, the .om path, the AIPP config) once per backend."""
    tmp = tmp_path_factory.mktemp("resnet50")
    cfg_path = tmp / "aipp.cfg"
    cfg_path.write_text(AIPP_CFG)
    m = _resnet50()
    onnx_path = tmp / "resnet50.onnx"
    onnx.save(m, str(onnx_path))
    om = atc.convert_file(str(onnx_path), str(tmp / "resnet50"),
                          soc_version="Ascend310",
                          insert_op_conf=str(cfg_path))
    cfg = atc.aipp_conf.read_aipp_conf(str(cfg_path))[0].config(SIZE, SIZE)
    return m, om, cfg


@pytest.fixture(scope="module")
def jpegs():
    return [encode(photo(w, h, seed=s), quality=90, subsampling=2)
            for w, h, s in PHOTOS]


def _check(ret, what):
    assert ret == 0, "%s returned %d: %s" % (what, ret,
                                             acl.get_recent_err_msg())


class Sample:
    """The sample's program: its DVPP channel, model and datasets."""

    def __init__(self, om_path):
        _check(acl.init(), "acl.init")
        _check(acl.rt.set_device(0), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(0)
        _check(ret, "acl.rt.create_context")
        self.stream, ret = acl.rt.create_stream()
        _check(ret, "acl.rt.create_stream")
        self.channel = acl.media.dvpp_create_channel_desc()
        _check(acl.media.dvpp_create_channel(self.channel),
               "dvpp_create_channel")
        self.resize_config = acl.media.dvpp_create_resize_config()
        _check(acl.media.dvpp_set_resize_config_interpolation(
            self.resize_config, 1), "set_resize_config_interpolation")
        self.model_id, ret = acl.mdl.load_from_file(om_path)
        _check(ret, "acl.mdl.load_from_file")
        self.desc = acl.mdl.create_desc()
        _check(acl.mdl.get_desc(self.desc, self.model_id), "get_desc")
        self.out_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.out_ptr, ret = acl.rt.malloc(self.out_size,
                                          acl.ACL_MEM_MALLOC_HUGE_FIRST)
        _check(ret, "acl.rt.malloc")
        self.freed = []

    def _pic_desc(self, buf, size, w, h, ws, hs):
        d = acl.media.dvpp_create_pic_desc()
        for field, value in (("data", buf), ("size", size),
                             ("format", NV12), ("width", w), ("height", h),
                             ("width_stride", ws), ("height_stride", hs)):
            _check(getattr(acl.media, "dvpp_set_pic_desc_" + field)(d, value),
                   "dvpp_set_pic_desc_" + field)
        self.freed.append(("desc", d))
        return d

    def _dvpp_buffer(self, size):
        buf, ret = acl.media.dvpp_malloc(size)
        _check(ret, "dvpp_malloc")
        self.freed.append(("dvpp", buf))
        return buf

    def classify(self, data: bytes):
        """(probabilities, the 224 x 224 NV12 the model read) of one JPEG:
        JPEGD, VPC resize, then the model on the resized picture."""
        host = acl.util.bytes_to_ptr(data)
        w, h, _, ret = acl.media.dvpp_jpeg_get_image_info(host, len(data))
        _check(ret, "dvpp_jpeg_get_image_info")
        jpeg = self._dvpp_buffer(len(data))
        _check(acl.rt.memcpy(jpeg, len(data), host, len(data),
                             acl.ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
        dec_size, ret = acl.media.dvpp_jpeg_predict_dec_size(host, len(data),
                                                             NV12)
        _check(ret, "dvpp_jpeg_predict_dec_size")
        dec = self._dvpp_buffer(dec_size)
        ws, hs = -(-w // 128) * 128, -(-h // 16) * 16
        dec_desc = self._pic_desc(dec, dec_size, w, h, ws, hs)
        _check(acl.media.dvpp_jpeg_decode_async(self.channel, jpeg, len(data),
                                                dec_desc, self.stream),
               "dvpp_jpeg_decode_async")
        _check(acl.rt.synchronize_stream(self.stream), "synchronize_stream")
        size = SIZE * SIZE * 3 // 2
        resized = self._dvpp_buffer(size)
        out_desc = self._pic_desc(resized, size, SIZE, SIZE, SIZE, SIZE)
        _check(acl.media.dvpp_vpc_resize_async(self.channel, dec_desc,
                                               out_desc, self.resize_config,
                                               self.stream),
               "dvpp_vpc_resize_async")
        _check(acl.rt.synchronize_stream(self.stream), "synchronize_stream")
        inputs, outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        in_buf = acl.create_data_buffer(resized, size)
        out_buf = acl.create_data_buffer(self.out_ptr, self.out_size)
        _check(acl.mdl.add_dataset_buffer(inputs, in_buf)[1], "add_dataset")
        _check(acl.mdl.add_dataset_buffer(outputs, out_buf)[1], "add_dataset")
        _check(acl.mdl.execute(self.model_id, inputs, outputs),
               "acl.mdl.execute")
        probs = np.empty(self.out_size // 4, np.float32)
        picture = np.empty(size, np.uint8)
        for dst, src, n in ((probs, self.out_ptr, self.out_size),
                            (picture, resized, size)):
            _check(acl.rt.memcpy(acl.util.numpy_to_ptr(dst), n, src, n,
                                 acl.ACL_MEMCPY_DEVICE_TO_HOST), "memcpy")
        for b in (in_buf, out_buf):
            _check(acl.destroy_data_buffer(b), "destroy_data_buffer")
        for ds in (inputs, outputs):
            _check(acl.mdl.destroy_dataset(ds), "destroy_dataset")
        return probs, picture

    def release(self):
        for kind, h in reversed(self.freed):
            _check(acl.media.dvpp_destroy_pic_desc(h) if kind == "desc"
                   else acl.media.dvpp_free(h), "free " + kind)
        _check(acl.rt.free(self.out_ptr), "acl.rt.free")
        _check(acl.mdl.destroy_desc(self.desc), "destroy_desc")
        _check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
        _check(acl.media.dvpp_destroy_resize_config(self.resize_config),
               "destroy_resize_config")
        _check(acl.media.dvpp_destroy_channel(self.channel),
               "dvpp_destroy_channel")
        _check(acl.media.dvpp_destroy_channel_desc(self.channel),
               "dvpp_destroy_channel_desc")
        _check(acl.rt.destroy_stream(self.stream), "destroy_stream")
        _check(acl.rt.destroy_context(self.context), "destroy_context")
        _check(acl.rt.reset_device(0), "reset_device")
        _check(acl.finalize(), "acl.finalize")


def host_picture(data: bytes) -> np.ndarray:
    """The 224 x 224 NV12 of a 4:2:0 JPEG made on the host: libjpeg-turbo's
    Y and its chroma planes as decoded (Pillow), each resized by VPC's
    bilinear rule."""
    y = J.pillow_ycbcr(data)[..., 0]
    c = J.pillow_ycbcr(data, half=True)
    uv = [ref_bilinear_fixed(c[..., k], SIZE // 2, SIZE // 2) for k in (1, 2)]
    return np.concatenate([ref_bilinear_fixed(y, SIZE, SIZE).ravel(),
                           np.stack(uv, -1).ravel()])


def top5(p: np.ndarray) -> list[int]:
    return np.argsort(-p, kind="stable")[:5].tolist()


def _hbm_in_use() -> int:
    import davinci
    with davinci.Device(0) as d:
        wait_quiescent(d)
        return d.info.hbm_total - d.info.hbm_free


def test_light_model_resnet50_sample_pipeline_tops_onnxruntime(model, jpegs):
    m, om, cfg = model
    before = _hbm_in_use()
    sample = Sample(om)
    try:
        got = [sample.classify(data) for data in jpegs]
    finally:
        sample.release()
    assert _hbm_in_use() == before      # the sample's frees return it all
    sess = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    tops = []
    for data, (probs, picture) in zip(jpegs, got):
        pic = host_picture(data)
        # the device's JPEGD and VPC made the host's picture, byte for byte
        assert np.array_equal(picture, pic)
        want = sess.run(None, {name: aipp.reference(cfg, pic, "float32")[
            None]})[0].ravel()
        assert top5(probs) == top5(want), (top5(probs), top5(want))
        np.testing.assert_allclose(probs, want, rtol=1e-3, atol=1e-6)
        tops.append(top5(probs))
    # the two photos are told apart: the pipeline's picture decides
    assert tops[0] != tops[1], tops
    print("\ntop-5 of the two photos: %s" % tops)
