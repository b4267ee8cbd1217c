# SPDX-License-Identifier: GPL-2.0
"""Batched matrix products and layer norm on the device against CPU torch:
bmm and baddbmm (each batch a MATMUL, transposed batches too), and
nn.LayerNorm forward and backward (with and without its affine weight,
several normalized dims, float16/bfloat16 computed in float32), each
reading from the trace that its device ops ran and nothing fell back."""

import pytest
import torch
import torch.nn.functional as F

import torch_npu
from test_op_table import _ran, trace  # noqa: F401 (a fixture)

FORWARD_TOL, BACKWARD_TOL = 1e-5, 1e-4
HALF_TOL = {torch.float16: 2e-3, torch.bfloat16: 2e-2}


def _rel(got: torch.Tensor, want: torch.Tensor) -> float:
    got, want = got.cpu().double(), want.double()
    return float((got - want).norm() / max(want.norm(), 1e-30))


#: the ATen ops of these tests, none of which may ever fall back in this
#: process (torch_npu.fallback_ops(): the C++ fallback warns only once)
ATEN = ("bmm", "baddbmm", "native_layer_norm")


def _on_device(trace, fn, ops):
    """fn()'s result, having checked in the device's trace that ``ops``
    ran and that nothing ran on the CPU: no fallback call now, and none of
    ATEN's ops among every op that fell back in this process."""
    box = []
    ran, fell_back = _ran(trace, lambda: box.append(fn()))
    assert not fell_back, fell_back
    assert set(ops) <= ran, (sorted(ops), sorted(ran))
    ever = [op for op in torch_npu.fallback_ops()
            if any(name in op for name in ATEN)]
    assert not ever, ever
    return box[0]


@pytest.mark.parametrize("layout", ["dense", "transposed", "heads"])
def test_bmm_is_a_matmul_per_batch(npu, trace, layout):
    """Each batch a MATMUL; an attention head's strided view ("heads":
    batches that are not matrices) copied dense on the device first."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(4, 7, 5, generator=g)
    b = torch.randn(4, 3, 5, generator=g).transpose(1, 2) \
        if layout == "transposed" else torch.randn(4, 5, 3, generator=g)
    if layout == "heads":       # each batch a (7, 5) of row stride 20
        a = torch.randn(7, 4, 5, generator=g).transpose(0, 1)
    an, bn = a.npu(), b.npu()
    got = _on_device(trace, lambda: torch.bmm(an, bn), {"MATMUL"})
    assert _rel(got, torch.bmm(a, b)) <= FORWARD_TOL
    c = torch.randn(7, 3, generator=g)
    cn = c.npu()
    got = _on_device(trace, lambda: torch.baddbmm(cn, an, bn),
                     {"MATMUL", "ADD"})
    assert _rel(got, torch.baddbmm(c, a, b)) <= FORWARD_TOL


@pytest.mark.parametrize("shape,normalized", [
    ((4, 9, 16), (16,)), ((3, 5, 6), (5, 6)), ((2, 33), (33,))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward_and_backward(npu, trace, shape, normalized,
                                         affine):
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(normalized, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            ln.weight.normal_()
            ln.bias.normal_()
    x = torch.randn(shape) * 3 + 1
    dy = torch.randn(shape)
    xc = x.clone().requires_grad_()
    y = ln(xc)
    y.backward(dy)
    ln_npu = torch.nn.LayerNorm(normalized, elementwise_affine=affine).npu()
    ln_npu.load_state_dict(ln.state_dict())
    xn = x.npu().requires_grad_()
    dyn = dy.npu()

    def step():
        out = ln_npu(xn)
        out.backward(dyn)
        return out
    got = _on_device(trace, step, {"REDUCE_SUM", "SQRT", "SUB", "MUL"})
    assert _rel(got, y.detach()) <= FORWARD_TOL
    assert _rel(xn.grad, xc.grad) <= BACKWARD_TOL
    if affine:
        assert _rel(ln_npu.weight.grad, ln.weight.grad) <= BACKWARD_TOL
        assert _rel(ln_npu.bias.grad, ln.bias.grad) <= BACKWARD_TOL


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_layer_norm_in_half_types_is_computed_in_float32(
        npu, trace, dtype):
    torch.manual_seed(1)
    x = torch.randn(6, 40)
    w, b = torch.randn(40), torch.randn(40)
    want = F.layer_norm(x, (40,), w, b).to(dtype)
    xn, wn, bn = (t.to(dtype).npu() for t in (x, w, b))
    got = _on_device(trace, lambda: F.layer_norm(xn, (40,), wn, bn),
                     {"CAST", "REDUCE_SUM", "SQRT"})
    assert got.dtype == dtype
    # the inputs themselves are rounded to the half type first
    ref = F.layer_norm(x.to(dtype).float(), (40,), w.to(dtype).float(),
                       b.to(dtype).float()).to(dtype)
    assert _rel(got, ref.float()) <= HALF_TOL[dtype]
    assert _rel(got, want.float()) <= 4 * HALF_TOL[dtype]
