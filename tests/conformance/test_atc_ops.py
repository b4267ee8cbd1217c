# SPDX-License-Identifier: GPL-2.0
"""Each ONNX op davinci-atc converts, run as an offline model on the device
and compared with numpy: broadcasting, Gemm's attributes, reductions,
casts, layout ops, host-folded constants."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from davinci import atc, omfile, schema  # noqa: E402
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


@pytest.mark.parametrize("op,fn", [("Max", np.maximum), ("Min", np.minimum)])
@pytest.mark.parametrize("shapes", [[(3, 4)], [(3, 4)] * 3, [(3, 4)] * 4,
                                    [(2, 3, 4), (4,), (2, 1, 1)],
                                    [(4,), (3, 1), (1, 4)]])
def test_variadic_max_and_min(dev, op, fn, shapes):
    """ONNX's Max and Min take 1..N inputs, broadcasting together."""
    xs = [_f(*s) for s in shapes]
    names = ["x%d" % i for i in range(len(xs))]
    want = xs[0]
    for x in xs[1:]:
        want = fn(want, x)
    m = model([_node(op, names)], [(n, list(x.shape)) for n, x in
                                   zip(names, xs)], [("y", list(want.shape))])
    y, = _run(dev, m, *xs)
    np.testing.assert_array_equal(y, want)


def test_variadic_max_with_a_constant(dev):
    a, b, c = _f(2, 5), _f(2, 5), _f(5)
    m = model([_node("Max", ["a", "c", "b"])], [("a", [2, 5]), ("b", [2, 5])],
              [("y", [2, 5])], [("c", c)])
    y, = _run(dev, m, a, b)
    np.testing.assert_array_equal(y, np.maximum(np.maximum(a, c), b))


def test_variadic_broadcast_both_ways_is_one_strided_task(dev):
    """An operand repeated along both leading and trailing dims (no
    block or element copies repeat it) is read by a stride-0 walk."""
    a, b, c = _f(2, 3, 4), _f(2, 3, 4), _special(3, 1)
    m = model([_node("Min", ["a", "b", "c"])],
              [("a", [2, 3, 4]), ("b", [2, 3, 4]), ("c", [3, 1])],
              [("y", [2, 3, 4])])
    y, = _run(dev, m, a, b, c)
    _same_bits(y, np.minimum(np.minimum(a, b), c))


def test_binary_with_constant_operand(dev):
    a, c = _f(2, 6), _f(6)
    m = model([_node("Mul", ["a", "c"])], [("a", [2, 6])], [("y", [2, 6])],
              [("c", c)])
    y, = _run(dev, m, a)
    np.testing.assert_array_equal(y, a * c)


def test_shapes_that_do_not_broadcast_are_named(dev):
    m = model([_node("Add", ["a", "b"])], [("a", [2, 3, 4]), ("b", [3, 2])],
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


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_softmax_over_an_axis_not_last(dev, op, axis):
    shape = (2, 3, 4)
    x = _f(*shape) * 3
    m = model([_node(op, ["x"], axis=axis)], [("x", list(shape))],
              [("y", list(shape))], opset=13)
    y, = _run(dev, m, x)
    z = x - x.max(axis=axis, keepdims=True)
    log = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
    want = log if op == "LogSoftmax" else np.exp(log)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


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


def test_reduce_sum_of_a_scalar_is_the_scalar(dev):
    x = np.array(-2.5, np.float32)
    m = model([_node("ReduceSum", ["x"])], [("x", [])], [("y", [])])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(y, x)


def test_reduce_sum_over_leading_axis(dev):
    """REDUCE_SUM sums trailing axes: axis 0 is moved last first."""
    m = model([_node("ReduceSum", ["x", "axes"], keepdims=0)],
              [("x", [2, 3])], [("y", [3])],
              [("axes", np.array([0], np.int64))])
    x = _f(2, 3)
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([x])
    assert np.array_equal(y, x[0] + x[1])


def test_cast_roundtrip(dev):
    x = _f(3, 4)
    m = model([_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
               _node("Relu", ["h"], ["r"]),
               _node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)],
              [("x", [3, 4])], [("y", [3, 4])])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(
        y, np.maximum(x.astype(np.float16), 0).astype(np.float32))


def test_bfloat16_constants(dev):
    """A FLOAT constant cast to BFLOAT16 and a BFLOAT16 initializer reach
    the device as bfloat16 (rounded to nearest even), not as float32
    bytes; a constant cast to BFLOAT16 and back is rounded too."""
    from davinci.ops import bfloat16_to_float32, float32_to_bfloat16
    x, k, w = _f(2, 3), _f(3), _f(3)

    def bf(a):
        return bfloat16_to_float32(float32_to_bfloat16(a))
    BF = TensorProto.BFLOAT16
    w_init = helper.make_tensor("w", BF, [3], w.tolist())
    m = model([_node("Cast", ["x"], ["xb"], to=BF),
               helper.make_node("Cast", ["k"], ["kb"], name="castk", to=BF),
               _node("Add", ["xb", "kb"], ["s"]),
               _node("Mul", ["s", "w"], ["p"]),
               helper.make_node("Cast", ["p"], ["y"], name="casty",
                                to=TensorProto.FLOAT),
               helper.make_node("Cast", ["kb"], ["k2"], name="castk2",
                                to=TensorProto.FLOAT)],
              [("x", [2, 3])], [("y", [2, 3]), ("k2", [3])], [("k", k)])
    m.graph.initializer.append(w_init)
    y, k2 = _run(dev, m, x)
    np.testing.assert_array_equal(k2, bf(k))
    np.testing.assert_array_equal(y, bf(bf(bf(x) + bf(k)) * bf(w)))


def _special(*shape):
    """Small integers (sums exact in any order) with inf, -inf, NaN, +0
    and -0 among them."""
    x = R.integers(-4, 5, shape).astype(np.float32).reshape(-1)
    special = [-0.0, np.inf, np.nan, -np.inf, 0.0]
    x[:min(5, x.size)] = special[:min(5, x.size)]
    R.shuffle(x)
    return x.reshape(shape)


def _same_bits(y, want):
    """Equal bit for bit, NaN for NaN (the device's NaN is canonical)."""
    y, want = np.asarray(y, np.float32), np.asarray(want, np.float32)
    assert y.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(y), nan)
    np.testing.assert_array_equal(y[~nan].view(np.uint32),
                                  want[~nan].view(np.uint32))


def test_layout_ops_and_constants(dev):
    x = _special(2, 3, 4)
    shape = numpy_helper.from_array(np.array([6, 1, 4], np.int64))
    m = model([helper.make_node("Constant", [], ["s"], value=shape,
                                name="const0"),
               _node("Reshape", ["x", "s"], ["r"]),
               _node("Transpose", ["r"], ["t"], perm=[1, 0, 2]),
               _node("Unsqueeze", ["t", "ax"], ["u"]),
               _node("Flatten", ["u"], ["f"], axis=2),
               _node("Identity", ["f"], ["y"])],
              [("x", [2, 3, 4])], [("y", [1, 24])],
              [("ax", np.array([0], np.int64))])
    y, = _run(dev, m, x)
    _same_bits(y, x.reshape(6, 1, 4).transpose(1, 0, 2).reshape(1, 24))


@pytest.mark.parametrize("perm,shape", [([0, 1], (3, 4)),
                                        ([1, 0, 2], (1, 3, 4)),
                                        ([2, 0, 1], (3, 4, 1)),
                                        ([0, 2, 1, 3], (2, 1, 3, 1))])
def test_transpose_that_is_a_layout_no_op_is_exact(dev, perm, shape):
    x = _special(*shape)
    want = x.transpose(perm)
    m = model([_node("Transpose", ["x"], perm=perm)], [("x", list(shape))],
              [("y", list(want.shape))])
    y, = _run(dev, m, x)
    _same_bits(y, want)


def test_transpose_folds_into_matmul_and_gemm(dev):
    """A 2-D transpose read by MatMul or Gemm is the op's transpose flag:
    inf and NaN reach exactly the elements numpy gives them."""
    x, w, z = _special(5, 4), _special(5, 3), _special(3, 4)
    m = model([_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
               helper.make_node("MatMul", ["xt", "w"], ["y1"], name="mm"),
               helper.make_node("Transpose", ["z"], ["zt"], name="tz"),
               helper.make_node("MatMul", ["x", "zt"], ["y2"], name="mm2"),
               helper.make_node("Gemm", ["xt", "zt"], ["y3"], name="gemm",
                                transA=1, alpha=-1.0),
               helper.make_node("Unsqueeze", ["xt", "ax"], ["xu"],
                                name="unsq"),
               helper.make_node("MatMul", ["xu", "w"], ["y4"], name="mm4")],
              [("x", [5, 4]), ("w", [5, 3]), ("z", [3, 4])],
              [("y1", [4, 3]), ("y2", [5, 3]), ("y3", [5, 3]),
               ("y4", [1, 4, 3])], [("ax", np.array([0], np.int64))])
    y1, y2, y3, y4 = _run(dev, m, x, w, z)
    with np.errstate(invalid="ignore"):
        _check_folded(x, w, z, y1, y2, y3, y4)


def _check_folded(x, w, z, y1, y2, y3, y4):
    _same_bits(y1, x.T @ w)
    _same_bits(y2, x @ z.T)
    _same_bits(y3, np.float32(-1.0) * (x @ z.T))    # transA of x.T
    _same_bits(y4, (x.T @ w)[None])


@pytest.mark.parametrize("after,outs", [
    ("Abs", [("y", [4, 6])]),
    (None, [("t", [4, 6])]),
    ("Flatten", [("y", [1, 24])]),
    ("Concat", [("y", [4, 12])]),
], ids=["abs", "graph output", "reshaped", "concat"])
def test_transpose_read_elsewhere_is_copied_dense(dev, after, outs):
    """A 2-D transpose read by an op without a transpose flag (a ViT's
    patches into a Concat) is copied dense by one strided IDENTITY, once
    for all its readers: every bit through; a MatMul reading it too still
    takes its flag."""
    nodes = [_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             helper.make_node("MatMul", ["t", "w"], ["z"], name="mm")]
    if after == "Flatten":
        nodes.append(_node(after, ["t"], axis=0))
    elif after == "Concat":
        nodes.append(_node(after, ["t", "t"], axis=1))
    elif after:
        nodes.append(_node(after, ["t"]))
    m = model(nodes, [("x", [6, 4]), ("w", [6, 3])],
              outs + [("z", [4, 3])])
    ops = [schema.by_opcode(o.opcode).name
           for o in omfile.parse(atc.convert(m)).ops]
    # one dense copy (and a Concat's of its two pieces)
    assert ops.count("IDENTITY") == (3 if after == "Concat" else 1)
    assert "MATMUL" in ops
    x, w = _special(6, 4), _special(6, 3)
    y, z = _run(dev, m, x, w)
    want = {"Abs": np.abs(x.T), None: x.T,
            "Flatten": x.T.reshape(1, 24),
            "Concat": np.concatenate([x.T, x.T], 1)}[after]
    _same_bits(y, want)
    with np.errstate(invalid="ignore"):
        _same_bits(z, x.T @ w)


def test_transpose_of_a_scalar_constant(dev):
    x = _f(2)
    m = model([_node("Transpose", ["k"], ["t"]),
               helper.make_node("Transpose", ["t"], ["u"], name="t2"),
               _node("Add", ["x", "u"])],
              [("x", [2])], [("y", [2])], [("k", np.array(1.5, np.float32))])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(y, x + np.float32(1.5))


def test_transpose_of_three_dimensions_moves_every_bit(dev):
    """A transpose moving data in three dimensions is one strided IDENTITY
    of the permuted view: the bytes moved, NaN, inf and -0 included."""
    x = _special(2, 3, 4)
    m = model([_node("Transpose", ["x"], perm=[2, 0, 1])], [("x", [2, 3, 4])],
              [("y", [4, 2, 3])])
    y, = _run_new(dev, m, x)
    _same_bits(y, x.transpose(2, 0, 1))


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract),
                                   ("Mul", np.multiply), ("Div", np.divide)])
@pytest.mark.parametrize("bshape", [(5,), (1, 4, 5), (3, 1, 1), (3, 4, 1),
                                    ()])
def test_broadcast_of_a_computed_operand_is_exact(dev, op, fn, bshape):
    """Every bit of a broadcast operand comes through: -0 stays -0 (x / -0
    is -inf), NaN and inf reach only their own row or block."""
    a, b = _special(3, 4, 5), _special(*bshape)
    if not bshape:
        b = np.array(-0.0, np.float32)
    m = model([_node(op, ["a", "b"])], [("a", [3, 4, 5]), ("b", list(bshape))],
              [("y", [3, 4, 5])])
    y, = _run(dev, m, a, b)
    with np.errstate(all="ignore"):
        _same_bits(y, fn(a, b))


@pytest.mark.parametrize("ashape,bshape", [
    ((atc.lower.MAX_BROADCAST_OPS, 2), (atc.lower.MAX_BROADCAST_OPS, 1)),
    ((2, 3, 4), (3, 1)), ((2, 3, 1, 4), (2, 3, 4, 1))],
    ids=["too many copies", "both ways", "both operands"])
def test_broadcast_copies_cannot_do_is_one_strided_task(dev, ashape, bshape):
    """Where MEMCPYs would not repeat an operand (too many of them, or
    dims repeated before and after it), one task reads both by stride-0
    walks: every bit through as well (rotary embeddings' cos * x)."""
    a, b = _special(*ashape), _special(*bshape)
    m = model([_node("Add", ["a", "b"])], [("a", list(ashape)),
                                          ("b", list(bshape))],
              [("y", None)])
    om = omfile.parse(atc.convert(m))
    assert [schema.by_opcode(o.opcode).name for o in om.ops] == ["ADD"]
    y, = _run(dev, m, a, b)
    with np.errstate(all="ignore"):
        _same_bits(y, a + b)


@pytest.mark.parametrize("alpha", [-1.0, 0.5])
def test_gemm_alpha_keeps_signed_zeros(dev, alpha):
    """alpha * (A @ B) with B computed (not folded into a weight): a +0
    product scaled by -1 is -0, as numpy gives."""
    a = np.abs(_special(4, 5))
    a[1] = 0.0                      # a row of +0 products: A @ B is +0
    b = np.abs(_special(5, 3))
    m = model([_node("Gemm", ["a", "b"], alpha=alpha)],
              [("a", [4, 5]), ("b", [5, 3])], [("y", [4, 3])])
    y, = _run(dev, m, a, b)
    with np.errstate(all="ignore"):
        _same_bits(y, np.float32(alpha) * (a @ b))


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


def test_dropout_is_identity_and_its_mask_all_true(dev):
    """Inference Dropout (ratio and training_mode false given as inputs):
    the output is the input, the mask, unused or cast to FLOAT, all true."""
    x = _f(3, 4)
    inits = [("ratio", np.array(0.3, np.float32)),
             ("train", np.array(False))]
    m = model([_node("Dropout", ["x", "ratio", "train"], ["d", "unused"]),
               helper.make_node("Dropout", ["d"], ["y", "mask"],
                                name="dropout1"),
               helper.make_node("Cast", ["mask"], ["m"], name="cast0",
                                to=TensorProto.FLOAT)],
              [("x", [3, 4])], [("y", [3, 4]), ("m", [3, 4])], inits)
    y, mask = _run(dev, m, x)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(mask, np.ones((3, 4), np.float32))


def test_output_that_is_an_input_is_copied(dev):
    x = _f(4)
    m = model([_node("Identity", ["x"])], [("x", [4])], [("y", [4])])
    y, = _run(dev, m, x)
    np.testing.assert_array_equal(y, x)


def _constant_graph():
    """No inputs: a Constant, and a Relu of it, as the outputs."""
    k = np.array([-1.5, 0.0, 2.0, np.inf], np.float32)
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["k"], name="k0",
                          value=numpy_helper.from_array(k)),
         _node("Relu", ["k"])], "consts", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, [4])])
    return helper.make_model(g), k


def test_graph_without_inputs_runs(dev):
    m, k = _constant_graph()
    y, kk = _run(dev, m)
    np.testing.assert_array_equal(y, np.maximum(k, 0))
    np.testing.assert_array_equal(kk, k)


def _run_new(dev, m, *xs):
    """The converted model's outputs, bit for bit (no tolerance)."""
    mod = Model(dev, atc.convert(m))
    try:
        return mod.run(list(xs))
    finally:
        mod.unload()


def test_sqrt(dev):
    """Correctly rounded, as numpy: -0 stays -0, a negative is NaN."""
    x = _special(3, 5)
    x[0, :3] = [2.0, -1.0, 1e-30]
    m = model([_node("Sqrt", ["x"])], [("x", [3, 5])], [("y", [3, 5])])
    y, = _run_new(dev, m, x)
    with np.errstate(invalid="ignore"):
        _same_bits(y, np.sqrt(x))


def test_abs_and_leaky_relu(dev):
    """np.abs (+0 for -0) and ONNX's LeakyRelu (x for x >= 0, -0 and NaN
    kept), bit for bit."""
    x = _special(3, 5)
    y, = _run_new(dev, model([_node("Abs", ["x"])], [("x", [3, 5])],
                             [("y", [3, 5])]), x)
    _same_bits(y, np.abs(x))
    for alpha in (None, 0.25):
        kw = {} if alpha is None else {"alpha": alpha}
        a = np.float32(0.01 if alpha is None else alpha)
        y, = _run_new(dev, model([_node("LeakyRelu", ["x"], **kw)],
                                 [("x", [3, 5])], [("y", [3, 5])]), x)
        with np.errstate(invalid="ignore"):
            _same_bits(y, np.where(x >= 0, x, a * x).astype(np.float32))


def _log_softmax_rows(rows):
    s = rows - rows.max(axis=1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("opset,axis,shape", [(13, None, (3, 5)),
                                              (13, 2, (2, 3, 4)),
                                              (13, 1, (2, 5, 1)),
                                              (11, None, (2, 3, 4)),
                                              (11, 2, (2, 3, 4)),
                                              (11, 0, (2, 3))])
def test_log_softmax(dev, opset, axis, shape):
    """From opset 13 over ``axis`` (default -1) alone; before it over the
    axes from ``axis`` (default 1) on, flattened."""
    x = _f(*shape) * 4
    attrs = {} if axis is None else {"axis": axis}
    m = model([_node("LogSoftmax", ["x"], **attrs)], [("x", list(shape))],
              [("y", list(shape))], opset=opset)
    y, = _run_new(dev, m, x)
    a = (len(shape) - 1 if opset >= 13 else 1) if axis is None else axis
    want = _log_softmax_rows(x.reshape(int(np.prod(shape[:a])), -1))
    np.testing.assert_allclose(y, want.reshape(shape), rtol=1e-5, atol=1e-6)


def _ms_model(nodes, inputs, outputs):
    m = model(nodes, inputs, outputs)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return m


@pytest.mark.parametrize("shape", [(4, 5), (7,)])
def test_relu_grad(dev, shape):
    """onnxruntime's ReluGrad: dX = dY where X > 0, else +0; a NaN X is
    not > 0 either (RELU_GRAD alone would let dY through)."""
    dy, x = _special(*shape), _special(*shape)
    x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    dy.reshape(-1)[:3] = [5.0, 6.0, np.nan]
    m = _ms_model([helper.make_node("ReluGrad", ["dy", "x"], ["dx"],
                                    name="relugrad0", domain="com.microsoft")],
                  [("dy", list(shape)), ("x", list(shape))],
                  [("dx", list(shape))])
    dx, = _run_new(dev, m, dy, x)
    with np.errstate(invalid="ignore"):
        _same_bits(dx, np.where(x > 0, dy, np.float32(0)))


def test_relu_grad_does_not_broadcast(dev):
    m = _ms_model([helper.make_node("ReluGrad", ["dy", "x"], ["dx"],
                                    name="relugrad0", domain="com.microsoft")],
                  [("dy", [2, 3]), ("x", [3])], [("dx", [2, 3])])
    with pytest.raises(atc.ConversionError,
                       match=r"relugrad0': dY \[2, 3\] and X \[3\]: ReluGrad "
                             "takes tensors of one shape"):
        atc.convert(m)


_T = {np.dtype(np.float32): TensorProto.FLOAT,
      np.dtype(np.int64): TensorProto.INT64,
      np.dtype(np.int32): TensorProto.INT32,
      np.dtype(np.int8): TensorProto.INT8,
      np.dtype(np.uint8): TensorProto.UINT8,
      np.dtype(np.bool_): TensorProto.BOOL}


def _typed(nodes, ins, outs):
    """A model of ``ins`` ((name, array)) and ``outs`` ((name, shape,
    numpy dtype)), typed as the arrays are."""
    return model(nodes, [(n, list(a.shape)) for n, a in ins],
                 [(n, list(s)) for n, s, _ in outs],
                 types={**{n: _T[a.dtype] for n, a in ins},
                        **{n: _T[np.dtype(d)] for n, _, d in outs}})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("op,fn", [("Equal", np.equal), ("Less", np.less),
                                   ("Greater", np.greater),
                                   ("LessOrEqual", np.less_equal),
                                   ("GreaterOrEqual", np.greater_equal)])
def test_comparisons_give_bool_with_broadcast(dev, op, fn, dtype):
    a = (R.standard_normal((3, 1, 5)) * 4).astype(dtype)
    b = (R.standard_normal((4, 1)) * 4).astype(dtype)
    if dtype == np.float32:
        a[0, 0, :2] = np.nan          # a NaN compares false
        b[1, 0] = a[1, 0, 3]          # and equal values meet
    m = _typed([_node(op, ["a", "b"])], [("a", a), ("b", b)],
               [("y", (3, 4, 5), np.bool_)])
    got, = _run(dev, m, a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, fn(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_where_broadcasts_its_three_inputs(dev, dtype):
    cond = R.standard_normal((2, 1, 4)) > 0
    x = (R.standard_normal((3, 1)) * 9).astype(dtype)
    y = (R.standard_normal((4,)) * 9).astype(dtype)
    m = _typed([_node("Where", ["c", "x", "y"])],
               [("c", cond), ("x", x), ("y", y)],
               [("y", (2, 3, 4), dtype)])
    got, = _run(dev, m, cond, x, y)
    np.testing.assert_array_equal(got, np.where(cond, x, y))


def test_a_mask_from_a_comparison_selects(dev):
    """relu as Where(Less(x, 0), 0, x): CMP's bool result feeds SELECT in
    one model, and int64 flows through it unchanged."""
    x = (R.standard_normal((5, 6)) * 1e12).astype(np.int64)
    zero = np.zeros((), np.int64)
    m = model([_node("Less", ["x", "z"], ["neg"]),
               _node("Where", ["neg", "z", "x"])],
              [("x", [5, 6])], [("y", [5, 6])], [("z", zero)],
              types={"x": TensorProto.INT64, "y": TensorProto.INT64})
    got, = _run(dev, m, x)
    np.testing.assert_array_equal(got, np.maximum(x, 0))


@pytest.mark.parametrize("ashape,bshape", [
    ((4,), (4,)), ((4,), (4, 3)), ((2, 4), (4,)), ((3, 2, 4), (4,)),
    ((2, 3, 4), (2, 4, 5)),               # attention's Q @ K^T
    ((2, 1, 3, 4), (1, 3, 4, 2)),         # batch dims broadcast both ways
    ((3, 4), (2, 4, 5)),                  # a 2-D A against a batch
])
@pytest.mark.parametrize("b_const", [False, True], ids=["input", "weight"])
def test_matmul_of_vectors_and_batches_is_numpys(dev, ashape, bshape,
                                                 b_const):
    a, b = _f(*ashape), _f(*bshape)
    want = np.matmul(a, b)
    if b_const:
        m = model([_node("MatMul", ["a", "b"])], [("a", list(ashape))],
                  [("y", list(want.shape))], [("b", b)])
        got, = _run(dev, m, a)
    else:
        m = model([_node("MatMul", ["a", "b"])],
                  [("a", list(ashape)), ("b", list(bshape))],
                  [("y", list(want.shape))])
        got, = _run(dev, m, a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis,dshape,ishape,itype", [
    (0, (7, 4), (2, 3), np.int64),        # an embedding lookup
    (1, (2, 5, 3), (4,), np.int32),       # a middle axis: batches of rows
    (2, (2, 3, 6), (2, 2), np.int64),     # the last: rows of one element
])
@pytest.mark.parametrize("data_const", [True, False], ids=["weight",
                                                           "input"])
def test_gather_of_computed_indices_is_one_index_select(
        dev, axis, dshape, ishape, itype, data_const):
    data = _f(*dshape)
    ids = R.integers(0, dshape[axis], ishape).astype(itype)
    want = np.take(data, ids, axis=axis)
    ins = [("i", ids)] + ([] if data_const else [("d", data)])
    m = _typed([_node("Gather", ["d", "i"], axis=axis)], ins,
               [("y", want.shape, np.float32)])
    if data_const:
        m.graph.initializer.append(numpy_helper.from_array(data, "d"))
    feeds = [a for _, a in ins]
    got, = _run(dev, m, *feeds)
    np.testing.assert_array_equal(got, want)


def test_gather_of_an_index_out_of_range_fails_the_run(dev):
    """A computed index counts from the end when negative, as ONNX's; one
    outside [-n, n) fails the task, nothing written: the run raises, it
    does not return another row."""
    from davinci.errors import TaskFailedError
    data = _f(5, 3)
    m = _typed([_node("Gather", ["d", "i"])], [("i", np.zeros(2, np.int64))],
               [("y", (2, 3), np.float32)])
    m.graph.initializer.append(numpy_helper.from_array(data, "d"))
    with Model(dev, atc.convert(m)) as mod:
        for ids in ([4, 1], [-1, -5]):
            np.testing.assert_array_equal(mod.run([np.array(ids)])[0],
                                          data[ids])
        for ids in ([1, 5], [-6, 0]):
            with pytest.raises(TaskFailedError):
                mod.run([np.array(ids)])


def _layer_norm(x, s, b, axis, eps):
    x = x.astype(np.float64)
    ax = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=ax, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=ax, keepdims=True) + eps)
    y = (x - mean) * rstd * s
    return (y if b is None else y + b), mean, rstd


@pytest.mark.parametrize("axis,bias", [(-1, True), (1, False), (0, True)])
def test_layer_normalization_and_its_statistics(dev, axis, bias):
    shape = (2, 3, 5)
    x = _f(*shape) * 4 + 1
    norm = shape[axis:]
    s, b = _f(*norm), _f(*norm)
    inits = [("s", s)] + ([("b", b)] if bias else [])
    stats = shape[:axis % 3] + (1,) * (3 - axis % 3)
    m = model([_node("LayerNormalization", ["x", "s"] + ["b"] * bias,
                     ["y", "mean", "rstd"], axis=axis, epsilon=1e-3)],
              [("x", list(shape))],
              [("y", list(shape)), ("mean", list(stats)),
               ("rstd", list(stats))], inits, opset=17)
    y, mean, rstd = _run(dev, m, x)
    want = _layer_norm(x, s, b if bias else None, axis, 1e-3)
    for g, w in zip((y, mean, rstd), want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
