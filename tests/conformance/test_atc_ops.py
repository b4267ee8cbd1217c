# SPDX-License-Identifier: GPL-2.0
"""Each ONNX op davinci-atc converts, run as an offline model on the device
and compared with numpy: broadcasting, Gemm's attributes, reductions,
casts, layout ops, host-folded constants."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from davinci import atc  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402

R = np.random.default_rng(0)


def _f(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _run(dev, m, *xs, rtol=1e-6, **kw):
    mod = Model(dev, atc.convert(m, **kw))
    try:
        return mod.run(list(xs))
    finally:
        mod.unload()


def _node(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower() + "0",
                            **attrs)


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract),
                                   ("Mul", np.multiply), ("Div", np.divide),
                                   ("Max", np.maximum), ("Min", np.minimum)])
@pytest.mark.parametrize("bshape", [(3, 4, 5), (5,), (1, 4, 5), (3, 1, 1),
                                    (3, 4, 1), ()])
def test_binary_with_broadcast(dev, op, fn, bshape):
    a, b = _f(3, 4, 5), _f(*bshape) + (3.0 if op == "Div" else 0.0)
    m = model([_node(op, ["a", "b"])], [("a", [3, 4, 5]), ("b", list(bshape))],
              [("y", [3, 4, 5])])
    y, = _run(dev, m, a, b)
    np.testing.assert_allclose(y, fn(a, b), rtol=1e-6)


def test_binary_with_constant_operand(dev):
    a, c = _f(2, 6), _f(6)
    m = model([_node("Mul", ["a", "c"])], [("a", [2, 6])], [("y", [2, 6])],
              [("c", c)])
    y, = _run(dev, m, a)
    np.testing.assert_array_equal(y, a * c)


def test_unsupported_broadcast_is_named(dev):
    m = model([_node("Add", ["a", "b"])], [("a", [2, 3, 4]), ("b", [3, 1])],
              [("y", [2, 3, 4])])
    with pytest.raises(atc.ConversionError, match="add0.*broadcast"):
        atc.convert(m)


@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, 2.0)])
@pytest.mark.parametrize("cshape", [(6,), (4, 6), (4, 1), None])
def test_gemm(dev, ta, tb, alpha, beta, cshape):
    a = _f(*((5, 4) if ta else (4, 5)))
    b = _f(*((6, 5) if tb else (5, 6)))
    ins = ["a", "b"] + (["c"] if cshape else [])
    inits = [("b", b)] + ([("c", _f(*cshape))] if cshape else [])
    m = model([_node("Gemm", ins, alpha=alpha, beta=beta, transA=ta,
                     transB=tb)], [("a", list(a.shape))], [("y", [4, 6])],
              inits)
    y, = _run(dev, m, a)
    want = alpha * ((a.T if ta else a) @ (b.T if tb else b))
    if cshape:
        want = want + beta * dict(inits)["c"]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_gemm_with_computed_operands(dev):
    a, b, c = _f(3, 4), _f(4, 2), _f(2)
    m = model([_node("Gemm", ["a", "b", "c"], alpha=2.0, beta=0.5)],
              [("a", [3, 4]), ("b", [4, 2]), ("c", [2])], [("y", [3, 2])])
    y, = _run(dev, m, a, b, c)
    np.testing.assert_allclose(y, 2 * (a @ b) + 0.5 * c, rtol=1e-5,
                               atol=1e-6)


def test_matmul_nd_and_unary_ops(dev):
    x, w = _f(2, 3, 4), _f(4, 5)
    m = model([_node("MatMul", ["x", "w"], ["h"]),
               _node("Exp", ["h"], ["e"]), _node("Relu", ["e"], ["y"])],
              [("x", [2, 3, 4])], [("y", [2, 3, 5])], [("w", w)])
    y, = _run(dev, m, x)
    np.testing.assert_allclose(y, np.exp(x @ w), rtol=2e-6)


@pytest.mark.parametrize("opset,axis,shape", [(13, -1, (3, 5)),
                                              (11, 1, (2, 3, 4)),
                                              (13, 2, (2, 3, 4))])
def test_softmax(dev, opset, axis, shape):
    x = _f(*shape)
    m = model([_node("Softmax", ["x"], axis=axis)], [("x", list(shape))],
              [("y", list(shape))], opset=opset)
    y, = _run(dev, m, x)
    rows = x.reshape(int(np.prod(shape[:axis])), -1)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, (e / e.sum(1, keepdims=True)).reshape(
        shape), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("axes,keep", [([2], 1), ([-1], 0), ([1, 2], 1),
                                       (None, 0)])
def test_reduce_sum(dev, axes, keep):
    x = _f(2, 3, 4)
    ins, inits = ["x"], []
    if axes is not None:
        ins.append("axes")
        inits.append(("axes", np.array(axes, np.int64)))
    want = x.sum(axis=tuple(axes) if axes else None, keepdims=bool(keep))
    m = model([_node("ReduceSum", ins, keepdims=keep)], [("x", [2, 3, 4])],
              [("y", list(want.shape))], inits)
    y, = _run(dev, m, x)
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-5)


def test_reduce_sum_over_leading_axis_is_refused(dev):
    m = model([_node("ReduceSum", ["x", "axes"])], [("x", [2, 3])],
              [("y", [3])], [("axes", np.array([0], np.int64))])
    with pytest.raises(atc.ConversionError, match="reducesum0"):
        atc.convert(m)


def test_cast_roundtrip(dev):
    x = _f(3, 4)
    m = model([_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
               _node("Relu", ["h"], ["r"]),
               _node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)],
              [("x", [3, 4])], [("y", [3, 4])])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(
        y, np.maximum(x.astype(np.float16), 0).astype(np.float32))


def test_layout_ops_and_constants(dev):
    x = _f(2, 3, 4)
    shape = numpy_helper.from_array(np.array([6, 4], np.int64))
    m = model([helper.make_node("Constant", [], ["s"], value=shape,
                                name="const0"),
               _node("Reshape", ["x", "s"], ["r"]),
               _node("Transpose", ["r"], ["t"], perm=[1, 0]),
               _node("Unsqueeze", ["t", "ax"], ["u"]),
               _node("Flatten", ["u"], ["f"], axis=2),
               _node("Identity", ["f"], ["y"])],
              [("x", [2, 3, 4])], [("y", [4, 6])],
              [("ax", np.array([0], np.int64))])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(y, x.reshape(6, 4).T)


def test_shape_arithmetic_is_folded(dev):
    """x.view(x.size(0), -1) as the legacy exporter writes it."""
    x = _f(3, 2, 4)
    m = model([_node("Shape", ["x"], ["s"]),
               _node("Gather", ["s", "i0"], ["n"], axis=0),
               _node("Unsqueeze", ["n", "ax"], ["n1"]),
               _node("Concat", ["n1", "minus1"], ["shape"], axis=0),
               _node("Reshape", ["x", "shape"], ["r"]),
               _node("Relu", ["r"], ["y"])],
              [("x", [3, 2, 4])], [("y", [3, 8])],
              [("i0", np.array(0, np.int64)), ("ax", np.array([0], np.int64)),
               ("minus1", np.array([-1], np.int64))])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(y, np.maximum(x.reshape(3, 8), 0))


def test_output_that_is_an_input_is_copied(dev):
    x = _f(4)
    m = model([_node("Identity", ["x"])], [("x", [4])], [("y", [4])])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(y, x)
