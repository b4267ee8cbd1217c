# SPDX-License-Identifier: GPL-2.0
"""``torch_npu.optim``: Ascend's optimizer names that model code imports
(transformers' ``optim="adamw_torch_npu_fused"`` imports NpuFusedAdamW).

Ascend's fused optimizers flatten the parameters into one buffer to update
them in few kernels; here the update is torch's own fused path
(``fused=True``), whose ``aten::_fused_adamw_`` is one DAVINCI_OP_ADAM task
per parameter (torch_npu._fused_optim).
"""

from __future__ import annotations

import torch

__all__ = ["NpuFusedAdamW"]


class NpuFusedAdamW(torch.optim.AdamW):
    """AdamW with Ascend's signature; the same update as
    ``torch.optim.AdamW(..., fused=True)``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=1e-2, amsgrad=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps,
                         weight_decay=weight_decay, amsgrad=amsgrad,
                         fused=True)
