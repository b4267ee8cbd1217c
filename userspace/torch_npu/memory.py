# SPDX-License-Identifier: GPL-2.0
"""The npu caching allocator: tensors' memory is davinci HBM buffers.

Each block is one davinci buffer; its data pointer is the buffer's address
in this process's mapping of device memory, and kernels reach it on the
device by the buffer's device address. A freed block goes back to a pool
keyed by (stream it was allocated on, rounded size) and is reused for the
next request of that size on that stream, so reuse is ordered by the
stream without waiting. ``empty_cache()`` returns pooled blocks to the
device. Sizes round up to 512 bytes below 1 MiB and to 64 KiB above.

Other streams that use a block are tracked as CUDA's caching allocator
does: ``tensor.record_stream(s)`` adds ``s`` to the block's stream uses;
when the block is freed, a davinci event is recorded on each of them, and
the block joins its pool only once every one of those streams has run past
its event (queried at the next allocation, not waited for), so work still
queued there never reads a tensor that reused the memory.
``empty_cache()`` waits for those events first.

When the device is full the allocator empties its cache and retries once;
then it raises ``torch.OutOfMemoryError`` naming the requested, free and
total bytes, with nothing changed.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field

import torch

import davinci

from . import _devices, streams

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "empty_cache",
           "mem_get_info", "memory_stats", "memory_summary", "device_buffer"]

_SMALL = 1 << 20


def round_size(nbytes: int) -> int:
    """Bytes a request of ``nbytes`` takes from the allocator."""
    step = 512 if nbytes < _SMALL else 64 << 10
    return (nbytes + step - 1) // step * step


@dataclass
class _Block:
    buffer: davinci.Buffer
    size: int
    stream: int
    #: the first byte in this process's mapping (tensors' data pointer)
    address: int
    #: streams other than ``stream`` that used it (record_stream)
    stream_uses: set = field(default_factory=set)
    #: free marks of its stream uses not passed yet (while freed)
    marks_pending: int = 0


@dataclass
class _FreeMark:
    """Where a stream that used a freed block was when the block was freed:
    an event recorded there, the record being task ``seq`` of the stream."""
    stream: "streams.Stream"
    event: davinci.Event
    seq: int

    def passed(self) -> bool:
        """The stream has run past the mark: its event completed, or the
        record task ended otherwise (a failed stream aborts its tasks, and
        an aborted record completes no event; nothing before it runs)."""
        try:
            return self.event.is_complete() or \
                self.stream.davinci_stream.query().completed_seq >= self.seq
        except (davinci.InvalidHandleError, davinci.DeviceLostError):
            return True         # the stream is gone: it runs nothing more

    def wait(self) -> None:
        """Wait on the host until the stream has run past the mark."""
        try:
            self.stream.davinci_stream.wait(self.seq)
        except (davinci.InvalidHandleError, davinci.DeviceLostError,
                davinci.TaskFailedError):
            pass    # gone or failed: what it queued up to here has ended


class DeviceAllocator:
    """The caching allocator of one npu device."""

    def __init__(self, index: int):
        self.index = index
        self._lock = threading.Lock()
        self._active: dict[int, _Block] = {}
        self._pool: dict[tuple[int, int], list[_Block]] = defaultdict(list)
        self.stats = defaultdict(int)
        # freed blocks waiting for their streams, per stream in the order
        # freed (a stream passes its marks in that order); reentrant: the
        # garbage collector may free a tensor while it is held
        self._marks: dict["streams.Stream", deque[tuple[_FreeMark, _Block]]] \
            = {}
        self._marks_lock = threading.RLock()
        self._idle_events: list[davinci.Event] = []

    # -- allocation -----------------------------------------------------------
    def malloc(self, nbytes: int) -> "int | str":
        """Address of a block of at least ``nbytes``, or the out-of-memory
        message (the C++ side raises torch.OutOfMemoryError with it)."""
        size = round_size(nbytes)
        stream = streams.current_stream(self.index).npu_stream
        if self._marks:
            self._reclaim()
        with self._lock:
            free = self._pool.get((stream, size))
            if free:                    # the common case: a cached block
                block = free.pop()
                self._taken(block)
                return block.address
        try:
            block = self._new_block(size, stream)
        except davinci.OutOfMemoryError:
            self.empty_cache()
            try:
                block = self._new_block(size, stream)
            except davinci.OutOfMemoryError as e:
                self.stats["num_ooms"] += 1
                return self._oom_message(nbytes, e)
        with self._lock:
            self._taken(block)
        return block.address

    def _taken(self, block: _Block) -> None:
        """Count ``block`` as allocated (lock held)."""
        self._active[block.address] = block
        s = self.stats
        s["allocated"] += block.size
        s["allocation_count"] += 1
        if s["allocated"] > s["peak_allocated"]:
            s["peak_allocated"] = s["allocated"]

    def _new_block(self, size: int, stream: int) -> _Block:
        buf = _devices.context(self.index).malloc(size)
        block = _Block(buf, size, stream, buf.address)
        with self._lock:
            s = self.stats
            s["reserved"] += buf.alloc_size
            s["segment_count"] += 1
            s["peak_reserved"] = max(s["peak_reserved"], s["reserved"])
        return block

    def _oom_message(self, nbytes: int, e: davinci.OutOfMemoryError) -> str:
        return ("NPU out of memory. Tried to allocate %s (%d bytes) on npu:%d "
                "(davinci%d): %d bytes free of %d total on the device; this "
                "process has %d bytes allocated by PyTorch and %d reserved "
                "by its caching allocator. Free tensors you no longer need, "
                "call torch.npu.empty_cache() or use a smaller batch. (%s)"
                % (_human(nbytes), nbytes, self.index, self.index, e.free,
                   e.total, self.stats["allocated"], self.stats["reserved"],
                   e))

    def free(self, address: int) -> None:
        """Return the block at ``address`` to its stream's pool, once the
        other streams that used it have run past this point."""
        with self._lock:
            block = self._active.pop(address, None)
            if block is None:
                return
            self.stats["allocated"] -= block.size
            self.stats["free_count"] += 1
            uses, block.stream_uses = block.stream_uses, set()
            if not uses:
                self._pool[(block.stream, block.size)].append(block)
                return
        # recorded without the allocator's lock: a record takes the
        # stream's lock, under which the garbage collector may free a tensor
        marks = [m for m in map(self._mark, uses) if m is not None]
        with self._marks_lock:
            block.marks_pending = len(marks)
            for m in marks:
                self._marks.setdefault(m.stream, deque()).append((m, block))
        if not marks:
            self._pool_put(block)

    def record_stream(self, address: int, s: "streams.Stream") -> None:
        """The block at ``address`` is used by ``s`` too: when freed, it is
        not reused until ``s`` has run past what it had queued then."""
        with self._lock:
            block = self.block(address)
            if s.npu_stream != block.stream:
                block.stream_uses.add(s)

    def _mark(self, s: "streams.Stream") -> "_FreeMark | None":
        """Record a free mark on ``s`` (None: ``s`` was destroyed or its
        device lost, so it runs nothing more)."""
        # taken under the lock that empty_cache destroys idle events under
        with self._marks_lock:
            event = self._idle_events.pop() if self._idle_events else None
        if event is None:
            event = _devices.context(self.index).event(timing=False)
        try:
            seq = s.davinci_stream.record(event)
        except (davinci.InvalidHandleError, davinci.DeviceLostError):
            with self._marks_lock:
                self._idle_events.append(event)
            return None
        return _FreeMark(s, event, seq)

    def _pool_put(self, block: _Block) -> None:
        with self._lock:
            self._pool[(block.stream, block.size)].append(block)

    def _reclaim(self) -> None:
        """Pool the freed blocks whose streams have run past their marks
        (CUDA's process_events: per stream, up to the first mark not
        passed)."""
        with self._marks_lock:
            for s, queue in list(self._marks.items()):
                while queue and queue[0][0].passed():
                    mark, block = queue.popleft()
                    self._idle_events.append(mark.event)
                    block.marks_pending -= 1
                    if not block.marks_pending:
                        self._pool_put(block)
                if not queue:
                    del self._marks[s]

    def _wait_marks(self) -> None:
        """Wait until every freed block's streams ran past their marks, and
        pool those blocks."""
        with self._marks_lock:
            marks = [m for queue in self._marks.values() for m, _ in queue]
        for m in marks:         # unlocked: frees go on meanwhile
            m.wait()
        self._reclaim()

    def empty_cache(self) -> None:
        """Give every pooled (unused) block back to the device; freed blocks
        other streams may still read are waited for first."""
        self._wait_marks()
        with self._lock:
            blocks = [b for free in self._pool.values() for b in free]
            self._pool.clear()
            for b in blocks:
                self.stats["reserved"] -= b.buffer.alloc_size
                self.stats["segment_count"] -= 1
        for b in blocks:
            if not b.buffer.freed:
                b.buffer.free()
        with self._marks_lock:
            for event in self._idle_events:
                event.destroy()
            self._idle_events.clear()

    def block(self, address: int) -> _Block:
        """The live block whose first byte is at ``address``."""
        try:
            return self._active[address]
        except KeyError:
            raise RuntimeError(
                "npu:%d has no live allocation at %#x: the tensor's storage "
                "was freed or does not come from torch_npu's allocator"
                % (self.index, address)) from None

    def reset_peak(self) -> None:
        with self._lock:
            self.stats["peak_allocated"] = self.stats["allocated"]
            self.stats["peak_reserved"] = self.stats["reserved"]


_allocators: dict[int, DeviceAllocator] = {}
_alloc_lock = threading.Lock()


def allocator(index: int) -> DeviceAllocator:
    a = _allocators.get(index)
    if a is None:
        with _alloc_lock:
            a = _allocators.setdefault(index, DeviceAllocator(index))
    return a


def malloc_hook(nbytes: int, index: int) -> "int | str":
    """What the C++ allocator (csrc/npu.cpp) calls for device memory."""
    return allocator(index).malloc(nbytes)


def free_hook(address: int) -> None:
    """What the C++ allocator's deleter calls."""
    for a in list(_allocators.values()):
        a.free(address)


def record_stream(t: torch.Tensor, s: "streams.Stream") -> None:
    """``Tensor.record_stream``: ``t``'s block, when freed, is not reused
    until ``s`` has run past what it had queued at the free."""
    address = t.untyped_storage().data_ptr()
    if not address:
        return                  # no memory (no elements)
    index = t.get_device()
    if s.device_index != index:
        raise RuntimeError(
            "record_stream: the tensor is on npu:%d and the stream on "
            "npu:%d; a stream only reads its own device's memory, so "
            "record a stream of npu:%d" % (index, s.device_index, index))
    allocator(index).record_stream(address, s)


def device_buffer(t: torch.Tensor) -> tuple[davinci.Buffer, int]:
    """The davinci buffer under npu tensor ``t`` and the byte offset of
    ``t``'s first element in it."""
    offset = t.storage_offset() * t.element_size()
    block = allocator(t.get_device()).block(t.data_ptr() - offset)
    return block.buffer, offset


def _index(device) -> int:
    return streams.device_index(device)


def memory_allocated(device=None) -> int:
    """Bytes held by live npu tensors on the device (rounded sizes)."""
    return allocator(_index(device)).stats["allocated"]


def max_memory_allocated(device=None) -> int:
    """Peak of :func:`memory_allocated` since the start or the last
    :func:`reset_peak_memory_stats`."""
    return allocator(_index(device)).stats["peak_allocated"]


def memory_reserved(device=None) -> int:
    """Bytes of HBM the caching allocator holds (live and cached blocks)."""
    return allocator(_index(device)).stats["reserved"]


def max_memory_reserved(device=None) -> int:
    return allocator(_index(device)).stats["peak_reserved"]


def reset_peak_memory_stats(device=None) -> None:
    allocator(_index(device)).reset_peak()


def empty_cache() -> None:
    """Release every cached block of every device to the device."""
    for a in list(_allocators.values()):
        a.empty_cache()


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the device's HBM, all processes included."""
    m = _devices.context(_index(device)).mem_info()
    return m.free, m.total


def memory_stats(device=None) -> dict[str, int]:
    """The allocator's counters, under CUDA's key names."""
    s = allocator(_index(device)).stats
    return {
        "allocated_bytes.all.current": s["allocated"],
        "allocated_bytes.all.peak": s["peak_allocated"],
        "reserved_bytes.all.current": s["reserved"],
        "reserved_bytes.all.peak": s["peak_reserved"],
        "allocation.all.allocated": s["allocation_count"],
        "allocation.all.freed": s["free_count"],
        "segment.all.current": s["segment_count"],
        "num_ooms": s["num_ooms"],
    }


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else \
                "%.2f %s" % (n, unit)
        n /= 1024
    return str(n)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A printable table of the allocator's counters for the device."""
    index = _index(device)
    st = memory_stats(index)
    free, total = mem_get_info(index)
    rows = [
        ("Allocated memory", st["allocated_bytes.all.current"],
         st["allocated_bytes.all.peak"]),
        ("Reserved memory", st["reserved_bytes.all.current"],
         st["reserved_bytes.all.peak"]),
    ]
    lines = ["|" + "=" * 62 + "|",
             "| torch_npu memory summary, npu:%d (davinci%d)%s|"
             % (index, index, " " * (26 - len(str(index)) * 2)),
             "|" + "-" * 62 + "|",
             "| %-24s | %15s | %15s |" % ("Metric", "Current", "Peak")]
    for name, cur, peak in rows:
        lines.append("| %-24s | %15s | %15s |" % (name, _human(cur),
                                                   _human(peak)))
    lines += [
        "| %-24s | %15d | %15s |" % ("Allocations", st[
            "allocation.all.allocated"], ""),
        "| %-24s | %15d | %15s |" % ("Frees", st["allocation.all.freed"], ""),
        "| %-24s | %15d | %15s |" % ("Segments (HBM buffers)",
                                     st["segment.all.current"], ""),
        "| %-24s | %15d | %15s |" % ("OOMs", st["num_ooms"], ""),
        "| %-24s | %15s | %15s |" % ("Device HBM free/total", _human(free),
                                     _human(total)),
        "|" + "=" * 62 + "|"]
    return "\n".join(lines) + "\n"
