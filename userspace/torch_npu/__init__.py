# SPDX-License-Identifier: GPL-2.0
"""torch_npu: PyTorch's "npu" device on davinci NPUs.

``import torch_npu`` renames PyTorch's PrivateUse1 backend to ``npu``,
registers ``torch.npu`` and the ``.npu()`` / ``.is_npu`` methods, and routes
ATen ops to davinci devices: ``npu:N`` is davinci device N, tensor memory
is HBM from a caching allocator, ops are davinci tasks on the current
stream, and ops without a device kernel run on the CPU with a one-time
warning.

>>> import torch, torch_npu
>>> x = torch.ones(3, device="npu")
>>> (x + x).cpu()
tensor([2., 2., 2.])
"""

from __future__ import annotations

import sys

import torch

from . import _autocast, _devices, _ext, memory

__all__ = ["npu", "DEVICE_OPS", "fallback_ops", "npu_fusion_attention",
           "optim"]


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    """PrivateUse1 hooks PyTorch asks about the backend."""

    def is_available(self) -> bool:
        return _devices.device_count() > 0

    def has_primary_context(self, device_index: int) -> bool:
        return device_index in _devices.opened()

    def is_built(self) -> bool:
        return True


def _setup() -> None:
    ext = _ext.load()
    ext.init(memory.malloc_hook, memory.free_hook, _devices.device_count())
    torch.utils.rename_privateuse1_backend("npu")
    from . import npu as module
    torch._register_device_module("npu", module)
    # ``from torch.npu.amp import GradScaler`` and ``torch_npu.npu.amp``,
    # though torch.npu is a module, not a package
    sys.modules["torch.npu.amp"] = sys.modules["torch_npu.npu.amp"] = \
        module.amp
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_packed_sequence=True,
        for_storage=True)
    torch._C._acc.register_python_privateuseone_hook(_Hooks())
    _autocast.register()


def _quiet_repr() -> None:
    """Printing an npu tensor formats it with ops that run on the CPU:
    keep their fallback warnings for the user's own ops."""
    from torch import _tensor_str
    from ._kernels import quiet
    inner = _tensor_str._str

    def _str(self, *, tensor_contents=None):
        if self.device.type != "npu":
            return inner(self, tensor_contents=tensor_contents)
        with quiet():
            return inner(self, tensor_contents=tensor_contents)
    _tensor_str._str = _str


_setup()
_quiet_repr()

from . import npu, optim  # noqa: E402  (after the backend is registered)
from ._op_table import DEVICE_OPS  # noqa: E402
from .fusion import npu_fusion_attention  # noqa: E402

if torch.distributed.is_available():
    from . import hccl  # noqa: E402
    hccl.register()


def fallback_ops() -> list[str]:
    """ATen ops that ran on the CPU so far in this process: those with no
    npu kernel (the C++ fallback) and those whose npu kernel handed these
    operands to the CPU (e.g. a broadcasting add), sorted."""
    from ._kernels import fallback_ops as python_fallbacks
    return sorted(set(_ext.load().fallback_ops()) | set(python_fallbacks()))
