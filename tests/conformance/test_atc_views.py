# SPDX-License-Identifier: GPL-2.0
"""The ONNX ops davinci-atc lowers to strided copies, SELECT and CMP, on
every backend against onnx.reference: Expand, Slice and Split (of graph
inputs and of computed tensors, every bit through: NaN, inf, -0), Trilu
with a constant k, And, Or, Xor and Not, IsNaN and IsInf, GatherElements
(one INDEX_SELECT), ReduceMean and Clip; Range, Mod and GatherElements of
constants folded at conversion, and what each refuses.
ONNX's node tests give Slice's bounds, Split's sizes, Expand's shape and
Trilu's k as graph inputs, which davinci-atc (as ATC, for a static model)
takes only as constants: these tests give them as initializers."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from davinci import atc, omfile, schema  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402

I64 = np.int64
BOOL = TensorProto.BOOL


def _n(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower() + "0",
                            **attrs)


def _special(rng, *shape):
    """Floats with NaN, both infinities and -0 among them."""
    x = rng.standard_normal(shape).astype(np.float32).reshape(-1)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0][:x.size]
    return x[rng.permutation(x.size)].reshape(shape)


def _run(dev, m, feeds):
    with Model(dev, atc.convert(m)) as mod:
        return mod.run([feeds[i.name] for i in m.graph.input
                        if i.name in feeds])


def _same(dev, m, feeds):
    """The converted model's outputs are the reference's, bit for bit but
    for a NaN's sign (a computed input's Neg is the device's)."""
    want = ReferenceEvaluator(m).run(None, feeds)
    got = _run(dev, m, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape)
        np.testing.assert_array_equal(g, w)
        if g.dtype.kind == "f":
            num = ~np.isnan(w)
            np.testing.assert_array_equal(np.signbit(g[num]),
                                          np.signbit(w[num]))
    return got


def _ops(m) -> list:
    return [schema.by_opcode(o.opcode).name
            for o in omfile.parse(atc.convert(m)).ops]


@pytest.mark.parametrize("xshape,shape", [
    ((3, 1), (2, 3, 4)), ((1, 4), (3, 1)), ((2, 1, 3), (2, 5, 3)),
    ((3,), (1,)), ((2, 3), (2, 3))])
@pytest.mark.parametrize("computed", [False, True])
def test_expand(dev, rng, xshape, shape, computed):
    """Numpy's broadcast both ways; a computed input (the Neg's) too."""
    nodes = [_n("Expand", ["n" if computed else "x", "s"])]
    if computed:
        nodes.insert(0, _n("Neg", ["x"], ["n"]))
    m = model(nodes, [("x", list(xshape))], [("y", None)],
              [("s", np.array(shape, I64))])
    _same(dev, m, {"x": _special(rng, *xshape)})


def test_expand_of_bools_and_int64(dev, rng):
    m = model([_n("Expand", ["b", "s"], ["y"]),
               _n("Expand", ["i", "s"], ["z"])],
              [("b", [1, 3]), ("i", [2, 1])], [("y", None), ("z", None)],
              [("s", np.array([2, 3], I64))],
              types={"b": BOOL, "y": BOOL, "i": TensorProto.INT64,
                     "z": TensorProto.INT64})
    _same(dev, m, {"b": np.array([[True, False, True]]),
                   "i": np.array([[-5], [1 << 40]], I64)})


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [3], [0], None),                     # rows: a block
    ([0, 1], [4, 5], [0, 1], [2, 2]),          # every other
    ([-3], [1000], [-1], None),                # negative start, past end
    ([2, 0], [-1, -2], None, None),            # negative ends, default axes
    ([0], [4], [1], [3]),
    ([1, 1, 2], [2, 3, 6], [0, 1, 2], [1, 1, 3]),
], ids=["block", "strided", "negative start", "negative end", "step 3",
        "three axes"])
@pytest.mark.parametrize("computed", [False, True])
def test_slice(dev, rng, starts, ends, axes, steps, computed):
    inits = [("b", np.array(starts, I64)), ("e", np.array(ends, I64))]
    ins = ["n" if computed else "x", "b", "e"]
    if axes is not None or steps is not None:
        inits.append(("a", np.array(axes if axes is not None
                                    else range(len(starts)), I64)))
        ins.append("a")
    if steps is not None:
        inits.append(("st", np.array(steps, I64)))
        ins.append("st")
    nodes = [_n("Slice", ins)]
    if computed:
        nodes.insert(0, _n("Neg", ["x"], ["n"]))
    m = model(nodes, [("x", [4, 5, 6])], [("y", None)], inits)
    _same(dev, m, {"x": _special(rng, 4, 5, 6)})


def test_slice_opset_1_takes_attributes(dev, rng):
    m = model([_n("Slice", ["x"], starts=[1, 0], ends=[3, -1], axes=[0, 2])],
              [("x", [4, 5, 6])], [("y", None)], opset=9)
    _same(dev, m, {"x": _special(rng, 4, 5, 6)})


def test_slice_of_everything_and_of_nothing(dev, rng):
    m = model([_n("Slice", ["x", "b", "e"], ["y"]),
               _n("Slice", ["x", "b2", "e2"], ["z"])],
              [("x", [3, 4])], [("y", None), ("z", None)],
              [("b", np.array([0], I64)), ("e", np.array([1 << 62], I64)),
               ("b2", np.array([2], I64)), ("e2", np.array([2], I64))])
    y, z = _same(dev, m, {"x": _special(rng, 3, 4)})
    assert z.shape == (0, 4)


def test_slice_with_a_negative_step_of_a_computed_tensor_is_refused():
    m = model([_n("Slice", ["x", "b", "e", "a", "st"])], [("x", [4])],
              [("y", None)],
              [("b", np.array([-1], I64)), ("e", np.array([-5], I64)),
               ("a", np.array([0], I64)), ("st", np.array([-1], I64))])
    with pytest.raises(atc.ConversionError, match="negative step"):
        atc.convert(m)


def test_slice_of_a_constant_is_folded(dev):
    m = model([_n("Slice", ["c", "b", "e", "a", "st"], ["s"]),
               _n("Add", ["x", "s"])], [("x", [2])], [("y", [2])],
              [("c", np.arange(6, dtype=np.float32)),
               ("b", np.array([-1], I64)), ("e", np.array([-5], I64)),
               ("a", np.array([0], I64)), ("st", np.array([-3], I64))])
    assert _ops(m) == ["ADD"]
    y, = _run(dev, m, {"x": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(y, [5, 2])


@pytest.mark.parametrize("axis,split,outs,opset", [
    (2, [1, 2, 3], 3, 13),          # the 'split' input
    (1, None, 5, 13),               # equal parts
    (0, None, 2, 13),
    (-1, [2, 4], 2, 11),            # the 'split' attribute
    (1, "num_outputs", 2, 18),      # 3 and 2
    (2, [0, 6], 2, 13),             # an empty part
], ids=["input", "equal", "leading", "attribute", "num_outputs", "empty"])
@pytest.mark.parametrize("computed", [False, True])
def test_split(dev, rng, axis, split, outs, opset, computed):
    names = ["y%d" % i for i in range(outs)]
    ins, inits, attrs = ["n" if computed else "x"], [], {"axis": axis}
    if split == "num_outputs":
        attrs["num_outputs"] = outs
    elif split is not None and opset >= 13:
        inits.append(("p", np.array(split, I64)))
        ins.append("p")
    elif split is not None:
        attrs["split"] = split
    nodes = [_n("Split", ins, names, **attrs)]
    if computed:
        nodes.insert(0, _n("Neg", ["x"], ["n"]))
    m = model(nodes, [("x", [2, 5, 6])], [(n, None) for n in names], inits,
              opset=opset)
    _same(dev, m, {"x": _special(rng, 2, 5, 6)})


def test_split_into_unequal_parts_without_sizes_is_refused():
    m = model([_n("Split", ["x"], ["a", "b"])], [("x", [5])],
              [("a", None), ("b", None)])
    with pytest.raises(atc.ConversionError, match="equal parts"):
        atc.convert(m)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 1, -2, 7, -9])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4, 3)])
def test_trilu(dev, rng, upper, k, shape):
    ins, inits = ["x"], []
    if k is not None:
        ins.append("k")
        inits.append(("k", np.array(k, I64)))
    m = model([_n("Trilu", ins, upper=upper)], [("x", list(shape))],
              [("y", None)], inits, opset=14)
    assert _ops(m) == ["TRIU" if upper else "TRIL"]
    _same(dev, m, {"x": _special(rng, *shape)})


def test_trilu_of_int64_and_bool(dev, rng):
    m = model([_n("Trilu", ["i"], ["y"]), _n("Trilu", ["b"], ["z"], upper=0)],
              [("i", [3, 3]), ("b", [3, 4])], [("y", None), ("z", None)],
              opset=14, types={"i": TensorProto.INT64, "y": TensorProto.INT64,
                               "b": BOOL, "z": BOOL})
    _same(dev, m, {"i": rng.integers(-1 << 40, 1 << 40, (3, 3)),
                   "b": rng.random((3, 4)) < 0.5})


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("ashape,bshape", [((3, 4), (3, 4)), ((3, 4), (4,)),
                                           ((3, 1), (1, 4)), ((), (2, 3))])
def test_logical(dev, rng, op, ashape, bshape):
    m = model([_n(op, ["a", "b"])], [("a", list(ashape)), ("b", list(bshape))],
              [("y", None)], types={"a": BOOL, "b": BOOL, "y": BOOL})
    _same(dev, m, {"a": np.asarray(rng.random(ashape) < 0.5),
                   "b": np.asarray(rng.random(bshape) < 0.5)})


def test_logical_with_a_constant_and_not(dev, rng):
    m = model([_n("And", ["a", "c"], ["t"]), _n("Not", ["t"], ["y"]),
               _n("Or", ["c", "c"], ["z"])],
              [("a", [2, 3])], [("y", None), ("z", None)],
              [("c", np.array([True, False, True]))],
              types={"a": BOOL, "y": BOOL, "z": BOOL})
    _same(dev, m, {"a": rng.random((2, 3)) < 0.5})


def test_logical_of_numbers_is_refused():
    m = model([_n("And", ["a", "b"])], [("a", [2]), ("b", [2])],
              [("y", None)], types={"y": BOOL})
    with pytest.raises(atc.ConversionError, match="takes BOOL"):
        atc.convert(m)


@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_is_inf_and_is_nan(dev, rng, pos, neg, dtype):
    m = model([_n("IsInf", ["x"], ["i"], detect_positive=pos,
                  detect_negative=neg), _n("IsNaN", ["x"], ["n"])],
              [("x", [3, 5])], [("i", None), ("n", None)],
              types={"x": dtype, "i": BOOL, "n": BOOL}, opset=13)
    x = _special(rng, 3, 5)
    _same(dev, m, {"x": x if dtype == TensorProto.FLOAT
                   else x.astype(np.float16)})


@pytest.mark.parametrize("start,limit,delta,dtype", [
    (1, 10, 3, np.int64), (10, 1, -2, np.int32), (0.5, 3.0, 0.75, np.float32),
    (5, 5, 1, np.int64)])
def test_range_of_constants_is_folded(dev, start, limit, delta, dtype):
    code = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
            np.float32: TensorProto.FLOAT}[dtype]
    m = model([_n("Range", ["a", "b", "d"])], [], [("y", None)],
              [(n, np.array(v, dtype)) for n, v in
               (("a", start), ("b", limit), ("d", delta))],
              types={"y": code})
    y, = _run(dev, m, {})
    want, = ReferenceEvaluator(m).run(None, {})
    np.testing.assert_array_equal(y, want)
    assert y.dtype == want.dtype


def test_range_of_computed_bounds_is_refused():
    m = model([_n("Range", ["a", "b", "d"])], [("a", [])], [("y", None)],
              [("b", np.array(4.0, np.float32)),
               ("d", np.array(1.0, np.float32))])
    with pytest.raises(atc.ConversionError, match="start must be known"):
        atc.convert(m)


@pytest.mark.parametrize("axis,dshape,ishape", [
    (0, (3, 4), (2, 4)), (1, (3, 4), (3, 6)), (-1, (2, 3, 5), (2, 2, 3)),
    (1, (2, 5, 3), (1, 4, 2))])
@pytest.mark.parametrize("data_const,idx_const", [
    (False, False), (False, True), (True, False)])
def test_gather_elements(dev, rng, axis, dshape, ishape, data_const,
                         idx_const):
    """Computed data or indices: one INDEX_SELECT over the data with the
    axis moved last; negative indices from the end; indices shorter than
    the data beyond the axis read its first elements there (as
    onnxruntime and torch.gather; onnx.reference refuses them)."""
    d = _special(rng, *dshape)
    n = dshape[axis]
    i = rng.integers(-n, n, ishape)
    ins = [] if data_const else [("d", list(dshape))]
    ins += [] if idx_const else [("i", list(ishape))]
    inits = ([("d", d)] if data_const else []) + \
        ([("i", i)] if idx_const else [])
    m = model([_n("GatherElements", ["d", "i"], axis=axis)], ins,
              [("y", None)], inits, types={"i": TensorProto.INT64})
    assert "INDEX_SELECT" in _ops(m)
    if all(a == b for j, (a, b) in enumerate(zip(dshape, ishape))
           if j != axis % len(dshape)):
        _same(dev, m, {"d": d, "i": i})
        return
    cut = d[tuple(slice(None) if j == axis % len(dshape) else slice(0, k)
                  for j, k in enumerate(ishape))]
    want = np.take_along_axis(cut, np.where(i < 0, i + n, i), axis=axis)
    y, = _run(dev, m, {"d": d, "i": i})
    assert y.tobytes() == want.tobytes()


def test_gather_elements_of_an_index_out_of_range_fails_the_run(dev):
    from davinci.errors import TaskFailedError
    m = model([_n("GatherElements", ["d", "i"], axis=1)],
              [("d", [2, 3]), ("i", [2, 2])], [("y", None)],
              types={"i": TensorProto.INT64})
    d = np.arange(6, dtype=np.float32).reshape(2, 3)
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([d, np.array([[2, -3], [-1, 0]])])
        np.testing.assert_array_equal(y, [[2, 0], [5, 3]])
        for bad in ([[3, 0], [0, 0]], [[0, 0], [0, -4]]):
            with pytest.raises(TaskFailedError):
                mod.run([d, np.array(bad)])


@pytest.mark.parametrize("axes,keep,opset", [
    ([-1], 1, 13), ([1, 2], 0, 13), (None, 1, 13), ([2], 0, 18)])
def test_reduce_mean(dev, rng, axes, keep, opset):
    """ReduceSum's REDUCE_SUM and a DIV by the count: within a rounding
    or two of numpy's float64 mean."""
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    inits, ins, attrs = [], ["x"], {"keepdims": keep}
    if axes is not None and opset >= 18:
        inits.append(("a", np.array(axes, I64)))
        ins.append("a")
    elif axes is not None:
        attrs["axes"] = axes
    m = model([_n("ReduceMean", ins, **attrs)], [("x", [2, 3, 4])],
              [("y", None)], inits, opset=opset)
    y, = _run(dev, m, {"x": x})
    want = x.astype(np.float64).mean(
        axis=None if axes is None else tuple(axes), keepdims=bool(keep))
    assert y.shape == np.shape(want)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-7)


def test_reduce_mean_over_a_leading_axis(dev, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    m = model([_n("ReduceMean", ["x"], axes=[0])], [("x", [2, 3])],
              [("y", None)])
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([x])
    assert np.array_equal(y, ((x[0] + x[1]) / np.float32(2))[None])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements_of_constants_is_folded(dev, rng, axis):
    d = rng.standard_normal((3, 4)).astype(np.float32)
    n = d.shape[axis]
    i = rng.integers(-n, n, (3, 4) if axis else (2, 4))
    m = model([_n("GatherElements", ["d", "i"], ["g"], axis=axis),
               _n("Neg", ["g"])], [], [("y", None)], [("d", d), ("i", i)])
    assert _ops(m) == ["NEG"]
    y, = _run(dev, m, {})
    want, = ReferenceEvaluator(m).run(None, {})
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("fmod,a,b,dtype", [
    (0, [7, -7, 7, -7], [4, 4, -4, -4], np.int64),
    (1, [7, -7, 7, -7], [4, 4, -4, -4], np.int32),
    (1, [5.5, -5.5, 0.25, -0.0], [2.0, 2.0, -0.5, 3.0], np.float32),
    (0, [5.5, -5.5, 0.25, 1.0], [2.0, 2.0, -0.5, -3.0], np.float32)])
def test_mod_of_constants_is_folded(dev, fmod, a, b, dtype):
    code = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
            np.float32: TensorProto.FLOAT}[dtype]
    m = model([_n("Mod", ["a", "b"], fmod=fmod)], [], [("y", None)],
              [("a", np.array(a, dtype)), ("b", np.array(b, dtype))],
              types={"y": code})
    y, = _run(dev, m, {})
    want, = ReferenceEvaluator(m).run(None, {})
    assert y.dtype == want.dtype
    assert y.tobytes() == want.tobytes()


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8])
@pytest.mark.parametrize("ashape,bshape", [((4, 6), (4, 6)), ((4, 6), (6,)),
                                           ((), (3,))])
def test_mod_of_computed_integers(dev, rng, fmod, dtype, ashape, bshape):
    """Every sign pair, the type's extremes (INT_MIN mod -1 is 0)."""
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, ashape, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, bshape, dtype=dtype, endpoint=True)
    b[b == 0] = 3
    if a.size > 4 and b.size > 4:
        a.flat[:4] = [info.min, info.min, info.max, 7]
        b.flat[:4] = [-1 if info.min else 1, 2, -3 if info.min else 3, -2
                      if info.min else 2]
    code = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
            np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}[dtype]
    m = model([_n("Mod", ["a", "b"], fmod=fmod)],
              [("a", list(ashape)), ("b", list(bshape))], [("y", None)],
              types={"a": code, "b": code, "y": code})
    y, = _run(dev, m, {"a": a, "b": b})
    with np.errstate(all="ignore"):
        want = np.fmod(a, b) if fmod else np.mod(a, b)
    assert y.dtype == want.dtype and y.shape == want.shape
    np.testing.assert_array_equal(y, want)


def test_mod_of_computed_floats_is_c_s_fmod(dev):
    """Against a constant divisor too (test_atc_pinned.py: every case)."""
    a = np.array([7.5, -7.5], np.float32)
    m = model([_n("Mod", ["a", "b"], fmod=1)], [("a", [2])], [("y", None)],
              [("b", np.array([2, 2], np.float32))])
    with Model(dev, atc.convert(m)) as mod:
        y, = mod.run([a])
    assert np.array_equal(y, np.fmod(a, np.float32(2)))


@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (None, 0.5), (-1.0, None),
                                   (2.0, -2.0), (None, None)])
@pytest.mark.parametrize("computed", [False, True])
def test_clip(dev, rng, lo, hi, computed):
    """numpy's clip, NaN through, a min above the max giving the max;
    bounds as initializers or graph inputs (opset 13), attributes before
    opset 11."""
    x = _special(rng, 3, 4) * 4
    ins, inits, feeds = ["x"], [], {"x": x}
    for name, v in (("lo", lo), ("hi", hi)):
        if v is None:
            ins.append("")
        elif computed:
            ins.append(name)
            feeds[name] = np.array(v, np.float32)
        else:
            ins.append(name)
            inits.append((name, np.array(v, np.float32)))
    while ins[-1] == "":
        ins.pop()
    m = model([_n("Clip", ins)], [("x", [3, 4])] + [
        (n, []) for n in feeds if n != "x"], [("y", None)], inits)
    _same(dev, m, feeds)
    attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    old = model([_n("Clip", ["x"], **attrs)], [("x", [3, 4])], [("y", None)],
                opset=10)
    _same(dev, old, {"x": x})


def test_clip_of_int64(dev, rng):
    m = model([_n("Clip", ["x", "lo", "hi"])], [("x", [5])], [("y", None)],
              [("lo", np.array(-3, I64)), ("hi", np.array(1 << 40, I64))],
              types={"x": TensorProto.INT64, "y": TensorProto.INT64})
    _same(dev, m, {"x": np.array([-5, -3, 0, 1 << 41, 7], I64)})
