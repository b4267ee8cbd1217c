# SPDX-License-Identifier: GPL-2.0
"""Convolution and batch norm kernels of the npu device.

PyTorch sends a PrivateUse1 tensor's convolution to
``convolution_overrideable`` and its backward to
``convolution_backward_overrideable`` (at::_convolution picks the
"Overrideable" backend for it, after resolving ``padding='same'`` and
viewing a 1-D convolution as a 2-D one of height 1); they run as
davinci.ops' CONV2D, CONV2D_BACKWARD_INPUT and CONV2D_BACKWARD_WEIGHT (a
transposed convolution is CONV2D_BACKWARD_INPUT forward, and CONV2D and
CONV2D_BACKWARD_WEIGHT backward). ``nn.BatchNorm*`` reaches
``native_batch_norm`` and ``native_batch_norm_backward`` in training and
in eval alike. The device has no fused batch norm op, so these are
compositions of the ops it has; every step is a device task and nothing of
the tensors' data is touched on the host.
"""

from __future__ import annotations

from typing import Sequence

import torch

from davinci import ops
from davinci.errors import ShapeError

from . import _device_ops as D
from . import _kernels as K

aten = torch.ops.aten
F32 = torch.float32
_CONV_OPS = ("conv2d", "conv2d_backward_input", "conv2d_backward_weight")


# -- helpers ------------------------------------------------------------------
def _refused(op: str, shapes) -> None:
    raise RuntimeError("torch_npu: the device refused %s of shapes %s, "
                       "which the kernel's checks passed: please report it"
                       % (op, shapes))


def _npu_float(t, index: int, dtype: torch.dtype) -> bool:
    """``t`` is an npu tensor of npu:``index`` with ``dtype``, not empty."""
    return isinstance(t, torch.Tensor) and t.device.type == "npu" and \
        t.get_device() == index and t.dtype == dtype and t.numel() > 0


def _ew(op: str, inputs, out=None, attr=None) -> torch.Tensor:
    """An elementwise device task computed in float32 (operands of other
    dtypes cast on the device first, an out= of another dtype cast into),
    broadcast as torch broadcasts; raises where the device refuses what
    the callers checked it takes."""
    res = K._ew(op, F32, inputs, out, F32, attr=attr)
    if res is None:
        _refused(op, [tuple(getattr(x, "shape", ())) for x in inputs])
    return res


def _per_channel(v: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """[C] viewed to broadcast along dim 1 of ``like`` ([N, C, ...])."""
    return v.reshape((1, -1) + (1,) * (like.dim() - 2))


def channel_rows(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Contiguous npu ``t`` [N, C, ...] as a dense [C, N * ...] tensor of
    ``dtype`` (channel c's elements in row c): ``t`` itself reshaped where
    N is 1 and the dtype its own, else one permuted copy on the device
    (COPY_VIEW, and a CAST for another dtype)."""
    n, c = t.shape[0], t.shape[1]
    rest = t.numel() // (n * c)
    if n == 1 and t.dtype == dtype:
        return t.reshape(c, rest)
    dense = torch.empty((c, n, rest), dtype=dtype, device=t.device)
    if not K._copy_on_device(t.reshape(n, c, rest).transpose(0, 1), dense):
        raise RuntimeError("torch_npu: the device refused a permuted copy "
                           "of %s: please report it" % (tuple(t.shape),))
    return dense.reshape(c, n * rest)


def row_sums(rows: torch.Tensor) -> torch.Tensor:
    """[C] sums of dense [C, M] ``rows`` (REDUCE_SUM)."""
    out = torch.empty(rows.shape[:1], dtype=rows.dtype, device=rows.device)
    D.row_sums(rows, out)
    return out


def channel_sums(t: torch.Tensor) -> torch.Tensor:
    """[C] sums of contiguous npu ``t`` [N, C, ...] over every dim but 1,
    in its dtype (REDUCE_SUM over a [C, N * ...] copy)."""
    return row_sums(channel_rows(t, t.dtype))


# -- convolution --------------------------------------------------------------
def _conv_on_device(x, w, bias, transposed: bool) -> bool:
    """x and w (and bias) can be a device convolution's operands: npu
    tensors of one device and float dtype the driver convolves in, 3-D or
    4-D, a bias of w's output channels."""
    if not (isinstance(x, torch.Tensor) and x.device.type == "npu"):
        return False
    index, dt = x.get_device(), x.dtype
    if dt not in D.FLOATS or x.dim() not in (3, 4) or \
            not _npu_float(x, index, dt) or not _npu_float(w, index, dt) or \
            w.dim() != x.dim():
        return False
    if not all(D.serves(index, op, D.DTYPES[dt]) for op in _CONV_OPS):
        return False
    if bias is None:
        return True
    # (a transposed convolution's output channels are checked with its
    # shape); CONV2D takes the bias itself (its src2), else one ADD
    if not (_npu_float(bias, index, dt) and bias.dim() == 1 and
            (transposed or bias.shape[0] == w.shape[0])):
        return False
    return (not transposed and _fused_bias(index)) or (
        D.serves(index, "add", D.DTYPES[dt]) and
        D.takes_strided(index, "add"))


def _fused_bias(index: int) -> bool:
    """npu:``index``'s CONV2D adds a bias in its own task (ABI 1.10)."""
    return D.takes_src2(index, "conv2d")


def _transposed_shape(x, w, stride, padding, dilation, output_padding,
                      groups: int) -> tuple[int, ...]:
    """The output shape of a transposed convolution of x by w (torch's
    formula)."""
    spatial = [(size - 1) * s - 2 * p + d * (k - 1) + op + 1
               for size, s, p, d, k, op in zip(
                   x.shape[2:], stride, padding, dilation, w.shape[2:],
                   output_padding)]
    return (x.shape[0], w.shape[1] * groups) + tuple(spatial)


def _conv(op: str, a, b, shape, stride, padding, dilation, groups: int,
          out: torch.Tensor, bias=None) -> torch.Tensor:
    """One of davinci.ops' convolutions into ``out`` on the current stream
    (inputs copied dense on the device first where they are views);
    CONV2D's ``bias`` added in its task."""
    fn = getattr(ops, op)
    a, b = a.contiguous(), b.contiguous()
    kw = dict(stride=tuple(stride), padding=tuple(padding),
              dilation=tuple(dilation), groups=groups, out=D.dev(out),
              stream=D.stream_of(out))
    if op == "conv2d":
        fn(D.dev(a), D.dev(b),
           bias=None if bias is None else D.dev(bias.contiguous()), **kw)
    else:
        fn(D.dev(a), D.dev(b), shape=tuple(shape), **kw)
    return out


def _conv_fits(x_shape, w_shape, y_shape, stride, padding, dilation,
               groups: int) -> bool:
    """CONV2D of x_shape by w_shape makes y_shape (and the block takes
    them)."""
    try:
        _, y = ops.conv2d_shapes(x_shape, w_shape, tuple(stride),
                                 tuple(padding), tuple(dilation), groups)
    except ShapeError:
        return False
    return tuple(y) == tuple(y_shape)


def convolution(x, w, bias, stride, padding, dilation, transposed: bool,
                output_padding, groups: int):
    """aten::convolution_overrideable: CONV2D, its bias the task's src2
    (transposed: CONV2D_BACKWARD_INPUT, the bias added as one broadcast
    ADD; so too on a driver before ABI 1.10)."""
    if _conv_on_device(x, w, bias, transposed):
        if transposed:
            y_shape = _transposed_shape(x, w, stride, padding, dilation,
                                        output_padding, groups)
            # the transposed convolution is CONV2D's input gradient with
            # x as dy: CONV2D of y's shape by w must give x's
            ok = _conv_fits(y_shape, w.shape, x.shape, stride, padding,
                            dilation, groups) and \
                (bias is None or bias.shape[0] == y_shape[1])
        else:
            try:
                _, y_shape = ops.conv2d_shapes(
                    x.shape, w.shape, tuple(stride), tuple(padding),
                    tuple(dilation), groups)
                ok = True
            except ShapeError:
                ok = False          # the CPU raises its own error
        if ok:
            y = torch.empty(y_shape, dtype=x.dtype, device=x.device)
            if transposed:
                _conv("conv2d_backward_input", x, w, y_shape, stride,
                      padding, dilation, groups, y)
            elif bias is not None and _fused_bias(x.get_device()):
                _conv("conv2d", x, w, None, stride, padding, dilation,
                      groups, y, bias)
                return y
            else:
                _conv("conv2d", x, w, None, stride, padding, dilation,
                      groups, y)
            if bias is not None and K._ew("add", x.dtype, [
                    y, _per_channel(bias, y)], y, x.dtype) is None:
                _refused("add", [tuple(y.shape), tuple(bias.shape)])
            return y
    return K.on_cpu(aten.convolution.default, "dtype, layout or shapes",
                    x, w, bias, list(stride), list(padding), list(dilation),
                    transposed, list(output_padding), groups)


def convolution_backward(dy, x, w, stride, padding, dilation,
                         transposed: bool, output_padding, groups: int,
                         mask: Sequence[bool]):
    """aten::convolution_backward_overrideable: each gradient asked for in
    ``mask`` (input, weight, bias) and no other: CONV2D_BACKWARD_INPUT,
    CONV2D_BACKWARD_WEIGHT and REDUCE_SUM over dy's channels (transposed:
    CONV2D, CONV2D_BACKWARD_WEIGHT with x and dy swapped, REDUCE_SUM)."""
    dx_shape = x.shape
    fits = _conv_on_device(x, w, None, transposed) and \
        _npu_float(dy, x.get_device(), x.dtype) and dy.dim() == x.dim()
    if fits:
        image, grad = (dy, x) if transposed else (x, dy)
        fits = _conv_fits(image.shape, w.shape, grad.shape, stride, padding,
                          dilation, groups)
    if not fits:
        return K.on_cpu(aten.convolution_backward.default, "dtype, layout "
                        "or shapes", dy, x, w, [dy.shape[1]], list(stride),
                        list(padding), list(dilation), transposed,
                        list(output_padding), groups, list(mask))
    gi = gw = gb = None
    conv = (stride, padding, dilation, groups)
    if mask[0]:
        gi = torch.empty(dx_shape, dtype=x.dtype, device=x.device)
        if transposed:
            _conv("conv2d", dy, w, None, *conv, gi)
        else:
            _conv("conv2d_backward_input", dy, w, dx_shape, *conv, gi)
    if mask[1]:
        gw = torch.empty(w.shape, dtype=w.dtype, device=w.device)
        if transposed:
            _conv("conv2d_backward_weight", dy, x, w.shape, *conv, gw)
        else:
            _conv("conv2d_backward_weight", x, dy, w.shape, *conv, gw)
    if mask[2]:
        gb = channel_sums(dy.contiguous())
    return gi, gw, gb


# -- batch norm ---------------------------------------------------------------
#
# Composition (there is no fused batch norm op yet). CPU torch computes
# alpha = invstd * weight and beta = bias - mean * alpha per channel and
# then y = x * alpha + beta; so does this, as [C] tasks and two broadcast
# tasks over x in its own layout (MUL, ADD: strided, no copy). The
# per-channel statistics need sums over (N, H, W): x is copied once,
# permuted, into a dense [C, N*H*W] tensor whose rows REDUCE_SUM sums
# (mean), then the centred squares' rows (the biased variance: two
# passes, as CPU torch). The backward's sums (dy, and (x - mean) * dy)
# are REDUCE_SUMs over such copies too, and grad_input follows CPU torch's
# formula, ((dy - mean(dy)) - (x - mean) * k) * invstd * w with
# k = sum((x - mean) dy) invstd^2 / M, as broadcast tasks in x's layout.
# float16/bfloat16 tensors are computed in float32 (cast on the device)
# and rounded once into their dtype.

def _param_dtype(x, params) -> "torch.dtype | None":
    """The dtype CPU torch gives the statistics: the parameters' (one
    dtype: x's, or float32 beside a float16/bfloat16 x), x's without
    parameters; None for combinations left to the CPU."""
    given = [p for p in params if p is not None]
    if not given:
        return x.dtype
    dt = given[0].dtype
    if any(p.dtype != dt for p in given) or dt not in (x.dtype, F32):
        return None
    return dt


def _bn_on_device(x, params, *tensors) -> "torch.dtype | None":
    """The statistics' dtype when batch norm of ``x`` with ``params``
    (weight, bias, running_mean, running_var: each None or [C]) and the
    same-shaped ``tensors`` (dy) runs on the device; None where not."""
    if not (isinstance(x, torch.Tensor) and x.device.type == "npu") or \
            x.dtype not in D.FLOATS or x.dim() < 2 or x.numel() == 0:
        return None
    index, c = x.get_device(), x.shape[1]
    pdt = _param_dtype(x, params)
    if pdt is None:
        return None
    for p in params:
        if p is not None and not (_npu_float(p, index, pdt) and
                                  p.dim() == 1 and p.shape[0] == c and
                                  p.is_contiguous()):
            return None
    for t in tensors:
        if not (_npu_float(t, index, x.dtype) and t.shape == x.shape):
            return None
    need = ("add", "sub", "mul", "div", "sqrt", "axpy", "reduce_sum",
            "copy_view", "cast", "identity")
    if not all(D.serves(index, op, "float32") for op in need) or \
            not all(D.serves(index, "cast", D.DTYPES[t.dtype])
                    for t in (x, *[p for p in params if p is not None])) or \
            not all(D.takes_strided(index, op)
                    for op in ("add", "sub", "mul")):
        return None
    return pdt


def _as_f32(t: "torch.Tensor | None") -> "torch.Tensor | None":
    """``t`` in float32 (itself, or cast on the device)."""
    if t is None or t.dtype == F32:
        return t
    out = torch.empty(t.shape, dtype=F32, device=t.device)
    D.cast(t, out)
    return out


def _invstd(var: torch.Tensor, eps: float) -> torch.Tensor:
    """1 / sqrt(var + eps) of float32 [C] ``var`` (ADD, SQRT, DIV)."""
    v = _ew("add", [var, float(eps)])
    _ew("sqrt", [v], v)
    return _ew("div", [1.0, v])


def _update_running(stat: torch.Tensor, value: torch.Tensor,
                    momentum: float) -> None:
    """stat := momentum * value + (1 - momentum) * stat, in place (AXPYs
    in float32; a float16/bfloat16 stat cast back once)."""
    s = _as_f32(stat)
    _ew("axpy", [s, -0.0], s, attr=D._as_float32(1.0 - momentum))
    _ew("axpy", [value, s], stat, attr=D._as_float32(momentum))


def _normalize(x, mean, invstd, weight, bias, out_dtype) -> torch.Tensor:
    """y = x * alpha + beta with alpha = invstd * weight, beta = bias -
    mean * alpha per channel (float32 [C]), as CPU torch."""
    alpha = invstd if weight is None else _ew("mul", [invstd, weight])
    ma = _ew("mul", [mean, alpha])
    beta = _ew("sub", [0.0 if bias is None else bias, ma])
    t = _ew("mul", [x, _per_channel(alpha, x)])
    y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    return _ew("add", [t, _per_channel(beta, x)], y)


def batch_norm(x, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float):
    """aten::native_batch_norm: (y, save_mean, save_invstd); training:
    batch statistics, running_mean and running_var updated in place (the
    unbiased variance); eval: the running statistics."""
    params = (weight, bias, running_mean, running_var)
    pdt = _bn_on_device(x, params)
    if pdt is not None and (training or (running_mean is not None and
                                         running_var is not None)):
        x = x.contiguous()
        w32, b32 = _as_f32(weight), _as_f32(bias)
        if training:
            rows = channel_rows(x, F32)
            m = rows.shape[1]
            mean = _ew("div", [row_sums(rows), float(m)])
            centred = _ew("sub", [rows, mean.reshape(-1, 1)])
            _ew("mul", [centred, centred], centred)
            var_sum = row_sums(centred)
            invstd = _invstd(_ew("div", [var_sum, float(m)]), eps)
            if running_mean is not None:
                _update_running(running_mean, mean, momentum)
            if running_var is not None:
                _update_running(running_var, _ew(
                    "div", [var_sum, float(m - 1)]), momentum)
        else:
            mean = _as_f32(running_mean)
            invstd = _invstd(_as_f32(running_var), eps)
        y = _normalize(x, mean, invstd, w32, b32, x.dtype)
        if not training:
            empty = torch.empty((0,), dtype=pdt, device=x.device)
            return y, empty, empty.clone()
        return y, _stat(mean, pdt), _stat(invstd, pdt)
    # the CPU updates CPU copies of the running statistics: written back
    stats = [s.cpu() if K._is_npu(s) else s
             for s in (running_mean, running_var)]
    res = K.on_cpu(aten.native_batch_norm.default, "dtypes, shapes or "
                   "layout", x, weight, bias, *stats, training, momentum,
                   eps)
    for s, copy in zip((running_mean, running_var), stats):
        if copy is not s:
            s.copy_(copy)
    return res


def _stat(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if t.dtype == dtype:
        return t
    out = torch.empty(t.shape, dtype=dtype, device=t.device)
    D.cast(t, out)
    return out


def batch_norm_backward(dy, x, weight, running_mean, running_var,
                        save_mean, save_invstd, train: bool, eps: float,
                        mask: Sequence[bool]):
    """aten::native_batch_norm_backward: the gradients ``mask`` asks for
    (input, weight, bias) and no other, from the saved batch statistics
    (train) or the running ones."""
    stats = (save_mean, save_invstd) if train else \
        (running_mean, running_var)
    pdt = _bn_on_device(x, (weight, *stats), dy)
    if pdt is None or any(s is None for s in stats):
        return K.on_cpu(aten.native_batch_norm_backward.default, "dtypes, "
                        "shapes or layout", dy, x, weight, running_mean,
                        running_var, save_mean, save_invstd, train, eps,
                        list(mask))
    x, dy = x.contiguous(), dy.contiguous()
    mean = _as_f32(stats[0])
    invstd = _as_f32(save_invstd) if train else \
        _invstd(_as_f32(running_var), eps)
    w32 = _as_f32(weight)
    gi = gw = gb = None
    need_sums = mask[1] or mask[2] or (mask[0] and train)
    if need_sums:
        dy_rows = channel_rows(dy, F32)
        m = dy_rows.shape[1]
        sum_dy = row_sums(dy_rows)
        centred = _ew("sub", [channel_rows(x, F32), mean.reshape(-1, 1)])
        _ew("mul", [centred, dy_rows], centred)
        dotp = row_sums(centred)
    if mask[0]:
        gi = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if train:
            k = _ew("div", [_ew("mul", [_ew("mul", [dotp, invstd]),
                                        invstd]), float(m)])
            grad_mean = _ew("div", [sum_dy, float(m)])
            t = _ew("sub", [x, _per_channel(mean, x)])
            _ew("mul", [t, _per_channel(k, x)], t)
            u = _ew("sub", [dy, _per_channel(grad_mean, x)])
            _ew("sub", [u, t], u)
            if w32 is None:
                _ew("mul", [u, _per_channel(invstd, x)], gi)
            else:
                _ew("mul", [u, _per_channel(invstd, x)], u)
                _ew("mul", [u, _per_channel(w32, x)], gi)
        else:
            scale = invstd if w32 is None else _ew("mul", [invstd, w32])
            _ew("mul", [dy, _per_channel(scale, x)], gi)
    if mask[1]:
        gw = _stat(_ew("mul", [dotp, invstd]), pdt)
    if mask[2]:
        gb = _stat(sum_dy, pdt)
    return gi, gw, gb
