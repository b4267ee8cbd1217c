# SPDX-License-Identifier: GPL-2.0
"""acl.rt events: create, record, wait for, query and time them."""

from __future__ import annotations

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api

__all__ = ["create_event", "create_event_with_flag",
           "create_event_ex_with_flag", "query_event_wait_status",
           "destroy_event",
           "record_event", "reset_event", "synchronize_event", "query_event",
           "query_event_status", "event_elapsed_time", "stream_wait_event"]


def _new_event(flag=0) -> int:
    d = S.require_context().device
    return S.register(S.events, S.AclEvent(d, int(flag)))


@api(1, (0,))
def create_event():
    """(event, ret) on the current device."""
    return _new_event()


@api(1, (0,))
def create_event_with_flag(flag):
    """(event, ret); every event records timestamps here."""
    return _new_event(flag)


@api(1, (0,))
def create_event_ex_with_flag(flag):
    """(event, ret): as create_event_with_flag (ACL_EVENT_SYNC,
    ACL_EVENT_TIME_LINE, ... are accepted; every event records
    timestamps)."""
    return _new_event(flag)


@api()
def destroy_event(event):
    S.take_handle(S.events, "event", event).event.destroy()


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
    return (C.ACL_EVENT_RECORDED_STATUS_COMPLETE if e.event.query().recorded
            else C.ACL_EVENT_RECORDED_STATUS_NOT_READY)


@api(1, (C.ACL_EVENT_WAIT_STATUS_NOT_READY,))
def query_event_wait_status(event):
    """(status, ret): ACL_EVENT_WAIT_STATUS_COMPLETE once a stream waiting
    for ``event`` may go on (its last record completed), else
    _NOT_READY."""
    e = S.get_event(event)
    return (C.ACL_EVENT_WAIT_STATUS_COMPLETE if e.event.query().complete
            else C.ACL_EVENT_WAIT_STATUS_NOT_READY)


@api(1, (0.0,))
def event_elapsed_time(start, end):
    """(ms, ret) of device time between two completed records."""
    a = S.get_event(start)
    b = S.get_event(end)
    qa, qb = a.event.query(), b.event.query()
    if not (qa.recorded and qb.recorded):
        raise AclFail(C.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                      "both events must be recorded and complete: synchronize "
                      "them first")
    if qb.timestamp_ns < qa.timestamp_ns:
        raise AclFail(C.ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                      "the end event was recorded before the start event")
    return (qb.timestamp_ns - qa.timestamp_ns) / 1e6
