# SPDX-License-Identifier: GPL-2.0
"""The driver's limits, and errors that name the limit that was hit.

Every limit but the two fixed graph limits of the ABI header is reported
by ``DAVINCI_IOCTL_GET_LIMITS`` (device nodes and the manager node alike),
so a refused request can say which limit, its value and how to raise it:

=========================  =======  ======================================
limit                      default  set with
=========================  =======  ======================================
contexts per process       64       module parameter
                                    ``max_contexts_per_process``,
                                    ``davinci-fused
                                    --max-contexts-per-process``,
                                    ``DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS``
contexts per user          256      ``max_contexts_per_user``, likewise
streams per context        256      fixed
events per context         4096     fixed
tasks queued per stream    16384    fixed
notifications per context  1024     fixed (older ones are dropped)
task graphs per context    1024     fixed (``DAVINCI_GRAPH_MAX``)
tasks per task graph       16384    fixed (``DAVINCI_GRAPH_MAX_TASKS``)
=========================  =======  ======================================

A context is one open device: a :class:`davinci.Device`, an ``acl`` device
or context, an open ``/dev/davinciN``. Opening one past the per-process
limit fails with EMFILE, past the per-user limit with EUSERS; the runtime
raises :class:`davinci.errors.ContextLimitError`. The pinned host pool (stream rings and
``malloc_host``) is sized per device by ``host_mb`` / ``--host-mb`` /
``DAVINCI_INPROC_HOST_MB``.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import os
import stat
from dataclasses import dataclass

from . import _uapi
from .errors import (ContextLimitError, DavinciError, LimitError,
                     OutOfMemoryError, QueueFullError)

__all__ = ["Limits", "read_limits", "how_to_raise", "backend_kind",
           "context_limit_error", "fd_exhaustion_error",
           "open_limit_error", "ioctl_limit_error"]


@dataclass(frozen=True)
class Limits:
    """``DAVINCI_IOCTL_GET_LIMITS``: 0 in a contexts limit means none."""
    contexts_per_process: int
    contexts_per_user: int
    streams_per_context: int
    events_per_context: int
    tasks_per_stream: int
    notifications_per_context: int

    @classmethod
    def from_struct(cls, s: _uapi.davinci_limits) -> "Limits":
        return cls(int(s.contexts_per_process), int(s.contexts_per_user),
                   int(s.streams_per_context), int(s.events_per_context),
                   int(s.tasks_per_stream),
                   int(s.notifications_per_context))


def _read_path(path: str) -> "Limits | None":
    import fcntl
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        s = _uapi.davinci_limits()
        fcntl.ioctl(fd, _uapi.DAVINCI_IOCTL_GET_LIMITS, s, True)
        return Limits.from_struct(s)
    except OSError:
        return None     # an older driver: ENOTTY
    finally:
        os.close(fd)


def _read_inproc() -> "Limits | None":
    from . import _corelib
    from .inproc import apply_inproc_limits
    apply_inproc_limits()
    s = _uapi.davinci_limits()
    if _corelib.manager_ioctl(_uapi.DAVINCI_IOCTL_GET_LIMITS, s) < 0:
        return None
    return Limits.from_struct(s)


def read_limits(backend=None) -> Limits:
    """The limits of ``backend`` (default: the one discovery finds), from
    its manager node. Raises :class:`DavinciError` when it cannot say."""
    from .discovery import find_backend
    if backend is None:
        backend = find_backend()
    if backend.kind == "inproc":
        lim = _read_inproc()
    else:
        lim = _read_path(backend.manager_path())
    if lim is None:
        raise DavinciError("the driver does not report its limits "
                           "(DAVINCI_IOCTL_GET_LIMITS): it predates them; "
                           "update it", _errno.ENOTTY)
    return lim


def backend_kind(path: "str | None") -> str:
    """"kmod", "fuse" or "inproc" (``path`` None) for a node path."""
    if path is None:
        return "inproc"
    try:
        return "kmod" if stat.S_ISCHR(os.stat(path).st_mode) else "fuse"
    except OSError:
        return "fuse"


_KNOBS = {
    "contexts_per_process": ("max_contexts_per_process",
                             "--max-contexts-per-process",
                             "DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS"),
    "contexts_per_user": ("max_contexts_per_user", "--max-contexts-per-user",
                          "DAVINCI_INPROC_MAX_CONTEXTS_PER_USER"),
    "host_pool": ("host_mb", "--host-mb", "DAVINCI_INPROC_HOST_MB"),
}


def how_to_raise(limit: str, kind: str) -> str:
    """The command that raises ``limit`` on a backend of ``kind``."""
    param, flag, env = _KNOBS[limit]
    if kind == "kmod":
        if limit == "host_pool":
            return ("reload the module with a larger %s (sudo rmmod davinci;"
                    " sudo modprobe davinci %s=N)" % (param, param))
        return ("echo N | sudo tee /sys/module/davinci/parameters/%s (or "
                "sudo modprobe davinci %s=N; 0 lifts the limit)"
                % (param, param))
    if kind == "fuse":
        return "restart davinci-fused with %s N" % flag
    return "set %s=N in the environment" % env


def _value_text(value: "int | None") -> str:
    return "unknown (the driver does not report it)" if value is None \
        else str(value)


def context_limit_error(err: int, where: str, kind: str,
                        limits: "Limits | None") -> DavinciError:
    """The exception for an open of ``where`` refused with EMFILE or EUSERS
    by the driver (the caller ruled out running out of descriptors)."""
    if err == _errno.EUSERS:
        name, code = "contexts_per_user", "EUSERS"
        holder = ("your user (uid %d) holds the most davinci contexts one "
                  "user may, over all its processes and devices"
                  % os.getuid())
        fix = ("close devices your other processes no longer use (npu-smi "
               "info lists them)")
    else:
        name, code = "contexts_per_process", "EMFILE"
        holder = ("this process (pid %d) holds the most davinci contexts "
                  "one process may, over all devices" % os.getpid())
        fix = ("close Device objects you no longer use (each davinci.Device, "
               "acl device or open node is one context)")
    value = getattr(limits, name) if limits else None
    text = ("cannot open %s: %s: %s limit %s (%s); %s, or raise the limit: %s"
            % (where, holder, name.replace("_", " "), _value_text(value),
               code, fix, how_to_raise(name, kind)))
    return ContextLimitError(text, err, name, value)


def fd_exhaustion_error(where: str) -> "DavinciError | None":
    """When the process itself is out of file descriptors (EMFILE from the
    kernel, before the driver is asked), the error that says so."""
    try:
        fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != _errno.EMFILE:
            return None
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        return DavinciError(
            "cannot open %s: this process has no file descriptor left "
            "(RLIMIT_NOFILE %d, hard limit %d): close files or devices, or "
            "raise it (ulimit -n)" % (where, soft, hard), _errno.EMFILE)
    os.close(fd)
    return None


def open_limit_error(err: int, where: str, path: "str | None" = None
                     ) -> DavinciError:
    """The exception for an open of ``where`` (node ``path``; None for the
    in-process core) that failed with EMFILE or EUSERS: the process out of
    file descriptors, or the driver's limit on contexts, read from the
    manager node beside ``path``."""
    if err == _errno.EMFILE and path is not None:
        exc = fd_exhaustion_error(where)
        if exc is not None:
            return exc
    if path is None:
        lim = _read_inproc()
    else:
        lim = _read_path(os.path.join(os.path.dirname(path),
                                      "davinci_manager"))
    return context_limit_error(err, where, backend_kind(path), lim)


def _ring_bytes(entries: int, entry_size: int) -> int:
    n = _uapi.DAVINCI_RING_ENTRIES_OFFSET + (entries or 256) * entry_size
    return (n + 4095) & ~4095


def ioctl_limit_error(t, err: int, cmd: int, arg, what: str
                      ) -> "DavinciError | None":
    """The exception naming the limit or pool behind ``err`` of ``cmd`` on
    transport ``t``, or None when ``err`` is not about one."""
    if cmd == _uapi.DAVINCI_IOCTL_GRAPH_END and \
            err in (_errno.ENOSPC, _errno.E2BIG):
        return _graph_limit_error(err, what)
    if (cmd, err) not in ((_uapi.DAVINCI_IOCTL_DOORBELL, _errno.EBUSY),
                          (_uapi.DAVINCI_IOCTL_STREAM_CREATE, _errno.ENOSPC),
                          (_uapi.DAVINCI_IOCTL_EVENT_CREATE, _errno.ENOSPC),
                          (_uapi.DAVINCI_IOCTL_STREAM_CREATE, _errno.ENOMEM)):
        return None
    if cmd == _uapi.DAVINCI_IOCTL_STREAM_CREATE and err == _errno.ENOMEM:
        return _ring_oom(t, arg, what)
    lim = None
    s = _uapi.davinci_limits()
    try:
        if t.try_ioctl(_uapi.DAVINCI_IOCTL_GET_LIMITS, s) == 0:
            lim = Limits.from_struct(s)
    except DavinciError:
        pass
    if cmd == _uapi.DAVINCI_IOCTL_DOORBELL:
        value = lim.tasks_per_stream if lim else None
        sid = getattr(arg, "stream_id", None)
        return QueueFullError(
            "%s failed: stream %s would hold more queued tasks than the "
            "driver allows per stream: tasks per stream limit %s (EBUSY); "
            "the tasks of this doorbell were not taken in (those before it "
            "were): wait for earlier tasks (stream.synchronize()) before "
            "submitting more, or spread the work over more streams"
            % (what, sid if sid is not None else "?", _value_text(value)),
            err,
            "tasks_per_stream", value)
    if cmd == _uapi.DAVINCI_IOCTL_STREAM_CREATE:
        value = lim.streams_per_context if lim else None
        return LimitError(
            "%s failed: this context has the most streams one context may "
            "create: streams per context limit %s (ENOSPC); destroy streams "
            "you no longer use, or open another Device for more"
            % (what, _value_text(value)), err, "streams_per_context", value)
    value = lim.events_per_context if lim else None
    return LimitError(
        "%s failed: this context has the most events one context may "
        "create: events per context limit %s (ENOSPC); destroy events you "
        "no longer use" % (what, _value_text(value)), err,
        "events_per_context", value)


def _graph_limit_error(err: int, what: str) -> LimitError:
    """GRAPH_END's ENOSPC and E2BIG: the graph limits are fixed in the ABI
    (DAVINCI_GRAPH_MAX, DAVINCI_GRAPH_MAX_TASKS), the same on every
    backend, and not among those GET_LIMITS reports."""
    if err == _errno.ENOSPC:
        value = _uapi.DAVINCI_GRAPH_MAX
        return LimitError(
            "%s failed: this context holds the most task graphs one context "
            "may: graphs per context limit %d (ENOSPC; fixed, no module "
            "parameter or daemon option raises it); the capture was "
            "dropped: destroy graphs you no longer use (graph.destroy()), "
            "or capture into a stream of another Device" % (what, value),
            err, "graphs_per_context", value)
    value = _uapi.DAVINCI_GRAPH_MAX_TASKS
    return LimitError(
        "%s failed: the capture holds more tasks than one graph may: tasks "
        "per graph limit %d (E2BIG; fixed, no module parameter or daemon "
        "option raises it); the capture was dropped: capture the work as "
        "several graphs of fewer tasks" % (what, value), err,
        "tasks_per_graph", value)


def _ring_oom(t, arg, what: str) -> DavinciError:
    """STREAM_CREATE's ENOMEM: the rings come from the pinned host pool."""
    sqe = int(getattr(arg, "sq_entries", 0) or 256)
    cqe = int(getattr(arg, "cq_entries", 0) or 256)
    need = _ring_bytes(sqe, ctypes.sizeof(_uapi.davinci_task)) + \
        _ring_bytes(cqe, ctypes.sizeof(_uapi.davinci_completion))
    kind = backend_kind(getattr(t, "path", None))
    m = _uapi.davinci_mem_info(flags=_uapi.DAVINCI_MEM_HOST)
    try:
        ok = t.try_ioctl(_uapi.DAVINCI_IOCTL_MEM_INFO, m) == 0
    except DavinciError:
        ok = False
    if not ok:
        return OutOfMemoryError(
            "%s failed: out of pinned host memory: a stream's submission "
            "and completion rings (%d bytes for %d + %d entries) come from "
            "the device's pinned host pool; destroy streams or free pinned "
            "host buffers you no longer use, or enlarge the pool: %s"
            % (what, need, sqe, cqe, how_to_raise("host_pool", kind)),
            _errno.ENOMEM, requested=need)
    return OutOfMemoryError(
        "%s failed: out of pinned host memory: a stream's submission and "
        "completion rings (%d bytes for %d + %d entries) come from the "
        "device's pinned host pool, which has %d bytes free (largest free "
        "range %d) of %d total; this context holds %d bytes of it in %d "
        "allocations besides its rings: destroy streams or free pinned host "
        "buffers (malloc_host) you no longer use, create streams with fewer "
        "entries, or enlarge the pool: %s"
        % (what, need, sqe, cqe, m.free, m.largest_free, m.total, m.ctx_used,
           m.ctx_allocations, how_to_raise("host_pool", kind)),
        _errno.ENOMEM, requested=need, free=int(m.free), total=int(m.total),
        largest_free=int(m.largest_free))
