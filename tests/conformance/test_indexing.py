# SPDX-License-Identifier: GPL-2.0
"""The indexed, selecting and generating ops (opcodes 50-62) beyond their
samples, on every backend: an index out of range fails the task with
nothing written and the stream recovers; INDEX_ADD's duplicates add in
index order however the task is chunked and shared out; SELECT on
strided, broadcast and in-place views; ARGMAX/ARGMIN's NaN, tie and
signed-zero rules; CUMSUM's float64 accumulation over many chunks;
TRIL/TRIU at diagonals past the matrix; Philox against Random123's
known answers, its offsets continuing a stream, its statistics; and
what the device refuses."""

import math

import numpy as np
import pytest

from davinci import ops, opdesc
from davinci.errors import InvalidArgumentError, TaskFailedError

from . import _ref as R

#: Random123's known-answer vectors of philox4x32-10: counter, key, words
KAT = [((0, 0, 0, 0), (0, 0),
        (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
       ((0xffffffff,) * 4, (0xffffffff,) * 2,
        (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
       ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
        (0xa4093822, 0x299f31d0),
        (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]


def test_the_reference_philox_gives_random123s_known_answers():
    for counter, key, words in KAT:
        assert R.philox4x32_10(counter, key) == words


def test_the_device_draws_random123s_first_known_answer(dev):
    out = ops.random_uniform(dev.empty((4,), "float32"), seed=0, offset=0)
    want = np.array(KAT[0][2], np.uint64)
    assert np.array_equal(out.numpy(), R.uniform(want, "float32"))


@pytest.mark.parametrize("op", ["index_select", "index_add"])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("bad", [6, -1])
def test_an_index_out_of_range_fails_the_task_touching_nothing(
        dev, rng, op, index_dtype, bad):
    x = dev.tensor(rng.standard_normal((6, 5)).astype(np.float32))
    src = dev.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    index = dev.tensor(np.array([0, 5, bad, 2]).astype(index_dtype))
    out = dev.tensor(np.full((6 if op == "index_add" else 4, 5), 7.5,
                             np.float32))
    s = dev.stream()
    with pytest.raises(TaskFailedError):
        if op == "index_select":
            ops.index_select(x, index, out=out, stream=s)
        else:
            ops.index_add(out, src, index, out=out, stream=s)
        s.synchronize()
    s.reset()
    assert np.all(out.numpy() == 7.5)
    # the stream runs the same op once the index is in range
    index.buffer.write(np.array([0, 5, 1, 2]).astype(index_dtype))
    if op == "index_select":
        got = ops.index_select(x, index, out=out, stream=s)
        s.synchronize()
        assert np.array_equal(got.numpy(), x.numpy()[[0, 5, 1, 2]])
    else:
        ops.index_add(out, src, index, out=out, stream=s)
        s.synchronize()
        want = np.full((6, 5), 7.5, np.float32)
        np.add.at(want, np.array([0, 5, 1, 2]), src.numpy())
        assert np.array_equal(out.numpy(), want)


def test_index_add_is_index_order_in_any_chunking(dev, rng):
    """3000 indices into 5 rows of 96 columns: the device runs its
    columns in several chunks (on several AI cores), each column's sums in
    index order, as numpy's sequential np.add.at."""
    x = rng.standard_normal((5, 96)).astype(np.float32)
    src = (rng.standard_normal((3000, 96)) *
           10.0 ** rng.integers(-4, 5, (3000, 1))).astype(np.float32)
    idx = rng.integers(0, 5, 3000)
    want = x.copy()
    np.add.at(want, idx, src)
    got = ops.index_add(dev.tensor(x), dev.tensor(src), dev.tensor(idx))
    assert got.numpy().tobytes() == want.tobytes()
    # an embedding's backward: the batch order of the lookups
    table = ops.index_select(dev.tensor(x), dev.tensor(idx[:40]))
    assert np.array_equal(table.numpy(), x[idx[:40]])


def test_select_on_views_broadcast_and_in_place(dev, rng):
    a = rng.standard_normal((6, 8)).astype(np.float32)
    y = rng.standard_normal((8, 6)).astype(np.float32)
    c = rng.integers(0, 2, (6, 1)).astype(np.bool_)
    A, Y, C = dev.tensor(a), dev.tensor(y), dev.tensor(c)
    # x a transpose's view, cond a broadcast column, y a transpose
    got = ops.select(C, A, Y.T)
    assert np.array_equal(got.numpy(), np.where(c, a, y.T))
    # in place (masked_fill_): y's strided view is dst, a 0-dim value
    fill = dev.tensor(np.array([-2.5], np.float32)).reshape(())
    mask = dev.tensor(rng.integers(0, 2, (4, 6)).astype(np.bool_))
    view = Y[::2, :]
    ops.select(mask, fill, view, out=view)
    want = y.copy()
    want[::2, :] = np.where(mask.numpy(), np.float32(-2.5), y[::2, :])
    assert np.array_equal(Y.numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_argmax_and_argmin_take_the_first_nan_and_the_first_tie(dev,
                                                                dtype):
    nan, inf = np.float32("nan"), np.float32("inf")
    rows = np.array([[1, 3, 3, -1], [0, -0.0, 0, -0.0],
                     [2, nan, 5, nan], [-inf, inf, -inf, inf],
                     [nan, 1, 2, 3], [4, 4, 4, 4]], np.float32)
    x = dev.tensor(R.from_f32(rows, dtype), dtype)
    assert ops.argmax(x).numpy().tolist() == [1, 0, 1, 1, 0, 0]
    assert ops.argmin(x).numpy().tolist() == [3, 0, 1, 0, 0, 0]
    assert ops.argmax(x).dtype == "int64"


def test_cumsum_accumulates_float32_in_float64_over_many_chunks(dev, rng):
    x = (rng.standard_normal((700, 200)) *
         10.0 ** rng.integers(-3, 6, (700, 200))).astype(np.float32)
    got = ops.cumsum(dev.tensor(x)).numpy()
    assert got.tobytes() == \
        np.cumsum(x.astype(np.float64), axis=-1).astype(np.float32).tobytes()
    i = rng.integers(-128, 128, (3, 300)).astype(np.int8)
    assert np.array_equal(ops.cumsum(dev.tensor(i)).numpy(),
                          np.cumsum(i, axis=-1, dtype=np.int8))


@pytest.mark.parametrize("diagonal", [-9, -1, 0, 3, 10, 2**31 - 1,
                                      -2**31])
def test_tril_and_triu_at_any_diagonal(dev, rng, diagonal):
    x = rng.standard_normal((3, 4, 7)).astype(np.float32)
    X = dev.tensor(x)
    assert np.array_equal(ops.tril(diagonal, X).numpy(), np.tril(x, diagonal))
    assert np.array_equal(ops.triu(diagonal, X).numpy(), np.triu(x, diagonal))


def test_philox_offsets_continue_one_stream(dev):
    """Block b of (seed, offset) is block b - 1 of (seed, offset + 1)."""
    a = ops.random_uniform(dev.empty((4002,), "float32"), seed=42).numpy()
    b = ops.random_uniform(dev.empty((3998,), "float32"), seed=42,
                           offset=1).numpy()
    assert np.array_equal(a[4:], b[:3998])
    c = ops.random_uniform(dev.empty((4002,), "float32"), seed=43).numpy()
    assert not np.array_equal(a, c)


def test_uniform_and_bernoulli_have_their_statistics(dev):
    n = 200_000
    u = ops.random_uniform(dev.empty((n,), "float32"), seed=7).numpy()
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / n)
    hist = np.histogram(u, bins=10, range=(0, 1))[0]
    assert np.all(np.abs(hist - n / 10) < 5 * np.sqrt(n / 10))
    for dt in ("float16", "bfloat16"):
        h = ops.random_uniform(dev.empty((n,), dt), seed=7).numpy()
        assert h.min() >= 0 and h.max() < 1
    m = ops.bernoulli(0.3, dev.empty((n,), "bool"), seed=9).numpy()
    assert abs(m.mean() - 0.3) < 5 * np.sqrt(0.3 * 0.7 / n)
    assert np.array_equal(
        m, ops.bernoulli(0.3, dev.empty((n,), "bool"), seed=9).numpy())


def _refused(dev, task, out):
    """The task fails with INVALID_TASK at the device, out untouched."""
    s = dev.stream()
    s.launch(task)
    with pytest.raises(TaskFailedError):
        s.synchronize()
    s.reset()


def test_the_device_refuses_what_has_no_answer(dev):
    x = dev.tensor(np.ones((4, 6), np.float32))
    out = dev.tensor(np.zeros(8, np.int64))
    # an argmax of rows of no elements
    _refused(dev, opdesc.describe("argmax", "float32", dst=out.dev_addr,
                                  srcs=[x.dev_addr], rows=(4, 0)), out)
    # matrices of 3 rows do not tile 4
    _refused(dev, opdesc.describe("tril", "float32", dst=out.dev_addr,
                                  srcs=[x.dev_addr], mnk=(4, 6, 3), attr=0),
             out)
    assert np.all(out.numpy() == 0)


def test_normal_has_its_statistics_and_continues_the_philox_stream(dev):
    n = 200_000
    z = ops.random_normal(dev.empty((n,), "float32"), seed=11).numpy()
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / n)
    # the histogram against the normal's cdf, bins of 0.5 in [-3, 3]
    edges = np.arange(-3, 3.01, 0.5)
    hist = np.histogram(z, bins=edges)[0]
    cdf = 0.5 * (1 + np.array([math.erf(e / math.sqrt(2)) for e in edges]))
    want = n * np.diff(cdf)
    assert np.all(np.abs(hist - want) < 5 * np.sqrt(want))
    # the even and odd elements (a pair's cos and sin) are uncorrelated
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5 / np.sqrt(n / 2)
    s = ops.random_normal(dev.empty((n,), "float32"), 10.0, 0.5,
                          seed=11).numpy()
    assert np.abs(s - (10 + 0.5 * z.astype(np.float64))).max() < 4e-6
    b = ops.random_normal(dev.empty((n - 4,), "float32"), seed=11,
                          offset=1).numpy()
    assert np.array_equal(z[4:], b)
    for dt in ("float16", "bfloat16"):
        h = ops.random_normal(dev.empty((n,), dt), seed=11).numpy()
        assert abs(h.astype(np.float64).mean()) < 5 / np.sqrt(n)


def test_normal_refuses_a_std_or_mean_that_is_no_number(dev):
    out = dev.tensor(np.zeros(8, np.float32))
    for mean, std in ((0.0, -1.0), (0.0, math.nan), (math.inf, 1.0),
                      (0.0, -0.0)):
        with pytest.raises(InvalidArgumentError):
            ops.random_normal(out, mean, std)
        block = dev.malloc(64)
        block.write(opdesc.pack_params(
            "random_normal", seed=0, offset=0,
            mean=int(np.float64(mean).view(np.uint64)),
            std=int(np.float64(std).view(np.uint64))))
        _refused(dev, opdesc.describe("random_normal", "float32",
                                      dst=out.dev_addr, count=8,
                                      params_at=block.dev_addr), out)
        block.free()
    assert np.all(out.numpy() == 0)
