# SPDX-License-Identifier: GPL-2.0
"""One davinci device context per npu device this process uses.

``npu:N`` is davinci device N. Contexts open on first use and stay open for
the life of the process; closing them (or the process dying) frees every
buffer, stream and event they own.
"""

from __future__ import annotations

import threading

import davinci

_lock = threading.Lock()
_contexts: dict[int, davinci.Device] = {}
_count: int | None = None


def device_count() -> int:
    """Number of davinci devices (0 when no backend is reachable)."""
    global _count
    if _count is None:
        try:
            _count = davinci.device_count()
        except davinci.DeviceNotFoundError:
            _count = 0
    return _count


def check_index(index: int) -> int:
    """``index`` if it names a device, else the error CUDA gives for a bad
    ordinal."""
    n = device_count()
    if not isinstance(index, int) or not 0 <= index < n:
        raise RuntimeError(
            "npu error: invalid device ordinal: npu:%s requested but there "
            "%s %d npu device%s" % (index, "is" if n == 1 else "are", n,
                                    "" if n == 1 else "s"))
    return index


def context(index: int) -> davinci.Device:
    """The davinci device context of ``npu:index`` (opened on first use)."""
    ctx = _contexts.get(index)
    if ctx is not None:
        return ctx
    check_index(index)
    with _lock:
        ctx = _contexts.get(index)
        if ctx is None:
            ctx = davinci.Device(index)
            _contexts[index] = ctx
    return ctx


def opened() -> list[int]:
    """Indices of the devices this process has opened."""
    return sorted(_contexts)
