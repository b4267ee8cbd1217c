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
in eval alike (``_native_batch_norm_legit`` too); they run as the device's
batch norm ops (BN_TRAINING_REDUCE, BN_TRAINING_UPDATE,
BN_TRAINING_UPDATE_GRAD, BN_TRAINING_REDUCE_GRAD) beside a few [C] tasks.
Every step is a device task and nothing of the tensors' data is touched
on the host.
"""

from __future__ import annotations

from typing import Sequence

import torch

from davinci import opdesc, ops
from davinci.errors import ShapeError

from . import _device_ops as D
from . import _devices, streams
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


#: (op, dtype, the three shapes, stride, padding, dilation, groups) -> the
#: parameter block davinci.ops packed for that convolution: a geometry seen
#: once (and checked by davinci.ops then) is launched again without the
#: checks and the packing, a training step's convolutions each time
_blocks: dict[tuple, bytes] = {}
_BLOCKS_MAX = 4096


def _conv_block(op: str, a, b, out, stride, padding, dilation,
                groups: int) -> "bytes | None":
    """The packed block of the convolution ``op`` of dense ``a`` and ``b``
    into ``out`` (its inputs as the schema names them: conv2d's x and w,
    the input gradient's dy and w, the weight gradient's x and dy)."""
    x, w, dy = {"conv2d": (a, b, out),
                "conv2d_backward_input": (out, b, a),
                "conv2d_backward_weight": (a, out, b)}[op]
    try:
        fields, y = ops.conv2d_shapes(x.shape, w.shape, tuple(stride),
                                      tuple(padding), tuple(dilation),
                                      groups, op)
    except ShapeError:
        return None
    if tuple(y) != tuple(dy.shape):
        return None
    return opdesc.pack_params(opdesc.op_of(op), **fields)


def _conv(op: str, a, b, shape, stride, padding, dilation, groups: int,
          out: torch.Tensor, bias=None) -> torch.Tensor:
    """One of davinci.ops' convolutions into ``out`` on the current stream
    (inputs copied dense on the device first where they are views);
    CONV2D's ``bias`` added in its task. A geometry davinci.ops ran before
    launches its cached block directly."""
    a, b = a.contiguous(), b.contiguous()
    key = (op, a.dtype, tuple(a.shape), tuple(b.shape), tuple(out.shape),
           tuple(stride), tuple(padding), tuple(dilation), groups)
    block = _blocks.get(key)
    if block is not None and (bias is None or bias.is_contiguous()):
        d = opdesc.op_of(op)
        index = out.get_device()
        dst, srcs = D.addr(out), [D.addr(a), D.addr(b)]
        src2 = D.addr(bias) if bias is not None else 0
        attr = None if d.imm is None else "NONE"
        dtype = D.DTYPES[out.dtype]
        _devices.context(index).param_blocks.launch(
            streams.current_stream(index).davinci_stream, block,
            lambda at: opdesc.describe(d, dtype, dst=dst, srcs=srcs,
                                       params_at=at, attr=attr, src2=src2))
        return out
    fn = getattr(ops, op)
    kw = dict(stride=tuple(stride), padding=tuple(padding),
              dilation=tuple(dilation), groups=groups, out=D.dev(out),
              stream=D.stream_of(out))
    if op == "conv2d":
        fn(D.dev(a), D.dev(b),
           bias=None if bias is None else D.dev(bias.contiguous()), **kw)
    else:
        fn(D.dev(a), D.dev(b), shape=tuple(shape), **kw)
    if len(_blocks) < _BLOCKS_MAX:
        block = _conv_block(op, a, b, out, stride, padding, dilation, groups)
        if block is not None:
            _blocks[key] = block
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
# The device's batch norm ops (kmod/core/ops.toml, BN_TRAINING_*), one
# task each over x [N, C, ...] as it lies: training's forward is
# BN_TRAINING_REDUCE (mean, invstd, alpha = invstd * w, beta = b - mean *
# alpha and the running statistics' momentum terms, as one [6, C] float32
# tensor whose rows 0 and 1 are save_mean and save_invstd), then
# BN_TRAINING_UPDATE (y = x * alpha + beta, as CPU torch) and one AXPY per
# running statistic (stat := (1 - momentum) * stat + momentum * batch
# value, the unbiased variance for running_var). Its backward is
# BN_TRAINING_UPDATE_GRAD (gw, gb and the statistics, rows of a [5, C]
# tensor), the weight copied into its last row, and
# BN_TRAINING_REDUCE_GRAD (dx, CPU torch's formula). Eval normalises with
# alpha and beta from the running statistics ([C] tasks). Statistics and
# parameters are float32 on the device; float16/bfloat16 parameters are
# cast on the device, x and y stay in their dtype (summed in float32).
_BN_OPS = ("bn_training_reduce", "bn_training_update",
           "bn_training_update_grad", "bn_training_reduce_grad")
_BN_F32_OPS = ("add", "sub", "mul", "div", "sqrt", "axpy", "cast")


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
    name = D.DTYPES[x.dtype]
    if not all(D.serves(index, op, name) for op in _BN_OPS) or \
            not all(D.serves(index, op, "float32") for op in _BN_F32_OPS) or \
            not all(D.serves(index, "cast", D.DTYPES[t.dtype])
                    for t in params if t is not None):
        return None
    return pdt


def _as_f32(t: "torch.Tensor | None") -> "torch.Tensor | None":
    """``t`` in float32 (itself, or cast on the device)."""
    if t is None or t.dtype == F32:
        return t
    out = torch.empty(t.shape, dtype=F32, device=t.device)
    D.cast(t, out)
    return out


def _into(t: torch.Tensor, row: torch.Tensor) -> None:
    """Dense float32 ``row`` := [C] ``t`` (a copy, or a cast)."""
    if t.dtype == F32:
        D.memcpy(t, row)
    else:
        D.cast(t, row)


def _stat(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if t.dtype == dtype:
        return t
    out = torch.empty(t.shape, dtype=dtype, device=t.device)
    D.cast(t, out)
    return out


def _addr(t: "torch.Tensor | None") -> int:
    return 0 if t is None else D.addr(t)


def _update_running(stat: torch.Tensor, term: torch.Tensor,
                    momentum: float) -> None:
    """stat := (1 - momentum) * stat + term (BN_TRAINING_REDUCE's momentum
    * batch value), in place: one AXPY in float32 (a float16/bfloat16 stat
    cast there and back)."""
    s = _as_f32(stat)
    D.axpy(1.0 - momentum, s, term, s)
    if s is not stat:
        D.cast(s, stat)


def _coeffs_of_running(mean, var, weight, bias, eps: float) -> torch.Tensor:
    """[2, C] float32 alpha = w / sqrt(var + eps), beta = b - mean * alpha
    of float32 [C] tensors (ADD, SQRT, DIV, MUL, SUB), as CPU torch's eval
    (invstd first, then times the weight)."""
    coeffs = torch.empty((2, mean.shape[0]), dtype=F32, device=mean.device)
    alpha = coeffs[0]
    v = _ew("add", [var, float(eps)])
    _ew("sqrt", [v], v)
    _ew("div", [1.0, v], alpha)
    if weight is not None:
        _ew("mul", [alpha, weight], alpha)
    _ew("sub", [0.0 if bias is None else bias, _ew("mul", [mean, alpha])],
        coeffs[1])
    return coeffs


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
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if not training:
            coeffs = _coeffs_of_running(_as_f32(running_mean),
                                        _as_f32(running_var), w32, b32, eps)
            D.batch_norm("bn_training_update", x, D.addr(y),
                         (D.addr(x), D.addr(coeffs), 0))
            empty = torch.empty((0,), dtype=pdt, device=x.device)
            return y, empty, empty.clone()
        if w32 is not None and b32 is not None and \
                w32.untyped_storage().data_ptr() == \
                b32.untyped_storage().data_ptr():
            b32 = b32.clone()       # (the op's weight and bias are apart)
        stats = torch.empty((6, x.shape[1]), dtype=F32, device=x.device)
        D.batch_norm("bn_training_reduce", x, D.addr(stats),
                     (D.addr(x), _addr(w32), _addr(b32)), eps=float(eps),
                     momentum=float(momentum))
        D.batch_norm("bn_training_update", x, D.addr(y),
                     (D.addr(x), D.addr(stats[2]), 0))
        for stat, row in ((running_mean, 4), (running_var, 5)):
            if stat is not None:
                _update_running(stat, stats[row], momentum)
        return y, _stat(stats[0], pdt), _stat(stats[1], pdt)
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


def batch_norm_legit(x, weight, bias, running_mean, running_var,
                     training: bool, momentum: float, eps: float):
    """aten::_native_batch_norm_legit (torch.compile's and the
    decompositions' batch norm; _native_batch_norm_legit_no_training
    reaches it): native_batch_norm's."""
    return batch_norm(x, weight, bias, running_mean, running_var, training,
                      momentum, eps)


def batch_norm_legit_no_stats(x, weight, bias, training: bool,
                              momentum: float, eps: float):
    """aten::_native_batch_norm_legit.no_stats: no running statistics."""
    return batch_norm(x, weight, bias, None, None, training, momentum, eps)


def _stats_rows(mean: torch.Tensor, invstd: torch.Tensor) -> torch.Tensor:
    """Dense float32 [2, C] rows mean, invstd: the two tensors themselves
    where they are rows 0 and 1 of one float32 tensor (batch_norm's
    save_mean and save_invstd), else copied or cast into new rows."""
    c = mean.shape[0]
    if mean.dtype == F32 and invstd.dtype == F32 and \
            mean.untyped_storage().data_ptr() == \
            invstd.untyped_storage().data_ptr() and \
            invstd.storage_offset() == mean.storage_offset() + c:
        return mean.as_strided((2, c), (c, 1))
    rows = torch.empty((2, c), dtype=F32, device=mean.device)
    _into(mean, rows[0])
    _into(invstd, rows[1])
    return rows


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
    c = x.shape[1]
    sums = mask[1] or mask[2] or (mask[0] and train)
    if train:
        rows = _stats_rows(save_mean, save_invstd)
    else:
        rows = torch.empty((2, c), dtype=F32, device=x.device)
        if sums:
            _into(running_mean, rows[0])
        v = _ew("add", [_as_f32(running_var), float(eps)])
        _ew("sqrt", [v], v)
        _ew("div", [1.0, v], rows[1])
    gi = gw = gb = None
    # gw, gb, mean, invstd (BN_TRAINING_UPDATE_GRAD's), then the weight
    packed = torch.empty((5, c), dtype=F32, device=x.device)
    if sums:
        D.batch_norm("bn_training_update_grad", x, D.addr(packed),
                     (D.addr(dy), D.addr(x), D.addr(rows)))
    if mask[0]:
        gi = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if train:
            if weight is None:
                D.fill(packed[4], 1.0)
            else:
                _into(weight, packed[4])
            D.batch_norm("bn_training_reduce_grad", x, D.addr(gi),
                         (D.addr(dy), D.addr(x), D.addr(packed)))
        else:
            # dx = dy * (invstd * w): BN_TRAINING_UPDATE with beta 0
            coeffs = torch.empty((2, c), dtype=F32, device=x.device)
            if weight is None:
                D.memcpy(rows[1], coeffs[0])
            else:
                _ew("mul", [rows[1], _as_f32(weight)], coeffs[0])
            D.fill(coeffs[1], 0.0)
            D.batch_norm("bn_training_update", x, D.addr(gi),
                         (D.addr(dy), D.addr(coeffs), 0))
    if mask[1]:
        gw = _stat(packed[0], pdt)
    if mask[2]:
        gb = _stat(packed[1], pdt)
    return gi, gw, gb
