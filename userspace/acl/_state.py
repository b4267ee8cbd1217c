# SPDX-License-Identifier: GPL-2.0
"""Process state behind the pyACL API: devices, contexts, streams, events,
pointers, and the mapping of runtime exceptions to aclError codes.

Handles (contexts, streams, events) are ints, as in pyACL. Device memory
pointers are device virtual addresses; host pointers from ``malloc_host``
are real process addresses of mapped pinned memory.

Every ACL device is one ``davinci.Device`` (one driver context): all ACL
contexts of a device share it, so memory allocated under one context can be
used by streams of another, as on real hardware.
"""

from __future__ import annotations

import bisect
import ctypes
import inspect
import itertools
import logging
import os
import sys
import threading

import davinci
from davinci.errors import (DavinciError, DeviceLostError, DeviceNotFoundError,
                            DevicePermissionError,
                            DriverVersionMismatchError, DTypeError,
                            InvalidArgumentError, InvalidDeviceError,
                            InvalidHandleError, LimitError, OutOfMemoryError,
                            ShapeError, TaskFailedError, TimeoutError)

from . import constants as C

log = logging.getLogger("acl")

lock = threading.RLock()
initialized = False
_recent = threading.local()

_handles = itertools.count(0x5A0010, 0x10)

def new_handle() -> int:
    return next(_handles)


class AclDevice:
    def __init__(self, device_id: int, dev: davinci.Device):
        self.id = device_id
        self.dev = dev
        self.refs = 0
        self.default_ctx: "AclContext | None" = None
        # acl.rt.malloc's buffers, found through the Device (find_buffer,
        # by device address) and kept alive here: pyACL hands out bare
        # addresses, and the Device holds its Buffers weakly (a
        # davinci.Buffer is freed when it is collected).
        self.held: set[davinci.Buffer] = set()
        # malloc_host's buffers, indexed here by their process address:
        # pyACL's host pointers are addresses of the mapping, which the
        # Device does not index, and only these count as the user's pinned
        # memory (not the staging buffers the runtime makes on the Device).
        self.host_buffers: dict[int, davinci.Buffer] = {}  # address -> Buffer
        self.host_starts: list[int] = []

    def find_device_ptr(self, ptr: int):
        """(Buffer, offset) of device memory containing ``ptr``, or None."""
        hit = self.dev.find_buffer(ptr)
        if hit is None or hit[0].host:
            return None
        return hit

    def add_device(self, buf: davinci.Buffer) -> int:
        self.held.add(buf)
        return buf.dev_addr

    def remove_device(self, ptr: int) -> davinci.Buffer | None:
        """The buffer acl.rt.malloc returned as ``ptr``, no longer held."""
        hit = self.find_device_ptr(ptr) if isinstance(ptr, int) else None
        if hit is None or hit[1] != 0 or hit[0] not in self.held:
            return None
        self.held.discard(hit[0])
        return hit[0]

    def find_host_ptr(self, ptr: int):
        i = bisect.bisect_right(self.host_starts, ptr) - 1
        if i >= 0:
            start = self.host_starts[i]
            buf = self.host_buffers.get(start)
            if buf is not None and start <= ptr < start + max(buf.size, 1):
                return buf, ptr - start
        return None

    def add_host(self, buf: davinci.Buffer) -> int:
        addr = buf.address
        self.host_buffers[addr] = buf
        bisect.insort(self.host_starts, addr)
        return addr

    def remove_host(self, addr: int) -> davinci.Buffer | None:
        buf = self.host_buffers.pop(addr, None)
        if buf is not None:
            i = bisect.bisect_left(self.host_starts, addr)
            del self.host_starts[i]
        return buf


class AclContext:
    def __init__(self, device: AclDevice, default: bool = False):
        self.handle = new_handle()
        self.device = device
        self.default = default
        self._default_stream: "AclStream | None" = None

    def default_stream(self) -> "AclStream":
        if self._default_stream is None or self._default_stream.stream.destroyed:
            self._default_stream = AclStream(self, 0)
            self._default_stream.handle = 0
        return self._default_stream


class AclStream:
    """A pyACL stream: a davinci stream that goes on after a failed task
    (CANN's default ACL_CONTINUE_ON_FAILURE) where the driver can (ABI
    1.10), else one that stops."""

    def __init__(self, ctx: AclContext, priority: int = 0,
                 wait_mode: "davinci.WaitMode | None" = None):
        self.handle = new_handle()
        self.ctx = ctx
        # None: going on after a failure where the driver can
        self.stream = ctx.device.dev.stream(priority, wait_mode=wait_mode,
                                            continue_on_failure=None)
        #: acl.rt.set_stream_failure_mode was called (CANN allows it once)
        self.failure_mode_set = False


class AclEvent:
    def __init__(self, device: AclDevice, flags: int = 0):
        self.handle = new_handle()
        self.device = device
        self.flags = flags
        self.event = device.dev.event(timing=True)


devices: dict[int, AclDevice] = {}
contexts: dict[int, AclContext] = {}
streams: dict[int, AclStream] = {}
events: dict[int, AclEvent] = {}
_tls = threading.local()


def current_context() -> AclContext | None:
    ctx = getattr(_tls, "ctx", None)
    if ctx is not None and ctx.handle not in contexts:
        _tls.ctx = None
        return None
    return ctx


def set_current_context(ctx: AclContext | None) -> None:
    _tls.ctx = ctx


class AclFail(Exception):
    """Raised inside the API to return ``code`` with ``message`` logged."""

    def __init__(self, code: int, message: str, quiet: bool = False):
        super().__init__(message)
        self.code = code
        self.message = message
        self.quiet = quiet      # expected outcome (a timeout): not logged


def require_context() -> AclContext:
    ctx = current_context()
    if ctx is None:
        raise AclFail(C.ACL_ERROR_RT_CONTEXT_NULL,
                      "no current context: call acl.rt.set_device(device_id) "
                      "or acl.rt.set_context(context) in this thread first")
    return ctx


def register(table: dict, obj) -> int:
    """Enter ``obj`` (an AclContext, AclStream, AclEvent) into ``table``
    under its handle; the handle."""
    table[obj.handle] = obj
    return obj.handle


def _lookup(table: dict, kind: str, handle):
    """The ``kind`` ("stream", "event") that ``handle`` names in ``table``."""
    obj = table.get(handle)
    if obj is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "%s %r does not exist (destroyed, or its device was "
                      "reset): create one with acl.rt.create_%s()"
                      % (kind, handle, kind))
    return obj


def take_handle(table: dict, kind: str, handle):
    """Remove the ``kind`` that ``handle`` names from ``table`` and return it
    (destroy_stream, destroy_event)."""
    obj = table.pop(handle, None)
    if obj is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "%s %r does not exist or is already destroyed"
                      % (kind, handle))
    return obj


def get_stream(handle) -> AclStream:
    if handle in (0, None):
        return require_context().default_stream()
    return _lookup(streams, "stream", handle)


def get_event(handle) -> AclEvent:
    return _lookup(events, "event", handle)


#: aclError of a failed task, by its status (TaskFailedError.status_name)
_STATUS_CODES = {
    "INVALID_ADDRESS": C.ACL_ERROR_RT_AICORE_EXCEPTION,
    "INVALID_TASK": C.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
    "ABORTED": C.ACL_ERROR_RT_MODEL_EXECUTE,
    "CANCELLED": C.ACL_ERROR_RT_STREAM_NOT_COMPLETE,
    "TIMEOUT": C.ACL_ERROR_RT_AICORE_TIMEOUT,
    "ECC_ERROR": C.ACL_ERROR_RT_DEVICE_MEM_ERROR,
    "DEVICE_LOST": C.ACL_ERROR_RT_LOST_HEARTBEAT,
    "INVALID_EVENT": C.ACL_ERROR_RT_INVALID_HANDLE,
    "MISALIGNED": C.ACL_ERROR_RT_AICORE_EXCEPTION,
}


#: aclError of each runtime exception, first match wins (a subclass before
#: its base); LimitError and TaskFailedError are mapped by error_code.
_EXCEPTION_CODES = (
    (InvalidDeviceError, C.ACL_ERROR_RT_INVALID_DEVICEID),
    (DeviceNotFoundError, C.ACL_ERROR_RT_NO_DEVICE),
    (DriverVersionMismatchError, C.ACL_ERROR_RT_DRV_INTERNAL_ERROR),
    (DevicePermissionError, C.ACL_ERROR_RT_NO_PERMISSION),
    (OutOfMemoryError, C.ACL_ERROR_RT_MEMORY_ALLOCATION),
    (InvalidHandleError, C.ACL_ERROR_RT_INVALID_HANDLE),
    ((ShapeError, DTypeError, InvalidArgumentError),
     C.ACL_ERROR_RT_PARAM_INVALID),
    (TimeoutError, C.ACL_ERROR_RT_WAIT_TIMEOUT),
    (DeviceLostError, C.ACL_ERROR_RT_LOST_HEARTBEAT),
)


def error_code(exc: BaseException) -> int:
    """aclError for a runtime exception."""
    if isinstance(exc, AclFail):
        return exc.code
    if isinstance(exc, LimitError):
        return {"streams_per_context": C.ACL_ERROR_RT_NO_STREAM_RESOURCE,
                "events_per_context": C.ACL_ERROR_RT_NO_EVENT_RESOURCE}.get(
                    exc.limit, C.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL)
    if isinstance(exc, TaskFailedError):
        # a DVPP task (a JPEG decode) that failed: CANN runs DVPP's work
        # as AICPU tasks, whose failures synchronize reports so
        if exc.opcode in (davinci.schema.by_name("JPEGD_DECODE").opcode,
                          davinci.schema.by_name("PNGD_DECODE").opcode):
            return C.ACL_ERROR_RT_AICPU_EXCEPTION
        if exc.opcode == davinci.schema.by_name("JPEGE_ENCODE").opcode:
            return C.ACL_ERROR_RT_AICPU_EXCEPTION
        return _STATUS_CODES.get(exc.status_name,
                                 C.ACL_ERROR_RT_INTERNAL_ERROR)
    for cls, code in _EXCEPTION_CODES:
        if isinstance(exc, cls):
            return code
    return C.ACL_ERROR_RT_INTERNAL_ERROR


def record_error(code: int, message: str, api: str,
                 quiet: bool = False) -> None:
    text = "%s failed with %d (%s): %s" % (
        api, code, C.ERROR_NAMES.get(code, "?"), message)
    _recent.msg = text
    _recent.code = code
    if quiet:
        log.debug(text)
    else:
        log.error(text)


def recent_error() -> str:
    msg = getattr(_recent, "msg", "")
    _recent.msg = ""
    return msg


def last_error(clear: bool) -> int:
    """aclError of this thread's last failed call (0: none); ``clear``
    forgets it (get_last_error) or not (peek_at_last_error)."""
    code = getattr(_recent, "code", 0)
    if clear:
        _recent.code = 0
    return code


#: Python types each pyACL argument name takes, checked as a C extension's
#: PyArg_ParseTuple would (TypeError, not an error code)
ARG_TYPES = {
    "size": int, "count": int, "dest_max": int, "max_size": int,
    "kind": int, "policy": int, "device_id": int, "value": int,
    "stream": int, "event": int, "context": int, "timeout": int,
    "flag": int, "model_id": int, "model_desc": int, "dataset": int,
    "data_buffer": int, "index": int, "desc": int, "handle": int,
    "op_type": str, "model_path": str, "file_name": str, "attr_name": str,
    "priority": int, "input_desc": (list, tuple), "output_desc": (list, tuple),
    "batch_size": int, "level": int, "log_level": int, "message": str,
    "data_type": int, "dev_ptr": int, "host_ptr": int,
    # acl.mdl.execute's datasets, create_data_buffer's pointer, a model in
    # memory (a pointer, or its bytes), a tensor desc's format
    "input": int, "output": int, "data": int, "model_size": int,
    "model": (int, bytes, bytearray, memoryview), "format": int,
    "length": int,
}


def check_args(sig: inspect.Signature, name: str, args, kwargs) -> None:
    """Raise TypeError for a wrong number of arguments or an argument of
    the wrong type (None where a handle is required included)."""
    params = sig.parameters
    if not kwargs and len(args) == len(params):     # the common call
        check_args_of(name, zip(params, args))
        return
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError("%s(): %s" % (name, exc)) from None
    check_args_of(name, bound.arguments.items())


def check_args_of(name: str, pairs) -> None:
    """TypeError unless each (argument name, value) has its ARG_TYPES."""
    for arg, v in pairs:
        want = ARG_TYPES.get(arg)
        if want is not None and not isinstance(v, want):
            raise TypeError(
                "%s() argument '%s' must be %s, not %s" % (
                    name, arg, " or ".join(t.__name__ for t in (
                        want if isinstance(want, tuple) else (want,))),
                    type(v).__name__))


def checked(fn):
    """Decorate a pyACL function that returns its value directly (no
    ``ret``): its arguments are checked as :func:`check_args` does, so a
    wrong type or None where a handle is required raises TypeError."""
    name = ".".join(fn.__module__.split(".")[:2] + [fn.__name__])
    if name.startswith("acl._desc."):
        name = "acl." + fn.__name__         # acl.create_data_buffer
    sig = inspect.signature(fn)

    def wrapper(*args, **kwargs):
        check_args(sig, name, args, kwargs)
        return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def _configure_logging() -> None:
    """Failed calls go to the "acl" logger, which prints nothing unless
    the program configures logging or, as CANN's log does,
    ASCEND_SLOG_PRINT_TO_STDOUT=1 (level: ASCEND_GLOBAL_LOG_LEVEL, 0 debug
    to 3 error, the default)."""
    if os.environ.get("ASCEND_SLOG_PRINT_TO_STDOUT") == "1":
        h = logging.StreamHandler(sys.stdout)
        h.setFormatter(logging.Formatter("[%(levelname)s] %(name)s: "
                                         "%(message)s"))
        log.addHandler(h)
        lvl = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL", "3")
        log.setLevel({"0": logging.DEBUG, "1": logging.INFO,
                      "2": logging.WARNING}.get(lvl, logging.ERROR))
    else:
        log.addHandler(logging.NullHandler())


_configure_logging()


def api(nvalues: int = 0, defaults=None, locked: bool = True):
    """Decorate a pyACL function: returns ``ret`` or ``(values..., ret)``.

    The wrapped function returns its values (a single value or a tuple of
    ``nvalues``); exceptions become aclError codes with the defaults as
    values, and the message is logged and kept for
    ``acl.get_recent_err_msg()``. ``locked=False`` for calls that block
    (synchronize), which must not hold the state lock.
    """
    if defaults is None:
        defaults = (None,) * nvalues

    def deco(fn):
        # the public module: acl.rt.malloc, defined in acl.rt.memory
        name = ".".join(fn.__module__.split(".")[:2] + [fn.__name__])
        sig = inspect.signature(fn)

        def wrapper(*args, **kwargs):
            check_args(sig, name, args, kwargs)
            try:
                if locked:
                    with lock:
                        out = fn(*args, **kwargs)
                else:
                    out = fn(*args, **kwargs)
            except AclFail as exc:
                record_error(exc.code, exc.message, name, exc.quiet)
                code = exc.code
            except (DavinciError, ValueError, TypeError, OverflowError,
                    ctypes.ArgumentError) as exc:
                code = error_code(exc)
                if not isinstance(exc, DavinciError) and \
                        code == C.ACL_ERROR_RT_INTERNAL_ERROR:
                    code = C.ACL_ERROR_INVALID_PARAM
                record_error(code, str(exc), name)
            except Exception as exc:  # noqa: BLE001 - pyACL never raises
                log.exception("%s: unexpected error", name)
                code = C.ACL_ERROR_RT_INTERNAL_ERROR
                record_error(code, "unexpected %s: %s; please report it"
                             % (type(exc).__name__, exc), name)
            else:
                if nvalues == 0:
                    return C.ACL_SUCCESS
                if nvalues == 1:
                    return out, C.ACL_SUCCESS
                return (*out, C.ACL_SUCCESS)
            if nvalues == 0:
                return code
            return (*defaults, code)
        wrapper.__name__ = fn.__name__
        wrapper.__qualname__ = fn.__qualname__
        wrapper.__doc__ = fn.__doc__
        wrapper.__wrapped__ = fn
        return wrapper
    return deco


def release_device(d: AclDevice) -> None:
    """Forget everything of device ``d`` and close it."""
    for h, c in list(contexts.items()):
        if c.device is d:
            del contexts[h]
    for h, s in list(streams.items()):
        if s.ctx.device is d:
            del streams[h]
    for h, e in list(events.items()):
        if e.device is d:
            del events[h]
    d.held.clear()
    d.host_buffers.clear()
    d.host_starts.clear()
    devices.pop(d.id, None)
    d.dev.close()
