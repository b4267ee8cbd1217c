# SPDX-License-Identifier: GPL-2.0
"""``torch.npu.Stream`` and ``torch.npu.Event`` over davinci streams and
events.

Each device has a default stream and a current stream. The current stream is
per device and process-wide (not per thread), so the autograd engine's
backward thread queues on the stream the forward pass used. Ops queue their
tasks on the current stream of their device and return at once; reading an
npu tensor on the host (``.cpu()``, ``.item()``, printing, a CPU fallback)
synchronises the device first.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Iterator

import torch

import davinci

from . import _devices

__all__ = ["Stream", "Event", "current_stream", "default_stream",
           "set_stream", "stream", "synchronize", "device_index"]

_lock = threading.Lock()
_default: dict[int, "Stream"] = {}
_current: dict[int, "Stream"] = {}


def device_index(device=None) -> int:
    """Index of ``device`` (None: the current device; int, "npu:1",
    torch.device)."""
    if device is None:
        from . import _ext
        return _ext.load().current_device()
    if isinstance(device, int):
        return _devices.check_index(device)
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "npu":
            raise ValueError("expected an npu device, got %s" % device)
        return device_index(device.index)
    raise TypeError("device must be an int, a str or a torch.device, not %s"
                    % type(device).__name__)


def _davinci_priority(priority: int) -> int:
    # torch: lower is higher priority, 0 default; davinci: 0 highest .. 7
    return 0 if priority <= 0 else min(int(priority), 7)


# c10::DeviceType::PrivateUse1: the device type of the c10::Stream PyTorch
# packs a torch.npu.Stream into (torch.Stream's ``device_type``)
_PRIVATEUSE1 = 20
# c10::Stream::DEFAULT: the id the C++ guard (csrc/npu.cpp) reports for every
# device's stream, which is the default stream
_DEFAULT_ID = 0
#: (device index, stream id) -> the stream, for torch.Streams that PyTorch
#: hands back (record_stream's argument); davinci stream ids start at 1 and
#: are never reused in a context, so an id names one stream
_by_id: "weakref.WeakValueDictionary[tuple[int, int], Stream]" = \
    weakref.WeakValueDictionary()


class Stream(torch.Stream):
    """An npu stream: one davinci stream of the device's context.

    ``Stream(device=None, priority=0)``; use ``with torch.npu.stream(s):``
    (or ``with s:``) to make it current. It is a ``torch.Stream`` (device
    type npu, ``stream_id`` the davinci stream id, 0 for the default
    stream), so PyTorch's APIs that take a stream, such as
    ``Tensor.record_stream``, accept it.
    """

    def __new__(cls, device=None, priority: int = 0):
        return cls._create(device_index(device), int(priority), False)

    @classmethod
    def _create(cls, index: int, priority: int, default: bool) -> "Stream":
        ctx = _devices.context(index)
        davinci_stream = ctx.stream(_davinci_priority(priority))
        c10_id = _DEFAULT_ID if default else davinci_stream.stream_id
        self = super().__new__(cls, stream_id=c10_id, device_index=index,
                               device_type=_PRIVATEUSE1)
        self.priority = priority
        #: the davinci.Stream tasks are queued on
        self.davinci_stream = davinci_stream
        #: what ``with self:`` made current before, innermost last
        self._entered: list["Stream | None"] = []
        _by_id[(index, c10_id)] = self
        return self

    @property
    def npu_stream(self) -> int:
        """The davinci stream id."""
        return self.davinci_stream.stream_id

    def query(self) -> bool:
        """True when every task queued so far has completed."""
        return self.davinci_stream.query().idle

    def synchronize(self) -> None:
        """Wait for every task queued so far (raises if one failed)."""
        self.davinci_stream.synchronize()

    def wait_event(self, event: "Event") -> None:
        """Later work on this stream waits for ``event``'s last record."""
        event.wait(self)

    def wait_stream(self, other: "Stream") -> None:
        """Later work on this stream waits for what ``other`` queued so
        far (on the device: an event recorded there, waited on here)."""
        self.wait_event(other.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one if None) on this stream."""
        event = event or Event()
        event.record(self)
        return event

    # torch.Stream's own would ask the C++ guard, which keeps no current
    # stream: the block would run on the stream that was current before
    def __enter__(self) -> "Stream":
        self._entered.append(_current.get(self.device_index))
        _current[self.device_index] = self
        return self

    def __exit__(self, *exc) -> None:
        _restore(self.device_index, self._entered.pop())

    def __repr__(self) -> str:
        return "<torch_npu.Stream device=npu:%d npu_stream=%d priority=%d>" \
            % (self.device_index, self.npu_stream, self.priority)


def from_torch_stream(s: torch.Stream) -> Stream:
    """The torch.npu.Stream that ``s`` (a torch.Stream PyTorch handed
    back, such as record_stream's argument) stands for."""
    if isinstance(s, Stream):
        return s
    if not isinstance(s, torch.Stream) or s.device_type != _PRIVATEUSE1:
        raise RuntimeError("expected a stream of an npu device, got %r: use "
                           "torch.npu.Stream() or torch.npu.current_stream()"
                           % (s,))
    if s.stream_id == _DEFAULT_ID:
        return default_stream(s.device_index)
    found = _by_id.get((s.device_index, s.stream_id))
    if found is None:
        raise RuntimeError(
            "npu:%d has no torch.npu.Stream with stream_id %d: it was "
            "garbage collected, or the id was not made by torch.npu.Stream"
            % (s.device_index, s.stream_id))
    return found


def default_stream(device=None) -> Stream:
    """The device's default stream."""
    index = device_index(device)
    s = _default.get(index)
    if s is None:
        with _lock:
            s = _default.get(index)
            if s is None:
                s = _default[index] = Stream._create(index, 0, True)
    return s


def current_stream(device=None) -> Stream:
    """The stream ops on the device queue on."""
    if isinstance(device, int):         # the kernels' per-op path
        s = _current.get(device) or _default.get(device)
        if s is not None:
            return s
    index = device_index(device)
    return _current.get(index) or default_stream(index)


def set_stream(s: Stream) -> None:
    """Make ``s`` the current stream of its device."""
    _current[s.device_index] = s


@contextlib.contextmanager
def stream(s: "Stream | None") -> Iterator["Stream | None"]:
    """Make ``s`` current on its device for the block (None: no change)."""
    if s is None:
        yield None
        return
    before = _current.get(s.device_index)
    _current[s.device_index] = s
    try:
        yield s
    finally:
        _restore(s.device_index, before)


def _restore(index: int, before: "Stream | None") -> None:
    """Make ``before`` current again on device ``index`` (None: the
    default stream)."""
    if before is None:
        _current.pop(index, None)
    else:
        _current[index] = before


def synchronize(device=None) -> None:
    """Wait for every stream of the device (raises if a task failed)."""
    _devices.context(device_index(device)).synchronize()


class Event:
    """An npu event: a davinci event, created on its first record.

    ``enable_timing=True`` records device timestamps for
    :meth:`elapsed_time`.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        if interprocess:
            raise NotImplementedError("npu events cannot be shared between "
                                      "processes")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._event: davinci.Event | None = None
        self._index: int | None = None

    def _on(self, s: Stream) -> davinci.Event:
        if self._event is None:
            ctx = _devices.context(s.device_index)
            self._event = ctx.event(timing=self.enable_timing)
            self._index = s.device_index
        elif self._index != s.device_index:
            raise RuntimeError(
                "npu event was recorded on npu:%d; it cannot be used with a "
                "stream of npu:%d" % (self._index, s.device_index))
        return self._event

    def record(self, stream: Stream | None = None) -> None:
        """Record on ``stream`` (default: the current stream)."""
        s = stream or current_stream()
        s.davinci_stream.record(self._on(s))

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream`` (default: current) wait for the last record."""
        s = stream or current_stream()
        if self._event is not None:
            s.davinci_stream.wait_event(self._on(s))

    def query(self) -> bool:
        """True when the last record completed (or there was none)."""
        return self._event is None or self._event.is_complete()

    def synchronize(self) -> None:
        """Wait on the host for the last record."""
        if self._event is not None:
            self._event.synchronize()

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds of device time from this event's record to
        ``end``'s (both recorded, completed, made with enable_timing)."""
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("elapsed_time needs events created with "
                               "enable_timing=True")
        if self._event is None or end.davinci_event is None:
            raise RuntimeError("elapsed_time needs both events recorded "
                               "first")
        return davinci.Event.elapsed_ms(self._event, end.davinci_event)

    @property
    def davinci_event(self) -> "davinci.Event | None":
        return self._event

    def __repr__(self) -> str:
        return "<torch_npu.Event %s>" % (
            "unrecorded" if self._event is None
            else "npu:%d event %d" % (self._index, self._event.event_id))
