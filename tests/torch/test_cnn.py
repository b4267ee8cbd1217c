# SPDX-License-Identifier: GPL-2.0
"""CNNs on the device: convolutions (1-D, 2-D, strided, padded, dilated,
grouped, depthwise, transposed, with a bias) and batch norm (training and
eval, running statistics) against CPU torch, their backwards computing
only the gradients asked for, in float32 and in float16/bfloat16; then a
CNN trained on scikit-learn's digits and a ResNet-18 step, each in a fresh
process, against the CPU from the same weights, with nothing on the CPU
(convolution, batch norm, pooling, linear, loss and optimizer all device
tasks)."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from davinci import schema
from davinci.trace import TraceSession
from davinci.trace.records import KIND_NAMES

HERE = os.path.dirname(os.path.abspath(__file__))
USERSPACE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "userspace")
aten = torch.ops.aten
#: relative error (norm-wise) allowed against CPU torch in float32
FORWARD_TOL, BACKWARD_TOL = 1e-5, 1e-4
#: the ops the models run, none of which may fall back (the check that
#: follows is stricter: nothing at all on the CPU)
DEVICE_NAMES = ("convolution", "batch_norm", "relu", "threshold", "add",
                "addmm", "mm", "linear", "mean", "sum")
_TASK_COMPLETE = next(k for k, v in KIND_NAMES.items()
                      if v == "TASK_COMPLETE")


def _rel(got: torch.Tensor, want: torch.Tensor) -> float:
    got, want = got.detach().cpu().double(), want.detach().double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


@pytest.fixture
def cpu_ops(npu, monkeypatch):
    """The ops torch_npu's Python kernels hand to the CPU in the test."""
    from torch_npu import _kernels
    seen = []
    warn = _kernels.warn_cpu

    def record(op, reason):
        seen.append(op)
        warn(op, reason)
    monkeypatch.setattr(_kernels, "warn_cpu", record)
    return seen


@pytest.fixture(scope="module")
def trace(npu):
    session = TraceSession(devices=[0], spans=False, poll_ms=0)
    session.start()
    yield session
    session.stop()


def _device_ops(trace, thunk) -> set:
    """The schema ops this process ran on npu:0 in ``thunk``."""
    torch.npu.synchronize()
    trace.drain()
    thunk()
    torch.npu.synchronize()
    return {schema.by_opcode(r.opcode).name for r in trace.drain().records
            if r.type == _TASK_COMPLETE and r.pid == os.getpid()} - {
        "EVENT_RECORD", "EVENT_WAIT", "NOP", "NOTIFY"}


def _randn(*shape, seed=0, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale + shift


# -- convolutions -------------------------------------------------------------
CONVS = {
    "plain": dict(x=(1, 1, 4, 4), w=(1, 1, 3, 3)),
    "strided-dilated-grouped": dict(
        x=(2, 4, 7, 6), w=(6, 2, 3, 2), stride=(2, 1), padding=1,
        dilation=(1, 2), groups=2),
    "depthwise-1d": dict(x=(2, 3, 9), w=(3, 1, 3), groups=3, padding=2),
    "1d-strided": dict(x=(3, 4, 20), w=(5, 4, 4), stride=3, padding=1),
    "same": dict(x=(2, 3, 9, 8), w=(4, 3, 3, 4), padding="same"),
    "depthwise-2d": dict(x=(2, 8, 6, 6), w=(8, 1, 3, 3), groups=8,
                         stride=2, padding=1),
    "transposed": dict(x=(2, 4, 5, 5), w=(4, 3, 3, 3), stride=2,
                       output_padding=1, padding=1, transposed=True),
    "transposed-grouped-1d": dict(x=(2, 4, 7), w=(4, 1, 3), stride=2,
                                  groups=2, transposed=True),
}


def _conv_fn(x, transposed):
    if transposed:
        return F.conv_transpose2d if x.dim() == 4 else F.conv_transpose1d
    return F.conv2d if x.dim() == 4 else F.conv1d


@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolution_and_its_backward_match_the_cpu(npu, cpu_ops, trace,
                                                    name):
    case = dict(CONVS[name])
    transposed = case.pop("transposed", False)
    x = _randn(*case.pop("x"), seed=1).requires_grad_()
    w = _randn(*case.pop("w"), seed=2).requires_grad_()
    groups = case.get("groups", 1)
    b = _randn(w.shape[1] * groups if transposed else w.shape[0],
               seed=3).requires_grad_()
    conv = _conv_fn(x, transposed)
    want = conv(x, w, b, **case)
    gy = _randn(*want.shape, seed=4)
    (want * gy).sum().backward()
    xn, wn, bn = (t.detach().npu().requires_grad_() for t in (x, w, b))
    res = []

    def run():
        res.append(conv(xn, wn, bn, **case))
        (res[0] * gy.npu()).sum().backward()
    ops = _device_ops(trace, run)
    # a convolution's bias is CONV2D's src2, a transposed one's an ADD
    assert {"CONV2D", "CONV2D_BACKWARD_INPUT", "CONV2D_BACKWARD_WEIGHT",
            "REDUCE_SUM"} | ({"ADD"} if transposed else set()) <= ops, ops
    got = res[0]
    assert got.device.type == "npu" and got.shape == want.shape
    assert _rel(got, want) <= FORWARD_TOL
    for a, ref in ((xn, x), (wn, w), (bn, b)):
        assert _rel(a.grad, ref.grad) <= BACKWARD_TOL
    assert not [op for op in cpu_ops if "conv" in op], cpu_ops


def _task_names(trace, thunk) -> list:
    """The schema ops, in order, this process ran on npu:0 in ``thunk``."""
    torch.npu.synchronize()
    trace.drain()
    thunk()
    torch.npu.synchronize()
    return [schema.by_opcode(r.opcode).name for r in trace.drain().records
            if r.type == _TASK_COMPLETE and r.pid == os.getpid() and
            schema.by_opcode(r.opcode).name not in (
                "EVENT_RECORD", "EVENT_WAIT", "NOP", "NOTIFY")]


@pytest.mark.parametrize("dt", [torch.float32, torch.float16,
                                torch.bfloat16])
@pytest.mark.parametrize("conv", ["Conv2d", "Conv1d"])
def test_a_convolution_with_a_bias_is_one_conv2d_task(npu, trace, dt, conv):
    """nn.Conv2d (and Conv1d) with a bias: one CONV2D task, its bias the
    task's src2, the bytes of the convolution without it plus a broadcast
    ADD of the bias on npu."""
    mod = getattr(torch.nn, conv)(3, 5, 3, padding=1, groups=1)
    shape = (2, 3, 7, 6) if conv == "Conv2d" else (2, 3, 9)
    x = _randn(*shape, seed=1).to(dt).npu()
    mod = mod.to(dt).npu()
    out = []
    with torch.no_grad():
        names = _task_names(trace, lambda: out.append(mod(x)))
        assert names == ["CONV2D"], names
        view = (1, -1) + (1,) * (x.dim() - 2)
        ref = F.conv2d(x, mod.weight, padding=1) if conv == "Conv2d" else \
            F.conv1d(x, mod.weight, padding=1)
        ref = ref + mod.bias.reshape(view)
    assert torch.equal(out[0].cpu().view(torch.int16 if dt != torch.float32
                                         else torch.int32),
                       ref.cpu().view(torch.int16 if dt != torch.float32
                                      else torch.int32))


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
def test_a_half_convolution_is_float32_rounded_once(npu, cpu_ops, trace,
                                                    dt):
    # the device widens, computes in float32 and rounds once: the CPU's
    # float32 convolution of the same values, rounded to dt, within the
    # one rounding (the CPU sums in another order)
    x = _randn(2, 3, 7, 7, seed=1).to(dt)
    w = _randn(4, 3, 3, 3, seed=2).to(dt)
    b = _randn(4, seed=3).to(dt)
    xn, wn = x.npu(), w.npu()
    res = []
    ops = _device_ops(trace, lambda: res.append(
        F.conv2d(xn, wn, stride=2, padding=1)))
    assert ops == {"CONV2D"}, ops
    got = res[0].cpu()
    want = F.conv2d(x.float(), w.float(), stride=2, padding=1)
    assert got.dtype == dt
    ulp = torch.finfo(dt).eps
    torch.testing.assert_close(got.float(), want.to(dt).float(), rtol=ulp,
                               atol=1e-3)
    # the bias is one more rounded ADD
    got_b = F.conv2d(x.npu(), w.npu(), b.npu(), stride=2, padding=1).cpu()
    torch.testing.assert_close(got_b, (want.to(dt) + b.view(1, 4, 1, 1)),
                               rtol=2 * ulp, atol=1e-3)
    assert not cpu_ops


@pytest.mark.parametrize("mask", [(True, False, False), (False, True, False),
                                  (False, False, True), (True, True, False),
                                  (False, True, True)])
def test_convolution_backward_computes_only_what_is_asked(npu, trace, mask):
    x, w = _randn(2, 4, 6, 6, seed=1).npu(), _randn(6, 4, 3, 3, seed=2).npu()
    dy = _randn(2, 6, 4, 4, seed=3).npu()
    res = []
    ops = _device_ops(trace, lambda: res.extend(
        aten.convolution_backward_overrideable(
            dy, x, w, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, list(mask))))
    want = {"CONV2D_BACKWARD_INPUT"} if mask[0] else set()
    want |= {"CONV2D_BACKWARD_WEIGHT"} if mask[1] else set()
    want |= {"COPY_VIEW", "REDUCE_SUM"} if mask[2] else set()
    assert ops == want
    cpu = aten.convolution_backward(dy.cpu(), x.cpu(), w.cpu(), [6], [1, 1],
                                    [0, 0], [1, 1], False, [0, 0], 1,
                                    list(mask))
    for asked, got, ref in zip(mask, res, cpu):
        if asked:
            assert _rel(got, ref) <= BACKWARD_TOL
        else:
            assert got is None


@pytest.mark.parametrize("conv", ["Conv2d", "Conv1d"])
def test_a_convolution_seen_before_gives_the_same_bytes(npu, trace, conv):
    """A geometry run once launches its cached parameter block after
    (torch_npu._cnn._blocks): the forward and both gradients, with a bias,
    on other values, are the bytes the first, checked, launch gives those
    values, and each is still its one device task."""
    from torch_npu import _cnn
    mod = getattr(torch.nn, conv)(3, 5, 3, stride=2, padding=1).npu()
    shape = (2, 3, 7, 6) if conv == "Conv2d" else (2, 3, 9)

    def run(seed):
        x = _randn(*shape, seed=seed).npu().requires_grad_()
        mod.zero_grad()
        y = mod(x)
        y.backward(_randn(*y.shape, seed=seed + 1).npu())
        return [t.detach().cpu().view(torch.int32)
                for t in (y, x.grad, mod.weight.grad)]
    _cnn._blocks.clear()
    first = {seed: run(seed) for seed in (1, 3)}    # 3: from the cache
    assert len(_cnn._blocks) == 3, _cnn._blocks.keys()
    _cnn._blocks.clear()
    again = run(3)                                  # 3: checked, uncached
    names = _task_names(trace, lambda: run(3))      # cached
    assert {"CONV2D", "CONV2D_BACKWARD_INPUT",
            "CONV2D_BACKWARD_WEIGHT"} <= set(names), names
    assert names.count("CONV2D") == 1, names
    for got, want in zip(first[3], again):
        assert torch.equal(got, want)
    assert not all(torch.equal(a, b) for a, b in zip(first[1], first[3]))


# -- batch norm ---------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (6, 4), (1, 5, 9),
                                   (3, 2, 4, 4, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_matches_the_cpu_in_training_and_eval(npu, cpu_ops, trace,
                                                         shape, affine):
    bn_class = {2: nn.BatchNorm1d, 3: nn.BatchNorm1d, 4: nn.BatchNorm2d,
                5: nn.BatchNorm3d}[len(shape)]
    torch.manual_seed(0)
    cpu = bn_class(shape[1], affine=affine, momentum=0.3)
    if affine:
        with torch.no_grad():
            cpu.weight.uniform_(0.5, 1.5)
            cpu.bias.uniform_(-1, 1)
    dev = bn_class(shape[1], affine=affine, momentum=0.3)
    dev.load_state_dict(cpu.state_dict())
    dev = dev.npu()
    for step in range(3):
        for mode in ("train", "eval"):
            getattr(cpu, mode)()
            getattr(dev, mode)()
            x = _randn(*shape, seed=10 * step + (mode == "eval"), scale=2,
                       shift=3).requires_grad_()
            xn = x.detach().npu().requires_grad_()
            gy = _randn(*shape, seed=99 + step)
            gyn, res = gy.npu(), []

            def run():
                res.append(dev(xn))
                res[0].backward(gyn)
            want, ops = cpu(x), _device_ops(trace, run)
            # the batch norm ops (eval: invstd's square root of the
            # running variance first): on the device
            assert ({"BN_TRAINING_REDUCE", "BN_TRAINING_UPDATE_GRAD",
                     "BN_TRAINING_REDUCE_GRAD"} if mode == "train" else
                    {"SQRT", "BN_TRAINING_UPDATE"}) <= ops, (step, mode, ops)
            got = res[0]
            assert _rel(got, want) <= FORWARD_TOL, (step, mode)
            want.backward(gy)
            assert _rel(xn.grad, x.grad) <= BACKWARD_TOL, (step, mode)
    for name, want in cpu.state_dict().items():
        got = dev.state_dict()[name]
        assert got.device.type == "npu"
        if want.dtype.is_floating_point:
            assert _rel(got, want) <= FORWARD_TOL, name
        else:
            assert torch.equal(got.cpu(), want), name    # batches tracked
    for name, p in cpu.named_parameters():
        assert _rel(dict(dev.named_parameters())[name].grad, p.grad) <= \
            BACKWARD_TOL, name
    assert not [op for op in cpu_ops if "batch_norm" in op], cpu_ops


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("param_dtype", ["same", "float32"])
def test_a_half_batch_norm_is_computed_in_float32(npu, cpu_ops, trace, dt,
                                                  param_dtype):
    pdt = dt if param_dtype == "same" else torch.float32
    x = _randn(4, 3, 5, 5, seed=1, scale=2, shift=1).to(dt)
    w, b = _randn(3, seed=2).to(pdt), _randn(3, seed=3).to(pdt)
    rm, rv = torch.zeros(3, dtype=pdt), torch.ones(3, dtype=pdt)
    drm, drv = rm.npu(), rv.npu()
    for training in (True, False):
        want = aten.native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5)
        xn, wn, bn, got = x.npu(), w.npu(), b.npu(), []
        ops = _device_ops(trace, lambda: got.extend(aten.native_batch_norm(
            xn, wn, bn, drm, drv, training, 0.1, 1e-5)))
        # x read in its dtype and summed in float32 by the device's ops;
        # parameters of x's dtype cast to float32 and back
        assert ({"BN_TRAINING_REDUCE"} if training else {"SQRT"}) | (
            {"CAST"} if pdt != torch.float32 else set()) <= ops, ops
        assert "BN_TRAINING_UPDATE" in ops, ops
        for g, ref in zip(got, want):
            assert g.dtype == ref.dtype and g.shape == ref.shape
            torch.testing.assert_close(g.cpu(), ref, rtol=4 *
                                       torch.finfo(dt).eps, atol=1e-2)
        torch.testing.assert_close(drm.cpu(), rm)
        torch.testing.assert_close(drv.cpu(), rv)
    assert not cpu_ops


def test_batch_norm_backward_computes_only_what_is_asked(npu, trace):
    x, dy = _randn(2, 3, 4, 4, seed=1).npu(), _randn(2, 3, 4, 4, seed=2).npu()
    w, rm = _randn(3, seed=3).npu(), _randn(3, seed=4).npu()
    rv = _randn(3, seed=5).abs().npu()
    res = []
    # eval, grad_input alone: dy * (invstd * w), no sums over the batch
    ops = _device_ops(trace, lambda: res.extend(
        aten.native_batch_norm_backward(dy, x, w, rm, rv, None, None, False,
                                        1e-5, [True, False, False])))
    assert "BN_TRAINING_UPDATE_GRAD" not in ops and \
        "BN_TRAINING_REDUCE_GRAD" not in ops, ops
    assert res[1] is None and res[2] is None
    want = aten.native_batch_norm_backward(
        dy.cpu(), x.cpu(), w.cpu(), rm.cpu(), rv.cpu(), None, None, False,
        1e-5, [True, False, False])
    assert _rel(res[0], want[0]) <= BACKWARD_TOL
    # training, the weight's and the bias's gradients only
    mean, invstd = rm, rv
    res.clear()
    ops = _device_ops(trace, lambda: res.extend(
        aten.native_batch_norm_backward(dy, x, w, None, None, mean, invstd,
                                        True, 1e-5, [False, True, True])))
    assert res[0] is None
    # (the statistics, not batch_norm's rows of one tensor, copied
    # into rows first)
    assert ops == {"MEMCPY", "BN_TRAINING_UPDATE_GRAD"}, ops
    want = aten.native_batch_norm_backward(
        dy.cpu(), x.cpu(), w.cpu(), None, None, mean.cpu(), invstd.cpu(),
        True, 1e-5, [False, True, True])
    for got, ref in zip(res[1:], want[1:]):
        assert _rel(got, ref) <= BACKWARD_TOL


def test_global_average_pooling_is_a_mean_on_the_device(
        npu, cpu_ops, trace):
    # AdaptiveAvgPool2d(1) is mean over H and W: REDUCE_SUM of the rows
    x = _randn(2, 5, 3, 4, seed=1).requires_grad_()
    xn = x.detach().npu().requires_grad_()
    res = []
    ops = _device_ops(trace, lambda: res.append(F.adaptive_avg_pool2d(xn, 1)))
    assert "REDUCE_SUM" in ops, ops
    want, got = F.adaptive_avg_pool2d(x, 1), res[0]
    assert _rel(got, want) <= FORWARD_TOL
    gy = _randn(2, 5, 1, 1, seed=2)
    want.backward(gy)
    got.backward(gy.npu())
    assert _rel(xn.grad, x.grad) <= FORWARD_TOL
    assert not cpu_ops


# -- whole models -------------------------------------------------------------
def _run_worker(which: str, tmp_path) -> dict:
    """cnn_worker.py's runs of ``which``, in a fresh process on this
    backend, with this tree's torch_npu."""
    out = tmp_path / ("%s.pt" % which)
    env = dict(os.environ, PYTHONPATH=USERSPACE + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(HERE, "cnn_worker.py"),
                        which, str(out)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return torch.load(out)


def _assert_nothing_on_the_cpu(ran_on_cpu) -> None:
    on_device = [op for op in ran_on_cpu
                 if any(n in op for n in DEVICE_NAMES)]
    assert not on_device, on_device
    assert not ran_on_cpu, sorted(ran_on_cpu)


def test_a_cnn_trains_on_digits_as_on_the_cpu(npu, tmp_path):
    pytest.importorskip("sklearn.datasets")
    runs = _run_worker("digits", tmp_path)
    cpu, dev = runs["cpu"], runs["npu"]
    assert cpu["losses"][-1] < cpu["losses"][0] / 10       # it learned
    assert cpu["accuracy"] > 0.9
    assert abs(dev["accuracy"] - cpu["accuracy"]) <= 0.02
    for i, (a, b) in enumerate(zip(cpu["losses"], dev["losses"])):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(a)), (i, a, b)
    for name, want in cpu["state"].items():
        got = dev["state"][name]
        if want.dtype.is_floating_point:
            assert _rel(got, want) <= 1e-3, name
    _assert_nothing_on_the_cpu(runs["fallback_ops"])


def test_a_resnet18_step_matches_the_cpu(npu, tmp_path):
    runs = _run_worker("resnet18", tmp_path)
    cpu, dev = runs["cpu"], runs["npu"]
    assert _rel(dev["out"], cpu["out"]) <= 1e-4
    for name, want in cpu["grads"].items():
        assert _rel(dev["grads"][name], want) <= 1e-3, name
    for name, want in cpu["state"].items():
        got, init = dev["state"][name], runs["init"][name]
        if want.dtype.is_floating_point:
            # what the step changed (a parameter from 0, as a bias, is -lr
            # times its gradient)
            assert _rel(got - init, want - init) <= BACKWARD_TOL, name
        else:
            assert torch.equal(got, want), name     # batches tracked
    _assert_nothing_on_the_cpu(runs["fallback_ops"])
