# SPDX-License-Identifier: GPL-2.0
"""Ops on npu tensors against CPU torch, and the CPU fallback."""

import warnings

import pytest
import torch

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _pair(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*shape, generator=g).to(dtype)
    return a, a.npu()


def _device_only(fn):
    """Run ``fn`` and fail if any CPU fallback warning was raised."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    cpu = [str(x.message) for x in w if "torch_npu" in str(x.message)]
    assert not cpu, cpu
    return r


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum",
                                "minimum"])
def test_elementwise_bit_identical(npu, op, dtype):
    a, da = _pair(257, dtype=dtype, seed=1)
    b, db = _pair(257, dtype=dtype, seed=2)
    fn = getattr(torch, op)
    got = _device_only(lambda: fn(da, db))
    assert torch.equal(got.cpu(), fn(a, b))


@pytest.mark.parametrize("op", ["relu", "neg"])
def test_unary_bit_identical(npu, op):
    a, da = _pair(3, 50)
    got = _device_only(lambda: getattr(torch, op)(da))
    assert torch.equal(got.cpu(), getattr(torch, op)(a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_backward_on_device_bit_identical(npu, dtype):
    from torch_npu import _devices
    if not _devices.context(0).capabilities().serves("relu_grad"):
        pytest.skip("the driver predates DAVINCI_OP_RELU_GRAD")
    x = torch.tensor([1.0, -1.0, 0.0, -0.0, 2.5, float("nan"),
                      float("-inf"), 3e-39]).to(dtype)
    g = torch.tensor([1.5, 2.0, -3.0, 4.0, float("nan"), 6.0, 7.0, -8.0]
                     ).to(dtype)
    got = _device_only(lambda: torch.ops.aten.threshold_backward(
        g.npu(), x.npu(), 0))
    want = torch.ops.aten.threshold_backward(g, x, 0)
    assert torch.equal(got.cpu().view(torch.int16 if dtype != torch.float32
                                      else torch.int32),
                       want.view(torch.int16 if dtype != torch.float32
                                 else torch.int32))


def test_exp_close(npu):
    a, da = _pair(500)
    torch.testing.assert_close(torch.exp(da).cpu(), torch.exp(a),
                               rtol=2e-7, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sqrt_correctly_rounded(npu, dtype):
    # the device's sqrt is correctly rounded (numpy's); CPU torch's float32
    # sqrt (MKL here) is not always: within 1 ulp of it
    np = pytest.importorskip("numpy")
    a, _ = _pair(300, dtype=dtype, seed=3)
    a = a.abs()
    want = torch.from_numpy(np.sqrt(a.float().numpy())).to(dtype)
    got = _device_only(lambda: torch.sqrt(a.npu()))
    assert torch.equal(got.cpu(), want)
    d = a.npu()
    _device_only(lambda: d.sqrt_())
    assert torch.equal(d.cpu(), want)
    torch.testing.assert_close(got.cpu(), torch.sqrt(a), rtol=2 ** -23,
                               atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_softmax_on_device(npu, dtype):
    a, da = _pair(33, 70, dtype=dtype, seed=4)
    got = _device_only(lambda: torch.log_softmax(da, dim=1))
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}
    torch.testing.assert_close(got.cpu(), torch.log_softmax(a, dim=1),
                               rtol=tol[dtype], atol=tol[dtype])


@pytest.mark.parametrize("tdtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_and_backward_on_device(npu, tdtype, reduction):
    x, _ = _pair(40, 7, seed=5)
    t = torch.randint(0, 7, (40,), generator=torch.Generator().manual_seed(6))
    t[3] = -100                                   # ignored, as by default
    dx = x.npu().requires_grad_()
    x.requires_grad_()
    loss = torch.nn.functional.nll_loss(x, t, reduction=reduction)
    loss.backward()
    got = _device_only(lambda: torch.nn.functional.nll_loss(
        dx, t.to(tdtype).npu(), reduction=reduction))
    _device_only(got.backward)
    torch.testing.assert_close(got.cpu(), loss.detach(), rtol=1e-6,
                               atol=1e-6)
    assert torch.equal(dx.grad.cpu(), x.grad)     # -1/N at the targets


SCALAR_OPS = {
    "mul": lambda x: x * 0.3, "add": lambda x: x + 2.5,
    "sub": lambda x: x - 1.25, "sub_inexact": lambda x: x - 1.1,
    "add_inexact": lambda x: x + 0.7, "div": lambda x: x / 3.0,
    "div_inexact": lambda x: x / 1.1, "rsub": lambda x: 1.1 - x,
    "neg": lambda x: -x, "mul_zero": lambda x: x * 0.0,
    "add_alpha": lambda x: x.add(1.0, alpha=2),       # exact product
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_scalar_ops_bit_identical(npu, name, dtype):
    a, _ = _pair(1000, dtype=dtype, seed=7)
    a[:4] = torch.tensor([0.0, -0.0, float("inf"), float("-inf")])
    fn = SCALAR_OPS[name]
    got = _device_only(lambda: fn(a.npu())).cpu()
    want = fn(a)
    # bit for bit, signed zeros included; NaN payloads are not claimed
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan), name
    bits = torch.int16 if dtype != torch.float32 else torch.int32
    assert torch.equal(got[~nan].view(bits), want[~nan].view(bits)), name


def test_inplace_and_alpha(npu):
    a, da = _pair(64)
    b, db = _pair(64, seed=3)
    _device_only(lambda: da.add_(db, alpha=-0.5))
    a.add_(b, alpha=-0.5)
    torch.testing.assert_close(da.cpu(), a, rtol=1e-6, atol=1e-6)
    _device_only(lambda: da.mul_(db))
    a.mul_(b)
    torch.testing.assert_close(da.cpu(), a, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False),
                                   (False, True), (True, True)])
def test_mm_with_transposed_views(npu, ta, tb):
    a, da = _pair(7, 5) if not ta else _pair(5, 7)
    b, db = _pair(5, 3, seed=1) if not tb else _pair(3, 5, seed=1)
    if ta:
        a, da = a.t(), da.t()
    if tb:
        b, db = b.t(), db.t()
    got = _device_only(lambda: da @ db)
    torch.testing.assert_close(got.cpu(), a @ b, rtol=1e-5, atol=1e-5)


def test_linear_is_addmm_on_device(npu):
    lin = torch.nn.Linear(6, 4)
    x, dx = _pair(5, 6)
    got = _device_only(lambda: lin.npu()(dx))
    torch.testing.assert_close(got.cpu(), lin.cpu()(x), rtol=1e-5,
                               atol=1e-5)


def test_softmax_and_reductions(npu):
    a, da = _pair(8, 10)
    for fn in (lambda x: torch.softmax(x, -1), lambda x: x.sum(),
               lambda x: x.sum(-1), lambda x: x.sum(0),
               lambda x: x.sum(0, keepdim=True), lambda x: x.mean(-1)):
        got = _device_only(lambda: fn(da))
        torch.testing.assert_close(got.cpu(), fn(a), rtol=1e-5, atol=1e-6)


def test_fill_and_zero(npu):
    t = torch.empty(10, device="npu")
    _device_only(lambda: t.fill_(2.5))
    assert torch.equal(t.cpu(), torch.full((10,), 2.5))
    _device_only(t.zero_)
    assert torch.equal(t.cpu(), torch.zeros(10))
    assert torch.equal(torch.ones(3, 2, device="npu").cpu(),
                       torch.ones(3, 2))


def test_fallback_warns_once_naming_the_op(npu):
    a, da = _pair(10)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r1 = torch.sinh(da)
        r2 = torch.sinh(da)
    msgs = [str(x.message) for x in w if "sinh" in str(x.message)]
    assert len(msgs) == 1 and "runs on the CPU" in msgs[0]
    assert r1.device.type == "npu"
    torch.testing.assert_close(r2.cpu(), torch.sinh(a))
    assert any("sinh" in op for op in npu.fallback_ops())


def test_python_side_fallbacks_are_listed(npu):
    # add has a kernel that hands these operands to the CPU: uint8 + int8
    # is int16, no device dtype
    a = torch.ones(3, 4, dtype=torch.uint8)
    b = torch.ones(4, dtype=torch.int8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = a.npu() + b.npu()
    assert torch.equal(got.cpu(), a + b)
    assert "aten::add.Tensor" in npu.fallback_ops()


def test_fallback_in_place_writes_back(npu):
    a, da = _pair(10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        da.clamp_(-0.5, 0.5)
    assert torch.equal(da.cpu(), a.clamp(-0.5, 0.5))


def test_printing_does_not_warn(npu):
    _device_only(lambda: repr(torch.randn(5, 5).npu()))


def test_device_ops_are_listed(npu):
    for op in ("add.Tensor", "mm", "addmm", "_softmax", "sum.dim_IntList"):
        assert op in npu.DEVICE_OPS


def test_empty_and_zero_dim_tensors(npu):
    e = torch.empty(0, 3, device="npu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert (e + e).shape == (0, 3)
        assert (e * 2).shape == (0, 3)
        assert e.sum().item() == 0
        assert (e @ torch.ones(3, 2, device="npu")).shape == (0, 2)
    s = torch.tensor(3.0, device="npu")
    assert (s * s + 1).item() == 10.0


def test_views_with_offsets(npu):
    a, da = _pair(20)
    got = _device_only(lambda: da[2:7] + da[10:15])
    assert torch.equal(got.cpu(), a[2:7] + a[10:15])
    da[5:10].mul_(2)
    a[5:10].mul_(2)
    assert torch.equal(da.cpu(), a)
