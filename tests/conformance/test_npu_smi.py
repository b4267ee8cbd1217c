# SPDX-License-Identifier: GPL-2.0
"""npu-smi: the real tool's layout line by line (golden text, idle devices),
every query with --json, set and events, and the no-driver error."""

import json
import os
import subprocess
import sys
import time

import pytest

from davinci.manager import Manager

from .conftest import require_fault_privilege

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

# Two idle devices of 256 MiB HBM and 64 MiB pinned host memory, as the
# in-process backend and scripts/with-fuse.sh make them.
GOLDEN_INFO = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 1.0.0                    Version: 1.0.0                                                |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B-sim            | OK            | 72.5        36                0    / 128           |
| 0                         | 0000:C1:00.0  | 0           0    / 64         0    / 256           |
+===========================+===============+====================================================+
| 1     910B-sim            | OK            | 72.5        36                0    / 128           |
| 0                         | 0000:81:00.0  | 0           0    / 64         0    / 256           |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 1                                                            |
+===========================+===============+====================================================+
"""


def npu_smi(*args, env=None, timeout=60):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(REPO, "userspace") + os.pathsep + \
        e.get("PYTHONPATH", "")
    e.pop("DAVINCI_VERSION_INFO", None)
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "davinci.npu_smi"] +
                          list(args), env=e, capture_output=True, text=True,
                          timeout=timeout)


def _quiesce(timeout=15.0):
    """Wait until devices 0 and 1 are idle: no contexts, no memory, no
    load in the utilisation window, healthy. False if they never are."""
    with Manager() as m:
        if m.devices()[:2] != [0, 1]:
            return False
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            infos = [m.info(i) for i in (0, 1)]
            if all(i.processes == 0 and i.hbm_used == 0 and
                   i.host_used == 0 and i.aicore_util == 0 and
                   i.health_name == "OK" and i.hbm_total == 256 << 20 and
                   i.host_total == 64 << 20 for i in infos):
                return True
            time.sleep(0.2)
    return False


def test_info_golden():
    # in-process: npu-smi runs its own, fresh core; else wait for idle
    if os.environ.get("DAVINCI_BACKEND") != "inproc" and not _quiesce():
        pytest.skip("devices 0 and 1 are not two idle 256 MiB devices")
    r = npu_smi("info")
    assert r.returncode == 0, r.stderr
    got, want = r.stdout.splitlines(), GOLDEN_INFO.splitlines()
    for n, (g, w) in enumerate(zip(got, want)):
        assert g == w, "line %d differs:\n got: %r\nwant: %r" % (n + 1, g, w)
    assert len(got) == len(want)
    assert all(len(line) == 98 for line in got)


def test_info_with_a_process(tmp_path):
    import davinci
    with davinci.Device(1) as d:
        b = d.malloc(3 << 20, policy="normal_only")
        r = npu_smi("info")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        mine = [ln for ln in lines if "| %d " % os.getpid() in ln]
        if os.environ.get("DAVINCI_BACKEND") == "inproc":
            # another process, another in-process core: ours is not there
            assert not mine
            return
        assert mine, r.stdout
        assert mine[0].startswith("| 1       0 ")
        assert mine[0].split("|")[4].strip() == "3"
        assert len(mine[0]) == 98
        b.free()


def test_info_json():
    r = npu_smi("info", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["version"] == "1.0.0"
    npus = {n["index"]: n for n in d["npus"]}
    assert npus[0]["bus_id"] == "0000:C1:00.0"
    assert "processes" in npus[0] and "health_name" in npus[0]


def test_info_list():
    r = npu_smi("info", "-l")
    assert r.returncode == 0, r.stderr
    assert "Total Count" in r.stdout and "NPU ID" in r.stdout
    d = json.loads(npu_smi("info", "-l", "--json").stdout)
    assert d["total_count"] >= 2
    assert d["npus"][0]["npu_id"] == 0


@pytest.mark.parametrize("kind,key", [
    ("board", "PCIe Bus Info"), ("memory", "HBM Capacity(MB)"),
    ("usages", "Aicore Usage Rate(%)"), ("usages", "Doorbells"),
    ("usages", "Dispatcher Idle Time(us)"), ("health", "Health Status")])
def test_info_types(kind, key):
    r = npu_smi("info", "-t", kind, "-i", "1")
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if key in ln][0]
    assert line.startswith("        %s" % key) and " : " in line
    d = json.loads(npu_smi("info", "-t", kind, "-i", "1", "--json").stdout)
    assert key in d


def test_info_unknown_npu():
    r = npu_smi("info", "-t", "board", "-i", "42")
    assert r.returncode != 0
    assert "NPU 42 does not exist" in r.stderr


def test_watch_count():
    r = npu_smi("info", "watch", "--count", "2", "--interval", "0.05")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("NPU     Chip    Pwr(W)")
    assert len(lines) >= 1 + 2 * 2
    r = npu_smi("info", "watch", "-i", "0", "--count", "1", "--json")
    assert json.loads(r.stdout.splitlines()[0])["index"] == 0


def test_version(tmp_path):
    r = npu_smi("-v")
    assert r.returncode == 0, r.stderr
    assert "npu-smi version: 1.0.0" in r.stdout
    assert "loaded driver  : 1.0.0, ABI 1." in r.stdout
    vi = tmp_path / "version.info"
    vi.write_text("Version=9.8.7\npackage_version=9.8.7\n"
                  "innerversion=V999\ncompatible_version=[V999]\n")
    r = npu_smi("-v", "--json", env={"DAVINCI_VERSION_INFO": str(vi)})
    d = json.loads(r.stdout)
    assert d["npu_smi_version"] == "9.8.7"
    assert d["package"]["innerversion"] == "V999"
    assert d["driver"]["abi"].startswith("1.")


def test_set_and_events():
    with Manager() as m:
        require_fault_privilege(m, 1)
        if m.backend.kind == "inproc":
            pytest.skip("npu-smi runs in another process: another core")
        since = m.last_seq()
    r = npu_smi("set", "-t", "fault-inject", "-i", "1", "--fault",
                "throttle", "--level", "50")
    assert r.returncode == 0, r.stderr
    assert "Injected throttle fault into NPU 1" in r.stdout
    r = npu_smi("events", "--since", str(since), "--count", "2",
                "--timeout", "20", "--json")
    evs = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert [e["type"] for e in evs] == ["fault-injected", "health"]
    r = npu_smi("set", "-t", "reset", "-i", "1")
    assert r.returncode == 0, r.stderr
    assert "Reset NPU 1 successfully" in r.stdout
    r = npu_smi("events", "--since", str(since), "--timeout", "0.5")
    assert "reset" in r.stdout and "health Warning -> OK" in r.stdout


def test_set_fault_then_reset():
    with Manager() as m:
        require_fault_privilege(m)
    r = npu_smi("set", "-t", "fault-inject", "-i", "0", "--fault", "ecc",
                "--addr", "0x100000000", "--size", "4096")
    assert r.returncode == 0, r.stderr
    assert "ECC error" in r.stdout
    # disarm it (on a shared backend the next test would hit it)
    r = npu_smi("set", "-t", "reset", "-i", "0")
    assert r.returncode == 0, r.stderr
    r = npu_smi("set", "-t", "fault-inject", "-i", "0")
    assert r.returncode != 0 and "--fault" in r.stderr


def test_no_driver(tmp_path):
    if os.path.exists("/dev/davinci_manager"):
        pytest.skip("the kernel module is loaded")
    env = {"DAVINCI_BACKEND": "", "DAVINCI_DEV_DIR": "",
           "XDG_RUNTIME_DIR": str(tmp_path)}
    r = npu_smi("info", env=env)
    assert r.returncode != 0
    assert "no davinci device found" in r.stderr
    assert "sudo modprobe davinci" in r.stderr
    assert "davinci-fused" in r.stderr


def test_events_from_netlink_need_the_module():
    with Manager() as m:
        if m.is_kernel_module():
            pytest.skip("the kernel module is loaded")
    r = npu_smi("events", "--source", "netlink", "--timeout", "0.1")
    assert r.returncode != 0
    assert "the davinci kernel module is not loaded" in r.stderr
    r = npu_smi("events", "--source", "log", "--timeout", "0.1")
    assert r.returncode == 0, r.stderr
