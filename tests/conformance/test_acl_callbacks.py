# SPDX-License-Identifier: GPL-2.0
"""pyACL callbacks, the seed's task/interrupt calls, events and the rest of
the surface real programs use. Ordering, counts and codes only."""

import threading

import numpy as np

import acl


class ReportThread:
    """The pyACL pattern: a thread looping on acl.rt.process_report."""

    def __init__(self, timeout_ms=100):
        self.running = True
        self.rets = []
        ctx, ret = acl.rt.get_context()
        assert ret == 0
        self.tid, ret = acl.util.start_thread(self._body, [ctx, timeout_ms])
        assert ret == 0

    def _body(self, args):
        ctx, timeout = args
        assert acl.rt.set_context(ctx) == 0
        while self.running:
            self.rets.append(acl.rt.process_report(timeout))

    def stop(self):
        self.running = False
        assert acl.util.stop_thread(self.tid) == 0


def _upload(x):
    p, ret = acl.rt.malloc(max(x.nbytes, 1), acl.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    assert acl.rt.memcpy(p, x.nbytes, x.ctypes.data, x.nbytes,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    return p


def _download(p, like):
    out = np.empty_like(like)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return out


def test_callback_codes_documented():
    assert acl.ACL_ERROR_RT_REPORT_TIMEOUT == 507012
    assert acl.ACL_ERROR_RT_STREAM_NO_CB_REG == 107015
    assert acl.ACL_ERROR_RT_STREAM_SUBSCRIBE == 107011
    assert acl.ACL_ERROR_RT_THREAD_SUBSCRIBE == 107012
    assert acl.ACL_CALLBACK_NO_BLOCK == 0 and acl.ACL_CALLBACK_BLOCK == 1


def test_launch_callback_exactly_once_in_order(acl_dev):
    stream, ret = acl.rt.create_stream()
    rt = ReportThread()
    assert acl.rt.subscribe_report(rt.tid, stream) == 0
    assert acl.rt.subscribe_report(rt.tid, stream) == \
        acl.ACL_ERROR_RT_STREAM_SUBSCRIBE
    seen = []
    main = threading.get_ident()
    for i in range(40):
        assert acl.rt.launch_callback(
            lambda ud: seen.append((ud, threading.get_ident())),
            ("data", i), i % 3 == 2, stream) == 0
    # the last one blocks: every callback ran before synchronize returns
    assert acl.rt.launch_callback(lambda ud: seen.append((ud, None)), "last",
                                  acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert [u for u, _ in seen] == [("data", i) for i in range(40)] + ["last"]
    assert all(t == rt.tid for _, t in seen[:-1]) and rt.tid != main
    assert acl.rt.unsubscribe_report(rt.tid, stream) == 0
    assert acl.rt.unsubscribe_report(rt.tid, stream) == \
        acl.ACL_ERROR_RT_STREAM_SUBSCRIBE
    rt.stop()
    assert len(seen) == 41
    assert acl.rt.destroy_stream(stream) == 0


def test_raising_callback_keeps_thread(acl_dev):
    stream, _ = acl.rt.create_stream()
    rt = ReportThread()
    assert acl.rt.subscribe_report(rt.tid, stream) == 0
    before = acl.rt.get_callback_stats()["errors"]
    out = []

    def bad(ud):
        raise ValueError("raised by the test callback")
    assert acl.rt.launch_callback(bad, None, 0, stream) == 0
    assert acl.rt.launch_callback(out.append, "after", 1, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert out == ["after"]
    assert acl.rt.get_callback_stats()["errors"] == before + 1
    acl.rt.unsubscribe_report(rt.tid, stream)
    rt.stop()


def test_process_report_timeout_code(acl_dev):
    stream, _ = acl.rt.create_stream()
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, stream) == 0
    assert acl.rt.process_report(10) == acl.ACL_ERROR_RT_REPORT_TIMEOUT
    assert acl.rt.process_report(-2) == acl.ACL_ERROR_INVALID_PARAM
    # asked for: a callback on the submitting thread via process_report
    got = []
    assert acl.rt.launch_callback(got.append, 7, 0, stream) == 0
    assert acl.rt.process_report(-1) == 0
    assert got == [7]
    assert acl.rt.unsubscribe_report(me, stream) == 0


def test_launch_callback_unsubscribed_stream(acl_dev):
    stream, _ = acl.rt.create_stream()
    assert acl.rt.launch_callback(lambda ud: None, 0, 0, stream) == 107015
    assert acl.rt.launch_callback(lambda ud: None, 0, 0, 0) == 107015
    assert acl.rt.launch_callback(lambda ud: None, 0, 5, stream) == \
        acl.ACL_ERROR_INVALID_PARAM


def test_blocking_callback_holds_synchronize(acl_dev):
    stream, _ = acl.rt.create_stream()
    rt = ReportThread()
    assert acl.rt.subscribe_report(rt.tid, stream) == 0
    events = []
    gate = threading.Event()
    x = np.arange(256, dtype=np.float32)
    px = _upload(x)
    pz, _ = acl.rt.malloc(x.nbytes, 0)
    cfg = {"op_type": "VectorAdd", "input_x": px, "input_y": px,
           "output_z": pz, "count": 256}

    def cb(ud):
        events.append("callback-start")
        gate.wait(30)
        # the task after the callback has not run yet: z is still zero
        events.append(("z-zero", bool(np.all(_download(pz, x) == 0))))
        events.append("callback-end")
    assert acl.rt.memset(pz, x.nbytes, 0, x.nbytes) == 0
    assert acl.rt.launch_callback(cb, None, 1, stream) == 0
    task_id, ret = acl.rt.launch_task(stream, cfg)
    assert ret == 0
    t = threading.Thread(target=lambda: (
        events.append(("sync", acl.rt.synchronize_stream(stream)))))
    t.start()
    gate.set()
    t.join(60)
    assert events == ["callback-start", ("z-zero", True), "callback-end",
                      ("sync", 0)]
    np.testing.assert_array_equal(_download(pz, x), 2 * x)
    acl.rt.unsubscribe_report(rt.tid, stream)
    rt.stop()


def test_seed_launch_task_and_interrupt(acl_dev):
    stream, _ = acl.rt.create_stream()
    rng = np.random.default_rng(3)
    x = rng.random(1000, dtype=np.float32)
    y = rng.random(1000, dtype=np.float32)
    px, py = _upload(x), _upload(y)
    pz, _ = acl.rt.malloc(x.nbytes, 0)
    cfg = {"op_type": "VectorAdd", "input_x": px, "input_y": py,
           "output_z": pz, "count": 1000}
    task_id, ret = acl.rt.launch_task(stream, cfg)
    assert ret == 0 and task_id >= 1
    assert acl.rt.stream_synchronize(stream) == 0
    np.testing.assert_array_equal(_download(pz, x), x + y)
    assert acl.rt.launch_task(stream, dict(cfg, op_type="Conv9")) == \
        (0, acl.ACL_ERROR_OP_NOT_FOUND)
    got = []
    done = threading.Event()
    main = threading.get_ident()

    def irq(kind, tid, ud):
        got.append((kind, tid, ud, threading.get_ident() != main))
        if len(got) == 3:
            done.set()
    assert acl.rt.register_interrupt_callback(irq, {"k": 1}) == 0
    ids = []
    for _ in range(3):
        tid, ret = acl.rt.launch_task_with_interrupt(stream, cfg)
        assert ret == 0
        ids.append(tid)
    assert done.wait(60)
    assert got == [(acl.rt.RT_INTERRUPT_TASK_DONE, t, {"k": 1}, True)
                   for t in ids]
    acl.rt.register_interrupt_callback(None, None)


def test_top_level_device_count(acl_dev):
    assert acl.get_device_count() == acl.rt.get_device_count()


def test_events_order_streams_and_time(acl_dev):
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    n = 1 << 18
    x = np.arange(n, dtype=np.float32)
    px = _upload(x)
    py, _ = acl.rt.malloc(x.nbytes, 0)
    pz, _ = acl.rt.malloc(x.nbytes, 0)
    start, ret = acl.rt.create_event()
    mid, _ = acl.rt.create_event()
    end, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_TIME_LINE)
    assert acl.rt.query_event_status(start) == \
        (acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    assert acl.rt.record_event(start, s1) == 0
    ids = []
    for _ in range(4):
        tid, ret = acl.rt.launch_task(s1, {"op_type": "VectorAdd",
                                           "input_x": px, "input_y": px,
                                           "output_z": py, "count": n})
        assert ret == 0
        ids.append(tid)
    assert acl.rt.record_event(mid, s1) == 0
    assert acl.rt.stream_wait_event(s2, mid) == 0
    acl.rt.launch_task(s2, {"op_type": "VectorAdd", "input_x": py,
                            "input_y": px, "output_z": pz, "count": n})
    assert acl.rt.record_event(end, s2) == 0
    assert acl.rt.synchronize_event(end) == 0
    assert acl.rt.query_event(end) == (acl.ACL_EVENT_STATUS_COMPLETE, 0)
    assert acl.rt.query_event_status(end) == \
        (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    np.testing.assert_array_equal(_download(pz, x), 3 * x)
    t1, ret = acl.rt.event_elapsed_time(start, mid)
    assert ret == 0 and t1 > 0
    # consistent with the work: at least the device time of the four tasks
    # recorded between the events (same device clock)
    from acl import _state
    st = _state.streams[s1].stream
    busy_ns = sum(st.completion(i).duration_ns for i in ids)
    assert busy_ns > 0 and t1 * 1e6 + 1 >= busy_ns
    t2, ret = acl.rt.event_elapsed_time(mid, end)
    assert ret == 0 and t2 >= 0
    t3, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == 0 and t3 >= t1 and abs(t3 - (t1 + t2)) < 1e-6
    assert acl.rt.event_elapsed_time(end, start)[1] == \
        acl.ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL
    for e in (start, mid, end):
        assert acl.rt.destroy_event(e) == 0


def test_default_stream_memset_pinned_and_bytes(acl_dev):
    n = 4096
    p, _ = acl.rt.malloc(n, 0)
    assert acl.rt.memset_async(p, n, 0x5A, n, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    assert _download(p, np.zeros(n, np.uint8)).tolist() == [0x5A] * n
    h1, ret = acl.rt.malloc_host(n)
    h2, _ = acl.rt.malloc_host(n)
    assert acl.rt.memset(h1, n, 7, n) == 0
    assert acl.rt.memcpy(h2, n, h1, n, acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert acl.util.ptr_to_bytes(h2, n) == bytes([7]) * n
    data = bytes(range(256))
    assert acl.rt.memcpy(h1, n, acl.util.bytes_to_ptr(data), 256,
                         acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert acl.util.ptr_to_bytes(h1, 256) == data
    for attr in (acl.ACL_DDR_MEM, acl.ACL_HBM_MEM):
        free, total, ret = acl.rt.get_mem_info(attr)
        assert ret == 0 and 0 < free <= total
    d, ret = acl.media.dvpp_malloc(8192)
    assert ret == 0 and d
    assert acl.rt.memset(d, 8192, 1, 8192) == 0
    assert acl.media.dvpp_free(d) == 0
    assert acl.media.dvpp_free(d) == acl.ACL_ERROR_RT_MEMORY_FREE
    acl.rt.free_host(h1)
    acl.rt.free_host(h2)
    acl.rt.free(p)


def test_plain_thread_native_id_and_default_stream(acl_dev):
    """A threading.Thread subscribed by its native id, on stream 0."""
    ctx, _ = acl.rt.get_context()
    ready = threading.Event()
    stop = threading.Event()
    ids = {}
    got = []

    def body():
        acl.rt.set_context(ctx)
        ids["native"] = threading.get_native_id()
        ready.set()
        while not stop.is_set():
            acl.rt.process_report(50)
    t = threading.Thread(target=body)
    t.start()
    assert ready.wait(30)
    assert acl.rt.subscribe_report(ids["native"], 0) == 0
    for i in range(5):
        assert acl.rt.launch_callback(got.append, i, 1, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    assert got == list(range(5))
    assert acl.rt.unsubscribe_report(ids["native"], 0) == 0
    stop.set()
    t.join(30)
