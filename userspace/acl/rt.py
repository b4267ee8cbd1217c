# SPDX-License-Identifier: GPL-2.0
"""acl.rt: pyACL's runtime API (devices, contexts, streams, memory, events).

Conventions exactly as pyACL: each function returns ``ret`` or
``(value..., ret)`` where ``ret`` is an aclError code (0 on success).
Pointers are ints: device pointers are device virtual addresses, host
pointers are process addresses.

Host-to-device ``memcpy`` copies with one ``memmove`` from the host pointer
straight into the mapped destination buffer (zero-copy mapping);
device-to-host the other way round; device-to-device is a MEMCPY task on the
device. ``memcpy_async`` uses device MEMCPY tasks: directly when the host
side is pinned memory from ``malloc_host``, else through a pinned staging
buffer (device-to-host results reach the host pointer when the stream is
synchronized).
"""

from __future__ import annotations

import ctypes

import davinci

from . import _state as S
from . import constants as C
from ._state import AclFail, api

__all__ = [
    "set_device", "reset_device", "get_device", "get_device_count",
    "create_context", "destroy_context", "set_context", "get_context",
    "create_stream", "create_stream_with_config", "destroy_stream",
    "synchronize_stream", "synchronize_stream_with_timeout",
    "stream_synchronize", "synchronize_device", "malloc", "free",
    "malloc_host", "free_host", "memcpy", "memcpy_async", "memset",
    "memset_async", "get_mem_info", "create_event", "create_event_with_flag",
    "destroy_event", "record_event", "reset_event", "synchronize_event",
    "query_event", "query_event_status", "event_elapsed_time",
    "stream_wait_event", "get_run_mode", "query_stream_status",
]


# ---------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------
def _device_count() -> int:
    return davinci.find_backend().device_count()


@api(1, (0,))
def get_device_count():
    """(count, ret)"""
    return _device_count()


def _check_id(device_id) -> int:
    if not isinstance(device_id, int) or isinstance(device_id, bool):
        raise AclFail(C.ACL_ERROR_RT_INVALID_DEVICEID,
                      "device id must be an int, not %r" % (device_id,))
    return device_id


@api()
def set_device(device_id):
    """Open device ``device_id`` (reference counted) and make its default
    context current in this thread."""
    _check_id(device_id)
    d = S.devices.get(device_id)
    if d is None:
        dev = davinci.Device(device_id)
        d = S.AclDevice(device_id, dev)
        d.default_ctx = S.AclContext(d, default=True)
        S.contexts[d.default_ctx.handle] = d.default_ctx
        S.devices[device_id] = d
    d.refs += 1
    S.set_current_context(d.default_ctx)


@api()
def reset_device(device_id):
    """Release ``device_id``; the last release frees everything on it."""
    _check_id(device_id)
    d = S.devices.get(device_id)
    if d is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_DEVICEID,
                      "device %d was not set in this process: call "
                      "acl.rt.set_device(%d) first" % (device_id, device_id))
    d.refs -= 1
    if d.refs <= 0:
        cur = S.current_context()
        S.release_device(d)
        if cur is not None and cur.device is d:
            S.set_current_context(None)


@api(1, (-1,))
def get_device():
    """(device_id, ret) of the current context."""
    return S.require_context().device.id


@api(1, (C.ACL_HOST,))
def get_run_mode():
    """(ACL_HOST, ret): the runtime always runs on the host."""
    return C.ACL_HOST


# ---------------------------------------------------------------------------
# contexts
# ---------------------------------------------------------------------------
@api(1, (0,))
def create_context(device_id):
    """(context, ret): a new context on ``device_id``, made current."""
    _check_id(device_id)
    d = S.devices.get(device_id)
    if d is None:
        # creating a context sets the device implicitly, as aclrtCreateContext
        dev = davinci.Device(device_id)
        d = S.AclDevice(device_id, dev)
        d.default_ctx = S.AclContext(d, default=True)
        S.contexts[d.default_ctx.handle] = d.default_ctx
        S.devices[device_id] = d
    d.refs += 1
    ctx = S.AclContext(d)
    S.contexts[ctx.handle] = ctx
    S.set_current_context(ctx)
    return ctx.handle


@api()
def destroy_context(context):
    """Destroy a context made by create_context (its streams go with it)."""
    ctx = S.contexts.get(context)
    if ctx is None or ctx.default:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "context %r was not made by acl.rt.create_context or is "
                      "already destroyed" % (context,))
    for h, s in list(S.streams.items()):
        if s.ctx is ctx:
            s.stream.destroy()
            del S.streams[h]
    del S.contexts[context]
    if S.current_context() is ctx:
        S.set_current_context(None)
    d = ctx.device
    d.refs -= 1
    if d.refs <= 0:
        S.release_device(d)


@api()
def set_context(context):
    """Make ``context`` current in this thread."""
    ctx = S.contexts.get(context)
    if ctx is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "context %r does not exist" % (context,))
    S.set_current_context(ctx)


@api(1, (0,))
def get_context():
    """(context, ret) current in this thread."""
    return S.require_context().handle


# ---------------------------------------------------------------------------
# streams
# ---------------------------------------------------------------------------
@api(1, (0,))
def create_stream():
    """(stream, ret) in the current context."""
    ctx = S.require_context()
    s = S.AclStream(ctx)
    S.streams[s.handle] = s
    return s.handle


@api(1, (0,))
def create_stream_with_config(priority=0, flag=0):
    """(stream, ret) with a priority (0 highest .. 7 lowest)."""
    ctx = S.require_context()
    s = S.AclStream(ctx, int(priority))
    S.streams[s.handle] = s
    return s.handle


@api()
def destroy_stream(stream):
    """Destroy a stream (queued tasks are cancelled)."""
    s = S.streams.pop(stream, None)
    if s is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "stream %r does not exist or is already destroyed"
                      % (stream,))
    _forget_subscription(s)
    s.stream.destroy()


def _forget_subscription(s) -> None:
    tid = _subscribed.pop(s, None)
    if tid is not None:
        left = _thread_streams.get(tid, 1) - 1
        if left <= 0:
            _thread_streams.pop(tid, None)
        else:
            _thread_streams[tid] = left


def _sync_stream(stream, timeout):
    with S.lock:
        s = S.get_stream(stream)
    s.stream.synchronize(timeout)


@api(locked=False)
def synchronize_stream(stream):
    """Wait for every task of ``stream`` (0: the default stream)."""
    _sync_stream(stream, None)


@api(locked=False)
def synchronize_stream_with_timeout(stream, timeout):
    """As synchronize_stream; ``timeout`` in ms (-1: forever);
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it runs out."""
    t = None if timeout is None or timeout < 0 else timeout / 1000.0
    try:
        _sync_stream(stream, t)
    except davinci.TimeoutError as exc:
        raise AclFail(C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, str(exc)) from None


#: the seed article's spelling
stream_synchronize = synchronize_stream


@api(1, (1,))
def query_stream_status(stream):
    """(status, ret): 0 complete, 1 not ready (aclrtStreamStatus)."""
    s = S.get_stream(stream)
    st = s.stream.query()
    return 0 if st.completed_seq >= st.submitted_seq else 1


@api(locked=False)
def synchronize_device():
    """Wait for every stream of the current device."""
    with S.lock:
        d = S.require_context().device
    d.dev.synchronize()


# ---------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------
@api(1, (0,))
def malloc(size, policy=C.ACL_MEM_MALLOC_HUGE_FIRST):
    """(dev_ptr, ret): device memory (HBM) on the current device."""
    d = S.require_context().device
    if not isinstance(size, int) or size <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "size must be a positive int, not %r" % (size,))
    if policy not in (0, 1, 2, 3, 4, 5):
        raise AclFail(C.ACL_ERROR_RT_INVALID_MALLOC_TYPE,
                      "unknown malloc policy %r: use ACL_MEM_MALLOC_HUGE_FIRST"
                      " (0), HUGE_ONLY (1) or NORMAL_ONLY (2)" % (policy,))
    buf = d.dev.malloc(size, policy % 3)
    d.buffers[buf.dev_addr] = buf
    return buf.dev_addr


@api()
def free(dev_ptr):
    """Free device memory from malloc."""
    for d in _devices_first():
        buf = d.buffers.pop(dev_ptr, None)
        if buf is not None:
            buf.free()
            return
    raise AclFail(C.ACL_ERROR_RT_MEMORY_FREE,
                  "%s is not device memory from acl.rt.malloc (already freed, "
                  "or its device was reset)" % _hex(dev_ptr))


@api(1, (0,))
def malloc_host(size):
    """(host_ptr, ret): pinned host memory tasks can DMA to and from."""
    d = S.require_context().device
    if not isinstance(size, int) or size <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "size must be a positive int, not %r" % (size,))
    buf = d.dev.malloc_host(size)
    return d.add_host(buf)


@api()
def free_host(host_ptr):
    """Free pinned host memory from malloc_host."""
    for d in _devices_first():
        buf = d.remove_host(host_ptr)
        if buf is not None:
            buf.free()
            return
    raise AclFail(C.ACL_ERROR_RT_MEMORY_FREE,
                  "%s is not pinned host memory from acl.rt.malloc_host"
                  % _hex(host_ptr))


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
    for d in _devices_first():
        hit = d.find_device_ptr(ptr)
        if hit is not None:
            buf, off = hit
            if off + count > buf.size:
                raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                              "%s range %s + %d bytes runs past its %d-byte "
                              "allocation" % (what, _hex(ptr), count, buf.size))
            return d, buf, off
    raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                  "%s %s is not device memory from acl.rt.malloc (freed, or "
                  "its device was reset)" % (what, _hex(ptr)))


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


def _check_copy(dest_max, count, kind):
    if not isinstance(count, int) or count < 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "count must be an int >= 0")
    if not isinstance(dest_max, int) or count > dest_max:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "count %r exceeds dest_max %r" % (count, dest_max))
    if kind not in (0, 1, 2, 3):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "unknown memcpy kind %r: use ACL_MEMCPY_HOST_TO_DEVICE "
                      "(1), DEVICE_TO_HOST (2), DEVICE_TO_DEVICE (3) or "
                      "HOST_TO_HOST (0)" % (kind,))


@api(locked=False)
def memcpy(dst, dest_max, src, count, kind):
    """Synchronous copy of ``count`` bytes of ``kind`` (ACL_MEMCPY_*)."""
    with S.lock:
        _check_copy(dest_max, count, kind)
        if count == 0:
            return
        if kind == C.ACL_MEMCPY_HOST_TO_HOST:
            ctypes.memmove(_host_ptr(dst, "destination"),
                           _host_ptr(src, "source"), count)
            return
        if kind == C.ACL_MEMCPY_HOST_TO_DEVICE:
            _, buf, off = _dev_ptr(dst, count, "destination")
            ctypes.memmove(buf.address + off, _host_ptr(src, "source"), count)
            return
        if kind == C.ACL_MEMCPY_DEVICE_TO_HOST:
            _, buf, off = _dev_ptr(src, count, "source")
            ctypes.memmove(_host_ptr(dst, "destination"), buf.address + off,
                           count)
            return
        d, _, _ = _dev_ptr(dst, count, "destination")
        _dev_ptr(src, count, "source")
        stream = d.internal_stream
    stream.memcpy(dst, src, count, sync=True)


@api()
def memcpy_async(dst, dest_max, src, count, kind, stream):
    """Copy enqueued on ``stream`` (see the module notes)."""
    _check_copy(dest_max, count, kind)
    s = S.get_stream(stream).stream
    if count == 0:
        return
    if kind == C.ACL_MEMCPY_HOST_TO_HOST:
        s.synchronize()
        ctypes.memmove(_host_ptr(dst, "destination"), _host_ptr(src, "source"),
                       count)
        return
    if kind == C.ACL_MEMCPY_HOST_TO_DEVICE:
        _dev_ptr(dst, count, "destination")
        pin = _pinned(src)
        if pin is not None and pin[2] + count <= pin[1].size:
            s.memcpy(dst, pin[1].dev_addr + pin[2], count)
            return
        staging = s.device.malloc_host(count)
        ctypes.memmove(staging.address, _host_ptr(src, "source"), count)
        seq = s.memcpy(dst, staging, count)
        s.after_task(seq, lambda ok, b=staging: b.free())
        return
    if kind == C.ACL_MEMCPY_DEVICE_TO_HOST:
        _dev_ptr(src, count, "source")
        pin = _pinned(dst)
        if pin is not None and pin[2] + count <= pin[1].size:
            s.memcpy(pin[1].dev_addr + pin[2], src, count)
            return
        dst = _host_ptr(dst, "destination")
        staging = s.device.malloc_host(count)
        seq = s.memcpy(staging, src, count)

        def done(ok, b=staging, dst=dst, n=count):
            try:
                if ok:
                    ctypes.memmove(dst, b.address, n)
            finally:
                b.free()
        s.after_task(seq, done)
        return
    _dev_ptr(dst, count, "destination")
    _dev_ptr(src, count, "source")
    s.memcpy(dst, src, count)


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
        stream = d.internal_stream
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


# ---------------------------------------------------------------------------
# events
# ---------------------------------------------------------------------------
@api(1, (0,))
def create_event():
    """(event, ret) on the current device."""
    d = S.require_context().device
    e = S.AclEvent(d)
    S.events[e.handle] = e
    return e.handle


@api(1, (0,))
def create_event_with_flag(flag):
    """(event, ret); every event records timestamps here."""
    d = S.require_context().device
    e = S.AclEvent(d, int(flag))
    S.events[e.handle] = e
    return e.handle


@api()
def destroy_event(event):
    e = S.events.pop(event, None)
    if e is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "event %r does not exist or is already destroyed"
                      % (event,))
    e.event.destroy()


@api()
def record_event(event, stream):
    """Record ``event`` on ``stream`` (0: default stream)."""
    e = S.get_event(event)
    s = S.get_stream(stream)
    s.stream.record(e.event)


@api()
def reset_event(event, stream):
    """Accepted for compatibility; a later record replaces the old one."""
    S.get_event(event)
    S.get_stream(stream)


@api()
def stream_wait_event(stream, event):
    """Later tasks of ``stream`` wait for ``event``'s last record."""
    e = S.get_event(event)
    s = S.get_stream(stream)
    s.stream.wait_event(e.event)


@api(locked=False)
def synchronize_event(event):
    """Wait on the host for ``event``'s records to complete."""
    with S.lock:
        e = S.get_event(event)
    e.event.synchronize()


@api(1, (C.ACL_EVENT_STATUS_NOT_READY,))
def query_event(event):
    """(status, ret): ACL_EVENT_STATUS_COMPLETE or _NOT_READY."""
    e = S.get_event(event)
    return (C.ACL_EVENT_STATUS_COMPLETE if e.event.query().complete
            else C.ACL_EVENT_STATUS_NOT_READY)


@api(1, (C.ACL_EVENT_RECORDED_STATUS_NOT_READY,))
def query_event_status(event):
    """(status, ret): ACL_EVENT_RECORDED_STATUS_COMPLETE once a record of
    the event completed, else _NOT_READY (never recorded, or pending)."""
    e = S.get_event(event)
    from davinci import _uapi
    return (C.ACL_EVENT_RECORDED_STATUS_COMPLETE
            if e.event.query().state == _uapi.DAVINCI_EVENT_RECORDED
            else C.ACL_EVENT_RECORDED_STATUS_NOT_READY)


@api(1, (0.0,))
def event_elapsed_time(start, end):
    """(ms, ret) of device time between two completed records."""
    a = S.get_event(start)
    b = S.get_event(end)
    qa, qb = a.event.query(), b.event.query()
    from davinci import _uapi
    if qa.state != _uapi.DAVINCI_EVENT_RECORDED or \
            qb.state != _uapi.DAVINCI_EVENT_RECORDED:
        raise AclFail(C.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                      "both events must be recorded and complete: synchronize "
                      "them first")
    if qb.timestamp_ns < qa.timestamp_ns:
        raise AclFail(C.ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                      "the end event was recorded before the start event")
    return (qb.timestamp_ns - qa.timestamp_ns) / 1e6




# ---------------------------------------------------------------------------
# callbacks: subscribe_report / launch_callback / process_report
# ---------------------------------------------------------------------------
import queue as _queue
import threading as _threading

from davinci import _uapi as _U
from davinci.callbacks import Entry as _Entry

#: AclStream -> subscribed thread id
_subscribed: "dict[S.AclStream, int]" = {}
#: thread id -> queue of callbacks ready to run on that thread
_reports: "dict[int, _queue.Queue]" = {}
#: thread id -> number of streams it subscribed
_thread_streams: "dict[int, int]" = {}
_cb_stats = {"run": 0, "errors": 0, "not_run": 0}


class _AclReport(_Entry):
    """A launch_callback task: queued to its subscribed thread when the
    device reports it."""

    def __init__(self, fn, user_data, block, astream, tid):
        self.fn = fn
        self.user_data = user_data
        self.block_event = None
        self.astream = astream
        self.stream_id = astream.stream.stream_id
        self.tid = tid

    def deliver(self, n) -> bool:
        if n.type != _U.DAVINCI_NOTIFY_COMPLETION:
            return False
        q = _reports.get(self.tid)
        if q is None:
            # the thread unsubscribed meanwhile: nobody can run it
            S.log.warning("callback of stream %d dropped: thread %d no longer "
                          "subscribed", self.stream_id, self.tid)
            _cb_stats["not_run"] += 1
            self._release()
            return True
        q.put((self, n))
        return True

    def _release(self):
        ev, self.block_event = self.block_event, None
        if ev is not None:
            self.astream.stream.device.callbacks._release(ev)

    def abandon(self, why):
        _cb_stats["not_run"] += 1


def _thread_ids():
    t = _threading.current_thread()
    ids = [_threading.get_ident()]
    nid = getattr(t, "native_id", None)
    if nid is not None:
        ids.append(nid)
    return ids


@api()
def subscribe_report(thread_id, stream):
    """Callbacks launched on ``stream`` run on thread ``thread_id`` (its
    acl.rt.process_report calls). ``thread_id``: from acl.util.start_thread,
    threading.get_ident() or threading.get_native_id()."""
    if not isinstance(thread_id, int) or isinstance(thread_id, bool):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "thread_id must be an int, not %r" % (thread_id,))
    s = S.get_stream(stream)
    if s in _subscribed:
        raise AclFail(C.ACL_ERROR_RT_STREAM_SUBSCRIBE,
                      "stream %r is already subscribed by thread %d: "
                      "unsubscribe it first" % (stream, _subscribed[s]))
    s.stream.device.callbacks       # start the notification thread
    _subscribed[s] = thread_id
    _reports.setdefault(thread_id, _queue.Queue())
    _thread_streams[thread_id] = _thread_streams.get(thread_id, 0) + 1


@api()
def unsubscribe_report(thread_id, stream):
    """Undo subscribe_report."""
    s = S.get_stream(stream)
    tid = _subscribed.get(s)
    if tid is None:
        raise AclFail(C.ACL_ERROR_RT_STREAM_SUBSCRIBE,
                      "stream %r is not subscribed by any thread" % (stream,))
    if tid != thread_id:
        raise AclFail(C.ACL_ERROR_RT_THREAD_SUBSCRIBE,
                      "stream %r is subscribed by thread %d, not %r"
                      % (stream, tid, thread_id))
    del _subscribed[s]
    left = _thread_streams.get(tid, 1) - 1
    if left <= 0:
        _thread_streams.pop(tid, None)
    else:
        _thread_streams[tid] = left


@api()
def launch_callback(fn, user_data, block, stream):
    """Enqueue a host callback ``fn(user_data)`` on ``stream``; it runs on
    the subscribed thread (acl.rt.process_report). ``block``
    ACL_CALLBACK_BLOCK: later tasks of the stream wait until it returned;
    ACL_CALLBACK_NO_BLOCK: they do not. 107015
    (ACL_ERROR_RT_STREAM_NO_CB_REG) when no thread subscribed the stream."""
    if not callable(fn):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "callback must be callable, not %r" % (fn,))
    if block not in (C.ACL_CALLBACK_NO_BLOCK, C.ACL_CALLBACK_BLOCK):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "block must be ACL_CALLBACK_NO_BLOCK (0) or "
                      "ACL_CALLBACK_BLOCK (1), not %r" % (block,))
    s = S.get_stream(stream)
    tid = _subscribed.get(s)
    if tid is None:
        raise AclFail(C.ACL_ERROR_RT_STREAM_NO_CB_REG,
                      "no thread subscribed stream %r: call "
                      "acl.rt.subscribe_report(thread_id, stream) first"
                      % (stream,))
    st = s.stream
    disp = st.device.callbacks
    entry = _AclReport(fn, user_data, block, s, tid)
    if block == C.ACL_CALLBACK_BLOCK:
        entry.block_event = disp.idle_event()
    try:
        disp.submit_marker(st, entry, entry.block_event)
    except BaseException:
        entry.block_event = None        # submit_marker released it
        raise


@api(locked=False)
def process_report(timeout):
    """Run the next callback reported to this thread, waiting up to
    ``timeout`` ms (-1: forever). ACL_ERROR_RT_REPORT_TIMEOUT (507012) when
    none arrived (also on a thread that subscribed no stream yet). A
    callback that raises is logged and counted
    (acl.rt.get_callback_stats()); this thread carries on."""
    if not isinstance(timeout, int) or isinstance(timeout, bool) or \
            timeout < -1:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "timeout must be -1 (forever) or a number of ms >= 0, "
                      "not %r" % (timeout,))
    q = None
    with S.lock:
        ids = _thread_ids()
        for tid in ids:
            q = _reports.get(tid)
            if q is not None:
                break
        else:
            # not subscribed (yet): wait like a subscribed thread with
            # nothing to do, under every id of this thread, so a later
            # subscribe_report(id, stream) shares this queue
            q = _queue.Queue()
        for tid in ids:
            _reports.setdefault(tid, q)
    try:
        if timeout == -1:
            while True:
                try:
                    item = q.get(timeout=1.0)
                    break
                except _queue.Empty:
                    continue
        else:
            item = q.get(timeout=timeout / 1000.0) if timeout else \
                q.get_nowait()
    except _queue.Empty:
        raise AclFail(C.ACL_ERROR_RT_REPORT_TIMEOUT,
                      "no callback was reported within %d ms" % timeout,
                      quiet=True) from None
    entry, n = item
    try:
        if n.status != _U.DAVINCI_STATUS_OK:
            _cb_stats["not_run"] += 1
            S.log.warning("callback on stream %d not run: the stream failed "
                          "before it (%s)", entry.stream_id,
                          _U.STATUS_NAMES.get(n.status, n.status))
            return
        try:
            entry.fn(entry.user_data)
        except Exception as exc:  # noqa: BLE001 - reported, counted
            _cb_stats["errors"] += 1
            S.log.error("callback %r raised %s: %s (callback thread carries "
                        "on)", getattr(entry.fn, "__name__", entry.fn),
                        type(exc).__name__, exc, exc_info=True)
        finally:
            _cb_stats["run"] += 1
    finally:
        entry._release()


def get_callback_stats() -> dict:
    """(extension) callbacks run, callbacks that raised, callbacks not run."""
    return dict(_cb_stats)


# ---------------------------------------------------------------------------
# the seed article's task and interrupt calls (compatibility layer)
# ---------------------------------------------------------------------------
_SEED_OPS = {
    "VectorAdd": _U.DAVINCI_OP_ADD, "Add": _U.DAVINCI_OP_ADD,
    "VectorSub": _U.DAVINCI_OP_SUB, "Sub": _U.DAVINCI_OP_SUB,
    "VectorMul": _U.DAVINCI_OP_MUL, "Mul": _U.DAVINCI_OP_MUL,
    "VectorDiv": _U.DAVINCI_OP_DIV, "RealDiv": _U.DAVINCI_OP_DIV,
    "VectorMax": _U.DAVINCI_OP_MAX, "Maximum": _U.DAVINCI_OP_MAX,
    "VectorMin": _U.DAVINCI_OP_MIN, "Minimum": _U.DAVINCI_OP_MIN,
    "Relu": _U.DAVINCI_OP_RELU, "Exp": _U.DAVINCI_OP_EXP,
}
_UNARY = (_U.DAVINCI_OP_RELU, _U.DAVINCI_OP_EXP)
_ACL_TO_DV = {C.ACL_FLOAT: (_U.DAVINCI_DTYPE_FLOAT32, 4),
              C.ACL_FLOAT16: (_U.DAVINCI_DTYPE_FLOAT16, 2),
              C.ACL_BF16: (_U.DAVINCI_DTYPE_BFLOAT16, 2),
              C.ACL_INT32: (_U.DAVINCI_DTYPE_INT32, 4)}

#: interrupt types passed to register_interrupt_callback's callback
RT_INTERRUPT_TASK_DONE = _U.DAVINCI_NOTIFY_COMPLETION
RT_INTERRUPT_TASK_FAULT = _U.DAVINCI_NOTIFY_FAULT
_interrupt = {"fn": None, "user_data": None}


def _operand(ptr, nbytes, what):
    pin = _pinned(ptr)
    if pin is not None:
        if pin[2] + nbytes > pin[1].size:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "%s: %d bytes at %s overflow the pinned buffer"
                          % (what, nbytes, _hex(ptr)))
        return pin[1].dev_addr + pin[2]
    _dev_ptr(ptr, nbytes, what)
    return ptr


def _seed_task(task_config):
    if not isinstance(task_config, dict):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "task_config must be a dict such as {'op_type': "
                      "'VectorAdd', 'input_x': ptr_x, 'input_y': ptr_y, "
                      "'output_z': ptr_z, 'count': n}")
    op = task_config.get("op_type")
    opcode = _SEED_OPS.get(op)
    if opcode is None:
        raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                      "unknown op_type %r: use one of %s"
                      % (op, ", ".join(sorted(_SEED_OPS))))
    count = task_config.get("count")
    if not isinstance(count, int) or count <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "task_config['count'] must be a positive int, not %r"
                      % (count,))
    dt = task_config.get("dtype", C.ACL_FLOAT)
    if dt not in _ACL_TO_DV:
        raise AclFail(C.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                      "dtype %r not supported: use ACL_FLOAT, ACL_FLOAT16, "
                      "ACL_BF16 or ACL_INT32" % (dt,))
    code, size = _ACL_TO_DV[dt]
    nbytes = count * size
    for k in ("input_x", "output_z") + (() if opcode in _UNARY
                                        else ("input_y",)):
        if k not in task_config:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "task_config has no %r" % k)
    x = _operand(task_config["input_x"], nbytes, "input_x")
    z = _operand(task_config["output_z"], nbytes, "output_z")
    y = 0 if opcode in _UNARY else _operand(task_config["input_y"], nbytes,
                                            "input_y")
    return davinci.make_task(opcode, dtype=code, dst=z, src0=x, src1=y,
                             count=count)


@api(1, (0,))
def launch_task(stream, task_config):
    """(task_id, ret): the seed's call. Enqueues one op described by a dict
    (op_type VectorAdd/Add, Sub, Mul, RealDiv, Maximum, Minimum, Relu, Exp;
    input_x, input_y, output_z device pointers; count elements; dtype an
    ACL_* type, default ACL_FLOAT). task_id is the task's sequence number in
    its stream."""
    s = S.get_stream(stream)
    return s.stream.launch(_seed_task(task_config))


@api()
def register_interrupt_callback(fn, user_data=None):
    """The seed's call: ``fn(interrupt_type, task_id, user_data)`` runs on
    the device's callback thread for every task launched with
    launch_task_with_interrupt: interrupt_type RT_INTERRUPT_TASK_DONE (1),
    after RT_INTERRUPT_TASK_FAULT (3) when the task failed. ``fn`` None
    unregisters."""
    if fn is not None and not callable(fn):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "interrupt callback must be callable or None")
    _interrupt["fn"] = fn
    _interrupt["user_data"] = user_data


class _Interrupt(_Entry):
    def __init__(self, disp, stream_id):
        self.disp = disp
        self.stream_id = stream_id
        self.fn = _interrupt["fn"]
        self.user_data = _interrupt["user_data"]
        self.task_id = 0

    def deliver(self, n) -> bool:
        if n.type in (_U.DAVINCI_NOTIFY_COMPLETION, _U.DAVINCI_NOTIFY_FAULT):
            if self.fn is not None:
                self.disp._execute(self.fn, int(n.type), int(n.seq),
                                   self.user_data)
        return n.type == _U.DAVINCI_NOTIFY_COMPLETION


@api(1, (0,))
def launch_task_with_interrupt(stream, task_config):
    """(task_id, ret): as launch_task, and the device interrupts the host
    when the task completes: the callback of register_interrupt_callback
    runs on the callback thread."""
    s = S.get_stream(stream)
    if _interrupt["fn"] is None:
        raise AclFail(C.ACL_ERROR_RT_STREAM_NO_CB_REG,
                      "no interrupt callback: call "
                      "acl.rt.register_interrupt_callback(fn, user_data) "
                      "first")
    t = _seed_task(task_config)
    disp = s.stream.device.callbacks
    entry = _Interrupt(disp, s.stream.stream_id)
    ud = disp.notify_task(entry, t)
    try:
        seq = s.stream.launch(t)
    except BaseException:
        disp.unregister(ud)
        raise
    entry.task_id = seq
    return seq


__all__ += [
    "subscribe_report", "unsubscribe_report", "launch_callback",
    "process_report", "get_callback_stats", "launch_task",
    "register_interrupt_callback", "launch_task_with_interrupt",
]
