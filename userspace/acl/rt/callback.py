# SPDX-License-Identifier: GPL-2.0
"""acl.rt callbacks: subscribe_report / launch_callback / process_report.

A launch_callback task is a marker on its stream; when the device reports
it, the davinci callback dispatcher hands it to the queue of the thread
that subscribed the stream, and that thread's process_report runs it.
"""

from __future__ import annotations

import queue
import threading

from davinci.callbacks import Entry
from davinci.device import NotificationType

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api

__all__ = ["subscribe_report", "unsubscribe_report", "launch_callback",
           "process_report", "get_callback_stats"]

#: AclStream -> subscribed thread id
_subscribed: "dict[S.AclStream, int]" = {}
#: thread id -> queue of callbacks ready to run on that thread
_reports: "dict[int, queue.Queue]" = {}
#: thread id -> number of streams it subscribed
_thread_streams: "dict[int, int]" = {}
_cb_stats = {"run": 0, "errors": 0, "not_run": 0}


def forget_subscription(s: S.AclStream) -> None:
    """Stream ``s`` is no longer subscribed by any thread."""
    tid = _subscribed.pop(s, None)
    if tid is not None:
        left = _thread_streams.get(tid, 1) - 1
        if left <= 0:
            _thread_streams.pop(tid, None)
        else:
            _thread_streams[tid] = left


def reset() -> None:
    """Forget every subscription and every report not yet processed
    (acl.finalize)."""
    _subscribed.clear()
    _thread_streams.clear()
    _reports.clear()


class _AclReport(Entry):
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
        if n.type != NotificationType.COMPLETION:
            return False
        q = _reports.get(self.tid)
        if q is None:
            # the thread unsubscribed meanwhile: nobody can run it
            S.log.warning("callback of stream %d dropped: thread %d no longer "
                          "subscribed", self.stream_id, self.tid)
            _cb_stats["not_run"] += 1
            self.release()
            return True
        q.put((self, n))
        return True

    def release(self):
        """Let the stream go on past a blocking callback (once)."""
        ev, self.block_event = self.block_event, None
        if ev is not None:
            self.astream.stream.device.callbacks.release(ev)

    def abandon(self, why):
        _cb_stats["not_run"] += 1


def _thread_ids():
    t = threading.current_thread()
    ids = [threading.get_ident()]
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
    _reports.setdefault(thread_id, queue.Queue())
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
    forget_subscription(s)


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
            q = queue.Queue()
        for tid in ids:
            _reports.setdefault(tid, q)
    try:
        if timeout == -1:
            while True:
                try:
                    item = q.get(timeout=1.0)
                    break
                except queue.Empty:
                    continue
        else:
            item = q.get(timeout=timeout / 1000.0) if timeout else \
                q.get_nowait()
    except queue.Empty:
        raise AclFail(C.ACL_ERROR_RT_REPORT_TIMEOUT,
                      "no callback was reported within %d ms" % timeout,
                      quiet=True) from None
    entry, n = item
    try:
        if not n.ok:
            _cb_stats["not_run"] += 1
            S.log.warning("callback on stream %d not run: the stream failed "
                          "before it (%s)", entry.stream_id, n.status_name)
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
        entry.release()


def get_callback_stats() -> dict:
    """(extension) callbacks run, callbacks that raised, callbacks not run."""
    return dict(_cb_stats)
