# SPDX-License-Identifier: GPL-2.0
"""The pyACL-compatible API: conventions, codes, memory, streams, events."""

import threading

import numpy as np
import pytest

import acl
from acl import util


def test_error_codes_match_cann():
    assert acl.ACL_SUCCESS == 0
    assert acl.ACL_ERROR_INVALID_PARAM == 100000
    assert acl.ACL_ERROR_RT_PARAM_INVALID == 107000
    assert acl.ACL_ERROR_RT_INVALID_DEVICEID == 107001
    assert acl.ACL_ERROR_RT_CONTEXT_NULL == 107002
    assert acl.ACL_ERROR_RT_STREAM_NO_CB_REG == 107015
    assert acl.ACL_ERROR_RT_INVALID_HANDLE == 107017
    assert acl.ACL_ERROR_RT_WAIT_TIMEOUT == 107019
    assert acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000
    assert acl.ACL_ERROR_RT_MEMORY_ALLOCATION == 207001
    assert acl.ACL_ERROR_RT_MEMORY_FREE == 207002
    assert acl.ACL_ERROR_RT_INTERNAL_ERROR == 507000
    assert acl.ACL_ERROR_RT_AICORE_TIMEOUT == 507014
    assert acl.ACL_ERROR_RT_DEV_SETUP_ERROR == 507033
    assert acl.ACL_ERROR_RT_DEVICE_MEM_ERROR == 507053
    assert acl.ACL_ERROR_RT_DRV_INTERNAL_ERROR == 507899


def test_init_finalize():
    assert acl.init() == 0
    assert acl.init() == acl.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.finalize() == 0
    assert acl.init("/nonexistent/acl.json") == acl.ACL_ERROR_INVALID_FILE
    assert acl.init() == 0
    assert acl.finalize() == 0


def test_device_management(acl_dev):
    count, ret = acl.rt.get_device_count()
    assert ret == 0 and count >= 1
    dev_id, ret = acl.rt.get_device()
    assert (dev_id, ret) == (0, 0)
    assert acl.rt.get_run_mode() == (acl.ACL_HOST, 0)
    assert acl.rt.set_device(count) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert "does not exist" in acl.get_recent_err_msg()
    assert acl.rt.set_device(-1) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.synchronize_device() == 0


def test_no_context_in_fresh_thread(acl_dev):
    out = {}

    def body():
        out["malloc"] = acl.rt.malloc(4096, 0)
        out["ctx"] = acl.rt.get_context()
    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert out["malloc"] == (0, acl.ACL_ERROR_RT_CONTEXT_NULL)
    assert out["ctx"][1] == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_contexts(acl_dev):
    ctx0, ret = acl.rt.get_context()
    assert ret == 0 and ctx0
    ctx1, ret = acl.rt.create_context(0)
    assert ret == 0 and ctx1 != ctx0
    assert acl.rt.get_context() == (ctx1, 0)
    # memory from one context is usable from another of the same device
    ptr, ret = acl.rt.malloc(4096, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert acl.rt.set_context(ctx0) == 0
    assert acl.rt.memset(ptr, 4096, 1, 4096) == 0
    assert acl.rt.free(ptr) == 0
    assert acl.rt.destroy_context(ctx1) == 0
    assert acl.rt.destroy_context(ctx1) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.set_context(12345) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_malloc_free_and_errors(acl_dev):
    free0, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert ret == 0 and 0 < free0 <= total
    ptr, ret = acl.rt.malloc(1 << 20, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0 and isinstance(ptr, int) and ptr
    free1, _, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert free1 == free0 - (1 << 20)
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) == acl.ACL_ERROR_RT_MEMORY_FREE
    ptr, ret = acl.rt.malloc(total * 2, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_ERROR_RT_MEMORY_ALLOCATION
    msg = acl.get_recent_err_msg()
    assert str(total * 2) in msg and str(total) in msg
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0
    assert acl.rt.malloc(0, 0)[1] == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.malloc(4096, 9)[1] == acl.ACL_ERROR_RT_INVALID_MALLOC_TYPE
    assert acl.rt.get_mem_info(77)[2] == acl.ACL_ERROR_RT_INVALID_MEMORY_TYPE
    hfree, htotal, ret = acl.rt.get_mem_info(acl.ACL_DDR_MEM)
    assert ret == 0 and 0 < hfree <= htotal


def test_memcpy_round_trip(acl_dev, rng):
    n = 100_000
    host = rng.standard_normal(n).astype(np.float32)
    size = host.nbytes
    dev_a, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    dev_b, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert acl.rt.memcpy(dev_a, size, util.numpy_to_ptr(host), size,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.rt.memcpy(dev_b, size, dev_a, size,
                         acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    back = np.zeros_like(host)
    assert acl.rt.memcpy(util.numpy_to_ptr(back), size, dev_b, size,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert np.array_equal(back, host)
    other = np.zeros_like(host)
    assert acl.rt.memcpy(util.numpy_to_ptr(other), size,
                         util.numpy_to_ptr(back), size,
                         acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert np.array_equal(other, host)
    # offsets inside an allocation
    assert acl.rt.memcpy(util.numpy_to_ptr(other), 8, dev_b + 8, 8,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert other[0] == host[2] and other[1] == host[3]
    # errors
    assert acl.rt.memcpy(dev_a, 4, util.numpy_to_ptr(host), 8,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy(dev_a, size, util.numpy_to_ptr(host), size,
                         7) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy(dev_a + size - 4, size, util.numpy_to_ptr(host), 8,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free(dev_a) == 0
    assert acl.rt.memcpy(dev_a, size, util.numpy_to_ptr(host), size,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == \
        acl.ACL_ERROR_INVALID_PARAM      # use after free
    assert acl.rt.free(dev_b) == 0


def test_memcpy_async_and_pinned(acl_dev, rng):
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    data = rng.integers(0, 1 << 31, 4096, dtype=np.int64)
    size = data.nbytes
    pin, ret = acl.rt.malloc_host(size)
    assert ret == 0
    pinned = util.ptr_to_numpy(pin, (4096,), acl.NPY_LONGLONG)
    pinned[:] = data
    dev, _ = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    dev2, _ = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    # pinned host -> device (DMA task), device -> device, device -> pageable
    assert acl.rt.memcpy_async(dev, size, pin, size,
                               acl.ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.memcpy_async(dev2, size, dev, size,
                               acl.ACL_MEMCPY_DEVICE_TO_DEVICE, stream) == 0
    out = np.zeros_like(data)
    assert acl.rt.memcpy_async(util.numpy_to_ptr(out), size, dev2, size,
                               acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(out, data)
    # pageable host -> device, then device -> pinned
    src = data[::-1].copy()
    assert acl.rt.memcpy_async(dev, size, util.numpy_to_ptr(src), size,
                               acl.ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    src[:] = 0         # staged at the call: later changes do not matter
    assert acl.rt.memcpy_async(pin, size, dev, size,
                               acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(pinned, data[::-1])
    # memset on device and on pinned host memory
    assert acl.rt.memset(dev, size, 0x5A, size) == 0
    assert acl.rt.memset(pin, size, 0x11, 16) == 0
    assert util.ptr_to_bytes(pin, 16) == b"\x11" * 16
    assert acl.rt.memset_async(dev2, size, 0x22, size, stream) == 0
    assert acl.rt.memcpy_async(pin, size, dev2, size,
                               acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert util.ptr_to_bytes(pin, size) == b"\x22" * size
    assert acl.rt.memcpy(util.numpy_to_ptr(out), size, dev, size,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert out.tobytes() == b"\x5A" * size
    assert acl.rt.memset(dev, 4, 1, 8) == acl.ACL_ERROR_INVALID_PARAM
    del pinned
    assert acl.rt.free_host(pin) == 0
    assert acl.rt.free_host(pin) == acl.ACL_ERROR_RT_MEMORY_FREE
    assert acl.rt.free(dev) == 0 and acl.rt.free(dev2) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_stream(stream) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_default_stream_zero(acl_dev):
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset_async(dev, 64, 3, 64, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    out = bytearray(64)
    assert acl.rt.memcpy(util.bytes_to_ptr(out), 64, dev, 64,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert bytes(out) == b"\x03" * 64
    acl.rt.free(dev)


def test_a_failed_task_is_the_acl_error_of_its_status(acl_dev):
    """A task the device fails makes the stream's synchronization return
    the aclError of the task's status: an operand outside device memory
    (DAVINCI_STATUS_INVALID_ADDRESS) is an AI core exception."""
    from davinci import opdesc
    from acl import _state
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    bad = opdesc.describe("add", "float32", dst=0x10, srcs=(0x10, 0x10),
                          count=4)
    # acl.op refuses such a pointer before the device sees it: go around
    _state.get_stream(stream).stream.launch(bad)
    assert acl.rt.synchronize_stream(stream) == \
        acl.ACL_ERROR_RT_AICORE_EXCEPTION
    assert acl.rt.destroy_stream(stream) == 0


def test_events(acl_dev):
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    start, ret = acl.rt.create_event()
    assert ret == 0
    end, _ = acl.rt.create_event()
    dev, _ = acl.rt.malloc(1 << 20, 0)
    dev2, _ = acl.rt.malloc(1 << 20, 0)
    assert acl.rt.record_event(start, s1) == 0
    assert acl.rt.memset_async(dev, 1 << 20, 9, 1 << 20, s1) == 0
    assert acl.rt.record_event(end, s1) == 0
    assert acl.rt.stream_wait_event(s2, end) == 0
    assert acl.rt.memcpy_async(dev2, 1 << 20, dev, 1 << 20,
                               acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == 0
    assert acl.rt.synchronize_event(end) == 0
    assert acl.rt.query_event(end) == (acl.ACL_EVENT_STATUS_COMPLETE, 0)
    assert acl.rt.query_event_status(end) == \
        (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    ms, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == 0 and ms >= 0.0
    assert acl.rt.event_elapsed_time(end, start)[1] == \
        acl.ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL
    assert acl.rt.synchronize_stream(s2) == 0
    out = np.zeros(1 << 20, np.uint8)
    acl.rt.memcpy(util.numpy_to_ptr(out), out.nbytes, dev2, out.nbytes,
                  acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert (out == 9).all()
    fresh, _ = acl.rt.create_event()
    assert acl.rt.event_elapsed_time(fresh, end)[1] == \
        acl.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    for e in (start, end, fresh):
        assert acl.rt.destroy_event(e) == 0
    assert acl.rt.record_event(start, s1) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.query_event(start)[1] == acl.ACL_ERROR_RT_INVALID_HANDLE
    acl.rt.free(dev)
    acl.rt.free(dev2)


def test_reset_device_frees_everything(acl_dev):
    free0 = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0]
    assert acl.rt.set_device(0) == 0            # second reference
    ptr, _ = acl.rt.malloc(8 << 20, 0)
    stream, _ = acl.rt.create_stream()
    assert acl.rt.reset_device(0) == 0          # still referenced
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0 - (8 << 20)
    assert acl.rt.reset_device(0) == 0          # last reference
    assert acl.rt.synchronize_stream(stream) != 0
    assert acl.rt.reset_device(0) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.set_device(0) == 0            # for the fixture teardown
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0


def test_util_pointers():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    p = util.numpy_to_ptr(a)
    assert p == a.ctypes.data
    v = util.ptr_to_numpy(p, (3, 4), acl.NPY_FLOAT)
    assert v.dtype == np.float32 and np.array_equal(v, a)
    v[0, 0] = 42
    assert a[0, 0] == 42                     # no copy
    b = b"hello world"
    assert util.ptr_to_bytes(util.bytes_to_ptr(b), len(b)) == b
    assert util.ptr_to_numpy(p, (2,), np.float32)[1] == 1.0
    with pytest.raises(ValueError):
        util.numpy_to_ptr(a[:, ::2])


def test_seed_snippet_memory_management(acl_dev):
    """The seed article's memory snippet, with pyACL's (value, ret) shapes."""
    size = 1024 * 4
    ptr, ret = acl.rt.malloc(size, acl.RT_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    host_data = np.random.randn(1024).astype(np.float32)
    assert acl.rt.memcpy(ptr, size, host_data.ctypes.data, size,
                         acl.RT_MEMCPY_HOST_TO_DEVICE) == 0
    result = np.empty(1024, dtype=np.float32)
    assert acl.rt.memcpy(result.ctypes.data, size, ptr, size,
                         acl.RT_MEMCPY_DEVICE_TO_HOST) == 0
    assert np.array_equal(result, host_data)
    assert acl.rt.free(ptr) == 0
    stream, ret = acl.rt.create_stream()
    assert acl.rt.stream_synchronize(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_stream_with_config_flags(acl_dev):
    """ACL_STREAM_FAST_SYNC and FAST_LAUNCH are accepted and the stream
    works (that FAST_SYNC spins is test_streams' per-stream wait mode)."""
    import davinci
    fast, ret = acl.rt.create_stream_with_config(
        0, acl.ACL_STREAM_FAST_SYNC | acl.ACL_STREAM_FAST_LAUNCH)
    assert ret == 0
    plain, _ = acl.rt.create_stream()
    dev, _ = acl.rt.malloc(1 << 20, 0)
    old = davinci.set_wait_mode("block")
    try:
        for _ in range(20):
            assert acl.rt.memset_async(dev, 1 << 20, 3, 1 << 20, fast) == 0
            assert acl.rt.synchronize_stream(fast) == 0
    finally:
        davinci.set_wait_mode(old)
    out = np.zeros(16, np.uint8)
    acl.rt.memcpy(acl.util.numpy_to_ptr(out), 16, dev, 16,
                  acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert (out == 3).all()
    for s in (fast, plain):
        assert acl.rt.destroy_stream(s) == 0
    acl.rt.free(dev)
