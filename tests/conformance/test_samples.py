# SPDX-License-Identifier: GPL-2.0
"""Every program in samples/ runs and exits 0 on the current backend (the
environment passes through). samples/_*.py are what the programs share, not
programs."""

import glob
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SAMPLES = sorted(os.path.basename(p) for p in
                 glob.glob(os.path.join(REPO, "samples", "[!_]*.py")))


def test_samples_found():
    assert len(SAMPLES) >= 9


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_runs(name):
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    us = os.path.join(REPO, "userspace")
    env["PYTHONPATH"] = us + (os.pathsep + env["PYTHONPATH"]
                              if env.get("PYTHONPATH") else "")
    p = subprocess.run([sys.executable, os.path.join(REPO, "samples", name)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "%s exited %d\n--- stdout\n%s\n--- stderr\n%s" \
        % (name, p.returncode, p.stdout, p.stderr)
