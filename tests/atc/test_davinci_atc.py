# SPDX-License-Identifier: GPL-2.0
"""davinci-atc on its own, no device: the command line and the error for
an op it cannot convert. (Models it makes run in tests/conformance on
every backend.)"""

import os
import subprocess
import sys

import pytest

onnx = pytest.importorskip("onnx")

from davinci import atc, omfile  # noqa: E402

from tests.conformance._onnx_models import mlp  # noqa: E402

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


def _atc(*args):
    env = dict(os.environ)
    us = os.path.join(REPO, "userspace")
    env["PYTHONPATH"] = us + (os.pathsep + env["PYTHONPATH"]
                              if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "davinci.atc", *args],
                          env=env, capture_output=True, text=True,
                          timeout=120)


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


def test_dropout_mask_output_and_training_mode_are_refused():
    import numpy as np
    from onnx import helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Dropout", ["x"], ["y", "z"], name="drop")],
              [("x", [2, 3])], [("y", [2, 3]), ("z", [2, 3])])
    msg = _refusal(m)
    assert "'z'" in msg and "'mask' output of Dropout node 'drop'" in msg
    assert "BOOL" in msg
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y"],
                                name="drop")],
              [("x", [2, 3])], [("y", [2, 3])],
              [("r", np.array(0.5, np.float32)), ("t", np.array(True))])
    assert "Dropout node 'drop': training_mode is true" in _refusal(m)


_UNSUPPORTED = ["INT8", "UINT8", "INT16", "UINT64", "FLOAT8E4M3FN",
                "FLOAT8E5M2", "INT4"]


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
    src = tmp_path / "int8.onnx"
    onnx.save(_typed_graph("INT8", "input"), str(src))
    p = _atc("--model", str(src), "--framework=5",
             "--output", str(tmp_path / "int8"))
    assert p.returncode == 1
    assert "input 'x' is INT8 (read by Add node 'add0')" in p.stderr
    assert not (tmp_path / "int8.om").exists()


def test_unread_initializer_of_an_unsupported_type_is_ignored():
    from onnx import TensorProto, helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [("x", [2])], [("y", [2])])
    m.graph.initializer.append(
        helper.make_tensor("unused", TensorProto.INT8, [2], [1, 2]))
    omfile.parse(atc.convert(m))


@pytest.mark.parametrize("to", ["INT8", "FLOAT8E4M3FN", "INT64"])
def test_cast_to_an_unsupported_type_is_named(to):
    from onnx import TensorProto, helper
    from tests.conformance._onnx_models import model
    m = model([helper.make_node("Cast", ["x"], ["y"], name="c0",
                                to=getattr(TensorProto, to))],
              [("x", [2])], [("y", [2])])
    msg = _refusal(m)
    assert msg.startswith("Cast node 'c0': cast") and " %s" % to in msg, msg
