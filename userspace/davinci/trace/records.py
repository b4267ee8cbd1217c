# SPDX-License-Identifier: GPL-2.0
"""Reading a device's trace ring (``DAVINCI_IOCTL_TRACE_READ``).

Every device keeps the last ``DAVINCI_TRACE_CAPACITY`` records of what it
did, numbered from 0. A :class:`DeviceTraceReader` keeps its own cursor:
reading does not consume, and records the ring overwrote before they were
read are counted in :attr:`TraceChunk.dropped`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .. import _uapi
from ..errors import DavinciError

__all__ = ["TraceRecord", "TraceChunk", "DeviceTraceReader",
           "TraceUnsupportedError", "KIND_NAMES", "NO_CORE"]

#: ``aicore`` of a task that never ran on an AI core.
NO_CORE = _uapi.DAVINCI_TRACE_NO_CORE

#: DAVINCI_TRACE_* -> short name ("TASK_COMPLETE").
KIND_NAMES = {getattr(_uapi, n): n[len("DAVINCI_TRACE_"):] for n in dir(_uapi)
              if n.startswith("DAVINCI_TRACE_") and n not in (
                  "DAVINCI_TRACE_CAPACITY", "DAVINCI_TRACE_READ_MAX",
                  "DAVINCI_TRACE_F_ENABLE", "DAVINCI_TRACE_F_DISABLE")}


class TraceUnsupportedError(DavinciError):
    """The driver predates DAVINCI_FEAT_TRACE."""


@dataclass(frozen=True)
class TraceRecord:
    """One record of a device's trace; fields as struct davinci_trace_record.

    ``device`` is the device index, ``index`` the record's number in that
    device's ring (unique per device and backend instance).
    """
    device: int
    index: int
    type: int
    timestamp_ns: int
    seq: int
    arg0: int
    arg1: int
    arg2: int
    pid: int
    id: int
    status: int
    opcode: int
    aicore: int

    @property
    def kind(self) -> str:
        return KIND_NAMES.get(self.type, "TYPE_%d" % self.type)

    @property
    def op_name(self) -> str:
        return _uapi.OP_NAMES.get(self.opcode, "OP_%d" % self.opcode)

    @classmethod
    def from_struct(cls, device: int, index: int,
                    r: _uapi.davinci_trace_record) -> "TraceRecord":
        return cls(device, index, r.type, r.timestamp_ns, r.seq, r.arg0,
                   r.arg1, r.arg2, r.pid, r.id, r.status, r.opcode, r.aicore)

    def to_list(self) -> list[int]:
        return list(dataclasses.astuple(self))

    @classmethod
    def from_list(cls, values: list[int]) -> "TraceRecord":
        return cls(*(int(v) for v in values))


@dataclass
class TraceChunk:
    """What one :meth:`DeviceTraceReader.read` returned."""
    records: list[TraceRecord]
    dropped: int
    enabled: bool


class DeviceTraceReader:
    """A cursor over the trace ring of one open :class:`davinci.Device`.

    ``since=None`` starts at the records written from now on; 0 at the
    oldest the ring still holds.
    """

    def __init__(self, device, since: int | None = None):
        if not device.version.has(_uapi.DAVINCI_FEAT_TRACE):
            raise TraceUnsupportedError(
                "davinci%d's driver does not record traces (no "
                "DAVINCI_FEAT_TRACE in ABI %d.%d): update the kernel module "
                "or restart the FUSE daemon from this tree"
                % (device.index, device.version.abi_major,
                   device.version.abi_minor))
        self._device = device
        self.index = device.index
        q = self._ioctl(0, 0xFFFFFFFFFFFFFFFF)
        self.since = q.written if since is None else since

    def _ioctl(self, flags: int, since: int) -> _uapi.davinci_trace_read:
        q = _uapi.davinci_trace_read()
        q.flags = flags
        q.since = since
        return self._device.transport.ioctl(_uapi.DAVINCI_IOCTL_TRACE_READ,
                                            q)

    def set_enabled(self, on: bool) -> None:
        """Turn the device's recording on or off (device-wide)."""
        self._ioctl(_uapi.DAVINCI_TRACE_F_ENABLE if on
                    else _uapi.DAVINCI_TRACE_F_DISABLE, self.since)

    def read(self) -> TraceChunk:
        """Every record written since the cursor, oldest first; moves it."""
        out: list[TraceRecord] = []
        dropped = 0
        while True:
            q = self._ioctl(0, self.since)
            dropped += q.dropped
            first = q.next - q.count
            out.extend(TraceRecord.from_struct(self.index, first + i,
                                               q.rec[i])
                       for i in range(q.count))
            self.since = q.next
            if q.next >= q.written or not q.count:
                return TraceChunk(out, dropped, bool(q.enabled))
