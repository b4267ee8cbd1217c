# SPDX-License-Identifier: GPL-2.0
"""davinci-atc on its own, no device: the command line and the error for
an op it cannot convert. (Models it makes run in tests/conformance on
every backend.)"""

import os

import pytest

onnx = pytest.importorskip("onnx")

from davinci import atc, omfile  # noqa: E402

from tests.conformance._onnx_models import mlp  # noqa: E402
from tests.atc._cli import atc as _atc  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def test_unsupported_op_names_the_op_and_node(tmp_path):
    from onnx import helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Relu", ["x"], ["r"], name="relu0"),
               helper.make_node("LpNormalization", ["r"], ["y"],
                                name="my_norm")],
              [("x", [1, 4])], [("y", [1, 4])])
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(m)
    assert "LpNormalization" in str(ei.value)
    assert "my_norm" in str(ei.value)
    src = tmp_path / "bad.onnx"
    onnx.save(m, str(src))
    p = _atc("--model", str(src), "--framework=5",
             "--output", str(tmp_path / "bad"))
    assert p.returncode == 1
    assert "LpNormalization" in p.stderr and "my_norm" in p.stderr
    assert not (tmp_path / "bad.om").exists()


def test_davinci_atc_command_line(tmp_path):
    m, ref = mlp(seed=11)
    src = tmp_path / "mlp.onnx"
    onnx.save(m, str(src))
    p = _atc("--model", str(src), "--framework=5", "--output",
             str(tmp_path / "mlp"), "--soc_version=Ascend310",
             "--input_shape=x:3,64")
    assert p.returncode == 0, p.stderr
    assert "ATC run success" in p.stdout
    om = omfile.parse((tmp_path / "mlp.om").read_bytes())
    assert om.inputs[0].dims == [3, 64]
    assert om.info["soc_version"] == "Ascend310"
    p = _atc("--model", str(src), "--framework=0", "--output",
             str(tmp_path / "x"))
    assert p.returncode == 2 and "--framework=5" in p.stderr
    # a dynamic batch dimension needs a shape
    p = _atc("--model", str(src), "--framework=5", "--output",
             str(tmp_path / "y"))
    assert p.returncode == 1 and "--input_shape" in p.stderr


def _refusal(m, **kw):
    """The converter's message for ``m`` (it must refuse it)."""
    with pytest.raises(atc.ConversionError) as ei:
        atc.convert(m, **kw)
    return str(ei.value)


def test_graph_without_outputs_or_batch_is_refused():
    from onnx import TensorProto, helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [("x", [2])], [])
    assert "no outputs" in _refusal(m)
    k = helper.make_tensor("k", TensorProto.FLOAT, [2], [1.0, 2.0])
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["y"], name="k0", value=k)], "g",
        [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    assert "no inputs" in _refusal(helper.make_model(g),
                                   dynamic_batch_size="1,2")


@pytest.mark.parametrize("op,ins,match", [
    ("Max", [], r"Max node 'n0' has 0 inputs: .* 1 or more inputs"),
    ("Add", ["x", "x", "x"], r"Add node 'n0' has 3 inputs: .* 2 inputs"),
    ("Gemm", ["x"], r"Gemm node 'n0' has 1 inputs: .* 2 to 3 inputs"),
    ("Min", ["x", "", "x"], r"Min node 'n0': input 1 is empty"),
    ("Reshape", ["x", ""], r"Reshape node 'n0': input 1 is empty"),
])
def test_wrong_input_count_names_node_and_op(op, ins, match):
    from onnx import helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node(op, ins, ["y"], name="n0")], [("x", [2, 2])],
              [("y", [2, 2])])
    with pytest.raises(atc.ConversionError, match=match):
        atc.convert(m)


def test_dropout_mask_is_a_bool_output_and_training_mode_is_refused():
    import numpy as np
    from onnx import helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Dropout", ["x"], ["y", "z"], name="drop")],
              [("x", [2, 3])], [("y", [2, 3]), ("z", [2, 3])])
    om = omfile.parse(atc.convert(m))
    assert [o.dtype for o in om.outputs] == ["float32", "bool"]
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y"],
                                name="drop")],
              [("x", [2, 3])], [("y", [2, 3])],
              [("r", np.array(0.5, np.float32)), ("t", np.array(True))])
    assert "Dropout node 'drop': training_mode is true" in _refusal(m)


#: types davinci-atc neither puts on the device, carries in a wider one
#: (INT16, UINT16, UINT32, UINT64: tests/conformance/test_atc_carry.py)
#: nor folds
_UNSUPPORTED = ["FLOAT8E4M3FN", "FLOAT8E5M2", "INT4", "UINT4"]


def _typed_graph(type_name, where):
    """Add(x, w) with ``x`` (an input), ``w`` (an initializer) or ``k`` (a
    Constant) of ONNX type ``type_name``; the rest FLOAT."""
    from onnx import TensorProto, helper
    code = getattr(TensorProto, type_name)
    F = TensorProto.FLOAT
    w = helper.make_tensor("w", code if where == "initializer" else F, [2],
                           [1, 2])
    nodes = [helper.make_node("Add", ["x", "w"], ["s"], name="add0"),
             helper.make_node("Relu", ["s"], ["y"], name="relu0")]
    if where == "Constant":
        k = helper.make_tensor("k", code, [2], [1, 2])
        nodes = [helper.make_node("Constant", [], ["w"], name="k0", value=k),
                 nodes[0], nodes[1]]
        inits = []
    else:
        inits = [w]
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", code if where == "input" else F,
                                       [2])],
        [helper.make_tensor_value_info("y", F, [2])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("where,tensor", [("input", "x"),
                                          ("initializer", "w"),
                                          ("Constant", "w")])
@pytest.mark.parametrize("type_name", _UNSUPPORTED)
def test_unsupported_element_type_names_tensor_node_and_type(
        type_name, where, tensor):
    msg = _refusal(_typed_graph(type_name, where))
    assert msg.startswith("%s %r is %s (read by Add node 'add0')"
                          % (where, tensor, type_name)), msg


def test_unsupported_element_type_through_the_command_line(tmp_path):
    src = tmp_path / "int4.onnx"
    onnx.save(_typed_graph("INT4", "input"), str(src))
    p = _atc("--model", str(src), "--framework=5",
             "--output", str(tmp_path / "int4"))
    assert p.returncode == 1
    assert "input 'x' is INT4 (read by Add node 'add0')" in p.stderr
    assert not (tmp_path / "int4.om").exists()


def test_unread_initializer_of_an_unsupported_type_is_ignored():
    from onnx import TensorProto, helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [("x", [2])], [("y", [2])])
    m.graph.initializer.append(
        helper.make_tensor("unused", TensorProto.INT16, [2], [1, 2]))
    omfile.parse(atc.convert(m))


@pytest.mark.parametrize("to", ["INT16", "FLOAT8E4M3FN", "UINT32"])
def test_cast_to_an_unsupported_type_is_named(to):
    from onnx import TensorProto, helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Cast", ["x"], ["y"], name="c0",
                                to=getattr(TensorProto, to))],
              [("x", [2])], [("y", [2])])
    msg = _refusal(m)
    assert msg.startswith("Cast node 'c0': cast") and " %s" % to in msg, msg


def _i64(*v):
    import numpy as np
    return np.array(v, np.int64)


def _leak_cases():
    """(what, nodes, inputs, outputs, initializers, message) of models
    whose refusal once leaked a Python exception or named no node."""
    import numpy as np
    from onnx import TensorProto, helper
    N = helper.make_node
    F = TensorProto.FLOAT
    shape_of_x = N("Shape", ["x"], ["s"], name="sh")
    return [
        ("Gather index out of range",
         [shape_of_x, N("Gather", ["s", "i"], ["g"], name="ga"),
          N("Reshape", ["x", "g"], ["y"], name="rs")],
         [("x", [2, 3])], [("y", [6])], [("i", _i64(5))],
         r"Gather node 'ga': indices \[5\] outside the 2 elements"),
        ("Gather axis out of range",
         [shape_of_x, N("Gather", ["s", "i"], ["g"], name="ga", axis=3),
          N("Reshape", ["x", "g"], ["y"], name="rs")],
         [("x", [2, 3])], [("y", [6])], [("i", _i64(0))],
         r"Gather node 'ga': axis 3 outside a 1-D input"),
        ("Concat of mismatched shapes",
         [N("Concat", ["a", "b"], ["c"], name="cc"),
          N("Reshape", ["x", "c"], ["y"], name="rs")],
         [("x", [6])], [("y", [6])], [("a", _i64(1).reshape(1, 1)),
                                      ("b", _i64(6))],
         r"Concat node 'cc': input shapes \[\[1, 1\], \[1\]\] differ"),
        ("Concat axis out of range",
         [N("Concat", ["a", "b"], ["c"], name="cc", axis=2),
          N("Reshape", ["x", "c"], ["y"], name="rs")],
         [("x", [6])], [("y", [6])], [("a", _i64(1)), ("b", _i64(6))],
         r"Concat node 'cc': axis 2 outside a 1-D input"),
        ("Concat of scalars",
         [N("Concat", ["a", "b"], ["c"], name="cc"),
          N("Reshape", ["x", "c"], ["y"], name="rs")],
         [("x", [6])], [("y", [6])], [("a", _i64(1)[0]), ("b", _i64(6)[0])],
         r"Concat node 'cc': its inputs are scalars"),
        ("Squeeze of a wide axis",
         [N("Squeeze", ["x", "ax"], ["y"], name="sq")],
         [("x", [2, 3])], [("y", [3])], [("ax", _i64(0))],
         r"Squeeze node 'sq': axes \[0\] of shape \[2, 3\] are not of size"),
        ("Unsqueeze of one axis twice",
         [N("Unsqueeze", ["x", "ax"], ["y"], name="un")],
         [("x", [2, 3])], [("y", [1, 2, 3])], [("ax", _i64(0, 0))],
         r"Unsqueeze node 'un': axes \[0, 0\] name one output axis twice"),
        ("Flatten axis out of range",
         [N("Flatten", ["x"], ["y"], name="fl", axis=5)],
         [("x", [2, 3])], [("y", [6, 1])], [],
         r"Flatten node 'fl': axis 5 outside -2..2"),
        ("Reshape to a negative dimension",
         [N("Reshape", ["x", "s"], ["y"], name="rs")],
         [("x", [6])], [("y", [6])], [("s", _i64(-2, -3))],
         r"Reshape node 'rs': shape \[-2, -3\]: one -1 at most"),
        ("a DOUBLE constant into a device op",
         [shape_of_x, N("Cast", ["s"], ["d"], name="c64",
                        to=TensorProto.DOUBLE),
          N("Relu", ["d"], ["r"], name="relu"),
          N("Cast", ["r"], ["y"], name="c", to=F)],
         [("x", [2, 3])], [("y", [2])], [],
         r"Relu node 'relu': an input is DOUBLE, a type the device does not"),
        ("Gemm's C of another type",
         [N("Gemm", ["a", "b", "c"], ["y"], name="gm")],
         [("a", [2, 3]), ("b", [3, 2])], [("y", [2, 2])],
         [("c", _i64(1, 2).astype("float64"))],
         r"Gemm node 'gm': A is FLOAT and C is DOUBLE"),
        ("Sub of BOOL constants",
         [N("Sub", ["b", "b"], ["d"], name="sub"),
          N("Cast", ["d"], ["c"], name="c", to=F),
          N("Add", ["x", "c"], ["y"], name="add")],
         [("x", [2])], [("y", [2])], [("b", np.array([True, False]))],
         r"Sub node 'sub': inputs are BOOL; ONNX's Sub takes numbers"),
        ("Gather with FLOAT indices",
         [shape_of_x, N("Gather", ["s", "i"], ["g"], name="ga"),
          N("Reshape", ["x", "g"], ["y"], name="rs")],
         [("x", [2, 3])], [("y", [6])],
         [("i", np.array([0.0], np.float32))],
         r"Gather node 'ga': indices are FLOAT; ONNX's Gather takes INT32"),
        ("Reshape to a FLOAT shape",
         [N("Reshape", ["x", "s"], ["y"], name="rs")],
         [("x", [6])], [("y", [6])], [("s", np.array([np.nan], np.float32))],
         r"Reshape node 'rs': the target shape is FLOAT; ONNX gives it as"),
        ("Squeeze of a scalar",
         [N("Squeeze", ["x", "ax"], ["y"], name="sq")],
         [("x", [])], [("y", [])], [("ax", _i64(0))],
         r"Squeeze node 'sq': axis 0 outside a 0-D input"),
        ("Gemm's constant C that does not broadcast",
         [N("Gemm", ["a", "b", "c"], ["y"], name="gm")],
         [("a", [2, 3]), ("b", [3, 2])], [("y", [2, 2])],
         [("c", np.ones((2, 3), np.float32))],
         r"Gemm node 'gm': an operand of shape \[2, 3\] does not broadcast "
         r"to \[2, 2\]"),
        ("an unnamed node without outputs",
         [N("Relu", ["x"], ["r"], name="relu"), N("Gather", ["r", "i"], [])],
         [("x", [2])], [("r", [2])], [("i", np.array([0], np.float32))],
         r"Gather node '#1': indices are FLOAT"),
    ]


@pytest.mark.parametrize("case", _leak_cases(), ids=lambda c: c[0])
def test_malformed_node_is_refused_naming_node_and_op(case):
    from tests.conformance._onnx_models import model
    _, nodes, ins, outs, inits, match = case
    with pytest.raises(atc.ConversionError, match=match):
        atc.convert(model(nodes, ins, outs, inits))


def test_shapes_a_davinci_model_cannot_have_are_refused():
    """A file the loader would refuse is never written: inputs and outputs
    of more than 8 dimensions or a dimension past 2^31."""
    import numpy as np
    from onnx import helper
    from tests.conformance._onnx_models import model
    relu = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    m = model(relu, [("x", [1] * 9)], [("y", [1] * 9)])
    assert _refusal(m).startswith("input 'x' has 9 dimensions")
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
              [("x", [2])], [("y", [1] * 8 + [2])],
              [("s", np.array([1] * 8 + [2], np.int64))])
    assert _refusal(m).startswith("graph output 'y' has 9 dimensions")
    m = model(relu, [("x", [1 << 32])], [("y", [1 << 32])])
    assert "dimensions are at most 2147483648" in _refusal(m)


def test_input_without_a_shape_needs_input_shape():
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g)
    assert "input 'x' has no shape" in _refusal(m)
    om = omfile.parse(atc.convert(m, input_shape="x:2,3"))
    assert om.inputs[0].dims == [2, 3] and om.outputs[0].dims == [2, 3]


def test_a_model_the_loader_refuses_is_never_returned(monkeypatch):
    """Whatever limit of the loader the converter does not check itself
    (here a META section smaller than the model's) stops the conversion."""
    m, _ = mlp(seed=3)
    monkeypatch.setattr(omfile, "MAX_META", 16)
    with pytest.raises(atc.ConversionError, match="loader would refuse"):
        atc.convert(m, input_shape="x:1,64")
