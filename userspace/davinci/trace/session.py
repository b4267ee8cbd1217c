# SPDX-License-Identifier: GPL-2.0
"""A trace of this process: device records from the devices' rings and host
API spans, from :meth:`TraceSession.start` to :meth:`TraceSession.stop`."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable

from ..errors import DavinciError
from .data import TraceData
from .records import DeviceTraceReader
from .spans import Instrumentation, SpanRecorder, instrument

__all__ = ["TraceSession", "process_name"]


def _env_poll_ms() -> int:
    try:
        return max(0, int(os.environ.get("DAVINCI_TRACE_POLL_MS", "100")))
    except ValueError:
        return 100


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
    work on the same devices, each record naming its pid. ``poll_ms``: a
    thread reads the rings this often, so that a long run loses nothing
    while it produces less than a ring (16384 records) per period; None
    takes ``DAVINCI_TRACE_POLL_MS`` (default 100), 0 reads only at
    :meth:`stop`. ``flush``: the poller hands it what it gathered each
    period (:meth:`drain`), so that a process killed later has written
    that much; :meth:`stop` returns only the rest.
    """

    def __init__(self, devices: list[int] | None = None, spans: bool = True,
                 backend=None, poll_ms: int | None = None,
                 flush: Callable[[TraceData], None] | None = None) -> None:
        if poll_ms is None:
            poll_ms = _env_poll_ms()
        self._poll_s = poll_ms / 1000.0
        self._flush = flush
        self._poller: threading.Thread | None = None
        self._stop_polling = threading.Event()
        self._lock = threading.Lock()
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
        if self._poll_s > 0 and (self._readers or self._flush is not None):
            self._stop_polling.clear()
            self._poller = threading.Thread(target=self._poll, daemon=True,
                                            name="davinci-trace")
            self._poller.start()
        self.running = True

    def _poll(self) -> None:
        while not self._stop_polling.wait(self._poll_s):
            if self._flush is None:
                self.collect()
                continue
            data = self.drain()
            if data.records or data.spans or data.dropped:
                self._flush(data)

    def drain(self) -> TraceData:
        """Collect, then hand over what was gathered since the last drain:
        device records, host spans ended, drops; the session keeps going
        with its processes and devices."""
        with self._lock:
            self._collect_locked()
            out = self._data
            self._data = TraceData(processes=dict(out.processes),
                                   aicores=dict(out.aicores),
                                   start_ns=out.start_ns)
            if self._recorder is not None:
                out.spans.extend(self._recorder.take())
            out.end_ns = time.monotonic_ns()
            return out

    def collect(self) -> None:
        """Read what the devices recorded so far (a ring holds the last
        16384 records: poll_ms does it in a thread)."""
        with self._lock:
            self._collect_locked()

    def _collect_locked(self) -> None:
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
        if self._poller is not None:
            self._stop_polling.set()
            self._poller.join()
            self._poller = None
        self.collect()
        if self._recorder is not None:
            self._data.spans.extend(self._recorder.take())
        self._data.end_ns = time.monotonic_ns()
        self._close()
        self.running = False
        return self._data

    def _close(self) -> None:
        for dev in self._devices:
            dev.close()
        self._devices = []
        self._readers = []
