# SPDX-License-Identifier: GPL-2.0
"""davinci-atc's activations and transcendentals (Tanh, Sigmoid, Erf, Log,
Reciprocal, Neg, Gelu of opset 20 in both forms, Pow) as offline models
on the device: within the ulp bounds of kmod/core/NUMERICS.md of float64,
and near onnx's reference implementation (onnx.reference.
ReferenceEvaluator, which computes in float32 and loses the digits of
Gelu's left tail), and ONNX's backend node tests of these op types
(the cases onnx.backend.test.case.node builds, as load_model_tests reads
them from their data folder): each passes with its own tolerance, or is
refused with a ConversionError; none is converted and wrong."""

import math
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from davinci import atc  # noqa: E402
from davinci.atc import ConversionError  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402
from .op_samples import _ulps_apart  # noqa: E402

OPS = ("Tanh", "Sigmoid", "Erf", "Log", "Reciprocal", "Neg", "Gelu", "Pow")
_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


#: float64 references and the float32 ulp bounds of NUMERICS.md
REFS = {
    "Tanh": (np.tanh, 2), "Sigmoid": (_sigmoid, 2), "Erf": (_erf, 2),
    "Log": (np.log, 1), "Reciprocal": (lambda x: 1 / x, 0),
    "Neg": (np.negative, 0),
    "Gelu none": (lambda x: 0.5 * x * _erfc(-x / np.sqrt(2)), 3),
    "Gelu tanh": (lambda x: x * _sigmoid(2 * np.sqrt(2 / np.pi) * (
        x + 0.044715 * x ** 3)), 3),
    "Pow": (np.power, 1),
}


def _run(dev, m, *xs):
    mod = Model(dev, atc.convert(m))
    try:
        return mod.run(list(xs))
    finally:
        mod.unload()


def _node(op, ins, **attrs):
    return helper.make_node(op, list(ins), ["y"], name=op.lower() + "0",
                            **attrs)


def _inputs(op, rng):
    x = rng.uniform(-6, 6, (7, 33)).astype(np.float32)
    if op == "Log":
        x = np.abs(x) + np.float32(1e-3)
    if op == "Pow":
        return [np.abs(x) + np.float32(0.05),
                rng.uniform(-4, 4, (7, 33)).astype(np.float32)]
    return [x]


@pytest.mark.parametrize("op,form", [(op, None) for op in OPS
                                     if op != "Gelu"] +
                         [("Gelu", "none"), ("Gelu", "tanh")])
def test_an_activation_matches_onnxs_reference(dev, rng, op, form):
    ins = _inputs(op, rng)
    names = ["x", "e"][:len(ins)]
    attrs = {"approximate": form} if form else {}
    m = model([_node(op, names, **attrs)],
              [(n, list(v.shape)) for n, v in zip(names, ins)],
              [("y", [7, 33])], opset=20)
    got, = _run(dev, m, *ins)
    ref, bound = REFS[op + (" " + form if form else "")]
    want = ref(*(v.astype(np.float64) for v in ins)).astype(np.float32)
    assert _ulps_apart(got, want, "float32").max() <= bound
    onnx_ref, = ReferenceEvaluator(m).run(None, dict(zip(names, ins)))
    np.testing.assert_allclose(got, onnx_ref, rtol=1e-5, atol=1e-6)


def test_pow_broadcasts_and_takes_an_exact_integer_exponent(dev, rng):
    x = rng.uniform(0.1, 3, (3, 4)).astype(np.float32)
    e = np.array([2, -1, 3, 0], np.int64)
    g = helper.make_graph(
        [_node("Pow", ["x", "e"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
        [onnx.numpy_helper.from_array(e, "e")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
    got, = _run(dev, m, x)
    want = np.power(x.astype(np.float64), e.astype(np.float64))
    assert _ulps_apart(got, want.astype(np.float32), "float32").max() <= 1
    assert np.array_equal(got[:, 0], x[:, 0] * x[:, 0])    # one MUL's bits


def test_an_inexact_constant_exponent_is_refused(rng):
    """A computed INT64 exponent converts (a CAST, the run failing beyond
    2^24: test_atc_pinned.py); a constant one FLOAT does not hold is
    refused."""
    g = helper.make_graph(
        [_node("Pow", ["x", "e"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("e", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
    atc.convert(m)
    g.initializer.append(onnx.numpy_helper.from_array(
        np.array([3, (1 << 24) + 1], np.int64), "e"))
    del g.input[1]
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
    with pytest.raises(ConversionError, match="exactly"):
        atc.convert(m)


def _node_cases():
    from onnx.backend.test.case import node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the cases' own numpy warnings
        cases = node.collect_testcases(None)
    return [c for c in cases if c.model.graph.node and
            c.model.graph.node[0].op_type in OPS]


@pytest.fixture(scope="module")
def node_cases():
    return _node_cases()


def test_onnxs_backend_node_tests_pass_or_are_refused(dev, node_cases):
    passed, refused = [], []
    for case in node_cases:
        try:
            om = atc.convert(case.model)
        except ConversionError:
            refused.append(case.name)
            continue
        mod = Model(dev, om)
        try:
            for ins, outs in case.data_sets:
                got = mod.run(list(ins))
                for g, w in zip(got, outs):
                    np.testing.assert_allclose(g, w, rtol=case.rtol,
                                               atol=case.atol,
                                               err_msg=case.name)
        finally:
            mod.unload()
        passed.append(case.name)
    print("\nONNX backend node tests of %s: %d pass, %d refused (%s)"
          % (", ".join(OPS), len(passed), len(refused), ", ".join(refused)))
    # every case of one float type passes; only mixed and integer pow
    # types are refused
    assert all(n.startswith("test_pow_types") for n in refused)
    assert len(passed) >= 17
