# SPDX-License-Identifier: GPL-2.0
"""Device (HBM) and pinned host buffers.

A :class:`Buffer` is one allocation of one device context. Tasks address it
by :attr:`Buffer.dev_addr`; the host reaches it zero-copy through a mapping
(:meth:`Buffer.numpy`, :meth:`Buffer.memoryview`, :attr:`Buffer.address`),
which is coherent with the device on every backend: host writes are seen by
the next task, task results are seen through existing mappings.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import _uapi
from .errors import InvalidArgumentError, InvalidHandleError

if TYPE_CHECKING:
    from .device import Device
    from .stream import Stream
    from .transport import Mapping

__all__ = ["Buffer", "MemInfo", "POLICIES", "policy_flags"]

_BYTE = np.dtype(np.uint8)

#: Allocation policies by name (pyACL's aclrtMemMallocPolicy).
POLICIES = {
    "huge_first": _uapi.DAVINCI_MEM_HUGE_FIRST,
    "huge_only": _uapi.DAVINCI_MEM_HUGE_ONLY,
    "normal_only": _uapi.DAVINCI_MEM_NORMAL_ONLY,
}


def policy_flags(policy) -> int:
    """Policy name or ``DAVINCI_MEM_*`` number -> allocation flags."""
    if isinstance(policy, str):
        try:
            return POLICIES[policy.lower()]
        except KeyError:
            raise InvalidArgumentError(
                "unknown allocation policy %r: use one of %s"
                % (policy, ", ".join(POLICIES))) from None
    if policy not in POLICIES.values():
        raise InvalidArgumentError(
            "unknown allocation policy %r: use 0 (huge_first), 1 (huge_only) "
            "or 2 (normal_only)" % (policy,))
    return int(policy)


@dataclass(frozen=True)
class MemInfo:
    """Memory usage of one pool (HBM or pinned host), in bytes.

    ``ctx_used`` and ``ctx_allocations`` count this handle's buffers; the
    rings of its streams take pinned host memory too (``free`` drops by
    their :attr:`Stream.ring_bytes`) but are not buffers."""
    total: int
    free: int
    largest_free: int
    ctx_used: int
    ctx_allocations: int
    host: bool = False

    @property
    def used(self) -> int:
        return self.total - self.free


class Buffer:
    """One allocation of device memory (HBM) or pinned host memory.

    Attributes:
        device: the :class:`~davinci.Device` it belongs to.
        size: bytes requested.
        alloc_size: bytes reserved (rounded to the allocation granule).
        handle: driver handle.
        dev_addr: device virtual address tasks use.
        host: True for pinned host memory.

    Freed by :meth:`free`, by leaving a ``with`` block, or when garbage
    collected. Using a freed buffer raises :class:`InvalidHandleError`;
    numpy views made before the free stay readable but no longer belong to
    anything (the driver keeps the memory from reuse while it is mapped).
    """

    def __init__(self, device: "Device", alloc: _uapi.davinci_mem_alloc,
                 host: bool):
        self.device = device
        self._transport = device.transport
        self.size = int(alloc.size)
        self.alloc_size = int(alloc.alloc_size)
        self.handle = int(alloc.handle)
        self.dev_addr = int(alloc.dev_addr)
        self.mmap_offset = int(alloc.mmap_offset)
        self.host = host
        self._mapping: "Mapping | None" = None
        # uint8 view of the mapping for small copies, and a memoryview of
        # it (the cheaper destination of a copy in); dropped with the mapping
        self._bytes: "np.ndarray | None" = None
        self._bytes_mv: "memoryview | None" = None
        self._lock = threading.Lock()
        self._freed = False
        self._freed_why = ""

    # -- state --------------------------------------------------------------
    @property
    def freed(self) -> bool:
        return self._freed

    def check(self) -> None:
        """Raise :class:`InvalidHandleError` when freed."""
        if self._freed:
            raise InvalidHandleError(
                "%s buffer at device address %#x (%d bytes) %s; allocate a new "
                "one" % ("pinned host" if self.host else "device",
                         self.dev_addr, self.size,
                         self._freed_why or "was freed"))

    def invalidate(self, why: str) -> None:
        """Mark dead without telling the driver (the device's reset or close
        freed it already)."""
        with self._lock:
            self._freed = True
            self._freed_why = why
            mapping, self._mapping = self._mapping, None
            self._bytes = self._bytes_mv = None
        if mapping is not None:
            mapping.close()

    # -- host access ---------------------------------------------------------
    @property
    def mapping(self) -> "Mapping":
        """The buffer's mapping into this process (mapped on first use)."""
        self.check()
        with self._lock:
            if self._mapping is None:
                self._mapping = self._transport.map(self.mmap_offset,
                                                           self.alloc_size)
            return self._mapping

    @property
    def address(self) -> int:
        """Process address of the buffer's first byte (maps it)."""
        return self.mapping.address

    def memoryview(self) -> memoryview:
        """Writable zero-copy view of the first :attr:`size` bytes."""
        return self.mapping.memoryview()[:self.size]

    def numpy(self, dtype=np.uint8, shape=None, offset: int = 0) -> np.ndarray:
        """Zero-copy numpy view of the buffer's memory.

        Writes through the view are seen by the next task; task results are
        seen through it once the task completed (synchronize first).
        """
        dtype = np.dtype(dtype)
        if offset < 0 or offset > self.size:
            raise InvalidArgumentError("offset %d outside the %d-byte buffer"
                                       % (offset, self.size))
        if shape is None:
            count = (self.size - offset) // dtype.itemsize
            shape = (count,)
        elif isinstance(shape, int):
            shape = (shape,)
        count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
        if offset + count * dtype.itemsize > self.size:
            raise InvalidArgumentError(
                "a %s view of shape %s needs %d bytes from offset %d but the "
                "buffer has %d" % (dtype, tuple(shape), count * dtype.itemsize,
                                   offset, self.size))
        arr = np.frombuffer(self.mapping.buffer, dtype=dtype, count=count,
                            offset=offset)
        return arr.reshape(shape)

    def copy_from_array(self, arr: np.ndarray, offset: int = 0,
                        stream: "Stream | None" = None) -> None:
        """Copy the bytes of the numpy array ``arr`` (in C order) into the
        buffer at ``offset`` now, as one host copy (the cheapest for small
        copies; not ordered with tasks, as :meth:`write`). ``stream``, when
        given, is synchronized once the copy is known to be possible, before
        it starts: a bad range raises before waiting, a buffer freed during
        the wait raises after it. (The stream, not its bound synchronize:
        a bound method made per call is 30 ns, 5% of a 4 KiB copy.)"""
        n = arr.nbytes
        # The checks of _view_for_copy() inline while the view exists and
        # the range fits: a call is 45 ns, a tenth of a 4 KiB copy. (n is
        # never negative: no nbytes < 0 test.)
        dst = self._bytes_mv
        if dst is None or offset < 0 or offset + n > self.size:
            dst = self._view_for_copy(offset, n)[1]
        if stream is not None:
            stream.synchronize()
            if self._bytes_mv is None:      # freed while we waited
                self.check()
        if arr.dtype is not _BYTE or arr.ndim != 1:
            try:
                arr = arr.reshape(-1).view(_BYTE)
            except ValueError:      # strided: its bytes are not in a row
                arr = np.ascontiguousarray(arr).reshape(-1).view(_BYTE)
        # a memoryview slice assignment copies what view[...] = arr would,
        # without numpy's per-call cast setup: a fifth faster at 4 KiB (both
        # sides are format "B", so it never converts or broadcasts)
        if n == self.size:
            dst[:] = arr
        else:
            dst[offset:offset + n] = arr

    def copy_to_array(self, out: np.ndarray, nbytes: int | None = None,
                      offset: int = 0,
                      stream: "Stream | None" = None) -> None:
        """Copy ``nbytes`` (None: ``out.nbytes``) of the buffer from
        ``offset`` into the writable C-contiguous array ``out`` now
        (``stream`` as in :meth:`copy_from_array`)."""
        # None: all of out, whose size then needs no second look below
        whole_out = nbytes is None
        if whole_out:
            nbytes = out.nbytes
        # as copy_from_array: the common case's checks inline
        view = self._bytes
        if view is None or offset < 0 or nbytes < 0 or \
                offset + nbytes > self.size:
            view = self._view_for_copy(offset, nbytes)[0]
        if stream is not None:
            stream.synchronize()
            if self._bytes is None:     # freed while we waited
                self.check()
        if out.dtype is not _BYTE or out.ndim != 1:
            out = out.reshape(-1).view(_BYTE)
        # a whole-buffer [...] assignment is the cheapest numpy copy
        if nbytes == self.size and (whole_out or nbytes == out.size):
            out[...] = view
        else:
            out[:nbytes] = view[offset:offset + nbytes]

    def _view_for_copy(self, offset: int, nbytes: int
                       ) -> tuple[np.ndarray, memoryview]:
        """The buffer's bytes as a uint8 array and a memoryview of it (made
        and kept on first use) once the buffer is known to be alive and
        ``nbytes`` at ``offset`` to be in range; raises otherwise."""
        self._check_span(offset, nbytes)
        view, mv = self._bytes, self._bytes_mv
        if view is None or mv is None:
            view = np.frombuffer(self.mapping.buffer, np.uint8,
                                 count=self.size)
            mv = memoryview(view)
            with self._lock:
                if self._freed:
                    self.check()
                self._bytes, self._bytes_mv = view, mv
        return view, mv

    def copy_in(self, address: int, nbytes: int, offset: int = 0) -> None:
        """Copy ``nbytes`` from process address ``address`` into the buffer
        at ``offset`` now: one memcpy, no Python object per byte range. Not
        ordered with tasks, as :meth:`write`."""
        self._check_span(offset, nbytes)
        ctypes.memmove(self.mapping.address + offset, address, nbytes)

    def copy_out(self, address: int, nbytes: int, offset: int = 0) -> None:
        """Copy ``nbytes`` of the buffer from ``offset`` to process address
        ``address`` now (see :meth:`copy_in`)."""
        self._check_span(offset, nbytes)
        ctypes.memmove(address, self.mapping.address + offset, nbytes)

    def _check_span(self, offset: int, nbytes: int) -> None:
        self.check()
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise InvalidArgumentError(
                "%d bytes at offset %d overflow the %d-byte buffer"
                % (nbytes, offset, self.size))

    def write(self, data, offset: int = 0) -> None:
        """Copy bytes-like ``data`` (or a numpy array) into the buffer now.

        Zero-copy: one host memcpy straight into the mapped memory. Not
        ordered with tasks: synchronize streams that use the buffer first.
        """
        self.check()
        src = np.ascontiguousarray(data) if not isinstance(
            data, (bytes, bytearray, memoryview)) else data
        mv = memoryview(src).cast("B")
        n = mv.nbytes
        if offset < 0 or offset + n > self.size:
            raise InvalidArgumentError(
                "writing %d bytes at offset %d overflows the %d-byte buffer"
                % (n, offset, self.size))
        self.mapping.memoryview()[offset:offset + n] = mv

    def read(self, nbytes: int | None = None, offset: int = 0) -> bytes:
        """Copy ``nbytes`` from the buffer to a new bytes object now."""
        self.check()
        if nbytes is None:
            nbytes = self.size - offset
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise InvalidArgumentError(
                "reading %d bytes at offset %d overflows the %d-byte buffer"
                % (nbytes, offset, self.size))
        return bytes(self.mapping.memoryview()[offset:offset + nbytes])

    def query(self) -> _uapi.davinci_mem_query:
        """DAVINCI_IOCTL_MEM_QUERY of this buffer."""
        self.check()
        q = _uapi.davinci_mem_query(handle=self.handle)
        return self._transport.ioctl(_uapi.DAVINCI_IOCTL_MEM_QUERY, q)

    # -- lifetime ---------------------------------------------------------------
    def free(self) -> None:
        """Free the allocation. Tasks still using it keep it until they end."""
        self.check()
        with self._lock:
            self._freed = True
            self._freed_why = "was freed"
            mapping, self._mapping = self._mapping, None
            self._bytes = self._bytes_mv = None
        if mapping is not None:
            mapping.close()
        self.device.forget(self)
        self._transport.ioctl(
            _uapi.DAVINCI_IOCTL_MEM_FREE,
            _uapi.davinci_mem_free(handle=self.handle))

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(self, *exc) -> None:
        if not self._freed:
            self.free()

    def __del__(self):
        try:
            if not self._freed and not self._transport.closed:
                self.free()
        except Exception:
            pass

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return "<davinci.Buffer %s %#x size=%d%s>" % (
            "host" if self.host else "hbm", self.dev_addr, self.size,
            " freed" if self._freed else "")


def host_copy(dst_addr: int, src_addr: int, nbytes: int) -> None:
    """memmove between two process addresses."""
    if nbytes:
        ctypes.memmove(dst_addr, src_addr, nbytes)


