# SPDX-License-Identifier: GPL-2.0
"""Stream failure modes: a stream that goes on after a failed task
(DAVINCI_STREAM_F_CONTINUE, CANN's default ACL_CONTINUE_ON_FAILURE) and one
that stops (the device's default, ACL_STOP_ON_FAILURE): on the device,
through davinci.Stream, and through pyACL (acl.rt, acl.media, acl.mdl) in
the shape of the samples' loops that log a bad image and go on."""

import errno

import numpy as np
import pytest

import davinci
from davinci import _uapi


def _bad_memset(s, b):
    """A memset of memory that is not ours: fails INVALID_ADDRESS."""
    return s.memset(b.dev_addr + 4096 * 1000, 0, 16)


@pytest.mark.parametrize("polled", [False, True], ids=["doorbell", "polled"])
def test_continue_stream_runs_the_tasks_after_a_failure(dev, polled):
    if polled and not dev.version.has(_uapi.DAVINCI_FEAT_SQ_POLL):
        pytest.skip("no polled rings")
    assert dev.version.has(_uapi.DAVINCI_FEAT_STREAM_CONTINUE)
    s = dev.stream(polled=polled, continue_on_failure=True)
    with dev.malloc(4096) as b:
        s.memset(b, 1)
        bad = _bad_memset(s, b)
        after = s.memset(b, 2)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        e = ei.value
        assert e.seq == bad and e.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        assert "went on" in str(e)
        # the device went on: the task after it ran, nothing aborted
        assert s.completion(after).ok
        assert (b.numpy() == 2).all()
        assert s.task(bad).status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        st = s.query()
        assert not st.error and st.error_status == 0
        # raised once: the next synchronize is clean, later work runs
        s.synchronize()
        s.memset(b, 3, sync=True)
        assert (b.numpy() == 3).all()
        # a second failure is raised once again, the first of a batch
        first = _bad_memset(s, b)
        _bad_memset(s, b)
        s.memset(b, 4)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        assert ei.value.seq == first
        s.synchronize()
        assert (b.numpy() == 4).all()
    s.destroy()


def test_default_stream_stops_after_a_failure(dev):
    """Without the flag nothing changed: the tasks behind a failure are
    ABORTED, and so is new work until reset()."""
    s = dev.stream()
    assert not s.continue_on_failure
    with dev.malloc(4096) as b:
        s.memset(b, 1)
        bad = _bad_memset(s, b)
        after = s.memset(b, 2)
        for _ in range(2):
            with pytest.raises(davinci.TaskFailedError) as ei:
                s.synchronize()
            assert ei.value.seq == bad
        assert s.completion(after).status == _uapi.DAVINCI_STATUS_ABORTED
        assert (b.numpy() == 1).all()
        assert s.query().error
        s.reset()
        s.memset(b, 3, sync=True)
        assert (b.numpy() == 3).all()
    s.destroy()


def test_the_mode_of_a_live_stream_switches(dev):
    s = dev.stream()
    with dev.malloc(4096) as b:
        s.set_continue_on_failure(True)
        assert s.continue_on_failure
        _bad_memset(s, b)
        after = s.memset(b, 5)
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert s.completion(after).ok and (b.numpy() == 5).all()
        s.set_continue_on_failure(False)
        bad = _bad_memset(s, b)
        after = s.memset(b, 6)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        assert ei.value.seq == bad and s.query().error
        assert s.completion(after).status == _uapi.DAVINCI_STATUS_ABORTED
        # switched back on, the stream stays stopped until the reset
        s.set_continue_on_failure(True)
        aborted = s.memset(b, 7)
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert s.completion(aborted).status == _uapi.DAVINCI_STATUS_ABORTED
        s.reset()
        _bad_memset(s, b)
        s.memset(b, 8)
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert (b.numpy() == 8).all()
    s.destroy()


def test_set_flags_refuses_other_bits(dev):
    s = dev.stream()
    t = dev.transport
    for flags in (_uapi.DAVINCI_STREAM_F_POLLED, 1 << 31):
        err = t.try_ioctl(_uapi.DAVINCI_IOCTL_STREAM_SET_FLAGS,
                          _uapi.davinci_stream_flags(stream_id=s.stream_id,
                                                     flags=flags))
        assert err == errno.EINVAL
    err = t.try_ioctl(_uapi.DAVINCI_IOCTL_STREAM_SET_FLAGS,
                      _uapi.davinci_stream_flags(stream_id=99999, flags=0))
    assert err == errno.ENOENT
    s.destroy()


def test_wait_raises_a_failure_at_or_before_its_task(dev):
    s = dev.stream(continue_on_failure=True)
    with dev.malloc(4096) as b:
        good = s.memset(b, 1)
        bad = _bad_memset(s, b)
        s.wait(good)        # the failure after it is not raised here
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.wait(bad)
        assert ei.value.seq == bad
        s.wait()
    s.destroy()


def test_a_graph_on_a_continue_stream_goes_on(dev):
    s = dev.stream(continue_on_failure=True)
    with dev.malloc(4096) as a, dev.malloc(4096) as b:
        with s.capture() as g:
            s.memset(a, 9)
            _bad_memset(s, a)
            s.memcpy(b, a)
        for _ in range(2):
            b.numpy()[:] = 0
            first, last = g.launch(s)
            with pytest.raises(davinci.TaskFailedError) as ei:
                s.synchronize()
            assert ei.value.seq == first + 1
            assert (b.numpy() == 9).all()
            assert s.task(last).status == _uapi.DAVINCI_STATUS_OK
        s.synchronize()
    s.destroy()


def test_device_synchronize_raises_a_continue_stream_failure_once(dev):
    s = dev.stream(continue_on_failure=True)
    with dev.malloc(4096) as b:
        _bad_memset(s, b)
        s.memset(b, 3)
        with pytest.raises(davinci.TaskFailedError):
            dev.synchronize()
        dev.synchronize()
        assert (b.numpy() == 3).all()
    s.destroy()
