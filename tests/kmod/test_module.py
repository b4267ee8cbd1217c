"""Module load, nodes, parameters, sysfs, manager node, ioctl sizing."""
import ctypes
import errno
import fcntl
import grp
import os
import stat

import pytest

import dvk
from polling import wait_for


def param(name):
    with open("/sys/module/davinci/parameters/" + name) as f:
        return int(f.read())


def test_lsmod():
    with open("/proc/modules") as f:
        assert any(line.split()[0] == "davinci" for line in f)


def test_nodes_count_and_permissions():
    n = param("num_devices")
    gid = grp.getgrnam(dvk.GROUP).gr_gid
    for name in ["davinci%d" % i for i in range(n)] + ["davinci_manager"]:
        st = os.stat(os.path.join(dvk.DEV_DIR, name))
        assert stat.S_ISCHR(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o660, name
        assert st.st_gid == gid, name
    nodes = [d for d in os.listdir(dvk.SYS_CLASS) if d[7:].isdigit()]
    assert len(nodes) == n


def test_params_reach_devices(fd0):
    info = dvk.ioctl(fd0, dvk.DEVICE_INFO, dvk.DeviceInfo())
    assert info.index == 0
    assert info.hbm_total == param("hbm_mb") << 20
    assert info.aicores == param("aicores")
    assert info.task_timeout_ms == param("task_timeout_ms")
    assert int(dvk.sysfs(0, "hbm_total")) == info.hbm_total
    assert int(dvk.sysfs(0, "aicores")) == info.aicores
    assert int(dvk.sysfs(0, "health")) == info.health
    assert dvk.sysfs(0, "serial") == info.serial.decode()
    assert 0 <= int(dvk.sysfs(0, "utilization")) <= 100


def test_version_on_device_and_manager(fd0):
    with open("/sys/module/davinci/version") as f:
        modver = f.read().strip()
    v = dvk.ioctl(fd0, dvk.GET_VERSION, dvk.Version())
    assert v.backend == b"kmod"
    assert v.driver_version.decode() == modver
    mfd = os.open(os.path.join(dvk.DEV_DIR, "davinci_manager"), os.O_RDWR)
    try:
        m = dvk.ioctl(mfd, dvk.GET_VERSION, dvk.Version())
        assert (m.abi_major, m.driver_version) == (v.abi_major, v.driver_version)
        with pytest.raises(OSError) as e:
            dvk.ioctl(mfd, dvk.DEVICE_INFO, dvk.DeviceInfo())
        assert e.value.errno in (errno.ENOTTY, errno.ENODEV, errno.EINVAL)
    finally:
        os.close(mfd)


def test_ioctl_size_tolerant(fd0):
    full = dvk.ioctl(fd0, dvk.GET_VERSION, dvk.Version())
    # An older, shorter struct: only its bytes are written.
    short = bytearray(b"\xa5" * 16)
    cmd = dvk._ioc(dvk._IOC_READ, 0x00, 8)
    fcntl.ioctl(fd0, cmd, short, True)
    assert bytes(short[:8]) == bytes(full)[:8]
    assert bytes(short[8:]) == b"\xa5" * 8
    # A newer, longer struct: the tail is left alone.
    size = ctypes.sizeof(dvk.Version) + 64
    long_ = bytearray(b"\x5a" * size)
    fcntl.ioctl(fd0, dvk._ioc(dvk._IOC_READ, 0x00, size), long_, True)
    assert bytes(long_[:ctypes.sizeof(dvk.Version)]) == bytes(full)
    assert bytes(long_[ctypes.sizeof(dvk.Version):]) == b"\x5a" * 64


def test_unknown_ioctls(fd0):
    for cmd in (dvk._ioc(dvk._IOC_READ, 0xEE, 8), 0x5401,
                (dvk._IOC_READ << 30) | (8 << 16) | (0xDB << 8)):
        with pytest.raises(OSError) as e:
            fcntl.ioctl(fd0, cmd, bytearray(8), True)
        assert e.value.errno == errno.ENOTTY


def test_bad_user_pointer(fd0):
    for addr in (0x10, 0xFFFF800000000000, 0xFFFFFFFFFFFFF000):
        for cmd in (dvk.GET_VERSION, dvk.MEM_ALLOC, dvk.DEVICE_INFO):
            assert dvk.raw_ioctl(fd0, cmd, addr) == -errno.EFAULT
    info = dvk.ioctl(fd0, dvk.DEVICE_INFO, dvk.DeviceInfo())
    assert info.hbm_free == info.hbm_total


def test_hbm_used_follows_allocations():
    base = int(dvk.sysfs(0, "hbm_used"))
    fd = dvk.open_dev(0)
    try:
        a = dvk.alloc(fd, 3 << 20)
        assert int(dvk.sysfs(0, "hbm_used")) == base + a.alloc_size
    finally:
        os.close(fd)
    assert wait_for(lambda: int(dvk.sysfs(0, "hbm_used")) == base)


def test_rmmod_refused_while_open(fd0):
    import subprocess
    r = subprocess.run(["rmmod", "davinci"], capture_output=True)
    assert r.returncode != 0
    assert os.path.isdir("/sys/module/davinci")


def test_manager_lists_devices():
    n = param("num_devices")
    mfd = os.open(os.path.join(dvk.DEV_DIR, "davinci_manager"), os.O_RDWR)
    try:
        buf = bytearray(8 + 4 * 64)
        fcntl.ioctl(mfd, dvk._ioc(dvk._IOC_READ, 0x80, len(buf)), buf, True)
    finally:
        os.close(mfd)
    count = int.from_bytes(buf[:4], "little")
    idx = [int.from_bytes(buf[8 + 4 * i:12 + 4 * i], "little")
           for i in range(count)]
    assert idx == list(range(n))
