# SPDX-License-Identifier: GPL-2.0
"""Host API spans: which runtime and acl calls ran when, on which thread.

:class:`SpanRecorder` collects spans from :meth:`SpanRecorder.span` (a
context manager) and :meth:`SpanRecorder.wrap` (a decorator).
:func:`instrument` wraps the public API of ``davinci`` (Device, Stream,
Event, ops) and ``acl`` in place while a trace runs, so nothing else in the
runtime knows about tracing and an untraced program pays nothing. Code
that cannot be wrapped in place (torch_npu's ATen kernels, registered with
the dispatcher once) asks :func:`active_recorder` at each call: None while
nothing traces.
Timestamps are ``time.monotonic_ns()``: the clock the device stamps its
records with.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Iterator

__all__ = ["Span", "SpanRecorder", "Instrumentation", "instrument",
           "active_recorder"]


@dataclass(frozen=True)
class Span:
    """One host call: ``category`` is "runtime", "acl" or "torch" (an ATen
    op of torch_npu); ``error`` names
    the exception it raised, if any; ``tasks`` the (device, stream, first
    seq, last seq) it submitted, for a submission."""
    name: str
    category: str
    pid: int
    tid: int
    thread_name: str
    start_ns: int
    end_ns: int
    error: str | None = None
    tasks: tuple[int, int, int, int] | None = None

    def to_list(self) -> list:
        return [self.name, self.category, self.pid, self.tid,
                self.thread_name, self.start_ns, self.end_ns, self.error,
                list(self.tasks) if self.tasks else None]

    @classmethod
    def from_list(cls, v: list) -> "Span":
        return cls(str(v[0]), str(v[1]), int(v[2]), int(v[3]), str(v[4]),
                   int(v[5]), int(v[6]), v[7],
                   tuple(int(x) for x in v[8]) if v[8] else None)


def submitted_tasks(stream, result) -> tuple[int, int, int, int] | None:
    """What ``Stream.submit`` (a list of seqs) or ``Stream.launch`` (a seq)
    submitted: (device, stream, first seq, last seq), or None."""
    seqs = [result] if isinstance(result, int) else list(result or ())
    if not seqs:
        return None
    return (stream.device.index, stream.stream_id, min(seqs), max(seqs))


class SpanRecorder:
    """Thread-safe collector of :class:`Span`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[Span] = []

    def add(self, span: Span) -> None:
        with self._lock:
            self._spans.append(span)

    def take(self) -> list[Span]:
        """The spans recorded so far, forgetting them."""
        with self._lock:
            out, self._spans = self._spans, []
            return out

    @contextlib.contextmanager
    def span(self, name: str, category: str = "runtime"
             ) -> Iterator["OpenSpan"]:
        """Record the ``with`` block as a span named ``name``; set the
        yielded object's ``tasks`` to link it to the tasks it submitted."""
        t = threading.current_thread()
        start = time.monotonic_ns()
        open_ = OpenSpan()
        try:
            yield open_
        except BaseException as exc:
            open_.error = type(exc).__name__
            raise
        finally:
            self.add(Span(name, category, os.getpid(),
                          threading.get_native_id(), t.name, start,
                          time.monotonic_ns(), open_.error, open_.tasks))

    def wrap(self, fn: Callable, name: str, category: str,
             tasks: Callable | None = None) -> Callable:
        """``fn`` recording a span per call; ``tasks(self_arg, result)``
        names the device tasks a submission made (:func:`submitted_tasks`)."""
        @functools.wraps(fn)
        def traced(*args, **kwargs):
            with self.span(name, category) as open_:
                result = fn(*args, **kwargs)
                if tasks is not None:
                    open_.tasks = tasks(args[0], result)
                return result
        traced.__davinci_traced__ = fn  # type: ignore[attr-defined]
        return traced


@dataclass
class OpenSpan:
    """A span being recorded: what :meth:`SpanRecorder.span` yields."""
    error: str | None = None
    tasks: tuple[int, int, int, int] | None = None


# What instrument() wraps: the runtime's calls that do device work or wait
# for it (not its helpers), and every public function of acl's modules.
_RUNTIME_API = {
    "Device": ("malloc", "malloc_host", "stream", "event", "tensor", "empty",
               "synchronize", "reset"),
    "Stream": ("submit", "launch", "launch_graph", "wait", "synchronize",
               "reset", "destroy", "nop", "memcpy", "memset",
               "copy_from_host", "copy_to_host", "record", "wait_event",
               "add_callback", "notify", "cancel"),
    "Event": ("record", "signal", "synchronize", "wait", "elapsed_time",
              "destroy"),
    "Buffer": ("write", "read", "free"),
    "DeviceTensor": ("numpy",),
}
_SUBMITS = {("Stream", "submit"), ("Stream", "launch")}
_OPS = ("add", "sub", "mul", "div", "maximum", "minimum", "relu", "exp",
        "axpy", "matmul", "softmax", "reduce_sum", "cast")
_ACL_MODULES = ("acl", "acl.rt", "acl.op", "acl.util", "acl.media")


# The recorder of the trace running in this process, for active_recorder().
_active: SpanRecorder | None = None


def active_recorder() -> SpanRecorder | None:
    """Where host spans go while :func:`instrument` is in place with
    ``torch`` (a trace runs), else None."""
    return _active


class Instrumentation:
    """The wrappers :func:`instrument` put in place; :meth:`remove` undoes
    them."""

    def __init__(self) -> None:
        self._undo: list[tuple[object, str, object]] = []
        self.recorder: SpanRecorder | None = None   # as active_recorder()

    def _replace(self, owner: object, name: str, new: object) -> None:
        self._undo.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, new)

    def remove(self) -> None:
        global _active
        for owner, name, old in reversed(self._undo):
            setattr(owner, name, old)
        self._undo.clear()
        if self.recorder is not None and _active is self.recorder:
            _active = None
        self.recorder = None


def _public_functions(owner) -> list[tuple[str, Callable]]:
    return [(n, f) for n, f in vars(owner).items()
            if not n.startswith("_") and inspect.isfunction(f)
            and not hasattr(f, "__davinci_traced__")]


def _wrap_module(ins: Instrumentation, rec: SpanRecorder, mod: ModuleType,
                 category: str) -> None:
    for name, fn in _public_functions(mod):
        # functions the module re-exports from elsewhere are wrapped there
        if not fn.__module__.startswith(mod.__name__.split(".")[0]):
            continue
        ins._replace(mod, name, rec.wrap(fn, "%s.%s" % (mod.__name__, name),
                                         category))


def instrument(rec: SpanRecorder, acl: bool = True,
               runtime: bool = True, torch: bool = True) -> Instrumentation:
    """Wrap the public API of ``davinci`` (``runtime``) and of ``acl`` (when
    imported or importable, ``acl``) to record spans into ``rec``; with
    ``torch``, torch_npu's ATen kernels (imported now or later) record a
    span per op into it too (:func:`active_recorder`)."""
    global _active
    import davinci
    ins = Instrumentation()
    if torch:
        _active = ins.recorder = rec
    if runtime:
        for cname, names in _RUNTIME_API.items():
            cls = getattr(davinci, cname)
            for name, fn in _public_functions(cls):
                if name in names:
                    ins._replace(cls, name, rec.wrap(
                        fn, "%s.%s" % (cname, name), "runtime",
                        submitted_tasks if (cname, name) in _SUBMITS
                        else None))
        for name, fn in _public_functions(davinci.ops):
            if name in _OPS:
                ins._replace(davinci.ops, name, rec.wrap(
                    fn, "ops.%s" % name, "runtime"))
    if acl:
        try:
            import acl  # noqa: F401  (loads acl.rt, acl.op, ...)
        except ImportError:
            return ins
        for mname in _ACL_MODULES:
            if mname in sys.modules:
                _wrap_module(ins, rec, sys.modules[mname], "acl")
    return ins
