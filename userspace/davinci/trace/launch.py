# SPDX-License-Identifier: GPL-2.0
"""``davinci trace -- COMMAND ...``: run a command and write a Perfetto trace
of what the NPU (and the command's davinci/acl calls) did meanwhile.

On a shared backend (the module, FUSE) the launcher reads the devices'
rings itself, so a command that crashes, fails or is not Python still
leaves a device trace. Python processes that import davinci add their host
spans (and, on the in-process backend, their own devices' records) through
``DAVINCI_TRACE_SPOOL`` (see :mod:`.env`).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from ..errors import DavinciError
from .data import TraceData
from .session import TraceSession

__all__ = ["run_traced", "report"]


def _spooled(spool: str) -> TraceData:
    data = TraceData()
    for path in sorted(glob.glob(os.path.join(spool, "*.json"))):
        try:
            with open(path) as f:
                data.merge(TraceData.from_json(f.read()))
        except (OSError, ValueError, KeyError) as exc:
            print("davinci trace: skipping %s: %s" % (path, exc),
                  file=sys.stderr)
    return data


def _run(command: list[str], env: dict) -> int:
    try:
        proc = subprocess.Popen(command, env=env)
    except OSError as exc:
        print("davinci trace: cannot run %s: %s" % (command[0], exc),
              file=sys.stderr)
        return 127
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait()
    return rc if rc >= 0 else 128 - rc


def report(data: TraceData, output: str, png: str | None,
           summary: bool) -> None:
    """Write ``data`` to ``output``; print the summary, draw ``png``."""
    from .perfetto_out import write_trace
    from .timeline import load_timeline
    write_trace(data, output)
    tasks = sum(1 for r in data.records if r.kind == "TASK_COMPLETE")
    print("davinci trace: %d tasks, %d host calls, %d records dropped -> %s"
          % (tasks, len(data.spans), sum(data.dropped.values()), output),
          file=sys.stderr)
    if summary or png:
        tl = load_timeline(output)
        if summary:
            from .summary import summarize
            print(summarize(tl), file=sys.stderr)
        if png:
            from .png import render_png
            render_png(tl, png)
            print("davinci trace: timeline drawn in %s" % png,
                  file=sys.stderr)


def run_traced(command: list[str], output: str, png: str | None = None,
               summary: bool = True) -> int:
    """Run ``command`` traced; write the trace to ``output`` whatever its
    outcome. Returns its exit status (128 + N when killed by signal N)."""
    import davinci
    try:
        backend = davinci.find_backend()
    except DavinciError as exc:
        print("davinci trace: no device to trace: %s" % exc,
              file=sys.stderr)
        return 1
    session = None
    if backend.kind != "inproc":
        session = TraceSession(spans=False, backend=backend)
        try:
            session.start()
        except DavinciError as exc:
            print("davinci trace: %s" % exc, file=sys.stderr)
            return 1
    spool = tempfile.mkdtemp(prefix="davinci-trace-")
    try:
        env = dict(os.environ, DAVINCI_TRACE_SPOOL=spool)
        env.pop("DAVINCI_TRACE", None)
        rc = _run(command, env)
        data = session.stop() if session else TraceData()
        data.merge(_spooled(spool))
        report(data, output, png, summary)
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    return rc
