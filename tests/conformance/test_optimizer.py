# SPDX-License-Identifier: GPL-2.0
"""DAVINCI_OP_ADAM, one Adam/AdamW step of a parameter as one task (and
SGD_MOMENTUM, one SGD step with momentum, at the end):
bit-identical to its float32 formula (R.adam) in param, exp_avg and
exp_avg_sq and every float dtype; within float32 rounding of numpy's
float64 Adam over several steps; within a stated bound of CPU torch's
fused Adam (whose vector loop contracts the lerp into an FMA); the
device refuses overlapping operands and AMSGrad."""

import numpy as np
import pytest
import torch

from davinci import ops, opdesc
from davinci.errors import InvalidArgumentError, TaskFailedError
from davinci.optim import adam_fields

from . import _ref as R

FLOATS = ("float32", "float16", "bfloat16")
_TORCH = {"float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16}


def _state(rng, n, dtype):
    p, g, m = (R.random(rng, (n,), dtype, -3, 3) for _ in range(3))
    v = R.from_f32(np.abs(R.to_f32(R.random(rng, (n,), dtype, -2, 2),
                                   dtype)), dtype)
    return [p, g, m, v]


def _on_device(dev, raws, dtype):
    return [dev.tensor(r.copy(), dtype) for r in raws]


HYPER = [dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8),
         dict(lr=0.05, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.1),
         dict(lr=0.02, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.05,
              decoupled=True),
         dict(lr=0.01, beta1=0.2, beta2=0.9, eps=1e-4, maximize=True)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("hyper", HYPER, ids=lambda h: ",".join(h))
def test_adam_is_its_float32_formula_in_all_three_tensors(dev, rng, dtype,
                                                          hyper):
    raws = _state(rng, 1000, dtype)     # several chunks' worth of elements
    ts = _on_device(dev, raws, dtype)
    vals = [R.to_f32(r, dtype) for r in raws]
    for step in (1, 2, 3):
        ops.adam(*ts, step=step, **hyper)
        x, m, v = R.adam(*vals, adam_fields(step=step, **hyper))
        # the next step starts from the stored (rounded) values
        vals = [R.to_f32(R.from_f32(x, dtype), dtype), vals[1],
                R.to_f32(R.from_f32(m, dtype), dtype),
                R.to_f32(R.from_f32(v, dtype), dtype)]
        for t, want in zip((ts[0], ts[2], ts[3]), (x, m, v)):
            got = t.numpy(raw=True)
            assert np.array_equal(got.view(np.uint8), R.from_f32(
                want, dtype).view(np.uint8)), (dtype, step)
        assert np.array_equal(ts[1].numpy(raw=True), raws[1])   # grad read


def _adam_f64(x, g, m, v, step, lr, beta1, beta2, eps, weight_decay=0.0,
              decoupled=False, maximize=False):
    """torch's Adam (adam.py's single-tensor loop) in float64."""
    g = -g if maximize else g
    if decoupled:
        x = x * (1 - lr * weight_decay)
    elif weight_decay:
        g = g + weight_decay * x
    m = m + (g - m) * (1 - beta1)
    v = v * beta2 + (1 - beta2) * g * g
    den = np.sqrt(v) / np.sqrt(1 - beta2 ** step) + eps
    return x - lr / (1 - beta1 ** step) * m / den, m, v


@pytest.mark.parametrize("hyper", HYPER, ids=lambda h: ",".join(h))
def test_adam_follows_float64_adam_over_steps(dev, rng, hyper):
    raws = _state(rng, 257, "float32")
    ts = _on_device(dev, raws, "float32")
    x, g, m, v = (r.astype(np.float64) for r in raws)
    for step in range(1, 11):
        g = rng.uniform(-1, 1, g.shape)
        ts[1] = dev.tensor(g.astype(np.float32))
        ops.adam(*ts, step=step, **hyper)
        x, m, v = _adam_f64(x, g.astype(np.float32).astype(np.float64), m,
                            v, step, **hyper)
    # a float32 step moves param by at most lr: its error is a few ulps
    # of param plus rounding of the update
    np.testing.assert_allclose(ts[0].numpy(), x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ts[2].numpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ts[3].numpy(), v, rtol=1e-5, atol=1e-7)


def _ulps(a, b, dtype):
    bits = np.int32 if dtype == "float32" else np.int16
    a, b = (np.ascontiguousarray(t).view(bits).astype(np.int64)
            for t in (a, b))
    sign = np.int64(1) << (8 * np.dtype(bits).itemsize - 1)
    a, b = (np.where(t < 0, -(t & (sign - 1)), t) for t in (a, b))
    return np.abs(a - b)


#: ulps of param, exp_avg and exp_avg_sq one step may be from CPU torch's
#: fused Adam: its vector loop computes exp_avg's lerp with an FMA (one
#: rounding fewer), which the float32 formula carries into the update; in
#: float16 and bfloat16 both round to the storage type, one ulp apart at most
TORCH_ULPS = {"float32": 8, "float16": 1, "bfloat16": 1}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("hyper", HYPER, ids=lambda h: ",".join(h))
def test_adam_matches_cpu_torch_fused_adam(dev, rng, dtype, hyper):
    raws = _state(rng, 203, dtype)
    ts = _on_device(dev, raws, dtype)
    cpu = [torch.from_numpy(R.to_f32(r, dtype)).to(_TORCH[dtype])
           for r in raws]
    kw = dict(hyper)
    fn = torch._fused_adamw_ if kw.pop("decoupled", False) else \
        torch._fused_adam_
    kw.setdefault("weight_decay", 0.0)
    kw.setdefault("maximize", False)
    step = 4
    ops.adam(*ts, step=step, **hyper)
    fn([cpu[0]], [cpu[1]], [cpu[2]], [cpu[3]], [], [torch.tensor(
        float(step))], amsgrad=False, **kw)
    for t, c in zip((ts[0], ts[2], ts[3]), (cpu[0], cpu[2], cpu[3])):
        want = R.from_f32(c.float().numpy(), dtype)
        worst = _ulps(t.numpy(raw=True), want, dtype).max()
        print("%s %s: %d ulp from CPU torch" % (dtype, fn.__name__, worst))
        assert worst <= TORCH_ULPS[dtype]


def _launch_refused(dev, block: bytes, operands, count):
    with dev.malloc(4096) as mem:
        mem.write(block)
        s = dev.stream()
        s.launch(opdesc.describe("adam", "float32", dst=operands[0],
                                 srcs=operands[1:], count=count,
                                 params_at=mem.dev_addr))
        with pytest.raises(TaskFailedError):
            s.synchronize()
        s.reset()


def test_the_device_refuses_overlapping_operands_and_amsgrad(dev):
    fields = adam_fields(lr=0.01, step=1, beta1=0.9, beta2=0.999, eps=1e-8)
    good = opdesc.pack_params("adam", **fields)
    with dev.malloc(4096) as buf:
        buf.write(np.ones(1024, np.float32))
        a = buf.dev_addr
        # every pair of the four operands, each of 8 elements, overlapping
        for i in range(4):
            for j in range(i + 1, 4):
                at = [a + 64 * k for k in range(4)]
                at[j] = at[i] + 4
                _launch_refused(dev, good, at, 8)
        _launch_refused(dev, opdesc.pack_params(
            "adam", **dict(fields, amsgrad=1)),
            [a + 64 * k for k in range(4)], 8)
        _launch_refused(dev, opdesc.pack_params(
            "adam", **dict(fields, maximize=2)),
            [a + 64 * k for k in range(4)], 8)
        assert np.array_equal(np.frombuffer(buf.read(4096), np.float32),
                              np.ones(1024, np.float32))
    with pytest.raises(InvalidArgumentError, match="amsgrad"):
        adam_fields(lr=0.01, step=1, beta1=0.9, beta2=0.999, eps=1e-8,
                    amsgrad=True)
    x = dev.tensor(np.ones(16, np.float32))
    with pytest.raises(InvalidArgumentError, match="share memory"):
        ops.adam(x, x, dev.tensor(np.zeros(16, np.float32)),
                 dev.tensor(np.zeros(16, np.float32)), lr=0.1, step=1)


# -- SGD_MOMENTUM ---------------------------------------------------------------
SGD_HYPER = [dict(lr=0.1, momentum=0.9),
             dict(lr=0.05, momentum=0.8, dampening=0.1, weight_decay=0.01),
             dict(lr=0.01, momentum=0.9, nesterov=True, maximize=True,
                  weight_decay=0.1)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("hyper", SGD_HYPER, ids=lambda h: ",".join(h))
def test_sgd_momentum_is_its_float32_formula(dev, rng, dtype, hyper):
    from davinci.optim import sgd_momentum_fields
    raws = _state(rng, 1000, dtype)[:3]
    ts = _on_device(dev, raws, dtype)
    vals = [R.to_f32(r, dtype) for r in raws]
    for step in range(3):
        kw = dict(hyper, first_step=step == 0)
        ops.sgd_momentum(*ts, **kw)
        x, b = R.sgd_momentum(*vals, sgd_momentum_fields(**kw))
        vals = [R.to_f32(R.from_f32(x, dtype), dtype), vals[1],
                R.to_f32(R.from_f32(b, dtype), dtype)]
        for t, want in zip((ts[0], ts[2]), (x, b)):
            assert np.array_equal(t.numpy(raw=True).view(np.uint8),
                                  R.from_f32(want, dtype).view(np.uint8))
        assert np.array_equal(ts[1].numpy(raw=True), raws[1])


@pytest.mark.parametrize("hyper", SGD_HYPER, ids=lambda h: ",".join(h))
def test_sgd_momentum_matches_float64_and_cpu_torch(dev, rng, hyper):
    raws = _state(rng, 203, "float32")[:3]
    ts = _on_device(dev, raws, "float32")
    x, _, b = (r.astype(np.float64) for r in raws)
    cpu = [torch.from_numpy(r.copy()) for r in raws]
    kw = dict(dict(dampening=0.0, weight_decay=0.0, nesterov=False,
                   maximize=False), **hyper)
    for step in range(8):
        g = rng.uniform(-1, 1, x.shape).astype(np.float32)
        ts[1] = dev.tensor(g)
        cpu[1] = torch.from_numpy(g.copy())
        ops.sgd_momentum(*ts, first_step=step == 0, **hyper)
        torch._fused_sgd_([cpu[0]], [cpu[1]], [cpu[2]],
                          is_first_step=step == 0, **kw)
        g = g.astype(np.float64)
        g = -g if kw["maximize"] else g
        g = g + kw["weight_decay"] * x
        b = g if step == 0 else b * kw["momentum"] + (
            1 - kw["dampening"]) * g
        x = x - kw["lr"] * (g + kw["momentum"] * b if kw["nesterov"]
                            else b)
    np.testing.assert_allclose(ts[0].numpy(), x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ts[2].numpy(), b, rtol=1e-5, atol=1e-6)
    # CPU torch's vector loop contracts into FMAs: a few ulps apart
    np.testing.assert_allclose(ts[0].numpy(), cpu[0].numpy(), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(ts[2].numpy(), cpu[2].numpy(), rtol=1e-6,
                               atol=1e-7)


def test_the_device_refuses_a_bad_sgd_block_and_overlaps(dev):
    from davinci.optim import sgd_momentum_fields
    fields = sgd_momentum_fields(lr=0.1, momentum=0.9)
    good = opdesc.pack_params("sgd_momentum", **fields)

    def refused(block, at):
        with dev.malloc(4096) as mem:
            mem.write(block)
            s = dev.stream()
            s.launch(opdesc.describe("sgd_momentum", "float32", dst=at[0],
                                     srcs=at[1:], count=8,
                                     params_at=mem.dev_addr))
            with pytest.raises(TaskFailedError):
                s.synchronize()
            s.reset()
    with dev.malloc(4096) as buf:
        buf.write(np.ones(1024, np.float32))
        a = buf.dev_addr
        for i in range(3):
            for j in range(i + 1, 3):
                at = [a + 64 * k for k in range(3)]
                at[j] = at[i] + 8
                refused(good, at)
        for bad in (dict(nesterov=2), dict(maximize=3), dict(first_step=2),
                    dict(pad=1)):
            refused(opdesc.pack_params("sgd_momentum",
                                       **dict(fields, **bad)),
                    [a + 64 * k for k in range(3)])
        assert np.array_equal(np.frombuffer(buf.read(4096), np.float32),
                              np.ones(1024, np.float32))
    with pytest.raises(InvalidArgumentError, match="momentum 0"):
        sgd_momentum_fields(lr=0.1, momentum=0.0)
