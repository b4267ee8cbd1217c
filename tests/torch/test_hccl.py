# SPDX-License-Identifier: GPL-2.0
"""torch.distributed's "hccl" process group: two ranks on two davinci
devices, launched with torchrun as users do."""

import os
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def test_two_ranks_collectives_and_ddp(npu):
    if torch.npu.device_count() < 2:
        pytest.skip("needs two davinci devices")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(os.path.dirname(os.path.dirname(HERE)), "userspace")]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONWARNINGS"] = "ignore"
    r = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         "--nproc_per_node", "2", os.path.join(HERE, "hccl_worker.py")],
        env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "rank 0 ok" in r.stdout and "rank 1 ok" in r.stdout
