# SPDX-License-Identifier: GPL-2.0
"""``torch.npu``: the device module ``import torch_npu`` registers.

Names follow Ascend torch_npu (and torch.cuda): device selection, streams
and events, synchronisation, the caching allocator's statistics, device
properties, and mixed precision (``torch.npu.amp``, the autocast state).
Random ops on npu tensors draw from the CPU generator: dropout, uniform_
and bernoulli_ on the device (Philox4x32-10 keyed from it), the others on
the CPU (the fallback in torch_npu._kernels); ``manual_seed`` and the rng
state functions (``torch.npu.random``) are that generator's.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import _devices, _ext, amp
from . import _random as random
from ._random import (get_rng_state, get_rng_state_all, initial_seed,
                      manual_seed, manual_seed_all, seed, seed_all,
                      set_rng_state, set_rng_state_all)
from .memory import (empty_cache, max_memory_allocated, max_memory_reserved,
                     mem_get_info, memory_allocated, memory_reserved,
                     memory_stats, memory_summary, reset_peak_memory_stats)
from .streams import (Event, Stream, current_stream, default_stream,
                      device_index, set_stream, stream, synchronize)

__all__ = [
    "is_available", "is_initialized", "device_count", "current_device",
    "set_device", "device", "device_of", "synchronize", "Stream", "Event",
    "current_stream", "default_stream", "set_stream", "stream",
    "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "get_rng_state", "set_rng_state", "get_rng_state_all",
    "set_rng_state_all", "random",
    "get_device_name", "get_device_properties", "get_device_capability",
    "empty_cache", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "mem_get_info", "memory_stats", "memory_summary", "NPUDeviceProperties",
    "amp", "get_amp_supported_dtype", "is_autocast_enabled",
    "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_bf16_supported",
]


def is_available() -> bool:
    """True when at least one davinci device is reachable."""
    return _devices.device_count() > 0


def is_initialized() -> bool:
    return True


def _is_in_bad_fork() -> bool:
    return False


def _lazy_init() -> None:
    """Nothing to do: devices open on first use."""


def device_count() -> int:
    return _devices.device_count()


def current_device() -> int:
    """Index of the current npu device of this thread."""
    return _ext.load().current_device()


def set_device(device) -> None:
    """Make ``device`` (int, "npu:N" or torch.device) current."""
    _ext.load().set_device(device_index(device))


class device:
    """Context manager that makes ``device`` current for its block."""

    def __init__(self, device):
        self.index = -1 if device is None else device_index(device)
        self.prev = -1

    def __enter__(self):
        if self.index >= 0:
            self.prev = current_device()
            set_device(self.index)

    def __exit__(self, *exc):
        if self.index >= 0:
            set_device(self.prev)
        return False


class device_of(device):
    """Context manager making a tensor's npu device current."""

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.device.index if obj.device.type == "npu"
                         else None)


@dataclass(frozen=True)
class NPUDeviceProperties:
    """What ``get_device_properties`` reports for one device."""
    name: str
    total_memory: int
    multi_processor_count: int
    serial: str
    health: str

    def __repr__(self) -> str:
        return ("NPUDeviceProperties(name='%s', total_memory=%dMB, "
                "multi_processor_count=%d)"
                % (self.name, self.total_memory >> 20,
                   self.multi_processor_count))


def get_device_properties(device=None) -> NPUDeviceProperties:
    info = _devices.context(device_index(device)).info
    return NPUDeviceProperties(info.name, info.hbm_total, info.aicores,
                               info.serial, info.health_name)


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    """The davinci ABI version, in CUDA's (major, minor) shape."""
    v = _devices.context(device_index(device)).version
    return v.abi_major, v.abi_minor


# -- autocast (the casts themselves are torch_npu._autocast's kernels) ------
def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes ``torch.autocast("npu", dtype=...)`` accepts (Ascend's
    list: the device computes in all three)."""
    return [torch.float16, torch.bfloat16, torch.float32]


def is_bf16_supported() -> bool:
    """True: davinci devices compute in bfloat16."""
    return True


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("npu")


def set_autocast_enabled(enabled: bool) -> None:
    torch.set_autocast_enabled("npu", enabled)


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("npu")


def set_autocast_dtype(dtype: torch.dtype) -> None:
    torch.set_autocast_dtype("npu", dtype)
