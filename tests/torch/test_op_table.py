# SPDX-License-Identifier: GPL-2.0
"""torch_npu's table (torch_npu._op_table.TABLE), the one table from ATen
op to device op: each path of each row runs the device ops it claims and
no others, in every dtype it claims, with no CPU fallback (read from the
device's trace); together they reach every compute op of the schema, or
the schema says why not; the kernels registered are the table's; the
README lists it; abs, leaky_relu and strided copies equal CPU torch bit for
bit; torch_npu imports nothing private of davinci."""

import ast
import importlib.util
import math
import os
import warnings

import pytest
import torch
import torch.nn.functional as F

from davinci import schema
from davinci.trace import TraceSession
from davinci.trace.records import KIND_NAMES

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TORCH_NPU = os.path.join(REPO, "userspace", "torch_npu")
aten = torch.ops.aten
F32, F16, BF16, I32 = torch.float32, torch.float16, torch.bfloat16, \
    torch.int32
#: ops a sample may queue besides its own: the allocator's free marks
_BOOKKEEPING = {"EVENT_RECORD", "EVENT_WAIT", "NOP", "NOTIFY"}
_TASK_COMPLETE = next(k for k, v in KIND_NAMES.items()
                      if v == "TASK_COMPLETE")


@pytest.fixture(scope="module")
def table(npu):
    from torch_npu import _op_table
    return _op_table


# -- running an op and reading what the device did ----------------------------
@pytest.fixture(scope="module")
def trace(npu):
    """A trace of npu:0 (no host spans, so that the C++ half runs add's
    common case itself)."""
    session = TraceSession(devices=[0], spans=False, poll_ms=0)
    session.start()
    yield session
    session.stop()


def _ran(trace, thunk):
    """(names of the device ops this process ran in ``thunk``, the ops it
    ran on the CPU: every call of a Python kernel's fallback, and the
    warnings of the C++ fallback, which warns once per op)."""
    from torch_npu import _kernels
    torch.npu.synchronize()
    trace.drain()
    fell_back = []
    warn_cpu = _kernels.warn_cpu

    def record(op, reason):
        fell_back.append(op)
        warn_cpu(op, reason)
    _kernels.warn_cpu = record
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            thunk()
            torch.npu.synchronize()
    finally:
        _kernels.warn_cpu = warn_cpu
    ops = {schema.by_opcode(r.opcode).name for r in trace.drain().records
           if r.type == _TASK_COMPLETE and r.pid == os.getpid()}
    return ops - _BOOKKEEPING, fell_back + [
        str(w.message) for w in caught if "torch_npu" in str(w.message)]


def _t(dt, *shape, seed=0, positive=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    if positive:
        x = x.abs() + 0.5
    if dt.is_floating_point or dt.is_complex:
        return x.to(dt).npu()
    if dt == torch.bool:
        return (x > 0).npu()
    return (x * 100).to(dt).npu()


def _special_t(dt, *shape):
    """An npu tensor of ``dt`` holding zeros, and infinities and NaNs for a
    float dtype, among other values."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(*shape, generator=g).mul(2).round()
    if dt.is_floating_point:
        flat = x.view(-1)
        flat[:4] = torch.tensor([math.inf, -math.inf, math.nan, -0.0])
        flat[-1] = math.inf
    return (x > 0 if dt == torch.bool else x.to(dt)).npu()


def _other(dt):
    """A device dtype other than ``dt``."""
    return F16 if dt == F32 else F32


def _copies():
    return [
        # MEMCPY: the same layout
        lambda dt: (lambda x, y: lambda: y.copy_(x))(
            _t(dt, 4, 5), torch.empty(4, 5, dtype=dt, device="npu")),
        # CAST
        lambda dt: (lambda x: lambda: x.to(_other(dt)))(_t(dt, 4, 5)),
        # COPY_VIEW: a transpose made contiguous
        lambda dt: (lambda x: lambda: x.t().contiguous())(_t(dt, 4, 5)),
        # COPY_VIEW then CAST
        lambda dt: (lambda x, y: lambda: y.copy_(x.t()))(
            _t(dt, 4, 5), torch.empty(5, 4, dtype=_other(dt),
                                      device="npu")),
        # IDENTITY: into a slice, from a transpose and a broadcast row
        lambda dt: (lambda x, y: lambda: (y[:, 1::2].copy_(x.t()),
                                          y[1:3, :3].copy_(x[0, :3])))(
            _t(dt, 4, 5), torch.zeros(5, 8, dtype=dt, device="npu")),
        # CAST into a slice
        lambda dt: (lambda x, y: lambda: y[:, 1::2].copy_(x.t()))(
            _t(dt, 4, 5), torch.zeros(5, 8, dtype=_other(dt),
                                      device="npu")),
    ]


def _resized(dt, src):
    return lambda: aten._copy_from_and_resize(
        src, torch.empty(0, dtype=dt, device="npu"))


def _on_views(op, dt):
    """op on views broadcast against each other: a transpose and a row,
    a slice and a 0-dim tensor, into an out= that is a view and in place
    into one; a Python int for an integer dtype."""
    a = _t(dt, 4, 6, seed=1)
    b = _t(dt, 4, seed=2, positive=True)
    s = _t(dt, 1, seed=3, positive=True).reshape(())
    out = torch.empty(6, 8, dtype=dt, device="npu")
    minmax = op in (torch.maximum, torch.minimum)
    numbers = not dt.is_floating_point and op is not torch.div and not minmax

    def run():
        op(a.t(), b)
        op(a[:, 1::2], s)
        op(a.t()[::2], b, out=out[:3, 2:6])
        if not minmax:
            getattr(a[1:, ::2], op.__name__ + "_")(b[:3])
        if numbers:
            op(a, 3)
    return run


def _promoted(op, dt):
    """op of an int64 tensor and one of ``dt``: promoted to dt."""
    return (lambda a, b: lambda: (op(a, b), op(b.t(), a.t())))(
        _t(torch.int64, 3, 5, seed=1),
        _t(dt, 3, 5, seed=2, positive=True))


def _binary(op, scalar):
    return [lambda dt: (lambda a, b: lambda: op(a, b))(
                _t(dt, 33, seed=1), _t(dt, 33, seed=2, positive=True)),
            lambda dt: _on_views(op, dt),
            lambda dt: _promoted(op, dt),
            scalar]


def _cmp(name):
    fn = getattr(torch, name)

    def views(dt):
        a, b = _t(dt, 4, 5, seed=1), _t(dt, 5, seed=2)
        return lambda: (fn(a, b, out=torch.empty_like(a)), fn(a.t()[1:], 0),
                        fn(a, b), fn(a[:, ::2], b[0]),
                        getattr(a.t(), name + "_")(b[:4]))
    return [views, lambda dt: (lambda a, b, m: lambda: (
        fn(a, b), fn(m, m.t()), fn(b, b, out=torch.empty(
            3, 3, dtype=torch.int64, device="npu"))))(
        _t(dt, 3, 3, seed=1), _t(torch.int64, 3, 3, seed=2),
        _t(torch.bool, 3, 3, seed=3))]


def _unary(fn, positive=False):
    return [lambda dt: (lambda x: lambda: fn(x))(_t(dt, 3, 7,
                                                  positive=positive))]


def _unary_views(fn, positive=False):
    """fn of a tensor, a transpose, in place into a slice, into an out=."""
    def run(dt):
        x = _t(dt, 3, 7, positive=positive)
        y = _t(dt, 3, 7, seed=1, positive=positive)
        name = getattr(fn, "__name__", "")
        inplace = getattr(torch, name + "_", None) if x.is_floating_point() \
            or name in ("relu", "abs", "neg") else None
        return lambda: (fn(x), fn(x.t()),
                        inplace(y[:, ::2]) if inplace else None,
                        getattr(aten, name).out(x, out=torch.empty(
                            3, 7, dtype=x.dtype, device="npu"))
                        if inplace else None)
    return [run]


def _nll(dt):
    x = _t(dt, 6, 4)
    target = torch.tensor([0, 3, 1, 1, 2, 0]).npu()
    return x, target


def _nll_backward(dt):
    x, target = _nll(dt)
    grad = torch.ones((), dtype=dt, device="npu")
    total = torch.full((), 6.0, dtype=dt, device="npu")
    return lambda: aten.nll_loss_backward(grad, x, target, None, 1, -100,
                                          total)


def _conv_backward(dt, n, transposed=False):
    """convolution_backward_overrideable of n images, every gradient."""
    x = _t(dt, n, 4, 6, 5)
    w = _t(dt, 4, 2, 3, 3, seed=1)
    dy = _t(dt, n, 4, *((11, 9) if transposed else (3, 5)), seed=2)
    stride = [2, 2] if transposed else [2, 1]
    return lambda: aten.convolution_backward_overrideable(
        dy, x, w, stride, [1, 1], [1, 1], transposed, [0, 0], 2,
        [True, True, True])


def _batch_norm(dt, training, op=aten.native_batch_norm):
    x = _t(dt, 2, 3, 4, 4)
    w, b = _t(dt, 3, seed=1), _t(dt, 3, seed=2)
    rm, rv = _t(dt, 3, seed=3), _t(dt, 3, seed=4, positive=True)
    return lambda: op(x, w, b, rm, rv, training, 0.1, 1e-5)


def _batch_norm_backward(dt, train):
    x, dy = _t(dt, 2, 3, 4, 4), _t(dt, 2, 3, 4, 4, seed=5)
    w = _t(dt, 3, seed=1)
    rm, rv = _t(dt, 3, seed=3), _t(dt, 3, seed=4, positive=True)
    mean, invstd = (_t(dt, 3, seed=6), _t(dt, 3, seed=7, positive=True)) \
        if train else (None, None)
    return lambda: aten.native_batch_norm_backward(
        dy, x, w, rm, rv, mean, invstd, train, 1e-5, [True, True, True])


def _layer_norm(dt):
    x = _t(dt, 2, 5, 6)
    w, b = _t(dt, 6, seed=1), _t(dt, 6, seed=2)
    return lambda: aten.native_layer_norm(x, [6], w, b, 1e-5)


def _layer_norm_backward(dt):
    x, dy = _t(dt, 2, 5, 6), _t(dt, 2, 5, 6, seed=3)
    w, b = _t(dt, 6, seed=1), _t(dt, 6, seed=2)
    mean, rstd = _t(dt, 2, 5, 1, seed=4), _t(dt, 2, 5, 1, seed=5,
                                             positive=True)
    return lambda: aten.native_layer_norm_backward(
        dy, x, [6], mean, rstd, w, b, [True, True, True])


def _idx(*values):
    return torch.tensor(values).npu()


def _indexing_samples():
    """The paths of the indexing, selection, arg-reduction and random
    rows."""
    def bools(*shape):
        return _t(torch.bool, *shape, seed=5)
    out = {
        ("embedding", 0): lambda dt: (lambda w, i: lambda: F.embedding(
            i, w))(_t(dt, 10, 4), _idx([1, 9], [0, 0])),
        ("embedding_dense_backward", 0): lambda dt: (
            lambda g, i: lambda: aten.embedding_dense_backward(
                g, i, 10, 3, False))(_t(dt, 2, 2, 4), _idx([1, 3], [3, 0])),
        ("index_select", 0): lambda dt: (
            lambda x, i: lambda: torch.index_select(x, 0, i))(
                _t(dt, 6, 3), _idx(5, 0, 5)),
        ("index_select", 1): lambda dt: (
            lambda x, i: lambda: torch.index_select(x, 1, i))(
                _t(dt, 2, 6, 3), _idx(5, 0, 5)),
        ("gather", 0): lambda dt: (lambda x, i: lambda: torch.gather(x, 1, i))(
            _t(dt, 3, 5), _idx([0, 4], [1, 1], [3, 2])),
        ("scatter_add", 0): lambda dt: (lambda x, i, v: lambda: x.scatter_add_(
            1, i, v))(_t(dt, 3, 5), _idx([0, 4], [1, 1], [3, 2]),
                      _t(dt, 3, 2, seed=1)),
        ("scatter_add", 1): lambda dt: (
            lambda x, i, v: lambda: torch.scatter_add(x, 1, i, v))(
                _t(dt, 3, 5), _idx([0, 4], [1, 1], [3, 2]),
                _t(dt, 3, 2, seed=1)),
        ("index_add", 0): lambda dt: (lambda x, i, v: lambda: x.index_add_(
            0, i, v))(_t(dt, 5, 3), _idx(0, 4, 0), _t(dt, 3, 3, seed=1)),
        ("index_add", 1): lambda dt: (lambda x, i, v: lambda: torch.index_add(
            x, 0, i, v))(_t(dt, 5, 3), _idx(0, 4, 0), _t(dt, 3, 3, seed=1)),
        ("index_add", 2): lambda dt: (lambda x, i, v: lambda: x.index_add_(
            1, i, v))(_t(dt, 3, 5, 2), _idx(0, 4, 0), _t(dt, 3, 3, 2, seed=1)),
        ("index_add", 3): lambda dt: (lambda x, i, v: lambda: x.index_add_(
            0, i, v))(_t(dt, 5, 3), _idx(0, 4, 0), _t(dt, 3, 3, seed=1)),
        ("scatter_add", 2): lambda dt: (lambda x, i, v: lambda: x.scatter_add_(
            1, i, v))(_t(dt, 3, 5), _idx([0, 4], [1, 1], [3, 2]),
                      _t(dt, 3, 2, seed=1)),
        ("where", 0): lambda dt: (lambda c, a, b: lambda: (
            torch.where(c, a, b), torch.where(c.t(), a.t(), b[0]),
            torch.where(c, a, b, out=torch.empty(0, dtype=dt,
                                                 device="npu"))))(
                bools(4, 5), _t(dt, 4, 5, seed=1), _t(dt, 5, seed=2)),
        ("where", 2): lambda dt: (lambda c, a, b: lambda: (
            torch.where(c, a, b), torch.where(c.t(), a.t(), b[0])))(
                bools(4, 5), _t(dt, 4, 5, seed=1), _t(dt, 5, seed=2)),
        ("where", 1): lambda dt: (lambda c, a, b: lambda: torch.where(
            c, a, b))(bools(4, 5), _t(torch.int64, 4, 5, seed=1),
                      _t(dt, 5, seed=2)),
        ("masked_fill", 0): lambda dt: (lambda x, m: lambda: (
            x.masked_fill_(m, 2), x.t().masked_fill_(m.t(), 1),
            x.masked_fill_(m[0], torch.tensor(1))))(_t(dt, 4, 5),
                                                     bools(4, 5)),
        ("masked_fill", 1): lambda dt: (lambda x, m: lambda: x.masked_fill(
            m, 2))(_t(dt, 4, 5), bools(4, 5)),
        ("arange", 0): lambda dt: lambda: (
            torch.arange(0, 12, 2, dtype=dt, device="npu"),
            torch.arange(5, dtype=dt, device="npu")),
        ("native_dropout", 0): lambda dt: (
            lambda x: lambda: aten.native_dropout(x, 0.3, True))(_t(dt, 40)),
        ("native_dropout_backward", 0): lambda dt: (
            lambda g, m: lambda: aten.native_dropout_backward(g, m, 1.25))(
                _t(dt, 4, 5), bools(4, 5)),
        ("uniform_", 0): lambda dt: (lambda x: lambda: x.uniform_())(
            _t(dt, 30)),
        ("uniform_", 1): lambda dt: (lambda x: lambda: x.uniform_(-2, 3))(
            _t(dt, 30)),
        ("normal_", 0): lambda dt: (lambda x: lambda: x.normal_(1, 2))(
            _t(dt, 30)),
        ("bernoulli_", 0): lambda dt: (lambda x: lambda: x.bernoulli_(0.3))(
            _t(dt, 30)),
        ("cumsum", 0): lambda dt: (lambda x: lambda: x.cumsum(-1))(
            _t(dt, 3, 5)),
        ("cumsum", 1): lambda dt: (lambda x: lambda: x.cumsum(1))(
            _t(dt, 3, 5)),
        ("cumsum", 2): lambda dt: (lambda x: lambda: x.cumsum(0))(
            _t(dt, 3, 5)),
    }
    for name in ("isneginf", "isposinf", "isinf", "isfinite", "isnan"):
        out[(name, 0)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(torch, n)(x), getattr(torch, n)(x.t()[1:])))(
                _special_t(dt, 4, 5)))(name)
        out[(name, 1)] = (lambda n: lambda dt: (lambda x: lambda: getattr(
            torch, n)(x))(_t(dt, 4, 5)))(name)
    for name in ("all", "any"):
        out[(name, 0)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(torch, n)(x), getattr(torch, n)(x, -1),
            getattr(torch, n)(x, (1, 2), keepdim=True)))(
                _special_t(dt, 3, 4, 2)))(name)
        out[(name, 1)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(torch, n)(x, 0), getattr(torch, n)(x.transpose(0, 2),
                                                       -1)))(
                _special_t(dt, 3, 4, 2)))(name)
        out[(name, 2)] = (lambda n: lambda dt: (lambda x: lambda: getattr(
            torch, n)(x[:, :0], 1))(_t(dt, 3, 4)))(name)
    out[("cat", 0)] = lambda dt: (lambda a, b: lambda: (
        torch.cat([a, b, a]), torch.cat([a[None], b[None]], 1),
        torch.cat([a, b], out=torch.empty(0, dtype=dt, device="npu"))))(
            _t(dt, 2, 3), _t(dt, 4, 3, seed=1))
    out[("cat", 1)] = lambda dt: (lambda a, b: lambda: (
        torch.cat([a, b, a], 1), torch.cat([a, b], -1)))(
            _t(dt, 3, 2), _t(dt, 3, 4, seed=1))
    out[("cat", 2)] = lambda dt: (lambda a, b: lambda: torch.cat(
        [a.t(), b.expand(4, 3)]))(_t(dt, 3, 2), _t(dt, 3, seed=1))
    out[("cat", 3)] = lambda dt: (lambda a, b: lambda: torch.cat([a, b]))(
        _t(dt, 2, 3), _t(torch.int32, 4, 3, seed=1))
    for name in ("argmax", "argmin"):
        out[(name, 0)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(x, n)(), getattr(x, n)(-1)))(_t(dt, 4, 5)))(name)
        out[(name, 1)] = (lambda n: lambda dt: (lambda x: lambda: getattr(
            x, n)(0))(_t(dt, 4, 5)))(name)
    for name in ("max", "min"):
        out[(name, 0)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(x, n)(-1), getattr(x, n)()))(_t(dt, 4, 5)))(name)
        out[(name, 1)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(x, n)(0, keepdim=True), getattr(x.t(), n)()))(
                _t(dt, 4, 5)))(name)
        out[("a" + name, 0)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(x, n)(), getattr(x, n)(-1), getattr(x, n)((1, 2), True),
            getattr(torch, n)(x, 2, out=torch.empty(0, dtype=dt,
                                                    device="npu"))))(
                _t(dt, 3, 4, 2)))("a" + name)
        out[("a" + name, 1)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(x, n)(1), getattr(x, n)((0, 2), True),
            getattr(x.transpose(0, 1), n)(-1)))(_t(dt, 3, 4, 2)))("a" + name)
    for name in ("tril", "triu"):
        out[(name, 0)] = (lambda n: lambda dt: (lambda x: lambda: (
            getattr(torch, n)(x, 1), getattr(x, n + "_")(-1)))(
                _t(dt, 2, 4, 5)))(name)
    return out


#: for each (row, path): a function of the dtype building the operands and
#: returning what runs the path
SAMPLES = {
    **{("_copy_from", i): s for i, s in enumerate(_copies())},
    ("_copy_from_and_resize", 0): lambda dt: _resized(dt, _t(dt, 3, 4)),
    ("_copy_from_and_resize", 1): lambda dt: (
        lambda x: lambda: aten._copy_from_and_resize(
            x, torch.empty(0, dtype=_other(dt), device="npu")))(_t(dt, 6)),
    ("_copy_from_and_resize", 2): lambda dt: _resized(dt, _t(dt, 3, 4).t()),
    ("_copy_from_and_resize", 3): lambda dt: (
        lambda x: lambda: aten._copy_from_and_resize(
            x, torch.empty(0, dtype=_other(dt), device="npu")))(
                _t(dt, 3, 4).t()),
    **{(n, i): s for n, op in (("add", torch.add), ("sub", torch.sub))
       for i, s in enumerate(_binary(op, lambda dt: (
           lambda a, b: lambda: (op(a, 2.5), op(a, b, alpha=3),
                                 op(a.t(), b.t(), alpha=3)))(
               _t(dt, 3, 4, seed=1), _t(dt, 3, 4, seed=2))))},
    **{("mul", i): s for i, s in enumerate(_binary(
        torch.mul, lambda dt: (lambda a: lambda: (a * -3.0, a.t() * 2))(
            _t(dt, 3, 3))))},
    ("div", 0): _binary(torch.div, None)[0],
    ("div", 1): _binary(torch.div, None)[1],
    ("div", 2): _binary(torch.div, None)[2],
    ("div", 3): lambda dt: (lambda a: lambda: (a / 3.0, a.t() / 3.0))(
        _t(dt, 3, 3)),
    ("div", 4): lambda dt: (lambda a: lambda: (a / 3.0, a / 0,
                                              a.t() / 3.0))(_t(dt, 3, 3)),
    **{(n, i): _binary(getattr(torch, n), None)[i + 1]
       for n in ("maximum", "minimum") for i in (0, 1)},
    ("relu", 0): _unary_views(torch.relu)[0],
    ("exp", 0): _unary_views(torch.exp)[0],
    ("exp", 1): _unary_views(torch.exp)[0],
    ("sqrt", 0): _unary_views(torch.sqrt, positive=True)[0],
    ("sqrt", 1): _unary_views(torch.sqrt, positive=True)[0],
    ("abs", 0): _unary_views(torch.abs)[0],
    ("leaky_relu", 0): _unary(lambda x: F.leaky_relu(x, 0.2))[0],
    ("neg", 0): _unary_views(torch.neg)[0],
    **{(n, i): _unary_views(getattr(torch, n), positive=n == "log")[0]
       for n in ("tanh", "sigmoid", "erf", "log", "reciprocal")
       for i in (0, 1)},
    ("silu", 0): _unary_views(F.silu)[0],
    ("gelu", 0): lambda dt: (lambda x, y: lambda: (
        F.gelu(x), F.gelu(x.t(), approximate="tanh"), F.gelu(y[:, ::2]),
        aten.gelu_(y[:, 1::2], approximate="tanh"),
        aten.gelu.out(x, out=torch.empty_like(x))))(
            _t(dt, 3, 7), _t(dt, 3, 7, seed=1)),
    ("pow", 0): lambda dt: (lambda a, b: lambda: (
        torch.pow(a, b), torch.pow(a.t(), b[:, :1].t()), a ** 1.7,
        2.5 ** b, a.pow_(b[0]), torch.pow(a, b, out=torch.empty_like(a))))(
            _t(dt, 3, 4, positive=True), _t(dt, 3, 4, seed=1)),
    ("pow", 1): lambda dt: (lambda a: lambda: a ** 0.5)(
        _t(dt, 3, 4, positive=True)),
    ("pow", 2): lambda dt: (lambda a: lambda: (a ** 3, a.t() ** -2))(
        _t(dt, 3, 4, positive=True)),
    **{(n, 0): (lambda n: lambda dt: (lambda g, x: lambda: (
        getattr(aten, n)(g, x), getattr(aten, n)(g.t(), x.t()),
        getattr(aten, n).grad_input(g, x, grad_input=torch.empty_like(g))))(
            _t(dt, 4, 5, seed=1), _t(dt, 4, 5, seed=2)))(n)
       for n in ("tanh_backward", "sigmoid_backward", "gelu_backward",
                 "silu_backward")},
    ("threshold_backward", 0): lambda dt: (
        lambda g, x: lambda: aten.threshold_backward(g, x, 0))(
            _t(dt, 12, seed=1), _t(dt, 12, seed=2)),
    **{(n, i): _cmp(n)[i] for n in ("eq", "ne", "lt", "le", "gt", "ge")
       for i in (0, 1)},
    ("fill_", 0): lambda dt: (lambda x: lambda: x.fill_(2.5))(_t(dt, 8)),
    ("fill_", 1): lambda dt: (lambda x: lambda: x.fill_(0))(_t(dt, 8)),
    ("zero_", 0): lambda dt: (lambda x: lambda: x.zero_())(_t(dt, 8)),
    ("addcmul_", 0): lambda dt: (lambda x, a, b: lambda: x.addcmul_(
        a, b, value=0.5))(_t(dt, 8), _t(dt, 8, seed=1), _t(dt, 8, seed=2)),
    ("addcdiv_", 0): lambda dt: (lambda x, a, b: lambda: x.addcdiv_(
        a, b, value=0.5))(_t(dt, 8), _t(dt, 8, seed=1),
                          _t(dt, 8, seed=2, positive=True)),
    ("lerp_", 0): lambda dt: (lambda x, e: lambda: x.lerp_(e, 0.25))(
        _t(dt, 8), _t(dt, 8, seed=1)),
    ("mm", 0): lambda dt: (lambda a, b: lambda: (a @ b, a @ b.t().t()))(
        _t(dt, 3, 4), _t(dt, 4, 2, seed=1)),
    ("mm", 1): lambda dt: (lambda a, b, c: lambda: (
        torch.mm(a.expand(3, 4), b), torch.mm(c[:, ::2], b)))(
        _t(dt, 1, 4), _t(dt, 4, 2, seed=1), _t(dt, 3, 8, seed=2)),
    ("addmm", 0): lambda dt: (lambda c, a, b: lambda: torch.addmm(c, a, b))(
        _t(dt, 2), _t(dt, 3, 4), _t(dt, 4, 2, seed=1)),
    ("_softmax", 0): _unary(lambda x: torch.softmax(x, -1))[0],
    ("_log_softmax", 0): _unary(lambda x: torch.log_softmax(x, -1))[0],
    ("_softmax_backward_data", 0): lambda dt: (
        lambda g, y: lambda: aten._softmax_backward_data(g, y, -1, dt))(
            _t(dt, 3, 5), _t(dt, 3, 5, seed=1)),
    ("_log_softmax_backward_data", 0): lambda dt: (
        lambda g, y: lambda: aten._log_softmax_backward_data(g, y, -1, dt))(
            _t(dt, 3, 5), _t(dt, 3, 5, seed=1)),
    ("_softmax", 1): lambda dt: (lambda x: lambda: (
        torch.softmax(x, 1), torch.softmax(x.transpose(1, 2), -1)))(
            _t(dt, 3, 4, 5)),
    ("_log_softmax", 1): lambda dt: (lambda x: lambda: (
        torch.log_softmax(x, 0), torch.log_softmax(x[:, ::2], -1)))(
            _t(dt, 3, 4, 5)),
    ("_softmax_backward_data", 1): lambda dt: (
        lambda g, y: lambda: aten._softmax_backward_data(g, y, 1, dt))(
            _t(dt, 3, 5, 2), _t(dt, 3, 5, 2, seed=1)),
    ("_log_softmax_backward_data", 1): lambda dt: (
        lambda g, y: lambda: aten._log_softmax_backward_data(g, y, 0, dt))(
            _t(dt, 3, 5, 2), _t(dt, 3, 5, 2, seed=1)),
    ("nll_loss_forward", 0): lambda dt: (
        lambda x, t: lambda: F.nll_loss(x, t))(*_nll(dt)),
    ("nll_loss_backward", 0): _nll_backward,
    ("sum", 0): lambda dt: (lambda x: lambda: (x.sum(), x.sum(-1),
                                               x.sum((1, 2), True)))(
        _t(dt, 3, 4, 2)),
    ("sum", 1): lambda dt: (lambda x, y: lambda: (x.sum(0), y.sum((0, 1))))(
        _t(dt, 3, 4), _t(dt, 2, 3, 4)),
    ("sum", 2): lambda dt: (lambda x: lambda: (
        x.sum(1), x.sum((0, 2), True), x.transpose(0, 2).sum(),
        torch.sum(x, (0, 2), out=torch.empty(0, dtype=dt, device="npu"))))(
        _t(dt, 3, 4, 2)),
    ("sum", 3): lambda dt: (lambda x: lambda: x.sum(-1, dtype=_other(dt)))(
        _t(dt, 3, 4)),
    ("mean", 0): lambda dt: (lambda x, y: lambda: (x.mean(-1), x.mean(),
                                                 y.mean((-1, -2), True)))(
        _t(dt, 3, 4), _t(dt, 2, 3, 4, 5)),
    ("mean", 1): lambda dt: (lambda x, y: lambda: (x.mean(0),
                                                   y.mean((0, 1))))(
        _t(dt, 3, 4), _t(dt, 2, 3, 4)),
    ("mean", 2): lambda dt: (lambda x: lambda: (
        x.mean(1), x.mean((0, 2), True),
        torch.mean(x, 1, out=torch.empty(0, dtype=dt, device="npu"))))(
        _t(dt, 3, 4, 2)),
    ("mean", 3): lambda dt: (lambda x, y: lambda: (
        x.mean(-1), x.mean(), y.mean((-1, -2), True),
        torch.mean(x, 1, out=torch.empty(0, dtype=dt, device="npu"))))(
        _t(dt, 3, 4), _t(dt, 2, 3, 4, 5)),
    ("mean", 4): lambda dt: (lambda x: lambda: (
        x.mean(0), x.mean((0, 2), True), x.transpose(0, 1).mean(-1)))(
        _t(dt, 3, 4, 2)),
    **{(name, i): (lambda f: lambda dt: (lambda x: lambda: (
        f(x), f(x, 1), f(x, (0, 2), correction=0, keepdim=True)))(
            _t(dt, 3, 4, 2)))(getattr(torch, name))
       for name in ("var", "var_mean", "std", "std_mean") for i in (0, 1)},
    ("clamp", 0): lambda dt: (lambda x, lo, hi: lambda: (
        x.clamp(-1, 1), x.clamp(lo, hi), x.t().clamp_(0, 2),
        torch.clamp(x, 0, 1, out=torch.empty(0, dtype=dt, device="npu"))))(
            _t(dt, 4, 5), _t(dt, 5, seed=1), _t(dt, 4, 1, seed=2)),
    ("clamp_min", 0): lambda dt: (lambda x: lambda: (
        x.clamp(min=0), x.clamp_min(x[0]), x.clamp_min_(1)))(_t(dt, 4, 5)),
    ("clamp_max", 0): lambda dt: (lambda x: lambda: (
        x.clamp(max=0), x.clamp_max(x[0]), x.clamp_max_(1)))(_t(dt, 4, 5)),
    ("hardtanh", 0): lambda dt: (lambda x: lambda: (
        F.hardtanh(x), F.relu6(x), F.hardtanh(x, -2, 2, inplace=True)))(
            _t(dt, 4, 5)),
    ("hardtanh_backward", 0): lambda dt: (lambda g, x: lambda: (
        aten.hardtanh_backward(g, x, -0.5, 0.5)))(
            _t(dt, 4, 5), _t(dt, 4, 5, seed=1)),
    ("rsqrt", 0): lambda dt: (lambda x, y: lambda: (
        x.rsqrt(), x.t().rsqrt(), y.rsqrt_()))(
            _t(dt, 4, 5, positive=True), _t(dt, 3, positive=True)),
    ("rsqrt", 1): lambda dt: (lambda x: lambda: x.rsqrt())(
        _t(dt, 4, 5, positive=True)),
    ("mse_loss", 0): lambda dt: (lambda x, y: lambda: (
        F.mse_loss(x, y), F.mse_loss(x, y, reduction="sum"),
        F.mse_loss(x, y, reduction="none")))(
            _t(dt, 4, 5), _t(dt, 4, 5, seed=1)),
    ("mse_loss_backward", 0): lambda dt: (lambda g, x, y: lambda: (
        aten.mse_loss_backward(g, x, y, 1),
        aten.mse_loss_backward(g, x, y, 2)))(
            _t(dt, 1)[0], _t(dt, 4, 5), _t(dt, 4, 5, seed=1)),
    ("linalg_vector_norm", 0): lambda dt: (lambda x: lambda: (
        x.norm(), torch.linalg.vector_norm(x, dim=-1)))(_t(dt, 3, 4)),
    ("linalg_vector_norm", 1): lambda dt: (lambda x: lambda: (
        torch.linalg.vector_norm(x, dim=0, keepdim=True)))(_t(dt, 3, 4)),
    ("linalg_vector_norm", 2): lambda dt: (lambda x: lambda: (
        torch.linalg.vector_norm(x, 1), x.norm(1, -1)))(_t(dt, 3, 4)),
    ("linalg_vector_norm", 3): lambda dt: (lambda x: lambda: (
        torch.linalg.vector_norm(x, math.inf),
        torch.linalg.vector_norm(x, -math.inf, -1)))(_t(dt, 3, 4)),
    ("flip", 0): lambda dt: (lambda x: lambda: x.flip(0))(_t(dt, 4, 5)),
    ("flip", 1): lambda dt: (lambda x: lambda: (
        x.flip(1), x.flip(0, 2), x.transpose(0, 1).flip(0)))(
            _t(dt, 3, 4, 2)),
    ("sort", 0): lambda dt: (lambda x: lambda: (
        x.sort(), x.sort(descending=True, stable=True)))(_t(dt, 4, 5)),
    ("sort", 2): lambda dt: (lambda x: lambda: torch.sort(x, out=(
        torch.empty(0, dtype=dt, device="npu"),
        torch.empty(0, dtype=torch.int64, device="npu"))))(_t(dt, 4, 5)),
    ("sort", 1): lambda dt: (lambda x: lambda: (
        x.sort(0), x.argsort(1, descending=True)))(_t(dt, 3, 4, 2)),
    ("topk", 0): lambda dt: (lambda x: lambda: (
        x.topk(2), x.topk(3, largest=False)))(_t(dt, 4, 5)),
    ("topk", 1): lambda dt: (lambda x: lambda: x.topk(2, 0))(_t(dt, 4, 5)),
    ("topk", 2): lambda dt: (lambda x: lambda: torch.topk(x, 2, out=(
        torch.empty(0, dtype=dt, device="npu"),
        torch.empty(0, dtype=torch.int64, device="npu"))))(_t(dt, 4, 5)),
    ("roll", 0): lambda dt: (lambda x: lambda: (
        x.roll(1, 0), x.roll(-7)))(_t(dt, 4, 5)),
    ("roll", 1): lambda dt: (lambda x: lambda: (
        x.roll(2, 1), x.roll((1, -1), (1, 2))))(_t(dt, 3, 4, 2)),
    ("sum", 4): lambda dt: (lambda x: lambda: (
        x.sum(0), torch.sum(x, 0, out=torch.empty(0, dtype=dt,
                                                  device="npu"))))(
            torch.empty(0, 5, dtype=dt, device="npu")),
    ("mean", 5): lambda dt: (lambda x: lambda: (x.mean(), x.mean(0)))(
        torch.empty(0, 5, dtype=dt, device="npu")),
    **{(name, 2): (lambda f: lambda dt: (lambda x: lambda: (
        f(x), f(x, 0, keepdim=True)))(
            torch.empty(0, 5, dtype=dt, device="npu")))(getattr(torch, name))
       for name in ("var", "var_mean", "std", "std_mean")},
    ("max_pool2d_with_indices", 0): lambda dt: (
        lambda x: lambda: F.max_pool2d(x, 3, 2, 1, return_indices=True))(
            _t(dt, 2, 3, 7, 6)),
    ("max_pool2d_with_indices_backward", 0): lambda dt: (
        lambda g, x, i: lambda: aten.max_pool2d_with_indices_backward(
            g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, i))(
            _t(dt, 2, 3, 4, 3), _t(dt, 2, 3, 7, 6),
            F.max_pool2d(_t(dt, 2, 3, 7, 6), 3, 2, 1,
                         return_indices=True)[1]),
    ("avg_pool2d", 0): lambda dt: (
        lambda x: lambda: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True))(
            _t(dt, 2, 3, 7, 6)),
    ("avg_pool2d_backward", 0): lambda dt: (
        lambda g, x: lambda: aten.avg_pool2d_backward(
            g, x, [3, 3], [2, 2], [1, 1], True, True, None))(
            _t(dt, 2, 3, 4, 4), _t(dt, 2, 3, 7, 6)),
    ("_adaptive_avg_pool2d", 0): lambda dt: (
        lambda x: lambda: F.adaptive_avg_pool2d(x, (2, 3)))(
            _t(dt, 2, 3, 8, 6)),
    ("_adaptive_avg_pool2d_backward", 0): lambda dt: (
        lambda g, x: lambda: aten._adaptive_avg_pool2d_backward(g, x))(
            _t(dt, 2, 3, 2, 3), _t(dt, 2, 3, 8, 6)),
    ("convolution_overrideable", 0): lambda dt: (
        lambda x, w, x1, w1: lambda: (F.conv2d(x, w, padding=1),
                                      F.conv1d(x1, w1, groups=2)))(
            _t(dt, 2, 3, 5, 5), _t(dt, 4, 3, 3, 3, seed=1),
            _t(dt, 1, 4, 7, seed=2), _t(dt, 2, 2, 3, seed=3)),
    ("convolution_overrideable", 1): lambda dt: (
        lambda x, w, b: lambda: F.conv2d(x, w, b, stride=2, dilation=2))(
            _t(dt, 2, 3, 9, 9), _t(dt, 4, 3, 3, 3, seed=1),
            _t(dt, 4, seed=2)),
    ("convolution_overrideable", 2): lambda dt: (
        lambda x, w, b: lambda: F.conv_transpose2d(
            x, w, b, stride=2, output_padding=1))(
            _t(dt, 2, 4, 5, 5), _t(dt, 4, 2, 3, 3, seed=1),
            _t(dt, 2, seed=2)),
    ("convolution_backward_overrideable", 0): lambda dt: _conv_backward(
        dt, 1),
    ("convolution_backward_overrideable", 1): lambda dt: _conv_backward(
        dt, 2),
    ("convolution_backward_overrideable", 2): lambda dt: _conv_backward(
        dt, 2, transposed=True),
    ("native_batch_norm", 0): lambda dt: _batch_norm(dt, True),
    ("native_batch_norm", 1): lambda dt: _batch_norm(dt, True),
    ("native_batch_norm", 2): lambda dt: _batch_norm(dt, False),
    ("native_batch_norm", 3): lambda dt: _batch_norm(dt, False),
    ("_native_batch_norm_legit", 0): lambda dt: _batch_norm(
        dt, True, aten._native_batch_norm_legit),
    ("_native_batch_norm_legit", 1): lambda dt: _batch_norm(
        dt, True, lambda x, w, b, rm, rv, *a: (
            aten._native_batch_norm_legit.no_stats(x, w, b, *a))),
    ("_native_batch_norm_legit", 2): lambda dt: _batch_norm(
        dt, False, lambda x, w, b, rm, rv, training, *a: (
            aten._native_batch_norm_legit_no_training(x, w, b, rm, rv,
                                                      *a))),
    ("bmm", 0): lambda dt: (lambda a, b, bt: lambda: (
        torch.bmm(a, b), torch.bmm(a, bt.transpose(1, 2))))(
        _t(dt, 3, 4, 5), _t(dt, 3, 5, 2, seed=1), _t(dt, 3, 2, 5, seed=3)),
    ("bmm", 1): lambda dt: (lambda a, b: lambda: torch.bmm(a, b))(
        _t(dt, 7, 3, 5).transpose(0, 1), _t(dt, 3, 5, 2, seed=1)),
    ("baddbmm", 0): lambda dt: (lambda c, a, b: lambda: (
        torch.baddbmm(c, a, b), torch.baddbmm(c, a, b, beta=0)))(
        _t(dt, 4, 2, seed=2), _t(dt, 3, 4, 5), _t(dt, 3, 5, 2, seed=1)),
    ("native_layer_norm", 0): _layer_norm,
    ("native_layer_norm", 1): _layer_norm,
    ("native_layer_norm_backward", 0): _layer_norm_backward,
    ("native_layer_norm_backward", 1): _layer_norm_backward,
    ("native_batch_norm_backward", 0): lambda dt: _batch_norm_backward(
        dt, True),
    ("native_batch_norm_backward", 1): lambda dt: _batch_norm_backward(
        dt, True),
    ("native_batch_norm_backward", 2): lambda dt: _batch_norm_backward(
        dt, False),
    ("fill_", 2): lambda dt: (lambda x: lambda: x.fill_(3))(_t(dt, 8)),
    ("_fused_adam_", 0): lambda dt: _fused_adam(dt, aten._fused_adam_),
    ("_fused_adamw_", 0): lambda dt: _fused_adam(dt, aten._fused_adamw_),
    ("_fused_sgd_", 0): lambda dt: _fused_sgd(dt, 0.9),
    ("_fused_sgd_", 1): lambda dt: _fused_sgd(dt, 0.0),
    **_indexing_samples(),
}


def _fused_adam(dt, op):
    """A step of two parameters, each overload (a number lr, a tensor
    one); the step counts on the CPU, which is read there."""
    state = [[_t(dt, *shape, seed=seed + i, positive=i == 3)
              for i in range(4)] for seed, shape in ((0, (4, 5)), (9, (7,)))]
    p, g, m, v = ([s[i] for s in state] for i in range(4))
    kw = dict(beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8,
              amsgrad=False, maximize=False)
    steps = [torch.tensor(3.0), torch.tensor(5.0)]
    return lambda: (op(p, g, m, v, [], steps, lr=0.01, **kw),
                    op.tensor_lr(p, g, m, v, [], steps,
                                 lr=torch.tensor(0.02), **kw))


def _fused_sgd(dt, momentum):
    """Two steps of two parameters (the first step, then a tensor lr)."""
    state = [[_t(dt, *shape, seed=seed + i) for i in range(3)]
             for seed, shape in ((0, (4, 5)), (9, (7,)))]
    p, g, b = ([s[i] for s in state] for i in range(3))
    b = b if momentum else []
    kw = dict(weight_decay=0.1, momentum=momentum, dampening=0.0,
              nesterov=False, maximize=False)
    return lambda: (
        aten._fused_sgd_(p, g, b, lr=0.1, is_first_step=True, **kw),
        aten._fused_sgd_.tensor_lr(p, g, b, lr=torch.tensor(0.05),
                                   is_first_step=False, **kw))


def _paths():
    try:
        from torch_npu import _op_table
    except ImportError:
        return []           # (the tests taking the table fail)
    return [pytest.param(e, i, id="%s/%d" % (e.op, i))
            for e in _op_table.TABLE for i in range(len(e.paths))]


def test_every_compute_op_is_reached_or_the_schema_says_why(table):
    reached = {op for e in table.TABLE for p in e.paths for op in p.ops}
    missing = [op.name for op in schema.COMPUTE_OPS
               if op.name not in reached and not op.why_not_in("torch")]
    assert not missing, (
        "no row of torch_npu's table runs %s, and ops.toml's not_in.torch "
        "does not say why" % missing)
    # a reason is stale once a row runs the op
    stale = sorted(op for op in reached
                   if schema.by_name(op).compute and
                   schema.by_name(op).why_not_in("torch"))
    assert not stale, ("ops.toml's not_in.torch says torch_npu lacks %s, "
                       "which its table runs" % stale)


def test_every_path_has_samples(table):
    assert sorted((e.op, i) for e in table.TABLE
                  for i in range(len(e.paths))) == sorted(SAMPLES)


@pytest.mark.parametrize("entry,i", _paths())
def test_a_path_runs_the_device_ops_it_claims(npu, trace, entry, i):
    path = entry.paths[i]
    seen = set()
    for dt in path.dtypes:
        ops, warned = _ran(trace, SAMPLES[(entry.op, i)](dt))
        assert not warned, (dt, warned)
        assert ops <= set(path.ops), (
            "%s in %s ran %s, which its path does not claim"
            % (entry.op, dt, sorted(ops - set(path.ops))))
        seen |= ops
    assert seen == set(path.ops), (entry.op, sorted(seen))


def test_the_registered_kernels_are_the_tables(table, npu):
    for e in table.TABLE:
        for overload in e.kernels:
            assert torch._C._dispatch_has_kernel_for_dispatch_key(
                "aten::" + overload, e.key), (overload, e.key)
    assert npu.DEVICE_OPS == [o for e in table.TABLE if e.paths
                              for o in e.kernels]
    assert {"add.Tensor", "abs", "leaky_relu", "_copy_from",
            "eq.Tensor_out"} <= set(npu.DEVICE_OPS)


def test_an_op_the_driver_does_not_serve_runs_on_the_cpu(npu, trace,
                                                         monkeypatch):
    """The kernels ask the driver's capabilities, not a feature bit."""
    from torch_npu import _device_ops
    monkeypatch.setitem(_device_ops._served, (0, "abs", "float32"), False)
    x = torch.tensor([-1.5, 2.0, -0.0])
    ops, warned = _ran(trace, lambda: torch.abs(x.npu()))
    assert "ABS" not in ops
    assert any("aten::abs" in w for w in warned), warned
    assert torch.equal(torch.abs(x.npu()).cpu(), torch.abs(x))


# -- bit for bit against CPU torch --------------------------------------------
def _same_bits(got: torch.Tensor, want: torch.Tensor) -> None:
    """Equal bit for bit, NaN payloads aside (a NaN where CPU torch has
    one)."""
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.is_floating_point:
        nan = want.isnan()
        assert torch.equal(got.isnan(), nan)
        got, want = got[~nan], want[~nan]
    g = got.contiguous().view(torch.uint8) if got.numel() else got
    w = want.contiguous().view(torch.uint8) if want.numel() else want
    assert torch.equal(g, w), (got, want)


_SPECIAL = [0.0, -0.0, 1.0, -1.0, float("nan"), -float("nan"),
            float("inf"), -float("inf"), 1e-40, -1e-40, 3.0e38, -65504.0,
            0.1, -2.5, 1e-8]


def _special(dt):
    x = torch.tensor(_SPECIAL + torch.randn(49).tolist())
    return x.to(dt)


@pytest.mark.parametrize("dt", [F32, F16, BF16])
def test_abs_equals_the_cpu_bit_for_bit(npu, trace, dt):
    x = _special(dt)
    ops, warned = _ran(trace, lambda: torch.abs(x.npu()))
    assert ops == {"ABS"} and not warned
    _same_bits(torch.abs(x.npu()), torch.abs(x))
    y = x.npu()
    y.abs_()
    _same_bits(y, torch.abs(x))
    assert torch.abs(torch.tensor(-0.0, dtype=dt).npu()).item() == 0
    assert str(torch.abs(torch.tensor([-0.0], dtype=dt).npu()).cpu()[0]
               .item()) == "0.0"


def test_abs_of_int32_equals_the_cpu(npu, trace):
    x = torch.tensor([0, -1, 1, -7, 2**31 - 1, -2**31, -2**31 + 1],
                     dtype=I32)
    ops, warned = _ran(trace, lambda: torch.abs(x.npu()))
    assert ops == {"ABS"} and not warned
    assert torch.equal(torch.abs(x.npu()).cpu(), torch.abs(x))


@pytest.mark.parametrize("slope", [0.01, 0.2, 0.0, 1.0, 3.5, 1e-45])
@pytest.mark.parametrize("dt", [F32, F16, BF16])
def test_leaky_relu_equals_the_cpu_bit_for_bit(npu, trace, dt, slope):
    x = _special(dt)
    ops, warned = _ran(trace, lambda: F.leaky_relu(x.npu(), slope))
    assert ops == {"LEAKY_RELU"} and not warned
    want = F.leaky_relu(x, slope)
    _same_bits(F.leaky_relu(x.npu(), slope), want)
    y = x.npu()
    F.leaky_relu(y, slope, inplace=True)
    _same_bits(y, want)


@pytest.mark.parametrize("slope", [-0.5, float("inf")])
def test_leaky_relu_with_a_slope_the_device_differs_on_is_the_cpus(
        npu, trace, slope):
    """CPU torch's x * slope at a zero: -0 for a negative slope, NaN for
    an infinite one, where LEAKY_RELU keeps the zero."""
    x = _special(F32)
    ops, warned = _ran(trace, lambda: F.leaky_relu(x.npu(), slope))
    assert "LEAKY_RELU" not in ops and warned
    _same_bits(F.leaky_relu(x.npu(), slope), F.leaky_relu(x, slope))


@pytest.mark.parametrize("dt", [F32, F16, BF16, I32])
@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_into_their_dtype_equal_the_cpu(npu, trace, name, dt):
    """1 or 0 in the operands' dtype: NaN compares false but for ne, -0
    equals +0."""
    a = _special(F32).to(dt)
    b = _special(F32).flip(0).to(dt)
    b[:6] = a[:6]
    fn = getattr(torch, name)
    want = fn(a, b).to(dt)
    out = torch.empty_like(a).npu()
    ops, warned = _ran(trace, lambda: fn(a.npu(), b.npu(), out=out))
    assert ops == {"CMP"} and not warned
    _same_bits(out, want)
    x = a.npu()
    getattr(x, name + "_")(b.npu())
    _same_bits(x, want)


def _views():
    """(name, view of a CPU tensor) pairs: each with storage offsets,
    strides, broadcasts or a permutation."""
    def base(dt):
        return _t(dt, 6, 8, 5, seed=3).cpu()
    return [
        ("transpose", lambda dt: base(dt)[0].t()),
        ("slice with offset", lambda dt: base(dt)[1:, 2::3, 1]),
        ("permuted 3-D", lambda dt: base(dt).permute(2, 0, 1)),
        ("steps and offset", lambda dt: base(dt)[2:5, 1:7:3, 1::2]),
        ("expanded column", lambda dt: base(dt)[0, :, :1].expand(8, 7)),
        ("expanded scalar", lambda dt: base(dt)[3, 4, 2].expand(4, 3)),
        ("expanded row, offset", lambda dt: base(dt)[4, 3:4].expand(
            2, 3, 5)),
        ("diagonal", lambda dt: base(dt)[0, :5].diagonal()),
    ]


_WORD_DTYPES = [F32, F16, BF16, I32, torch.int16, torch.int64,
                torch.float64, torch.complex64]


@pytest.mark.parametrize("dt", _WORD_DTYPES, ids=str)
@pytest.mark.parametrize("name,make", _views(), ids=[n for n, _ in _views()])
def test_contiguous_of_a_strided_view_equals_the_cpu(npu, trace, dt, name,
                                                     make):
    want_view = make(dt)
    base = want_view._base if want_view._base is not None else want_view
    # the same view of the same storage on npu
    got_base = base.npu()
    view = got_base.as_strided(want_view.shape, want_view.stride(),
                               want_view.storage_offset())
    ops, warned = _ran(trace, lambda: view.contiguous())
    assert not warned
    assert ops == {"COPY_VIEW"}, ops
    got = view.contiguous()
    assert got.is_contiguous()
    _same_bits(got, want_view.contiguous())
    _same_bits(view.clone(memory_format=torch.contiguous_format),
               want_view.contiguous())


@pytest.mark.parametrize("dt", [F32, F16, BF16, I32])
def test_copies_between_strided_npu_tensors_equal_the_cpu(npu, trace, dt):
    src_cpu = _t(dt, 6, 8, seed=4).cpu()
    src = src_cpu.npu()
    # into a destination dense in another order: a transpose
    dst_cpu = torch.zeros(4, 6, dtype=dt).t()
    dst = torch.zeros(4, 6, dtype=dt).npu().t()
    ops, warned = _ran(trace, lambda: dst.copy_(src[:, ::2]))
    dst_cpu.copy_(src_cpu[:, ::2])
    assert ops == {"COPY_VIEW"} and not warned
    _same_bits(dst.contiguous(), dst_cpu.contiguous())
    # converted on the way
    other = _other(dt)
    conv_cpu = torch.empty(8, 6, dtype=other)
    conv = torch.empty(8, 6, dtype=other).npu()
    ops, warned = _ran(trace, lambda: conv.copy_(src.t()))
    conv_cpu.copy_(src_cpu.t())
    assert ops == {"COPY_VIEW", "CAST"} and not warned
    _same_bits(conv, conv_cpu)
    # into a destination that is not dense: one strided IDENTITY, or a
    # CAST to another dtype
    holes_cpu = torch.zeros(6, 8, dtype=dt)
    holes = holes_cpu.npu()
    ops, warned = _ran(trace, lambda: holes[:, ::2].copy_(src[:, 1::2]))
    holes_cpu[:, ::2].copy_(src_cpu[:, 1::2])
    assert ops == {"IDENTITY"} and not warned
    _same_bits(holes, holes_cpu)
    holes_cpu = torch.zeros(6, 8, dtype=other)
    holes = holes_cpu.npu()
    ops, warned = _ran(trace, lambda: holes[:, ::2].copy_(src[:, 1::2]))
    holes_cpu[:, ::2].copy_(src_cpu[:, 1::2])
    assert ops == {"CAST"} and not warned
    _same_bits(holes, holes_cpu)


def test_a_copy_within_one_tensor_is_the_cpus(npu, trace):
    """Source and destination share memory: the CPU's copy decides, but a
    view copied onto itself is nothing to do."""
    x = torch.arange(12.).reshape(3, 4).npu()
    ops, fell_back = _ran(trace, lambda: (x.copy_(x), x.t().copy_(x.t()),
                                          x[1].copy_(x[1])))
    assert not ops and not fell_back
    for make in (lambda x: x[1:].copy_(x[:-1]),
                 lambda x: x[:, :3].copy_(x[:, 3:].flip(1)),
                 lambda x: x.copy_(x.t())):
        want = torch.arange(36.).reshape(6, 6)
        got = want.npu()
        try:
            make(want)
        except RuntimeError as e:
            with pytest.raises(RuntimeError):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    make(got)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make(got)
        _same_bits(got, want)


def test_parameter_blocks_are_returned_after_their_tasks(npu):
    from torch_npu import _devices
    x = torch.randn(16, 9).npu()
    for _ in range(50):
        x.t().contiguous()
    torch.npu.synchronize()
    blocks = _devices.context(0).param_blocks
    assert blocks.slots >= 1
    assert blocks.idle == blocks.slots


# -- the README, imports ------------------------------------------------------
def _gen_torch_ops():
    path = os.path.join(REPO, "scripts", "gen_torch_ops.py")
    spec = importlib.util.spec_from_file_location("gen_torch_ops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_lists_the_tables_ops(table):
    gen = _gen_torch_ops()
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = gen.readme_block(f.read())
    assert block == gen.block(), (
        "README.md's list of torch_npu's device ops differs from "
        "torch_npu._op_table.TABLE: run scripts/gen_torch_ops.py")
    for e in table.TABLE:
        for overload in e.kernels if e.paths else ():
            assert "`%s`" % overload in block or "`%s`" % e.op in block


def test_torch_npu_imports_nothing_private_of_davinci():
    """torch_npu uses davinci's public modules (schema, opdesc,
    capabilities, ...), never _uapi or another private one."""
    private = []
    for name in sorted(os.listdir(TORCH_NPU)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(TORCH_NPU, name), encoding="utf-8") as f:
            tree = ast.parse(f.read(), name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                    (node.module or "").split(".")[0] == "davinci":
                parts = node.module.split(".") + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                parts = [p for a in node.names
                         if a.name.split(".")[0] == "davinci"
                         for p in a.name.split(".")]
            else:
                continue
            bad = [p for p in parts if p.startswith("_")]
            if bad:
                private.append("%s:%d imports %s" % (name, node.lineno, bad))
    assert not private, private
