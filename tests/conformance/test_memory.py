# SPDX-License-Identifier: GPL-2.0
"""Memory: allocation, info, OOM, bad input, copies, pinned host, coherence."""

import inspect

import numpy as np
import pytest

import davinci
from davinci import _uapi

from .conftest import wait_quiescent

KiB, MiB = 1 << 10, 1 << 20


def test_alloc_free_and_info(dev):
    m0 = dev.mem_info()
    b = dev.malloc(10 * KiB, "normal_only")
    assert b.size == 10 * KiB
    assert b.alloc_size == 12 * KiB          # 4 KiB granule
    assert b.dev_addr % 4096 == 0
    m1 = dev.mem_info()
    assert m1.free == m0.free - b.alloc_size
    assert m1.ctx_used == m0.ctx_used + b.alloc_size
    assert m1.ctx_allocations == m0.ctx_allocations + 1
    q = b.query()
    assert q.size == b.size and q.alloc_size == b.alloc_size
    b.free()
    assert dev.mem_info() == m0


def test_huge_policies(dev):
    with dev.malloc(3 * MiB, "huge_only") as b:
        assert b.alloc_size == 4 * MiB
        assert b.dev_addr % (2 * MiB) == 0
    with dev.malloc(1, "huge_only") as b:
        assert b.alloc_size == 2 * MiB
    with dev.malloc(4 * MiB) as b:          # huge_first, >= 2 MiB
        assert b.dev_addr % (2 * MiB) == 0
    with dev.malloc(100) as b:               # huge_first, small
        assert b.alloc_size == 4 * KiB


def test_device_info_tracks_usage(dev):
    free0 = dev.info.hbm_free
    with dev.malloc(2 * MiB):
        assert dev.info.hbm_free == free0 - 2 * MiB
    assert dev.info.hbm_free == free0


def test_out_of_memory_message_and_state_unchanged(dev):
    keep = dev.malloc(MiB)
    before = dev.mem_info()
    too_much = before.total + MiB
    with pytest.raises(davinci.OutOfMemoryError) as ei:
        dev.malloc(too_much)
    e = ei.value
    assert e.requested == too_much
    assert e.free == before.free and e.total == before.total
    msg = str(e)
    assert str(too_much) in msg and str(before.free) in msg \
        and str(before.total) in msg
    assert "free" in msg and "request less" in msg
    assert dev.mem_info() == before
    assert keep.numpy()[0] is not None
    keep.free()


def test_fill_then_oom_then_recover(dev):
    bufs = []
    with pytest.raises(davinci.OutOfMemoryError):
        while True:
            bufs.append(dev.malloc(32 * MiB))
    assert len(bufs) >= 1
    for b in bufs:
        b.free()
    assert dev.mem_info().ctx_used == 0


def test_pinned_host_oom(dev):
    total = dev.mem_info(host=True).total
    with pytest.raises(davinci.OutOfMemoryError) as ei:
        dev.malloc_host(total + MiB)
    assert "pinned host" in str(ei.value)


@pytest.mark.parametrize("size", [0, -1])
def test_bad_sizes(dev, size):
    with pytest.raises(davinci.InvalidArgumentError):
        dev.malloc(size)


def test_bad_policy(dev):
    with pytest.raises(davinci.InvalidArgumentError):
        dev.malloc(4096, policy=3)
    with pytest.raises(davinci.InvalidArgumentError):
        dev.malloc(4096, policy="gigantic")


def test_use_after_free(dev):
    b = dev.malloc(4096)
    b.free()
    for fn in (b.numpy, b.free, b.memoryview, b.query, lambda: b.address,
               lambda: b.write(b"x"), lambda: dev.default_stream.memset(b, 0)):
        with pytest.raises(davinci.InvalidHandleError) as ei:
            fn()
        assert "freed" in str(ei.value)
    assert dev.mem_info().ctx_allocations == 0


def test_zero_copy_view(dev):
    with dev.malloc(4096) as b:
        v1 = b.numpy(np.uint32)
        v2 = b.numpy(np.uint32)
        v1[:] = np.arange(1024, dtype=np.uint32)
        assert (v2 == np.arange(1024)).all()
        with pytest.raises(davinci.InvalidArgumentError):
            b.numpy(np.float32, (2048,))


def test_sync_copies_both_ways(dev, rng):
    s = dev.stream()
    data = rng.standard_normal(100_000).astype(np.float32)
    with dev.malloc(data.nbytes) as b:
        s.copy_from_host(b, data)
        back = np.empty_like(data)
        s.copy_to_host(b, back)
        assert np.array_equal(back, data)
        raw = s.copy_to_host(b)
        assert raw.dtype == np.uint8 and raw.tobytes() == data.tobytes()


def test_small_sync_copies_with_offsets_and_shapes(dev, rng):
    """Synchronous copies are host copies through the mapping: any
    C-contiguous dtype and shape, at an offset, part of the buffer."""
    s = dev.stream()
    with dev.malloc(4096) as b:
        first = s.memset(b, 0x5A)
        grid = rng.standard_normal((3, 5)).astype(np.float16)
        s.copy_from_host(b, grid, offset=100)    # waits for the memset
        assert b.numpy()[99] == 0x5A and b.numpy()[130] == 0x5A
        out = np.zeros((3, 5), np.float16)
        s.copy_to_host(b, out, offset=100)
        assert out.tobytes() == grid.tobytes()
        wide = np.zeros(8, np.int32)
        s.copy_to_host(b, wide, nbytes=4, offset=96)
        assert wide[0] == 0x5A5A5A5A and not wide[1:].any()
        with pytest.raises(davinci.InvalidArgumentError):
            s.copy_from_host(b, np.zeros(8, np.uint8), offset=4090)
        with pytest.raises(davinci.InvalidArgumentError):
            s.copy_to_host(b, np.zeros(8, np.uint8), offset=4090)
        # none of those copies was a task: the stream's next task follows
        # the memset
        assert s.nop() == first + 1


def test_sync_copy_of_a_strided_array_lands_in_c_order(dev, rng):
    """A strided or Fortran-ordered source is copied as its C-order bytes,
    without a task, and leaves the rest of the buffer alone."""
    s = dev.stream()
    wide = rng.standard_normal((6, 8)).astype(np.float32)
    with dev.malloc(4096) as b:
        first = s.memset(b, 0x11, sync=True)
        for src in (wide[:, ::2], wide.T, np.asfortranarray(wide),
                    wide.view(np.uint8)[:, ::3]):
            s.copy_from_host(b, src, offset=8)
            got = b.numpy(np.uint8)
            assert got[8:8 + src.nbytes].tobytes() == \
                np.ascontiguousarray(src).tobytes()
            assert not (got[:8] - 0x11).any()
            assert not (got[8 + src.nbytes:] - 0x11).any()
            s.memset(b, 0x11, sync=True)
        assert s.nop() == first + 5


def test_bad_sync_copy_refused_before_waiting(dev, gate):
    """A synchronous copy that cannot be done is refused at once, not after
    the stream's earlier tasks: the gated stream is still busy then."""
    s = dev.stream()
    gate.block(s)
    with dev.malloc(64) as b:
        with pytest.raises(davinci.InvalidArgumentError):
            s.copy_from_host(b, np.zeros(65, np.uint8))
        with pytest.raises(davinci.InvalidArgumentError):
            s.copy_to_host(b, np.zeros(65, np.uint8))
        assert not s.query().idle
        gate.release()
        s.synchronize()


@pytest.mark.parametrize("direction", ["in", "out"])
def test_buffer_freed_while_a_sync_copy_waits(dev, gate, direction):
    """A synchronous copy whose buffer is freed while it waits for the
    stream raises InvalidHandleError once the wait ends: it never copies
    through the view it kept from before the wait."""
    import threading
    s = dev.stream()
    b = dev.malloc(4096)
    arr = np.zeros(4096, np.uint8)
    s.copy_from_host(b, arr)        # the buffer keeps its views from here
    s.copy_to_host(b, arr)
    gate.block(s)
    raised = []

    def copy():
        try:
            if direction == "in":
                s.copy_from_host(b, arr)
            else:
                s.copy_to_host(b, arr)
        except davinci.InvalidHandleError as exc:
            # the message only: the traceback's frames hold the old view,
            # which keeps the freed memory mapped (out of the pool)
            raised.append(str(exc))
    t = threading.Thread(target=copy)
    t.start()
    t.join(0.2)
    assert t.is_alive(), "the copy did not wait for the gated stream"
    b.free()
    gate.release()
    t.join(30)
    assert not t.is_alive()
    assert raised and "freed" in raised[0]


def test_copied_buffer_gives_its_memory_back_at_free(dev):
    """A buffer that served a synchronous copy keeps no view of its
    memory after free: the memory is back in the pool at once, and the
    freed buffer refuses copies."""
    s = dev.stream()
    wait_quiescent(dev)
    before = dev.mem_info()
    b = dev.malloc(1 << 20)
    s.copy_from_host(b, np.ones(4096, np.uint8))
    s.copy_to_host(b, np.empty(4096, np.uint8))
    b.free()
    wait_quiescent(dev)
    assert dev.mem_info() == before
    with pytest.raises(davinci.InvalidHandleError):
        s.copy_from_host(b, np.ones(16, np.uint8))
    with pytest.raises(davinci.InvalidHandleError):
        s.copy_to_host(b, np.empty(16, np.uint8))


def test_async_copies_both_ways(dev, rng):
    s = dev.stream()
    data = rng.integers(0, 1 << 30, 50_000, dtype=np.int32)
    with dev.malloc(data.nbytes) as b:
        s.copy_from_host(b, data, sync=False)
        data_copy = data.copy()
        data[:] = 0                       # staged: the copy is unaffected
        out = np.zeros_like(data)
        s.copy_to_host(b, out, sync=False)
        s.synchronize()
        assert np.array_equal(out, data_copy)
    assert dev.mem_info(host=True).ctx_used == 0    # staging freed


def test_device_to_device_copy(dev, rng):
    s = dev.stream()
    data = rng.integers(0, 255, 3 * MiB + 123, dtype=np.uint8)
    with dev.malloc(data.nbytes) as a, dev.malloc(data.nbytes) as b:
        a.write(data)
        s.memcpy(b, a, sync=True)
        assert np.array_equal(b.numpy()[:data.nbytes], data)
        # partial with offsets
        s.memcpy(b, a, 1000, dst_offset=10, src_offset=5000, sync=True)
        assert np.array_equal(b.numpy()[10:1010], data[5000:6000])


def test_memset(dev):
    s = dev.stream()
    with dev.malloc(3 * MiB) as b:
        s.memset(b, 0xAB, sync=True)
        assert (b.numpy() == 0xAB).all()
        s.memset(b, 0, 100, offset=7, sync=True)
        v = b.numpy()
        assert (v[7:107] == 0).all() and v[6] == 0xAB and v[107] == 0xAB
    with pytest.raises(davinci.InvalidArgumentError):
        s.memset(dev.malloc(16), 256)


def test_copy_range_checks(dev):
    s = dev.stream()
    with dev.malloc(100) as b:
        with pytest.raises(davinci.InvalidArgumentError):
            s.copy_from_host(b, np.zeros(101, np.uint8))
        with pytest.raises(davinci.InvalidArgumentError):
            s.memcpy(b, b, 60, dst_offset=50)
    assert s.query().submitted_seq == 0


def test_pinned_host_memory(dev, rng):
    s = dev.stream()
    data = rng.standard_normal(4096).astype(np.float32)
    h0 = dev.mem_info(host=True)
    with dev.malloc_host(data.nbytes) as pin, dev.malloc(data.nbytes) as d:
        assert pin.host
        assert dev.mem_info(host=True).ctx_used == h0.ctx_used + pin.alloc_size
        pin.numpy(np.float32)[:] = data
        s.memcpy(d, pin)                  # DMA host -> device
        s.memset(pin, 0)
        s.memcpy(pin, d, sync=True)       # and back
        assert np.array_equal(pin.numpy(np.float32), data)
    assert dev.mem_info(host=True) == h0


def test_coherence_host_write_seen_by_next_task(dev):
    s = dev.stream()
    with dev.malloc(8192) as src, dev.malloc(8192) as dst:
        view = src.numpy(np.uint32)           # mapping made before the write
        dview = dst.numpy(np.uint32)          # and before the task ran
        for round_ in range(3):
            view[:] = np.arange(2048, dtype=np.uint32) * (round_ + 1)
            s.memcpy(dst, src, sync=True)
            # task results seen through the existing mapping ...
            assert np.array_equal(dview, view)
            # ... and by a copy back
            back = np.empty(2048, np.uint32)
            s.copy_to_host(dst, back)
            assert np.array_equal(back, view)


def test_coherence_task_result_through_existing_mapping(dev):
    s = dev.stream()
    with dev.malloc(4096) as b:
        v = b.numpy()
        v[:] = 1
        for val in (2, 3, 250):
            s.memset(b, val, sync=True)
            assert (v == val).all()
            v[:] = 9
            assert bytes(b.read(4)) == b"\x09" * 4


def _fill(d, size, byte):
    """Allocate ``size`` bytes at a time on ``d`` until it runs out, each
    buffer filled with ``byte``; the buffers."""
    out = []
    while True:
        try:
            b = d.malloc(size)
        except davinci.OutOfMemoryError:
            return out
        b.write(bytes([byte]) * size)
        out.append(b)


# Another process takes all it can with the same _fill.
_FILL_OTHERS = "import sys\nimport davinci\n" + inspect.getsource(_fill) + """
size = int(sys.argv[1])
with davinci.Device(0) as d:
    out = _fill(d, size, 0x3c)
    print(" ".join("%d:%d" % (b.dev_addr, b.alloc_size) for b in out))
    sys.stdout.flush()
    sys.stdin.read()           # hold them until told to go
"""


def _overlaps(a, alen, b, blen):
    return a < b + blen and b < a + alen


def test_view_outliving_its_buffer_never_sees_another_allocation(dev, backend):
    """A view kept after free() keeps its memory out of the pool: no later
    allocation (this context, another context, another process) shares a
    byte with it, in either direction, until the view is gone; then the
    memory comes back."""
    import gc
    import subprocess
    import sys
    size = MiB
    free0 = dev.mem_info().free
    b = dev.malloc(size)
    addr, alen = b.dev_addr, b.alloc_size
    v = b.numpy()
    v[:] = 0xA5
    b.free()
    others = []
    with davinci.Device(0) as other:
        for d in (dev, other):          # take every MiB the pool has left
            others += _fill(d, size, 0x5a)
        assert others, "the pool had no room left to test reuse"
        assert not [hex(o.dev_addr) for o in others
                    if _overlaps(o.dev_addr, o.alloc_size, addr, alen)]
        assert (v == 0xA5).all()
        v[:] = 0x11
        for o in others:
            assert (o.numpy() == 0x5A).all()
        if backend.kind != "inproc":
            # free them and let another process take all it can
            for o in others:
                o.free()
            others.clear()
            p = subprocess.Popen([sys.executable, "-c", _FILL_OTHERS,
                                  str(size)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
            try:
                line = p.stdout.readline().split()
                assert line, "the other process allocated nothing"
                for item in line:
                    a, n = map(int, item.split(":"))
                    assert not _overlaps(a, n, addr, alen), hex(a)
                assert (v == 0x11).all()
            finally:
                p.communicate("", timeout=60)
        for o in others:
            o.free()
    del v
    gc.collect()
    wait_quiescent(dev)
    assert dev.mem_info().free == free0    # the view's memory came back


def test_mem_query_by_address(dev):
    with dev.malloc(8192) as b:
        q = _uapi.davinci_mem_query(dev_addr=b.dev_addr + 100)
        dev.transport.ioctl(_uapi.DAVINCI_IOCTL_MEM_QUERY, q)
        assert q.dev_addr == b.dev_addr and q.size == 8192
        assert dev.find_buffer(b.dev_addr + 8191) == (b, 8191)
        assert dev.find_buffer(b.dev_addr + 8192) is None


def test_free_unknown_handle(dev):
    with pytest.raises(davinci.InvalidHandleError):
        dev.transport.ioctl(_uapi.DAVINCI_IOCTL_MEM_FREE,
                            _uapi.davinci_mem_free(handle=0xDEAD))


def test_contexts_are_isolated(dev):
    with davinci.Device(0) as other, dev.malloc(4096) as mine:
        s = other.stream()
        with other.malloc(4096) as theirs:
            s.memcpy(theirs.dev_addr, mine.dev_addr, 4096)
            with pytest.raises(davinci.TaskFailedError) as ei:
                s.synchronize()
            assert ei.value.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
