# SPDX-License-Identifier: GPL-2.0
"""Devices: discovery, info, version, reset, bad indices."""

import pytest

import davinci
from davinci import _uapi


def test_device_count(backend):
    n = davinci.device_count()
    assert n >= 1
    assert n == backend.device_count()


def test_info(dev):
    info = dev.info
    assert info.index == 0
    assert info.aicores >= 1
    assert info.hbm_total > 0 and 0 <= info.hbm_free <= info.hbm_total
    assert info.host_total > 0 and 0 <= info.host_free <= info.host_total
    assert info.name
    assert info.serial
    assert info.health == _uapi.DAVINCI_HEALTH_OK


def test_every_device_opens_with_distinct_serials():
    serials = set()
    for i in range(davinci.device_count()):
        with davinci.Device(i) as d:
            assert d.info.index == i
            serials.add(d.info.serial)
    assert len(serials) == davinci.device_count()


def test_version(dev):
    v = dev.version
    assert v.abi_major == _uapi.DAVINCI_ABI_MAJOR
    assert v.driver_version
    assert v.backend
    assert v.has(_uapi.DAVINCI_FEAT_USER_QUEUES)


def test_manager_version(backend):
    from davinci import discovery
    v = discovery.manager_version(backend)
    assert v.abi_major == _uapi.DAVINCI_ABI_MAJOR


@pytest.mark.parametrize("index", [-1, 64, 1 << 20])
def test_device_index_out_of_range(index):
    with pytest.raises(davinci.InvalidDeviceError) as ei:
        davinci.Device(index)
    assert isinstance(ei.value, davinci.DeviceNotFoundError)
    assert "does not exist" in str(ei.value)


def test_device_index_type():
    with pytest.raises(davinci.InvalidDeviceError):
        davinci.Device("0")


def test_version_mismatch_message():
    from davinci import discovery
    v = _uapi.davinci_version(abi_major=_uapi.DAVINCI_ABI_MAJOR + 1)
    v.driver_version = b"9.9.9"
    with pytest.raises(davinci.DriverVersionMismatchError) as ei:
        discovery.check_version(v, "test driver")
    msg = str(ei.value)
    assert "driver version mismatch" in msg
    assert "%d.0" % (_uapi.DAVINCI_ABI_MAJOR + 1) in msg
    assert "%d." % _uapi.DAVINCI_ABI_MAJOR in msg


def test_not_found_message(monkeypatch, tmp_path):
    from davinci import discovery
    monkeypatch.delenv("DAVINCI_BACKEND", raising=False)
    monkeypatch.delenv("DAVINCI_DEV_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setattr(discovery, "_is_chardev", lambda p: False)
    with pytest.raises(davinci.DeviceNotFoundError) as ei:
        discovery.find_backend()
    assert "modprobe davinci" in str(ei.value)
    assert "davinci-fused" in str(ei.value)


def test_reset_frees_everything(dev):
    before = dev.mem_info()
    buf = dev.malloc(1 << 20)
    s = dev.stream()
    e = dev.event()
    assert dev.mem_info().ctx_used > before.ctx_used
    dev.reset()
    after = dev.mem_info()
    assert after.ctx_used == 0 and after.ctx_allocations == 0
    assert after.free == before.free
    with pytest.raises(davinci.InvalidHandleError):
        buf.numpy()
    with pytest.raises(davinci.InvalidHandleError):
        s.nop()
    with pytest.raises(davinci.InvalidHandleError):
        e.query()
    # the device is usable after a reset
    with dev.malloc(4096) as b2:
        dev.default_stream.memset(b2, 7, sync=True)
        assert (b2.numpy() == 7).all()


def _eventually(cond, timeout=30.0):
    """A closed file is released by the driver asynchronously on FUSE (the
    kernel sends RELEASE in the background): wait for the condition."""
    import time
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_close_releases_memory():
    with davinci.Device(0) as d0:
        d = davinci.Device(0)
        keep = d.malloc(4 << 20)
        used = d.mem_info().ctx_used
        assert used >= 4 << 20
        free_open = d0.info.hbm_free
        d.close()
        assert _eventually(lambda: d0.info.hbm_free >= free_open + (4 << 20))
        with pytest.raises(davinci.DavinciError):
            d.malloc(4096)
        with pytest.raises(davinci.InvalidHandleError):
            keep.numpy()


def test_device_synchronize(dev):
    s1, s2 = dev.stream(), dev.stream()
    b = dev.malloc(4096)
    s1.memset(b, 1, 2048)
    s2.memset(b, 2, 2048, offset=2048)
    dev.synchronize(timeout=30)
    v = b.numpy()
    assert (v[:2048] == 1).all() and (v[2048:4096] == 2).all()


def test_cli_info(capsys):
    from davinci import cli
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "davinci0" in out and "ABI" in out


def test_version_mismatch_end_to_end(monkeypatch):
    monkeypatch.setattr(_uapi, "DAVINCI_ABI_MAJOR", _uapi.DAVINCI_ABI_MAJOR + 1)
    with pytest.raises(davinci.DriverVersionMismatchError) as ei:
        davinci.Device(0)
    assert "driver version mismatch" in str(ei.value)
    import acl
    assert acl.init() == acl.ACL_ERROR_RT_DRV_INTERNAL_ERROR
    assert "driver version mismatch" in acl.get_recent_err_msg()
    assert acl.rt.set_device(0) == acl.ACL_ERROR_RT_DRV_INTERNAL_ERROR
