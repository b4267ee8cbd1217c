# SPDX-License-Identifier: GPL-2.0
"""A trace of this process: device records from the devices' rings and host
API spans, from :meth:`TraceSession.start` to :meth:`TraceSession.stop`."""

from __future__ import annotations

import os
import sys
import time

from ..errors import DavinciError
from .data import TraceData
from .records import DeviceTraceReader
from .spans import Instrumentation, SpanRecorder, instrument

__all__ = ["TraceSession", "process_name"]


def process_name() -> str:
    """What to call this process in a trace: its script or program."""
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] \
        else "python"


class TraceSession:
    """Collects a trace of this process.

    ``devices``: indices whose trace rings to read (None: every device of
    the backend, [] none). ``spans``: record host API spans of the runtime
    and of acl. Records are read from the point :meth:`start` was called;
    on a shared backend (the module, FUSE) they include other processes'
    work on the same devices, each record naming its pid.
    """

    def __init__(self, devices: list[int] | None = None, spans: bool = True,
                 backend=None) -> None:
        self._want = devices
        self._spans = spans
        self._backend = backend
        self._devices: list = []
        self._readers: list[DeviceTraceReader] = []
        self._recorder: SpanRecorder | None = None
        self._ins: Instrumentation | None = None
        self._data = TraceData()
        self.running = False

    @property
    def recorder(self) -> SpanRecorder | None:
        """Where host spans go while it runs (None without spans)."""
        return self._recorder

    def start(self) -> None:
        """Open the devices, start reading their rings from now on and
        record host spans. Raises :class:`~davinci.DavinciError` when a
        device cannot be opened or does not record traces."""
        import davinci
        if self.running:
            raise davinci.InvalidArgumentError(
                "the trace session already runs: stop it before starting "
                "it again")
        backend = self._backend
        if backend is None and (self._want is None or self._want):
            backend = davinci.find_backend()
        indices = backend.device_indices() if self._want is None \
            else list(self._want)
        try:
            for i in indices:
                dev = davinci.Device(i, backend)
                self._devices.append(dev)
                reader = DeviceTraceReader(dev)
                reader.set_enabled(True)
                self._readers.append(reader)
        except DavinciError:
            self._close()
            raise
        self._data = TraceData(processes={os.getpid(): process_name()},
                               aicores={d.index: d.info.aicores
                                        for d in self._devices},
                               start_ns=time.monotonic_ns())
        if self._spans:
            self._recorder = SpanRecorder()
            self._ins = instrument(self._recorder)
        self.running = True

    def collect(self) -> None:
        """Read what the devices recorded so far (a ring holds the last
        16384 records: call this in long runs to lose none)."""
        for reader in self._readers:
            try:
                chunk = reader.read()
            except DavinciError as exc:
                print("davinci trace: cannot read davinci%d's trace: %s"
                      % (reader.index, exc), file=sys.stderr)
                continue
            self._data.records.extend(chunk.records)
            if chunk.dropped:
                self._data.dropped[reader.index] = \
                    self._data.dropped.get(reader.index, 0) + chunk.dropped

    def stop(self) -> TraceData:
        """Stop recording spans, read the rest of the records, close the
        devices; the trace collected."""
        if not self.running:
            return self._data
        if self._ins is not None:
            self._ins.remove()
            self._ins = None
        self.collect()
        if self._recorder is not None:
            self._data.spans.extend(self._recorder.spans())
        self._data.end_ns = time.monotonic_ns()
        self._close()
        self.running = False
        return self._data

    def _close(self) -> None:
        for dev in self._devices:
            dev.close()
        self._devices = []
        self._readers = []
