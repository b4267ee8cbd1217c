# SPDX-License-Identifier: GPL-2.0
"""Tracing a program started elsewhere, by its environment.

``DAVINCI_TRACE=FILE`` (``%p`` in it becomes the pid): the process traces
itself from ``import davinci`` to its exit and writes a Perfetto trace to
FILE. ``DAVINCI_TRACE_SPOOL=DIR`` is what ``davinci trace`` sets: the
process writes its spans (and, on the in-process backend, its devices'
records) to ``DIR/<pid>.<n>.json`` for the launcher to merge: what it
gathered each ``DAVINCI_TRACE_POLL_MS``, and the rest at exit. A process
that dies by a signal or ``os._exit`` keeps what it wrote until then
(under ``davinci trace`` on a shared backend, the launcher has all the
devices' records anyway); with ``DAVINCI_TRACE=FILE`` it writes nothing.
"""

from __future__ import annotations

import atexit
import itertools
import os
import sys

from .data import TraceData

__all__ = ["start_from_environment", "Spool"]


class Spool:
    """Writes this process's trace into ``DIR`` a chunk at a time, each
    ``<pid>.<n>.json`` appearing whole (written aside, then renamed)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._n = itertools.count()

    def write(self, data: TraceData) -> None:
        pid = os.getpid()
        name = "%d.%d.json" % (pid, next(self._n))
        tmp = os.path.join(self.directory, ".%s.tmp" % name)
        try:
            with open(tmp, "w") as f:
                f.write(data.to_json())
            os.replace(tmp, os.path.join(self.directory, name))
        except OSError as exc:
            print("davinci: cannot write the trace: %s" % exc,
                  file=sys.stderr)


def _finish(session, path: str | None, spool: Spool | None) -> None:
    from .perfetto_out import write_trace
    data = session.stop()
    try:
        if spool:
            spool.write(data)
        elif path:
            write_trace(data, path)
            print("davinci: trace of %d device records written to %s"
                  % (len(data.records), path), file=sys.stderr)
    except OSError as exc:
        print("davinci: cannot write the trace: %s" % exc, file=sys.stderr)


def start_from_environment() -> None:
    """Start tracing this process when DAVINCI_TRACE or DAVINCI_TRACE_SPOOL
    asks for it; called once by ``import davinci``."""
    path = os.environ.get("DAVINCI_TRACE")
    spool = os.environ.get("DAVINCI_TRACE_SPOOL")
    if not path and not spool:
        return
    from ..discovery import find_backend
    from ..errors import DavinciError
    from .session import TraceSession
    try:
        backend = find_backend()
        # Under `davinci trace`, the launcher reads shared devices itself.
        devices = [] if spool and backend.kind != "inproc" else None
        chunks = Spool(spool) if spool else None
        session = TraceSession(devices, spans=True, backend=backend,
                               flush=chunks.write if chunks else None)
        session.start()
    except DavinciError as exc:
        print("davinci: not tracing (DAVINCI_TRACE%s): %s"
              % ("_SPOOL" if spool else "", exc), file=sys.stderr)
        return
    if path:
        path = path.replace("%p", str(os.getpid()))
    atexit.register(_finish, session, path, chunks)
