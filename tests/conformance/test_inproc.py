# SPDX-License-Identifier: GPL-2.0
"""In-process backend only: device loss and the core's own accounting."""

import numpy as np
import pytest

import davinci
from davinci import inproc


@pytest.fixture(autouse=True)
def _inproc_only():
    if davinci.find_backend().kind != "inproc":
        pytest.skip("needs the in-process backend (DAVINCI_BACKEND=inproc)")


def test_device_lost_gives_clear_error():
    d = davinci.Device(1)
    s = d.stream()
    b = d.malloc(4096)
    seq = s.nop(20_000_000)
    inproc.inproc_core_device(1).lost()
    with pytest.raises(davinci.DeviceLostError) as ei:
        d.malloc(4096)
    assert "gone" in str(ei.value)
    with pytest.raises((davinci.DeviceLostError, davinci.TaskFailedError)):
        s.synchronize(timeout=30)
    with pytest.raises(davinci.DeviceLostError):
        d.info
    del b, seq
    d.close()
    inproc.inproc_shutdown()          # fresh devices for later tests
    with davinci.Device(1) as d2:
        assert d2.info.health == 0


def test_core_accounting_returns_to_zero():
    from davinci import _corelib
    with davinci.Device(0) as d:
        s = d.stream()
        e = d.event()
        b = d.malloc(1 << 20)
        v = b.numpy()
        v[:] = 1
        s.record(e)
        s.memset(b, 2)
        s.synchronize()
        t = d.tensor(np.ones(100, np.float32))
        davinci.ops.exp(t)
        del v
    inproc.inproc_shutdown()
    st = _corelib.stats()
    assert all(v == 0 for v in st.values()), st
