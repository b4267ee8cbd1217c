# SPDX-License-Identifier: GPL-2.0
"""``davinci doctor``: walk the troubleshooting checklist.

The seed article's three classic failures and what leads to them, each
reported with its evidence and the fix:

1. a driver at all: kernel module loaded (``/proc/modules``, what ``lsmod``
   reads)? FUSE daemon mounted (and not stale)? Leftovers of a crashed
   daemon (stale mounts, device memory in ``/dev/shm``), each with its size
   and the command that clears it?
2. device nodes present and accessible (mode, group, your groups)?
3. versions compatible (the driver's ABI in the runtime's range; the
   installed ``version.info`` against the running driver)?
4. devices healthy (health, armed or fired faults)?
5. device memory free (and who holds it)?
6. on the kernel module, the netlink event group reachable with pyroute2?

Exit status: 0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

import grp
import json
import os
import stat
import sys
from dataclasses import asdict, dataclass

from . import _uapi, version_info
from .discovery import (NOT_FOUND_MESSAGE, check_version, find_backend,
                        fuse_default_mountpoint, runtime_abi_range)
from .errors import (DavinciError, DevicePermissionError,
                     DriverVersionMismatchError)

__all__ = ["Finding", "run_checks", "main"]

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
_TAGS = {OK: "[ OK ]", WARN: "[WARN]", FAIL: "[FAIL]", SKIP: "[SKIP]"}
#: Free HBM below this fraction is a warning, below LOW_FAIL a failure.
LOW_WARN, LOW_FAIL = 0.10, 0.02


@dataclass
class Finding:
    check: str
    status: str
    summary: str
    evidence: str = ""
    fix: str = ""

    def lines(self) -> "list[str]":
        out = ["%s %s: %s" % (_TAGS[self.status], self.check, self.summary)]
        if self.evidence:
            out.append("       evidence: %s" % self.evidence)
        if self.fix:
            out.append("       fix: %s" % self.fix)
        return out


def _module_line() -> "str | None":
    try:
        with open("/proc/modules") as f:
            for line in f:
                if line.split(" ", 1)[0] == "davinci":
                    return line.strip()
    except OSError:
        return None
    return None


def check_module() -> Finding:
    if not os.path.exists("/proc/modules"):
        return Finding("kernel module", WARN,
                       "this kernel cannot load modules",
                       "/proc/modules does not exist",
                       "use the FUSE daemon: davinci-fused")
    line = _module_line()
    if line:
        return Finding("kernel module", OK, "davinci is loaded",
                       "/proc/modules: %s" % line)
    return Finding("kernel module", WARN, "davinci is not loaded",
                   "no 'davinci' line in /proc/modules (lsmod)",
                   "sudo modprobe davinci (or use davinci-fused)")


def check_fuse(mp: str) -> Finding:
    from . import fuse_layout as mnt
    try:
        state = mnt.mount_state(mp)
    except OSError as exc:
        return Finding("FUSE daemon", WARN, "cannot inspect %s" % mp, str(exc))
    if state == "mounted":
        ent = mnt.mount_entry(mp)
        return Finding("FUSE daemon", OK, "mounted at %s" % mp,
                       "/proc/self/mountinfo: %s %s" % ent if ent else "")
    if state == "stale":
        return Finding("FUSE daemon", FAIL,
                       "the mount at %s is stale: its daemon died" % mp,
                       "stat(%s) fails with ENOTCONN" % mp,
                       "davinci-fused --cleanup (or fusermount -u -z %s), "
                       "then start davinci-fused again" % mp)
    return Finding("FUSE daemon", WARN, "not mounted at %s" % mp,
                   "no FUSE mount at %s (%s)" % (mp, state),
                   "davinci-fused (or load the kernel module)")


def check_leftovers() -> "list[Finding]":
    """What crashed davinci-fused daemons of this user left: stale mounts
    and device memory directories (in /dev/shm) whose daemon is dead."""
    from . import fuse_layout
    try:
        found = fuse_layout.find_leftovers()
    except OSError as exc:
        return [Finding("daemon leftovers", WARN, "cannot look for them",
                        str(exc))]
    if not found:
        return [Finding("daemon leftovers", OK, "no stale mount and no "
                        "device memory of a dead davinci-fused of yours")]
    out = []
    for lo in found:
        ev = "%s: %s" % (lo.path, "stat and statfs fail with ENOTCONN"
                         if lo.kind == "mount" else
                         "%d bytes in use, daemon pid %d not running"
                         % (lo.size, lo.pid))
        out.append(Finding("daemon leftovers", WARN, lo.describe(), ev,
                           "%s (or davinci-fused --cleanup to clear all)"
                           % lo.command))
    return out


def _groups_text() -> str:
    names = []
    for g in os.getgroups():
        try:
            names.append(grp.getgrgid(g).gr_name)
        except KeyError:
            names.append(str(g))
    return ", ".join(names) or "none"


def check_nodes(dev_dir: str) -> Finding:
    mgr = os.path.join(dev_dir, "davinci_manager")
    try:
        names = sorted(n for n in os.listdir(dev_dir)
                       if n.startswith("davinci") and n != "davinci_manager"
                       and n[7:].isdigit())
    except OSError as exc:
        return Finding("device nodes", FAIL, "cannot list %s" % dev_dir,
                       str(exc))
    if not os.path.exists(mgr) or not names:
        return Finding("device nodes", FAIL,
                       "no davinci nodes in %s" % dev_dir,
                       "davinci_manager %s, %d davinciN node(s)"
                       % ("present" if os.path.exists(mgr) else "missing",
                          len(names)), NOT_FOUND_MESSAGE.split(": ", 1)[1])
    bad, ev = [], []
    for n in ["davinci_manager"] + names:
        p = os.path.join(dev_dir, n)
        try:
            st = os.stat(p)
        except OSError as exc:
            bad.append(n)
            ev.append("%s: %s" % (n, exc.strerror))
            continue
        try:
            gname = grp.getgrgid(st.st_gid).gr_name
        except KeyError:
            gname = str(st.st_gid)
        kind = "char" if stat.S_ISCHR(st.st_mode) else "file"
        ev.append("%s %s %04o uid %d group %s" % (
            n, kind, stat.S_IMODE(st.st_mode), st.st_uid, gname))
        if not os.access(p, os.R_OK | os.W_OK):
            bad.append(n)
    if bad:
        st = os.stat(os.path.join(dev_dir, bad[0]))
        try:
            gname = grp.getgrgid(st.st_gid).gr_name
        except KeyError:
            gname = str(st.st_gid)
        return Finding(
            "device nodes", FAIL,
            "%s not accessible to you (uid %d)" % (", ".join(bad),
                                                   os.getuid()),
            "; ".join(ev) + "; your groups: %s" % _groups_text(),
            "sudo usermod -aG %s $USER and log in again (or run your own "
            "davinci-fused)" % gname)
    return Finding("device nodes", OK,
                   "%d device node(s) and davinci_manager in %s, accessible"
                   % (len(names), dev_dir), "; ".join(ev))


def check_versions(mgr) -> "list[Finding]":
    out = []
    path = version_info.default_path()
    vi = version_info.read(path)
    pkg = version_info.get(vi, "Version")
    try:
        v = mgr.version()
    except DavinciError as exc:
        return [Finding("versions", FAIL, "the driver does not answer "
                        "GET_VERSION", str(exc),
                        "restart the driver (reload the module or restart "
                        "davinci-fused)")]
    drv = _uapi.cstr(v.driver_version)
    lo, hi = runtime_abi_range()
    ev = ("driver %s ABI %d.%d backend %s; runtime accepts ABI %d.%d..%d.%s;"
          " version.info %s: Version=%s" % (
              drv, v.abi_major, v.abi_minor, _uapi.cstr(v.backend), lo[0],
              lo[1], hi[0], "x" if hi[1] == 0xFFFF else hi[1], path,
              pkg or "(missing)"))
    try:
        check_version(v, "the driver")
    except DriverVersionMismatchError as exc:
        out.append(Finding("versions", FAIL, "driver version mismatch",
                           "%s; %s" % (exc, ev),
                           str(exc).split("; ", 1)[-1]))
        return out
    out.append(Finding("versions", OK, "driver ABI %d.%d is supported"
                       % (v.abi_major, v.abi_minor), ev))
    if not pkg:
        out.append(Finding("version.info", WARN, "no version.info at %s"
                           % path, "", "reinstall the davinci package or "
                           "point DAVINCI_VERSION_INFO at the driver's"))
    elif drv and pkg != drv:
        out.append(Finding("version.info", WARN,
                           "installed package %s but the running driver is %s"
                           % (pkg, drv), ev,
                           "reload the module (sudo rmmod davinci; sudo "
                           "modprobe davinci) or restart davinci-fused"))
    return out


def check_devices(mgr) -> "list[Finding]":
    out = []
    try:
        devs = mgr.devices()
    except DavinciError as exc:
        return [Finding("devices", FAIL, "cannot list devices", str(exc),
                        "update the driver (management needs ABI 1.1)")]
    if not devs:
        return [Finding("devices", FAIL, "the driver has no devices", "",
                        "add one (module parameter num_devices, or "
                        "davinci-fused --devices N)")]
    for i in devs:
        try:
            m = mgr.info(i)
        except DavinciError as exc:
            out.append(Finding("NPU %d" % i, FAIL, "no information", str(exc)))
            continue
        ev = ("health %s, temperature %.0f C, throttle %d%%, faults armed: "
              "%s, fired: %s, resets %d" % (
                  m.health_name, m.temp_c, m.throttle_pct,
                  ", ".join(m.faults_armed) or "none",
                  ", ".join("%s %d" % kv for kv in m.faults_fired.items()
                            if kv[1]) or "none", m.resets))
        if m.health_name == "OK":
            out.append(Finding("NPU %d health" % i, OK, "OK", ev))
        else:
            out.append(Finding(
                "NPU %d health" % i, WARN if m.health_name == "Warning"
                else FAIL, m.health_name, ev,
                "npu-smi set -t reset -i %d (open contexts then fail and "
                "must reopen the device)" % i))
        free = m.hbm_total - m.hbm_used
        frac = free / m.hbm_total if m.hbm_total else 0
        mev = "HBM %d MB used of %d MB, %d MB free" % (
            m.hbm_used >> 20, m.hbm_total >> 20, free >> 20)
        if frac >= LOW_WARN:
            out.append(Finding("NPU %d memory" % i, OK,
                               "%d%% of HBM free" % int(frac * 100), mev))
            continue
        try:
            procs = sorted(mgr.processes(i), key=lambda p: -p.hbm_bytes)
        except DavinciError:
            procs = []
        holders = ", ".join("pid %d (%s) %d MB" % (p.pid, p.name,
                                                   p.hbm_bytes >> 20)
                            for p in procs[:5]) or "no process"
        out.append(Finding(
            "NPU %d memory" % i, FAIL if frac < LOW_FAIL else WARN,
            "only %d%% of HBM free: allocations will fail with out of "
            "memory" % int(frac * 100), mev + "; held by " + holders,
            "free buffers or stop the processes holding HBM (npu-smi info "
            "shows them); ask for less"))
    return out


def check_events(mgr) -> "list[Finding]":
    """On the kernel module: can npu-smi events read the netlink group?"""
    if not mgr.is_kernel_module():
        return []
    from . import netlink
    if not netlink.available():
        return [Finding(
            "events", WARN, "pyroute2 is not installed",
            "npu-smi events polls the manager's event log instead of "
            "following the netlink group %r" % netlink.EVENTS_GROUP,
            "pip install 'davinci[netlink]' (or pip install pyroute2)")]
    try:
        with netlink.DavinciNetlink() as nl:
            groups = nl.groups
    except DavinciError as exc:
        return [Finding("events", FAIL, "the module's netlink family does "
                        "not answer", str(exc),
                        "reload the module (sudo rmmod davinci; sudo "
                        "modprobe davinci) and look at dmesg")]
    if netlink.EVENTS_GROUP not in groups:
        return [Finding("events", FAIL, "no multicast group %r" %
                        netlink.EVENTS_GROUP, "groups: %s" % groups,
                        "the module and the runtime come from different "
                        "releases: install matching ones")]
    return [Finding("events", OK, "netlink family %r, group %r" % (
        netlink.FAMILY, netlink.EVENTS_GROUP), "group id %d" %
        groups[netlink.EVENTS_GROUP])]


def run_checks() -> "list[Finding]":
    out = []
    inproc = os.environ.get("DAVINCI_BACKEND", "").lower() == "inproc"
    env_dir = os.environ.get("DAVINCI_DEV_DIR")
    if inproc:
        out.append(Finding("driver", SKIP, "in-process core "
                           "(DAVINCI_BACKEND=inproc): module and FUSE checks "
                           "skipped"))
    else:
        mod = check_module()
        fuse = check_fuse(env_dir or fuse_default_mountpoint())
        out += [mod, fuse]
        out += check_leftovers()
        if mod.status != OK and fuse.status != OK and \
                not os.path.exists("/dev/davinci_manager"):
            out.append(Finding(
                "driver", FAIL, "device not found: no kernel module and no "
                "FUSE daemon", "%s; %s" % (mod.evidence, fuse.evidence),
                "load the kernel module (sudo modprobe davinci) or start "
                "the FUSE daemon (davinci-fused)"))
            return out
    try:
        backend = find_backend()
    except DevicePermissionError as exc:
        out.append(Finding("device nodes", FAIL, "permission denied",
                           str(exc), str(exc).split("; ", 1)[-1]))
        return out
    except DavinciError as exc:
        out.append(Finding("driver", FAIL, "device not found", str(exc),
                           "load the kernel module (sudo modprobe davinci) "
                           "or start the FUSE daemon (davinci-fused)"))
        return out
    if backend.kind != "inproc":
        nodes = check_nodes(backend.dev_dir)
        out.append(nodes)
        if nodes.status == FAIL:
            return out
    from .manager import Manager
    try:
        mgr = Manager(backend)
    except DavinciError as exc:
        out.append(Finding("manager node", FAIL, "cannot open it", str(exc)))
        return out
    try:
        vers = check_versions(mgr)
        out += vers
        if any(f.status == FAIL for f in vers):
            return out
        out += check_devices(mgr)
        out += check_events(mgr)
    finally:
        mgr.close()
    return out


def main(argv=None, as_json: bool = False) -> int:
    findings = run_checks()
    failed = any(f.status == FAIL for f in findings)
    if as_json:
        print(json.dumps({"ok": not failed,
                          "findings": [asdict(f) for f in findings]},
                         indent=2))
    else:
        for f in findings:
            print("\n".join(f.lines()))
        n = sum(f.status == FAIL for f in findings)
        w = sum(f.status == WARN for f in findings)
        print("davinci doctor: %s (%d failed, %d warning(s))"
              % ("problems found" if failed else "no problems found", n, w))
    sys.stdout.flush()
    return 1 if failed else 0
