# SPDX-License-Identifier: GPL-2.0
"""Computed inputs davinci-atc needs as constants (Reshape's shape, the
axes of ReduceSum, ReduceMean, Squeeze and Unsqueeze, Split's sizes,
Expand's and ConstantOfShape's shape), as ONNX's node tests give them:
graph inputs. The converter pins each to the value the model's declared
shapes imply (lower.pinned) and the model checks it when it runs: every
form ONNX allows for that value (-1 and 0 in a shape, negative axes, axes
in any order) gives numpy's result, any other value fails the run with
nothing returned, never a result of another shape or sum. Trilu's k is
computed for real: a CMP of each element's column minus row with k and a
SELECT. Slice of computed bounds and steps computes its starts and sizes
on the device and picks by INDEX_SELECT; an integer Pow squares, a
computed integer exponent of a float one is CAST, BatchNormalization of
computed parameters (and in training mode) runs on the device; a Mod of
computed floats is C's fmod by binary long division."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from davinci import atc  # noqa: E402
from davinci.errors import TaskFailedError  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402

I64 = TensorProto.INT64


def _runs(dev, m, ins, values, expect, rtol=0.0):
    """Run ``m`` with each of ``values`` as its last input: numpy's result
    (``expect(value)``; a sum within ``rtol`` of numpy's, whose order is
    not the device's) or, where ``expect`` gives None, a failed run."""
    with Model(dev, atc.convert(m)) as mod:
        for v in values:
            want = expect(v)
            arg = np.array(v, np.int64)
            if want is None:
                with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                    mod.run(ins + [arg])
                continue
            got, = mod.run(ins + [arg])
            assert got.shape == want.shape and np.allclose(
                got, want, rtol=rtol, atol=rtol, equal_nan=True), v


def test_reshape_of_a_computed_shape_is_checked_when_it_runs(dev, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"])],
              [("x", [2, 3, 4]), ("s", [2])], [("y", [6, 4])],
              types={"s": I64}, opset=14)
    ok = x.reshape(6, 4)
    _runs(dev, m, [x], [[6, 4], [-1, 4], [6, -1], [0, 4], [4, 6],
                        [-1, -1], [24, 1], [6, 0]],
          lambda s: ok if s in ([6, 4], [-1, 4], [6, -1]) else None)


def test_reduce_sum_of_computed_axes_in_any_order(dev, rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    m = model([helper.make_node("ReduceSum", ["x", "a"], ["y"],
                                keepdims=0)],
              [("x", [3, 4, 5]), ("a", [2])], [("y", [3])],
              types={"a": I64})
    want = x.astype(np.float64).sum(axis=(1, 2))
    _runs(dev, m, [x], [[1, 2], [2, 1], [-1, -2], [1, -1], [0, 1], [1, 1],
                        [2, 2], [1, 3]],
          lambda a: want if sorted(v % 3 for v in a) == [1, 2] else None,
          rtol=1e-5)


def test_reduce_over_leading_axes_moves_them_last(dev, rng):
    """REDUCE_SUM sums trailing axes: the others are moved before them."""
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    m = model([helper.make_node("ReduceMean", ["x"], ["y"], axes=[0, 2])],
              [("x", [3, 4, 5])], [("y", [1, 4, 1])], opset=13)
    with Model(dev, atc.convert(m)) as mod:
        got, = mod.run([x])
    assert got.shape == (1, 4, 1)
    assert np.allclose(got, x.mean(axis=(0, 2), keepdims=True), rtol=1e-5,
                       atol=0)


def test_computed_axes_the_shapes_leave_ambiguous_are_chosen(dev, rng):
    """3 x 2 x 2 to 3 x 2 sums axis 1 or axis 2: both are reduced, and
    the one the axes name is picked when the model runs."""
    x = rng.standard_normal((3, 2, 2)).astype(np.float32)
    m = model([helper.make_node("ReduceSum", ["x", "a"], ["y"],
                                keepdims=0)],
              [("x", [3, 2, 2]), ("a", [1])], [("y", [3, 2])],
              types={"a": I64})
    _runs(dev, m, [x], [[1], [2], [-1], [-2], [0], [3]],
          lambda a: None if a[0] % 3 == 0 or a[0] == 3 else
          x.sum(axis=a[0] % 3), rtol=1e-6)
    y = rng.standard_normal((1, 3, 1, 5)).astype(np.float32)
    m = model([helper.make_node("Unsqueeze", ["y", "a"], ["z"])],
              [("y", [1, 3, 1, 5]), ("a", [1])], [("z", [1, 3, 1, 1, 5])],
              types={"a": I64})
    _runs(dev, m, [y], [[2], [3], [-2], [-3], [0], [4]],
          lambda a: y.reshape(1, 3, 1, 1, 5) if a[0] % 5 in (2, 3)
          else None)


def test_unsqueeze_and_squeeze_of_computed_axes(dev, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    m = model([helper.make_node("Unsqueeze", ["x", "a"], ["y"])],
              [("x", [3, 4]), ("a", [2])], [("y", [3, 1, 4, 1])],
              types={"a": I64})
    ok = x.reshape(3, 1, 4, 1)
    _runs(dev, m, [x], [[1, 3], [3, 1], [-1, 1], [1, -3], [0, 3], [1, 1]],
          lambda a: ok if sorted(v % 4 for v in a) == [1, 3] else None)
    m = model([helper.make_node("Squeeze", ["x", "a"], ["y"])],
              [("x", [3, 1, 4, 1]), ("a", [1])], [("y", [3, 4, 1])],
              types={"a": I64})
    _runs(dev, m, [ok], [[1], [-3], [3]],
          lambda a: x.reshape(3, 4, 1) if a[0] % 4 == 1 else None)


def test_split_and_expand_of_computed_sizes(dev, rng):
    x = rng.standard_normal((6, 2)).astype(np.float32)
    m = model([helper.make_node("Split", ["x", "s"], ["a", "b"])],
              [("x", [6, 2]), ("s", [2])], [("a", [2, 2]), ("b", [4, 2])],
              types={"s": I64})
    with Model(dev, atc.convert(m)) as mod:
        a, b = mod.run([x, np.array([2, 4], np.int64)])
        assert np.array_equal(a, x[:2]) and np.array_equal(b, x[2:])
        with pytest.raises(TaskFailedError):
            mod.run([x, np.array([3, 3], np.int64)])
    y = rng.standard_normal((3, 1)).astype(np.float32)
    m = model([helper.make_node("Expand", ["y", "s"], ["z"])],
              [("y", [3, 1]), ("s", [3])], [("z", [2, 3, 4])],
              types={"s": I64}, opset=13)
    _runs(dev, m, [y], [[2, 3, 4], [2, 1, 4], [2, 3, 1], [2, 3, 5]],
          lambda s: np.broadcast_to(y, (2, 3, 4)) if s[2] == 4 and
          s[:2] in ([2, 3], [2, 1]) else None)


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_of_a_computed_k(dev, rng, upper):
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    x[0, 0, 0], x[1, 2, 1], x[0, 1, 4] = np.nan, -np.inf, -0.0
    m = model([helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)],
              [("x", [2, 3, 5]), ("k", [])], [("y", [2, 3, 5])],
              types={"k": I64}, opset=14)
    f = np.triu if upper else np.tril
    _runs(dev, m, [x], [-7, -3, -1, 0, 1, 2, 4, 5, 9, -(1 << 62)],
          lambda k: f(x, k))


def test_slice_of_computed_bounds_and_steps(dev, rng):
    """Bounds and steps computed: start and size as ONNX's on the device,
    the indices by INDEX_SELECT; a size other than the declared one fails
    the run."""
    x = rng.standard_normal((6, 5)).astype(np.float32)
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"])],
              [("x", [6, 5]), ("s", [2]), ("e", [2]), ("a", [2]),
               ("p", [2])], [("y", [3, 2])],
              types={n: I64 for n in "seap"})
    big = (1 << 63) - 1
    cases = [  # starts, ends, axes, steps
        ([0, 1], [3, 3], [0, 1], [1, 1]), ([-6, -4], [-3, 3], [0, -1],
                                           [1, 1]),
        ([5, 4], [0, 1], [0, 1], [-2, -2]), ([big, big], [-1 - big, -1 - big],
                                             [0, 1], [-2, -3]),
        ([0, 0], [6, 5], [0, 1], [2, 3]), ([-100, 3], [100, 100], [0, 1],
                                           [2, 1]),
        ([0, 1], [3, 4], [0, 1], [1, 1]), ([0, 0], [3, 2], [1, 0], [1, 1]),
        ([0, 0], [3, 2], [0, 1], [0, 1])]
    with Model(dev, atc.convert(m)) as mod:
        for s, e, a, p in cases:
            sl = [slice(None)] * 2
            for si, ei, ai, pi in zip(s, e, a, p):
                sl[ai] = slice(si, ei, pi) if pi else None
            want = None if None in sl else x[tuple(sl)]
            args = [x] + [np.array(v, np.int64) for v in (s, e, a, p)]
            if want is None or want.shape != (3, 2):
                with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                    mod.run(args)
                continue
            got, = mod.run(args)
            assert np.array_equal(got, want), (s, e, a, p)


@pytest.mark.parametrize("training", [0, 1])
def test_batch_norm_of_computed_parameters(dev, rng, training):
    """Scale, bias, mean and var as inputs: the per-channel factors on the
    device; in training mode the batch's statistics and the running ones
    (onnx.reference's, which onnxruntime's match)."""
    from onnx.reference import ReferenceEvaluator
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    s, bias, mean = (rng.standard_normal(3).astype(np.float32)
                     for _ in range(3))
    var = rng.random(3).astype(np.float32) + 0.5
    outs = ["y", "m", "v"] if training else ["y"]
    m = model([helper.make_node("BatchNormalization",
                                ["x", "s", "b", "mean", "var"], outs,
                                training_mode=training, epsilon=1e-3,
                                momentum=0.8)],
              [("x", [2, 3, 4, 5]), ("s", [3]), ("b", [3]), ("mean", [3]),
               ("var", [3])],
              [("y", [2, 3, 4, 5])] + [(o, [3]) for o in outs[1:]],
              opset=15)
    ins = [x, s, bias, mean, var]
    want = ReferenceEvaluator(m).run(None, dict(zip(
        ["x", "s", "b", "mean", "var"], ins)))
    with Model(dev, atc.convert(m)) as mod:
        got = mod.run(ins)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_pow_of_a_computed_integer_exponent(dev, rng):
    """A computed INT64 exponent is cast to FLOAT, which holds it exactly
    up to 2^24: the run fails for one beyond."""
    x = (rng.random(4) * 2 + 0.5).astype(np.float32)
    x[0] = -1.5
    m = model([helper.make_node("Pow", ["x", "y"], ["z"])],
              [("x", [4]), ("y", [4])], [("z", [4])],
              types={"y": I64}, opset=15)
    with Model(dev, atc.convert(m)) as mod:
        y = np.array([3, -2, 0, 5], np.int64)
        got, = mod.run([x, y])
        np.testing.assert_allclose(got, x.astype(np.float64) ** y,
                                   rtol=1e-6)
        for bad in ((1 << 24) + 1, -(1 << 24) - 1):
            with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                mod.run([x, np.array([1, 2, bad, 3], np.int64)])


@pytest.mark.parametrize("code,dtype", [(TensorProto.INT32, np.int32),
                                        (I64, np.int64)])
def test_integer_pow_by_squaring(dev, code, dtype):
    """An integer X to an integer Y is exact, as onnxruntime's double
    power where that is exact; a negative Y, one of 64 or more, or a
    result past 2^30 (INT32) or 2^52 (INT64) fails the run."""
    x = np.repeat(np.arange(-6, 7, dtype=dtype), 11)
    y = np.tile(np.arange(11, dtype=dtype), 13)
    keep = np.abs(x.astype(np.float64)) ** y < 2.0 ** 30
    x, y = x[keep], y[keep]
    m = model([helper.make_node("Pow", ["x", "y"], ["z"])],
              [("x", [x.size]), ("y", [x.size])], [("z", [x.size])],
              types={n: code for n in "xyz"}, opset=15)
    with Model(dev, atc.convert(m)) as mod:
        got, = mod.run([x, y])
        assert got.dtype == dtype and np.array_equal(got, x ** y)
        big = 40 if dtype == np.int32 else 60
        for bad_x, bad_y in ((2, -1), (1, 64), (2, big)):
            xs, ys = x.copy(), y.copy()
            xs[0], ys[0] = bad_x, bad_y
            with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                mod.run([xs, ys])


def test_integer_pow_of_a_whole_float_exponent(dev):
    """onnxruntime truncates the double power of an integer X and a FLOAT
    Y: exact for a whole Y, the run failing for any other."""
    x = np.array([-3, 2, 5, 7], np.int32)
    m = model([helper.make_node("Pow", ["x", "y"], ["z"])],
              [("x", [4]), ("y", [4])], [("z", [4])],
              types={"x": TensorProto.INT32, "z": TensorProto.INT32},
              opset=15)
    with Model(dev, atc.convert(m)) as mod:
        got, = mod.run([x, np.array([3, 0, -0.0, 9], np.float32)])
        assert np.array_equal(got, np.array([-27, 1, 1, 7 ** 9], np.int32))
        for bad in (0.5, np.nan, 1e10):
            with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                mod.run([x, np.array([1, bad, 2, 3], np.float32)])


@pytest.mark.parametrize("code,dtype", [(TensorProto.INT32, np.int32),
                                        (I64, np.int64)])
def test_range_of_computed_integer_bounds(dev, code, dtype):
    """start + i * delta on the device; the run fails unless the count is
    the declared one."""
    m = model([helper.make_node("Range", ["a", "b", "d"], ["y"])],
              [("a", []), ("b", []), ("d", [])], [("y", [4])],
              types={n: code for n in "abdy"}, opset=11)

    def want(a, b, d):
        r = np.arange(a, b, d, dtype=np.int64) if d else np.zeros(0)
        return r.astype(dtype) if r.size == 4 else None
    with Model(dev, atc.convert(m)) as mod:
        for a, b, d in ((0, 4, 1), (10, 2, -2), (-3, 5, 2), (7, 8, 1),
                        (0, 3, 1), (0, 4, 0), (-5, -13, -2), (0, 10, 3)):
            args = [np.array(v, dtype) for v in (a, b, d)]
            w = want(a, b, d)
            if w is None:
                with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                    mod.run(args)
                continue
            got, = mod.run(args)
            assert got.dtype == dtype and np.array_equal(got, w), (a, b, d)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype,code", [
    (np.float32, TensorProto.FLOAT), (np.float16, TensorProto.FLOAT16)])
def test_float_mod_is_c_s_fmod_bit_for_bit(dev, rng, fmod, dtype, code):
    """Binary long division by |b| * 2^k: every step exact, so C's fmod
    (numpy's) bit for bit, at subnormal divisors and huge dividends, the
    signs of zeros, infinities and NaN; fmod 0 numpy's mod."""
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max,
                        -info.max, info.tiny, info.smallest_subnormal,
                        -info.smallest_subnormal, 1.0, -1.0, 3.0, -7.5],
                       dtype)
    rand = (rng.standard_normal(40) * 10.0 ** rng.integers(
        -4, 4, 40)).astype(dtype)
    vals = np.concatenate([special, rand])
    a, b = (v.reshape(-1) for v in np.meshgrid(vals, vals))
    m = model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
              [("a", [a.size]), ("b", [a.size])], [("y", [a.size])],
              types={n: code for n in "aby"})
    with Model(dev, atc.convert(m)) as mod:
        got, = mod.run([a, b])
    with np.errstate(all="ignore"):
        want = np.fmod(a, b) if fmod else np.mod(a, b)
    if fmod:
        assert np.array_equal(got.view(np.uint16 if dtype == np.float16
                                       else np.uint32)[~np.isnan(want)],
                              want.view(np.uint16 if dtype == np.float16
                                        else np.uint32)[~np.isnan(want)])
    else:   # numpy's r + b rounds once, as ours; a zero's sign may differ
        np.testing.assert_array_equal(got[~np.isnan(want)],
                                      want[~np.isnan(want)])
    assert np.array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("ratio_type", [TensorProto.FLOAT,
                                        TensorProto.FLOAT16])
def test_dropout_of_computed_ratio_and_training_mode(dev, ratio_type):
    """Dropout whose ratio and training_mode are graph inputs: the output
    is the input and the mask all true where training mode is false or
    the ratio 0 (onnxruntime's); a run that would drop at random (true
    and a ratio not 0, a NaN one too) fails with nothing returned."""
    rt = np.float32 if ratio_type == TensorProto.FLOAT else np.float16
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"],
                                name="d0")],
              [("x", [2, 3]), ("r", []), ("t", [])],
              [("y", [2, 3]), ("mask", [2, 3])],
              types={"r": ratio_type, "t": TensorProto.BOOL,
                     "mask": TensorProto.BOOL})
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    with Model(dev, atc.convert(m)) as mod:
        for r, t in ((0.0, True), (-0.0, True), (0.0, False),
                     (0.5, False), (np.nan, False)):
            y, mask = mod.run([x, np.array(r, rt), np.array(t)])
            np.testing.assert_array_equal(y, x)
            assert mask.dtype == np.bool_ and mask.all()
        for r in (0.5, 1e-4, np.nan):
            with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                mod.run([x, np.array(r, rt), np.array(True)])


def test_dropout_of_computed_training_mode_and_constant_ratio(dev):
    """A constant ratio of 0 never drops (no check); a constant 0.3 or
    the default 0.5 fails the run in training mode only."""
    for ins, inits, drops in ((["x", "r", "t"], [("r", np.float32(0.0))],
                               False),
                              (["x", "r", "t"], [("r", np.float32(0.3))],
                               True),
                              (["x", "", "t"], [], True)):
        m = model([helper.make_node("Dropout", ins, ["y"], name="d0")],
                  [("x", [4]), ("t", [])], [("y", [4])], inits,
                  types={"t": TensorProto.BOOL})
        x = np.array([1.0, -2.0, 3.5, 0.0], np.float32)
        with Model(dev, atc.convert(m)) as mod:
            y, = mod.run([x, np.array(False)])
            np.testing.assert_array_equal(y, x)
            if drops:
                with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                    mod.run([x, np.array(True)])
            else:
                y, = mod.run([x, np.array(True)])
                np.testing.assert_array_equal(y, x)


def _ort_count(start, limit, delta) -> int:
    """onnxruntime's Range count: ceil((limit - start) / delta) in double,
    the bounds cast up (core/providers/cpu/generator/range.cc); None where
    it refuses (delta 0, a count not finite)."""
    if delta == 0:
        return None
    q = np.ceil((np.float64(limit) - np.float64(start)) / np.float64(delta))
    return max(int(q), 0) if np.isfinite(q) else None


def _range_refused(n, start, limit, delta) -> bool:
    """Bounds whose count n davinci-atc does not prove at run time."""
    a = abs(np.float64(delta))
    return not np.isfinite(a) or n > 0 and any(
        v != 0 and abs(np.float64(v)) < a * 2.0 ** -10 for v in (start, limit))


def _range_bounds(rng, dt):
    """Bounds whose counts sit on and beside the ceil's steps: limit at
    start + k * delta exactly and one ulp either side, of both signs."""
    out = [(1, 5, 2), (10, 6, -3), (0, 0, 1), (0, 1, -1), (5, 1, 2),
           (0, 1, 0.1), (0, 0.3, 0.1), (-1, 1, 0.25), (3, 3.5, 0.125),
           (0, 1, np.inf), (0, np.nan, 1), (0, 1, 0), (1e10, -1e-10, 1e9),
           (0, 2.0 ** -30, 2.0 ** -30), (-2.0 ** -40, 3, 1)]
    for _ in range(12):
        start = dt(rng.standard_normal() * 10)
        delta = dt(rng.choice([-1, 1]) * rng.uniform(0.01, 3))
        k = int(rng.integers(0, 5))
        lim = dt(start + dt(k) * delta)
        for v in (lim, np.nextafter(lim, dt(np.inf)),
                  np.nextafter(lim, dt(-np.inf))):
            out.append((start, v, delta))
    return [tuple(dt(b) for b in bounds) for bounds in out]


@pytest.mark.parametrize("elem,dt", [(TensorProto.FLOAT, np.float32),
                                     (TensorProto.FLOAT16, np.float16)])
def test_range_of_computed_float_bounds(dev, elem, dt):
    """Range of computed float bounds: start + i * delta (FLOAT's MUL and
    ADD, bit for bit, a half type cast once) where onnxruntime's count is
    the declared one, a failed run where it is any other (each bound
    beside a step of the ceil, a zero or NaN delta), and where the exact
    count may not be double's (a bound below 2^-10 of delta) or delta is
    infinite (onnxruntime: an empty result), a failed run too."""
    with np.errstate(all="ignore"):
        bounds = _range_bounds(np.random.default_rng(5), dt)
        counts = [_ort_count(*b) for b in bounds]
    assert {0, 1, 2, 3, 4} <= set(counts)
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    for n in sorted({c for c in counts if c is not None and c <= 5} |
                    {10}):         # arange(0, 1, 0.1)'s
        m = model([helper.make_node("Range", ["s", "l", "d"], ["y"],
                                    name="r0")],
                  [("s", []), ("l", []), ("d", [])], [("y", [n])],
                  types={k: elem for k in ("s", "l", "d", "y")}, opset=11)
        sess = ort and elem == TensorProto.FLOAT and \
            ort.InferenceSession(m.SerializeToString(),
                                 providers=["CPUExecutionProvider"])
        with Model(dev, atc.convert(m)) as mod:
            for b, c in zip(bounds, counts):
                args = [np.array(v, dt) for v in b]
                if sess and c is not None:
                    got = sess.run(None, dict(zip("sld", args)))[0]
                    assert len(got) == c, b
                if c != n or _range_refused(n, *b):
                    with pytest.raises(TaskFailedError):
                        mod.run(args)
                    continue
                y, = mod.run(args)
                s, d = np.float32(b[0]), np.float32(b[2])
                want = (np.arange(n, dtype=np.float32) * d + s).astype(dt)
                np.testing.assert_array_equal(y, want)


def test_range_of_computed_float_bounds_refuses_a_long_result():
    m = model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="r0")],
              [("s", []), ("l", []), ("d", [])], [("y", [5000])], opset=11)
    with pytest.raises(atc.ConversionError, match="at most 4095"):
        atc.convert(m)


def test_dropout_of_computed_ratio_in_constant_training_mode(dev):
    """training_mode a constant true: the computed ratio must be 0 when
    it runs (a constant false needs no check: any ratio runs)."""
    for train, drops in ((True, True), (False, False)):
        m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y"],
                                    name="d0")],
                  [("x", [3]), ("r", [])], [("y", [3])],
                  [("t", np.array(train))])
        x = np.array([1.0, -2.0, 0.5], np.float32)
        with Model(dev, atc.convert(m)) as mod:
            y, = mod.run([x, np.array(0.0, np.float32)])
            np.testing.assert_array_equal(y, x)
            if drops:
                with pytest.raises(TaskFailedError, match="INDEX_SELECT"):
                    mod.run([x, np.array(0.25, np.float32)])
            else:
                y, = mod.run([x, np.array(0.25, np.float32)])
                np.testing.assert_array_equal(y, x)
