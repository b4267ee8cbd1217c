# SPDX-License-Identifier: GPL-2.0
"""davinci-atc's registry (davinci.atc.lower.RULES), the one table from
ONNX op to lowering: what each registration says it emits is what a model
of it converts to, every compute op of the schema is reached from it or the
schema says why not, the README lists its ops, and the records the builder
writes are the schema's. Converter only, in-process: no device."""

import ast
import importlib.util
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from davinci import atc, omfile, schema  # noqa: E402
from davinci.atc.builder import GearBuilder, Weights  # noqa: E402
from davinci.atc.lower import MS_DOMAIN, RULES  # noqa: E402

from tests.conformance._onnx_models import model  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ATC = os.path.join(REPO, "userspace", "davinci", "atc")
I64 = np.int64


def _n(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name="n0", **attrs)


def _ms(m):
    """``m`` importing com.microsoft's opset 1 as well."""
    m.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return m


def _constant_only():
    k = helper.make_tensor("k", TensorProto.FLOAT, [2], [1.0, -2.0])
    g = helper.make_graph([_n("Constant", [], value=k)], "g", [],
                          [helper.make_tensor_value_info(
                              "y", TensorProto.FLOAT, [2])])
    return helper.make_model(g)


def _binary(op):
    # b broadcast along the leading dimension: MEMCPYs
    return [lambda: model([_n(op, ["a", "b"])], [("a", [3, 4]), ("b", [4])],
                          [("y", [3, 4])])]


def _uint64(op, out=TensorProto.UINT64):
    """``op`` of UINT64s, carried as their bits (atc.carry): an order
    plus 2^63 (ADD), Div and Mod by signed divisions of the halves."""
    return [lambda: model([_n(op, ["a", "b"])], [("a", [3]), ("b", [3])],
                          [("y", [3])], types={"a": TensorProto.UINT64,
                                               "b": TensorProto.UINT64,
                                               "y": out})]


def _unary(op):
    return [lambda: model([_n(op, ["x"])], [("x", [2, 3])], [("y", [2, 3])])]


def _rows(op, opset):
    return [lambda: model([_n(op, ["x"])], [("x", [2, 3, 4])],
                          [("y", [2, 3, 4])], opset=opset)]


#: one-node models (or a node and what makes its input or output a tensor
#: a model can have) of each registration, by (domain, op type, opsets):
#: each emits only what the registration claims, together all of it
SAMPLES = {
    **{("", op, "1+"): _binary(op) for op in ("Add", "Sub", "Mul")},
    **{("", op, "1+"): _binary(op) + _uint64(op)
       for op in ("Div", "Max", "Min")},
    **{("", op, "1+"): _unary(op) for op in ("Relu", "Exp", "Sqrt", "Abs",
                                             "LeakyRelu", "Tanh", "Sigmoid",
                                             "Erf", "Log", "Reciprocal",
                                             "Neg")},
    ("", "Gelu", "20+"): [
        lambda: model([_n("Gelu", ["x"], approximate=form)], [("x", [2, 3])],
                      [("y", [2, 3])], opset=20)
        for form in ("none", "tanh")],
    # an exponent broadcast along the leading dimension: MEMCPYs
    ("", "Pow", "1+"): _binary("Pow") + [
        # a computed integer exponent: CAST, the run failing beyond 2^24
        # (CMP, CAST, REDUCE_SUM, INDEX_SELECT)
        lambda: model([_n("Pow", ["a", "b"])], [("a", [3]), ("b", [3])],
                      [("y", [3])], types={"b": TensorProto.INT64}),
        # an integer power by squaring: DIV, SUB, MUL, Where's SELECTs
        # (IDENTITY), the magnitude by ABS and POW
        lambda: model([_n("Pow", ["a", "b"])], [("a", [3]), ("b", [1])],
                      [("y", [3])], types={n: TensorProto.INT32
                                           for n in "aby"})],
    **{("", op, "1-12"): _rows(op, 11) for op in ("Softmax", "LogSoftmax")},
    # over a middle axis: moved last and back (IDENTITY)
    **{("", op, "13+"): _rows(op, 13) + [
        lambda op=op: model([_n(op, ["x"], axis=1)], [("x", [2, 3, 4])],
                            [("y", [2, 3, 4])])]
       for op in ("Softmax", "LogSoftmax")},
    ("", "MatMul", "1+"): [
        lambda: model([_n("MatMul", ["a", "b"])], [("a", [2, 3]),
                                                   ("b", [3, 4])],
                      [("y", [2, 4])]),
        # batched: inputs copied into the workspace (MEMCPY) to be sliced
        lambda: model([_n("MatMul", ["a", "b"])], [("a", [2, 2, 3]),
                                                   ("b", [2, 3, 4])],
                      [("y", [2, 2, 4])])],
    ("", "Gemm", "1+"): [
        # alpha: AXPY by a splat -0 (MEMCPY); C broadcast (MEMCPY), added
        lambda: model([_n("Gemm", ["a", "b", "c"], alpha=2.0)],
                      [("a", [2, 3]), ("b", [3, 4]), ("c", [4])],
                      [("y", [2, 4])])],
    ("", "ReduceSum", "1+"): [
        lambda: model([_n("ReduceSum", ["x", "ax"], keepdims=0)],
                      [("x", [2, 3])], [("y", [2])],
                      [("ax", np.array([1], I64))]),
        # a leading axis moved last (IDENTITY); computed axes pinned (CMP,
        # CAST, REDUCE_SUM, INDEX_SELECT)
        lambda: model([_n("ReduceSum", ["x", "ax"])],
                      [("x", [2, 3]), ("ax", [1])], [("y", [1, 3])],
                      types={"ax": TensorProto.INT64}),
        # axes the shapes leave ambiguous: both reduced, one picked
        # (Where's IDENTITY and SELECT), the run failing for neither (MIN)
        lambda: model([_n("ReduceSum", ["x", "ax"], keepdims=0)],
                      [("x", [2, 2]), ("ax", [1])], [("y", [2])],
                      types={"ax": TensorProto.INT64})],
    ("", "ReduceMean", "1+"): [
        lambda: model([_n("ReduceMean", ["x"], axes=[-1])],
                      [("x", [2, 3])], [("y", [2, 1])]),
        lambda: model([_n("ReduceMean", ["x", "ax"], keepdims=0)],
                      [("x", [2, 2]), ("ax", [1])], [("y", [2])],
                      types={"ax": TensorProto.INT64})],
    ("", "Cast", "1+"): [
        lambda: model([_n("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
                       helper.make_node("Cast", ["h"], ["y"], name="n1",
                                        to=TensorProto.FLOAT)],
                      [("x", [4])], [("y", [4])]),
        # a computed FLOAT to DOUBLE: its bits by integer arithmetic
        # (CAST, CMP, SELECT, IDENTITY, ADD, MUL, DIV, SUB), and back
        # (MIN, MAX, 2^shift by INDEX_SELECT)
        lambda: model([_n("Cast", ["x"], ["d"], to=TensorProto.DOUBLE),
                       helper.make_node("Cast", ["d"], ["y"], name="n1",
                                        to=TensorProto.FLOAT)],
                      [("x", [4])], [("y", [4])])],
    (MS_DOMAIN, "ReluGrad", "1+"): [
        lambda: _ms(model([helper.make_node("ReluGrad", ["dy", "x"], ["y"],
                                            name="n0", domain=MS_DOMAIN)],
                          [("dy", [2, 3]), ("x", [2, 3])], [("y", [2, 3])]))],
    ("", "Reshape", "1+"): [
        lambda: model([_n("Reshape", ["x", "s"])], [("x", [2, 3])],
                      [("y", [6])], [("s", np.array([6], I64))]),
        # a computed shape pinned to the declared result: CMP, CAST,
        # REDUCE_SUM and an INDEX_SELECT that fails the run otherwise
        lambda: model([_n("Reshape", ["x", "s"])],
                      [("x", [2, 3]), ("s", [1])], [("y", [6])],
                      types={"s": TensorProto.INT64})],
    ("", "Flatten", "1+"): [
        lambda: model([_n("Flatten", ["x"])], [("x", [2, 3, 4])],
                      [("y", [2, 12])])],
    ("", "Squeeze", "1+"): [
        lambda: model([_n("Squeeze", ["x", "ax"])], [("x", [2, 1])],
                      [("y", [2])], [("ax", np.array([1], I64))]),
        lambda: model([_n("Squeeze", ["x", "ax"])],
                      [("x", [2, 1]), ("ax", [1])], [("y", [2])],
                      types={"ax": TensorProto.INT64})],
    ("", "Unsqueeze", "1+"): [
        lambda: model([_n("Unsqueeze", ["x", "ax"])], [("x", [2])],
                      [("y", [1, 2])], [("ax", np.array([0], I64))]),
        # computed axes of several equal views: any of them (MIN)
        lambda: model([_n("Unsqueeze", ["x", "ax"])],
                      [("x", [1, 2]), ("ax", [1])], [("y", [1, 1, 2])],
                      types={"ax": TensorProto.INT64})],
    ("", "Identity", "1+"): [
        lambda: model([_n("Identity", ["x"])], [("x", [2])], [("y", [2])])],
    ("", "Dropout", "1+"): [
        lambda: model([_n("Dropout", ["x"])], [("x", [2])], [("y", [2])]),
        # computed ratio and training mode: the run fails if it drops
        lambda: model([_n("Dropout", ["x", "r", "t"])],
                      [("x", [2]), ("r", []), ("t", [])], [("y", [2])],
                      types={"t": TensorProto.BOOL})],
    ("", "Transpose", "1+"): [
        lambda: model([_n("Transpose", ["x"], perm=[1, 0])], [("x", [1, 3])],
                      [("y", [3, 1])]),
        # data moved in three dimensions: a strided IDENTITY
        lambda: model([_n("Transpose", ["x"], perm=[2, 0, 1])],
                      [("x", [2, 3, 4])], [("y", [4, 2, 3])])],
    ("", "Conv", "1+"): [
        lambda: model([_n("Conv", ["x", "w", "b"], pads=[1, 1, 1, 1])],
                      [("x", [1, 2, 5, 5])], [("y", [1, 3, 5, 5])],
                      [("w", np.ones((3, 2, 3, 3), np.float32)),
                       ("b", np.ones(3, np.float32))])],
    ("", "MaxPool", "1+"): [
        lambda: model([_n("MaxPool", ["x"], kernel_shape=[2, 2],
                          strides=[2, 2])], [("x", [1, 2, 4, 4])],
                      [("y", [1, 2, 2, 2])]),
        # asymmetric pads: a -inf border splatted (MEMCPY), x copied in
        lambda: model([_n("MaxPool", ["x"], kernel_shape=[3, 3],
                          strides=[2, 2], pads=[0, 0, 1, 1])],
                      [("x", [1, 2, 5, 5])], [("y", [1, 2, 2, 2])]),
        # Indices, column-major: per plane, made flat (DIV, SUB, MUL, ADD)
        lambda: model([_n("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2],
                          storage_order=1)], [("x", [1, 2, 3, 3])],
                      [("y", [1, 2, 2, 2]), ("i", [1, 2, 2, 2])],
                      types={"i": TensorProto.INT64}),
        # INT8 through FLOAT (CAST); 3-D by one MAX a tap (IDENTITY)
        lambda: model([_n("MaxPool", ["x"], kernel_shape=[2, 2])],
                      [("x", [1, 1, 3, 3])], [("y", [1, 1, 2, 2])],
                      types={n: TensorProto.INT8 for n in "xy"}),
        lambda: model([_n("MaxPool", ["x"], kernel_shape=[2, 2, 2])],
                      [("x", [1, 1, 3, 3, 3])], [("y", [1, 1, 2, 2, 2])])],
    ("", "AveragePool", "1+"): [
        lambda: model([_n("AveragePool", ["x"], kernel_shape=[2, 2])],
                      [("x", [1, 2, 4, 4])], [("y", [1, 2, 3, 3])]),
        lambda: model([_n("AveragePool", ["x"], kernel_shape=[2, 2],
                          pads=[0, 0, 1, 1], count_include_pad=1)],
                      [("x", [1, 2, 4, 4])], [("y", [1, 2, 4, 4])]),
        # uneven pads, uncounted: scaled by window / taps inside (MUL)
        lambda: model([_n("AveragePool", ["x"], kernel_shape=[2, 2],
                          pads=[0, 0, 1, 1])],
                      [("x", [1, 2, 4, 4])], [("y", [1, 2, 4, 4])]),
        # dilations: one ADD a tap (the first an IDENTITY), DIV by counts
        lambda: model([_n("AveragePool", ["x"], kernel_shape=[2, 2],
                          dilations=[2, 2])],
                      [("x", [1, 2, 4, 4])], [("y", [1, 2, 2, 2])],
                      opset=19)],
    ("", "GlobalAveragePool", "1+"): [
        lambda: model([_n("GlobalAveragePool", ["x"])],
                      [("x", [1, 2, 4, 4])], [("y", [1, 2, 1, 1])])],
    ("", "GlobalMaxPool", "1+"): [
        lambda: model([_n("GlobalMaxPool", ["x"])],
                      [("x", [1, 2, 4, 4])], [("y", [1, 2, 1, 1])])],
    ("", "BatchNormalization", "1+"): [
        lambda: model([_n("BatchNormalization", ["x", "s", "b", "m", "v"])],
                      [("x", [1, 2, 3, 3])], [("y", [1, 2, 3, 3])],
                      [(n, np.ones(2, np.float32)) for n in "sbmv"]),
        # training mode: the batch's statistics (IDENTITY, REDUCE_SUM,
        # DIV, SUB) and the factors on the device (SQRT)
        lambda: model([_n("BatchNormalization", ["x", "s", "b", "m", "v"],
                          ["y", "rm", "rv"], training_mode=1)],
                      [("x", [1, 2, 3, 3])],
                      [("y", [1, 2, 3, 3]), ("rm", [2]), ("rv", [2])],
                      [(n, np.ones(2, np.float32)) for n in "sbmv"],
                      opset=15)],
    ("", "LRN", "1+"): [
        lambda: model([_n("LRN", ["x"], size=3)],
                      [("x", [1, 4, 2, 2])], [("y", [1, 4, 2, 2])]),
        # an even window: zeros splatted (MEMCPY) round x copied in
        lambda: model([_n("LRN", ["x"], size=4)],
                      [("x", [1, 4, 2, 2])], [("y", [1, 4, 2, 2])])],
    **{("", name, since): [
        lambda name=name: model([_n(name, ["a", "b"])],
                                [("a", [3, 4]), ("b", [4])],
                                [("y", [3, 4])], types={"y": TensorProto.BOOL})]
        # an order of UINT64s: the bits plus 2^63 (ADD)
        + ([] if name == "Equal" else _uint64(name, TensorProto.BOOL))
       for name, since in (("Equal", "1+"), ("Less", "1+"),
                           ("Greater", "1+"), ("LessOrEqual", "12+"),
                           ("GreaterOrEqual", "12+"))},
    ("", "Where", "9+"): [
        lambda: model([_n("Where", ["c", "a", "b"])],
                      [("c", [3, 1]), ("a", [3, 4]), ("b", [4])],
                      [("y", [3, 4])], types={"c": TensorProto.BOOL})],
    ("", "LayerNormalization", "17+"): [
        lambda: model([_n("LayerNormalization", ["x", "s", "b"])],
                      [("x", [2, 3, 4])], [("y", [2, 3, 4])],
                      [("s", np.ones(4, np.float32)),
                       ("b", np.zeros(4, np.float32))], opset=17),
        # float16: computed in float32, between two CASTs
        lambda: model([_n("LayerNormalization", ["x", "s"], axis=1)],
                      [("x", [2, 3, 4])], [("y", [2, 3, 4])],
                      [("s", np.ones((3, 4), np.float16))], opset=17,
                      types={"x": TensorProto.FLOAT16,
                             "y": TensorProto.FLOAT16})],
    ("", "Sum", "1+"): [
        # c broadcast along the leading dimension: MEMCPYs
        lambda: model([_n("Sum", ["a", "b", "c"])],
                      [("a", [3, 4]), ("b", [3, 4]), ("c", [4])],
                      [("y", [3, 4])])],
    ("", "ConstantOfShape", "1+"): [
        lambda: model([_n("ConstantOfShape", ["s"])], [], [("y", [2, 3])],
                      [("s", np.array([2, 3], I64))]),
        lambda: model([_n("ConstantOfShape", ["s"])], [("s", [2])],
                      [("y", [2, 3])], types={"s": TensorProto.INT64})],
    ("", "Constant", "1+"): [_constant_only],
    ("", "Shape", "1+"): [
        lambda: model([_n("Shape", ["x"], ["s"]),
                       helper.make_node("Cast", ["s"], ["y"], name="n1",
                                        to=TensorProto.FLOAT)],
                      [("x", [2, 3])], [("y", [2])])],
    ("", "Gather", "1+"): [
        lambda: model([_n("Gather", ["d", "i"])], [], [("y", [2])],
                      [("d", np.arange(3, dtype=np.float32)),
                       ("i", np.array([2, 0], I64))]),
        # an embedding: computed ids into a weight table
        lambda: model([_n("Gather", ["d", "i"])], [("i", [2, 3])],
                      [("y", [2, 3, 4])],
                      [("d", np.ones((5, 4), np.float32))],
                      types={"i": TensorProto.INT64}),
        # a middle axis: the ids repeated for each batch (MEMCPY)
        lambda: model([_n("Gather", ["d", "i"], axis=1)], [("i", [3])],
                      [("y", [2, 3, 4])],
                      [("d", np.ones((2, 5, 4), np.float32))],
                      types={"i": TensorProto.INT64})],
    # a computed tensor repeated along its size-1 dims: a strided IDENTITY
    ("", "Expand", "8+"): [
        lambda: model([_n("Expand", ["x", "s"])], [("x", [3, 1])],
                      [("y", [2, 3, 4])], [("s", np.array([2, 1, 4], I64))]),
        lambda: model([_n("Expand", ["x", "s"])], [("x", [3, 1]),
                                                   ("s", [3])],
                      [("y", [2, 3, 4])], types={"s": TensorProto.INT64})],
    # a graph input's view from an offset: copied into the workspace
    # (MEMCPY), then a strided IDENTITY from the offset
    ("", "Slice", "1+"): [
        lambda: model([_n("Slice", ["x", "b", "e", "a", "st"])],
                      [("x", [4, 6])], [("y", [2, 3])],
                      [("b", np.array([1, 0], I64)),
                       ("e", np.array([3, 6], I64)),
                       ("a", np.array([0, 1], I64)),
                       ("st", np.array([1, 2], I64))]),
        # computed bounds: starts and sizes on the device, INDEX_SELECTs
        lambda: model([_n("Slice", ["x", "b", "e"])],
                      [("x", [4, 6]), ("b", [1]), ("e", [1])],
                      [("y", [2, 6])],
                      types={"b": TensorProto.INT32, "e": TensorProto.INT32})],
    ("", "Split", "2+"): [
        lambda: model([_n("Split", ["x", "p"], ["y", "z"], axis=1)],
                      [("x", [2, 5])], [("y", [2, 2]), ("z", [2, 3])],
                      [("p", np.array([2, 3], I64))]),
        lambda: model([_n("Split", ["x", "p"], ["y", "z"], axis=1)],
                      [("x", [2, 5]), ("p", [2])],
                      [("y", [2, 2]), ("z", [2, 3])],
                      types={"p": TensorProto.INT64})],
    ("", "Trilu", "14+"): [
        lambda upper=upper: model([_n("Trilu", ["x", "k"], upper=upper)],
                      [("x", [2, 3, 4])], [("y", [2, 3, 4])],
                      [("k", np.array(1, I64))], opset=14)
        for upper in (0, 1)] + [
        # a computed k: CMP of column minus row, Where's IDENTITY, SELECT
        lambda: model([_n("Trilu", ["x", "k"])],
                      [("x", [2, 3, 4]), ("k", [])], [("y", [2, 3, 4])],
                      types={"k": TensorProto.INT64}, opset=14)],
    ("", "Not", "1+"): [
        lambda: model([_n("Not", ["x"])], [("x", [3])], [("y", [3])],
                      types={"x": TensorProto.BOOL, "y": TensorProto.BOOL})],
    **{("", op, "7+"): [
        lambda op=op: model([_n(op, ["a", "b"])], [("a", [3, 4]),
                                                   ("b", [4])],
                            [("y", [3, 4])],
                            types={n: TensorProto.BOOL for n in "aby"})]
       for op in ("And", "Or", "Xor")},
    ("", "IsNaN", "9+"): [
        lambda: model([_n("IsNaN", ["x"])], [("x", [3])], [("y", [3])],
                      types={"y": TensorProto.BOOL})],
    ("", "IsInf", "10+"): [
        lambda neg=neg: model([_n("IsInf", ["x"], detect_negative=neg)],
                      [("x", [3])], [("y", [3])],
                      types={"y": TensorProto.BOOL})
        for neg in (0, 1)],
    ("", "Mod", "10+"): [
        lambda: model([_n("Mod", ["a", "b"])], [], [("y", [2])],
                      [("a", np.array([7, -7], I64)),
                       ("b", np.array([4, 4], I64))],
                      types={"y": TensorProto.INT64}),
        # computed: a - trunc(a / b) * b, then b added where the signs
        # differ (CMPs, Where's IDENTITYs and SELECTs)
        lambda: model([_n("Mod", ["a", "b"])], [("a", [2, 3]), ("b", [3])],
                      [("y", [2, 3])],
                      types={n: TensorProto.INT32 for n in "aby"}),
        # computed floats: |a| reduced by |b| * 2^k (ABS, MUL, CMP, SUB,
        # SELECT), a's sign back (RECIPROCAL, NEG), FLOAT16 through FLOAT
        lambda: model([_n("Mod", ["a", "b"], fmod=1)],
                      [("a", [3]), ("b", [3])], [("y", [3])],
                      types={n: TensorProto.FLOAT16 for n in "aby"})],
    ("", "Clip", "1-10"): [
        lambda: model([_n("Clip", ["x"], min=0.0, max=6.0)], [("x", [2, 3])],
                      [("y", [2, 3])], opset=10)],
    # computed bounds too: each a MAX or MIN at a stride of 0
    ("", "Clip", "11+"): [
        lambda: model([_n("Clip", ["x", "lo", "hi"])],
                      [("x", [2, 3]), ("hi", [])], [("y", [2, 3])],
                      [("lo", np.array(0.0, np.float32))])],
    ("", "Range", "11+"): [
        lambda: model([_n("Range", ["a", "b", "d"])], [], [("y", [3])],
                      [("a", np.array(1.0, np.float32)),
                       ("b", np.array(4.0, np.float32)),
                       ("d", np.array(1.0, np.float32))]),
        # computed integer bounds: the count on the device and checked
        lambda: model([_n("Range", ["a", "b", "d"])],
                      [("a", []), ("b", []), ("d", [])], [("y", [3])],
                      types={n: TensorProto.INT64 for n in "abdy"}),
        # computed float bounds: the count proved exactly on the device
        lambda: model([_n("Range", ["a", "b", "d"])],
                      [("a", []), ("b", []), ("d", [])], [("y", [3])]),
        lambda: model([_n("Range", ["a", "b", "d"])],
                      [("a", []), ("b", []), ("d", [])], [("y", [0])],
                      types={n: TensorProto.FLOAT16 for n in "abdy"})],
    ("", "GatherElements", "11+"): [
        lambda: model([_n("GatherElements", ["d", "i"], axis=1)], [],
                      [("y", [2, 2])],
                      [("d", np.arange(6, dtype=np.float32).reshape(2, 3)),
                       ("i", np.array([[2, 0], [-1, 1]], I64))]),
        # computed: the axis moved last (IDENTITY), the indices wrapped
        # (CMP, MEMCPY, ADD, SELECT), one INDEX_SELECT, moved back
        lambda: model([_n("GatherElements", ["d", "i"], axis=0)],
                      [("d", [3, 2]), ("i", [2, 2])], [("y", [2, 2])],
                      types={"i": TensorProto.INT64})],
    ("", "Concat", "1+"): [
        lambda: model([_n("Concat", ["a", "b"], axis=0)], [], [("y", [3])],
                      [("a", np.ones(1, np.float32)),
                       ("b", np.zeros(2, np.float32))]),
        # computed tensors: a strided IDENTITY into each one's place
        lambda: model([_n("Concat", ["a", "b"], axis=1)],
                      [("a", [2, 1, 3]), ("b", [2, 2, 3])],
                      [("y", [2, 3, 3])])],
}


def _key(rule):
    return (rule.domain, rule.op_type, rule.opsets)


def _rule_id(rule):
    return "%s@%s" % (rule.name, rule.opsets)


class LoaderRefuses(Exception):
    """davinci-atc made a model the .om loader refuses."""


def _emitted(m) -> set:
    """Names of the device ops of converted model ``m``, but the copies
    into its outputs that any node may need (an output that is a view of
    an input, a weight or a constant)."""
    try:
        data = atc.convert(m)
    except atc.ConversionError as exc:
        if "loader would refuse" in str(exc):
            raise LoaderRefuses(str(exc)) from None
        raise
    om = omfile.parse(data)
    memcpy = schema.by_name("MEMCPY").opcode
    return {schema.by_opcode(o.opcode).name for o in om.ops
            if not (o.opcode == memcpy and
                    om.tensors[o.dst].kind == omfile.KIND_OUTPUT)}


def _loadable(rule):
    """xfail a registration whose ops the loader does not know yet, on the
    loader's refusal only."""
    missing = [op for op in rule.emits
               if schema.by_name(op).opcode not in omfile.OPCODES]
    return pytest.param(rule, id=_rule_id(rule), marks=pytest.mark.xfail(
        bool(missing), strict=True, raises=LoaderRefuses,
        reason="omfile.OPCODES (the .om loader's opcodes) lacks %s, so the "
               "converter's own check refuses the model" % missing))


def test_every_compute_op_is_emitted_or_the_schema_says_why():
    emitted = {op for r in RULES for op in r.emits}
    missing = [op.name for op in schema.COMPUTE_OPS
               if op.name not in emitted and not op.why_not_in("atc")]
    assert not missing, (
        "no davinci-atc registration emits %s, and ops.toml's not_in.atc "
        "does not say why" % missing)
    # a reason is stale once an ONNX op is lowered onto the op
    stale = sorted({r.op for r in RULES
                    if r.op and schema.by_name(r.op).why_not_in("atc")})
    assert not stale, (
        "ops.toml's not_in.atc says davinci-atc lacks %s, which RULES "
        "lowers ONNX ops onto" % stale)


def test_every_registration_has_samples():
    assert sorted(map(_key, RULES)) == sorted(SAMPLES)


@pytest.mark.parametrize("rule", [_loadable(r) for r in RULES])
def test_a_registration_emits_the_ops_it_claims(rule):
    seen = set()
    for make in SAMPLES[_key(rule)]:
        ops = _emitted(make())
        assert ops <= set(rule.emits), (
            "%s emitted %s, which its registration does not claim"
            % (rule.name, sorted(ops - set(rule.emits))))
        seen |= ops
    assert seen == set(rule.emits)


def test_opset_ranges_pick_their_lowering():
    """Softmax before opset 13 flattens the axes from ``axis`` on; from 13
    it is over ``axis`` alone: moved to the last, 8 rows of 3."""
    def softmax(opset):
        return model([_n("Softmax", ["x"], axis=1)], [("x", [2, 3, 4])],
                     [("y", [2, 3, 4])], opset=opset)
    om = omfile.parse(atc.convert(softmax(11)))
    assert [(o.m, o.n) for o in om.ops] == [(2, 12)]
    om = omfile.parse(atc.convert(softmax(13)))
    softmax_op = schema.by_name("SOFTMAX").opcode
    assert [(o.m, o.n) for o in om.ops if o.opcode == softmax_op] == [(8, 3)]


def test_an_op_is_looked_up_in_its_domain():
    """ReluGrad is com.microsoft's: not ONNX's; and a domain with no
    registrations is named."""
    ins = [("dy", [2]), ("x", [2])]
    m = model([_n("ReluGrad", ["dy", "x"])], ins, [("y", [2])])
    with pytest.raises(atc.ConversionError,
                       match="unsupported ONNX op ReluGrad in node 'n0'"):
        atc.convert(m)
    m = model([helper.make_node("Relu", ["x"], ["y"], name="n0",
                                domain="ai.onnx.ml")], [("x", [2])],
              [("y", [2])])
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    with pytest.raises(atc.ConversionError,
                       match="unsupported ONNX op Relu of domain "
                             "'ai.onnx.ml' in node 'n0'.*"
                             "com.microsoft:ReluGrad"):
        atc.convert(m)


def test_supported_ops_are_the_registrys():
    ops = atc.supported_ops()
    assert set(ops) == {r.name for r in RULES}
    assert len(ops) == len(set(ops))
    assert {"Constant", "Sqrt", "LogSoftmax",
            "com.microsoft:ReluGrad"} <= set(ops)


def _gen_atc_ops():
    path = os.path.join(REPO, "scripts", "gen_atc_ops.py")
    spec = importlib.util.spec_from_file_location("gen_atc_ops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_lists_the_registrys_ops():
    gen = _gen_atc_ops()
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = gen.readme_block(f.read())
    assert block == gen.block(), (
        "README.md's list of davinci-atc's ONNX ops differs from "
        "davinci.atc.lower.RULES: run scripts/gen_atc_ops.py")
    for r in RULES:
        assert r.op_type in block


def test_atc_imports_nothing_private_of_the_runtime():
    """The converter uses the runtime's public modules (davinci.schema,
    davinci.opdesc, davinci.omfile), never _uapi or another private one."""
    private = []
    for name in sorted(os.listdir(ATC)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(ATC, name), encoding="utf-8") as f:
            tree = ast.parse(f.read(), name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and \
                    node.module != "__future__":
                parts = (node.module or "").split(".") + \
                    [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                parts = [p for a in node.names for p in a.name.split(".")]
            else:
                continue
            bad = [p for p in parts if p.startswith("_") and
                   p != "__main__"]
            if bad:
                private.append("%s:%d imports %s" % (name, node.lineno, bad))
    assert not private, private


# -- the builder writes only records the schema allows ----------------------
def _builder():
    gb = GearBuilder(0, Weights())
    return gb, gb.work((4,), "float32"), gb.work((4,), "int32")


@pytest.mark.parametrize("op,args,kw,match", [
    ("EXP", "i", {"count": 4}, "EXP refuses it: exp does not support dtype "
                              "int32"),
    ("SQRT", "f", {"count": 4, "attr": 1.0}, "takes no attribute"),
    ("CMP", "ff", {"count": 4}, "needs its predicate"),
    ("CMP", "ff", {"count": 4, "attr": "ALMOST"}, "predicate 'ALMOST' is "
                                                  "none of EQ"),
    ("ADD", "f", {"count": 4}, "takes 2 input"),
    ("MATMUL", "ff", {"count": 4}, r"needs \(m, n, k\)"),
    ("EVENT_RECORD", "", {}, "EVENT_RECORD is not an op of an offline "
                             "model"),
    ("MEMSET", "", {"count": 16}, "MEMSET needs its value"),
    ("MEMSET", "", {"count": 16, "attr": 256}, "256 is not a byte"),
    ("MEMCPY", "", {"count": 16}, "MEMCPY takes 1 source"),
    ("FROBNICATE", "f", {}, "the schema has no op 'FROBNICATE'"),
])
def test_emit_refuses_what_the_schema_refuses(op, args, kw, match):
    gb, f32, i32 = _builder()
    srcs = [{"f": f32, "i": i32}[a] for a in args]
    with pytest.raises(atc.ConversionError, match=match):
        gb.emit(op, f32, *srcs, where="n0", **kw)
    assert gb.ops == []


def test_emit_encodes_what_the_schema_says():
    gb, f32, _ = _builder()
    gb.emit("CMP", f32, f32, f32, count=4, attr="GE")
    gb.emit("AXPY", f32, f32, f32, count=4, attr=0.5)
    gb.emit("MEMSET", f32, count=16, attr=0x7F)
    cmp, axpy, memset = gb.ops
    assert cmp.opcode == schema.by_name("CMP").opcode
    assert cmp.imm == schema.by_name("CMP").imm.values.index("GE")
    assert axpy.imm == np.float32(0.5).view(np.uint32)
    assert (memset.imm, memset.count, memset.src0) == (0x7F, 16,
                                                       omfile.NO_TENSOR)
