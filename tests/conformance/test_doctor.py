# SPDX-License-Identifier: GPL-2.0
"""The seed's three failure stories, reproduced, each with the runtime's
documented error and ``davinci doctor``'s diagnosis:

(a) a driver ABI outside the runtime's range: "driver version mismatch",
    both versions and what to install, and nothing else runs;
(b) no module and no daemon: "device not found" naming both fixes;
(c) an allocation beyond free HBM: out of memory stating requested, free
    and total; the device stays usable and freeing recovers.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import davinci
from davinci import doctor
from davinci.manager import Manager

from .conftest import wait_quiescent

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))


def run_py(code, env=None, args=()):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(REPO, "userspace") + os.pathsep + \
        e.get("PYTHONPATH", "")
    if env:
        e.update(env)
    return subprocess.run([sys.executable] + (["-c", code] if code else [])
                          + list(args), env=e, capture_output=True,
                          text=True, timeout=60)


def test_doctor_healthy(capsys):
    from davinci import cli
    rc = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "[ OK ] versions" in out
    assert "NPU 0 health: OK" in out
    assert "no problems found" in out


def test_doctor_json(capsys):
    from davinci import cli
    assert cli.main(["doctor", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] is True
    assert {f["check"] for f in d["findings"]} >= {"versions",
                                                    "NPU 0 health"}


# --- (a) driver version mismatch ---------------------------------------------
STORY_A = textwrap.dedent("""
    import os, davinci
    from davinci.manager import Manager
    try:
        davinci.Device(0)
    except davinci.DriverVersionMismatchError as e:
        print("ERROR", e)
    else:
        print("NO ERROR")
    # nothing else ran: no context of ours, no memory, no task
    m = Manager()
    me = [p for p in m.processes(0) if p.pid == os.getpid()]
    print("CONTEXTS", len(me))
    print("TASKS", m.info(0).tasks_completed)
""")


def test_story_a_version_mismatch():
    r = run_py(STORY_A, env={"DAVINCI_RUNTIME_ABI_RANGE": "2.0"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "NO ERROR" not in out, out
    err = [ln for ln in out.splitlines() if ln.startswith("ERROR")][0]
    assert "driver version mismatch" in err
    assert "ABI 1.%d" % davinci._uapi.DAVINCI_ABI_MINOR in err   # driver
    assert "ABI 2.x" in err                                      # runtime
    assert "install a driver" in err
    assert "CONTEXTS 0" in out
    if os.environ.get("DAVINCI_BACKEND") == "inproc":
        assert "TASKS 0" in out
    # doctor diagnoses it
    r = run_py(None, env={"DAVINCI_RUNTIME_ABI_RANGE": "2.0"},
               args=["-m", "davinci.cli", "doctor"])
    assert r.returncode == 1, r.stdout
    assert "[FAIL] versions: driver version mismatch" in r.stdout
    assert "install a driver" in r.stdout


# --- (b) no module, no daemon ------------------------------------------------
def test_story_b_device_not_found(tmp_path):
    if os.path.exists("/dev/davinci_manager"):
        pytest.skip("the kernel module is loaded")
    env = {"DAVINCI_BACKEND": "", "DAVINCI_DEV_DIR": "",
           "XDG_RUNTIME_DIR": str(tmp_path)}
    r = run_py("import davinci\ntry:\n    davinci.Device(0)\n"
               "except davinci.DeviceNotFoundError as e:\n"
               "    print('ERROR', e)\n", env=env)
    assert "ERROR no davinci device found" in r.stdout, r.stderr
    assert "sudo modprobe davinci" in r.stdout
    assert "davinci-fused" in r.stdout
    r = run_py(None, env=env, args=["-m", "davinci.cli", "doctor"])
    assert r.returncode == 1
    assert "[FAIL] driver: device not found" in r.stdout
    assert "sudo modprobe davinci" in r.stdout
    assert "davinci-fused" in r.stdout
    r = run_py(None, env=env, args=["-m", "davinci.cli", "doctor", "--json"])
    d = json.loads(r.stdout)
    assert d["ok"] is False


# --- (c) out of device memory ------------------------------------------------
def test_story_c_out_of_memory():
    with davinci.Device(0) as d:
        wait_quiescent(d)
        total = d.info.hbm_total
        free = d.mem_info().free
        with pytest.raises(davinci.OutOfMemoryError) as ei:
            d.malloc(free + (64 << 20))
        e = ei.value
        assert e.requested == free + (64 << 20)
        assert e.free == free and e.total == total
        msg = str(e)
        assert str(free + (64 << 20)) in msg
        assert "%d bytes free" % free in msg and str(total) in msg
        # fill HBM to the brim: doctor says why the next allocation fails
        hog = d.malloc(free - (2 << 20), policy="normal_only")
        with pytest.raises(davinci.OutOfMemoryError):
            d.malloc(8 << 20)
        findings = doctor.run_checks()
        mem = [f for f in findings if f.check == "NPU 0 memory"][0]
        assert mem.status == doctor.FAIL
        assert "out of memory" in mem.summary
        assert "pid %d" % os.getpid() in mem.evidence
        assert "free buffers" in mem.fix
        # the device still works, and freeing recovers
        s = d.stream()
        small = d.malloc(4096)
        s.memset(small, 1, 4096)
        s.synchronize(timeout=10)
        hog.free()
        big = d.malloc(8 << 20)
        big.free()
        small.free()
        s.destroy()
    with Manager() as m:
        assert m.info(0).health_name == "OK"
    assert all(f.status != doctor.FAIL for f in doctor.run_checks()
               if f.check == "NPU 0 memory")
