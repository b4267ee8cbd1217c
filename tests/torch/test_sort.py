# SPDX-License-Identifier: GPL-2.0
"""sort, argsort and topk on npu against CPU torch (torch_npu's _sort:
ARGSORT then INDEX_SELECT), with nothing run on the CPU. sort's order is
torch's stable one, so its indices equal CPU torch's bit for bit, ties,
NaNs and both zeros included. CPU topk breaks ties its own way: with
ties, topk's values must equal the CPU's and its indices must point at
them."""

import math

import pytest
import torch

from devcheck import BF16, F16, F32, check, no_fallback, sample

DTYPES = [F32, F16, BF16, torch.int32, torch.int64, torch.int8,
          torch.uint8, torch.bool]


def _values(dt, *shape, seed=0):
    """Ties, both zeros, NaNs and infinities (floats), or integers."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, shape, generator=g).float()
    if dt.is_floating_point:
        flat = x.view(-1)
        pick = torch.randperm(flat.numel(), generator=g)[:flat.numel() // 3]
        specials = torch.tensor([math.nan, -0.0, 0.0, math.inf, -math.inf])
        flat[pick] = specials[torch.arange(len(pick)) % len(specials)]
        return x.to(dt)
    if dt == torch.bool:
        return x > 0
    if dt == torch.uint8:
        return (x + 3).to(dt)
    return x.to(dt)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_equals_the_cpu_bit_for_bit(npu, dt, dim, descending):
    x = _values(dt, 4, 37, 3) if dim != -1 else _values(dt, 5, 41)
    check(lambda t: torch.sort(t, dim=dim, descending=descending,
                               stable=True), x)
    check(lambda t: torch.argsort(t, dim=dim, descending=descending,
                                  stable=True), x)
    # the unstable overload gets the stable order, which CPU torch's
    # unstable one (int8, a middle dim) need not give: the same values
    _same_values(lambda t: torch.sort(t, dim, descending), x, dim)


def _same_values(fn, x, dim):
    """fn's (values, indices) on npu: CPU torch's values, and indices
    that point at them."""
    want = fn(x)
    with no_fallback():
        got = fn(x.npu())
    torch.testing.assert_close(got.values.cpu(), want.values,
                               equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(x.gather(dim, got.indices.cpu()),
                               want.values, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dt", [F32, F16, BF16, torch.int64], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_distinct_values_equals_the_cpu(npu, dt, largest):
    g = torch.Generator().manual_seed(1)
    n = 250 if dt == BF16 else 500      # distinct integers, exact in it
    x = torch.stack([torch.randperm(n, generator=g) - n // 2
                     for _ in range(4)]).to(dt)
    for k in (1, 7, x.shape[-1]):
        check(lambda t: torch.topk(t, k, largest=largest), x)
    # (a column's values may tie: they come from different rows)
    _same_values(lambda t: torch.topk(t, 3, dim=0, largest=largest), x, 0)


@pytest.mark.parametrize("dt", [F32, F16, torch.int32, torch.uint8], ids=str)
def test_topk_with_ties_picks_the_cpus_values(npu, dt):
    x = _values(dt, 6, 50)
    for largest in (True, False):
        _same_values(lambda t: torch.topk(t, 9, largest=largest), x, -1)


def test_sort_edges(npu):
    x = sample(F32, 3, 4, special=True)
    check(lambda t: torch.sort(t[:, 1:].transpose(0, 1)), x)   # a view
    check(lambda t: torch.sort(t[0, 0]), x)                    # 0-dim
    check(lambda t: torch.sort(t[:0]), x)                      # empty
    check(lambda t: torch.topk(t, 0), x)
    check(lambda t: t.msort(), x)
    out = (torch.empty(0), torch.empty(0, dtype=torch.int64))
    want = torch.sort(x, 0, out=out)
    nout = tuple(o.npu() for o in out)
    with no_fallback():
        got = torch.sort(x.npu(), 0, out=nout)
    assert got[0] is nout[0] and got[1] is nout[1]
    assert torch.equal(got[1].cpu(), want[1])
    torch.testing.assert_close(got[0].cpu(), want[0], equal_nan=True)


def test_topk_refuses_a_k_beyond_the_dim_as_the_cpu(npu):
    with pytest.raises(RuntimeError, match="out of range"):
        torch.topk(torch.zeros(3).npu(), 4)
