# SPDX-License-Identifier: GPL-2.0
"""The smallest proof that PyTorch reaches the device: import, a tensor
round trip and one op as a device task. The QEMU guest runs only this
file on the kernel module (scripts/vm-guest.sh, step torch-smoke): the
rest of tests/torch takes longer than TCG allows."""

import torch

from davinci.manager import Manager


def test_import_round_trip_and_one_op(npu):
    with Manager() as mgr:
        tasks_before = mgr.info(0).tasks_completed
    a = torch.arange(64, dtype=torch.float32).reshape(8, 8) / 7
    b = torch.full((8, 8), 0.25)
    before = set(npu.fallback_ops())    # other tests' fallbacks
    da, db = a.to("npu"), b.npu()
    assert da.device == torch.device("npu", 0)
    assert torch.equal(da.cpu(), a)
    got = torch.mm(da, db) + da
    torch.npu.synchronize()
    assert got.is_npu
    assert torch.equal(got.cpu(), torch.mm(a, b) + a)
    fell_back = [op for op in set(npu.fallback_ops()) - before
                 if "mm" in op or "add" in op]
    assert not fell_back, fell_back
    with Manager() as mgr:
        assert mgr.info(0).tasks_completed > tasks_before
