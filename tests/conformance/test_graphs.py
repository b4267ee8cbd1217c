"""Task graphs: capture once, replay with one ioctl, on every backend."""
import numpy as np
import pytest

import davinci
from davinci import _uapi, ops


def _graphs(dev):
    if not dev.version.has(_uapi.DAVINCI_FEAT_GRAPHS):
        pytest.skip("the driver has no task graphs")


def test_capture_records_and_launch_replays(dev):
    _graphs(dev)
    s = dev.stream()
    x = dev.tensor(np.arange(1024, dtype=np.float32))
    y = dev.empty(1024, "float32")
    dev.synchronize()                       # the upload of x is done
    with s.capture() as g:
        ops.add(x, x, out=y, stream=s)
        ops.relu(y, out=y, stream=s)
        assert g.capturing
    assert g.tasks == 2 and g.graph_id > 0
    s.synchronize()
    x.view()[:] = -1.0
    first, last = g.launch()
    assert last - first == 1
    s.synchronize()
    assert (y.numpy() == 0).all()           # ran on what x held at launch
    x.view()[:] = 3.0
    before = dict(dev.transport.ioctl_counts)
    for _ in range(50):
        g.launch()
    s.synchronize()
    assert (y.numpy() == 6).all()
    launches = dev.transport.ioctl_counts[_uapi.DAVINCI_IOCTL_GRAPH_LAUNCH] \
        - before.get(_uapi.DAVINCI_IOCTL_GRAPH_LAUNCH, 0)
    assert launches == 50                   # one ioctl per replay
    g.destroy()
    with pytest.raises(davinci.InvalidHandleError):
        g.launch()
    s.destroy()


def test_nothing_runs_while_capturing_and_waits_are_refused(dev):
    _graphs(dev)
    s = dev.stream()
    with dev.malloc(4096) as b:
        b.numpy()[:] = 1
        with s.capture() as g:
            assert s.memset(b, 9) is not None
            with pytest.raises(davinci.InvalidArgumentError):
                s.synchronize()
        s.synchronize()
        assert (b.numpy() == 1).all()
        other = dev.stream(polled=False)
        g.launch(other)
        other.synchronize()
        assert (b.numpy() == 9).all()
        g.destroy()
        other.destroy()
    s.destroy()


def test_failed_task_in_a_launch_is_reported(dev):
    _graphs(dev)
    s = dev.stream()
    b = dev.malloc(4096)
    with s.capture() as g:
        s.memset(b, 5)
        s.nop()
    b.free()
    g.launch()
    with pytest.raises(davinci.TaskFailedError) as ei:
        s.synchronize()
    assert ei.value.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
    s.reset()
    g.destroy()
    s.destroy()


def test_a_capture_ended_by_an_exception_keeps_nothing(dev):
    _graphs(dev)
    s = dev.stream()
    with pytest.raises(RuntimeError):
        with s.capture() as g:
            s.nop()
            raise RuntimeError("boom")
    assert not g.graph_id
    s.nop(sync=True)                        # the stream runs again
    s.destroy()
