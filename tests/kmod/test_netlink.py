"""The module's Linux-native surfaces read with pyroute2: the generic netlink
family "davinci" (list, info, the events group) and the uevents of hot add
and remove. The fault events themselves are in tests/conformance/
test_manager.py, which reads them from netlink on the module."""
import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

import dvk

from davinci.manager import Manager
from davinci.netlink import DavinciNetlink

pytest.importorskip("pyroute2")
from pyroute2.netlink.uevent import AsyncUeventSocket  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))


@pytest.fixture
def nl():
    with DavinciNetlink() as sock:
        yield sock


def test_list_and_info(nl):
    n = int(open("/sys/module/davinci/parameters/num_devices").read())
    assert nl.devices() == list(range(n))
    info = nl.info(0)
    assert info["device"] == 0
    assert info["hbm_total"] == int(dvk.sysfs(0, "hbm_total"))
    assert info["serial"] == dvk.sysfs(0, "serial")
    with Manager() as m:
        mi = m.info(0)
    assert info["bus_id"] == mi.bus_id and info["name"] == mi.name
    assert info["driver_version"] == mi.driver_version
    assert info["aicores"] == mi.aicores


def test_info_of_a_missing_device(nl):
    import davinci
    with pytest.raises(davinci.DavinciError) as ei:
        nl.info(63)
    assert ei.value.errno == 19      # ENODEV


def test_events_on_hot_add_remove(nl):
    nl.subscribe()
    dvk.bus_write("new_device", "12 16 1")
    dvk.bus_write("del_device", "12")
    seen = []
    for ev in nl.follow(timeout=20, device=12):
        seen.append(ev.type)
        if ev.type == "remove":
            break
    # removing a device with no user: added, lost, removed
    assert seen[0] == "add" and seen[-1] == "remove", seen


def test_events_carry_the_log_sequence(nl):
    nl.subscribe()
    with Manager() as m:
        m.inject(1, "throttle", level=30)
        m.inject(1, "throttle", level=0)
        evs = list(nl.follow(timeout=20, count=4, device=1))
        logged = [e for e in m.events(evs[0].seq - 1, device=1)][:4]
    assert [e.type for e in evs] == ["fault-injected", "health"] * 2
    assert evs == logged


def _uevents(loop, sock, want, timeout=20.0):
    """Collect uevents until every (ACTION, DEVNAME) in ``want`` arrived."""
    got = []

    async def collect():
        while not want <= {(m.get("ACTION"), m.get("DEVNAME")) for m in got}:
            got.extend([m async for m in sock.get()])
    try:
        loop.run_until_complete(asyncio.wait_for(collect(), timeout))
    except asyncio.TimeoutError:
        pass
    return got


def test_uevents_on_hot_add_remove():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    sock = AsyncUeventSocket()
    try:
        loop.run_until_complete(sock.bind())
        dvk.bus_write("new_device", "13 16 1")
        dvk.bus_write("del_device", "13")
        want = {("add", "davinci13"), ("remove", "davinci13")}
        got = _uevents(loop, sock, want)
    finally:
        sock.close()
        loop.close()
        asyncio.set_event_loop(None)
    mine = [m for m in got if m.get("DEVNAME") == "davinci13"]
    assert want <= {(m.get("ACTION"), m.get("DEVNAME")) for m in mine}, got
    assert all(m.get("SUBSYSTEM") == "davinci" for m in mine)
    assert all(m.get("MAJOR") for m in mine)


def test_npu_smi_events_follows_netlink():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "userspace")
    p = subprocess.Popen(
        [sys.executable, "-m", "davinci.npu_smi", "events", "-i", "1",
         "--source", "netlink", "--count", "2", "--json", "--timeout", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # inject until the follower (which subscribes at some point after its
    # start: half a minute and more in a debug kernel under TCG) has seen
    # two events
    with Manager() as m:
        level = 10
        deadline = time.monotonic() + 115
        while p.poll() is None and time.monotonic() < deadline:
            m.inject(1, "throttle", level=level)
            level = level % 990 + 10
            try:
                p.wait(0.2)
            except subprocess.TimeoutExpired:
                pass
        m.inject(1, "throttle", level=0)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    evs = [json.loads(line) for line in out.splitlines()]
    assert len(evs) == 2 and all(e["device"] == 1 for e in evs), out
    assert {e["type"] for e in evs} <= {"fault-injected", "health"}


def test_doctor_checks_the_event_group():
    from davinci.doctor import OK, run_checks
    events = [f for f in run_checks() if f.check == "events"]
    assert len(events) == 1 and events[0].status == OK, events
    assert "netlink family 'davinci', group 'events'" in events[0].summary
