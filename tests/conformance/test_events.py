# SPDX-License-Identifier: GPL-2.0
"""Events: record, wait, query, synchronize, elapsed time."""

import pytest

import davinci
from davinci import _uapi


def test_record_query_synchronize(dev):
    s = dev.stream()
    e = dev.event()
    assert e.query().state == _uapi.DAVINCI_EVENT_NOT_RECORDED
    assert e.is_complete()
    e.synchronize(timeout=1)          # never recorded: returns at once
    s.nop(100)
    e.record(s)
    e.synchronize(timeout=30)
    q = e.query()
    assert q.state == _uapi.DAVINCI_EVENT_RECORDED
    assert q.records_submitted == q.records_completed == 1
    assert q.timestamp_ns > 0


def test_pending_event(dev, gate):
    s = dev.stream()
    e = dev.event()
    gate.block(s)
    s.record(e)
    assert e.query().state == _uapi.DAVINCI_EVENT_PENDING
    assert not e.is_complete()
    with pytest.raises(davinci.TimeoutError):
        e.synchronize(timeout=0.05)
    gate.release()
    e.synchronize(timeout=30)
    assert e.is_complete()


def test_elapsed_time(dev):
    s = dev.stream()
    a, b = dev.event(), dev.event()
    s.record(a)
    s.nop(2000)                # 2 ms of device time
    s.record(b)
    s.synchronize()
    ms = davinci.Event.elapsed_ms(a, b)
    assert ms >= 2.0 - 1e-6
    assert b.elapsed_since(a) == ms
    assert davinci.Event.elapsed_ms(b, a) == -ms


def test_elapsed_needs_records(dev):
    a, b = dev.event(), dev.event()
    with pytest.raises(davinci.DavinciError):
        davinci.Event.elapsed_ms(a, b)
    c = dev.event(timing=False)
    with pytest.raises(davinci.InvalidArgumentError):
        davinci.Event.elapsed_ms(c, a)


def test_cross_stream_ordering(dev, gate):
    producer, consumer = dev.stream(), dev.stream()
    e = dev.event()
    with dev.malloc(4096) as src, dev.malloc(4096) as dst:
        src.numpy()[:] = 0
        dst.numpy()[:] = 0
        gate.block(producer)
        producer.memset(src, 42)
        producer.record(e)
        consumer.wait_event(e)
        consumer.memcpy(dst, src)
        with pytest.raises(davinci.TimeoutError):
            consumer.synchronize(timeout=0.05)
        assert (dst.numpy() == 0).all()
        gate.release()
        consumer.synchronize(timeout=30)
        assert (dst.numpy() == 42).all()


def test_host_signal_releases_waiters(dev):
    s = dev.stream()
    e = dev.event()
    e.signal()
    assert e.query().state == _uapi.DAVINCI_EVENT_RECORDED
    s.wait_event(e)
    s.nop()
    s.synchronize(timeout=30)


def test_destroyed_event(dev):
    e = dev.event()
    e.destroy()
    with pytest.raises(davinci.InvalidHandleError):
        e.query()
    with pytest.raises(davinci.InvalidHandleError):
        dev.default_stream.record(e)


def test_destroy_event_with_queued_wait(dev, gate):
    s = dev.stream()
    waiter = dev.stream()
    e = dev.event()
    gate.block(s)
    s.record(e)
    waiter.wait_event(e)
    e.destroy()
    gate.release()
    # the queued record and the queued wait both complete INVALID_EVENT
    for st in (s, waiter):
        with pytest.raises(davinci.TaskFailedError) as ei:
            st.synchronize(timeout=30)
        assert ei.value.status == _uapi.DAVINCI_STATUS_INVALID_EVENT
