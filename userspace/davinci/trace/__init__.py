# SPDX-License-Identifier: GPL-2.0
"""Tracing what the NPU did: the devices' trace rings, host API spans, and a
Perfetto trace of both on one clock.

- :class:`TraceSession` traces this process (start, stop -> TraceData);
- :func:`write_trace` writes a :class:`TraceData` as a Perfetto trace;
- ``davinci trace -- COMMAND`` (:func:`run_traced`) traces a command;
- ``DAVINCI_TRACE=FILE`` traces a program started elsewhere (:mod:`.env`);
- ``davinci trace-summary FILE [--png PNG]`` summarises a written trace.

Submodules importing ``perfetto`` or ``matplotlib`` load on first use.
"""

from __future__ import annotations

from .data import TraceData
from .records import (DeviceTraceReader, TraceChunk, TraceRecord,
                      TraceUnsupportedError)
from .session import TraceSession
from .spans import Span, SpanRecorder

__all__ = ["TraceSession", "TraceData", "TraceRecord", "TraceChunk",
           "DeviceTraceReader", "TraceUnsupportedError", "Span",
           "SpanRecorder", "write_trace", "run_traced"]


def write_trace(data: TraceData, path: str) -> None:
    """Write ``data`` to ``path`` as a Perfetto trace."""
    from .perfetto_out import write_trace as _write
    _write(data, path)


def run_traced(command: list[str], output: str, png: str | None = None,
               summary: bool = True) -> int:
    """``davinci trace``: run ``command`` traced (see :mod:`.launch`)."""
    from .launch import run_traced as _run
    return _run(command, output, png, summary)
