# SPDX-License-Identifier: GPL-2.0
"""Mixed precision on npu: torch.autocast("npu"), torch.npu.amp, GradScaler.

PyTorch announces autocast for every PrivateUse1 backend; these check that
it works as Ascend's torch_npu makes it work (PyTorch's CUDA lists), and
agrees with CPU autocast on the ops both lists treat alike."""

import pytest
import torch

F = torch.nn.functional
LOW = [torch.float16, torch.bfloat16]


def _operands(device):
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=g).to(device)
    return {"a": rand(4, 6), "b": rand(6, 5), "v": rand(5), "w": rand(5, 6),
            "x": rand(2, 4, 6), "y": rand(2, 6, 3), "z": rand(2, 4, 3),
            "t": torch.tensor([0, 2, 1, 4], device=device)}


#: ops whose autocast dtype PyTorch's CPU list and its CUDA list (Ascend's)
#: agree on: the lower precision for matmuls, float32 for losses, the
#: widest operand for addcmul, the operands' own for the rest
AGREED = {
    "mm": lambda o, h: torch.mm(o["a"], o["b"]),
    "matmul": lambda o, h: o["a"] @ o["b"],
    "linear": lambda o, h: F.linear(o["a"], o["w"], o["v"]),
    "addmm": lambda o, h: torch.addmm(o["v"], o["a"], o["b"]),
    "bmm": lambda o, h: torch.bmm(o["x"], o["y"]),
    "baddbmm": lambda o, h: torch.baddbmm(o["z"], o["x"], o["y"]),
    "einsum": lambda o, h: torch.einsum("ij,jk->ik", o["a"], o["b"]),
    "sdpa": lambda o, h: F.scaled_dot_product_attention(
        o["x"], o["x"], o["x"]),
    "mse_loss": lambda o, h: F.mse_loss(h(o["a"]), h(o["a"]) * 2),
    "l1_loss": lambda o, h: F.l1_loss(h(o["a"]), h(o["a"])),
    "cross_entropy": lambda o, h: F.cross_entropy(h(o["a"]), o["t"]),
    "nll_loss": lambda o, h: F.nll_loss(h(o["a"]), o["t"]),
    "bce_with_logits": lambda o, h: F.binary_cross_entropy_with_logits(
        h(o["a"]), torch.sigmoid(h(o["a"]))),
    "prod": lambda o, h: h(o["a"]).prod(),
    "addcmul": lambda o, h: torch.addcmul(o["a"], h(o["a"]), h(o["a"])),
    "add": lambda o, h: h(o["a"]) + h(o["a"]),
    "relu": lambda o, h: F.relu(h(o["a"])),
    "cat": lambda o, h: torch.cat([o["a"], h(o["a"])]),
}


def _under_autocast(device: str, dtype, fn):
    ops = _operands(device)
    with torch.autocast(device, dtype=dtype):
        return fn(ops, lambda t: t.to(dtype))


def test_autocast_is_announced_and_enters(npu):
    assert torch.amp.is_autocast_available("npu")
    assert set(LOW) <= set(torch.npu.get_amp_supported_dtype())
    for dtype in LOW:
        with torch.autocast("npu", dtype=dtype):
            assert torch.is_autocast_enabled("npu")
            assert torch.npu.is_autocast_enabled()
            assert torch.npu.get_autocast_dtype() == dtype
        assert not torch.npu.is_autocast_enabled()


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", sorted(AGREED))
def test_autocast_dtypes_match_cpu_autocast(npu, name, dtype):
    on_cpu = _under_autocast("cpu", dtype, AGREED[name])
    on_npu = _under_autocast("npu", dtype, AGREED[name])
    assert on_npu.device.type == "npu"
    assert on_npu.dtype == on_cpu.dtype
    torch.testing.assert_close(on_npu.cpu(), on_cpu, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", LOW)
def test_matmuls_compute_in_the_autocast_dtype(npu, dtype):
    """Inputs are rounded to the autocast dtype first: the result is the
    op on the rounded operands, not a rounded float32 result."""
    ops = _operands("npu")
    with torch.autocast("npu", dtype=dtype):
        got = torch.mm(ops["a"], ops["b"])
    want = torch.mm(ops["a"].to(dtype), ops["b"].to(dtype))
    assert got.dtype == dtype
    assert torch.equal(got.cpu(), want.cpu())


@pytest.mark.parametrize("dtype", LOW)
def test_ascend_float32_ops(npu, dtype):
    """Where CPU autocast keeps the lower precision, Ascend's torch_npu
    (PyTorch's CUDA list) runs softmax, layer_norm, exp, sum and norms in
    float32."""
    h = _operands("npu")["a"].to(dtype)
    with torch.autocast("npu", dtype=dtype):
        for out in (torch.softmax(h, -1), torch.log_softmax(h, -1),
                    F.layer_norm(h, (6,)), h.exp(), h.sum(), h.sum(-1),
                    h.norm(), h.cumsum(0)):
            assert out.dtype == torch.float32
        # an explicit dtype is kept
        assert torch.softmax(h, -1, dtype=dtype).dtype == dtype


def test_autocast_refuses_binary_cross_entropy(npu):
    p = torch.sigmoid(_operands("npu")["a"])
    with torch.autocast("npu", dtype=torch.float16):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, p)


def test_disabled_region_and_other_tensors_are_left_alone(npu):
    ops = _operands("npu")
    cpu_a = ops["a"].cpu()
    with torch.autocast("npu", dtype=torch.float16):
        with torch.autocast("npu", enabled=False):
            assert torch.mm(ops["a"], ops["b"]).dtype == torch.float32
        # CPU tensors are CPU autocast's business; float64 is never cast
        assert torch.mm(cpu_a, cpu_a.t()).dtype == torch.float32
        d = ops["a"].double()
        assert torch.mm(d, d.t()).dtype == torch.float64
        assert torch.mm(ops["a"], ops["b"]).dtype == torch.float16


@pytest.mark.parametrize("dtype", LOW)
def test_backward_matches_cpu_autocast(npu, dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 3))
    x, t = torch.randn(5, 6), torch.tensor([0, 1, 2, 1, 0])
    grads = {}
    for device in ("cpu", "npu"):
        m = model.to(device)
        m.zero_grad()
        with torch.autocast(device, dtype=dtype):
            out = m(x.to(device))
            loss = F.cross_entropy(out, t.to(device))
        assert out.dtype == dtype and loss.dtype == torch.float32
        loss.backward()
        grads[device] = [p.grad.cpu().clone() for p in m.parameters()]
        assert all(p.grad.dtype == torch.float32 for p in m.parameters())
    for g_npu, g_cpu in zip(grads["npu"], grads["cpu"]):
        torch.testing.assert_close(g_npu, g_cpu, atol=2e-2, rtol=2e-2)


def test_torch_npu_amp_names(npu):
    import torch_npu
    from torch.npu.amp import GradScaler, autocast, custom_bwd, custom_fwd
    import torch_npu.npu.amp as ascend_amp
    assert ascend_amp.autocast is autocast is torch.npu.amp.autocast
    assert issubclass(GradScaler, torch.amp.GradScaler)
    assert torch_npu.npu.amp is torch.npu.amp
    ops = _operands("npu")
    with autocast():                    # Ascend's default: float16
        assert torch.mm(ops["a"], ops["b"]).dtype == torch.float16
    with autocast(dtype=torch.bfloat16):
        assert torch.mm(ops["a"], ops["b"]).dtype == torch.bfloat16

    class Square(torch.autograd.Function):
        @staticmethod
        @custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @custom_bwd
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    h = ops["a"].half().requires_grad_()
    with autocast():
        y = Square.apply(h)
    assert y.dtype == torch.float32
    y.sum().backward()
    assert h.grad.dtype == torch.float16


def _train(device: str, scaler, steps: int = 3):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(32, 8).to(device)
    t = torch.randint(0, 3, (32,)).to(device)
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast(device, dtype=torch.float16):
            loss = F.cross_entropy(model(x), t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return [p.detach().cpu() for p in model.parameters()]


def test_grad_scaler_training_matches_cpu(npu):
    on_npu = _train("npu", torch.npu.amp.GradScaler())
    on_cpu = _train("cpu", torch.amp.GradScaler("cpu"))
    for p_npu, p_cpu in zip(on_npu, on_cpu):
        torch.testing.assert_close(p_npu, p_cpu, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("dynamic", [True, False])
def test_grad_scaler_skips_steps_with_inf(npu, dynamic):
    p = torch.nn.Parameter(torch.ones(4, device="npu"))
    opt = torch.optim.SGD([p], lr=1.0)
    scaler = torch.npu.amp.GradScaler(init_scale=1024.0, dynamic=dynamic)
    scaler.scale((p * torch.tensor([1.0, float("inf"), 1.0, 1.0],
                                   device="npu")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert torch.equal(p.detach().cpu(), torch.ones(4))     # step skipped
    assert scaler.get_scale() == (512.0 if dynamic else 1024.0)
    opt.zero_grad()
    scaler.scale((p * 2).sum()).backward()
    scaler.step(opt)                    # unscaled: p - 1.0 * 2
    scaler.update()
    assert torch.equal(p.detach().cpu(), torch.full((4,), -1.0))
