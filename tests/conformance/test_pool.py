# SPDX-License-Identifier: GPL-2.0
"""The pooling ops (MAXPOOL2D and AVGPOOL2D, their gradients) against CPU
torch: F.max_pool2d with its indices, F.avg_pool2d, F.adaptive_avg_pool2d
and torch.autograd for the gradients, over windows of 1 to 7, strides,
padding, dilation, ceil_mode, count_include_pad, divisors, odd shapes,
batches, 1-D and global pooling and NaNs. Float32 is torch's bit for bit
(torch's order is NUMERICS.md's); float16 and bfloat16 forwards too, their
gradients within the rounding torch adds to each partial sum. Shapes
that do not fit raise ShapeError, blocks the core refuses fail the task
touching nothing."""

import numpy as np
import pytest

import davinci
from davinci import _uapi, ops, opdesc, schema

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: (x shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = {
    "2x2 stride 2": ((2, 3, 8, 8), 2, 2, 0, 1, False),
    "3x3 stride 2 pad 1": ((2, 4, 9, 11), 3, 2, 1, 1, False),
    "3x3 stride 1": ((1, 2, 7, 5), 3, 1, 0, 1, False),
    "ceil mode": ((3, 2, 7, 10), 3, 2, 1, 1, True),
    "ceil mode drops a window": ((1, 3, 5, 6), 2, 3, 1, 1, True),
    "dilation": ((2, 2, 11, 9), 3, (2, 1), 1, (2, 3), False),
    "dilation ceil": ((1, 3, 10, 12), (2, 3), 2, (1, 1), 2, True),
    "non-square odd": ((5, 1, 13, 7), (3, 2), (1, 2), (1, 1), 1, True),
    "global": ((2, 3, 7, 5), (7, 5), 1, 0, 1, False),
    "1x1": ((2, 2, 3, 4), 1, 1, 0, 1, False),
}

#: (x shape, kernel, stride, padding, ceil_mode, count_include_pad,
#: divisor)
AVG_CASES = {
    "2x2 stride 2": ((2, 3, 8, 8), 2, 2, 0, False, True, None),
    "3x3 pad 1 with pad": ((2, 4, 9, 11), 3, 2, 1, False, True, None),
    "3x3 pad 1 without pad": ((2, 4, 9, 11), 3, 2, 1, False, False, None),
    "3x3 stride 1": ((1, 2, 7, 5), 3, 1, 1, False, True, None),
    "ceil mode with pad": ((3, 2, 7, 10), 3, 2, 1, True, True, None),
    "ceil mode without pad": ((3, 2, 7, 10), (3, 2), 2, (1, 1), True,
                              False, None),
    "divisor": ((2, 3, 9, 9), 3, 2, 1, True, True, 5),
    "odd sizes": ((5, 1, 13, 7), (5, 3), (3, 2), (2, 1), True, False, None),
    "global": ((2, 3, 7, 5), (7, 5), 1, 0, False, True, None),
    "7x7 on 56 (ResNet's)": ((1, 2, 14, 14), 7, 7, 0, False, True, None),
}


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Bit for bit in float32 (the half types widen exactly), NaN
    payloads aside (a NaN where torch has one)."""
    got, want = got.astype(np.float32), want.astype(np.float32)
    assert got.shape == want.shape, what
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), what
    assert np.array_equal(_bits(np.where(nan, 0, got)),
                          _bits(np.where(nan, 0, want))), what


def _torch_max(x, dy, k, stride, padding, dilation, ceil_mode, dtype):
    tx = torch.tensor(x).to(dtype).requires_grad_()
    y, idx = F.max_pool2d(tx, k, stride, padding, dilation, ceil_mode,
                          return_indices=True)
    y.backward(torch.tensor(dy).to(dtype))
    return y.detach(), idx, tx.grad


def _device(dev, t, dtype):
    return davinci.DeviceTensor.from_numpy(dev, t.detach().float().numpy(),
                                           dtype)


def _numpy(t):
    return t.detach().float().numpy()


def _values(rng, shape):
    """Random values with ties: small integers and a few halves."""
    return (rng.integers(-4, 5, shape) / 2).astype(np.float32)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", MAX_CASES)
def test_max_pool2d_its_indices_and_gradient_match_torch(dev, rng, name,
                                                         dtype):
    xs, k, stride, padding, dilation, ceil_mode = MAX_CASES[name]
    tdt = getattr(torch, dtype)
    x = _values(rng, xs)
    kw = dict(kernel_size=k, stride=stride, padding=padding,
              dilation=dilation, ceil_mode=ceil_mode)
    ys = ops.pool2d_shapes(xs, **kw)[1]
    dy = rng.standard_normal(ys).astype(np.float32)
    y, idx, dx = _torch_max(x, dy, k, stride, padding, dilation, ceil_mode,
                            tdt)
    X = _device(dev, torch.tensor(x).to(tdt), dtype)
    got_y = ops.max_pool2d(X, **kw)
    got_i = ops.max_pool2d(X, dtype="int64", **kw)
    assert got_y.shape == tuple(y.shape) and got_i.dtype == "int64"
    _same(got_y.numpy().astype(np.float32), _numpy(y), "y")
    assert np.array_equal(got_i.numpy(), idx.numpy()), "indices"
    got_dx = ops.max_pool2d_backward(
        _device(dev, torch.tensor(dy).to(tdt), dtype), got_i, xs, **kw)
    if dtype == "float32" or k == stride:
        # torch's half gradient rounds each partial sum: equal where no
        # two windows share an element
        _same(got_dx.numpy(), _numpy(dx), "dx")
    else:
        np.testing.assert_allclose(got_dx.numpy().astype(np.float32),
                                   _numpy(dx), rtol=1e-2, atol=1e-2)


def test_max_pool2d_takes_torchs_nan_and_tie_rules(dev):
    """The first largest tap wins (ties, +0 and -0), a NaN wins over
    everything and the last NaN of a window names the index; an all -inf
    window names its first tap."""
    x = np.array([[1, 3, 3, 0], [3, 2, np.nan, 5], [-0.0, 0.0, np.nan, 1],
                  [-np.inf, -np.inf, 7, np.nan]], np.float32)
    x = np.stack([x, x[::-1].copy(), np.full((4, 4), -np.inf, np.float32)]
                 )[None]
    for kw in (dict(kernel_size=2, stride=1), dict(kernel_size=3, stride=1,
                                                   padding=1),
               dict(kernel_size=2, stride=2, dilation=2)):
        y, idx = F.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        X = dev.tensor(x)
        _same(ops.max_pool2d(X, **kw).numpy(), y.numpy(), str(kw))
        assert np.array_equal(ops.max_pool2d(X, dtype="int64", **kw).numpy(),
                              idx.numpy()), kw


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", AVG_CASES)
def test_avg_pool2d_and_its_gradient_match_torch(dev, rng, name, dtype):
    xs, k, stride, padding, ceil_mode, cip, divisor = AVG_CASES[name]
    tdt = getattr(torch, dtype)
    x = rng.standard_normal(xs).astype(np.float32) * 10
    kw = dict(kernel_size=k, stride=stride, padding=padding,
              ceil_mode=ceil_mode, count_include_pad=cip, divisor=divisor)
    ys = ops.pool2d_shapes(xs, op="avg_pool2d", **kw)[1]
    dy = rng.standard_normal(ys).astype(np.float32)
    tx = torch.tensor(x).to(tdt).requires_grad_()
    y = F.avg_pool2d(tx, k, stride, padding, ceil_mode, cip, divisor)
    y.backward(torch.tensor(dy).to(tdt))
    X = _device(dev, tx.detach(), dtype)
    _same(ops.avg_pool2d(X, **kw).numpy().astype(np.float32), _numpy(y),
          "y")
    got_dx = ops.avg_pool2d_backward(
        _device(dev, torch.tensor(dy).to(tdt), dtype), xs, **kw)
    if dtype == "float32":
        _same(got_dx.numpy(), _numpy(tx.grad), "dx")
    else:
        tol = 8e-3 if dtype == "float16" else 6e-2
        np.testing.assert_allclose(got_dx.numpy().astype(np.float32),
                                   _numpy(tx.grad), rtol=tol, atol=tol)


@pytest.mark.parametrize("xs,out", [((2, 3, 12, 8), (3, 2)),
                                    ((1, 4, 6, 6), (2, 3)),
                                    ((2, 2, 7, 5), (7, 1)),
                                    ((3, 2, 5, 9), (1, 1))])
def test_adaptive_avg_pool2d_where_the_output_divides_matches_torch(
        dev, rng, xs, out):
    """torch divides each window's sum by its height, then its width: so
    does adaptive=True. torch's 1 x 1 output is a mean (another order):
    within 1e-6 relative there."""
    x = rng.standard_normal(xs).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    y = F.adaptive_avg_pool2d(tx, out)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(torch.tensor(dy))
    k = ops.adaptive_pool2d_kernel(xs, out)
    kw = dict(kernel_size=k, stride=k, adaptive=True,
              count_include_pad=False)
    got = ops.avg_pool2d(dev.tensor(x), **kw).numpy()
    got_dx = ops.avg_pool2d_backward(dev.tensor(dy), xs, **kw).numpy()
    if out == (1, 1):
        np.testing.assert_allclose(got, y.detach().numpy(), rtol=1e-6,
                                   atol=1e-7)
    else:
        _same(got, y.detach().numpy(), "y")
    _same(got_dx, tx.grad.numpy(), "dx")
    assert ops.adaptive_pool2d_kernel((1, 1, 7, 5), (2, 2)) is None


def test_1d_pooling_is_2d_of_height_one(dev, rng):
    x = rng.standard_normal((2, 3, 17)).astype(np.float32)
    y, idx = F.max_pool1d(torch.tensor(x), 3, 2, 1, 2, True,
                          return_indices=True)
    X = dev.tensor(x)
    kw = dict(kernel_size=3, stride=2, padding=1, dilation=2,
              ceil_mode=True)
    _same(ops.max_pool2d(X, **kw).numpy(), y.numpy(), "max")
    assert np.array_equal(ops.max_pool2d(X, dtype="int64", **kw).numpy(),
                          idx.numpy())
    want = F.avg_pool1d(torch.tensor(x), 4, 3, 2, True, False).numpy()
    _same(ops.avg_pool2d(X, 4, 3, 2, True, False).numpy(), want, "avg")


def test_results_do_not_depend_on_how_the_work_is_cut(dev, rng):
    """Many planes (several chunks, several AI cores) give the bytes the
    same planes give one at a time."""
    x = rng.standard_normal((64, 40, 12, 12)).astype(np.float32)
    X = dev.tensor(x)
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    whole = ops.avg_pool2d(X, **kw).numpy()
    idx = ops.max_pool2d(X, dtype="int64", **kw)
    dx = ops.max_pool2d_backward(dev.tensor(whole), idx, x.shape,
                                 **kw).numpy()
    for n in (0, 31, 63):
        one = dev.tensor(x[n:n + 1])
        assert np.array_equal(_bits(ops.avg_pool2d(one, **kw).numpy()),
                              _bits(whole[n:n + 1]))
        i1 = ops.max_pool2d(one, dtype="int64", **kw)
        assert np.array_equal(
            _bits(ops.max_pool2d_backward(dev.tensor(whole[n:n + 1]), i1,
                                          one.shape, **kw).numpy()),
            _bits(dx[n:n + 1]))


def test_indices_outside_their_window_add_nothing(dev):
    """The gradient gathers: an index that names no tap of its window is
    no element's, so nothing reads or writes where it points."""
    dy = np.ones((1, 1, 2, 2), np.float32)
    idx = np.array([[[[0, 1 << 40], [-5, 15]]]], np.int64)
    got = ops.max_pool2d_backward(dev.tensor(dy), dev.tensor(idx, "int64"),
                                  (1, 1, 4, 4), 2).numpy()
    want = np.zeros((1, 1, 4, 4), np.float32)
    want[0, 0, 0, 0] = want[0, 0, 3, 3] = 1
    assert np.array_equal(got, want)


@pytest.mark.parametrize("fn,xs,kw,match", [
    ("max_pool2d", (1, 2, 8, 8), dict(kernel_size=0), "kernel_size"),
    ("max_pool2d", (1, 2, 8, 8), dict(kernel_size=3, stride=0), "stride"),
    ("max_pool2d", (1, 2, 8, 8), dict(kernel_size=3, padding=2), "half"),
    ("max_pool2d", (1, 2, 8, 8), dict(kernel_size=9), "larger"),
    ("max_pool2d", (1, 2, 3, 3), dict(kernel_size=2, dilation=4),
     "dilation"),
    ("max_pool2d", (2, 8, 8), dict(kernel_size=(2, 2)), "1-D"),
    ("max_pool2d", (8, 8), dict(kernel_size=2), "x is"),
    ("avg_pool2d", (1, 2, 8, 8), dict(kernel_size=2, divisor=0), "divisor"),
    ("avg_pool2d", (1, 2, 8, 8), dict(kernel_size=3, padding=1,
                                      adaptive=True), "adaptive"),
])
def test_shapes_that_do_not_fit_raise(dev, fn, xs, kw, match):
    X = davinci.DeviceTensor.empty(dev, xs, "float32")
    with pytest.raises(davinci.ShapeError, match=match):
        getattr(ops, fn)(X, **kw)


def test_gradients_check_dy_and_the_indices(dev):
    DY = davinci.DeviceTensor.empty(dev, (1, 2, 4, 4), "float32")
    IDX = davinci.DeviceTensor.empty(dev, (1, 2, 4, 4), "int64")
    with pytest.raises(davinci.ShapeError, match="dy"):
        ops.avg_pool2d_backward(DY, (1, 2, 12, 12), 2)
    with pytest.raises(davinci.ShapeError, match="indices"):
        ops.max_pool2d_backward(DY, IDX[:, :1], (1, 2, 8, 8), 2)
    with pytest.raises(davinci.DTypeError, match="int64"):
        ops.max_pool2d_backward(DY, DY, (1, 2, 8, 8), 2)
    with pytest.raises(davinci.DTypeError):
        ops.max_pool2d(DY, 2, dtype="int32")


MAXPOOL = schema.by_name("MAXPOOL2D")
GOOD = dict(n=1, c=2, h=6, w=6, r=3, s=3, stride_h=2, stride_w=2, pad_h=1,
            pad_w=1, dilation_h=1, dilation_w=1, ceil_mode=0,
            count_include_pad=0, divisor=0, adaptive=0)
POOL_OPS = ["MAXPOOL2D", "MAXPOOL2D_BACKWARD", "AVGPOOL2D",
            "AVGPOOL2D_BACKWARD"]


@pytest.mark.parametrize("op", POOL_OPS)
@pytest.mark.parametrize("bad,why,ops_refusing", [
    (dict(n=0), "no image", "all"),
    (dict(s=0), "no window column", "all"),
    (dict(stride_h=0), "stride 0", "all"),
    (dict(pad_w=2), "padding past half the window", "all"),
    (dict(r=9), "window taller than the padded input", "all"),
    (dict(ceil_mode=2), "ceil_mode 2", "all"),
    (dict(dilation_w=2), "a dilated average", "AVG"),
    (dict(dilation_h=7), "a dilation past the input", "all"),
    (dict(divisor=4), "a max with a divisor", "MAX"),
    (dict(count_include_pad=1), "a max counting padding", "MAX"),
    (dict(adaptive=1), "adaptive with padding", "all"),
    (dict(n=1 << 31, c=1 << 31), "elements past U64_MAX / 8", "all"),
])
def test_a_block_the_core_refuses_fails_the_task_touching_nothing(
        dev, op, bad, why, ops_refusing):
    opdef = schema.by_name(op)
    if ops_refusing != "all" and not op.startswith(ops_refusing):
        pytest.skip("%s takes %s" % (op, why))
    out = dev.tensor(np.full(1024, 7, np.float32))
    a = dev.tensor(np.zeros(1024, np.float32))
    b = dev.tensor(np.zeros(1024, np.int64), "int64")
    data = opdesc.pack_params(MAXPOOL, **dict(GOOD, **bad))
    block = dev.malloc(len(data))
    block.write(data)
    s = dev.stream()
    s.launch(opdesc.describe(opdef, "float32", dst=out.dev_addr,
                             srcs=[a.dev_addr, b.dev_addr][
                                 :opdesc.SOURCES[opdef.kind]],
                             params_at=block.dev_addr))
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    assert e.value.status == _uapi.DAVINCI_STATUS_INVALID_TASK, why
    assert np.array_equal(out.numpy(), np.full(1024, 7, np.float32))


def test_the_good_block_runs_on_raw_descriptors(dev, rng):
    # the block the test above breaks one field of is one the core takes
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    out = dev.tensor(np.zeros((1, 2, 3, 3), np.float32))
    X = dev.tensor(x)
    data = opdesc.pack_params(MAXPOOL, **GOOD)
    block = dev.malloc(len(data))
    block.write(data)
    s = dev.stream()
    s.launch(opdesc.describe(MAXPOOL, "float32", dst=out.dev_addr,
                             srcs=[X.dev_addr], params_at=block.dev_addr))
    s.synchronize()
    want = F.max_pool2d(torch.tensor(x), 3, 2, 1).numpy()
    assert np.array_equal(out.numpy(), want)


def test_the_driver_serves_the_block(dev):
    for op in POOL_OPS:
        opdef = schema.by_name(op)
        assert opdef.params == MAXPOOL.params
        assert dev.capabilities().param_versions(opdef) == \
            (MAXPOOL.params.version,)
