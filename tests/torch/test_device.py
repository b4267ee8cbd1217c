# SPDX-License-Identifier: GPL-2.0
"""The torch.npu surface, tensor methods and copies."""

import pytest
import torch


def test_backend_is_named_npu(npu):
    assert torch._C._get_privateuse1_backend_name() == "npu"
    assert torch.npu.is_available()
    assert torch.npu.device_count() >= 1
    t = torch.ones(2).npu()
    assert t.is_npu and t.device == torch.device("npu", 0)
    assert not torch.ones(2).is_npu


def test_repr_names_the_device(npu):
    t = torch.arange(4, dtype=torch.float32).npu()
    r = repr(t)
    assert "device='npu:0'" in r
    assert "0., 1., 2., 3." in r


def test_module_npu_moves_parameters(npu):
    m = torch.nn.Linear(3, 2).npu()
    assert all(p.device.type == "npu" for p in m.parameters())


def test_round_trip_keeps_values_and_dtypes(npu):
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int32,
                  torch.int64, torch.bool):
        a = (torch.arange(24) % 7).reshape(2, 3, 4).to(dtype)
        b = a.to("npu")
        assert b.dtype == dtype and b.shape == a.shape
        assert torch.equal(b.cpu(), a)


def test_non_contiguous_copies(npu):
    a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    b = a.npu()
    assert torch.equal(b.t().cpu(), a.t())
    assert torch.equal(b[:, 1:3].cpu(), a[:, 1:3])
    c = torch.zeros(4, 3).npu()
    c.copy_(a.t())
    assert torch.equal(c.cpu(), a.t())


def test_non_blocking_copy_is_ordered_on_the_stream(npu):
    a = torch.randn(1000)
    b = a.to("npu", non_blocking=True)
    c = b * 2                       # queued after the copy on one stream
    torch.npu.synchronize()
    assert torch.equal(c.cpu(), a * 2)


def test_casts_on_device(npu):
    a = torch.randn(100)
    for dtype in (torch.float16, torch.bfloat16, torch.int32):
        assert torch.equal(a.npu().to(dtype).cpu(), a.to(dtype))
    h = a.half().npu()
    assert torch.equal(h.float().cpu(), a.half().float())


def test_copy_between_devices(npu):
    if torch.npu.device_count() < 2:
        pytest.skip("needs two davinci devices")
    a = torch.randn(64)
    b = a.to("npu:0").to("npu:1")
    assert b.device == torch.device("npu:1")
    assert torch.equal(b.cpu(), a)
    c = torch.empty(64, device="npu:0")
    c.copy_(b)
    assert torch.equal(c.cpu(), a)


def test_current_device_and_context(npu):
    assert torch.npu.current_device() == 0
    if torch.npu.device_count() < 2:
        return
    with torch.npu.device(1):
        assert torch.npu.current_device() == 1
        assert torch.empty(2, device="npu").device.index == 1
    assert torch.npu.current_device() == 0
    torch.npu.set_device("npu:1")
    try:
        assert torch.npu.current_device() == 1
    finally:
        torch.npu.set_device(0)


def test_invalid_device_ordinal(npu):
    n = torch.npu.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal.*there "
                       "(is|are) %d npu device" % n):
        torch.empty(1, device="npu:%d" % n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.npu.set_device(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.ones(1).to("npu:%d" % (n + 3))


def test_device_properties(npu):
    p = torch.npu.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0
    assert torch.npu.get_device_name(0) == p.name
    free, total = torch.npu.mem_get_info(0)
    assert total == p.total_memory and 0 < free <= total


def test_item_and_scalars(npu):
    t = torch.tensor([1.5, 2.5]).npu()
    assert t.sum().item() == 4.0
    assert t[1].item() == 2.5
