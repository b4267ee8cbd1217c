# SPDX-License-Identifier: GPL-2.0
"""A program blocked in a wait can be stopped: SIGKILL ends it and Ctrl-C
raises KeyboardInterrupt, whatever the wait's timeout, on every backend.

Each case runs a child that blocks in one wait, then signals it once it
sleeps. The waits' own timeouts (60 s) are far beyond what the tests allow
for the signal to work (10 s), so a wait that ignores the signal fails the
test instead of passing late.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import GATE_US

_CHILD = """
import signal
import sys
import davinci
from davinci import _uapi

# Ctrl-C raises KeyboardInterrupt even where SIGINT came in ignored (a
# shell's background job: Python then installs no handler of its own)
signal.signal(signal.SIGINT, signal.default_int_handler)
how = sys.argv[1]
dev = davinci.Device(0)
s = dev.stream()
s.nop(%(gate)d)                       # keeps the stream and the event busy
ev = dev.event()
ev.record(s)
waits = {
    "notification": lambda: dev.wait_notification(timeout=None),
    "stream": lambda: s.synchronize(),
    "event": lambda: ev.synchronize(),
    "device": lambda: dev.synchronize(),
    # one ioctl with a long timeout, as a program without the runtime makes
    "raw": lambda: dev.transport.ioctl(
        _uapi.DAVINCI_IOCTL_NOTIFY_WAIT,
        _uapi.davinci_notification(timeout_ms=60000)),
}
print("ready", flush=True)
try:
    waits[how]()
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("returned", flush=True)
""" % {"gate": GATE_US}

WAITS = ["notification", "stream", "event", "device", "raw"]


def _start(how):
    p = subprocess.Popen([sys.executable, "-c", _CHILD, how],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def _until_asleep(pid, limit=30.0):
    """Wait until the child's main thread sleeps (in its wait)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state in "SD":
            return
        time.sleep(0.01)
    pytest.fail("the child never went to sleep in its wait")


def _skip_raw_inproc(backend, how):
    if how == "raw" and backend.kind == "inproc":
        pytest.skip("in-process, there is no driver to make a raw wait in")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT],
                         ids=["SIGKILL", "Ctrl-C"])
@pytest.mark.parametrize("how", WAITS)
def test_a_signal_ends_a_blocked_wait(backend, how, sig):
    """SIGKILL kills a client blocked in a wait; Ctrl-C raises
    KeyboardInterrupt in it (the child exits 3 on that)."""
    _skip_raw_inproc(backend, how)
    p = _start(how)
    try:
        _until_asleep(p.pid)
        os.kill(p.pid, sig)
        out, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        # a client stuck in the kernel cannot be reaped before its wait ends
        pytest.fail("%s did not end a %s wait within 10 s"
                    % (signal.Signals(sig).name, how))
    finally:
        if p.poll() is None:    # a failed case leaves no child behind
            p.kill()
    if sig == signal.SIGKILL:
        assert p.returncode == -signal.SIGKILL
    else:
        assert out.strip() == "interrupted" and p.returncode == 3
