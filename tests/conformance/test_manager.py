# SPDX-License-Identifier: GPL-2.0
"""The manager node: device list, management info, per-process usage, reset,
fault injection (each fault: its effect, an event on the event stream, a
health change, recovery after reset, the other device unaffected) and the
event log. The event stream is the kernel module's netlink group (read with
pyroute2) on the module, the manager's event log elsewhere.

Runs on the current backend (in-process by default, FUSE with
DAVINCI_DEV_DIR). Fault tests need privilege: the in-process backend and the
FUSE daemon's owner have it; on the kernel module they need CAP_SYS_ADMIN and
are skipped when the driver refuses them.
"""

import errno
import os

import numpy as np
import pytest

import davinci
from davinci import _uapi, ops
from davinci.manager import Manager, ManagerPermissionError

from .conftest import require_fault_privilege, wait_quiescent


@pytest.fixture
def mgr():
    m = Manager()
    if len(m.devices()) < 2:
        m.close()
        pytest.skip("needs two devices")
    yield m
    # leave device 0 healthy for the next test
    try:
        if m.info(0).health_name != "OK" or m.info(0).faults_armed:
            m.reset(0)
    except ManagerPermissionError:
        pass
    m.close()


class EventStream:
    """What a subscription delivered, searched by predicate."""

    def __init__(self, sub):
        self.sub = sub
        self.seen = []

    def expect(self, what, pred, timeout=20.0):
        for ev in self.seen:
            if pred(ev):
                return ev
        for ev in self.sub.follow(timeout=timeout):
            self.seen.append(ev)
            if pred(ev):
                return ev
        raise AssertionError("no %s event on the %s stream; it carried: %s" % (
            what, self.sub.source, [e.describe() for e in self.seen]))

    def expect_health(self, health):
        return self.expect("health " + health, lambda e: e.type == "health"
                           and e.health == health)


@pytest.fixture
def stream(mgr):
    sub = mgr.subscribe(device=0)
    yield EventStream(sub)
    sub.close()


def test_event_stream_source(mgr, stream):
    assert stream.sub.source == ("netlink" if mgr.is_kernel_module()
                                 else "log")


def test_devices_and_info(mgr):
    devs = mgr.devices()
    assert devs[:2] == [0, 1]
    assert sorted(devs) == devs
    i0, i1 = mgr.info(0), mgr.info(1)
    assert i0.name.startswith("Ascend910B")
    assert i0.bus_id == "0000:C1:00.0" and i1.bus_id == "0000:81:00.0"
    assert i0.serial != i1.serial
    assert i0.driver_version and i0.firmware_version and i0.board_name
    assert i0.health_name in ("OK", "Warning", "Alarm", "Critical")
    assert 0 <= i0.aicore_util <= 100
    assert i0.power_w > 0 and i0.temp_c > 0
    assert 0 <= i0.hbm_used <= i0.hbm_total
    assert i0.huge_total == i0.hbm_total >> 21
    with davinci.Device(0) as d:
        info = d.info
        assert info.serial == i0.serial
        assert info.hbm_total == i0.hbm_total


def test_unknown_device(mgr):
    with pytest.raises(davinci.InvalidDeviceError) as ei:
        mgr.info(63)
    assert "does not exist" in str(ei.value)


def test_processes_and_memory(mgr):
    d = davinci.Device(0)
    try:
        wait_quiescent(d)
        before = mgr.info(0).hbm_used
        b = d.malloc(4 << 20, policy="huge_only")
        s = d.stream()
        procs = [p for p in mgr.processes(0) if p.pid == os.getpid()]
        assert procs, mgr.processes(0)
        assert any(p.hbm_bytes >= 4 << 20 for p in procs)
        assert procs[0].name and procs[0].name != "-"
        info = mgr.info(0)
        assert info.hbm_used == before + (4 << 20)
        assert info.huge_used >= 2
        assert info.processes >= 1
        b.free()
        s.destroy()
    finally:
        d.close()


def test_process_of_a_thread(mgr):
    # a device opened by a worker thread belongs to the process, not the
    # thread (the kernel module records the tgid; FUSE names the thread)
    import threading
    opened = {}
    t = threading.Thread(target=lambda: opened.update(d=davinci.Device(1)))
    t.start()
    t.join()
    try:
        pids = {p.pid for p in mgr.processes(1)}
        assert os.getpid() in pids, pids
        assert t.native_id not in pids
    finally:
        opened["d"].close()


def test_a_large_matmul_is_shared_across_ai_cores(mgr):
    """One matmul of several chunks on an idle device runs on more than one
    AI core: the device's busy time, summed over its cores, grows by more
    than the task's own duration. A scheduler may leave a helper asleep
    once, so a few matmuls are tried; without sharing none of them shows
    it."""
    if mgr.info(0).aicores < 2:
        pytest.skip("needs two AI cores")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    with davinci.Device(0) as d:
        s = d.stream()
        ad, bd = d.tensor(a), d.tensor(a.T.copy())
        out = d.empty((512, 512), "float32")
        shares = []
        for _ in range(8):
            s.synchronize()
            before = mgr.info(0).busy_ns
            ops.matmul(ad, bd, out=out, stream=s)
            s.synchronize()
            busy = mgr.info(0).busy_ns - before
            task = s.completion(s.query().submitted_seq)
            assert task is not None and task.ok
            shares.append(busy / max(task.duration_ns, 1))
            if shares[-1] > 1.2:
                break
        np.testing.assert_allclose(out.numpy(), a @ a.T, rtol=1e-4,
                                   atol=1e-3)
        assert max(shares) > 1.2, (
            "busy time per task duration %s: the matmul ran on one AI core"
            % ["%.2f" % x for x in shares])
        s.destroy()


def test_idle_values_are_deterministic(mgr):
    # an idle device: no load, so power and temperature are the idle ones
    for i in (0, 1):
        info = mgr.info(i)
        if info.aicore_util == 0 and info.throttle_pct == 0:
            assert info.power_w == 72.5
            assert info.temp_c == 36.0


def test_unprivileged_refused():
    m = Manager()
    if m.backend.kind != "inproc":
        m.close()
        pytest.skip("an unprivileged caller is another user on FUSE and "
                    "the kernel module (tests/fuse, tests/kmod)")
    m.close()
    with Manager(privileged=False) as m:
        with pytest.raises(ManagerPermissionError) as ei:
            m.reset(0)
        assert ei.value.errno == errno.EPERM
        with pytest.raises(PermissionError):
            m.inject(0, "lost")
        assert m.info(0).health_name == "OK"


def test_bad_injection(mgr):
    require_fault_privilege(mgr)
    with pytest.raises(davinci.InvalidArgumentError):
        mgr.inject(0, "meteor")
    with pytest.raises(davinci.DavinciError) as ei:
        mgr.inject(0, "throttle", level=5000)
    assert ei.value.errno == errno.EINVAL


def _events(mgr, since, device):
    return [e for e in mgr.events(since) if e.device == device]


def _memset_works(index, byte, size, readback):
    """A memset task on NPU ``index`` runs; ``readback`` bytes read back."""
    with davinci.Device(index) as d:
        b = d.malloc(size)
        s = d.stream()
        s.memset(b, byte, size)
        s.synchronize(timeout=10)
        assert b.read(readback) == bytes([byte]) * readback


def _other_device_works(mgr):
    _memset_works(1, 0x5A, 8192, 8192)
    assert mgr.info(1).health_name == "OK"


def _reset_recovers(mgr, since, old_dev, stream):
    n = mgr.reset(0)
    stream.expect("reset", lambda e: e.type == "reset")
    stream.expect_health("OK")
    assert n >= (1 if old_dev is not None else 0)
    if old_dev is not None:
        with pytest.raises(davinci.DeviceLostError):
            old_dev.malloc(4096)
        old_dev.close()
    info = mgr.info(0)
    assert info.health_name == "OK"
    assert not info.faults_armed
    assert info.resets >= 1
    evs = _events(mgr, since, 0)
    assert any(e.type == "reset" for e in evs)
    _memset_works(0, 7, 4096, 16)


def _fault_fired(mgr, since, fault, health):
    """Device 0 after ``fault`` fired: in ``health``, the fault counted; its
    info and its events since ``since``."""
    info = mgr.info(0)
    assert info.health_name == health
    assert info.faults_fired[fault] >= 1
    return info, _events(mgr, since, 0)


def _contained_then_reset(mgr, since, old_dev, stream, health):
    """The fault's health reached subscribers and stayed on device 0;
    a reset recovers it."""
    stream.expect_health(health)
    _other_device_works(mgr)
    _reset_recovers(mgr, since, old_dev, stream)


def test_fault_ecc(mgr, stream):
    require_fault_privilege(mgr)
    since = mgr.last_seq()
    d = davinci.Device(0)
    a, b = d.malloc(8192), d.malloc(8192)
    s = d.stream()
    fired = mgr.info(0).faults_fired["ecc"]
    mgr.inject(0, "ecc", addr=b.dev_addr + 4096, size=64)
    assert mgr.info(0).faults_armed == ["ecc"]
    s.memset(a, 1, 8192)
    s.synchronize(timeout=10)
    s.memset(b, 2, 8192)
    with pytest.raises(davinci.TaskFailedError) as ei:
        s.synchronize(timeout=10)
    assert ei.value.status == _uapi.DAVINCI_STATUS_ECC_ERROR
    assert b.read(8192) == b"\0" * 8192      # touched nothing
    n = d.wait_notification(timeout=5)
    assert n is not None and n.status == _uapi.DAVINCI_STATUS_ECC_ERROR
    info, evs = _fault_fired(mgr, since, "ecc", "Alarm")
    assert info.faults_fired["ecc"] == fired + 1
    assert [e.fault for e in evs if e.type == "fault-injected"] == ["ecc"]
    fault = [e for e in evs if e.type == "fault"]
    assert fault and fault[0].status == "ECC_ERROR"
    assert fault[0].addr == b.dev_addr
    assert any(e.type == "health" and e.health == "Alarm" for e in evs)
    stream.expect("ecc injected", lambda e: e.type == "fault-injected" and
                  e.fault == "ecc" and e.addr == b.dev_addr + 4096)
    ev = stream.expect("ecc fired", lambda e: e.type == "fault")
    assert ev.fault == "ecc" and ev.status == "ECC_ERROR"
    _contained_then_reset(mgr, since, d, stream, "Alarm")


def test_fault_hang(mgr, stream):
    require_fault_privilege(mgr)
    since = mgr.last_seq()
    d = davinci.Device(0)
    s = d.stream()
    mgr.inject(0, "hang", timeout_ms=200)
    s.nop(1)
    with pytest.raises(davinci.TaskFailedError) as ei:
        s.synchronize(timeout=30)
    assert ei.value.status == _uapi.DAVINCI_STATUS_TIMEOUT
    _, evs = _fault_fired(mgr, since, "hang", "Alarm")
    assert any(e.type == "fault" and e.fault == "hang" and
               e.status == "TIMEOUT" for e in evs)
    stream.expect("hang fired", lambda e: e.type == "fault" and
                  e.fault == "hang" and e.status == "TIMEOUT")
    # only one task hangs
    s.reset()
    s.nop(1)
    s.synchronize(timeout=10)
    _contained_then_reset(mgr, since, d, stream, "Alarm")


def test_fault_lost(mgr, stream):
    require_fault_privilege(mgr)
    since = mgr.last_seq()
    d = davinci.Device(0)
    b = d.malloc(4096)
    mgr.inject(0, "lost")
    with pytest.raises(davinci.DeviceLostError):
        d.malloc(4096)
    with pytest.raises(davinci.DavinciError):
        davinci.Device(0)
    _, evs = _fault_fired(mgr, since, "lost", "Critical")
    assert any(e.type == "lost" for e in evs)
    assert any(e.type == "health" and e.health == "Critical" for e in evs)
    stream.expect("lost", lambda e: e.type == "lost")
    del b
    _contained_then_reset(mgr, since, d, stream, "Critical")


def test_fault_throttle(mgr, stream):
    require_fault_privilege(mgr)
    since = mgr.last_seq()
    d = davinci.Device(0)
    try:
        b = d.malloc(1 << 20)
        s = d.stream()
        fired = mgr.info(0).faults_fired["throttle"]
        mgr.inject(0, "throttle", level=200)
        info = mgr.info(0)
        assert info.health_name == "Warning"
        assert info.throttle_pct == 200
        assert info.temp_c >= 95
        s.memset(b, 3, 1 << 20)
        s.nop(100)
        s.synchronize(timeout=30)
        assert b.read(16) == b"\x03" * 16       # slower, still correct
        assert mgr.info(0).faults_fired["throttle"] >= fired + 2
        evs = _events(mgr, since, 0)
        assert any(e.type == "fault-injected" and e.fault == "throttle" and
                   e.value == 200 for e in evs)
        assert any(e.type == "health" and e.health == "Warning"
                   for e in evs)
        stream.expect("throttle injected", lambda e: e.type == "fault-injected"
                      and e.fault == "throttle" and e.value == 200)
        stream.expect_health("Warning")
        _other_device_works(mgr)
        mgr.inject(0, "throttle", level=0)
        assert mgr.info(0).health_name == "OK"
        # ending the throttle is not a reset: the context lives on
        s.memset(b, 4, 4096)
        s.synchronize(timeout=10)
    finally:
        d.close()
    _reset_recovers(mgr, since, None, stream)


def test_event_log_paging(mgr):
    require_fault_privilege(mgr)
    since = mgr.last_seq()
    for lvl in (10, 0, 20, 0):
        mgr.inject(1, "throttle", level=lvl)
    evs = mgr.events(since)
    mine = [e for e in evs if e.device == 1]
    assert [e.type for e in mine] == ["fault-injected", "health"] * 4
    seqs = [e.seq for e in evs]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert all(e.describe().startswith("seq %d npu 1" % e.seq) for e in mine)
    assert mgr.events(seqs[-1]) == []
    only0 = mgr.events(since, device=0)
    assert all(e.device == 0 for e in only0)


def test_dispatcher_counters(mgr):
    """The manager reports the device's dispatcher: a doorbell rung while
    it sleeps counts as a kick of a sleeping dispatcher, and its idle time
    is at least the first one it starts from (DAVINCI_FEAT_DISPATCH_STATS,
    the same figures as the module's debugfs)."""
    import time
    assert mgr.features() & _uapi.DAVINCI_FEAT_DISPATCH_STATS
    with davinci.Device(0) as dev:
        s = dev.stream(polled=True)
        nop = davinci.make_task(_uapi.DAVINCI_OP_NOP)
        for _ in range(3):
            end = time.monotonic() + 30
            while not s.needs_wakeup:
                assert time.monotonic() < end, "the dispatcher never slept"
                time.sleep(0.001)
            before = mgr.info(0).dispatcher
            rung = dev.transport.ioctl_counts.get(
                _uapi.DAVINCI_IOCTL_DOORBELL, 0)
            s.launch(nop)
            s.synchronize(timeout=30)
            after = mgr.info(0).dispatcher
            assert dev.transport.ioctl_counts.get(
                _uapi.DAVINCI_IOCTL_DOORBELL, 0) == rung + 1
            assert after.kicks > before.kicks, (before, after)
            assert after.sleeps >= before.sleeps >= 1
            assert after.sleeps >= after.cpu_wanted
            assert after.idle_ns >= 1000 and before.idle_ns >= 1000
    assert mgr.info(1).dispatcher is not None
