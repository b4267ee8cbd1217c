# SPDX-License-Identifier: GPL-2.0
"""The Pythonic runtime (import davinci) over davinci-fused's nodes."""

import signal

import pytest

np = pytest.importorskip("numpy")


def test_runtime_over_fuse(daemon, monkeypatch):
    davinci = pytest.importorskip("davinci")
    if not hasattr(davinci, "Device"):
        pytest.skip("davinci runtime API not available yet")
    monkeypatch.setenv("DAVINCI_DEV_DIR", daemon.mp)
    with davinci.Device(1) as dev:
        assert dev.info.index == 1
        before = dev.info.hbm_free
        x = np.arange(4096, dtype=np.float32)
        a = dev.tensor(x)
        b = dev.tensor(x * 0.25)
        c = davinci.ops.add(a, b)
        assert np.array_equal(c.numpy(), x * 1.25)
        assert dev.info.hbm_free < before


def test_device_lost_error_survives_the_with_block(daemon, monkeypatch):
    """The daemon dies inside ``with Device()``: the block's DeviceLostError
    reaches the caller; closing the dead device does not replace it."""
    davinci = pytest.importorskip("davinci")
    monkeypatch.setenv("DAVINCI_DEV_DIR", daemon.mp)
    with pytest.raises(davinci.DeviceLostError):
        with davinci.Device(0) as dev:
            buf = dev.malloc(4096)
            view = buf.numpy()
            s = dev.stream()
            s.memset(buf, 1, 4096, sync=True)
            daemon.kill(signal.SIGKILL)
            dev.info      # the first call after the crash
    assert view[0] == 1         # the mapping outlives the daemon
