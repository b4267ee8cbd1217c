# SPDX-License-Identifier: GPL-2.0
"""Elementwise ops on npu views and broadcast operands (ABI 1.7's strided
operands): bit for bit CPU torch's results, each op one strided task with
no COPY_VIEW first and no CPU fallback (read from the device's trace);
torch's type promotion with the casts on the device; int64, int8, uint8
and bool tensors; a copy into a strided view as one IDENTITY or CAST; and
the broadcasting add of [256, 1024] + [1024] timed against the CPU
fallback it replaces (printed with -s, no timing assertion)."""

import time

import numpy as np
import pytest
import torch

from test_op_table import _ran, trace  # noqa: F401 (a fixture)

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
I64, I32, I8, U8, BOOL = torch.int64, torch.int32, torch.int8, \
    torch.uint8, torch.bool


def _cpu(dt, *shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    if dt.is_floating_point:
        return x.to(dt)
    if dt == BOOL:
        return x > 0
    return (x * 60).to(dt)


def _same(npu_result, cpu_result):
    got = npu_result.cpu()
    assert got.dtype == cpu_result.dtype and got.shape == cpu_result.shape
    if got.dtype.is_floating_point:
        # bit for bit, a NaN as any NaN
        assert torch.equal(torch.isnan(got), torch.isnan(cpu_result))
        ok = ~torch.isnan(got)
        assert torch.equal(got[ok], cpu_result[ok]), (got, cpu_result)
        assert torch.equal(torch.signbit(got[ok]),
                           torch.signbit(cpu_result[ok]))
    else:
        assert torch.equal(got, cpu_result), (got, cpu_result)


def _check(trace, fn, *cpu_args, ops, reference=None):
    """fn on npu copies of ``cpu_args`` equals fn on them (or
    ``reference`` on them), running exactly the device ops ``ops`` and
    nothing on the CPU."""
    expected = (reference or fn)(*cpu_args)
    args = [a.npu() if isinstance(a, torch.Tensor) else a for a in cpu_args]
    box = []
    ran, warned = _ran(trace, lambda: box.append(fn(*args)))
    assert not warned, warned
    assert ran == set(ops), sorted(ran)
    _same(box[0], expected)


_BINARY = [torch.add, torch.sub, torch.mul, torch.maximum, torch.minimum]
_DEV = {torch.add: "ADD", torch.sub: "SUB", torch.mul: "MUL",
        torch.div: "DIV", torch.maximum: "MAX", torch.minimum: "MIN"}


@pytest.mark.parametrize("dt", [F32, F16, BF16, I32, I64, I8, U8], ids=str)
@pytest.mark.parametrize("op", _BINARY + [torch.div], ids=lambda f:
                         f.__name__)
def test_broadcast_and_views_equal_the_cpu(npu, trace, op, dt):
    if op is torch.div and not dt.is_floating_point:
        pytest.skip("an integer division is float32's (the CAST test)")
    a, b = _cpu(dt, 6, 5, seed=1), _cpu(dt, 5, seed=2)
    if op is torch.div:
        b = b.abs() + 1
    dev = {_DEV[op]}
    _check(trace, op, a, b, ops=dev)                     # a row
    _check(trace, lambda x, y: op(x.t(), y[:6]), a, _cpu(dt, 8, seed=3),
           ops=dev)                                     # a transpose
    _check(trace, lambda x, y: op(x[::2, 1:], y), a, b[0].clone(),
           ops=dev)                                     # a 0-dim tensor
    _check(trace, lambda x, y: op(x[:, None, :], y[:, :1]),
           a, a[:4].clone(), ops=dev)                                     # two expanded


@pytest.mark.parametrize("dt", [F32, F16, I64], ids=str)
def test_out_and_in_place_into_views_equal_the_cpu(npu, trace, dt):
    a, b = _cpu(dt, 4, 6, seed=1), _cpu(dt, 6, seed=2)

    def into_view(x, y):
        out = torch.zeros(6, 10, dtype=dt, device=x.device)
        torch.add(x.t(), y[:4], out=out[:, ::2][:, :4])
        return out

    def in_place(x, y):
        x = x.clone()
        x[:, 1::2].mul_(y[:3])
        x.t()[2:].sub_(y[:4])
        return x
    _check(trace, into_view, a, b, ops={"MEMSET", "ADD"})
    _check(trace, in_place, a, b, ops={"MEMCPY", "MUL", "SUB"})


@pytest.mark.parametrize("dt", [F32, F16, I64, I8, U8], ids=str)
@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_give_bool_on_the_device(npu, trace, name, dt):
    fn = getattr(torch, name)
    a, b = _cpu(dt, 5, 4, seed=1), _cpu(dt, 4, seed=2)
    a[0] = b                                            # some equal
    _check(trace, fn, a, b, ops={"CMP"})
    _check(trace, lambda x: fn(x.t(), 0), a, ops={"CMP"})
    if dt.is_floating_point:
        nan = torch.tensor([float("nan"), 1.0, -0.0, float("inf")], dtype=dt)
        _check(trace, fn, nan, nan.flip(0).clone(), ops={"CMP"})


def test_bool_tensors_compare_and_mix(npu, trace):
    m, n = _cpu(BOOL, 4, 5, seed=1), _cpu(BOOL, 5, seed=2)
    _check(trace, torch.eq, m, n, ops={"CAST", "CMP"})
    _check(trace, lambda x, y: x + y, _cpu(F32, 4, 5), m,
           ops={"CAST", "ADD"})


@pytest.mark.parametrize("pair", [(I64, F32), (I32, F16), (U8, I32),
                                  (I8, I64), (BOOL, I64), (F16, F32)],
                         ids=str)
def test_promotion_casts_on_the_device(npu, trace, pair):
    da, db = pair
    a, b = _cpu(da, 3, 4, seed=1), _cpu(db, 4, seed=2)
    _check(trace, torch.add, a, b, ops={"CAST", "ADD"})
    _check(trace, torch.lt, a, b, ops={"CAST", "CMP"})
    if not da.is_floating_point and not db.is_floating_point:
        # an integer division is float32's
        _check(trace, torch.div, a, b.abs() + 1 if db != BOOL else b,
               ops={"CAST", "DIV"})


def test_integer_numbers_and_wrapping(npu, trace):
    big = torch.tensor([2 ** 62, -2 ** 62, 7, -7], dtype=I64)
    _check(trace, lambda x: x * 4 + 3, big, ops={"MUL", "ADD"})
    _check(trace, lambda x: x.t() - 5, _cpu(I8, 3, 4), ops={"SUB"})
    _check(trace, lambda x: x + 0.5, _cpu(I64, 3, 4),
           ops={"CAST", "AXPY"})                        # promoted to float


@pytest.mark.parametrize("dt", [F32, F16, I64, U8], ids=str)
def test_unary_ops_on_views(npu, trace, dt):
    x = _cpu(dt, 5, 6, seed=1)
    _check(trace, lambda t: torch.relu(t.t()[1:]), x, ops={"RELU"})
    _check(trace, lambda t: torch.abs(t[:, ::3]), x, ops={"ABS"})
    if not dt.is_floating_point:
        # against numpy's IEEE sqrt: CPU torch's AVX-512 one is not
        # correctly rounded (1 ulp off for a fifth of floats)
        _check(trace, lambda t: torch.sqrt(t.t().abs()), x,
               ops={"ABS", "CAST", "SQRT"},
               reference=lambda t: torch.from_numpy(np.sqrt(
                   t.t().abs().to(torch.float32).numpy())))


@pytest.mark.parametrize("pair", [(F32, F32), (I64, I64), (BOOL, BOOL),
                                  (F32, F16), (I64, F32), (U8, BOOL)],
                         ids=str)
def test_a_copy_into_a_strided_view_is_one_task(npu, trace, pair):
    ds, dd = pair
    src = _cpu(ds, 4, 6, seed=1)

    def copy(s):
        out = torch.zeros(6, 9, dtype=dd, device=s.device)
        out[:, 1::2].copy_(s.t()[:, :4])
        out[1:3, ::4].copy_(s[0, :3])                   # a broadcast row
        return out
    _check(trace, copy, src, ops={"MEMSET",
                                  "IDENTITY" if ds == dd else "CAST"})


def test_dense_operands_keep_the_template_path(npu, monkeypatch):
    """Dense tensors of one shape take no parameter block (the template,
    a struct copy)."""
    from torch_npu import _devices
    blocks = _devices.context(0).param_blocks
    taken = []
    launch = blocks.launch

    def counting(*args, **kwargs):
        taken.append(1)
        return launch(*args, **kwargs)
    monkeypatch.setattr(blocks, "launch", counting)
    a, b = torch.randn(64, 32).npu(), torch.randn(64, 32).npu()
    for op in (torch.add, torch.mul, torch.lt, torch.maximum):
        op(a, b)
    torch.relu(a)
    torch.npu.synchronize()
    assert not taken
    a + b[0]
    torch.npu.synchronize()
    assert taken


def _timed(fn, repeat: int) -> float:
    fn()
    torch.npu.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.npu.synchronize()
    return (time.perf_counter() - t0) / repeat


def test_broadcasting_add_time_against_the_cpu_fallback(npu):
    from torch_npu import _kernels
    a = torch.randn(256, 1024).npu()
    b = torch.randn(1024).npu()
    device = _timed(lambda: a + b, 50)

    def fallback():
        return _kernels.on_cpu(torch.ops.aten.add.Tensor, "measured", a, b)
    with _kernels.quiet():
        cpu = _timed(fallback, 50)
    print("\n[256, 1024] + [1024] on npu: %.0f us as one strided ADD, "
          "%.0f us through the CPU fallback: %.1fx" % (
              device * 1e6, cpu * 1e6, cpu / device))
