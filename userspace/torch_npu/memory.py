# SPDX-License-Identifier: GPL-2.0
"""The npu caching allocator: tensors' memory is davinci HBM buffers.

Each block is one davinci buffer; its data pointer is the buffer's address
in this process's mapping of device memory, and kernels reach it on the
device by the buffer's device address. A freed block goes back to a pool
keyed by (stream it was allocated on, rounded size) and is reused for the
next request of that size on that stream, so reuse is ordered by the
stream without waiting. ``empty_cache()`` returns pooled blocks to the
device. Sizes round up to 512 bytes below 1 MiB and to 64 KiB above.

When the device is full the allocator empties its cache and retries once;
then it raises ``torch.OutOfMemoryError`` naming the requested, free and
total bytes, with nothing changed.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

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


class DeviceAllocator:
    """The caching allocator of one npu device."""

    def __init__(self, index: int):
        self.index = index
        self._lock = threading.Lock()
        self._active: dict[int, _Block] = {}
        self._pool: dict[tuple[int, int], list[_Block]] = defaultdict(list)
        self.stats = defaultdict(int)

    # -- allocation -----------------------------------------------------------
    def malloc(self, nbytes: int) -> "int | str":
        """Address of a block of at least ``nbytes``, or the out-of-memory
        message (the C++ side raises torch.OutOfMemoryError with it)."""
        size = round_size(nbytes)
        stream = streams.current_stream(self.index).npu_stream
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
        """Return the block at ``address`` to its stream's pool."""
        with self._lock:
            block = self._active.pop(address, None)
            if block is None:
                return
            self._pool[(block.stream, block.size)].append(block)
            self.stats["allocated"] -= block.size
            self.stats["free_count"] += 1

    def empty_cache(self) -> None:
        """Give every pooled (unused) block back to the device."""
        with self._lock:
            blocks = [b for free in self._pool.values() for b in free]
            self._pool.clear()
            for b in blocks:
                self.stats["reserved"] -= b.buffer.alloc_size
                self.stats["segment_count"] -= 1
        for b in blocks:
            if not b.buffer.freed:
                b.buffer.free()

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
