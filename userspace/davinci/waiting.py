# SPDX-License-Identifier: GPL-2.0
"""How the host waits for the device: spin, yield, or block.

The driver publishes each stream's last completed sequence number in the
completion ring's header, so a host can see a task finish without a system
call. As CUDA's ``cudaDeviceScheduleSpin`` / ``Yield`` / ``BlockingSync``
flags, the wait mode says what the host does meanwhile:

``spin``
    re-read the ring header in a busy loop: the lowest latency, one host
    core fully used while waiting.
``yield``
    re-read it, giving the CPU away (``sched_yield``) between reads.
``block``
    sleep in the driver's wait ioctl at once: no CPU used, a wake-up's
    latency added.
``auto`` (the default)
    spin for :data:`SPIN_SECONDS`, yield until :data:`YIELD_SECONDS`, then
    block: short tasks finish inside the spin, long ones cost no CPU.

Set it for the process with :func:`set_wait_mode` or the environment
variable ``DAVINCI_WAIT_MODE``, or for one stream with
``Device.stream(wait_mode=...)``; pyACL programs get ``spin`` on streams made
by ``acl.rt.create_stream_with_config`` with ``ACL_STREAM_FAST_SYNC``, as
CANN documents that flag.
"""

from __future__ import annotations

import enum
import os
import time
from typing import Callable

from .errors import InvalidArgumentError

__all__ = ["WaitMode", "set_wait_mode", "wait_mode", "parse_mode",
           "poll_until",
           "SPIN_SECONDS", "YIELD_SECONDS", "QUICK_READS"]

#: ``auto``: how long to spin before yielding.
SPIN_SECONDS = 2e-6
#: ``auto``: how long (from the start) to yield before blocking.
YIELD_SECONDS = 200e-6
#: Reads of ``done()`` before the clock is read at all (about a
#: microsecond): a tiny task is often complete within them.
QUICK_READS = 16


class WaitMode(enum.Enum):
    AUTO = "auto"
    SPIN = "spin"
    YIELD = "yield"
    BLOCK = "block"


def parse_mode(mode: "WaitMode | str") -> WaitMode:
    """``mode`` as a :class:`WaitMode` (its name works too)."""
    if isinstance(mode, WaitMode):
        return mode
    try:
        return WaitMode(str(mode).lower())
    except ValueError:
        raise InvalidArgumentError(
            "unknown wait mode %r: use one of %s" % (
                mode, ", ".join(m.value for m in WaitMode))) from None


_mode = parse_mode(os.environ.get("DAVINCI_WAIT_MODE", "auto") or "auto")


def set_wait_mode(mode: "WaitMode | str") -> WaitMode:
    """Set how this process waits for the device; returns the old mode."""
    global _mode
    old, _mode = _mode, parse_mode(mode)
    return old


def wait_mode() -> WaitMode:
    """The current wait mode."""
    return _mode


def poll_until(done: Callable[[], bool], timeout: float | None,
               mode: WaitMode | None = None) -> bool:
    """Re-read ``done()`` as the wait mode says.

    Returns True once ``done()`` is true; False when the caller should
    block in the driver now (``block``, or ``auto`` past its yield time),
    or when ``timeout`` seconds ran out (the caller's blocking wait then
    reports the timeout).
    """
    mode = mode or _mode
    if done():
        return True
    if mode is WaitMode.BLOCK:
        return False
    for _ in range(QUICK_READS):
        if done():
            return True
    start = time.perf_counter()
    limit = float("inf") if timeout is None else timeout
    if mode is WaitMode.AUTO:
        limit = min(limit, YIELD_SECONDS)
    spin = {WaitMode.SPIN: limit, WaitMode.YIELD: 0.0}.get(
        mode, SPIN_SECONDS)
    while True:
        elapsed = time.perf_counter() - start
        if elapsed >= limit:
            return False
        if elapsed >= spin:
            os.sched_yield()
        if done():
            return True
