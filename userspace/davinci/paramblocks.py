# SPDX-License-Identifier: GPL-2.0
"""Device memory for the parameter blocks of one device context.

A task's parameter block (a view's sizes and strides, a strided task's
operands: DOC: parameter blocks in davinci.h) must be in device memory
when the doorbell takes the task in; the driver copies it then, so the
memory is free again once the task is taken in. The host does not see that
moment, so a block is returned when its task has completed (when its stream
is next waited for or settled), or with the graph a capture put it in,
whose every launch reads it again.

Blocks are ``DAVINCI_PARAMS_MAX``-byte slots of slabs allocated a few dozen
at a time, so a strided op costs a memcpy into mapped memory, not an
allocation. Every frontend (davinci.ops, torch_npu) takes its blocks from
its device's :attr:`davinci.Device.param_blocks`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

from . import _uapi

if TYPE_CHECKING:
    from .device import Device
    from .memory import Buffer
    from .stream import Stream

__all__ = ["ParamBlocks", "ParamBlock"]

#: slots per slab: 32 KiB, 64 tasks in flight before another slab
SLOTS_PER_SLAB = 64


class ParamBlock:
    """One slot: ``dev_addr`` is what a descriptor's ``params`` names."""

    __slots__ = ("_pool", "_slab", "offset", "dev_addr", "_taken")

    def __init__(self, pool: "ParamBlocks", slab: "Buffer", offset: int):
        self._pool = pool
        self._slab = slab
        self.offset = offset
        self.dev_addr = slab.dev_addr + offset
        self._taken = False

    def write(self, data: bytes) -> None:
        if len(data) > _uapi.DAVINCI_PARAMS_MAX:
            raise ValueError("a parameter block is at most %d bytes, not %d"
                             % (_uapi.DAVINCI_PARAMS_MAX, len(data)))
        self._slab.write(data, self.offset)

    @property
    def freed(self) -> bool:
        """Not held by a task (the name Graph.hold's holders answer)."""
        return not self._taken

    def free(self) -> None:
        """Return the slot to its pool (a second call does nothing)."""
        self._pool.give_back(self)


class ParamBlocks:
    """The parameter-block slots of one device context."""

    def __init__(self, device: "Device"):
        self._device = device
        self._lock = threading.Lock()
        self._free: list[ParamBlock] = []
        self._slabs: list["Buffer"] = []

    @property
    def slots(self) -> int:
        """Slots allocated so far."""
        with self._lock:
            return len(self._slabs) * SLOTS_PER_SLAB

    @property
    def idle(self) -> int:
        """Slots no task holds."""
        with self._lock:
            return len(self._free)

    def take(self, stream: "Stream") -> ParamBlock:
        """A free slot; when none is, ``stream``'s completed tasks return
        theirs first, and only then is a slab allocated."""
        block = self._pop()
        if block is None:
            stream.settle()
            block = self._pop()
        if block is None:
            block = self._grow()
        return block

    def give_back(self, block: ParamBlock) -> None:
        with self._lock:
            if block._taken and not block._slab.freed:
                block._taken = False
                self._free.append(block)

    def launch(self, stream: "Stream", data: bytes,
               task_at: Callable[[int], object]) -> int:
        """Write ``data`` to a slot, launch ``task_at(slot address)`` on
        ``stream`` and return its sequence number; the slot comes back
        after the task, or with the graph ``stream`` is capturing."""
        block = self.take(stream)
        try:
            block.write(data)
            seq = stream.launch(task_at(block.dev_addr))
        except BaseException:
            block.free()
            raise
        graph = stream.capturing
        if graph is not None:
            graph.hold(block)
        else:
            stream.after_task(seq, lambda ok: block.free())
        return seq

    def _pop(self) -> ParamBlock | None:
        with self._lock:
            while self._free:
                block = self._free.pop()
                if not block._slab.freed:
                    block._taken = True
                    return block
            return None

    def _grow(self) -> ParamBlock:
        size = _uapi.DAVINCI_PARAMS_MAX
        slab = self._device.malloc(size * SLOTS_PER_SLAB, "normal_only")
        blocks = [ParamBlock(self, slab, i * size)
                  for i in range(SLOTS_PER_SLAB)]
        with self._lock:
            self._slabs.append(slab)
            self._free.extend(blocks[1:])
        blocks[0]._taken = True
        return blocks[0]
