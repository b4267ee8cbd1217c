"""Tests that only make sense on the kernel module (run in the QEMU guest).

scripts/vm-guest.sh loads davinci.ko with num_devices=2 hbm_mb=256 and runs
them as root. Anywhere the module is not loaded they are skipped.
"""
import os
import sys

import pytest

# tests/ for polling.py, behind this folder (dvk.py)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(__file__))

import dvk  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if os.path.isdir("/sys/module/davinci") and os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="davinci.ko not loaded (or not root)")
    for item in items:
        item.add_marker(skip)


@pytest.fixture
def fd0():
    fd = dvk.open_dev(0)
    yield fd
    os.close(fd)
