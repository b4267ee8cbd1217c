# SPDX-License-Identifier: GPL-2.0
"""Faults under a model: a device lost or reset raises at the next sync
(never a hang or a crash), and a killed training process's HBM comes back."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(os.path.dirname(os.path.dirname(HERE)), "userspace")]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONWARNINGS"] = "ignore"
    return env


@pytest.fixture
def fault_env(tmp_path):
    """The environment of a child that injects faults: on FUSE a daemon of
    its own (a reset fails every context on the device, this process's
    too); in-process the child's core is its own already."""
    env = _env()
    if not os.environ.get("DAVINCI_DEV_DIR"):
        yield env
        return
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fuse"))
    from fuse_helpers import Daemon
    d = Daemon(str(tmp_path / "mnt"), devices=2, hbm_mb=64).start()
    env["DAVINCI_DEV_DIR"] = d.mp
    try:
        yield env
    finally:
        d.stop()


@pytest.mark.parametrize("kind", ["lost", "reset"])
def test_device_lost_or_reset_under_training_raises(npu, fault_env, kind):
    r = subprocess.run([sys.executable, os.path.join(HERE, "fault_worker.py"),
                        kind], env=fault_env, capture_output=True,
                       text=True, timeout=120)
    if "no fault privilege" in r.stdout:
        pytest.skip("the driver refuses fault injection to this caller")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "raised" in r.stdout and "lost" in r.stdout.lower(), r.stdout


CHILD = """
import sys, torch, torch_npu
t = [torch.empty(8 << 20, dtype=torch.uint8, device="npu:1")
     for _ in range(4)]
torch.npu.synchronize(1)
print("ready", torch.npu.memory_allocated(1), flush=True)
sys.stdin.read()
"""


def test_killed_process_frees_its_hbm(npu):
    if not os.environ.get("DAVINCI_DEV_DIR"):
        pytest.skip("an in-process core lives and dies with its process: "
                    "run through FUSE or the module")
    if torch.npu.device_count() < 2:
        pytest.skip("needs two davinci devices")
    before, total = torch.npu.mem_get_info(1)
    p = subprocess.Popen([sys.executable, "-c", CHILD], env=_env(),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("ready"), line
        assert int(line.split()[1]) == 32 << 20
        assert torch.npu.mem_get_info(1)[0] <= before - (32 << 20)
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    deadline = time.monotonic() + 10
    while torch.npu.mem_get_info(1)[0] < before and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    assert torch.npu.mem_get_info(1)[0] == before
