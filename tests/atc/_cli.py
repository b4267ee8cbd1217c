# SPDX-License-Identifier: GPL-2.0
"""davinci-atc's command line as a user runs it, on this checkout's
userspace/ (for the tests of tests/atc)."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def atc(*args) -> subprocess.CompletedProcess:
    """``python -m davinci.atc *args``: its exit code, stdout and stderr."""
    env = dict(os.environ)
    us = os.path.join(REPO, "userspace")
    env["PYTHONPATH"] = us + (os.pathsep + env["PYTHONPATH"]
                              if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "davinci.atc", *args],
                          env=env, capture_output=True, text=True,
                          timeout=120)
