# SPDX-License-Identifier: GPL-2.0
"""torch_npu's indexing, selection, arg-reduction and random rows
against CPU torch: embedding and its backward, index_select, gather and
its backward (scatter_add), index_add_, where and masked_fill, argmax,
argmin, max.dim, min.dim, arange, tril, triu and cumsum bit for bit
(float aranges within their last bit: CPU torch's vector loop rounds
differently), each as the device ops its row claims with nothing on the
CPU (read from the device's trace); dropout, uniform_ and bernoulli_ by
their statistics, torch.manual_seed and torch.npu.manual_seed
reproducing them, and the mask's scaling and dropout's backward bit for
bit."""

import pytest
import torch
import torch.nn.functional as F
import torch_npu

from test_op_table import _ran, trace  # noqa: F401 (a fixture)

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
FLOATS = [F32, F16, BF16]
aten = torch.ops.aten


def _cpu(dt, *shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    if dt.is_floating_point:
        return x.to(dt)
    if dt == torch.bool:
        return x > 0
    return (x * 60).to(dt)


def _same(got, want):
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    if want.dtype.is_floating_point:
        nan = want.isnan()
        assert torch.equal(got.isnan(), nan)
        got, want = got[~nan], want[~nan]
        assert torch.equal(got.signbit(), want.signbit())
    assert torch.equal(got, want), (got, want)


def _run(trace, fn, ops):
    """fn() on npu, running only the device ops ``ops`` (a subset that
    must include every one of ``ops`` marked by a leading '!'), nothing
    on the CPU; its result."""
    box = []
    ran, warned = _ran(trace, lambda: box.append(fn()))
    assert not warned, warned
    assert ran <= set(ops), sorted(ran - set(ops))
    return box[0]


@pytest.mark.parametrize("dt", FLOATS)
def test_embedding_and_its_backward_equal_the_cpu(npu, trace, dt):
    weight = _cpu(dt, 12, 6, seed=1)
    idx = torch.tensor([[3, 0, 3, 11], [3, 5, 0, 3]])
    grad = _cpu(dt, 2, 4, 6, seed=2)
    for padding_idx in (None, 3):
        w = weight.clone().requires_grad_()
        y = F.embedding(idx, w, padding_idx=padding_idx)
        y.backward(grad)
        wn = weight.npu().requires_grad_()
        yn = _run(trace, lambda: F.embedding(idx.npu(), wn,
                                             padding_idx=padding_idx),
                  {"INDEX_SELECT"})
        _same(yn, y.detach())
        _run(trace, lambda: yn.backward(grad.npu()),
             {"MEMSET", "INDEX_ADD", "MEMCPY"})
        _same(wn.grad, w.grad)
    # an int32 index
    _same(F.embedding(idx.int().npu(), weight.npu()),
          F.embedding(idx.int(), weight))


@pytest.mark.parametrize("dt", FLOATS + [torch.int64, torch.int32])
def test_index_select_gather_and_scatter_add_equal_the_cpu(npu, trace, dt):
    x = _cpu(dt, 4, 7, 3, seed=3)
    i = torch.tensor([6, 0, 6, 2])
    for dim in (0, 1, 2):
        j = i % x.shape[dim]
        _same(_run(trace, lambda: torch.index_select(x.npu(), dim, j.npu()),
                   {"INDEX_SELECT", "COPY_VIEW"}),
              torch.index_select(x, dim, j))
    g = torch.tensor([[[0, 2, 2, 1]] * 7] * 4)
    _same(_run(trace, lambda: torch.gather(x.npu(), -1, g.npu()),
               {"INDEX_SELECT"}), torch.gather(x, -1, g))
    src = _cpu(dt, 4, 7, 4, seed=4)
    _same(_run(trace, lambda: torch.scatter_add(x.npu(), 2, g.npu(),
                                                src.npu()),
               {"MEMCPY", "INDEX_ADD", "CAST"}),
          torch.scatter_add(x, 2, g, src))
    j = torch.tensor([6, 1, 6, 6, 0])
    for dim in (0, 1, 2):
        k = j % x.shape[dim]
        v = _cpu(dt, *(x.shape[:dim] + (5,) + x.shape[dim + 1:]), seed=dim)
        y, yn = x.clone(), x.npu()
        y.index_add_(dim, k, v)
        _run(trace, lambda: yn.index_add_(dim, k.npu(), v.npu()),
             {"COPY_VIEW", "INDEX_ADD", "CAST"})
        _same(yn, y)


def test_gathers_backward_is_scatter_add_in_index_order(npu, trace):
    x = _cpu(F32, 3, 50, seed=5)
    idx = torch.randint(0, 50, (3, 400), generator=torch.Generator()
                        .manual_seed(6))
    grad = _cpu(F32, 3, 400, seed=7) * 1e3
    xc = x.clone().requires_grad_()
    torch.gather(xc, 1, idx).backward(grad)
    xn = x.npu().requires_grad_()
    out = torch.gather(xn, 1, idx.npu())
    _run(trace, lambda: out.backward(grad.npu()),
         {"MEMSET", "INDEX_ADD", "MEMCPY"})
    _same(xn.grad, xc.grad)


@pytest.mark.parametrize("dt", FLOATS + [torch.int64, torch.bool])
def test_where_and_masked_fill_equal_the_cpu(npu, trace, dt):
    c = _cpu(torch.bool, 4, 1, 6, seed=8)
    a = _cpu(dt, 3, 6, seed=9)
    b = _cpu(dt, 4, 3, 1, seed=10)
    _same(_run(trace, lambda: torch.where(c.npu(), a.npu(), b.npu()),
               {"IDENTITY", "SELECT"}), torch.where(c, a, b))
    m = _cpu(torch.bool, 3, 6, seed=11)
    x = _cpu(dt, 3, 6, seed=12)
    _same(_run(trace, lambda: x.npu().masked_fill(m.npu(), 1),
               {"MEMCPY", "SELECT"}), x.masked_fill(m, 1))
    xn = x.npu()
    _run(trace, lambda: xn.t().masked_fill_(m[0].npu().reshape(6, 1), 0),
         {"SELECT"})
    _same(xn, x.t().masked_fill(m[0].reshape(6, 1), 0).t())


def test_attention_masks_equal_the_cpu(npu, trace):
    """A causal mask (tril of ones) and a padding mask filled with -inf
    before a softmax, as GPT-2 and BERT build them; torch.where with a
    Python number."""
    s = _cpu(F32, 2, 3, 5, 5, seed=13)
    causal = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    pad = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).bool()
    want = s.masked_fill(~causal, float("-inf")).masked_fill(
        ~pad[:, None, None, :], torch.finfo(F32).min)
    cn = _run(trace, lambda: torch.tril(torch.ones(5, 5, dtype=torch.bool,
                                                   device="npu")),
              {"FILL", "TRIL"})
    pn = pad.npu()
    got = _run(trace, lambda: s.npu().masked_fill(cn == 0, float("-inf"))
               .masked_fill(pn[:, None, None, :] == 0, torch.finfo(F32).min),
               {"MEMCPY", "SELECT", "CMP", "CAST"})
    _same(got, want)
    _same(torch.where(cn, s.npu(), 0.0), torch.where(causal, s, 0.0))


@pytest.mark.parametrize("dt", FLOATS + [torch.int32, torch.uint8])
def test_arg_reductions_and_max_min_dim_equal_the_cpu(npu, trace, dt):
    x = _cpu(dt, 5, 8, seed=14)
    if dt.is_floating_point:
        x[1, 3] = x[1, 6] = float("nan")
        x[2] = 0.0
        x[2, 4] = -0.0
        x[3, :4] = float("inf")
    x[4] = x[4, 0]                              # ties
    for fn in (torch.argmax, torch.argmin):
        for dim in (None, 1, 0, -1):
            _same(_run(trace, lambda: fn(x.npu(), dim),
                       {"ARGMAX", "ARGMIN", "COPY_VIEW"}), fn(x, dim))
        _same(fn(x.npu(), 1, keepdim=True), fn(x, 1, keepdim=True))
    for fn in (torch.max, torch.min):
        for dim in (1, 0):
            v, i = _run(trace, lambda: fn(x.npu(), dim),
                        {"ARGMAX", "ARGMIN", "INDEX_SELECT", "COPY_VIEW"})
            want = fn(x, dim)
            _same(v, want.values)
            _same(i, want.indices)


@pytest.mark.parametrize("dt", FLOATS + [torch.int64, torch.int32,
                                         torch.int8])
def test_arange_equals_the_cpu(npu, trace, dt):
    for args in ((10,), (-4, 9, 3), (7, -6, -2), (0, 5, 1)):
        _same(_run(trace, lambda: torch.arange(*args, dtype=dt,
                                               device="npu"), {"ARANGE"}),
              torch.arange(*args, dtype=dt))
    if dt.is_floating_point:
        got = torch.arange(0.5, 30.0, 0.3, dtype=dt, device="npu").cpu()
        want = torch.arange(0.5, 30.0, 0.3, dtype=dt)
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-6 if dt == F32
                                   else 8e-3, atol=0)


@pytest.mark.parametrize("dt", FLOATS + [torch.int64, torch.bool])
def test_tril_and_triu_equal_the_cpu(npu, trace, dt):
    x = _cpu(dt, 2, 5, 7, seed=15)
    for d in (-6, -1, 0, 2, 9):
        _same(_run(trace, lambda: torch.tril(x.npu(), d), {"TRIL"}),
              torch.tril(x, d))
        _same(_run(trace, lambda: torch.triu(x.npu(), d), {"TRIU"}),
              torch.triu(x, d))
    y = x.npu()
    y.triu_(1)
    _same(y, torch.triu(x, 1))


@pytest.mark.parametrize("dt", FLOATS + [torch.int32, torch.int64,
                                         torch.bool])
def test_cumsum_equals_the_cpu(npu, trace, dt):
    x = _cpu(dt, 6, 300, seed=16)
    if dt.is_floating_point:
        x = x * torch.logspace(-3, 4, 300).to(dt)
    for dim in (1, 0):
        _same(_run(trace, lambda: torch.cumsum(x.npu(), dim),
                   {"CUMSUM", "CAST", "COPY_VIEW"}), torch.cumsum(x, dim))


@pytest.mark.parametrize("dt", FLOATS)
def test_dropout_is_reproducible_and_scales_as_the_cpu(npu, trace, dt):
    x = _cpu(dt, 64, 257, seed=17)
    p = 0.3

    def draw(seed, fn=torch.manual_seed):
        fn(seed)
        return _run(trace, lambda: aten.native_dropout(x.npu(), p, True),
                    {"BERNOULLI", "MASK_SCALE"})
    out, mask = draw(1)
    out2, mask2 = draw(1, torch.npu.manual_seed)
    _same(out2, out.cpu())
    _same(mask2, mask.cpu())
    out3, mask3 = draw(2)
    assert not torch.equal(mask3.cpu(), mask.cpu())
    kept = mask.cpu().float().mean().item()
    n = mask.numel()
    assert abs(kept - (1 - p)) < 5 * (p * (1 - p) / n) ** 0.5
    # (x * mask) * float32(1 / (1 - p)), CPU torch's arithmetic
    _same(out, (x * mask.cpu()) * (1 / (1 - p)))
    grad = _cpu(dt, 64, 257, seed=18)
    _same(_run(trace, lambda: aten.native_dropout_backward(
        grad.npu(), mask, 1 / (1 - p)), {"MASK_SCALE"}),
        aten.native_dropout_backward(grad, mask.cpu(), 1 / (1 - p)))
    # F.dropout in training reaches native_dropout
    torch.manual_seed(1)
    _same(F.dropout(x.npu(), p), out.cpu())
    # the rng state saved and restored replays the draw
    torch.manual_seed(3)
    state = torch.npu.get_rng_state()
    first = F.dropout(x.npu(), p).cpu()
    torch.npu.set_rng_state(state)
    _same(F.dropout(x.npu(), p), first)


def test_uniform_and_bernoulli_have_their_statistics(npu, trace):
    n = 100_000
    torch.manual_seed(4)
    u = _run(trace, lambda: torch.rand(n, device="npu"),
             {"RANDOM_UNIFORM"}).cpu()
    assert 0 <= u.min() and u.max() < 1
    assert abs(u.mean().item() - 0.5) < 5 * (1 / 12 / n) ** 0.5
    torch.manual_seed(4)
    _same(torch.rand(n, device="npu"), u)
    r = torch.empty(n, device="npu").uniform_(-2, 3).cpu()
    assert -2 <= r.min() and r.max() < 3
    assert abs(r.mean().item() - 0.5) < 5 * (25 / 12 / n) ** 0.5
    b = _run(trace, lambda: torch.empty(n, dtype=torch.bool, device="npu")
             .bernoulli_(0.2), {"BERNOULLI"}).cpu()
    assert abs(b.float().mean().item() - 0.2) < 5 * (0.16 / n) ** 0.5


def test_randn_and_normal_draw_on_the_device_by_their_seeds(npu, trace):
    n = 100_000
    torch.manual_seed(5)
    z = _run(trace, lambda: torch.randn(n, device="npu"),
             {"RANDOM_NORMAL"}).cpu().double()
    assert abs(z.mean().item()) < 5 / n ** 0.5
    assert abs(z.var().item() - 1) < 5 * (2 / n) ** 0.5
    torch.manual_seed(5)
    _same(torch.randn(n, device="npu"), z.float())
    w = _run(trace, lambda: torch.empty(n, device="npu").normal_(3, 0.5),
             {"RANDOM_NORMAL"}).cpu().double()
    assert abs(w.mean().item() - 3) < 5 * 0.5 / n ** 0.5
    assert abs(w.std().item() - 0.5) < 5 * 0.5 * (0.5 / n) ** 0.5
    # what a model's initialisation calls: nn.init.normal_ on a parameter
    lin = torch.nn.Linear(64, 64).to("npu")
    _run(trace, lambda: torch.nn.init.normal_(lin.weight, 0.0, 0.02),
         {"RANDOM_NORMAL"})
    assert abs(lin.weight.detach().cpu().std().item() - 0.02) < 0.002
    for dt in (torch.float16, torch.bfloat16):
        h = torch.randn(n, device="npu", dtype=dt).cpu().double()
        assert abs(h.mean().item()) < 5 / n ** 0.5
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.empty(4, device="npu").normal_(0, -1)
    assert "aten::normal_" not in torch_npu.fallback_ops()
