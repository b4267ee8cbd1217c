# SPDX-License-Identifier: GPL-2.0
"""davinci._corelib, the ctypes binding of libdavinci_core, in process."""

import ctypes
import errno
import os
import threading
import time

import pytest

from fuse_helpers import U


@pytest.fixture
def corelib(core_lib):
    from davinci import _corelib
    return _corelib


def test_device_context_ioctl_mmap_stats(corelib, tmp_path):
    base = corelib.stats()
    dev = corelib.CoreDevice(0, hbm_bytes=8 << 20, host_bytes=4 << 20,
                             backing_dir=str(tmp_path), backend="lib")
    ctx = dev.open_context(os.getpid())
    v = U.davinci_version()
    assert ctx.ioctl(U.DAVINCI_IOCTL_GET_VERSION, v) == 0
    assert v.abi_major == U.DAVINCI_ABI_MAJOR and v.backend == b"lib"
    # bytearray buffers work; a too-short one is zero-extended (drm_ioctl)
    raw = bytearray(ctypes.sizeof(U.davinci_device_info))
    assert ctx.ioctl(U.DAVINCI_IOCTL_DEVICE_INFO, raw) == 0
    assert U.davinci_device_info.from_buffer(raw).hbm_total == 8 << 20
    short = bytearray(8)
    assert ctx.ioctl(U.DAVINCI_IOCTL_DEVICE_INFO, short) == 0
    # and a raw address
    a = U.davinci_mem_alloc(size=5000)
    assert ctx.ioctl(U.DAVINCI_IOCTL_MEM_ALLOC, ctypes.addressof(a)) == 0
    assert a.alloc_size == 8192
    assert ctx.ioctl(U.DAVINCI_IOCTL_MEM_ALLOC,
                     U.davinci_mem_alloc(size=0)) == -errno.EINVAL
    assert ctx.ioctl(0xDA00DEAD, bytearray(64)) in (-errno.ENOTTY,
                                                    -errno.EINVAL)
    m = ctx.mmap(a.mmap_offset, 8192)
    assert m.address and m.length == 8192
    ctypes.memset(m.address, 0x7F, 8192)
    with pytest.raises(OSError):
        ctx.mmap(a.mmap_offset + (64 << 20), 4096)
    s = corelib.stats()
    assert s["contexts"] == base["contexts"] + 1
    assert s["hbm_used"] == base["hbm_used"] + 8192
    m.close()
    ctx.close()
    assert ctx.ioctl(U.DAVINCI_IOCTL_GET_VERSION, v) == -errno.EBADF
    dev.close()
    assert corelib.stats() == base


def test_blocking_ioctl_releases_the_gil(corelib, tmp_path):
    dev = corelib.CoreDevice(0, hbm_bytes=4 << 20, host_bytes=4 << 20,
                             backing_dir=str(tmp_path))
    try:
        ctx = dev.open_context()
        done = []

        def wait():
            n = U.davinci_notification(timeout_ms=800)
            done.append(ctx.ioctl(U.DAVINCI_IOCTL_NOTIFY_WAIT, n))

        t = threading.Thread(target=wait)
        t.start()
        time.sleep(0.1)
        t0, spins = time.monotonic(), 0
        while time.monotonic() - t0 < 0.3:
            spins += 1
        t.join()
        assert done == [-errno.ETIMEDOUT]
        assert spins > 1000, "the main thread was starved: GIL held"
    finally:
        dev.close()


def test_lost_wakes_waiters(corelib, tmp_path):
    dev = corelib.CoreDevice(0, hbm_bytes=4 << 20, host_bytes=4 << 20,
                             backing_dir=str(tmp_path))
    ctx = dev.open_context()
    res = []
    t = threading.Thread(target=lambda: res.append(ctx.ioctl(
        U.DAVINCI_IOCTL_NOTIFY_WAIT, U.davinci_notification(timeout_ms=10000))))
    t.start()
    time.sleep(0.2)
    dev.lost()
    t.join(5)
    assert res and res[0] in (0, -errno.ENODEV)
    assert ctx.ioctl(U.DAVINCI_IOCTL_DEVICE_INFO,
                     U.davinci_device_info()) == -errno.ENODEV
    dev.close()     # closes the context too
    assert ctx.closed


def test_load_error_is_clear(corelib, monkeypatch):
    monkeypatch.setattr(corelib, "_lib", None)
    monkeypatch.setenv("DAVINCI_CORE_LIB", "/nonexistent/libdavinci_core.so")
    with pytest.raises(OSError) as ei:
        corelib.load()
    assert "DAVINCI_CORE_LIB" in str(ei.value)
