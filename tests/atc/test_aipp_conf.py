# SPDX-License-Identifier: GPL-2.0
"""davinci-atc's --insert_op_conf on its own, no device: the AIPP config
parser (Ascend's aipp_op text format), its refusals naming the file's
line, the model it makes (the u8 picture as input, AIPP its first op) and
the command line's --insert_op_conf, --output_type and
--dynamic_image_size (its gears and refusals). (The models run in tests/conformance/
test_atc_aipp.py on every backend.)"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from davinci import aipp, atc, omfile  # noqa: E402
from davinci.atc.aipp_conf import parse_aipp_conf  # noqa: E402

from tests.atc._cli import atc as _atc  # noqa: E402

SAMPLE = """\
# the classification samples' config
aipp_op {
    aipp_mode : static
    input_format : YUV420SP_U8
    src_image_size_w : 8
    src_image_size_h : 6
    csc_switch : true
    rbuv_swap_switch : false
    matrix_r0c0 : 256  matrix_r0c1 : 0  matrix_r0c2 : 359
    matrix_r1c0 : 256  matrix_r1c1 : -88  matrix_r1c2 : -183
    matrix_r2c0 : 256  matrix_r2c1 : 454  matrix_r2c2 : 0
    input_bias_0 : 0  input_bias_1 : 128  input_bias_2 : 128
    mean_chn_0 : 124  mean_chn_1 : 117  mean_chn_2 : 104
    var_reci_chn_0 : 0.0171247538316637   # 1 / 58.395
}
"""


def _conv(h=6, w=8, inputs=("x",)):
    """A 1x1 Conv of each input (1 x 3 x h x w), summed."""
    wt = np.ones((2, 3, 1, 1), np.float32)
    nodes = [helper.make_node("Conv", [x, "w"], ["c%d" % i], name="conv%d" % i)
             for i, x in enumerate(inputs)]
    out = "c0"
    if len(inputs) > 1:
        nodes.append(helper.make_node("Add", ["c0", "c1"], ["y"], name="add"))
        out = "y"
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, h, w])
         for x in inputs],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(wt, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_the_samples_config_is_read_as_written():
    op, = parse_aipp_conf(SAMPLE, "aipp.cfg")
    assert op.mode == "static" and op.rank == 0
    cfg = op.config(6, 8)
    assert cfg.input_format == "YUV420SP_U8" and (cfg.src_w, cfg.src_h) == \
        (8, 6)
    assert cfg.csc and not cfg.rbuv_swap
    assert cfg.matrix == [256, 0, 359, 256, -88, -183, 256, 454, 0]
    assert cfg.input_bias == [0, 128, 128] and cfg.output_bias == [0, 0, 0]
    assert cfg.mean == [124, 117, 104, 0]
    assert cfg.var_reci == [0.0171247538316637, 1.0, 1.0, 1.0]
    assert op.lines["var_reci_chn_0"] == 14


def test_csc_without_a_matrix_takes_canns_template_defaults():
    op, = parse_aipp_conf("aipp_op {\n aipp_mode: static\n input_format: "
                          "YUV420SP_U8\n csc_switch: true\n}")
    cfg = op.config(6, 8)
    assert cfg.matrix == [298, 516, 0, 298, -100, -208, 298, 0, 409]
    assert cfg.input_bias == [16, 128, 128]
    assert (cfg.src_w, cfg.src_h) == (8, 6)       # the model's size


def test_several_aipp_ops_name_their_inputs():
    text = ("aipp_op {\n aipp_mode : static\n related_input_rank : 1\n"
            " input_format : RGB888_U8\n}\n"
            "aipp_op {\n aipp_mode : dynamic\n related_input_rank : 0\n"
            " max_src_image_size : 72\n}\n")
    data = atc.convert(_conv(inputs=("a", "b")),
                       insert_op_conf=parse_aipp_conf(text))
    om = omfile.parse(data)
    names = [io.name for io in om.inputs]
    assert names == ["a", "b", "ascend_dynamic_aipp_data"]
    assert om.inputs[0].dims == [1, 72] and om.inputs[0].dtype == "uint8"
    assert om.inputs[1].dims == [1, 6, 8, 3] and \
        om.inputs[1].format == "NHWC"
    assert om.inputs[2].dims == [aipp.CONFIG_SIZE]
    aipps = [o for o in om.ops if omfile._uapi.OP_NAMES[o.opcode] == "AIPP"]
    assert om.ops[:2] == aipps          # the stage comes first
    kinds = {om.tensors[o.src0].index: om.tensors[o.src1].kind
             for o in aipps}
    assert kinds == {0: omfile.KIND_INPUT, 1: omfile.KIND_WEIGHT}


@pytest.mark.parametrize("text,line,words", [
    ("aipp_op {\n aipp_mode : static\n crop_start : 1\n}", 3,
     "unknown key 'crop_start'"),
    ("aipp_op {\n aipp_mode : static\n\n csc_switch : yes\n}", 4,
     "not a bool"),
    ("aipp_op {\n aipp_mode : static\n mean_chn_0 : 1.5\n}", 3,
     "not an integer"),
    ("aipp_op {\n aipp_mode : static\n var_reci_chn_0 : x\n}", 3,
     "not a number"),
    ("aipp_op {\n aipp_mode : stat\n}", 2, "static, dynamic"),
    ("aipp_op {\n aipp_mode : static\n input_format : YUV400_U8\n}", 3,
     "takes YUV420SP_U8"),
    ("aipp_op {\n aipp_mode : static\n input_format : NV12\n}", 3,
     "one of"),
    ("aipp_op {\n aipp_mode : static\n resize : true\n}", 3,
     "does not resize"),
    ("aipp_op {\n aipp_mode : static\n rotation_angle : 90\n}", 3,
     "does not rotate"),
    ("aipp_op {\n aipp_mode : static\n padding : true\n padding : false\n}",
     4, "given twice"),
    ("aipp_op {\n input_format : RGB888_U8\n}", 1, "without aipp_mode"),
    ("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n", 3,
     "the file ends"),
    ("aipp_op {\n aipp_mode : static\n input_format RGB888_U8\n}", 3,
     "':' after input_format"),
    ("aipp {\n}", 1, "aipp_op { ... } blocks"),
    ("aipp_op {\n aipp_mode : dynamic\n}", 1, "max_src_image_size"),
    ("aipp_op {\n aipp_mode : dynamic\n max_src_image_size : 72\n"
     " mean_chn_0 : 3\n}", 4, "at run time"),
    ("# nothing\n", None, "no aipp_op block"),
])
def test_a_bad_config_is_refused_naming_its_line(text, line, words):
    with pytest.raises(atc.ConversionError) as ei:
        parse_aipp_conf(text, "my.cfg")
    msg = str(ei.value)
    assert words in msg
    if line is not None:
        assert "my.cfg:%d:" % line in msg


@pytest.mark.parametrize("extra,words", [
    ("crop : true\n load_start_pos_w : 2\n crop_size_w : 8\n", "not inside"),
    ("crop : true\n load_start_pos_w : 1\n crop_size_w : 6\n padding : true"
     "\n left_padding_size : 2\n", "even"),
    ("padding : true\n left_padding_size : 2\n", "the model takes 6 x 8"),
    ("src_image_size_w : 7\n", "even width"),
    ("matrix_r0c0 : 40000\n csc_switch : true\n", "-32768 .. 32767"),
    ("input_bias_1 : 300\n csc_switch : true\n", "0 .. 255"),
    ("related_input_rank : 2\n", "has 1 input"),
    ("related_input_name : y\n", "related_input_name 'y'"),
])
def test_a_config_the_model_cannot_take_is_refused(extra, words):
    text = ("aipp_op {\n aipp_mode : static\n input_format : YUV420SP_U8\n"
            " %s}\n" % extra)
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(_conv(), insert_op_conf=parse_aipp_conf(text, "a.cfg"))
    assert words in str(ei.value) and "a.cfg:" in str(ei.value)


def test_aipp_needs_an_nchw_float_input_of_three_channels():
    m = _conv()
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 4
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(m, insert_op_conf=parse_aipp_conf(
            "aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n}"))
    assert "3 channels" in str(ei.value)


def test_output_type_names_graph_outputs_only():
    m = _conv()
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(m, output_type="conv0:1:FP16")
    assert "not a graph output" in str(ei.value)
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(m, output_type="FP64")
    assert "FP16" in str(ei.value)
    om = omfile.parse(atc.convert(m, output_type="conv0:0:UINT8"))
    assert om.outputs[0].dtype == "uint8"


def test_the_command_line(tmp_path):
    src = tmp_path / "conv.onnx"
    onnx.save(_conv(), str(src))
    cfg = tmp_path / "aipp.cfg"
    cfg.write_text(SAMPLE)
    p = _atc("--model", str(src), "--framework=5", "--output",
             str(tmp_path / "m"), "--soc_version=Ascend310",
             "--insert_op_conf=%s" % cfg, "--output_type=FP16")
    assert p.returncode == 0, p.stderr
    om = omfile.parse((tmp_path / "m.om").read_bytes())
    assert om.inputs[0].dims == [1, 9, 8, 1] and \
        om.outputs[0].dtype == "float16"
    cfg.write_text(SAMPLE.replace("csc_switch", "csc_swich"))
    p = _atc("--model", str(src), "--framework=5", "--output",
             str(tmp_path / "n"), "--insert_op_conf=%s" % cfg)
    assert p.returncode == 1
    assert "%s:7: unknown key 'csc_swich'" % cfg in p.stderr
    assert not (tmp_path / "n.om").exists()
    p = _atc("--model", str(src), "--framework=5", "--output",
             str(tmp_path / "o"), "--insert_op_conf=%s" % (tmp_path / "no"))
    assert p.returncode == 1 and "cannot read it" in p.stderr
    p = _atc("--model", str(src), "--framework=5", "--output",
             str(tmp_path / "d"), "--input_shape=x:1,3,-1,-1",
             "--dynamic_image_size=6,8;12,16")
    assert p.returncode == 0, p.stderr
    om = omfile.parse((tmp_path / "d.om").read_bytes())
    assert om.hw_sizes == [[6, 8], [12, 16]]
    assert om.inputs[0].dims == [1, 3, -1, -1]
    assert [om.dims(om.inputs[0], g) for g in (0, 1)] == [[1, 3, 6, 8],
                                                         [1, 3, 12, 16]]
    assert om.inputs[-1].name == "ascend_mbatch_shape_data"
    assert om.outputs[0].dims == [1, 2, -1, -1]


@pytest.mark.parametrize("kw,words", [
    (dict(input_shape="x:1,3,6,8", dynamic_image_size="6,8"),
     "height and width are -1"),
    (dict(input_shape="x:1,-1,-1,-1", dynamic_image_size="6,8"),
     "height and width of a 4-D input"),
    (dict(input_shape="x:1,3,-1,-1", dynamic_image_size="6,8;6,8"),
     "distinct"),
    (dict(input_shape="x:1,3,-1,-1", dynamic_image_size="6;8"), "distinct"),
    (dict(input_shape="x:-1,3,-1,-1", dynamic_image_size="6,8",
          dynamic_batch_size="1,2"), "give one"),
    (dict(input_shape="x:1,3,-1,-1", dynamic_image_size="6,8",
          insert_op_conf=parse_aipp_conf(SAMPLE)),
     "AIPP makes one image size"),
])
def test_dynamic_image_size_refusals(kw, words):
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(_conv(), **kw)
    assert words in str(ei.value)


def test_the_compact_form_some_samples_write():
    """``aipp_op{`` and ``key: value`` without spaces, long decimals."""
    op, = parse_aipp_conf(
        "aipp_op{\n   aipp_mode : static\n   input_format : RGB888_U8\n"
        "   src_image_size_w : 8\n   src_image_size_h : 6\n\n"
        "   csc_switch : false\n   rbuv_swap_switch : true\n\n"
        "   min_chn_0 : 0\n   min_chn_1 : 0\n   min_chn_2 : 0\n"
        "   var_reci_chn_0: 0.0039215686274509803921568627451\n"
        "   var_reci_chn_1: 0.0039215686274509803921568627451\n"
        "   var_reci_chn_2: 0.0039215686274509803921568627451\n\n}\n")
    cfg = op.config(6, 8)
    assert cfg.rbuv_swap and not cfg.csc
    assert np.float32(cfg.var_reci[2]) == np.float32(1 / 255)
