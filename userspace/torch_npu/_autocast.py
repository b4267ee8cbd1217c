# SPDX-License-Identifier: GPL-2.0
"""Autocast for the npu device: kernels on PyTorch's AutocastPrivateUse1 key.

PyTorch announces autocast for every PrivateUse1 backend but registers no
kernel on its key, so without these every op inside ``torch.autocast("npu")``
fails. As Ascend's torch_npu does, ops fall through the key unless they are
on one of the lists below, which are PyTorch's own lists for CUDA (the
``AT_FORALL_*`` lists in ATen/autocast_mode.h, which Ascend's torch_npu
registers): matmuls and convolutions run in the autocast dtype,
precision-sensitive ops in float32, ops of several operands in the widest
of their dtypes. Only floating npu tensors other than float64 are cast, and
the casts are ordinary ops before autograd sees the op, so the backward of
an autocast op runs in the dtype of its forward.

PyTorch's C++ kernels keep a cast copy of each float32 weight for the
autocast block (``cache_enabled``); these Python kernels cast on every use,
which gives the same results.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch._C import DispatchKey, DispatchKeySet

_KEY = "AutocastPrivateUse1"
_EXCLUDE = DispatchKeySet(DispatchKey.AutocastPrivateUse1)
aten = torch.ops.aten

#: ops (``name`` or ``name.overload``) that run in the autocast dtype
LOWER_PRECISION_FP = [
    "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d",
    "conv_tbc", "conv_transpose1d", "conv_transpose2d.input",
    "conv_transpose3d.input", "convolution", "prelu", "addmm", "addmv",
    "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear",
    "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
    "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "_scaled_dot_product_flash_attention",
    "scaled_dot_product_attention",
]
#: ops that run in float32
FP32 = [
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2",
    "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar",
    "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
    "native_layer_norm", "rms_norm", "group_norm", "frobenius_norm.dim",
    "nuclear_norm", "nuclear_norm.dim", "cosine_similarity",
    "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss",
    "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist",
    "cdist", "renorm", "logsumexp", "upsample_nearest1d",
    "_upsample_nearest_exact1d", "upsample_nearest2d",
    "_upsample_nearest_exact2d", "upsample_nearest3d",
    "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "_upsample_bilinear2d_aa", "upsample_trilinear3d", "upsample_bicubic2d",
    "_upsample_bicubic2d_aa",
]
#: ops with an optional ``dtype`` argument: float32 unless one is given
FP32_SET_OPT_DTYPE = [
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod",
    "cumsum", "linalg_vector_norm", "linalg_matrix_norm",
    "linalg_matrix_norm.str_ord", "sum", "sum.dim_IntList",
]
#: ops whose float32 result comes from the overload that takes a dtype
FP32_APPEND_DTYPE = {
    "norm.Scalar": aten.norm.ScalarOpt_dtype,
    "norm.ScalarOpt_dim": aten.norm.ScalarOpt_dim_dtype,
}
#: ops that run in the widest floating dtype of their operands
PROMOTE = [
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot",
    "grid_sampler", "index_put", "tensordot", "scatter_add",
]

_BCE_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are "
    "unsafe to autocast.\nMany models use a sigmoid layer right before the "
    "binary cross entropy layer.\nIn this case, combine the two layers "
    "using torch.nn.functional.binary_cross_entropy_with_logits\nor "
    "torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
    "BCEWithLogits are\nsafe to autocast.")

_libs: list[torch.library.Library] = []


def _overload(name: str) -> torch._ops.OpOverload:
    op, _, overload = name.partition(".")
    return getattr(getattr(aten, op), overload or "default")


def _eligible(x) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "npu" and \
        x.is_floating_point() and x.dtype != torch.float64


def _cast(x, dtype: torch.dtype):
    """``x`` with its eligible tensors (in lists too) cast to ``dtype``."""
    if _eligible(x):
        return x.to(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype) for v in x)
    return x


def _tensors(args) -> list[torch.Tensor]:
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_tensors(a))
    return out


def _promote_type(args, kwargs) -> torch.dtype:
    """The widest floating dtype of the eligible operands, as
    at::autocast::promote_type chooses it (float64 operands ignored)."""
    lower = torch.get_autocast_dtype("npu")
    current = lower
    for t in _tensors(list(args) + list(kwargs.values())):
        if not _eligible(t):
            continue
        if current == torch.float32 or t.dtype == torch.float32:
            current = torch.float32
        elif current != lower or t.dtype != lower:
            raise RuntimeError("autocast on npu: operands of %s and %s in "
                               "one op; cast them to one dtype first"
                               % (current, t.dtype))
    return current


def _lower_precision_fp(op):
    def kernel(*args, **kwargs):
        dtype = torch.get_autocast_dtype("npu")
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            return op(*_cast(args, dtype), **_cast(kwargs, dtype))
    return kernel


def _fp32(op):
    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            return op(*_cast(args, torch.float32),
                      **_cast(kwargs, torch.float32))
    return kernel


def _fp32_set_opt_dtype(op):
    names = [a.name for a in op._schema.arguments]
    at = names.index("dtype")

    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            given = args[at] if len(args) > at else kwargs.get("dtype")
            if not _eligible(args[0]) or given is not None:
                return op(*args, **kwargs)
            if len(args) > at:
                args = args[:at] + (torch.float32,) + args[at + 1:]
            else:
                kwargs = dict(kwargs, dtype=torch.float32)
            return op(*args, **kwargs)
    return kernel


def _fp32_append_dtype(op, target):
    # the dispatcher leaves out trailing arguments at their defaults, which
    # the target overload may not have: they are filled in here
    defaults = [a.default_value for a in op._schema.arguments]

    def kernel(*args):
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            dtype = torch.float32 if _eligible(args[0]) else args[0].dtype
            full = tuple(args) + tuple(defaults[len(args):])
            return target(*full, dtype=dtype)
    return kernel


def _promote(op):
    def kernel(*args, **kwargs):
        dtype = _promote_type(args, kwargs)
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            return op(*_cast(args, dtype), **_cast(kwargs, dtype))
    return kernel


def _banned(*args, **kwargs):
    raise RuntimeError(_BCE_MESSAGE)


def register() -> None:
    """Register the fallthrough and the kernels (once per process)."""
    if _libs:
        return
    everything = torch.library.Library("_", "IMPL")
    everything.fallback(torch.library.fallthrough_kernel, _KEY)
    lib = torch.library.Library("aten", "IMPL")
    policies: list[tuple[list[str], Callable]] = [
        (LOWER_PRECISION_FP, _lower_precision_fp), (FP32, _fp32),
        (FP32_SET_OPT_DTYPE, _fp32_set_opt_dtype), (PROMOTE, _promote)]
    for names, policy in policies:
        for name in names:
            lib.impl(name, policy(_overload(name)), _KEY)
    for name, target in FP32_APPEND_DTYPE.items():
        lib.impl(name, _fp32_append_dtype(_overload(name), target), _KEY)
    lib.impl("binary_cross_entropy", _banned, _KEY)
    _libs.extend([everything, lib])
