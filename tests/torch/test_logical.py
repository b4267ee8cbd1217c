# SPDX-License-Identifier: GPL-2.0
"""where (out= too, every dtype torch takes, broadcast views, 0-dim CPU
operands), isneginf/isposinf/isinf/isfinite/isnan, all/any (all dims, one,
several, none, empty ones, keepdim, views) and cat (any dim, any number
of inputs, strided, expanded and empty ones, mixed dtypes, out=) on npu:
CPU torch's results bit for bit, running the device ops their rows claim
and nothing on the CPU (read from the device's trace); fill_ of an empty
npu tensor runs nothing and checks its number as CPU torch."""

import math

import pytest
import torch

from test_op_table import _ran, trace  # noqa: F401 (a fixture)

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
I64, I32, I8, U8, BOOL = torch.int64, torch.int32, torch.int8, \
    torch.uint8, torch.bool
DEVICE = [F32, F16, BF16, I32, I64, I8, U8, BOOL]
CARRIED = [torch.float64, torch.int16, torch.complex64, torch.complex128]


def _cpu(dt, *shape, seed=0, special=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g).mul(2).round()
    if special and x.numel() >= 5:
        flat = x.view(-1)
        flat[:5] = torch.tensor([math.inf, -math.inf, math.nan, -0.0, 0.0])
    if dt == BOOL:
        return x > 0
    if dt.is_floating_point or dt.is_complex:
        return (x * 1.5).to(dt)
    return (torch.nan_to_num(x, 0.0, 0.0, 0.0) * 20).to(dt)


def _bits(t: torch.Tensor) -> torch.Tensor:
    if t.dtype.is_complex:
        t = torch.view_as_real(t)
    if t.dtype.is_floating_point:
        return t.contiguous().view({2: torch.int16, 4: torch.int32,
                                    8: torch.int64}[t.element_size()])
    return t


def _same(got, want):
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (
        got.dtype, want.dtype, got.shape, want.shape)
    assert torch.equal(_bits(got), _bits(want)), (got, want)


def _check(trace, fn, *cpu_args, ops):
    """fn on npu copies of ``cpu_args`` (CPU 0-dim tensors stay) is fn on
    them bit for bit, running exactly the device ops ``ops``, nothing on
    the CPU."""
    want = fn(*cpu_args)
    args = [a.npu() if isinstance(a, torch.Tensor) and a.dim() else a
            for a in cpu_args]
    box = []
    ran, warned = _ran(trace, lambda: box.append(fn(*args)))
    assert not warned, warned
    assert ran == set(ops), sorted(ran)
    got = box[0]
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want):
            _same(g, w)
    else:
        _same(got, want)


# -- where --------------------------------------------------------------------
@pytest.mark.parametrize("dt", DEVICE + CARRIED, ids=str)
def test_where_equals_the_cpu(npu, trace, dt):
    c = _cpu(BOOL, 3, 4, 5, seed=1)
    x, y = _cpu(dt, 3, 4, 5, seed=2), _cpu(dt, 4, 1, seed=3)
    ops = {"IDENTITY", "SELECT"}
    _check(trace, torch.where, c, x, y, ops=ops)             # broadcast
    _check(trace, lambda c, x, y: torch.where(
        c.transpose(0, 2)[::2], x.transpose(0, 2)[::2], y[1, 0]), c, x, y,
        ops=ops)                                             # views
    _check(trace, lambda c, y: torch.where(c, y[0, 0].cpu(), y), c, y,
           ops=ops)                                          # 0-dim CPU
    _check(trace, lambda c, x: torch.where(c, x, x[0, 0, 0].cpu()), c, x,
           ops=ops if dt in CARRIED else {"FILL", "SELECT"})

    def out(c, x, y):
        o = torch.empty(0, dtype=dt, device=x.device)
        torch.where(c, x, y, out=o)
        return o
    _check(trace, out, c, x, y, ops=ops)


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
def test_where_promotes_on_the_device(npu, trace, dt):
    c = _cpu(BOOL, 4, 5, seed=1)
    _check(trace, torch.where, c, _cpu(I32, 4, 5), _cpu(dt, 5),
           ops={"CAST", "IDENTITY", "SELECT"})
    _check(trace, torch.where, c, _cpu(dt, 4, 5), _cpu(I64, 5),
           ops={"CAST", "SELECT"})


def test_where_out_of_another_dtype_or_overlapping_is_the_cpus(npu):
    c, x = _cpu(BOOL, 4, 5), _cpu(F32, 4, 5)
    with pytest.raises(RuntimeError, match="Expected out type to be Float "
                       "but got Double"):
        torch.where(c.npu(), x.npu(), x.npu(),
                    out=torch.empty(0, dtype=torch.float64).npu())
    xn = x.npu()
    torch.where(c.npu(), 0.5 * xn, xn, out=xn)      # out= is an operand
    _same(xn, torch.where(c, 0.5 * x, x))


# -- isneginf, isposinf, isinf, isfinite, isnan -------------------------------
_TESTS = ["isneginf", "isposinf", "isinf", "isfinite", "isnan"]


@pytest.mark.parametrize("name", _TESTS)
@pytest.mark.parametrize("dt", DEVICE, ids=str)
def test_inf_and_nan_tests_equal_the_cpu(npu, trace, name, dt):
    f = getattr(torch, name)
    x = _cpu(dt, 4, 6, special=True)
    if not dt.is_floating_point:
        ops = {"FILL"}
    else:
        ops = {"ABS", "CMP"} if name in ("isinf", "isfinite") else {"CMP"}
    _check(trace, f, x, ops=ops)
    if dt.is_floating_point:        # (a view: a strided CMP)
        _check(trace, lambda x: f(x.t()[1::2]), x, ops=ops)
    if name != "isfinite":          # (no out= overload)
        def out(x):
            o = torch.empty(0, dtype=BOOL, device=x.device)
            getattr(torch.ops.aten, name).out(x, out=o)
            return o
        _check(trace, out, x, ops=ops)


# -- all, any -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dt", DEVICE, ids=str)
def test_all_and_any_equal_the_cpu(npu, trace, name, dt):
    f = getattr(torch, name)
    arg = "ARGMIN" if name == "all" else "ARGMAX"
    x = _cpu(dt, 3, 4, 5, special=True)
    x[0] = 1                # a row of all true, a row with one false
    x[1, 1] = 0
    x[1, 2] = 0
    x[1, 2, 3] = 1
    cmp = set() if dt == BOOL else {"CMP"}
    last = cmp | {arg, "INDEX_SELECT"}
    moved = last | {"COPY_VIEW"}
    _check(trace, f, x, ops=last)
    _check(trace, lambda x: (f(x, -1), f(x, (1, 2), keepdim=True),
                             f(x, dim=None)), x, ops=last)
    _check(trace, lambda x: (f(x, 0), f(x, 1, keepdim=True),
                             f(x, (0, 2))), x, ops=moved)
    # a view: CMP reads it in place into a dense result (a bool one is
    # copied dense)
    _check(trace, lambda x: f(x.transpose(0, 2)[1:], -1), x,
           ops=moved if dt == BOOL else last)
    _check(trace, lambda x: f(x, ()), x, ops=cmp | {"MEMCPY"})
    _check(trace, lambda x: f(x[:, :0], 1), x, ops={"FILL"})

    def out(x):
        o = torch.empty(0, dtype=U8 if dt == U8 else BOOL, device=x.device)
        f(x, 2, out=o)
        return o
    _check(trace, out, x, ops=last | {"MEMCPY"})


# -- cat ----------------------------------------------------------------------
@pytest.mark.parametrize("dt", DEVICE + CARRIED, ids=str)
def test_cat_equals_the_cpu(npu, trace, dt):
    a, b = _cpu(dt, 3, 4, 5, seed=1), _cpu(dt, 3, 4, 5, seed=2)
    c = _cpu(dt, 3, 2, 5, seed=3)
    _check(trace, lambda a, b: torch.cat([a, b, a]), a, b, ops={"MEMCPY"})
    _check(trace, lambda a, b, c: torch.cat([a, c, b], 1), a, b, c,
           ops={"IDENTITY"})
    _check(trace, lambda a, b: (torch.cat([a, b], 2),
                                torch.cat([a, b], -1)), a, b,
           ops={"IDENTITY"})
    _check(trace, lambda a, b: torch.cat(
        [a.transpose(1, 2).contiguous().transpose(1, 2), b[:, :1].expand(
            3, 4, 5)]), a, b, ops={"COPY_VIEW"})
    _check(trace, lambda a, b: torch.cat(
        [a, torch.empty(0, dtype=dt, device=a.device), b], 1), a, b,
        ops={"IDENTITY"})          # a legacy empty input, skipped

    def out(a, b):
        o = torch.empty(0, dtype=dt, device=a.device)
        torch.cat([a, b], 0, out=o)
        return o
    _check(trace, out, a, b, ops={"MEMCPY"})


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
def test_cat_promotes_on_the_device(npu, trace, dt):
    _check(trace, lambda a, b: torch.cat([a, b]), _cpu(dt, 2, 3),
           _cpu(I32, 4, 3), ops={"MEMCPY", "CAST"})
    _check(trace, lambda a, b: torch.cat([a, b], 1), _cpu(I64, 2, 3),
           _cpu(dt, 2, 4), ops={"CAST", "IDENTITY"})


def test_cat_refuses_what_the_cpu_refuses(npu):
    a = torch.zeros(4).npu()
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.cat([a[:2], a[2:]], out=a)
    with pytest.raises(RuntimeError):
        torch.cat([torch.zeros(2, 3).npu(), torch.zeros(2, 4).npu()])


def test_fill_of_an_empty_tensor_runs_nothing(npu, trace):
    x = torch.empty(0, 3, dtype=U8).npu()
    ran, warned = _ran(trace, lambda: (x.zero_(), x.fill_(7)))
    assert not ran and not warned, (ran, warned)
    with pytest.raises(RuntimeError, match="overflow"):
        x.fill_(300)
