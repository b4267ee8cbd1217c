# SPDX-License-Identifier: GPL-2.0
"""Batched matrix products and layer norm on the npu device.

``bmm`` (and ``baddbmm``'s beta 0 or 1 and alpha 1) is one MATMUL task per
batch: the device's MATMUL is 2-D, and where each batch's operands are
contiguous (or transposed contiguous) matrices inside the batched tensor
nothing is copied; an operand whose batches are not (an attention head's
strided view) is copied dense on the device first. ``nn.LayerNorm``
reaches ``native_layer_norm`` and ``native_layer_norm_backward``; the
device has no fused layer norm op, so they are compositions of the ops it
has, as batch norm's are (torch_npu._cnn): the normalized dims are the
rows' elements of the contiguous input, their means and variances
REDUCE_SUMs, the rest broadcast elementwise tasks in float32 (a
float16/bfloat16 input cast on the device and its result rounded once).
Nothing of the tensors' data is touched on the host.
"""

from __future__ import annotations

from typing import Sequence

import torch

from . import _device_ops as D
from . import _kernels as K
from ._cnn import _as_f32, _ew, _stat, row_sums

aten = torch.ops.aten
F32 = torch.float32


# -- batched matrix products ---------------------------------------------
def _batches(a: torch.Tensor, b: torch.Tensor) -> "list | None":
    """Each batch's (DeviceTensor, transposed) operands of 3-D npu ``a``
    and ``b`` of one dtype and device, or None where a batch is not a
    (transposed) contiguous matrix."""
    if not (K._is_npu(a) and K._is_npu(b)) or a.dim() != 3 or \
            b.dim() != 3 or a.dtype != b.dtype or a.device != b.device or \
            a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1] or \
            a.numel() == 0 or b.numel() == 0:
        return None
    pairs = []
    for i in range(a.shape[0]):
        pa, pb = D.matmul_operand(a[i]), D.matmul_operand(b[i])
        if pa is None or pb is None:
            return None
        pairs.append((pa, pb))
    return pairs


def _matrices(t: torch.Tensor) -> torch.Tensor:
    """3-D npu ``t`` whose every batch is a MATMUL operand: itself, or a
    dense copy made on the device (an attention head's strided view)."""
    if t.dim() == 3 and t.numel() and \
            any(D.matmul_operand(t[i]) is None for i in range(t.shape[0])):
        return t.contiguous()
    return t


def bmm(a, b):
    if K._is_npu(a) and K._is_npu(b):
        a, b = _matrices(a), _matrices(b)
    pairs = _batches(a, b)
    if pairs is None:
        return K.on_cpu(aten.bmm.default, "operand layout or dtype", a, b)
    out = torch.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=a.dtype,
                      device=a.device)
    for i, ((da, ta), (db, tb)) in enumerate(pairs):
        D.matmul(da, ta, db, tb, out[i])
    return out


def baddbmm(bias, a, b, *, beta=1, alpha=1):
    """bias * beta + a @ b for beta 0 (the bias ignored, as torch) or 1
    and alpha 1: the products, then one broadcast ADD."""
    if K._is_npu(a) and K._is_npu(b):
        a, b = _matrices(a), _matrices(b)
    if alpha == 1 and beta in (0, 1) and _batches(a, b) is not None:
        out = bmm(a, b)
        if beta == 0:
            return out
        res = K._ew("add", out.dtype, [out, bias], None, out.dtype)
        if res is not None:
            return res
    return K.on_cpu(aten.baddbmm.default, "alpha, beta or layout", bias, a,
                    b, beta=beta, alpha=alpha)


# -- layer norm ----------------------------------------------------------
def _ln_rows(x, normalized_shape, *params) -> "tuple[int, int] | None":
    """(rows, their elements) of layer norm over ``normalized_shape`` of npu
    ``x`` with ``params`` (weight, bias: None or of that shape, x's
    dtype) on the device; None where it runs on the CPU."""
    n_dims = len(normalized_shape)
    if not (K._is_npu(x) and x.dtype in D.FLOATS and x.numel() > 0 and
            0 < n_dims <= x.dim() and
            tuple(x.shape[x.dim() - n_dims:]) == tuple(normalized_shape)):
        return None
    index = x.get_device()
    for p in params:
        if p is not None and not (K._is_npu(p) and p.get_device() == index
                                  and p.dtype == x.dtype and
                                  tuple(p.shape) == tuple(normalized_shape)):
            return None
    need = ("add", "sub", "mul", "div", "sqrt", "reduce_sum", "cast",
            "identity")
    if not all(D.serves(index, op, "float32") for op in need) or \
            not D.serves(index, "cast", D.DTYPES[x.dtype]) or \
            not all(D.takes_strided(index, op) for op in ("add", "sub",
                                                          "mul")):
        return None
    n = 1
    for d in normalized_shape:
        n *= d
    return x.numel() // n, n


def _stats_shape(x, n_dims: int) -> tuple[int, ...]:
    """mean's and rstd's shape: x's leading dims, then ones (as CPU
    torch's)."""
    return tuple(x.shape[:x.dim() - n_dims]) + (1,) * n_dims


def layer_norm(x, normalized_shape, weight, bias, eps: float):
    """aten::native_layer_norm: (y, mean, rstd)."""
    shape = _ln_rows(x, normalized_shape, weight, bias)
    if shape is None:
        return K.on_cpu(aten.native_layer_norm.default, "dtypes, shapes or "
                        "layout", x, normalized_shape, weight, bias, eps)
    m, n = shape
    rows = _as_f32(x.contiguous()).reshape(m, n)
    mean = _ew("div", [row_sums(rows), float(n)])
    centred = _ew("sub", [rows, mean.reshape(m, 1)])
    sq = _ew("mul", [centred, centred])
    var = _ew("div", [row_sums(sq), float(n)])
    v = _ew("add", [var, float(eps)])
    _ew("sqrt", [v], v)
    rstd = _ew("div", [1.0, v])
    y32 = _ew("mul", [centred, rstd.reshape(m, 1)])
    if weight is not None:
        _ew("mul", [y32, _as_f32(weight).reshape(1, n)], y32)
    if bias is not None:
        _ew("add", [y32, _as_f32(bias).reshape(1, n)], y32)
    stats = _stats_shape(x, len(normalized_shape))
    return (_stat(y32, x.dtype).reshape(x.shape),
            _stat(mean, x.dtype).reshape(stats),
            _stat(rstd, x.dtype).reshape(stats))


def _column_sums(rows: torch.Tensor) -> torch.Tensor:
    """[n] sums over the m rows of dense float32 [m, n] ``rows``: one
    transposed copy (COPY_VIEW) and a REDUCE_SUM of its rows."""
    m, n = rows.shape
    cols = torch.empty((n, m), dtype=F32, device=rows.device)
    if not K._copy_on_device(rows.t(), cols):
        raise RuntimeError("torch_npu: the device refused a transposed copy "
                           "of %s: please report it" % ((m, n),))
    return row_sums(cols)


def layer_norm_backward(dy, x, normalized_shape, mean, rstd, weight, bias,
                        mask: Sequence[bool]):
    """aten::native_layer_norm_backward: the gradients ``mask`` asks for
    (input, weight, bias) and no other, CPU torch's formula: with
    xhat = (x - mean) rstd and g = dy weight, dx = rstd (g - mean(g) -
    xhat mean(g xhat)) over each row; dweight = sum over rows of dy xhat,
    dbias = sum over rows of dy."""
    shape = _ln_rows(x, normalized_shape, weight, bias)
    if shape is None or not (K._is_npu(dy) and dy.shape == x.shape and
                             dy.dtype == x.dtype) or \
            not all(K._is_npu(s) and s.dtype == x.dtype and
                    s.numel() == shape[0] for s in (mean, rstd)):
        return K.on_cpu(aten.native_layer_norm_backward.default, "dtypes, "
                        "shapes or layout", dy, x, normalized_shape, mean,
                        rstd, weight, bias, list(mask))
    m, n = shape
    rows = _as_f32(x.contiguous()).reshape(m, n)
    dy_rows = _as_f32(dy.contiguous()).reshape(m, n)
    mean32 = _as_f32(mean.contiguous()).reshape(m, 1)
    rstd32 = _as_f32(rstd.contiguous()).reshape(m, 1)
    xhat = _ew("sub", [rows, mean32])
    _ew("mul", [xhat, rstd32], xhat)
    gi = gw = gb = None
    if mask[0]:
        g = dy_rows if weight is None else \
            _ew("mul", [dy_rows, _as_f32(weight).reshape(1, n)])
        mean_g = _ew("div", [row_sums(g), float(n)])
        gx = _ew("mul", [g, xhat])
        mean_gx = _ew("div", [row_sums(gx), float(n)])
        t = _ew("mul", [xhat, mean_gx.reshape(m, 1)])
        u = _ew("sub", [g, mean_g.reshape(m, 1)])
        _ew("sub", [u, t], u)
        _ew("mul", [u, rstd32], u)
        gi = _stat(u, x.dtype).reshape(x.shape)
    if mask[1] and weight is not None:
        gw = _stat(_column_sums(_ew("mul", [dy_rows, xhat])),
                   x.dtype).reshape(weight.shape)
    if mask[2] and bias is not None:
        gb = _stat(_column_sums(dy_rows), x.dtype).reshape(bias.shape)
    return gi, gw, gb
