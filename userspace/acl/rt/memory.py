# SPDX-License-Identifier: GPL-2.0
"""acl.rt memory: malloc/free of device memory, malloc_host/free_host of
pinned host memory, memcpy, memset and get_mem_info (see acl.rt for how
copies move)."""

from __future__ import annotations

import ctypes

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api

__all__ = ["malloc", "free", "malloc_host", "free_host", "memcpy",
           "memcpy_async", "memset", "memset_async", "get_mem_info"]


def _allocating_device(size) -> S.AclDevice:
    """The current device, once ``size`` is a valid allocation size."""
    d = S.require_context().device
    if not isinstance(size, int) or size <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "size must be a positive int, not %r" % (size,))
    return d


@api(1, (0,))
def malloc(size, policy=C.ACL_MEM_MALLOC_HUGE_FIRST):
    """(dev_ptr, ret): device memory (HBM) on the current device."""
    d = _allocating_device(size)
    if policy not in (0, 1, 2, 3, 4, 5):
        raise AclFail(C.ACL_ERROR_RT_INVALID_MALLOC_TYPE,
                      "unknown malloc policy %r: use ACL_MEM_MALLOC_HUGE_FIRST"
                      " (0), HUGE_ONLY (1) or NORMAL_ONLY (2)" % (policy,))
    return d.add_device(d.dev.malloc(size, policy % 3))


@api()
def free(dev_ptr):
    """Free device memory from malloc."""
    _free(dev_ptr, S.AclDevice.remove_device,
          "device memory from acl.rt.malloc (already freed, or its device "
          "was reset)")


@api(1, (0,))
def malloc_host(size):
    """(host_ptr, ret): pinned host memory tasks can DMA to and from."""
    d = _allocating_device(size)
    buf = d.dev.malloc_host(size)
    return d.add_host(buf)


@api()
def free_host(host_ptr):
    """Free pinned host memory from malloc_host."""
    _free(host_ptr, S.AclDevice.remove_host,
          "pinned host memory from acl.rt.malloc_host")


def _free(ptr, remove, what: str) -> None:
    """Free the buffer ``remove(device, ptr)`` gives up, looking on the
    current device first."""
    for d in _devices_first():
        buf = remove(d, ptr)
        if buf is not None:
            buf.free()
            return
    raise AclFail(C.ACL_ERROR_RT_MEMORY_FREE,
                  "%s is not %s" % (_hex(ptr), what))


def _hex(p) -> str:
    return hex(p) if isinstance(p, int) else repr(p)


def _devices_first():
    cur = S.current_context()
    out = []
    if cur is not None:
        out.append(cur.device)
    out.extend(d for d in S.devices.values() if d not in out)
    return out


def _dev_ptr(ptr, count: int, what: str):
    """(AclDevice, Buffer, offset) of device pointer ``ptr``."""
    if not isinstance(ptr, int) or ptr == 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s pointer is null or not "
                      "an int: %r" % (what, ptr))
    hit = device_range(ptr, count, what)
    if hit is not None:
        return hit
    raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                  "%s %s is not device memory from acl.rt.malloc (freed, or "
                  "its device was reset)" % (what, _hex(ptr)))


def device_range(ptr: int, count: int, what: str):
    """(AclDevice, Buffer, offset) when ``ptr`` is device memory from
    malloc, None when it is not; AclFail when ``count`` bytes from it run
    past its allocation."""
    for d in _devices_first():
        hit = d.find_device_ptr(ptr)
        if hit is not None:
            buf, off = hit
            if off + count > buf.size:
                raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                              "%s range %s + %d bytes runs past its %d-byte "
                              "allocation" % (what, _hex(ptr), count, buf.size))
            return d, buf, off
    return None


def _pinned(ptr):
    """(AclDevice, Buffer, offset) when ``ptr`` is pinned host memory."""
    if not isinstance(ptr, int):
        return None
    for d in _devices_first():
        hit = d.find_host_ptr(ptr)
        if hit is not None:
            return d, hit[0], hit[1]
    return None


def _host_ptr(ptr, what: str) -> int:
    if not isinstance(ptr, int) or ptr == 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s pointer is null or not "
                      "an int: %r" % (what, ptr))
    return ptr


def operand(ptr, nbytes: int, what: str) -> int:
    """Device address a task uses for ``nbytes`` at ``ptr``: device memory
    from malloc, or pinned host memory from malloc_host."""
    pin = _pinned(ptr)
    if pin is not None:
        if pin[2] + nbytes > pin[1].size:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s: %d bytes at %s overflow the pinned buffer"
                          % (what, nbytes, _hex(ptr)))
        return pin[1].dev_addr + pin[2]
    _dev_ptr(ptr, nbytes, what)
    return ptr


def _check_copy(dest_max, count, kind):
    if not isinstance(count, int) or count < 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "count must be an int >= 0")
    if not isinstance(dest_max, int) or count > dest_max:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "count %r exceeds dest_max %r" % (count, dest_max))
    if kind not in (0, 1, 2, 3, 4):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "unknown memcpy kind %r: use ACL_MEMCPY_HOST_TO_DEVICE "
                      "(1), DEVICE_TO_HOST (2), DEVICE_TO_DEVICE (3), "
                      "HOST_TO_HOST (0) or DEFAULT (4)" % (kind,))


#: kind -> (the destination is device memory, the source is)
_KIND_SIDES = {C.ACL_MEMCPY_HOST_TO_HOST: (False, False),
               C.ACL_MEMCPY_HOST_TO_DEVICE: (True, False),
               C.ACL_MEMCPY_DEVICE_TO_HOST: (False, True),
               C.ACL_MEMCPY_DEVICE_TO_DEVICE: (True, True),
               C.ACL_MEMCPY_DEFAULT: (False, False)}


def _copy_ends(dst, dest_max, src, count, kind):
    """Both ends of a copy whose arguments were checked, or None when it
    copies nothing."""
    _check_copy(dest_max, count, kind)
    return _ends(dst, src, count, kind) if count else None


def _ends(dst, src, count: int, kind):
    """Both ends of a copy, found by their addresses as CANN's unified
    addressing does: ``kind`` only says which ends must be device memory
    when their address is none of ours (a freed pointer is refused, not
    read as host memory)."""
    dev_dst, dev_src = _KIND_SIDES[kind]
    return (_end(dst, count, "destination", dev_dst),
            _end(src, count, "source", dev_src))


def _end(ptr, count: int, what: str, claimed_device: bool):
    """("device", Buffer, offset) for memory from malloc, ("pinned",
    Buffer, offset) for malloc_host's, ("host", address) for any other
    host memory."""
    pin = _pinned(ptr)
    if pin is not None:
        if pin[2] + count > pin[1].size:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s range %s + %d bytes runs past its %d-byte "
                          "pinned allocation" % (what, _hex(ptr), count,
                                                 pin[1].size))
        return ("pinned", pin[1], pin[2])
    hit = device_range(ptr, count, what) if isinstance(ptr, int) else None
    if hit is None and claimed_device:
        hit = _dev_ptr(ptr, count, what)        # refused: not ours
    if hit is not None:
        return ("device", hit[1], hit[2])
    return ("host", _host_ptr(ptr, what))


def _mapped(end) -> int:
    """Process address of a copy end (device memory through its mapping)."""
    return end[1] if end[0] == "host" else end[1].address + end[2]


def _task_addr(end) -> int:
    """Device address a MEMCPY task uses for a device or pinned end."""
    return end[1].dev_addr + end[2]


@api(locked=False)
def memcpy(dst, dest_max, src, count, kind):
    """Synchronous copy of ``count`` bytes; the direction comes from the
    addresses (``kind`` is checked, and ACL_MEMCPY_DEFAULT accepted)."""
    with S.lock:
        ends = _copy_ends(dst, dest_max, src, count, kind)
        if ends is None:
            return
        d, s = ends
        if d[0] != "device" or s[0] != "device":
            # the host side is mapped: one memmove, no task
            ctypes.memmove(_mapped(d), _mapped(s), count)
            return
        stream = d[1].device.default_stream
    stream.memcpy(_task_addr(d), _task_addr(s), count, sync=True)


@api()
def memcpy_async(dst, dest_max, src, count, kind, stream):
    """Copy enqueued on ``stream`` (see the notes of acl.rt); the direction
    comes from the addresses."""
    ends = _copy_ends(dst, dest_max, src, count, kind)
    st = S.get_stream(stream).stream
    if ends is None:
        return
    d, s = ends
    if d[0] != "host" and s[0] != "host":
        st.memcpy(_task_addr(d), _task_addr(s), count)
    elif d[0] == "host" and s[0] == "host":
        st.synchronize()
        ctypes.memmove(d[1], s[1], count)
    else:
        _staged_copy(st, d, s, count)


def _staged_copy(st, d, s, count: int) -> None:
    """A copy between host memory and device or pinned memory, enqueued
    on ``st`` through a pinned staging buffer freed when it is done."""
    staging = st.device.malloc_host(count)
    if s[0] == "host":              # into device or pinned memory
        ctypes.memmove(staging.address, s[1], count)
        seq = st.memcpy(_task_addr(d), staging, count)
        st.after_task(seq, lambda ok, b=staging: b.free())
        return
    seq = st.memcpy(staging, _task_addr(s), count)

    def done(ok, b=staging, dst=d[1], n=count):
        try:
            if ok:
                ctypes.memmove(dst, b.address, n)
        finally:
            b.free()
    st.after_task(seq, done)


def _check_set(max_size, value, count):
    if not isinstance(count, int) or count < 0 or not isinstance(
            max_size, int) or count > max_size:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "count %r must be an int between 0 and max_size %r"
                      % (count, max_size))
    if not isinstance(value, int) or not 0 <= value <= 255:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "value must be a byte (0..255), not %r" % (value,))


@api(locked=False)
def memset(dev_ptr, max_size, value, count):
    """Set ``count`` bytes at ``dev_ptr`` (device or pinned host) to
    ``value``, synchronously."""
    with S.lock:
        _check_set(max_size, value, count)
        if count == 0:
            return
        pin = _pinned(dev_ptr)
        if pin is not None:
            ctypes.memset(dev_ptr, value, count)
            return
        d, _, _ = _dev_ptr(dev_ptr, count, "destination")
        stream = d.dev.default_stream
    stream.memset(dev_ptr, value, count, sync=True)


@api()
def memset_async(dev_ptr, max_size, value, count, stream):
    """memset enqueued on ``stream``."""
    _check_set(max_size, value, count)
    s = S.get_stream(stream).stream
    if count == 0:
        return
    pin = _pinned(dev_ptr)
    if pin is not None:
        s.memset(pin[1].dev_addr + pin[2], value, count)
        return
    _dev_ptr(dev_ptr, count, "destination")
    s.memset(dev_ptr, value, count)


_HOST_ATTRS = (C.ACL_DDR_MEM, C.ACL_DDR_MEM_HUGE, C.ACL_DDR_MEM_NORMAL,
               C.ACL_DDR_MEM_P2P_HUGE, C.ACL_DDR_MEM_P2P_NORMAL)
_HBM_ATTRS = (C.ACL_HBM_MEM, C.ACL_HBM_MEM_HUGE, C.ACL_HBM_MEM_NORMAL,
              C.ACL_HBM_MEM_P2P_HUGE, C.ACL_HBM_MEM_P2P_NORMAL)


@api(2, (0, 0))
def get_mem_info(attr):
    """(free, total, ret) of HBM (ACL_HBM_MEM) or pinned host memory
    (ACL_DDR_MEM) of the current device."""
    d = S.require_context().device
    if attr in _HBM_ATTRS:
        m = d.dev.mem_info(host=False)
    elif attr in _HOST_ATTRS:
        m = d.dev.mem_info(host=True)
    else:
        raise AclFail(C.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      "unknown memory attribute %r: use ACL_HBM_MEM or "
                      "ACL_DDR_MEM" % (attr,))
    return m.free, m.total
