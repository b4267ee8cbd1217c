# SPDX-License-Identifier: GPL-2.0
"""The README's Python examples run as written, each as a program of its
own (on the in-process core unless a backend is chosen): a newcomer pastes
one into a fresh interpreter, and what one leaves behind (torch_npu keeps
its device open for the process, its last tasks still running) must not
reach the tests that follow in this process."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    env = dict(os.environ)
    if not env.get("DAVINCI_DEV_DIR"):
        env["DAVINCI_BACKEND"] = "inproc"
    r = subprocess.run([sys.executable, "-c", BLOCKS[index]], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, "README.md python block %d:\n%s" % (
        index, r.stderr)
