# SPDX-License-Identifier: GPL-2.0
"""Driver limits: each one is reported (DAVINCI_IOCTL_GET_LIMITS), hitting
it raises an exception that names the limit and its value and says what to
do, and the device works again once the user backs off.

On every backend: open Device objects until the contexts-per-process limit
(the in-process core takes a small limit from
DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS; the FUSE daemon and the module use
their default, 64), streams per context, tasks queued per stream, and the
pinned host pool that holds stream rings.
"""

import errno
import os
import threading
import time

import pytest

import davinci
from davinci import _uapi
from davinci.limits import backend_kind, read_limits
from davinci.manager import Manager

from .conftest import GATE_US, wait_quiescent

#: Opening more Devices than this to reach a limit is too slow for a test.
MAX_OPEN = 256


def _my_contexts() -> int:
    """Contexts of this process over all devices, per the manager (which
    lists up to 32 per device)."""
    with Manager() as m:
        return sum(1 for i in m.devices() for p in m.processes(i)
                   if p.pid == os.getpid())


def _wait(pred, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


@pytest.fixture
def small_inproc_limit(backend, monkeypatch):
    if backend.kind == "inproc":
        monkeypatch.setenv("DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS", "5")
    yield
    if backend.kind == "inproc":
        monkeypatch.delenv("DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS")
        read_limits()       # the default is back for the next test


def test_limits_are_reported(backend):
    with davinci.Device(0) as dev:
        assert dev.version.has(_uapi.DAVINCI_FEAT_LIMITS)
        s = _uapi.davinci_limits()
        dev.transport.ioctl(_uapi.DAVINCI_IOCTL_GET_LIMITS, s)
    lim = read_limits(backend)      # from the manager node
    assert lim.contexts_per_process == s.contexts_per_process
    assert lim.contexts_per_user == s.contexts_per_user
    assert list(s.reserved) == [0] * 5
    assert lim.streams_per_context == 256
    assert lim.events_per_context == 4096
    assert lim.tasks_per_stream == 16384
    assert lim.notifications_per_context == 1024
    if backend.kind == "inproc":
        assert (lim.contexts_per_process, lim.contexts_per_user) == (64, 256)


def test_contexts_per_process(backend, small_inproc_limit):
    limit = read_limits(backend).contexts_per_process
    if not 0 < limit <= MAX_OPEN:
        pytest.skip("contexts per process limit %d: too many to open in a "
                    "test" % limit)
    # contexts closed by earlier tests may still be releasing (FUSE)
    _wait(lambda: _my_contexts() == 0)
    before = _my_contexts()
    devs = []
    try:
        with pytest.raises(davinci.ContextLimitError) as ei:
            for _ in range(limit + 1):
                devs.append(davinci.Device(0))
        e = ei.value
        assert len(devs) == limit - before
        assert e.errno == errno.EMFILE
        assert e.limit == "contexts_per_process" and e.value == limit
        msg = str(e)
        assert "contexts per process limit %d" % limit in msg, msg
        assert "close Device objects" in msg
        kind = "inproc" if backend.kind == "inproc" else \
            backend_kind(backend.node_path(0))
        knob = {"inproc": "DAVINCI_INPROC_MAX_CONTEXTS_PER_PROCESS=N",
                "fuse": "davinci-fused with --max-contexts-per-process N",
                "kmod": "/sys/module/davinci/parameters/"
                        "max_contexts_per_process"}[kind]
        assert knob in msg, msg
        # any device counts: the next one refuses too
        if backend.device_count() > 1:
            with pytest.raises(davinci.ContextLimitError):
                devs.append(davinci.Device(1))
    finally:
        for d in devs:
            d.close()
    # once closed (FUSE releases asynchronously), opening works again
    assert _wait(lambda: _my_contexts() == before)
    with davinci.Device(0) as d:
        assert d.info.index == 0


def test_streams_per_context(dev):
    limit = read_limits().streams_per_context
    streams = []
    try:
        with pytest.raises(davinci.LimitError) as ei:
            for _ in range(limit + 1):
                # small rings: the pinned host pool is not the limit here
                streams.append(dev.stream(sq_entries=16, cq_entries=16))
        assert len(streams) == limit
        assert ei.value.limit == "streams_per_context"
        assert ei.value.errno == errno.ENOSPC
        assert "streams per context limit %d" % limit in str(ei.value)
    finally:
        for s in streams:
            s.destroy()
    dev.stream().destroy()


def test_tasks_per_stream(dev):
    """A doorbell that would queue too many tasks is refused."""
    limit = read_limits().tasks_per_stream
    s = dev.stream(polled=False)
    gate = s.nop(GATE_US)
    nop = _uapi.davinci_task(opcode=_uapi.DAVINCI_OP_NOP, count=0)
    queued = 1
    try:
        with pytest.raises(davinci.BusyError) as ei:
            while queued <= limit:
                queued += len(s.submit([nop] * 256))
        e = ei.value
        assert isinstance(e, davinci.QueueFullError)
        assert e.limit == "tasks_per_stream" and e.value == limit
        assert "tasks per stream limit %d" % limit in str(e)
        assert "synchronize" in str(e)
        assert limit - 256 < queued <= limit
    finally:
        s.cancel(gate)
        s.synchronize(timeout=60)
    s.submit([nop])
    s.synchronize(timeout=60)
    s.destroy()


def test_tasks_per_stream_polled(dev):
    """A polled ring is not refused: the device takes in at most the limit
    and leaves the rest in the ring, so the host waits for room."""
    limit = read_limits().tasks_per_stream
    s = dev.stream(sq_entries=4096)
    if not s.polled:
        pytest.skip("the driver has no polled rings")
    gate = s.nop(GATE_US)
    # more than the device queues and the ring holds together
    tasks = davinci.task_array(limit + 8192)
    tasks["opcode"] = _uapi.DAVINCI_OP_NOP
    done = threading.Event()
    t = threading.Thread(target=lambda: (s.submit(tasks), done.set()))
    t.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            q = s.query()
            if q.submitted_seq - q.completed_seq >= limit:
                break
            time.sleep(0.01)
        q = s.query()
        assert q.submitted_seq - q.completed_seq == limit
        assert not done.is_set()
    finally:
        s.cancel(gate)
        t.join(60)
    assert done.is_set()
    s.synchronize(timeout=60)
    assert s.query().completed_seq == limit + 8193
    s.destroy()


def test_pinned_pool_exhausted_by_rings(dev):
    """Stream rings come from the pinned host pool: when it is full, the
    error says so, with the pool's figures and how to enlarge it."""
    wait_quiescent(dev)
    fill = []
    try:
        while True:
            m = dev.mem_info(host=True)
            if m.largest_free < 4096:
                break
            fill.append(dev.malloc_host(m.largest_free))
        with pytest.raises(davinci.OutOfMemoryError) as ei:
            dev.stream()
        msg = str(ei.value)
        assert "pinned host" in msg and "rings" in msg, msg
        assert "of %d total" % dev.mem_info(host=True).total in msg, msg
        assert any(k in msg for k in ("host_mb", "--host-mb",
                                      "DAVINCI_INPROC_HOST_MB")), msg
        assert ei.value.requested >= 2 * 4096
    finally:
        for b in fill:
            b.free()
    dev.stream().destroy()


def _graphs_or_skip(dev):
    if not dev.version.has(_uapi.DAVINCI_FEAT_GRAPHS):
        pytest.skip("this driver has no task graphs")


def test_graphs_per_context(dev):
    """The graph one past the limit is refused with an error naming the
    limit, its value and that it is fixed; destroying one makes room."""
    _graphs_or_skip(dev)
    s = dev.stream()
    held = []
    try:
        with pytest.raises(davinci.LimitError) as ei:
            while len(held) <= _uapi.DAVINCI_GRAPH_MAX:
                with s.capture() as g:
                    s.nop()
                held.append(g)
        e = ei.value
        assert len(held) == _uapi.DAVINCI_GRAPH_MAX
        assert e.limit == "graphs_per_context" and e.errno == errno.ENOSPC
        assert e.value == _uapi.DAVINCI_GRAPH_MAX
        msg = str(e)
        assert "graphs per context limit %d" % e.value in msg
        assert "fixed" in msg and "destroy" in msg
        held.pop().destroy()
        with s.capture() as g:
            s.nop()
        held.append(g)
    finally:
        for g in held:
            g.destroy()
    s.destroy()


def test_tasks_per_graph(dev):
    """A capture of more tasks than a graph holds is refused naming that
    limit; the stream captures and runs again afterwards."""
    _graphs_or_skip(dev)
    s = dev.stream()
    nop = _uapi.davinci_task(opcode=_uapi.DAVINCI_OP_NOP, count=0)
    with pytest.raises(davinci.LimitError) as ei:
        with s.capture():
            for _ in range(_uapi.DAVINCI_GRAPH_MAX_TASKS // 256 + 1):
                s.submit([nop] * 256)
    e = ei.value
    assert e.limit == "tasks_per_graph" and e.errno == errno.E2BIG
    assert e.value == _uapi.DAVINCI_GRAPH_MAX_TASKS
    assert "tasks per graph limit %d" % e.value in str(e)
    assert "fixed" in str(e)
    with s.capture() as g:
        s.nop()
    g.launch()
    s.synchronize()
    g.destroy()
    s.destroy()
