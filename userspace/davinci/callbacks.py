# SPDX-License-Identifier: GPL-2.0
"""Callbacks and futures: the interrupt path turned into Python calls.

The driver queues a notification per context when a task flagged
``DAVINCI_TASK_F_NOTIFY`` completes (whatever its status), when a
``DAVINCI_OP_NOTIFY`` task runs, and when a task fails. A
:class:`Dispatcher` (one per :class:`~davinci.Device`, started on first use)
reads them with ``DAVINCI_IOCTL_NOTIFY_WAIT`` on its own thread and routes
them by the ``user_data`` the runtime put into the task:

* runtime-owned tasks carry ``CALLBACK_TAG`` in the top byte and a token
  below it; the token names the callback entry registered *before* the task
  was submitted, so a notification can never arrive for an unknown entry;
* everything else (user NOTIFY tasks, faults, device lost) goes to a queue
  that :meth:`Device.wait_notification` reads while the dispatcher runs, and
  to listeners (:meth:`Dispatcher.add_listener`).

Python callbacks (:meth:`Stream.add_callback`) run on the dispatcher's
executor thread, one at a time in notification order, so callbacks of one
stream run in stream order, exactly once, and never on the thread that
submitted them. A callback that raises is logged on the
``davinci.callbacks`` logger and counted (:attr:`Dispatcher.errors`); the
thread carries on.

A *blocking* callback holds its stream until it has returned: after the
marker task the stream waits on an event for its next record
(``DAVINCI_OP_EVENT_WAIT`` with ``DAVINCI_TASK_F_WAIT_NEXT``), and the host
makes that record with ``DAVINCI_IOCTL_EVENT_SIGNAL`` once the callback ran.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import itertools
import logging
import queue
import threading
import weakref
from typing import TYPE_CHECKING, Callable

from . import _uapi
from .errors import DavinciError, TaskFailedError, status_hint, status_name

if TYPE_CHECKING:
    from .device import Device, Notification
    from .event import Event
    from .stream import Stream

__all__ = ["Dispatcher", "CALLBACK_TAG", "Future"]

log = logging.getLogger("davinci.callbacks")

#: top byte of the user_data of runtime-owned notifying tasks
CALLBACK_TAG = 0xCB
_TAG_SHIFT = 56
_TOKEN_MASK = (1 << _TAG_SHIFT) - 1
_SLICE_S = 0.1
_UNCLAIMED_MAX = 4096

Future = concurrent.futures.Future


def is_tagged(user_data: int) -> bool:
    return (user_data >> _TAG_SHIFT) == CALLBACK_TAG


class Entry:
    """A registered notification target. ``deliver`` returns True when the
    entry is finished (and is then forgotten)."""

    stream_id = 0

    def deliver(self, n: "Notification") -> bool:   # pragma: no cover
        raise NotImplementedError

    def abandon(self, why: str) -> None:
        """The notification will never come (stream or device gone)."""


class _PyCallback(Entry):
    def __init__(self, disp: "Dispatcher", stream: "Stream", fn, args,
                 blocking_event: "Event | None"):
        self.disp = disp
        self.stream_id = stream.stream_id
        self.fn = fn
        self.args = args
        self.event = blocking_event
        self.future: Future = Future()
        self.future.set_running_or_notify_cancel()

    def deliver(self, n) -> bool:
        if n.type != _uapi.DAVINCI_NOTIFY_COMPLETION:
            return False
        self.disp.execute(self._run, n)
        return True

    def _run(self, n) -> None:
        try:
            if n.status != _uapi.DAVINCI_STATUS_OK:
                self.future.set_exception(TaskFailedError(
                    "stream %d: callback not run, its position in the stream "
                    "completed %s: %s" % (n.stream_id, status_name(n.status),
                                          status_hint(n.status)),
                    n.status, n.stream_id, n.seq, _uapi.DAVINCI_OP_NOP))
                return
            try:
                out = self.fn(*self.args)
            except BaseException as exc:  # noqa: BLE001 - reported, counted
                self.disp.callback_failed(self.fn, exc)
                self.future.set_exception(exc)
            else:
                self.future.set_result(out)
        finally:
            self.disp.release(self.event)

    def abandon(self, why: str) -> None:
        if not self.future.done():
            self.future.set_exception(DavinciError(
                "callback on stream %d will never run: %s"
                % (self.stream_id, why)))


class Dispatcher:
    """Reads a device's notifications on a thread and runs callbacks."""

    def __init__(self, device: "Device"):
        self.device = device
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._entries: dict[int, Entry] = {}
        self._unclaimed: "collections.deque[Notification]" = \
            collections.deque(maxlen=_UNCLAIMED_MAX)
        self._cond = threading.Condition(self._lock)
        self._listeners: list[Callable] = []
        self._events: list["Event"] = []       # idle blocking-callback events
        self._stop = False
        _all.add(self)
        #: callbacks that raised
        self.errors = 0
        #: callbacks run (successfully or not)
        self.delivered = 0
        #: notifications the driver dropped (queue full)
        self.dropped = 0
        self._exec_q: "queue.Queue" = queue.Queue()
        self._reader = threading.Thread(
            target=self._read_loop, daemon=True,
            name="davinci%d-notify" % device.index)
        self._executor = threading.Thread(
            target=self._exec_loop, daemon=True,
            name="davinci%d-callbacks" % device.index)
        self._executor.start()
        self._reader.start()

    # -- registration ---------------------------------------------------------
    @property
    def running(self) -> bool:
        return not self._stop

    def register(self, entry: Entry) -> int:
        """Register ``entry``; returns the user_data to put in its task."""
        with self._lock:
            if self._stop:
                raise DavinciError("the device's callback dispatcher is "
                                   "stopped (device closed)")
            tok = next(self._tokens) & _TOKEN_MASK
            self._entries[tok] = entry
        return (CALLBACK_TAG << _TAG_SHIFT) | tok

    def unregister(self, user_data: int) -> None:
        with self._lock:
            self._entries.pop(user_data & _TOKEN_MASK, None)

    def add_listener(self, fn: Callable[["Notification"], None]) -> None:
        """Call ``fn(notification)`` (on the executor thread) for every
        notification not claimed by a callback."""
        with self._lock:
            self._listeners.append(fn)

    def remove_listener(self, fn) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    # -- reading --------------------------------------------------------------
    def _read_loop(self) -> None:
        dev = self.device
        while not self._stop:
            try:
                n = dev.read_notification(_SLICE_S)
            except DavinciError as exc:
                if self._stop or dev.closed:
                    break
                log.error("davinci%d: notification wait failed: %s; callback "
                          "dispatcher stops", dev.index, exc)
                with self._cond:
                    self._stop = True       # wait_notification reads again
                    self._cond.notify_all()
                self._abandon_all("notification wait failed: %s" % exc)
                self._exec_q.put(None)
                break
            if n is None:
                continue
            self._route(n)

    def _route(self, n: "Notification") -> None:
        if n.dropped:
            self.dropped += n.dropped
            log.warning("davinci%d: the driver dropped %d notification(s) "
                        "(queue full)", self.device.index, n.dropped)
        entry = None
        if is_tagged(n.user_data):
            tok = n.user_data & _TOKEN_MASK
            with self._lock:
                entry = self._entries.get(tok)
            if entry is not None:
                if entry.deliver(n):
                    with self._lock:
                        self._entries.pop(tok, None)
                return
        if n.type == _uapi.DAVINCI_NOTIFY_DEVICE_LOST:
            self._abandon_all("the device was lost")
        with self._cond:
            self._unclaimed.append(n)
            self._cond.notify_all()
            listeners = list(self._listeners)
        for fn in listeners:
            self.execute(fn, n)

    def wait_unclaimed(self, timeout: float | None) -> "Notification | None":
        """Next notification no callback claimed (Device.wait_notification
        while the dispatcher runs)."""
        with self._cond:
            if timeout is None:
                while not self._unclaimed and not self._stop:
                    self._cond.wait(_SLICE_S)
            elif timeout > 0 and not self._unclaimed:
                self._cond.wait_for(lambda: bool(self._unclaimed), timeout)
            return self._unclaimed.popleft() if self._unclaimed else None

    # -- executing ------------------------------------------------------------
    def execute(self, fn, *args) -> None:
        """Run ``fn(*args)`` on the callback thread (in order)."""
        self._exec_q.put((fn, args))

    def _exec_loop(self) -> None:
        while True:
            item = self._exec_q.get()
            if item is None:
                return
            fn, args = item
            try:
                fn(*args)
            except BaseException as exc:  # noqa: BLE001
                self.callback_failed(fn, exc)

    def callback_failed(self, fn, exc: BaseException) -> None:
        """Count and log a callback that raised (its Future has it too)."""
        self.errors += 1
        log.error("davinci%d: callback %r raised %s: %s (the callback thread "
                  "carries on; %d callback error(s) so far)",
                  self.device.index, getattr(fn, "__name__", fn),
                  type(exc).__name__, exc, self.errors,
                  exc_info=(type(exc), exc, exc.__traceback__))

    @property
    def on_callback_thread(self) -> bool:
        return threading.current_thread() is self._executor

    # -- blocking callbacks ---------------------------------------------------
    def idle_event(self) -> "Event":
        """An event for a blocking callback's stream to wait on."""
        with self._lock:
            ev = self._events.pop() if self._events else None
        return ev if ev is not None else self.device.event(timing=False)

    def release(self, ev: "Event | None") -> None:
        """Let the stream waiting on ``ev`` (from :meth:`idle_event`) go on
        and keep ``ev`` for the next blocking callback."""
        if ev is None:
            return
        try:
            ev.signal()
        except DavinciError as exc:
            if not self.device.closed:
                log.error("cannot release a blocking callback's stream: %s",
                          exc)
            return
        with self._lock:
            self._events.append(ev)

    def submit_marker(self, stream: "Stream", entry: Entry,
                      event: "Event | None" = None) -> int:
        """Submit the marker task that runs ``entry`` when ``stream``
        reaches it; with ``event`` (from :meth:`idle_event`) the stream
        then waits until the entry releases that event. Returns the
        marker's user_data."""
        from .stream import make_task
        ud = self.register(entry)
        tasks = [make_task(_uapi.DAVINCI_OP_NOP, user_data=ud,
                           flags=_uapi.DAVINCI_TASK_F_NOTIFY)]
        if event is not None:
            tasks.append(make_task(_uapi.DAVINCI_OP_EVENT_WAIT,
                                   event_id=event.event_id,
                                   flags=_uapi.DAVINCI_TASK_F_WAIT_NEXT))
        try:
            stream.submit(tasks)
        except BaseException:
            self.unregister(ud)
            if event is not None:
                self.release(event)
            raise
        return ud

    def add_callback(self, stream: "Stream", fn, args=(),
                     blocking: bool = False) -> Future:
        """See :meth:`Stream.add_callback`."""
        ev = self.idle_event() if blocking else None
        entry = _PyCallback(self, stream, fn, tuple(args), ev)
        self.submit_marker(stream, entry, ev)
        return entry.future

    def notify_task(self, entry: Entry, task) -> int:
        """Tag ``task`` (a davinci_task) for ``entry`` and set
        DAVINCI_TASK_F_NOTIFY; returns the user_data."""
        ud = self.register(entry)
        task.user_data = ud
        task.flags |= _uapi.DAVINCI_TASK_F_NOTIFY
        return ud

    # -- lifetime -------------------------------------------------------------
    def stream_destroyed(self, stream_id: int) -> None:
        """Entries of a destroyed stream will never be notified."""
        with self._lock:
            gone = [(k, e) for k, e in self._entries.items()
                    if e.stream_id == stream_id]
            for k, _ in gone:
                del self._entries[k]
        for _, e in gone:
            e.abandon("stream %d was destroyed" % stream_id)

    def _abandon_all(self, why: str) -> None:
        with self._lock:
            gone = list(self._entries.values())
            self._entries.clear()
        for e in gone:
            e.abandon(why)

    def stop(self) -> None:
        """Stop reading (before the device closes) and finish the executor.
        Callbacks still waiting for their notification are abandoned."""
        with self._cond:
            if self._stop:
                return
            self._stop = True
            self._cond.notify_all()
        if threading.current_thread() is not self._reader:
            self._reader.join()
        self._abandon_all("the device was closed")
        self._exec_q.put(None)
        if threading.current_thread() is not self._executor:
            self._executor.join(timeout=30)

    def __repr__(self) -> str:
        return "<davinci.Dispatcher of davinci%d, %d pending, %d errors>" % (
            self.device.index, len(self._entries), self.errors)


_all: "weakref.WeakSet[Dispatcher]" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    # before the in-process backend closes its contexts (atexit is LIFO and
    # this module is imported after davinci.transport)
    for d in list(_all):
        try:
            d.stop()
        except Exception:   # noqa: BLE001
            pass
