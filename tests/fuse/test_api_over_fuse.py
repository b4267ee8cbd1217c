# SPDX-License-Identifier: GPL-2.0
"""The Pythonic runtime (import davinci) over davinci-fused's nodes."""

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
