# SPDX-License-Identifier: GPL-2.0
"""Tensor.record_stream: a block another stream may still read is not
reused until that stream has run past the free (CUDA's caching allocator)."""

import threading

import pytest
import torch

N = 1 << 14


def _side_reads_x(gate):
    """x (0..N-1) on the default stream and a side stream, held by the
    gate, that has queued ``y = x * 2``; returns (side, x, y, x's bytes)."""
    x = torch.arange(N, dtype=torch.float32).npu()
    want = x.cpu()
    side = torch.npu.Stream()
    gate.block(side)
    with torch.npu.stream(side):
        y = x * 2                           # reads x once the gate opens
    return side, x, y, want


def _as_given(side, how):
    if how == "torch.npu.Stream":
        return side
    # what PyTorch hands around: a plain torch.Stream of the npu device type
    return torch.Stream(stream_id=side.stream_id,
                        device_index=side.device_index,
                        device_type=side.device_type)


@pytest.mark.parametrize("how", ["torch.npu.Stream", "torch.Stream"])
def test_freed_block_is_not_reused_while_a_recorded_stream_reads_it(
        npu, gate, clean, how):
    side, x, y, want = _side_reads_x(gate)
    ptr, allocated = x.data_ptr(), torch.npu.memory_allocated()
    reserved = torch.npu.memory_reserved()
    x.record_stream(_as_given(side, how))
    del x
    # freed: no longer allocated, still reserved (side may read it)
    assert torch.npu.memory_allocated() == allocated - N * 4
    assert torch.npu.memory_reserved() == reserved
    z = torch.empty(N, device="npu")        # the default stream, x's size
    z.fill_(-1.0)
    torch.npu.current_stream().synchronize()
    assert not side.query()                  # side has not read x yet
    gate.release()
    side.synchronize()
    assert torch.equal(y.cpu(), want * 2), \
        "the side stream read another tensor's bytes in x's freed memory"
    assert z.data_ptr() != ptr
    assert torch.equal(z.cpu(), torch.full((N,), -1.0))
    # side has passed the free: the block is back in its pool
    u = torch.empty(N, device="npu")
    assert u.data_ptr() == ptr
    assert torch.npu.memory_reserved() == reserved + N * 4   # z's block


def test_empty_cache_waits_for_a_recorded_stream(npu, gate, clean):
    """empty_cache does not give the device a block a recorded stream may
    still read: it waits for the stream first (as CUDA's emptyCache
    synchronizes the allocator's events)."""
    side, x, y, want = _side_reads_x(gate)
    reserved = torch.npu.memory_reserved()
    x.record_stream(side)
    del x
    # released while empty_cache waits; if it did not wait, side would
    # still be held when it returned
    opener = threading.Timer(0.5, gate.release)
    opener.start()
    try:
        torch.npu.empty_cache()
        assert side.query(), "empty_cache returned while side could read x"
    finally:
        opener.join()
    assert torch.npu.memory_reserved() <= reserved - N * 4
    assert torch.equal(y.cpu(), want * 2)


@pytest.mark.parametrize("then", ["malloc", "empty_cache"])
def test_a_free_mark_that_never_completes_its_event_still_passes(
        npu, gate, clean, then):
    """The event recorded at the free completes nothing when its record is
    cancelled (or aborted by a failed stream); once the stream has run past
    the record the block comes back all the same, and empty_cache does not
    wait for it forever."""
    side, x, y, want = _side_reads_x(gate)
    ptr, reserved = x.data_ptr(), torch.npu.memory_reserved()
    x.record_stream(side)
    del x
    record = gate.submitted(side)            # the free's event record
    assert side.davinci_stream.cancel(record)
    gate.release()
    side.synchronize()
    assert torch.equal(y.cpu(), want * 2)
    if then == "malloc":
        assert torch.empty(N, device="npu").data_ptr() == ptr
    else:
        torch.npu.empty_cache()
        assert torch.npu.memory_reserved() <= reserved - N * 4


def test_the_allocating_stream_and_current_stream_are_accepted(npu, clean):
    """Recording the stream the block was allocated on (as
    torch.npu.current_stream() or the torch.Stream the guard reports) needs
    no tracking: the block is reused at once."""
    x = torch.ones(N, device="npu")
    ptr = x.data_ptr()
    x.record_stream(torch.npu.current_stream())
    x.record_stream(torch.accelerator.current_stream())
    del x
    assert torch.empty(N, device="npu").data_ptr() == ptr


def test_a_stream_of_another_device_type_is_refused(npu):
    x = torch.ones(4, device="npu")
    cpu = torch.Stream(stream_id=0, device_index=0,
                       device_type=torch.Stream(device="cpu").device_type)
    with pytest.raises(RuntimeError, match="stream of an npu device"):
        x.record_stream(cpu)
    unknown = torch.Stream(stream_id=1 << 40, device_index=0,
                           device_type=torch.npu.current_stream().device_type)
    with pytest.raises(RuntimeError, match="no torch.npu.Stream"):
        x.record_stream(unknown)
