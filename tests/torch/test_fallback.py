# SPDX-License-Identifier: GPL-2.0
"""The CPU fallback keeps CPU torch's promises: every op reaches it, what an
op changes comes back, errors are the CPU's and leave nothing behind."""

import gc
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F


@pytest.fixture
def unraisable(monkeypatch):
    """Exceptions Python could not raise (a hook that failed inside C++),
    recorded instead of printed."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    return seen


def test_overrideable_ops_have_npu_kernels(npu):
    # PyTorch's generic kernel of an *_overrideable op raises for every
    # backend: one the device lacks must be an npu kernel, or the
    # fallback is never reached
    names = [n for n in torch._C._dispatch_get_all_op_names()
             if n.endswith("_overrideable") and "convolution" in n]
    assert names, "PyTorch renamed its overrideable convolution ops"
    for name in names:
        assert torch._C._dispatch_has_kernel_for_dispatch_key(
            name, "PrivateUse1"), name


@pytest.mark.parametrize("case", [
    dict(x=(1, 1, 4, 4), w=(1, 1, 3, 3)),
    dict(x=(2, 4, 7, 6), w=(6, 2, 3, 2), stride=(2, 1), padding=1,
         dilation=(1, 2), groups=2),
    dict(x=(2, 3, 9), w=(3, 1, 3), groups=3, padding=2),   # depthwise 1-D
])
def test_convolution_and_its_backward_match_the_cpu(npu, case):
    # float64: the device convolves float32, float16 and bfloat16
    # (tests/torch/test_cnn.py), torch_npu's kernels hand the rest to the
    # CPU
    case = dict(case)
    g = torch.Generator().manual_seed(0)
    x, w = (torch.randn(case.pop(n), generator=g, dtype=torch.float64,
                        requires_grad=True) for n in ("x", "w"))
    b = torch.randn(w.shape[0], generator=g, dtype=torch.float64,
                    requires_grad=True)
    conv = F.conv2d if x.dim() == 4 else F.conv1d
    want = conv(x, w, b, **case)
    want.square().sum().backward()
    xn, wn, bn = (t.detach().npu().requires_grad_() for t in (x, w, b))
    got = conv(xn, wn, bn, **case)
    assert got.device.type == "npu"
    got.square().sum().backward()
    torch.testing.assert_close(got.cpu(), want)
    for a, ref in ((xn, x), (wn, w), (bn, b)):
        torch.testing.assert_close(a.grad.cpu(), ref.grad, rtol=1e-4,
                                   atol=1e-4)


def test_conv_transpose_matches_the_cpu(npu):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1, 4, 5, 5, generator=g, dtype=torch.float64)
    w = torch.randn(4, 2, 3, 3, generator=g, dtype=torch.float64)
    want = F.conv_transpose2d(x, w, stride=2, output_padding=1)
    got = F.conv_transpose2d(x.npu(), w.npu(), stride=2, output_padding=1)
    torch.testing.assert_close(got.cpu(), want)


def _bn_model():
    # float64, which the device lacks: every op on the CPU
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3),
        torch.nn.BatchNorm1d(3)).double()


def test_batchnorm_training_updates_running_statistics(npu):
    cpu, dev = _bn_model(), _bn_model().npu()
    opt_c = torch.optim.SGD(cpu.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(dev.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(2)
    for _ in range(3):
        x = torch.randn(8, 1, 8, 8, generator=g, dtype=torch.float64)
        for model, opt, data in ((cpu, opt_c, x), (dev, opt_d, x.npu())):
            opt.zero_grad()
            model(data).square().mean().backward()
            opt.step()
    for name, want in cpu.state_dict().items():
        got = dev.state_dict()[name].cpu()
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5,
                                   msg=lambda m: "%s: %s" % (name, m))
    cpu.eval()
    dev.eval()
    x = torch.randn(4, 1, 8, 8, generator=g, dtype=torch.float64)
    torch.testing.assert_close(dev(x.npu()).cpu(), cpu(x), rtol=1e-4,
                               atol=1e-5)


def test_an_op_that_updates_an_unannotated_argument_writes_it_back(npu):
    # native_batch_norm's schema says it reads running_mean; it writes it
    # (float64: on the CPU)
    mean, var = (torch.zeros(3, dtype=torch.float64),
                 torch.ones(3, dtype=torch.float64))
    x = torch.randn(5, 3, dtype=torch.float64)
    dm, dv = mean.npu(), var.npu()
    torch.ops.aten.native_batch_norm(x, None, None, mean, var, True, 0.5,
                                     1e-5)
    torch.ops.aten.native_batch_norm(x.npu(), None, None, dm, dv, True,
                                     0.5, 1e-5)
    assert not torch.equal(mean, torch.zeros(3, dtype=torch.float64))
    torch.testing.assert_close(dm.cpu(), mean)
    torch.testing.assert_close(dv.cpu(), var)


def test_aliasing_arguments_alias_on_the_cpu(npu):
    # an out= that overlaps its input is refused as the CPU refuses it,
    # and an op on a view changes the base
    x, dx = torch.arange(6.0), torch.arange(6.0).npu()
    with pytest.raises(RuntimeError) as cpu_error:
        torch.sin(x[:3], out=x[1:4])
    with pytest.raises(RuntimeError) as npu_error:
        torch.sin(dx[:3], out=dx[1:4])
    assert str(npu_error.value) == str(cpu_error.value)
    assert torch.equal(dx.cpu(), x)
    base = torch.zeros(4, 4).npu()
    torch.ops.aten.cumsum_(base[1], 0)      # in place, through the fallback
    base[2].copy_(torch.arange(4.0).npu())
    torch.ops.aten.cumsum_(base[2], 0)
    assert base.cpu()[2].tolist() == [0.0, 1.0, 3.0, 6.0]
    assert base.cpu()[[0, 1, 3]].abs().sum() == 0


CPU_ERRORS = [
    ("cat of mismatched shapes", lambda d: torch.cat(
        [torch.ones(2, 3, device=d), torch.ones(2, 4, device=d)])),
    ("view of a wrong size", lambda d: torch.ones(2, 3, device=d).view(7)),
    ("index out of range", lambda d: torch.ones(3, device=d)[
        torch.tensor([5], device=d)]),
    ("mm of mismatched shapes", lambda d: torch.mm(
        torch.ones(2, 3, device=d), torch.ones(4, 5, device=d))),
    ("add of shapes that do not broadcast", lambda d: torch.ones(
        2, 3, device=d) + torch.ones(4, device=d)),
    ("in-place add that would broadcast self", lambda d: torch.ones(
        3, 1, device=d).add_(torch.ones(3, 3, device=d))),
]


def _error_of(call, device: str):
    """The type and message of what ``call(device)`` raised (the exception
    itself is dropped: its traceback would keep the tensors alive)."""
    try:
        call(device)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None, None


@pytest.mark.parametrize("what,call", CPU_ERRORS, ids=[c[0] for c in
                                                       CPU_ERRORS])
def test_errors_are_the_cpus_and_leak_nothing(npu, clean, unraisable, what,
                                              call):
    cpu_type, _ = _error_of(call, "cpu")
    assert cpu_type is not None
    gc.collect()
    before = torch.npu.memory_allocated()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            npu_type, message = _error_of(call, "npu")
            assert npu_type is cpu_type, message
    gc.collect()
    assert not unraisable, [str(u.exc_value) for u in unraisable]
    assert torch.npu.memory_allocated() == before


def test_davincis_message_is_kept(npu):
    with pytest.raises(RuntimeError, match="matmul inner dimensions differ"):
        torch.mm(torch.ones(2, 3).npu(), torch.ones(4, 5).npu())


def test_complex_tensors_with_conjugate_bits_copy(npu):
    x = torch.randn(5, 6, 7)
    want = torch.fft.hfft(x, n=10, dim=1, norm="ortho")
    got = torch.fft.hfft(x.npu(), n=10, dim=1, norm="ortho")
    torch.testing.assert_close(got.cpu(), want)
    c = torch.randn(4, dtype=torch.complex64)
    assert torch.equal(c.npu().conj().cpu(), c.conj())
    assert torch.equal(c.conj().npu().cpu(), c.conj().resolve_conj())
