# SPDX-License-Identifier: GPL-2.0
"""The npu device's ATen kernels: :data:`TABLE`, one row per ATen op.

Each :class:`Entry` names an ATen op, the overloads registered for it with
their kernels (torch_npu._kernels) and its device paths: for each
(:class:`Path`) the ops of the device's schema (davinci.schema,
kmod/core/ops.toml) it runs and the operands it takes, their dtypes,
layout, shapes and scalars. Operands outside every path run on the CPU,
warning once. The table is the one place kernels are registered, as
PyTorch's OpenReg backend keeps its registrations: ``DEVICE_OPS`` lists
the overloads with a device path, scripts/gen_torch_ops.py writes the
README's list from it, and tests/torch/test_op_table.py runs every path
and reads from the device's trace which ops ran. A row without paths
registers plumbing (a value read on the host, a stream use, a loop over
other rows' ops).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

import torch

from davinci import schema
from davinci.trace.spans import active_recorder

from . import _ext, _tracing
from . import _cat
from . import _fused_optim as F
from . import _cnn as C
from . import _device_ops as D
from . import _kernels as K
from . import _logical as L
from . import _norms as N
from . import _pointwise as P
from . import _reductions as R
from . import _reorder as Q
from . import _sort as S

__all__ = ["Path", "Entry", "TABLE", "DEVICE_OPS", "CPP_KERNELS",
           "entry_of", "device_rules"]

#: torch dtype of each davinci dtype name
_TORCH = {name: dt for dt, name in D.DTYPES.items()}
FLOATS = D.FLOATS
DEVICE_DTYPES = tuple(D.DTYPES)
#: dtypes COPY_VIEW moves bit for bit (elements of 2, 4, 8 or 16 bytes)
WORD_DTYPES = DEVICE_DTYPES + (torch.int16, torch.int64, torch.float64,
                               torch.complex64, torch.complex128)
#: a MEMCPY moves bytes: any dtype
ANY = WORD_DTYPES + (torch.bool, torch.uint8, torch.int8)


@dataclass(frozen=True)
class Path:
    """One way an op runs on the device: the schema ops it runs (names as
    the trace gives them), the operands it takes and their dtypes (by
    default those every compute op of ``ops`` takes)."""
    ops: tuple[str, ...]
    operands: str
    dtypes: tuple[torch.dtype, ...] = ()

    @property
    def dtype_names(self) -> str:
        """Its dtypes as the README and the fallback warning name them."""
        if set(self.dtypes) == set(ANY):
            return "any dtype"
        if set(self.dtypes) == set(WORD_DTYPES):
            return "any dtype of 2, 4, 8 or 16 bytes"
        return ", ".join(str(d).replace("torch.", "") for d in self.dtypes)

    def __post_init__(self):
        defs = [schema.by_name(op) for op in self.ops]   # KeyError: no op
        compute = [d for d in defs if d.compute]
        if not self.dtypes:
            if not compute:
                raise ValueError("a path of %s alone needs its dtypes"
                                 % "/".join(self.ops))
            # the device dtypes torch_npu computes in (D.DTYPES) that
            # every op of the path takes
            names = [n for n in compute[0].dtypes if n in _TORCH and
                     all(n in d.dtypes for d in compute)]
            object.__setattr__(self, "dtypes",
                               tuple(_TORCH[n] for n in names))


@dataclass(frozen=True)
class Entry:
    """ATen op ``op``: its overloads' kernels, registered for dispatch key
    ``key``, and its device paths (none: plumbing)."""
    op: str
    kernels: Mapping[str, Callable]
    paths: tuple[Path, ...] = ()
    key: str = "PrivateUse1"
    note: str = ""

    @property
    def device_ops(self) -> tuple[str, ...]:
        """The schema ops its paths run, each once, in schema order."""
        names = {op for p in self.paths for op in p.ops}
        return tuple(op.name for op in schema.OPS if op.name in names)


def _entry(op: str, kernels: Mapping[str, Callable], *paths: Path,
           key: str = "PrivateUse1", note: str = "") -> Entry:
    return Entry(op, MappingProxyType(dict(kernels)), tuple(paths), key,
                 note)


_ONE_SHAPE = "contiguous, one shape"
#: the integer dtypes the device computes in (not bool)
INTEGERS = tuple(dt for dt in D.DTYPES
                 if not dt.is_floating_point and dt != torch.bool)
#: what the elementwise rows take beyond two dense tensors of one shape
_VIEWS = ("npu tensors of one dtype broadcast against each other by "
          "torch's rules (strided views, expanded ones, 0-dim ones), into "
          "a new tensor, an out= or in place (a view too): one strided "
          "task, no copy first")
_PROMOTED = ("operands of different dtypes, promoted as torch.result_type "
             "says: each cast on the device first")


def _binary(name: str, op: str, has_alpha: bool, *scalar: Path,
            dtypes=()) -> Entry:
    tensors = "two contiguous tensors of one shape" + (
        ", alpha 1" if has_alpha else "")
    alpha1 = ", alpha 1" if has_alpha else ""
    return _entry(name, K._make_binary(name, name, has_alpha),
                  Path((op,), tensors, dtypes),
                  Path((op,), _VIEWS + alpha1 + (
                      "" if name == "div" else
                      "; or an integer tensor and a Python int"), dtypes),
                  Path(("CAST", op), _PROMOTED + (
                      " (integers divide as float32)" if name == "div"
                      else alpha1), FLOATS),
                  *scalar)


def _unary(name: str, op: str, ints_to_float: "bool | None" = None
           ) -> Entry:
    """``ints_to_float``: an integer tensor gives a float result (default:
    where the op takes no integer dtype; False where torch refuses one)."""
    d = schema.by_name(op)
    if ints_to_float is None:
        ints_to_float = "int32" not in d.dtypes
    paths = [Path((op,), "any npu view, in place or into an out= too")]
    if ints_to_float:
        paths.append(Path(("CAST", op), "an integer tensor: a float32 "
                          "result, cast on the device first", INTEGERS))
    return _entry(name, K._make_unary(name, d.python, ints_to_float), *paths)


#: npu to npu copies (host copies move the tensors' memory)
_COPIES = (
    Path(("MEMCPY",), "npu to npu, the source laid out as the destination",
         ANY),
    Path(("CAST",), "npu to npu, one layout, another dtype"),
    Path(("COPY_VIEW",), "npu to npu: a strided, offset or broadcast "
         "(expanded) source, a destination dense in some order of its "
         "dimensions, no memory shared", WORD_DTYPES),
    Path(("COPY_VIEW", "CAST"), "npu to npu: a strided source, another "
         "dtype"),
    Path(("IDENTITY",), "npu to npu: a destination no order of its "
         "dimensions makes dense (a strided view), a source broadcast to "
         "it, no memory shared: one strided task"),
    Path(("CAST",), "npu to npu: a strided destination as IDENTITY's, "
         "another dtype: one strided task"),
)

_HALF = (torch.float16, torch.bfloat16)
#: the device dtypes INDEX_ADD adds in directly, as CPU torch does
_NOT_HALF = tuple(dt for dt in DEVICE_DTYPES if dt not in _HALF and
                  dt != torch.bool)
_HALF_SUMS = ("float16 and bfloat16: summed in float32 copies and rounded "
              "once, as CPU torch's opmath buffer")

#: every ATen op torch_npu registers, copies first
TABLE: tuple[Entry, ...] = (
    _entry("_copy_from", {"_copy_from": K._copy_from}, *_COPIES,
           note="npu from and to the host: copies of the tensors' memory"),
    _entry("_copy_from_and_resize",
           {"_copy_from_and_resize": K._copy_from_and_resize},
           *_COPIES[:4]),   # (the resized destination is dense)
    _binary("add", "ADD", True,
            Path(("AXPY",), "a Python number (number * 1 + self), or two "
                 "tensors with alpha (other * alpha + self), any layout")),
    _binary("sub", "SUB", True,
            Path(("AXPY",), "a Python number (number * -1 + self), or two "
                 "tensors with alpha (other * -alpha + self), any layout")),
    _binary("mul", "MUL", False,
            Path(("AXPY",), "a float tensor by a Python number (number * "
                 "self + -0), any layout")),
    _binary("div", "DIV", False,
            Path(("AXPY",), "float16/bfloat16 by a Python number: self * "
                 "float32(1 / number), as CPU torch",
                 (torch.float16, torch.bfloat16)),
            Path(("DIV",), "float32 by a Python number (a 0-dim constant)",
                 (torch.float32,)),
            dtypes=FLOATS),
    _entry("maximum", K._make_minmax("maximum"), Path(("MAX",), _VIEWS),
           Path(("CAST", "MAX"), _PROMOTED, FLOATS)),
    _entry("minimum", K._make_minmax("minimum"), Path(("MIN",), _VIEWS),
           Path(("CAST", "MIN"), _PROMOTED, FLOATS)),
    _unary("relu", "RELU"),
    _unary("exp", "EXP"),
    _unary("sqrt", "SQRT"),
    _unary("abs", "ABS"),
    _entry("clamp", P.CLAMP,
           Path(("MAX", "MIN"), "two bounds, Python numbers or npu tensors "
                "broadcast to self (views too), of self's result dtype; "
                "into a new tensor, in place or an out=: min(max(x, min), "
                "max) as CPU torch (a NaN input or bound gives NaN, min > "
                "max gives max)")),
    _entry("clamp_min", P.CLAMP_MIN, Path(("MAX",), "as clamp, one bound")),
    _entry("clamp_max", P.CLAMP_MAX, Path(("MIN",), "as clamp, one bound")),
    _entry("hardtanh", P.HARDTANH,
           Path(("MAX", "MIN"), "a float tensor: clamp(x, min_val, "
                "max_val)", FLOATS)),
    _entry("hardtanh_backward", P.HARDTANH_BACKWARD,
           Path(("MEMCPY", "CMP", "SELECT"), "contiguous grad of x's shape "
                "and dtype: grad copied, then +0 where x <= min_val and "
                "where x >= max_val (a NaN x passes its gradient, as CPU "
                "torch's serial loop; its vectorised one gives 0)",
                FLOATS)),
    _entry("rsqrt", P.RSQRT,
           Path(("SQRT", "RECIPROCAL"), "float32, any npu view, in place or "
                "into an out= too: 1 / sqrt(x), CPU torch's bits",
                (torch.float32,)),
           Path(("CAST", "SQRT", "RECIPROCAL"), "float16/bfloat16 computed "
                "in float32 and rounded once; an integer tensor into "
                "float32", _HALF + INTEGERS)),
    _entry("mse_loss", P.MSE_LOSS,
           Path(("SUB", "MUL", "CAST", "REDUCE_SUM", "DIV"), "npu input "
                "and target of one float dtype broadcast against each "
                "other: (x - y) * (x - y), then the mean (a DIV by N; "
                "float16/bfloat16 in float32, CAST, as CPU torch's mean) or "
                "the sum, or none (then no REDUCE_SUM)", FLOATS)),
    _entry("mse_loss_backward", P.MSE_LOSS_BACKWARD,
           Path(("SUB", "AXPY", "MUL"), "as mse_loss: (norm * (x - y)) * "
                "grad, norm = 2 / N for a mean, else 2, rounded to the "
                "dtype, CPU torch's order", FLOATS)),
    _entry("leaky_relu", {"leaky_relu": K._leaky_relu,
                          "leaky_relu_": K._leaky_relu_},
           Path(("LEAKY_RELU",), "contiguous, negative_slope a number from "
                "0 to float32's largest (CPU torch's result for a negative "
                "one is -0 at +0)")),
    _unary("neg", "NEG"),
    _unary("tanh", "TANH"),
    _unary("sigmoid", "SIGMOID"),
    _unary("erf", "ERF"),
    _unary("log", "LOG"),
    _unary("reciprocal", "RECIPROCAL"),
    _unary("silu", "SILU", ints_to_float=False),
    _entry("gelu", K._make_gelu(),
           Path(("GELU",), "any npu view, in place or into an out= too, "
                "approximate \"none\" or \"tanh\"")),
    _entry("pow", K._make_pow(),
           Path(("POW",), _VIEWS + ", or a Python number either side; "
                "promoted as torch does (an integer power runs on the "
                "CPU)"),
           Path(("SQRT",), "a tensor ** 0.5 (CPU torch's sqrt)"),
           Path(("MUL", "RECIPROCAL"), "a float32 tensor ** 3 or ** -2 "
                "(CPU torch's (x * x) * x and 1 / (x * x))",
                (torch.float32,))),
    *(_entry(name, K._make_backward(name, schema.by_name(op).python,
                                    has_approximate=name ==
                                    "gelu_backward"),
             Path((op,), "npu tensors of one dtype broadcast against each "
                  "other, any views, into a new tensor or a grad_input="))
      for name, op in (("tanh_backward", "TANH_GRAD"),
                       ("sigmoid_backward", "SIGMOID_GRAD"),
                       ("gelu_backward", "GELU_GRAD"),
                       ("silu_backward", "SILU_GRAD"))),
    _entry("threshold_backward", {"threshold_backward": K._threshold_backward},
           Path(("RELU_GRAD",), "contiguous, one shape, threshold 0 (relu's "
                "backward)")),
    *(_entry(name, K._make_compare(name),
             Path(("CMP",), _VIEWS.replace("into a new tensor", "into a "
                  "new bool tensor") + ", or a tensor and a Python number "
                  "of its dtype (into an out= or in place of the compared "
                  "dtype: its 1 and 0)"),
             Path(("CAST", "CMP"), _PROMOTED + ", bool ones compared as "
                  "uint8, or an out= of another dtype", FLOATS))
      for name in ("eq", "ne", "lt", "le", "gt", "ge")),
    _entry("fill_", {"fill_.Scalar": K._fill},
           Path(("AXPY",), "contiguous, any number (number * 1 + 0)"),
           Path(("MEMSET",), "contiguous, the number 0", DEVICE_DTYPES),
           Path(("FILL",), "contiguous integer and bool tensors, any number "
                "of their dtype", INTEGERS + (torch.bool,))),
    _entry("zero_", {"zero_": K._zero},
           Path(("MEMSET",), "contiguous", DEVICE_DTYPES)),
    _entry("addcmul_", {"addcmul_": K._addcmul_},
           Path(("AXPY", "MUL", "ADD"), _ONE_SHAPE)),
    _entry("addcdiv_", {"addcdiv_": K._addcdiv_},
           Path(("DIV", "AXPY"), _ONE_SHAPE)),
    _entry("lerp_", {"lerp_.Scalar": K._lerp_},
           Path(("SUB", "AXPY"), "contiguous, one shape, a number weight")),
    _entry("mm", {"mm": K._mm},
           Path(("MATMUL",), "2-D, each contiguous or the transpose of a "
                "contiguous tensor"),
           Path(("COPY_VIEW", "MATMUL"), "an operand of another layout (the "
                "expanded gradient of a sum, a strided slice) copied dense "
                "first")),
    _entry("addmm", {"addmm": K._addmm},
           Path(("MATMUL", "ADD"), "2-D as mm, beta and alpha 1, a bias of "
                "[m, n], [n] or [1, n] (broadcast by a MATMUL with ones)")),
    _entry("_softmax", {"_softmax": K._softmax},
           Path(("SOFTMAX",), "contiguous, the last dim (a 0-dim tensor "
                "too; an empty one: an empty result, no task)"),
           Path(("COPY_VIEW", "SOFTMAX"), "another dim, or a view: the dim "
                "moved last by a copy, the rows' result moved back")),
    _entry("_log_softmax", {"_log_softmax": K._log_softmax},
           Path(("LOG_SOFTMAX",), "contiguous, the last dim"),
           Path(("COPY_VIEW", "LOG_SOFTMAX"), "another dim, or a view: "
                "moved last and back")),
    _entry("_softmax_backward_data",
           {"_softmax_backward_data": K._softmax_backward},
           Path(("MUL", "REDUCE_SUM", "MATMUL", "SUB"),
                "contiguous, the last dim"),
           Path(("COPY_VIEW", "MUL", "REDUCE_SUM", "MATMUL", "SUB"),
                "another dim, or views: grad and output moved last and the "
                "result back")),
    _entry("_log_softmax_backward_data",
           {"_log_softmax_backward_data": K._log_softmax_backward},
           Path(("REDUCE_SUM", "EXP", "MATMUL", "MUL", "SUB"),
                "contiguous, the last dim"),
           Path(("COPY_VIEW", "REDUCE_SUM", "EXP", "MATMUL", "MUL", "SUB"),
                "another dim, or views: moved last and back")),
    _entry("nll_loss_forward", {"nll_loss_forward": K._nll_loss_forward},
           Path(("CAST", "MATMUL", "CMP", "RELU_GRAD", "REDUCE_SUM",
                 "AXPY", "DIV"),
                "[m, n] scores, 1-D int64 or int32 targets, no class "
                "weights, mean or sum, an ignore_index that is no class "
                "(the targets' one-hot mask: CAST, MATMUL, CMP)", FLOATS)),
    _entry("nll_loss_backward", {"nll_loss_backward": K._nll_loss_backward},
           Path(("DIV", "AXPY", "MATMUL", "CAST", "CMP", "RELU_GRAD"),
                "as nll_loss_forward", FLOATS)),
    _entry("sum", R.SUM,
           Path(("REDUCE_SUM",), "contiguous, all dims or trailing ones, "
                "keepdim, dtype= the input's"),
           Path(("MATMUL",), "contiguous, leading dims (ones @ self)"),
           Path(("COPY_VIEW", "REDUCE_SUM"), "any other dims, or a view: "
                "the reduced dims moved last by one copy; CPU torch sums "
                "in another order (a cascade): equal within float32 "
                "rounding, not bit for bit"),
           Path(("CAST", "REDUCE_SUM"), "dtype= another float dtype: cast "
                "on the device first", FLOATS),
           Path(("MEMSET",), "an empty float tensor: zeros (a [0, 5] "
                "tensor's sum over dim 0 holds five)", FLOATS),
           note="float16 and bfloat16 rows are summed in float32 lanes and "
                "rounded once"),
    _entry("mean", R.MEAN,
           Path(("REDUCE_SUM", "DIV"), "contiguous, all dims or trailing "
                "ones: the sum divided by the count (CPU torch's "
                "sum(...).div_(n))", (torch.float32,)),
           Path(("MATMUL", "DIV"), "contiguous, leading dims",
                (torch.float32,)),
           Path(("COPY_VIEW", "REDUCE_SUM", "DIV"), "any other dims, or a "
                "view: moved last by one copy; equal to CPU torch within "
                "float32 rounding", (torch.float32,)),
           Path(("CAST", "REDUCE_SUM", "DIV"), "float16/bfloat16, all dims "
                "or trailing ones: summed and divided in float32, rounded "
                "once, as CPU torch (cast_fp32, sum, div, cast back)",
                _HALF),
           Path(("CAST", "COPY_VIEW", "REDUCE_SUM", "DIV"), "float16/"
                "bfloat16, any other dims", _HALF),
           Path(("AXPY",), "an empty float tensor: NaN (0 / 0), as CPU "
                "torch", FLOATS)),
    *(_entry(name, kernels,
             Path(("COPY_VIEW", "REDUCE_SUM", "DIV", "SUB", "MUL") + sqrt,
                  "any dims, correction, keepdim: the mean (REDUCE_SUM "
                  "rows, the reduced dims moved last by a copy, DIV), the "
                  "centred squares (broadcast SUB, MUL) summed, divided by "
                  "max(0, N - correction) as CPU torch%s; CPU torch's "
                  "Welford sums in float64: equal within float32 rounding "
                  "(var_mean's mean of a row holding an infinity is "
                  "torch.mean's, where CPU torch's Welford gives NaN unless "
                  "the infinity comes last)"
                  % (", then SQRT" if sqrt else ""), (torch.float32,)),
             Path(("CAST", "COPY_VIEW", "REDUCE_SUM", "DIV", "SUB", "MUL")
                  + sqrt, "float16/bfloat16: computed in float32, rounded "
                  "once", _HALF),
             Path(("AXPY",), "an empty float tensor: NaN, as CPU torch",
                  FLOATS))
      for name, kernels, sqrt in (
          ("var", R.VAR, ()), ("var_mean", R.VAR_MEAN, ()),
          ("std", R.STD, ("SQRT",)), ("std_mean", R.STD_MEAN, ("SQRT",)))),
    _entry("linalg_vector_norm", R.VECTOR_NORM,
           Path(("MUL", "REDUCE_SUM", "SQRT"), "ord 2 over all dims or "
                "trailing ones of a contiguous tensor (norm()): the sum of "
                "x * x, its SQRT; within float32 rounding of CPU torch",
                FLOATS),
           Path(("MUL", "COPY_VIEW", "REDUCE_SUM", "SQRT"), "ord 2, any "
                "other dims: the squares' reduced dims moved last", FLOATS),
           Path(("ABS", "REDUCE_SUM"), "ord 1: the sum of ABS", FLOATS),
           Path(("ABS", "ARGMAX", "ARGMIN", "INDEX_SELECT"), "ord inf and "
                "-inf: amax and amin of ABS", FLOATS)),
    _entry("max_pool2d_with_indices",
           {"max_pool2d_with_indices": K._max_pool2d_with_indices},
           Path(("MAXPOOL2D", "INDEX_SELECT"), "contiguous [n, c, h, w] "
                "or [c, h, w]; every window, stride, padding, dilation and "
                "ceil_mode CPU torch takes but a dilation wider than the "
                "input: the int64 indices, then the maxima gathered at "
                "them")),
    _entry("max_pool2d_with_indices_backward",
           {"max_pool2d_with_indices_backward":
            K._max_pool2d_with_indices_backward},
           Path(("MAXPOOL2D_BACKWARD",), "as max_pool2d_with_indices, a "
                "contiguous grad and int64 indices")),
    _entry("avg_pool2d", {"avg_pool2d": K._avg_pool2d},
           Path(("AVGPOOL2D",), "contiguous [n, c, h, w] or [c, h, w]; "
                "every window, stride, padding, ceil_mode, "
                "count_include_pad and divisor_override CPU torch takes")),
    _entry("avg_pool2d_backward",
           {"avg_pool2d_backward": K._avg_pool2d_backward},
           Path(("AVGPOOL2D_BACKWARD",), "as avg_pool2d, a contiguous "
                "grad")),
    _entry("_adaptive_avg_pool2d",
           {"_adaptive_avg_pool2d": K._adaptive_avg_pool2d},
           Path(("AVGPOOL2D",), "contiguous, each output extent dividing "
                "the input's (adaptive_avg_pool2d to 1 x 1 is a mean over "
                "h and w: the mean row)")),
    _entry("_adaptive_avg_pool2d_backward",
           {"_adaptive_avg_pool2d_backward":
            K._adaptive_avg_pool2d_backward},
           Path(("AVGPOOL2D_BACKWARD",), "as _adaptive_avg_pool2d, a "
                "contiguous grad")),
    _entry("convolution_overrideable",
           {"convolution_overrideable": C.convolution},
           Path(("CONV2D",), "npu input and weight of one dtype, 1-D or 2-D "
                "(torch views 1-D as a height of 1), any stride, padding, "
                "dilation and groups (depthwise too; padding='same' as torch "
                "resolves it), no bias"),
           Path(("CONV2D",), "as above with a bias: the task's own third "
                "operand (src2), added after the sum as ADD adds (a driver "
                "before ABI 1.10: one broadcast ADD onto the result)"),
           Path(("CONV2D_BACKWARD_INPUT", "ADD"), "transposed (its output "
                "padding below the stride), a bias one broadcast ADD (a "
                "strided task) onto the result")),
    _entry("convolution_backward_overrideable",
           {"convolution_backward_overrideable": C.convolution_backward},
           Path(("CONV2D_BACKWARD_INPUT", "CONV2D_BACKWARD_WEIGHT",
                 "REDUCE_SUM"), "the gradients output_mask asks for and no "
                "other: input, weight, bias (REDUCE_SUM of dy's rows: one "
                "image)"),
           Path(("CONV2D_BACKWARD_INPUT", "CONV2D_BACKWARD_WEIGHT",
                 "COPY_VIEW", "REDUCE_SUM"), "as above, N images: dy copied "
                "permuted to [C, N*H*W] for the bias's sums"),
           Path(("CONV2D", "CONV2D_BACKWARD_WEIGHT", "COPY_VIEW",
                 "REDUCE_SUM"), "transposed")),
    _entry("native_batch_norm", {"native_batch_norm": C.batch_norm},
           Path(("BN_TRAINING_REDUCE", "BN_TRAINING_UPDATE", "AXPY"),
                "training: [N, C, ...] npu input, weight, bias and running "
                "statistics of C elements or none: the statistics (save_mean "
                "and save_invstd rows of one [6, C] task result), y = x * "
                "alpha + beta in one task, running_mean and running_var (the "
                "unbiased variance) one AXPY each", (torch.float32,)),
           Path(("BN_TRAINING_REDUCE", "BN_TRAINING_UPDATE", "AXPY",
                 "CAST"), "as above in float16/bfloat16, summed in float32 "
                "(parameters of that dtype or float32, cast on the device)",
                (torch.float16, torch.bfloat16)),
           Path(("ADD", "SQRT", "DIV", "MUL", "SUB", "BN_TRAINING_UPDATE"),
                "eval: alpha and beta of the running statistics as [C] "
                "tasks, y in one task", (torch.float32,)),
           Path(("CAST", "ADD", "SQRT", "DIV", "MUL", "SUB",
                 "BN_TRAINING_UPDATE"), "eval in float16/bfloat16",
                (torch.float16, torch.bfloat16))),
    _entry("_native_batch_norm_legit",
           {"_native_batch_norm_legit": C.batch_norm_legit,
            "_native_batch_norm_legit.no_stats":
            C.batch_norm_legit_no_stats},
           Path(("BN_TRAINING_REDUCE", "BN_TRAINING_UPDATE", "AXPY"),
                "as native_batch_norm: training with running statistics",
                (torch.float32,)),
           Path(("BN_TRAINING_REDUCE", "BN_TRAINING_UPDATE"), "no_stats: "
                "training without running statistics, two tasks",
                (torch.float32,)),
           Path(("ADD", "SQRT", "DIV", "MUL", "SUB", "BN_TRAINING_UPDATE"),
                "eval (also _native_batch_norm_legit_no_training, which "
                "calls it)", (torch.float32,))),
    _entry("native_batch_norm_backward",
           {"native_batch_norm_backward": C.batch_norm_backward},
           Path(("BN_TRAINING_UPDATE_GRAD", "MEMCPY",
                 "BN_TRAINING_REDUCE_GRAD"), "training (the saved batch "
                "statistics): the gradients output_mask asks for and no "
                "other, gw and gb in one task, the weight copied beside them "
                "and dx in one task (statistics not saved by batch_norm "
                "copied into rows first)", (torch.float32,)),
           Path(("BN_TRAINING_UPDATE_GRAD", "CAST",
                 "BN_TRAINING_REDUCE_GRAD"), "training in float16/bfloat16 "
                "(parameters of that dtype cast into float32 rows)",
                (torch.float16, torch.bfloat16)),
           Path(("MEMCPY", "ADD", "SQRT", "DIV", "MUL", "MEMSET",
                 "BN_TRAINING_UPDATE_GRAD", "BN_TRAINING_UPDATE"),
                "eval (the running statistics): gw and gb in one task, dx = "
                "dy * invstd * w in one", (torch.float32,))),
    _entry("bmm", {"bmm": N.bmm},
           Path(("MATMUL",), "3-D npu operands of one dtype, each batch a "
                "contiguous matrix or the transpose of one: a MATMUL per "
                "batch, no copy"),
           Path(("COPY_VIEW", "MATMUL"), "as above, an operand whose "
                "batches are not such matrices (an attention head's "
                "strided view) copied dense first")),
    _entry("baddbmm", {"baddbmm": N.baddbmm},
           Path(("MATMUL", "ADD"), "as bmm, alpha 1 and beta 1 (the input "
                "added by one broadcast ADD) or beta 0 (the input "
                "ignored)")),
    _entry("native_layer_norm", {"native_layer_norm": N.layer_norm},
           Path(("REDUCE_SUM", "DIV", "SUB", "MUL", "ADD", "SQRT"),
                "npu input, weight and bias of the normalized shape or "
                "none: the means and centred squares of the contiguous "
                "input's rows by REDUCE_SUM, the rest broadcast tasks",
                (torch.float32,)),
           Path(("CAST", "REDUCE_SUM", "DIV", "SUB", "MUL", "ADD", "SQRT"),
                "as above in float16/bfloat16: computed in float32, "
                "rounded once", (torch.float16, torch.bfloat16))),
    _entry("native_layer_norm_backward",
           {"native_layer_norm_backward": N.layer_norm_backward},
           Path(("REDUCE_SUM", "DIV", "SUB", "MUL", "COPY_VIEW"),
                "as native_layer_norm: the gradients output_mask asks for "
                "and no other, CPU torch's formula in row sums and "
                "broadcast tasks, the weight's and bias's sums over a "
                "transposed copy", (torch.float32,)),
           Path(("CAST", "REDUCE_SUM", "DIV", "SUB", "MUL", "COPY_VIEW"),
                "as above in float16/bfloat16, computed in float32",
                (torch.float16, torch.bfloat16))),
    # indexing, selection, arg-reductions, random ops
    _entry("embedding", {"embedding": K._embedding},
           Path(("INDEX_SELECT",), "a 2-D weight (a view copied dense "
                "first), int64 or int32 indices of any shape")),
    _entry("embedding_dense_backward",
           {"embedding_dense_backward": K._embedding_dense_backward},
           Path(("MEMSET", "INDEX_ADD"), "int64 or int32 indices, no "
                "scale_grad_by_freq: zeros, each lookup's gradient row "
                "added in index order (CPU torch's order), the padding row "
                "zeroed again", FLOATS)),
    _entry("index_select", {"index_select": K._index_select},
           Path(("INDEX_SELECT",), "dim 0, a 1-D or 0-dim int64 or int32 "
                "index"),
           Path(("COPY_VIEW", "INDEX_SELECT"), "another dim: the index "
                "repeated for each leading batch (a COPY_VIEW of its "
                "broadcast)")),
    _entry("gather", {"gather": K._gather},
           Path(("INDEX_SELECT",), "the last dim, an int64 or int32 index "
                "of the input's other sizes")),
    _entry("scatter_add", {"scatter_add": K._scatter_add,
                           "scatter_add_": K._scatter_add_},
           Path(("INDEX_ADD",), "in place into a contiguous tensor, the "
                "last dim, index and src of one shape (gather's backward), "
                "in the index's order", _NOT_HALF),
           Path(("MEMCPY", "INDEX_ADD"), "out of place: a copy first",
                _NOT_HALF),
           Path(("CAST", "INDEX_ADD"), _HALF_SUMS, _HALF)),
    _entry("index_add", {"index_add": K._index_add,
                         "index_add_": K._index_add_},
           Path(("INDEX_ADD",), "in place into a contiguous tensor, dim 0, "
                "alpha 1, a 1-D int64 or int32 index, in its order",
                _NOT_HALF),
           Path(("MEMCPY", "INDEX_ADD"), "out of place: a copy first",
                _NOT_HALF),
           Path(("COPY_VIEW", "INDEX_ADD"), "another dim: the index "
                "repeated for each leading batch (float16 and bfloat16 "
                "rounding each add, but along the last dim)"),
           Path(("CAST", "INDEX_ADD"), _HALF_SUMS + " (along the first "
                "and last dims)", _HALF)),
    _entry("where", {"where.self": L.where, "where.self_out": L.where_out},
           Path(("IDENTITY", "SELECT"), "a bool condition and two tensors "
                "of one dtype broadcast against each other (views, 0-dim "
                "ones): other copied into the result, then self where the "
                "condition holds; into an out= of the result's dtype",
                DEVICE_DTYPES),
           Path(("CAST", "IDENTITY", "SELECT"), _PROMOTED, FLOATS),
           Path(("IDENTITY", "SELECT"), "a dtype the device does not "
                "compute in: moved as the device dtype of its element size "
                "(a complex128 as two int64s)",
                (torch.float64, torch.int16, torch.complex64,
                 torch.complex128))),
    *(_entry(name, L._make_inf_test(name),
             Path(("ABS", "CMP") if name in ("isinf", "isfinite") else
                  ("CMP",), "any npu view of a float dtype, into a new bool "
                  "tensor%s: %s" % ("" if name == "isfinite" else
                                    " or a bool out=", {
                      "isneginf": "x == -inf", "isposinf": "x == inf",
                      "isinf": "ABS, then |x| == inf",
                      "isfinite": "ABS, then |x| < inf",
                      "isnan": "x != x"}[name]), FLOATS),
             Path(("FILL",), "an integer or bool tensor: %s" % (
                 "true" if name == "isfinite" else "false"),
                 INTEGERS + (torch.bool,)))
      for name in L.INF_TESTS),
    *(_entry(name, L._make_all_any(name),
             Path(("CMP", arg.upper(), "INDEX_SELECT"), "all dims or "
                  "trailing ones of a contiguous tensor: x != 0 (CMP; none "
                  "for bool) viewed as uint8 rows, the first %s of each "
                  "(%s) and its value (INDEX_SELECT); uint8 gives uint8, "
                  "as CPU torch" % ("smallest" if name == "all" else
                                    "largest", arg.upper()), DEVICE_DTYPES),
             Path(("CMP", "COPY_VIEW", arg.upper(), "INDEX_SELECT"),
                  "any other dims (or a bool view): the reduced dims moved "
                  "last by a copy", DEVICE_DTYPES),
             Path(("FILL",), "a reduction over no elements: %s"
                  % ("true" if name == "all" else "false"),
                  DEVICE_DTYPES))
      for name, arg in (("all", "argmin"), ("any", "argmax"))),
    _entry("cat", {"cat": _cat.cat, "cat.out": _cat.cat_out},
           Path(("MEMCPY",), "any number of contiguous npu tensors of one "
                "dtype along dim 0 (or one after sizes of 1): each copied "
                "into its slice of the result or an out= (legacy empty "
                "1-D inputs skipped, as CPU torch)", ANY),
           Path(("IDENTITY",), "along a later dim: each input into its "
                "strided slice by one strided IDENTITY"),
           Path(("COPY_VIEW",), "a strided or expanded input into a dense "
                "slice", WORD_DTYPES),
           Path(("MEMCPY", "CAST"), "inputs of different dtypes, promoted "
                "by torch.result_type: each cast into its slice", FLOATS)),
    _entry("masked_fill", {"masked_fill_.Scalar": K._masked_fill_,
                           "masked_fill_.Tensor": K._masked_fill_,
                           "masked_fill.Scalar": K._masked_fill,
                           "masked_fill.Tensor": K._masked_fill},
           Path(("SELECT",), "in place, any view: a number or a 0-dim "
                "tensor, a bool mask broadcast to self"),
           Path(("MEMCPY", "SELECT"), "out of place: a copy of a contiguous "
                "self first")),
    *(_entry(name, K._make_argreduce(name),
             Path((op,), "dim None or the last: the first of equal values, "
                  "the first NaN"),
             Path(("COPY_VIEW", op), "another dim, moved last by a copy"))
      for name, op in (("argmax", "ARGMAX"), ("argmin", "ARGMIN"))),
    *(_entry(name, {**K._make_minmax_dim(name), **full},
             Path((op, "INDEX_SELECT"), "dim the last, or all dims (%s(), "
                  "a contiguous tensor): the indices, then the values at "
                  "them" % name),
             Path(("COPY_VIEW", op, "INDEX_SELECT"), "another dim, or a "
                  "view: moved last by a copy"))
      for name, op, full in (("max", "ARGMAX", R.MAX),
                             ("min", "ARGMIN", R.MIN))),
    *(_entry("a" + name, kernels,
             Path((op, "INDEX_SELECT"), "contiguous, all dims or trailing "
                  "ones, keepdim, out=: the first %s of each row (%s: the "
                  "first NaN, the first of equal values; among zeros of "
                  "both signs CPU torch's vectorised loop may keep another "
                  "one), then the value there" % (name + "imum", op)),
             Path(("COPY_VIEW", op, "INDEX_SELECT"), "any other dims, or a "
                  "view: the reduced dims moved last by one copy"))
      for name, op, kernels in (("max", "ARGMAX", R.AMAX),
                                ("min", "ARGMIN", R.AMIN))),
    _entry("arange", {"arange.start_out": K._arange_out},
           Path(("ARANGE",), "numbers start, end and step, CPU torch's "
                "length and its serial loop's arithmetic (int64 in int64, "
                "float32 in float64, float16 and bfloat16 in float32)")),
    *(_entry(name, K._make_triangle(name),
             Path((name.upper(),), "2-D or more (a view copied dense "
                  "first); in place on a contiguous tensor"))
      for name in ("tril", "triu")),
    _entry("cumsum", {"cumsum": K._cumsum},
           Path(("CUMSUM",), "the last dim, in CPU torch's accumulator "
                "types (float32 in float64)", FLOATS + (torch.int64,)),
           Path(("CAST", "CUMSUM"), "an integer or bool tensor: int64 first, "
                "as CPU torch", (torch.int32, torch.int8, torch.uint8,
                                 torch.bool)),
           Path(("COPY_VIEW", "CUMSUM"), "another dim: moved last and back",
                FLOATS + (torch.int64,))),
    _entry("flip", Q.FLIP,
           Path(("ARANGE", "INDEX_SELECT"), "dim 0 of a contiguous tensor: "
                "the reversed indices (an int64 ARANGE), then the rows at "
                "them", DEVICE_DTYPES),
           Path(("ARANGE", "COPY_VIEW", "INDEX_SELECT"), "other dims, or a "
                "view: an INDEX_SELECT per flipped dim, the index repeated "
                "for each leading batch (COPY_VIEW walks no negative "
                "stride)", DEVICE_DTYPES)),
    _entry("sort", S.SORT,
           Path(("ARGSORT", "INDEX_SELECT"), "the last dim (or a 0-dim "
                "tensor), stable or not, descending: the indices in "
                "stable order (a NaN largest, -0 equal to +0), then the "
                "values at them", DEVICE_DTYPES),
           Path(("COPY_VIEW", "ARGSORT", "INDEX_SELECT"), "another dim, or "
                "a view: moved last by one copy, the results views moved "
                "back", DEVICE_DTYPES),
           Path(("ARGSORT", "INDEX_SELECT", "MEMCPY"), "out=: the results "
                "copied into values and indices", DEVICE_DTYPES)),
    _entry("topk", S.TOPK,
           Path(("ARGSORT", "INDEX_SELECT"), "the last dim, largest or "
                "smallest: the first k indices of ARGSORT's stable order "
                "(sorted, whatever sorted= asks), then their values",
                DEVICE_DTYPES),
           Path(("COPY_VIEW", "ARGSORT", "INDEX_SELECT"), "another dim, or "
                "a view: moved last by one copy", DEVICE_DTYPES),
           Path(("ARGSORT", "INDEX_SELECT", "MEMCPY"), "out=: the results "
                "copied into values and indices", DEVICE_DTYPES)),
    _entry("roll", Q.ROLL,
           Path(("MEMCPY",), "dim 0 of a contiguous tensor (or no dims: "
                "the flattened tensor): its last shift elements, then the "
                "others, by cat's copies", DEVICE_DTYPES),
           Path(("IDENTITY",), "a later dim: cat's strided copies into the "
                "result's slices", DEVICE_DTYPES)),
    _entry("native_dropout", {"native_dropout": K._native_dropout},
           Path(("BERNOULLI", "MASK_SCALE"), "training: the mask drawn by "
                "Philox4x32-10 with a key from torch's CPU generator "
                "(torch.manual_seed, torch.npu.manual_seed), then (x * mask) "
                "* float32(1 / (1 - p)) as CPU torch", FLOATS)),
    _entry("native_dropout_backward",
           {"native_dropout_backward": K._native_dropout_backward},
           Path(("MASK_SCALE",), "a bool mask, any views: (grad * mask) * "
                "float32(scale), CPU torch's bits", FLOATS)),
    _entry("uniform_", {"uniform_": K._uniform_},
           Path(("RANDOM_UNIFORM",), "contiguous, [0, 1), no generator: a "
                "Philox key from torch's CPU generator"),
           Path(("RANDOM_UNIFORM", "AXPY"), "another range: from + (to - "
                "from) * u")),
    _entry("normal_", {"normal_": K._normal_},
           Path(("RANDOM_NORMAL",), "contiguous, no generator: Box and "
                "Muller's transform of Philox4x32-10 words, a key from "
                "torch's CPU generator")),
    _entry("bernoulli_", {"bernoulli_.float": K._bernoulli_},
           Path(("BERNOULLI",), "contiguous, a number p, no generator",
                DEVICE_DTYPES)),
    # plumbing: no device op of its own
    _entry("_copy_from", {"_copy_from": K._copy_from_math_bits},
           key="Conjugate",
           note="a tensor with a conjugate bit, copied through the host"),
    _entry("_copy_from", {"_copy_from": K._copy_from_math_bits},
           key="Negative",
           note="a tensor with a negative bit, copied through the host"),
    _entry("_has_compatible_shallow_copy_type",
           {"_has_compatible_shallow_copy_type":
            K._has_compatible_shallow_copy_type},
           note="a dense npu tensor and a dense CPU one may take each "
                "other's data: Module.to moves parameters in place, tied "
                "ones stay tied"),
    _entry("unfold", Q.UNFOLD,
           note="Tensor.unfold: a view (CPU torch's sizes and strides); "
                "repeat writes its result through one, so repeat runs as a "
                "copy of the expanded input (IDENTITY)"),
    _entry("_local_scalar_dense",
           {"_local_scalar_dense": K._local_scalar_dense},
           note="item(): read on the host"),
    _entry("record_stream", {"record_stream": K._record_stream},
           note="the caching allocator's stream uses"),
    _entry("_fused_adam_", F.FUSED_ADAM,
           Path(("ADAM",), "each parameter's param, grad, exp_avg and "
                "exp_avg_sq contiguous, of one shape and dtype, no two "
                "sharing memory (torch.optim.Adam(fused=True)): one task "
                "per parameter; AMSGrad on the CPU, grad_scale refused")),
    _entry("_fused_adamw_", F.FUSED_ADAMW,
           Path(("ADAM",), "as _fused_adam_'s (torch.optim.AdamW("
                "fused=True)), the decay decoupled")),
    _entry("_fused_sgd_", F.FUSED_SGD,
           Path(("SGD_MOMENTUM",), "a momentum other than 0: each "
                "parameter's param, grad and momentum buffer contiguous, of "
                "one shape and dtype, no two sharing memory (torch.optim."
                "SGD(fused=True)): one task per parameter; grad_scale "
                "refused"),
           Path(("AXPY",), "momentum 0 (no buffer): param -= lr * grad, "
                "the weight decay's term added first")),
    _entry("_foreach_*", K._foreach_kernels(),
           note="torch.optim's foreach paths: each tensor's op as its row "
                "runs it"),
)

#: overloads the C++ half registers itself (csrc/npu.cpp): it launches
#: their common case and hands every other call to the table's kernel
CPP_KERNELS = ("add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor")

#: the ATen overloads with a device path
DEVICE_OPS: list[str] = [overload for e in TABLE if e.paths
                         for overload in e.kernels]

_BY_OVERLOAD: dict[tuple[str, str], Entry] = {}
for _e in TABLE:
    for _overload in _e.kernels:
        if (_overload, _e.key) in _BY_OVERLOAD:
            raise ValueError("%s is registered twice for %s"
                             % (_overload, _e.key))
        _BY_OVERLOAD[(_overload, _e.key)] = _e


def entry_of(overload: str, key: str = "PrivateUse1") -> "Entry | None":
    """The row registering ATen ``overload`` ("add.Tensor", "aten::relu_")
    for dispatch key ``key``."""
    if overload.startswith("aten::"):
        overload = overload[len("aten::"):]
    if overload.endswith(".default"):
        overload = overload[:-len(".default")]
    return _BY_OVERLOAD.get((overload, key))


def device_rules(op: str) -> str:
    """What the row of ATen ``op`` ("aten::abs", "aten::add_.Scalar") runs
    on the device: each path's operands and dtypes ("" for none)."""
    name = op[len("aten::"):] if op.startswith("aten::") else op
    e = entry_of(name)
    if e is None:
        base = name.split(".")[0]
        e = next((r for r in TABLE if r.op in (base, base.rstrip("_"))),
                 None)
    if e is None:
        return ""
    return "; or ".join("%s (%s)" % (p.operands, p.dtype_names)
                        for p in e.paths)


def _register() -> None:
    lib = _tracing.TracedLibrary("aten", "IMPL")  # spans while tracing
    cpp = {}
    for e in TABLE:
        for overload, kernel in e.kernels.items():
            if overload in CPP_KERNELS and e.key == "PrivateUse1":
                cpp[overload.split(".")[0]] = _tracing.traced(overload,
                                                              kernel)
            else:
                lib.impl(overload, kernel, e.key)
    _ext.load().set_binary_kernels(cpp, D.launch_blocks, active_recorder)
    global _LIB
    _LIB = lib          # registrations live as long as their library


_LIB = None
_register()
