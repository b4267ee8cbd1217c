# SPDX-License-Identifier: GPL-2.0
"""INT16, UINT16, UINT32, UINT64 and DOUBLE model inputs and outputs,
which the device has not: davinci-atc carries them in INT32 or INT64
(atc/carry.py) through the ops that are exact there, on every backend
against numpy bit for bit at the types' edges (wrapping Add, Sub and Mul,
truncating Div, Mod's sign, UINT64's order, Div and Mod above 2^63; a
DOUBLE's Cast to FLOAT rounded once over the whole range, FLOAT and
FLOAT16 to DOUBLE exact), and refuses every other op."""

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


def _double_bits(rng, n):
    """DOUBLEs over the whole range: random bit patterns, every exponent
    near FLOAT's edges, ties of FLOAT's rounding, zeros, infinities and
    NaN."""
    bits = rng.integers(0, 1 << 63, n, dtype=np.int64).astype(np.uint64)
    bits |= rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)
    d = bits.view(np.float64).copy()
    e = rng.integers(-160, 140, n).astype(np.float64)
    near = rng.standard_normal(n) * 2.0 ** e
    f = rng.standard_normal(n).astype(np.float32).astype(np.float64)
    tie = f * (1 + 2.0 ** -24)          # half a FLOAT ulp above: a tie
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149,
                     2.0 ** -150, 1.5 * 2 ** -150, 2.0 ** -126,
                     (2 - 2.0 ** -23) * 2 ** -127, 3.4028235677973366e38,
                     3.4028235677973366e38 * (1 + 2.0 ** -25),
                     3.4028236e38 * 1.0000001, 1e308, 5e-324, -5e-324])
    return np.concatenate([d, near, tie, edge])


def test_double_to_float_rounds_once_as_numpy(dev, rng):
    d = _double_bits(rng, 3000)
    m = model([helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT)],
              [("d", [d.size])], [("y", [d.size])],
              types={"d": TensorProto.DOUBLE})
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([d])
    with np.errstate(over="ignore"):
        want = d.astype(np.float32)
    ok = ~np.isnan(want)
    assert np.array_equal(y.view(np.uint32)[ok], want.view(np.uint32)[ok])
    assert np.array_equal(np.isnan(y), np.isnan(want))


@pytest.mark.parametrize("code,dtype", [(TensorProto.FLOAT, np.float32),
                                        (TensorProto.FLOAT16, np.float16)])
def test_float_to_double_is_exact(dev, rng, code, dtype):
    bits = rng.integers(0, 1 << 32, 4000, dtype=np.int64).astype(np.uint32)
    with np.errstate(over="ignore", invalid="ignore"):
        x = bits.view(np.float32).astype(dtype)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf,
                                     np.finfo(dtype).smallest_subnormal,
                                     np.finfo(dtype).max], dtype)])
    m = model([helper.make_node("Cast", ["x"], ["y"],
                                to=TensorProto.DOUBLE)],
              [("x", [x.size])], [("y", [x.size])],
              types={"x": code, "y": TensorProto.DOUBLE})
    data = atc.convert(m)
    assert omfile.parse(data).outputs[0].dtype == "float64"
    with Model(dev, data) as mod:
        y, = mod.run([x])
    with np.errstate(invalid="ignore"):
        want = x.astype(np.float64)
    ok = ~np.isnan(want)
    assert np.array_equal(y.view(np.uint64)[ok], want.view(np.uint64)[ok])
    assert np.array_equal(np.isnan(y), np.isnan(want))


def test_double_to_float16_through_float(dev, rng):
    """Rounded to FLOAT, then to FLOAT16 (two roundings, as a CAST of the
    FLOAT): numpy's astype of each step."""
    d = _double_bits(rng, 500)
    m = model([helper.make_node("Cast", ["d"], ["y"],
                                to=TensorProto.FLOAT16)],
              [("d", [d.size])], [("y", [d.size])],
              types={"d": TensorProto.DOUBLE, "y": TensorProto.FLOAT16})
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([d])
    with np.errstate(over="ignore"):
        want = d.astype(np.float32).astype(np.float16)
    ok = ~np.isnan(want)
    assert np.array_equal(y.view(np.uint16)[ok], want.view(np.uint16)[ok])


def test_a_double_takes_only_cast():
    m = model([helper.make_node("Add", ["a", "a"], ["y"])], [("a", [3])],
              [("y", [3])], types={"a": TensorProto.DOUBLE,
                                   "y": TensorProto.DOUBLE})
    with pytest.raises(atc.ConversionError, match="through Cast only"):
        atc.convert(m)
