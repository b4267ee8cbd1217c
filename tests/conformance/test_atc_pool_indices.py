# SPDX-License-Identifier: GPL-2.0
"""MaxPool's Indices output (a second MAXPOOL2D writing INT64 argmaxes,
made flat over the tensor as ONNX's, row- or column-major by
storage_order) and the MaxPool of INT8 and UINT8 (through FLOAT, exact),
against onnxruntime."""

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
