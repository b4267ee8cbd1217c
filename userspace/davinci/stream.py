# SPDX-License-Identifier: GPL-2.0
"""Streams: user-mode submission and completion rings.

A :class:`Stream` maps its submission ring (SQ) and completion ring (CQ).
:meth:`Stream.submit` writes task descriptors into the SQ. On a polled
stream (the default where the driver has ``DAVINCI_FEAT_SQ_POLL``) the
device's dispatcher reads the ring's tail itself, so a submission is a few
stores to shared memory; only when the dispatcher sleeps (the ring says
``NEED_WAKEUP``) does the runtime ring the doorbell. Otherwise every batch
rings it (one ioctl for the whole batch). The device runs the stream's tasks
in order and writes a completion per task into the CQ; :meth:`Stream.drain`
reads them (advancing the CQ head). :meth:`Stream.synchronize` watches the
CQ header for the last task as :mod:`davinci.waiting` says (spin, yield),
then waits in the driver (``STREAM_WAIT``), drains, and raises
:class:`TaskFailedError` if a task failed.

Descriptors can be built without a Python object per task: a numpy array of
:data:`TASK_DTYPE` (:func:`task_array`) goes into the ring with one copy.

Host <-> device copies:

* synchronous ``copy_from_host`` / ``copy_to_host`` wait for the stream's
  earlier work, then copy directly between the host array and the mapped
  device buffer (zero-copy: one host memcpy, no staging);
* asynchronous ones (``sync=False``) copy the host data into a pinned host
  staging buffer through its numpy view and enqueue a device MEMCPY task
  (for device-to-host the staging buffer is copied into the host array when
  the stream is synchronized). Pinned :class:`Buffer` sources and
  destinations are copied by the device directly with :meth:`memcpy`.
"""

from __future__ import annotations

import collections
import ctypes
import errno as _errno
import os
import struct
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from . import _corelib, _uapi, waiting
from .errors import (DavinciError, InvalidArgumentError, InvalidHandleError,
                     TaskFailedError, TimeoutError, status_hint, status_name)
from .memory import Buffer

from .graph import Graph

if TYPE_CHECKING:
    from .device import Device
    from .event import Event

__all__ = ["Stream", "Completion", "StreamState", "TaskInfo", "make_task",
           "Task", "TASK_DTYPE", "task_array"]

Task = _uapi.davinci_task
#: numpy dtype of one task descriptor (struct davinci_task, 128 bytes).
TASK_DTYPE = np.dtype(_uapi.davinci_task)
_TASK_SIZE = ctypes.sizeof(_uapi.davinci_task)
_CPL_SIZE = ctypes.sizeof(_uapi.davinci_completion)
_ENTRIES = _uapi.DAVINCI_RING_ENTRIES_OFFSET
_M32 = 0xFFFFFFFF
_MAX_KEPT_COMPLETIONS = 65536
_CPL_DTYPE = np.dtype(_uapi.davinci_completion)
# a completion's status as the n-th 32-bit word of the ring's entries
_CPL_WORDS = _CPL_SIZE // 4
_STATUS_WORD = _uapi.davinci_completion.status.offset // 4
# drains of this many entries or fewer scan their statuses without numpy
_SMALL_DRAIN = 16


def _any_status(raw: bytes, n: int) -> bool:
    """Whether any of the ``n`` completion entries in ``raw`` has a
    nonzero status: through a memoryview for a few, numpy for many."""
    if n <= _SMALL_DRAIN:
        return any(memoryview(raw).cast("I")[_STATUS_WORD::_CPL_WORDS])
    return bool(np.count_nonzero(np.frombuffer(raw, _CPL_DTYPE)["status"]))


def make_task(opcode: int, **fields) -> _uapi.davinci_task:
    """A zeroed task descriptor with ``opcode`` and the given fields."""
    t = _uapi.davinci_task()
    t.opcode = opcode
    for k, v in fields.items():
        setattr(t, k, v)
    return t


def task_array(n: int) -> np.ndarray:
    """``n`` zeroed task descriptors as a numpy structured array: fill its
    fields column-wise (``a["opcode"] = ...``) and pass it to
    :meth:`Stream.submit`."""
    return np.zeros(n, TASK_DTYPE)


def _descriptors(tasks) -> np.ndarray:
    """``tasks`` as one contiguous array of descriptors."""
    if isinstance(tasks, np.ndarray):
        if tasks.dtype != TASK_DTYPE or tasks.ndim != 1:
            raise InvalidArgumentError(
                "submit() takes a 1-D array of davinci.TASK_DTYPE, not %s %s"
                % (tasks.ndim, tasks.dtype))
        return np.ascontiguousarray(tasks)
    raw = []
    for t in tasks:
        if not isinstance(t, _uapi.davinci_task):
            raise InvalidArgumentError(
                "submit() takes davinci_task structs or an array of "
                "davinci.TASK_DTYPE, not %r" % type(t).__name__)
        raw.append(bytes(t))
    return np.frombuffer(b"".join(raw), TASK_DTYPE)


_EVENT_OPS = (_uapi.DAVINCI_OP_EVENT_RECORD, _uapi.DAVINCI_OP_EVENT_WAIT)


def _has_event_ops(arr: np.ndarray) -> bool:
    """Event records and waits take their event's generation when the
    driver takes them in, so they are taken in at once (by a doorbell), in
    the order the host issued them across streams, not when the dispatcher
    next passes by."""
    ops = arr["opcode"]
    if len(ops) <= 8:
        return any(op in _EVENT_OPS for op in ops.tolist())
    return bool(np.isin(ops, _EVENT_OPS).any())


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


@dataclass(frozen=True)
class Completion:
    """One entry of the completion ring."""
    seq: int
    user_data: int
    start_ns: int
    end_ns: int
    status: int
    opcode: int
    #: the AI core that ran it, or None (events, notifications, failures
    #: before it ran, and drivers before ABI 1.3)
    aicore: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == _uapi.DAVINCI_STATUS_OK

    @property
    def status_name(self) -> str:
        return status_name(self.status)

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns) if self.start_ns else 0


def _completion(e) -> Completion:
    core = int(e["aicore"])
    return Completion(int(e["seq"]), int(e["user_data"]), int(e["start_ns"]),
                      int(e["end_ns"]), int(e["status"]), int(e["opcode"]),
                      None if core == _uapi.DAVINCI_TRACE_NO_CORE else core)


@dataclass(frozen=True)
class StreamState:
    """``STREAM_QUERY`` of a stream."""
    state: int
    submitted_seq: int
    completed_seq: int
    error_status: int
    priority: int

    @property
    def idle(self) -> bool:
        return self.state == _uapi.DAVINCI_STREAM_IDLE

    @property
    def error(self) -> bool:
        return self.state == _uapi.DAVINCI_STREAM_ERROR


@dataclass(frozen=True)
class TaskInfo:
    """``TASK_QUERY`` of one task."""
    seq: int
    state: int
    status: int
    start_ns: int
    end_ns: int

    @property
    def done(self) -> bool:
        return self.state == _uapi.DAVINCI_TASK_DONE


def _to_ms(timeout: float | None) -> int | None:
    if timeout is None:
        return None
    if timeout < 0:
        raise InvalidArgumentError("timeout must be >= 0 seconds")
    return min(int(timeout * 1000 + 0.999), _M32)


class Stream:
    """An in-order queue of tasks on a device.

    Create with :meth:`Device.stream`. Use as a context manager to
    synchronize and destroy it at the end of the block.
    """

    def __init__(self, device: "Device", priority: int = 0,
                 sq_entries: int = 256, cq_entries: int = 256,
                 polled: bool | None = None,
                 wait_mode: "waiting.WaitMode | str | None" = None,
                 continue_on_failure: bool | None = False):
        if not 0 <= priority <= 7:
            raise InvalidArgumentError("stream priority must be 0 (highest) "
                                       "to 7 (lowest), not %r" % (priority,))
        self.device = device
        self._transport = t = device.transport
        can_poll = device.version.has(_uapi.DAVINCI_FEAT_SQ_POLL)
        if polled is None:
            polled = can_poll and \
                os.environ.get("DAVINCI_SQ_POLL", "1") != "0"
        elif polled and not can_poll:
            raise InvalidArgumentError(
                "this driver (%s) has no polled submission rings; create "
                "the stream with polled=False or update the driver"
                % device.version)
        #: the device polls the SQ: submitting needs no system call
        self.polled = bool(polled)
        #: how waits on this stream wait; None: the process's mode
        self.wait_mode = None if wait_mode is None else \
            waiting.parse_mode(wait_mode)
        # the driver publishes completions in the CQ header (ABI 1.3)
        self._header_seq = can_poll
        if continue_on_failure is None:
            continue_on_failure = device.version.has(
                _uapi.DAVINCI_FEAT_STREAM_CONTINUE)
        elif continue_on_failure:
            self._check_can_continue()
        #: a failed task does not stop the stream (DAVINCI_STREAM_F_CONTINUE)
        self.continue_on_failure = bool(continue_on_failure)
        flags = _uapi.DAVINCI_STREAM_F_POLLED if self.polled else 0
        if continue_on_failure:
            flags |= _uapi.DAVINCI_STREAM_F_CONTINUE
        c = _uapi.davinci_stream_create(
            sq_entries=sq_entries, cq_entries=cq_entries, priority=priority,
            flags=flags)
        t.ioctl(_uapi.DAVINCI_IOCTL_STREAM_CREATE, c)
        self.stream_id = int(c.stream_id)
        self.priority = priority
        self._lock = threading.RLock()
        self._destroyed = False
        self._dead_why = ""
        try:
            self._sq = t.map(c.sq_mmap_offset, c.sq_size)
            self._cq = t.map(c.cq_mmap_offset, c.cq_size)
        except BaseException:
            t.try_ioctl(_uapi.DAVINCI_IOCTL_STREAM_DESTROY,
                        _uapi.davinci_stream_id(stream_id=self.stream_id))
            raise
        self._sqh = _uapi.davinci_ring_header.from_address(self._sq.address)
        self._cqh = _corelib.completion_header(self._cq.address)
        # The CQ head this stream last stored or read. Only the host writes
        # a completion ring's head (the device only reads it), so this is
        # the ring's head, and synchronize() compares the tail with it: one
        # load from the ring less per call.
        self._cq_head = int(self._cqh.head)
        self.sq_entries = int(self._sqh.entries)
        self.cq_entries = int(self._cqh.entries)
        self._sq_tail = int(self._sqh.tail)
        self._publish = _corelib.ring_publisher() if self.polled else None
        self._submitted_seq = 0
        # completion entries read so far, oldest first (bounded)
        self._kept: "collections.deque[bytes]" = collections.deque()
        self._nkept = 0
        self._first_failure: Completion | None = None
        # (seq, fn): host work to run once task seq has completed
        self._after: list[tuple[int, Callable[[], None]]] = []
        self._capture: "Graph | None" = None

    # -- state ------------------------------------------------------------------
    def check(self) -> None:
        """Raise :class:`InvalidHandleError` when destroyed."""
        if self._destroyed:
            raise InvalidHandleError(
                "stream %d %s; create a new stream"
                % (self.stream_id, self._dead_why or "was destroyed"))

    @property
    def destroyed(self) -> bool:
        return self._destroyed

    def _check_can_continue(self) -> None:
        if not self.device.version.has(_uapi.DAVINCI_FEAT_STREAM_CONTINUE):
            raise InvalidArgumentError(
                "this driver (%s) has no streams that go on after a failed "
                "task (ABI 1.10); use continue_on_failure=False or update "
                "the driver" % self.device.version)

    def set_continue_on_failure(self, on: bool) -> None:
        """Switch the stream's failure mode (STREAM_SET_FLAGS) for the tasks
        that complete from now on. ``True``: a failed task completes with
        its status and the next task runs; :meth:`synchronize` raises the
        failure once. ``False``: a failed task stops the stream until
        :meth:`reset` (the default). A stream already stopped by a failure
        stays stopped until :meth:`reset`."""
        self.check()
        if on:
            self._check_can_continue()
        elif not self.device.version.has(
                _uapi.DAVINCI_FEAT_STREAM_CONTINUE):
            return      # it stops on failure: nothing to switch
        self._transport.ioctl(
            _uapi.DAVINCI_IOCTL_STREAM_SET_FLAGS,
            _uapi.davinci_stream_flags(
                stream_id=self.stream_id,
                flags=_uapi.DAVINCI_STREAM_F_CONTINUE if on else 0))
        self.continue_on_failure = bool(on)

    @property
    def ring_bytes(self) -> int:
        """Bytes of the pinned host pool its two rings take: they are not
        in ``mem_info(host=True).ctx_used``, which counts buffers."""
        return self._sq.length + self._cq.length

    @property
    def needs_wakeup(self) -> bool:
        """The device's dispatcher has stopped polling this polled ring and
        sleeps: the next submission rings the doorbell (io_uring's
        ``IORING_SQ_NEED_WAKEUP``). False on a stream that is not polled."""
        with self._lock:
            self.check()
            return self.polled and bool(
                self._sqh.flags & _uapi.DAVINCI_RING_F_NEED_WAKEUP)

    def invalidate(self, why: str) -> None:
        """Mark dead without telling the driver (the device's reset or close
        freed it already); host work waiting on its tasks runs as failed."""
        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
            self._dead_why = why
            self._sqh = self._cqh = None
            self._sq.close()
            self._cq.close()
            after, self._after = self._after, []
        for _, fn in after:
            try:
                fn(False)
            except Exception:
                pass

    # -- submission --------------------------------------------------------------
    def submit(self, tasks: "Iterable[_uapi.davinci_task] | np.ndarray"
               ) -> list[int]:
        """Write ``tasks`` into the submission ring; returns their sequence
        numbers.

        ``tasks``: davinci_task structs, or a 1-D numpy array of
        :data:`TASK_DTYPE` (written into the ring with one copy). On a
        polled stream nothing more is needed unless the device's dispatcher
        sleeps; a malformed descriptor is taken in and fails there
        (:class:`TaskFailedError` with status INVALID_TASK when the stream
        is waited for). On a stream that is not polled the doorbell is rung
        once per batch (per ring-full for batches larger than the ring),
        and a batch with a malformed descriptor is refused whole with
        :class:`InvalidArgumentError`. While the stream is being captured
        (:meth:`capture`) the tasks are recorded, not run, and get no
        sequence numbers: the list is empty.
        """
        arr = _descriptors(tasks)
        n = len(arr)
        if not n:
            return []
        with self._lock:
            self.check()
            self._drain_entries()   # keep the completion ring from overflowing
            if self.polled:
                first = self._submitted_seq + 1
                self._publish_polled(arr.ctypes.data, n, _has_event_ops(arr))
                return list(range(first, self._submitted_seq + 1))
            seqs: list[int] = []
            i = 0
            while i < n:
                k = min(self._ring_room(), n - i)
                if k <= 0:
                    raise DavinciError(
                        "submission ring of stream %d is full (head %d tail "
                        "%d); the driver did not take earlier tasks in"
                        % (self.stream_id, self._sqh.head, self._sq_tail))
                first, last = self._doorbell_batch(arr, i, k)
                seqs.extend(range(first, last + 1))
                i += k
        return seqs

    def _ring_room(self) -> int:
        """Free slots in the submission ring."""
        return self.sq_entries - ((self._sq_tail - self._sqh.head) & _M32)

    def _write_ring(self, src: int, k: int) -> int:
        """Copy ``k`` descriptors at address ``src`` into the slots from the
        tail on (two copies when they wrap); returns the new tail,
        unpublished."""
        base = self._sq.address + _ENTRIES
        slot = self._sq_tail % self.sq_entries
        first = min(k, self.sq_entries - slot)
        ctypes.memmove(base + slot * _TASK_SIZE, src, first * _TASK_SIZE)
        if k > first:
            ctypes.memmove(base, src + first * _TASK_SIZE,
                           (k - first) * _TASK_SIZE)
        return (self._sq_tail + k) & _M32

    def _publish_polled(self, src: int, n: int, in_order: bool) -> None:
        """Write and publish ``n`` descriptors at address ``src`` on a
        polled ring (lock held). ``in_order``: they hold event records or
        waits, taken in at once (see :func:`_has_event_ops`)."""
        i = 0
        while i < n:
            k = min(self._ring_room(), n - i)
            if k <= 0:
                self._wait_for_room()
                continue
            self._sq_tail = self._write_ring(src + i * _TASK_SIZE, k)
            flags = self._publish(self._sq.address, self._sq_tail)
            if self._capture is None:   # captured tasks get no numbers
                self._submitted_seq += k
            i += k
            if in_order or flags & _uapi.DAVINCI_RING_F_NEED_WAKEUP:
                self._ring_doorbell()

    def _ring_doorbell(self) -> _uapi.davinci_doorbell:
        db = _uapi.davinci_doorbell(stream_id=self.stream_id,
                                    sq_tail=self._sq_tail)
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_DOORBELL, db)
        return db

    def _wait_for_room(self) -> None:
        """The polled ring is full (lock held). Its head moves when the
        dispatcher takes tasks in; when the stream already has as many
        tasks queued as the device allows, that waits for completions.
        Watches for room, not for the head to move: the dispatcher may have
        taken everything in since the ring was found full."""
        h, c = self._sqh, self._cqh
        if waiting.poll_until(lambda: self._ring_room() > 0, None):
            return
        while self._ring_room() <= 0:
            if c.status == _uapi.DAVINCI_STATUS_QUEUE_FAULT:
                self._raise_failed(_uapi.DAVINCI_STATUS_QUEUE_FAULT)
            self._ring_doorbell()       # takes in what fits now
            if self._ring_room() > 0:
                return
            nxt = int(c.seq) + 1        # a completion makes room
            if nxt <= int(h.seq):
                self._wait(nxt, None)

    def _doorbell_batch(self, arr: np.ndarray, i: int, k: int
                        ) -> tuple[int, int]:
        """Write ``arr[i:i+k]`` and ring the doorbell for them (not polled;
        lock held); returns the first and last sequence numbers."""
        old_tail = self._sq_tail
        self._sq_tail = self._write_ring(arr.ctypes.data + i * _TASK_SIZE, k)
        self._sqh.tail = self._sq_tail
        try:
            db = self._ring_doorbell()
        except InvalidArgumentError as exc:
            self._sq_tail = self._sqh.tail = old_tail
            raise InvalidArgumentError(
                "stream %d: the driver rejected the batch of %d task(s) (a "
                "descriptor is malformed: unknown opcode, dtype or flags, or "
                "a non-zero unused field); nothing of it was submitted"
                % (self.stream_id, k), exc.errno) from None
        except BaseException:
            self._sq_tail = self._sqh.tail = old_tail
            raise
        if db.last_seq:
            self._submitted_seq = int(db.last_seq)
        return int(db.first_seq), int(db.last_seq)

    # -- task graphs ---------------------------------------------------------------
    def capture(self) -> Graph:
        """A context manager that records the tasks this stream gets in its
        block into a :class:`davinci.graph.Graph` instead of running them."""
        self.check()
        return Graph(self, self._transport)

    def begin_capture(self, graph: Graph) -> None:
        """Called by :class:`Graph` once the driver captures this stream."""
        with self._lock:
            self._capture = graph

    @property
    def capturing(self) -> "Graph | None":
        """The graph a capture block is recording this stream's tasks
        into, else None."""
        return self._capture

    def end_capture(self) -> None:
        """Called by :class:`Graph` as its capture block ends."""
        with self._lock:
            self._capture = None

    def launch_graph(self, graph_id: int) -> tuple[int, int]:
        """Queue graph ``graph_id``'s tasks on this stream with one ioctl,
        after what it holds already; returns their first and last sequence
        numbers. Use :meth:`Graph.launch`."""
        with self._lock:
            self.check()
            if self._capture is not None:
                raise InvalidArgumentError(
                    "stream %d is being captured: launch graphs on it after "
                    "the capture block" % self.stream_id)
            if self._cqh.head != self._cqh.tail:
                self._drain_entries()
            arg = _uapi.davinci_graph_launch(graph_id=graph_id,
                                             stream_id=self.stream_id)
            while True:
                err = self._transport.try_ioctl(
                    _uapi.DAVINCI_IOCTL_GRAPH_LAUNCH, arg)
                if err != _errno.EBUSY:
                    break
                self._wait(0, None)     # no room for the whole graph yet
            if err:
                raise self._transport.error(
                    err, _uapi.DAVINCI_IOCTL_GRAPH_LAUNCH)
            self._submitted_seq = int(arg.last_seq)
            return int(arg.first_seq), int(arg.last_seq)

    def launch(self, task: _uapi.davinci_task) -> int:
        """Submit one task; returns its sequence number."""
        if not self.polled or type(task) is not _uapi.davinci_task:
            return self.submit([task])[0]
        with self._lock:
            self.check()
            c = self._cqh
            if c.head != c.tail:
                self._drain_entries()
            in_order = task.opcode in _EVENT_OPS
            if in_order or self._capture is not None or \
                    self._ring_room() <= 0:
                self._publish_polled(ctypes.addressof(task), 1, in_order)
                return self._submitted_seq
            # the common case of _publish_polled without its loop
            self._sq_tail = self._write_ring(ctypes.addressof(task), 1)
            self._submitted_seq += 1
            if self._publish(self._sq.address, self._sq_tail) & \
                    _uapi.DAVINCI_RING_F_NEED_WAKEUP:
                self._ring_doorbell()
            return self._submitted_seq

    # -- completion ------------------------------------------------------------
    def drain(self) -> list[Completion]:
        """Read every new completion from the completion ring."""
        return [_completion(e) for e in
                np.frombuffer(self._drain_entries(), _CPL_DTYPE)]

    def _drain_entries(self) -> bytes:
        """New completion entries (struct davinci_completion each), copied
        out of the ring with at most two copies; no object per task, and
        no numpy for a few of them that all succeeded (a synchronize after
        each task reads one)."""
        with self._lock:
            if self._destroyed:
                return b""
            h = self._cqh
            head = h.head
            tail = h.tail
            n = (tail - head) & _M32
            if not n:
                return b""
            if n > self.cq_entries:
                n = self.cq_entries
                head = (tail - n) & _M32
            base = self._cq.address + _ENTRIES
            slot = head % self.cq_entries
            first = min(n, self.cq_entries - slot)
            raw = ctypes.string_at(base + slot * _CPL_SIZE, first * _CPL_SIZE)
            if n > first:
                raw += ctypes.string_at(base, (n - first) * _CPL_SIZE)
            # the ring first: a synchronize() in between sees the two
            # differ and waits, as it would have before this drain
            h.head = self._cq_head = tail
            if self._first_failure is None and _any_status(raw, n):
                self._note_failure(np.frombuffer(raw, _CPL_DTYPE))
            self._kept.append(raw)
            self._nkept += n
            while self._nkept - len(self._kept[0]) // _CPL_SIZE >= \
                    _MAX_KEPT_COMPLETIONS:
                self._nkept -= len(self._kept.popleft()) // _CPL_SIZE
        return raw

    def _note_failure(self, entries: np.ndarray) -> None:
        """Keep the first of ``entries`` that failed (not cancelled or
        aborted after another's failure) for the error synchronize()
        raises."""
        st = entries["status"]
        bad = np.flatnonzero((st != _uapi.DAVINCI_STATUS_OK) &
                             (st != _uapi.DAVINCI_STATUS_CANCELLED) &
                             (st != _uapi.DAVINCI_STATUS_ABORTED))
        if len(bad):
            self._first_failure = _completion(entries[bad[0]])

    def settle(self) -> None:
        """Read new completions and run the host work (callbacks, staged
        copies) of every task that completed. A stream another thread
        destroys meanwhile has nothing left to settle: checked and used
        under the stream's lock, so this never fails for that."""
        with self._lock:
            if self._destroyed:
                return
            self._drain_entries()
            q = _uapi.davinci_stream_query(stream_id=self.stream_id)
            self.device.transport.ioctl(_uapi.DAVINCI_IOCTL_STREAM_QUERY, q)
        self._run_after(int(q.completed_seq))

    def _run_after(self, completed_seq: int) -> None:
        if not self._after:
            return
        with self._lock:
            ready = [(s, fn) for s, fn in self._after if s <= completed_seq]
            self._after = [(s, fn) for s, fn in self._after
                           if s > completed_seq]
        for seq, fn in ready:
            c = self.completion(seq)
            fn(c is None or c.ok)

    def completion(self, seq: int) -> Completion | None:
        """The completion of task ``seq`` if it was read from the ring
        (the last 65536 read are kept)."""
        self._drain_entries()
        with self._lock:
            for raw in reversed(self._kept):
                chunk = np.frombuffer(raw, _CPL_DTYPE)
                seqs = chunk["seq"]
                if seqs[0] <= seq <= seqs[-1]:
                    i = int(np.searchsorted(seqs, seq))
                    if i < len(seqs) and seqs[i] == seq:
                        return _completion(chunk[i])
        return None

    @property
    def overflow(self) -> int:
        """Completions the driver dropped because the ring was full."""
        self.check()
        return int(self._cqh.overflow)

    def _wait(self, seq: int, timeout: float | None) -> _uapi.davinci_stream_wait:
        w = self.device.transport.wait_ioctl(
            _uapi.DAVINCI_IOCTL_STREAM_WAIT,
            lambda ms: _uapi.davinci_stream_wait(stream_id=self.stream_id,
                                                 timeout_ms=ms, seq=seq),
            timeout)
        if w is None:
            # a failed ioctl returns no out fields: ask the stream
            q = self.query()
            raise TimeoutError(
                "stream %d: task %s not complete after %.3f s (%d of %d tasks "
                "done); wait longer, or cancel or reset the stream"
                % (self.stream_id, seq or "(last)", timeout, q.completed_seq,
                   q.submitted_seq))
        return w

    def wait(self, seq: int = 0, timeout: float | None = None) -> None:
        """Wait until task ``seq`` (0: the last submitted) completed.

        Watches the completion ring's header first, as the wait mode says
        (:mod:`davinci.waiting`), then sleeps in the driver. Raises
        :class:`TaskFailedError` when the stream is in the error state (on a
        ``continue_on_failure`` stream: once for the first task up to
        ``seq`` that failed since the last raise, the others ran on),
        :class:`TimeoutError` when ``timeout`` seconds ran out.
        """
        self.check()
        if self._capture is not None:
            raise InvalidArgumentError(
                "stream %d is being captured: its tasks run when the graph "
                "is launched; wait after the capture block" % self.stream_id)
        target = seq or self._submitted_seq
        h = self._cqh
        if self._header_seq and target <= self._submitted_seq and (
                not target or
                waiting.poll_until(lambda: h.seq >= target, timeout,
                                   self.wait_mode)):
            completed, status = int(h.seq), int(h.status)
        else:
            w = self._wait(seq, timeout)
            completed, status = int(w.completed_seq), int(w.status)
        self._drain_entries()
        self._run_after(completed)
        if status:
            self._raise_failed(status)
        if self._first_failure is not None and self.continue_on_failure:
            self.raise_failure(target)

    def raise_failure(self, upto: int | None = None) -> None:
        """On a ``continue_on_failure`` stream: raise (once) the
        :class:`TaskFailedError` of the first task that failed since the
        last raise, among the completions read so far (up to task ``upto``
        when given); nothing when none failed."""
        with self._lock:
            c = self._first_failure
            if c is None or (upto is not None and c.seq > upto):
                return
            self._first_failure = None
        raise TaskFailedError(
            "stream %d: task %d (%s) failed with status %s: %s; the stream "
            "went on with the tasks after it (continue_on_failure)"
            % (self.stream_id, c.seq, _uapi.OP_NAMES.get(
                c.opcode, "opcode %d" % c.opcode), status_name(c.status),
               status_hint(c.status, c.opcode)),
            c.status, self.stream_id, c.seq, c.opcode)

    def synchronize(self, timeout: float | None = None) -> None:
        """Wait for every task submitted so far (see :meth:`wait`)."""
        h = self._cqh
        if self._header_seq and h is not None and not self._after and \
                h.seq >= self._submitted_seq and not h.status and \
                self._capture is None and h.tail == self._cq_head and \
                self._first_failure is None:
            return      # idle, nothing to read: no wait, no lock
        self.wait(0, timeout)

    def _raise_failed(self, status: int) -> None:
        c = self._first_failure
        where = ""
        seq = opcode = None
        if c is not None and c.status == status:
            seq, opcode = c.seq, c.opcode
            where = " task %d (%s)" % (c.seq, _uapi.OP_NAMES.get(
                c.opcode, "opcode %d" % c.opcode))
        raise TaskFailedError(
            "stream %d:%s failed with status %s: %s; later tasks are aborted "
            "until stream.reset()" % (self.stream_id, where,
                                      status_name(status),
                                      status_hint(status, opcode)),
            status, self.stream_id, seq, opcode)

    def query(self) -> StreamState:
        """STREAM_QUERY: state, submitted and completed counts, error."""
        self.check()
        q = _uapi.davinci_stream_query(stream_id=self.stream_id)
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_STREAM_QUERY, q)
        return StreamState(int(q.state), int(q.submitted_seq),
                           int(q.completed_seq), int(q.error_status),
                           int(q.priority))

    def task(self, seq: int) -> TaskInfo:
        """TASK_QUERY of task ``seq``."""
        self.check()
        q = _uapi.davinci_task_query(stream_id=self.stream_id, seq=seq)
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_TASK_QUERY, q)
        return TaskInfo(seq, int(q.state), int(q.status), int(q.start_ns),
                        int(q.end_ns))

    def cancel(self, seq: int) -> bool:
        """Cancel task ``seq``: False when it had already completed."""
        self.check()
        q = _uapi.davinci_task_query(stream_id=self.stream_id, seq=seq)
        t = self._transport
        err = t.try_ioctl(_uapi.DAVINCI_IOCTL_TASK_CANCEL, q)
        if err == _errno.EALREADY:
            return False
        if err:
            raise t.error(err, _uapi.DAVINCI_IOCTL_TASK_CANCEL)
        return True

    def reset(self) -> None:
        """Leave the error state (STREAM_RESET)."""
        self.check()
        self._transport.ioctl(
            _uapi.DAVINCI_IOCTL_STREAM_RESET,
            _uapi.davinci_stream_id(stream_id=self.stream_id))
        self._drain_entries()
        self._first_failure = None

    def destroy(self) -> None:
        """Destroy the stream (queued tasks are cancelled by the driver)."""
        if self._destroyed:
            return
        sid = self.stream_id
        self.invalidate("was destroyed")
        self.device.forget(self)
        if not self._transport.closed:
            self._transport.ioctl(
                _uapi.DAVINCI_IOCTL_STREAM_DESTROY,
                _uapi.davinci_stream_id(stream_id=sid))

    close = destroy

    def __del__(self):
        # an idle, unreferenced stream is destroyed; one with work still
        # queued is left to the driver until the device closes (destroying
        # would cancel that work)
        try:
            if not self._destroyed and not self._transport.closed \
                    and not self._after and self.query().idle:
                self.destroy()
        except Exception:
            pass

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        try:
            if exc_type is None and not self._destroyed:
                self.synchronize()
        finally:
            self.destroy()

    def __repr__(self) -> str:
        return "<davinci.Stream %d of davinci%d%s>" % (
            self.stream_id, self.device.index,
            " destroyed" if self._destroyed else "")

    # -- task helpers -------------------------------------------------------------
    def _finish(self, seq: int, sync: bool) -> int:
        if sync:
            self.wait(seq)
        return seq

    def nop(self, microseconds: int = 0, user_data: int = 0,
            notify: bool = False, sync: bool = False) -> int:
        """A NOP task, busy for ``microseconds`` on the device."""
        t = make_task(_uapi.DAVINCI_OP_NOP, count=microseconds,
                      user_data=user_data,
                      flags=_uapi.DAVINCI_TASK_F_NOTIFY if notify else 0)
        return self._finish(self.launch(t), sync)

    def memcpy(self, dst, src, nbytes: int | None = None, dst_offset: int = 0,
               src_offset: int = 0, sync: bool = False) -> int:
        """Device copy of ``nbytes`` from ``src`` to ``dst``.

        ``dst``/``src``: :class:`Buffer` (HBM or pinned host) or a device
        address. Enqueued as a MEMCPY task; ``sync=True`` waits for it.
        """
        d = _addr(dst, dst_offset)
        s = _addr(src, src_offset)
        if nbytes is None:
            if not isinstance(src, Buffer):
                raise InvalidArgumentError("memcpy from a raw address needs "
                                           "nbytes")
            nbytes = src.size - src_offset
        _check_range(dst, dst_offset, nbytes, "destination")
        _check_range(src, src_offset, nbytes, "source")
        t = make_task(_uapi.DAVINCI_OP_MEMCPY, dst=d, src0=s, count=nbytes)
        return self._finish(self.launch(t), sync)

    def memset(self, dst, value: int, nbytes: int | None = None,
               offset: int = 0, sync: bool = False) -> int:
        """Set ``nbytes`` of ``dst`` to byte ``value`` (MEMSET task)."""
        if not 0 <= int(value) <= 255:
            raise InvalidArgumentError("memset value must be a byte (0..255)")
        d = _addr(dst, offset)
        if nbytes is None:
            if not isinstance(dst, Buffer):
                raise InvalidArgumentError("memset of a raw address needs "
                                           "nbytes")
            nbytes = dst.size - offset
        _check_range(dst, offset, nbytes, "destination")
        t = make_task(_uapi.DAVINCI_OP_MEMSET, dst=d, count=nbytes,
                      imm=int(value))
        return self._finish(self.launch(t), sync)

    def copy_from_host(self, dst: Buffer, data, offset: int = 0,
                       sync: bool = True) -> int:
        """Copy host ``data`` (numpy array or bytes-like) into ``dst``.

        ``sync=True``: waits for the stream's earlier tasks, then writes
        directly into the mapped buffer (zero-copy); returns 0.
        ``sync=False``: stages ``data`` in pinned host memory now (so the
        caller may reuse it at once) and enqueues a device MEMCPY; returns
        its sequence number.
        """
        if sync and type(data) is np.ndarray:
            # a host copy through the mapping once the stream is idle: no
            # task, so never slower than a task round trip. The buffer
            # checks its state and the range before it waits.
            dst.copy_from_array(data, offset, self)
            return 0
        dst.check()
        mv = _host_bytes(data)
        n = mv.nbytes
        _check_range(dst, offset, n, "destination")
        if sync:
            self.synchronize()
            dst.write(mv, offset)
            return 0
        if n == 0:
            return self.nop()
        staging = self.device.malloc_host(n)
        staging.write(mv)
        seq = self.memcpy(dst, staging, n, dst_offset=offset)
        self.after_task(seq, lambda ok: staging.free())
        return seq

    def copy_to_host(self, src: Buffer, out: np.ndarray | None = None,
                     nbytes: int | None = None, offset: int = 0,
                     sync: bool = True):
        """Copy ``src`` to host memory.

        ``sync=True``: waits for the stream's earlier tasks, then copies
        straight out of the mapped buffer; returns ``out`` (or new bytes as
        a uint8 array). ``sync=False``: needs ``out``; enqueues a device
        MEMCPY into a pinned staging buffer, copied into ``out`` when the
        stream is synchronized; returns the task's sequence number.
        """
        if sync and nbytes is None and type(out) is np.ndarray:
            flags = out.flags
            if flags.c_contiguous and flags.writeable:
                # as copy_from_host: checked, then waited for, then copied
                src.copy_to_array(out, None, offset, self)
                return out
        src.check()
        if out is not None:
            if not isinstance(out, np.ndarray) or not out.flags.c_contiguous \
                    or not out.flags.writeable:
                raise InvalidArgumentError("out must be a writable "
                                           "C-contiguous numpy array")
            if nbytes is None:
                nbytes = out.nbytes
            elif nbytes > out.nbytes:
                raise InvalidArgumentError("out has %d bytes, %d requested"
                                           % (out.nbytes, nbytes))
        if nbytes is None:
            nbytes = src.size - offset
        _check_range(src, offset, nbytes, "source")
        if sync:
            self.synchronize()
            if out is None:
                out = np.empty(nbytes, np.uint8)
            src.copy_to_array(out, nbytes, offset)
            return out
        if out is None:
            raise InvalidArgumentError("an asynchronous copy_to_host needs an "
                                       "out array to copy into")
        staging = self.device.malloc_host(max(nbytes, 1))
        seq = self.memcpy(staging, src, nbytes, src_offset=offset)

        def done(ok: bool, staging=staging, out=out, n=nbytes):
            try:
                if ok:
                    out.reshape(-1).view(np.uint8)[:n] = \
                        staging.numpy(np.uint8, (n,))
            finally:
                staging.free()
        self.after_task(seq, done)
        return seq

    def after_task(self, seq: int, fn: Callable[[bool], None]) -> None:
        """Run ``fn(ok)`` on the host once task ``seq`` has completed (when
        the stream is next waited for or settled); ``ok`` False when the
        task failed."""
        with self._lock:
            self._after.append((seq, fn))

    def record(self, event: "Event") -> int:
        """Record ``event`` when the stream reaches this point."""
        event.check()
        t = make_task(_uapi.DAVINCI_OP_EVENT_RECORD, event_id=event.event_id)
        return self.launch(t)

    def wait_event(self, event: "Event") -> int:
        """Make later tasks of this stream wait for ``event``'s last record."""
        event.check()
        t = make_task(_uapi.DAVINCI_OP_EVENT_WAIT, event_id=event.event_id)
        return self.launch(t)

    def add_callback(self, fn: Callable, *args, blocking: bool = False):
        """Run ``fn(*args)`` on the device's callback thread when the stream
        reaches this point; returns a ``concurrent.futures.Future`` of its
        result (its exception if it raised, TaskFailedError if the stream
        failed before). ``blocking=True``: later tasks of the stream wait
        until ``fn`` has returned. See :mod:`davinci.callbacks`."""
        self.check()
        return self.device.callbacks.add_callback(self, fn, args, blocking)

    def future(self):
        """A ``concurrent.futures.Future`` that completes (result None) when
        every task submitted so far has completed, or fails with
        TaskFailedError when the stream failed."""
        return self.add_callback(_nothing)

    def notify(self, user_data: int = 0) -> int:
        """Enqueue a NOTIFY task: a DAVINCI_NOTIFY_USER notification with
        ``user_data`` when the stream reaches it."""
        t = make_task(_uapi.DAVINCI_OP_NOTIFY, user_data=user_data)
        return self.launch(t)


def _nothing() -> None:
    return None


def _addr(obj, offset: int) -> int:
    if isinstance(obj, Buffer):
        obj.check()
        if offset < 0 or offset > obj.size:
            raise InvalidArgumentError("offset %d outside the %d-byte buffer"
                                       % (offset, obj.size))
        return obj.dev_addr + offset
    if isinstance(obj, int):
        return obj + offset
    raise InvalidArgumentError("expected a davinci.Buffer or a device address, "
                               "not %r" % type(obj).__name__)


def _check_range(obj, offset: int, nbytes: int, what: str) -> None:
    if nbytes < 0:
        raise InvalidArgumentError("negative byte count %d" % nbytes)
    if isinstance(obj, Buffer) and offset + nbytes > obj.size:
        raise InvalidArgumentError(
            "%s: %d bytes at offset %d overflow the %d-byte buffer"
            % (what, nbytes, offset, obj.size))


def _host_bytes(data) -> memoryview:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return memoryview(data).cast("B")
    arr = np.ascontiguousarray(data)
    return memoryview(arr.reshape(-1).view(np.uint8))


