# SPDX-License-Identifier: GPL-2.0
"""acl.util: pointers <-> numpy arrays and bytes, as pyACL's acl.util."""

from __future__ import annotations

import ctypes
import logging
import threading

import numpy as np

__all__ = ["numpy_to_ptr", "ptr_to_numpy", "bytes_to_ptr", "ptr_to_bytes",
           "numpy_contiguous_to_ptr", "start_thread", "stop_thread"]

_log = logging.getLogger("acl")

_NUM_TO_DTYPE = {}
for _t in set(np.sctypeDict.values()):
    try:
        _d = np.dtype(_t)
    except TypeError:
        continue
    _NUM_TO_DTYPE.setdefault(_d.num, _d)


def numpy_to_ptr(array: np.ndarray) -> int:
    """Address of a numpy array's data (the array must stay alive)."""
    if not isinstance(array, np.ndarray):
        raise TypeError("numpy_to_ptr takes a numpy array, not %s"
                        % type(array).__name__)
    if not array.flags.c_contiguous:
        raise ValueError("numpy_to_ptr needs a C-contiguous array: use "
                         "numpy.ascontiguousarray first")
    return int(array.ctypes.data)


numpy_contiguous_to_ptr = numpy_to_ptr


def _dtype(np_type) -> np.dtype:
    if isinstance(np_type, int) and not isinstance(np_type, bool):
        try:
            return _NUM_TO_DTYPE[np_type]
        except KeyError:
            raise ValueError("unknown numpy type number %d" % np_type) \
                from None
    return np.dtype(np_type)


def ptr_to_numpy(ptr: int, shape, np_type) -> np.ndarray:
    """A numpy array over ``ptr`` (no copy).

    ``np_type`` is a numpy type number (``NPY_FLOAT`` = 11, as pyACL) or a
    numpy dtype.
    """
    dtype = _dtype(np_type)
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    nbytes = count * dtype.itemsize
    _check_host(ptr, nbytes, "ptr_to_numpy")
    buf = (ctypes.c_char * max(nbytes, 1)).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)


def bytes_to_ptr(data) -> int:
    """Address of the contents of ``data`` (bytes or bytearray; keep it
    alive while the pointer is used)."""
    if isinstance(data, bytes):
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    if isinstance(data, (bytearray, memoryview)):
        if len(data) == 0:
            return 0
        return ctypes.addressof((ctypes.c_char * len(data)).from_buffer(data))
    raise TypeError("bytes_to_ptr takes bytes or bytearray, not %s"
                    % type(data).__name__)


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """Copy ``size`` bytes at ``ptr`` into a new bytes object."""
    if not isinstance(size, int) or size < 0:
        raise TypeError("ptr_to_bytes() size must be an int >= 0")
    _check_host(ptr, size, "ptr_to_bytes")
    return ctypes.string_at(ptr, size)


def _check_host(ptr, nbytes: int, what: str) -> None:
    """ValueError unless ``nbytes`` at ``ptr`` are readable host memory
    (device memory from acl.rt.malloc, or an address nothing maps, would
    crash the interpreter)."""
    if not isinstance(ptr, int) or isinstance(ptr, bool):
        raise TypeError("%s() takes a pointer (int), not %s"
                        % (what, type(ptr).__name__))
    if not ptr:
        raise ValueError("%s of a null pointer" % what)
    from . import _state as S
    for d in list(S.devices.values()):
        if d.find_device_ptr(ptr) is not None:
            raise ValueError(
                "%s: %#x is device memory (acl.rt.malloc), which the host "
                "cannot read: copy it to host memory with acl.rt.memcpy "
                "(ACL_MEMCPY_DEVICE_TO_HOST) first" % (what, ptr))
    if not _mapped_readable(ptr, max(nbytes, 1)):
        raise ValueError("%s: %d bytes at %#x are not readable host memory "
                         "of this process" % (what, nbytes, ptr))


def _mapped_readable(ptr: int, nbytes: int) -> bool:
    """[ptr, ptr + nbytes) lies in readable mappings (/proc/self/maps)."""
    end, at = ptr + nbytes, ptr
    try:
        with open("/proc/self/maps") as f:
            spans = []
            for line in f:
                rng, perms = line.split(None, 2)[:2]
                lo, hi = (int(x, 16) for x in rng.split("-"))
                if perms[0] == "r":
                    spans.append((lo, hi))
    except OSError:
        return True                 # no /proc: cannot tell, trust the caller
    for lo, hi in sorted(spans):
        if lo <= at < hi:
            at = hi
            if at >= end:
                return True
    return False


# ---------------------------------------------------------------------------
# threads for acl.rt.process_report
# ---------------------------------------------------------------------------
_threads: "dict[int, threading.Thread]" = {}


def _run_thread(func, args):
    try:
        func(args)
    except Exception:   # noqa: BLE001 - a thread body must not vanish silently
        _log.exception("thread started by acl.util.start_thread raised")


def start_thread(func, args_list=None):
    """(thread_id, ret): run ``func(args_list)`` on a new thread, as pyACL.

    The id is the thread's ``threading.get_ident()``; pass it to
    acl.rt.subscribe_report and acl.util.stop_thread."""
    if not callable(func):
        return 0, 100000            # ACL_ERROR_INVALID_PARAM
    t = threading.Thread(target=_run_thread, args=(func, args_list),
                         name="acl-thread", daemon=True)
    t.start()
    tid = t.ident
    _threads[tid] = t
    return tid, 0


def stop_thread(thread_id):
    """ret: wait for a thread from start_thread to finish (the thread
    function must return, e.g. when a flag it polls is cleared)."""
    t = _threads.pop(thread_id, None)
    if t is None:
        return 100000               # ACL_ERROR_INVALID_PARAM
    if t is not threading.current_thread():
        t.join()
    return 0

