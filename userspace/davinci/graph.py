# SPDX-License-Identifier: GPL-2.0
"""Task graphs: capture a stream's tasks once, replay them with one call.

As CUDA graphs (``cudaStreamBeginCapture`` / ``cudaGraphLaunch``) and CANN's
model-run capture::

    with stream.capture() as graph:      # tasks are recorded, not run
        ops.matmul(a, b, out=c, stream=stream)
        ops.relu(c, out=c, stream=stream)
    for _ in range(1000):
        graph.launch()                   # one ioctl queues them all
    stream.synchronize()

The driver keeps the descriptors; each launch resolves the operands again,
so a graph replays on whatever the buffers hold then. A launch completes as
one completion entry (its last task's), unless a task fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _uapi
from .errors import InvalidArgumentError, InvalidHandleError

if TYPE_CHECKING:
    from .stream import Stream
    from .transport import Transport

__all__ = ["Graph"]


class Graph:
    """A captured task graph; made by :meth:`Stream.capture`."""

    def __init__(self, stream: "Stream", transport: "Transport"):
        self.stream = stream
        self._transport = transport
        self.graph_id = 0
        #: tasks it holds (known once the capture ended)
        self.tasks = 0
        self._capturing = False
        self._destroyed = False
        #: what its tasks read at each launch (parameter blocks), freed
        #: with it
        self._held: list = []

    # -- capture -----------------------------------------------------------------
    def __enter__(self) -> "Graph":
        self.stream.check()
        if not self.stream.device.version.has(_uapi.DAVINCI_FEAT_GRAPHS):
            raise InvalidArgumentError(
                "this driver (%s) has no task graphs; update the driver"
                % self.stream.device.version)
        self._transport.ioctl(
            _uapi.DAVINCI_IOCTL_GRAPH_CAPTURE,
            _uapi.davinci_graph_capture(stream_id=self.stream.stream_id))
        self._capturing = True
        self.stream.begin_capture(self)
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.stream.end_capture()
        self._capturing = False
        c = _uapi.davinci_graph_capture(stream_id=self.stream.stream_id)
        if exc_type is not None:
            # the capture is dropped with the error; nothing to keep
            if self._transport.try_ioctl(_uapi.DAVINCI_IOCTL_GRAPH_END,
                                         c) == 0:
                self._destroy_id(int(c.graph_id))
            return
        self._transport.ioctl(_uapi.DAVINCI_IOCTL_GRAPH_END, c)
        self.graph_id = int(c.graph_id)
        self.tasks = int(c.tasks)

    @property
    def capturing(self) -> bool:
        return self._capturing

    # -- use ------------------------------------------------------------------------
    def check(self) -> None:
        """Raise :class:`InvalidHandleError` unless it can be launched."""
        if self._destroyed:
            raise InvalidHandleError("graph %d was destroyed; capture it "
                                     "again" % self.graph_id)
        if not self.graph_id:
            raise InvalidHandleError("the graph is still being captured; "
                                     "launch it after the capture block")

    def launch(self, stream: "Stream | None" = None) -> tuple[int, int]:
        """Queue every task of the graph on ``stream`` (default: the one it
        was captured on) with one ioctl; returns the first and last
        sequence numbers they got there."""
        self.check()
        return (stream or self.stream).launch_graph(self.graph_id)

    def hold(self, buffer) -> None:
        """Keep ``buffer`` (a parameter block its tasks read at each
        launch) until the graph is destroyed."""
        self._held.append(buffer)

    def destroy(self) -> None:
        """Free the graph in the driver (launches already queued run: they
        copied their parameter blocks when they were queued)."""
        if self._destroyed or not self.graph_id:
            self._destroyed = True
            self._release_held()
            return
        self._destroyed = True
        if not self._transport.closed:
            self._destroy_id(self.graph_id)
        self._release_held()

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for b in held:
            if not b.freed:
                b.free()

    def _destroy_id(self, graph_id: int) -> None:
        self._transport.try_ioctl(_uapi.DAVINCI_IOCTL_GRAPH_DESTROY,
                                  _uapi.davinci_graph_id(graph_id=graph_id))

    def __repr__(self) -> str:
        return "<davinci.Graph %d: %d tasks%s>" % (
            self.graph_id, self.tasks,
            " destroyed" if self._destroyed else "")
