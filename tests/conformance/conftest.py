# SPDX-License-Identifier: GPL-2.0
"""Fixtures of the conformance suite."""

import numpy as np
import pytest

import davinci


@pytest.fixture
def backend():
    return davinci.find_backend()


def require_fault_privilege(mgr, index=0):
    """Skip unless this caller may inject faults (a throttle of 0 on
    ``index`` is the harmless probe)."""
    from davinci.manager import ManagerPermissionError
    try:
        mgr.inject(index, "throttle", level=0)
    except ManagerPermissionError:
        pytest.skip("the driver refuses fault injection to this caller "
                    "(kernel module without CAP_SYS_ADMIN)")


def wait_quiescent(d, timeout=10.0):
    """Wait until no other context holds memory on the device.

    On FUSE the kernel releases a closed file asynchronously, so memory of a
    context closed by the previous test may come back a moment later; tests
    that compare pool-wide figures start from a quiet device. Gives up
    silently after ``timeout`` (a device shared with other users)."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        i = d.info
        mine = d.mem_info().ctx_used
        mine_host = d.mem_info(host=True).ctx_used
        if i.hbm_total - i.hbm_free == mine and \
                i.host_total - i.host_free <= mine_host + _rings(d):
            return
        time.sleep(0.01)


def _rings(d):
    return sum(s.ring_bytes for s in d.streams)


@pytest.fixture
def dev():
    d = davinci.Device(0)
    wait_quiescent(d)
    yield d
    d.close()


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def acl_dev():
    import acl
    with davinci.Device(0) as d:
        wait_quiescent(d)
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    yield acl
    acl.rt.reset_device(0)
    acl.finalize()


#: NOP length that cannot finish during a test (cancelled by the tests that
#: use it as a gate); below the default 30 s watchdog.
GATE_US = 20_000_000


class Gate:
    """Holds a stream back until released, independent of timing.

    A gate stream runs a long NOP and then records an event; streams that
    wait on the event stay blocked until :meth:`release` cancels the NOP.
    """

    def __init__(self, dev):
        self.stream = dev.stream()
        self.event = dev.event()
        self.nop_seq = self.stream.nop(GATE_US)
        self.stream.record(self.event)

    def block(self, stream):
        stream.wait_event(self.event)

    def release(self):
        self.stream.cancel(self.nop_seq)
        self.stream.synchronize()


@pytest.fixture
def gate(dev):
    g = Gate(dev)
    yield g
    if not g.stream.destroyed:
        g.stream.cancel(g.nop_seq)
