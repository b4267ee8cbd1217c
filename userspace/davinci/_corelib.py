# SPDX-License-Identifier: GPL-2.0
"""ctypes binding of libdavinci_core (userspace/libdavinci_core/libdavinci_core.h).

The device core compiled as a userspace shared library: the FUSE daemon
(davinci.fused) serves it through device nodes, and in-process users (tests,
the fuzzer) call it directly.

The library is loaded with ctypes.CDLL, so every foreign call releases the
GIL: a blocking wait ioctl in one thread does not stall the others.

Contract (other modules code against it):

    load() -> ctypes.CDLL
    CoreDevice(index, aicores=2, hbm_bytes=256 << 20, host_bytes=64 << 20,
               task_timeout_ms=30000, backing_dir=None, backend="lib",
               poll_idle_us=0)
        .lost(), .close(), .open_context(pid=0, uid=None) -> CoreContext
    CoreContext.ioctl(cmd, buf) -> 0 or -errno (never raises for driver
        errors), .pollable() -> bool, .mmap(offset, length) -> CoreMapping
        (OSError on failure), .close()
    CoreMapping.address, .length, .close()
    manager_ioctl(cmd, buf, privileged=False) -> 0 or -errno
    ring_publisher() -> fn(sq_header_address, tail) -> the ring's flags
        (dvc_ring_publish; for a client of any backend), or
        publish_with_lock when there is no library
    completion_header(address, fenced=None) -> the completion ring's
        header: ctypes' plain struct where plain accesses are ordered
        (x86, or no library), else a view whose seq and tail load with
        acquire and whose head stores with release
    set_limits(per_process=-1, per_user=-1) -> 0 or -errno
    stats() -> dict of struct dv_stats fields
"""

import ctypes
import errno as _errno
import glob
import os
import platform
import threading

from . import _uapi

__all__ = ["load", "CoreDevice", "CoreContext", "CoreMapping",
           "manager_ioctl", "ring_publisher", "publish_with_lock",
           "completion_header", "FencedRingHeader", "TSO_MACHINES",
           "set_limits", "stats", "STATS_FIELDS"]

STATS_FIELDS = ("objects", "devices", "contexts", "buffers", "streams",
                "events", "tasks", "mappings", "hbm_used", "host_used")


class CoreStats(ctypes.Structure):
    """struct dv_stats (dv_core.h): the core's accounting, all devices."""
    _fields_ = [(name, ctypes.c_uint64) for name in STATS_FIELDS]


_lib = None
_lib_path = ""
_lib_lock = threading.Lock()
_publisher = None


def _candidates():
    env = os.environ.get("DAVINCI_CORE_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, "_libdavinci_core*.so")))
    repo = os.path.dirname(os.path.dirname(here))
    yield os.path.join(repo, "build", "libdavinci_core.so")


def _declare(lib):
    c = ctypes
    vp = c.c_void_p
    sig = {
        "dvc_device_create": (vp, [c.POINTER(DeviceConfig)]),
        "dvc_device_destroy": (None, [vp]),
        "dvc_device_lost": (None, [vp]),
        "dvc_context_open": (vp, [vp, c.c_uint32]),
        "dvc_context_open_as": (vp, [vp, c.c_uint32, c.c_uint32]),
        "dvc_set_limits": (c.c_int, [c.c_int64, c.c_int64]),
        "dvc_context_close": (None, [vp]),
        "dvc_context_trace_all": (c.c_int, [vp, c.c_int]),
        "dvc_ioctl": (c.c_int, [vp, c.c_ulong, vp]),
        "dvc_ioctl_interruptible": (c.c_int, [vp, c.c_ulong, vp, vp]),
        "dvc_manager_ioctl": (c.c_int, [c.c_ulong, vp]),
        "dvc_manager_ioctl_priv": (c.c_int, [c.c_ulong, vp, c.c_int]),
        "dvc_pollable": (c.c_int, [vp]),
        "dvc_mmap": (vp, [vp, c.c_uint64, c.c_uint64]),
        "dvc_mapping_addr": (vp, [vp]),
        "dvc_munmap": (None, [vp]),
        "dvc_stats": (None, [c.POINTER(CoreStats)]),
    }
    for name, (restype, argtypes) in sig.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            if name not in _OPTIONAL:
                raise
            setattr(lib, name, _OPTIONAL[name])
            continue
        fn.restype = restype
        fn.argtypes = argtypes


# Symbols an older or partial build may lack, and what stands in for them.
_OPTIONAL = {
    "dvc_manager_ioctl": lambda cmd, arg: -_errno.ENOTTY,
    "dvc_manager_ioctl_priv": lambda cmd, arg, priv: -_errno.ENOTTY,
    "dvc_context_open_as": None,
    "dvc_context_trace_all": lambda ctx, all_: -_errno.ENOTTY,
    "dvc_set_limits": lambda per_process, per_user: -_errno.ENOTTY,
}


def load() -> ctypes.CDLL:
    """Load libdavinci_core once: $DAVINCI_CORE_LIB, then
    davinci/_libdavinci_core*.so, then <repo>/build/libdavinci_core.so."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            tried.append(path)
            if not os.path.exists(path):
                continue
            try:
                lib = ctypes.CDLL(path, use_errno=True)
                _declare(lib)
            except (OSError, AttributeError) as e:
                raise OSError(_errno.ELIBBAD,
                              "cannot load the davinci core library %s: %s"
                              % (path, e)) from e
            _lib, _lib_path = lib, path
            return lib
        raise OSError(_errno.ENOENT,
                      "davinci core library not found (tried: %s); build it "
                      "with `make core` or `pip install .`, or point "
                      "DAVINCI_CORE_LIB at libdavinci_core.so"
                      % ", ".join(tried))


def ring_publisher():
    """dvc_ring_publish() as a callable that keeps the GIL: it takes
    nanoseconds, and releasing and retaking the GIL would cost more.

    A client of the kernel module run from a source tree that was never
    built has no core library: it gets :func:`publish_with_lock`."""
    global _publisher
    if _publisher is None:
        try:
            load()
        except OSError:
            _publisher = publish_with_lock
            return _publisher
        fn = ctypes.PyDLL(_lib_path).dvc_ring_publish
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
        _publisher = fn
    return _publisher


#: CPUs whose plain loads and stores are ordered as acquire and release
#: (TSO): a completion ring's header needs no fences there
TSO_MACHINES = ("x86_64", "amd64", "i386", "i686")


class FencedRingHeader:
    """A completion ring's header whose ``seq`` and ``tail`` are loaded
    with acquire and whose ``head`` is stored with release
    (dvc_ring_acquire_seq and friends); every other field reads through
    the plain struct."""

    __slots__ = ("_address", "_plain", "_seq", "_tail", "_head")

    def __init__(self, address: int, lib: ctypes.PyDLL):
        self._address = address
        self._plain = _uapi.davinci_ring_header.from_address(address)
        self._seq, self._tail, self._head = (
            lib.dvc_ring_acquire_seq, lib.dvc_ring_acquire_tail,
            lib.dvc_ring_release_head)

    @property
    def seq(self) -> int:
        return self._seq(self._address)

    @property
    def tail(self) -> int:
        return self._tail(self._address)

    @property
    def head(self) -> int:
        return self._plain.head

    @head.setter
    def head(self, value: int) -> None:
        self._head(self._address, value)

    def __getattr__(self, name: str):
        return getattr(self._plain, name)


_fence_lib = None


def completion_header(address: int, fenced: bool | None = None):
    """The header of the completion ring mapped at ``address``. ``fenced``
    None: fenced unless this CPU is in :data:`TSO_MACHINES`. Without the
    library the plain struct is returned (a source tree never built)."""
    global _fence_lib
    if fenced is None:
        fenced = platform.machine().lower() not in TSO_MACHINES
    if fenced and _fence_lib is None:
        try:
            load()
        except OSError:
            fenced = False
        else:
            lib = ctypes.PyDLL(_lib_path)     # keeps the GIL: nanoseconds
            lib.dvc_ring_acquire_seq.restype = ctypes.c_uint64
            lib.dvc_ring_acquire_tail.restype = ctypes.c_uint32
            lib.dvc_ring_release_head.restype = None
            for fn in (lib.dvc_ring_acquire_seq, lib.dvc_ring_acquire_tail):
                fn.argtypes = [ctypes.c_void_p]
            lib.dvc_ring_release_head.argtypes = [ctypes.c_void_p,
                                                  ctypes.c_uint32]
            _fence_lib = lib
    if not fenced:
        return _uapi.davinci_ring_header.from_address(address)
    return FencedRingHeader(address, _fence_lib)


_barrier = threading.Lock()


def publish_with_lock(sq_header_address: int, tail: int) -> int:
    """dvc_ring_publish() without the library: taking an uncontended lock
    is a locked read-modify-write, a full barrier on x86. Elsewhere it
    only acquires, and a missed wake-up waits for the dispatcher's
    backstop (DV_POLL_BACKSTOP_NS) or the host's next wait ioctl."""
    hdr = _uapi.davinci_ring_header.from_address(sq_header_address)
    hdr.tail = tail
    with _barrier:
        return int(hdr.flags)


def _oserror(what: str) -> OSError:
    e = ctypes.get_errno() or _errno.EIO
    return OSError(e, "%s: %s" % (what, os.strerror(e)))


def _buffer_address(buf, size):
    """(address, length or None, keepalive) of a writable buffer."""
    if buf is None:
        return None, 0, None
    if isinstance(buf, int):
        return buf, None, None
    if isinstance(buf, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union,
                        ctypes.Array)):
        return ctypes.addressof(buf), ctypes.sizeof(buf), buf
    if isinstance(buf, ctypes._Pointer):
        return ctypes.cast(buf, ctypes.c_void_p).value, None, buf
    try:
        mv = memoryview(buf)
    except TypeError:
        raise TypeError("ioctl buffer must be a ctypes object, a writable "
                        "buffer or an address, not %s"
                        % type(buf).__name__) from None
    if mv.readonly:
        raise TypeError("ioctl buffer is read-only")
    n = mv.nbytes
    if n == 0:
        return None, 0, None
    arr = (ctypes.c_char * n).from_buffer(mv)
    return ctypes.addressof(arr), n, (arr, mv)


def _call_sized(fn, cmd, buf):
    """Call fn(addr) with a buffer of at least _IOC_SIZE(cmd) bytes; a
    shorter caller buffer is zero-extended and copied back (drm_ioctl)."""
    size = _uapi.ioc_size(cmd)
    addr, n, keep = _buffer_address(buf, size)
    if addr is not None and (n is None or n >= size):
        return fn(addr)
    tmp = (ctypes.c_char * max(size, 8))()
    if addr is not None and n:
        ctypes.memmove(tmp, addr, min(n, size))
    ret = fn(ctypes.addressof(tmp))
    if addr is not None and n:
        ctypes.memmove(addr, tmp, min(n, size))
    del keep
    return ret


class _Closing:
    """The handles below: ``with`` calls their close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class CoreMapping(_Closing):
    """A dvc_mmap() mapping: @address is the first byte, @length bytes."""

    def __init__(self, ctx: "CoreContext", handle: int, address: int,
                 length: int):
        self._ctx = ctx
        self._handle = handle
        self.address = address
        self.length = length

    def close(self) -> None:
        h, self._handle = self._handle, None
        if h:
            load().dvc_munmap(h)

    def __repr__(self):
        return "<CoreMapping 0x%x+%d%s>" % (self.address, self.length,
                                          "" if self._handle else " closed")


class CoreContext(_Closing):
    """One open file of a device (dvc_context_open)."""

    def __init__(self, device: "CoreDevice", handle: int, pid: int):
        self.device = device
        self.pid = pid
        self._handle = handle

    @property
    def closed(self) -> bool:
        return not self._handle

    def ioctl(self, cmd: int, buf) -> int:
        """dvc_ioctl: 0 or -errno; -EBADF after close."""
        h = self._handle
        if not h:
            return -_errno.EBADF
        lib = load()
        return _call_sized(lambda a: lib.dvc_ioctl(h, cmd, a), cmd, buf)

    def ioctl_interruptible(self, cmd: int, data: int, interrupted) -> int:
        """dvc_ioctl_interruptible on ``data``, the address of _IOC_SIZE(cmd)
        bytes: waits end with -EINTR once the C function ``interrupted``
        returns nonzero. 0 or -errno; -EBADF after close."""
        h = self._handle
        if not h:
            return -_errno.EBADF
        return load().dvc_ioctl_interruptible(h, cmd, data, interrupted)

    def pollable(self) -> bool:
        h = self._handle
        return bool(h) and bool(load().dvc_pollable(h))

    def set_trace_all(self, all_: bool) -> int:
        """dvc_context_trace_all: let it read every user's trace records
        (a privileged opener's right). 0 or -errno."""
        h = self._handle
        if not h:
            return -_errno.EBADF
        return load().dvc_context_trace_all(h, 1 if all_ else 0)

    def mmap(self, offset: int, length: int) -> CoreMapping:
        h = self._handle
        if not h:
            raise OSError(_errno.EBADF, "context is closed")
        lib = load()
        ctypes.set_errno(0)
        m = lib.dvc_mmap(h, offset, length)
        if not m:
            raise _oserror("dvc_mmap(0x%x, %d)" % (offset, length))
        return CoreMapping(self, m, lib.dvc_mapping_addr(m), length)

    def close(self) -> None:
        h, self._handle = self._handle, None
        if h:
            self.device.forget(self)
            load().dvc_context_close(h)

    def __repr__(self):
        return "<CoreContext dev%d pid %d%s>" % (
            self.device.index, self.pid, " closed" if self.closed else "")


class DeviceConfig(ctypes.Structure):
    """struct dv_device_config (kmod/core/dv_core.h): a device's parameters;
    a poll_idle_us or poll_idle_max_us of 0 is the core's default."""
    _fields_ = [("index", ctypes.c_uint32),
                ("aicores", ctypes.c_uint32),
                ("hbm_bytes", ctypes.c_uint64),
                ("host_bytes", ctypes.c_uint64),
                ("task_timeout_ms", ctypes.c_uint32),
                ("backing_dir", ctypes.c_char_p),
                ("backend", ctypes.c_char_p),
                ("poll_idle_us", ctypes.c_uint32),
                ("poll_idle_max_us", ctypes.c_uint32)]


class CoreDevice(_Closing):
    """A simulated device (dvc_device_create); close() destroys it."""

    def __init__(self, index: int, aicores: int = 2,
                 hbm_bytes: int = 256 << 20, host_bytes: int = 64 << 20,
                 task_timeout_ms: int = 30000,
                 backing_dir: "str | None" = None, backend: str = "lib",
                 poll_idle_us: int = 0, poll_idle_max_us: int = 0):
        lib = load()
        self.index = index
        self.backing_dir = backing_dir
        self._contexts = set()
        cfg = DeviceConfig(
            index=index, aicores=aicores, hbm_bytes=hbm_bytes,
            host_bytes=host_bytes, task_timeout_ms=task_timeout_ms,
            backing_dir=(os.fsencode(backing_dir)
                         if backing_dir is not None else None),
            backend=backend.encode(), poll_idle_us=poll_idle_us,
            poll_idle_max_us=poll_idle_max_us)
        ctypes.set_errno(0)
        h = lib.dvc_device_create(ctypes.byref(cfg))
        if not h:
            raise _oserror("cannot create davinci device %d" % index)
        self._handle = h

    @property
    def closed(self) -> bool:
        return not self._handle

    def lost(self) -> None:
        """Simulate removal: waiters wake, every context gets -ENODEV."""
        if self._handle:
            load().dvc_device_lost(self._handle)

    def open_context(self, pid: int = 0, uid: "int | None" = None
                     ) -> CoreContext:
        """Open a context for process ``pid``, counted against the limits
        on open contexts per process and, when ``uid`` is given, per user:
        OSError EMFILE or EUSERS past them."""
        if not self._handle:
            raise OSError(_errno.ENODEV, "device is closed")
        lib = load()
        ctypes.set_errno(0)
        if uid is None or lib.dvc_context_open_as is None:
            c = lib.dvc_context_open(self._handle, pid & 0xFFFFFFFF)
        else:
            c = lib.dvc_context_open_as(self._handle, pid & 0xFFFFFFFF,
                                        uid & 0xFFFFFFFF)
        if not c:
            raise _oserror("cannot open a context on device %d" % self.index)
        ctx = CoreContext(self, c, pid)
        self._contexts.add(ctx)
        return ctx

    def forget(self, ctx: CoreContext) -> None:
        """Drop a context that closed itself."""
        self._contexts.discard(ctx)

    def close(self) -> None:
        """Destroy the device; contexts still open are closed first."""
        h = self._handle
        if not h:
            return
        for ctx in list(self._contexts):
            ctx.close()
        self._handle = None
        load().dvc_device_destroy(h)

    def __repr__(self):
        return "<CoreDevice %d%s>" % (self.index,
                                      " closed" if self.closed else "")


def manager_ioctl(cmd: int, buf, privileged: bool = False) -> int:
    """dvc_manager_ioctl_priv: the manager node's ioctls; 0 or -errno.

    ``privileged`` allows reset and fault injection (else -EPERM): the FUSE
    daemon passes it for its owner, the in-process backend for its own
    process."""
    lib = load()
    return _call_sized(
        lambda a: lib.dvc_manager_ioctl_priv(cmd, a, 1 if privileged else 0),
        cmd, buf)


def set_limits(per_process: int = -1, per_user: int = -1) -> int:
    """dvc_set_limits: the most contexts one process and one user may hold
    open over all devices of this library (0: no limit, -1: the default,
    64 and 256); 0 or -errno."""
    return load().dvc_set_limits(per_process, per_user)


def stats() -> "dict[str, int]":
    """The core's global accounting (struct dv_stats) by field name."""
    s = CoreStats()
    load().dvc_stats(ctypes.byref(s))
    return {name: getattr(s, name) for name in STATS_FIELDS}
