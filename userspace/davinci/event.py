# SPDX-License-Identifier: GPL-2.0
"""Events: points in a stream that the host or other streams can wait for.

``stream.record(event)`` (or ``event.record(stream)``) marks a point;
``other.wait_event(event)`` makes another stream wait for it;
``event.synchronize()`` waits on the host; ``Event.elapsed_ms(a, b)`` is the
device time between two completed records (timing events only).

Lifetime: an event lives until :meth:`Event.destroy` or until its device is
closed or reset; it is not destroyed by garbage collection, because queued
tasks that record or wait for a destroyed event fail with INVALID_EVENT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _uapi
from .errors import DavinciError, InvalidArgumentError, InvalidHandleError, \
    TimeoutError

if TYPE_CHECKING:
    from .device import Device
    from .stream import Stream

__all__ = ["Event", "EventState"]



@dataclass(frozen=True)
class EventState:
    """``EVENT_QUERY`` of an event."""
    state: int
    timestamp_ns: int
    records_submitted: int
    records_completed: int

    @property
    def recorded(self) -> bool:
        return self.state == _uapi.DAVINCI_EVENT_RECORDED

    @property
    def complete(self) -> bool:
        """No record pending (never recorded counts as complete)."""
        return self.state != _uapi.DAVINCI_EVENT_PENDING


class Event:
    """A device event. Create with :meth:`Device.event`."""

    def __init__(self, device: "Device", timing: bool = True):
        self.device = device
        self._transport = device.transport
        self.timing = bool(timing)
        c = _uapi.davinci_event_create(
            flags=_uapi.DAVINCI_EVENT_TIMING if timing else 0)
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_EVENT_CREATE, c)
        self.event_id = int(c.event_id)
        self._destroyed = False
        self._dead_why = ""

    def check(self) -> None:
        """Raise :class:`InvalidHandleError` when destroyed."""
        if self._destroyed:
            raise InvalidHandleError("event %d %s; create a new event"
                                     % (self.event_id,
                                        self._dead_why or "was destroyed"))

    def invalidate(self, why: str) -> None:
        """Mark dead without telling the driver (the device's reset or close
        freed it already)."""
        self._destroyed = True
        self._dead_why = why

    @property
    def destroyed(self) -> bool:
        return self._destroyed

    def record(self, stream: "Stream") -> int:
        """Record this event on ``stream``; returns the task's sequence."""
        return stream.record(self)

    def signal(self) -> None:
        """Record the event from the host, completing now."""
        self.check()
        self._transport.ioctl(
            _uapi.DAVINCI_IOCTL_EVENT_SIGNAL,
            _uapi.davinci_event_id(event_id=self.event_id))

    def query(self) -> EventState:
        """EVENT_QUERY: state, timestamp and record counts."""
        self.check()
        q = _uapi.davinci_event_query(event_id=self.event_id)
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_EVENT_QUERY, q)
        return EventState(int(q.state), int(q.timestamp_ns),
                          int(q.records_submitted), int(q.records_completed))

    def is_complete(self) -> bool:
        """True when no record of the event is pending."""
        return self.query().complete

    @property
    def timestamp_ns(self) -> int:
        """Device time of the last completed record."""
        return self.query().timestamp_ns

    def synchronize(self, timeout: float | None = None) -> None:
        """Wait on the host until every record submitted so far completed."""
        self.check()
        done = self.device.transport.wait_ioctl(
            _uapi.DAVINCI_IOCTL_EVENT_WAIT,
            lambda ms: _uapi.davinci_event_wait(event_id=self.event_id,
                                                timeout_ms=ms),
            timeout)
        if done is None:
            raise TimeoutError(
                "event %d not reached after %.3f s; the stream that records "
                "it is still busy or blocked" % (self.event_id, timeout))

    wait = synchronize

    @staticmethod
    def elapsed_ms(start: "Event", end: "Event") -> float:
        """Device milliseconds between the last records of two events."""
        for e in (start, end):
            if not e.timing:
                raise InvalidArgumentError(
                    "event %d was created with timing=False: create it with "
                    "timing=True to measure elapsed time" % e.event_id)
        a, b = start.query(), end.query()
        for e, s in ((start, a), (end, b)):
            if s.state != _uapi.DAVINCI_EVENT_RECORDED:
                raise DavinciError(
                    "event %d has %s: record it and synchronize it before "
                    "asking for elapsed time" % (
                        e.event_id, "no completed record"
                        if s.state == _uapi.DAVINCI_EVENT_NOT_RECORDED
                        else "a record still pending"))
        return (b.timestamp_ns - a.timestamp_ns) / 1e6

    def elapsed_since(self, start: "Event") -> float:
        return Event.elapsed_ms(start, self)

    def destroy(self) -> None:
        """Destroy the event."""
        if self._destroyed:
            return
        self.invalidate("was destroyed")
        self.device.forget(self)
        if not self._transport.closed:
            self._transport.ioctl(
                _uapi.DAVINCI_IOCTL_EVENT_DESTROY,
                _uapi.davinci_event_id(event_id=self.event_id))

    close = destroy

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc) -> None:
        self.destroy()

    def __repr__(self) -> str:
        return "<davinci.Event %d%s>" % (self.event_id,
                                         " destroyed" if self._destroyed
                                         else "")
