# SPDX-License-Identifier: GPL-2.0
"""The poolings davinci-atc composes, against onnxruntime: MaxPool's
Indices output (a second MAXPOOL2D writing INT64 argmaxes, made flat over
the tensor as ONNX's, row- or column-major by storage_order), the MaxPool
of INT8 and UINT8 (through FLOAT, exact), and by one task a tap of the
window the 3-D poolings, an AveragePool's dilations and pads over half its
window (ceil_mode's extra windows and count_include_pad's counts too)."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from davinci import atc  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402


def _ort(m, *ins):
    s = ort.InferenceSession(m.SerializeToString(),
                             providers=["CPUExecutionProvider"])
    return s.run(None, {i.name: a for i, a in zip(s.get_inputs(), ins)})


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("pads", [[0, 0, 0, 0], [1, 1, 1, 1]])
def test_max_pool_indices_are_onnxruntime_s(dev, rng, storage_order, pads):
    x = rng.permutation(2 * 3 * 7 * 6).astype(np.float32).reshape(
        2, 3, 7, 6)
    node = helper.make_node("MaxPool", ["x"], ["y", "i"],
                            kernel_shape=[3, 3], strides=[2, 1], pads=pads,
                            storage_order=storage_order)
    ys = (7 + pads[0] + pads[2] - 3) // 2 + 1, 6 + pads[1] + pads[3] - 2
    m = model([node], [("x", [2, 3, 7, 6])],
              [("y", [2, 3, *ys]), ("i", [2, 3, *ys])],
              types={"i": TensorProto.INT64}, opset=12)
    with Model(dev, atc.convert(m)) as mod:
        y, i = mod.run([x])
    want_y, want_i = _ort(m, x)
    assert np.array_equal(y, want_y)
    assert i.dtype == np.int64 and np.array_equal(i, want_i)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_max_pool_of_small_integers(dev, rng, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (1, 2, 5, 5), dtype=dtype,
                     endpoint=True)
    code = TensorProto.INT8 if dtype == "int8" else TensorProto.UINT8
    m = model([helper.make_node("MaxPool", ["x"], ["y"],
                                kernel_shape=[2, 2], pads=[0, 0, 1, 1])],
              [("x", [1, 2, 5, 5])], [("y", [1, 2, 5, 5])],
              types={"x": code, "y": code}, opset=12)
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([x])
    assert y.dtype == x.dtype and np.array_equal(y, _ort(m, x)[0])


_TAP_CASES = [
    # op, x shape, attributes
    ("MaxPool", [1, 2, 6, 5, 7], dict(kernel_shape=[2, 3, 2],
                                      strides=[2, 1, 2],
                                      pads=[1, 0, 1, 0, 2, 1])),
    ("MaxPool", [1, 1, 7, 7, 7], dict(kernel_shape=[2, 2, 2],
                                      dilations=[2, 2, 1], ceil_mode=1,
                                      strides=[2, 2, 2])),
    ("AveragePool", [1, 2, 5, 6, 4], dict(kernel_shape=[3, 2, 2],
                                          pads=[1, 1, 0, 1, 0, 1])),
    ("AveragePool", [1, 1, 9, 9, 9], dict(kernel_shape=[2, 2, 2],
                                          dilations=[2, 2, 2], ceil_mode=1,
                                          strides=[2, 2, 2], pads=[1] * 6,
                                          count_include_pad=1)),
    ("AveragePool", [1, 1, 9, 9, 9], dict(kernel_shape=[2, 2, 2],
                                          dilations=[2, 2, 2], ceil_mode=1,
                                          strides=[2, 2, 2], pads=[1] * 6,
                                          count_include_pad=0)),
    ("AveragePool", [1, 3, 8, 8], dict(kernel_shape=[3, 3],
                                       dilations=[2, 2])),
    ("AveragePool", [1, 3, 7, 7], dict(kernel_shape=[3, 3],
                                       pads=[2, 2, 2, 2])),
]


@pytest.mark.parametrize("op,shape,attrs", _TAP_CASES)
def test_pooling_by_taps_is_onnxruntime_s(dev, rng, op, shape, attrs):
    x = rng.standard_normal(shape).astype(np.float32)
    m = model([helper.make_node(op, ["x"], ["y"], **attrs)],
              [("x", shape)], [("y", None)], opset=19)
    want, = _ort(m, x)
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([x])
    assert y.shape == want.shape
    if op == "MaxPool":
        assert np.array_equal(y, want)
    else:
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
