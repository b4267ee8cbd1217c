# SPDX-License-Identifier: GPL-2.0
"""ATC's AIPP stage on every backend: a small CNN converted by davinci-atc
with --insert_op_conf (the aipp.cfg form of Ascend's samples) takes the
raw u8 picture, and its outputs equal onnxruntime's on the same picture
converted on the host by NUMERICS.md's formulas (davinci.aipp.reference);
NV12, NV21, RGB888 and XRGB8888 pictures, crop and padding; dynamic AIPP
through acl.mdl's set_aipp_* / set_input_aipp changing the mean between
two executes; --output_type; a config the device does not take fails the
task with nothing written; and --dynamic_image_size's model run at each of
its sizes through acl.mdl's set_dynamic_hw_size."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import acl  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from davinci import aipp, atc, omfile, ops  # noqa: E402
from davinci.errors import TaskFailedError  # noqa: E402
from davinci.model import Model  # noqa: E402

H, W = 16, 20

#: the classification samples' aipp.cfg, for a 20 x 16 picture
SAMPLE_CFG = """\
aipp_op {
    aipp_mode : static
    related_input_rank : 0
    input_format : YUV420SP_U8
    src_image_size_w : 20
    src_image_size_h : 16
    csc_switch : true
    rbuv_swap_switch : %s
    matrix_r0c0 : 256  matrix_r0c1 : 0  matrix_r0c2 : 359
    matrix_r1c0 : 256  matrix_r1c1 : -88  matrix_r1c2 : -183
    matrix_r2c0 : 256  matrix_r2c1 : 454  matrix_r2c2 : 0
    input_bias_0 : 0  input_bias_1 : 128  input_bias_2 : 128
    mean_chn_0 : 124  mean_chn_1 : 117  mean_chn_2 : 104
    var_reci_chn_0 : 0.0171247538316637
    var_reci_chn_1 : 0.0175070028011204
    var_reci_chn_2 : 0.0174291938997821
}
"""


def _cnn(seed=0, dtype=TensorProto.FLOAT):
    """Conv 3x3 -> Relu -> MaxPool 2 -> Conv 3x3 -> GlobalAveragePool ->
    Flatten on a 1 x 3 x H x W image."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((5, 8, 3, 3)) * 0.3).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"],
                              pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2],
                              strides=[2, 2], name="pool1"),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1],
                              name="conv2"),
             helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["prob"], name="flat")]
    g = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, H, W])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(a, n) for n, a in
         (("w1", w1), ("b1", b1), ("w2", w2))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _ort(m, x):
    sess = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _picture(rng, fmt, w=W, h=H):
    return rng.integers(0, 256, aipp.picture_bytes(fmt, w, h), np.uint8)


def _conf(tmp_path, text, name="aipp.cfg"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _run(dev, data, *inputs):
    with Model(dev, data) as mod:
        return mod.run(list(inputs))


@pytest.mark.parametrize("swap", [False, True], ids=["nv12", "nv21"])
def test_a_yuv420sp_model_is_onnxruntime_on_the_host_converted_picture(
        dev, tmp_path, swap):
    m = _cnn(1)
    path = _conf(tmp_path, SAMPLE_CFG % ("true" if swap else "false"))
    data = atc.convert(m, insert_op_conf=path)
    om = omfile.parse(data)
    assert om.inputs[0].dtype == "uint8" and om.inputs[0].format == "NHWC"
    assert om.inputs[0].dims == [1, H * 3 // 2, W, 1]
    assert omfile._uapi.OP_NAMES[om.ops[0].opcode] == "AIPP"
    pic = _picture(np.random.default_rng(2), "YUV420SP_U8")
    cfg = atc.aipp_conf.read_aipp_conf(path)[0].config(H, W)
    assert cfg.rbuv_swap == swap
    want = _ort(m, aipp.reference(cfg, pic, "float32")[None])
    got, = _run(dev, data, pic.reshape(1, H * 3 // 2, W, 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # not the picture read as RGB: the stage really converts
    other = aipp.reference(dataclass_replace(cfg, csc=False), pic,
                           "float32")[None]
    assert not np.allclose(_ort(m, other), got, rtol=1e-3, atol=1e-3)


def test_static_aipp_in_a_dynamic_batch_model(dev, tmp_path):
    """One config for every picture of the batch the gear runs."""
    m = _cnn(2)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    path = _conf(tmp_path, SAMPLE_CFG % "false")
    data = atc.convert(m, input_shape="x:-1,3,%d,%d" % (H, W),
                       dynamic_batch_size="1,3", insert_op_conf=path)
    assert omfile.parse(data).inputs[0].dims == [-1, H * 3 // 2, W, 1]
    cfg = atc.aipp_conf.read_aipp_conf(path)[0].config(H, W)
    pics = np.random.default_rng(3).integers(0, 256, (3, H * 3 // 2, W, 1),
                                             dtype=np.uint8)
    with Model(dev, data) as mod:
        got, = mod.run([pics], batch=3)
    x = np.stack([aipp.reference(cfg, p.reshape(-1), "float32")
                  for p in pics])
    want = np.concatenate([_ort(m, x[i:i + 1]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def dataclass_replace(cfg, **kw):
    c = cfg.copy()
    for k, v in kw.items():
        setattr(c, k, v)
    return c


@pytest.mark.parametrize("fmt,extra", [
    ("RGB888_U8", "rbuv_swap_switch : true"),
    ("XRGB8888_U8", ""),
    ("XRGB8888_U8", "ax_swap_switch : true"),
])
def test_rgb_pictures(dev, tmp_path, fmt, extra):
    m = _cnn(3)
    text = ("aipp_op {\n aipp_mode : static\n input_format : %s\n %s\n"
            " mean_chn_0 : 120 mean_chn_1 : 110 mean_chn_2 : 100\n"
            " min_chn_0 : 0.5\n var_reci_chn_0 : 0.02 var_reci_chn_1 : 0.03\n"
            " var_reci_chn_2 : 0.01\n}\n" % (fmt, extra))
    path = _conf(tmp_path, text)
    data = atc.convert(m, insert_op_conf=path)
    per = 3 if fmt == "RGB888_U8" else 4
    assert omfile.parse(data).inputs[0].dims == [1, H, W, per]
    pic = _picture(np.random.default_rng(4), fmt)
    cfg = atc.aipp_conf.read_aipp_conf(path)[0].config(H, W)
    got, = _run(dev, data, pic.reshape(1, H, W, per))
    want = _ort(m, aipp.reference(cfg, pic, "float32")[None])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_crop_and_padding_make_the_models_input(dev, tmp_path):
    """A 32 x 24 NV12 picture, cropped at (6, 4) to 16 x 12 and padded by
    1, 3, 2, 2 to the model's 20 x 16."""
    m = _cnn(5)
    text = SAMPLE_CFG % "false"
    text = text.replace("src_image_size_w : 20", "src_image_size_w : 32")
    text = text.replace("src_image_size_h : 16", "src_image_size_h : 24")
    text = text.replace("}\n", """    crop : true
    load_start_pos_w : 6
    load_start_pos_h : 4
    crop_size_w : 16
    crop_size_h : 12
    padding : true
    left_padding_size : 1
    right_padding_size : 3
    top_padding_size : 2
    bottom_padding_size : 2
    padding_value : 0.5
}
""")
    path = _conf(tmp_path, text)
    data = atc.convert(m, insert_op_conf=path)
    assert omfile.parse(data).inputs[0].dims == [1, 36, 32, 1]
    pic = _picture(np.random.default_rng(6), "YUV420SP_U8", 32, 24)
    cfg = atc.aipp_conf.read_aipp_conf(path)[0].config(H, W)
    x = aipp.reference(cfg, pic, "float32")
    assert x.shape == (3, H, W) and np.all(x[:, :2] == 0.5) and \
        np.all(x[:, :, -3:] == 0.5)
    got, = _run(dev, data, pic)
    np.testing.assert_allclose(got, _ort(m, x[None]), rtol=1e-4, atol=1e-5)


def test_the_op_writes_the_reference_bit_for_bit_in_every_dtype(dev):
    rng = np.random.default_rng(7)
    cfg = aipp.AippConfig(
        "YUV420SP_U8", 30, 22, csc=True,
        matrix=[298, 516, 0, 298, -100, -208, 298, 0, 409],
        input_bias=[16, 128, 128], output_bias=[3, 0, 250], crop=True,
        crop_x=4, crop_y=2, crop_w=25, crop_h=19, padding=True, pad_left=2,
        pad_right=1, pad_top=1, pad_bottom=3, padding_value=-2.5,
        mean=[-7, 300, 60, 0], min=[0.125, -3.5, 1e-3, 0],
        var_reci=[0.017, -0.5, 3.75, 1])
    pic = _picture(rng, "YUV420SP_U8", 30, 22)
    h, w = cfg.out_size()
    conf = dev.tensor(np.frombuffer(cfg.pack(), np.uint8).copy())
    for dt in ("float32", "float16"):
        got = ops.aipp(dev.tensor(np.concatenate([pic, pic[::-1]])), conf, h,
                       w, dtype=dt, batch=2).numpy()
        for b, p in enumerate((pic, pic[::-1])):
            want = aipp.reference(cfg, p, dt)
            assert np.array_equal(got[b].view(np.uint8), want.view(np.uint8))


def test_a_config_the_device_does_not_take_fails_the_task(dev):
    """A crop past the picture, written into the config's device memory
    after the task was built: the task fails and writes nothing; the
    stream runs the good config again after a reset."""
    cfg = aipp.AippConfig("RGB888_U8", 8, 6)
    pic = dev.tensor(_picture(np.random.default_rng(8), "RGB888_U8", 8, 6))
    conf = dev.tensor(np.frombuffer(cfg.pack(), np.uint8).copy())
    out = dev.tensor(np.full((1, 3, 6, 8), 9.0, np.float32))
    bad = cfg.copy()
    bad.crop, bad.crop_x, bad.crop_w, bad.crop_h = True, 2, 8, 6
    conf.buffer.write(bad.pack(), offset=conf.dev_addr - conf.buffer.dev_addr)
    s = dev.stream()
    with pytest.raises(TaskFailedError):
        ops.aipp(pic, conf, 6, 8, dtype="float32", out=out, stream=s)
        s.synchronize()
    s.reset()
    assert np.all(out.numpy() == 9.0)
    conf.buffer.write(cfg.pack(), offset=conf.dev_addr - conf.buffer.dev_addr)
    ops.aipp(pic, conf, 6, 8, dtype="float32", out=out, stream=s)
    s.synchronize()
    assert np.array_equal(out.numpy()[0], aipp.reference(
        cfg, pic.numpy(), "float32"))


@pytest.mark.parametrize("spec,dtype", [("FP16", "float16"),
                                        ("flat:0:FP16", "float16"),
                                        ("FP32", "float32")])
def test_output_type_sets_the_outputs_dtype(dev, tmp_path, spec, dtype):
    m = _cnn(9)
    path = _conf(tmp_path, SAMPLE_CFG % "false")
    plain = atc.convert(m, insert_op_conf=path)
    data = atc.convert(m, insert_op_conf=path, output_type=spec)
    assert omfile.parse(data).outputs[0].dtype == dtype
    pic = _picture(np.random.default_rng(10), "YUV420SP_U8")
    got, = _run(dev, data, pic)
    base, = _run(dev, plain, pic)
    assert got.dtype == np.dtype(dtype)
    assert np.array_equal(got, base.astype(dtype))


def _dynamic_model(tmp_path):
    text = ("aipp_op {\n  aipp_mode : dynamic\n  related_input_rank : 0\n"
            "  max_src_image_size : %d\n}\n" % (32 * 24 * 3 // 2))
    return atc.convert(_cnn(11), insert_op_conf=_conf(tmp_path, text))


class _AclRun:
    """Device buffers for every input and output of an acl.mdl model."""

    def __init__(self, model_id):
        self.id, self.desc = model_id, acl.mdl.create_desc()
        assert acl.mdl.get_desc(self.desc, model_id) == 0
        self.ptrs, self.bufs = [], []
        self.ins = self._dataset(acl.mdl.get_num_inputs,
                                 acl.mdl.get_input_size_by_index)
        self.outs = self._dataset(acl.mdl.get_num_outputs,
                                  acl.mdl.get_output_size_by_index)

    def _dataset(self, count, size_of):
        ds = acl.mdl.create_dataset()
        for i in range(count(self.desc)):
            size = size_of(self.desc, i)
            p, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == 0
            self.ptrs.append(p)
            self.bufs.append(acl.create_data_buffer(p, size))
            assert acl.mdl.add_dataset_buffer(ds, self.bufs[-1])[1] == 0
        return ds

    def put(self, i, arr):
        b = acl.mdl.get_dataset_buffer(self.ins, i)
        arr = np.ascontiguousarray(arr)
        assert acl.rt.memcpy(acl.get_data_buffer_addr(b),
                             acl.get_data_buffer_size(b), arr.ctypes.data,
                             arr.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0

    def get(self, i, shape):
        b = acl.mdl.get_dataset_buffer(self.outs, i)
        out = np.empty(shape, np.float32)
        assert acl.rt.memcpy(out.ctypes.data, out.nbytes,
                             acl.get_data_buffer_addr(b), out.nbytes,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return out

    def close(self):
        for ds in (self.ins, self.outs):
            acl.mdl.destroy_dataset(ds)
        for b in self.bufs:
            acl.destroy_data_buffer(b)
        for p in self.ptrs:
            acl.rt.free(p)
        acl.mdl.destroy_desc(self.desc)
        acl.mdl.unload(self.id)


def _set_sample_params(aipp_set, mean0):
    """The sample's dynamic parameters: a 32 x 24 NV12 picture, BT.601,
    cropped at (4, 6) to the model's 20 x 16, mean (mean0, 117, 104)."""
    assert acl.mdl.set_aipp_src_image_size(aipp_set, 32, 24) == 0
    assert acl.mdl.set_aipp_input_format(aipp_set, acl.ACL_YUV420SP_U8) == 0
    assert acl.mdl.set_aipp_csc_params(aipp_set, 1, 256, 0, 359, 256, -88,
                                       -183, 256, 454, 0, 0, 0, 0, 0, 128,
                                       128) == 0
    assert acl.mdl.set_aipp_rbuv_swap_switch(aipp_set, 0) == 0
    assert acl.mdl.set_aipp_crop_params(aipp_set, 1, 4, 6, W, H, 0) == 0
    assert acl.mdl.set_aipp_dtc_pixel_mean(aipp_set, mean0, 117, 104, 0,
                                           0) == 0
    assert acl.mdl.set_aipp_dtc_pixel_min(aipp_set, 0, 0, 0, 0, 0) == 0
    assert acl.mdl.set_aipp_pixel_var_reci(aipp_set, 0.0171, 0.0175, 0.0174,
                                           1, 0) == 0


def _host_config(mean0):
    return aipp.AippConfig(
        "YUV420SP_U8", 32, 24, csc=True,
        matrix=[256, 0, 359, 256, -88, -183, 256, 454, 0],
        input_bias=[0, 128, 128], crop=True, crop_x=4, crop_y=6, crop_w=W,
        crop_h=H, mean=[mean0, 117, 104, 0],
        var_reci=[0.0171, 0.0175, 0.0174, 1])


def test_dynamic_aipp_changes_the_mean_between_two_executes(acl_dev,
                                                            tmp_path):
    data = _dynamic_model(tmp_path)
    path = tmp_path / "dyn.om"
    path.write_bytes(data)
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0
    r = _AclRun(model_id)
    try:
        idx, ret = acl.mdl.get_input_index_by_name(
            r.desc, acl.ACL_DYNAMIC_AIPP_NAME)
        assert (idx, ret) == (1, 0)
        assert acl.mdl.get_input_size_by_index(r.desc, 0) == 32 * 24 * 3 // 2
        assert acl.mdl.get_input_size_by_index(r.desc, 1) == \
            aipp.CONFIG_SIZE
        assert acl.mdl.get_aipp_type(model_id, 0) == \
            (acl.ACL_DATA_WITH_DYNAMIC_AIPP, 1, 0)
        assert acl.mdl.get_aipp_type(model_id, 1)[0] == \
            acl.ACL_DYNAMIC_AIPP_NODE
        pic = _picture(np.random.default_rng(12), "YUV420SP_U8", 32, 24)
        r.put(0, pic)
        m = _cnn(11)
        results = []
        for mean0 in (124, 30):
            aipp_set, ret = acl.mdl.create_aipp(1)
            assert ret == 0
            _set_sample_params(aipp_set, mean0)
            assert acl.mdl.set_input_aipp(model_id, r.ins, idx, aipp_set) == 0
            assert acl.mdl.destroy_aipp(aipp_set) == 0
            assert acl.mdl.execute(model_id, r.ins, r.outs) == 0
            got = r.get(0, (1, 5))
            want = _ort(m, aipp.reference(_host_config(mean0), pic,
                                          "float32")[None])
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
            results.append(got)
        assert not np.allclose(results[0], results[1])
    finally:
        r.close()


def test_dynamic_aipp_refuses_what_it_cannot_do(acl_dev, tmp_path):
    path = tmp_path / "dyn.om"
    path.write_bytes(_dynamic_model(tmp_path))
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0
    r = _AclRun(model_id)
    try:
        aipp_set, ret = acl.mdl.create_aipp(1)
        assert ret == 0
        assert acl.mdl.set_aipp_scf_params(aipp_set, 1, 32, 24, 20, 16, 0) \
            == acl.ACL_ERROR_FEATURE_UNSUPPORTED
        assert acl.mdl.set_aipp_input_format(aipp_set, acl.ACL_YUV400_U8) \
            == acl.ACL_ERROR_INVALID_PARAM
        assert acl.mdl.set_aipp_crop_params(aipp_set, 1, 0, 0, W, H, 1) == \
            acl.ACL_ERROR_INVALID_PARAM           # batch index 1 of 1
        _set_sample_params(aipp_set, 124)
        # a picture larger than max_src_image_size
        assert acl.mdl.set_aipp_src_image_size(aipp_set, 64, 48) == 0
        assert acl.mdl.set_input_aipp(model_id, r.ins, 1, aipp_set) == \
            acl.ACL_ERROR_INVALID_PARAM
        assert "max_src_image_size" in acl.get_recent_err_msg()
        # a crop that is not the model's input size
        assert acl.mdl.set_aipp_src_image_size(aipp_set, 32, 24) == 0
        assert acl.mdl.set_aipp_crop_params(aipp_set, 1, 0, 0, 8, 8, 0) == 0
        assert acl.mdl.set_input_aipp(model_id, r.ins, 1, aipp_set) == \
            acl.ACL_ERROR_INVALID_PARAM
        assert acl.mdl.set_input_aipp(model_id, r.ins, 0, aipp_set) == \
            acl.ACL_ERROR_GE_PARAM_INVALID        # not the parameters' input
        assert acl.mdl.destroy_aipp(aipp_set) == 0
        assert acl.mdl.destroy_aipp(aipp_set) == acl.ACL_ERROR_INVALID_PARAM
        # no parameters set: a zeroed input is no config, the run fails
        r.put(1, np.zeros(aipp.CONFIG_SIZE, np.uint8))
        assert acl.mdl.execute(model_id, r.ins, r.outs) != 0
    finally:
        r.close()


def _fcn(seed=13):
    """Conv 3x3 -> Relu (its output's size is the image's) and a
    GlobalAveragePool of it (its size is not), on 1 x 3 x h x w."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1],
                              name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu"),
             helper.make_node("GlobalAveragePool", ["y"], ["g"], name="gap")]
    g = helper.make_graph(
        nodes, "fcn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w1, "w1")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_dynamic_image_size_runs_each_size(acl_dev, tmp_path):
    """--input_shape x:1,3,-1,-1 --dynamic_image_size "16,10;8,12": one
    model, each execute at the size set_dynamic_hw_size picks, equal to
    onnxruntime's at that size (the buffers are the largest size's, the
    first); no size chosen or another one refused."""
    m = _fcn()
    path = tmp_path / "hw.om"
    path.write_bytes(atc.convert(m, input_shape="x:1,3,-1,-1",
                                 dynamic_image_size="16,10;8,12"))
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0
    r = _AclRun(model_id)
    try:
        d = r.desc
        idx, ret = acl.mdl.get_input_index_by_name(
            d, acl.ACL_DYNAMIC_TENSOR_NAME)
        assert (idx, ret) == (1, 0)
        info, ret = acl.mdl.get_dynamic_hw(d, -1)
        assert ret == 0 and info == {"hwCount": 2, "hw": [[16, 10], [8, 12]]}
        assert acl.mdl.get_input_dims(d, 0)[0]["dims"] == [1, 3, -1, -1]
        assert acl.mdl.get_input_size_by_index(d, 0) == 3 * 16 * 10 * 4
        assert acl.mdl.execute(model_id, r.ins, r.outs) == \
            acl.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID
        assert acl.mdl.set_dynamic_hw_size(model_id, r.ins, idx, 8, 8) == \
            acl.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID
        assert acl.mdl.set_dynamic_hw_size(model_id, r.ins, 0, 8, 12) == \
            acl.ACL_ERROR_GE_PARAM_INVALID
        rng = np.random.default_rng(14)
        for h, w in ((16, 10), (8, 12), (16, 10)):
            assert acl.mdl.set_dynamic_hw_size(model_id, r.ins, idx, h, w) \
                == 0
            x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
            r.put(0, x)
            assert acl.mdl.execute(model_id, r.ins, r.outs) == 0
            y, g = _ort_all(m, x)
            dims, ret = acl.mdl.get_cur_output_dims(d, 0)
            assert ret == 0 and dims["dims"] == [1, 4, h, w]
            np.testing.assert_allclose(r.get(0, y.shape), y, rtol=1e-5,
                                       atol=1e-5)
            np.testing.assert_allclose(r.get(1, g.shape), g, rtol=1e-5,
                                       atol=1e-5)
    finally:
        r.close()


def _ort_all(m, x):
    sess = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})
