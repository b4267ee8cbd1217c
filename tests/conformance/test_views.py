# SPDX-License-Identifier: GPL-2.0
"""DeviceTensor views (transposed, sliced, expanded) and broadcasting in
davinci.ops: an elementwise op reads and writes them as they are, in one
strided task; every result is numpy's on the same views."""

import numpy as np
import pytest

import davinci
from davinci import ops, views

BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
          ("maximum", np.maximum), ("minimum", np.minimum)]


def _tasks_between(s, run):
    """Tasks ``run`` queued on stream ``s``."""
    before = s.nop(0)
    run()
    return s.nop(0) - before - 1


@pytest.mark.parametrize("name,ref", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("ashape,bshape", [
    ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((5,), ()),
    ((2, 1, 3), (4, 1))])
def test_binary_ops_broadcast_as_numpy(dev, rng, name, ref, dtype, ashape,
                                       bshape):
    a = rng.integers(-50, 50, ashape).astype(dtype)
    b = rng.integers(-50, 50, bshape).astype(dtype)
    got = getattr(ops, name)(dev.tensor(a), dev.tensor(b))
    want = ref(a, b)
    assert got.shape == want.shape
    assert np.array_equal(got.numpy(), want)


@pytest.mark.parametrize("make,ref", [
    (lambda t: t.T, lambda a: a.T),
    (lambda t: t[1:, ::2], lambda a: a[1:, ::2]),
    (lambda t: t[:, 2], lambda a: a[:, 2]),
    (lambda t: t[0:2].transpose(0, 1), lambda a: a[0:2].T),
    (lambda t: t[0:1].expand(3, 6), lambda a: np.broadcast_to(a[0:1], (3, 6))),
])
def test_ops_read_views_without_a_copy(dev, rng, make, ref):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    x = dev.tensor(a)
    s = dev.stream()
    v = make(x)
    assert np.array_equal(v.numpy(), ref(a))
    out = {}
    n = _tasks_between(s, lambda: out.update(
        r=ops.relu(v, stream=s), e=ops.exp(v, stream=s)))
    s.synchronize()
    assert n == 2                       # one task each, no copy first
    # the reference on a dense copy: in the QEMU guest (TCG) numpy's
    # maximum of a strided view came out wrong, its dense loop right
    dense = np.ascontiguousarray(ref(a))
    assert np.array_equal(out["r"].numpy(), np.where(dense > 0, dense, 0))
    want = ops.exp(dev.tensor(dense)).numpy()
    assert np.array_equal(out["e"].numpy(), want)   # the dense op's bits


def test_out_a_view_writes_only_its_elements(dev, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    y = dev.tensor(np.full((4, 6), -1, np.float32))
    ops.add(dev.tensor(a), dev.tensor(a[0]), out=y[:, 1:4].T[:, :])
    want = np.full((4, 6), -1, np.float32)
    want[:, 1:4] = (a + a[0]).T
    assert np.array_equal(y.numpy(), want)
    # a strided copy into a transposed destination, and a cast into one
    z = dev.tensor(np.zeros((4, 3), np.float32))
    ops.identity(dev.tensor(a), out=z.T)
    assert np.array_equal(z.numpy(), a.T)
    w = dev.tensor(np.zeros((4, 3), np.int32))
    ops.cast(dev.tensor(a * 10), "int32", out=w.T)
    assert np.array_equal(w.numpy(), np.trunc(a * 10).astype(np.int32).T)


def test_in_place_on_a_view(dev, rng):
    a = rng.standard_normal((4, 4)).astype(np.float32)
    x = dev.tensor(a)
    v = x[::2].T
    ops.mul(v, v, out=v)
    want = a.copy()
    want[::2] = a[::2] * a[::2]
    assert np.array_equal(x.numpy(), want)


def test_views_a_device_cannot_run_are_refused_before_submitting(dev):
    x = dev.tensor(np.arange(16, dtype=np.float32).reshape(4, 4))
    with pytest.raises(davinci.ShapeError, match="broadcast"):
        ops.add(x, dev.tensor(np.zeros(3, np.float32)))
    with pytest.raises(davinci.ShapeError, match="twice"):
        ops.relu(x[0], out=dev.empty((4,)).as_strided((4,), (0,)))
    with pytest.raises(davinci.InvalidArgumentError, match="overlaps"):
        ops.relu(x, out=x.T)
    with pytest.raises(davinci.ShapeError, match="step"):
        x[::-1]
    with pytest.raises(davinci.ShapeError, match="contiguous"):
        x.T.reshape(16)
    with pytest.raises(davinci.ShapeError, match="needs"):
        x.as_strided((4, 5), (4, 1))
    with pytest.raises(davinci.ShapeError, match="dense out"):
        ops.softmax(x, out=dev.empty((4, 4)).T)
    # nothing ran: x is as it was
    assert np.array_equal(x.numpy(), np.arange(16).reshape(4, 4))


def test_other_ops_copy_a_view_dense_and_free_the_copy(dev, rng):
    a = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    x, y = dev.tensor(a), dev.tensor(b)
    with dev.tensor(np.ascontiguousarray(a.T)) as xt:
        with ops.matmul(xt, y) as dense:
            want = dense.numpy()
    ops.identity(x.T).free()            # the parameter-block pool's slab
    used = dev.mem_info().ctx_used
    got = ops.matmul(x.T, y)
    sm = ops.softmax(y.T)
    assert np.array_equal(got.numpy(), want)
    assert np.allclose(sm.numpy(), np.exp(b.T) / np.exp(b.T).sum(-1,
                                                                 keepdims=True),
                       rtol=1e-5)
    got.free()
    sm.free()
    assert dev.mem_info().ctx_used == used


def test_view_geometry_is_numpys():
    a = np.zeros((3, 4, 5), np.float32)
    el = [s // 4 for s in a.strides]
    for key in [(1,), (slice(None), 2), (Ellipsis, slice(1, None, 2)),
                (slice(2, 0), 1)]:
        shape, strides, off = views.sliced(a.shape, tuple(el), key)
        want = a[key]
        assert shape == want.shape, key
        if want.size:
            assert strides == tuple(s // 4 for s in want.strides), key
    assert views.broadcast_shapes((3, 1, 5), (4, 1), ()) == (3, 4, 5)
    assert views.is_contiguous((3, 1, 5), (5, 99, 1))
    assert not views.is_contiguous((3, 5), (1, 3))
