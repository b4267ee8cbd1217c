# SPDX-License-Identifier: GPL-2.0
"""torch.npu streams and events are davinci streams and events."""

import pytest
import torch


def test_current_and_default_stream(npu):
    d = torch.npu.default_stream()
    assert torch.npu.current_stream() == d
    s = torch.npu.Stream()
    assert s != d and s.device == torch.device("npu:0")
    with torch.npu.stream(s):
        assert torch.npu.current_stream() == s
    assert torch.npu.current_stream() == d


def test_with_stream_makes_it_current(npu):
    """A torch.npu.Stream is a torch.Stream: ``with s:`` makes it current
    (torch.Stream's own would ask the guard, which keeps no current
    stream)."""
    s = torch.npu.Stream()
    d = torch.npu.current_stream()
    with s:
        assert torch.npu.current_stream() == s
        with torch.npu.stream(d):
            assert torch.npu.current_stream() == d
        assert torch.npu.current_stream() == s
    assert torch.npu.current_stream() == d
    assert isinstance(s, torch.Stream) and s.device == torch.device("npu:0")


def test_ops_queue_on_the_current_stream(npu):
    s = torch.npu.Stream()
    a = torch.randn(4096).npu()
    torch.npu.synchronize()
    with torch.npu.stream(s):
        b = a * 3
        c = b + a
    s.synchronize()
    assert s.query()
    assert torch.equal(c.cpu(), a.cpu() * 3 + a.cpu())


def _held_producer(gate, s1, n=1 << 16):
    """``b`` (zeros) that s1, held by ``gate``, will overwrite with ``a``."""
    a = torch.randn(n).npu()
    b = torch.zeros(n, device="npu")
    torch.npu.synchronize()
    gate.block(s1)
    with torch.npu.stream(s1):
        b.copy_(a)                       # queued behind the gate
    return a, b


def _consume_and_check(gate, s1, s2, a, b, waits):
    with torch.npu.stream(s2):
        c = b * 2
    # s2 runs what it may: without the ordering it reads b before s1 wrote it
    gate.run_until_parked(s2, waits)
    held = not s2.query()
    gate.release()
    torch.npu.synchronize()
    assert torch.equal(b.cpu(), a.cpu())
    assert torch.equal(c.cpu(), a.cpu() * 2), \
        "s2 read b before s1 (held) wrote it"
    assert held, "s2 finished while s1 was still held"


def test_wait_stream_orders_on_the_device(npu, gate):
    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    a, b = _held_producer(gate, s1)
    before = gate.submitted(s2)
    s2.wait_stream(s1)
    waits = range(before + 1, gate.submitted(s2) + 1)
    _consume_and_check(gate, s1, s2, a, b, waits)


@pytest.mark.parametrize("how", ["stream.wait_event", "event.wait"])
def test_event_wait_orders_on_the_device(npu, gate, how):
    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    a, b = _held_producer(gate, s1)
    ev = torch.npu.Event()
    ev.record(s1)
    assert not ev.query()               # s1 is held
    before = gate.submitted(s2)
    if how == "event.wait":
        ev.wait(s2)
    else:
        s2.wait_event(ev)
    waits = range(before + 1, gate.submitted(s2) + 1)
    _consume_and_check(gate, s1, s2, a, b, waits)
    assert ev.query()


def test_event_synchronize_waits_for_held_work(npu, gate):
    s1 = torch.npu.Stream()
    a, b = _held_producer(gate, s1)
    ev = torch.npu.Event(enable_timing=True)
    ev.record(s1)
    assert not ev.query() and not s1.query()
    gate.release()
    ev.synchronize()
    assert ev.query()
    assert torch.equal(b.cpu(), a.cpu())


def test_event_elapsed_time(npu):
    start = torch.npu.Event(enable_timing=True)
    end = torch.npu.Event(enable_timing=True)
    a = torch.randn(256, 256).npu()
    start.record()
    for _ in range(5):
        a @ a
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert ms > 0


def test_event_wait_and_untimed(npu):
    e = torch.npu.Event()
    assert e.query()                       # never recorded
    s = torch.npu.Stream()
    e.record(s)
    e.wait(torch.npu.current_stream())
    e.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing"):
        e.elapsed_time(e)


def test_stream_on_other_device(npu):
    if torch.npu.device_count() < 2:
        pytest.skip("needs two davinci devices")
    s = torch.npu.Stream(device=1)
    with torch.npu.stream(s):
        t = torch.ones(8, device="npu:1") * 2
    s.synchronize()
    assert torch.equal(t.cpu(), torch.full((8,), 2.0))


def test_non_blocking_copy_queues_on_the_current_stream(npu, gate):
    """A host-to-npu copy with non_blocking=True is staged at once and
    copied by the device in the current stream's order."""
    from torch_npu import _kernels
    src = torch.randn(1 << 14)
    want = src.clone()
    dst = torch.zeros(1 << 14, device="npu")
    torch.npu.synchronize()
    s = torch.npu.Stream()
    gate.block(s)
    with torch.npu.stream(s):
        dst.copy_(src, non_blocking=True)
    # returned without waiting for the held stream, and not copied yet
    assert not s.query()
    assert torch.equal(_kernels.host(dst), torch.zeros(1 << 14))
    src.zero_()                          # the staged bytes are a copy
    gate.release()
    s.synchronize()
    assert torch.equal(dst.cpu(), want)


def test_manual_seed_makes_random_ops_reproducible(npu):
    def draw(seed, fn=torch.npu.manual_seed):
        fn(seed)
        return (torch.randn(64, device="npu").cpu(),
                torch.rand(64, device="npu").cpu(),
                torch.empty(64, device="npu").normal_().cpu())
    a, b, c = draw(1234), draw(1234), draw(4321)
    for x, y, z in zip(a, b, c):
        assert torch.equal(x, y)
        assert not torch.equal(x, z)
    if hasattr(torch.npu, "manual_seed_all"):
        for x, y in zip(a, draw(1234, torch.npu.manual_seed_all)):
            assert torch.equal(x, y)


def test_generic_torch_event_names_the_supported_way(npu):
    """torch.Event(device="npu") is not a silent stub: it raises, naming
    torch.npu.Event."""
    ev = torch.Event(device="npu")
    with pytest.raises(RuntimeError, match=r"torch\.npu\.Event"):
        ev.record()
    assert ev.query()                   # never recorded: nothing pending
    with pytest.raises(RuntimeError, match=r"torch\.npu\.Event"):
        torch.Event(device="npu", enable_timing=True).record()
