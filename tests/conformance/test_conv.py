# SPDX-License-Identifier: GPL-2.0
"""The convolution ops (CONV2D and its input and weight gradients) against
CPU torch: torch.nn.functional.conv2d / conv1d forward, torch.autograd for
the gradients, float32 within 1e-5 relative (max abs error over max abs
value), over strides, pads, dilations, groups, depthwise, 1x1, non-square
and odd shapes and batches; the results do not depend on how the work is
cut; shapes that do not fit raise ShapeError naming the operand; parameter
blocks the core refuses fail the task touching nothing."""

import numpy as np
import pytest

import davinci
from davinci import _uapi, ops, opdesc, schema

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: (x shape, w shape, stride, padding, dilation, groups)
CASES = {
    "3x3 pad 1": ((2, 8, 12, 12), (8, 8, 3, 3), 1, 1, 1, 1),
    "1x1": ((3, 16, 5, 7), (12, 16, 1, 1), 1, 0, 1, 1),
    # a plain GEMM on x as stored (no img2col): rows past a register
    # block, columns past a panel, groups
    "grouped 1x1": ((2, 12, 6, 9), (18, 4, 1, 1), 1, 0, 1, 3),
    "stride 2": ((2, 3, 15, 13), (5, 3, 3, 3), 2, 1, 1, 1),
    "non-square": ((1, 4, 9, 17), (6, 4, 2, 5), (1, 3), (0, 2), 1, 1),
    "dilation": ((2, 4, 13, 11), (4, 4, 3, 3), 1, 2, (2, 3), 1),
    "groups": ((2, 6, 8, 9), (9, 2, 3, 3), (2, 1), 1, 1, 3),
    "depthwise": ((3, 8, 10, 10), (8, 1, 3, 3), 1, 1, 1, 8),
    "depthwise x2 stride 2": ((1, 4, 11, 9), (8, 1, 5, 3), 2, (2, 1), 1, 4),
    "odd everything": ((5, 3, 7, 5), (7, 3, 4, 2), (3, 2), (1, 3), (2, 1),
                       1),
    "filter = input": ((2, 5, 6, 4), (3, 5, 6, 4), 1, 0, 1, 1),
    "stride past filter": ((2, 2, 9, 9), (3, 2, 2, 2), 3, 0, 1, 1),
}


def _rel(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def _torch_conv(x, w, dy, stride, padding, dilation, groups):
    """y, dx and dw of CPU torch (float32), dy given for the gradients."""
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    y = F.conv2d(tx, tw, stride=stride, padding=padding, dilation=dilation,
                 groups=groups)
    y.backward(torch.tensor(dy))
    return y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()


def _device_conv(dev, x, w, dy, dtype="float32", **kw):
    X, W, DY = (dev.tensor(a, dtype) for a in (x, w, dy))
    y = ops.conv2d(X, W, **kw).numpy()
    dx = ops.conv2d_backward_input(DY, W, shape=x.shape, **kw).numpy()
    dw = ops.conv2d_backward_weight(X, DY, shape=w.shape, **kw).numpy()
    return y, dx, dw


@pytest.mark.parametrize("name", CASES)
def test_conv2d_and_its_gradients_match_torch(dev, rng, name):
    xs, ws, stride, padding, dilation, groups = CASES[name]
    kw = dict(stride=stride, padding=padding, dilation=dilation,
              groups=groups)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    ys = ops.conv2d_shapes(xs, ws, **kw)[1]
    dy = rng.standard_normal(ys).astype(np.float32)
    want = _torch_conv(x, w, dy, **kw)
    got = _device_conv(dev, x, w, dy, **kw)
    for what, g, t in zip(("y", "dx", "dw"), got, want):
        assert g.shape == t.shape, what
        assert _rel(g, t) <= 1e-5, "%s: %s off by %g" % (name, what,
                                                          _rel(g, t))


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 3, 1, 1), (3, 1, 2, 2), (1, 2, 1, 6)])
def test_conv1d_is_conv2d_of_height_one(dev, rng, stride, padding, dilation,
                                        groups):
    x = rng.standard_normal((3, 6, 29)).astype(np.float32)
    w = rng.standard_normal((6, 6 // groups, 5)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    y = F.conv1d(tx, tw, stride=stride, padding=padding, dilation=dilation,
                 groups=groups)
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    kw = dict(stride=stride, padding=padding, dilation=dilation,
              groups=groups)
    got = _device_conv(dev, x, w, dy, **kw)
    for g, t in zip(got, (y.detach().numpy(), tx.grad.numpy(),
                          tw.grad.numpy())):
        assert g.shape == t.shape
        assert _rel(g, t) <= 1e-5


@pytest.mark.parametrize("name", ["groups", "grouped 1x1"])
@pytest.mark.parametrize("dtype,tol", [("float16", 2e-3), ("bfloat16", 1.6e-2)])
def test_half_types_compute_in_float32_and_round_once(dev, rng, dtype, tol,
                                                      name):
    xs, ws, stride, padding, dilation, groups = CASES[name]
    kw = dict(stride=stride, padding=padding, dilation=dilation,
              groups=groups)
    # operands the half type holds exactly: the float32 result of torch on
    # them, rounded once, is what the device must give within half an ulp
    x = dev.tensor(rng.standard_normal(xs).astype(np.float32), dtype).numpy()
    w = dev.tensor(rng.standard_normal(ws).astype(np.float32), dtype).numpy()
    dy = dev.tensor(rng.standard_normal(ops.conv2d_shapes(
        xs, ws, **kw)[1]).astype(np.float32), dtype).numpy()
    want = _torch_conv(x, w, dy, **kw)
    got = _device_conv(dev, x, w, dy, dtype, **kw)
    for g, t in zip(got, want):
        assert _rel(g, t) <= tol


def test_results_do_not_depend_on_how_the_work_is_cut(dev, rng):
    """A batch at once (chunks that span images and groups, shared by the
    AI cores) and each image alone (one GEMM each) give the same bits; so
    do the weight gradient of the batch and that of the images in order
    (which sums over n first)."""
    kw = dict(stride=1, padding=1, dilation=1, groups=2)
    x = rng.standard_normal((6, 32, 24, 24)).astype(np.float32)
    w = rng.standard_normal((64, 16, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((6, 64, 24, 24)).astype(np.float32)
    X, W, DY = dev.tensor(x), dev.tensor(w), dev.tensor(dy)
    y = ops.conv2d(X, W, **kw).numpy()
    dx = ops.conv2d_backward_input(DY, W, shape=x.shape, **kw).numpy()
    for i in range(x.shape[0]):
        xi, dyi = dev.tensor(x[i:i + 1]), dev.tensor(dy[i:i + 1])
        assert np.array_equal(ops.conv2d(xi, W, **kw).numpy(), y[i:i + 1])
        assert np.array_equal(ops.conv2d_backward_input(
            dyi, W, shape=(1,) + x.shape[1:], **kw).numpy(), dx[i:i + 1])
    dw = ops.conv2d_backward_weight(X, DY, shape=w.shape, **kw).numpy()
    again = ops.conv2d_backward_weight(X, DY, shape=w.shape, **kw).numpy()
    assert np.array_equal(dw, again)
    want = _torch_conv(x, w, dy, **kw)
    assert _rel(y, want[0]) <= 1e-5 and _rel(dx, want[1]) <= 1e-5
    assert _rel(dw, want[2]) <= 1e-5


def _im2col(x, r, s, oh, ow, stride, padding, dilation):
    """x's taps as [n, c, r, s, oh, ow] in float32, zeros for padding."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    col = np.zeros(x.shape[:2] + (r, s, oh, ow), np.float32)
    for i in range(r):
        for j in range(s):
            col[:, :, i, j] = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                                 j * dw:j * dw + sw * (ow - 1) + 1:sw]
    return col


def _in_order(a, b):
    """a [m, p] x b [p, n] with each element summed in p's order from +0,
    every product and sum rounded to float32 (NUMERICS.md)."""
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        c = c + a[:, p, None] * b[None, p, :]
    return c


def _ordered_reference(x, w, dy, stride, padding, dilation, groups):
    """y, dx and dw by the summation orders NUMERICS.md fixes."""
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    kg, (oh, ow) = k // groups, dy.shape[2:]
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    col = _im2col(x, r, s, oh, ow, stride, padding, dilation)
    y = np.zeros(dy.shape, np.float32)
    dx = np.zeros(x.shape, np.float32)
    dwt = np.zeros(w.shape, np.float32)
    for g in range(groups):
        gk, gc = slice(g * kg, (g + 1) * kg), slice(g * cg, (g + 1) * cg)
        wg = w[gk].reshape(kg, -1)
        for i in range(n):
            y[i, gk] = _in_order(wg, col[i, gc].reshape(cg * r * s, -1)
                                 ).reshape(kg, oh, ow)
            # dx's B: dy spread back onto the padded input, tap by tap
            spread = np.zeros((kg, r, s, h + 2 * ph, wd + 2 * pw),
                              np.float32)
            for a in range(r):
                for b in range(s):
                    spread[:, a, b, a * dh:a * dh + sh * (oh - 1) + 1:sh,
                           b * dw:b * dw + sw * (ow - 1) + 1:sw] = dy[i, gk]
            spread = spread[:, :, :, ph:ph + h, pw:pw + wd]
            dx[i, gc] = _in_order(
                w[gk].transpose(1, 0, 2, 3).reshape(cg, -1),
                spread.reshape(kg * r * s, -1)).reshape(cg, h, wd)
        dwt[gk] = _in_order(
            dy[:, gk].transpose(1, 0, 2, 3).reshape(kg, -1),
            col[:, gc].transpose(0, 4, 5, 1, 2, 3).reshape(n * oh * ow, -1)
        ).reshape(kg, cg, r, s)
    return y, dx, dwt


@pytest.mark.parametrize("name", ["3x3 pad 1", "groups", "odd everything",
                                  "depthwise x2 stride 2", "dilation", "1x1",
                                  "grouped 1x1"])
def test_each_element_is_summed_in_the_order_numerics_md_fixes(dev, rng,
                                                                 name):
    xs, ws, stride, padding, dilation, groups = CASES[name]
    kw = dict(stride=stride, padding=padding, dilation=dilation,
              groups=groups)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    dy = rng.standard_normal(ops.conv2d_shapes(xs, ws, **kw)[1]).astype(
        np.float32)
    pairs = [(v, v) if isinstance(v, int) else v
             for v in (stride, padding, dilation)]
    want = _ordered_reference(x, w, dy, *pairs, groups)
    for what, g, t in zip(("y", "dx", "dw"), _device_conv(dev, x, w, dy,
                                                          **kw), want):
        assert np.array_equal(g.view(np.uint32), t.view(np.uint32)), what


#: (x shape, w shape, keywords, dtype): the benchmark's 3x3 smaller,
#: a weight gradient whose inner n*oh*ow (3200) is carried across pieces
#: on avx512 but not on avx2, 1x1 (a plain GEMM), stride 2, float16
LEVEL_CASES = [
    ((2, 16, 40, 40), (20, 16, 3, 3), dict(padding=1), "float32"),
    ((2, 24, 9, 45), (40, 24, 1, 1), dict(), "float32"),
    ((1, 6, 19, 17), (10, 3, 5, 3), dict(stride=2, padding=(2, 1),
                                         dilation=(1, 2), groups=2),
     "float32"),
    ((2, 8, 13, 37), (12, 8, 3, 3), dict(padding=1), "float16"),
]


@pytest.mark.parametrize("case", range(len(LEVEL_CASES)))
def test_every_simd_level_gives_the_same_bits(dev, rng, monkeypatch, case):
    """The convolutions run MATMUL's kernels at each SIMD level (vector
    width and register block differ, the order does not): y, dx and dw
    are the same bytes at every level the CPU has. In-process only, where
    DAVINCI_SIMD reaches the core (the FUSE daemon and the module read
    their own; tests/kmod/test_simd.py steps the module's)."""
    if davinci.find_backend().kind != "inproc":
        pytest.skip("needs the in-process backend (DAVINCI_BACKEND=inproc)")
    import os
    xs, ws, kw, dtype = LEVEL_CASES[case]
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    dy = rng.standard_normal(ops.conv2d_shapes(xs, ws, **kw)[1]).astype(
        np.float32)
    levels = ["neon"] if os.uname().machine == "aarch64" else \
        ["sse2", "avx2", "avx512"]
    tkw = dict(dict(stride=1, padding=0, dilation=1, groups=1), **kw)
    want = _torch_conv(*(dev.tensor(a, dtype).numpy().astype(np.float32)
                         for a in (x, w, dy)), **tkw)
    first = None
    for level in levels:
        monkeypatch.setenv("DAVINCI_SIMD", level)
        got = _device_conv(dev, x, w, dy, dtype, **kw)
        if first is None:
            first = got
            for g, t in zip(got, want):
                assert _rel(g.astype(np.float32), t) <= \
                    (1e-5 if dtype == "float32" else 2e-3)
        for what, g, f in zip(("y", "dx", "dw"), got, first):
            assert g.tobytes() == f.tobytes(), \
                "%s at %s differs from %s" % (what, level, levels[0])


def test_padding_reads_zeros_not_memory_beside_x(dev, rng):
    # x sits between two buffers of NaN: a padded tap that read outside x
    # would make y NaN
    guard = dev.tensor(np.full(4096, np.nan, np.float32))
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    X = dev.tensor(x)
    after = dev.tensor(np.full(4096, np.nan, np.float32))
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    y = ops.conv2d(X, dev.tensor(w), padding=2).numpy()
    assert np.isfinite(y).all()
    want = F.conv2d(torch.tensor(x), torch.tensor(w), padding=2).numpy()
    assert _rel(y, want) <= 1e-5
    guard.free()
    after.free()


@pytest.mark.parametrize("xs,ws,kw,names", [
    ((1, 4, 8, 8), (4, 3, 3, 3), {}, "w"),
    ((1, 4, 8, 8), (4, 2, 3, 3), {"groups": 3}, "groups"),
    ((1, 4, 8, 8), (6, 4, 3, 3), {"groups": 4}, "groups"),
    ((1, 4, 2, 2), (4, 4, 3, 3), {}, "filter"),
    ((1, 4, 8, 8), (4, 4, 3, 3), {"stride": 0}, "stride"),
    ((1, 4, 8), (4, 4, 3, 3), {}, "x"),
    ((1, 4, 8, 8), (4, 4, 3, 3), {"padding": (1, 1, 1)}, "padding"),
])
def test_shapes_that_do_not_fit_raise_naming_the_operand(dev, xs, ws, kw,
                                                          names):
    X = davinci.DeviceTensor.empty(dev, xs, "float32")
    W = davinci.DeviceTensor.empty(dev, ws, "float32")
    with pytest.raises(davinci.ShapeError, match=names):
        ops.conv2d(X, W, **kw)


def test_gradients_check_dy_and_need_the_shape_they_compute(dev):
    X = davinci.DeviceTensor.empty(dev, (2, 4, 8, 8), "float32")
    W = davinci.DeviceTensor.empty(dev, (6, 4, 3, 3), "float32")
    DY = davinci.DeviceTensor.empty(dev, (2, 6, 7, 7), "float32")
    with pytest.raises(davinci.ShapeError, match="dy"):
        ops.conv2d_backward_weight(X, DY, shape=(6, 4, 3, 3))
    with pytest.raises(davinci.ShapeError, match="shape"):
        ops.conv2d_backward_input(DY, W)
    with pytest.raises(davinci.DTypeError):
        ops.conv2d(X, davinci.DeviceTensor.empty(dev, (6, 4, 3, 3),
                                                 "float16"))


CONV = schema.by_name("CONV2D")
GOOD = dict(n=1, c=4, h=6, w=6, k=4, r=3, s=3, stride_h=1, stride_w=1,
            pad_h=1, pad_w=1, dilation_h=1, dilation_w=1, groups=1)


@pytest.mark.parametrize("op", ["CONV2D", "CONV2D_BACKWARD_INPUT",
                                "CONV2D_BACKWARD_WEIGHT"])
@pytest.mark.parametrize("bad,why", [
    (dict(n=0), "no image"),
    (dict(r=0), "no filter row"),
    (dict(stride_w=0), "stride 0"),
    (dict(dilation_h=0), "dilation 0"),
    (dict(groups=0), "no group"),
    (dict(groups=3), "groups not dividing c and k"),
    (dict(k=6, groups=4, c=4), "groups not dividing k"),
    (dict(r=9, pad_h=1), "filter taller than the padded input"),
    (dict(n=1 << 31, k=4), "n k past u32"),
    (dict(h=1 << 20, w=1 << 13, pad_h=0, pad_w=0), "h w past u32"),
])
def test_a_block_the_core_refuses_fails_the_task_touching_nothing(
        dev, op, bad, why):
    opdef = schema.by_name(op)
    out = dev.tensor(np.full(1024, 7, np.float32))
    a = dev.tensor(np.ones(1024, np.float32))
    b = dev.tensor(np.ones(1024, np.float32))
    data = opdesc.pack_params(CONV, **dict(GOOD, **bad))
    block = dev.malloc(len(data))
    block.write(data)
    s = dev.stream()
    s.launch(opdesc.describe(opdef, "float32", dst=out.dev_addr,
                             srcs=[a.dev_addr, b.dev_addr],
                             params_at=block.dev_addr))
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    assert e.value.status == _uapi.DAVINCI_STATUS_INVALID_TASK, why
    assert np.array_equal(out.numpy(), np.full(1024, 7, np.float32))


def test_the_good_block_runs_on_raw_descriptors(dev, rng):
    # the block the test above breaks one field of is one the core takes
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    out = dev.tensor(np.zeros((1, 4, 6, 6), np.float32))
    X, W = dev.tensor(x), dev.tensor(w)
    data = opdesc.pack_params(CONV, **GOOD)
    block = dev.malloc(len(data))
    block.write(data)
    s = dev.stream()
    s.launch(opdesc.describe(CONV, "float32", dst=out.dev_addr,
                             srcs=[X.dev_addr, W.dev_addr],
                             params_at=block.dev_addr))
    s.synchronize()
    want = F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    assert _rel(out.numpy(), want) <= 1e-5


def test_the_driver_serves_the_block(dev):
    for op in ("CONV2D", "CONV2D_BACKWARD_INPUT", "CONV2D_BACKWARD_WEIGHT"):
        opdef = schema.by_name(op)
        assert opdef.params == CONV.params
        assert dev.capabilities().param_versions(opdef) == \
            (CONV.params.version,)


# -- CONV2D's bias (src2) and RELU epilogue in the convolution's task ------
FUSED_CASES = ["3x3 pad 1", "stride 2", "dilation", "groups", "depthwise",
               "odd everything"]


def _fused_and_three_tasks(dev, rng, name, dtype, bias, relu, n=None):
    xs, ws, stride, padding, dilation, groups = CASES[name]
    if n is not None:
        xs = (n,) + xs[1:]
    kw = dict(stride=stride, padding=padding, dilation=dilation,
              groups=groups)
    X = dev.tensor(rng.standard_normal(xs).astype(np.float32), dtype)
    W = dev.tensor(rng.standard_normal(ws).astype(np.float32), dtype)
    B = dev.tensor(rng.standard_normal(ws[0]).astype(np.float32) * 2, dtype)
    y = ops.conv2d(X, W, **kw)
    if bias:
        # ADD of the broadcast bias: its elements, exactly, over y's shape
        bb = np.broadcast_to(B.numpy()[:, None, None], y.shape[1:])
        y = ops.add(y, dev.tensor(np.broadcast_to(bb, y.shape), dtype))
    if relu:
        y = ops.relu(y)
    got = ops.conv2d(X, W, bias=B if bias else None, relu=relu, **kw)
    return got, y


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", FUSED_CASES)
@pytest.mark.parametrize("bias,relu", [(True, False), (False, True),
                                       (True, True)])
def test_conv2d_bias_relu_is_conv2d_then_add_then_relu_bit_for_bit(
        dev, rng, dtype, name, bias, relu):
    got, want = _fused_and_three_tasks(dev, rng, name, dtype, bias, relu)
    assert got.shape == want.shape and got.dtype == want.dtype
    # the stored bits: numpy() of a half type widens exactly
    gb, wb = (np.asarray(t.numpy(), np.float32).view(np.uint32)
              for t in (got, want))
    assert np.array_equal(gb, wb), name


@pytest.mark.parametrize("n", [1, 6])
def test_fused_conv2d_is_the_same_bits_however_the_work_is_cut(dev, rng, n):
    """One image (its tiles shared by the AI cores) and a batch (a whole
    GEMM a chunk) of 130 filters over 576 columns: several row blocks and
    column tiles, each given its epilogue once."""
    xs, ws = (n, 3, 24, 24), (130, 3, 3, 3)
    X = dev.tensor(rng.standard_normal(xs).astype(np.float32))
    W = dev.tensor(rng.standard_normal(ws).astype(np.float32))
    B = dev.tensor(rng.standard_normal(130).astype(np.float32))
    want = ops.relu(ops.add(ops.conv2d(X, W, padding=1), dev.tensor(
        np.broadcast_to(B.numpy()[:, None, None], (n, 130, 24, 24)).copy())))
    got = ops.conv2d(X, W, bias=B, relu=True, padding=1)
    assert np.array_equal(got.numpy().view(np.uint32),
                          want.numpy().view(np.uint32))
    ref = F.relu(F.conv2d(torch.tensor(X.numpy()), torch.tensor(W.numpy()),
                          torch.tensor(B.numpy()), padding=1)).numpy()
    assert _rel(got.numpy(), ref) <= 1e-5


def test_a_bias_that_does_not_fit_raises_naming_it(dev):
    X = dev.tensor(np.ones((1, 4, 6, 6), np.float32))
    W = dev.tensor(np.ones((6, 4, 3, 3), np.float32))
    with pytest.raises(davinci.ShapeError, match="bias"):
        ops.conv2d(X, W, bias=dev.tensor(np.ones(4, np.float32)))
    with pytest.raises(davinci.DTypeError):
        ops.conv2d(X, W, bias=dev.tensor(np.ones(6, np.float32), "float16"))
    with pytest.raises(TypeError):      # the gradients take neither
        ops.conv2d_backward_input(X, W, shape=(1, 4, 8, 8), bias=X)
    for op in ("CONV2D_BACKWARD_INPUT", "CONV2D_BACKWARD_WEIGHT"):
        with pytest.raises(davinci.InvalidArgumentError, match="src2"):
            opdesc.describe(op, "float32", dst=0x1000, srcs=(0x2000, 0x3000),
                            params_at=0x4000, src2=0x5000)
    with pytest.raises(davinci.errors.MisalignedOperandError, match="bias"):
        opdesc.describe("CONV2D", "float32", dst=0x1000,
                        srcs=(0x2000, 0x3000), params_at=0x4000,
                        src2=0x5002, names={"src2": "bias"})


def test_a_bias_outside_its_memory_or_misaligned_fails_the_task(dev):
    """The device's checks of src2, as of the other operands: a bias past
    its allocation is INVALID_ADDRESS, a misaligned one MISALIGNED, and the
    task touches nothing."""
    out = dev.tensor(np.full((1, 4, 6, 6), 7, np.float32))
    X = dev.tensor(np.ones((1, 4, 6, 6), np.float32))
    W = dev.tensor(np.ones((4, 4, 3, 3), np.float32))
    bias = dev.malloc(4096)
    data = opdesc.pack_params(CONV, **GOOD)
    block = dev.malloc(len(data))
    block.write(data)
    for at, status in ((4096 - 8, _uapi.DAVINCI_STATUS_INVALID_ADDRESS),
                       (2, _uapi.DAVINCI_STATUS_MISALIGNED)):
        t = opdesc.describe(CONV, "float32", dst=out.dev_addr,
                            srcs=[X.dev_addr, W.dev_addr],
                            params_at=block.dev_addr, attr="RELU")
        t.src2 = bias.dev_addr + at         # past describe()'s own check
        s = dev.stream()
        s.launch(t)
        with pytest.raises(davinci.TaskFailedError) as e:
            s.synchronize()
        assert e.value.status == status
        assert np.array_equal(out.numpy(), np.full((1, 4, 6, 6), 7,
                                                   np.float32))
