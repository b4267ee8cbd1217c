# SPDX-License-Identifier: GPL-2.0
"""The caching allocator: davinci HBM buffers, true statistics, OOM."""

import pytest
import torch


def test_allocated_reserved_and_reuse(npu, clean):
    base = torch.npu.memory_allocated()
    free0, _ = torch.npu.mem_get_info()
    t = torch.empty(1 << 20, dtype=torch.uint8, device="npu")
    assert torch.npu.memory_allocated() == base + (1 << 20)
    assert torch.npu.memory_reserved() >= 1 << 20
    free1, _ = torch.npu.mem_get_info()
    assert free0 - free1 >= 1 << 20          # the HBM pool really shrank
    ptr = t.data_ptr()
    del t
    assert torch.npu.memory_allocated() == base
    u = torch.empty(1 << 20, dtype=torch.uint8, device="npu")
    assert u.data_ptr() == ptr               # the cached block came back
    del u
    reserved = torch.npu.memory_reserved()
    torch.npu.empty_cache()
    assert torch.npu.memory_reserved() <= reserved - (1 << 20)
    free2, _ = torch.npu.mem_get_info()
    assert free2 >= free1 + (1 << 20)


def test_peak_and_reset(npu, clean):
    torch.npu.reset_peak_memory_stats()
    base = torch.npu.memory_allocated()
    t = torch.empty(4 << 20, dtype=torch.uint8, device="npu")
    del t
    assert torch.npu.max_memory_allocated() >= base + (4 << 20)
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_allocated() == torch.npu.memory_allocated()


def test_stats_and_summary(npu, clean):
    t = torch.ones(1000, device="npu")
    s = torch.npu.memory_stats()
    assert s["allocated_bytes.all.current"] == torch.npu.memory_allocated()
    text = torch.npu.memory_summary()
    assert "Allocated memory" in text and "npu:0" in text
    del t


def test_out_of_memory_raises_and_loses_nothing(npu, clean):
    free, total = torch.npu.mem_get_info()
    keep = torch.arange(1000, dtype=torch.float32, device="npu")
    allocated = torch.npu.memory_allocated()
    with pytest.raises(torch.OutOfMemoryError,
                       match=r"NPU out of memory.*\(%d bytes\).*free of %d "
                       "total" % (total * 2, total)):
        torch.empty(total * 2, dtype=torch.uint8, device="npu")
    assert torch.npu.memory_allocated() == allocated
    assert torch.npu.memory_stats()["num_ooms"] >= 1
    assert torch.equal(keep.cpu(), torch.arange(1000, dtype=torch.float32))
    t = torch.empty(1 << 20, dtype=torch.uint8, device="npu")
    del t


def test_oom_empties_the_cache_first(npu, clean):
    free, total = torch.npu.mem_get_info()
    big = free * 3 // 5
    t = torch.empty(big, dtype=torch.uint8, device="npu")
    del t                                    # cached, not returned
    assert torch.npu.memory_reserved() >= big
    # a different size cannot reuse the block: the allocator must return
    # the cached one to the device and retry
    u = torch.empty(big + (1 << 20), dtype=torch.uint8, device="npu")
    del u


def test_block_freed_on_one_stream_is_not_given_to_another(npu, gate, clean):
    """torch's rule: a freed block is reused on the stream it was allocated
    on, so work still queued there cannot land in another stream's tensor."""
    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    gate.block(s1)
    with torch.npu.stream(s1):
        x = torch.empty(1 << 14, device="npu")
        x.fill_(1.0)                     # queued behind the gate
    ptr = x.data_ptr()
    del x                                # back to s1's pool, s1 still held
    with torch.npu.stream(s2):
        y = torch.empty(1 << 14, device="npu")
        y.fill_(2.0)
    s2.synchronize()                     # s2 is not held
    assert y.data_ptr() != ptr
    with torch.npu.stream(s1):          # the same stream gets it back
        z = torch.empty(1 << 14, device="npu")
    assert z.data_ptr() == ptr
    gate.release()
    torch.npu.synchronize()
    assert torch.equal(y.cpu(), torch.full((1 << 14,), 2.0))
