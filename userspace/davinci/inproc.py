# SPDX-License-Identifier: GPL-2.0
"""The in-process backend: the device core inside this process.

``DAVINCI_BACKEND=inproc`` makes the runtime create its devices here, through
``libdavinci_core`` (ctypes), lazily and once per process: no daemon, no
module, ideal for unit tests of code that uses the NPU. This module holds
that registry of devices and :class:`InProcessTransport`, a context on one
of them.
"""

from __future__ import annotations

import atexit
import ctypes
import errno as _errno
import os
import threading
import weakref

from .errors import DeviceLostError, from_errno
from .transport import Mapping, Transport

__all__ = ["InProcessTransport", "inproc_device_count", "inproc_core_device",
           "inproc_shutdown", "apply_inproc_limits"]

_inproc_lock = threading.Lock()
_inproc_devices: dict = {}
_inproc_transports: "weakref.WeakSet[InProcessTransport]" = weakref.WeakSet()


def inproc_device_count() -> int:
    """Devices of the in-process backend (``DAVINCI_INPROC_DEVICES``, 2)."""
    try:
        return max(0, int(os.environ.get("DAVINCI_INPROC_DEVICES", "2")))
    except ValueError:
        return 2


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def apply_inproc_limits() -> None:
    """Set the in-process core's limits on open contexts from
    ``DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS`` and
    ``DAVINCI_INPROC_MAX_CONTEXTS_PER_USER`` (unset: the defaults, 64 and
    256; 0: no limit), as they are now."""
    from . import _corelib
    _corelib.set_limits(
        _env_int("DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS", -1),
        _env_int("DAVINCI_INPROC_MAX_CONTEXTS_PER_USER", -1))


def inproc_core_device(index: int):
    """The process-local ``_corelib.CoreDevice`` of ``index``, created lazily.

    Configured by ``DAVINCI_INPROC_AICORES`` (2), ``DAVINCI_INPROC_HBM_MB``
    (256), ``DAVINCI_INPROC_HOST_MB`` (64), ``DAVINCI_INPROC_TIMEOUT_MS``
    (30000), ``DAVINCI_INPROC_POLL_IDLE_US`` and
    ``DAVINCI_INPROC_POLL_IDLE_MAX_US`` (0: the core's defaults); the
    limits on open contexts by the variables of
    :func:`apply_inproc_limits`, read at every call (every open).
    """
    from . import _corelib
    apply_inproc_limits()
    with _inproc_lock:
        dev = _inproc_devices.get(index)
        if dev is None:
            dev = _corelib.CoreDevice(
                index,
                aicores=_env_int("DAVINCI_INPROC_AICORES", 2),
                hbm_bytes=_env_int("DAVINCI_INPROC_HBM_MB", 256) << 20,
                host_bytes=_env_int("DAVINCI_INPROC_HOST_MB", 64) << 20,
                task_timeout_ms=_env_int("DAVINCI_INPROC_TIMEOUT_MS", 30000),
                backend="lib",
                poll_idle_us=_env_int("DAVINCI_INPROC_POLL_IDLE_US", 0),
                poll_idle_max_us=_env_int("DAVINCI_INPROC_POLL_IDLE_MAX_US",
                                          0))
            _inproc_devices[index] = dev
        return dev


def inproc_shutdown() -> None:
    """Close every in-process context and destroy every in-process device."""
    for t in list(_inproc_transports):
        t.close(force=True)
    with _inproc_lock:
        devs = list(_inproc_devices.values())
        _inproc_devices.clear()
    for d in devs:
        d.close()


atexit.register(inproc_shutdown)


class InProcessTransport(Transport):
    """A context on a process-local simulated device (``libdavinci_core``).

    Like a kernel file that stays open while a vma maps it, the core context
    is closed only when :meth:`close` was called and the last mapping (and
    every numpy view of it) is gone. :func:`inproc_shutdown` forces it.
    """

    kind = "inproc"

    def __init__(self, index: int):
        self.index = index
        super().__init__()
        self.description = "in-process davinci%d" % index
        try:
            self._ctx = inproc_core_device(index).open_context(
                os.getpid(), uid=os.getuid())
        except OSError as exc:
            err = exc.errno or _errno.EIO
            if err in (_errno.EMFILE, _errno.EUSERS):
                from .limits import open_limit_error
                raise open_limit_error(err, self.description) from None
            if err == _errno.ENODEV:
                raise DeviceLostError(
                    "cannot open %s: the device is lost (removed, failed or "
                    "a fault was injected); reset it (npu-smi set -t reset "
                    "-i %d) and open it again" % (self.description, index),
                    err) from None
            raise from_errno(err, "open of %s" % self.description) from None
        _inproc_transports.add(self)

    @property
    def closed(self) -> bool:
        return self._closing or self._ctx is None

    def _ioctl(self, cmd: int, arg) -> int:
        ctx = self._ctx
        if ctx is None or self._closing:
            return -_errno.EBADF
        if arg is None:
            arg = ctypes.c_uint64()
        return ctx.ioctl(cmd, arg)

    def pollable(self) -> bool:
        ctx = self._ctx
        return bool(ctx is not None and ctx.pollable())

    def _map(self, offset: int, length: int) -> Mapping:
        cm = self._ctx.mmap(offset, length)
        return self._viewed_mapping(cm.address, length, cm.close)

    def _close_context(self) -> None:
        with self._lock:
            ctx, self._ctx = self._ctx, None
        if ctx is not None:
            ctx.close()
