# SPDX-License-Identifier: GPL-2.0
"""The one place where the runtime talks to a driver: ioctl and mmap.

A :class:`Transport` is one open device node, i.e. one driver context. Two
implementations:

* :class:`DeviceNodeTransport` opens ``/dev/davinciN`` (kernel module) or
  ``<mountpoint>/davinciN`` (FUSE daemon) and uses ``fcntl.ioctl`` and
  ``mmap``. Backends that cannot map through their node (FUSE: its page cache
  would serve stale pages) answer ``DAVINCI_IOCTL_MMAP_INFO`` with
  ``DAVINCI_MMAP_FILE`` and the paths of the files backing each arena; the
  transport maps those files directly, so host and device see the same pages.
* :class:`davinci.inproc.InProcessTransport` runs the device core inside
  this process through ``libdavinci_core`` (``DAVINCI_BACKEND=inproc``): no
  daemon, no module, ideal for tests.

Errors: a negative errno becomes the matching :mod:`davinci.errors`
exception; a gone daemon or removed device becomes :class:`DeviceLostError`.
"""

from __future__ import annotations

import collections
import ctypes
import errno as _errno
import mmap
import os
import threading
import time
import weakref
from typing import Callable

from . import _uapi
from .errors import (LOST_ERRNOS, DavinciError, DeviceLostError,
                     InvalidArgumentError, InvalidHandleError, from_errno)

__all__ = ["Mapping", "Transport", "DeviceNodeTransport", "WAIT_SLICE_MS"]

#: Longest single wait ioctl (ms): a blocked program handles signals in
#: this time at the latest.
WAIT_SLICE_MS = 200


def _ioctl_name(cmd: int) -> str:
    return "ioctl DAVINCI_IOCTL_%s" % _uapi.IOCTL_NAMES.get(cmd, hex(cmd))


class Mapping:
    """A mapped range of device memory.

    Attributes:
        buffer: writable object supporting the buffer protocol
            (``memoryview(m.buffer)``, ``numpy.frombuffer(m.buffer, ...)``).
        address: process address of the first byte.
        length: bytes mapped.

    :meth:`close` unmaps at once when nothing else still views the memory;
    otherwise the memory stays mapped until the last view (say a numpy array)
    is gone. The driver keeps mapped memory from being reused meanwhile.
    """

    def __init__(self, buffer, address: int, length: int, closer=None):
        self.buffer = buffer
        self.address = address
        self.length = length
        self._closer = closer

    @property
    def closed(self) -> bool:
        return self.buffer is None

    def memoryview(self) -> memoryview:
        if self.buffer is None:
            raise DavinciError("the mapping is closed")
        return memoryview(self.buffer).cast("B")

    def close(self) -> None:
        buf, self.buffer = self.buffer, None
        closer, self._closer = self._closer, None
        if closer is not None:
            closer(buf)


def _close_mmap(mm) -> None:
    try:
        mm.close()
    except BufferError:
        pass    # views still exist; the mapping goes with the last of them


def _mmap_address(mm) -> int:
    probe = ctypes.c_char.from_buffer(mm)
    addr = ctypes.addressof(probe)
    del probe
    return addr


class Transport:
    """One open context on one device: ioctls, mmap, close.

    Subclasses implement :meth:`_ioctl` (returning 0 or -errno) and
    :meth:`_map`. :meth:`ioctl` raises the matching exception.
    """

    kind = "abstract"
    index = -1
    description = ""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closing = False
        # mappings still viewed: key -> what unmaps and releases each
        self._maps: dict[int, Callable[[], None]] = {}
        self._next_map = 0
        #: ioctls issued through this transport, by command: how many
        #: system calls (or FUSE requests) a piece of work cost
        self.ioctl_counts: collections.Counter[int] = collections.Counter()

    def _viewed_mapping(self, address: int, length: int,
                        release: Callable[[], None]) -> Mapping:
        """A Mapping of ``length`` bytes at ``address`` that stays mapped
        as long as any view of it (say a numpy array) lives; then
        ``release`` unmaps it, and if :meth:`close` was called meanwhile
        the context closes too, as a kernel file stays open while a vma
        maps it."""
        arr = (ctypes.c_char * length).from_address(address)
        with self._lock:
            key = self._next_map
            self._next_map += 1
            self._maps[key] = release
        weakref.finalize(arr, self._view_gone, key)
        return Mapping(arr, address, length, None)

    def _view_gone(self, key: int) -> None:
        with self._lock:
            release = self._maps.pop(key, None)
            last = self._closing and not self._maps
        if release is not None:
            release()
        if last:
            self._close_context()

    def close(self, force: bool = False) -> None:
        """Close the context once no mapping is viewed any more (at once
        with ``force``, unmapping what is left). Never raises: a gone
        driver has freed everything already."""
        with self._lock:
            self._closing = True
            releases = list(self._maps.values()) if force else []
            if force:
                self._maps.clear()
            idle = not self._maps
        for release in releases:
            release()
        if idle:
            self._close_context()

    def ioctl(self, cmd: int, arg=None):
        """Issue ``cmd`` with ``arg`` (a ctypes struct, or None for _IO).

        Returns ``arg``; raises a :class:`DavinciError` subclass on failure.
        """
        self._check_open(cmd)
        self.ioctl_counts[cmd] += 1
        ret = self._ioctl(cmd, arg)
        if ret < 0:
            raise self._error(-ret, cmd, arg)
        return arg

    def _check_open(self, cmd: int) -> None:
        if self.closed:
            raise InvalidHandleError(
                "%s on a closed device handle (the Device was closed): open "
                "the device again" % _ioctl_name(cmd), _errno.EBADF)

    def try_ioctl(self, cmd: int, arg=None) -> int:
        """As :meth:`ioctl` but return 0 or the positive errno; never raises
        for driver errors (raises on a closed handle)."""
        self._check_open(cmd)
        self.ioctl_counts[cmd] += 1
        ret = self._ioctl(cmd, arg)
        return -ret if ret < 0 else 0

    def _error(self, err: int, cmd: int, arg=None) -> DavinciError:
        what = "%s on %s" % (_ioctl_name(cmd), self.description)
        # a limit or a pool that ran out: say which, its value, what to do
        from .limits import ioctl_limit_error
        exc = ioctl_limit_error(self, err, cmd, arg, what)
        if exc is not None:
            return exc
        return from_errno(err, what)

    def error(self, err: int, cmd: int) -> DavinciError:
        """The exception for positive errno ``err`` returned by ``cmd``."""
        return self._error(err, cmd)

    def wait_ioctl(self, cmd: int, make_arg: Callable[[int], object],
                   timeout: float | None):
        """Issue the wait ioctl ``cmd`` until it succeeds; return its arg.

        ``make_arg(ms)`` builds the argument for one wait of at most ``ms``
        milliseconds. Waits are made in slices of :data:`WAIT_SLICE_MS`,
        whatever the timeout (``None``: forever), so that the program
        handles signals (Ctrl-C raises KeyboardInterrupt) within a slice on
        every backend. Returns None once ``timeout`` seconds passed.
        """
        if timeout is not None and timeout < 0:
            raise InvalidArgumentError("timeout must be >= 0 seconds")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left_ms = WAIT_SLICE_MS if deadline is None else \
                int((deadline - time.monotonic()) * 1000 + 0.999)
            arg = make_arg(max(0, min(left_ms, WAIT_SLICE_MS)))
            err = self.try_ioctl(cmd, arg)
            if err == 0:
                return arg
            if err not in (_errno.ETIMEDOUT, _errno.EINTR):
                raise self._error(err, cmd)
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def map(self, offset: int, length: int) -> Mapping:
        """Map ``length`` bytes at the mmap ``offset`` an ioctl returned."""
        if self.closed:
            raise DavinciError("mmap on a closed device handle: reopen the "
                               "device")
        try:
            return self._map(offset, length)
        except OSError as exc:
            err = exc.errno or _errno.EIO
            raise from_errno(err, "mmap of %d bytes at offset %#x on %s"
                             % (length, offset, self.description)) from None

    def pollable(self) -> bool:
        """True when a notification is waiting."""
        raise NotImplementedError

    def fileno(self) -> int:
        """File descriptor to poll() on, or -1."""
        return -1

    @property
    def closed(self) -> bool:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # subclass hooks
    def _ioctl(self, cmd: int, arg) -> int:
        raise NotImplementedError

    def _map(self, offset: int, length: int) -> Mapping:
        raise NotImplementedError

    def _close_context(self) -> None:
        raise NotImplementedError


class DeviceNodeTransport(Transport):
    """A device node opened with ``os.open`` (kernel module or FUSE daemon)."""

    kind = "node"

    def __init__(self, path: str, index: int = -1):
        super().__init__()
        self.path = path
        self.index = index
        self.description = path
        self._mmap_info = None
        self._arena_fds: dict[int, int] = {}
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as exc:
            self._fd = -1
            if exc.errno in (_errno.ENOENT, _errno.ENXIO, _errno.ENODEV):
                from .errors import DeviceNotFoundError
                raise DeviceNotFoundError(
                    "cannot open %s: %s; load the kernel module (sudo modprobe "
                    "davinci) or start the FUSE daemon (davinci-fused)"
                    % (path, os.strerror(exc.errno)), exc.errno) from None
            if exc.errno in (_errno.EACCES, _errno.EPERM):
                from .access import node_permission_error
                raise node_permission_error(path, exc.errno) from None
            if exc.errno in (_errno.EMFILE, _errno.EUSERS):
                from .limits import open_limit_error
                raise open_limit_error(exc.errno, path, path) from None
            if exc.errno in LOST_ERRNOS:
                raise DeviceLostError(
                    "cannot open %s: %s; the driver is gone, restart it"
                    % (path, os.strerror(exc.errno)), exc.errno) from None
            raise DavinciError("cannot open %s: %s" % (path, exc.strerror),
                               exc.errno) from None

    @property
    def closed(self) -> bool:
        return self._closing or self._fd < 0

    def fileno(self) -> int:
        return self._fd

    def _ioctl(self, cmd: int, arg) -> int:
        import fcntl
        try:
            if arg is None:
                fcntl.ioctl(self._fd, cmd, 0)
            else:
                fcntl.ioctl(self._fd, cmd, arg, True)
        except OSError as exc:
            return -(exc.errno or _errno.EIO)
        return 0

    def _error(self, err: int, cmd: int, arg=None) -> DavinciError:
        if err in (_errno.ENOTCONN, _errno.ECONNABORTED):
            return DeviceLostError(
                "%s on %s failed: the FUSE daemon is gone (%s); restart "
                "davinci-fused and reopen the device"
                % (_ioctl_name(cmd), self.path, os.strerror(err)), err)
        return super()._error(err, cmd, arg)

    def pollable(self) -> bool:
        import select
        p = select.poll()
        p.register(self._fd, select.POLLIN)
        return bool(p.poll(0))

    def mmap_info(self) -> _uapi.davinci_mmap_info:
        """DAVINCI_IOCTL_MMAP_INFO, queried once."""
        with self._lock:
            if self._mmap_info is None:
                info = _uapi.davinci_mmap_info()
                self.ioctl(_uapi.DAVINCI_IOCTL_MMAP_INFO, info)
                self._mmap_info = info
            return self._mmap_info

    def _arena_fd(self, arena: int) -> int:
        with self._lock:
            fd = self._arena_fds.get(arena)
            if fd is None:
                path = _uapi.cstr(self._mmap_info.arena_path[arena])
                if not path:
                    raise DavinciError(
                        "the driver gave no backing file for arena %d; "
                        "update davinci-fused" % arena)
                try:
                    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
                except OSError as exc:
                    if exc.errno == _errno.ENOENT:
                        raise DeviceLostError(
                            "device memory file %s is gone: davinci-fused "
                            "stopped; restart it and reopen the device"
                            % path, exc.errno) from None
                    raise
                self._arena_fds[arena] = fd
            return fd

    def _map(self, offset: int, length: int) -> Mapping:
        info = self.mmap_info()
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        if info.method == _uapi.DAVINCI_MMAP_NODE:
            # the vma holds the memory (and this file) until munmap
            mm = mmap.mmap(self._fd, length, mmap.MAP_SHARED, prot,
                           offset=offset)
            return Mapping(mm, _mmap_address(mm), length, _close_mmap)
        if info.method != _uapi.DAVINCI_MMAP_FILE:
            raise DavinciError("unknown mmap method %d from the driver; update "
                               "the runtime" % info.method)
        arena = _uapi.DAVINCI_MMAP_ARENA(offset)
        if arena >= _uapi.DAVINCI_ARENAS:
            raise OSError(_errno.EINVAL, "bad arena")
        fd = self._arena_fd(arena)
        # The driver never sees a mapping of its backing file: a hold keeps
        # the memory from reuse until the last view of the mapping is gone.
        hold = _uapi.davinci_map_hold(mmap_offset=offset, length=length)
        self.ioctl(_uapi.DAVINCI_IOCTL_MAP_HOLD, hold)
        try:
            mm = mmap.mmap(fd, length, mmap.MAP_SHARED, prot,
                           offset=_uapi.DAVINCI_MMAP_ARENA_OFFSET(offset))
        except BaseException:
            self._release_hold(int(hold.handle))
            raise
        handle = int(hold.handle)

        def release() -> None:
            mm.close()
            self._release_hold(handle)
        return self._viewed_mapping(_mmap_address(mm), length, release)

    def _release_hold(self, handle: int) -> None:
        if self._fd >= 0:
            self._ioctl(_uapi.DAVINCI_IOCTL_MAP_RELEASE,
                        _uapi.davinci_map_release(handle=handle))

    def _close_context(self) -> None:
        # the node stays open while file mappings are viewed, so that the
        # driver keeps their memory (the holds go with the context)
        with self._lock:
            fds = list(self._arena_fds.values())
            self._arena_fds.clear()
            fd, self._fd = self._fd, -1
        if fd >= 0:
            fds.append(fd)
        for f in fds:
            try:
                os.close(f)
            except OSError:
                pass    # the descriptor is released even so (close(2))

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
