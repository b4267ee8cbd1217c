# SPDX-License-Identifier: GPL-2.0
"""What the Python suites share for waiting on something the system under
test does in its own time (a daemon starting, a node appearing)."""

import time
from typing import Callable


def wait_for(cond: Callable[[], object], timeout: float = 20.0,
             step: float = 0.02) -> bool:
    """Re-check ``cond()`` every ``step`` seconds for at most ``timeout``
    seconds; True as soon as it holds, else what it says at the end."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())
