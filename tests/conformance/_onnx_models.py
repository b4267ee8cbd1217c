# SPDX-License-Identifier: GPL-2.0
"""ONNX graphs for the offline-model tests, made with onnx.helper (no
torch), each with its numpy reference."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opset=13, types=None):
    """A ModelProto: ``inputs``/``outputs`` are (name, dims) pairs, FLOAT
    unless ``types`` gives a name another TensorProto element type."""
    types = types or {}
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, types.get(n, FLOAT), d)
         for n, d in inputs],
        [helper.make_tensor_value_info(n, types.get(n, FLOAT), d)
         for n, d in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("",
                                                                   opset)])


def mlp(seed=0, n_in=64, hidden=32, n_out=10, batch="N"):
    """Gemm + Relu + Gemm(transB) + Softmax, the shape of a digits MLP:
    (model, reference function)."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((n_in, hidden)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(hidden).astype(np.float32)
    w2 = rng.standard_normal((n_out, hidden)).astype(np.float32) * 0.2
    b2 = rng.standard_normal(n_out).astype(np.float32)
    m = model([helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
               helper.make_node("Relu", ["h"], ["r"], name="relu1"),
               helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], name="fc2",
                                transB=1),
               helper.make_node("Softmax", ["z"], ["prob"], name="softmax",
                                axis=-1)],
              [("x", [batch, n_in])], [("prob", [batch, n_out])],
              [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)])

    def ref(x):
        z = np.maximum(x @ w1 + b1, 0) @ w2.T + b2
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return m, ref
