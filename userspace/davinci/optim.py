# SPDX-License-Identifier: GPL-2.0
"""The host half of the device's optimizer steps: DAVINCI_OP_ADAM's and
DAVINCI_OP_SGD_MOMENTUM's parameter blocks from torch's hyperparameters
and step.

The device computes in float32 (CPU torch's fused Adam computes in its
opmath type, float32 for float32, float16 and bfloat16 parameters); the
block's hyperparameters are what that kernel derives on the host: the bias
corrections in float64 (``1 - beta ** step``, as ``std::pow``), the step
size ``lr / bias_correction1``, AdamW's ``1 - lr * weight_decay``, each
rounded once to float32 (DOC: ops.toml's ADAM). CPU torch's fused SGD
rounds lr, momentum, 1 - dampening and the weight decay to float32 the
same way (DOC: SGD_MOMENTUM).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InvalidArgumentError

__all__ = ["f32_bits", "adam_fields", "sgd_momentum_fields"]


def f32_bits(x: float) -> int:
    """The bits of float64 ``x`` rounded once to float32 (to nearest even;
    beyond float32's range an infinity)."""
    with np.errstate(over="ignore"):
        return int(np.array(float(x), np.float64).astype(np.float32)
                   .view(np.uint32))


def adam_fields(*, lr: float, step: float, beta1: float, beta2: float,
                eps: float, weight_decay: float = 0.0,
                decoupled: bool = False, maximize: bool = False,
                amsgrad: bool = False) -> dict[str, int]:
    """ADAM's parameter block fields for step number ``step`` (>= 1, the
    count after this step's increment, as torch's ``state_step``) of Adam
    (``decoupled`` False: the weight decay is added to the gradient) or
    AdamW (True: the parameter is scaled by ``1 - lr * weight_decay``).
    ``amsgrad`` is refused: its max_exp_avg_sq would be a fifth operand."""
    if amsgrad:
        raise InvalidArgumentError(
            "adam: amsgrad=True needs max_exp_avg_sq, a fifth operand the "
            "device's ADAM task does not have: use amsgrad=False (or run "
            "the optimizer on the CPU)")
    step = float(step)
    if not step >= 1:
        raise InvalidArgumentError("adam: step %r: the first step is 1 "
                                   "(torch's state_step after its "
                                   "increment)" % step)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    decay = 1 - lr * weight_decay if decoupled and weight_decay else 1.0
    return {"step_size": f32_bits(lr / bias_correction1),
            "bias_correction2_sqrt": f32_bits(
                math.sqrt(bias_correction2) if bias_correction2 >= 0
                else math.nan),
            "eps": f32_bits(eps),
            "exp_avg_weight": f32_bits(1 - beta1),
            "beta2": f32_bits(beta2),
            "exp_avg_sq_weight": f32_bits(1 - beta2),
            "weight_decay": f32_bits(0.0 if decoupled else weight_decay),
            "decay": f32_bits(decay),
            "maximize": int(bool(maximize)), "amsgrad": 0}


def sgd_momentum_fields(*, lr: float, momentum: float,
                        dampening: float = 0.0, weight_decay: float = 0.0,
                        nesterov: bool = False, maximize: bool = False,
                        first_step: bool = False) -> dict[str, int]:
    """SGD_MOMENTUM's parameter block fields: torch's SGD with a momentum
    other than 0 (without one, SGD is ``param -= lr * grad``: no buffer, no
    task of this op); ``first_step`` sets the buffer to the gradient."""
    if not momentum:
        raise InvalidArgumentError(
            "sgd_momentum: momentum 0 keeps no buffer: step with "
            "axpy(-lr, grad, param) instead")
    return {"lr": f32_bits(lr), "momentum": f32_bits(momentum),
            "dampening_weight": f32_bits(1 - dampening),
            "weight_decay": f32_bits(weight_decay),
            "nesterov": int(bool(nesterov)), "maximize": int(bool(maximize)),
            "first_step": int(bool(first_step)), "pad": 0}
