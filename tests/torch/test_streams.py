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


def test_wait_stream_orders_on_the_device(npu):
    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    a = torch.randn(1 << 16).npu()
    torch.npu.synchronize()
    with torch.npu.stream(s1):
        b = a
        for _ in range(20):
            b = b + a
    s2.wait_stream(s1)
    with torch.npu.stream(s2):
        c = b * 2
    s2.synchronize()
    assert torch.equal(c.cpu(), b.cpu() * 2)
    torch.testing.assert_close(c.cpu(), a.cpu() * 42, rtol=1e-5, atol=1e-4)


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
