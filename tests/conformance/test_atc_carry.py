# SPDX-License-Identifier: GPL-2.0
"""INT16, UINT16, UINT32 and UINT64 model inputs and outputs, which the
device has not: davinci-atc carries them in INT32 or INT64 (atc/carry.py)
through the ops that are exact there, on every backend against numpy bit
for bit at the types' edges (wrapping Add, Sub and Mul, truncating Div,
Mod's sign, UINT64's order, Div and Mod above 2^63), and refuses every
other op."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from davinci import atc, omfile  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402

_CODES = {"int16": TensorProto.INT16, "uint16": TensorProto.UINT16,
          "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64}


def _trunc_div(a, b):
    q = np.abs(a.astype(object)) // np.abs(b.astype(object))
    return (np.where((a < 0) != (b < 0), -q, q)).astype(a.dtype)


#: ONNX op -> numpy's result of the same type (BOOL for the comparisons)
_REF = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
        "Div": _trunc_div, "Mod": np.mod, "Max": np.maximum,
        "Min": np.minimum, "Equal": np.equal, "Less": np.less,
        "Greater": np.greater, "LessOrEqual": np.less_equal,
        "GreaterOrEqual": np.greater_equal}


def _operands(dtype, rng):
    """Both ends of the type, 0, 1, -1 where it has it, and random ones:
    every pair of them (b never 0, nor -1 under a minimum)."""
    info = np.iinfo(dtype)
    edge = [info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2,
            info.max // 2, info.max // 2 + 1, info.max // 2 + 2,
            info.max // 3, info.max // 2 - 1]
    if info.min < 0:
        edge += [-1, -2]
    edge = np.array(edge, dtype)
    rand = rng.integers(info.min, info.max, 24, dtype=dtype,
                        endpoint=True)
    vals = np.concatenate([edge, rand])
    a, b = np.meshgrid(vals, vals)
    a, b = a.reshape(-1), b.reshape(-1)
    ok = (b != 0) & ~((a == info.min) & (b.astype(np.float64) == -1))
    return a[ok], b[ok]


@pytest.mark.parametrize("dtype", list(_CODES))
@pytest.mark.parametrize("op", list(_REF))
def test_carried_integers_match_numpy(dev, rng, dtype, op):
    a, b = _operands(np.dtype(dtype), rng)
    ref = _REF[op](a, b)
    out_t = TensorProto.BOOL if ref.dtype == np.bool_ else _CODES[dtype]
    m = model([helper.make_node(op, ["a", "b"], ["y"])],
              [("a", [a.size]), ("b", [b.size])], [("y", [a.size])],
              types={"a": _CODES[dtype], "b": _CODES[dtype], "y": out_t})
    data = atc.convert(m)
    om = omfile.parse(data)
    assert [io.dtype for io in om.inputs] == [dtype, dtype]
    assert om.outputs[0].dtype == str(ref.dtype)
    with Model(dev, data) as mod:
        y, = mod.run([a, b])
    assert y.dtype == ref.dtype and np.array_equal(y, ref), op


def test_sum_of_three_uint16_wraps(dev):
    a = np.array([65535, 1, 40000], np.uint16)
    m = model([helper.make_node("Sum", ["a", "b", "c"], ["y"])],
              [(n, [3]) for n in "abc"], [("y", [3])],
              types={n: TensorProto.UINT16 for n in "abcy"})
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([a, a, a])
    assert np.array_equal(y, a + a + a)


@pytest.mark.parametrize("dtype,op,match", [
    ("uint16", "Relu", "carries it in INT32 through"),
    ("uint64", "Neg", "carries it in INT64 through"),
    ("int16", "Cast", "carries it in INT32 through"),
])
def test_what_a_carried_integer_refuses(dtype, op, match):
    attrs = {"to": TensorProto.FLOAT} if op == "Cast" else {}
    ins = ["a"] if op in ("Relu", "Cast", "Neg") else ["a", "a"]
    m = model([helper.make_node(op, ins, ["y"], **attrs)], [("a", [3])],
              [("y", [3])], types={"a": _CODES[dtype], "y": _CODES[dtype]})
    with pytest.raises(atc.ConversionError, match=match):
        atc.convert(m)


def test_acl_names_a_carried_input_type(acl_dev):
    import acl
    from acl import constants as C
    m = model([helper.make_node("Add", ["a", "a"], ["y"])], [("a", [3])],
              [("y", [3])], types={"a": TensorProto.UINT32,
                                   "y": TensorProto.UINT32})
    arr = np.frombuffer(atc.convert(m), np.uint8).copy()
    model_id, ret = acl.mdl.load_from_mem(acl.util.numpy_to_ptr(arr),
                                          arr.nbytes)
    assert ret == 0
    desc = acl.mdl.create_desc()
    try:
        assert acl.mdl.get_desc(desc, model_id) == 0
        assert acl.mdl.get_input_data_type(desc, 0) == C.ACL_UINT32
        assert acl.mdl.get_output_data_type(desc, 0) == C.ACL_UINT32
        assert acl.mdl.get_input_size_by_index(desc, 0) == 12
    finally:
        acl.mdl.destroy_desc(desc)
        assert acl.mdl.unload(model_id) == 0
