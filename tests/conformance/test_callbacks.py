# SPDX-License-Identifier: GPL-2.0
"""The interrupt path: notifications become callbacks and futures.

Ordering, counts and codes only; nothing here depends on timing.
"""

import threading

import numpy as np
import pytest

import davinci
from davinci import _uapi


def test_callbacks_once_in_order_off_thread(dev):
    s = dev.stream()
    seen = []
    main = threading.get_ident()
    futs = []
    for i in range(50):
        s.nop(0)
        futs.append(s.add_callback(
            lambda i=i: seen.append((i, threading.get_ident())) or i))
    s.synchronize()
    assert [f.result(30) for f in futs] == list(range(50))
    assert [i for i, _ in seen] == list(range(50))
    assert all(t != main for _, t in seen)
    assert {t for _, t in seen} == {dev.callbacks._executor.ident}


def test_callbacks_across_streams_each_in_order(dev):
    streams = [dev.stream() for _ in range(3)]
    seen = {k: [] for k in range(3)}
    futs = []
    for i in range(20):
        for k, s in enumerate(streams):
            futs.append(s.add_callback(seen[k].append, i))
    for f in futs:
        f.result(30)
    assert all(seen[k] == list(range(20)) for k in range(3))


def test_raising_callback_does_not_kill_the_thread(dev, caplog):
    s = dev.stream()
    d = dev.callbacks
    errors = d.errors

    def boom():
        raise RuntimeError("callback failure for the test")
    f1 = s.add_callback(boom)
    f2 = s.add_callback(lambda: "still alive")
    with pytest.raises(RuntimeError):
        f1.result(30)
    assert f2.result(30) == "still alive"
    assert d.errors == errors + 1
    assert "callback failure for the test" in caplog.text


def test_future_completes_with_the_work(dev):
    a = dev.tensor(np.arange(1024, dtype=np.float32))
    s = dev.stream()
    out = davinci.ops.add(a, a, stream=s)
    fut = s.future()
    assert fut.result(30) is None
    assert s.query().completed_seq >= 1
    np.testing.assert_array_equal(out.view(), 2 * np.arange(1024))


def test_callback_after_failure_reports_it(dev):
    s = dev.stream()
    s.launch(davinci.make_task(_uapi.DAVINCI_OP_ADD, dst=0x10, src0=0x10,
                               src1=0x10, count=4))
    ran = []
    fut = s.add_callback(ran.append, 1)
    with pytest.raises(davinci.TaskFailedError):
        fut.result(30)
    assert ran == []
    # the fault is an unclaimed notification the device still reports
    n = dev.wait_notification(30)
    assert n is not None and n.type == _uapi.DAVINCI_NOTIFY_FAULT
    # the public names of the same facts
    assert n.type == davinci.NotificationType.FAULT
    assert not n.ok and n.status_name == "INVALID_ADDRESS"


def test_blocking_callback_holds_the_stream(dev):
    s = dev.stream()
    log = []
    release = threading.Event()

    def cb():
        # the task after the callback has not run while we are here
        log.append(("cb-start", s.query().completed_seq))
        release.wait(30)
        log.append(("cb-end", s.query().completed_seq))
    first = s.nop(0)
    s.add_callback(cb, blocking=True)
    after = s.nop(0)
    done = []
    t = threading.Thread(target=lambda: (s.synchronize(60),
                                         done.append(len(log))))
    t.start()
    # the synchronize cannot finish before the callback returned
    release.set()
    t.join(60)
    assert done == [2]
    assert log[0][1] < after and log[1][1] < after
    assert s.query().completed_seq >= after > first


def test_user_notifications_still_reach_wait_notification(dev):
    s = dev.stream()
    dev.callbacks                    # dispatcher running
    s.notify(0x1234)
    s.add_callback(lambda: None).result(30)
    n = dev.wait_notification(30)
    assert n is not None and n.type == _uapi.DAVINCI_NOTIFY_USER
    assert n.type == davinci.NotificationType.USER and n.ok
    assert n.user_data == 0x1234


def test_destroyed_stream_abandons_its_callbacks(dev, gate):
    s = dev.stream()
    gate.block(s)
    fut = s.add_callback(lambda: None)
    s.destroy()
    with pytest.raises(davinci.DavinciError):
        fut.result(30)


def test_close_stops_dispatcher(dev):
    d = dev.callbacks
    assert d.running
    dev.close()
    assert not d.running
    assert not d._reader.is_alive() and not d._executor.is_alive()


def test_device_lost_fails_pending_callbacks():
    from davinci import inproc
    if davinci.find_backend().kind != "inproc":
        pytest.skip("needs the in-process backend (DAVINCI_BACKEND=inproc)")
    d = davinci.Device(1)
    s = d.stream()
    seq = s.nop(20_000_000)
    fut = s.add_callback(lambda: "never")
    inproc.inproc_core_device(1).lost()
    with pytest.raises((davinci.DavinciError, davinci.TaskFailedError)):
        fut.result(60)
    with pytest.raises(davinci.DeviceLostError):
        # the dispatcher stopped: the device's own error comes through
        for _ in range(100):
            d.wait_notification(0.1)
    del seq
    d.close()
    inproc.inproc_shutdown()          # fresh devices for later tests
