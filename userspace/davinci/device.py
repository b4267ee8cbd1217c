# SPDX-License-Identifier: GPL-2.0
"""Devices: one open context on one davinci NPU."""

from __future__ import annotations

import bisect
import enum
import errno as _errno
import threading
import weakref
from dataclasses import dataclass

from . import _uapi
from .capabilities import Capabilities, read as _read_capabilities
from .discovery import Backend, find_backend, open_device
from .errors import (DavinciError, InvalidArgumentError, OutOfMemoryError,
                     TaskFailedError, TimeoutError, status_hint, status_name)
from .event import Event
from .memory import Buffer, MemInfo, policy_flags
from .stream import Stream
from .waiting import WaitMode

__all__ = ["Device", "DeviceInfo", "Version", "Notification",
           "NotificationType"]

_HEALTH = {0: "OK", 1: "Warning", 2: "Alarm", 3: "Critical"}


@dataclass(frozen=True)
class Version:
    """Driver and ABI version (GET_VERSION)."""
    abi_major: int
    abi_minor: int
    features: int
    driver_version: str
    backend: str

    @classmethod
    def from_struct(cls, v: _uapi.davinci_version) -> "Version":
        return cls(int(v.abi_major), int(v.abi_minor), int(v.features),
                   _uapi.cstr(v.driver_version), _uapi.cstr(v.backend))

    def has(self, feature: int) -> bool:
        return bool(self.features & feature)

    def __str__(self) -> str:
        return "%s (ABI %d.%d, %s)" % (
            self.driver_version, self.abi_major, self.abi_minor, self.backend)


@dataclass(frozen=True)
class DeviceInfo:
    """One device (DEVICE_INFO)."""
    index: int
    aicores: int
    hbm_total: int
    hbm_free: int
    host_total: int
    host_free: int
    task_timeout_ms: int
    health: int
    name: str
    serial: str

    @property
    def health_name(self) -> str:
        return _HEALTH.get(self.health, str(self.health))

    @classmethod
    def from_struct(cls, i: _uapi.davinci_device_info) -> "DeviceInfo":
        return cls(int(i.index), int(i.aicores), int(i.hbm_total),
                   int(i.hbm_free), int(i.host_total), int(i.host_free),
                   int(i.task_timeout_ms), int(i.health), _uapi.cstr(i.name),
                   _uapi.cstr(i.serial))


class NotificationType(enum.IntEnum):
    """What a :class:`Notification` reports (its ``type``,
    ``DAVINCI_NOTIFY_*``)."""
    #: a task flagged DAVINCI_TASK_F_NOTIFY completed, whatever its status
    COMPLETION = _uapi.DAVINCI_NOTIFY_COMPLETION
    #: a DAVINCI_OP_NOTIFY task ran
    USER = _uapi.DAVINCI_NOTIFY_USER
    #: a task failed
    FAULT = _uapi.DAVINCI_NOTIFY_FAULT
    #: the device was lost
    DEVICE_LOST = _uapi.DAVINCI_NOTIFY_DEVICE_LOST


@dataclass(frozen=True)
class Notification:
    """One notification (NOTIFY_WAIT): the interrupt path. ``type`` is a
    :class:`NotificationType` value."""
    type: int
    stream_id: int
    status: int
    seq: int
    user_data: int
    timestamp_ns: int
    dropped: int

    @property
    def ok(self) -> bool:
        """The task it reports completed with DAVINCI_STATUS_OK."""
        return self.status == _uapi.DAVINCI_STATUS_OK

    @property
    def status_name(self) -> str:
        """The name of its task's status, e.g. ``INVALID_ADDRESS``."""
        return status_name(self.status)


class Device:
    """An open davinci device (one driver context).

    Everything made through it (buffers, streams, events) belongs to this
    context and is freed when the device is closed, even if the process dies.

    >>> with davinci.Device(0) as dev:
    ...     buf = dev.malloc(1 << 20)
    """

    def __init__(self, index: int = 0, backend: Backend | None = None):
        self.backend = backend or find_backend()
        self._transport = open_device(index, self.backend)
        self.index = index
        self._lock = threading.RLock()
        self._buffers: "weakref.WeakValueDictionary[int, Buffer]" = \
            weakref.WeakValueDictionary()
        self._starts: list[int] = []      # sorted dev_addr of live buffers
        self._streams: "weakref.WeakSet[Stream]" = weakref.WeakSet()
        self._events: "weakref.WeakSet[Event]" = weakref.WeakSet()
        self._default_stream: Stream | None = None
        self._version: Version | None = None
        self._capabilities: Capabilities | None = None
        self._dispatcher = None     # davinci.callbacks.Dispatcher, lazily
        self._param_blocks = None   # davinci.paramblocks.ParamBlocks, lazily

    # -- identity ----------------------------------------------------------------
    @property
    def version(self) -> Version:
        """Driver and ABI version."""
        if self._version is None:
            v = _uapi.davinci_version()
            self._transport.ioctl(_uapi.DAVINCI_IOCTL_GET_VERSION, v)
            self._version = Version.from_struct(v)
        return self._version

    def capabilities(self) -> Capabilities:
        """Which ops and dtypes the driver serves (asked once): from
        DAVINCI_IOCTL_GET_CAP, or an older driver's feature bits; see
        :mod:`davinci.capabilities`."""
        if self._capabilities is None:
            self._capabilities = _read_capabilities(
                self._transport, self.version.features)
        return self._capabilities

    @property
    def info(self) -> DeviceInfo:
        """Current device information (memory figures are live)."""
        i = _uapi.davinci_device_info()
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_DEVICE_INFO, i)
        return DeviceInfo.from_struct(i)

    @property
    def transport(self):
        return self._transport

    @property
    def closed(self) -> bool:
        return self._transport.closed

    def mem_info(self, host: bool = False) -> MemInfo:
        """Usage of the HBM pool, or of the pinned host pool (``host=True``)."""
        m = _uapi.davinci_mem_info(flags=_uapi.DAVINCI_MEM_HOST if host else 0)
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_MEM_INFO, m)
        return MemInfo(int(m.total), int(m.free), int(m.largest_free),
                       int(m.ctx_used), int(m.ctx_allocations), host)

    # -- memory ------------------------------------------------------------------
    def _alloc(self, size: int, flags: int) -> Buffer:
        if not isinstance(size, int) or isinstance(size, bool):
            raise InvalidArgumentError("size must be an int, not %r"
                                       % type(size).__name__)
        if size <= 0:
            raise InvalidArgumentError(
                "cannot allocate %d bytes: the size must be > 0" % size)
        a = _uapi.davinci_mem_alloc(size=size, flags=flags)
        host = bool(flags & _uapi.DAVINCI_MEM_HOST)
        err = self._transport.try_ioctl(_uapi.DAVINCI_IOCTL_MEM_ALLOC, a)
        if err == _errno.ENOMEM:
            raise self._oom(size, host) from None
        if err:
            raise self._transport.error(err, _uapi.DAVINCI_IOCTL_MEM_ALLOC)
        buf = Buffer(self, a, host)
        with self._lock:
            self._buffers[buf.dev_addr] = buf
            bisect.insort(self._starts, buf.dev_addr)
        return buf

    def _oom(self, size: int, host: bool) -> OutOfMemoryError:
        pool = "pinned host memory" if host else "device memory (HBM)"
        try:
            m = self.mem_info(host)
        except DavinciError:
            return OutOfMemoryError(
                "out of %s on davinci%d: requested %d bytes; free buffers or "
                "request less" % (pool, self.index, size), requested=size)
        return OutOfMemoryError(
            "out of %s on davinci%d: requested %d bytes, %d bytes free "
            "(largest free range %d) of %d total; this context holds %d bytes "
            "in %d allocations: free buffers you no longer need or request "
            "less" % (pool, self.index, size, m.free, m.largest_free, m.total,
                      m.ctx_used, m.ctx_allocations),
            requested=size, free=m.free, total=m.total,
            largest_free=m.largest_free)

    def malloc(self, size: int, policy="huge_first") -> Buffer:
        """Allocate ``size`` bytes of device memory (HBM).

        ``policy``: "huge_first" (2 MiB pages for >= 2 MiB, else 4 KiB),
        "huge_only" or "normal_only", or the DAVINCI_MEM_* number.
        Raises :class:`OutOfMemoryError` (requested, free and total bytes in
        the message) when the pool has no room; nothing changes then.
        """
        return self._alloc(size, policy_flags(policy))

    def malloc_host(self, size: int) -> Buffer:
        """Allocate ``size`` bytes of pinned host memory tasks can DMA to."""
        return self._alloc(size, _uapi.DAVINCI_MEM_HOST)

    def forget(self, obj: "Buffer | Stream | Event") -> None:
        """Drop a buffer, stream or event its owner freed or destroyed from
        this device's registry (they call it; nothing else needs to)."""
        with self._lock:
            if isinstance(obj, Buffer):
                if self._buffers.get(obj.dev_addr) is obj:
                    del self._buffers[obj.dev_addr]
                i = bisect.bisect_left(self._starts, obj.dev_addr)
                if i < len(self._starts) and self._starts[i] == obj.dev_addr:
                    del self._starts[i]
            elif isinstance(obj, Stream):
                self._streams.discard(obj)
                if self._default_stream is obj:
                    self._default_stream = None
            else:
                self._events.discard(obj)
            d = self._dispatcher
        if isinstance(obj, Stream) and d is not None:
            d.stream_destroyed(obj.stream_id)

    def find_buffer(self, dev_addr: int) -> tuple[Buffer, int] | None:
        """The live buffer containing ``dev_addr`` and the offset in it."""
        with self._lock:
            i = bisect.bisect_right(self._starts, dev_addr) - 1
            while i >= 0:
                start = self._starts[i]
                buf = self._buffers.get(start)
                if buf is None:
                    del self._starts[i]
                    i -= 1
                    continue
                if start <= dev_addr < start + max(buf.size, 1):
                    return buf, dev_addr - start
                return None
        return None

    def buffers(self) -> list[Buffer]:
        """Live buffers made through this device object."""
        with self._lock:
            return [b for b in self._buffers.values() if not b.freed]

    # -- streams and events -----------------------------------------------------
    def stream(self, priority: int = 0, sq_entries: int = 256,
               cq_entries: int = 256, polled: bool | None = None,
               wait_mode: "WaitMode | str | None" = None,
               continue_on_failure: bool | None = False) -> Stream:
        """Create a stream (0 is the highest priority, 7 the lowest).

        ``polled``: the device polls its submission ring, so submitting
        needs no system call (default: where the driver can, unless
        ``DAVINCI_SQ_POLL=0``); see :mod:`davinci.stream`. ``wait_mode``:
        how its waits wait (default: the process's, :mod:`davinci.waiting`).
        ``continue_on_failure``: a failed task does not stop the stream
        (CANN's ACL_CONTINUE_ON_FAILURE): the next tasks run and
        :meth:`Stream.synchronize` raises the failure once; by default a
        failure stops the stream until :meth:`Stream.reset`; ``None``: go
        on where the driver can (ABI 1.10), else stop."""
        s = Stream(self, priority, sq_entries, cq_entries, polled, wait_mode,
                   continue_on_failure)
        self._streams.add(s)
        return s

    @property
    def streams(self) -> list[Stream]:
        """The streams made through this device and not destroyed yet."""
        with self._lock:
            return [s for s in self._streams if not s.destroyed]

    @property
    def default_stream(self) -> Stream:
        """A stream the device uses for synchronous helpers (made lazily)."""
        with self._lock:
            if self._default_stream is None or self._default_stream.destroyed:
                self._default_stream = self.stream()
            return self._default_stream

    def event(self, timing: bool = True) -> Event:
        """Create an event (``timing``: record device timestamps)."""
        e = Event(self, timing)
        self._events.add(e)
        return e

    # -- device-wide ----------------------------------------------------------------
    def synchronize(self, timeout: float | None = None) -> None:
        """Wait for every stream of this context (SYNC).

        Raises :class:`TaskFailedError` if a stream is in the error state.
        """
        s = self._transport.wait_ioctl(
            _uapi.DAVINCI_IOCTL_SYNC,
            lambda ms: _uapi.davinci_sync(timeout_ms=ms), timeout)
        if s is None:
            raise TimeoutError(
                "davinci%d: streams still busy after %.3f s; wait longer or "
                "cancel work" % (self.index, timeout))
        streams = list(self._streams)
        for st in streams:
            st.settle()
        if not s.status:
            # a stream that went on after a failure raises it once
            for st in streams:
                if st.continue_on_failure and not st.destroyed:
                    st.raise_failure()
        if s.status:
            raise TaskFailedError(
                "davinci%d: a stream is in the error state (%s: %s); find it "
                "with stream.query() and reset it"
                % (self.index, status_name(s.status), status_hint(s.status)),
                int(s.status))

    def reset(self) -> None:
        """Free everything this context owns (CTX_RESET).

        Every buffer, stream and event made through this device becomes
        invalid; using one raises :class:`InvalidHandleError`.
        """
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_CTX_RESET, None)
        self._invalidate_all("was freed by device reset")

    def _invalidate_all(self, why: str) -> None:
        with self._lock:
            bufs = list(self._buffers.values())
            self._buffers.clear()
            self._starts.clear()
            streams = list(self._streams)
            self._streams = weakref.WeakSet()
            events = list(self._events)
            self._events = weakref.WeakSet()
            self._default_stream = None
        for s in streams:
            s.invalidate(why)
        for e in events:
            e.invalidate(why)
        for b in bufs:
            b.invalidate(why)

    def wait_notification(self, timeout: float | None = 0) -> Notification | None:
        """Take the next notification (the interrupt path), or None when
        ``timeout`` seconds pass first (0: do not block).

        While the callback dispatcher runs (:attr:`callbacks`), it reads the
        driver's queue; this returns the notifications no callback claimed.
        """
        d = self._dispatcher
        if d is not None and d.running:
            return d.wait_unclaimed(timeout)
        return self.read_notification(timeout)

    @property
    def param_blocks(self):
        """The :class:`davinci.paramblocks.ParamBlocks` of this context:
        device memory for tasks' parameter blocks."""
        from .paramblocks import ParamBlocks
        with self._lock:
            if self._param_blocks is None:
                self._param_blocks = ParamBlocks(self)
            return self._param_blocks

    @property
    def callbacks(self):
        """The :class:`davinci.callbacks.Dispatcher` of this device (its
        notification thread), started on first use."""
        from .callbacks import Dispatcher
        with self._lock:
            if self._dispatcher is None or not self._dispatcher.running:
                if self.closed:
                    raise DavinciError("davinci%d is closed" % self.index)
                self._dispatcher = Dispatcher(self)
            return self._dispatcher

    def read_notification(self, timeout: float | None = 0
                          ) -> Notification | None:
        """Take the next notification from the driver's queue itself, or
        None after ``timeout`` seconds: what the dispatcher's reader thread
        does. Programs call :meth:`wait_notification`."""
        n = self._transport.wait_ioctl(
            _uapi.DAVINCI_IOCTL_NOTIFY_WAIT,
            lambda ms: _uapi.davinci_notification(timeout_ms=ms), timeout)
        if n is None:
            return None
        return Notification(int(n.type), int(n.stream_id), int(n.status),
                            int(n.seq), int(n.user_data), int(n.timestamp_ns),
                            int(n.dropped))

    # -- tensors ------------------------------------------------------------------
    def tensor(self, array, dtype=None):
        """Upload a numpy array into a new :class:`~davinci.ops.DeviceTensor`."""
        from .ops import DeviceTensor
        return DeviceTensor.from_numpy(self, array, dtype)

    def empty(self, shape, dtype="float32"):
        """A new uninitialised :class:`~davinci.ops.DeviceTensor`."""
        from .ops import DeviceTensor
        return DeviceTensor.empty(self, shape, dtype)

    # -- lifetime -----------------------------------------------------------------
    def close(self) -> None:
        """Close the context: the driver frees everything it owns."""
        if self._transport.closed:
            return
        d = self._dispatcher
        if d is not None:
            d.stop()
        self._invalidate_all("belongs to a closed device")
        self._transport.close()

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return "<davinci.Device %d on %s%s>" % (
            self.index, self.backend.describe(),
            " closed" if self.closed else "")
