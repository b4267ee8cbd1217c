# SPDX-License-Identifier: GPL-2.0
"""``torch.npu.amp`` (also ``torch_npu.npu.amp``): Ascend torch_npu's names
for mixed precision on npu, built on ``torch.amp``.

``autocast`` is ``torch.autocast("npu")`` (float16 unless ``dtype`` says
otherwise; the casts are the kernels of torch_npu._autocast),
``GradScaler`` is ``torch.amp.GradScaler("npu")`` with Ascend's
``dynamic`` switch, ``custom_fwd``/``custom_bwd`` are torch.amp's for
device "npu".

>>> import torch, torch_npu
>>> a = torch.ones(2, 2, device="npu")
>>> with torch.npu.amp.autocast():
...     (a @ a).dtype
torch.float16
"""

from __future__ import annotations

import functools

import torch

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(torch.amp.autocast_mode.autocast):
    """``torch.autocast`` for device "npu" (Ascend's signature: the
    device type comes first and defaults to "npu")."""

    def __init__(self, device_type: str = "npu", dtype=None,
                 enabled: bool = True, cache_enabled: bool | None = None):
        super().__init__(device_type, dtype=dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """``torch.amp.GradScaler("npu")``. With ``dynamic=False`` the scale
    stays ``init_scale`` (steps whose gradients hold inf or NaN are still
    skipped)."""

    def __init__(self, init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, dynamic: bool = True,
                 enabled: bool = True):
        super().__init__("npu", init_scale=init_scale,
                         growth_factor=growth_factor,
                         backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
        self._dynamic = dynamic

    def update(self, new_scale=None) -> None:
        if new_scale is None and not self._dynamic and self._enabled and \
                self._scale is not None:
            new_scale = self._scale.clone()     # a static scale is kept
        super().update(new_scale)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd`` for device "npu"."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return torch.amp.custom_fwd(fwd, device_type="npu",
                                cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``torch.amp.custom_bwd`` for device "npu"."""
    return torch.amp.custom_bwd(bwd, device_type="npu")
