# SPDX-License-Identifier: GPL-2.0
"""Every program in samples/ written for the seed's snippets runs and exits 0
on the current backend (the environment passes through)."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SAMPLES = ["acl_device.py", "acl_memory.py", "acl_task.py",
           "acl_interrupt.py", "trouble_version_mismatch.py",
           "trouble_device_not_found.py", "trouble_out_of_memory.py"]


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_runs(name):
    env = dict(os.environ)
    us = os.path.join(REPO, "userspace")
    env["PYTHONPATH"] = us + (os.pathsep + env["PYTHONPATH"]
                              if env.get("PYTHONPATH") else "")
    p = subprocess.run([sys.executable, os.path.join(REPO, "samples", name)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "%s exited %d\n--- stdout\n%s\n--- stderr\n%s" \
        % (name, p.returncode, p.stdout, p.stderr)
