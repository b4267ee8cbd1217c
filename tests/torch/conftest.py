# SPDX-License-Identifier: GPL-2.0
"""tests/torch: torch_npu on whatever backend davinci discovery finds
(``DAVINCI_BACKEND=inproc`` or a FUSE mountpoint in ``DAVINCI_DEV_DIR``).
Skipped only where torch itself is not installed."""

import pytest

torch = pytest.importorskip("torch")
# One CPU thread: torch's OpenMP workers spin while they wait, and on a
# 2-core machine they starve the device's worker threads (a CPU training
# step measured 4 s for 30 steps with two threads, 0.05 s with one).
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def npu():
    """The torch_npu module (imported once: it registers the backend)."""
    import torch_npu
    if not torch.npu.is_available():
        pytest.fail("torch_npu found no davinci device: run with "
                    "DAVINCI_BACKEND=inproc or DAVINCI_DEV_DIR set")
    return torch_npu


@pytest.fixture
def clean(npu):
    """Synchronise and empty the allocator's cache around a test."""
    torch.npu.synchronize()
    torch.npu.empty_cache()
    yield
    torch.npu.synchronize()
    torch.npu.empty_cache()
